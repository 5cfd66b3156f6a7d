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
// allreduce of four counts each, until about 1024 candidates per rank are left;
// no rank ever holds more than its block. Along an axis the result is a node of
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

// Over all axes: the flattened values of every rank's block.
template <class A>
auto quantiles_all(A&& a, const std::vector<double>& qs, quantile_method m, bool skip_nan, bool median, const char* what) {
  using T = typename expr::node_t<A>::value_type;
  static_assert(!is_complex_v<T> && !std::is_same_v<T, bool>, "ember: order statistics take real numbers");
  for (double q : qs) check_quantile(q, what);
  constexpr int N = expr::node_t<A>::ndim;
  const dndarray<T, N> x = ember::eval(std::forward<A>(a));
  require_host(x.device(), what);
  const bool distributed = x.layout().split() && x.comm().size() > 1;
  return quantiles_of<T>(x.comm(), x.ldata(), x.lnumel(), distributed, qs, m, skip_nan, median);
}

// Along `axis`: every line on its own, as a line operation (sorting/line_op.hpp).
template <bool Median, bool SkipNan>
struct quantile_line_op {
  static constexpr std::string_view name = Median ? (SkipNan ? "nanmedian" : "median") : (SkipNan ? "nanquantile" : "quantile");
  static constexpr bool drops_axis = true, with_index = false;
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

// np.median(a): over all axes, on every rank.
template <array_like A>
auto median(A&& a) {
  return detail::quantiles_all(std::forward<A>(a), {0.5}, quantile_method::linear, false, true, "median")[0];
}
template <array_like A>
auto nanmedian(A&& a) {
  return detail::quantiles_all(std::forward<A>(a), {0.5}, quantile_method::linear, true, true, "nanmedian")[0];
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

// np.quantile(a, q) with q in [0, 1]; several at once share nothing but the NaN count.
template <array_like A>
auto quantile(A&& a, double q, const quantile_options& o = {}) {
  return detail::quantiles_all(std::forward<A>(a), {q}, o.method, false, false, "quantile")[0];
}
template <array_like A>
auto quantile(A&& a, const std::vector<double>& qs, const quantile_options& o = {}) {
  return detail::quantiles_all(std::forward<A>(a), qs, o.method, false, false, "quantile");
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
  return detail::quantiles_all(std::forward<A>(a), {q}, o.method, true, false, "nanquantile")[0];
}
template <array_like A>
auto nanquantile(A&& a, const std::vector<double>& qs, const quantile_options& o = {}) {
  return detail::quantiles_all(std::forward<A>(a), qs, o.method, true, false, "nanquantile");
}

// np.percentile(a, p) with p in [0, 100].
template <array_like A>
auto percentile(A&& a, double p, const quantile_options& o = {}) {
  return detail::quantiles_all(std::forward<A>(a), detail::percents({p}), o.method, false, false, "percentile")[0];
}
template <array_like A>
auto percentile(A&& a, const std::vector<double>& ps, const quantile_options& o = {}) {
  return detail::quantiles_all(std::forward<A>(a), detail::percents(ps), o.method, false, false, "percentile");
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
  return detail::quantiles_all(std::forward<A>(a), detail::percents({p}), o.method, true, false, "nanpercentile")[0];
}
template <array_like A>
auto nanpercentile(A&& a, const std::vector<double>& ps, const quantile_options& o = {}) {
  return detail::quantiles_all(std::forward<A>(a), detail::percents(ps), o.method, true, false, "nanpercentile");
}

}  // namespace ember
