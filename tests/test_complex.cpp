// Complex numbers (issue 16): complex64 and complex128 arrays through the whole
// pipeline - fused elementwise work mixing real arrays and complex scalars,
// reductions in every layout (NumPy's lexicographic min/max, combined across
// ranks by ember's own MPI operation), variance, matmul by zgemm/cgemm and
// ScaLAPACK's pzgemm, printing in NumPy's format - against serial loops over the
// gathered operands. The ufuncs one by one are in test_ufunc_table; NumPy runs
// the same programs in examples/complex_numpy.
#include <cmath>
#include <complex>
#include <random>
#include <sstream>

#include "common.hpp"

namespace {

using i64 = std::int64_t;
using c64 = ember::complex64;
using c128 = ember::complex128;
using namespace std::complex_literals;

template <class T>
std::vector<T> random_values(i64 n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) {
    if constexpr (ember::is_complex_v<T>) {
      using F = typename T::value_type;
      x = T(F(u(rng)), F(u(rng)));
    } else {
      x = T(u(rng));
    }
  }
  return v;
}

struct layout_case {
  const char* name;
  ember::split_axis split;
  bool uneven;
};
const layout_case layouts[] = {{"split 0", 0, false}, {"split 1", 1, false}, {"none", {}, false}, {"split 0 uneven", 0, true}};

template <class T>
ember::dndarray<T, 2> matrix(const std::vector<T>& v, i64 rows, i64 cols, const layout_case& l) {
  auto a = ember::array(std::span<const T>(v), std::array<i64, 2>{rows, cols}, {.split = l.split});
  if (l.uneven) test::unbalance(a);
  return a;
}

// The product and quotient written out (NumPy's formulas: the plain product,
// Smith's quotient), independently of ember's.
template <class F>
std::complex<F> product(std::complex<F> a, std::complex<F> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}
template <class F>
std::complex<F> quotient(std::complex<F> a, std::complex<F> b) {
  if (std::fabs(b.real()) >= std::fabs(b.imag())) {
    const F r = b.imag() / b.real(), s = F(1) / (b.real() + b.imag() * r);
    return {(a.real() + a.imag() * r) * s, (a.imag() - a.real() * r) * s};
  }
  const F r = b.real() / b.imag(), s = F(1) / (b.imag() + b.real() * r);
  return {(a.real() * r + a.imag()) * s, (a.imag() * r - a.real()) * s};
}

template <class T>
bool bit_equal(const std::vector<T>& got, const std::vector<T>& want) {
  return test::bit_equal(got, want);
}
// |got - want| <= tol * scale elementwise (sums and products, whose order differs).
template <class T>
bool close(const std::vector<T>& got, const std::vector<T>& want, double tol, double scale = 1) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(std::complex<double>(got[i]) - std::complex<double>(want[i])) <= tol * scale)) {
      UNSCOPED_INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
      return false;
    }
  return true;
}

}  // namespace

