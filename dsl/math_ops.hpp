// NumPy's ufuncs beyond arithmetic, as tag types like those of ops.hpp (a name,
// a result type, the scalar function): rounding, integer division, the rest of
// the transcendental functions, predicates, logical and bitwise operations.
// Each follows NumPy's definition to the bit where NumPy defines one (integer
// division by zero gives 0, shifts past the width give 0 or -1, remainder takes
// the divisor's sign, integer overflow wraps); where a C library function is
// the definition (sin, log1p, ...), ember calls the same one NumPy's scalar
// path calls.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

namespace ember::op {

// ---- integer and floating division with Python's conventions (NumPy's npy_divmod) ----
// Floating: the remainder takes the divisor's sign, the quotient is
// floor((a - mod) / b) snapped to the nearest integer; b == 0 gives fmod's NaN
// and a / b. Integer: b == 0 gives 0 for both (NumPy warns), MIN // -1 wraps to MIN.
template <class T>
EMBER_HD T py_floordiv(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0) return T(0);
    if (std::is_signed_v<T> && b == T(-1)) return wrap_neg(a);
    T q = T(a / b);
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    if (b == 0) return a / b;
    const T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    if (div != 0) {
      T f = std::floor(div);
      if (div - f > T(0.5)) f += T(1);
      return f;
    }
    return std::copysign(T(0), a / b);
  }
}
template <class T>
EMBER_HD T py_mod(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0 || (std::is_signed_v<T> && b == T(-1))) return T(0);
    T r = T(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = T(r + b);
    return r;
  } else {
    T mod = std::fmod(a, b);
    if (b == 0) return mod;
    if (mod != 0) {
      if ((b < 0) != (mod < 0)) mod += b;
    } else {
      mod = std::copysign(T(0), b);
    }
    return mod;
  }
}

// A binary op computed in the operands' common type C (its result type, unless
// that is bool); its result type is RES<A, B> (an alias template: promote_t,
// arith_t or bool_result).
template <class A, class B>
using bool_result = bool;
// Integer arithmetic on two bools is int8 arithmetic in NumPy (True % True is int8 0).
template <class A, class B>
using arith_t = std::conditional_t<std::is_same_v<A, bool> && std::is_same_v<B, bool>, std::int8_t, promote_t<A, B>>;
#define EMBER_BINARY_C(NAME, RES, ...)                         \
  struct NAME {                                                \
    static constexpr std::string_view name = #NAME;            \
    template <class A, class B>                                \
    using result = RES<A, B>;                                  \
    template <class R, class A, class B>                       \
    EMBER_HD static R apply(A a_, B b_) {                      \
      using C = std::conditional_t<std::is_same_v<RES<A, B>, bool>, promote_t<A, B>, RES<A, B>>; \
      [[maybe_unused]] const C a = C(a_), b = C(b_);           \
      return R(__VA_ARGS__);                                   \
    }                                                          \
  };
template <class T>
EMBER_HD T fmod_of(T a, T b) {
  if constexpr (is_int_v<T>) return (b == 0 || (std::is_signed_v<T> && b == T(-1))) ? T(0) : T(a % b);
  else return std::fmod(a, b);
}
EMBER_BINARY_C(remainder, arith_t, py_mod(a, b))
EMBER_BINARY_C(floor_divide, arith_t, py_floordiv(a, b))
EMBER_BINARY_C(fmod, arith_t, fmod_of(a, b))
// Floating results: each operand's float type (float_t), promoted, as NumPy
// picks the smallest float loop both operands cast to (int16 and uint16: float32).
template <class T>
using float_part_t = std::conditional_t<std::is_same_v<T, bool>, float, float_t<T>>;  // (bool fits any float)
template <class A, class B>
using float2_t = std::conditional_t<std::is_same_v<A, bool> && std::is_same_v<B, bool>, double,
                                    promote_t<float_part_t<A>, float_part_t<B>>>;
#define EMBER_BINARY_F(NAME, EXPR)                               \
  struct NAME {                                                  \
    static constexpr std::string_view name = #NAME;              \
    template <class A, class B>                                  \
    using result = float2_t<A, B>;                               \
    template <class R, class A, class B>                         \
    EMBER_HD static R apply(A a_, B b_) {                        \
      [[maybe_unused]] const R a = R(a_), b = R(b_);             \
      return R(EXPR);                                            \
    }                                                            \
  };
