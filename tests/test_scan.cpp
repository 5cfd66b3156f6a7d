// Scans (issue 17): cumsum, cumprod, cummax, cummin, cumulative_sum,
// nancumsum, nancumprod against a
// serial scan of the gathered data, written out here: every axis of every
// split, even and uneven blocks, ranks without rows, 1-4 ranks; NumPy's dtypes
// (int32 and bool accumulate in int64, uint8 in uint64), integers exactly,
// NaN and infinities; the plan's scan step, its predicted bytes (one slice per
// rank but the last, along the split axis; none along a local axis) equal to
// the counters; fusion before and after; axis=None; errors on every rank.
#include <cmath>
#include <complex>
#include <limits>
#include <random>

#include "common.hpp"

namespace {

using ember::split_axis;
constexpr double qnan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

template <class T, std::size_t N>
ember::dndarray<T, int(N)> random_array(const std::array<std::int64_t, N>& shape, split_axis s, std::uint64_t seed) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  std::vector<test::host_t<T>> g(static_cast<std::size_t>(n));
  std::mt19937_64 rng(seed);
  for (auto& x : g) {
    const std::int64_t v = std::int64_t(rng() % 9) - 4;
    if constexpr (std::is_same_v<T, bool>) x = (v > 0);
    else if constexpr (ember::is_complex_v<T>) x = T(double(v) / 2, double(std::int64_t(rng() % 5) - 2) / 4);
    else if constexpr (std::is_floating_point_v<T>) x = T(v) * T(0.375) + T(1);
    else if constexpr (std::is_unsigned_v<T>) x = T(rng() % 7);
    else x = T(v);
  }
  return ember::array(std::span<const T>(reinterpret_cast<const T*>(g.data()), g.size()), shape, {.split = s});
}

// The serial scan of row-major data of shape `shape` along `axis`, in order.
template <class R, class T, class F>
std::vector<R> serial_scan(const std::vector<T>& x, const std::vector<std::int64_t>& shape, int axis, F f) {
  std::int64_t outer = 1, inner = 1;
  const std::int64_t n = shape[std::size_t(axis)];
  for (int d = 0; d < axis; ++d) outer *= shape[std::size_t(d)];
  for (int d = axis + 1; d < int(shape.size()); ++d) inner *= shape[std::size_t(d)];
  std::vector<R> out(x.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j = 0; j < inner; ++j) {
      R acc{};
      for (std::int64_t i = 0; i < n; ++i) {
        const std::size_t at = std::size_t((o * n + i) * inner + j);
        acc = i == 0 ? R(x[at]) : f(acc, R(x[at]));
        out[at] = acc;
      }
    }
  return out;
}

template <class R>
bool near(const std::vector<R>& got, const std::vector<R>& want, double tol) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if constexpr (std::is_floating_point_v<R> || ember::is_complex_v<R>) {
      const bool gn = std::isnan(std::abs(got[i])), wn = std::isnan(std::abs(want[i]));
      if (gn || wn) {
        if (gn != wn) return false;
        continue;
      }
      if (std::isinf(std::abs(want[i]))) {
        if (!(got[i] == want[i])) return false;
        continue;
      }
      if (std::abs(got[i] - want[i]) > tol * (1 + std::abs(want[i]))) return false;
    } else if (got[i] != want[i]) {
      return false;
    }
  }
  return true;
}

bool trace_matches() { return test::trace_exact() && !ember::last_trace().empty(); }

