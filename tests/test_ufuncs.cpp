// NumPy's ufuncs, operators, in-place operators and member spellings (issue 16):
//  - NumPy's own definitions, value by value, where they are exact (integer and
//    floating division by Python's rules, division by zero, shifts past the
//    width, overflow, rounding half to even, nan_to_num, isclose, arange);
//    the expected values are NumPy's outputs, not ember's;
//  - (every ufunc on every dtype it accepts, in every layout: test_ufunc_table.cpp)
//  - in-place operators write into the array's storage, in any layout;
//  - `using namespace ember;` leaves std:: names usable.
#include "ufunc_common.hpp"

TEST_CASE("integer and floating division follow NumPy: Python's signs, 0 for integer division by zero", "[ufunc]") {
  for (auto split : {ember::split_axis{0}, ember::split_axis{}}) {
    const auto a = vec<i64>({7, -7, 7, -7, 0, 5, std::numeric_limits<i64>::min(), 9}, split);
    const auto b = vec<i64>({3, 3, -3, -3, 3, 0, -1, -1}, split);
    expect(a % b, {1, 2, -2, -1, 0, 0, 0, 0});
    expect(ember::floor_divide(a, b), {2, -3, -3, 2, 0, 0, std::numeric_limits<i64>::min(), -9});
    expect(ember::fmod(a, b), {1, -1, 1, -1, 0, 0, 0, 0});
    auto [q, r] = ember::divmod(a, b);
    auto [qq, rr] = ember::eval(q, r);
    CHECK(test::all_ranks(test::gathered(qq) == test::gathered(ember::eval(ember::floor_divide(a, b)))));
    CHECK(test::all_ranks(test::gathered(rr) == test::gathered(ember::eval(a % b))));

    const auto x = vec<double>({5.5, -5.5, 5.5, -5.5, 0.0, -0.0, 3.0, inf, 1.0}, split);
    const auto y = vec<double>({2.0, 2.0, -2.0, -2.0, 2.0, -2.0, 0.0, 2.0, inf}, split);
    expect(x % y, {1.5, 0.5, -0.5, -1.5, 0.0, -0.0, qnan, qnan, 1.0});
    expect(ember::fmod(x, y), {1.5, -1.5, 1.5, -1.5, 0.0, -0.0, qnan, qnan, 1.0});
    const auto u = vec<double>({5.5, -5.5, 5.5, -5.5, 0.0, 1.0, -1.0, 0.0}, split);
    const auto v = vec<double>({2.0, 2.0, -2.0, -2.0, -2.0, 0.0, 0.0, 0.0}, split);
    expect(ember::floor_divide(u, v), {2.0, -3.0, -3.0, 2.0, -0.0, inf, -inf, qnan});
    // int32 with a scalar stays int32
    const auto s = vec<i32>({-7, -1, 0, 1, 8}, split);
    static_assert(std::is_same_v<decltype(s % 3)::value_type, i32>);
    expect(s % 3, {2, 2, 0, 1, 2});
    expect(-7 % s, {0, 0, 0, 0, 1});
  }
}

TEST_CASE("integer overflow wraps, shifts past the width give 0 or -1, as in NumPy", "[ufunc]") {
  constexpr i64 lo = std::numeric_limits<i64>::min(), hi = std::numeric_limits<i64>::max();
  const auto a = vec<i64>({hi, lo, lo, 1, -1, -8, 8});
  expect(a + 1, {lo, lo + 1, lo + 1, 2, 0, -7, 9});
  expect(a * 4, {-4, 0, 0, 4, -4, -32, 32});
  expect(-a, {lo + 1, lo, lo, -1, 1, 8, -8});
  expect(ember::abs(a), {hi, lo, lo, 1, 1, 8, 8});
  const auto n = vec<i64>({64, 63, 70, -1, 1, 2, 3});
  expect(a << n, {0, 0, 0, 0, -2, -32, 64});
  expect(a >> n, {0, -1, -1, 0, -1, -2, 1});
  const auto b = vec<i32>({std::numeric_limits<i32>::max(), std::numeric_limits<i32>::min(), 6});
  expect(b + 1, {std::numeric_limits<i32>::min(), std::numeric_limits<i32>::min() + 1, 7});
  expect(ember::square(b), {1, 0, 36});
  expect(b & 5, {5, 0, 4});
  expect(b | 1, {std::numeric_limits<i32>::max(), std::numeric_limits<i32>::min() + 1, 7});
  expect(b ^ -1, {std::numeric_limits<i32>::min(), std::numeric_limits<i32>::max(), -7});
  expect(~b, {std::numeric_limits<i32>::min(), std::numeric_limits<i32>::max(), -7});
  expect(ember::reciprocal(vec<i64>({0, 1, -1, 2, -5})), {lo, 1, -1, 0, 0});
  expect(ember::pow(vec<i64>({3, 2, -2}), vec<i64>({41, 64, 3})), {-420491770248316829, 0, -8});  // 3**41 wraps
}

