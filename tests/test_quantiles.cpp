// Order statistics (issue 17): median, quantile, percentile and the nan- forms
// against NumPy's formulas written out here on the sorted gathered data: large
// enough that the distributed selection runs several rounds (random, all equal,
// three distinct values, already sorted, uneven blocks), every method, NaN,
// empty data, along every axis of every split; bad quantiles on every rank.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "common.hpp"

namespace {

using ember::split_axis;
using M = ember::quantile_method;
constexpr double qnan = std::numeric_limits<double>::quiet_NaN();

// NumPy 1.24's _quantile on sorted values, written out.
double numpy_quantile(const std::vector<double>& s, double q, M m) {
  const auto n = std::int64_t(s.size());
  if (n == 0) return qnan;
  const double nm1 = double(n - 1);
  auto at = [&](double v) { return s[std::size_t(std::clamp<std::int64_t>(std::int64_t(v), 0, n - 1))]; };
  if (m == M::lower) return at(std::floor(nm1 * q));
  if (m == M::higher) return at(std::ceil(nm1 * q));
  if (m == M::nearest) return at(std::nearbyint(nm1 * q));
  const double v = m == M::linear ? double(n) * q + (1.0 - q) - 1.0 : 0.5 * (std::floor(nm1 * q) + std::ceil(nm1 * q));
  if (v >= nm1) return s.back();
  if (v < 0) return s.front();
  const double lo = std::floor(v), t = v - lo, a = s[std::size_t(lo)], b = s[std::size_t(lo) + 1];
  const double d = b - a;
  return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}
double numpy_median(const std::vector<double>& s) {
  const auto n = s.size();
  if (n == 0) return qnan;
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

std::vector<double> values(const std::string& kind, std::int64_t n, std::uint64_t seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::mt19937_64 rng(seed);
  for (std::int64_t i = 0; i < n; ++i) {
    auto& x = v[static_cast<std::size_t>(i)];
    if (kind == "random") x = std::normal_distribution<double>(0, 1)(rng);
    else if (kind == "equal") x = 2.5;
    else if (kind == "few") x = double(rng() % 3);
    else x = double(i) * 0.5;  // sorted
  }
  return v;
}

}  // namespace

TEST_CASE("median, quantile, percentile equal NumPy's formulas on the sorted data", "[quantile]") {
  const int P = ember::world().size();
  for (const std::string kind : {"random", "equal", "few", "sorted"})
    for (const std::int64_t n : {std::int64_t(1), std::int64_t(10), std::int64_t(2 * 1024 * 4 + 17), std::int64_t(60000)})
      for (auto sp : {split_axis{0}, split_axis{}})
        for (const bool uneven : {false, true}) {
          INFO(kind << " n " << n << " split " << (sp ? 0 : -1) << " uneven " << uneven << " ranks " << P);
          const auto g = values(kind, n, 5 + std::uint64_t(n));
          auto x = ember::array(std::span<const double>(g), std::array<std::int64_t, 1>{n}, {.split = sp});
          if (uneven) test::unbalance(x);
          auto s = g;
          std::sort(s.begin(), s.end());
          bool ok = same(ember::median(x), numpy_median(s));
          const auto ps = ember::percentile(x, std::vector<double>{5.0, 50.0, 95.0});
          ok = ok && ps.size() == 3 && same(ps[0], numpy_quantile(s, 0.05, M::linear)) &&
               same(ps[1], numpy_quantile(s, 0.5, M::linear)) && same(ps[2], numpy_quantile(s, 0.95, M::linear));
          for (M m : {M::linear, M::lower, M::higher, M::nearest, M::midpoint})
            for (double q : {0.0, 0.1, 0.25, 0.5, 0.7, 1.0}) ok = ok && same(ember::quantile(x, q, {.method = m}), numpy_quantile(s, q, m));
          REQUIRE(test::all_ranks(ok));
        }
}

TEST_CASE("integers, NaN and empty data follow NumPy", "[quantile]") {
  for (auto sp : {split_axis{0}, split_axis{}}) {
    std::vector<std::int64_t> iv;
    for (int i = 0; i < 5001; ++i) iv.push_back((i * 7919) % 1009 - 500);
    auto xi = ember::array(std::span<const std::int64_t>(iv), std::array<std::int64_t, 1>{5001}, {.split = sp});
    std::vector<double> s(iv.begin(), iv.end());
    std::sort(s.begin(), s.end());
    const double m = ember::median(xi);  // float64 from int64
    REQUIRE(test::all_ranks(same(m, numpy_median(s)) && same(ember::quantile(xi, 0.33), numpy_quantile(s, 0.33, M::linear))));
    std::vector<double> v{3.0, qnan, 1.0, 2.0, 7.0, qnan, -1.0};
    auto x = ember::array(std::span<const double>(v), std::array<std::int64_t, 1>{7}, {.split = sp});
    const std::vector<double> clean{-1.0, 1.0, 2.0, 3.0, 7.0};
    REQUIRE(test::all_ranks(std::isnan(ember::median(x)) && std::isnan(ember::percentile(x, 50.0))));
    REQUIRE(test::all_ranks(same(ember::nanmedian(x), numpy_median(clean)) &&
                            same(ember::nanpercentile(x, 30.0), numpy_quantile(clean, 0.3, M::linear)) &&
                            same(ember::nanquantile(x, 0.9), numpy_quantile(clean, 0.9, M::linear))));
    std::vector<double> allnan{qnan, qnan, qnan};
    auto z = ember::array(std::span<const double>(allnan), std::array<std::int64_t, 1>{3}, {.split = sp});
    REQUIRE(test::all_ranks(std::isnan(ember::nanmedian(z))));
    auto e = ember::zeros<double>({0}, {.split = sp});
    REQUIRE(test::all_ranks(std::isnan(ember::median(e))));
  }
}

TEST_CASE("order statistics along an axis, every split", "[quantile]") {
  const std::int64_t r = 9, c = 6;
  const auto g = values("few", r * c, 3);
  for (auto sp : {split_axis{0}, split_axis{1}, split_axis{}})
    for (int axis : {0, 1}) {
      INFO("split " << (sp ? *sp : -1) << " axis " << axis);
      auto x = ember::array(std::span<const double>(g), std::array<std::int64_t, 2>{r, c}, {.split = sp});
      test::unbalance(x);
      auto med = ember::eval(ember::median(x, axis));
      REQUIRE(test::all_ranks(test::trace_exact()));
      auto q = ember::eval(ember::quantile(x, 0.3, axis, {.method = M::midpoint}));
      static_assert(decltype(med)::ndim_v == 1);
      const auto mg = test::gathered(med), qg = test::gathered(q);
      // a plan step: local_select, after a planned resplit only where the axis is split
      const auto p = ember::explain(ember::median(x * 2.0, axis) / 2.0);
      INFO(p.to_string());
      int selects = 0, moves = 0;
      for (const auto& st : p.steps) {
        selects += st.kind == ember::planner::step_kind::local_select;
        moves += ember::planner::is_move(st.kind) && st.traffic.max_rank.bytes > 0;  // (a partition sends nothing)
        if (st.kind == ember::planner::step_kind::local_select) {
          REQUIRE(st.text.find("median(mul(a0, 2), axis=" + std::to_string(axis)) != std::string::npos);
          REQUIRE((!st.from->split() || *st.from->split() != axis || ember::world().size() == 1));
        }
      }
      REQUIRE(selects == 1);
      REQUIRE(moves == ((sp && *sp == axis && ember::world().size() > 1) ? 1 : 0));
      const auto half = test::gathered(ember::eval(ember::median(x * 2.0, axis) / 2.0));
      REQUIRE(test::all_ranks(half == mg));
      // the nan- forms along an axis skip NaN
      const auto nq = test::gathered(ember::eval(ember::nanpercentile(x, 30.0, axis, {.method = M::midpoint})));
      REQUIRE(test::all_ranks(nq == qg));  // (no NaN here: the same as percentile)
      const std::int64_t lines = axis == 0 ? c : r, len = axis == 0 ? r : c;
      bool ok = std::int64_t(mg.size()) == lines;
      for (std::int64_t l = 0; ok && l < lines; ++l) {
        std::vector<double> line;
        for (std::int64_t k = 0; k < len; ++k) line.push_back(g[std::size_t(axis == 0 ? k * c + l : l * c + k)]);
        std::sort(line.begin(), line.end());
        ok = same(mg[std::size_t(l)], numpy_median(line)) && same(qg[std::size_t(l)], numpy_quantile(line, 0.3, M::midpoint));
      }
      REQUIRE(test::all_ranks(ok));
    }
}

TEST_CASE("over every axis: a distributed_select step within its bound, the radix rounds alone exact", "[quantile][plan]") {
  const int P = ember::world().size();
  const std::int64_t n = 50000;
  std::vector<double> g = values("random", n, 11);
  // edges of the key order: signed zeros, infinities, denormals, equal runs
  const double inf = std::numeric_limits<double>::infinity();
  for (std::int64_t i = 0; i < n; i += 97) g[std::size_t(i)] = (i / 97) % 2 ? -0.0 : 0.0;
  for (std::int64_t i = 5; i < n; i += 1013) g[std::size_t(i)] = (i / 1013) % 2 ? inf : -inf;
  for (std::int64_t i = 7; i < n; i += 3001) g[std::size_t(i)] = 4.9e-324 * double(i % 5);
  for (std::int64_t i = 20000; i < 26000; ++i) g[std::size_t(i)] = 0.125;
  auto s = g;
  std::sort(s.begin(), s.end());
  std::vector<std::int32_t> gi;
  for (std::int64_t i = 0; i < n; ++i) gi.push_back(std::int32_t((i * 2654435761u) % 100003) - 50000);
  std::vector<double> si(gi.begin(), gi.end());
  std::sort(si.begin(), si.end());
  for (const char* rounds : {"", "1", "0"}) {  // the default; one sampling round; the radix rounds alone
    setenv("EMBER_SELECTION_SAMPLING_ROUNDS", rounds, 1);
    for (auto sp : {split_axis{0}, split_axis{1}, split_axis{}}) {
      INFO("sampling rounds '" << rounds << "' split " << (sp ? *sp : -1) << " ranks " << P);
      auto x = ember::array(std::span<const double>(g), std::array<std::int64_t, 2>{n / 50, 50}, {.split = sp});
      test::unbalance(x);
      const double m = ember::median(x);
      // the plan: one distributed_select (its traffic a bound) where the data is split
      const auto lazy = ember::median(x, ember::all_axes);
      const auto p = ember::explain(lazy);
      INFO(p.to_string());
      int selects = 0;
      for (const auto& st : p.steps)
        if (st.kind == ember::planner::step_kind::distributed_select) {
          ++selects;
          // split data is read where it lies; replicated data is selected where
          // it lies or partitioned first, as the cost model prices it
          REQUIRE(st.bound == (P > 1 && st.from->split().has_value()));
          REQUIRE((!sp || st.from->split() == sp));
          REQUIRE(st.text == "median(a0)");
        }
      REQUIRE(selects == 1);
      bool ok = same(m, numpy_median(s));
      // x - np.median(x): the 0-d node read by the next kernel
      const auto centred = test::gathered(ember::eval(x - lazy));
      for (std::int64_t i = 0; ok && i < n; ++i) ok = same(centred[std::size_t(i)], g[std::size_t(i)] - m);
      for (const auto& t : ember::last_trace())  // measured <= bound, bytes and messages
        ok = ok && t.measured.bytes <= t.predicted.bytes && t.measured.messages <= t.predicted.messages;
      const auto ps = ember::percentile(x, std::vector<double>{0.0, 5.0, 50.0, 95.0, 100.0}, {.method = M::midpoint});
      ok = ok && ps.size() == 5;
      for (int j = 0; ok && j < 5; ++j) ok = same(ps[std::size_t(j)], numpy_quantile(s, std::vector<double>{0, .05, .5, .95, 1}[std::size_t(j)], M::midpoint));
      for (M meth : {M::linear, M::lower, M::nearest}) ok = ok && same(ember::quantile(x, 0.37, {.method = meth}), numpy_quantile(s, 0.37, meth));
      // integers (a 4-byte key), through an expression operand fused before the step
      auto xi = ember::array(std::span<const std::int32_t>(gi), std::array<std::int64_t, 1>{n}, {.split = sp ? split_axis{0} : sp});
      ok = ok && same(ember::quantile(xi * 1, 0.8), numpy_quantile(si, 0.8, M::linear)) && same(ember::median(xi), numpy_median(si));
      const auto pv = ember::eval(ember::percentile(x * 2.0, std::vector<double>{25.0, 75.0}, ember::all_axes));
      ok = ok && pv.lnumel() == 2 && same(pv.ldata()[0], 2 * numpy_quantile(s, 0.25, M::linear)) &&
           same(pv.ldata()[1], 2 * numpy_quantile(s, 0.75, M::linear));
      REQUIRE(test::all_ranks(ok));
    }
  }
  unsetenv("EMBER_SELECTION_SAMPLING_ROUNDS");
  // the EXPLAIN text of a vector of quantiles, and a plan for many ranks
  auto x = ember::zeros<double>({1000}, {.split = 0});
  const auto p = ember::explain(ember::nanquantile(x - 1.0, {0.25, 0.5}, ember::all_axes, {.method = M::lower}));
  bool found = false;
  for (const auto& st : p.steps) found = found || st.text == "nanquantile(sub(a0, 1), q=[0.25, 0.5], method=lower)";
  INFO(p.to_string());
  REQUIRE(found);
  const auto big = ember::plan_for(ember::median(x, ember::all_axes), 65536);
  REQUIRE(big.steps.back().kind == ember::planner::step_kind::distributed_select);
  REQUIRE(big.steps.back().bound);
}

TEST_CASE("a quantile outside [0, 1] raises on every rank", "[quantile][errors]") {
  auto x = ember::zeros<double>({10}, {.split = 0});
  REQUIRE_THROWS_AS(ember::quantile(x, 1.5), ember::value_error);
  REQUIRE_THROWS_AS(ember::percentile(x, -1.0), ember::value_error);
  REQUIRE_THROWS_AS(ember::median(ember::zeros<double>({3, 4}, {.split = 0}), 2), ember::axis_error);
  REQUIRE(test::all_ranks(true));
}
