// The CUDA backend as libember's plugin (libember_cuda.so): runtime/device.hpp's
// device_backend over this folder's device, memory, copy and cuBLAS code.
// libember dlopens this file on the first GPU request and calls the one exported
// function; nothing else of the plugin is visible (RTLD_LOCAL).
#include <cuda_runtime_api.h>

#include "blas.hpp"
#include "copy.hpp"
#include "device.hpp"
#include "memory.hpp"
#include "dsl/dtype.hpp"
#include "runtime/device.hpp"

namespace ember::cuda {
namespace {

class backend final : public ember::detail::device_backend {
 public:
  int device_count() override { return cuda::device_count(); }
  std::string no_device_reason() override { return cuda::no_device_reason(); }
  void use_device(int ordinal) override { set_device(ordinal); }
  std::string device_description() override {
    const auto p = properties(current_device());
    return p.name + " (sm_" + std::to_string(p.cc_major) + std::to_string(p.cc_minor) + ", " +
           std::to_string(p.total_memory >> 30) + " GiB)";
  }
  std::shared_ptr<void> allocate(std::size_t bytes) override { return device_allocate(bytes); }
  std::shared_ptr<void> allocate_pinned(std::size_t bytes) override { return pinned_allocate(bytes); }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return;
    const stream_t s = cuda::stream();
    copy_async(dst, src, bytes, s);
    cuda::synchronize(s);
  }
  void zero(void* dst, std::size_t bytes) override {
    if (bytes == 0) return;
    detail::check(cudaMemsetAsync(dst, 0, bytes, cuda::stream()), "cudaMemsetAsync");
  }
  void synchronize() override { cuda::synchronize(cuda::stream()); }
  void* stream() override { return cuda::stream(); }
  int sm_count() override { return cuda::sm_count(-1); }
  void gemm_row_major(int code, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                      const void* a, std::int64_t lda, const void* b, std::int64_t ldb, double beta, void* c,
                      std::int64_t ldc) override {
    // float32 and float64 only (cuBLAS's real gemms)
    if (code == ember::dtype_code<float>())
      blas::gemm_row_major<float>(ta, tb, m, n, k, float(alpha), static_cast<const float*>(a), lda,
                                  static_cast<const float*>(b), ldb, float(beta), static_cast<float*>(c), ldc);
    else if (code == ember::dtype_code<double>())
      blas::gemm_row_major<double>(ta, tb, m, n, k, alpha, static_cast<const double*>(a), lda,
                                   static_cast<const double*>(b), ldb, beta, static_cast<double*>(c), ldc);
    else
      throw type_error("ember::cuda: gemm on the GPU takes float32 or float64, not " +
                       std::string(ember::dtype_name(code)));
  }
};

}  // namespace
}  // namespace ember::cuda

extern "C" __attribute__((visibility("default"))) ember::detail::device_backend* ember_cuda_backend_v1() {
  static ember::cuda::backend b;
  return &b;
}