TEST_CASE("rounding, sign, heaviside, nan_to_num, isclose: NumPy's values", "[ufunc]") {
  const auto x = vec<double>({0.125, 0.135, 2.5, -2.5, 1234.5678, -0.0, 3.5, qnan});
  expect(ember::round(x, 2), {0.12, 0.14, 2.5, -2.5, 1234.57, -0.0, 3.5, qnan});
  expect(ember::round(x), {0.0, 0.0, 2.0, -2.0, 1235.0, -0.0, 4.0, qnan});
  expect(ember::rint(x), {0.0, 0.0, 2.0, -2.0, 1235.0, -0.0, 4.0, qnan});
  expect(ember::round(vec<double>({1234.5678, 1250.0, 1350.0}), -2), {1200.0, 1200.0, 1400.0});
  expect(ember::round(vec<i64>({15, 25, -15, -25, 35, 7}), -1), {20, 20, -20, -20, 40, 10});
  expect(ember::round(vec<i64>({15, -3}), 3), {15, -3});
  // round's inline half-to-even at the edges: ties, the last fractional values
  // below 2^52 (2^23 for float32), integers beyond, infinities, -0 from -0.4
  expect(ember::round(vec<double>({4503599627370495.5, -4503599627370494.5, 4503599627370497.0, 9007199254740993.0,
                                   inf, -inf, -0.4, 0.5, -1.5, 5e-324})),
         {4503599627370496.0, -4503599627370494.0, 4503599627370497.0, 9007199254740993.0, inf, -inf, -0.0, 0.0,
          -2.0, 0.0});
  expect(ember::round(vec<float>({8388607.5f, -8388606.5f, 8388609.0f, 2.5f, -0.25f}), 0),
         {8388608.0f, -8388606.0f, 8388609.0f, 2.0f, -0.0f});
  expect(ember::round(vec<double>({1e300, -2.675, 0.285}), 2), {1e300, -2.68, 0.28});  // NumPy 1.24: -2.675 * 100 is the tie -267.5
  expect(ember::floor(x), {0.0, 0.0, 2.0, -3.0, 1234.0, -0.0, 3.0, qnan});
  expect(ember::ceil(x), {1.0, 1.0, 3.0, -2.0, 1235.0, -0.0, 4.0, qnan});
  expect(ember::trunc(x), {0.0, 0.0, 2.0, -2.0, 1234.0, -0.0, 3.0, qnan});
  static_assert(std::is_same_v<decltype(ember::floor(vec<i32>({1})))::value_type, i32>);  // NumPy >= 2.1
  expect(ember::sign(vec<double>({-2.0, 0.0, -0.0, 3.0, qnan})), {-1.0, 0.0, 0.0, 1.0, qnan});
  expect(ember::sign(vec<i32>({-3, 0, 4})), {-1, 0, 1});
  expect(ember::heaviside(vec<double>({-1.0, 0.0, 2.0, qnan}), 0.5), {0.0, 0.5, 1.0, qnan});
  const auto s = vec<double>({qnan, inf, -inf, 1.0});
  expect(ember::nan_to_num(s), {0.0, std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(), 1.0});
  expect(ember::nan_to_num(s, {.nan = -1.0, .posinf = 9.0}), {-1.0, 9.0, std::numeric_limits<double>::lowest(), 1.0});
  const auto p = vec<double>({1.0, qnan, inf, 1e-9, 1.0, -inf});
  const auto q = vec<double>({1.0 + 1e-6, qnan, inf, 0.0, 1.1, inf});
  expect(ember::isclose(p, q), {1, 0, 1, 1, 0, 0});
  expect(ember::isclose(p, q, {.equal_nan = true}), {1, 1, 1, 1, 0, 0});
  expect(ember::isnan(p) | ember::isinf(p), {0, 1, 1, 0, 0, 1});
  expect(ember::signbit(vec<double>({-0.0, 0.0, -1.0, qnan})), {1, 0, 1, 0});
  expect(ember::angle(vec<double>({-2.0, 0.0, -0.0, 3.0})), {std::atan2(0.0, -1.0), 0.0, std::atan2(0.0, -0.0), 0.0});
}

