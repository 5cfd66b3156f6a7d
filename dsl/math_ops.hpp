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
    if (b == T(-1)) return wrap_neg(a);
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
    if (b == 0 || b == T(-1)) return T(0);
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

// A binary op computed in the operands' common type C; its result type is
// RES<A, B> (an alias template: promote_t, or bool_result).
template <class A, class B>
using bool_result = bool;
#define EMBER_BINARY_C(NAME, RES, ...)                         \
  struct NAME {                                                \
    static constexpr std::string_view name = #NAME;            \
    template <class A, class B>                                \
    using result = RES<A, B>;                                  \
    template <class R, class A, class B>                       \
    EMBER_HD static R apply(A a_, B b_) {                      \
      using C = promote_t<A, B>;                               \
      [[maybe_unused]] const C a = C(a_), b = C(b_);           \
      return R(__VA_ARGS__);                                   \
    }                                                          \
  };
template <class T>
EMBER_HD T fmod_of(T a, T b) {
  if constexpr (is_int_v<T>) return (b == 0 || b == T(-1)) ? T(0) : T(a % b);
  else return std::fmod(a, b);
}
EMBER_BINARY_C(remainder, promote_t, py_mod(a, b))
EMBER_BINARY_C(floor_divide, promote_t, py_floordiv(a, b))
EMBER_BINARY_C(fmod, promote_t, fmod_of(a, b))
// Floating results: integers compute in float64.
template <class A, class B>
using float2_t = float_t<promote_t<A, B>>;
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
EMBER_BINARY_C(logical_and, bool_result, bool(a) && bool(b))
EMBER_BINARY_C(logical_or, bool_result, bool(a) || bool(b))
EMBER_BINARY_C(logical_xor, bool_result, bool(a) != bool(b))

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
EMBER_BINARY_C(left_shift, promote_t, shift_left(a, b))
EMBER_BINARY_C(right_shift, promote_t, shift_right(a, b))
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
// Floating functions of x (integers and bool compute in float64).
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
EMBER_UNARY_F(log2, std::log2(x))
EMBER_UNARY_F(log10, std::log10(x))
EMBER_UNARY_F(log1p, std::log1p(x))
EMBER_UNARY_F(expm1, std::expm1(x))
EMBER_UNARY_F(exp2, std::exp2(x))
EMBER_UNARY_F(cbrt, std::cbrt(x))
// (pi / 180 rounded once in the result type, as NumPy's npy_deg2rad)
EMBER_UNARY_F(deg2rad, x * (X(3.141592653589793238462643383279502884) / X(180)))
EMBER_UNARY_F(rad2deg, x * (X(180) / X(3.141592653589793238462643383279502884)))
// Round half to even in the default rounding mode (C's rint, not round).
EMBER_UNARY_F(rint, std::nearbyint(x))
// The angle of a real number: 0, or pi for a negative one (atan2(0, x): -0.0 gives pi).
EMBER_UNARY_F(angle, std::atan2(X(0), x))
#undef EMBER_UNARY_F

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

EMBER_UNARY_AS(square, A, return R(wrap_mul(a, a));)
// sign: -1, 0 or 1 in the operand's type; NaN stays NaN, -0.0 gives 0.
EMBER_UNARY_AS(sign, A, return R(a > A(0) ? A(1) : a < A(0) ? A(-1) : a == A(0) ? A(0) : a);)
// 1 / x in the operand's type: for integers NumPy's int(1.0 / x) (1 and -1 give
// themselves, other values 0, and 0 the most negative value, as 1.0 / 0 = inf
// converts on x86).
EMBER_UNARY_AS(reciprocal, A,
               if constexpr (std::is_floating_point_v<A>) {
                 return R(A(1) / a);
               } else {
                 return R(a == A(1) ? A(1) : a == A(-1) ? A(-1) : a == A(0) ? std::numeric_limits<A>::lowest() : A(0));
               })
EMBER_UNARY_AS(positive, A, return R(a);)
// Real numbers are their own real part and conjugate; their imaginary part is 0.
EMBER_UNARY_AS(real, A, return R(a);)
EMBER_UNARY_AS(conj, A, return R(a);)
EMBER_UNARY_AS(imag, A, return R(A(0));)

// ---- predicates (the result is bool) ----
#define EMBER_PREDICATE(NAME, FLOAT_EXPR, INT_EXPR)     \
  EMBER_UNARY_AS(NAME, bool,                            \
                 if constexpr (std::is_floating_point_v<A>) { \
                   return bool(FLOAT_EXPR);             \
                 } else {                               \
                   return bool(INT_EXPR);               \
                 })
EMBER_PREDICATE(isnan, std::isnan(a), false)
EMBER_PREDICATE(isinf, std::isinf(a), false)
EMBER_PREDICATE(isfinite, std::isfinite(a), true)
EMBER_PREDICATE(signbit, std::signbit(a), a < A(0))
#undef EMBER_PREDICATE
EMBER_UNARY_AS(logical_not, bool, return !bool(a);)
// ~x: bitwise not of an integer, logical not of a bool (NumPy's invert).
EMBER_UNARY_AS(invert, A,
               if constexpr (std::is_same_v<A, bool>) {
                 return R(!a);
               } else {
                 return R(A(~a));
               })
#undef EMBER_UNARY_AS

// ---- with parameters (scalar operands of the node, so one kernel serves every value) ----
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
    if constexpr (std::is_floating_point_v<A>) {
      if (d == 0) return std::nearbyint(x);
      const A f = A(pow10(d < 0 ? -d : d));
      return d > 0 ? std::nearbyint(x * f) / f : std::nearbyint(x / f) * f;
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
    if constexpr (std::is_floating_point_v<A>) return x != x ? R(n) : x == std::numeric_limits<A>::infinity() ? R(p) : x == -std::numeric_limits<A>::infinity() ? R(m) : x;
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
    const C a = C(a_), b = C(b_);
    if (a != a || b != b) return bool(equal_nan) && a != a && b != b;
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::fabs(a - b) <= C(atol) + C(rtol) * std::fabs(b);
  }
};

}  // namespace ember::op
