// Order statistics: NumPy's median, quantile, percentile and their nan-
// variants, over all axes (a value on every rank) or along one axis (an array).
//
//   double m = ember::median(x);                       // no sort: a few rounds of splitter counting
//   auto p = ember::percentile(x, {5.0, 50.0, 95.0});  // std::vector<double>, the same on every rank
//   auto q = ember::quantile(x, 0.9, {.method = ember::quantile_method::nearest});
//   ember::dndarray<double, 1> r = ember::median(a, 1);   // along an axis: each rank its lines
//
// Over all axes the values are found by distributed selection
// (sorting/selection.hpp): rounds of 64 samples per rank, one allgather and one
// allreduce of four counts each, until about 1024 candidates per rank are left,
// capped and finished by radix rounds so the traffic has a bound; no rank ever
// holds more than its block. The result is a node and a plan step too
// (distributed_select): median(x, all_axes) is the lazy 0-d form, the scalar
// forms evaluate it through the plan. Along an axis the result is a node of
// the expression and a step of the plan (local_select, sorting/line_op.hpp):
// each rank selects within its lines (std::nth_element); an axis that is split
// is first made local by a planned resplit along another axis (its bytes
// exact in EXPLAIN), as for sort.
//
// NumPy's methods and formulas: `linear` (the default: the virtual index
// n q + (1 - q) - 1 and NumPy's two-sided lerp), `lower`, `higher`, `nearest`
// (half to even), `midpoint`; median is the mean of the middle two. A NaN in the
// data makes the result NaN (NumPy's median and quantile), the nan- forms skip
// NaN; an empty selection is NaN. Results are floating: integer data gives
// float64 (NumPy keeps the integer dtype for lower/higher/nearest: here those
// come back as exact float64 values).
#pragma once

#include <algorithm>
#include <bit>
#include <sstream>
#include <string>
#include <cmath>
#include <limits>
#include <cstdint>
#include <vector>

#include "../dsl/eval.hpp"
#include "../dsl/reductions.hpp"
#include "../dsl/shift.hpp"
#include "../shape/shape.hpp"
#include "line_op.hpp"
#include "selection.hpp"