EMBER_BINARY_F(arctan2, std::atan2(a, b))
EMBER_BINARY_F(hypot, std::hypot(a, b))
EMBER_BINARY_F(copysign, std::copysign(a, b))
EMBER_BINARY_F(nextafter, std::nextafter(a, b))
// heaviside(x, h0): 0 below zero, h0 at zero, 1 above, NaN for NaN.
EMBER_BINARY_F(heaviside, a < 0 ? R(0) : a > 0 ? R(1) : a == 0 ? b : a)
#undef EMBER_BINARY_F

// ---- logical (any dtype; the result is bool) ----
EMBER_BINARY_C(logical_and, bool_result, truth(a) && truth(b))
EMBER_BINARY_C(logical_or, bool_result, truth(a) || truth(b))
EMBER_BINARY_C(logical_xor, bool_result, truth(a) != truth(b))

// ---- bitwise (integers and bool) ----
EMBER_BINARY_C(bitwise_and, promote_t, a & b)
EMBER_BINARY_C(bitwise_or, promote_t, a | b)
EMBER_BINARY_C(bitwise_xor, promote_t, a ^ b)
// Shifts by a count at or past the width (or negative) give 0, or -1 for a
// negative value shifted right (NumPy's npy_lshift/npy_rshift); never C++'s UB.
template <class T>
EMBER_HD T shift_left(T a, T b) {
  using U = wide_unsigned_t<T>;
  return U(b) < U(sizeof(T) * 8) ? T(U(a) << U(b)) : T(0);
}
template <class T>
EMBER_HD T shift_right(T a, T b) {
  using U = wide_unsigned_t<T>;
  return U(b) < U(sizeof(T) * 8) ? T(a >> U(b)) : T(a < 0 ? -1 : 0);
}
EMBER_BINARY_C(left_shift, arith_t, shift_left(a, b))
EMBER_BINARY_C(right_shift, arith_t, shift_right(a, b))
#undef EMBER_BINARY_C

// ---- unary ----
// A unary op whose result type is RES (A is the operand's type, `a` its value,
// `R` the result type); the rest is the body of its scalar function.
#define EMBER_UNARY_AS(NAME, RES, ...)              \
  struct NAME {                                     \
    static constexpr std::string_view name = #NAME; \
    template <class A>                              \
    using result = RES;                             \
    template <class R, class A>                     \
    EMBER_HD static R apply([[maybe_unused]] A a) { \
      __VA_ARGS__                                   \
    }                                               \
  };
// Complex logarithms and exponentials beyond C's: NumPy's formulas (nc_log2,
// nc_log10, nc_exp2, nc_log1p, nc_expm1), so the results agree to the bit.
// log(z) scaled part by part (NumPy's nc_log2 and nc_log10: log(z) * log2(e), * log10(e)).
template <class X>
EMBER_HD X scaled_log(X x, real_of_t<X> k) {
  const X l = std::log(x);
  return {l.real() * k, l.imag() * k};
}
template <class X>
EMBER_HD X log2_of(X x) {
  if constexpr (is_complex_v<X>) return scaled_log(x, real_of_t<X>(1.442695040888963407359924681001892137));
  else return std::log2(x);
}
template <class X>
EMBER_HD X log10_of(X x) {
  if constexpr (is_complex_v<X>) return scaled_log(x, real_of_t<X>(0.434294481903251827651128918916605082));
  else return std::log10(x);
}
template <class X>
EMBER_HD X exp2_of(X x) {
  if constexpr (is_complex_v<X>) {
    using T = real_of_t<X>;
    return std::exp(X(x.real() * T(0.693147180559945309417232121458176568), x.imag() * T(0.693147180559945309417232121458176568)));
  } else return std::exp2(x);
}
template <class X>
EMBER_HD X log1p_of(X x) {
  if constexpr (is_complex_v<X>) return {std::log(std::hypot(x.real() + 1, x.imag())), std::atan2(x.imag(), x.real() + 1)};
  else return std::log1p(x);
}
template <class X>
EMBER_HD X expm1_of(X x) {
  if constexpr (is_complex_v<X>) {
    const auto a = std::sin(x.imag() / 2);
    return {std::expm1(x.real()) * std::cos(x.imag()) - 2 * a * a, std::exp(x.real()) * std::sin(x.imag())};
  } else return std::expm1(x);
}
// Both parts of a complex number through a real function `f`; a real one through `f`.
template <class X, class F>
EMBER_HD X partwise(X x, F f) {
  if constexpr (is_complex_v<X>) return {f(x.real()), f(x.imag())};
  else return f(x);
}