TEMPLATE_TEST_CASE("complex arithmetic fuses with real arrays and complex scalars, bit for bit", "[complex]", c64, c128) {
  using T = TestType;
  using F = typename T::value_type;
  const i64 rows = 11, cols = 7, n = rows * cols;
  const auto zv = random_values<T>(n, 1), wv = random_values<T>(n, 2);
  const auto xv = random_values<F>(n, 3);
  std::vector<T> want(static_cast<std::size_t>(n));
  const T s = T(F(0.5), F(-2));  // the scalar 0.5 - 2j, in the array's precision (a weak scalar)
  for (std::size_t i = 0; i < want.size(); ++i) {
    const T zw = product(zv[i], wv[i]);
    const T xs = product(T(xv[i], 0), s);
    const T q = quotient(zv[i], wv[i]);
    want[i] = T(zw.real() + xs.real() - q.real(), zw.imag() + xs.imag() - q.imag());
  }
  for (const auto& l : layouts) {
    INFO(ember::dtype_name<T>() << ", " << l.name);
    const auto z = matrix(zv, rows, cols, l), w = matrix(wv, rows, cols, layouts[(&l - layouts + 1) % 4]);
    const auto x = matrix(xv, rows, cols, layouts[(&l - layouts + 2) % 4]);
    const auto e = z * w + x * (0.5 - 2.0i) - z / w;
    static_assert(std::is_same_v<typename decltype(e)::value_type, T>);  // complex128 scalar, complex64 stays
    CHECK(test::all_ranks(bit_equal(test::gathered(ember::eval(e)), want)));
    // the parts, |z| and conj as real/complex results of the same pass
    ember::dndarray<F, 2> re = ember::real(e), im = ember::imag(e), mag = ember::abs(z);
    const auto gre = test::gathered(re), gim = test::gathered(im), gmag = test::gathered(mag);
    bool ok = true;
    for (std::size_t i = 0; i < want.size(); ++i)
      ok = ok && gre[i] == want[i].real() && gim[i] == want[i].imag() && gmag[i] == std::hypot(zv[i].real(), zv[i].imag());
    CHECK(test::all_ranks(ok));
    // in-place: z *= 1j writes into z's storage (a complex value into a real
    // array is a compile error: the same_kind rule)
    auto zc = z.copy();
    zc *= 1.0i;
    std::vector<T> rot(zv.size());
    for (std::size_t i = 0; i < zv.size(); ++i) rot[i] = product(zv[i], T(0, 1));
    CHECK(test::all_ranks(bit_equal(test::gathered(zc), rot)));
  }
  // promotion of mixed arrays: complex64 with float64 or an integer is complex128
  auto z64 = ember::zeros<c64>(std::array<i64, 1>{4});
  auto d = ember::ones<double>(std::array<i64, 1>{4});
  static_assert(std::is_same_v<typename decltype(z64 + d)::value_type, c128>);
  static_assert(std::is_same_v<typename decltype(z64 + ember::ones<float>(std::array<i64, 1>{4}))::value_type, c64>);
  static_assert(std::is_same_v<typename decltype(d * 1.0i)::value_type, c128>);
  static_assert(std::is_same_v<typename decltype(ember::abs(z64))::value_type, float>);
}

TEMPLATE_TEST_CASE("complex reductions in every layout: sum, prod, mean, NumPy's min/max order, var", "[complex]", c64,
                   c128) {
  using T = TestType;
  using F = typename T::value_type;
  const i64 rows = 9, cols = 6, n = rows * cols;
  auto v = random_values<T>(n, 7);
  // ties in the real part, so the imaginary part decides the order
  for (std::size_t i = 0; i < v.size(); i += 5) v[i] = T(F(1.5), v[i].imag());
  const double tol = std::is_same_v<F, float> ? 2e-5 : 1e-13;
  const auto less = [](T a, T b) { return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag()); };
  for (const auto& l : layouts) {
    INFO(ember::dtype_name<T>() << ", " << l.name);
    const auto a = matrix(v, rows, cols, l);
    // over all axes: the sum (order differs: to rounding), max/min and their indices exactly
    std::complex<double> sum = 0, prod = 1;
    std::size_t imax = 0, imin = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      sum += std::complex<double>(v[i]);
      if (i < 20) prod *= std::complex<double>(v[i]);
      if (less(v[imax], v[i])) imax = i;
      if (less(v[i], v[imin])) imin = i;
    }
    const T s = ember::sum(a);
    CHECK(test::all_ranks(std::abs(std::complex<double>(s) - sum) <= tol * double(n)));
    const T m = ember::mean(a);
    CHECK(test::all_ranks(std::abs(std::complex<double>(m) - sum / double(n)) <= tol));
    CHECK(test::all_ranks(ember::max(a) == v[imax] && ember::min(a) == v[imin]));
    CHECK(test::all_ranks(ember::argmax(a) == i64(imax) && ember::argmin(a) == i64(imin)));
    // the product of the first 20 (a flat view) and per-axis sums
    ember::dndarray<T, 1> flat = ember::ravel(a);
    const T p = ember::prod(flat(ember::slice(0, 20)));
    CHECK(test::all_ranks(std::abs(std::complex<double>(p) - prod) <= tol * 10 * std::abs(prod)));
    for (int axis : {0, 1}) {
      INFO("axis " << axis);
      const i64 len = axis == 0 ? cols : rows;
      std::vector<T> ws(static_cast<std::size_t>(len), T(0)), wmax(static_cast<std::size_t>(len));
      for (i64 i = 0; i < rows; ++i)
        for (i64 j = 0; j < cols; ++j) {
          const std::size_t k = std::size_t(axis == 0 ? j : i);
          const T x = v[std::size_t(i * cols + j)];
          ws[k] += x;
          if ((axis == 0 ? i : j) == 0 || less(wmax[k], x)) wmax[k] = x;
        }
      ember::dndarray<T, 1> gs = ember::sum(a, axis), gm = ember::max(a, axis);
      CHECK(test::all_ranks(close(test::gathered(gs), ws, tol, double(rows))));
      CHECK(test::all_ranks(bit_equal(test::gathered(gm), wmax)));
    }
    // variance: mean |z - mean z|^2, a real number; std its root
    double var = 0;
    for (auto x : v) var += std::norm(std::complex<double>(x) - sum / double(n));
    var /= double(n);
    const F got = ember::var(a);
    static_assert(std::is_same_v<decltype(ember::var(a)), F>);
    CHECK(test::all_ranks(std::fabs(double(got) - var) <= tol * var));
    CHECK(test::all_ranks(std::fabs(double(ember::std(a)) - std::sqrt(var)) <= tol * std::sqrt(var)));
  }
  // a NaN anywhere is the max and the min (NumPy propagates it), first index for argmax
  auto w = v;
  w[std::size_t(n - 3)] = T(F(0), std::numeric_limits<F>::quiet_NaN());
  w[std::size_t(n - 1)] = T(std::numeric_limits<F>::quiet_NaN(), F(1));
  for (const auto& l : layouts) {
    INFO("NaN, " << l.name);
    const auto a = matrix(w, rows, cols, l);
    const T mx = ember::max(a), mn = ember::min(a);
    const auto nan = [](T z) { return std::isnan(z.real()) || std::isnan(z.imag()); };
    CHECK(test::all_ranks(nan(mx) && nan(mn)));
    CHECK(test::all_ranks(ember::argmax(a) == n - 3 && ember::argmin(a) == n - 3));
    CHECK(test::all_ranks(ember::any(ember::isnan(a)) && !ember::all(ember::isfinite(a))));
  }
}

