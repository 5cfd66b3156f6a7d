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
// an allreduce of n numbers, and x = V (s^-1 U^T b) is local.
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
  dndarray<T, N> x;          // (n,) or (n, k)
  dndarray<T, 1> residuals;  // squared 2-norms of b - A x per column: (k,), (1,) for a vector b; empty unless rank == n < m
  std::int64_t rank = 0;     // the number of singular values above the cutoff
  dndarray<T, 1> s;          // A's singular values, descending
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
  const dndarray<T, N> b = [&] {
    auto x = impl::operand_array(b_);
    if constexpr (std::is_same_v<typename decltype(x)::value_type, T>) return x;
    else return dndarray<T, N>(ember::astype<T>(x));
  }();
  const auto [m, n] = a.shape();
  if (b.shape()[0] != m)
    throw shape_error("ember::linalg::lstsq: A of shape " + ember::detail::shape_str(a.shape()) + " and b of shape " +
                      ember::detail::shape_str(b.shape()) + ": b needs " + std::to_string(m) + " rows");
  impl::require_same_comm("lstsq", a, b);
  const auto& comm = a.comm();
  const int P = comm.size();
  const double eps = double(std::numeric_limits<T>::epsilon());
  const double rc = !rcond ? eps * double(std::max(m, n)) : (*rcond < 0 ? eps : *rcond);

  lstsq_result<T, N> r;
  auto x_shape = [&](std::int64_t rows) {
    if constexpr (N == 1) return std::array<std::int64_t, 1>{rows};
    else return std::array<std::int64_t, 2>{rows, b.shape()[1]};
  };
  auto residuals_of = [&](const dndarray<T, N>& x) {
    // NumPy: only for a full-rank A with more rows than columns
    if (r.rank != n || m <= n) return ember::zeros<T>({0}, {.comm = comm});
    if constexpr (N == 1) {
      const T ss = ember::sum(ember::square(b - ember::matmul(a, x)));
      return ember::full<T>({1}, ss, {.comm = comm});
    } else {
      return dndarray<T, 1>(ember::sum(ember::square(b - ember::matmul(a, x)), 0));
    }
  };
  if (m == 0 || n == 0) {
    r.s = ember::zeros<T>({0}, {.comm = comm});
    r.x = ember::zeros<T>(x_shape(n), {.split = b.split() && P > 1 ? b.split() : ember::none, .comm = comm});
    r.rank = 0;
    r.residuals = residuals_of(r.x);
    return r;
  }
  auto [U, S, Vh] = svd(a);
  r.s = S;
  const double cutoff = rc * impl::largest(S);
  r.rank = ember::count_nonzero(S > T(cutoff));
  const auto si = impl::inverted_singular_values(S, cutoff);
  if constexpr (N == 1) {
    dndarray<T, 1> c = ember::matmul(ember::transpose(U), b) * si;  // s^-1 U^T b, k numbers
    r.x = dndarray<T, 1>(ember::matmul(ember::transpose(Vh), c));
  } else {
    dndarray<T, 2> c = ember::matmul(ember::transpose(U), b) * ember::expand_dims(si, 1);
    r.x = dndarray<T, 2>(ember::matmul(ember::transpose(Vh), c));
  }
  r.residuals = residuals_of(r.x);
  return r;
}

// The Moore-Penrose pseudo-inverse (numpy.linalg.pinv): n x m, V diag(1/s) U^T
// with the singular values <= rcond * max(s) dropped. NumPy's order of products:
// Vh^T (s^-1[:, newaxis] U^T).
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
  dndarray<T, 2> y = ember::expand_dims(si, 1) * ember::transpose(U, {1, 0});  // k x m
  return dndarray<T, 2>(ember::matmul(ember::transpose(Vh), y));
}

}  // namespace ember::linalg
