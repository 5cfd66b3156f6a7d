// Elementwise operations and reductions as small tag types: a name (for plans),
// a result type (NumPy's promotion rules), and the scalar function. The one list
// of operations: kernels (and later the GPU path) instantiate these, nothing else.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "../runtime/reduce_op.hpp"
#include "dtype.hpp"

// The scalar functions run in host loops and, compiled by nvcc, in the GPU's
// fused kernels (dsl/device_kernels.cuh): one list of operations for both.
#if defined(__CUDACC__)
#define EMBER_HD __host__ __device__
#else
#define EMBER_HD
#endif

namespace ember::op {

// ---- type promotion (NumPy 2: bool < integers < floating < complex) ----
template <class T>
constexpr int kind_of() {
  return std::is_same_v<T, bool> ? 0 : std::is_integral_v<T> ? 1 : is_complex_v<T> ? 3 : 2;
}

namespace detail {
// Two real types' promotion, NumPy's table: bool yields to anything; integers of
// one signedness to the wider; a signed and an unsigned one to the signed type
// that holds both (int8 + uint8 is int16), float64 when none does (int64 +
// uint64); an integer with float32 stays float32 up to 16 bits (float32 +
// int16), float64 beyond.
template <class A, class B>
constexpr auto promote_real_of() {
  if constexpr (std::is_same_v<A, B> || std::is_same_v<B, bool>) return std::type_identity<A>{};
  else if constexpr (std::is_same_v<A, bool>) return std::type_identity<B>{};
  else if constexpr (std::is_floating_point_v<A> && std::is_floating_point_v<B>)
    return std::type_identity<std::conditional_t<(sizeof(A) >= sizeof(B)), A, B>>{};
  else if constexpr (std::is_floating_point_v<B>) return promote_real_of<B, A>();
  else if constexpr (std::is_floating_point_v<A>)  // B an integer
    return std::type_identity<std::conditional_t<(std::is_same_v<A, float> && sizeof(B) <= 2), float, double>>{};
  else if constexpr (std::is_signed_v<A> == std::is_signed_v<B>)
    return std::type_identity<std::conditional_t<(sizeof(A) >= sizeof(B)), A, B>>{};
  else {
    using S = std::conditional_t<std::is_signed_v<A>, A, B>;
    using U = std::conditional_t<std::is_signed_v<A>, B, A>;
    if constexpr (sizeof(S) > sizeof(U)) return std::type_identity<S>{};
    else if constexpr (sizeof(U) == 1) return std::type_identity<std::int16_t>{};
    else if constexpr (sizeof(U) == 2) return std::type_identity<std::int32_t>{};
    else if constexpr (sizeof(U) == 4) return std::type_identity<std::int64_t>{};
    else return std::type_identity<double>{};
  }
}
template <class A, class B>
using promote_real_t = typename decltype(promote_real_of<A, B>())::type;
}  // namespace detail

// With a complex operand the result is complex of the precision the real parts
// promote to (complex64 with float32 or bool stays complex64; with float64 or an
// integer it is complex128), as NumPy's table.
template <class A, class B>
struct promote {
  using type = std::conditional_t<
      kind_of<A>() == 3 || kind_of<B>() == 3,
      std::complex<std::conditional_t<
          std::is_same_v<detail::promote_real_t<real_of_t<A>, real_of_t<B>>, float>, float, double>>,
      detail::promote_real_t<A, B>>;
};
template <class A, class B>
using promote_t = typename promote<A, B>::type;
template <class A, class B, class C>
using promote3_t = promote_t<promote_t<A, B>, C>;

// A Python-style scalar does not widen an array of the same kind (float32 * 2.0 is
// float32); of a higher kind it gives that kind's default (int32 * 2.5 is float64),
// except that a complex scalar keeps a floating array's precision (float32 * 1j
// is complex64, NumPy 2's weak promotion).
template <class Scalar, class Array>
using weak_scalar_t = std::conditional_t<
    (kind_of<Scalar>() <= kind_of<Array>()), Array,
    std::conditional_t<
        kind_of<Scalar>() == 3, std::complex<std::conditional_t<std::is_same_v<Array, float>, float, double>>,
        std::conditional_t<kind_of<Scalar>() == 2, double, std::conditional_t<kind_of<Scalar>() == 1, std::int64_t, bool>>>>;

// Floating result of a math function: NumPy's smallest float that holds the
// integer type (float32 for 8- and 16-bit integers, where NumPy uses float16 for
// 8 bits, which ember does not have; float64 beyond, and for bool); floating and
// complex types stay.
template <class T>
using float_t = std::conditional_t<std::is_floating_point_v<T> || is_complex_v<T>, T,
                                   std::conditional_t<(std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) <= 2),
                                                      float, double>>;
