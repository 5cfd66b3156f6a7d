// Every ufunc on every dtype it accepts (issue 16), split along each axis,
// replicated, unevenly split and broadcast, against a serial loop over the
// gathered operands, value for value (NaN equal to NaN). Each (ufunc, dtype) is
// one expression type, so this translation unit is the expensive one to
// compile: fusion into f(a) * b + c and the scalar forms, which run the same
// kernel machinery for every op, are checked on one dtype per ufunc.
#include "ufunc_common.hpp"

namespace {

template <class Op, class T, bool Fused>
void unary_case() {
  using R = typename Op::template result<T>;
  const i64 rows = 9, cols = 5;
  const auto av = filled<T>(rows * cols, 0);
  const auto bv = filled<double>(rows * cols, 3), cv = filled<double>(rows * cols, 5);
  std::vector<test::host_t<R>> want(av.size());
  std::vector<double> fused(av.size());
  for (std::size_t i = 0; i < av.size(); ++i) {
    want[i] = Op::template apply<R>(T(av[i]));
    fused[i] = ember::op::convert<double>(R(want[i])) * bv[i] + cv[i];
  }
  for (const auto& l : layouts) {
    INFO(Op::name << " on " << ember::dtype_name<T>() << ", " << l.name);
    const auto a = distributed<T>(av, rows, cols, l);
    const auto b = distributed(bv, rows, cols, layouts[(&l - layouts + 1) % 4]);
    const auto c = distributed(cv, rows, cols, l);
    const auto f = ember::expr::unary<Op>(a);
    static_assert(std::is_same_v<typename decltype(f)::value_type, R>);
    CHECK(test::all_ranks(same_values(test::gathered(ember::eval(f)), want)));
    // fused with more work (and a differently split operand) in one pass
    if constexpr (Fused) {
      const auto g = test::gathered(ember::eval(ember::astype<double>(f) * b + c));
      CHECK(test::all_ranks(same_values(g, fused)));
    }
  }
}

template <class Op, class A, class B, bool Scalar = true>
void binary_case() {
  using R = typename Op::template result<A, B>;
  const i64 rows = 8, cols = 6;
  const auto av = filled<A>(rows * cols, 0);
  const auto bv = filled<B>(cols, 4);  // a row: broadcast over the rows
  std::vector<test::host_t<R>> want(av.size());
  for (i64 i = 0; i < rows; ++i)
    for (i64 j = 0; j < cols; ++j)
      want[std::size_t(i * cols + j)] = Op::template apply<R>(A(av[std::size_t(i * cols + j)]), B(bv[std::size_t(j)]));
  for (const auto& l : layouts) {
    INFO(Op::name << " on " << ember::dtype_name<A>() << ", " << ember::dtype_name<B>() << ", " << l.name);
    const auto a = distributed<A>(av, rows, cols, l);
    auto b = ember::array(span_of<B>(bv), std::array<i64, 1>{cols}, {.split = l.split ? ember::split_axis{0} : ember::none});
    const auto e = ember::expr::binary<Op>(a, b);
    static_assert(std::is_same_v<typename decltype(e)::value_type, R>);
    CHECK(test::all_ranks(same_values(test::gathered(ember::eval(e)), want)));
    // and with a scalar on the right (a Python-style scalar takes A's type)
    if constexpr (Scalar) {
    std::vector<test::host_t<typename decltype(ember::expr::binary<Op>(a, B(3)))::value_type>> ws(av.size());
    using RS = typename decltype(ember::expr::binary<Op>(a, B(3)))::value_type;
    using S = ember::op::weak_scalar_t<B, A>;
    for (std::size_t i = 0; i < av.size(); ++i) ws[i] = Op::template apply<RS>(A(av[i]), S(B(3)));
    CHECK(test::all_ranks(same_values(test::gathered(ember::eval(ember::expr::binary<Op>(a, B(3)))), ws)));
    }
  }
}

template <class... T>
struct types {};
using all_dtypes = types<bool, i32, i64, float, double>;
using numbers = types<i32, i64, float, double>;
using integral = types<bool, i32, i64>;
using ints = types<i32, i64>;
using complexes = types<ember::complex64, ember::complex128>;
using narrow = types<std::int8_t, std::int16_t, std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t>;
using narrow_some = types<std::int8_t, std::uint8_t, std::uint32_t, std::uint64_t>;

// Fusion and the scalar operand run the same kernel machinery for every op and
// dtype: checked on the last dtype of each list (double, or the widest integer),
// the rest evaluated alone (one expression type each, to keep compile time down).
template <class Op, class... T>
void unary_over(types<T...>) {
  constexpr std::size_t n = sizeof...(T);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (unary_case<Op, T, I + 1 == n>(), ...);
  }(std::make_index_sequence<n>{});
}
template <class Op, class... T>
void binary_over(types<T...>) {
  constexpr std::size_t n = sizeof...(T);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (binary_case<Op, T, T, I + 1 == n>(), ...);
  }(std::make_index_sequence<n>{});
}

}  // namespace

