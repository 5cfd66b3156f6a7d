// test_ufunc_table's second half (tests/test_ufunc_table.cpp says what it checks):
// the complex ufuncs and every binary ufunc, in a translation unit of its own so
// that the two halves compile in parallel.
#include "ufunc_table_cases.hpp"

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