// The result of a mean or a true division of integers: float64, as NumPy's.
template <class T>
using mean_t = std::conditional_t<std::is_floating_point_v<T> || is_complex_v<T>, T, double>;

template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// ---- complex arithmetic, as NumPy computes it (to the bit) ----
// Products and quotients by NumPy's formulas, not C's Annex G (whose NaN
// recovery calls __muldc3/__divdc3 and keeps loops from vectorizing): the plain
// product, and Smith's quotient with NumPy's branch for a zero divisor.
template <class T>
EMBER_HD std::complex<T> cmul(std::complex<T> a, std::complex<T> b) {
  const T ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  return {ar * br - ai * bi, ar * bi + ai * br};
}
template <class T>
EMBER_HD std::complex<T> cdiv(std::complex<T> a, std::complex<T> b) {
  const T ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  const T abr = br < 0 ? -br : br, abi = bi < 0 ? -bi : bi;
  if (abr >= abi) {
    if (abr == 0 && abi == 0) return {ar / abr, ai / abr};  // inf or NaN, as NumPy
    const T rat = bi / br, scl = T(1) / (br + bi * rat);
    return {(ar + ai * rat) * scl, (ai - ar * rat) * scl};
  }
  const T rat = br / bi, scl = T(1) / (bi + br * rat);
  return {(ar * rat + ai) * scl, (ai * rat - ar) * scl};
}
// NaN in either part.
template <class T>
EMBER_HD bool is_nan(T a) {
  if constexpr (is_complex_v<T>) return a.real() != a.real() || a.imag() != a.imag();
  else return a != a;
}
// Ordering: complex numbers compare lexicographically (real part, then
// imaginary), with NumPy's rule that a NaN imaginary part makes the real
// comparison false (CLT/CLE/CGT/CGE of NumPy's loops).
template <class T>
EMBER_HD bool less(T a, T b) {
  if constexpr (is_complex_v<T>)
    return (a.real() < b.real() && a.imag() == a.imag() && b.imag() == b.imag()) ||
           (a.real() == b.real() && a.imag() < b.imag());
  else return a < b;
}
template <class T>
EMBER_HD bool less_equal(T a, T b) {
  if constexpr (is_complex_v<T>)
    return (a.real() < b.real() && a.imag() == a.imag() && b.imag() == b.imag()) ||
           (a.real() == b.real() && a.imag() <= b.imag());
  else return a <= b;
}
// Truth value: nonzero (for complex, either part).
template <class T>
EMBER_HD bool truth(T a) {
  if constexpr (is_complex_v<T>) return a.real() != 0 || a.imag() != 0;
  else return bool(a);
}
// Conversion to a dtype: from complex to a real type the real part (NumPy's
// ComplexWarning cast), to bool the truth value; otherwise a C++ conversion.
template <class R, class A>
EMBER_HD R convert(A a) {
  if constexpr (std::is_same_v<R, A>) return a;
  else if constexpr (is_complex_v<A> && std::is_same_v<R, bool>) return truth(a);
  else if constexpr (is_complex_v<A> && !is_complex_v<R>) return R(a.real());
  else if constexpr (is_complex_v<R> && !is_complex_v<A>) return R(typename R::value_type(a), 0);
  else return R(a);
}

