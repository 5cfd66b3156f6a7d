#include "memory.hpp"
#include "memory_pool.hpp"
#include "sanitizers.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include <sys/mman.h>

namespace ember {
namespace {
allocation_stats stats;
pool_stats_t pstats;
#ifdef EMBER_ADDRESS_SANITIZER
std::int64_t pool_limit = 0;
#else
std::int64_t pool_limit = std::int64_t(1) << 30;
#endif
constexpr std::size_t pool_min = std::size_t(64) << 10;
// Pooled blocks by padded size, oldest first (evicted first).
std::vector<std::pair<std::size_t, void*>> pool;
std::mutex pool_mutex;

constexpr std::size_t huge = std::size_t(2) << 20;
bool is_big(std::size_t bytes) { return bytes >= 2 * huge; }
std::size_t padded(std::size_t bytes) {
  const std::size_t a = is_big(bytes) ? huge : 64;
  return std::max<std::size_t>(a, (bytes + a - 1) / a * a);
}
void trim_locked(std::int64_t keep) {
  std::size_t i = 0;
  while (pstats.cached_bytes > keep && i < pool.size()) {
    pstats.cached_bytes -= std::int64_t(pool[i].first);
    std::free(pool[i].second);
    ++i;
  }
  pool.erase(pool.begin(), pool.begin() + std::ptrdiff_t(i));
}
}  // namespace

const allocation_stats& allocations() { return stats; }
const pool_stats_t& pool_stats() { return pstats; }
std::int64_t& memory_pool_limit() { return pool_limit; }
void release_memory_pool() {
  std::lock_guard<std::mutex> g(pool_mutex);
  trim_locked(0);
}

namespace detail {
void* aligned_alloc_counted(std::size_t bytes) {
  // Blocks of 4 MiB and more are aligned to 2 MiB and offered to the kernel as
  // transparent huge pages: first touch of a large array then costs one fault
  // per 2 MiB instead of one per 4 KiB. Smaller blocks are cache-line aligned.
  const bool big = is_big(bytes);
  const std::size_t sz = padded(bytes);
  std::lock_guard<std::mutex> g(pool_mutex);
  void* p = nullptr;
  if (sz >= pool_min) {
    auto it = std::find_if(pool.rbegin(), pool.rend(), [&](const auto& b) { return b.first == sz; });  // the warmest
    if (it != pool.rend()) {
      p = it->second;
      pstats.cached_bytes -= std::int64_t(sz);
      pool.erase(std::next(it).base());
      ++pstats.reused;
    }
  }
  if (!p) {
    p = std::aligned_alloc(big ? huge : 64, sz);
    if (!p && !pool.empty()) {  // memory held by the pool is memory the caller needs
      trim_locked(0);
      p = std::aligned_alloc(big ? huge : 64, sz);
    }
    if (!p) throw std::bad_alloc();
    if (big) madvise(p, sz, MADV_HUGEPAGE);  // advice only: failure changes nothing
    ++stats.count;
    stats.bytes += std::int64_t(bytes);
  }
  stats.live_bytes += std::int64_t(bytes);
  stats.peak_live_bytes = std::max(stats.peak_live_bytes, stats.live_bytes);
  return p;
}
void aligned_free_counted(void* p, std::size_t bytes) noexcept {
  std::lock_guard<std::mutex> g(pool_mutex);
  stats.live_bytes -= std::int64_t(bytes);
  if (!p) return;
  const std::size_t sz = padded(bytes);
  if (sz < pool_min || std::int64_t(sz) > pool_limit) {
    std::free(p);
    return;
  }
  try {
    pool.emplace_back(sz, p);
  } catch (...) {
    std::free(p);
    return;
  }
  pstats.cached_bytes += std::int64_t(sz);
  trim_locked(pool_limit);  // evicts the oldest first
}
}  // namespace detail
}  // namespace ember