TEST_CASE("arange follows NumPy's dtype rule and its values bit for bit", "[ufunc][factories]") {
  auto f = ember::arange(0.0, 1.0, 0.1, {.split = 0});
  static_assert(std::is_same_v<decltype(f)::value_type, double>);
  // NumPy 1.24's np.arange(0.0, 1.0, 0.1), as float.hex()
  const std::vector<double> want{0x0.0p+0,
                                 0x1.999999999999ap-4,
                                 0x1.999999999999ap-3,
                                 0x1.3333333333334p-2,
                                 0x1.999999999999ap-2,
                                 0x1.0000000000000p-1,
                                 0x1.3333333333334p-1,
                                 0x1.6666666666667p-1,
                                 0x1.999999999999ap-1,
                                 0x1.ccccccccccccdp-1};
  CHECK(test::all_ranks(test::gathered(f) == want));
  CHECK(test::all_ranks(test::gathered(ember::arange(1, 2, 0.3)) ==
                        std::vector<double>{0x1.0p+0, 0x1.4cccccccccccdp+0, 0x1.999999999999ap+0, 0x1.e666666666667p+0}));
  CHECK(test::all_ranks(test::gathered(ember::arange(5.0, 0, -1.5)) == std::vector<double>{5.0, 3.5, 2.0, 0.5}));
  const auto g = test::gathered(ember::arange<float>(0, 1, 0.1));
  CHECK(test::all_ranks(g == std::vector<float>{0x0.0p+0f, 0x1.99999ap-4f, 0x1.99999ap-3f, 0x1.333334p-2f, 0x1.99999ap-2f,
                                                0x1.0p-1f, 0x1.333334p-1f, 0x1.666666p-1f, 0x1.99999ap-1f, 0x1.cccccep-1f}));
  auto i = ember::arange(5);
  static_assert(std::is_same_v<decltype(i)::value_type, i64>);
  CHECK(test::all_ranks(test::gathered(i) == std::vector<i64>{0, 1, 2, 3, 4}));
  CHECK(test::all_ranks(test::gathered(ember::arange(10, 0, -3, {.split = 0})) == std::vector<i64>{10, 7, 4, 1}));
  // integer ranges are exact beyond 2^53
  const i64 big = i64(1) << 62;
  CHECK(test::all_ranks(test::gathered(ember::arange(big, big + 3)) == std::vector<i64>{big, big + 1, big + 2}));
  CHECK(ember::arange(3, 3).numel() == 0);
  CHECK_THROWS_AS(ember::arange(0, 5, 0), ember::value_error);
}

