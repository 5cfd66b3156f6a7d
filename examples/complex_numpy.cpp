// Complex numbers as a NumPy user writes them: a field of phasors built from a
// real array, arithmetic with complex scalars, every ufunc NumPy defines for
// complex numbers, NumPy's order for min/max and comparisons, reductions,
// variance, a complex matrix product (zgemm) - on data with NaN and infinities in
// either part and signed zeros. NumPy runs the same program on the same .npy
// input and compares every result: bit for bit where NumPy's formula is
// ember's (arithmetic, sqrt, exp, log, ... through the same C library), within
// a few ulps of |z| where the last bit is a library's (NumPy's SIMD |z|, C's
// casin, ...) or a summation order's.
//
//   x = np.load(in)                                   # split by rows over the ranks
//   z = x * (1 - 0.5j) + 1j * np.roll(x, 3, 0)        # the roll crosses ranks: a halo
//   z = np.where(abs(x) < 0.05, complex(nan, 1), np.where(x > 2.2, complex(inf, -1), ...))
//   w = np.conj(z) + 0.5
//   z * w, z / w, z ** 2, np.exp(z), np.log(z), np.sign(z), z < w, np.maximum(z, w), z.max(), z.sum(0), ...
//
//   mpirun -n 3 build/examples/complex_numpy in.npy out_dir
//   python3 -c "$(sed -n '/^\/\/ CHECK/,$p' examples/complex_numpy.cpp | cut -c4- | tail -n +2)" in.npy out_dir
#include <complex>
#include <cstdio>
#include <limits>
#include <string>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  if (argc < 3) {
    if (ember::world().rank() == 0) std::fprintf(stderr, "usage: complex_numpy in.npy out_dir\n");
    return 2;
  }
  using namespace std::complex_literals;
  namespace em = ember;
  using c128 = em::complex128;
  const std::string in = argv[1], out = argv[2];
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  auto x = em::io::load_npy<double, 2>(in, {.split = 0});
  auto save = [&](const char* name, const auto& e) { em::io::save_npy(em::eval(e), out + "/" + name + ".npy"); };

  em::dndarray<c128, 2> z0 = x * (1.0 - 0.5i) + 1.0i * em::roll(x, 3, 0);
  em::dndarray<c128, 2> z =
      em::where(em::abs(x) < 0.05, c128(nan, 1),
                em::where(x > 2.2, c128(inf, -1),
                          em::where(x < -2.2, c128(1, -inf),
                                    em::where(em::abs(x) < 0.1, c128(-0.0, 0.0), em::where(em::abs(x) < 0.15, -z0, z0)))));
  em::dndarray<c128, 2> w = em::conj(z) + 0.5;
  em::dndarray<em::complex64, 2> f = z.astype<em::complex64>();

  // exact in NumPy (compared bit for bit)
  save("z", z);
  save("mul", z * w);
  save("div", z / w);
  save("div_real", z / x);  // complex / float64
  save("axpy", 2.5 * z - 1.0i * x + w);
  save("neg", -z);
  save("conj", em::conj(z));
  save("real", em::real(z));
  save("imag", em::imag(z));
  save("abs", em::abs(z));
  save("square", em::square(z));
  save("reciprocal", em::reciprocal(z));
  save("pow2", em::power(z, 2.0));
  save("pow_int", em::power(z, -3.0));
  save("isnan", em::isnan(z));
  save("isinf", em::isinf(z));
  save("isfinite", em::isfinite(z));
  save("eq", z == w);
  save("lt", z < w);
  save("ge", z >= w);
  save("minimum", em::minimum(z, w));
  save("maximum", em::maximum(z, w));
  save("rint", em::rint(z * 3.0));
  save("round1", em::round(z, 1));
  save("nan_to_num", em::nan_to_num(z));
  save("isclose", em::isclose(z, z + 1e-9));
  save("logical_and", em::logical_and(z, w));
  save("f_mul", f * f + 1.0i);  // complex64 stays complex64 with a Python complex scalar
  save("f_abs", em::abs(f));    // float32
  save("exp", em::exp(z));
  save("log", em::log(z));
  save("sqrt", em::sqrt(z));
  save("colmax", z.max(0));
  save("argmax_rows", em::argmax(z, 1));
  // within a few ulps of |want| (a C library's last bit, or a sum's order)
  save("sign", em::sign(z));
  save("sin", em::sin(z));
  save("cos", em::cos(z));
  save("tan", em::tan(z / 4.0));
  save("sinh", em::sinh(z / 4.0));
  save("cosh", em::cosh(z / 4.0));
  save("tanh", em::tanh(z));
  save("arcsin", em::arcsin(z));
  save("arccos", em::arccos(z));
  save("arctan", em::arctan(z));
  save("arcsinh", em::arcsinh(z));
  save("arccosh", em::arccosh(z));
  save("arctanh", em::arctanh(z));
  save("log2", em::log2(z));
  save("log10", em::log10(z));
  save("log1p", em::log1p(z));
  save("expm1", em::expm1(z));
  save("exp2", em::exp2(z));
  save("angle", em::angle(z));
  save("pow", em::power(z, w));
  save("f_exp", em::exp(f));
  // reductions over the finite part (z0 has no NaN): sums to rounding, the extremes exactly
  save("colsum", em::sum(z0, 0));
  save("rowmean", em::mean(z0, 1));
  save("colvar", em::var(z0, 0));  // real
  save("product", em::matmul(z0, em::transpose(em::conj(z0))));  // zgemm: z0 @ z0^H
  const c128 total = em::sum(z0), top = em::max(z0), bottom = em::min(z);
  const std::int64_t at = em::argmax(z0);
  if (em::world().rank() == 0) {
    std::FILE* s = std::fopen((out + "/scalars.txt").c_str(), "w");
    std::fprintf(s, "%.17g %.17g %.17g %.17g %.17g %.17g %lld\n", total.real(), total.imag(), top.real(), top.imag(),
                 bottom.real(), bottom.imag(), static_cast<long long>(at));
    std::fclose(s);
    std::printf("complex_numpy: z %lld x %lld on %d ranks, sum %.6f%+.6fj; results saved\n",
                static_cast<long long>(z.shape()[0]), static_cast<long long>(z.shape()[1]), em::world().size(),
                total.real(), total.imag());
  }
  return 0;
}