// Integer arithmetic wraps as NumPy's does (two's complement), never C++'s
// undefined signed overflow: computed unsigned, at least as wide as unsigned
// int (so narrow types are not promoted back to signed int first).
template <class T>
using wide_unsigned_t = std::common_type_t<unsigned, std::make_unsigned_t<T>>;
template <class T>
EMBER_HD T wrap_add(T a, T b) {
  if constexpr (is_int_v<T>) return T(wide_unsigned_t<T>(a) + wide_unsigned_t<T>(b));
  else return T(a + b);
}
template <class T>
EMBER_HD T wrap_sub(T a, T b) {
  if constexpr (is_int_v<T>) return T(wide_unsigned_t<T>(a) - wide_unsigned_t<T>(b));
  else return T(a - b);
}
template <class T>
EMBER_HD T wrap_mul(T a, T b) {
  if constexpr (is_int_v<T>) return T(wide_unsigned_t<T>(a) * wide_unsigned_t<T>(b));
  else if constexpr (is_complex_v<T>) return cmul(a, b);
  else return T(a * b);
}
template <class T>
EMBER_HD T wrap_neg(T a) {
  if constexpr (is_int_v<T>) return T(wide_unsigned_t<T>(0) - wide_unsigned_t<T>(a));
  else return T(-a);
}

template <class T>
EMBER_HD T quotient(T a, T b) {
  if constexpr (is_complex_v<T>) return cdiv(a, b);
  else return a / b;
}

// ---- elementwise ----
#define EMBER_BINARY(NAME, EXPR, ...)                           \
  struct NAME {                                                 \
    static constexpr std::string_view name = #NAME;             \
    template <class A, class B>                                 \
    using result = __VA_ARGS__;                                 \
    template <class R, class A, class B>                        \
    EMBER_HD static R apply(A a_, B b_) {                                \
      using C = promote_t<A, B>;                                \
      [[maybe_unused]] const C a = C(a_), b = C(b_);            \
      return R(EXPR);                                           \
    }                                                           \
  };

EMBER_BINARY(add, wrap_add(a, b), promote_t<A, B>)
EMBER_BINARY(sub, wrap_sub(a, b), promote_t<A, B>)
EMBER_BINARY(mul, wrap_mul(a, b), promote_t<A, B>)
EMBER_BINARY(div, quotient(mean_t<C>(a), mean_t<C>(b)), mean_t<promote_t<A, B>>)
EMBER_BINARY(eq, a == b, bool)
EMBER_BINARY(ne, a != b, bool)
EMBER_BINARY(lt, less(a, b), bool)
EMBER_BINARY(le, less_equal(a, b), bool)
EMBER_BINARY(gt, less(b, a), bool)
EMBER_BINARY(ge, less_equal(b, a), bool)
// NaN propagates through minimum and maximum, as in NumPy (complex: a NaN in
// either part; the order is lexicographic).
EMBER_BINARY(minimum, (less_equal(a, b) || is_nan(a)) ? a : b, promote_t<A, B>)
EMBER_BINARY(maximum, (less_equal(b, a) || is_nan(a)) ? a : b, promote_t<A, B>)
#undef EMBER_BINARY

struct power {
  static constexpr std::string_view name = "pow";
  template <class A, class B>  // (two bools: int8, as NumPy)
  using result = std::conditional_t<std::is_same_v<A, bool> && std::is_same_v<B, bool>, std::int8_t, promote_t<A, B>>;
  template <class R, class A, class B>
  EMBER_HD static R apply(A a, B b) {
    if constexpr (std::is_integral_v<R>) {
      // integer power by squaring (negative exponents give 0 except for |a| = 1)
      std::int64_t base = std::int64_t(a), e = std::int64_t(b), r = 1;
      if (e < 0) return R(base == 1 ? 1 : base == -1 ? (e % 2 ? -1 : 1) : 0);
      while (e) {
        if (e & 1) r = wrap_mul(r, base);
        base = wrap_mul(base, base);
        e >>= 1;
      }
      return R(r);
    } else if constexpr (is_complex_v<R>) {
      return cpow(R(a), R(b));
    } else {
      return R(std::pow(R(a), R(b)));
    }
  }
  // NumPy's nc_pow: z**0 is 1, 0**w is 0 for a positive real w and NaN
  // otherwise, a small integer exponent multiplies (binary powering, then 1/z**n
  // for a negative one), anything else is C's cpow.
  template <class C>
  EMBER_HD static C cpow(C a, C b) {
    using T = typename C::value_type;
    if (b.real() == 0 && b.imag() == 0) return C(1, 0);
    if (a.real() == 0 && a.imag() == 0) {
      if (b.real() > 0 && b.imag() == 0) return C(0, 0);
      return C(std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::quiet_NaN());
    }
    if (b.imag() == 0 && b.real() > -100 && b.real() < 100) {
      std::int64_t n = std::int64_t(b.real());
      if (T(n) == b.real()) {
        if (n == 1) return a;
        if (n == 2) return cmul(a, a);
        if (n == 3) return cmul(cmul(a, a), a);
        C acc(1, 0), p = a;
        if (n < 0) n = -n;
        for (std::int64_t mask = 1;; mask <<= 1) {
          if (n & mask) acc = cmul(acc, p);
          if (n < (mask << 1)) break;
          p = cmul(p, p);
        }
        return b.real() < 0 ? cdiv(C(1, 0), acc) : acc;
      }
    }
    return std::pow(a, b);
  }
};

