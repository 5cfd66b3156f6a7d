// Histograms, unique and sets (issue 17) against serial references written out
// here on the gathered data: histogram (uniform bins, a given range, explicit
// edges, the closed last bin, values outside the range, constant and empty
// data), histogram2d, bincount (minlength, negative values), digitize (both
// directions, right=True, NaN); unique with index/inverse/counts (all equal,
// many duplicates, NaN counted once), isin, searchsorted against a split
// sorted array, intersect1d/union1d/setdiff1d; every split, uneven blocks,
// 1-4 ranks, errors on every rank; weights (histogram, bincount) and
// densities against the same sums written out.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "common.hpp"

namespace {

using ember::split_axis;
constexpr double qnan = std::numeric_limits<double>::quiet_NaN();

ember::dndarray<double, 1> vec(const std::vector<double>& v, split_axis s) {
  auto a = ember::array(std::span<const double>(v), std::array<std::int64_t, 1>{std::int64_t(v.size())}, {.split = s});
  test::unbalance(a);
  return a;
}
ember::dndarray<std::int64_t, 1> ivec(const std::vector<std::int64_t>& v, split_axis s) {
  auto a = ember::array(std::span<const std::int64_t>(v), std::array<std::int64_t, 1>{std::int64_t(v.size())}, {.split = s});
  test::unbalance(a);
  return a;
}
template <class T, int N>
std::vector<T> local_values(const ember::dndarray<T, N>& a) {  // a replicated result: this rank's copy
  return std::vector<T>(a.ldata(), a.ldata() + a.lnumel());
}

// NumPy's uniform histogram, written out (fast path and its corrections).
std::vector<std::int64_t> serial_histogram(const std::vector<double>& x, std::int64_t bins, double lo, double hi,
                                           std::vector<double>& edges) {
  if (lo == hi) lo -= 0.5, hi += 0.5;
  edges.assign(std::size_t(bins + 1), 0);
  const double step = (hi - lo) / double(bins);
  for (std::int64_t i = 0; i <= bins; ++i) edges[std::size_t(i)] = double(i) * step + lo;
  edges.back() = hi;
  std::vector<std::int64_t> n(std::size_t(bins), 0);
  for (double v : x) {
    if (!(v >= lo && v <= hi)) continue;
    std::int64_t k = std::int64_t((v - lo) / (hi - lo) * double(bins));  // NumPy's expression, as written
    if (k == bins) --k;
    if (v < edges[std::size_t(k)]) --k;
    else if (k != bins - 1 && v >= edges[std::size_t(k + 1)]) ++k;
    ++n[std::size_t(k)];
  }
  return n;
}

}  // namespace

TEST_CASE("histogram counts equal NumPy's rules", "[histogram]") {
  std::mt19937_64 rng(4);
  std::vector<double> x(5000);
  for (auto& v : x) v = std::normal_distribution<double>(0, 1)(rng);
  x[7] = 0.1 * 3;  // values on edges
  for (auto sp : {split_axis{0}, split_axis{}}) {
    auto a = vec(x, sp);
    const auto [h, e] = ember::histogram(a, 37);
    std::vector<double> we;
    const auto lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
    const auto wh = serial_histogram(x, 37, lo, hi, we);
    REQUIRE(test::all_ranks(local_values(h) == wh && local_values(e) == we));
    std::int64_t total = 0;
    for (auto c : local_values(h)) total += c;
    REQUIRE(total == 5000);  // the maximum is in the closed last bin
    const auto r = ember::histogram(a, 10, {.range = {{-1.0, 1.0}}});
    REQUIRE(test::all_ranks(local_values(r.hist) == serial_histogram(x, 10, -1.0, 1.0, we)));
    // explicit edges: [e0, e1) ... [e_{n-1}, e_n]
    const std::vector<double> edges{-2.0, -0.5, 0.0, 0.3, 2.0};
    std::vector<std::int64_t> wn(4, 0);
    for (double v : x) {
      if (v < -2.0 || v > 2.0) continue;
      std::int64_t k = v == 2.0 ? 3 : std::int64_t(std::upper_bound(edges.begin(), edges.end(), v) - edges.begin()) - 1;
      ++wn[std::size_t(k)];
    }
    REQUIRE(test::all_ranks(local_values(ember::histogram(a, edges).hist) == wn));
    // constant data: the range widens by 0.5 each side; NaN without a range is an error
    auto k = vec(std::vector<double>(9, 3.0), sp);
    const auto hk = ember::histogram(k, 4);
    REQUIRE(test::all_ranks(local_values(hk.bin_edges) == std::vector<double>{2.5, 2.75, 3.0, 3.25, 3.5} &&
                            local_values(hk.hist) == std::vector<std::int64_t>{0, 0, 9, 0}));
    auto withnan = vec({1.0, qnan, 2.0}, sp);
    REQUIRE_THROWS_AS(ember::histogram(withnan, 3), ember::value_error);
    REQUIRE(test::all_ranks(local_values(ember::histogram(withnan, 2, {.range = {{0.0, 2.0}}}).hist) ==
                            std::vector<std::int64_t>{0, 2}));
    REQUIRE_THROWS_AS(ember::histogram(a, 5, {.range = {{1.0, 0.0}}}), ember::value_error);
  }
}

