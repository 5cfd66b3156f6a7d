// The ScaLAPACK bridge: BLACS process grids, the 2-D block-cyclic layout and array
// descriptors, and typed wrappers of the ScaLAPACK routines ember calls.
//
// The block-cyclic layout is one more `distribution` (a list of boxes per rank), so
// converting a split dndarray to and from it is the exchange engine, the same code
// that resplits: there is no separate conversion code to keep in sync.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "communicator.hpp"
#include "lapack.hpp"
#include "layout.hpp"

namespace ember::scalapack {

// ScaLAPACK's NUMROC: how many of `n` rows (or columns) in blocks of `nb` the
// process at coordinate `iproc` of `nprocs` holds (first block on process 0).
std::int64_t numroc(std::int64_t n, std::int64_t nb, int iproc, int nprocs);

// The grid shape ember uses for P ranks: Pr x Pc = P with Pr <= Pc as close to
// square as P allows (1 x P for primes).
std::pair<int, int> grid_shape(int nranks);

// A 2-D block-cyclic distribution of an M x N matrix over a Pr x Pc process grid
// in row-major rank order (rank = pr * Pc + pc, BLACS's "Row" order), blocks of
// MB x NB, first block on process (0, 0). Each rank stores its local matrix in
// column-major order with leading dimension lld(rank) = max(1, local rows), as
// ScaLAPACK expects.
class block_cyclic final : public distribution {
 public:
  block_cyclic(std::int64_t m, std::int64_t n, int prow, int pcol, std::int64_t mb, std::int64_t nb);

  const index_vec& shape() const override { return shape_; }
  int nranks() const override { return prow_ * pcol_; }
  bool replicated() const override { return false; }
  std::vector<piece> pieces(int rank) const override;
  std::vector<int> owners(const box_nd& b) const override;
  std::int64_t local_size(int rank) const override { return lld(rank) * local_cols(rank); }

  std::int64_t rows() const { return shape_[0]; }
  std::int64_t cols() const { return shape_[1]; }
  int prow() const { return prow_; }
  int pcol() const { return pcol_; }
  std::int64_t mb() const { return mb_; }
  std::int64_t nb() const { return nb_; }
  int my_row(int rank) const { return rank / pcol_; }
  int my_col(int rank) const { return rank % pcol_; }
  std::int64_t local_rows(int rank) const { return numroc(shape_[0], mb_, my_row(rank), prow_); }
  std::int64_t local_cols(int rank) const { return numroc(shape_[1], nb_, my_col(rank), pcol_); }
  std::int64_t lld(int rank) const { return std::max<std::int64_t>(1, local_rows(rank)); }

 private:
  index_vec shape_;
  int prow_, pcol_;
  std::int64_t mb_, nb_;
};

// The default block size ember uses for ScaLAPACK (64, or smaller for small matrices
// so every process gets a block).
std::int64_t default_block(std::int64_t n, int nprocs);
// The block-cyclic layout ember uses for an m x n matrix on `nranks` ranks.
block_cyclic default_block_cyclic(std::int64_t m, std::int64_t n, int nranks);

// A BLACS context over a communicator's ranks in a Pr x Pc grid, created once per
// (communicator, grid shape) and cached for the communicator's lifetime.
class grid {
 public:
  // Collective over `comm` the first time a shape is requested.
  static const grid& get(const communicator& comm, int prow, int pcol);
  int context() const { return ctxt_; }
  int prow() const { return prow_; }
  int pcol() const { return pcol_; }
  int my_row() const { return myrow_; }
  int my_col() const { return mycol_; }

  grid(int ctxt, int prow, int pcol, int myrow, int mycol)
      : ctxt_(ctxt), prow_(prow), pcol_(pcol), myrow_(myrow), mycol_(mycol) {}

 private:
  int ctxt_, prow_, pcol_, myrow_, mycol_;
};
// How many BLACS contexts ember has created in this process (tests check caching).
int grids_created();

// A ScaLAPACK array descriptor (DESC_) for this rank's part of `l` on `g`.
struct descriptor {
  int d[9];
  int* data() { return d; }
  const int* data() const { return d; }
};
descriptor describe(const block_cyclic& l, const grid& g, int rank);

// ---- typed ScaLAPACK calls (T = float, double, std::complex<float> or
// std::complex<double>: p?gemm's s/d/c/z); matrices are (A, IA, JA, DESCA) with
// 1-based IA/JA as in ScaLAPACK. Each throws ember::error on INFO != 0. For
// complex T the orthogonal routines are the unitary ones (p?ungqr, p?heevd),
// singular values and eigenvalues are real (lapack::real_t<T>) and a
// transpose argument may also be 'C' (conjugate transpose). ----
template <class T>
void pgemm(char transa, char transb, int m, int n, int k, T alpha, const T* a, const descriptor& da, const T* b,
           const descriptor& db, T beta, T* c, const descriptor& dc);
// QR: A is overwritten by R (upper triangle) and the reflectors; tau has
// local_cols(A) entries.
template <class T>
void pgeqrf(int m, int n, T* a, const descriptor& da, T* tau);
// Forms the m x n matrix Q with orthonormal columns from pgeqrf's reflectors (k of
// them): p?orgqr, p?ungqr for complex T.
template <class T>
void porgqr(int m, int n, int k, T* a, const descriptor& da, const T* tau);
// SVD: jobu/jobvt 'V' or 'N'; s has min(m, n) entries (replicated on every rank).
template <class T>
void pgesvd(char jobu, char jobvt, int m, int n, T* a, const descriptor& da, lapack::real_t<T>* s, T* u, const descriptor& du, T* vt,
            const descriptor& dvt);
// Solves A X = B (A n x n, B n x nrhs), overwriting B with X and A with its LU factors.
template <class T>
void pgesv(int n, int nrhs, T* a, const descriptor& da, T* b, const descriptor& db);
// Cholesky factor: uplo 'L' or 'U' of A is overwritten with the factor.
template <class T>
void ppotrf(char uplo, int n, T* a, const descriptor& da);
// LU with partial pivoting (A = P L U): A is overwritten by L and U, ipiv gets
// this rank's pivots (LOCr(M) + MB entries, 1-based global rows). Returns INFO:
// 0, or i > 0 when U(i, i) is exactly zero (the factors are complete; not an error
// for a determinant, one for an inverse).
template <class T>
int pgetrf(int m, int n, T* a, const descriptor& da, std::vector<int>& ipiv);
// The inverse from pgetrf's factors and pivots, in place (A square, MB = NB).
template <class T>
void pgetri(int n, T* a, const descriptor& da, std::vector<int>& ipiv);
// Solves op(A) X = B for a triangular A (uplo 'U'/'L', trans 'N'/'T', diag
// 'N'/'U'), B overwritten by X; an exactly zero diagonal entry throws value_error.
template <class T>
void ptrtrs(char uplo, char trans, char diag, int n, int nrhs, const T* a, const descriptor& da, T* b,
            const descriptor& db);
// Symmetric (complex: Hermitian, p?heevd) eigendecomposition by divide and
// conquer: w gets the n eigenvalues in ascending order (replicated), z the
// eigenvectors (jobz 'V'), or jobz 'N'.
template <class T>
void psyevd(char jobz, char uplo, int n, T* a, const descriptor& da, lapack::real_t<T>* w, T* z,
            const descriptor& dz);

}  // namespace ember::scalapack
