// Helpers shared by the distributed tests: gathering a global reference and
// comparing it against a serial computation.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include <ember.hpp>

namespace test {

// The whole array on every rank, in row-major order (through resplit to none,
// i.e. the exchange engine; tests of the engine itself check it bit for bit).
// A GPU array's values are gathered on the device and copied to the host.
template <class T>
using host_t = std::conditional_t<std::is_same_v<T, bool>, unsigned char, T>;  // no vector<bool>

template <class T, int N>
std::vector<host_t<T>> gathered(const ember::dndarray<T, N>& a) {
  auto g = ember::resplit(a, ember::none).to(ember::cpu);  // GPU arrays: the staged move, then a host copy
  std::vector<host_t<T>> v(std::size_t(g.numel()));
  if (!v.empty()) std::memcpy(static_cast<void*>(v.data()), g.ldata(), v.size() * sizeof(T));
  return v;
}

// True on every rank iff `ok` holds on every rank (so a REQUIRE on it never
// leaves a peer waiting in a later collective).
inline bool all_ranks(bool ok, const ember::communicator& c = ember::world()) {
  return c.allreduce(int(ok), ember::reduce_op::land) != 0;
}

// Every step of the last evaluation sent what its plan predicted (this rank).
inline bool trace_exact() {
  for (const auto& t : ember::last_trace())
    if (!(t.predicted == t.measured)) return false;
  return true;
}

template <class T>
bool bit_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// An uneven layout: one index of the split axis moved from rank 0 to rank 1,
// where rank 0 has one (the layouts the tests run on besides balanced ones).
template <class T, int N>
void unbalance(ember::dndarray<T, N>& a) {
  if (!a.split() || a.comm().size() < 2) return;
  auto map = a.lshape_map();
  const auto k = std::size_t(*a.split());
  if (map[0][k] == 0) return;
  --map[0][k];
  ++map[1][k];
  a.redistribute_(map);
}

}  // namespace test
