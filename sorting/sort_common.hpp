// What the sorting code shares: NumPy's order (NaN last; also the lookups' and
// unique's, sorting/lookup.hpp and unique.hpp), elements of any size sent as one
// MPI datatype (so that counts are elements), and MPI's int counts checked.
#pragma once

#include <algorithm>
#include <complex>

#include <climits>
#include <cstddef>
#include <new>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../runtime/communicator.hpp"
#include "../runtime/error.hpp"
#include "../runtime/memory.hpp"

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

// Sorts [first, last) in order<T>{descending}. For floating T the NaNs are
// moved to their end of the range first (after everything ascending, before
// everything descending) and the rest is sorted with the plain comparison:
// std::sort with the NaN-aware one runs a third slower, every comparison
// paying for two NaN tests. A stable sort keeps the input order within each
// part (std::stable_partition), so -0.0 and 0.0 keep theirs.
template <class T>
void sort_in_order(T* first, T* last, bool descending, bool stable) {
  if constexpr (std::is_floating_point_v<T>) {
    const auto not_nan = [](const T& v) { return v == v; };
    const auto is_nan = [](const T& v) { return v != v; };
    T* lo = first;
    T* hi = last;
    if (descending) lo = stable ? std::stable_partition(first, last, is_nan) : std::partition(first, last, is_nan);
    else hi = stable ? std::stable_partition(first, last, not_nan) : std::partition(first, last, not_nan);
    if (descending) {
      if (stable) std::stable_sort(lo, hi, std::greater<T>());
      else std::sort(lo, hi, std::greater<T>());
    } else {
      if (stable) std::stable_sort(lo, hi);
      else std::sort(lo, hi);
    }
  } else {
    const order<T> ord{descending};
    if (stable) std::stable_sort(first, last, ord);
    else std::sort(first, last, ord);
  }
}

// The sorting runtime's scratch allocator: memory from ember's block pool
// (runtime/memory_pool.hpp), default-initialized. From the pool, the buffers of
// a sort repeated on same-sized data (every iteration of a user's loop) come
// back warm: on a virtual machine the first touch of a fresh 64 MiB buffer cost
// a 2^24-element sort a sixth of its time, while a hand-written sort reuses its
// buffers. Large requests are rounded up to a size class (four per power of
// two) so that a receive buffer whose length the splitters vary a little from
// call to call still finds its block; rounding wastes at most a fifth. Not
// zeroed: every buffer is written before it is read. The blocks count in
// allocations() like arrays do, so the peak live bytes include a sort's scratch.
template <class T>
struct pooled_allocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = pooled_allocator<U>;
  };
  pooled_allocator() = default;
  template <class U>
  pooled_allocator(const pooled_allocator<U>&) noexcept {}
  static std::size_t bytes_for(std::size_t n) {
    if (n > PTRDIFF_MAX / sizeof(T)) throw std::bad_alloc();
    std::size_t b = n * sizeof(T);
    constexpr std::size_t classes_from = std::size_t(4) << 20;
    if (b > classes_from) {
      std::size_t top = classes_from;
      while (top * 2 < b) top *= 2;  // top < b <= 2 top: classes top * 5/4, 6/4, 7/4, 2
      const std::size_t step = top / 4;
      b = (b + step - 1) / step * step;
    }
    return b;
  }
  T* allocate(std::size_t n) { return static_cast<T*>(detail::aligned_alloc_counted(bytes_for(n))); }
  void deallocate(T* p, std::size_t n) noexcept { detail::aligned_free_counted(p, bytes_for(n)); }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    if constexpr (sizeof...(A) == 0) ::new (static_cast<void*>(p)) U;
    else ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
  friend bool operator==(const pooled_allocator&, const pooled_allocator&) { return true; }
};
template <class T>
using buffer = std::vector<T, pooled_allocator<T>>;

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