// Values on, and one ulp either side of, every computed edge: where the fast
// path's fixed point cannot decide, NumPy's corrections against the edges do.
// An offset range ([1e12, 1e12 + 1]: edges rounded by 1% of a bin) takes
// NumPy's steps everywhere; [0, 1) and [-3, 7] take the fast path away from
// the edges. histogram2d follows histogramdd (searchsorted on the edges).
TEST_CASE("a histogram is a plan step: a fused pass, one allreduce of exact bytes, lazy counts", "[histogram][planner]") {
  const int P = ember::world().size();
  using K = ember::planner::step_kind;
  std::mt19937_64 rng(71);
  std::vector<double> x(613), w(613);
  for (auto& v : x) v = double(rng() % 1000) / 250.0 - 2.0;
  for (auto& v : w) v = double(rng() % 100) / 50.0;
  for (auto sp : {split_axis{0}, split_axis{}}) {
    INFO("split " << (sp ? *sp : -1));
    auto a = vec(x, sp), b = vec(w, sp);
    // histogram_counts of an expression: the operand computed as it is read
    auto h = ember::histogram_counts(a * b + 1.0, 40, {-3.0, 5.0});
    const auto p = ember::explain(h);
    INFO(p.to_string());
    int kernels = 0, allreduces = 0;
    for (const auto& st : p.steps) {
      kernels += st.kind == K::fused_kernel;
      allreduces += st.kind == K::allreduce;
      if (st.kind == K::fused_kernel) {
        REQUIRE(st.text.find("histogram(add(mul(a0, a1), 1), bins=40, range=(-3, 5))") != std::string::npos);
        REQUIRE(st.to->shape() == ember::index_vec{40});
      }
    }
    REQUIRE(kernels == 1);
    REQUIRE(allreduces == ((sp && P > 1) ? 1 : 0));
    REQUIRE(ember::planner::is_move(p.steps.front().kind) == false);
    // the allreduce's bytes: 40 int64 counts, what the model says of an allreduce
    if (sp && P > 1) REQUIRE(p.max_rank().bytes > 0);
    ember::dndarray<std::int64_t, 1> counts = h;
    REQUIRE(test::all_ranks(test::trace_exact()));
    std::vector<double> y(x.size()), edges;
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * w[i] + 1.0;
    const auto want = serial_histogram(y, 40, -3.0, 5.0, edges);
    REQUIRE(!counts.layout().split());
    REQUIRE(test::all_ranks(local_values(counts) == want));
    // it feeds further expressions: a fused consumer reads the counts
    auto frac = ember::eval(ember::astype<double>(ember::histogram_counts(a, 8, {-2.0, 2.0})) / 613.0);
    const auto want8 = serial_histogram(x, 8, -2.0, 2.0, edges);
    std::vector<double> wantf;
    for (auto c : want8) wantf.push_back(double(c) / 613.0);
    REQUIRE(test::all_ranks(local_values(frac) == wantf));
    // a loop over ranges plans once: the range is not part of the plan
    const auto before = ember::planner::plans_made();
    for (double hi : {1.0, 2.0, 3.0}) {
      ember::dndarray<std::int64_t, 1> c = ember::histogram_counts(a, 10, {-2.0, hi});
      REQUIRE(test::all_ranks(local_values(c) == serial_histogram(x, 10, -2.0, hi, edges)));
    }
    REQUIRE(ember::planner::plans_made() - before <= 1);
    // explicit edges, and two histograms of one array in one expression (not merged)
    const std::vector<double> e{-2.0, -1.0, 0.5, 2.0};
    auto two = ember::eval(ember::histogram_counts(a, e) - ember::histogram_counts(a, std::vector<double>{-2.0, 0.0, 1.0, 2.0}));
    std::vector<std::int64_t> n1(3, 0), n2(3, 0);
    for (double v : x) {
      if (v >= -2.0 && v <= 2.0) ++n1[std::size_t(v == 2.0 ? 2 : std::upper_bound(e.begin(), e.end(), v) - e.begin() - 1)];
      if (v >= -2.0 && v <= 2.0) ++n2[std::size_t(v >= 1.0 ? 2 : v >= 0.0 ? 1 : 0)];
    }
    REQUIRE(test::all_ranks(local_values(two) == std::vector<std::int64_t>{n1[0] - n2[0], n1[1] - n2[1], n1[2] - n2[2]}));
    // the eager histogram counts by the same step
    auto [hh, he] = ember::histogram(a * b + 1.0, 40, {.range = {{-3.0, 5.0}}});
    REQUIRE(test::all_ranks(local_values(hh) == want));
    REQUIRE_THROWS_AS(ember::histogram_counts(a, 0, {0.0, 1.0}), ember::value_error);
    REQUIRE_THROWS_AS(ember::histogram_counts(a, 4, {1.0, 0.0}), ember::value_error);
  }
}

TEST_CASE("histogram bins values at and beside the edges as NumPy does", "[histogram]") {
  std::mt19937_64 rng(11);
  for (const auto& [lo, hi, bins] : {std::tuple{1e12, 1e12 + 1, 100}, std::tuple{0.0, 1.0, 100}, std::tuple{-3.0, 7.0, 37}}) {
    std::vector<double> e;
    serial_histogram({}, bins, lo, hi, e);
    std::vector<double> x;
    for (double v : e) {
      x.push_back(v);
      x.push_back(std::nextafter(v, -INFINITY));
      x.push_back(std::nextafter(v, INFINITY));
    }
    for (int i = 0; i < 3000; ++i) x.push_back(lo + (hi - lo) * std::uniform_real_distribution<double>(-0.01, 1.01)(rng));
    for (auto sp : {split_axis{0}, split_axis{}}) {
      auto a = vec(x, sp);
      std::vector<double> we;
      const auto h = ember::histogram(a, bins, {.range = {{lo, hi}}});
      const auto wh = serial_histogram(x, bins, lo, hi, we);
      REQUIRE(test::all_ranks(local_values(h.hist) == wh && local_values(h.bin_edges) == we));
      std::int64_t inside = 0;
      for (double v : x) inside += v >= lo && v <= hi;
      std::int64_t total = 0;
      for (auto c : local_values(h.hist)) total += c;
      REQUIRE(total == inside);
      // histogram2d: the same values paired with a shuffled copy
      std::vector<double> y = x;
      std::shuffle(y.begin(), y.end(), rng);
      std::vector<double> xc, yc;  // histogram2d takes the data's own range
      const auto h2 = ember::histogram2d(vec(x, sp), vec(y, split_axis{}), bins);
      const double xl = *std::min_element(x.begin(), x.end()), xh = *std::max_element(x.begin(), x.end());
      serial_histogram({}, bins, xl, xh, xc);
      yc = xc;  // y is a permutation of x: the same range and edges
      auto bin = [](double v, const std::vector<double>& ed) {
        return v == ed.back() ? std::int64_t(ed.size()) - 2
                              : std::int64_t(std::upper_bound(ed.begin(), ed.end(), v) - ed.begin()) - 1;
      };
      std::vector<std::int64_t> w(std::size_t(bins * bins), 0);
      for (std::size_t i = 0; i < x.size(); ++i) ++w[std::size_t(bin(x[i], xc) * bins + bin(y[i], yc))];
      REQUIRE(test::all_ranks(local_values(h2.hist) == w && local_values(h2.xedges) == xc));
    }
  }
}

