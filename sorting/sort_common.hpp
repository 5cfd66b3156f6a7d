// What the sorting runtime shares: NumPy's order (NaN last), elements of any
// size sent as one MPI datatype (so that counts are elements), and MPI's int
// counts checked. Internal to sorting/*.cpp.
#pragma once

#include <complex>

#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../runtime/communicator.hpp"
#include "../runtime/error.hpp"

namespace ember::sorting_detail {

// NumPy's order: NaN after everything (and equal to NaN).
template <class T>
bool less_nan_last(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) return a < b || (a == a && b != b);
  else return a < b;
}
// NumPy's complex order (numpy/_core/src/npysort's CLT): lexicographic, real
// part first; NaN parts last, as [R + Rj, R + nanj, nan + Rj, nan + nanj].
template <class R>
bool less_nan_last(const std::complex<R>& a, const std::complex<R>& b) {
  const R ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  if (ar < br) return ai == ai || bi != bi;
  if (ar > br) return bi != bi && ai == ai;
  if (ar == br || (ar != ar && br != br)) return ai < bi || (bi != bi && ai == ai);
  return br != br;
}
// Ascending, or the ascending order reversed (NaN first).
template <class T>
struct order {
  bool descending = false;
  bool operator()(const T& a, const T& b) const { return descending ? less_nan_last(b, a) : less_nan_last(a, b); }
};

// One MPI datatype of `bytes` contiguous bytes.
struct byte_type {
  MPI_Datatype t{};
  explicit byte_type(std::size_t bytes) {
    detail::check_mpi(MPI_Type_contiguous(int(bytes), MPI_BYTE, &t), "MPI_Type_contiguous");
    detail::check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
  }
  byte_type(const byte_type&) = delete;
  byte_type& operator=(const byte_type&) = delete;
  ~byte_type() { MPI_Type_free(&t); }
};

// `v` as an MPI count; `op` names the operation for the message.
inline int mpi_count(std::int64_t v, const char* op, const char* what) {
  if (v > INT_MAX)
    throw value_error(std::string(op) + ": " + what + " of " + std::to_string(v) +
                      " elements exceeds MPI's int counts; spread the array over more ranks");
  return int(v);
}

}  // namespace ember::sorting_detail
