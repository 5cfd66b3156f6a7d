// ember::linalg::svd: the thin singular value decomposition A = U diag(S) Vh of a
// distributed matrix, returned as NumPy returns it: (U, S, Vh) with Vh = V^T
// (k x n; V^H for complex A). S is descending, replicated (not split) and real.
//
// Algorithms, chosen from replicated metadata:
//
//  * Tall-skinny, split 0 (TSQR's rule, qr.hpp: every rank holds >= n rows):
//    A = Q R by TSQR, R = U_R diag(S) V^T by LAPACK on rank 0 (n x n), S and V
//    broadcast, and U = Q U_R formed by applying the TSQR factors to U_R (so Q is
//    never stored). U keeps A's split and lshape_map; Vh = V^T is replicated.
//  * Short-fat, split 1 (every rank holds >= m columns): the same on A^T, whose
//    rows are A's columns. A rank's row-major m x n_r block of A is, read
//    column-major, its n_r x m block of A^T, so LAPACK factors it without a
//    transposing copy. A^T = Q R, R = U_R diag(S) W^T gives A = W diag(S) (Q U_R)^T:
//    U = W replicated, Vh = (Q U_R)^T split 1 with A's column extents.
//  * Otherwise ScaLAPACK p?gesvd, the matrix moved to the block-cyclic layout and
//    U, V^T moved back by the exchange engine.
//
// Layout rule, the same for every algorithm: U is split along its rows when A is
// split along its rows (axis 0), Vh along its columns when A is split along its
// columns (axis 1); otherwise they are replicated.
// compute_uv = false computes S only (U and Vh are null handles).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "qr.hpp"