// CHECK (NumPy, run on the same input; exits non-zero on the first difference)
// import numpy as np, sys
// np.seterr(all="ignore")
// x = np.load(sys.argv[1]); d = sys.argv[2]
// def got(name, want):
//     g = np.load(f"{d}/{name}.npy")
//     assert g.shape == want.shape, f"{name}: shape {g.shape} != {want.shape}"
//     assert g.dtype == want.dtype, f"{name}: dtype {g.dtype} != {want.dtype}"
//     return g
// def parts(a):
//     return [a.real, a.imag] if a.dtype.kind == "c" else [a]
// def same(name, want):
//     g = got(name, want)
//     for gp, wp in zip(parts(g), parts(want)):
//         eq = (gp == wp) | (np.isnan(gp) & np.isnan(wp)) if gp.dtype.kind == "f" else gp == wp
//         if gp.dtype.kind == "f": eq &= (np.signbit(gp) == np.signbit(wp)) | np.isnan(gp)
//         assert eq.all(), f"{name} differs at {np.argwhere(~eq)[:3].tolist()}: {g[~eq][:3]} vs {want[~eq][:3]}"
// def ulps(name, want, n=4):
//     g = got(name, want)
//     fin = np.isfinite(want)
//     for gp, wp in zip(parts(g), parts(want)):
//         assert ((gp == wp) | (np.isnan(gp) & np.isnan(wp)) | fin).all(), f"{name}: special values differ"
//     scale = np.spacing(np.abs(want[fin]).astype(g.real.dtype))
//     err = np.abs(g[fin] - want[fin]) / np.maximum(scale, np.finfo(g.real.dtype).tiny)
//     assert (err <= n).all(), f"{name}: {err.max()} ulps of |z|"
// nan, inf = np.nan, np.inf
// z0 = x * (1 - 0.5j) + 1j * np.roll(x, 3, 0)
// z = np.where(abs(x) < 0.05, complex(nan, 1), np.where(x > 2.2, complex(inf, -1), np.where(x < -2.2, complex(1, -inf),
//     np.where(abs(x) < 0.1, complex(-0.0, 0.0), np.where(abs(x) < 0.15, -z0, z0)))))
// w = np.conj(z) + 0.5; f = z.astype(np.complex64)
// same("z", z); same("mul", z * w); same("div", z / w); same("div_real", z / x); same("axpy", 2.5 * z - 1j * x + w)
// same("neg", -z); same("conj", np.conj(z)); same("real", z.real.copy()); same("imag", z.imag.copy())
// same("square", np.square(z)); same("reciprocal", np.reciprocal(z)); same("pow2", np.power(z, 2.0)); same("pow_int", np.power(z, -3.0))  # (z ** 2.0 is np.square)
// same("isnan", np.isnan(z)); same("isinf", np.isinf(z)); same("isfinite", np.isfinite(z))
// same("eq", z == w); same("lt", z < w); same("ge", z >= w); same("minimum", np.minimum(z, w)); same("maximum", np.maximum(z, w))
// same("rint", np.rint(z * 3.0)); same("round1", np.round(z, 1)); same("nan_to_num", np.nan_to_num(z))
// if np.__version__ >= "2": same("isclose", np.isclose(z, z + 1e-9))
// else:  # NumPy < 2 multiplies complex infinities by 1 + 0j first (inf * 0 = nan): NumPy 2's formula
//     y = z + 1e-9; same("isclose", (np.abs(z - y) <= 1e-8 + 1e-5 * np.abs(y)) & np.isfinite(y) | (z == y))
// same("logical_and", np.logical_and(z, w))
// same("f_mul", f * f + np.complex64(1j))
// same("exp", np.exp(z)); same("log", np.log(z)); same("sqrt", np.sqrt(z))
// same("colmax", z.max(0)); same("argmax_rows", np.argmax(z, 1))
// if np.__version__ >= "2":
//     ulps("sign", np.sign(z))
// else:  # NumPy < 2 defines sign(z) as sign(z.real) + 0j; ember follows NumPy 2's z / |z|
//     a = np.abs(z)
//     ulps("sign", np.where(np.isfinite(a) & (a > 0), z / np.where(a > 0, a, 1), np.load(f"{d}/sign.npy")))
// ulps("abs", np.abs(z), 2); ulps("f_abs", np.abs(f), 2)  # NumPy's SIMD |z| (AVX-512) is not C's hypot to the last bit
// ulps("sin", np.sin(z)); ulps("cos", np.cos(z)); ulps("tan", np.tan(z / 4.0)); ulps("sinh", np.sinh(z / 4.0))
// ulps("cosh", np.cosh(z / 4.0)); ulps("tanh", np.tanh(z)); ulps("arcsin", np.arcsin(z)); ulps("arccos", np.arccos(z))
// ulps("arctan", np.arctan(z)); ulps("arcsinh", np.arcsinh(z)); ulps("arccosh", np.arccosh(z)); ulps("arctanh", np.arctanh(z))
// ulps("log2", np.log2(z)); ulps("log10", np.log10(z)); ulps("log1p", np.log1p(z)); ulps("expm1", np.expm1(z))
// ulps("exp2", np.exp2(z)); ulps("angle", np.angle(z)); ulps("pow", z ** w); ulps("f_exp", np.exp(f))
// def near(name, want, scale):  # a different summation order: to rounding of the terms' magnitudes
//     g = got(name, want); assert (np.abs(g - want) <= 1e-14 * scale).all(), f"{name}: {np.abs(g - want).max()}"
// near("colsum", z0.sum(0), np.abs(z0).sum(0)); near("rowmean", z0.mean(1), np.abs(z0).mean(1))
// near("colvar", z0.var(0), 10 * z0.var(0))
// p = z0 @ z0.conj().T
// g = got("product", p); assert (np.abs(g - p) <= 1e-13 * (np.abs(z0) ** 2).sum(1).max()).all(), "product"
// t = [float(v) for v in open(f"{d}/scalars.txt").read().split()]
// s = z0.sum(); assert abs(complex(t[0], t[1]) - s) <= 1e-13 * np.abs(z0).sum(), ("sum", t[:2], s)
// assert complex(t[2], t[3]) == z0.max() and int(t[6]) == np.argmax(z0), ("max", t, z0.max(), np.argmax(z0))
// zm = z.min(); assert np.isnan(zm) == np.isnan(complex(t[4], t[5])) and (np.isnan(zm) or complex(t[4], t[5]) == zm), ("min", t[4:6], zm)
