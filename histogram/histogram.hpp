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
//   auto m = ember::histogram_counts(x, 100, {0.0, 1.0}, 2.0 * w);  // lazy, weighted
//   auto [h2, xe, ye] = ember::histogram2d(x, y, {8, 6}, {.range = {{{0.0, 1.0}, {0.0, 2.0}}}});
//   auto k = ember::histogram2d_counts(x, y, {8, 6}, {{0.0, 1.0}, {0.0, 2.0}});   // lazy
//   std::cout << ember::explain(n);                      // its fused pass and allreduce
//
// One pass over each rank's block and one allreduce of the bins (plus one of
// the minimum and maximum when the range is not given): the counts are exact
// and NumPy's, bin by bin, including its edge rules (the last bin is closed,
// values outside the range are dropped, a uniform histogram computes its bin
// as NumPy's fast path does, then corrects it against the edges; histogram2d
// follows histogramdd, searchsorted on the edges); weights sum per bin in
// float64 in the same pass. Every histogram is a plan step: a reduction node
// (expr::histogram_node) into the bins whose operand is computed as it is
// read; with weights, or histogram2d's x and y, the operands are one node
// (op::bin_operands) the planner lays out as any elementwise group (an operand
// lying elsewhere is moved by a planned step) and the kernel reads in step.
// histogram_counts / histogram2d_counts are the lazy forms (a range is
// required: without it the edges depend on the data); histogram(),
// histogram2d() and bincount() return their results evaluated now (bincount's
// length, max(x) + 1, takes one pass and one allreduce first).
// digitize is an elementwise lookup in the bins (sorting/lookup.hpp): a node of
// the fused kernel, no communication.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../dsl/eval.hpp"
#include "../shape/shape.hpp"
#include "../sorting/lookup.hpp"

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
template <class H>
struct basic_histogram2d_result {
  dndarray<H, 2> hist;  // (x bins, y bins)
  dndarray<double, 1> xedges, yedges;
};
using histogram2d_result = basic_histogram2d_result<std::int64_t>;
// np.histogram2d's range=[[xmin, xmax], [ymin, ymax]]: {{xmin, xmax}, {ymin, ymax}}
struct histogram2d_range {
  std::pair<double, double> x, y;
};
struct histogram2d_options {
  std::optional<histogram2d_range> range = std::nullopt;  // default: each axis's data minimum and maximum
  bool density = false;  // histogramdd's: each bin / the total / its area (floating values: histogram2d<double>, or weights)
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

// NumPy's outer edges of an autodetected range from the data's global minimum
// and maximum and its element count: [0, 1] for no data, a constant array
// widened by 0.5 each way, a NaN or infinite extreme refused.
inline std::pair<double, double> autodetected_range(double lo, double hi, std::int64_t total, const char* what) {
  if (total == 0) return {0.0, 1.0};
  if (!std::isfinite(lo) || !std::isfinite(hi))
    throw value_error(std::string("ember::") + what + ": autodetected range of [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "] is not finite");
  if (lo == hi) return {lo - 0.5, hi + 0.5};
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

// What a histogram plan step bins by along one axis: uniform bins over [lo, hi]
// (NumPy's fast path, uniform_binner), explicit increasing edges, or the
// integers 0 .. bins - 1 (bincount: a value is its own bin).
struct bin_spec {
  std::vector<double> edges;
  bool uniform = false, integers = false;
  double lo = 0, hi = 0;
  std::int64_t count = 0;  // integers: the number of bins
  std::int64_t bins() const { return integers ? count : std::int64_t(edges.size()) - 1; }
  std::uint64_t key() const { return std::uint64_t(bins()) * 4 + (uniform ? 1 : 0) + (integers ? 2 : 0); }
  // f(bin_of) with the binner for these bins: bin_of(v) is v's bin, or -1 outside.
  // uniform: np.histogram's rule (the fast path, then NumPy's correction); with
  // `searchsorted`, histogramdd's (the fast path, then the edges searched: the
  // same bin wherever the fast path decides, see uniform_binner)
  template <class F>
  void with_binner(bool searchsorted, F&& f) const {
    if (integers) {
      f([n = count](double v) { return v >= 0 && v < double(n) ? std::int64_t(v) : std::int64_t(-1); });
    } else if (uniform && !searchsorted) {
      f(uniform_binner(lo, hi, edges, bins()));
    } else if (uniform) {
      f([b = uniform_binner(lo, hi, edges, bins()), e = &edges](double v) {
        const std::int64_t k = b.quick(v);
        return k != -2 ? k : edge_bin(v, *e);
      });
    } else {
      f([e = &edges](double v) { return edge_bin(v, *e); });
    }
  }
};

}  // namespace detail

namespace op {

// The operands a histogram bins in one pass, as one node: (values, weights),
// (x, y) or (x, y, weights). The histogram reads the children; the node itself
// is what the planner lays out (every operand in one iteration layout, moved
// there as needed, each computed as it is read), its value is the first operand.
template <int Axes, bool Weighted>
struct bin_operands {
  static constexpr std::string_view name = Axes == 2 ? (Weighted ? "weighted_pair" : "pair") : "weighted";
  template <class... A>
  using result = double;
  template <class R, class X, class... Rest>
  EMBER_HD static R apply(X x, Rest...) {
    return convert<R>(x);
  }
};

}  // namespace op

namespace expr {

struct histogram_op {
  static constexpr std::string_view name = "histogram";
  static constexpr reduce_op mpi = reduce_op::sum;  // the allreduce of the counts
};
struct histogram2d_op {
  static constexpr std::string_view name = "histogram2d";
  static constexpr reduce_op mpi = reduce_op::sum;
};
struct bincount_op {
  static constexpr std::string_view name = "bincount";
  static constexpr reduce_op mpi = reduce_op::sum;
};

template <class A>
struct bin_operands_of {  // one operand: the values
  static constexpr int streams = 1, axes = 1;
  static constexpr bool weighted = false;
};
template <int Axes, bool Weighted, class... C>
struct bin_operands_of<elementwise<op::bin_operands<Axes, Weighted>, C...>> {
  static constexpr int streams = int(sizeof...(C)), axes = Axes;
  static constexpr bool weighted = Weighted;
};

// np.histogram(a, bins, range)[0] (and with weights), np.histogram2d's counts
// and np.bincount as a reduction over every axis into values per bin (int64
// counts, or H = double sums of the weights): one fused pass over the blocks
// (every operand computed as it is read) and one allreduce of the bins, a plan
// step like sum's. A: the values, or op::bin_operands' node of values and
// weights, or of x and y (and weights); one bin_spec per histogram axis.
template <class A, class H = std::int64_t, class Op = histogram_op>
struct histogram_node : node_base {
  using arg_type = typename A::value_type;
  using value_type = H;
  using operands = bin_operands_of<A>;
  static constexpr int streams = operands::streams;  // the executor's: how many value streams count() reads
  static constexpr int ndim = operands::axes;
  static constexpr bool exact_ndim = true;
  static constexpr int node_count = 1 + A::node_count;
  static constexpr bool index_result = false;
  static constexpr bool binned = true;  // the executor's hook: count() instead of a reduction kernel
  static Op op_tag() { return {}; }
  A arg;
  std::vector<int> axes;
  bool keepdims = false;
  std::shared_ptr<const ember::detail::bin_spec> spec, spec_y;  // spec_y: histogram2d's second axis
  dims shape_;
  histogram_node(A a, std::shared_ptr<const ember::detail::bin_spec> sp,
                 std::shared_ptr<const ember::detail::bin_spec> sy = nullptr)
      : arg(std::move(a)), spec(std::move(sp)), spec_y(std::move(sy)) {
    static_assert(!operands::weighted || std::is_same_v<H, double>, "ember: weighted bins hold float64 sums");
    for (int d = 0; d < int(arg.shape_dims().size()); ++d) axes.push_back(d);
    shape_.push_back(spec->bins());
    if constexpr (ndim == 2) shape_.push_back(spec_y->bins());
  }
  const dims& shape_dims() const { return shape_; }
  index_vec shape() const { return index_vec(shape_.begin(), shape_.end()); }
  // What the plan depends on beyond the types (the bin counts: the result's shape).
  std::uint64_t plan_key() const { return 0x4b15ull ^ (spec->key() * 0x9e3779b1ull) ^ (spec_y ? spec_y->key() << 32 : 0); }
  // As EXPLAIN shows it; the values only when asked (a cached plan serves any range).
  std::string options_text(bool values) const {
    std::ostringstream os;
    auto one = [&](const ember::detail::bin_spec& b, const char* prefix) {
      if (b.integers) {
        os << "length=" << b.count;
        return;
      }
      os << prefix << "bins=" << b.bins();
      if (values && b.uniform) os << ", " << prefix << "range=(" << b.lo << ", " << b.hi << ")";
      if (!b.uniform) os << ", " << prefix << "edges";
    };
    one(*spec, spec_y ? "x" : "");
    if (spec_y) {
      os << ", ";
      one(*spec_y, "y");
    }
    return os.str();
  }
  // The bins of this rank's values into h: each(f) calls f(values, n) over the
  // block in chunks, values[s] the s-th stream's (the values; the weights; y).
  template <class Each>
  void count(Each&& each, H* h) const {
    std::int64_t nb = spec->bins();
    if constexpr (ndim == 2) nb *= spec_y->bins();
    std::fill_n(h, nb, H(0));
    if constexpr (ndim == 1 && !operands::weighted) {
      // counts of even and odd positions apart (two values in one bin a few
      // positions apart no longer wait for each other's increment: 1.35x ->
      // 1.1x the one-table loop's time with 100 bins), one table for many bins
      std::vector<H> odd(static_cast<std::size_t>(nb <= 65536 ? nb : 0), H(0));
      H* const h1 = nb <= 65536 ? odd.data() : h;
      spec->with_binner(false, [&](const auto bin_of) {  // (by value, and the tables in locals: the stores alias nothing)
        each([&, bin_of](const double* const* s, std::int64_t len) {
          const double* v = s[0];
          H* const t0 = h;
          H* const t1 = h1;
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
      });
      if (h1 != h)
        for (std::int64_t b = 0; b < nb; ++b) h[b] += h1[b];
    } else if constexpr (ndim == 1) {  // sums of the weights
      spec->with_binner(false, [&](const auto bin_of) {
        each([&, bin_of](const double* const* s, std::int64_t len) {
          for (std::int64_t i = 0; i < len; ++i) {
            const std::int64_t k = bin_of(s[0][i]);
            if (k >= 0) h[k] += s[1][i];
          }
        });
      });
    } else {  // histogram2d: histogramdd's rule on each axis
      const std::int64_t ny = spec_y->bins();
      spec->with_binner(true, [&](const auto bx) {
        spec_y->with_binner(true, [&](const auto by) {
          each([&, bx, by](const double* const* s, std::int64_t len) {
            for (std::int64_t i = 0; i < len; ++i) {
              const std::int64_t kx = bx(s[0][i]), ky = by(s[1][i]);
              if (kx >= 0 && ky >= 0) {
                if constexpr (operands::weighted) h[kx * ny + ky] += s[2][i];
                else ++h[kx * ny + ky];
              }
            }
          });
        });
      });
    }
  }
};

template <class A, class H, class Op>
struct node_traits<histogram_node<A, H, Op>> {
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

inline std::shared_ptr<const bin_spec> uniform_spec(std::int64_t bins, double lo, double hi) {
  auto sp = std::make_shared<bin_spec>();
  sp->uniform = true;
  sp->lo = lo;
  sp->hi = hi;
  sp->edges = uniform_edges(lo, hi, bins);
  return sp;
}
inline std::shared_ptr<const bin_spec> edges_spec(const std::vector<double>& edges, const char* what = "histogram") {
  check_edges(edges, what);
  auto sp = std::make_shared<bin_spec>();
  sp->edges = edges;
  return sp;
}
inline std::shared_ptr<const bin_spec> integer_spec(std::int64_t n) {
  auto sp = std::make_shared<bin_spec>();
  sp->integers = true;
  sp->count = n;
  return sp;
}

template <class A>
auto bin_operand(A&& a) {
  using T = typename expr::node_t<A>::value_type;
  static_assert(!is_complex_v<T>, "ember: histograms take real numbers");
  return expr::as_node(std::forward<A>(a));
}
// The node of the operands binned together (values and weights, or x, y and
// maybe weights), each of the first's shape (NumPy's rule: no broadcasting).
template <int Axes, bool Weighted, class First, class... Rest>
auto bin_operands(const char* what, const char* const* names, First first, Rest... rest) {
  std::size_t k = 1;
  (
      [&](const auto& r) {
        if (r.shape() != first.shape())
          throw shape_error(std::string("ember::") + what + ": " + names[k] + " of shape " + shape_str(r.shape()) +
                            " must have the shape of " + names[0] + ", " + shape_str(first.shape()));
        ++k;
      }(rest),
      ...);
  return expr::elementwise<op::bin_operands<Axes, Weighted>, First, Rest...>(std::move(first), std::move(rest)...);
}
template <class A>
auto make_histogram_node(A&& a, std::shared_ptr<const bin_spec> sp) {
  return expr::histogram_node<expr::node_t<A>>(bin_operand(std::forward<A>(a)), std::move(sp));
}
template <class A, class W>
auto make_weighted_node(A&& a, W&& w, std::shared_ptr<const bin_spec> sp, const char* what) {
  static const char* const names[] = {"the data", "weights"};
  auto n = bin_operands<1, true>(what, names, bin_operand(std::forward<A>(a)), bin_operand(std::forward<W>(w)));
  return expr::histogram_node<decltype(n), double>(std::move(n), std::move(sp));
}
template <class H, class X, class Y, class... W>
auto make_histogram2d_node(X&& x, Y&& y, std::shared_ptr<const bin_spec> sx, std::shared_ptr<const bin_spec> sy,
                           W&&... w) {
  static const char* const names[] = {"x", "y", "weights"};
  auto n = bin_operands<2, sizeof...(W) != 0>("histogram2d", names, bin_operand(std::forward<X>(x)), bin_operand(std::forward<Y>(y)),
                                              bin_operand(std::forward<W>(w))...);
  return expr::histogram_node<decltype(n), H, expr::histogram2d_op>(std::move(n), std::move(sx), std::move(sy));
}
// The planned bins (a fused pass and one allreduce), replicated: their values
// as H, and the communicator they are on.
template <class H, class Node>
std::pair<std::vector<H>, communicator> planned_bins(const Node& n) {
  const auto b = ember::eval(n);
  std::vector<H> h(static_cast<std::size_t>(b.lnumel()));
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = H(b.ldata()[i]);
  return {std::move(h), b.comm()};
}
template <class H, class Node>
basic_histogram_result<H> planned_histogram(const Node& n, bool density) {
  auto [h, c] = planned_bins<H>(n);
  return histogram_of<H>(std::move(h), n.spec->edges, density, c);
}
// Uniform bins over each array's own range, bins[i] for xs[i]: one pass over
// each block and one max-allreduce of every array's (-min, max) together (NaN
// propagates: a NaN value makes both NaN); the counts come from the layouts.
template <class... X>
std::array<std::shared_ptr<const bin_spec>, sizeof...(X)> data_specs(const char* what,
                                                                      std::array<std::int64_t, sizeof...(X)> bins,
                                                                      const X&... xs) {
  for (auto b : bins)
    if (b < 1) throw value_error(std::string("ember::") + what + ": `bins` must be positive, got " + std::to_string(b));
  std::array<double, 2 * sizeof...(X)> mm;
  bool distributed = false;
  std::size_t k = 0;
  (
      [&](const auto& x) {
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        bool nan = false;
        for (std::int64_t i = 0, n = x.lnumel(); i < n; ++i) {
          const double v = double(x.ldata()[i]);
          nan = nan || v != v;
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
        if (nan) lo = hi = std::numeric_limits<double>::quiet_NaN();
        mm[k++] = -lo;
        mm[k++] = hi;
        distributed = distributed || (x.layout().split() && x.comm().size() > 1);
      }(xs),
      ...);
  const communicator& c = std::get<0>(std::forward_as_tuple(xs...)).comm();
  if (distributed) c.allreduce(mm.data(), std::int64_t(mm.size()), reduce_op::max);
  std::array<std::shared_ptr<const bin_spec>, sizeof...(X)> r;
  k = 0;
  (
      [&](const auto& x) {
        const auto [lo, hi] = autodetected_range(-mm[2 * k], mm[2 * k + 1], x.layout().numel(), what);
        r[k] = uniform_spec(bins[k], lo, hi);
        ++k;
      }(xs),
      ...);
  return r;
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
// np.histogram(a, bins, range, weights=w)[0], lazy: float64 sums of the weights
// (an expression of a's shape, computed as it is read, moved to a's layout by
// the plan when it lies elsewhere) per bin.
template <array_like A, array_like W>
auto histogram_counts(A&& a, std::int64_t bins, std::pair<double, double> range, W&& weights) {
  if (bins < 1) throw value_error("ember::histogram_counts: `bins` must be positive, got " + std::to_string(bins));
  const auto [lo, hi] = detail::given_range(range, "histogram_counts");
  return detail::make_weighted_node(std::forward<A>(a), std::forward<W>(weights), detail::uniform_spec(bins, lo, hi),
                                    "histogram_counts");
}
template <array_like A, array_like W>
auto histogram_counts(A&& a, const std::vector<double>& edges, W&& weights) {
  return detail::make_weighted_node(std::forward<A>(a), std::forward<W>(weights), detail::edges_spec(edges),
                                    "histogram_counts");
}
// np.histogram2d(x, y, bins, range)[0], lazy: int64 counts of shape (bins[0],
// bins[1]), replicated; optionally the float64 sums of `weights`. x, y (and the
// weights) of one shape, read in one pass.
template <array_like X, array_like Y, class... W>
  requires(sizeof...(W) <= 1 && (array_like<W> && ...))
auto histogram2d_counts(X&& x, Y&& y, std::array<std::int64_t, 2> bins,
                        histogram2d_range range, W&&... weights) {
  for (auto b : bins)
    if (b < 1) throw value_error("ember::histogram2d_counts: `bins` must be positive, got " + std::to_string(b));
  const auto [xl, xh] = detail::given_range(range.x, "histogram2d_counts");
  const auto [yl, yh] = detail::given_range(range.y, "histogram2d_counts");
  using H = std::conditional_t<sizeof...(W) == 0, std::int64_t, double>;
  return detail::make_histogram2d_node<H>(std::forward<X>(x), std::forward<Y>(y), detail::uniform_spec(bins[0], xl, xh),
                                          detail::uniform_spec(bins[1], yl, yh), std::forward<W>(weights)...);
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
  return detail::planned_histogram<H>(detail::make_histogram_node(x, detail::data_specs("histogram", {bins}, x)[0]), o.density);
}
// np.histogram(a, bins=edges): explicit, monotonically increasing edges.
template <class H = std::int64_t, array_like A>
basic_histogram_result<H> histogram(A&& a, const std::vector<double>& edges, const histogram_options& o = {}) {
  return detail::planned_histogram<H>(detail::make_histogram_node(std::forward<A>(a), detail::edges_spec(edges)), o.density);
}
// np.histogram(a, bins, range, density, weights): the sum of the weights (an
// array or expression of a's shape) per bin, float64: one plan step, the
// weights computed as they are read and moved to a's layout when they lie
// elsewhere (a planned move).
template <array_like A, array_like W>
basic_histogram_result<double> histogram(A&& a, std::int64_t bins, const histogram_options& o, W&& weights) {
  if (bins < 1) throw value_error("ember::histogram: `bins` must be positive, got " + std::to_string(bins));
  if (o.range) {
    const auto [lo, hi] = detail::given_range(*o.range, "histogram");
    return detail::planned_histogram<double>(
        detail::make_weighted_node(std::forward<A>(a), std::forward<W>(weights), detail::uniform_spec(bins, lo, hi), "histogram"),
        o.density);
  }
  const auto x = detail::host_eval(std::forward<A>(a), "ember::histogram");
  return detail::planned_histogram<double>(
      detail::make_weighted_node(x, std::forward<W>(weights), detail::data_specs("histogram", {bins}, x)[0], "histogram"), o.density);
}
template <array_like A, array_like W>
basic_histogram_result<double> histogram(A&& a, const std::vector<double>& edges, const histogram_options& o,
                                         W&& weights) {
  return detail::planned_histogram<double>(
      detail::make_weighted_node(std::forward<A>(a), std::forward<W>(weights), detail::edges_spec(edges), "histogram"), o.density);
}

namespace detail {

// np.histogram2d's bins and edges: the given ranges, or the data's own (x and y evaluated first).
template <class H, class X, class Y, class... W>
basic_histogram2d_result<H> histogram2d_of(X&& xs, Y&& ys, std::array<std::int64_t, 2> bins, const histogram2d_options& o,
                                           W&&... w) {
  for (auto b : bins)
    if (b < 1) throw value_error("ember::histogram2d: `bins` must be positive, got " + std::to_string(b));
  std::pair<std::vector<H>, communicator> hc{{}, world()};
  std::shared_ptr<const bin_spec> sx, sy;
  if (o.range) {
    const auto [xl, xh] = given_range(o.range->x, "histogram2d");
    const auto [yl, yh] = given_range(o.range->y, "histogram2d");
    sx = uniform_spec(bins[0], xl, xh);
    sy = uniform_spec(bins[1], yl, yh);
    hc = planned_bins<H>(make_histogram2d_node<H>(std::forward<X>(xs), std::forward<Y>(ys), sx, sy, std::forward<W>(w)...));
  } else {
    const auto x = host_eval(std::forward<X>(xs), "ember::histogram2d");
    const auto y = host_eval(std::forward<Y>(ys), "ember::histogram2d");
    if (y.layout().shape() != x.layout().shape())  // (before the ranges' allreduces: on every rank)
      throw shape_error("ember::histogram2d: y of shape " + shape_str(y.layout().shape()) + " must have the shape of x, " +
                        shape_str(x.layout().shape()));
    const auto specs = data_specs("histogram2d", bins, x, y);  // (one allreduce for both)
    sx = specs[0];
    sy = specs[1];
    hc = planned_bins<H>(make_histogram2d_node<H>(x, y, sx, sy, std::forward<W>(w)...));
  }
  auto& [h, c] = hc;
  if (o.density) {  // histogramdd's: n / n.sum() / (dx_i dy_j)
    if constexpr (std::is_floating_point_v<H>) {
      H total = 0;
      for (H v : h) total += v;
      for (std::int64_t i = 0; i < bins[0]; ++i)
        for (std::int64_t j = 0; j < bins[1]; ++j)
          h[std::size_t(i * bins[1] + j)] /= total * H(sx->edges[std::size_t(i) + 1] - sx->edges[std::size_t(i)]) *
                                             H(sy->edges[std::size_t(j) + 1] - sy->edges[std::size_t(j)]);
    } else {
      throw type_error("ember::histogram2d: density=true gives floating values: call ember::histogram2d<double>(x, y, bins, {.density = true})");
    }
  }
  return {replicated_counts<H, 2>(h, c, {bins[0], bins[1]}), replicated_values(sx->edges, c), replicated_values(sy->edges, c)};
}

}  // namespace detail

// np.histogram2d(x, y, bins=10, range=None, density=False): x and y of one
// shape, read in one pass (one plan step: a fused pass and one allreduce;
// without a range x and y are evaluated first and their ranges found);
// NumPy's histogramdd edge rules on each axis. H: int64 counts, or double.
template <class H = std::int64_t, array_like X, array_like Y>
basic_histogram2d_result<H> histogram2d(X&& xs, Y&& ys, std::int64_t bins = 10, const histogram2d_options& o = {}) {
  return detail::histogram2d_of<H>(std::forward<X>(xs), std::forward<Y>(ys), {bins, bins}, o);
}
template <class H = std::int64_t, array_like X, array_like Y>
basic_histogram2d_result<H> histogram2d(X&& xs, Y&& ys, std::array<std::int64_t, 2> bins, const histogram2d_options& o = {}) {
  return detail::histogram2d_of<H>(std::forward<X>(xs), std::forward<Y>(ys), bins, o);
}
// np.histogram2d(x, y, bins, range, density, weights): float64 sums of the weights per bin.
template <array_like X, array_like Y, array_like W>
basic_histogram2d_result<double> histogram2d(X&& xs, Y&& ys, std::array<std::int64_t, 2> bins, const histogram2d_options& o,
                                             W&& weights) {
  return detail::histogram2d_of<double>(std::forward<X>(xs), std::forward<Y>(ys), bins, o, std::forward<W>(weights));
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

// x evaluated (its length takes a pass and one allreduce), then counted by a
// plan step (with the weights computed as they are read).
template <class H, class A, class... W>
dndarray<H, 1> bincount_of(A&& xs, const bincount_options& o, W&&... w) {
  const auto x = host_eval(std::forward<A>(xs), "ember::bincount");
  using X = std::remove_cvref_t<decltype(x)>;
  using T = typename X::value_type;
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "ember::bincount: takes non-negative integers (cast with astype)");
  static_assert(X::ndim_v == 1, "ember::bincount: takes a 1-D array");
  const std::int64_t len = bincount_length(x, x.layout().split() && x.comm().size() > 1, o);
  if constexpr (sizeof...(W) == 0) {
    return ember::eval(expr::histogram_node<expr::node_t<const X&>, std::int64_t, expr::bincount_op>(expr::as_node(x), integer_spec(len)));
  } else {
    static const char* const names[] = {"x", "weights"};
    auto n = bin_operands<1, true>("bincount", names, expr::as_node(x), bin_operand(std::forward<W>(w))...);
    return ember::eval(expr::histogram_node<decltype(n), double, expr::bincount_op>(std::move(n), integer_spec(len)));
  }
}

}  // namespace detail

// np.bincount(x, minlength=): counts of each non-negative integer in the 1-D x.
template <array_like A>
dndarray<std::int64_t, 1> bincount(A&& xs, const bincount_options& o = {}) {
  return detail::bincount_of<std::int64_t>(std::forward<A>(xs), o);
}
// np.bincount(x, weights, minlength=): the sum of the weights (x's shape) of
// each value, float64.
template <array_like A, array_like W>
dndarray<double, 1> bincount(A&& xs, W&& weights, const bincount_options& o = {}) {
  return detail::bincount_of<double>(std::forward<A>(xs), o, std::forward<W>(weights));
}

// np.digitize(x, bins, right=False): the bin index of every element, an int64
// expression in x's shape (bins increasing or decreasing): an elementwise
// lookup (sorting/lookup.hpp) that fuses with x's expression and its consumers.
template <array_like A>
auto digitize(A&& xs, const std::vector<double>& bins, bool right = false) {
  static_assert(!is_complex_v<typename expr::node_t<A>::value_type>, "ember::digitize: complex values are not supported");
  bool inc = true, dec = true;
  for (std::size_t i = 1; i < bins.size(); ++i) {
    inc = inc && bins[i] >= bins[i - 1];
    dec = dec && bins[i] <= bins[i - 1];
  }
  if (!inc && !dec) throw value_error("ember::digitize: bins must be monotonically increasing or decreasing");
  const bool decreasing = !inc;
  std::vector<double> ascending = decreasing ? std::vector<double>(bins.rbegin(), bins.rend()) : bins;
  auto x = expr::as_node(std::forward<A>(xs));
  return expr::elementwise<op::digitize<double>, decltype(x)>(op::digitize<double>(std::move(ascending), right, decreasing),
                                                              std::move(x));
}

}  // namespace ember