namespace ember::linalg {
namespace impl {

// TSQR for A split 1 with every rank holding >= m columns (A^T tall-skinny).
template <class T>
bool tsqr_applies_transposed(const dndarray<T, 2>& a) {
  if (a.split() != 1) return false;
  const std::int64_t m = a.shape()[0];
  for (const auto& row : a.lshape_map())
    if (row[1] < m) return false;
  return m > 0;
}

// SVD of the tall-skinny B (rows split, this rank's rows x n block given
// column-major): B = X diag(S) Y^T with X = Q U_R split like B and Y replicated
// (complex B: Y = conj(V), so Y^T = V^H). Returns S; fills x (rows x n, row-major)
// and y (n x n, row-major) when asked.
template <class T>
std::vector<real_of_t<T>> svd_tall_skinny(const communicator& comm, std::vector<T> local, std::int64_t rows,
                                          std::int64_t n, T* x, T* y) {
  using R = real_of_t<T>;
  tsqr<T> f(comm, std::move(local), rows, n);
  const bool uv = x != nullptr;
  std::vector<R> s(static_cast<std::size_t>(n));
  std::vector<T> u;
  // The SVD of R runs on rank 0 only. Should it fail (LAPACK refuses NaN), rank 0
  // sends NaN singular values instead, so every rank learns it from the broadcast
  // it takes part in anyway (a successful SVD has no NaN), and the text follows
  // on that error path only: every rank throws the same value_error.
  std::string failure;
  if (comm.rank() == 0) {
    try {
      if (uv) {
        u.resize(std::size_t(n * n));
        // R's V^T, column-major n x n, is V in row-major order (conj(V) for
        // complex: V^H): written straight into y.
        lapack::gesdd<T>('S', n, n, f.r().data(), n, s.data(), u.data(), n, y, n);
      } else {
        lapack::gesdd<T>('N', n, n, f.r().data(), n, s.data(), nullptr, 1, nullptr, 1);
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (!failure.empty() || std::any_of(s.begin(), s.end(), [](R v) { return std::isnan(v); }))
      std::fill(s.begin(), s.end(), std::numeric_limits<R>::quiet_NaN());
  }
  comm.bcast(s.data(), n, 0);
  if (n > 0 && std::isnan(s[0])) {
    std::int64_t len = std::int64_t(failure.size());
    comm.bcast(&len, 1, 0);
    failure.resize(std::size_t(len));
    comm.bcast(failure.data(), len, 0);
    throw value_error("ember::linalg::svd: the matrix contains NaN or infinity: the SVD of its " + std::to_string(n) +
                      " x " + std::to_string(n) + " R factor failed" + (failure.empty() ? "" : " (" + failure + ")"));
  }
  if (uv) {
    comm.bcast(y, n * n, 0);
    f.apply_q(std::move(u), x);
  }
  return s;
}

// dst (cols x rows, row-major) = src (rows x cols, row-major) transposed.
template <class T>
void transpose_block(const T* src, std::int64_t rows, std::int64_t cols, T* dst) {
  constexpr std::int64_t b = 32;  // tiles, so both sides stream through cache
  for (std::int64_t i0 = 0; i0 < rows; i0 += b)
    for (std::int64_t j0 = 0; j0 < cols; j0 += b)
      for (std::int64_t i = i0; i < std::min(rows, i0 + b); ++i)
        for (std::int64_t j = j0; j < std::min(cols, j0 + b); ++j) dst[j * rows + i] = src[i * cols + j];
}

template <class T>
svd_result<T> svd_tsqr(const dndarray<T, 2>& a, const svd_options& o) {
  const auto& comm = a.comm();
  const int P = comm.size();
  const auto [m, n] = a.shape();
  const auto ls = a.lshape();
  const bool transposed = a.split() == 1;
  // B = A (split 0) or A^T (split 1): rows x nb, column-major.
  const std::int64_t rows = transposed ? ls[1] : ls[0], nb = transposed ? m : n;
  std::vector<T> local;
  if (transposed) local.assign(a.ldata(), a.ldata() + a.lnumel());
  else local = column_major_block(a);

  dndarray<real_of_t<T>, 1> S(replicated_layout({nb}, P), comm);
  dndarray<T, 2> X, Y;
  if (o.compute_uv) {
    X = dndarray<T, 2>(transposed ? layout({n, m}, 0, a.layout().extents()) : a.layout(), comm);
    Y = dndarray<T, 2>(replicated_layout({nb, nb}, P), comm);
  }
  const auto s = svd_tall_skinny<T>(comm, std::move(local), rows, nb, o.compute_uv ? X.ldata() : nullptr,
                                    o.compute_uv ? Y.ldata() : nullptr);
  std::copy(s.begin(), s.end(), S.ldata());
  if (!o.compute_uv) return {X, S, Y};
  // Vh is the transpose of B's right factor: Y^T (replicated) for A, X^T (split
  // 1, A's column extents) for A^T; a local transpose either way.
  const dndarray<T, 2>& v = transposed ? X : Y;
  dndarray<T, 2> Vh(transposed ? a.layout() : replicated_layout({nb, nb}, P), comm);
  const auto vs = v.lshape();
  transpose_block(v.ldata(), vs[0], vs[1], Vh.ldata());
  if (transposed) return {Y, S, Vh};
  return {X, S, Vh};
}

template <class T>
svd_result<T> svd_scalapack(const dndarray<T, 2>& a, const svd_options& o) {
  const auto& comm = a.comm();
  const int P = comm.size(), me = comm.rank();
  const auto [m, n] = a.shape();
  const std::int64_t k = std::min(m, n);
  auto bc = to_block_cyclic(a, square_block_cyclic(m, n, P));
  std::vector<real_of_t<T>> s(static_cast<std::size_t>(k));
  dndarray<real_of_t<T>, 1> S(replicated_layout({k}, P), comm);
  if (!o.compute_uv) {
    scalapack::pgesvd<T>('N', 'N', int(m), int(n), bc.local(), bc.desc, s.data(), nullptr, bc.desc, nullptr, bc.desc);
  } else {
    // U and V^T on A's grid with A's (square) blocks, as p?gesvd expects.
    const auto& l = bc.lay;
    const scalapack::block_cyclic ul(m, k, l.prow(), l.pcol(), l.mb(), l.nb()), vl(k, n, l.prow(), l.pcol(), l.mb(), l.nb());
    auto ub = make_block_cyclic<T>(ul, comm);
    auto vb = make_block_cyclic<T>(vl, comm);
    scalapack::pgesvd<T>('V', 'V', int(m), int(n), bc.local(), bc.desc, s.data(), ub.local(), ub.desc, vb.local(),
                         vb.desc);
    dndarray<T, 2> U(layout::balanced({m, k}, a.split() == 0 ? split_axis{0} : none, P), comm);
    dndarray<T, 2> Vh(layout::balanced({k, n}, a.split() == 1 ? split_axis{1} : none, P), comm);
    exchange(ub.lay, U.layout(), me, sizeof(T)).run(comm, ub.local(), U.ldata());
    exchange(vb.lay, Vh.layout(), me, sizeof(T)).run(comm, vb.local(), Vh.ldata());
    comm.bcast(s.data(), k, 0);  // replicated by construction; rank 0's copy makes it bitwise so
    std::copy(s.begin(), s.end(), S.ldata());
    return {U, S, Vh};
  }
  comm.bcast(s.data(), k, 0);
  std::copy(s.begin(), s.end(), S.ldata());
  return {dndarray<T, 2>{}, S, dndarray<T, 2>{}};
}

}  // namespace impl

// Thin SVD: U (m x k), S (k, descending, replicated), Vh (k x n), k = min(m, n),
// A = U diag(S) Vh. Collective over A's communicator. See the top of this file.
template <class T>
svd_result<T> svd(const dndarray<T, 2>& a, const svd_options& o = {}) {
  // (validated first: with the GPU copy's recursion first, GCC 12 warns of an
  // infinite one in instantiations where the check always throws)
  impl::require_lapack_type<T>("svd", a.shape());
  if (a.device() == device_kind::gpu) return impl::results_on(svd(a.to(device_kind::cpu), o), device_kind::gpu);
  if constexpr (impl::lapack_type_v<T>) {
    impl::require_int_dims("svd", a.shape());
    const auto [m, n] = a.shape();
    const int P = a.comm().size();
    if (m == 0 || n == 0) {  // no singular values; U (m x 0) and Vh (0 x n) empty
      dndarray<real_of_t<T>, 1> S(replicated_layout({0}, P), a.comm());
      if (!o.compute_uv) return {dndarray<T, 2>{}, S, dndarray<T, 2>{}};
      dndarray<T, 2> U(layout::balanced({m, 0}, a.split() == 0 ? split_axis{0} : none, P), a.comm());
      dndarray<T, 2> Vh(layout::balanced({0, n}, a.split() == 1 ? split_axis{1} : none, P), a.comm());
      return {U, S, Vh};
    }
    if (impl::tsqr_applies(a) || impl::tsqr_applies_transposed(a)) return impl::svd_tsqr(a, o);
    impl::require_finite(a, "svd");  // p?gesvd would call NaN an illegal argument
    return impl::svd_scalapack(a, o);
  } else {
    return {};
  }
}

// SVD needs a matrix: any other rank is a compile-time error naming the function.
template <class T, int N>
svd_result<T> svd(const dndarray<T, N>&, const svd_options& = {}) {
  static_assert(N == 2, "ember::linalg::svd: needs a 2-D array (a matrix); this one has N != 2 dimensions");
  return {};
}

}  // namespace ember::linalg
