// test_ufunc_table's helpers: one (ufunc, dtype) case each, in every layout
// (tests/test_ufunc_table.cpp says what the cases check). Two translation units
// include them, test_ufunc_table.cpp and test_ufunc_table_binary.cpp, so that the
// table's ~400 expression types compile on two cores at once.
#pragma once

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

