// Checked 64-bit arithmetic for sizes: element counts, byte counts, offsets and
// sums of per-rank extents. A shape whose element count or byte size does not fit
// in a signed 64-bit integer would otherwise wrap (a (2^32, 2^32) array with 0
// elements, a 2^61-element double array allocating 0 bytes) and corrupt memory
// later; these throw ember::value_error naming the shape instead. Every input is
// replicated metadata, so every rank throws the same error.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "error.hpp"

namespace ember::detail {

inline std::optional<std::int64_t> mul_checked(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<std::int64_t> add_checked(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Number of elements of `shape` (extents already known to be >= 0). As NumPy, a
// shape with a zero extent has zero elements whatever its other extents are.
template <class Range>
std::int64_t checked_numel(const Range& shape, const std::string& what) {
  std::int64_t n = 1;
  for (auto e : shape)
    if (e == 0) return 0;
  for (auto e : shape) {
    const auto m = mul_checked(n, std::int64_t(e));
    if (!m)
      throw value_error(what + ": shape " + shape_str(shape) +
                        " has more elements than a 64-bit signed integer can count (the array is too big)");
    n = *m;
  }
  return n;
}

// Bytes of `n` elements of `item` bytes; the limit is what a pointer difference
// can hold (PTRDIFF_MAX), as for any C++ object.
template <class Range>
std::int64_t checked_bytes(const Range& shape, std::int64_t item, const std::string& what) {
  const std::int64_t n = checked_numel(shape, what);
  const auto b = mul_checked(n, item);
  if (!b)
    throw value_error(what + ": an array of shape " + shape_str(shape) + " with " + std::to_string(item) +
                      "-byte elements needs more than 2^63 bytes (the array is too big)");
  return *b;
}

// "4.0 GiB (4294967296 bytes)": sizes in messages.
inline std::string bytes_str(std::int64_t b) {
  static const char* unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return std::to_string(b) + " bytes";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return std::string(buf) + " " + unit[u] + " (" + std::to_string(b) + " bytes)";
}

}  // namespace ember::detail
