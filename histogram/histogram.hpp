// Histograms: NumPy's histogram, histogram2d, bincount and digitize.
//
//   auto [hist, edges] = ember::histogram(x, 100);       // counts and edges, on every rank
//   auto h = ember::histogram(x, 10, {.range = {{0.0, 1.0}}});
//   auto c = ember::bincount(labels, {.minlength = 8});   // int64 counts, on every rank
//   ember::dndarray<std::int64_t, 1> k = ember::digitize(x, {0.0, 0.5, 1.0});   // x's layout
//
// One pass over each rank's block and one allreduce of the counts (plus one of
// the minimum and maximum when the range is not given): the counts are exact
// and NumPy's, bin by bin, including its edge rules (the last bin is closed,
// values outside the range are dropped, a uniform histogram computes its bin
// as NumPy's fast path does, then corrects it against the edges). Evaluated
// now; not plan steps yet.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "../dsl/eval.hpp"
#include "../shape/shape.hpp"

namespace ember {

struct histogram_options {
  std::optional<std::pair<double, double>> range;  // default: the data's minimum and maximum
};
struct histogram_result {
  dndarray<std::int64_t, 1> hist;  // counts per bin
  dndarray<double, 1> bin_edges;   // bins + 1 edges
};
struct histogram2d_result {
  dndarray<std::int64_t, 2> hist;
  dndarray<double, 1> xedges, yedges;
};
struct bincount_options {
  std::int64_t minlength = 0;
};

namespace detail {

inline dndarray<double, 1> replicated_values(const std::vector<double>& v, const communicator& c) {
  dndarray<double, 1> out(replicated_layout({std::int64_t(v.size())}, c.size()), c);
  std::copy(v.begin(), v.end(), out.ldata());
  return out;
}
template <class T, int N>
dndarray<T, N> replicated_counts(const std::vector<T>& v, const communicator& c, const index_vec& shape) {
  dndarray<T, N> out(replicated_layout(shape, c.size()), c);
  std::copy(v.begin(), v.end(), out.ldata());
  return out;
}

// NumPy's np.linspace(first, last, bins + 1): i * step + first, the last edge exact.
inline std::vector<double> uniform_edges(double first, double last, std::int64_t bins) {
  std::vector<double> e(static_cast<std::size_t>(bins + 1));
  const double step = (last - first) / double(bins);
  for (std::int64_t i = 0; i <= bins; ++i) e[std::size_t(i)] = step == 0 ? double(i) / double(bins) * (last - first) + first : double(i) * step + first;
  e.back() = last;
  return e;
}

// The outer edges: the given range, or the data's minimum and maximum (one
// allreduce); NumPy's rules for an empty or constant array.
template <class T>
std::pair<double, double> outer_edges(const communicator& c, const T* p, std::int64_t n, bool distributed,
                                      const histogram_options& o, const char* what) {
  double lo, hi;
  if (o.range) {
    lo = o.range->first;
    hi = o.range->second;
    if (lo > hi) throw value_error(std::string("ember::") + what + ": max must be larger than min in range parameter, got (" +
                                   std::to_string(lo) + ", " + std::to_string(hi) + ")");
    if (!std::isfinite(lo) || !std::isfinite(hi))
      throw value_error(std::string("ember::") + what + ": supplied range of [" + std::to_string(lo) + ", " + std::to_string(hi) + "] is not finite");
  } else {
    double mm[2] = {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
    bool nan = false;
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = double(p[i]);
      nan = nan || v != v;
      mm[0] = std::min(mm[0], v);
      mm[1] = std::max(mm[1], v);
    }
    if (nan) mm[0] = mm[1] = std::numeric_limits<double>::quiet_NaN();
    double neg[2] = {-mm[0], mm[1]};  // one max-allreduce for both (NaN propagates)
    if (distributed) c.allreduce(neg, 2, reduce_op::max);
    lo = -neg[0];
    hi = neg[1];
    const std::int64_t total = distributed ? c.allreduce(n, reduce_op::sum) : n;
    if (total == 0) lo = 0, hi = 1;  // NumPy's range for no data
    else if (!std::isfinite(lo) || !std::isfinite(hi))
      throw value_error(std::string("ember::") + what + ": autodetected range of [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "] is not finite");
  }
  if (lo == hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  return {lo, hi};
}

// The bin of v among uniform edges (NumPy's fast path), or -1 outside.
inline std::int64_t uniform_bin(double v, double first, double last, double norm, const std::vector<double>& e,
                                std::int64_t bins) {
  if (!(v >= first && v <= last)) return -1;
  std::int64_t k = std::int64_t((v - first) * norm);
  if (k == bins) --k;
  if (v < e[std::size_t(k)]) --k;
  else if (k != bins - 1 && v >= e[std::size_t(k + 1)]) ++k;
  return k;
}
// The bin of v among increasing edges (NumPy's searchsorted path), or -1 outside.
inline std::int64_t edge_bin(double v, const std::vector<double>& e) {
  if (!(v >= e.front() && v <= e.back())) return -1;
  if (v == e.back()) return std::int64_t(e.size()) - 2;
  return std::int64_t(std::upper_bound(e.begin(), e.end(), v) - e.begin()) - 1;
}
inline void check_edges(const std::vector<double>& e, const char* what) {
  if (e.size() < 2) throw value_error(std::string("ember::") + what + ": needs at least two bin edges");
  for (std::size_t i = 1; i < e.size(); ++i)
    if (!(e[i] >= e[i - 1])) throw value_error(std::string("ember::") + what + ": bins must increase monotonically");
}

template <class A>
auto host_eval(A&& a, const char* what) {
  using T = typename expr::node_t<A>::value_type;
  constexpr int N = expr::node_t<A>::ndim;
  static_assert(!is_complex_v<T>, "ember: histograms take real numbers");
  dndarray<T, N> x = ember::eval(std::forward<A>(a));
  require_host(x.device(), what);
  return x;
}

}  // namespace detail

// np.histogram(a, bins=10, range=None): over all elements of a.
template <array_like A>
histogram_result histogram(A&& a, std::int64_t bins = 10, const histogram_options& o = {}) {
  const auto x = detail::host_eval(std::forward<A>(a), "ember::histogram");
  if (bins < 1) throw value_error("ember::histogram: `bins` must be positive, got " + std::to_string(bins));
  const communicator& c = x.comm();
  const bool distributed = x.layout().split() && c.size() > 1;
  const auto [lo, hi] = detail::outer_edges(c, x.ldata(), x.lnumel(), distributed, o, "histogram");
  const auto e = detail::uniform_edges(lo, hi, bins);
  const double norm = double(bins) / (hi - lo);
  std::vector<std::int64_t> n(static_cast<std::size_t>(bins), 0);
  const auto* p = x.ldata();
  for (std::int64_t i = 0, m = x.lnumel(); i < m; ++i) {
    const std::int64_t k = detail::uniform_bin(double(p[i]), lo, hi, norm, e, bins);
    if (k >= 0) ++n[std::size_t(k)];
  }
  if (distributed) c.allreduce(n.data(), bins, reduce_op::sum);
  return {detail::replicated_counts<std::int64_t, 1>(n, c, {bins}), detail::replicated_values(e, c)};
}
// np.histogram(a, bins=edges): explicit, monotonically increasing edges.
template <array_like A>
histogram_result histogram(A&& a, const std::vector<double>& edges) {
  const auto x = detail::host_eval(std::forward<A>(a), "ember::histogram");
  detail::check_edges(edges, "histogram");
  const communicator& c = x.comm();
  const std::int64_t bins = std::int64_t(edges.size()) - 1;
  std::vector<std::int64_t> n(static_cast<std::size_t>(bins), 0);
  const auto* p = x.ldata();
  for (std::int64_t i = 0, m = x.lnumel(); i < m; ++i) {
    const std::int64_t k = detail::edge_bin(double(p[i]), edges);
    if (k >= 0) ++n[std::size_t(k)];
  }
  if (x.layout().split() && c.size() > 1) c.allreduce(n.data(), bins, reduce_op::sum);
  return {detail::replicated_counts<std::int64_t, 1>(n, c, {bins}), detail::replicated_values(edges, c)};
}

// np.histogram2d(x, y, bins): x and y of one shape (y moved to x's layout when
// it differs); NumPy's histogramdd edge rules on each axis.
template <array_like X, array_like Y>
histogram2d_result histogram2d(X&& xs, Y&& ys, std::int64_t bins = 10) {
  const auto x = detail::host_eval(std::forward<X>(xs), "ember::histogram2d");
  auto y0 = detail::host_eval(std::forward<Y>(ys), "ember::histogram2d");
  if (x.layout().shape() != y0.layout().shape())
    throw shape_error("ember::histogram2d: x of shape " + detail::shape_str(x.layout().shape()) + " and y of shape " +
                      detail::shape_str(y0.layout().shape()) + " must have one shape");
  if (bins < 1) throw value_error("ember::histogram2d: `bins` must be positive, got " + std::to_string(bins));
  using YT = typename decltype(y0)::value_type;
  constexpr int N = decltype(y0)::ndim_v;
  dndarray<YT, N> y = y0;
  if (!(y0.layout() == x.layout())) {
    y = dndarray<YT, N>(x.layout(), x.comm());
    ember::copyto(y, y0);
  }
  const communicator& c = x.comm();
  const bool distributed = x.layout().split() && c.size() > 1;
  const auto [xl, xh] = detail::outer_edges(c, x.ldata(), x.lnumel(), distributed, {}, "histogram2d");
  const auto [yl, yh] = detail::outer_edges(c, y.ldata(), y.lnumel(), distributed, {}, "histogram2d");
  const auto ex = detail::uniform_edges(xl, xh, bins), ey = detail::uniform_edges(yl, yh, bins);
  std::vector<std::int64_t> n(static_cast<std::size_t>(bins * bins), 0);
  for (std::int64_t i = 0, m = x.lnumel(); i < m; ++i) {
    const std::int64_t kx = detail::edge_bin(double(x.ldata()[i]), ex), ky = detail::edge_bin(double(y.ldata()[i]), ey);
    if (kx >= 0 && ky >= 0) ++n[std::size_t(kx * bins + ky)];
  }
  if (distributed) c.allreduce(n.data(), bins * bins, reduce_op::sum);
  return {detail::replicated_counts<std::int64_t, 2>(n, c, {bins, bins}), detail::replicated_values(ex, c),
          detail::replicated_values(ey, c)};
}

// np.bincount(x, minlength=): counts of each non-negative integer in the 1-D x.
template <array_like A>
dndarray<std::int64_t, 1> bincount(A&& xs, const bincount_options& o = {}) {
  const auto x = detail::host_eval(std::forward<A>(xs), "ember::bincount");
  using T = typename decltype(x)::value_type;
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "ember::bincount: takes non-negative integers (cast with astype)");
  static_assert(decltype(x)::ndim_v == 1, "ember::bincount: takes a 1-D array");
  const communicator& c = x.comm();
  const bool distributed = x.layout().split() && c.size() > 1;
  std::int64_t mm[2] = {0, -1};  // -min, max
  for (std::int64_t i = 0, m = x.lnumel(); i < m; ++i) {
    mm[0] = std::max(mm[0], -std::int64_t(x.ldata()[i]));
    mm[1] = std::max(mm[1], std::int64_t(x.ldata()[i]));
  }
  if (distributed) c.allreduce(mm, 2, reduce_op::max);
  if (mm[0] > 0) throw value_error("ember::bincount: the array must have no negative elements, its minimum is " + std::to_string(-mm[0]));
  if (o.minlength < 0) throw value_error("ember::bincount: minlength must be non-negative, got " + std::to_string(o.minlength));
  const std::int64_t len = std::max(mm[1] + 1, o.minlength);
  std::vector<std::int64_t> n(static_cast<std::size_t>(len), 0);
  for (std::int64_t i = 0, m = x.lnumel(); i < m; ++i) ++n[std::size_t(x.ldata()[i])];
  if (distributed) c.allreduce(n.data(), len, reduce_op::sum);
  return detail::replicated_counts<std::int64_t, 1>(n, c, {len});
}

// np.digitize(x, bins, right=False): the bin index of every element (x's
// layout, int64); bins increasing or decreasing.
template <array_like A>
auto digitize(A&& xs, const std::vector<double>& bins, bool right = false) {
  const auto x = detail::host_eval(std::forward<A>(xs), "ember::digitize");
  constexpr int N = decltype(x)::ndim_v;
  bool inc = true, dec = true;
  for (std::size_t i = 1; i < bins.size(); ++i) {
    inc = inc && bins[i] >= bins[i - 1];
    dec = dec && bins[i] <= bins[i - 1];
  }
  if (!inc && !dec) throw value_error("ember::digitize: bins must be monotonically increasing or decreasing");
  dndarray<std::int64_t, N> out(x.layout(), x.comm());
  const std::int64_t nb = std::int64_t(bins.size());
  std::vector<double> rev(bins.rbegin(), bins.rend());
  for (std::int64_t i = 0, m = x.lnumel(); i < m; ++i) {
    const double v = double(x.ldata()[i]);
    if (v != v) {  // NaN sorts last, as in searchsorted
      out.ldata()[i] = inc || nb < 2 ? nb : 0;
      continue;
    }
    if (inc || nb < 2)  // searchsorted(bins, x, side = right ? 'left' : 'right')
      out.ldata()[i] = (right ? std::lower_bound(bins.begin(), bins.end(), v) : std::upper_bound(bins.begin(), bins.end(), v)) - bins.begin();
    else  // len(bins) - searchsorted(bins[::-1], x, side = right ? 'left' : 'right'), NumPy's
      out.ldata()[i] = nb - ((right ? std::lower_bound(rev.begin(), rev.end(), v) : std::upper_bound(rev.begin(), rev.end(), v)) - rev.begin());
  }
  return out;
}

}  // namespace ember