TEST_CASE("logspace, geomspace, full_like and norm along an axis follow NumPy", "[ufunc][factories]") {
  // logspace is pow(base, linspace) sample by sample (NumPy's definition), in any split
  for (auto split : {ember::split_axis{0}, ember::split_axis{}}) {
    const auto y = test::gathered(ember::linspace(-3.0, 2.5, 23, {.split = split}));
    const auto l = test::gathered(ember::logspace(-3.0, 2.5, 23, {.split = split}));
    const auto l2 = test::gathered(ember::logspace(0.0, 8.0, 8, {.split = split, .endpoint = false, .base = 2.0}));
    bool exact = y.size() == 23 && l.size() == 23 && l2.size() == 8;
    for (std::size_t k = 0; exact && k < y.size(); ++k) exact = l[k] == std::pow(10.0, y[k]);
    for (std::size_t k = 0; exact && k < l2.size(); ++k) exact = l2[k] == double(1 << k);  // 2^0 .. 2^7, exact
    CHECK(test::all_ranks(exact));
    // geomspace: NumPy's values 1, 10, 100, 1000 (exact), the endpoints exactly start and stop
    CHECK(test::all_ranks(test::gathered(ember::geomspace(1.0, 1000.0, 4, {.split = split})) ==
                          std::vector<double>{1.0, 10.0, 100.0, 1000.0}));
    const auto g = test::gathered(ember::geomspace(-0.3, -7.0, 9, {.split = split}));
    CHECK(test::all_ranks(g.size() == 9 && g.front() == -0.3 && g.back() == -7.0 &&
                          std::is_sorted(g.rbegin(), g.rend())));
    const auto f = test::gathered(ember::logspace<float>(0.0, 3.0, 4, {.split = split}));
    CHECK(test::all_ranks(f == std::vector<float>{1.0f, 10.0f, 100.0f, 1000.0f}));
  }
  CHECK_THROWS_AS(ember::geomspace(0.0, 1.0, 5), ember::value_error);  // NumPy's error, on every rank
  CHECK_THROWS_AS(ember::logspace(0.0, 1.0, -1), ember::value_error);
  // full_like converts the fill value to the array's dtype
  const auto iv = ember::arange(6, {.split = 0});
  CHECK(test::all_ranks(test::gathered(ember::full_like(iv, 2.9)) == std::vector<i64>(6, 2)));
  // norm along an axis: against a serial loop (ord 2, 1, inf, -inf, 0, 3)
  const i64 rows = 7, cols = 5;
  std::vector<double> v(std::size_t(rows * cols));
  for (i64 k = 0; k < rows * cols; ++k) v[std::size_t(k)] = std::cos(double(k) * 0.9) * 4 - (k % 6 == 0 ? 4 : 0);
  for (const auto& l : layouts) {
    INFO(l.name);
    const auto a = distributed(v, rows, cols, l);
    for (int axis : {0, 1}) {
      for (double ord : {2.0, 1.0, inf, -inf, 0.0, 3.0}) {
        INFO("axis " << axis << ", ord " << ord);
        const i64 n = axis == 0 ? cols : rows, m = axis == 0 ? rows : cols;
        std::vector<double> want(static_cast<std::size_t>(n));
        for (i64 p = 0; p < n; ++p) {
          double acc = ord == inf ? 0 : ord == -inf ? inf : 0;
          for (i64 q = 0; q < m; ++q) {
            const double x = std::abs(v[std::size_t(axis == 0 ? q * cols + p : p * cols + q)]);
            if (ord == inf) acc = std::max(acc, x);
            else if (ord == -inf) acc = std::min(acc, x);
            else if (ord == 0) acc += x != 0;
            else acc += std::pow(x, ord);
          }
          want[std::size_t(p)] = std::isinf(ord) || ord == 0 || ord == 1 ? acc : std::pow(acc, 1 / ord);
        }
        const auto got = test::gathered(ember::linalg::norm(a, ord, axis));
        bool ok = got.size() == want.size();
        for (std::size_t p = 0; ok && p < got.size(); ++p) ok = std::abs(got[p] - want[p]) <= 1e-13 * std::abs(want[p]);
        CHECK(test::all_ranks(ok));
      }
    }
  }
}

