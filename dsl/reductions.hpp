// Reductions: sum prod mean var std min max argmin argmax all any.
//
//   ember::sum(a)                      a scalar (evaluated now, on every rank)
//   ember::sum(a, ember::all_axes)     the same as a lazy 0-d expression (for explain)
//   ember::sum(a, 1)                   lazy, rank N-1
//   ember::sum(a, 1, {.keepdims = true}), ember::sum(a, {0, 2})
//   ember::mean/var/std(a, ember::all_axes[, {.keepdims, .ddof}])  likewise
//                                      lazy; their rank is known at run time, so
//                                      they convert to a dndarray of that rank
//
// Split rules (Heat's): reducing over the split axis gives a replicated result
// (local reduction + allreduce); over another axis the result keeps the split.
// A reduction consumes the elementwise expression under it chunk by chunk:
// sum(a * b) never materializes a * b.
#pragma once

#include <numeric>

#include "eval.hpp"

namespace ember {

struct reduce_options {
  bool keepdims = false;
  std::int64_t ddof = 0;  // var/std: divide by N - ddof
};
struct all_axes_t {};
inline constexpr all_axes_t all_axes{};

namespace detail {

template <class A>
constexpr int rank_of = expr::node_t<A>::ndim;

template <class Op, int R, bool Exact, class A>
auto make_reduction(const A& a, std::vector<int> axes, bool keepdims) {
  auto n = expr::as_node(a);
  return expr::reduction<Op, decltype(n), R, Exact>(n, std::move(axes), keepdims);
}
template <class A>
std::vector<int> every_axis(const A& a) {
  std::vector<int> ax(expr::as_node(a).shape().size());
  std::iota(ax.begin(), ax.end(), 0);
  return ax;
}
// Evaluates a reduction over every axis and returns the replicated scalar.
template <class Op, class Code, class A>
auto reduce_to_scalar(const A& a) {
  auto r = make_reduction<Op, 0, true>(a, every_axis(a), false);
  return evaluate_scalar<Code>(r);
}
template <class R>
double reduced_count(const R& r) {
  const index_vec s = r.arg.shape();
  double n = 1;
  for (int a : r.axes) n *= double(s[std::size_t(a)]);
  return n;
}

}  // namespace detail

#define EMBER_REDUCTION_AS(FN, NAME)                                                                           \
  template <array_like A, class Code = detail::this_code>                                               \
  auto FN(const A& a) {                                                                               \
    return detail::reduce_to_scalar<op::NAME, Code>(a);                                                 \
  }                                                                                                     \
  template <array_like A>                                                                               \
  auto FN(const A& a, all_axes_t) {                                                                   \
    return detail::make_reduction<op::NAME, 0, true>(a, detail::every_axis(a), false);                  \
  }                                                                                                     \
  template <array_like A>                                                                               \
  auto FN(const A& a, int axis) {                                                                     \
    constexpr int N = detail::rank_of<A>;                                                               \
    return detail::make_reduction<op::NAME, (N > 0 ? N - 1 : 0), true>(a, {axis}, false);               \
  }                                                                                                     \
  template <array_like A>                                                                               \
  auto FN(const A& a, int axis, const reduce_options& o) {                                            \
    return detail::make_reduction<op::NAME, detail::rank_of<A>, false>(a, {axis}, o.keepdims);          \
  }                                                                                                     \
  template <array_like A>                                                                               \
  auto FN(const A& a, std::initializer_list<int> axes, const reduce_options& o = {}) {                \
    return detail::make_reduction<op::NAME, detail::rank_of<A>, false>(a, std::vector<int>(axes), o.keepdims); \
  }
#define EMBER_REDUCTION(NAME) EMBER_REDUCTION_AS(NAME, NAME)
EMBER_REDUCTION(sum)
EMBER_REDUCTION(prod)
EMBER_REDUCTION(min)
EMBER_REDUCTION(max)
EMBER_REDUCTION(any)
EMBER_REDUCTION(argmin)
EMBER_REDUCTION(argmax)
#undef EMBER_REDUCTION
namespace detail {
EMBER_REDUCTION_AS(all_reduction, all)
}  // namespace detail
#undef EMBER_REDUCTION_AS

// ember::all is two things, as in NumPy code: the reduction all(a, ...) and, as
// an index (a(ember::all, 3)), every element of an axis (NumPy's `:`).
struct all_t {
  template <array_like A, class Code = detail::this_code>
  auto operator()(const A& a) const {
    return detail::all_reduction<A, Code>(a);
  }
  template <array_like A>
  auto operator()(const A& a, all_axes_t t) const {
    return detail::all_reduction(a, t);
  }
  template <array_like A>
  auto operator()(const A& a, int axis) const {
    return detail::all_reduction(a, axis);
  }
  template <array_like A>
  auto operator()(const A& a, int axis, const reduce_options& o) const {
    return detail::all_reduction(a, axis, o);
  }
  template <array_like A>
  auto operator()(const A& a, std::initializer_list<int> axes, const reduce_options& o = {}) const {
    return detail::all_reduction(a, axes, o);
  }
};
inline constexpr all_t all{};

// mean = sum / count: an elementwise division after the (fused) sum.
template <array_like A, class Code = detail::this_code>
auto mean(const A& a) {
  using F = op::mean_t<typename expr::node_t<A>::value_type>;
  using D = std::conditional_t<is_complex_v<F>, complex128, double>;  // divided in double precision
  const index_vec s = expr::as_node(a).shape();
  double n = 1;
  for (auto x : s) n *= double(x);
  return F(op::convert<D>(sum<A, Code>(a)) / n);
}
template <array_like A>
auto mean(const A& a, all_axes_t) {  // a lazy 0-d mean (for explain, or to fuse into more work)
  auto s = sum(a, all_axes);
  return s / detail::reduced_count(s);
}
template <array_like A>
auto mean(const A& a, all_axes_t, const reduce_options& o) {  // keepdims: rank N (known at run time)
  auto s = detail::make_reduction<op::sum, detail::rank_of<A>, false>(a, detail::every_axis(a), o.keepdims);
  return s / detail::reduced_count(s);
}
template <array_like A>
auto mean(const A& a, int axis) {
  auto s = sum(a, axis);
  return s / detail::reduced_count(s);
}
template <array_like A>
auto mean(const A& a, int axis, const reduce_options& o) {
  auto s = sum(a, axis, o);
  return s / detail::reduced_count(s);
}
template <array_like A>
auto mean(const A& a, std::initializer_list<int> axes, const reduce_options& o = {}) {
  auto s = sum(a, axes, o);
  return s / detail::reduced_count(s);
}

namespace detail {
// |d|^2 of a deviation: d * d, or re^2 + im^2 for complex d (NumPy's
// (x * conj(x)).real, a real value).
template <class D>
auto squared_magnitude(const D& d) {
  if constexpr (is_complex_v<typename expr::node_t<const D&>::value_type>) return expr::unary<op::abs2>(d);
  else return d * d;
}
// Two-pass variance: mean(|a - mean(a, axes, keepdims)|^2) with N - ddof. The
// tree holds the mean twice (d * d); the planner computes it once (common
// subexpressions): one pass for the mean, one for the squared deviations.
template <int R, bool Exact, class A>
auto variance(const A& a, std::vector<int> axes, bool keepdims, std::int64_t ddof) {
  constexpr int N = rank_of<A>;
  auto s1 = make_reduction<op::sum, N, true>(a, axes, true);
  const double n = reduced_count(s1);
  auto d = a - s1 / n;
  auto s2 = make_reduction<op::sum, R, Exact>(squared_magnitude(d), std::move(axes), keepdims);
  return s2 / (n - double(ddof));
}
}  // namespace detail

template <array_like A, class Code = detail::this_code>
auto var(const A& a, const reduce_options& o = {}) {
  using F = real_of_t<op::mean_t<typename expr::node_t<A>::value_type>>;
  auto v = detail::variance<0, true>(a, detail::every_axis(a), false, o.ddof);
  return F(detail::evaluate_scalar<Code>(v));
}
template <array_like A>
auto var(const A& a, all_axes_t) {
  return detail::variance<0, true>(a, detail::every_axis(a), false, 0);
}
template <array_like A>
auto var(const A& a, all_axes_t, const reduce_options& o) {
  return detail::variance<detail::rank_of<A>, false>(a, detail::every_axis(a), o.keepdims, o.ddof);
}
template <array_like A>
auto var(const A& a, int axis) {
  constexpr int N = detail::rank_of<A>;
  return detail::variance<(N > 0 ? N - 1 : 0), true>(a, {axis}, false, 0);
}
template <array_like A>
auto var(const A& a, int axis, const reduce_options& o) {
  return detail::variance<detail::rank_of<A>, false>(a, {axis}, o.keepdims, o.ddof);
}
template <array_like A>
auto var(const A& a, std::initializer_list<int> axes, const reduce_options& o = {}) {
  return detail::variance<detail::rank_of<A>, false>(a, std::vector<int>(axes), o.keepdims, o.ddof);
}
template <array_like A>
auto std(const A& a, const reduce_options& o = {}) {
  using std::sqrt;
  return sqrt(var(a, o));
}
template <array_like A>
auto std(const A& a, all_axes_t) {
  return sqrt(var(a, all_axes));
}
template <array_like A>
auto std(const A& a, all_axes_t, const reduce_options& o) {
  return sqrt(var(a, all_axes, o));
}
template <array_like A>
auto std(const A& a, int axis) {
  return sqrt(var(a, axis));
}
template <array_like A>
auto std(const A& a, int axis, const reduce_options& o) {
  return sqrt(var(a, axis, o));
}
template <array_like A>
auto std(const A& a, std::initializer_list<int> axes, const reduce_options& o = {}) {
  return sqrt(var(a, axes, o));
}

}  // namespace ember
