// Shared by the ufunc tests (test_ufuncs.cpp, test_ufunc_table.cpp): exact
// comparison, NumPy's special values per dtype and the layouts every case runs in.
#pragma once

#include <bit>
#include <cstring>
#include <limits>

#include "common.hpp"

namespace {

using i32 = std::int32_t;
using i64 = std::int64_t;
constexpr double inf = std::numeric_limits<double>::infinity();
const double qnan = std::numeric_limits<double>::quiet_NaN();

template <class T>
ember::dndarray<T, 1> vec(const std::vector<T>& v, ember::split_axis split = 0) {
  return ember::array(std::span<const T>(v), std::array<i64, 1>{i64(v.size())}, {.split = split});
}
// Bitwise equality, NaN equal to NaN (of any payload), on every rank.
template <class T>
bool same_values(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(got[i]) && std::isnan(want[i])) continue;
      if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) return false;
    } else if constexpr (ember::is_complex_v<T>) {  // each part bit for bit, NaN equal to NaN
      const auto same = [](auto x, auto y) { return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0; };
      if (!same(got[i].real(), want[i].real()) || !same(got[i].imag(), want[i].imag())) return false;
    } else if (got[i] != want[i]) {
      return false;
    }
  }
  return true;
}
template <class E, class T = typename E::value_type>
void expect(const E& e, const std::vector<test::host_t<T>>& want) {
  const auto got = test::gathered(ember::eval(e));
  std::string g;
  for (auto v : got) {
    if constexpr (ember::is_complex_v<T>) g += "(" + std::to_string(v.real()) + "," + std::to_string(v.imag()) + ") ";
    else g += std::to_string(v) + " ";
  }
  INFO("got " << g);
  CHECK(test::all_ranks(same_values(got, want)));
}


// Test values with the special cases of each dtype.
template <class T>
std::vector<T> specials() {
  if constexpr (ember::is_complex_v<T>) {
    // every pairing of a part's specials that a stride of 5 reaches: zeros of
    // both signs, infinities and NaN in either part, with ordinary values
    using F = typename T::value_type;
    const auto p = specials<F>();
    std::vector<T> v;
    for (std::size_t i = 0; i < 3 * p.size(); ++i) v.emplace_back(p[i % p.size()], p[(i * 5 + 3) % p.size()]);
    return v;
  } else if constexpr (std::is_same_v<T, bool>) return {false, true};
  else if constexpr (std::is_integral_v<T>)
    return {T(0), T(1), T(-1), T(2), T(-7), T(13), T(100), std::numeric_limits<T>::max(), std::numeric_limits<T>::min(),
            T(31), T(-33)};  // (unsigned: -1, -7, -33 wrap to large values)
  else
    return {T(0), T(-0.0), T(1), T(-1), T(0.5), T(-2.5), T(3.75), T(1e-3), T(250), std::numeric_limits<T>::infinity(),
            -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::denorm_min(),
            std::numeric_limits<T>::max(), T(0.999), T(-0.3)};
}
// A (rows x cols) array cycling through the specials (shifted by `shift`).
template <class T>
std::vector<test::host_t<T>> filled(i64 n, int shift) {
  const auto s = specials<T>();
  std::vector<test::host_t<T>> v(static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) v[std::size_t(i)] = s[std::size_t((i * 7 + shift) % i64(s.size()))];
  return v;
}
template <class T>
std::span<const T> span_of(const std::vector<test::host_t<T>>& v) {
  return {reinterpret_cast<const T*>(v.data()), v.size()};
}

struct layout_case {
  const char* name;
  ember::split_axis split;
  bool uneven;
};
const layout_case layouts[] = {{"split 0", 0, false}, {"split 1", 1, false}, {"none", {}, false}, {"split 0 uneven", 0, true}};

// (T given for bool, whose values are held as unsigned char)
template <class T = void, class V>
auto distributed(const std::vector<V>& v, i64 rows, i64 cols, const layout_case& l) {
  using E = std::conditional_t<std::is_void_v<T>, V, T>;
  auto a = ember::array(span_of<E>(v), std::array<i64, 2>{rows, cols}, {.split = l.split});
  if (l.uneven) test::unbalance(a);
  return a;
}

}  // namespace