TEMPLATE_TEST_CASE("complex matmul: every split pair by zgemm/cgemm, and ScaLAPACK's pzgemm/pcgemm", "[complex][matmul]", c64,
                   c128) {
  using T = TestType;
  using F = typename T::value_type;
  const auto& c = ember::world();
  const i64 m = 13, k = 10, n = 7;
  const auto av = random_values<T>(m * k, 11), bv = random_values<T>(k * n, 12);
  std::vector<T> want(static_cast<std::size_t>(m * n));
  for (i64 i = 0; i < m; ++i)
    for (i64 j = 0; j < n; ++j) {
      std::complex<double> s = 0;
      for (i64 l = 0; l < k; ++l) s += std::complex<double>(av[std::size_t(i * k + l)]) * std::complex<double>(bv[std::size_t(l * n + j)]);
      want[std::size_t(i * n + j)] = T(s);
    }
  const double tol = std::is_same_v<F, float> ? 1e-5 : 1e-13;
  for (const auto& la : layouts)
    for (const auto& lb : layouts) {
      INFO(ember::dtype_name<T>() << ": A " << la.name << ", B " << lb.name);
      const auto A = matrix(av, m, k, la), B = matrix(bv, k, n, lb);
      ember::dndarray<T, 2> C = ember::matmul(A, B);
      CHECK(test::all_ranks(close(test::gathered(C), want, tol, double(k))));
    }
  // the 2-D algorithm through the runtime (the planner picks it at scale only)
  const ember::layout a0 = ember::layout::balanced({m, k}, 0, c.size());
  const ember::layout b1 = ember::layout::balanced({k, n}, 1, c.size());
  const ember::matmul_problem pr{ember::matmul_algorithm::summa, a0, b1, ember::layout::balanced({m, n}, 0, c.size()),
                                 std::int64_t(sizeof(T))};
  const auto Ag = matrix(av, m, k, layouts[2]), Bg = matrix(bv, k, n, layouts[2]);
  ember::dndarray<T, 2> Al = Ag.moved_to(pr.a), Bl = Bg.moved_to(pr.b);
  ember::dndarray<T, 2> Cl(pr.c, c);
  ember::run_matmul<T>(pr, c, Al.ldata(), Bl.ldata(), Cl.ldata());
  CHECK(test::all_ranks(close(test::gathered(Cl), want, tol, double(k))));
}

