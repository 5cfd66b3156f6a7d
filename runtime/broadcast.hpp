// ember::broadcast: the root's data to every rank, for contiguous buffers and
// Eigen objects (dndarrays: dsl/broadcast.hpp).
//
// ipyparallel's lesson (shared/seeds/ipyparallel-mpi-broadcast.txt): send big data
// to one rank and let MPI broadcast it (MPI's own tree/pipeline algorithms) rather
// than pushing it to every rank in turn. Every overload ends in the one path
// communicator::bcast, a single MPI_Bcast per config().max_message_bytes chunk
// (MPI counts are int; OpenMPI 4.1 has no large-count calls).
//
//   std::vector<double> v;                       // only the root fills it
//   if (ember::par::is_root()) v = load();
//   ember::broadcast(v);                         // non-roots are resized
//   Eigen::MatrixXd m = ...; ember::broadcast(m, 0, comm);   // resized too
//   ember::broadcast(std::span(buf, n));         // fixed size: must match the root's
//
// Buffers of fixed size (span, pointer + count, fixed-size Eigen objects) must
// hold as many elements on every rank as on the root; a mismatch is an
// ember::shape_error naming the ranks, thrown on every rank.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "communicator.hpp"
#include "error.hpp"

namespace ember {

namespace detail {

template <class T>
constexpr bool has_mpi_type_v = std::is_arithmetic_v<T> || std::is_same_v<T, std::complex<float>> ||
                                std::is_same_v<T, std::complex<double>>;

// The one data path: communicator::bcast (chunked), typed where MPI knows the
// type, as bytes otherwise.
template <class T>
void bcast_elems(T* data, std::int64_t n, int root, const communicator& c) {
  static_assert(std::is_trivially_copyable_v<T>, "ember::broadcast: elements must be trivially copyable");
  if constexpr (has_mpi_type_v<T>) c.bcast(data, n, root);
  else c.bcast(reinterpret_cast<std::uint8_t*>(data), n * std::int64_t(sizeof(T)), root);
}

// One allgather of every rank's element count: throws shape_error on every rank
// unless all equal the root's.
void check_bcast_counts(const communicator& c, std::int64_t n, int root, const char* what);
void check_root(const communicator& c, int root, const char* what);

}  // namespace detail

// `n` elements at `data`, on every rank.
template <class T>
void broadcast(T* data, std::int64_t n, int root = 0, const communicator& c = world()) {
  detail::check_root(c, root, "broadcast");
  if (c.size() == 1) return;
  detail::check_bcast_counts(c, n, root, "broadcast");
  detail::bcast_elems(data, n, root, c);
}

template <class T, std::size_t E>
void broadcast(std::span<T, E> s, int root = 0, const communicator& c = world()) {
  broadcast(s.data(), std::int64_t(s.size()), root, c);
}

// Non-roots are resized to the root's length (their contents are replaced).
template <class T, class A>
void broadcast(std::vector<T, A>& v, int root = 0, const communicator& c = world()) {
  static_assert(!std::is_same_v<T, bool>, "ember::broadcast: std::vector<bool> is not contiguous");
  detail::check_root(c, root, "broadcast");
  if (c.size() == 1) return;
  std::int64_t n = std::int64_t(v.size());
  c.bcast(&n, 1, root);
  if (c.rank() != root) v.resize(std::size_t(n));
  detail::bcast_elems(v.data(), n, root, c);
}

// Eigen overloads: templates for user code. The library's own sources are
// compiled without Eigen on the include path, and never need them.
#if __has_include(<Eigen/Core>)
}  // namespace ember
#include "eigen_tensor.hpp"
namespace ember {
// Dense Eigen matrices and arrays: dynamic sizes are resized to the root's on the
// other ranks; fixed sizes must agree.
template <class Derived>
void broadcast(Eigen::PlainObjectBase<Derived>& m, int root = 0, const communicator& c = world()) {
  detail::check_root(c, root, "broadcast");
  if (c.size() == 1) return;
  std::int64_t dims[2] = {std::int64_t(m.rows()), std::int64_t(m.cols())};
  c.bcast(dims, 2, root);
  constexpr bool dyn = Derived::RowsAtCompileTime == Eigen::Dynamic && Derived::ColsAtCompileTime == Eigen::Dynamic;
  if constexpr (dyn) {
    if (c.rank() != root) m.resize(Eigen::Index(dims[0]), Eigen::Index(dims[1]));
  } else {
    // a fixed dimension cannot follow the root's: every rank checks
    detail::check_bcast_counts(c, std::int64_t(m.rows()) * std::int64_t(m.cols()), root, "broadcast (Eigen)");
    if (c.rank() != root && (m.rows() != dims[0] || m.cols() != dims[1])) m.resize(dims[0], dims[1]);
  }
  detail::bcast_elems(m.data(), std::int64_t(m.size()), root, c);
}

// Eigen tensors (any layout): non-roots are resized to the root's dimensions.
template <class T, int N, int Options, class Index>
void broadcast(Eigen::Tensor<T, N, Options, Index>& t, int root = 0, const communicator& c = world()) {
  detail::check_root(c, root, "broadcast");
  if (c.size() == 1) return;
  std::int64_t dims[N > 0 ? N : 1] = {};
  for (int d = 0; d < N; ++d) dims[d] = std::int64_t(t.dimension(d));
  c.bcast(dims, N, root);
  if (c.rank() != root) {
    Eigen::array<Index, N> nd;
    for (int d = 0; d < N; ++d) nd[d] = Index(dims[d]);
    t.resize(nd);
  }
  detail::bcast_elems(t.data(), std::int64_t(t.size()), root, c);
}

#endif

}  // namespace ember
