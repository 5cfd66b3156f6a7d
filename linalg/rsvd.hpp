// Randomized truncated SVD (Halko, Martinsson & Tropp, SIAM Review 53(2), 2011):
// a Gaussian test matrix Omega, the range finder Y = A Omega with optional power
// iterations, Q = orth(Y), B = Q^T A (small), the SVD of B, U = Q U_B.
//
// As hsvd, it works on X (M x N, rows spread over the ranks): X = A for A split 0
// or not split, X = A^T for A split 1 (A = V_X S U_X^T then). With l = r + p:
//   Omega (N x l) replicated: every rank generates the same values from
//     (seed, element index) with ember's counter-based Philox generator, on a
//     stream of its own (the global ember::random state is not touched);
//   Y = X Omega (Mi x l): local product, split like X's rows;
//   power iteration: Q = TSQR(Y); Z = X^T Q (N x l: local product + allreduce);
//     Z = orth(Z) (replicated, local QR); Y = X Z;
//   Q = TSQR(Y) (one allgather of l x l triangles);
//   B = Q^T X (l x N: local product + allreduce), SVD of B on every rank;
//   U_X = Q U_B (local), V_X = V_B; both truncated to r.
// The factor along A's split axis keeps A's split and extents (U for split 0, V
// for split 1); the other is replicated. Not split: the same on every rank, no
// communication.
#pragma once

#include "hsvd.hpp"
#include "../runtime/random.hpp"

namespace ember::linalg {

struct rsvd_options {
  std::int64_t oversample = 10;       // p: l = r + p columns in the test matrix (capped at min(m, n))
  std::int64_t power_iterations = 1;  // q: sharpens the spectrum to sigma^(2q+1) when it decays slowly
  std::uint64_t seed = 0;             // Omega depends on the seed only (not on ranks or split)
};

namespace lowrank_detail {

template <class T>
rsvd_result<T> rsvd_impl(const dndarray<T, 2>& a, i64 r, const rsvd_options& o) {
  const auto& c = a.comm();
  const auto x = x_of(a);
  const i64 Mi = x.local.rows, N = x.N;
  const i64 l = std::min({r + o.oversample, x.M, x.N});
  (void)frobenius_sq(x, c, "rsvd");  // NaN/inf check on every rank before any LAPACK call

  // Omega: column-major N x l, element (i, j) is stream element i + j N.
  std::vector<T> omega(std::size_t(N * l));
  const rng::stream st{o.seed, 0x7273766400000000ull};  // "rsvd": apart from ember::random's call counter
  rng::fill_normal(omega.data(), N * l, st, 0, T(0), T(1));

  auto allreduce = [&](std::vector<T>& v) {
    if (x.dist && c.size() > 1) c.allreduce(v.data(), i64(v.size()), reduce_op::sum);
  };
  std::vector<T> Y(std::size_t(Mi * l));
  gemm<T>(x.local, false, cm(omega.data(), N, l), false, T(1), T(0), Y.data(), Mi);
  std::vector<T> Z(std::size_t(N * l));
  for (i64 q = 0; q < o.power_iterations; ++q) {
    // Re-orthonormalize between the products: without it the columns of
    // (X X^T)^q X Omega collapse onto the top singular vector in floating point.
    (void)tsqr(Y, Mi, l, c, x.dist);
    gemm<T>(x.local, true, cm(Y.data(), Mi, l), false, T(1), T(0), Z.data(), N);
    allreduce(Z);
    orthonormalize_local(Z.data(), N, l);
    gemm<T>(x.local, false, cm(Z.data(), N, l), false, T(1), T(0), Y.data(), Mi);
  }
  (void)tsqr(Y, Mi, l, c, x.dist);  // Y is now Q
  // B^T = X^T Q (N x l), column-major; the SVD of B^T gives B's factors swapped.
  gemm<T>(x.local, true, cm(Y.data(), Mi, l), false, T(1), T(0), Z.data(), N);
  allreduce(Z);
  // B^T = V_B S U_B^T: gesdd on B^T (N x l, N >= l) returns V_B (N x l) and U_B^T.
  std::vector<T> s(static_cast<std::size_t>(l)), vb(std::size_t(N * l)), ubt(std::size_t(l * l));
  lapack::gesdd<T>('S', N, l, Z.data(), N, s.data(), vb.data(), N, ubt.data(), l);
  xsvd<T> f;
  f.Mi = Mi;
  f.k = r;
  f.S.assign(s.begin(), s.begin() + r);
  f.U.resize(std::size_t(Mi * r));
  // Q U_B[:, :r], U_B[:, :r] = (the first r rows of U_B^T, ld l)^T
  gemm<T>(cm(Y.data(), Mi, l), false, mview<T>{ubt.data(), r, l, false, l}, true, T(1), T(0), f.U.data(), Mi);
  f.V.assign(vb.begin(), vb.begin() + N * r);
  rsvd_result<T> res;
  package(a, x, f, r, res.U, res.S, res.V);
  return res;
}

}  // namespace lowrank_detail

// Rank-r randomized SVD of A: U (m x r), S (r), V (n x r), A ~= U diag(S) V^T.
template <dtype T, int N>
rsvd_result<T> rsvd(const dndarray<T, N>& A, std::int64_t r, const rsvd_options& o = {}) {
  lowrank_detail::check_matrix(A, "rsvd");  // (first: see svd)
  if (A.device() == device_kind::gpu) return impl::results_on(rsvd(A.to(device_kind::cpu), r, o), device_kind::gpu);
  if constexpr (N == 2 && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    const auto s = A.shape();
    lowrank_detail::check_rank(r, s[0], s[1], "rsvd", "r");
    if (o.oversample < 0)
      throw value_error("ember::linalg::rsvd: oversample = " + std::to_string(o.oversample) + " is negative");
    if (o.power_iterations < 0)
      throw value_error("ember::linalg::rsvd: power_iterations = " + std::to_string(o.power_iterations) +
                        " is negative");
    return lowrank_detail::rsvd_impl<T>(A, r, o);
  } else {
    return {};
  }
}

}  // namespace ember::linalg
