// Every ufunc on every dtype it accepts (issue 16), split along each axis,
// replicated, unevenly split and broadcast, against a serial loop over the
// gathered operands, value for value (NaN equal to NaN). Each (ufunc, dtype) is
// one expression type, so these are the expensive cases to compile (two
// translation units, this one and test_ufunc_table_binary.cpp): fusion into f(a) * b + c and the scalar forms, which run the same
// kernel machinery for every op, are checked on one dtype per ufunc.
#include "ufunc_table_cases.hpp"

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

