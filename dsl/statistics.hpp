// NaN-aware reductions and the comparisons and statistics built from reductions:
//
//   nansum nanprod nanmin nanmax nanargmin nanargmax nanmean nanvar nanstd
//   ptp count_nonzero average  (the same call forms as ember::sum: a value on
//                               every rank, or lazy with an axis / all_axes)
//   allclose(a, b) array_equal(a, b)   a bool on every rank
//   cov(m) corrcoef(m)                 NumPy's (variables in rows by default)
//
// Each is a composition of the reduction nodes (dsl/reductions.hpp) with
// elementwise ones, so nansum(a * b, 1) is one fused pass like sum(a * b, 1),
// and every step is planned and printable.
#pragma once

#include <cmath>
#include <limits>
#include <optional>

#include "../shape/shape.hpp"
#include "matmul.hpp"
#include "reductions.hpp"
#include "ufuncs.hpp"

namespace ember {

namespace detail {

template <class A>
using elem_t = typename expr::node_t<A>::value_type;

// a with its NaNs replaced by `fill` (integers and bool have none: a itself).
template <class A>
auto nan_filled(const A& a, double fill) {
  using T = elem_t<A>;
  if constexpr (is_complex_v<T>) return where(isnan(a), T(real_of_t<T>(fill), real_of_t<T>(fill)), a);
  else if constexpr (std::is_floating_point_v<T>) return where(isnan(a), T(fill), a);
  else return expr::as_node(a);
}
// 1 where a is not NaN: the count of a nan-aware reduction.
template <class A>
auto not_nan(const A& a) {
  return logical_not(isnan(a));
}

// Each kind builds its lazy node for (axes, keepdims, ddof); R and Exact are the
// result's static rank, as for the plain reductions.
struct nansum_kind {
  template <int R, bool E, class A>
  static auto build(const A& a, std::vector<int> ax, bool kd, std::int64_t) {
    return make_reduction<op::sum, R, E>(nan_filled(a, 0.0), std::move(ax), kd);
  }
};
struct nanprod_kind {
  template <int R, bool E, class A>
  static auto build(const A& a, std::vector<int> ax, bool kd, std::int64_t) {
    return make_reduction<op::prod, R, E>(nan_filled(a, 1.0), std::move(ax), kd);
  }
};
// nanmin/nanmax: NaN only where every element of the slice is NaN (NumPy warns there).
template <class Op, bool Max>
struct nan_extreme_kind {
  template <int R, bool E, class A>
  static auto build(const A& a, std::vector<int> ax, bool kd, std::int64_t) {
    using T = elem_t<A>;
    if constexpr (!std::is_floating_point_v<T> && !is_complex_v<T>) {
      return make_reduction<Op, R, E>(a, std::move(ax), kd);
    } else {
      const double fill = Max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
      auto all_nan = make_reduction<op::all, R, E>(isnan(a), ax, kd);
      return where(all_nan, op::convert<T>(std::numeric_limits<real_of_t<T>>::quiet_NaN()),
                   make_reduction<Op, R, E>(nan_filled(a, fill), ax, kd));
    }
  }
};
template <class Op, bool Max>
struct nan_arg_kind {
  static constexpr bool all_nan_raises = true;
  template <int R, bool E, class A>
  static auto build(const A& a, std::vector<int> ax, bool kd, std::int64_t) {
    const double fill = Max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return make_reduction<Op, R, E>(nan_filled(a, fill), std::move(ax), kd);
  }
};
struct nanmean_kind {
  template <int R, bool E, class A>
  static auto build(const A& a, std::vector<int> ax, bool kd, std::int64_t) {
    using F = op::mean_t<elem_t<A>>;
    auto s = make_reduction<op::sum, R, E>(nan_filled(a, 0.0), ax, kd);
    auto n = make_reduction<op::sum, R, E>(not_nan(a), std::move(ax), kd);
    return astype<F>(s / n);
  }
};
// Two passes, as var: the nan-aware mean (kept dims), then the squared
// deviations of the non-NaN elements over their count - ddof.
struct nanvar_kind {
  template <int R, bool E, class A>
  static auto build(const A& a, std::vector<int> ax, bool kd, std::int64_t ddof) {
    using F = op::mean_t<elem_t<A>>;
    constexpr int N = rank_of<A>;
    auto m = make_reduction<op::sum, N, true>(nan_filled(a, 0.0), ax, true) /
             make_reduction<op::sum, N, true>(not_nan(a), ax, true);
    auto d = where(isnan(a), 0.0, a - m);
    auto s2 = make_reduction<op::sum, R, E>(squared_magnitude(d), ax, kd);
    auto n = make_reduction<op::sum, R, E>(not_nan(a), std::move(ax), kd);
    return astype<real_of_t<F>>(s2 / (n - double(ddof)));
  }
};
struct nanstd_kind {
  template <int R, bool E, class A>
  static auto build(const A& a, std::vector<int> ax, bool kd, std::int64_t ddof) {
    return sqrt(nanvar_kind::build<R, E>(a, std::move(ax), kd, ddof));
  }
};
// ptp: max - min, in the array's dtype (NumPy's peak to peak).
struct ptp_kind {
  template <int R, bool E, class A>
  static auto build(const A& a, std::vector<int> ax, bool kd, std::int64_t) {
    // (both operands copy ax: the order C++ evaluates them in is unspecified)
    auto hi = make_reduction<op::max, R, E>(a, ax, kd);
    return hi - make_reduction<op::min, R, E>(a, std::move(ax), kd);
  }
};
struct count_nonzero_kind {
  template <int R, bool E, class A>
  static auto build(const A& a, std::vector<int> ax, bool kd, std::int64_t) {
    return make_reduction<op::sum, R, E>(a != elem_t<A>(0), std::move(ax), kd);
  }
};

using nanmin_kind = nan_extreme_kind<op::min, false>;
using nanmax_kind = nan_extreme_kind<op::max, true>;
using nanargmin_kind = nan_arg_kind<op::argmin, false>;
using nanargmax_kind = nan_arg_kind<op::argmax, true>;

template <class K, class A>
void check_all_nan(const A& a, const char* name) {
  if constexpr (requires { K::all_nan_raises; }) {
    if constexpr (std::is_floating_point_v<elem_t<A>> || is_complex_v<elem_t<A>>) {
      if (ember::all(isnan(a)))  // a value on every rank: every rank throws alike
        throw value_error(std::string("ember::") + name + ": All-NaN slice encountered (every element of the " +
                          std::string(dtype_name<elem_t<A>>()) + " operand of shape " +
                          shape_str(expr::as_node(a).shape()) + " is NaN)");
    }
  }
}

}  // namespace detail

// The call forms of ember::sum for a reduction kind K.
#define EMBER_STAT_REDUCTION(NAME, K)                                                                   \
  template <array_like A, class Code = detail::this_code>                                               \
  auto NAME(const A& a, const reduce_options& o = {}) {                                                 \
    detail::check_all_nan<K>(a, #NAME);                                                                 \
    return detail::evaluate_scalar<Code>(K::template build<0, true>(a, detail::every_axis(a), false, o.ddof)); \
  }                                                                                                     \
  template <array_like A>                                                                               \
  auto NAME(const A& a, all_axes_t) {                                                                   \
    return K::template build<0, true>(a, detail::every_axis(a), false, 0);                              \
  }                                                                                                     \
  template <array_like A>                                                                               \
  auto NAME(const A& a, all_axes_t, const reduce_options& o) {                                          \
    return K::template build<detail::rank_of<A>, false>(a, detail::every_axis(a), o.keepdims, o.ddof);  \
  }                                                                                                     \
  template <array_like A>                                                                               \
  auto NAME(const A& a, int axis) {                                                                     \
    constexpr int N = detail::rank_of<A>;                                                               \
    return K::template build<(N > 0 ? N - 1 : 0), true>(a, {axis}, false, 0);                           \
  }                                                                                                     \
  template <array_like A>                                                                               \
  auto NAME(const A& a, int axis, const reduce_options& o) {                                            \
    return K::template build<detail::rank_of<A>, false>(a, {axis}, o.keepdims, o.ddof);                 \
  }                                                                                                     \
  template <array_like A>                                                                               \
  auto NAME(const A& a, std::initializer_list<int> axes, const reduce_options& o = {}) {                \
    return K::template build<detail::rank_of<A>, false>(a, std::vector<int>(axes), o.keepdims, o.ddof); \
  }
EMBER_STAT_REDUCTION(nansum, detail::nansum_kind)
EMBER_STAT_REDUCTION(nanprod, detail::nanprod_kind)
EMBER_STAT_REDUCTION(nanmin, detail::nanmin_kind)
EMBER_STAT_REDUCTION(nanmax, detail::nanmax_kind)
EMBER_STAT_REDUCTION(nanargmin, detail::nanargmin_kind)
EMBER_STAT_REDUCTION(nanargmax, detail::nanargmax_kind)
EMBER_STAT_REDUCTION(nanmean, detail::nanmean_kind)
EMBER_STAT_REDUCTION(nanvar, detail::nanvar_kind)
EMBER_STAT_REDUCTION(nanstd, detail::nanstd_kind)
EMBER_STAT_REDUCTION(ptp, detail::ptp_kind)
EMBER_STAT_REDUCTION(count_nonzero, detail::count_nonzero_kind)
#undef EMBER_STAT_REDUCTION

// average(a, weights[, axis]): sum(a * w) / sum(w), with w of a's shape (or one
// that broadcasts to it from the right). average(a) is mean(a).
template <array_like A, array_like W, class Code = detail::this_code>
auto average(const A& a, const W& w) {
  // one 0-d expression: both sums in one pass over a and w
  return detail::evaluate_scalar<Code>(astype<double>(sum(a * w, all_axes)) / astype<double>(sum(w, all_axes)));
}
template <array_like A, array_like W>
auto average(const A& a, const W& w, int axis) {
  return astype<double>(sum(a * w, axis)) / astype<double>(sum(w, axis));
}
template <array_like A, class Code = detail::this_code>
auto average(const A& a) {
  return mean<A, Code>(a);
}

// allclose(a, b, {.rtol, .atol, .equal_nan}): isclose everywhere; a bool on every rank.
template <operand A, operand B, class Code = detail::this_code>
  requires(array_like<A> || array_like<B>)
bool allclose(const A& a, const B& b, const isclose_options& o = {}) {
  return ember::all.operator()<decltype(isclose(a, b, o)), Code>(isclose(a, b, o));
}
// array_equal(a, b[, equal_nan]): the same shape and the same elements (false,
// not an error, for different shapes); a bool on every rank.
template <array_like A, array_like B, class Code = detail::this_code>
bool array_equal(const A& a, const B& b, bool equal_nan = false) {
  const index_vec sa = expr::as_node(a).shape(), sb = expr::as_node(b).shape();
  if (sa != sb) return false;
  if constexpr (std::is_floating_point_v<detail::elem_t<A>> || std::is_floating_point_v<detail::elem_t<B>> ||
                is_complex_v<detail::elem_t<A>> || is_complex_v<detail::elem_t<B>>) {
    if (equal_nan) {
      auto e = (a == b) | (isnan(a) & isnan(b));
      return ember::all.operator()<decltype(e), Code>(e);
    }
  }
  auto e = a == b;
  return ember::all.operator()<decltype(e), Code>(e);
}

// cov(m, {.rowvar, .bias, .ddof}): NumPy's covariance matrix of the variables in
// m's rows (rowvar) or columns, a (k, k) array: the centred data times its
// transpose (ember::matmul, planned like any product) over n - ddof; complex
// data times its conjugate transpose, as NumPy's dot(X, X.T.conj()).
struct cov_options {
  bool rowvar = true;
  bool bias = false;                       // divide by n (ddof 0) instead of n - 1
  std::optional<std::int64_t> ddof = std::nullopt;  // overrides bias
};
template <array_like M>
auto cov(const M& m, const cov_options& o = {}) {
  static_assert(expr::node_t<M>::ndim == 2, "ember::cov: takes a 2-D array (variables in rows, or in columns with rowvar = false)");
  using F = op::mean_t<detail::elem_t<M>>;
  const int obs = o.rowvar ? 1 : 0;
  const std::int64_t n = expr::as_node(m).shape()[std::size_t(obs)];
  const std::int64_t ddof = o.ddof ? *o.ddof : (o.bias ? 0 : 1);
  auto x = astype<F>(m) - mean(m, obs, {.keepdims = true});
  if constexpr (is_complex_v<F>) {
    if (o.rowvar) return dndarray<F, 2>(matmul(x, conj(transpose(x))) / double(n - ddof));
    return dndarray<F, 2>(matmul(transpose(x), conj(x)) / double(n - ddof));
  } else {
    if (o.rowvar) return dndarray<F, 2>(matmul(x, transpose(x)) / double(n - ddof));
    return dndarray<F, 2>(matmul(transpose(x), x) / double(n - ddof));
  }
}
// corrcoef(m, {.rowvar}): the covariance normalized by the outer product of the
// standard deviations, clipped to [-1, 1] as NumPy does; a (k, k) array. Complex
// data: the standard deviations are the square roots of the diagonal's real
// parts, and the real and imaginary parts are clipped apart (NumPy's rule).
template <array_like M>
auto corrcoef(const M& m, const cov_options& o = {}) {
  using F = op::mean_t<detail::elem_t<M>>;
  dndarray<F, 2> c = cov(m, o);
  if constexpr (is_complex_v<F>) {
    auto d = sqrt(real(diagonal(c)));
    dndarray<F, 2> q = c / outer(d, d);
    dndarray<F, 2> r = clip(real(q), -1.0, 1.0) + F(0, 1) * clip(imag(q), -1.0, 1.0);
    return r;
  } else {
    auto d = sqrt(diagonal(c));
    dndarray<F, 2> r = clip(c / outer(d, d), -1.0, 1.0);
    return r;
  }
}

}  // namespace ember