// Every scan, axis and split of one array against the serial scans.
template <class T, std::size_t N>
void every_scan(const std::array<std::int64_t, N>& shape, std::uint64_t seed) {
  using S = ember::detail::accumulate_t<T>;
  std::vector<split_axis> splits{split_axis{}};
  for (int d = 0; d < int(N); ++d) splits.push_back(split_axis{d});
  const std::vector<std::int64_t> sh(shape.begin(), shape.end());
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  for (auto sp : splits)
    for (const bool uneven : {false, true})
      for (int axis = -int(N); axis < int(N); ++axis) {
        INFO("shape " << ember::detail::shape_str(shape) << " split " << (sp ? *sp : -1) << " uneven " << uneven
                      << " axis " << axis << " dtype " << ember::dtype_name<T>());
        auto a = random_array<T>(shape, sp, seed);
        if (uneven) test::unbalance(a);
        const auto g = test::gathered(a);
        const int ax = axis < 0 ? axis + int(N) : axis;
        auto cs = ember::eval(ember::cumsum(a, axis));
        static_assert(std::is_same_v<typename decltype(cs)::value_type, S>);
        REQUIRE(test::all_ranks(trace_matches()));
        REQUIRE(test::all_ranks(near(test::gathered(cs), serial_scan<S>(g, sh, ax, [](S x, S y) { return S(x + y); }), tol)));
        if constexpr (!std::is_same_v<T, bool>) {
          auto cp = ember::eval(ember::cumprod(a, axis));
          REQUIRE(test::all_ranks(trace_matches()));
          REQUIRE(test::all_ranks(near(test::gathered(cp), serial_scan<S>(g, sh, ax, [](S x, S y) { return S(x * y); }), tol)));
        }
        if constexpr (!ember::is_complex_v<T>) {
          using H = test::host_t<T>;
          auto mx = ember::eval(ember::cummax(a, axis));
          auto mn = ember::eval(ember::cummin(a, axis));
          static_assert(std::is_same_v<typename decltype(mx)::value_type, T>);
          auto fmax = [](H x, H y) { return (x != x || x >= y) ? x : y; };
          auto fmin = [](H x, H y) { return (x != x || x <= y) ? x : y; };
          REQUIRE(test::all_ranks(near(test::gathered(mx), serial_scan<H>(g, sh, ax, fmax), 0)));
          REQUIRE(test::all_ranks(near(test::gathered(mn), serial_scan<H>(g, sh, ax, fmin), 0)));
        }
        // the plan: one scan step, bytes only along the split axis
        const auto p = ember::explain(ember::cumsum(a, axis));
        int scans = 0;
        for (const auto& s : p.steps) scans += s.kind == ember::planner::step_kind::scan;
        REQUIRE(scans == 1);
        if (!(sp && *sp == ax)) REQUIRE(p.total().bytes == 0);
      }
}

}  // namespace

TEST_CASE("cumsum, cumprod, cummax, cummin equal the serial scan on every axis and split", "[scan]") {
  using A1 = std::array<std::int64_t, 1>;
  using A2 = std::array<std::int64_t, 2>;
  using A3 = std::array<std::int64_t, 3>;
  every_scan<double>(A1{29}, 1);
  every_scan<double>(A2{7, 5}, 2);
  every_scan<std::int64_t>(A2{9, 4}, 3);
  every_scan<std::int32_t>(A3{3, 5, 4}, 4);  // -> int64
  every_scan<float>(A2{6, 3}, 5);
  every_scan<std::uint8_t>(A2{5, 6}, 6);  // -> uint64
  every_scan<bool>(A2{6, 5}, 7);  // cumsum -> int64 (counts)
  every_scan<std::complex<double>>(A2{5, 4}, 8);
  every_scan<double>(A2{3, 5}, 9);  // at 4 ranks one rank has no rows
  every_scan<double>(A2{0, 4}, 10);  // empty
}

TEST_CASE("scans follow NumPy on NaN, infinities and integer overflow", "[scan]") {
  for (auto sp : {split_axis{0}, split_axis{}}) {
    const std::vector<double> v{1.0, qnan, 2.0, -inf, 5.0, inf, 0.5, -1.0, 3.0};
    auto x = ember::array(std::span<const double>(v), std::array<std::int64_t, 1>{9}, {.split = sp});
    auto mx = test::gathered(ember::eval(ember::cummax(x, 0)));
    auto mn = test::gathered(ember::eval(ember::cummin(x, 0)));
    auto cs = test::gathered(ember::eval(ember::cumsum(x, 0)));
    bool ok = mx[0] == 1.0 && mn[0] == 1.0 && cs[0] == 1.0;
    for (int i = 1; i < 9; ++i) ok = ok && std::isnan(mx[std::size_t(i)]) && std::isnan(mn[std::size_t(i)]) && std::isnan(cs[std::size_t(i)]);
    REQUIRE(test::all_ranks(ok));  // NaN propagates, as np.maximum.accumulate
    const std::vector<double> w{1.0, -inf, 2.0, inf, -3.0};
    auto y = ember::array(std::span<const double>(w), std::array<std::int64_t, 1>{5}, {.split = sp});
    REQUIRE(test::all_ranks(test::gathered(ember::eval(ember::cummax(y, 0))) == std::vector<double>{1, 1, 2, inf, inf}));
    REQUIRE(test::all_ranks(test::gathered(ember::eval(ember::cummin(y, 0))) == std::vector<double>{1, -inf, -inf, -inf, -inf}));
    auto cy = test::gathered(ember::eval(ember::cumsum(y, 0)));
    REQUIRE(test::all_ranks(cy[0] == 1 && cy[1] == -inf && cy[2] == -inf && std::isnan(cy[3]) && std::isnan(cy[4])));
    // int64 overflow wraps as in NumPy
    constexpr std::int64_t hi = std::numeric_limits<std::int64_t>::max();
    const std::vector<std::int64_t> iv{hi, 1, 1, -3};
    auto z = ember::array(std::span<const std::int64_t>(iv), std::array<std::int64_t, 1>{4}, {.split = sp});
    const std::int64_t lo = std::numeric_limits<std::int64_t>::min();
    REQUIRE(test::all_ranks(test::gathered(ember::eval(ember::cumsum(z, 0))) == std::vector<std::int64_t>{hi, lo, lo + 1, hi - 1}));
  }
}

