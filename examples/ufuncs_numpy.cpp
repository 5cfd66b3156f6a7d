// NumPy's everyday math, ported line by line: rounding, integer division,
// remainders, bit operations, predicates, the transcendental functions, in-place
// operators and member spellings, on data with NaN, infinities, -0.0,
// subnormals and integer division by zero. NumPy runs the same program on the
// same .npy input and compares every result: bit for bit where NumPy's result
// is exact, within 4 ulps for the functions whose last bit differs between
// math libraries (sin, log1p, ...). The check is the Python below.
//
//   x = np.load(in)                                          # split by rows over the ranks
//   y = np.where(abs(x) < 0.05, nan, np.where(x > 2.2, inf, np.where(x < -2.2, -inf,
//       np.where(abs(x) < 0.1, -0.0, np.where(abs(x) < 0.15, x * 1e-310, x * 3)))))
//   i = np.floor(x * 10).astype(np.int64);  j = (x * 4).astype(np.int32)
//   np.floor(y), np.round(y, 2), y % 1.5, np.fmod(y, -1.5), y // 0.7, np.arctan2(y, x), ...
//   i % j, i // j, i << 2, i >> 1, i & 6, i ^ j, ~i, np.round(i, -1), ...
//   z = y.copy(); z += x; z *= 2
//
//   mpirun -n 3 build/examples/ufuncs_numpy in.npy out_dir
//   python3 -c "$(sed -n '/^\/\/ CHECK/,$p' examples/ufuncs_numpy.cpp | cut -c4- | tail -n +2)" in.npy out_dir
#include <cstdio>
#include <limits>
#include <string>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  if (argc < 3) {
    if (ember::world().rank() == 0) std::fprintf(stderr, "usage: ufuncs_numpy in.npy out_dir\n");
    return 2;
  }
  const std::string in = argv[1], out = argv[2];
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  namespace em = ember;
  auto x = em::io::load_npy<double, 2>(in, {.split = 0});
  auto save = [&](const char* name, const auto& e) { em::io::save_npy(em::eval(e), out + "/" + name + ".npy"); };

  em::dndarray<double, 2> y =
      em::where(em::abs(x) < 0.05, nan,
                em::where(x > 2.2, inf,
                          em::where(x < -2.2, -inf,
                                    em::where(em::abs(x) < 0.1, -0.0, em::where(em::abs(x) < 0.15, x * 1e-310, x * 3)))));
  em::dndarray<std::int64_t, 2> i = em::astype<std::int64_t>(em::floor(x * 10));
  em::dndarray<std::int32_t, 2> j = em::astype<std::int32_t>(x * 4);
  em::dndarray<float, 2> f = y.astype<float>();

  // exact in NumPy (compared bit for bit)
  save("floor", em::floor(y));
  save("ceil", em::ceil(y));
  save("trunc", em::trunc(y));
  save("rint", em::rint(y));
  save("round2", em::round(y, 2));
  save("sign", em::sign(y));
  save("square", em::square(y));
  save("absolute", em::absolute(y));
  save("reciprocal", em::reciprocal(y));
  save("sqrt", em::sqrt(y));
  save("isnan", em::isnan(y));
  save("isinf", em::isinf(y));
  save("isfinite", em::isfinite(y));
  save("signbit", em::signbit(y));
  save("nan_to_num", em::nan_to_num(y));
  save("mod", y % 1.5);
  save("fmod", em::fmod(y, -1.5));
  save("floordiv", em::floor_divide(y, 0.7));
  save("copysign", em::copysign(x, y));
  save("nextafter", em::nextafter(y, 0.0));
  save("heaviside", em::heaviside(y, 0.5));
  save("minimum", em::minimum(y, x));
  save("maximum", em::maximum(y, x));
  save("logic", em::logical_and(y, x) ^ em::logical_or(y > 1.0, x < 0.0) ^ em::logical_xor(y, x) ^ em::logical_not(y));
  save("deg2rad", em::deg2rad(y));
  save("rad2deg", em::rad2deg(y));
  save("isclose", em::isclose(y, y + 1e-9));
  save("f_floor", em::floor(f));
  save("f_mod", f % 1.5);  // a Python-style scalar keeps float32
  save("f_plus_j", f + j);  // float32 + int32 is float64
  // within 4 ulps of NumPy (last-bit differences between math libraries)
  save("tan", em::tan(y));
  save("arcsin", em::arcsin(y / 4));
  save("arccos", em::arccos(y / 4));
  save("arctan", em::arctan(y));
  save("sinh", em::sinh(y / 8));
  save("cosh", em::cosh(y / 8));
  save("arcsinh", em::arcsinh(y));
  save("arccosh", em::arccosh(y));
  save("arctanh", em::arctanh(y / 8));
  save("log2", em::log2(y));
  save("log10", em::log10(y));
  save("log1p", em::log1p(y));
  save("expm1", em::expm1(y));
  save("exp2", em::exp2(y));
  save("cbrt", em::cbrt(y));
  save("arctan2", em::arctan2(y, x));
  save("hypot", em::hypot(y, x));
  save("f_sin", em::sin(f));
  // integers: Python's division rules, 0 for division by zero, bit operations
  save("i_mod3", i % 3);
  save("i_mod_neg", i % -4);
  save("i_floordiv", em::floor_divide(i, 3));
  save("i_floordiv_j", em::floor_divide(i, j));  // j has zeros
  save("i_mod_j", i % j);
  save("i_fmod_j", em::fmod(i, j));
  save("i_shl", i << 2);
  save("i_shr", i >> 1);
  save("i_and", i & 6);
  save("i_or", i | 1);
  save("i_xor_j", i ^ j);  // int64 ^ int32 is int64
  save("i_invert", ~i);
  save("i_sign", em::sign(i));
  save("i_square", em::square(i));
  save("i_abs", em::abs(i));
  save("i_floor", em::floor(i));  // an int64 array (NumPy >= 2.1)
  save("i_round", em::round(i, -1));
  save("i_minimum_j", em::minimum(i, j));
  save("j_reciprocal", em::reciprocal(j));
  auto [q, r] = em::divmod(i, j);
  auto [qv, rv] = em::eval(q, r);  // one pass over i and j
  em::io::save_npy(qv, out + "/divmod_q.npy");
  em::io::save_npy(rv, out + "/divmod_r.npy");
  // int8 and the unsigned types: wrapping, NumPy's mixed-signedness promotion
  em::dndarray<std::uint8_t, 2> u = em::astype<std::uint8_t>(em::abs(x) * 80);
  em::dndarray<std::int8_t, 2> s8 = em::astype<std::int8_t>(x * 50);
  save("u_add", u + u);                   // uint8, wraps
  save("u_sub", u - 200);                 // a Python-style scalar keeps uint8
  save("u_mul_s8", u * s8);               // int16
  save("u_div_s8", u / s8);               // float64
  save("u_floordiv", em::floor_divide(u, 7));
  save("u_mod_s8", u % s8);               // int16; s8 has zeros
  save("u_shl", u << 3);
  save("u_shr_s8", u >> em::abs(s8));    // shifts past the width give 0
  save("u_sqrt", em::sqrt(u));            // float32 (NumPy: float16)
  save("s8_neg", -s8);
  save("s8_abs", em::abs(s8));            // abs(-128) wraps to -128
  save("s8_reciprocal", em::reciprocal(s8));
  save("u_colsum", u.sum(0));             // uint64
  save("s8_rowmean", em::mean(s8, 1));    // float64
  save("u_rowmax", u.max(1));
  save("u64", em::astype<std::uint64_t>(u) * 0x0123456789abcdefull);  // wraps modulo 2^64
  save("u64_mix", em::astype<std::uint64_t>(u) + i);  // uint64 + int64 is float64
  save("b_mod", (x > 0) % (x < 1));       // bool % bool is int8
  // in-place operators and members
  auto z = y.copy();
  z += x;
  z *= 2;
  em::io::save_npy(z, out + "/z.npy");
  auto k = i.copy();
  k %= 5;
  k <<= 1;
  k |= 1;
  em::io::save_npy(k, out + "/k.npy");
  save("colmax", x.max(0));
  save("T", x.T());
  // factories and norms
  const auto n = x.shape()[0];
  em::io::save_npy(em::logspace(-3.0, 2.5, n, {.split = 0}), out + "/logspace.npy");
  em::io::save_npy(em::logspace(0.0, 8.0, 9, {.split = 0, .endpoint = false, .base = 2.0}), out + "/logspace2.npy");
  em::io::save_npy(em::geomspace(1.0, 1000.0, n, {.split = 0}), out + "/geomspace.npy");
  em::io::save_npy(em::geomspace(-2.0, -0.001, 7, {.split = 0}), out + "/geomspace_neg.npy");
  em::io::save_npy(em::full_like(i, 2.9), out + "/full_like.npy");  // truncated to int64, as NumPy
  em::io::save_npy(em::linalg::norm(x, 2, 1), out + "/norm2_rows.npy");
  em::io::save_npy(em::linalg::norm(x, 1, 0), out + "/norm1_cols.npy");
  em::io::save_npy(em::linalg::norm(x * 3, inf, 1), out + "/norminf_rows.npy");  // an expression: one pass
  em::io::save_npy(em::linalg::norm(i, 3, 0), out + "/norm3_cols.npy");
  save("power", em::power(em::abs(x), 1.5));
  const double total = x.sum(), mean = x.mean();
  if (em::world().rank() == 0)
    std::printf("ufuncs_numpy: x %lld x %lld on %d ranks, sum %.6f, mean %.6f; results saved\n",
                static_cast<long long>(x.shape()[0]), static_cast<long long>(x.shape()[1]), em::world().size(), total,
                mean);
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
// def same(name, want):
//     g = got(name, want)
//     eq = (g == want) | (np.isnan(g) & np.isnan(want)) if g.dtype.kind == "f" else g == want
//     if g.dtype.kind == "f": eq &= (np.signbit(g) == np.signbit(want)) | np.isnan(g)
//     assert eq.all(), f"{name} differs at {np.argwhere(~eq)[:3].tolist()}: {g[~eq][:3]} vs {want[~eq][:3]}"
// def ulps(name, want, n=4):
//     g = got(name, want)
//     fin = np.isfinite(want)
//     assert ((g == want) | (np.isnan(g) & np.isnan(want)) | fin).all(), f"{name}: special values differ"
//     err = np.abs(g[fin] - want[fin]) / np.spacing(np.abs(want[fin]).astype(want.dtype))
//     assert (err <= n).all(), f"{name}: {err.max()} ulps"
// nan, inf = np.nan, np.inf
// y = np.where(abs(x) < 0.05, nan, np.where(x > 2.2, inf, np.where(x < -2.2, -inf,
//     np.where(abs(x) < 0.1, -0.0, np.where(abs(x) < 0.15, x * 1e-310, x * 3)))))
// i = np.floor(x * 10).astype(np.int64); j = (x * 4).astype(np.int32); f = y.astype(np.float32)
// same("floor", np.floor(y)); same("ceil", np.ceil(y)); same("trunc", np.trunc(y)); same("rint", np.rint(y))
// same("round2", np.round(y, 2)); same("sign", np.sign(y)); same("square", np.square(y))
// same("absolute", np.absolute(y)); same("reciprocal", np.reciprocal(y)); same("sqrt", np.sqrt(y))
// same("isnan", np.isnan(y)); same("isinf", np.isinf(y)); same("isfinite", np.isfinite(y))
// same("signbit", np.signbit(y)); same("nan_to_num", np.nan_to_num(y))
// same("mod", y % 1.5); same("fmod", np.fmod(y, -1.5)); same("floordiv", y // 0.7)
// same("copysign", np.copysign(x, y)); same("nextafter", np.nextafter(y, 0.0)); same("heaviside", np.heaviside(y, 0.5))
// same("minimum", np.minimum(y, x)); same("maximum", np.maximum(y, x))
// same("logic", np.logical_and(y, x) ^ np.logical_or(y > 1.0, x < 0.0) ^ np.logical_xor(y, x) ^ np.logical_not(y))
// same("deg2rad", np.deg2rad(y)); same("rad2deg", np.rad2deg(y)); same("isclose", np.isclose(y, y + 1e-9))
// same("f_floor", np.floor(f)); same("f_mod", f % np.float32(1.5)); same("f_plus_j", f + j)
// ulps("tan", np.tan(y)); ulps("arcsin", np.arcsin(y / 4)); ulps("arccos", np.arccos(y / 4))
// ulps("arctan", np.arctan(y)); ulps("sinh", np.sinh(y / 8)); ulps("cosh", np.cosh(y / 8))
// ulps("arcsinh", np.arcsinh(y)); ulps("arccosh", np.arccosh(y)); ulps("arctanh", np.arctanh(y / 8))
// ulps("log2", np.log2(y)); ulps("log10", np.log10(y)); ulps("log1p", np.log1p(y)); ulps("expm1", np.expm1(y))
// ulps("exp2", np.exp2(y)); ulps("cbrt", np.cbrt(y)); ulps("arctan2", np.arctan2(y, x)); ulps("hypot", np.hypot(y, x))
// ulps("f_sin", np.sin(f))
// same("i_mod3", i % 3); same("i_mod_neg", i % -4); same("i_floordiv", i // 3); same("i_floordiv_j", i // j)
// same("i_mod_j", i % j); same("i_fmod_j", np.fmod(i, j)); same("i_shl", i << 2); same("i_shr", i >> 1)
// same("i_and", i & 6); same("i_or", i | 1); same("i_xor_j", i ^ j); same("i_invert", ~i)
// same("i_sign", np.sign(i)); same("i_square", np.square(i)); same("i_abs", np.abs(i))
// same("i_floor", np.floor(i).astype(i.dtype))  # NumPy < 2.1 returns float64 here; >= 2.1 int64, as ember
// same("i_round", np.round(i, -1)); same("i_minimum_j", np.minimum(i, j)); same("j_reciprocal", np.reciprocal(j))
// dq, dr = np.divmod(i, j); same("divmod_q", dq); same("divmod_r", dr)
// u = (np.abs(x) * 80).astype(np.uint8); s8 = (x * 50).astype(np.int8)
// same("u_add", u + u); same("u_sub", u - np.uint8(200)); same("u_mul_s8", u * s8); same("u_div_s8", u / s8)
// same("u_floordiv", u // np.uint8(7)); same("u_mod_s8", u % s8); same("u_shl", u << np.uint8(3))
// same("u_shr_s8", u >> np.abs(s8)); same("u_sqrt", np.sqrt(u.astype(np.float32))); same("s8_neg", -s8)
// same("s8_abs", np.abs(s8)); same("s8_reciprocal", np.reciprocal(s8)); same("u_colsum", u.sum(0))
// same("s8_rowmean", s8.mean(1)); same("u_rowmax", u.max(1)); same("u64", u.astype(np.uint64) * np.uint64(0x0123456789abcdef))
// same("u64_mix", u.astype(np.uint64) + i); same("b_mod", (x > 0) % (x < 1))
// z = y.copy(); z += x; z *= 2; same("z", z)
// k = i.copy(); k %= 5; k <<= 1; k |= 1; same("k", k)
// same("colmax", x.max(0)); same("T", x.T)
// n = x.shape[0]
// # (ulps, not bits: NumPy's power on an AVX-512 machine is SVML's, up to 1 ulp from glibc's pow ember calls)
// ulps("logspace", np.logspace(-3.0, 2.5, n)); ulps("logspace2", np.logspace(0.0, 8.0, 9, endpoint=False, base=2.0))
// ulps("geomspace", np.geomspace(1.0, 1000.0, n)); ulps("geomspace_neg", np.geomspace(-2.0, -0.001, 7))
// g = np.load(f"{d}/geomspace.npy"); assert g[0] == 1.0 and g[-1] == 1000.0, "geomspace: endpoints not exact"
// same("full_like", np.full_like(i, 2.9))
// def close(name, want):
//     g = got(name, want); assert np.allclose(g, want, rtol=1e-13, atol=0), f"{name}: {abs(g - want).max()}"
// close("norm2_rows", np.linalg.norm(x, 2, 1)); close("norm1_cols", np.linalg.norm(x, 1, 0))
// same("norminf_rows", np.linalg.norm(x * 3, np.inf, 1)); close("norm3_cols", np.linalg.norm(i, 3, 0))
// ulps("power", np.power(np.abs(x), 1.5))
// print("numpy check ok")
