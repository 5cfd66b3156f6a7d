// The CUDA backend as libember's plugin (libember_cuda.so): runtime/device.hpp's
// device_backend over this folder's device, memory, copy and cuBLAS code.
// libember dlopens this file on the first GPU request and calls the one exported
// function; nothing else of the plugin is visible (RTLD_LOCAL).
#include <cuda_runtime_api.h>

#include "blas.hpp"
#include "copy.hpp"
#include "device.hpp"
#include "memory.hpp"
#include "solver.hpp"
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
  void gemm(int code, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const void* a,
            std::int64_t lda, const void* b, std::int64_t ldb, double beta, void* c, std::int64_t ldc) override {
    if (code == ember::dtype_code<float>())
      blas::gemm<float>(ta, tb, m, n, k, float(alpha), static_cast<const float*>(a), lda, static_cast<const float*>(b),
                        ldb, float(beta), static_cast<float*>(c), ldc);
    else
      blas::gemm<double>(ta, tb, m, n, k, alpha, static_cast<const double*>(a), lda, static_cast<const double*>(b), ldb,
                         beta, static_cast<double*>(c), ldc);
  }
  void geqrf(int code, std::int64_t m, std::int64_t n, void* a, std::int64_t lda, void* tau) override {
    if (code == ember::dtype_code<float>())
      solver::geqrf<float>(m, n, static_cast<float*>(a), lda, static_cast<float*>(tau));
    else
      solver::geqrf<double>(m, n, static_cast<double*>(a), lda, static_cast<double*>(tau));
  }
  void orgqr(int code, std::int64_t m, std::int64_t n, std::int64_t k, void* a, std::int64_t lda,
             const void* tau) override {
    if (code == ember::dtype_code<float>())
      solver::orgqr<float>(m, n, k, static_cast<float*>(a), lda, static_cast<const float*>(tau));
    else
      solver::orgqr<double>(m, n, k, static_cast<double*>(a), lda, static_cast<const double*>(tau));
  }
  void copy_matrix(std::size_t elem, std::int64_t rows, std::int64_t cols, const void* src, std::int64_t lds,
                   void* dst, std::int64_t ldd) override {
    if (rows <= 0 || cols <= 0) return;
    const cudaStream_t s = cuda::stream();
    detail::check(cudaMemcpy2DAsync(dst, std::size_t(ldd) * elem, src, std::size_t(lds) * elem, std::size_t(rows) * elem,
                                    std::size_t(cols), cudaMemcpyDefault, s),
                  "cudaMemcpy2DAsync");
    cuda::synchronize(s);
  }
  void transpose_row_major(int code, std::int64_t rows, std::int64_t cols, const void* in, void* out) override {
    // row-major rows x cols is column-major cols x rows (ld cols); its transpose,
    // column-major rows x cols (ld rows), is the row-major cols x rows result
    const std::int64_t lda = cols > 1 ? cols : 1, ldb = rows > 1 ? rows : 1;
    if (code == ember::dtype_code<float>())
      blas::transpose<float>(cols, rows, static_cast<const float*>(in), lda, static_cast<float*>(out), ldb);
    else if (code == ember::dtype_code<double>())
      blas::transpose<double>(cols, rows, static_cast<const double*>(in), lda, static_cast<double*>(out), ldb);
    else
      throw type_error("ember::cuda: transpose on the GPU takes float32 or float64, not " +
                       std::string(ember::dtype_name(code)));
  }
};

}  // namespace
}  // namespace ember::cuda

extern "C" __attribute__((visibility("default"))) ember::detail::device_backend* ember_cuda_backend_v1() {
  static ember::cuda::backend b;
  return &b;
}