// np.nancumsum / np.nancumprod: NaN read as 0 / 1 (a leading NaN run gives
// 0 / 1), along every axis of every split, against the serial scans of the
// gathered data with NaN replaced; complex NaN parts; integers pass through.
TEST_CASE("nancumsum and nancumprod read NaN as 0 and 1", "[scan]") {
  const std::vector<std::int64_t> sh{6, 5};
  std::vector<double> g(30);
  std::mt19937_64 rng(21);
  for (auto& x : g) x = rng() % 3 == 0 ? qnan : double(std::int64_t(rng() % 7) - 3) * 0.5;
  g[0] = g[5] = g[10] = qnan;  // a leading run along both axes
  std::vector<double> z0 = g, z1 = g;
  for (auto& x : z0) x = std::isnan(x) ? 0.0 : x;
  for (auto& x : z1) x = std::isnan(x) ? 1.0 : x;
  for (auto sp : {split_axis{}, split_axis{0}, split_axis{1}})
    for (const bool uneven : {false, true})
      for (int axis : {0, 1, -1}) {
        INFO("split " << (sp ? *sp : -1) << " uneven " << uneven << " axis " << axis);
        auto a = ember::array(std::span<const double>(g), std::array<std::int64_t, 2>{6, 5}, {.split = sp});
        if (uneven) test::unbalance(a);
        const int ax = axis < 0 ? axis + 2 : axis;
        const auto s = test::gathered(ember::eval(ember::nancumsum(a, axis)));
        const auto p = test::gathered(ember::eval(ember::nancumprod(a, axis)));
        REQUIRE(test::all_ranks(near(s, serial_scan<double>(z0, sh, ax, [](double x, double y) { return x + y; }), 1e-12)));
        REQUIRE(test::all_ranks(near(p, serial_scan<double>(z1, sh, ax, [](double x, double y) { return x * y; }), 1e-12)));
        // axis=None: the flattened array, and the NaN-free fused pass into the scan step
        const auto f = test::gathered(ember::eval(ember::nancumsum(a)));
        REQUIRE(test::all_ranks(near(f, serial_scan<double>(z0, {30}, 0, [](double x, double y) { return x + y; }), 1e-12)));
      }
  // complex: a NaN in either part reads as 0
  const std::vector<std::complex<double>> cv{{1, 1}, {qnan, 2}, {3, qnan}, {0.5, -1}, {2, 0}};
  auto c = ember::array(std::span<const std::complex<double>>(cv), std::array<std::int64_t, 1>{5}, {.split = 0});
  const auto cs = test::gathered(ember::eval(ember::nancumsum(c, 0)));
  const std::vector<std::complex<double>> cw{{1, 1}, {1, 1}, {1, 1}, {1.5, 0}, {3.5, 0}};
  REQUIRE(test::all_ranks(cs == cw));
  // integers have no NaN: the plain scans, int32 accumulating in int64
  const std::vector<std::int32_t> iv{3, -1, 4, 1, -5};
  auto i = ember::array(std::span<const std::int32_t>(iv), std::array<std::int64_t, 1>{5}, {.split = 0});
  auto is = ember::eval(ember::nancumsum(i, 0));
  static_assert(std::is_same_v<decltype(is)::value_type, std::int64_t>);
  REQUIRE(test::all_ranks(test::gathered(is) == std::vector<std::int64_t>{3, 2, 6, 7, 2}));
}

