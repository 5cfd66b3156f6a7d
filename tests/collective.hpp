// The judge of collective errors, shared by test_collective_safety and
// tests/adversarial: a call made on every rank must throw the same ember::error
// (type and message) on every rank, and ember's communicator must still work
// afterwards. The agreement on the outcome runs on the test's own duplicate of
// MPI_COMM_WORLD, so it can never match a collective the library left open.
#pragma once

#include <cxxabi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "common.hpp"

// Not every test file uses every helper.
#pragma GCC diagnostic ignored "-Wunused-function"

namespace {

[[maybe_unused]] const ember::communicator& W() { return ember::world(); }
int P() { return W().size(); }
int me() { return W().rank(); }

// ---------------------------------------------------------------------------
// The judge: the test's own duplicate of MPI_COMM_WORLD. The agreement on the
// outcome runs there, so it can never match a collective the library left open
// on its own communicator (a hang is then a clean hang, caught by the runner's
// timeout, never a silent mismatch).
MPI_Comm judge() {
  static MPI_Comm c = [] {
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    return d;
  }();
  return c;
}

std::vector<std::string> allgather_strings(const std::string& s) {
  int n = 0;
  MPI_Comm_size(judge(), &n);
  int len = int(s.size());
  std::vector<int> lens(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, judge());
  int total = 0;
  for (int r = 0; r < n; ++r) displs[std::size_t(r)] = total, total += lens[std::size_t(r)];
  std::string all(std::size_t(total), '\0');
  MPI_Allgatherv(s.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, judge());
  std::vector<std::string> out;
  for (int r = 0; r < n; ++r) out.push_back(all.substr(std::size_t(displs[std::size_t(r)]), std::size_t(lens[std::size_t(r)])));
  return out;
}

// The demangled dynamic type; std::throw_with_nested's wrapper counts as the type
// it wraps (it is caught as that type).
std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> p(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  std::string t = status == 0 && p ? std::string(p.get()) : std::string(name);
  const std::string nested = "std::_Nested_exception<";
  if (t.rfind(nested, 0) == 0 && t.back() == '>') t = t.substr(nested.size(), t.size() - nested.size() - 1);
  return t;
}

// What one call did on this rank.
struct outcome {
  bool threw = false;
  std::string type = "(returned normally)";
  std::string what;
};

template <class F>
outcome attempt(F&& f) {
  outcome o;
  try {
    f();
  } catch (const std::exception& e) {
    o.threw = true;
    o.type = demangle(typeid(e).name());
    o.what = e.what();
  } catch (...) {
    o.threw = true;
    o.type = "(not a std::exception)";
  }
  return o;
}

// EMBER_SHOW_ERRORS=1 prints every agreed message on rank 0 (for reviewing them).
//
// (e): ember's communicator is usable after the failure on every rank: a
// barrier, an allreduce, a point-to-point move through the exchange engine whose
// values are checked, and the per-communicator sequence numbers (par loops and
// symmetric memory rely on them) still equal everywhere.
void check_still_collective() {
  W().barrier();
  CHECK(W().allreduce(std::int64_t(1), ember::reduce_op::sum) == P());
  auto a = ember::arange<std::int64_t>(0, 3 * P() + 1, 1, {.split = 0});
  a.resplit_(ember::none);
  bool ok = a.lnumel() == 3 * P() + 1;
  for (std::int64_t i = 0; ok && i < a.lnumel(); ++i) ok = a.ldata()[i] == i;
  CHECK(ok);
  const auto seq = std::to_string(W().next_sequence());
  const auto seqs = allgather_strings(seq);
  CHECK(std::all_of(seqs.begin(), seqs.end(), [&](const std::string& s) { return s == seqs[0]; }));
}

// (a)-(e) for one call. `f` runs on every rank; E is the exact type every rank
// must throw; `needles` must all occur in the (common) message. `own_rank`: a
// rank that throws the user's own exception instead (a par loop body), exempt
// from (b) and (c) but still required to throw. Returns the agreed message.
template <class E, class F>
std::string expect_collective_throw(F&& f, const std::vector<std::string>& needles = {}, int own_rank = -1) {
  const outcome o = attempt(std::forward<F>(f));
  // Every rank reaches this point whatever happened (unless f hung), and every
  // decision below is taken on the same gathered facts, so the CHECKs agree.
  const auto types = allgather_strings(o.threw ? o.type : std::string("(returned normally)"));
  const auto whats = allgather_strings(o.what);
  const std::string want = demangle(typeid(E).name());
  std::ostringstream table;
  for (std::size_t r = 0; r < types.size(); ++r)
    table << "  rank " << r << (int(r) == own_rank ? " (own exception)" : "") << ": " << types[r] << ": " << whats[r]
          << "\n";
  INFO("expected " << want << " on every rank; got:\n" << table.str());
  std::string msg;
  bool all_threw = true, same_type = true, same_msg = true;
  for (std::size_t r = 0; r < types.size(); ++r) {
    all_threw = all_threw && types[r] != "(returned normally)";
    if (int(r) == own_rank) continue;
    same_type = same_type && types[r] == want;
    if (msg.empty()) msg = whats[r];
    same_msg = same_msg && whats[r] == msg;
  }
  CHECK(all_threw);
  CHECK(same_type);
  CHECK(same_msg);
  const bool any_ember = own_rank < 0 || types.size() > 1;  // else only the own exception was thrown
  for (const auto& n : needles) {
    if (!any_ember) break;
    INFO("the message must contain: " << n);
    CHECK(msg.find(n) != std::string::npos);
  }
  if (std::getenv("EMBER_SHOW_ERRORS") && me() == 0) std::cerr << "[" << want << "] " << msg << "\n";
  check_still_collective();
  return msg;
}

// Ranks to put rank-dependent bad input on: the first, a middle and the last.
std::vector<int> bad_ranks() {
  std::set<int> s{0, P() / 2, P() - 1};
  return {s.begin(), s.end()};
}
std::string rank_str(int r) { return "rank " + std::to_string(r); }

// Sets an environment variable for a scope (the same on every rank).
struct scoped_env {
  std::string name;
  std::optional<std::string> old;
  scoped_env(const char* n, const char* v) : name(n) {
    if (const char* o = std::getenv(n)) old = o;
    setenv(n, v, 1);
  }
  ~scoped_env() {
    if (old) setenv(name.c_str(), old->c_str(), 1);
    else unsetenv(name.c_str());
  }
};

template <class T>
std::vector<T> iota_vec(std::int64_t n) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[std::size_t(i)] = T(i);
  return v;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace
