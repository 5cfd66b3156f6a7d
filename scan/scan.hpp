// Scans: NumPy's cumsum, cumprod, nancumsum, nancumprod, cumulative_sum,
// cumulative_prod, and the running maximum and minimum (np.maximum.accumulate,
// np.minimum.accumulate), along any axis of any split.
//
//   ember::dndarray<double, 2> c = ember::cumsum(a, 1);  // along a local axis: no communication
//   auto s = ember::cumsum(x * x, 0);       // along the split axis: one MPI_Exscan of a slice
//   std::cout << ember::explain(ember::cumsum(a, 0));   // the scan step and its bytes
//
// A scan is a step of the plan, like a matrix product: an elementwise operand is
// computed as the scan reads it (`cumsum(x * w)` writes no temporary; along a
// split axis only when it is cheap to compute twice, else it is one fused pass
// before the scan). The kernel that reads the scan computes it as it goes when
// nothing else reads it and its operand is not folded (`cumsum(a, 0) / n` is
// one step, no block of the scan written); otherwise the next fused kernel
// reads the scan's result.
// Along the split axis each rank reads its block once for its totals, one
// exclusive scan across the ranks brings every rank the carry of the ranks
// before it, and one pass writes the scan from that carry (scan/scan_kernel.hpp).
//
// Dtypes follow NumPy: cumsum and cumprod of bool and of integers narrower than
// 64 bits accumulate in int64 (unsigned: uint64); floats and complex keep theirs.
// cummax/cummin keep the dtype and propagate NaN; complex numbers have no order
// here (a compile error).
#pragma once

#include <string_view>

#include "../dsl/eval.hpp"
#include "../dsl/matmul.hpp"
#include "../dsl/shift.hpp"
#include "../dsl/traversal.hpp"
#include "../dsl/ufuncs.hpp"
#include "../dsl/view.hpp"
#include "../shape/shape.hpp"
#include "scan_kernel.hpp"

namespace ember {

namespace expr {

template <scan_kind K>
struct scan_op {
  static constexpr std::string_view name = K == scan_kind::sum    ? "cumsum"
                                           : K == scan_kind::prod ? "cumprod"
                                           : K == scan_kind::max  ? "cummax"
                                                                  : "cummin";
};

// The scan of A along `scan_axis`: same shape, same dtype (the operand is cast first).
template <scan_kind K, class A>
struct scan_node : node_base {
  using value_type = typename A::value_type;
  static constexpr int ndim = A::ndim;
  static constexpr bool exact_ndim = A::exact_ndim;
  static constexpr int node_count = 1 + A::node_count;
  static constexpr scan_kind scan = K;
  static scan_op<K> op_tag() { return {}; }
  hana::tuple<A> args;
  int scan_axis = 0;
  dims shape_;
  scan_node(A a, int axis) : args(std::move(a)), shape_(hana::at_c<0>(args).shape_dims()) {
    scan_axis = detail::normalized_axis(axis, int(shape_.size()), scan_op<K>::name.data());
  }
  const dims& shape_dims() const { return shape_; }
  index_vec shape() const { return index_vec(shape_.begin(), shape_.end()); }
};

template <scan_kind K, class A>
struct node_traits<scan_node<K, A>> {
  static constexpr node_class kind = node_class::step_op;
};

}  // namespace expr

namespace detail {

// NumPy's accumulation dtype for sums and products (the platform integer).
template <class T>
using accumulate_t = std::conditional_t<
    std::is_same_v<T, bool> || (std::is_integral_v<T> && std::is_signed_v<T> && sizeof(T) < 8), std::int64_t,
    std::conditional_t<std::is_integral_v<T> && std::is_unsigned_v<T> && sizeof(T) < 8, std::uint64_t, T>>;

template <scan_kind K, class A>
auto make_scan(A&& a, int axis) {
  using T = typename expr::node_t<A>::value_type;
  using R = std::conditional_t<K == scan_kind::sum || K == scan_kind::prod, accumulate_t<T>, T>;
  static_assert(!(is_complex_v<T> && (K == scan_kind::max || K == scan_kind::min)),
                "ember::cummax/cummin: complex numbers have no order here; scan ember::abs(a) or ember::real(a)");
  auto n = expr::step_operand(cast_node<R>(std::forward<A>(a)));
  return expr::scan_node<K, decltype(n)>(std::move(n), axis);
}

// axis=None: the flattened array (C order), as NumPy scans it.
template <scan_kind K, class A>
auto make_flat_scan(A&& a) {
  if constexpr (expr::node_t<A>::ndim == 1) return make_scan<K>(std::forward<A>(a), 0);
  else return make_scan<K>(ember::ravel(ember::eval(std::forward<A>(a))), 0);
}

}  // namespace detail

// np.cumsum(a, axis): the running sum along `axis` (negative counts from the end).
template <array_like A>
auto cumsum(A&& a, int axis) {
  return detail::make_scan<scan_kind::sum>(std::forward<A>(a), axis);
}
// np.cumsum(a): of the flattened array (1-D; an N-D operand is evaluated and raveled first).
template <array_like A>
auto cumsum(A&& a) {
  return detail::make_flat_scan<scan_kind::sum>(std::forward<A>(a));
}
template <array_like A>
auto cumprod(A&& a, int axis) {
  return detail::make_scan<scan_kind::prod>(std::forward<A>(a), axis);
}
template <array_like A>
auto cumprod(A&& a) {
  return detail::make_flat_scan<scan_kind::prod>(std::forward<A>(a));
}
// The running maximum and minimum: np.maximum.accumulate(a, axis), NaN propagating.
template <array_like A>
auto cummax(A&& a, int axis) {
  return detail::make_scan<scan_kind::max>(std::forward<A>(a), axis);
}
template <array_like A>
auto cummax(A&& a) {
  return detail::make_flat_scan<scan_kind::max>(std::forward<A>(a));
}
template <array_like A>
auto cummin(A&& a, int axis) {
  return detail::make_scan<scan_kind::min>(std::forward<A>(a), axis);
}
template <array_like A>
auto cummin(A&& a) {
  return detail::make_flat_scan<scan_kind::min>(std::forward<A>(a));
}

namespace detail {
// NumPy's _replace_nan: NaN (complex: a NaN part) read as `v`; other dtypes
// have none and pass through.
template <class A>
auto nan_read_as(A&& a, int v) {
  using T = typename expr::node_t<A>::value_type;
  if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) {
    auto n = expr::as_node(std::forward<A>(a));
    return ember::where(ember::isnan(n), T(v), n);
  } else {
    return std::forward<A>(a);
  }
}
}  // namespace detail