TEST_CASE("histogram2d, bincount and digitize", "[histogram]") {
  std::vector<double> x, y;
  std::vector<std::int64_t> lab;
  for (int i = 0; i < 301; ++i) {
    x.push_back(double((i * 37) % 101) / 10.0);
    y.push_back(double((i * 53) % 89) / 7.0);
    lab.push_back((i * 13) % 17);
  }
  for (auto sp : {split_axis{0}, split_axis{}}) {
    const auto h2 = ember::histogram2d(vec(x, sp), vec(y, split_axis{}), 6);
    std::vector<double> ex, ey;
    serial_histogram(x, 6, *std::min_element(x.begin(), x.end()), *std::max_element(x.begin(), x.end()), ex);
    serial_histogram(y, 6, *std::min_element(y.begin(), y.end()), *std::max_element(y.begin(), y.end()), ey);
    std::vector<std::int64_t> w(36, 0);
    auto bin = [](double v, const std::vector<double>& e) {
      return v == e.back() ? std::int64_t(e.size()) - 2 : std::int64_t(std::upper_bound(e.begin(), e.end(), v) - e.begin()) - 1;
    };
    for (std::size_t i = 0; i < x.size(); ++i) ++w[std::size_t(bin(x[i], ex) * 6 + bin(y[i], ey))];
    REQUIRE(test::all_ranks(local_values(h2.hist) == w && local_values(h2.xedges) == ex));
    auto l = ivec(lab, sp);
    std::vector<std::int64_t> wc(17, 0);
    for (auto v : lab) ++wc[std::size_t(v)];
    REQUIRE(test::all_ranks(local_values(ember::bincount(l)) == wc));
    wc.resize(25, 0);
    REQUIRE(test::all_ranks(local_values(ember::bincount(l, {.minlength = 25})) == wc));
    REQUIRE_THROWS_AS(ember::bincount(ivec({1, -2, 3}, sp)), ember::value_error);
    // digitize: np.digitize's values for increasing and decreasing bins
    auto d = vec({-1.0, 0.0, 0.5, 1.0, 2.5, qnan}, sp);
    REQUIRE(test::all_ranks(test::gathered(ember::eval(ember::digitize(d, {0.0, 1.0, 2.0}))) == std::vector<std::int64_t>{0, 1, 1, 2, 3, 3}));
    REQUIRE(test::all_ranks(test::gathered(ember::eval(ember::digitize(d, {0.0, 1.0, 2.0}, true))) == std::vector<std::int64_t>{0, 0, 1, 1, 3, 3}));
    REQUIRE(test::all_ranks(test::gathered(ember::eval(ember::digitize(d, {2.0, 1.0, 0.0}))) == std::vector<std::int64_t>{3, 2, 2, 1, 0, 0}));
    REQUIRE(test::all_ranks(test::gathered(ember::eval(ember::digitize(d, {2.0, 1.0, 0.0}, true))) == std::vector<std::int64_t>{3, 3, 2, 2, 0, 0}));
  }
}

// unique finds each block's distinct values by hashing while they are few
// (under 2^16 per rank) and by sorting beyond: both paths, with first indices
// and counts, against a serial reference on the gathered data; a 2-D array's
// first indices are flat global ones; -0.0 and 0.0 are one value, NaN one.
TEST_CASE("unique by hashing and by sorting agree with a serial reference", "[unique]") {
  auto reference = [](const std::vector<double>& x) {
    std::map<double, std::pair<std::int64_t, std::int64_t>> m;  // value -> (first, count); NaN apart
    std::int64_t nan_first = -1, nans = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) {
        if (nans++ == 0) nan_first = std::int64_t(i);
        continue;
      }
      auto it = m.find(x[i]);  // -0.0 == 0.0: one key
      if (it == m.end()) m[x[i]] = {std::int64_t(i), 1};
      else ++it->second.second;
    }
    std::vector<double> v;
    std::vector<std::int64_t> first, count;
    for (auto& [k, fc] : m) v.push_back(k), first.push_back(fc.first), count.push_back(fc.second);
    if (nans) v.push_back(qnan), first.push_back(nan_first), count.push_back(nans);
    return std::tuple{v, first, count};
  };
  auto same = [](const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
    return true;
  };
  std::mt19937_64 rng(17);
  // few distinct values (hashing at every rank count) and nearly all distinct
  // (over 2^16 a block at 1-3 ranks: sorted; at 4 ranks hashed)
  for (const std::int64_t distinct : {std::int64_t(40), std::int64_t(1) << 40}) {
    std::vector<double> x(200000);
    for (auto& v : x) v = double(std::int64_t(rng() % std::uint64_t(distinct)) - distinct / 2);
    for (std::size_t i = 0; i < x.size(); i += 997) x[i] = (i / 997) % 2 ? -0.0 : qnan;
    const auto [wv, wi, wc] = reference(x);
    for (auto sp : {split_axis{0}, split_axis{}}) {
      const auto r = ember::unique(vec(x, sp), {.return_index = true, .return_counts = true});
      REQUIRE(test::all_ranks(same(local_values(r.values), wv) && local_values(r.index) == wi &&
                              local_values(r.counts) == wc));
      REQUIRE(test::all_ranks(same(local_values(ember::unique(vec(x, sp))), wv)));
    }
    // 2-D, split along either axis: flat C-order first indices
    auto m = ember::array(std::span<const double>(x), std::array<std::int64_t, 2>{400, 500}, {.split = 1});
    for (int ax : {0, 1}) {
      auto mm = ember::resplit(m, ax);
      test::unbalance(mm);
      const auto r = ember::unique(mm, {.return_index = true, .return_counts = true});
      REQUIRE(test::all_ranks(same(local_values(r.values), wv) && local_values(r.index) == wi &&
                              local_values(r.counts) == wc));
    }
  }
}

