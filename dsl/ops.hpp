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

// ---- type promotion (NumPy: bool < integers < floating) ----
template <class T>
constexpr int kind_of() {
  return std::is_same_v<T, bool> ? 0 : std::is_integral_v<T> ? 1 : 2;
}

template <class A, class B>
struct promote {
  using type = std::conditional_t<
      std::is_same_v<A, double> || std::is_same_v<B, double>, double,
      std::conditional_t<
          std::is_same_v<A, float> || std::is_same_v<B, float>,
          // float32 with an integer is float64 in NumPy; with bool or float32 it stays
          std::conditional_t<(kind_of<A>() == 1 || kind_of<B>() == 1), double, float>,
          std::conditional_t<std::is_same_v<A, std::int64_t> || std::is_same_v<B, std::int64_t>, std::int64_t,
                             std::conditional_t<std::is_same_v<A, std::int32_t> || std::is_same_v<B, std::int32_t>,
                                                std::int32_t, bool>>>>;
};
template <class A, class B>
using promote_t = typename promote<A, B>::type;
template <class A, class B, class C>
using promote3_t = promote_t<promote_t<A, B>, C>;

// A Python-style scalar does not widen an array of the same kind (float32 * 2.0 is
// float32); of a higher kind it gives that kind's default (int32 * 2.5 is float64).
template <class Scalar, class Array>
using weak_scalar_t =
    std::conditional_t<(kind_of<Scalar>() <= kind_of<Array>()), Array,
                       std::conditional_t<kind_of<Scalar>() == 2, double,
                                          std::conditional_t<kind_of<Scalar>() == 1, std::int64_t, bool>>>;

// Floating result of a math function (integers and bool compute in float64).
template <class T>
using float_t = std::conditional_t<std::is_floating_point_v<T>, T, double>;

template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

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
  else return T(a * b);
}
template <class T>
EMBER_HD T wrap_neg(T a) {
  if constexpr (is_int_v<T>) return T(wide_unsigned_t<T>(0) - wide_unsigned_t<T>(a));
  else return T(-a);
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
EMBER_BINARY(div, float_t<C>(a) / float_t<C>(b), float_t<promote_t<A, B>>)
EMBER_BINARY(eq, a == b, bool)
EMBER_BINARY(ne, a != b, bool)
EMBER_BINARY(lt, a < b, bool)
EMBER_BINARY(le, a <= b, bool)
EMBER_BINARY(gt, a > b, bool)
EMBER_BINARY(ge, a >= b, bool)
// NaN propagates through minimum and maximum, as in NumPy.
EMBER_BINARY(minimum, (a <= b || a != a) ? a : b, promote_t<A, B>)
EMBER_BINARY(maximum, (a >= b || a != a) ? a : b, promote_t<A, B>)
#undef EMBER_BINARY

struct power {
  static constexpr std::string_view name = "pow";
  template <class A, class B>
  using result = promote_t<A, B>;
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
    } else {
      return R(std::pow(R(a), R(b)));
    }
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
struct abs {
  static constexpr std::string_view name = "abs";
  template <class A>
  using result = A;
  template <class R, class A>
  EMBER_HD static R apply(A a) {
    if constexpr (std::is_same_v<A, bool>) return R(a);
    else if constexpr (std::is_floating_point_v<A>) return R(std::fabs(a));  // a bit operation, no branch
    else return R(a < A(0) ? wrap_neg(a) : a);  // abs(MIN) wraps to MIN, as in NumPy
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
    v = (v >= P(lo) || v != v) ? v : P(lo);
    v = (v <= P(hi) || v != v) ? v : P(hi);
    return R(v);
  }
};
struct where {
  static constexpr std::string_view name = "where";
  template <class C, class A, class B>
  using result = promote_t<A, B>;
  template <class R, class C, class A, class B>
  EMBER_HD static R apply(C c, A a, B b) {
    return c ? R(a) : R(b);
  }
};
template <class U>
struct astype {
  static constexpr std::string_view name = "astype";
  template <class A>
  using result = U;
  template <class R, class A>
  EMBER_HD static R apply(A a) {
    return R(a);
  }
};

// ---- reductions ----
// Accumulator and result types follow NumPy: integer and bool sums are int64.
template <class T>
using sum_t = std::conditional_t<std::is_floating_point_v<T>, T, std::int64_t>;

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
  EMBER_HD static T combine(T a, T b) { return a * b; }
  static constexpr bool compensated = false;
};
struct min {
  static constexpr std::string_view name = "min";
  static constexpr reduce_op mpi = reduce_op::min;
  template <class T>
  using result = T;
  template <class T>
  EMBER_HD static constexpr T identity() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  template <class T>
  EMBER_HD static T combine(T a, T b) { return (a <= b || a != a) ? a : b; }
  static constexpr bool compensated = false;
};
struct max {
  static constexpr std::string_view name = "max";
  static constexpr reduce_op mpi = reduce_op::max;
  template <class T>
  using result = T;
  template <class T>
  EMBER_HD static constexpr T identity() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  template <class T>
  EMBER_HD static T combine(T a, T b) { return (a >= b || a != a) ? a : b; }
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
  EMBER_HD static T combine(T a, T b) { return a && b; }
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
  EMBER_HD static T combine(T a, T b) { return a || b; }
  static constexpr bool compensated = false;
};
// argmin/argmax: the index of the first extreme value (NaN counts as extreme).
struct argmin {
  static constexpr std::string_view name = "argmin";
  template <class T>
  using result = std::int64_t;
  template <class T>
  EMBER_HD static bool better(T a, T b) { return a < b || (a != a && b == b); }
};
struct argmax {
  static constexpr std::string_view name = "argmax";
  template <class T>
  using result = std::int64_t;
  template <class T>
  EMBER_HD static bool better(T a, T b) { return a > b || (a != a && b == b); }
};

template <class Op>
inline constexpr bool is_arg_reduction_v = std::is_same_v<Op, argmin> || std::is_same_v<Op, argmax>;

}  // namespace ember::op

#include "math_ops.hpp"
