// Matrix products and transposes as lazy nodes:
//
//   auto C = ember::matmul(A, B);          // planner picks the algorithm from the splits
//   ember::dndarray<double, 2> D = ember::matmul(A, B) + C;   // the + fuses into the next step
//   ember::explain(ember::matmul(A, B))    // the algorithm and its predicted traffic
//
// Operands are arrays or expressions (an expression operand is evaluated by the
// plan, then multiplied). Operand types are promoted as NumPy promotes them.
#pragma once

#include "eval.hpp"

namespace ember {

namespace detail {
template <class R, class X>
auto cast_node(X&& x) {
  using N = expr::node_t<X>;
  if constexpr (std::is_same_v<typename N::value_type, R>) return expr::as_node(std::forward<X>(x));
  else return astype<R>(std::forward<X>(x));
}
template <class A, class B>
using product_t = typename op::mul::template result<typename expr::node_t<A>::value_type,
                                                     typename expr::node_t<B>::value_type>;
template <bool Outer, class A, class B>
auto make_matmul(A&& a, B&& b) {
  using R = product_t<A, B>;
  static_assert(!std::is_same_v<R, bool>, "ember::matmul: bool matrices are not supported; cast with astype<int>");
  auto na = expr::step_operand(cast_node<R>(std::forward<A>(a)));
  auto nb = expr::step_operand(cast_node<R>(std::forward<B>(b)));
  return expr::matmul_node<decltype(na), decltype(nb), Outer>(std::move(na), std::move(nb));
}
}  // namespace detail

// NumPy's matmul: (m, k) @ (k, n) -> (m, n); a 1-D operand is a row (left) or a
// column (right) vector whose axis is dropped. Operands of 3 or more axes are
// stacks of matrices, (..., m, k) @ (..., k, n) -> (..., m, n) with the batch
// axes broadcast (a 2-D operand is one matrix for every batch): a stack split on
// a batch axis multiplies with no communication (EXPLAIN: `by batched`).
template <array_like A, array_like B>
auto matmul(A&& a, B&& b) {
  constexpr int ra = expr::node_t<A>::ndim, rb = expr::node_t<B>::ndim;
  static_assert(ra >= 1 && rb >= 1, "ember::matmul: operands must have at least one axis (NumPy: use multiply)");
  return detail::make_matmul<false>(std::forward<A>(a), std::forward<B>(b));
}

// numpy.dot for 1-D and 2-D operands: the matrix product, and for two vectors
// their inner product as a scalar (evaluated now, on every rank). NumPy's dot
// of N-D operands sums over a's last and b's second-last axis for every pair of
// their other indices, which is not matmul's stacking: not offered here.
template <array_like A, array_like B, class Code = detail::this_code>
auto dot(A&& a, B&& b) {
  constexpr int ra = expr::node_t<A>::ndim, rb = expr::node_t<B>::ndim;
  static_assert(ra >= 1 && ra <= 2 && rb >= 1 && rb <= 2,
                "ember::dot: operands must be 1-D or 2-D (for stacks of matrices use ember::matmul)");
  if constexpr (ra == 1 && rb == 1) {
    return detail::evaluate_scalar<Code>(matmul(std::forward<A>(a), std::forward<B>(b)));
  } else {
    return matmul(std::forward<A>(a), std::forward<B>(b));
  }
}

// The outer product of two vectors: (m,) x (n,) -> (m, n).
template <array_like A, array_like B>
auto outer(A&& a, B&& b) {
  static_assert(expr::node_t<A>::ndim == 1 && expr::node_t<B>::ndim == 1, "ember::outer: takes two 1-D operands");
  return detail::make_matmul<true>(std::forward<A>(a), std::forward<B>(b));
}

// The axes reversed, lazily: split k becomes split ndim-1-k, nothing is sent.
template <array_like A>
auto transpose(A&& a) {
  auto n = expr::step_operand(expr::as_node(std::forward<A>(a)));
  return expr::transpose_node<decltype(n)>(std::move(n));
}

}  // namespace ember