TEST_CASE("unique with index, inverse and counts; isin, searchsorted and sets", "[unique]") {
  std::vector<std::int64_t> v;
  for (int i = 0; i < 2000; ++i) v.push_back((i * 7919) % 31 - 10);
  for (auto sp : {split_axis{0}, split_axis{}}) {
    auto a = ivec(v, sp);
    const auto r = ember::unique(a, {.return_index = true, .return_inverse = true, .return_counts = true});
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> want;  // value -> (first, count)
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto it = want.find(v[i]);
      if (it == want.end()) want[v[i]] = {std::int64_t(i), 1};
      else ++it->second.second;
    }
    std::vector<std::int64_t> wv, wi, wc;
    for (auto& [k, p] : want) {
      wv.push_back(k);
      wi.push_back(p.first);
      wc.push_back(p.second);
    }
    REQUIRE(test::all_ranks(local_values(r.values) == wv && local_values(r.index) == wi && local_values(r.counts) == wc));
    const auto inv = test::gathered(r.inverse);
    bool ok = inv.size() == v.size();
    for (std::size_t i = 0; ok && i < v.size(); ++i) ok = wv[std::size_t(inv[i])] == v[i];
    REQUIRE(test::all_ranks(ok));
    REQUIRE(test::all_ranks(local_values(ember::unique(ivec(std::vector<std::int64_t>(50, 4), sp))) == std::vector<std::int64_t>{4}));
    // NaN counts once, last (NumPy's equal_nan)
    const auto un = local_values(ember::unique(vec({2.0, qnan, 1.0, qnan, 2.0}, sp)));
    REQUIRE(test::all_ranks(un.size() == 3 && un[0] == 1.0 && un[1] == 2.0 && std::isnan(un[2])));
    // isin
    const std::vector<std::int64_t> t{3, -10, 100, 7};
    const auto in = test::gathered(ember::eval(ember::isin(a, ivec(t, split_axis{}))));
    ok = in.size() == v.size();
    for (std::size_t i = 0; ok && i < v.size(); ++i) ok = bool(in[i]) == (std::find(t.begin(), t.end(), v[i]) != t.end());
    REQUIRE(test::all_ranks(ok));
    // searchsorted in a split sorted array, both sides
    std::vector<std::int64_t> s = v;
    std::sort(s.begin(), s.end());
    auto ss = ivec(s, sp);
    const std::vector<std::int64_t> q{-11, -10, 0, 5, 20, 21, 3};
    for (const bool right : {false, true}) {
      const auto got = test::gathered(ember::eval(ember::searchsorted(ss, ivec(q, split_axis{0}), {.right = right})));
      std::vector<std::int64_t> want_i;
      for (auto x : q)
        want_i.push_back((right ? std::upper_bound(s.begin(), s.end(), x) : std::lower_bound(s.begin(), s.end(), x)) - s.begin());
      REQUIRE(test::all_ranks(got == want_i));
    }
    // sets
    auto b = ivec({5, 1, 1, 30, -10, 99}, sp);
    std::set<std::int64_t> sa(v.begin(), v.end()), sb{5, 1, 30, -10, 99};
    std::vector<std::int64_t> wi2, wu, wd;
    std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(wi2));
    std::set_union(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(wu));
    std::set_difference(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(wd));
    REQUIRE(test::all_ranks(local_values(ember::intersect1d(a, b)) == wi2 && local_values(ember::union1d(a, b)) == wu &&
                            local_values(ember::setdiff1d(a, b)) == wd));
  }
}