// Floating functions of x (integers and bool compute in float64; complex stays complex).
#define EMBER_UNARY_F(NAME, ...) \
  EMBER_UNARY_AS(NAME, float_t<A>, using X = float_t<A>; [[maybe_unused]] const X x = X(a); return R(__VA_ARGS__);)
EMBER_UNARY_F(tan, std::tan(x))
EMBER_UNARY_F(arcsin, std::asin(x))
EMBER_UNARY_F(arccos, std::acos(x))
EMBER_UNARY_F(arctan, std::atan(x))
EMBER_UNARY_F(sinh, std::sinh(x))
EMBER_UNARY_F(cosh, std::cosh(x))
EMBER_UNARY_F(arcsinh, std::asinh(x))
EMBER_UNARY_F(arccosh, std::acosh(x))
EMBER_UNARY_F(arctanh, std::atanh(x))
EMBER_UNARY_F(log2, log2_of(x))
EMBER_UNARY_F(log10, log10_of(x))
EMBER_UNARY_F(log1p, log1p_of(x))
EMBER_UNARY_F(expm1, expm1_of(x))
EMBER_UNARY_F(exp2, exp2_of(x))
EMBER_UNARY_F(cbrt, std::cbrt(x))
// (pi / 180 rounded once in the result type, as NumPy's npy_deg2rad)
EMBER_UNARY_F(deg2rad, x * (X(3.141592653589793238462643383279502884) / X(180)))
EMBER_UNARY_F(rad2deg, x * (X(180) / X(3.141592653589793238462643383279502884)))
// Round half to even in the default rounding mode (C's rint, not round).
EMBER_UNARY_F(rint, partwise(x, [](auto v) { return std::nearbyint(v); }))
#undef EMBER_UNARY_F
// The angle of a complex number, atan2(imag, real), a real number; of a real
// number 0, or pi for a negative one (atan2(0, x): -0.0 gives pi).
EMBER_UNARY_AS(angle, real_of_t<float_t<A>>, using X = float_t<A>; const X x = X(a);
               if constexpr (is_complex_v<X>) return R(std::atan2(x.imag(), x.real()));
               else return R(std::atan2(X(0), x));)

// Rounding keeps integer dtypes (NumPy >= 2.1: floor/ceil/trunc of an integer
// array is that array); floating values round in their own type.
#define EMBER_UNARY_ROUND(NAME)                               \
  EMBER_UNARY_AS(NAME, A,                                     \
                 if constexpr (std::is_floating_point_v<A>) { \
                   return R(std::NAME(a));                    \
                 } else {                                     \
                   return R(a);                               \
                 })
EMBER_UNARY_ROUND(floor)
EMBER_UNARY_ROUND(ceil)
EMBER_UNARY_ROUND(trunc)
#undef EMBER_UNARY_ROUND

// Arithmetic on a bool is int8 arithmetic (NumPy's loops start at int8).
template <class A>
using arith1_t = std::conditional_t<std::is_same_v<A, bool>, std::int8_t, A>;
EMBER_UNARY_AS(square, arith1_t<A>, return R(wrap_mul(R(a), R(a)));)
// sign: -1, 0 or 1 in the operand's type; NaN stays NaN, -0.0 gives 0. Of a
// complex number NumPy 2's z / |z| (0 for 0, NaN for NaN, the direction of an
// infinite part, NaN for two).
template <class C>
EMBER_HD C complex_sign(C z) {
  using T = typename C::value_type;
  const T r = z.real(), i = z.imag(), m = std::hypot(r, i);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  if (m != m) return {nan, nan};
  if (std::isinf(m)) {
    if (std::isinf(r)) return std::isinf(i) ? C(nan, nan) : C(r > 0 ? 1 : -1, 0);
    return {0, i > 0 ? T(1) : T(-1)};
  }
  if (m == 0) return {0, 0};
  return {r / m, i / m};
}
EMBER_UNARY_AS(sign, arith1_t<A>,
               if constexpr (is_complex_v<A>) return complex_sign(a);
               else return R(a > A(0) ? R(1) : a < A(0) ? R(-1) : a == A(0) ? R(0) : R(a));)