TEST_CASE("a scan is a plan step: exact bytes along the split axis, fused before and after", "[scan][planner]") {
  const int P = ember::world().size();
  auto a = random_array<double>(std::array<std::int64_t, 2>{11, 6}, 0, 21);
  test::unbalance(a);
  const auto p = ember::explain(ember::cumsum(a, 0));
  INFO(p.to_string());
  // one slice (6 doubles) from every rank but the last
  REQUIRE(p.total().bytes == 6 * 8 * (P - 1));
  REQUIRE(p.to_string().find("cumsum") != std::string::npos);
  // along the local axis: nothing
  REQUIRE(ember::explain(ember::cumsum(a, 1)).total().bytes == 0);
  // fusion: x * x computed as the scan reads it (no pass of its own), / 2 + 1
  // in one pass after
  using K = ember::planner::step_kind;
  const auto pf = ember::explain(ember::cumsum(a * a, 0) / 2.0 + 1.0);
  INFO(pf.to_string());
  int kernels = 0, scans = 0, moves = 0;
  for (const auto& s : pf.steps) {
    kernels += s.kind == K::fused_kernel;
    scans += s.kind == K::scan;
    moves += ember::planner::is_move(s.kind);
    if (s.kind == K::scan) REQUIRE(s.text.find("mul(a0, a0)") != std::string::npos);
  }
  REQUIRE(scans == 1);
  REQUIRE(kernels == 1);
  REQUIRE(moves == 0);
  ember::dndarray<double, 2> r = ember::cumsum(a * a, 0) / 2.0 + 1.0;
  REQUIRE(test::all_ranks(trace_matches()));
  auto g = test::gathered(a);
  for (auto& v : g) v = v * v;
  auto want = serial_scan<double>(g, {11, 6}, 0, [](double x, double y) { return x + y; });
  for (auto& v : want) v = v / 2.0 + 1.0;
  REQUIRE(test::all_ranks(near(test::gathered(r), want, 1e-12)));
  // plan_for at scale: one slice of 64 doubles per rank but the last
  auto big = ember::dndarray<double, 2>(ember::layout::balanced({1 << 20, 64}, 0, P), ember::world(),
                                        std::shared_ptr<double[]>());
  const auto ps = ember::plan_for(ember::cumsum(big, 0), 4096);
  REQUIRE(ps.max_rank().bytes == 64 * 8);
}

namespace {
int kernels_in(const ember::planner::plan& p) {
  int k = 0;
  for (const auto& s : p.steps) k += s.kind == ember::planner::step_kind::fused_kernel;
  return k;
}
}  // namespace