TEST_CASE("operators are the named ufuncs", "[ufunc]") {
  auto a = ember::random::randint<i64>(-50, 50, {6, 4}, {.split = 0});
  auto b = ember::random::randint<i64>(1, 9, {6, 4}, {.split = 1});
  static_assert(std::is_same_v<decltype(a % b), decltype(ember::remainder(a, b))>);
  static_assert(std::is_same_v<decltype(a & b), decltype(ember::bitwise_and(a, b))>);
  static_assert(std::is_same_v<decltype(a | b), decltype(ember::bitwise_or(a, b))>);
  static_assert(std::is_same_v<decltype(a ^ b), decltype(ember::bitwise_xor(a, b))>);
  static_assert(std::is_same_v<decltype(a << b), decltype(ember::left_shift(a, b))>);
  static_assert(std::is_same_v<decltype(a >> b), decltype(ember::right_shift(a, b))>);
  static_assert(std::is_same_v<decltype(~a), decltype(ember::invert(a))>);
  // masks combine with & | ~ (C++'s & binds looser than comparisons, unlike Python's)
  auto x = ember::random::randn<double>({6, 4}, {.split = 0});
  ember::dndarray<bool, 2> m = ((x > 0) & ~(x > 1)) | ember::isnan(x);
  const auto xs = test::gathered(x);
  const auto ms = test::gathered(m);
  bool ok = true;
  for (std::size_t i = 0; i < xs.size(); ++i) ok = ok && (ms[i] != 0) == ((xs[i] > 0 && !(xs[i] > 1)) || std::isnan(xs[i]));
  CHECK(test::all_ranks(ok));
  // the plan names them as NumPy does
  const std::string plan = ember::explain(ember::floor(x) % 2.0 + ember::arctan2(x, 1.0)).to_string();
  CHECK(plan.find("remainder") != std::string::npos);
  CHECK(plan.find("arctan2") != std::string::npos);
  CHECK(plan.find("floor") != std::string::npos);
}

TEST_CASE("in-place operators write into the array's storage in its layout, in one pass", "[ufunc][inplace]") {
  for (const auto& l : layouts) {
    INFO(l.name);
    const std::vector<double> av = filled<double>(12 * 5, 2);
    auto a = distributed(av, 12, 5, l);
    const auto alias = a;  // another handle: sees every in-place result
    const double* storage = a.ldata();
    const auto lay = a.layout();
    auto b = ember::random::randn<double>({12, 5}, {.split = 1});  // another layout: moved, then fused
    const auto bv = test::gathered(b);
    std::vector<double> want(av);
    a += b;
    a *= 2.0;
    a -= 1;
    a /= b;
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = ((want[i] + bv[i]) * 2.0 - 1) / bv[i];
    CHECK(a.ldata() == storage);
    CHECK(a.layout() == lay);
    CHECK(test::all_ranks(same_values(test::gathered(alias), want)));
    // a row broadcast into every row
    auto r = ember::arange(0.0, 5.0);
    a += r;
    for (std::size_t i = 0; i < want.size(); ++i) want[i] += double(i % 5);
    CHECK(test::all_ranks(same_values(test::gathered(alias), want)));

    std::vector<i64> iv(12 * 5);
    for (std::size_t i = 0; i < iv.size(); ++i) iv[i] = i64(i) * 37 - 900;
    auto n = distributed(iv, 12, 5, l);
    n %= 7;
    n <<= 2;
    n |= 1;
    n ^= 3;
    n &= ~i64(8);
    n >>= 1;
    for (auto& v : iv) v = ((((ember::op::py_mod(v, i64(7)) << 2) | 1) ^ 3) & ~i64(8)) >> 1;
    CHECK(test::all_ranks(same_values(test::gathered(n), iv)));
    // int32 += int64 casts back to int32 (same_kind), as NumPy's
    auto s = ember::full<i32>({3}, 5, {.split = l.split ? ember::split_axis{0} : ember::none});
    s += ember::full<i64>({3}, 2);
    CHECK(test::all_ranks(test::gathered(s) == std::vector<i32>{7, 7, 7}));
    // through a view: a(1:3, :) *= -1
    auto v = distributed(av, 12, 5, l);
    v(ember::slice(1, 3), ember::all) *= -1.0;
    std::vector<double> vw(av);
    for (std::size_t i = 5; i < 15; ++i) vw[i] = -vw[i];
    CHECK(test::all_ranks(same_values(test::gathered(v), vw)));
  }
}

