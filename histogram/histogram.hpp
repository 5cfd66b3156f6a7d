// Histograms: NumPy's histogram, histogram2d, bincount and digitize.
//
//   auto [hist, edges] = ember::histogram(x, 100);       // counts and edges, on every rank
//   auto h = ember::histogram(x, 10, {.range = {{0.0, 1.0}}});
//   auto d = ember::histogram<double>(x, 50, {.density = true});   // a probability density
//   auto w = ember::histogram(x, 50, {}, weights);       // sums of the weights per bin (float64)
//   auto c = ember::bincount(labels, {.minlength = 8});   // int64 counts, on every rank
//   auto s = ember::bincount(labels, weights);            // float64 sums of the weights per label
//   ember::dndarray<std::int64_t, 1> k = ember::digitize(x, {0.0, 0.5, 1.0});   // x's layout
//   auto n = ember::histogram_counts(x * w, 100, {0.0, 1.0});   // lazy: a plan step
//   std::cout << ember::explain(n);                      // its fused pass and allreduce
//
// One pass over each rank's block and one allreduce of the counts (plus one of
// the minimum and maximum when the range is not given): the counts are exact
// and NumPy's, bin by bin, including its edge rules (the last bin is closed,
// values outside the range are dropped, a uniform histogram computes its bin
// as NumPy's fast path does, then corrects it against the edges); weights
// sum per bin in float64 in the same pass. The unweighted counts are a plan
// step (histogram_counts: a reduction into counts per bin, its operand computed
// as it is read); histogram() returns them with the edges, evaluated now.
// Weighted histograms, histogram2d, bincount and digitize are evaluated now,
// outside the planner.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../dsl/eval.hpp"
#include "../shape/shape.hpp"

