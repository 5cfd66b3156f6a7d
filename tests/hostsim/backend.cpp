// A host-memory stand-in for the CUDA plugin, for testing ember's GPU plumbing on
// machines without a GPU: libember loads it instead of libember_cuda.so when
// EMBER_CUDA_BACKEND points at it. It is NOT a GPU and proves nothing about CUDA
// (the fused CUDA kernels cannot run on it; tests/gpu/run_on_device.sh is the GPU
// check). What it does prove: that everything ember does with GPU arrays outside
// the kernels (factories, .to(), the plans' to_host/to_device steps, staged moves,
// evaluation into existing device storage, cuBLAS/cuSOLVER call sequences of
// matmul and TSQR, results of linalg on the device) gives the host's values, and
// that ember never touches "device" memory from the host:
//
// every "device" block is its own mmap, kept PROT_NONE except inside this
// backend's calls, which open exactly the blocks they touch. A host read or write
// of device memory anywhere else is a SIGSEGV, i.e. a failed test. New blocks
// are filled with NaN bytes, so a read of memory nobody wrote shows up in values.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "dsl/dtype.hpp"
#include "runtime/device.hpp"
#include "runtime/error.hpp"
#include "runtime/lapack.hpp"

namespace {

std::size_t page() {
  static const std::size_t p = std::size_t(sysconf(_SC_PAGESIZE));
  return p;
}

// Live "device" blocks by base address: size in bytes (rounded to pages).
std::map<const char*, std::size_t>& blocks() {
  static std::map<const char*, std::size_t> b;
  return b;
}
std::mutex& lock() {
  static std::mutex m;
  return m;
}

// The block holding p (null when p is host memory).
const std::pair<const char* const, std::size_t>* block_of(const void* p) {
  auto& b = blocks();
  auto it = b.upper_bound(static_cast<const char*>(p));
  if (it == b.begin()) return nullptr;
  --it;
  const char* q = static_cast<const char*>(p);
  return q < it->first + it->second ? &*it : nullptr;
}

// Opens the device blocks holding the given pointers for the scope of one call.
class open_blocks {
 public:
  open_blocks(std::initializer_list<const void*> ps) {
    std::lock_guard<std::mutex> g(lock());
    for (const void* p : ps)
      if (auto* b = p ? block_of(p) : nullptr) {
        bool seen = false;
        for (auto* o : open_) seen = seen || o == b;
        if (!seen) {
          mprotect(const_cast<char*>(b->first), b->second, PROT_READ | PROT_WRITE);
          open_.push_back(b);
        }
      }
  }
  ~open_blocks() {
    std::lock_guard<std::mutex> g(lock());
    for (auto* b : open_) mprotect(const_cast<char*>(b->first), b->second, PROT_NONE);
  }
  open_blocks(const open_blocks&) = delete;
  open_blocks& operator=(const open_blocks&) = delete;

 private:
  std::vector<const std::pair<const char* const, std::size_t>*> open_;
};

template <class F>
void by_dtype(int code, const char* what, F&& f) {
  if (code == ember::dtype_code<float>()) f(float{});
  else if (code == ember::dtype_code<double>()) f(double{});
  else throw ember::type_error(std::string("ember hostsim: ") + what + " takes float32 or float64");
}

class hostsim final : public ember::detail::device_backend {
 public:
  int device_count() override { return 1; }
  std::string no_device_reason() override { return {}; }
  void use_device(int) override {}
  std::string device_description() override { return "host simulation (tests/hostsim, not a GPU)"; }

  std::shared_ptr<void> allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    const std::size_t size = (bytes + page() - 1) / page() * page();
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    std::memset(p, 0xFF, size);  // NaN in every float and double
    mprotect(p, size, PROT_NONE);
    {
      std::lock_guard<std::mutex> g(lock());
      blocks()[static_cast<const char*>(p)] = size;
    }
    return std::shared_ptr<void>(p, [size](void* q) {
      {
        std::lock_guard<std::mutex> g(lock());
        blocks().erase(static_cast<const char*>(q));
      }
      munmap(q, size);
    });
  }
  std::shared_ptr<void> allocate_pinned(std::size_t bytes) override {
    return std::shared_ptr<void>(std::malloc(bytes ? bytes : 1), std::free);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    open_blocks o{dst, src};
    std::memmove(dst, src, bytes);
  }
  void zero(void* dst, std::size_t bytes) override {
    if (bytes == 0) return;
    open_blocks o{dst};
    std::memset(dst, 0, bytes);
  }
  void synchronize() override {}
  void* stream() override { return nullptr; }
  int sm_count() override { return 1; }

  void gemm_row_major(int code, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                      const void* a, std::int64_t lda, const void* b, std::int64_t ldb, double beta, void* c,
                      std::int64_t ldc) override {
    // row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T
    gemm(code, tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
  }
  void transpose_row_major(int code, std::int64_t rows, std::int64_t cols, const void* in, void* out) override {
    open_blocks o{in, out};
    by_dtype(code, "transpose", [&](auto t) {
      using T = decltype(t);
      const T* x = static_cast<const T*>(in);
      T* y = static_cast<T*>(out);
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) y[j * rows + i] = x[i * cols + j];
    });
  }
  void gemm(int code, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const void* a,
            std::int64_t lda, const void* b, std::int64_t ldb, double beta, void* c, std::int64_t ldc) override {
    if (m == 0 || n == 0) return;
    open_blocks o{a, b, c};
    by_dtype(code, "gemm", [&](auto t) {
      using T = decltype(t);
      ember::lapack::gemm<T>(ta, tb, m, n, k, T(alpha), static_cast<const T*>(a), lda, static_cast<const T*>(b), ldb,
                             T(beta), static_cast<T*>(c), ldc);
    });
  }
  void geqrf(int code, std::int64_t m, std::int64_t n, void* a, std::int64_t lda, void* tau) override {
    open_blocks o{a, tau};
    by_dtype(code, "geqrf", [&](auto t) {
      using T = decltype(t);
      ember::lapack::geqrf<T>(m, n, static_cast<T*>(a), lda, static_cast<T*>(tau));
    });
  }
  void orgqr(int code, std::int64_t m, std::int64_t n, std::int64_t k, void* a, std::int64_t lda,
             const void* tau) override {
    open_blocks o{a, tau};
    by_dtype(code, "orgqr", [&](auto t) {
      using T = decltype(t);
      ember::lapack::orgqr<T>(m, n, k, static_cast<T*>(a), lda, static_cast<const T*>(tau));
    });
  }
  void copy_matrix(std::size_t elem, std::int64_t rows, std::int64_t cols, const void* src, std::int64_t lds,
                   void* dst, std::int64_t ldd) override {
    if (rows <= 0 || cols <= 0) return;
    open_blocks o{src, dst};
    for (std::int64_t j = 0; j < cols; ++j)
      std::memmove(static_cast<char*>(dst) + std::size_t(j * ldd) * elem,
                   static_cast<const char*>(src) + std::size_t(j * lds) * elem, std::size_t(rows) * elem);
  }
};

}  // namespace

extern "C" __attribute__((visibility("default"))) ember::detail::device_backend* ember_cuda_backend_v1() {
  static hostsim b;
  return &b;
}