TEST_CASE("member spellings are the free functions' nodes", "[ufunc][members]") {
  auto a = ember::random::randn<double>({7, 4}, {.split = 0});
  test::unbalance(a);
  CHECK(a.sum() == ember::sum(a));
  CHECK(a.max() == ember::max(a));
  CHECK(a.argmin() == ember::argmin(a));
  CHECK(a.mean() == ember::mean(a));
  CHECK(a.var({.ddof = 1}) == ember::var(a, {.ddof = 1}));
  CHECK(a.std() == ember::std(a));
  static_assert(std::is_same_v<decltype(a.sum(1)), decltype(ember::sum(a, 1))>);
  static_assert(std::is_same_v<decltype(a.mean({0, 1}, {.keepdims = true})), decltype(ember::mean(a, {0, 1}, {.keepdims = true}))>);
  static_assert(std::is_same_v<decltype(a.astype<float>()), decltype(ember::astype<float>(a))>);
  static_assert(std::is_same_v<decltype(a.T()), decltype(ember::transpose(a))>);
  ember::dndarray<double, 1> s1 = a.sum(1), s2 = ember::sum(a, 1);
  CHECK(test::all_ranks(test::gathered(s1) == test::gathered(s2)));
  ember::dndarray<double, 2> t = a.T();
  CHECK(t.shape() == std::array<i64, 2>{4, 7});
  CHECK(a.reshape({4, 7}).shape() == std::array<i64, 2>{4, 7});
  CHECK(a.ravel().shape() == std::array<i64, 1>{28});
  ember::dndarray<double, 2> c = a.clip(-0.5, 0.5) + a.round(1);
  ember::dndarray<double, 2> d = ember::clip(a, -0.5, 0.5) + ember::round(a, 1);
  CHECK(test::all_ranks(test::gathered(c) == test::gathered(d)));
  a.fill(3.0);
  CHECK(a.sum() == 3.0 * 28);
}

// ---- `using namespace ember;` in user code: std:: names still mean std's ----
namespace user_code {
using namespace ember;
double std_names(const dndarray<double, 1>& a) {
  std::vector<double> v{1.0, 4.0};
  const double s = std::sqrt(v[1]) + std::abs(-1.0) + std::floor(2.5) + std::round(2.5) + std::fmod(5.0, 3.0) +
                   std::min(1.0, 2.0) + std::max(1.0, 2.0) + std::pow(2.0, 2.0) + std::log1p(0.0);
  // the array forms, qualified, next to them: ember::std is NumPy's std
  return s + ember::std(a) + ember::sum(a) + ember::max(a) + ember::round(a, 1).shape()[0];
}
}  // namespace user_code

TEST_CASE("using namespace ember leaves std:: names usable; ember::std is the reduction", "[ufunc]") {
  auto a = ember::array(std::vector<double>{1.0, 3.0}, {.split = 0});
  CHECK(user_code::std_names(a) == Approx(2 + 1 + 2 + 3 + 2 + 1 + 2 + 4 + 0 + 1.0 + 4.0 + 3.0 + 2));
}

// ---- qnan-aware reductions and statistics against serial loops on the gathered data ----
namespace {

// The slices of a (rows x cols) row-major array reduced over `axis` (0, 1, or -1
// for both), each reduced by f over its non-NaN or all values.
template <class F>
std::vector<double> serial_reduce(const std::vector<double>& v, i64 rows, i64 cols, int axis, F f) {
  std::vector<double> out;
  if (axis == -1) return {f(v)};
  const i64 outer = axis == 0 ? cols : rows, inner = axis == 0 ? rows : cols;
  for (i64 o = 0; o < outer; ++o) {
    std::vector<double> s;
    for (i64 k = 0; k < inner; ++k) s.push_back(axis == 0 ? v[std::size_t(k * cols + o)] : v[std::size_t(o * cols + k)]);
    out.push_back(f(s));
  }
  return out;
}
std::vector<double> finite_only(const std::vector<double>& s) {
  std::vector<double> r;
  for (double x : s)
    if (!std::isnan(x)) r.push_back(x);
  return r;
}
bool close_all(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-12) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) != std::isnan(got[i])) return false;
    if (!std::isnan(want[i]) && std::abs(got[i] - want[i]) > tol * std::max(1.0, std::abs(want[i]))) return false;
  }
  return true;
}
template <class E>
std::vector<double> as_doubles(const E& e) {
  const auto g = test::gathered(ember::eval<1>(e));
  return std::vector<double>(g.begin(), g.end());
}

}  // namespace