TEST_CASE("a scan computes its elementwise operand as it reads it, at every axis and split", "[scan][fusion]") {
  const int P = ember::world().size();
  using A2 = std::array<std::int64_t, 2>;
  for (auto sp : {split_axis{}, split_axis{0}, split_axis{1}})
    for (const bool uneven : {false, true})
      for (int ax = 0; ax < 2; ++ax) {
        INFO("split " << (sp ? *sp : -1) << " uneven " << uneven << " axis " << ax);
        auto a = random_array<double>(A2{13, 6}, sp, 41);
        auto w = random_array<double>(A2{13, 6}, sp, 42);
        auto b = random_array<std::int32_t>(A2{13, 6}, sp, 43);
        if (uneven) {
          test::unbalance(a);
          test::unbalance(w);
          test::unbalance(b);
        }
        const auto ga = test::gathered(a), gw = test::gathered(w);
        const auto gb = test::gathered(b);
        bool along = sp && *sp == ax && P > 1;
        // arithmetic: folded into the scan wherever it runs (no kernel step)
        auto e1 = ember::cumsum(a * w - 1.0, ax);
        REQUIRE(kernels_in(ember::explain(e1)) == 0);
        ember::dndarray<double, 2> r1 = e1;
        REQUIRE(test::all_ranks(trace_matches()));
        std::vector<double> x1(ga.size());
        for (std::size_t i = 0; i < x1.size(); ++i) x1[i] = ga[i] * gw[i] - 1.0;
        REQUIRE(test::all_ranks(near(test::gathered(r1), serial_scan<double>(x1, {13, 6}, ax, std::plus<double>()), 1e-12)));
        // an integer operand accumulates in int64, exactly; max along the axis
        auto r2 = ember::eval(ember::cummax(b * 3 - ember::abs(b), ax));
        std::vector<std::int32_t> x2(gb.size());
        for (std::size_t i = 0; i < x2.size(); ++i) x2[i] = gb[i] * 3 - std::abs(gb[i]);
        REQUIRE(test::all_ranks(near(test::gathered(r2),
                                     serial_scan<std::int32_t>(x2, {13, 6}, ax, [](auto p, auto q) { return std::max(p, q); }), 0)));
        auto r3 = ember::eval(ember::cumsum(b + b, ax));
        std::vector<std::int64_t> x3(gb.size());
        for (std::size_t i = 0; i < x3.size(); ++i) x3[i] = 2 * std::int64_t(gb[i]);
        REQUIRE(test::all_ranks(near(test::gathered(r3), serial_scan<std::int64_t>(x3, {13, 6}, ax, std::plus<std::int64_t>()), 0)));
        // a transcendental operand is computed once: folded only where the scan
        // reads it once (a local axis), a pass of its own along the split axis
        auto e4 = ember::cumsum(ember::sin(a), ax);
        const auto p4 = ember::explain(e4);
        INFO(p4.to_string());
        for (const auto& st : p4.steps)
          if (st.kind == ember::planner::step_kind::scan) along = st.from->split() == ax && P > 1;
        REQUIRE(kernels_in(p4) == (along ? 1 : 0));
        ember::dndarray<double, 2> r4 = e4;
        std::vector<double> x4(ga.size());
        for (std::size_t i = 0; i < x4.size(); ++i) x4[i] = std::sin(ga[i]);
        REQUIRE(test::all_ranks(near(test::gathered(r4), serial_scan<double>(x4, {13, 6}, ax, std::plus<double>()), 1e-12)));
        // in place: a = cumsum(a * 2) reads each element before writing it
        ember::dndarray<double, 2> c = ember::eval(a * 1.0);
        c = ember::cumsum(c * 2.0, ax);
        std::vector<double> x5(ga.size());
        for (std::size_t i = 0; i < x5.size(); ++i) x5[i] = 2 * ga[i];
        REQUIRE(test::all_ranks(near(test::gathered(c), serial_scan<double>(x5, {13, 6}, ax, std::plus<double>()), 1e-12)));
      }
  // views over the split axis (shifted reads: halos into the scan): the running
  // sum of differences telescopes, a[i + 1] - a[0]
  for (const bool uneven : {false, true}) {
    auto v = random_array<double>(std::array<std::int64_t, 1>{37}, split_axis{0}, 44);
    if (uneven) test::unbalance(v);
    const auto g = test::gathered(v);
    using ember::slice;
    ember::dndarray<double, 1> t = ember::cumsum(v(slice(1, 37)) - v(slice(0, 36)), 0);
    REQUIRE(test::all_ranks(trace_matches()));
    std::vector<double> want(36);
    for (std::size_t i = 0; i < 36; ++i) want[i] = g[i + 1] - g[0];
    REQUIRE(test::all_ranks(near(test::gathered(t), want, 1e-12)));
  }
}

