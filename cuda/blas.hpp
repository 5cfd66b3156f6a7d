// cuBLAS on device pointers (optional CUDA backend), T = float or double.
//
// As in runtime/lapack.hpp, matrices are column-major with a leading dimension;
// a row-major m x n block (as ember stores it) is the column-major n x m matrix of
// its transpose. gemm_row_major does that bookkeeping for row-major operands.
// Calls are queued on `s` (default: the current device's ember stream) through
// the device's cuBLAS handle (created on first use; not for concurrent use from
// several threads). 64-bit sizes (cuBLAS's _64 API). Default math mode: float
// stays IEEE FP32 (no TF32); double uses the FP64 units.
#pragma once

#include <cstdint>

#include "device.hpp"

namespace ember::cuda::blas {

// C = alpha op(A) op(B) + beta C; op(A) is m x k, op(B) k x n; column-major.
template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc, stream_t s = stream());

// The same for row-major operands (lda, ldb, ldc are row strides): computed as the
// column-major C^T = op(B)^T op(A)^T, with no copies.
template <class T>
void gemm_row_major(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                    const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc,
                    stream_t s = stream());

// B = A^T out of place: A is rows x cols column-major (lda >= rows), B is
// cols x rows (ldb >= cols). Also converts a row-major block to column-major.
template <class T>
void transpose(std::int64_t rows, std::int64_t cols, const T* a, std::int64_t lda, T* b, std::int64_t ldb,
               stream_t s = stream());

}  // namespace ember::cuda::blas
