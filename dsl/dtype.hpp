// Element types ember arrays hold, and their names (NumPy's spelling).
#pragma once

#include <complex>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace ember {

// NumPy's complex dtypes: std::complex, whose layout (real, imaginary) is
// NumPy's, C's _Complex and MPI's MPI_C_*_COMPLEX alike.
using complex64 = std::complex<float>;
using complex128 = std::complex<double>;

template <class T>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<std::complex<T>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_v = is_complex<std::remove_cv_t<T>>::value;

// The real type of a complex one (float for complex64); any other type itself.
template <class T>
struct real_of {
  using type = T;
};
template <class T>
struct real_of<std::complex<T>> {
  using type = T;
};
template <class T>
using real_of_t = typename real_of<T>::type;

template <class T>
inline constexpr bool is_dtype_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                   std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int16_t> ||
                                   std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
                                   std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
                                   std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t> ||
                                   std::is_same_v<T, bool> || std::is_same_v<T, complex64> ||
                                   std::is_same_v<T, complex128>;

template <class T>
concept dtype = is_dtype_v<T>;

// A stable code per dtype, exchanged between ranks to detect mismatches (and
// the runtime's name for a dtype: runtime/ never sees the C++ types).
template <dtype T>
constexpr int dtype_code() {
  if constexpr (std::is_same_v<T, bool>) return 1;
  else if constexpr (std::is_same_v<T, std::int32_t>) return 2;
  else if constexpr (std::is_same_v<T, std::int64_t>) return 3;
  else if constexpr (std::is_same_v<T, float>) return 4;
  else if constexpr (std::is_same_v<T, double>) return 5;
  else if constexpr (std::is_same_v<T, complex64>) return 6;
  else if constexpr (std::is_same_v<T, complex128>) return 7;
  else if constexpr (std::is_same_v<T, std::int8_t>) return 8;
  else if constexpr (std::is_same_v<T, std::int16_t>) return 9;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return 10;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return 11;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return 12;
  else return 13;
}

constexpr std::string_view dtype_name(int code) {
  switch (code) {
    case 1: return "bool";
    case 2: return "int32";
    case 3: return "int64";
    case 4: return "float32";
    case 5: return "float64";
    case 6: return "complex64";
    case 7: return "complex128";
    case 8: return "int8";
    case 9: return "int16";
    case 10: return "uint8";
    case 11: return "uint16";
    case 12: return "uint32";
    case 13: return "uint64";
  }
  return "unknown";
}

template <dtype T>
constexpr std::string_view dtype_name() {
  return dtype_name(dtype_code<T>());
}

}  // namespace ember