#define EMBER_UNARY_FLOAT(NAME, FN)                \
  struct NAME {                                    \
    static constexpr std::string_view name = #NAME; \
    template <class A>                             \
    using result = float_t<A>;                     \
    template <class R, class A>                    \
    EMBER_HD static R apply(A a) {                          \
      return R(std::FN(float_t<A>(a)));            \
    }                                              \
  };
EMBER_UNARY_FLOAT(exp, exp)
EMBER_UNARY_FLOAT(log, log)
EMBER_UNARY_FLOAT(sqrt, sqrt)
EMBER_UNARY_FLOAT(sin, sin)
EMBER_UNARY_FLOAT(cos, cos)
EMBER_UNARY_FLOAT(tanh, tanh)
#undef EMBER_UNARY_FLOAT

struct neg {
  static constexpr std::string_view name = "neg";
  template <class A>
  using result = A;
  template <class R, class A>
  EMBER_HD static R apply(A a) {
    return R(wrap_neg(a));
  }
};
// |z| of a complex number is real (C's cabs: hypot of the parts).
struct abs {
  static constexpr std::string_view name = "abs";
  template <class A>
  using result = real_of_t<A>;
  template <class R, class A>
  EMBER_HD static R apply(A a) {
    if constexpr (std::is_same_v<A, bool>) return R(a);
    else if constexpr (is_complex_v<A>) return R(std::abs(a));
    else if constexpr (std::is_floating_point_v<A>) return R(std::fabs(a));  // a bit operation, no branch
    else return R(a < A(0) ? wrap_neg(a) : a);  // abs(MIN) wraps to MIN, as in NumPy
  }
};
// |x|^2, real: re^2 + im^2 of a complex number (the variance's deviations).
struct abs2 {
  static constexpr std::string_view name = "abs2";
  template <class A>
  using result = real_of_t<A>;
  template <class R, class A>
  EMBER_HD static R apply(A a) {
    if constexpr (is_complex_v<A>) return R(a.real() * a.real() + a.imag() * a.imag());
    else return R(a * a);
  }
};
// clip(x, lo, hi) = minimum(maximum(x, lo), hi), in x's type.
struct clip {
  static constexpr std::string_view name = "clip";
  template <class A, class B, class C>
  using result = A;
  template <class R, class A, class B, class C>
  EMBER_HD static R apply(A x, B lo, C hi) {
    using P = promote3_t<A, B, C>;
    P v = P(x);
    v = (less_equal(P(lo), v) || is_nan(v)) ? v : P(lo);
    v = (less_equal(v, P(hi)) || is_nan(v)) ? v : P(hi);
    return convert<R>(v);
  }
};
struct where {
  static constexpr std::string_view name = "where";
  template <class C, class A, class B>
  using result = promote_t<A, B>;
  template <class R, class C, class A, class B>
  EMBER_HD static R apply(C c, A a, B b) {
    return truth(c) ? convert<R>(a) : convert<R>(b);
  }
};
template <class U>
struct astype {
  static constexpr std::string_view name = "astype";
  template <class A>
  using result = U;
  template <class R, class A>
  EMBER_HD static R apply(A a) {
    return convert<R>(a);
  }
};

