// NumPy's ufuncs as ember functions and operators: each builds one elementwise
// node (dsl/expr.hpp) over the tag of dsl/math_ops.hpp, so it fuses with
// everything around it and prints in plans under NumPy's name.
//
//   ember::floor(a), ember::arctan2(y, x), a % b, a // b as ember::floor_divide(a, b),
//   (a > 0) & ~ember::isnan(b), a << 2, ember::round(a, 2), ember::nan_to_num(a),
//   auto [q, r] = ember::divmod(a, b);      two lazy expressions (eval them together)
//   a += b; a(0, ember::all) *= 2;          into the array's storage (no allocation)
//
// Type rules are NumPy 2's (op::promote, Python scalars weak; arithmetic on two
// bools in int8). Where NumPy refuses the operands (bitwise ops on floats,
// floor of a complex number), the call is a compile error that says what to
// write instead.
#pragma once

#include <utility>

#include "eval.hpp"

namespace ember {

namespace detail {
// The element type an operand has inside a node next to `Other` (a Python-style
// scalar takes the array's type, op::weak_scalar_t).
template <class X, class Other, bool = scalar_like<X>, bool = scalar_like<Other>>
struct operand_value {
  using type = typename expr::node_t<X>::value_type;
};
template <class X, class Other>
struct operand_value<X, Other, true, false> {
  using type = op::weak_scalar_t<std::remove_cvref_t<X>, typename expr::node_t<Other>::value_type>;
};
template <class X, class Other>
struct operand_value<X, Other, true, true> {
  using type = std::remove_cvref_t<X>;
};
template <class X, class Other>
using operand_value_t = typename operand_value<X, Other>::type;

template <class A, class B>
inline constexpr bool both_bool_v =
    std::is_same_v<operand_value_t<A, B>, bool> && std::is_same_v<operand_value_t<B, A>, bool>;
template <class A, class B>
inline constexpr bool both_integral_v =
    std::is_integral_v<operand_value_t<A, B>> && std::is_integral_v<operand_value_t<B, A>>;
template <class A, class B>
inline constexpr bool both_int_v = op::is_int_v<operand_value_t<A, B>> && op::is_int_v<operand_value_t<B, A>>;
}  // namespace detail

#define EMBER_UFUNC_NOTE_INT8 "NumPy computes it for bool operands in int8; cast first: ember::astype<std::int8_t>(a)"

// ---- unary ufuncs ----
#define EMBER_UFUNC1(NAME, OP)                      \
  template <array_like A>                           \
  auto NAME(A&& a) {                                \
    return expr::unary<op::OP>(std::forward<A>(a)); \
  }
#define EMBER_UFUNC1_REAL(NAME, OP)                                                                 \
  template <array_like A>                                                                           \
  auto NAME(A&& a) {                                                                                \
    static_assert(!is_complex_v<typename expr::node_t<A>::value_type>,                              \
                  "ember::" #NAME " of a complex array: NumPy does not define it either (apply it to "  \
                  "ember::real(a) and ember::imag(a))");                                            \
    return expr::unary<op::OP>(std::forward<A>(a));                                                 \
  }
#define EMBER_UFUNC1_NOBOOL(NAME, OP)                                                               \
  template <array_like A>                                                                           \
  auto NAME(A&& a) {                                                                                \
    static_assert(!std::is_same_v<typename expr::node_t<A>::value_type, bool>,                      \
                  "ember::" #NAME " of a bool array: " EMBER_UFUNC_NOTE_INT8);                      \
    return expr::unary<op::OP>(std::forward<A>(a));                                                 \
  }
EMBER_UFUNC1(tan, tan)
EMBER_UFUNC1(arcsin, arcsin)
EMBER_UFUNC1(arccos, arccos)
EMBER_UFUNC1(arctan, arctan)
EMBER_UFUNC1(sinh, sinh)
EMBER_UFUNC1(cosh, cosh)
EMBER_UFUNC1(arcsinh, arcsinh)
EMBER_UFUNC1(arccosh, arccosh)
EMBER_UFUNC1(arctanh, arctanh)
EMBER_UFUNC1(log2, log2)
EMBER_UFUNC1(log10, log10)
EMBER_UFUNC1(log1p, log1p)
EMBER_UFUNC1(expm1, expm1)
EMBER_UFUNC1(exp2, exp2)
EMBER_UFUNC1_REAL(cbrt, cbrt)
EMBER_UFUNC1_REAL(deg2rad, deg2rad)
EMBER_UFUNC1_REAL(rad2deg, rad2deg)
EMBER_UFUNC1_REAL(radians, deg2rad)
EMBER_UFUNC1_REAL(degrees, rad2deg)
EMBER_UFUNC1(rint, rint)
EMBER_UFUNC1_REAL(floor, floor)
EMBER_UFUNC1_REAL(ceil, ceil)
EMBER_UFUNC1_REAL(trunc, trunc)
EMBER_UFUNC1_REAL(fix, trunc)  // NumPy's fix: round towards zero
EMBER_UFUNC1(angle, angle)
EMBER_UFUNC1(real, real)
EMBER_UFUNC1(imag, imag)
EMBER_UFUNC1(conj, conj)
EMBER_UFUNC1(conjugate, conj)
EMBER_UFUNC1(isnan, isnan)
EMBER_UFUNC1(isinf, isinf)
EMBER_UFUNC1(isfinite, isfinite)
EMBER_UFUNC1_REAL(signbit, signbit)
EMBER_UFUNC1(logical_not, logical_not)
EMBER_UFUNC1(absolute, abs)
EMBER_UFUNC1(square, square)
EMBER_UFUNC1(sign, sign)
EMBER_UFUNC1(reciprocal, reciprocal)
EMBER_UFUNC1_NOBOOL(positive, positive)
EMBER_UFUNC1_NOBOOL(negative, neg)
// The array API's spellings of the same functions.
EMBER_UFUNC1(asin, arcsin)
EMBER_UFUNC1(acos, arccos)
EMBER_UFUNC1(atan, arctan)
EMBER_UFUNC1(asinh, arcsinh)
EMBER_UFUNC1(acosh, arccosh)
EMBER_UFUNC1(atanh, arctanh)
#undef EMBER_UFUNC1
#undef EMBER_UFUNC1_NOBOOL
#undef EMBER_UFUNC1_REAL

// ~a: NumPy's invert (bitwise not of integers, logical not of bools).
template <array_like A>
auto invert(A&& a) {
  static_assert(std::is_integral_v<typename expr::node_t<A>::value_type>,
                "ember::invert (~): needs an integer or bool array (NumPy refuses floating types); for a mask "
                "from floats compare first: ~(a > 0)");
  return expr::unary<op::invert>(std::forward<A>(a));
}
template <array_like A>
auto bitwise_not(A&& a) {
  return invert(std::forward<A>(a));
}
template <array_like A>
auto bitwise_invert(A&& a) {
  return invert(std::forward<A>(a));
}
template <array_like A>
auto operator~(A&& a) {
  return invert(std::forward<A>(a));
}

// ---- binary ufuncs (either operand may be a scalar) ----
// CHECK(NAME): the static_assert's condition and message for the operand types A, B.
#define EMBER_UFUNC2(NAME, OP, CHECK)                                           \
  template <operand A, operand B>                                               \
    requires(array_like<A> || array_like<B>)                                    \
  auto NAME(A&& a, B&& b) {                                                     \
    static_assert(CHECK(NAME));                                                 \
    return expr::binary<op::OP>(std::forward<A>(a), std::forward<B>(b));        \
  }
#define EMBER_ANY(NAME) true
#define EMBER_NOT_BOOLS(NAME) !detail::both_bool_v<A, B>, "ember::" #NAME ": " EMBER_UFUNC_NOTE_INT8
#define EMBER_INTEGRAL(NAME)                                                                          \
  detail::both_integral_v<A, B> &&                                                                     \
      std::is_integral_v<op::promote_t<detail::operand_value_t<A, B>, detail::operand_value_t<B, A>>>,  \
      "ember::" #NAME ": needs integer or bool operands of a common integer type (NumPy refuses floating " \
      "types, and int64 with uint64, which promote to float64)"
#define EMBER_REAL(NAME)                                                                              \
  !is_complex_v<detail::operand_value_t<A, B>> && !is_complex_v<detail::operand_value_t<B, A>>,       \
      "ember::" #NAME ": needs real operands (NumPy does not define it for complex numbers either)"
#define EMBER_INTS(NAME) EMBER_INTEGRAL(NAME)
EMBER_UFUNC2(remainder, remainder, EMBER_REAL)
EMBER_UFUNC2(mod, remainder, EMBER_REAL)
EMBER_UFUNC2(floor_divide, floor_divide, EMBER_REAL)
EMBER_UFUNC2(fmod, fmod, EMBER_REAL)
EMBER_UFUNC2(arctan2, arctan2, EMBER_REAL)
EMBER_UFUNC2(atan2, arctan2, EMBER_REAL)
EMBER_UFUNC2(hypot, hypot, EMBER_REAL)
EMBER_UFUNC2(copysign, copysign, EMBER_REAL)
EMBER_UFUNC2(nextafter, nextafter, EMBER_REAL)
EMBER_UFUNC2(heaviside, heaviside, EMBER_REAL)
EMBER_UFUNC2(logical_and, logical_and, EMBER_ANY)
EMBER_UFUNC2(logical_or, logical_or, EMBER_ANY)
EMBER_UFUNC2(logical_xor, logical_xor, EMBER_ANY)
EMBER_UFUNC2(bitwise_and, bitwise_and, EMBER_INTEGRAL)
EMBER_UFUNC2(bitwise_or, bitwise_or, EMBER_INTEGRAL)
EMBER_UFUNC2(bitwise_xor, bitwise_xor, EMBER_INTEGRAL)
EMBER_UFUNC2(left_shift, left_shift, EMBER_INTS)
EMBER_UFUNC2(right_shift, right_shift, EMBER_INTS)
EMBER_UFUNC2(bitwise_left_shift, left_shift, EMBER_INTS)
EMBER_UFUNC2(bitwise_right_shift, right_shift, EMBER_INTS)
// NumPy's names of the operators.
EMBER_UFUNC2(add, add, EMBER_ANY)
EMBER_UFUNC2(subtract, sub, EMBER_ANY)
EMBER_UFUNC2(multiply, mul, EMBER_ANY)
EMBER_UFUNC2(divide, div, EMBER_ANY)
EMBER_UFUNC2(true_divide, div, EMBER_ANY)
EMBER_UFUNC2(power, power, EMBER_ANY)
#undef EMBER_UFUNC2

#define EMBER_UFUNC_OPERATOR(SYM, NAME)                            \
  template <operand A, operand B>                                  \
    requires(array_like<A> || array_like<B>)                       \
  auto operator SYM(A&& a, B&& b) {                                \
    return NAME(std::forward<A>(a), std::forward<B>(b));           \
  }
EMBER_UFUNC_OPERATOR(%, remainder)
EMBER_UFUNC_OPERATOR(&, bitwise_and)
EMBER_UFUNC_OPERATOR(|, bitwise_or)
EMBER_UFUNC_OPERATOR(^, bitwise_xor)
EMBER_UFUNC_OPERATOR(<<, left_shift)
EMBER_UFUNC_OPERATOR(>>, right_shift)
#undef EMBER_UFUNC_OPERATOR
#undef EMBER_ANY
#undef EMBER_NOT_BOOLS
#undef EMBER_INTEGRAL
#undef EMBER_INTS
#undef EMBER_REAL

// divmod(a, b): (a // b, a % b) as two lazy expressions; ember::eval(q, r)
// computes both in one pass over a and b.
template <operand A, operand B>
  requires(array_like<A> || array_like<B>)
auto divmod(const A& a, const B& b) {
  return std::pair{floor_divide(a, b), remainder(a, b)};
}

// ---- with parameters ----
// round(a, decimals): half to even (NumPy's round/around); integers stay integers.
template <array_like A>
auto round(const A& a, int decimals = 0) {
  return expr::elementwise<op::round, expr::node_t<const A&>, expr::scalar<std::int64_t>>(
      expr::as_node(a), expr::scalar<std::int64_t>{{}, decimals});
}
template <array_like A>
auto around(const A& a, int decimals = 0) {
  return round(a, decimals);
}

// nan_to_num(a, {.nan, .posinf, .neginf}): NaN to 0 and the infinities to the
// largest finite values by default, as NumPy's.
struct nan_to_num_options {
  double nan = 0.0;
  std::optional<double> posinf = std::nullopt;  // default: the largest finite value of the dtype
  std::optional<double> neginf = std::nullopt;  // default: the most negative finite value
};
template <array_like A>
auto nan_to_num(const A& a, const nan_to_num_options& o = {}) {
  using T = typename expr::node_t<const A&>::value_type;
  using S = expr::scalar<T>;
  using F = real_of_t<T>;  // (complex: the replacements of each part)
  const T hi = T(std::numeric_limits<F>::max()), lo = T(std::numeric_limits<F>::lowest());
  return expr::elementwise<op::nan_to_num, expr::node_t<const A&>, S, S, S>(
      expr::as_node(a), S{{}, T(o.nan)}, S{{}, o.posinf ? T(*o.posinf) : hi}, S{{}, o.neginf ? T(*o.neginf) : lo});
}

// isclose(a, b, {.rtol, .atol, .equal_nan}): elementwise |a - b| <= atol + rtol * |b|.
struct isclose_options {
  double rtol = 1e-05;
  double atol = 1e-08;
  bool equal_nan = false;
};
template <operand A, operand B>
  requires(array_like<A> || array_like<B>)
auto isclose(const A& a, const B& b, const isclose_options& o = {}) {
  auto an = expr::operand_node<A, B>(a);
  auto bn = expr::operand_node<B, A>(b);
  using D = expr::scalar<double>;
  return expr::elementwise<op::isclose, decltype(an), decltype(bn), D, D, expr::scalar<bool>>(
      an, bn, D{{}, o.rtol}, D{{}, o.atol}, expr::scalar<bool>{{}, o.equal_nan});
}

// ---- in-place operators: a op= b writes a op b into a's storage (one fused
// pass, no allocation, every handle and view of a sees it). The result is cast
// back to a's dtype under NumPy's casting='same_kind': int_array += 0.5 or
// bool_array += 1 is a compile error, as NumPy raises.
namespace detail {
template <class T, class V>
inline constexpr bool same_kind_v = !(std::is_integral_v<T> && std::is_floating_point_v<V>) &&
                                    (!std::is_same_v<T, bool> || std::is_same_v<V, bool>) &&
                                    (is_complex_v<T> || !is_complex_v<V>);
}  // namespace detail
// The in-place operators and the ufunc each applies: for arrays below, for
// views in dsl/view.hpp (one list, so the two cannot drift apart).
#define EMBER_FOR_EACH_INPLACE(X) \
  X(+=, add) \
  X(-=, subtract) \
  X(*=, multiply) \
  X(/=, divide) \
  X(%=, remainder) \
  X(&=, bitwise_and) \
  X(|=, bitwise_or) \
  X(^=, bitwise_xor) \
  X(<<=, left_shift) \
  X(>>=, right_shift)
#define EMBER_INPLACE(SYM, NAME)                                                                             \
  template <dtype T, int N, operand B>                                                                       \
  dndarray<T, N>& operator SYM(dndarray<T, N>& a, const B& b) {                                              \
    auto e = NAME(a, b);                                                                                     \
    static_assert(detail::same_kind_v<T, typename decltype(e)::value_type>,                                  \
                  "ember: `a " #SYM " b` gives a value that does not cast to a's dtype under NumPy's "       \
                  "same_kind rule (a float into an integer array, a number into a bool array, a complex "    \
                  "number into a real array); write "                                                        \
                  "a = ember::astype<T>(a op b) to cast explicitly");                                       \
    ember::copyto(a, e);                                                                                     \
    return a;                                                                                                \
  }
EMBER_FOR_EACH_INPLACE(EMBER_INPLACE)
#undef EMBER_INPLACE

}  // namespace ember
