// dndarray <-> ScaLAPACK: a 2-D array moves into the block-cyclic layout and back
// through the exchange engine (the block-cyclic layout is just another list of
// boxes per rank), so a conversion costs what its plan predicts, nothing else.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "../dsl/dndarray.hpp"
#include "../runtime/exchange.hpp"
#include "../runtime/memory.hpp"
#include "../runtime/scalapack.hpp"

namespace ember::linalg {

// A matrix in ScaLAPACK's block-cyclic layout on a cached BLACS grid: the local
// column-major block and its descriptor.
template <class T>
struct bc_matrix {
  scalapack::block_cyclic lay;
  const scalapack::grid* grid = nullptr;
  scalapack::descriptor desc{};
  std::shared_ptr<T[]> data;
  communicator comm;

  T* local() const { return data.get(); }
  std::int64_t local_rows() const { return lay.local_rows(comm.rank()); }
  std::int64_t local_cols() const { return lay.local_cols(comm.rank()); }
  std::int64_t lld() const { return lay.lld(comm.rank()); }
};

// Uninitialized storage for `l` on `comm` (collective the first time a grid shape is used).
template <class T>
bc_matrix<T> make_block_cyclic(const scalapack::block_cyclic& l, const communicator& comm) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::complex<float>> ||
                    std::is_same_v<T, std::complex<double>>,
                "ember::linalg: ScaLAPACK routines take float32, float64, complex64 or complex128");
  if (l.nranks() != comm.size())
    throw value_error("ember::linalg: a block-cyclic layout over " + std::to_string(l.nranks()) +
                      " ranks used on a communicator of " + std::to_string(comm.size()));
  const auto& g = scalapack::grid::get(comm, l.prow(), l.pcol());
  bc_matrix<T> m{l, &g, scalapack::describe(l, g, comm.rank()), detail::allocate<T>(l.local_size(comm.rank())), comm};
  return m;
}

// A's values in block-cyclic layout `l` (default: ember's grid and block size).
template <class T>
bc_matrix<T> to_block_cyclic(const dndarray<T, 2>& a, const std::optional<scalapack::block_cyclic>& l = std::nullopt) {
  const auto s = a.shape();
  const auto bl = l ? *l : scalapack::default_block_cyclic(s[0], s[1], a.comm().size());
  auto m = make_block_cyclic<T>(bl, a.comm());
  exchange(a.layout(), m.lay, a.comm().rank(), sizeof(T)).run(a.comm(), a.ldata(), m.local());
  return m;
}

// The block-cyclic matrix's values as a dndarray laid out as `target`.
template <class T>
dndarray<T, 2> from_block_cyclic(const bc_matrix<T>& m, const layout& target) {
  dndarray<T, 2> r(target, m.comm);
  exchange(m.lay, target, m.comm.rank(), sizeof(T)).run(m.comm, m.local(), r.ldata());
  return r;
}
template <class T>
dndarray<T, 2> from_block_cyclic(const bc_matrix<T>& m, split_axis split) {
  return from_block_cyclic(m, layout::balanced(m.lay.shape(), split, m.comm.size()));
}

}  // namespace ember::linalg
