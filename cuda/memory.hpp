// Device memory and pinned host staging buffers (optional CUDA backend).
//
// Device blocks come from a stream-ordered pool (cudaMallocFromPoolAsync on one
// cudaMemPool per device, ember's own, so its statistics are ember's): freeing a
// block (the last shared_ptr going away) is cudaFreeAsync on the device's ember
// stream, and a later allocation on that stream reuses the memory without any
// synchronization or driver call. Memory freed to the pool stays reserved up to
// the release threshold (default: all of it, i.e. a caching allocator); the rest
// goes back to the driver at the next synchronization.
//
// Rule for users of these blocks: use them on the device's ember stream
// (cuda::stream(device)), or make the other stream wait for it with an event,
// because reuse is ordered on that stream only.
//
// Pinned (page-locked) host buffers, for copies that overlap with other work, are
// cached by size class and reused; like runtime/memory.hpp's host blocks, both are
// reference-counted std::shared_ptr blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "device.hpp"

namespace ember::cuda {

// `bytes` of device memory on `device` (-1: current), stream-ordered on its ember
// stream. Throws device_error (naming the size and the pool's state) when the
// pool cannot grow. 0 bytes gives a null pointer.
std::shared_ptr<void> device_allocate(std::size_t bytes, int device = -1);

template <class T>
std::shared_ptr<T[]> device_allocate_n(std::int64_t n, int device = -1) {
  auto p = device_allocate(std::size_t(n > 0 ? n : 0) * sizeof(T), device);
  return std::shared_ptr<T[]>(p, static_cast<T*>(p.get()));
}

struct device_pool_stats {
  std::int64_t count = 0;            // blocks handed out by device_allocate
  std::int64_t bytes = 0;            // bytes handed out, in total
  std::int64_t live_bytes = 0;       // bytes handed out and not yet freed
  std::int64_t peak_live_bytes = 0;
  std::uint64_t reserved_bytes = 0;  // held by the pool from the driver (cudaMemPoolAttrReservedMemCurrent)
  std::uint64_t used_bytes = 0;      // in use by allocations (cudaMemPoolAttrUsedMemCurrent)
};
device_pool_stats device_pool(int device = -1);
// Reserved memory above this many bytes goes back to the driver at the next
// synchronization (cudaMemPoolAttrReleaseThreshold). Default: UINT64_MAX (keep all).
void set_release_threshold(std::uint64_t bytes, int device = -1);
// Gives unused reserved memory back to the driver now, keeping at most `keep` bytes.
void trim_pool(std::size_t keep = 0, int device = -1);

// A page-locked host buffer of at least `bytes` (cudaMallocHost), from a cache of
// released buffers of the same size class (powers of two from 64 KiB). Releasing
// it while a copy still reads or writes it is the caller's bug: synchronize first.
std::shared_ptr<void> pinned_allocate(std::size_t bytes);

struct pinned_cache_stats {
  std::int64_t hits = 0, misses = 0;  // allocations served from the cache / by cudaMallocHost
  std::int64_t live_bytes = 0;        // handed out now (size classes, not requested sizes)
  std::int64_t cached_bytes = 0;      // released and kept for reuse
};
pinned_cache_stats pinned_cache();
// A buffer released when the cache would then hold more than this many bytes is
// freed instead of kept (default 1 GiB).
void set_pinned_cache_limit(std::size_t bytes);
// Frees every cached buffer now (cudaFreeHost).
void trim_pinned_cache();

}  // namespace ember::cuda