TEST_CASE("a kernel that reads a scan computes it as it goes, at every axis and split", "[scan][fusion]") {
  using K = ember::planner::step_kind;
  using A2 = std::array<std::int64_t, 2>;
  for (auto sp : {split_axis{}, split_axis{0}, split_axis{1}})
    for (const bool uneven : {false, true})
      for (int ax = 0; ax < 2; ++ax) {
        INFO("split " << (sp ? *sp : -1) << " uneven " << uneven << " axis " << ax);
        auto a = random_array<double>(A2{13, 6}, sp, 61);
        auto b = random_array<std::int32_t>(A2{13, 6}, sp, 62);
        if (uneven) {
          test::unbalance(a);
          test::unbalance(b);
        }
        const auto ga = test::gathered(a);
        const auto gb = test::gathered(b);
        const std::vector<std::int64_t> sh{13, 6};
        // one kernel step, no scan step: the scan's bytes are the kernel's
        auto e = ember::cumsum(a, ax) / 2.0 + a;
        const auto p = ember::explain(e);
        INFO(p.to_string());
        int kernels = 0, scans = 0;
        for (const auto& st : p.steps) {
          kernels += st.kind == K::fused_kernel;
          scans += st.kind == K::scan;
          if (st.kind == K::fused_kernel) REQUIRE(st.text.find("add(div(cumsum(a0, axis=" + std::to_string(ax) + "), 2), a0)") != std::string::npos);
        }
        REQUIRE(kernels == 1);
        REQUIRE(scans == 0);
        REQUIRE(p.total().bytes == ember::explain(ember::cumsum(a, ax)).total().bytes);
        ember::dndarray<double, 2> r = e;
        REQUIRE(test::all_ranks(trace_matches()));
        auto want = serial_scan<double>(ga, sh, ax, std::plus<double>());
        for (std::size_t i = 0; i < want.size(); ++i) want[i] = want[i] / 2.0 + ga[i];
        REQUIRE(test::all_ranks(near(test::gathered(r), want, 1e-12)));
        // an integer scan (int64) read by a float kernel; the running max
        auto r2 = ember::eval(ember::astype<double>(ember::cumsum(b, ax)) * 0.5);
        auto w2 = serial_scan<std::int64_t>(std::vector<std::int64_t>(gb.begin(), gb.end()), sh, ax, std::plus<std::int64_t>());
        std::vector<double> want2(w2.size());
        for (std::size_t i = 0; i < w2.size(); ++i) want2[i] = double(w2[i]) * 0.5;
        REQUIRE(test::all_ranks(near(test::gathered(r2), want2, 0)));
        auto r3 = ember::eval(ember::cummax(b, ax) - b);
        auto w3 = serial_scan<std::int32_t>(gb, sh, ax, [](auto x, auto y) { return std::max(x, y); });
        for (std::size_t i = 0; i < w3.size(); ++i) w3[i] -= gb[i];
        REQUIRE(test::all_ranks(near(test::gathered(r3), w3, 0)));
        // in place: the destination is the scan's operand
        ember::dndarray<double, 2> c = ember::eval(a * 1.0);
        c = ember::cumsum(c, ax) * 0.25;
        auto want4 = serial_scan<double>(ga, sh, ax, std::plus<double>());
        for (auto& v : want4) v *= 0.25;
        REQUIRE(test::all_ranks(near(test::gathered(c), want4, 1e-12)));
        // read twice: the scan is a value of its own, as before
        auto twice = ember::cumsum(a, ax) * ember::cumsum(a, ax);
        int scans2 = 0;
        for (const auto& st : ember::explain(twice).steps) scans2 += st.kind == K::scan;
        REQUIRE(scans2 == 1);
        auto r5 = ember::eval(twice);
        auto want5 = serial_scan<double>(ga, sh, ax, std::plus<double>());
        for (auto& v : want5) v *= v;
        REQUIRE(test::all_ranks(near(test::gathered(r5), want5, 1e-12)));
      }
  // a long vector: many chunks, a carry across the ranks; setitem into a view
  auto v = random_array<double>(std::array<std::int64_t, 1>{20011}, split_axis{0}, 63);
  test::unbalance(v);
  const auto gv = test::gathered(v);
  ember::dndarray<double, 1> m = ember::cumsum(v, 0) / 3.0;
  REQUIRE(test::all_ranks(trace_matches()));
  auto wm = serial_scan<double>(gv, {20011}, 0, std::plus<double>());
  for (auto& x : wm) x /= 3.0;
  REQUIRE(test::all_ranks(near(test::gathered(m), wm, 1e-12)));
  auto big = ember::zeros<double>({20013}, {.split = 0});
  big(ember::slice(1, 20012)) = ember::cumsum(v, 0) / 3.0;
  const auto gbig = test::gathered(big);
  REQUIRE(test::all_ranks(gbig.front() == 0.0 && gbig.back() == 0.0 &&
                          near(std::vector<double>(gbig.begin() + 1, gbig.end() - 1), wm, 1e-12)));
}

