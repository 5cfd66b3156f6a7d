// NumPy's other products, built from views, fused expressions and matmul (so
// each is planned, and printed by explain, like the pieces it is made of):
//
//   ember::cross(a, b, axis = -1)   // np.cross: 3-vectors (or 2-vectors) along `axis`
//   ember::vdot(a, b)               // np.vdot: sum of conj(a) * b over the flattened arrays, a scalar on every rank
//   ember::inner(a, b)              // np.inner: contracts the last axes
//   ember::kron(a, b)               // np.kron: the block matrix [a_ij * b]
//
// Also under ember::linalg (NumPy 2's numpy.linalg.cross, vdot spelled there too).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "../dsl/matmul.hpp"
#include "../dsl/reductions.hpp"
#include "../dsl/ufuncs.hpp"
#include "../indexing/indexing.hpp"
#include "../shape/shape.hpp"

namespace ember {

namespace detail {
// v(all, ..., all, i): component i of the last axis, a view of rank N - 1.
template <int N, class V>
auto last_component(const V& v, std::int64_t i) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) { return v(((void)I, ember::all)..., i); }(
      std::make_index_sequence<std::size_t(N - 1)>{});
}
}  // namespace detail

// The cross product of the vectors along `axis` of a and b (np.cross, equal
// ranks; the other axes broadcast). Vectors of 3 give vectors of 3 along `axis`;
// of 2 and 3, a 2-vector's third component is zero. Two 2-vectors (NumPy gives
// the z component, of rank N - 1; NumPy 2 deprecates it) are a value_error.
// The result is three fused passes, one per component, each writing through a
// view of the result.
template <class A, class B>
  requires(array_like<A> && array_like<B>)
auto cross(const A& a_, const B& b_, int axis = -1) {
  const auto a = detail::as_array(a_);
  const auto b = detail::as_array(b_);
  constexpr int N = std::remove_cvref_t<decltype(a)>::ndim_v;
  static_assert(N == std::remove_cvref_t<decltype(b)>::ndim_v, "ember::cross: a and b must have the same rank");
  using R = op::promote_t<typename decltype(a)::value_type, typename decltype(b)::value_type>;
  const int ax = detail::normalized_axis(axis, N, "cross");
  const std::int64_t la = a.shape()[std::size_t(ax)], lb = b.shape()[std::size_t(ax)];
  if ((la != 2 && la != 3) || (lb != 2 && lb != 3))
    throw value_error("ember::cross: incompatible dimensions for cross product (dimension must be 2 or 3): shapes " +
                      detail::shape_str(a.shape()) + " and " + detail::shape_str(b.shape()) + " along axis " +
                      std::to_string(ax));
  const auto am = moveaxis(a, ax, -1), bm = moveaxis(b, ax, -1);
  const auto a0 = detail::last_component<N>(am, 0), a1 = detail::last_component<N>(am, 1);
  const auto b0 = detail::last_component<N>(bm, 0), b1 = detail::last_component<N>(bm, 1);
  if (la == 2 && lb == 2)
    throw value_error("ember::cross: two 2-vectors (shapes " + detail::shape_str(a.shape()) + " and " +
                      detail::shape_str(b.shape()) + ") give only a z component, an array of one rank less, which "
                      "this call cannot return (NumPy 2 deprecates 2-vectors in np.cross): compute a0 * b1 - a1 * b0 "
                      "from views, or pad the vectors to 3");
  // the result's shape: the operands' other axes broadcast, 3 along `axis`
  std::array<std::int64_t, std::size_t(N)> shape{};
  const auto sa = a.shape(), sb = b.shape();
  for (int d = 0; d < N; ++d) {
    const auto ea = sa[std::size_t(d)], eb = sb[std::size_t(d)];
    if (d == ax) shape[std::size_t(d)] = 3;
    else if (ea == eb || eb == 1) shape[std::size_t(d)] = ea;
    else if (ea == 1) shape[std::size_t(d)] = eb;
    else
      throw shape_error("ember::cross: shapes " + detail::shape_str(sa) + " and " + detail::shape_str(sb) +
                        " do not broadcast (axis " + std::to_string(d) + ")");
  }
  const split_axis s = a.split() && *a.split() != ax ? a.split() : (b.split() && *b.split() != ax ? b.split() : none);
  auto r = ember::empty<R>(shape, {.split = s, .comm = a.comm()});
  const auto rm = moveaxis(r, ax, -1);
  auto c = [&](int i) { return detail::last_component<N>(rm, i); };
  auto A0 = astype<R>(a0), A1 = astype<R>(a1), B0 = astype<R>(b0), B1 = astype<R>(b1);
  if (la == 3 && lb == 3) {
    const auto A2 = astype<R>(detail::last_component<N>(am, 2)), B2 = astype<R>(detail::last_component<N>(bm, 2));
    c(0) = A1 * B2 - A2 * B1;
    c(1) = A2 * B0 - A0 * B2;
    c(2) = A0 * B1 - A1 * B0;
  } else if (la == 2) {  // a's third component is zero (NumPy's special case)
    const auto B2 = astype<R>(detail::last_component<N>(bm, 2));
    c(0) = A1 * B2;
    c(1) = -(A0 * B2);
    c(2) = A0 * B1 - A1 * B0;
  } else {  // b's third component is zero
    const auto A2 = astype<R>(detail::last_component<N>(am, 2));
    c(0) = -(A2 * B1);
    c(1) = A2 * B0;
    c(2) = A0 * B1 - A1 * B0;
  }
  return r;
}

