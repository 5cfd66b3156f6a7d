#include "memory.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <vector>

#include "internal.hpp"

namespace ember::cuda {
namespace {

struct pool_counters {
  std::mutex m;
  device_pool_stats s;
};

pool_counters& counters(int device) {
  static auto* all = new pool_counters[std::size_t(device_count() > 0 ? device_count() : 1)];
  return all[device];
}

cudaMemPool_t pool_of(int d) {
  auto& s = detail::state(d);
  std::call_once(s.pool_once, [&] {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = d;
    cudaMemPool_t p = nullptr;
    detail::check(cudaMemPoolCreate(&p, &props), "cudaMemPoolCreate");
    std::uint64_t keep_all = std::numeric_limits<std::uint64_t>::max();
    detail::check(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep_all),
                  "cudaMemPoolSetAttribute(ReleaseThreshold)");
    s.pool = p;
  });
  return s.pool;
}

std::uint64_t pool_attribute(cudaMemPool_t p, cudaMemPoolAttr a) {
  std::uint64_t v = 0;
  detail::check(cudaMemPoolGetAttribute(p, a, &v), "cudaMemPoolGetAttribute");
  return v;
}

}  // namespace

std::shared_ptr<void> device_allocate(std::size_t bytes, int device) {
  const int d = detail::resolve(device);
  if (bytes == 0) return std::shared_ptr<void>(nullptr, [](void*) {});
  cudaMemPool_t p = pool_of(d);
  cudaStream_t st = stream(d);
  void* ptr = nullptr;
  const cudaError_t e = cudaMallocFromPoolAsync(&ptr, bytes, p, st);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    const auto s = device_pool(d);
    detail::throw_cuda_error(e, ("ember::cuda::device_allocate(" + std::to_string(bytes) + " bytes on device " +
                                 std::to_string(d) + ", pool reserved " + std::to_string(s.reserved_bytes) +
                                 " bytes, live " + std::to_string(s.live_bytes) + ")")
                                    .c_str());
  }
  auto& c = counters(d);
  {
    std::lock_guard<std::mutex> l(c.m);
    ++c.s.count;
    c.s.bytes += std::int64_t(bytes);
    c.s.live_bytes += std::int64_t(bytes);
    c.s.peak_live_bytes = std::max(c.s.peak_live_bytes, c.s.live_bytes);
  }
  return std::shared_ptr<void>(ptr, [st, d, bytes](void* q) {
    // Stream-ordered: the block is reusable once the work queued so far is done.
    // Errors (e.g. the driver shutting down at exit) cannot be reported from here.
    if (cudaFreeAsync(q, st) != cudaSuccess) (void)cudaGetLastError();
    auto& cc = counters(d);
    std::lock_guard<std::mutex> l(cc.m);
    cc.s.live_bytes -= std::int64_t(bytes);
  });
}

device_pool_stats device_pool(int device) {
  const int d = detail::resolve(device);
  device_pool_stats r;
  {
    auto& c = counters(d);
    std::lock_guard<std::mutex> l(c.m);
    r = c.s;
  }
  cudaMemPool_t p = pool_of(d);
  r.reserved_bytes = pool_attribute(p, cudaMemPoolAttrReservedMemCurrent);
  r.used_bytes = pool_attribute(p, cudaMemPoolAttrUsedMemCurrent);
  return r;
}

void set_release_threshold(std::uint64_t bytes, int device) {
  cudaMemPool_t p = pool_of(detail::resolve(device));
  detail::check(cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &bytes),
                "cudaMemPoolSetAttribute(ReleaseThreshold)");
}

void trim_pool(std::size_t keep, int device) {
  const int d = detail::resolve(device);
  detail::check(cudaStreamSynchronize(stream(d)), "cudaStreamSynchronize");
  detail::check(cudaMemPoolTrimTo(pool_of(d), keep), "cudaMemPoolTrimTo");
}

// ---- pinned host buffers ---------------------------------------------------

namespace {

struct pinned_cache_state {
  std::mutex m;
  std::map<std::size_t, std::vector<void*>> free;  // size class -> released buffers
  pinned_cache_stats s;
  std::size_t limit = std::size_t(1) << 30;
};

// Leaked on purpose: buffers may be released during static destruction.
pinned_cache_state& cache() {
  static auto* c = new pinned_cache_state;
  return *c;
}

std::size_t size_class(std::size_t bytes) {
  std::size_t c = std::size_t(64) << 10;
  while (c < bytes) c <<= 1;
  return c;
}

void release_pinned(void* p, std::size_t cls) noexcept {
  auto& c = cache();
  {
    std::lock_guard<std::mutex> l(c.m);
    c.s.live_bytes -= std::int64_t(cls);
    if (std::size_t(c.s.cached_bytes) + cls <= c.limit) {
      try {
        c.free[cls].push_back(p);
        c.s.cached_bytes += std::int64_t(cls);
        return;
      } catch (...) {
        // no memory for the list entry: free the buffer instead
      }
    }
  }
  if (cudaFreeHost(p) != cudaSuccess) (void)cudaGetLastError();
}

}  // namespace

std::shared_ptr<void> pinned_allocate(std::size_t bytes) {
  if (bytes == 0) return std::shared_ptr<void>(nullptr, [](void*) {});
  const std::size_t cls = size_class(bytes);
  auto& c = cache();
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> l(c.m);
    auto it = c.free.find(cls);
    if (it != c.free.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      c.s.cached_bytes -= std::int64_t(cls);
      ++c.s.hits;
      c.s.live_bytes += std::int64_t(cls);
    }
  }
  if (!p) {
    detail::resolve(-1);  // a clear "no CUDA device" error rather than the driver's
    const cudaError_t e = cudaMallocHost(&p, cls);
    if (e != cudaSuccess)
      detail::throw_cuda_error(e, ("ember::cuda::pinned_allocate(" + std::to_string(bytes) + " bytes)").c_str());
    std::lock_guard<std::mutex> l(c.m);
    ++c.s.misses;
    c.s.live_bytes += std::int64_t(cls);
  }
  return std::shared_ptr<void>(p, [cls](void* q) { release_pinned(q, cls); });
}

pinned_cache_stats pinned_cache() {
  auto& c = cache();
  std::lock_guard<std::mutex> l(c.m);
  return c.s;
}

void set_pinned_cache_limit(std::size_t bytes) {
  auto& c = cache();
  std::lock_guard<std::mutex> l(c.m);
  c.limit = bytes;
}

void trim_pinned_cache() {
  std::map<std::size_t, std::vector<void*>> all;
  {
    auto& c = cache();
    std::lock_guard<std::mutex> l(c.m);
    all.swap(c.free);
    c.s.cached_bytes = 0;
  }
  for (auto& [cls, v] : all)
    for (void* p : v)
      if (cudaFreeHost(p) != cudaSuccess) (void)cudaGetLastError();
}

}  // namespace ember::cuda