// 1 / x in the operand's type: for integers NumPy's int(1.0 / x) (1 and -1 give
// themselves, other values 0, and 0 the most negative value, as 1.0 / 0 = inf
// converts on x86).
EMBER_UNARY_AS(reciprocal, arith1_t<A>,
               if constexpr (is_complex_v<A>) {
                 // NumPy's: divide by the larger part (no overflow in |z|^2)
                 using T = typename A::value_type;
                 const T re = a.real(), im = a.imag();
                 if (std::fabs(im) <= std::fabs(re)) {
                   const T r = im / re, d = re + im * r;
                   return R(T(1) / d, -r / d);
                 }
                 const T r = re / im, d = re * r + im;
                 return R(r / d, T(-1) / d);
               } else if constexpr (std::is_floating_point_v<A>) {
                 return R(A(1) / a);
               } else {
                 // (1 / 0 is inf, which x86 converts to the most negative 32- or 64-bit
                 // value; narrower and unsigned types keep its low bits, 0)
                 constexpr A at_zero = std::is_signed_v<A> && sizeof(A) >= 4 ? std::numeric_limits<A>::lowest() : A(0);
                 return R(a == A(1) ? A(1) : (std::is_signed_v<A> && a == A(-1)) ? A(-1) : a == A(0) ? at_zero : A(0));
               })
EMBER_UNARY_AS(positive, A, return R(a);)
// The parts of a complex number (real numbers are their own real part and
// conjugate; their imaginary part is 0).
EMBER_UNARY_AS(real, real_of_t<A>, if constexpr (is_complex_v<A>) return R(a.real()); else return R(a);)
EMBER_UNARY_AS(imag, real_of_t<A>, if constexpr (is_complex_v<A>) return R(a.imag()); else return R(0);)
EMBER_UNARY_AS(conj, A, if constexpr (is_complex_v<A>) return std::conj(a); else return R(a);)

// ---- predicates (the result is bool) ----
// (complex: NaN or infinite in either part, finite in both)
#define EMBER_PREDICATE(NAME, FLOAT_EXPR, INT_EXPR, COMPLEX_EXPR) \
  EMBER_UNARY_AS(NAME, bool,                            \
                 if constexpr (is_complex_v<A>) {       \
                   return bool(COMPLEX_EXPR);           \
                 } else if constexpr (std::is_floating_point_v<A>) { \
                   return bool(FLOAT_EXPR);             \
                 } else {                               \
                   return bool(INT_EXPR);               \
                 })
EMBER_PREDICATE(isnan, std::isnan(a), false, std::isnan(a.real()) || std::isnan(a.imag()))
EMBER_PREDICATE(isinf, std::isinf(a), false, std::isinf(a.real()) || std::isinf(a.imag()))
EMBER_PREDICATE(isfinite, std::isfinite(a), true, std::isfinite(a.real()) && std::isfinite(a.imag()))
EMBER_PREDICATE(signbit, std::signbit(a), a < A(0), false)
#undef EMBER_PREDICATE
EMBER_UNARY_AS(logical_not, bool, return !truth(a);)
// ~x: bitwise not of an integer, logical not of a bool (NumPy's invert).
EMBER_UNARY_AS(invert, A,
               if constexpr (std::is_same_v<A, bool>) {
                 return R(!a);
               } else {
                 return R(A(~a));
               })
#undef EMBER_UNARY_AS

