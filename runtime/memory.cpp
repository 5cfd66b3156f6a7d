#include "memory.hpp"

#include <algorithm>
#include <cstdlib>

namespace ember {
namespace {
allocation_stats stats;
}

const allocation_stats& allocations() { return stats; }

namespace detail {
void* aligned_alloc_counted(std::size_t bytes) {
  // Round up to the alignment, as std::aligned_alloc requires; never return null
  // for an empty block so handles stay distinguishable from "no storage".
  const std::size_t a = 64, sz = std::max<std::size_t>(a, (bytes + a - 1) / a * a);
  void* p = std::aligned_alloc(a, sz);
  if (!p) throw std::bad_alloc();
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