TEST_CASE("complex arrays print as NumPy prints them", "[complex][print]") {
  const auto p = [](std::vector<c128> v) {
    auto a = ember::array(std::span<const c128>(v), std::array<i64, 1>{i64(v.size())}, {.split = 0});
    return ember::to_string(a);
  };
  const std::string tail = ", dtype=ember.complex128, device=cpu, split=0)";
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // the expected text is NumPy 1.24's np.array2string(x, separator=', ', prefix='DNDarray(')
  CHECK(p({{1, 2}, {-0.5, -1.25}, {3, 0}}) == "DNDarray([ 1. +2.j  , -0.5-1.25j,  3. +0.j  ]" + tail);
  CHECK(p({{1e-5, 1}, {1e10, -2}}) == "DNDarray([1.e-05+1.j, 1.e+10-2.j]" + tail);
  CHECK(p({{inf, nan}, {1, 0}, {-0.0, -inf}}) == "DNDarray([inf+nanj,  1. +0.j, -0.-infj]" + tail);
  std::vector<c128> m = {{1, 1}, {2, -2}, {0.25, 0}, {-0.0, -3}};
  auto a = ember::array(std::span<const c128>(m), std::array<i64, 2>{2, 2}, {.split = 1});
  CHECK(ember::to_string(a) ==
        "DNDarray([[ 1.  +1.j,  2.  -2.j],\n          [ 0.25+0.j, -0.  -3.j]], dtype=ember.complex128, device=cpu, split=1)");
  std::vector<c64> f = {c64(1.0f / 3, -2.0f / 3)};
  auto b = ember::array(std::span<const c64>(f), std::array<i64, 1>{1}, {.split = 0});
  CHECK(ember::to_string(b) == "DNDarray([0.33333334-0.6666667j], dtype=ember.complex64, device=cpu, split=0)");
}

TEST_CASE("norms of complex vectors and matrices are of the moduli, real-valued", "[complex][linalg]") {
  const i64 rows = 9, cols = 5;
  const auto v = random_values<c128>(rows * cols, 21);
  double fro = 0, l1 = 0, linf = 0;
  std::vector<double> row2(static_cast<std::size_t>(rows), 0.0);
  for (i64 i = 0; i < rows; ++i)
    for (i64 j = 0; j < cols; ++j) {
      const double m = std::abs(v[std::size_t(i * cols + j)]);
      fro += m * m;
      l1 += m;
      linf = std::max(linf, m);
      row2[std::size_t(i)] += m * m;
    }
  for (auto& r : row2) r = std::sqrt(r);
  for (const auto& l : layouts) {
    INFO(l.name);
    const auto a = matrix(v, rows, cols, l);
    ember::dndarray<c128, 1> flat = ember::ravel(a);
    static_assert(std::is_same_v<decltype(ember::linalg::norm(flat)), double>);
    CHECK(test::all_ranks(std::fabs(ember::linalg::norm(flat) - std::sqrt(fro)) <= 1e-14 * std::sqrt(fro)));
    CHECK(test::all_ranks(std::fabs(ember::linalg::norm(flat, 1) - l1) <= 1e-14 * l1));
    CHECK(test::all_ranks(ember::linalg::norm(flat, ember::linalg::inf) == linf));
    CHECK(test::all_ranks(std::fabs(ember::linalg::norm(a) - std::sqrt(fro)) <= 1e-14 * std::sqrt(fro)));
    ember::dndarray<double, 1> r = ember::linalg::norm(a, 2, 1);  // along rows: |z|, never the real part
    const auto g = test::gathered(r);
    bool ok = true;
    for (std::size_t i = 0; i < g.size(); ++i) ok = ok && std::fabs(g[i] - row2[i]) <= 1e-14 * row2[i];
    CHECK(test::all_ranks(ok));
  }
}