// ---- with parameters (scalar operands of the node, so one kernel serves every value) ----
// x rounded half to even, inline: |x| + 2^52 (2^23 for float) rounds to an
// integer in the default rounding mode, and subtracting it back is exact; the
// sign (and -0) is copied back. Equal to rint/nearbyint there, without the
// libm call that keeps round(a, d)'s kernel from vectorizing and spills the
// scale around every call. Under -ffast-math (which may fold the two additions)
// it is nearbyint itself.
template <class A>
EMBER_HD A round_half_even(A x) {
#if defined(__FAST_MATH__)
  return std::nearbyint(x);
#else
  constexpr A big = std::is_same_v<A, float> ? A(8388608.0f) : A(4503599627370496.0);
  const A ax = std::fabs(x);
  if (!(ax < big)) return x;  // already an integer, or inf, or NaN
  return std::copysign((ax + big) - big, x);
#endif
}
// round(x, decimals): half to even at 10^-decimals. Floating as NumPy's around
// (x * 10^d rounded, / 10^d; for d < 0, x / 10^-d rounded, * 10^-d); integers
// exactly, in integer arithmetic (unchanged for d >= 0).
struct round {
  static constexpr std::string_view name = "round";
  template <class A, class D>
  using result = A;
  template <class R, class A, class D>
  EMBER_HD static R apply(A x, D d_) {
    const std::int64_t d = std::int64_t(d_);
    if constexpr (is_complex_v<A>) {  // each part (NumPy's around of a complex array)
      using T = typename A::value_type;
      return R(apply<T>(x.real(), d_), apply<T>(x.imag(), d_));
    } else if constexpr (std::is_floating_point_v<A>) {
      if (d == 0) return round_half_even(x);
      const A f = A(pow10(d < 0 ? -d : d));
      return d > 0 ? round_half_even(x * f) / f : round_half_even(x / f) * f;
    } else if constexpr (std::is_same_v<A, bool>) {
      return x;
    } else {
      if (d >= 0) return x;
      if (-d >= std::int64_t(std::numeric_limits<A>::digits10) + 1) return A(0);
      const A f = A(pow10(-d));
      A q = py_floordiv(x, f);
      const A r = A(x - q * f);  // 0 <= r < f
      if (r > f - r || (r == f - r && (q % 2) != 0)) ++q;
      return wrap_mul(q, f);
    }
  }
  // 10^e: a table up to 1e22 (every power of ten a double holds exactly), so a
  // fused round(a, d) pays one load per element, not a loop of multiplies
  // (static: a plain local array is rebuilt on the stack per call, 1.8x slower).
  EMBER_HD static double pow10(std::int64_t e) {
    static constexpr double exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    if (e <= 22) return exact[e];
    double p = 1e22;
    for (std::int64_t i = 22; i < e; ++i) p *= 10;
    return p;
  }
};
// nan_to_num(x, nan, posinf, neginf): NaN and the infinities replaced; integers unchanged.
struct nan_to_num {
  static constexpr std::string_view name = "nan_to_num";
  template <class A, class N, class P, class M>
  using result = A;
  template <class R, class A, class N, class P, class M>
  EMBER_HD static R apply(A x, N n, P p, M m) {
    if constexpr (is_complex_v<A>)  // each part, with the real replacement values
      return R(apply<real_of_t<A>>(x.real(), n.real(), p.real(), m.real()),
               apply<real_of_t<A>>(x.imag(), n.real(), p.real(), m.real()));
    else if constexpr (std::is_floating_point_v<A>) return x != x ? R(n) : x == std::numeric_limits<A>::infinity() ? R(p) : x == -std::numeric_limits<A>::infinity() ? R(m) : x;
    else return x;
  }
};
// isclose(a, b, rtol, atol, equal_nan): |a - b| <= atol + rtol * |b|, NumPy's
// asymmetric test; infinities are close only to themselves.
struct isclose {
  static constexpr std::string_view name = "isclose";
  template <class A, class B, class T1, class T2, class E>
  using result = bool;
  template <class R, class A, class B, class T1, class T2, class E>
  EMBER_HD static R apply(A a_, B b_, T1 rtol, T2 atol, E equal_nan) {
    using C = float_t<promote_t<A, B>>;
    using F = real_of_t<C>;
    const C a = C(a_), b = C(b_);
    if (is_nan(a) || is_nan(b)) return bool(equal_nan) && is_nan(a) && is_nan(b);
    if (!finite(a) || !finite(b)) return a == b;
    return F(std::abs(a - b)) <= F(atol) + F(rtol) * F(std::abs(b));
  }
  template <class C>
  EMBER_HD static bool finite(C z) {
    if constexpr (is_complex_v<C>) return std::isfinite(z.real()) && std::isfinite(z.imag());
    else return std::isfinite(z);
  }
};

}  // namespace ember::op