TEST_CASE("axis=None scans the flattened array; cumulative_sum is NumPy 2's spelling", "[scan]") {
  for (auto sp : {split_axis{0}, split_axis{1}, split_axis{}}) {
    auto a = random_array<std::int64_t>(std::array<std::int64_t, 2>{7, 3}, sp, 31);
    auto flat = ember::eval(ember::cumsum(a));
    static_assert(decltype(flat)::ndim_v == 1);
    REQUIRE(flat.shape()[0] == 21);
    const auto g = test::gathered(a);
    REQUIRE(test::all_ranks(test::gathered(flat) ==
                            serial_scan<std::int64_t>(g, {21}, 0, [](std::int64_t x, std::int64_t y) { return x + y; })));
    auto c2 = ember::eval(ember::cumulative_sum(a, 1));
    REQUIRE(test::all_ranks(test::gathered(c2) == test::gathered(ember::eval(ember::cumsum(a, 1)))));
    auto v = random_array<std::int64_t>(std::array<std::int64_t, 1>{13}, sp ? split_axis{0} : split_axis{}, 32);
    REQUIRE(test::all_ranks(test::gathered(ember::eval(ember::cumulative_prod(v))) ==
                            test::gathered(ember::eval(ember::cumprod(v, 0)))));
  }
}

TEST_CASE("cumulative_sum and cumulative_prod with include_initial: the identity first, one longer", "[scan]") {
  const int P = ember::world().size();
  using A2 = std::array<std::int64_t, 2>;
  for (auto sp : {split_axis{0}, split_axis{1}, split_axis{}})
    for (const bool uneven : {false, true})
      for (int ax = 0; ax < 2; ++ax) {
        INFO("split " << (sp ? *sp : -1) << " uneven " << uneven << " axis " << ax);
        auto a = random_array<std::int32_t>(A2{9, 4}, sp, 51);
        if (uneven) test::unbalance(a);
        const auto g = test::gathered(a);
        const std::vector<std::int64_t> sh{9, 4};
        for (const bool prod : {false, true}) {
          auto r = prod ? ember::cumulative_prod(a, ax, {.include_initial = true})
                        : ember::cumulative_sum(a, ax, {.include_initial = true});
          static_assert(std::is_same_v<typename decltype(r)::value_type, std::int64_t>);
          std::vector<std::int64_t> want_shape = sh;
          ++want_shape[std::size_t(ax)];
          REQUIRE(r.layout().shape() == ember::index_vec(want_shape.begin(), want_shape.end()));
          if (sp && *sp == ax && P > 1) REQUIRE(r.layout().is_balanced());
          if (sp && *sp != ax) REQUIRE(r.layout().split() == a.layout().split());
          // np.cumulative_sum(a, axis=ax, include_initial=True) written out
          auto f = [prod](std::int64_t x, std::int64_t y) { return prod ? x * y : x + y; };
          const auto scan = serial_scan<std::int64_t>(g, sh, ax, f);
          std::vector<std::int64_t> want;
          for (std::int64_t i = 0; i < want_shape[0]; ++i)
            for (std::int64_t j = 0; j < want_shape[1]; ++j) {
              const std::int64_t k = ax == 0 ? i : j;
              if (k == 0) want.push_back(prod ? 1 : 0);
              else want.push_back(scan[std::size_t(ax == 0 ? (i - 1) * 4 + j : i * 4 + (j - 1))]);
            }
          REQUIRE(test::all_ranks(test::gathered(r) == want));
          // without it: the scan, evaluated
          auto plain = ember::cumulative_sum(a, ax, {});
          REQUIRE(test::all_ranks(test::gathered(plain) == serial_scan<std::int64_t>(g, sh, ax, std::plus<std::int64_t>())));
        }
      }
  // 1-D, and an empty vector gives the identity alone
  auto v = random_array<double>(std::array<std::int64_t, 1>{0}, split_axis{0}, 52);
  auto e = ember::cumulative_prod(v, {.include_initial = true});
  REQUIRE(e.layout().shape() == ember::index_vec{1});
  REQUIRE(test::all_ranks(test::gathered(e) == std::vector<double>{1.0}));
}

TEST_CASE("a bad scan axis raises on every rank", "[scan][errors]") {
  auto a = random_array<double>(std::array<std::int64_t, 2>{4, 3}, 0, 1);
  std::string what;
  try {
    (void)ember::cumsum(a, 2);
  } catch (const ember::axis_error& e) {
    what = e.what();
  }
  REQUIRE(what.find("axis 2") != std::string::npos);
  REQUIRE(what.find("cumsum") != std::string::npos);
  REQUIRE_THROWS_AS(ember::cummax(a, -3), ember::axis_error);
  REQUIRE(test::all_ranks(true));
}