namespace ember {

struct histogram_options {
  std::optional<std::pair<double, double>> range = std::nullopt;  // default: the data's minimum and maximum (ignored with edges)
  // NumPy's density=True: each bin's count (or weight) / the total / the bin's
  // width, so that the histogram integrates to 1. Needs floating values:
  // ember::histogram<double>(...), or weights.
  bool density = false;
};
// H: the type of the values per bin: int64 counts, or double for densities and weights.
template <class H>
struct basic_histogram_result {
  dndarray<H, 1> hist;            // per bin
  dndarray<double, 1> bin_edges;  // bins + 1 edges
};
using histogram_result = basic_histogram_result<std::int64_t>;
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

// A given range: NumPy's checks, and a constant range widened by 0.5 each way.
inline std::pair<double, double> given_range(std::pair<double, double> r, const char* what) {
  auto [lo, hi] = r;
  if (lo > hi) throw value_error(std::string("ember::") + what + ": max must be larger than min in range parameter, got (" +
                                 std::to_string(lo) + ", " + std::to_string(hi) + ")");
  if (!std::isfinite(lo) || !std::isfinite(hi))
    throw value_error(std::string("ember::") + what + ": supplied range of [" + std::to_string(lo) + ", " + std::to_string(hi) + "] is not finite");
  if (lo == hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  return {lo, hi};
}

// The outer edges: the given range, or the data's minimum and maximum (one
// allreduce); NumPy's rules for an empty or constant array.
template <class T>
std::pair<double, double> outer_edges(const communicator& c, const T* p, std::int64_t n, bool distributed,
                                      const histogram_options& o, const char* what) {
  double lo, hi;
  if (o.range) {
    return given_range(*o.range, what);
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

// The bin of v among uniform edges, or -1 outside: NumPy's rule (a guess from
// (v - first) / (last - first) * bins, corrected by one step by comparing v
// with the computed edges), with a fixed-point fast path that skips the
// correction where it cannot change the answer. The edge loads and the
// division per value kept the loop 1.5x slower than a plain `int(v * bins)`
// loop; the fast path is one multiply-add, a conversion and a mask.
//
// Fast path: u = int64(v * s + c), s = norm 2^32, c = -first s (norm = bins /
// (last - first)) is (v - first) norm in 32.32 fixed point. With M =
// max(|first|, |last|) its error is below (8 M norm + 3 bins) 2^-53 bins
// widths, and the computed edges e[k] = first + k (last - first) / bins are
// off by less than (3 M norm + 2 bins) 2^-53 widths: both under 2^-22 of a
// bin when M norm + bins < 2^27, which the constructor checks. So when u's
// fraction is more than 2^-20 from 0 and from 1, v lies strictly inside bin
// u >> 32 for the true and for the computed edges alike, and NumPy's
// correction would keep it. Otherwise (and for ranges failing the check, such
// as [1e12, 1e12 + 1] whose edges are rounded by a percent of a bin) NumPy's
// steps decide. The range test comes first: inside [first, last] the
// conversion to int64 is defined.
struct uniform_binner {
  double first, last, s, c;
  const double* e;
  std::int64_t bins;
  bool fast;
  uniform_binner(double lo, double hi, const std::vector<double>& edges, std::int64_t nbins)
      : first(lo), last(hi), s(double(nbins) / (hi - lo) * 4294967296.0), c(-lo * s), e(edges.data()), bins(nbins) {
    const double norm = double(nbins) / (hi - lo), m = std::max(std::abs(lo), std::abs(hi));
    fast = m * norm + double(nbins) < 134217728.0;  // 2^27
  }
  // The bin, -1 outside, or -2 when the fast path cannot decide.
  std::int64_t quick(double v) const {
    if (!(v >= first && v <= last)) return -1;
    if (fast) {
      constexpr std::uint64_t eps = std::uint64_t(1) << 12;  // 2^-20 of a bin
      const std::uint64_t u = std::uint64_t(std::int64_t(v * s + c));
      if ((u & 0xffffffffull) - eps < 0x100000000ull - 2 * eps) [[likely]]
        return std::int64_t(u >> 32);
    }
    return -2;
  }
  // np.histogram's bin of v in [first, last], step by step as NumPy computes it.
  std::int64_t numpy_rule(double v) const {
    std::int64_t k = std::int64_t((v - first) / (last - first) * double(bins));
    if (k >= bins) k = bins - 1;
    if (k > 0 && v < e[k]) --k;
    else if (k != bins - 1 && v >= e[k + 1]) ++k;
    return k;
  }
  std::int64_t operator()(double v) const {
    const std::int64_t k = quick(v);
    return k != -2 ? k : numpy_rule(v);
  }
};
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

// What a histogram plan step bins by: uniform bins over [lo, hi] (NumPy's fast
// path, uniform_binner) or explicit increasing edges.
struct bin_spec {
  std::vector<double> edges;
  bool uniform = false;
  double lo = 0, hi = 0;
  std::int64_t bins() const { return std::int64_t(edges.size()) - 1; }
};


}  // namespace detail

namespace expr {

struct histogram_op {
  static constexpr std::string_view name = "histogram";
  static constexpr reduce_op mpi = reduce_op::sum;  // the allreduce of the counts
};

// np.histogram(a, bins, range)[0] as a reduction over every axis into int64
// counts per bin: one fused pass over the blocks (the operand computed as it
// is read) and one allreduce of the counts, a plan step like sum's.
template <class A>
struct histogram_node : node_base {
  using arg_type = typename A::value_type;
  using value_type = std::int64_t;
  static constexpr int ndim = 1;
  static constexpr bool exact_ndim = true;
  static constexpr int node_count = 1 + A::node_count;
  static constexpr bool index_result = false;
  static constexpr bool binned = true;  // the executor's hook: count() instead of a reduction kernel
  static histogram_op op_tag() { return {}; }
  A arg;
  std::vector<int> axes;
  bool keepdims = false;
  std::shared_ptr<const ember::detail::bin_spec> spec;
  dims shape_;
  histogram_node(A a, std::shared_ptr<const ember::detail::bin_spec> sp) : arg(std::move(a)), spec(std::move(sp)) {
    for (int d = 0; d < int(arg.shape_dims().size()); ++d) axes.push_back(d);
    shape_.push_back(spec->bins());
  }
  const dims& shape_dims() const { return shape_; }
  index_vec shape() const { return index_vec(shape_.begin(), shape_.end()); }
  // What the plan depends on beyond the types (the bin count: the result's shape).
  std::uint64_t plan_key() const { return 0x4b15ull + std::uint64_t(spec->bins()) * 2 + (spec->uniform ? 1 : 0); }
  // As EXPLAIN shows it; the values only when asked (a cached plan serves any range).
  std::string options_text(bool values) const {
    std::ostringstream os;
    os << "bins=" << spec->bins();
    if (values && spec->uniform) os << ", range=(" << spec->lo << ", " << spec->hi << ")";
    if (!spec->uniform) os << ", edges";
    return os.str();
  }
  // The counts of this rank's values into h (bins() of them): each(f) calls
  // f(values, n) over the block's values in chunks.
  template <class Each>
  void count(Each&& each, std::int64_t* h) const {
    const std::int64_t nb = spec->bins();
    std::fill_n(h, nb, std::int64_t(0));
    // counts of even and odd positions apart (see binned()), one table for many bins
    std::vector<std::int64_t> odd(static_cast<std::size_t>(nb <= 65536 ? nb : 0), 0);
    std::int64_t* const h1 = nb <= 65536 ? odd.data() : h;
    auto tally = [&](const auto bin_of) {  // (by value, and the tables in locals: the count stores alias nothing)
      each([&, bin_of](const double* v, std::int64_t len) {
        std::int64_t* const t0 = h;
        std::int64_t* const t1 = h1;
        std::int64_t i = 0;
        for (; i + 2 <= len; i += 2) {
          const std::int64_t k0 = bin_of(v[i]), k1 = bin_of(v[i + 1]);
          if (k0 >= 0) ++t0[k0];
          if (k1 >= 0) ++t1[k1];
        }
        if (i < len) {
          const std::int64_t k = bin_of(v[i]);
          if (k >= 0) ++t0[k];
        }
      });
    };
    if (spec->uniform) tally(ember::detail::uniform_binner(spec->lo, spec->hi, spec->edges, nb));
    else tally([e = &spec->edges](double v) { return ember::detail::edge_bin(v, *e); });
    if (h1 != h)
      for (std::int64_t b = 0; b < nb; ++b) h[b] += h1[b];
  }
};

template <class A>
struct node_traits<histogram_node<A>> {
  static constexpr node_class kind = node_class::reduction;
};

}  // namespace expr

namespace detail {



template <class A>
auto host_eval(A&& a, const char* what) {
  using T = typename expr::node_t<A>::value_type;
  constexpr int N = expr::node_t<A>::ndim;
  static_assert(!is_complex_v<T>, "ember: histograms take real numbers");
  dndarray<T, N> x = ember::eval(std::forward<A>(a));
  require_host(x.device(), what);
  return x;
}

// `w` laid out as `x` (moved there when it is not: one exchange).
template <class X, class W>
auto aligned_to(const X& x, const W& w, const char* what, const char* wname) {
  using WT = typename W::value_type;
  constexpr int N = W::ndim_v;
  if (x.layout().shape() != w.layout().shape())
    throw shape_error(std::string("ember::") + what + ": " + wname + " of shape " + shape_str(w.layout().shape()) +
                      " must have the shape of the data, " + shape_str(x.layout().shape()));
  if (w.layout() == x.layout()) return w;
  dndarray<WT, N> moved(x.layout(), x.comm());
  ember::copyto(moved, w);
  return moved;
}

// Values per bin over this rank's block (`bin_of(v)`: the bin, or -1 outside),
// summed over the ranks: counts, or sums of the weights `w`.
template <class H, class T, class Wt, class BinOf>
std::vector<H> binned(const communicator& c, bool distributed, const T* p, const Wt* w, std::int64_t n,
                      std::int64_t bins, BinOf bin_of) {
  std::vector<H> h(static_cast<std::size_t>(bins), H(0));
  H* const hp = h.data();
  constexpr bool counts = std::is_same_v<Wt, void>;
  if (counts && bins <= 65536 && bins <= n) {
    // counts of even and odd positions apart, summed at the end: two values
    // in the same bin a few positions apart (frequent with few bins) no longer
    // wait for each other's increment (1.35x -> 1.1x the one-table loop's time
    // with 100 bins)
    std::vector<H> h1(static_cast<std::size_t>(bins), H(0));
    H* const hq = h1.data();
    std::int64_t i = 0;
    for (; i + 2 <= n; i += 2) {
      const std::int64_t k0 = bin_of(double(p[i])), k1 = bin_of(double(p[i + 1]));
      if (k0 >= 0) hp[k0] += H(1);
      if (k1 >= 0) hq[k1] += H(1);
    }
    if (i < n) {
      const std::int64_t k = bin_of(double(p[i]));
      if (k >= 0) hp[k] += H(1);
    }
    for (std::int64_t b = 0; b < bins; ++b) hp[b] += hq[b];
  } else {
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t k = bin_of(double(p[i]));
      if constexpr (counts) {
        if (k >= 0) hp[k] += H(1);
      } else {
        if (k >= 0) hp[k] += H(w[i]);
      }
    }
  }
  if (distributed) c.allreduce(h.data(), bins, reduce_op::sum);
  return h;
}

// The result on every rank; NumPy's density: n / diff(edges) / n.sum().
template <class H>
basic_histogram_result<H> histogram_of(std::vector<H> h, const std::vector<double>& e, bool density,
                                       const communicator& c) {
  if (density) {
    if constexpr (std::is_floating_point_v<H>) {
      H total = 0;
      for (H v : h) total += v;
      for (std::size_t i = 0; i < h.size(); ++i) h[i] = h[i] / H(e[i + 1] - e[i]) / total;
    } else {
      throw type_error("ember::histogram: density=true gives floating values: call ember::histogram<double>(a, bins, {.density = true})");
    }
  }
  return {replicated_counts<H, 1>(h, c, {std::int64_t(h.size())}), replicated_values(e, c)};
}

template <class H, class X, class Wt>
basic_histogram_result<H> uniform_histogram(const X& x, const Wt* w, std::int64_t bins, const histogram_options& o) {
  if (bins < 1) throw value_error("ember::histogram: `bins` must be positive, got " + std::to_string(bins));
  const communicator& c = x.comm();
  const bool distributed = x.layout().split() && c.size() > 1;
  const auto [lo, hi] = outer_edges(c, x.ldata(), x.lnumel(), distributed, o, "histogram");
  const auto e = uniform_edges(lo, hi, bins);
  auto h = binned<H>(c, distributed, x.ldata(), w, x.lnumel(), bins, uniform_binner(lo, hi, e, bins));
  return histogram_of<H>(std::move(h), e, o.density, c);
}

template <class H, class X, class Wt>
basic_histogram_result<H> edges_histogram(const X& x, const Wt* w, const std::vector<double>& edges,
                                          const histogram_options& o) {
  check_edges(edges, "histogram");
  const communicator& c = x.comm();
  auto h = binned<H>(c, x.layout().split() && c.size() > 1, x.ldata(), w, x.lnumel(), std::int64_t(edges.size()) - 1,
                     [&](double v) { return edge_bin(v, edges); });
  return histogram_of<H>(std::move(h), edges, o.density, c);
}

}  // namespace detail

namespace detail {

inline std::shared_ptr<const bin_spec> uniform_spec(std::int64_t bins, double lo, double hi) {
  auto sp = std::make_shared<bin_spec>();
  sp->uniform = true;
  sp->lo = lo;
  sp->hi = hi;
  sp->edges = uniform_edges(lo, hi, bins);
  return sp;
}
inline std::shared_ptr<const bin_spec> edges_spec(const std::vector<double>& edges) {
  check_edges(edges, "histogram");
  auto sp = std::make_shared<bin_spec>();
  sp->edges = edges;
  return sp;
}
template <class A>
auto make_histogram_node(A&& a, std::shared_ptr<const bin_spec> sp) {
  using T = typename expr::node_t<A>::value_type;
  static_assert(!is_complex_v<T>, "ember: histograms take real numbers");
  return expr::histogram_node<expr::node_t<A>>(expr::as_node(std::forward<A>(a)), std::move(sp));
}
// The planned counts (a fused pass and one allreduce), as the eager result.
template <class H, class Node>
basic_histogram_result<H> planned_histogram(const Node& n, bool density) {
  const dndarray<std::int64_t, 1> counts = ember::eval(n);
  const communicator& c = counts.comm();
  std::vector<H> h(std::size_t(n.spec->bins()));
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = H(counts.ldata()[i]);
  return histogram_of<H>(std::move(h), n.spec->edges, density, c);
}

}  // namespace detail

// np.histogram(a, bins, range)[0] as a lazy expression (int64 counts per bin,
// replicated): a plan step, one fused pass over the blocks (`a` computed as it
// is read) and one allreduce of the counts, so `explain` shows its bytes and it
// can feed further expressions (`histogram_counts(x, 100, {0, 1}) / n`). The
// range is required, as in Dask: without it the edges depend on the data.
template <array_like A>
auto histogram_counts(A&& a, std::int64_t bins, std::pair<double, double> range) {
  if (bins < 1) throw value_error("ember::histogram_counts: `bins` must be positive, got " + std::to_string(bins));
  const auto [lo, hi] = detail::given_range(range, "histogram_counts");
  return detail::make_histogram_node(std::forward<A>(a), detail::uniform_spec(bins, lo, hi));
}
// np.histogram(a, bins=edges)[0], lazy: explicit, monotonically increasing edges.
template <array_like A>
auto histogram_counts(A&& a, const std::vector<double>& edges) {
  return detail::make_histogram_node(std::forward<A>(a), detail::edges_spec(edges));
}

// np.histogram(a, bins=10, range=None): over all elements of a. H: the type of
// the counts (int64; double for density=true). The counting is the plan step
// of histogram_counts; without a range `a` is evaluated first and its minimum
// and maximum found in one pass and one allreduce.
template <class H = std::int64_t, array_like A>
basic_histogram_result<H> histogram(A&& a, std::int64_t bins = 10, const histogram_options& o = {}) {
  if (bins < 1) throw value_error("ember::histogram: `bins` must be positive, got " + std::to_string(bins));
  if (o.range) {
    const auto [lo, hi] = detail::given_range(*o.range, "histogram");
    return detail::planned_histogram<H>(detail::make_histogram_node(std::forward<A>(a), detail::uniform_spec(bins, lo, hi)),
                                        o.density);
  }
  const auto x = detail::host_eval(std::forward<A>(a), "ember::histogram");
  const communicator& c = x.comm();
  const auto [lo, hi] = detail::outer_edges(c, x.ldata(), x.lnumel(), x.layout().split() && c.size() > 1, o, "histogram");
  return detail::planned_histogram<H>(detail::make_histogram_node(x, detail::uniform_spec(bins, lo, hi)), o.density);
}
// np.histogram(a, bins=edges): explicit, monotonically increasing edges.
template <class H = std::int64_t, array_like A>
basic_histogram_result<H> histogram(A&& a, const std::vector<double>& edges, const histogram_options& o = {}) {
  return detail::planned_histogram<H>(detail::make_histogram_node(std::forward<A>(a), detail::edges_spec(edges)), o.density);
}
// np.histogram(a, bins, range, density, weights): the sum of the weights (an
// array of a's shape) per bin, float64.
template <array_like A, array_like W>
basic_histogram_result<double> histogram(A&& a, std::int64_t bins, const histogram_options& o, W&& weights) {
  const auto x = detail::host_eval(std::forward<A>(a), "ember::histogram");
  const auto w = detail::aligned_to(x, detail::host_eval(std::forward<W>(weights), "ember::histogram"), "histogram", "weights");
  return detail::uniform_histogram<double>(x, w.ldata(), bins, o);
}
template <array_like A, array_like W>
basic_histogram_result<double> histogram(A&& a, const std::vector<double>& edges, const histogram_options& o,
                                         W&& weights) {
  const auto x = detail::host_eval(std::forward<A>(a), "ember::histogram");
  const auto w = detail::aligned_to(x, detail::host_eval(std::forward<W>(weights), "ember::histogram"), "histogram", "weights");
  return detail::edges_histogram<double>(x, w.ldata(), edges, o);
}

// np.histogram2d(x, y, bins): x and y of one shape (y moved to x's layout when
// it differs); NumPy's histogramdd edge rules on each axis.
template <array_like X, array_like Y>
histogram2d_result histogram2d(X&& xs, Y&& ys, std::int64_t bins = 10) {
  const auto x = detail::host_eval(std::forward<X>(xs), "ember::histogram2d");
  const auto y = detail::aligned_to(x, detail::host_eval(std::forward<Y>(ys), "ember::histogram2d"), "histogram2d", "y");
  if (bins < 1) throw value_error("ember::histogram2d: `bins` must be positive, got " + std::to_string(bins));
  const communicator& c = x.comm();
  const bool distributed = x.layout().split() && c.size() > 1;
  const auto [xl, xh] = detail::outer_edges(c, x.ldata(), x.lnumel(), distributed, {}, "histogram2d");
  const auto [yl, yh] = detail::outer_edges(c, y.ldata(), y.lnumel(), distributed, {}, "histogram2d");
  const auto ex = detail::uniform_edges(xl, xh, bins), ey = detail::uniform_edges(yl, yh, bins);
  const detail::uniform_binner bx(xl, xh, ex, bins), by(yl, yh, ey, bins);
  std::vector<std::int64_t> n(static_cast<std::size_t>(bins * bins), 0);
  for (std::int64_t i = 0, m = x.lnumel(); i < m; ++i) {
    // histogramdd's rule is searchsorted on the edges: the fast path where it
    // decides (the same bin, see uniform_binner), else the search
    const double vx = double(x.ldata()[i]), vy = double(y.ldata()[i]);
    std::int64_t kx = bx.quick(vx), ky = by.quick(vy);
    if (kx == -2) kx = detail::edge_bin(vx, ex);
    if (ky == -2) ky = detail::edge_bin(vy, ey);
    if (kx >= 0 && ky >= 0) ++n[std::size_t(kx * bins + ky)];
  }
  if (distributed) c.allreduce(n.data(), bins * bins, reduce_op::sum);
  return {detail::replicated_counts<std::int64_t, 2>(n, c, {bins, bins}), detail::replicated_values(ex, c),
          detail::replicated_values(ey, c)};
}

namespace detail {

// np.bincount's length: max(x) + 1 or minlength; negative values refused.
template <class X>
std::int64_t bincount_length(const X& x, bool distributed, const bincount_options& o) {
  std::int64_t mm[2] = {0, -1};  // -min, max
  for (std::int64_t i = 0, m = x.lnumel(); i < m; ++i) {
    mm[0] = std::max(mm[0], -std::int64_t(x.ldata()[i]));
    mm[1] = std::max(mm[1], std::int64_t(x.ldata()[i]));
  }
  if (distributed) x.comm().allreduce(mm, 2, reduce_op::max);
  if (mm[0] > 0) throw value_error("ember::bincount: the array must have no negative elements, its minimum is " + std::to_string(-mm[0]));
  if (o.minlength < 0) throw value_error("ember::bincount: minlength must be non-negative, got " + std::to_string(o.minlength));
  return std::max(mm[1] + 1, o.minlength);
}

template <class H, class A, class Wt>
dndarray<H, 1> bincount_of(const A& x, const Wt* w, const bincount_options& o) {
  using T = typename A::value_type;
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "ember::bincount: takes non-negative integers (cast with astype)");
  static_assert(A::ndim_v == 1, "ember::bincount: takes a 1-D array");
  const communicator& c = x.comm();
  const bool distributed = x.layout().split() && c.size() > 1;
  const std::int64_t len = bincount_length(x, distributed, o);
  auto n = binned<H>(c, distributed, x.ldata(), w, x.lnumel(), len, [](double v) { return std::int64_t(v); });
  return replicated_counts<H, 1>(n, c, {len});
}

}  // namespace detail

// np.bincount(x, minlength=): counts of each non-negative integer in the 1-D x.
template <array_like A>
dndarray<std::int64_t, 1> bincount(A&& xs, const bincount_options& o = {}) {
  return detail::bincount_of<std::int64_t>(detail::host_eval(std::forward<A>(xs), "ember::bincount"),
                                           static_cast<const void*>(nullptr), o);
}
// np.bincount(x, weights, minlength=): the sum of the weights (x's shape) of
// each value, float64.
template <array_like A, array_like W>
dndarray<double, 1> bincount(A&& xs, W&& weights, const bincount_options& o = {}) {
  const auto x = detail::host_eval(std::forward<A>(xs), "ember::bincount");
  const auto w = detail::aligned_to(x, detail::host_eval(std::forward<W>(weights), "ember::bincount"), "bincount", "weights");
  return detail::bincount_of<double>(x, w.ldata(), o);
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