TEST_CASE("complex unique, isin, searchsorted and sets: NumPy's order, every NaN one value", "[unique][complex]") {
  using cd = std::complex<double>;
  // NumPy's complex order written out as a key: values without NaN
  // lexicographically, then R + nanj by R, then nan + Rj by R, then nan + nanj
  auto key = [](const cd& z) {
    const bool nr = std::isnan(z.real()), ni = std::isnan(z.imag());
    return std::tuple{nr, ni, nr ? 0.0 : z.real(), ni ? 0.0 : z.imag()};
  };
  auto is_nan = [](const cd& z) { return std::isnan(z.real()) || std::isnan(z.imag()); };
  auto same = [&](const std::vector<cd>& a, const std::vector<cd>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (key(a[i]) != key(b[i])) return false;
    return true;
  };
  // np.unique(x, return_index, return_counts): every NaN counts as the first
  // NaN in sorted order, its index that value's first
  auto reference = [&](const std::vector<cd>& x) {
    std::map<decltype(key(cd{})), std::pair<std::int64_t, std::int64_t>> m;  // key -> (first, count)
    std::int64_t nans = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      nans += is_nan(x[i]);
      auto it = m.find(key(x[i]));
      if (it == m.end()) m[key(x[i])] = {std::int64_t(i), 1};
      else ++it->second.second;
    }
    std::vector<cd> v;
    std::vector<std::int64_t> first, count;
    for (auto& [k, fc] : m) {
      const auto& [nr, ni, re, im] = k;
      const cd z{nr ? qnan : re, ni ? qnan : im};
      if (is_nan(z) && !v.empty() && is_nan(v.back())) continue;  // only the first NaN
      v.push_back(z), first.push_back(fc.first), count.push_back(is_nan(z) ? nans : fc.second);
    }
    return std::tuple{v, first, count};
  };
  auto cvec = [](const std::vector<cd>& v, split_axis s) {
    auto a = ember::array(std::span<const cd>(v), std::array<std::int64_t, 1>{std::int64_t(v.size())}, {.split = s});
    test::unbalance(a);
    return a;
  };
  std::mt19937_64 rng(23);
  // few distinct values (hashed) and nearly all distinct (sorted at 1-3 ranks)
  for (const std::uint64_t distinct : {std::uint64_t(5), std::uint64_t(1) << 30}) {
    std::vector<cd> x(100000);
    for (auto& z : x) {
      const double re = double(rng() % distinct) - 2, im = double(rng() % 3) - 1;
      const auto k = rng() % 64;  // NaN parts in every form, -0.0 parts
      z = {k == 0 ? qnan : k == 1 ? -0.0 : re, k == 2 ? qnan : k == 3 ? -0.0 : im};
      if (k == 4) z = {qnan, qnan};
    }
    x[7] = {5.0, qnan};  // a NaN that is not the first in sorted order comes first
    const auto [wv, wi, wc] = reference(x);
    for (auto sp : {split_axis{0}, split_axis{}}) {
      INFO("distinct " << distinct << " split " << (sp ? 0 : -1));
      auto a = cvec(x, sp);
      const auto r = ember::unique(a, {.return_index = true, .return_inverse = true, .return_counts = true});
      REQUIRE(test::all_ranks(same(local_values(r.values), wv) && local_values(r.index) == wi &&
                              local_values(r.counts) == wc));
      const auto inv = test::gathered(r.inverse);
      bool ok = inv.size() == x.size();
      for (std::size_t i = 0; ok && i < x.size(); ++i)
        ok = is_nan(x[i]) ? is_nan(wv[std::size_t(inv[i])]) : key(wv[std::size_t(inv[i])]) == key(x[i]);
      REQUIRE(test::all_ranks(ok));
      // isin compares with == (a NaN is in nothing), in the promoted type
      const std::vector<cd> t{{1, 0}, {qnan, 0}, {-2, -1}, {0, 1}};
      const auto in = test::gathered(ember::eval(ember::isin(a, cvec(t, sp), {.invert = true})));
      ok = in.size() == x.size();
      for (std::size_t i = 0; ok && i < x.size(); ++i) ok = bool(in[i]) == (std::find(t.begin(), t.end(), x[i]) == t.end());
      REQUIRE(test::all_ranks(ok));
      const std::vector<double> re_t{1.0, -2.0};  // a float64 table for complex elements: compared as complex
      const auto inr = test::gathered(ember::eval(ember::isin(a, vec(re_t, sp))));
      ok = inr.size() == x.size();
      for (std::size_t i = 0; ok && i < x.size(); ++i) ok = bool(inr[i]) == (x[i] == cd{1, 0} || x[i] == cd{-2, 0});
      REQUIRE(test::all_ranks(ok));
      // searchsorted in the sorted values, both sides
      std::vector<cd> s(x.begin(), x.begin() + 3000);
      std::stable_sort(s.begin(), s.end(), [&](const cd& p, const cd& q) { return key(p) < key(q); });
      const std::vector<cd> q{{-3, 0}, {0, 0}, {0, -0.0}, {1, qnan}, {qnan, -5}, {qnan, qnan}, {100, 0}, {2, 1}};
      for (const bool right : {false, true}) {
        const auto got = test::gathered(ember::eval(ember::searchsorted(cvec(s, sp), cvec(q, split_axis{0}), {.right = right})));
        std::vector<std::int64_t> want_i;
        for (const cd& z : q)
          want_i.push_back(std::count_if(s.begin(), s.end(), [&](const cd& e) { return right ? !(key(z) < key(e)) : key(e) < key(z); }));
        REQUIRE(test::all_ranks(got == want_i));
      }
    }
  }
  // sets: NaN is in no intersection (==), stays in a difference, once in a union
  const std::vector<cd> av{{1, 1}, {qnan, 2}, {3, 0}, {1, 1}, {2, qnan}}, bv{{3, 0}, {qnan, qnan}, {4, 0}};
  for (auto sp : {split_axis{0}, split_axis{}}) {
    const auto i = local_values(ember::intersect1d(cvec(av, sp), cvec(bv, sp)));
    const auto u = local_values(ember::union1d(cvec(av, sp), cvec(bv, sp)));
    const auto d = local_values(ember::setdiff1d(cvec(av, sp), cvec(bv, sp)));
    REQUIRE(test::all_ranks(same(i, {{3, 0}}) && same(u, {{1, 1}, {3, 0}, {4, 0}, {2, qnan}}) &&
                            same(d, {{1, 1}, {2, qnan}})));
    const auto fi = local_values(ember::intersect1d(vec({1.0, qnan, 2.0}, sp), vec({qnan, 1.0}, sp)));
    const auto fd = local_values(ember::setdiff1d(vec({1.0, qnan, 2.0}, sp), vec({qnan, 1.0}, sp)));
    const auto fu = local_values(ember::union1d(vec({1.0, qnan}, sp), vec({qnan, 0.0}, sp)));
    REQUIRE(test::all_ranks(fi == std::vector<double>{1.0} && fd.size() == 2 && fd[0] == 2.0 && std::isnan(fd[1]) &&
                            fu.size() == 3 && fu[0] == 0.0 && fu[1] == 1.0 && std::isnan(fu[2])));
  }
}