TEST_CASE("qnan-aware reductions equal the serial ones over the non-NaN elements, in every layout", "[ufunc][stats]") {
  const i64 rows = 9, cols = 6;
  std::vector<double> v(std::size_t(rows * cols));
  for (i64 i = 0; i < rows * cols; ++i) v[std::size_t(i)] = std::sin(double(i) * 1.7) * 3 + (i % 7 == 3 ? qnan : 0.0);
  for (i64 i = 0; i < rows; ++i) v[std::size_t(i * cols + 4)] = qnan;  // column 4: every element NaN
  auto sum = [](const std::vector<double>& s) {
    double t = 0;
    for (double x : finite_only(s)) t += x;
    return t;
  };
  auto mean = [&](const std::vector<double>& s) { return sum(s) / double(finite_only(s).size()); };
  auto var1 = [&](const std::vector<double>& s) {
    const auto f = finite_only(s);
    const double m = mean(s);
    double t = 0;
    for (double x : f) t += (x - m) * (x - m);
    return t / (double(f.size()) - 1);
  };
  auto mn = [](const std::vector<double>& s) {
    const auto f = finite_only(s);
    return f.empty() ? qnan : *std::min_element(f.begin(), f.end());
  };
  auto mx = [](const std::vector<double>& s) {
    const auto f = finite_only(s);
    return f.empty() ? qnan : *std::max_element(f.begin(), f.end());
  };
  auto argmx = [](const std::vector<double>& s) {
    i64 best = -1;
    for (std::size_t k = 0; k < s.size(); ++k)
      if (!std::isnan(s[k]) && (best < 0 || s[k] > s[std::size_t(best)])) best = i64(k);
    return double(best);
  };
  for (const auto& l : layouts) {
    INFO(l.name);
    const auto a = distributed(v, rows, cols, l);
    for (int axis : {0, 1}) {
      INFO("axis " << axis);
      CHECK(test::all_ranks(close_all(as_doubles(ember::nansum(a, axis)), serial_reduce(v, rows, cols, axis, sum))));
      CHECK(test::all_ranks(close_all(as_doubles(ember::nanmean(a, axis)), serial_reduce(v, rows, cols, axis, mean))));
      CHECK(test::all_ranks(close_all(as_doubles(ember::nanvar(a, axis, {.ddof = 1})), serial_reduce(v, rows, cols, axis, var1))));
      CHECK(test::all_ranks(close_all(as_doubles(ember::nanmin(a, axis)), serial_reduce(v, rows, cols, axis, mn))));
      CHECK(test::all_ranks(close_all(as_doubles(ember::nanmax(a, axis)), serial_reduce(v, rows, cols, axis, mx))));
      if (axis == 1)  // (every row has a non-NaN element; column 4 has none, so axis 0 is NumPy's error there)
        CHECK(test::all_ranks(close_all(as_doubles(ember::astype<double>(ember::nanargmax(a, axis))),
                                        serial_reduce(v, rows, cols, axis, argmx))));
    }
    CHECK(ember::nansum(a) == Approx(sum(v)).epsilon(1e-12));
    CHECK(ember::nanmean(a) == Approx(mean(v)).epsilon(1e-12));
    CHECK(ember::nanstd(a, {.ddof = 1}) == Approx(std::sqrt(var1(v))).epsilon(1e-12));
    CHECK(ember::nanmin(a) == mn(v));
    CHECK(ember::nanargmax(a) == i64(argmx(v)));
    // an all-NaN operand: nanargmin is NumPy's error, on every rank; nanmin is NaN
    const auto col = distributed(std::vector<double>(6, qnan), 3, 2, l);
    CHECK_THROWS_AS(ember::nanargmin(col), ember::value_error);
    CHECK(std::isnan(ember::nanmin(col)));
    // ptp and count_nonzero, exact
    CHECK(ember::ptp(a) != ember::ptp(a));  // NaN propagates through max and min, as in NumPy
    const auto z = distributed(std::vector<i64>{0, 3, 0, -2, 5, 0, 1, 0, 0, 7, 0, 0}, 4, 3, l);
    CHECK(ember::count_nonzero(z) == 5);
    CHECK(test::all_ranks(test::gathered(ember::eval(ember::count_nonzero(z, 0))) == std::vector<i64>{3, 2, 0}));
    CHECK(ember::ptp(z) == 9);
    CHECK(test::all_ranks(test::gathered(ember::eval(ember::ptp(z, 1))) == std::vector<i64>{3, 7, 1, 7}));
  }
}