// np.nancumsum, np.nancumprod: the scans with NaN read as 0 (sums) or 1
// (products), one fused pass into the scan; a leading run of NaN gives 0 or 1.
template <array_like A>
auto nancumsum(A&& a, int axis) {
  return cumsum(detail::nan_read_as(std::forward<A>(a), 0), axis);
}
template <array_like A>
auto nancumsum(A&& a) {
  return cumsum(detail::nan_read_as(std::forward<A>(a), 0));
}
template <array_like A>
auto nancumprod(A&& a, int axis) {
  return cumprod(detail::nan_read_as(std::forward<A>(a), 1), axis);
}
template <array_like A>
auto nancumprod(A&& a) {
  return cumprod(detail::nan_read_as(std::forward<A>(a), 1));
}

// NumPy 2's array-API spellings: cumulative_sum(x, axis=...) (the axis may be
// omitted for 1-D arrays only, as NumPy requires), lazy like cumsum. With
// options, `{.include_initial = true}` puts the identity (0 for sums, 1 for
// products) before the first element of every line: the result is one longer
// along the axis, evaluated now (a dndarray), the scan's layout with the axis
// extended (balanced when the axis is split).
struct cumulative_options {
  bool include_initial = false;
};

namespace detail {
template <scan_kind K, class A>
auto cumulative_evaluated(A&& a, int axis, const cumulative_options& o, const char* what) {
  auto s = ember::eval(make_scan<K>(std::forward<A>(a), axis));
  using R = typename decltype(s)::value_type;
  constexpr int N = decltype(s)::ndim_v;
  if (!o.include_initial) return s;
  require_host(s.device(), what);
  const int ax = normalized_axis(axis, N, what);
  const layout& l = s.layout();
  const communicator& c = s.comm();
  index_vec shape = l.shape();
  const std::int64_t n = shape[std::size_t(ax)];
  shape[std::size_t(ax)] = n + 1;
  const layout rl = !l.split()           ? replicated_layout(shape, c.size())
                    : *l.split() == ax ? layout::balanced(shape, ax, c.size())
                                       : l.with_shape(shape, *l.split());
  dndarray<R, N> r(rl, c);
  view_spec first = whole_spec(shape), rest = whole_spec(shape);
  first.axes[std::size_t(ax)] = view_axis{ax, 0, 1, 1};
  rest.axes[std::size_t(ax)] = view_axis{ax, n > 0 ? 1 : 0, 1, n};
  expr::view_leaf<R, N, N>(r, std::make_shared<const view_geometry>(rl, std::move(first), true)) =
      R(K == scan_kind::prod ? 1 : 0);
  place_into(s, r, std::move(rest));
  return r;
}
}  // namespace detail

template <array_like A>
auto cumulative_sum(A&& a, int axis) {
  return cumsum(std::forward<A>(a), axis);
}
template <array_like A>
auto cumulative_sum(A&& a) {
  static_assert(expr::node_t<A>::ndim == 1, "ember::cumulative_sum: pass the axis for arrays of more than one axis (NumPy 2 requires it)");
  return cumsum(std::forward<A>(a), 0);
}
template <array_like A>
auto cumulative_sum(A&& a, int axis, const cumulative_options& o) {
  return detail::cumulative_evaluated<scan_kind::sum>(std::forward<A>(a), axis, o, "cumulative_sum");
}
template <array_like A>
auto cumulative_sum(A&& a, const cumulative_options& o) {
  static_assert(expr::node_t<A>::ndim == 1, "ember::cumulative_sum: pass the axis for arrays of more than one axis (NumPy 2 requires it)");
  return detail::cumulative_evaluated<scan_kind::sum>(std::forward<A>(a), 0, o, "cumulative_sum");
}
template <array_like A>
auto cumulative_prod(A&& a, int axis) {
  return cumprod(std::forward<A>(a), axis);
}
template <array_like A>
auto cumulative_prod(A&& a) {
  static_assert(expr::node_t<A>::ndim == 1, "ember::cumulative_prod: pass the axis for arrays of more than one axis (NumPy 2 requires it)");
  return cumprod(std::forward<A>(a), 0);
}
template <array_like A>
auto cumulative_prod(A&& a, int axis, const cumulative_options& o) {
  return detail::cumulative_evaluated<scan_kind::prod>(std::forward<A>(a), axis, o, "cumulative_prod");
}
template <array_like A>
auto cumulative_prod(A&& a, const cumulative_options& o) {
  static_assert(expr::node_t<A>::ndim == 1, "ember::cumulative_prod: pass the axis for arrays of more than one axis (NumPy 2 requires it)");
  return detail::cumulative_evaluated<scan_kind::prod>(std::forward<A>(a), 0, o, "cumulative_prod");
}

}  // namespace ember
