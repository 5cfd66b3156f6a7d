#include "copy.hpp"

#include <algorithm>
#include <memory>

#include "internal.hpp"
#include "memory.hpp"

namespace ember::cuda {

void copy_async(void* dst, const void* src, std::size_t bytes, stream_t s) {
  if (bytes == 0) return;
  detail::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s), "cudaMemcpyAsync");
}
void copy_to_device_async(void* dst, const void* src, std::size_t bytes, stream_t s) {
  if (bytes == 0) return;
  detail::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync(host to device)");
}
void copy_to_host_async(void* dst, const void* src, std::size_t bytes, stream_t s) {
  if (bytes == 0) return;
  detail::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync(device to host)");
}
void copy_device_async(void* dst, const void* src, std::size_t bytes, stream_t s) {
  if (bytes == 0) return;
  detail::check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync(device to device)");
}
void copy_peer_async(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes, stream_t s) {
  if (bytes == 0) return;
  detail::check(cudaMemcpyPeerAsync(dst, detail::resolve(dst_device), src, detail::resolve(src_device), bytes, s),
                "cudaMemcpyPeerAsync");
}
void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  stream_t s = stream();
  copy_to_device_async(dst, src, bytes, s);
  synchronize(s);
}
void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  stream_t s = stream();
  copy_to_host_async(dst, src, bytes, s);
  synchronize(s);
}

namespace {

// Two pinned buffers, each with an event marking the end of the last copy that
// used it; the destructor waits for both, so the buffers never go back to the
// cache while a copy still uses them (also when a callback throws).
class double_buffer {
 public:
  explicit double_buffer(std::size_t chunk) {
    try {
      for (int i = 0; i < 2; ++i) {
        buf_[i] = pinned_allocate(chunk);
        detail::check(cudaEventCreateWithFlags(&ev_[i], cudaEventDisableTiming), "cudaEventCreateWithFlags");
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~double_buffer() { release(); }
  double_buffer(const double_buffer&) = delete;
  double_buffer& operator=(const double_buffer&) = delete;

  void* data(int i) const { return buf_[i].get(); }
  void record(int i, cudaStream_t s) { detail::check(cudaEventRecord(ev_[i], s), "cudaEventRecord"); }
  void wait(int i) { detail::check(cudaEventSynchronize(ev_[i]), "cudaEventSynchronize"); }

 private:
  void release() noexcept {
    for (auto& e : ev_)
      if (e) {
        (void)cudaEventSynchronize(e);
        (void)cudaEventDestroy(e);
        e = nullptr;
      }
    (void)cudaGetLastError();
  }

  std::shared_ptr<void> buf_[2];
  cudaEvent_t ev_[2] = {nullptr, nullptr};
};

std::size_t chunk_size(std::size_t bytes, std::size_t chunk_bytes) {
  if (chunk_bytes == 0) throw value_error("ember::cuda: staged copy with a chunk size of 0 bytes");
  return std::min(bytes, chunk_bytes);
}

}  // namespace

void staged_download(const void* src, std::size_t bytes, std::size_t chunk_bytes, const staged_consumer& consume,
                     stream_t s) {
  if (bytes == 0) return;
  const std::size_t chunk = chunk_size(bytes, chunk_bytes);
  const std::size_t n = (bytes + chunk - 1) / chunk;
  const auto* from = static_cast<const char*>(src);
  double_buffer db(chunk);
  auto issue = [&](std::size_t i) {
    const int b = int(i % 2);
    const std::size_t off = i * chunk, len = std::min(chunk, bytes - off);
    copy_to_host_async(db.data(b), from + off, len, s);
    db.record(b, s);
  };
  issue(0);
  if (n > 1) issue(1);
  for (std::size_t i = 0; i < n; ++i) {
    const int b = int(i % 2);
    const std::size_t off = i * chunk, len = std::min(chunk, bytes - off);
    db.wait(b);
    consume(db.data(b), off, len);
    if (i + 2 < n) issue(i + 2);  // into the buffer just consumed
  }
}

void staged_upload(void* dst, std::size_t bytes, std::size_t chunk_bytes, const staged_producer& produce,
                   stream_t s) {
  if (bytes == 0) return;
  const std::size_t chunk = chunk_size(bytes, chunk_bytes);
  const std::size_t n = (bytes + chunk - 1) / chunk;
  auto* to = static_cast<char*>(dst);
  double_buffer db(chunk);
  for (std::size_t i = 0; i < n; ++i) {
    const int b = int(i % 2);
    const std::size_t off = i * chunk, len = std::min(chunk, bytes - off);
    if (i >= 2) db.wait(b);  // the copy out of this buffer (chunk i-2) is done
    produce(db.data(b), off, len);
    copy_to_device_async(to + off, db.data(b), len, s);
    db.record(b, s);
  }
  for (int b = 0; b < 2 && std::size_t(b) < n; ++b) db.wait(b);
}

}  // namespace ember::cuda