// ---- reductions ----
// Accumulator and result types follow NumPy: integer and bool sums are int64.
// (unsigned integers sum in uint64, the others in int64)
template <class T>
using sum_t = std::conditional_t<std::is_floating_point_v<T> || is_complex_v<T>, T,
                                 std::conditional_t<std::is_unsigned_v<T> && !std::is_same_v<T, bool>, std::uint64_t,
                                                    std::int64_t>>;

// The identity of min (high) or max: infinity for floating types, the extreme
// value for integers.
template <class T>
EMBER_HD constexpr T extreme(bool high) {
  if constexpr (std::is_floating_point_v<T>)
    return high ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  else return high ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}

struct sum {
  static constexpr std::string_view name = "sum";
  static constexpr reduce_op mpi = reduce_op::sum;  // combines partial results over ranks
  template <class T>
  using result = sum_t<T>;
  template <class T>
  EMBER_HD static constexpr T identity() { return T(0); }
  template <class T>
  EMBER_HD static T combine(T a, T b) { return a + b; }
  static constexpr bool compensated = true;  // Kahan across blocks for floats
};
struct prod {
  static constexpr std::string_view name = "prod";
  static constexpr reduce_op mpi = reduce_op::prod;
  template <class T>
  using result = sum_t<T>;
  template <class T>
  EMBER_HD static constexpr T identity() { return T(1); }
  template <class T>
  EMBER_HD static T combine(T a, T b) { return wrap_mul(a, b); }
  static constexpr bool compensated = false;
};
struct min {
  static constexpr std::string_view name = "min";
  static constexpr reduce_op mpi = reduce_op::min;
  template <class T>
  using result = T;
  template <class T>
  EMBER_HD static constexpr T identity() {
    if constexpr (is_complex_v<T>) return T(extreme<real_of_t<T>>(true), extreme<real_of_t<T>>(true));
    else return extreme<T>(true);
  }
  template <class T>
  EMBER_HD static T combine(T a, T b) { return (less_equal(a, b) || is_nan(a)) ? a : b; }
  static constexpr bool compensated = false;
};
struct max {
  static constexpr std::string_view name = "max";
  static constexpr reduce_op mpi = reduce_op::max;
  template <class T>
  using result = T;
  template <class T>
  EMBER_HD static constexpr T identity() {
    if constexpr (is_complex_v<T>) return T(extreme<real_of_t<T>>(false), extreme<real_of_t<T>>(false));
    else return extreme<T>(false);
  }
  template <class T>
  EMBER_HD static T combine(T a, T b) { return (less_equal(b, a) || is_nan(a)) ? a : b; }
  static constexpr bool compensated = false;
};
struct all {
  static constexpr std::string_view name = "all";
  static constexpr reduce_op mpi = reduce_op::land;
  template <class T>
  using result = bool;
  template <class T>
  EMBER_HD static constexpr T identity() { return true; }
  template <class T>
  EMBER_HD static T combine(T a, T b) { return truth(a) && truth(b); }
  static constexpr bool compensated = false;
};
struct any {
  static constexpr std::string_view name = "any";
  static constexpr reduce_op mpi = reduce_op::lor;
  template <class T>
  using result = bool;
  template <class T>
  EMBER_HD static constexpr T identity() { return false; }
  template <class T>
  EMBER_HD static T combine(T a, T b) { return truth(a) || truth(b); }
  static constexpr bool compensated = false;
};
// argmin/argmax: the index of the first extreme value (NaN counts as extreme).
struct argmin {
  static constexpr std::string_view name = "argmin";
  template <class T>
  using result = std::int64_t;
  template <class T>
  EMBER_HD static bool better(T a, T b) { return less(a, b) || (is_nan(a) && !is_nan(b)); }
};
struct argmax {
  static constexpr std::string_view name = "argmax";
  template <class T>
  using result = std::int64_t;
  template <class T>
  EMBER_HD static bool better(T a, T b) { return less(b, a) || (is_nan(a) && !is_nan(b)); }
};

template <class Op>
inline constexpr bool is_arg_reduction_v = std::is_same_v<Op, argmin> || std::is_same_v<Op, argmax>;

}  // namespace ember::op

#include "math_ops.hpp"
