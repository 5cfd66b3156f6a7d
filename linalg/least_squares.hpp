// Least squares and the pseudo-inverse from the SVD, as numpy.linalg:
//
//   auto [x, residuals, rank, s] = ember::linalg::lstsq(A, b);   // min ||A x - b||, minimum-norm x
//   auto Ap = ember::linalg::pinv(A);                             // V diag(1/s) U^T, small s cut off
//
// Both go through linalg::svd (TSQR for tall-skinny row-split A, ScaLAPACK
// otherwise), so a rank-deficient A gets NumPy's minimum-norm answer (gelsd's,
// not the QR of p?gels, which assumes full rank). Singular values at or below
// rcond * max(s) count as zero: lstsq's default rcond is eps * max(m, n) (NumPy 2),
// pinv's 1e-15 (NumPy's). The products after the SVD are planned like any
// matmul: for A (m x n, m >> n) split along its rows, U^T b is one local gemv and
// an allreduce of n numbers, and x = V (s^-1 U^T b) is local. Complex A and b
// take the conjugate transposes (U^H b, V = Vh^H); residuals and s are real.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "../dsl/matmul.hpp"
#include "../shape/shape.hpp"
#include "lu.hpp"
#include "svd.hpp"

namespace ember::linalg {

// numpy.linalg.lstsq's four results, in its order (structured bindings).
template <class T, int N>
struct lstsq_result {
  dndarray<T, N> x;                     // (n,) or (n, k)
  dndarray<real_of_t<T>, 1> residuals;  // squared 2-norms of b - A x per column: (k,), (1,) for a vector b; empty
                                        // unless rank == n < m
  std::int64_t rank = 0;                // the number of singular values above the cutoff
  dndarray<real_of_t<T>, 1> s;          // A's singular values, descending
};

namespace impl {
// 1/s where s exceeds the cutoff, 0 elsewhere (replicated, as S).
template <class T>
dndarray<T, 1> inverted_singular_values(const dndarray<T, 1>& s, double cutoff) {
  return ember::where(s > T(cutoff), T(1) / s, T(0));
}
template <class T>
double largest(const dndarray<T, 1>& s) {
  return s.shape()[0] == 0 ? 0.0 : double(ember::max(s));
}
// X^H: the transpose, conjugated for complex X (a lazy node either way).
template <class T>
auto adjoint(const dndarray<T, 2>& x) {
  if constexpr (is_complex_v<T>) return ember::conj(ember::transpose(x));
  else return ember::transpose(x);
}
}  // namespace impl

// Least-squares solution of A x = b (numpy.linalg.lstsq). rcond: singular values
// <= rcond * max(s) are treated as zero; default eps * max(m, n); a negative
// rcond means machine precision (NumPy's old default).
template <class A, class B>
  requires(array_like<A> && array_like<B>)
auto lstsq(const A& a_, const B& b_, std::optional<double> rcond = std::nullopt) {
  static_assert(expr::node_t<A>::ndim == 2, "ember::linalg::lstsq: A must be a 2-D matrix");
  constexpr int N = expr::node_t<B>::ndim;
  static_assert(N == 1 || N == 2, "ember::linalg::lstsq: b must be a vector (1-D) or a matrix (2-D)");
  const auto a = impl::float_matrix(a_);
  using T = typename decltype(a)::value_type;
  using R = real_of_t<T>;
  const dndarray<T, N> b = [&] {
    auto x = impl::operand_array(b_);
    if constexpr (std::is_same_v<typename decltype(x)::value_type, T>) return x;
    else return dndarray<T, N>(ember::astype<T>(x));
  }();
  const std::int64_t m = a.shape()[0], n = a.shape()[1];  // (not a structured binding: clang 14 cannot capture one)
  if (b.shape()[0] != m)
    throw shape_error("ember::linalg::lstsq: A of shape " + ember::detail::shape_str(a.shape()) + " and b of shape " +
                      ember::detail::shape_str(b.shape()) + ": b needs " + std::to_string(m) + " rows");
  impl::require_same_comm("lstsq", a, b);
  const auto& comm = a.comm();
  const int P = comm.size();
  const double eps = double(std::numeric_limits<R>::epsilon());
  const double rc = !rcond ? eps * double(std::max(m, n)) : (*rcond < 0 ? eps : *rcond);

  lstsq_result<T, N> r;
  auto x_shape = [&](std::int64_t rows) {
    if constexpr (N == 1) return std::array<std::int64_t, 1>{rows};
    else return std::array<std::int64_t, 2>{rows, b.shape()[1]};
  };
  auto residuals_of = [&](const dndarray<T, N>& x) {
    // NumPy: only for a full-rank A with more rows than columns
    if (r.rank != n || m <= n) return ember::zeros<R>({0}, {.comm = comm});
    const dndarray<T, N> e = b - ember::matmul(a, x);
    if constexpr (N == 1) {
      const R ss = ember::sum(ember::detail::squared_magnitude(e));
      return ember::full<R>({1}, ss, {.comm = comm});
    } else {
      return dndarray<R, 1>(ember::sum(ember::detail::squared_magnitude(e), 0));
    }
  };
  if (m == 0 || n == 0) {
    r.s = ember::zeros<R>({0}, {.comm = comm});
    r.x = ember::zeros<T>(x_shape(n), {.split = b.split() && P > 1 ? b.split() : ember::none, .comm = comm});
    r.rank = 0;
    r.residuals = residuals_of(r.x);
    return r;
  }
  auto [U, S, Vh] = svd(a);
  r.s = S;
  const double cutoff = rc * impl::largest(S);
  r.rank = ember::count_nonzero(S > R(cutoff));
  const auto si = impl::inverted_singular_values(S, cutoff);
  if constexpr (N == 1) {
    dndarray<T, 1> c = ember::matmul(impl::adjoint(U), b) * si;  // s^-1 U^H b, k numbers
    r.x = dndarray<T, 1>(ember::matmul(impl::adjoint(Vh), c));
  } else {
    dndarray<T, 2> c = ember::matmul(impl::adjoint(U), b) * ember::expand_dims(si, 1);
    r.x = dndarray<T, 2>(ember::matmul(impl::adjoint(Vh), c));
  }
  r.residuals = residuals_of(r.x);
  return r;
}

// The Moore-Penrose pseudo-inverse (numpy.linalg.pinv): n x m, V diag(1/s) U^T
// with the singular values <= rcond * max(s) dropped. NumPy's order of products:
// Vh^T (s^-1[:, newaxis] U^T) (Vh^H and U^H for complex A).
template <class A>
  requires array_like<A>
auto pinv(const A& a_, double rcond = 1e-15) {
  static_assert(expr::node_t<A>::ndim == 2, "ember::linalg::pinv: takes a 2-D matrix");
  const auto a = impl::float_matrix(a_);
  using T = typename decltype(a)::value_type;
  const auto [m, n] = a.shape();
  if (m == 0 || n == 0) return ember::zeros<T>({n, m}, {.comm = a.comm()});
  auto [U, S, Vh] = svd(a);
  const auto si = impl::inverted_singular_values(S, rcond * impl::largest(S));
  dndarray<T, 2> y = ember::expand_dims(si, 1) * impl::adjoint(U);  // k x m
  return dndarray<T, 2>(ember::matmul(impl::adjoint(Vh), y));
}

}  // namespace ember::linalg