TEST_CASE("weighted histograms and bincounts, densities", "[histogram]") {
  std::vector<double> x, w;
  std::vector<std::int64_t> lab;
  for (int i = 0; i < 513; ++i) {
    x.push_back(double((i * 37) % 101) / 10.0 - 2.0);
    w.push_back(0.25 * double((i * 11) % 9) - 0.5);  // quarters: every sum below is exact
    lab.push_back((i * 13) % 17);
  }
  const double lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
  std::vector<double> edges;
  const auto counts = serial_histogram(x, 12, lo, hi, edges);
  // the weights' sums per bin: the same bins as the counts
  std::vector<double> ws(12, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::int64_t k = x[i] == edges.back() ? 11 : std::int64_t(std::upper_bound(edges.begin(), edges.end(), x[i]) - edges.begin()) - 1;
    ws[std::size_t(k)] += w[i];
  }
  // NumPy's density: n / diff(edges) / n.sum()
  auto density = [&](std::vector<double> n) {
    double t = 0;
    for (double v : n) t += v;
    for (std::size_t i = 0; i < n.size(); ++i) n[i] = n[i] / (edges[i + 1] - edges[i]) / t;
    return n;
  };
  const std::vector<double> cd(counts.begin(), counts.end());
  for (auto sp : {split_axis{0}, split_axis{}})
    for (auto wsp : {split_axis{0}, split_axis{}}) {
      INFO("split " << (sp ? 0 : -1) << " weights split " << (wsp ? 0 : -1));
      const auto xa = vec(x, sp);
      const auto wa = vec(w, wsp);  // another layout: moved to x's
      const auto hw = ember::histogram(xa, 12, {}, wa);
      REQUIRE(test::all_ranks(local_values(hw.hist) == ws && local_values(hw.bin_edges) == edges));
      const auto he = ember::histogram(xa, edges, {}, wa * 1.0);  // explicit edges, an expression of weights
      REQUIRE(test::all_ranks(local_values(he.hist) == ws));
      const auto hd = ember::histogram<double>(xa, 12, {.density = true});
      REQUIRE(test::all_ranks(local_values(hd.hist) == density(cd)));
      const auto hwd = ember::histogram(xa, 12, {.density = true}, wa);
      REQUIRE(test::all_ranks(local_values(hwd.hist) == density(ws)));
      REQUIRE_THROWS_AS(ember::histogram(xa, 12, {.density = true}), ember::type_error);  // int64 counts
      REQUIRE_THROWS_AS(ember::histogram(xa, 12, {}, vec({1.0, 2.0}, wsp)), ember::shape_error);
      // bincount(x, weights)
      std::vector<double> bw(20, 0.0);
      for (std::size_t i = 0; i < lab.size(); ++i) bw[std::size_t(lab[i])] += w[i];
      const auto b = ember::bincount(ivec(lab, sp), wa, {.minlength = 20});
      static_assert(std::is_same_v<typename decltype(b)::value_type, double>);
      REQUIRE(test::all_ranks(local_values(b) == bw));
      bw.resize(17);
      REQUIRE(test::all_ranks(local_values(ember::bincount(ivec(lab, sp), wa)) == bw));
    }
  REQUIRE(test::all_ranks(true));
}

