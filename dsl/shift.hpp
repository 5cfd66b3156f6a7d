// Shifts and reversals along one axis, built from views (dsl/view.hpp):
//
//   ember::diff(a, n = 1, axis = -1)   NumPy's diff: a[1:] - a[:-1], n times
//   ember::roll(a, shift, axis)        periodic shift: out[(i + shift) % n] = a[i]
//   ember::flip(a, axis)               a[::-1] along axis
//
// Each returns a new array; the moves they need are the exchange engine's (a
// shift's boundary rows between neighbours, a flip along the split axis between
// rank r and rank P-1-r), with exact traffic.
#pragma once

#include <cstdint>
#include <memory>

#include "factories.hpp"
#include "view.hpp"

namespace ember {

namespace detail {
inline int normalized_axis(int axis, int ndim, const char* what) {
  const int a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    throw axis_error(std::string("ember::") + what + ": axis " + std::to_string(axis) +
                     " is out of bounds for an array of dimension " + std::to_string(ndim));
  return a;
}
// a[..., start : start + count * step : step, ...] along `axis` (already normalized).
template <dtype T, int N>
expr::view_leaf<T, N, N> axis_view(const dndarray<T, N>& a, int axis, std::int64_t start, std::int64_t count,
                                   std::int64_t step = 1, bool reversed_ok = false) {
  view_spec s = whole_spec(a.layout().shape());
  s.axes[std::size_t(axis)] = view_axis{axis, count > 0 ? start : 0, step, count};
  return expr::view_leaf<T, N, N>(a, std::make_shared<const view_geometry>(a.layout(), std::move(s), reversed_ok));
}
}  // namespace detail

// The n-th discrete difference along `axis` (NumPy's diff; n = 0 returns a copy,
// an axis shorter than n gives an empty result). Each order is one fused pass over
// two shifted views; along the split axis the boundary rows travel as a halo.
template <dtype T, int N>
  requires(!std::is_same_v<T, bool>)
dndarray<T, N> diff(const dndarray<T, N>& a, int n = 1, int axis = -1) {
  const int ax = detail::normalized_axis(axis, N, "diff");
  if (n < 0) throw value_error("ember::diff: order must be non-negative but got " + std::to_string(n));
  dndarray<T, N> r = a.copy();
  for (int i = 0; i < n; ++i) {
    const std::int64_t len = r.shape()[std::size_t(ax)];
    const std::int64_t m = len > 0 ? len - 1 : 0;
    r = ember::eval(detail::axis_view(r, ax, 1, m) - detail::axis_view(r, ax, 0, m));
  }
  return r;
}

// Elements shifted by `shift` along `axis`, those past the end coming back at
// the start (NumPy's roll with an axis). Two assignments through views: along the
// split axis the planner moves only the rows that change rank.
template <dtype T, int N>
dndarray<T, N> roll(const dndarray<T, N>& a, std::int64_t shift, int axis) {
  const int ax = detail::normalized_axis(axis, N, "roll");
  const std::int64_t n = a.shape()[std::size_t(ax)];
  auto r = empty_like(a);
  if (n == 0 || r.numel() == 0) return r;
  const std::int64_t s = ((shift % n) + n) % n;
  if (s == 0) return a.copy();
  detail::axis_view(r, ax, s, n - s) = detail::axis_view(a, ax, 0, n - s);
  detail::axis_view(r, ax, 0, s) = detail::axis_view(a, ax, n - s, s);
  return r;
}

// The elements in reverse order along `axis` (NumPy's flip), in `a`'s layout.
// Along a non-split axis one fused pass; along the split axis the exchange engine
// moves each rank's rows, read backwards, to where they belong.
template <dtype T, int N>
dndarray<T, N> flip(const dndarray<T, N>& a, int axis) {
  const int ax = detail::normalized_axis(axis, N, "flip");
  const std::int64_t n = a.shape()[std::size_t(ax)];
  auto v = detail::axis_view(a, ax, n - 1, n, -1, /*reversed_ok=*/true);
  if (!v.geo->reversed()) return ember::eval(v);  // the elements stay on their ranks
  if (a.device() != device_kind::cpu) throw value_error("ember::flip: along the split axis of a GPU array is not supported yet");
  auto r = empty_like(a);
  exchange(view_distribution(v.geo), r.layout(), a.comm().rank(), sizeof(T)).run(a.comm(), a.lstorage(), r.lstorage());
  return r;
}

}  // namespace ember