TEST_CASE("average, allclose, array_equal, cov and corrcoef follow NumPy", "[ufunc][stats]") {
  const i64 k = 4, n = 11;
  std::vector<double> mv(std::size_t(k * n)), wv(std::size_t(k * n));
  for (i64 i = 0; i < k * n; ++i) {
    mv[std::size_t(i)] = std::cos(double(i) * 0.9) + double(i % n) * 0.1 * double(i / n);
    wv[std::size_t(i)] = 1.0 + double(i % 3);
  }
  // serial references
  double sw = 0, swx = 0;
  for (std::size_t i = 0; i < mv.size(); ++i) sw += wv[i], swx += wv[i] * mv[i];
  std::vector<double> c(std::size_t(k * k));
  for (i64 p = 0; p < k; ++p)
    for (i64 q = 0; q < k; ++q) {
      double mp = 0, mq = 0, s = 0;
      for (i64 j = 0; j < n; ++j) mp += mv[std::size_t(p * n + j)] / double(n), mq += mv[std::size_t(q * n + j)] / double(n);
      for (i64 j = 0; j < n; ++j) s += (mv[std::size_t(p * n + j)] - mp) * (mv[std::size_t(q * n + j)] - mq);
      c[std::size_t(p * k + q)] = s / double(n - 1);
    }
  for (const auto& l : layouts) {
    INFO(l.name);
    const auto m = distributed(mv, k, n, l);
    const auto w = distributed(wv, k, n, layouts[(&l - layouts + 1) % 4]);
    CHECK(ember::average(m, w) == Approx(swx / sw).epsilon(1e-12));
    CHECK(ember::average(m) == Approx(ember::mean(m)).epsilon(1e-15));
    const auto cm = test::gathered(ember::cov(m));
    CHECK(test::all_ranks(close_all(std::vector<double>(cm.begin(), cm.end()), c, 1e-12)));
    const auto ct = test::gathered(ember::cov(ember::eval(ember::transpose(m)), {.rowvar = false}));
    CHECK(test::all_ranks(close_all(std::vector<double>(ct.begin(), ct.end()), c, 1e-12)));
    const auto r = test::gathered(ember::corrcoef(m));
    bool ok = true;
    for (i64 p = 0; p < k; ++p)
      for (i64 q = 0; q < k; ++q)
        ok = ok && std::abs(r[std::size_t(p * k + q)] -
                            c[std::size_t(p * k + q)] / std::sqrt(c[std::size_t(p * k + p)] * c[std::size_t(q * k + q)])) < 1e-12;
    CHECK(test::all_ranks(ok));
    CHECK(ember::allclose(m, m + 1e-10));
    CHECK_FALSE(ember::allclose(m, m + 1e-3));
    CHECK(ember::array_equal(m, m));
    CHECK_FALSE(ember::array_equal(m, ember::transpose(m)));  // other shape: false, not an error
    auto hole = ember::eval(ember::where(m > 0.5, qnan, m));
    CHECK_FALSE(ember::array_equal(hole, hole));
    CHECK(ember::array_equal(hole, hole, true));
    CHECK(ember::allclose(hole, hole, {.equal_nan = true}));
  }
}