TEST_CASE("every unary ufunc on every dtype it accepts, in every layout, alone and fused", "[ufunc]") {
  namespace op = ember::op;
  // floating functions: every dtype (integers and bool compute in float64)
  unary_over<op::tan>(all_dtypes{});
  unary_over<op::arcsin>(all_dtypes{});
  unary_over<op::arccos>(all_dtypes{});
  unary_over<op::arctan>(all_dtypes{});
  unary_over<op::sinh>(all_dtypes{});
  unary_over<op::cosh>(all_dtypes{});
  unary_over<op::arcsinh>(all_dtypes{});
  unary_over<op::arccosh>(all_dtypes{});
  unary_over<op::arctanh>(all_dtypes{});
  unary_over<op::log2>(all_dtypes{});
  unary_over<op::log10>(all_dtypes{});
  unary_over<op::log1p>(all_dtypes{});
  unary_over<op::expm1>(all_dtypes{});
  unary_over<op::exp2>(all_dtypes{});
  unary_over<op::cbrt>(all_dtypes{});
  unary_over<op::deg2rad>(all_dtypes{});
  unary_over<op::rad2deg>(all_dtypes{});
  unary_over<op::rint>(all_dtypes{});
  unary_over<op::angle>(all_dtypes{});
  // rounding keeps the dtype; predicates give bool; real/imag/conj of real numbers
  unary_over<op::floor>(all_dtypes{});
  unary_over<op::ceil>(all_dtypes{});
  unary_over<op::trunc>(all_dtypes{});
  unary_over<op::isnan>(all_dtypes{});
  unary_over<op::isinf>(all_dtypes{});
  unary_over<op::isfinite>(all_dtypes{});
  unary_over<op::signbit>(all_dtypes{});
  unary_over<op::logical_not>(all_dtypes{});
  unary_over<op::real>(all_dtypes{});
  unary_over<op::imag>(all_dtypes{});
  unary_over<op::conj>(all_dtypes{});
  // arithmetic (NumPy computes these for bool in int8)
  unary_over<op::square>(numbers{});
  unary_over<op::sign>(numbers{});
  unary_over<op::reciprocal>(numbers{});
  unary_over<op::positive>(numbers{});
  unary_over<op::invert>(integral{});
}

TEST_CASE("integer ufuncs on int8, int16 and the unsigned types: wrapping, division, shifts", "[ufunc][ints]") {
  namespace op = ember::op;
  unary_over<op::square>(narrow{});
  unary_over<op::sign>(narrow{});
  unary_over<op::reciprocal>(narrow{});
  unary_over<op::abs>(narrow{});
  unary_over<op::neg>(narrow{});
  unary_over<op::invert>(narrow{});
  unary_over<op::floor>(narrow{});
  unary_over<op::sqrt>(narrow{});  // float32 for 8- and 16-bit integers, float64 beyond
  unary_over<op::isfinite>(narrow{});
  binary_over<op::add>(narrow_some{});
  binary_over<op::sub>(narrow_some{});
  binary_over<op::mul>(narrow_some{});
  binary_over<op::div>(narrow_some{});
  binary_over<op::power>(narrow_some{});
  binary_over<op::remainder>(narrow_some{});
  binary_over<op::floor_divide>(narrow_some{});
  binary_over<op::fmod>(narrow_some{});
  binary_over<op::bitwise_xor>(narrow_some{});
  binary_over<op::left_shift>(narrow_some{});
  binary_over<op::right_shift>(narrow_some{});
  binary_over<op::minimum>(narrow_some{});
  binary_over<op::lt>(narrow_some{});
  // mixed signedness and widths promote as NumPy's result_type
  binary_case<op::add, std::int8_t, std::uint8_t>();     // int16
  binary_case<op::mul, i64, std::uint64_t>();           // float64
  binary_case<op::sub, std::uint16_t, float>();         // float32
  binary_case<op::remainder, bool, bool, false>();      // int8
  static_assert(std::is_same_v<ember::op::promote_t<std::int8_t, std::uint8_t>, std::int16_t>);
  static_assert(std::is_same_v<ember::op::promote_t<i64, std::uint64_t>, double>);
  static_assert(std::is_same_v<ember::op::promote_t<float, std::int16_t>, float>);
  static_assert(std::is_same_v<ember::op::promote_t<float, i32>, double>);
  static_assert(std::is_same_v<ember::op::sum_t<std::uint8_t>, std::uint64_t>);
}