namespace detail {
// conj(x) for a complex operand, x itself otherwise (no node).
template <class X>
auto conjugated(const X& x) {
  if constexpr (is_complex_v<typename expr::node_t<const X&>::value_type>) return ember::conj(x);
  else return x;
}
}  // namespace detail

// np.vdot: the sum of conj(a) * b over the flattened arrays (equal sizes; the
// same shape pairs elements in place, other shapes through ravel). As NumPy,
// the first operand is conjugated when complex.
template <class A, class B>
  requires(array_like<A> && array_like<B>)
auto vdot(const A& a_, const B& b_) {
  const auto a = detail::as_array(a_);
  const auto b = detail::as_array(b_);
  const auto sa = a.shape(), sb = b.shape();
  if (index_vec(sa.begin(), sa.end()) == index_vec(sb.begin(), sb.end())) return ember::sum(detail::conjugated(a) * b);
  if (a.layout().numel() != b.layout().numel())
    throw value_error("ember::vdot: arrays of shapes " + detail::shape_str(sa) + " and " + detail::shape_str(sb) +
                      " have different sizes (" + std::to_string(a.layout().numel()) + " and " +
                      std::to_string(b.layout().numel()) + ")");
  return ember::sum(detail::conjugated(ravel(a)) * ravel(b));
}

// np.inner: the sum over the last axes. Two vectors give a scalar (on every
// rank); otherwise the result has shape a.shape[:-1] + b.shape[:-1] (one
// matmul of a's rows against b's rows, reshaped).
template <class A, class B>
  requires(array_like<A> && array_like<B>)
auto inner(const A& a_, const B& b_) {
  const auto a = detail::as_array(a_);
  const auto b = detail::as_array(b_);
  constexpr int Na = std::remove_cvref_t<decltype(a)>::ndim_v, Nb = std::remove_cvref_t<decltype(b)>::ndim_v;
  const auto sa = a.shape(), sb = b.shape();
  if (sa[Na - 1] != sb[Nb - 1])
    throw shape_error("ember::inner: shapes " + detail::shape_str(sa) + " and " + detail::shape_str(sb) +
                      " are not aligned: the last axes have " + std::to_string(sa[Na - 1]) + " and " +
                      std::to_string(sb[Nb - 1]) + " elements");
  if constexpr (Na == 1 && Nb == 1) {
    return ember::sum(a * b);
  } else if constexpr (Na == 2 && Nb == 2) {
    return ember::eval(ember::matmul(a, ember::transpose(b)));
  } else if constexpr (Na == 2 && Nb == 1) {
    return ember::eval(ember::matmul(a, b));
  } else if constexpr (Na == 1 && Nb == 2) {
    return ember::eval(ember::matmul(b, a));
  } else {
    const std::int64_t k = sa[Na - 1];
    auto a2 = reshape(a, std::array<std::int64_t, 2>{-1, k});
    auto b2 = reshape(b, std::array<std::int64_t, 2>{-1, k});
    dndarray<typename decltype(a2)::value_type, 2> p = ember::matmul(a2, ember::transpose(b2));
    std::array<std::int64_t, std::size_t(Na + Nb - 2)> shape{};
    for (int d = 0; d < Na - 1; ++d) shape[std::size_t(d)] = sa[std::size_t(d)];
    for (int d = 0; d < Nb - 1; ++d) shape[std::size_t(Na - 1 + d)] = sb[std::size_t(d)];
    return reshape(p, shape);
  }
}

// np.kron for operands of equal rank: block (i, j, ...) of the result is
// a[i, j, ...] * b. One fused product over the interleaved axes (a's rows keep
// their ranks), then a reshape that moves nothing when a is split along axis 0.
template <class A, class B>
  requires(array_like<A> && array_like<B>)
auto kron(const A& a_, const B& b_) {
  const auto a = detail::as_array(a_);
  const auto b = detail::as_array(b_);
  constexpr int N = std::remove_cvref_t<decltype(a)>::ndim_v;
  static_assert(N == std::remove_cvref_t<decltype(b)>::ndim_v, "ember::kron: a and b must have the same rank");
  static_assert(2 * N <= 32, "ember::kron: at most 16 dimensions");
  const auto sa = a.shape(), sb = b.shape();
  std::array<std::int64_t, std::size_t(2 * N)> ea{}, eb{};
  std::array<std::int64_t, std::size_t(N)> out{};
  for (int d = 0; d < N; ++d) {
    ea[std::size_t(2 * d)] = sa[std::size_t(d)], ea[std::size_t(2 * d + 1)] = 1;
    eb[std::size_t(2 * d)] = 1, eb[std::size_t(2 * d + 1)] = sb[std::size_t(d)];
    out[std::size_t(d)] = sa[std::size_t(d)] * sb[std::size_t(d)];
  }
  using R = op::promote_t<typename decltype(a)::value_type, typename decltype(b)::value_type>;
  const auto ra = reshape(a, ea), rb = reshape(b, eb);
  eval_options o;
  if (a.split() && a.comm().size() > 1) o.split = 2 * *a.split();
  else if (b.split() && b.comm().size() > 1) o.split = 2 * *b.split() + 1;
  dndarray<R, 2 * N> p = ember::eval(ra * rb, o);
  return reshape(p, out);
}

namespace linalg {
using ember::cross;
using ember::vdot;
}  // namespace linalg

}  // namespace ember