namespace ember {

enum class quantile_method { linear, lower, higher, nearest, midpoint };
struct quantile_options {
  quantile_method method = quantile_method::linear;
};

namespace detail {

template <class T>
using order_stat_t = std::conditional_t<std::is_floating_point_v<T>, T, double>;

// NumPy's _lerp: a + (b - a) t, from b's side where t >= 0.5.
template <class R>
R numpy_lerp(R a, R b, R t) {
  const R d = b - a;
  return t >= R(0.5) ? b - d * (R(1) - t) : a + d * t;
}

// For quantile q of n values: the two ranks read and the weight of the second.
struct quantile_point {
  std::int64_t lo = 0, hi = 0;
  double gamma = 0;
};
inline quantile_point quantile_at(std::int64_t n, double q, quantile_method m) {
  const double nm1 = double(n - 1);
  double v = 0;
  switch (m) {
    case quantile_method::linear: v = (double(n) * q + (1.0 + q * (1.0 - 1.0 - 1.0))) - 1.0; break;
    case quantile_method::lower: v = std::floor(nm1 * q); break;
    case quantile_method::higher: v = std::ceil(nm1 * q); break;
    case quantile_method::nearest: v = std::nearbyint(nm1 * q); break;  // half to even, as np.around
    case quantile_method::midpoint: v = 0.5 * (std::floor(nm1 * q) + std::ceil(nm1 * q)); break;
  }
  quantile_point p;
  if (m == quantile_method::lower || m == quantile_method::higher || m == quantile_method::nearest) {
    const std::int64_t k = std::clamp<std::int64_t>(std::int64_t(v), 0, n - 1);  // NumPy takes the element
    return {k, k, 0.0};
  }
  if (v >= nm1) return {n - 1, n - 1, 0.0};
  if (v < 0) return {0, 0, 0.0};
  p.lo = std::int64_t(std::floor(v));
  p.hi = p.lo + 1;
  p.gamma = v - std::floor(v);
  return p;
}

inline void check_quantile(double q, const char* what) {
  if (!(q >= 0.0 && q <= 1.0))
    throw value_error(std::string("ember::") + what + ": quantiles must be in the range [0, 1] (percentiles in [0, 100]), got " +
                      std::to_string(q));
}

// The quantiles `qs` of the values at `data` (every rank's `n`; `distributed`:
// the ranks' values together, else each rank's alone), NumPy's rules.
template <class T>
std::vector<order_stat_t<T>> quantiles_of(const communicator& c, const T* data, std::int64_t n, bool distributed,
                                          const std::vector<double>& qs, quantile_method m, bool skip_nan,
                                          bool median) {
  using R = order_stat_t<T>;
  const R nan = std::numeric_limits<R>::quiet_NaN();
  std::vector<T> kept;
  std::int64_t nans = 0;
  if constexpr (std::is_floating_point_v<T>)
    for (std::int64_t i = 0; i < n; ++i) nans += std::isnan(data[i]);
  std::int64_t total_nans = distributed ? c.allreduce(nans, reduce_op::sum) : nans;
  if (total_nans > 0 && !skip_nan) return std::vector<R>(qs.size(), nan);
  if (nans > 0) {
    kept.reserve(std::size_t(n - nans));
    for (std::int64_t i = 0; i < n; ++i)
      if (!std::isnan(double(data[i]))) kept.push_back(data[i]);
    data = kept.data();
    n = std::int64_t(kept.size());
  }
  const std::int64_t count = distributed ? c.allreduce(n, reduce_op::sum) : n;
  if (count == 0) return std::vector<R>(qs.size(), nan);
  std::vector<quantile_point> pts;
  std::vector<std::int64_t> ks;
  for (double q : qs) {
    quantile_point p = median ? quantile_point{(count - 1) / 2, count / 2, 0.5} : quantile_at(count, q, m);
    p.hi = std::min(p.hi, count - 1);
    pts.push_back(p);
    ks.push_back(p.lo);
    ks.push_back(p.hi);
  }
  std::vector<T> vals;
  if (distributed) {
    vals = select_ranks<T>(c, data, n, ks);
  } else {
    std::vector<T> w(data, data + n);
    for (auto k : ks) {
      std::nth_element(w.begin(), w.begin() + k, w.end());
      vals.push_back(w[std::size_t(k)]);
    }
  }
  std::vector<R> out;
  for (std::size_t j = 0; j < pts.size(); ++j) {
    const R a = R(vals[2 * j]), b = R(vals[2 * j + 1]);
    if (median) out.push_back(pts[j].lo == pts[j].hi ? a : (a + b) / R(2));  // np.mean of the middle ones
    else out.push_back(pts[j].lo == pts[j].hi ? a : numpy_lerp(a, b, R(pts[j].gamma)));
  }
  return out;
}

// Along `axis`: every line on its own, as a line operation (sorting/line_op.hpp).
template <bool Median, bool SkipNan>
struct quantile_line_op {
  static constexpr std::string_view name = Median ? (SkipNan ? "nanmedian" : "median") : (SkipNan ? "nanquantile" : "quantile");
  static constexpr bool drops_axis = true, with_index = false;
  static constexpr bool median_op = Median, skip_nan = SkipNan;
  template <class T>
  using result = order_stat_t<T>;
  double q = 0.5;
  quantile_method method = quantile_method::linear;
  void check(const index_vec&, int) const { check_quantile(q, name.data()); }
  std::string text() const {
    if (Median) return "";
    static const char* names[] = {"linear", "lower", "higher", "nearest", "midpoint"};
    std::ostringstream os;
    os << "q=" << q << ", method=" << names[int(method)];
    return os.str();
  }
  std::uint64_t key() const { return std::bit_cast<std::uint64_t>(q) * 8 + std::uint64_t(method); }
  template <class T>
  void run(const index_vec& ls, int axis, const T* in, result<T>* o) const {
    std::int64_t outer = 0, len = 0, inner = 0;
    line_geometry(ls, axis, outer, len, inner);
    std::vector<T> line(static_cast<std::size_t>(len));
    const communicator& self = world();  // (not used: each line is this rank's alone)
    for (std::int64_t b = 0; b < outer; ++b)
      for (std::int64_t j = 0; j < inner; ++j) {
        for (std::int64_t i = 0; i < len; ++i) line[std::size_t(i)] = in[(b * len + i) * inner + j];
        o[b * inner + j] = quantiles_of<T>(self, line.data(), len, false, {q}, method, SkipNan, Median)[0];
      }
  }
};

template <bool Median, bool SkipNan, class A>
auto quantile_along(A&& a, int axis, double q, quantile_method m) {
  using T = typename expr::node_t<A>::value_type;
  constexpr int N = expr::node_t<A>::ndim;
  static_assert(N >= 2, "ember: an order statistic along an axis needs 2 or more axes (for a vector use the all-axes form)");
  static_assert(!is_complex_v<T> && !std::is_same_v<T, bool>, "ember: order statistics take real numbers");
  return make_line_node(std::forward<A>(a), axis, quantile_line_op<Median, SkipNan>{q, m});
}

inline std::vector<double> percents(const std::vector<double>& ps) {
  std::vector<double> q;
  for (double p : ps) q.push_back(p / 100.0);  // NumPy divides by 100 too
  return q;
}

}  // namespace detail

namespace expr {

// An order statistic over every axis (median, quantile, percentile and the
// nan- forms): a node of the expression and a step of the plan,
// `distributed_select`. The operand is read where it lies (split along any
// axis; a replicated operand is partitioned first, which sends nothing), the
// selection of sorting/selection.hpp runs over the blocks, and the result is
// replicated: a 0-d array (one q) or a vector (several). Its traffic depends
// on the data; EXPLAIN gives the bound (planner: selection_traffic).
template <class Op, bool Vector, class A>
struct quantile_node : node_base {
  using operand_type = typename A::value_type;
  using value_type = detail::order_stat_t<operand_type>;
  static constexpr int ndim = Vector ? 1 : 0;
  static constexpr bool exact_ndim = true;
  static constexpr int node_count = 1 + A::node_count;
  static constexpr bool selects = true;
  static Op op_tag() { return {}; }
  hana::tuple<A> args;
  std::vector<double> qs;
  quantile_method method = quantile_method::linear;
  dims shape_;
  quantile_node(A a, std::vector<double> q, quantile_method m, const char* what)
      : args(std::move(a)), qs(std::move(q)), method(m) {
    for (double x : qs) detail::check_quantile(x, what);
    if (Vector) shape_.push_back(std::int64_t(qs.size()));
  }
  const dims& shape_dims() const { return shape_; }
  index_vec shape() const { return index_vec(shape_.begin(), shape_.end()); }
  // the ranks the selection looks for: two a quantile (the neighbours a lerp
  // reads), one for lower, higher and nearest
  std::int64_t ranks_selected() const {
    const bool one = !Op::median_op && (method == quantile_method::lower || method == quantile_method::higher ||
                                        method == quantile_method::nearest);
    return std::int64_t(qs.size()) * (one ? 1 : 2);
  }
  std::string options_text() const {
    if (Op::median_op) return "";
    static const char* names[] = {"linear", "lower", "higher", "nearest", "midpoint"};
    std::ostringstream os;
    os << "q=";
    if (Vector) os << '[';
    for (std::size_t i = 0; i < qs.size(); ++i) os << (i ? ", " : "") << qs[i];
    if (Vector) os << ']';
    os << ", method=" << names[int(method)];
    return os.str();
  }
  std::uint64_t plan_key() const {
    std::uint64_t h = std::uint64_t(method) * 0x9e3779b97f4a7c15ull + qs.size();
    for (double x : qs) h = (h ^ std::bit_cast<std::uint64_t>(x)) * 0x100000001b3ull;
    return h;
  }
  // this rank's n values at `in` (`distributed`: the ranks' blocks together)
  void run_select(const communicator& c, bool distributed, const operand_type* in, std::int64_t n, value_type* out) const {
    const auto v = detail::quantiles_of<operand_type>(c, in, n, distributed, qs, method, Op::skip_nan, Op::median_op);
    std::copy(v.begin(), v.end(), out);
  }
};

template <class Op, bool Vector, class A>
struct node_traits<quantile_node<Op, Vector, A>> {
  static constexpr node_class kind = node_class::step_op;
};

}  // namespace expr

namespace detail {

// Over all axes: the node, and its value now (a scalar, or a vector of one
// value per q, the same on every rank).
template <bool Median, bool SkipNan, bool Vector, class A>
auto quantile_over_all(A&& a, std::vector<double> qs, quantile_method m, const char* what) {
  using T = typename expr::node_t<A>::value_type;
  static_assert(!is_complex_v<T> && !std::is_same_v<T, bool>, "ember: order statistics take real numbers");
  auto n = expr::step_operand(expr::as_node(std::forward<A>(a)));
  return expr::quantile_node<quantile_line_op<Median, SkipNan>, Vector, decltype(n)>(std::move(n), std::move(qs), m, what);
}
template <bool Median, bool SkipNan, class A>
auto quantile_value(A&& a, double q, quantile_method m, const char* what) {
  return evaluate_scalar<this_code>(quantile_over_all<Median, SkipNan, false>(std::forward<A>(a), {q}, m, what));
}
template <bool SkipNan, class A>
auto quantile_values(A&& a, std::vector<double> qs, quantile_method m, const char* what) {
  using R = order_stat_t<typename expr::node_t<A>::value_type>;
  const dndarray<R, 1> v = ember::eval(quantile_over_all<false, SkipNan, true>(std::forward<A>(a), std::move(qs), m, what));
  return std::vector<R>(v.ldata(), v.ldata() + v.lnumel());
}

}  // namespace detail

// np.median(a): over all axes, on every rank; median(a, all_axes): the same as
// a lazy 0-d expression (for explain, or to fuse into more work).
template <array_like A>
auto median(A&& a) {
  return detail::quantile_value<true, false>(std::forward<A>(a), 0.5, quantile_method::linear, "median");
}
template <array_like A>
auto median(A&& a, all_axes_t) {
  return detail::quantile_over_all<true, false, false>(std::forward<A>(a), {0.5}, quantile_method::linear, "median");
}
template <array_like A>
auto nanmedian(A&& a) {
  return detail::quantile_value<true, true>(std::forward<A>(a), 0.5, quantile_method::linear, "nanmedian");
}
template <array_like A>
auto nanmedian(A&& a, all_axes_t) {
  return detail::quantile_over_all<true, true, false>(std::forward<A>(a), {0.5}, quantile_method::linear, "nanmedian");
}
// np.median(a, axis)
template <array_like A>
auto median(A&& a, int axis) {
  return detail::quantile_along<true, false>(std::forward<A>(a), axis, 0.5, quantile_method::linear);
}
template <array_like A>
auto nanmedian(A&& a, int axis) {
  return detail::quantile_along<true, true>(std::forward<A>(a), axis, 0.5, quantile_method::linear);
}

// np.quantile(a, q) with q in [0, 1]; several at once share the NaN count and
// the count. With all_axes: lazy (0-d for one q, a vector for several).
template <array_like A>
auto quantile(A&& a, double q, const quantile_options& o = {}) {
  return detail::quantile_value<false, false>(std::forward<A>(a), q, o.method, "quantile");
}
template <array_like A>
auto quantile(A&& a, const std::vector<double>& qs, const quantile_options& o = {}) {
  return detail::quantile_values<false>(std::forward<A>(a), qs, o.method, "quantile");
}
template <array_like A>
auto quantile(A&& a, double q, all_axes_t, const quantile_options& o = {}) {
  return detail::quantile_over_all<false, false, false>(std::forward<A>(a), {q}, o.method, "quantile");
}
template <array_like A>
auto quantile(A&& a, const std::vector<double>& qs, all_axes_t, const quantile_options& o = {}) {
  return detail::quantile_over_all<false, false, true>(std::forward<A>(a), qs, o.method, "quantile");
}
template <array_like A>
auto quantile(A&& a, double q, int axis, const quantile_options& o = {}) {
  return detail::quantile_along<false, false>(std::forward<A>(a), axis, q, o.method);
}
template <array_like A>
auto nanquantile(A&& a, double q, int axis, const quantile_options& o = {}) {
  return detail::quantile_along<false, true>(std::forward<A>(a), axis, q, o.method);
}
template <array_like A>
auto nanquantile(A&& a, double q, const quantile_options& o = {}) {
  return detail::quantile_value<false, true>(std::forward<A>(a), q, o.method, "nanquantile");
}
template <array_like A>
auto nanquantile(A&& a, const std::vector<double>& qs, const quantile_options& o = {}) {
  return detail::quantile_values<true>(std::forward<A>(a), qs, o.method, "nanquantile");
}
template <array_like A>
auto nanquantile(A&& a, double q, all_axes_t, const quantile_options& o = {}) {
  return detail::quantile_over_all<false, true, false>(std::forward<A>(a), {q}, o.method, "nanquantile");
}
template <array_like A>
auto nanquantile(A&& a, const std::vector<double>& qs, all_axes_t, const quantile_options& o = {}) {
  return detail::quantile_over_all<false, true, true>(std::forward<A>(a), qs, o.method, "nanquantile");
}

// np.percentile(a, p) with p in [0, 100] (EXPLAIN shows the quantile p / 100).
template <array_like A>
auto percentile(A&& a, double p, const quantile_options& o = {}) {
  return detail::quantile_value<false, false>(std::forward<A>(a), p / 100.0, o.method, "percentile");
}
template <array_like A>
auto percentile(A&& a, const std::vector<double>& ps, const quantile_options& o = {}) {
  return detail::quantile_values<false>(std::forward<A>(a), detail::percents(ps), o.method, "percentile");
}
template <array_like A>
auto percentile(A&& a, double p, all_axes_t, const quantile_options& o = {}) {
  return detail::quantile_over_all<false, false, false>(std::forward<A>(a), {p / 100.0}, o.method, "percentile");
}
template <array_like A>
auto percentile(A&& a, const std::vector<double>& ps, all_axes_t, const quantile_options& o = {}) {
  return detail::quantile_over_all<false, false, true>(std::forward<A>(a), detail::percents(ps), o.method, "percentile");
}
template <array_like A>
auto percentile(A&& a, double p, int axis, const quantile_options& o = {}) {
  return detail::quantile_along<false, false>(std::forward<A>(a), axis, p / 100.0, o.method);
}
template <array_like A>
auto nanpercentile(A&& a, double p, int axis, const quantile_options& o = {}) {
  return detail::quantile_along<false, true>(std::forward<A>(a), axis, p / 100.0, o.method);
}
template <array_like A>
auto nanpercentile(A&& a, double p, const quantile_options& o = {}) {
  return detail::quantile_value<false, true>(std::forward<A>(a), p / 100.0, o.method, "nanpercentile");
}
template <array_like A>
auto nanpercentile(A&& a, const std::vector<double>& ps, const quantile_options& o = {}) {
  return detail::quantile_values<true>(std::forward<A>(a), detail::percents(ps), o.method, "nanpercentile");
}
template <array_like A>
auto nanpercentile(A&& a, double p, all_axes_t, const quantile_options& o = {}) {
  return detail::quantile_over_all<false, true, false>(std::forward<A>(a), {p / 100.0}, o.method, "nanpercentile");
}
template <array_like A>
auto nanpercentile(A&& a, const std::vector<double>& ps, all_axes_t, const quantile_options& o = {}) {
  return detail::quantile_over_all<false, true, true>(std::forward<A>(a), detail::percents(ps), o.method, "nanpercentile");
}

}  // namespace ember
