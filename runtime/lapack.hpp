// Typed wrappers of the local BLAS/LAPACK routines ember calls (T = float or
// double). Matrices are column-major with a leading dimension, as in LAPACK; a
// row-major m x n block of a dndarray is the column-major n x m matrix of its
// transpose, which callers use instead of copying. Each throws ember::error on
// INFO != 0, naming the routine.
#pragma once

#include <complex>
#include <cstdint>

namespace ember::lapack {

// The real type of a LAPACK scalar: singular values and eigenvalues of complex
// matrices are real (double for complex<double>).
template <class T>
struct real_type {
  using type = T;
};
template <class T>
struct real_type<std::complex<T>> {
  using type = T;
};
template <class T>
using real_t = typename real_type<T>::type;

// C = alpha op(A) op(B) + beta C; op(A) is m x k, op(B) k x n; op 'N', 'T'
// (transpose) or 'C' (conjugate transpose; the transpose for real T).
template <class T>
void gemm(char op_a, char op_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda,
          const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc);
// The same with op 'T' where trans_* is set.
template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc);
// y = alpha op(A) x + beta y; A is m x n (column-major, lda), op(A) = A^T when trans.
template <class T>
void gemv(bool trans, std::int64_t m, std::int64_t n, T alpha, const T* a, std::int64_t lda, const T* x,
          std::int64_t incx, T beta, T* y, std::int64_t incy);
// C = alpha op(A) op(A)^T + beta C, only the `uplo` ('U' or 'L') triangle of the
// n x n C; op(A) is n x k (trans: A is stored k x n).
template <class T>
void syrk(char uplo, bool trans, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda, T beta, T* c,
          std::int64_t ldc);
// Householder QR: R in the upper triangle, reflectors below, tau[min(m, n)].
template <class T>
void geqrf(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau);
// The first n columns of Q (m x n, n <= m) from geqrf's k reflectors.
template <class T>
void orgqr(std::int64_t m, std::int64_t n, std::int64_t k, T* a, std::int64_t lda, const T* tau);
// Applies Q (side 'L' or 'R', trans 'N' or 'T') from geqrf's k reflectors to C (m x n).
template <class T>
void ormqr(char side, char trans, std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda,
           const T* tau, T* c, std::int64_t ldc);
// SVD by divide and conquer; jobz 'S' (thin U, VT), 'A', 'O' or 'N'. A is destroyed.
// (complex: VT is V^H and s real)
template <class T>
void gesdd(char jobz, std::int64_t m, std::int64_t n, T* a, std::int64_t lda, real_t<T>* s, T* u, std::int64_t ldu, T* vt,
           std::int64_t ldvt);
// Symmetric eigendecomposition: eigenvalues ascending in w, vectors in A (jobz 'V').
template <class T>
void syevd(char jobz, char uplo, std::int64_t n, T* a, std::int64_t lda, T* w);
template <class T>
void potrf(char uplo, std::int64_t n, T* a, std::int64_t lda);
// Householder QR with the compact WY representation: R in the upper triangle, the
// reflectors V below, and the upper triangular nb x nb blocks T of Q = I - V T V^T
// in t (ldt >= nb; with nb = min(m, n), one block: Q = I - V T V^T exactly;
// V^H for complex T).
template <class T>
void geqrt(std::int64_t m, std::int64_t n, std::int64_t nb, T* a, std::int64_t lda, T* t, std::int64_t ldt);
// Solves A X = B in place (LU with partial pivoting).
template <class T>
void gesv(std::int64_t n, std::int64_t nrhs, T* a, std::int64_t lda, T* b, std::int64_t ldb);

}  // namespace ember::lapack
