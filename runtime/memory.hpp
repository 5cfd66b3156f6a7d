// Local storage: 64-byte aligned, reference-counted blocks (views share them, as
// Kokkos views do), with a counter of allocations that tests can read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <new>

namespace ember {

struct allocation_stats {
  std::int64_t count = 0;  // blocks allocated by ember on this rank
  std::int64_t bytes = 0;  // bytes allocated
  std::int64_t live_bytes = 0;
  std::int64_t peak_live_bytes = 0;
};
const allocation_stats& allocations();

namespace detail {
void* aligned_alloc_counted(std::size_t bytes);
void aligned_free_counted(void* p, std::size_t bytes) noexcept;

template <class T>
std::shared_ptr<T[]> allocate(std::int64_t n) {
  // A count whose bytes overflow is a request no machine can meet.
  if (n > 0 && std::uint64_t(n) > std::uint64_t(PTRDIFF_MAX) / sizeof(T)) throw std::bad_alloc();
  const std::size_t bytes = std::size_t(n > 0 ? n : 0) * sizeof(T);
  T* p = static_cast<T*>(aligned_alloc_counted(bytes));
  return std::shared_ptr<T[]>(p, [bytes](T* q) { aligned_free_counted(q, bytes); });
}
}  // namespace detail
}  // namespace ember
