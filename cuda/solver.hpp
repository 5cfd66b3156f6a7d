// cuSOLVER (dense) on device pointers (optional CUDA backend), T = float or double.
//
// The same contracts as runtime/lapack.hpp's routines of the same names
// (column-major, leading dimensions), so callers can switch between the two.
// Each call queries its workspace size, takes the workspace from the device's
// stream-ordered pool, runs on `st` (default: the current device's ember stream),
// then waits for the stream to read cuSOLVER's devInfo: these calls are
// synchronous. Illegal arguments are value_errors naming the routine and the
// argument; devInfo > 0 (no convergence) is a value_error too; a failing cuSOLVER
// status is a device_error. Sizes must fit in int (cuSOLVER's legacy API).
#pragma once

#include <cstdint>

#include "device.hpp"

namespace ember::cuda::solver {

// Householder QR: R in the upper triangle, reflectors below, tau[min(m, n)].
template <class T>
void geqrf(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau, stream_t st = stream());
// The first n columns of Q (m x n, n <= m) from geqrf's k reflectors (k <= n).
template <class T>
void orgqr(std::int64_t m, std::int64_t n, std::int64_t k, T* a, std::int64_t lda, const T* tau,
           stream_t st = stream());
// Thin SVD A = U diag(s) VT, k = min(m, n) singular values descending in s;
// jobz 'S': U is m x k, VT is k x n; 'N': values only (u, vt unused). Any m, n
// (cuSOLVER's gesvd needs m >= n: a wide A is transposed on the device first).
// A is destroyed.
template <class T>
void gesvd(char jobz, std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* s, T* u, std::int64_t ldu, T* vt,
           std::int64_t ldvt, stream_t st = stream());
// Symmetric eigendecomposition: eigenvalues ascending in w, vectors in A (jobz 'V')
// as columns; uplo 'U' or 'L' names the triangle of A that is read.
template <class T>
void syevd(char jobz, char uplo, std::int64_t n, T* a, std::int64_t lda, T* w, stream_t st = stream());

}  // namespace ember::cuda::solver
