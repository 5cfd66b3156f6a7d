// Issue 16's speed target: every new unary ufunc fused into r = f(a) * b + c on
// 2^25 float64 elements (2 ranks) against the same hand-written loop calling
// the same scalar function, into the same reused output: ratio <= 1.15 each;
// and complex128 a * b + c on 2^24 elements against a std::complex loop (<= 1.1).
//   mpirun -n 2 build/bench/bench_ufuncs [log2 n = 25] [rounds = 3]
#include <cmath>
#include <complex>
#include <string>

#include <ember.hpp>

#include "bench_util.hpp"

namespace {

template <class F>
void hand(const double* a, const double* b, const double* c, double* r, std::int64_t n, F f) {
  for (std::int64_t i = 0; i < n; ++i) r[i] = f(a[i]) * b[i] + c[i];
}

}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const int rank = w.rank();
  const std::int64_t n = std::int64_t(1) << (argc > 1 ? std::stoi(argv[1]) : 25);
  const int rounds = argc > 2 ? std::stoi(argv[2]) : 3;
  if (rank == 0)
    std::printf("ember ufunc benchmarks: %d ranks, r = f(a) * b + c on %lld float64, median of %d rounds\n", w.size(),
                (long long)n, rounds);
  // a in (0.05, 0.95): inside every function's domain (arccosh gets 1 + a)
  auto a = ember::eval(ember::random::rand<double>({n}, {.split = 0}) * 0.9 + 0.05);
  auto b = ember::random::randn<double>({n}, {.split = 0});
  auto c = ember::random::randn<double>({n}, {.split = 0});
  ember::dndarray<double, 1> r = ember::zeros_like(a);
  const std::int64_t ln = a.lnumel();
  auto out = ember::detail::allocate<double>(ln);
  int missed = 0;

#define EMBER_BENCH(NAME, EXPR, SCALAR)                                                                  \
  {                                                                                                      \
    const auto [ratio, base] = bench::ratio_rounds(                                                      \
        MPI_COMM_WORLD, rounds,                                                                          \
        [&] { hand(a.ldata(), b.ldata(), c.ldata(), out.get(), ln, [](double x) { return SCALAR; }); }, \
        [&] { r = EXPR * b + c; });                                                                      \
    missed += ratio > 1.15;                                                                              \
    bench::report(rank, NAME "(a) * b + c / hand loop", ratio, "<=", 1.15,                               \
                  "hand " + std::to_string(base * 1e3).substr(0, 7) + " ms");                            \
  }
  EMBER_BENCH("floor", ember::floor(a), std::floor(x))
  EMBER_BENCH("ceil", ember::ceil(a), std::ceil(x))
  EMBER_BENCH("trunc", ember::trunc(a), std::trunc(x))
  EMBER_BENCH("rint", ember::rint(a), std::nearbyint(x))
  EMBER_BENCH("round(., 2)", ember::round(a, 2), std::nearbyint(x * 100.0) / 100.0)
  EMBER_BENCH("sign", ember::sign(a), (x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x))
  EMBER_BENCH("square", ember::square(a), x * x)
  EMBER_BENCH("reciprocal", ember::reciprocal(a), 1.0 / x)
  EMBER_BENCH("cbrt", ember::cbrt(a), std::cbrt(x))
  EMBER_BENCH("tan", ember::tan(a), std::tan(x))
  EMBER_BENCH("arcsin", ember::arcsin(a), std::asin(x))
  EMBER_BENCH("arccos", ember::arccos(a), std::acos(x))
  EMBER_BENCH("arctan", ember::arctan(a), std::atan(x))
  EMBER_BENCH("sinh", ember::sinh(a), std::sinh(x))
  EMBER_BENCH("cosh", ember::cosh(a), std::cosh(x))
  EMBER_BENCH("arcsinh", ember::arcsinh(a), std::asinh(x))
  EMBER_BENCH("arccosh", ember::arccosh(a + 1.0), std::acosh(x + 1.0))
  EMBER_BENCH("arctanh", ember::arctanh(a), std::atanh(x))
  EMBER_BENCH("log2", ember::log2(a), std::log2(x))
  EMBER_BENCH("log10", ember::log10(a), std::log10(x))
  EMBER_BENCH("log1p", ember::log1p(a), std::log1p(x))
  EMBER_BENCH("expm1", ember::expm1(a), std::expm1(x))
  EMBER_BENCH("exp2", ember::exp2(a), std::exp2(x))
  EMBER_BENCH("deg2rad", ember::deg2rad(a), x * (3.141592653589793 / 180.0))
  EMBER_BENCH("rad2deg", ember::rad2deg(a), x * (180.0 / 3.141592653589793))
  EMBER_BENCH("angle", ember::angle(a), std::atan2(0.0, x))
  EMBER_BENCH("nan_to_num", ember::nan_to_num(a), std::isnan(x) ? 0.0 : x)
  EMBER_BENCH("isnan", ember::isnan(a), double(std::isnan(x)))
  EMBER_BENCH("isfinite", ember::isfinite(a), double(std::isfinite(x)))
  EMBER_BENCH("signbit", ember::signbit(a), double(std::signbit(x)))
  EMBER_BENCH("arctan2(., 0.5)", ember::arctan2(a, 0.5), std::atan2(x, 0.5))
  EMBER_BENCH("hypot(., 0.5)", ember::hypot(a, 0.5), std::hypot(x, 0.5))
  EMBER_BENCH("% 0.3", a % 0.3, ember::op::py_mod(x, 0.3))
  EMBER_BENCH("floor_divide(., 0.3)", ember::floor_divide(a, 0.3), ember::op::py_floordiv(x, 0.3))
  EMBER_BENCH("copysign(., -1)", ember::copysign(a, -1.0), std::copysign(x, -1.0))
#undef EMBER_BENCH

  // complex128 (and complex64) a * b + c on 2^24 elements against the
  // std::complex loop a C++ programmer writes, into a reused output
  {
    using namespace std::complex_literals;
    const std::int64_t m = n / 2;
    auto bench_complex = [&]<class T>(const char* name) {
      using F = typename T::value_type;
      auto re = [&] { return ember::random::randn<F>({m}, {.split = 0}); };
      ember::dndarray<T, 1> za = re() + 1.0i * re(), zb = re() + 1.0i * re(), zc = re() + 1.0i * re();
      ember::dndarray<T, 1> zr = ember::zeros_like(za);
      const std::int64_t lm = za.lnumel();
      auto zout = ember::detail::allocate<T>(lm);
      const auto [ratio, base] = bench::ratio_rounds(
          MPI_COMM_WORLD, rounds,
          [&] {
            const T *pa = za.ldata(), *pb = zb.ldata(), *pc = zc.ldata();
            T* pr = zout.get();
            for (std::int64_t i = 0; i < lm; ++i) pr[i] = pa[i] * pb[i] + pc[i];
          },
          [&] { zr = za * zb + zc; });
      missed += ratio > 1.1;
      bench::report(rank, (std::string(name) + " a * b + c (2^24) / std::complex loop").c_str(), ratio, "<=", 1.1,
                    "hand " + std::to_string(base * 1e3).substr(0, 7) + " ms");
    };
    bench_complex.template operator()<ember::complex128>("complex128");
    bench_complex.template operator()<ember::complex64>("complex64");
  }
  if (rank == 0) std::printf("ufuncs: %d of the targets missed\n", missed);
  return 0;
}