TEST_CASE("every ufunc NumPy defines for complex numbers, on complex64 and complex128", "[ufunc][complex]") {
  namespace op = ember::op;
  unary_over<op::exp>(complexes{});
  unary_over<op::log>(complexes{});
  unary_over<op::sqrt>(complexes{});
  unary_over<op::sin>(complexes{});
  unary_over<op::cos>(complexes{});
  unary_over<op::tan>(complexes{});
  unary_over<op::tanh>(complexes{});
  unary_over<op::arcsin>(complexes{});
  unary_over<op::arccos>(complexes{});
  unary_over<op::arctan>(complexes{});
  unary_over<op::sinh>(complexes{});
  unary_over<op::cosh>(complexes{});
  unary_over<op::arcsinh>(complexes{});
  unary_over<op::arccosh>(complexes{});
  unary_over<op::arctanh>(complexes{});
  unary_over<op::log2>(complexes{});
  unary_over<op::log10>(complexes{});
  unary_over<op::log1p>(complexes{});
  unary_over<op::expm1>(complexes{});
  unary_over<op::exp2>(complexes{});
  unary_over<op::rint>(complexes{});
  unary_over<op::angle>(complexes{});
  unary_over<op::abs>(complexes{});
  unary_over<op::isnan>(complexes{});
  unary_over<op::isinf>(complexes{});
  unary_over<op::isfinite>(complexes{});
  unary_over<op::logical_not>(complexes{});
  unary_over<op::real>(complexes{});
  unary_over<op::imag>(complexes{});
  unary_over<op::conj>(complexes{});
  unary_over<op::square>(complexes{});
  unary_over<op::sign>(complexes{});
  unary_over<op::reciprocal>(complexes{});
  unary_over<op::neg>(complexes{});
  binary_over<op::add>(complexes{});
  binary_over<op::sub>(complexes{});
  binary_over<op::mul>(complexes{});
  binary_over<op::div>(complexes{});
  binary_over<op::power>(complexes{});
  binary_over<op::minimum>(complexes{});
  binary_over<op::maximum>(complexes{});
  binary_over<op::lt>(complexes{});
  binary_over<op::ge>(complexes{});
  binary_over<op::eq>(complexes{});
  binary_over<op::logical_and>(complexes{});
  // mixed with real operands, promoted as NumPy's result_type
  binary_case<op::mul, ember::complex64, double>();
  binary_case<op::div, float, ember::complex64>();
  binary_case<op::add, i32, ember::complex64>();
  static_assert(std::is_same_v<ember::op::promote_t<ember::complex64, float>, ember::complex64>);
  static_assert(std::is_same_v<ember::op::promote_t<ember::complex64, i32>, ember::complex128>);
  static_assert(std::is_same_v<ember::op::weak_scalar_t<ember::complex128, float>, ember::complex64>);
}

TEST_CASE("every binary ufunc on every dtype it accepts, broadcast, with arrays and scalars", "[ufunc]") {
  namespace op = ember::op;
  binary_over<op::remainder>(numbers{});
  binary_over<op::floor_divide>(numbers{});
  binary_over<op::fmod>(numbers{});
  binary_over<op::arctan2>(all_dtypes{});
  binary_over<op::hypot>(all_dtypes{});
  binary_over<op::copysign>(all_dtypes{});
  binary_over<op::nextafter>(all_dtypes{});
  binary_over<op::heaviside>(all_dtypes{});
  binary_over<op::logical_and>(all_dtypes{});
  binary_over<op::logical_or>(all_dtypes{});
  binary_over<op::logical_xor>(all_dtypes{});
  binary_over<op::bitwise_and>(integral{});
  binary_over<op::bitwise_or>(integral{});
  binary_over<op::bitwise_xor>(integral{});
  binary_over<op::left_shift>(ints{});
  binary_over<op::right_shift>(ints{});
  binary_over<op::minimum>(all_dtypes{});
  binary_over<op::maximum>(all_dtypes{});
  // mixed dtypes promote as NumPy's result_type
  binary_case<op::remainder, i32, double>();
  binary_case<op::floor_divide, i64, float>();
  binary_case<op::bitwise_and, bool, i64>();
  binary_case<op::left_shift, i32, i64>();
  binary_case<op::arctan2, float, i32>();
  static_assert(std::is_same_v<ember::op::promote_t<float, i32>, double>);
  static_assert(std::is_same_v<ember::op::promote_t<bool, i32>, i32>);
}