// Weighted histograms, histogram2d and bincount are plan steps too: one fused
// pass reading every operand (the weights an expression computed as it is
// read, moved to the data's layout by a planned step when they lie elsewhere)
// and one allreduce of the bins; predicted bytes == measured, values against
// histogramdd's rule written out (searchsorted on the edges, the last edge in
// the last bin), weights in quarters so every sum is exact.
TEST_CASE("weighted histograms, histogram2d and bincount are plan steps", "[histogram][planner]") {
  const int P = ember::world().size();
  using K = ember::planner::step_kind;
  std::mt19937_64 rng(83);
  const std::int64_t rows = 37, cols = 5, n = rows * cols;
  std::vector<double> x(static_cast<std::size_t>(n)), y(x.size()), w(x.size());
  for (auto& v : x) v = double(rng() % 64) / 16.0 - 1.0;  // on the edges of 8 and of 4 bins over [-1, 3] often
  for (auto& v : y) v = double(rng() % 40) / 8.0;
  for (auto& v : w) v = double(rng() % 9) * 0.25 - 1.0;
  auto bin = [](double v, double lo, double hi, std::int64_t bins) -> std::int64_t {  // histogramdd's rule
    std::vector<double> e(std::size_t(bins + 1));
    for (std::int64_t i = 0; i <= bins; ++i) e[std::size_t(i)] = lo + double(i) * ((hi - lo) / double(bins));
    e.back() = hi;
    if (!(v >= lo && v <= hi)) return -1;
    if (v == hi) return bins - 1;
    return std::int64_t(std::upper_bound(e.begin(), e.end(), v) - e.begin()) - 1;
  };
  auto mat = [&](const std::vector<double>& v, split_axis s) {
    auto a = ember::array(std::span<const double>(v), std::array<std::int64_t, 2>{rows, cols}, {.split = s});
    test::unbalance(a);
    return a;
  };
  auto kinds = [](const ember::planner::plan& p, K k) {
    int c = 0;
    for (const auto& st : p.steps) c += st.kind == k;
    return c;
  };
  for (auto sp : {split_axis{0}, split_axis{1}, split_axis{}})
    for (auto wsp : {split_axis{0}, split_axis{}}) {
      INFO("split " << (sp ? *sp : -1) << ", weights and y split " << (wsp ? *wsp : -1));
      const auto xa = mat(x, sp), ya = mat(y, wsp), wa = mat(w, wsp);
      const bool moved = !(sp == wsp) && P > 1;  // the weights' layout differs from the data's
      // histogram with weights 2w - 0.5, computed as they are read
      std::vector<double> hw(8, 0.0);
      for (std::size_t i = 0; i < x.size(); ++i)
        if (const auto k = bin(x[i], -1.0, 3.0, 8); k >= 0) hw[std::size_t(k)] += 2.0 * w[i] - 0.5;
      auto h = ember::histogram_counts(xa, 8, {-1.0, 3.0}, wa * 2.0 - 0.5);
      const auto p = ember::explain(h);
      INFO(p.to_string());
      REQUIRE(kinds(p, K::fused_kernel) == 1);
      // the data and the weights in one layout: where they differ the cost model
      // picks which moves (or replicates the data and needs no allreduce)
      REQUIRE(kinds(p, K::allreduce) == ((sp && P > 1 && !moved) ? 1 : kinds(p, K::allreduce)));
      REQUIRE(kinds(p, K::allreduce) <= 1);
      REQUIRE(p.to_string().find("histogram(weighted(a0, sub(mul(a1, 2), 0.5)), bins=8") != std::string::npos);
      if (!moved) REQUIRE(!ember::planner::is_move(p.steps.front().kind));
      ember::dndarray<double, 1> hv = h;
      REQUIRE(test::all_ranks(test::trace_exact()));
      REQUIRE(!hv.layout().split());
      REQUIRE(test::all_ranks(local_values(hv) == hw));
      // histogram2d_counts: int64 counts of (x, y) over 4 x 5 bins
      std::vector<std::int64_t> c2(20, 0);
      std::vector<double> w2(20, 0.0);
      for (std::size_t i = 0; i < x.size(); ++i) {
        const auto kx = bin(x[i], -1.0, 3.0, 4), ky = bin(y[i], 0.0, 4.0, 5);  // y up to 4.875: some outside
        if (kx >= 0 && ky >= 0) ++c2[std::size_t(kx * 5 + ky)], w2[std::size_t(kx * 5 + ky)] += w[i];
      }
      auto h2 = ember::histogram2d_counts(xa, ya, {4, 5}, {{-1.0, 3.0}, {0.0, 4.0}});
      const auto p2 = ember::explain(h2);
      INFO(p2.to_string());
      REQUIRE(p2.to_string().find("histogram2d(pair(a0, a1), xbins=4, xrange=(-1, 3), ybins=5") != std::string::npos);
      REQUIRE(kinds(p2, K::fused_kernel) == 1);
      ember::dndarray<std::int64_t, 2> c2a = h2;
      REQUIRE(test::all_ranks(test::trace_exact()));
      REQUIRE(c2a.layout().shape() == ember::index_vec{4, 5});
      REQUIRE(test::all_ranks(local_values(c2a) == c2));
      // with weights, and the eager spelling with a density
      ember::dndarray<double, 2> w2a = ember::histogram2d_counts(xa, ya, {4, 5}, {{-1.0, 3.0}, {0.0, 4.0}}, wa);
      REQUIRE(test::all_ranks(test::trace_exact()));
      REQUIRE(test::all_ranks(local_values(w2a) == w2));
      const auto r2 = ember::histogram2d<double>(xa, ya, {4, 5}, {.range = {{{-1.0, 3.0}, {0.0, 4.0}}}, .density = true});
      double total = 0;
      for (auto v : c2) total += double(v);
      std::vector<double> d2(20);
      for (std::size_t i = 0; i < 20; ++i) d2[i] = double(c2[i]) / (total * 1.0 * 0.8);
      const auto got = local_values(r2.hist);
      bool close = got.size() == 20;
      for (std::size_t i = 0; close && i < 20; ++i) close = std::abs(got[i] - d2[i]) <= 1e-15 * std::abs(d2[i]);
      REQUIRE(test::all_ranks(close));
      REQUIRE(test::all_ranks(local_values(r2.xedges) == std::vector<double>{-1.0, 0.0, 1.0, 2.0, 3.0}));
      // bincount through the plan (the weights computed as they are read)
      std::vector<std::int64_t> lab(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) lab[i] = std::int64_t(x[i] * 4.0 + 4.0);  // 0 .. 15
      std::vector<double> bw(16, 0.0);
      for (std::size_t i = 0; i < x.size(); ++i) bw[std::size_t(lab[i])] += w[i] - 1.0;
      const auto la = ivec(lab, sp ? split_axis{0} : split_axis{});
      const auto b = ember::bincount(la, vec(w, wsp) - 1.0);
      int kernels = 0, allreduces = 0;  // the counting pass and its allreduce were the last evaluation
      for (const auto& t : ember::last_trace()) kernels += t.kind == K::fused_kernel, allreduces += t.kind == K::allreduce;
      REQUIRE(kernels == 1);
      REQUIRE(allreduces == ((sp && P > 1 && !moved) ? 1 : allreduces));
      REQUIRE(allreduces <= 1);
      REQUIRE(test::all_ranks(test::trace_exact()));
      REQUIRE(test::all_ranks(local_values(b) == bw));
      // NumPy's shape rule (no broadcasting of the weights), on every rank
      REQUIRE_THROWS_AS(ember::histogram_counts(xa, 8, {-1.0, 3.0}, ember::sum(wa, 0)), ember::shape_error);
      REQUIRE_THROWS_AS(ember::histogram2d_counts(xa, ember::sum(ya, 1), {4, 5}, {{-1.0, 3.0}, {0.0, 4.0}}), ember::shape_error);
    }
  REQUIRE(test::all_ranks(true));
}

