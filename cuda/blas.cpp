#include "blas.hpp"

#include <string>

#include <cublas_v2.h>

#include "internal.hpp"

namespace ember::cuda::blas {
namespace {

void check_blas(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw device_error(std::string(what) + ": " + cublasGetStatusName(st) + ": " + cublasGetStatusString(st),
                       int(st));
}

// The current device's handle, bound to stream s.
cublasHandle_t handle(stream_t s) {
  return detail::library_handle<cublasHandle_t>(
      &detail::per_device::blas_once, &detail::per_device::blas,
      [](cublasHandle_t* h) { check_blas(cublasCreate(h), "cublasCreate"); },
      [&](cublasHandle_t h) { check_blas(cublasSetStream(h, s), "cublasSetStream"); });
}

cublasOperation_t op(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

void check_dims(const char* who, std::int64_t m, std::int64_t n, std::int64_t k, const char* lda_name,
                std::int64_t lda, std::int64_t lda_min, const char* ldb_name, std::int64_t ldb,
                std::int64_t ldb_min, std::int64_t ldc, std::int64_t ldc_min) {
  auto bad = [&](const std::string& why) { throw value_error(std::string(who) + ": " + why); };
  if (m < 0 || n < 0 || k < 0)
    bad("negative extent (m, n, k) = (" + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) +
        ")");
  auto ld = [&](const char* name, std::int64_t v, std::int64_t min) {
    if (v < (min > 1 ? min : 1))
      bad(std::string(name) + " = " + std::to_string(v) + " is less than " + std::to_string(min > 1 ? min : 1));
  };
  ld(lda_name, lda, lda_min);
  ld(ldb_name, ldb, ldb_min);
  ld("ldc", ldc, ldc_min);
}

cublasStatus_t gemm_raw(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
                         std::int64_t n, std::int64_t k, const float* alpha, const float* a, std::int64_t lda,
                         const float* b, std::int64_t ldb, const float* beta, float* c, std::int64_t ldc) {
  return cublasSgemm_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t gemm_raw(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
                         std::int64_t n, std::int64_t k, const double* alpha, const double* a, std::int64_t lda,
                         const double* b, std::int64_t ldb, const double* beta, double* c, std::int64_t ldc) {
  return cublasDgemm_64(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t geam_raw(cublasHandle_t h, std::int64_t m, std::int64_t n, const float* a, std::int64_t lda,
                         float* c, std::int64_t ldc) {
  const float one = 1, zero = 0;
  return cublasSgeam_64(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, a, lda, &zero, c, ldc, c, ldc);
}
cublasStatus_t geam_raw(cublasHandle_t h, std::int64_t m, std::int64_t n, const double* a, std::int64_t lda,
                         double* c, std::int64_t ldc) {
  const double one = 1, zero = 0;
  return cublasDgeam_64(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, a, lda, &zero, c, ldc, c, ldc);
}

template <class T>
void gemm_call(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
               std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc, stream_t s) {
  if (m == 0 || n == 0) return;
  check_blas(gemm_raw(handle(s), op(trans_a), op(trans_b), m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc),
             "ember::cuda::blas::gemm (cublas?gemm_64)");
}

}  // namespace

template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc, stream_t s) {
  // Column-major: op(A) m x k is stored (trans_a ? k x m : m x k), rows = its leading extent.
  check_dims("ember::cuda::blas::gemm", m, n, k, "lda", lda, trans_a ? k : m, "ldb", ldb, trans_b ? n : k, ldc,
             m);
  gemm_call(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
}

template <class T>
void gemm_row_major(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                    const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc,
                    stream_t s) {
  // Row-major: a row stride must cover a row (A is stored trans_a ? k x m : m x k).
  check_dims("ember::cuda::blas::gemm_row_major", m, n, k, "lda", lda, trans_a ? m : k, "ldb", ldb,
             trans_b ? k : n, ldc, n);
  // Row-major X is column-major X^T: C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m).
  gemm_call(trans_b, trans_a, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc, s);
}

template <class T>
void transpose(std::int64_t rows, std::int64_t cols, const T* a, std::int64_t lda, T* b, std::int64_t ldb,
               stream_t s) {
  if (rows < 0 || cols < 0)
    throw value_error("ember::cuda::blas::transpose: negative extent (" + std::to_string(rows) + ", " +
                      std::to_string(cols) + ")");
  if (lda < (rows > 1 ? rows : 1) || ldb < (cols > 1 ? cols : 1))
    throw value_error("ember::cuda::blas::transpose: leading dimensions (" + std::to_string(lda) + ", " +
                      std::to_string(ldb) + ") too small for a " + std::to_string(rows) + " x " +
                      std::to_string(cols) + " matrix");
  if (rows == 0 || cols == 0) return;
  // geam: B (cols x rows) = 1 * A^T + 0 * B.
  check_blas(geam_raw(handle(s), cols, rows, a, lda, b, ldb), "ember::cuda::blas::transpose (cublas?geam_64)");
}

#define EMBER_CUDA_BLAS(T)                                                                                        \
  template void gemm<T>(bool, bool, std::int64_t, std::int64_t, std::int64_t, T, const T*, std::int64_t, const T*, \
                        std::int64_t, T, T*, std::int64_t, stream_t);                                            \
  template void gemm_row_major<T>(bool, bool, std::int64_t, std::int64_t, std::int64_t, T, const T*,              \
                                  std::int64_t, const T*, std::int64_t, T, T*, std::int64_t, stream_t);           \
  template void transpose<T>(std::int64_t, std::int64_t, const T*, std::int64_t, T*, std::int64_t, stream_t);
EMBER_CUDA_BLAS(float)
EMBER_CUDA_BLAS(double)
#undef EMBER_CUDA_BLAS

}  // namespace ember::cuda::blas
