// Element types ember arrays hold, and their names (NumPy's spelling).
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace ember {

template <class T>
inline constexpr bool is_dtype_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                   std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
                                   std::is_same_v<T, bool>;

template <class T>
concept dtype = is_dtype_v<T>;

// A stable code per dtype, exchanged between ranks to detect mismatches.
template <dtype T>
constexpr int dtype_code() {
  if constexpr (std::is_same_v<T, bool>) return 1;
  else if constexpr (std::is_same_v<T, std::int32_t>) return 2;
  else if constexpr (std::is_same_v<T, std::int64_t>) return 3;
  else if constexpr (std::is_same_v<T, float>) return 4;
  else return 5;
}

constexpr std::string_view dtype_name(int code) {
  switch (code) {
    case 1: return "bool";
    case 2: return "int32";
    case 3: return "int64";
    case 4: return "float32";
    case 5: return "float64";
  }
  return "unknown";
}

template <dtype T>
constexpr std::string_view dtype_name() {
  return dtype_name(dtype_code<T>());
}

}  // namespace ember
