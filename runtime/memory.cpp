#include "memory.hpp"

#include <algorithm>
#include <cstdlib>

#include <sys/mman.h>

namespace ember {
namespace {
allocation_stats stats;
}

const allocation_stats& allocations() { return stats; }

namespace detail {
void* aligned_alloc_counted(std::size_t bytes) {
  // Blocks of 4 MiB and more are aligned to 2 MiB and offered to the kernel as
  // transparent huge pages: first touch of a large array then costs one fault
  // per 2 MiB instead of one per 4 KiB. Smaller blocks are cache-line aligned.
  constexpr std::size_t huge = std::size_t(2) << 20;
  const bool big = bytes >= 2 * huge;
  const std::size_t a = big ? huge : 64, sz = std::max<std::size_t>(a, (bytes + a - 1) / a * a);
  void* p = std::aligned_alloc(a, sz);
  if (!p) throw std::bad_alloc();
  if (big) madvise(p, sz, MADV_HUGEPAGE);  // advice only: failure changes nothing
  ++stats.count;
  stats.bytes += std::int64_t(bytes);
  stats.live_bytes += std::int64_t(bytes);
  stats.peak_live_bytes = std::max(stats.peak_live_bytes, stats.live_bytes);
  return p;
}
void aligned_free_counted(void* p, std::size_t bytes) noexcept {
  stats.live_bytes -= std::int64_t(bytes);
  std::free(p);
}
}  // namespace detail
}  // namespace ember