// digitize, isin and searchsorted are elementwise lookups in a table every rank
// holds (sorting/lookup.hpp): nodes of the fused kernel, one pass over the
// blocks, no communication, against the rules written out here (NumPy's
// digitize in both directions and sides, NaN last; isin with invert; searchsorted
// into a replicated or a split sorted array, int table and float queries).
TEST_CASE("digitize, isin and searchsorted fuse into the kernel", "[histogram][planner]") {
  using K = ember::planner::step_kind;
  std::vector<double> x;
  for (int i = 0; i < 157; ++i) x.push_back(i % 19 == 0 ? qnan : double((i * 37) % 101) / 25.0 - 2.0);
  const std::vector<double> inc{-1.0, -0.5, 0.0, 0.0, 1.25, 2.0}, dec(inc.rbegin(), inc.rend());
  // np.digitize written out: bins increasing, i such that bins[i-1] <= v < bins[i]
  // (right: bins[i-1] < v <= bins[i]); decreasing, bins[i-1] > v >= bins[i]
  // (right: bins[i-1] >= v > bins[i]); NaN after every bin
  auto digitized = [](double v, const std::vector<double>& b, bool right) {
    const bool up = b.front() <= b.back();
    std::int64_t i = 0;
    if (v != v) return up ? std::int64_t(b.size()) : std::int64_t(0);
    for (std::size_t k = 0; k < b.size(); ++k) {
      const bool past = up ? (right ? v > b[k] : v >= b[k]) : (right ? v <= b[k] : v < b[k]);
      i += past;
    }
    return i;
  };
  for (auto sp : {split_axis{0}, split_axis{}}) {
    auto a = vec(x, sp);
    // a lookup carries its table: its kernels stay on the host (no GPU kernel reads host memory)
    static_assert(ember::expr::has_op_state_v<decltype(ember::digitize(a + 1.0, inc) * 2)>);
    static_assert(!ember::expr::has_op_state_v<decltype((a + 1.0) * 2)>);
    for (const auto& bins : {inc, dec})
      for (const bool right : {false, true}) {
        // a fused expression around the lookup: one kernel step, nothing sent
        auto e = ember::digitize(a * 2.0 - 1.0, bins, right) * 10 + 1;
        const auto p = ember::explain(e);
        REQUIRE(p.steps.size() == 1);
        REQUIRE(p.steps[0].kind == K::fused_kernel);
        REQUIRE(p.steps[0].text.find("digitize(sub(mul(a0, 2), 1), bins=6") != std::string::npos);
        const auto got = test::gathered(ember::eval(e));
        bool ok = got.size() == x.size();
        for (std::size_t i = 0; ok && i < x.size(); ++i) ok = got[i] == digitized(x[i] * 2.0 - 1.0, bins, right) * 10 + 1;
        REQUIRE(test::all_ranks(ok));
      }
    // two lookups of one operand with other tables are two nodes (not merged as one value)
    const auto two = test::gathered(ember::eval(ember::digitize(a, inc) - ember::digitize(a, {0.0})));
    bool ok = two.size() == x.size();
    for (std::size_t i = 0; ok && i < x.size(); ++i) ok = two[i] == digitized(x[i], inc, false) - digitized(x[i], {0.0}, false);
    REQUIRE(test::all_ranks(ok));
    // isin with int test elements split or not, float elements; invert; fused with a comparison
    std::vector<std::int64_t> t{3, -1, 0, 2, 2, 7};
    for (auto tsp : {split_axis{0}, split_axis{}}) {
      auto m = ember::isin(ember::floor(a * 2.0), ivec(t, tsp)) & (a > 0.0);
      REQUIRE(ember::explain(m).steps.size() == 1);
      const auto gm = test::gathered(ember::eval(m));
      const auto gi = test::gathered(ember::eval(ember::isin(a, ivec(t, tsp), {.invert = true})));
      ok = gm.size() == x.size() && gi.size() == x.size();
      for (std::size_t i = 0; ok && i < x.size(); ++i) {
        const bool in = std::find(t.begin(), t.end(), std::floor(x[i] * 2.0)) != t.end();
        const bool raw = std::find(t.begin(), t.end(), x[i]) != t.end();
        ok = bool(gm[i]) == (in && x[i] > 0.0) && bool(gi[i]) == !raw;
      }
      REQUIRE(test::all_ranks(ok));
    }
    // searchsorted: an int table (replicated, or split and gathered) and float queries
    std::vector<std::int64_t> s{-3, -1, -1, 0, 2, 2, 2, 5};
    for (auto tsp : {split_axis{0}, split_axis{}})
      for (const bool right : {false, true}) {
        auto k = ember::searchsorted(ivec(s, tsp), a + 0.5, {.right = right});
        REQUIRE(ember::explain(k).steps.size() == 1);
        const auto g = test::gathered(ember::eval(k));
        ok = g.size() == x.size();
        for (std::size_t i = 0; ok && i < x.size(); ++i) {
          const double q = x[i] + 0.5;
          std::int64_t w = 0;
          for (auto e : s) w += q != q ? 1 : right ? double(e) <= q : double(e) < q;
          ok = g[i] == w;
        }
        REQUIRE(test::all_ranks(ok));
      }
  }
}
