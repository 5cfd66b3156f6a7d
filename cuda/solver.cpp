#include "solver.hpp"

#include <climits>
#include <string>

#include <cusolverDn.h>

#include "blas.hpp"
#include "internal.hpp"
#include "memory.hpp"

namespace ember::cuda::solver {
namespace {

const char* status_name(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "cusolverStatus_t";
  }
}

void check_solver(cusolverStatus_t st, const std::string& what) {
  if (st != CUSOLVER_STATUS_SUCCESS)
    throw device_error(what + ": " + status_name(st) + " (" + std::to_string(int(st)) + ")", int(st));
}

// The current device's handle, bound to stream s.
cusolverDnHandle_t handle(stream_t s) {
  return detail::library_handle<cusolverDnHandle_t>(
      &detail::per_device::solver_once, &detail::per_device::solver,
      [](cusolverDnHandle_t* h) { check_solver(cusolverDnCreate(h), "cusolverDnCreate"); },
      [&](cusolverDnHandle_t h) { check_solver(cusolverDnSetStream(h, s), "cusolverDnSetStream"); });
}

// Argument checks in LAPACK's terms: "<routine>: argument <i> (<name> = v) ...".
struct args {
  const char* routine;
  [[noreturn]] void bad(int i, const char* name, std::int64_t v, const std::string& why) const {
    throw value_error(std::string(routine) + ": argument " + std::to_string(i) + " (" + name + " = " +
                      std::to_string(v) + ") " + why);
  }
  int extent(int i, const char* name, std::int64_t v) const {
    if (v < 0) bad(i, name, v, "is negative");
    if (v > INT_MAX) bad(i, name, v, "exceeds cuSOLVER's int range");
    return int(v);
  }
  int ld(int i, const char* name, std::int64_t v, std::int64_t rows) const {
    const std::int64_t min = rows > 1 ? rows : 1;
    if (v < min) bad(i, name, v, "is less than " + std::to_string(min));
    return extent(i, name, v);
  }
};

// devInfo, read after the stream has finished.
class dev_info {
 public:
  dev_info() : p_(device_allocate_n<int>(1)) {}
  int* get() const { return p_.get(); }
  int read(stream_t s) const {
    int v = 0;
    detail::check(cudaMemcpyAsync(&v, p_.get(), sizeof(int), cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync(devInfo)");
    synchronize(s);
    return v;
  }

 private:
  std::shared_ptr<int[]> p_;
};

void check_info(int info, const char* routine, const std::string& positive) {
  if (info < 0)
    throw value_error(std::string(routine) + ": argument " + std::to_string(-info) + " had an illegal value");
  if (info > 0) throw value_error(std::string(routine) + ": " + positive + " (info " + std::to_string(info) + ")");
}

// ---- float / double dispatch ----
#define EMBER_DISPATCH(name, S, D)                                              \
  template <class... A>                                                         \
  cusolverStatus_t name(float*, A... a) { return S(a...); }                     \
  template <class... A>                                                         \
  cusolverStatus_t name(double*, A... a) { return D(a...); }
EMBER_DISPATCH(geqrf_buf, cusolverDnSgeqrf_bufferSize, cusolverDnDgeqrf_bufferSize)
EMBER_DISPATCH(geqrf_run, cusolverDnSgeqrf, cusolverDnDgeqrf)
EMBER_DISPATCH(orgqr_buf, cusolverDnSorgqr_bufferSize, cusolverDnDorgqr_bufferSize)
EMBER_DISPATCH(orgqr_run, cusolverDnSorgqr, cusolverDnDorgqr)
EMBER_DISPATCH(gesvd_buf, cusolverDnSgesvd_bufferSize, cusolverDnDgesvd_bufferSize)
EMBER_DISPATCH(gesvd_run, cusolverDnSgesvd, cusolverDnDgesvd)
EMBER_DISPATCH(syevd_buf, cusolverDnSsyevd_bufferSize, cusolverDnDsyevd_bufferSize)
EMBER_DISPATCH(syevd_run, cusolverDnSsyevd, cusolverDnDsyevd)
#undef EMBER_DISPATCH

template <class T>
T* tag() {
  return nullptr;
}

// cuSOLVER's calling pattern: ask for the workspace size, take the workspace
// from the pool, run, read devInfo (synchronizes), report a positive one as
// `failure`. query(int* lwork) and run(T* work, int lwork, int* info) return the
// cuSOLVER status.
template <class T, class Query, class Run>
void with_workspace(const char* routine, stream_t st, const char* failure, Query&& query, Run&& run) {
  int lwork = 0;
  check_solver(query(&lwork), std::string(routine) + " (bufferSize)");
  auto work = device_allocate_n<T>(lwork > 0 ? lwork : 1);
  dev_info info;
  check_solver(run(work.get(), lwork, info.get()), routine);
  check_info(info.read(st), routine, failure);
}

}  // namespace

template <class T>
void geqrf(std::int64_t m64, std::int64_t n64, T* a, std::int64_t lda64, T* tau, stream_t st) {
  const args c{"ember::cuda::solver::geqrf"};
  const int m = c.extent(1, "m", m64), n = c.extent(2, "n", n64), lda = c.ld(4, "lda", lda64, m64);
  if (m == 0 || n == 0) return;
  auto h = handle(st);
  with_workspace<T>(
      c.routine, st, "failed", [&](int* lw) { return geqrf_buf(tag<T>(), h, m, n, a, lda, lw); },
      [&](T* w, int lw, int* info) { return geqrf_run(tag<T>(), h, m, n, a, lda, tau, w, lw, info); });
}

template <class T>
void orgqr(std::int64_t m64, std::int64_t n64, std::int64_t k64, T* a, std::int64_t lda64, const T* tau,
           stream_t st) {
  const args c{"ember::cuda::solver::orgqr"};
  const int m = c.extent(1, "m", m64), n = c.extent(2, "n", n64), k = c.extent(3, "k", k64);
  const int lda = c.ld(5, "lda", lda64, m64);
  if (n > m) c.bad(2, "n", n, "exceeds m = " + std::to_string(m));
  if (k > n) c.bad(3, "k", k, "exceeds n = " + std::to_string(n));
  if (n == 0) return;
  auto h = handle(st);
  with_workspace<T>(
      c.routine, st, "failed", [&](int* lw) { return orgqr_buf(tag<T>(), h, m, n, k, a, lda, tau, lw); },
      [&](T* w, int lw, int* info) { return orgqr_run(tag<T>(), h, m, n, k, a, lda, tau, w, lw, info); });
}

namespace {

// cuSOLVER's gesvd for m >= n: A = U diag(s) VT, thin ('S') or values only ('N').
template <class T>
void gesvd_tall(const args& c, char jobz, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt,
                stream_t st) {
  auto h = handle(st);
  int lwork = 0;
  check_solver(gesvd_buf(tag<T>(), h, m, n, &lwork), std::string(c.routine) + " (bufferSize)");
  auto work = device_allocate_n<T>(lwork > 0 ? lwork : 1);
  auto rwork = device_allocate_n<T>(n > 1 ? n : 1);  // unconverged superdiagonal, when info > 0
  dev_info info;
  const signed char job = jobz == 'S' ? 'S' : 'N';
  if (job == 'N') {  // not referenced, but cuSOLVER may still check them
    ldu = m;
    ldvt = n;
  }
  check_solver(gesvd_run(tag<T>(), h, job, job, m, n, a, lda, s, u, ldu, vt, ldvt, work.get(), lwork,
                         rwork.get(), info.get()),
               c.routine);
  check_info(info.read(st), c.routine, "the bidiagonal QR iteration did not converge (unconverged superdiagonals)");
}

}  // namespace

template <class T>
void gesvd(char jobz, std::int64_t m64, std::int64_t n64, T* a, std::int64_t lda64, T* s, T* u, std::int64_t ldu64,
           T* vt, std::int64_t ldvt64, stream_t st) {
  const args c{"ember::cuda::solver::gesvd"};
  if (jobz != 'S' && jobz != 'N')
    throw value_error(std::string(c.routine) + ": argument 1 (jobz = '" + std::string(1, jobz) +
                      "') must be 'S' or 'N'");
  const int m = c.extent(2, "m", m64), n = c.extent(3, "n", n64), lda = c.ld(5, "lda", lda64, m64);
  const int k = m < n ? m : n;
  const bool vectors = jobz == 'S';
  const int ldu = vectors ? c.ld(8, "ldu", ldu64, m64) : m;
  const int ldvt = vectors ? c.ld(10, "ldvt", ldvt64, k) : k;
  if (k == 0) return;
  if (m >= n) {
    gesvd_tall(c, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, st);
    return;
  }
  // Wide A: the SVD of B = A^T (n x m, tall) is B = Ub diag(s) VbT, so
  // A = VbT^T diag(s) Ub^T: U = VbT^T (m x m), VT = Ub^T (m x n).
  auto b = device_allocate_n<T>(std::int64_t(n) * m);
  blas::transpose<T>(m, n, a, lda, b.get(), n, st);
  if (!vectors) {
    gesvd_tall<T>(c, jobz, n, m, b.get(), n, s, nullptr, 1, nullptr, 1, st);
    return;
  }
  auto ub = device_allocate_n<T>(std::int64_t(n) * m);   // n x m, ld n
  auto vbt = device_allocate_n<T>(std::int64_t(m) * m);  // m x m, ld m
  gesvd_tall<T>(c, jobz, n, m, b.get(), n, s, ub.get(), n, vbt.get(), m, st);
  blas::transpose<T>(m, m, vbt.get(), m, u, ldu, st);
  blas::transpose<T>(n, m, ub.get(), n, vt, ldvt, st);
  synchronize(st);  // the temporaries are freed in stream order anyway; u and vt are ready on return
}

template <class T>
void syevd(char jobz, char uplo, std::int64_t n64, T* a, std::int64_t lda64, T* w, stream_t st) {
  const args c{"ember::cuda::solver::syevd"};
  if (jobz != 'V' && jobz != 'N')
    throw value_error(std::string(c.routine) + ": argument 1 (jobz = '" + std::string(1, jobz) +
                      "') must be 'V' or 'N'");
  if (uplo != 'U' && uplo != 'L')
    throw value_error(std::string(c.routine) + ": argument 2 (uplo = '" + std::string(1, uplo) +
                      "') must be 'U' or 'L'");
  const int n = c.extent(3, "n", n64), lda = c.ld(5, "lda", lda64, n64);
  if (n == 0) return;
  const cusolverEigMode_t mode = jobz == 'V' ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const cublasFillMode_t fill = uplo == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  auto h = handle(st);
  with_workspace<T>(
      c.routine, st, "the eigenvalue iteration did not converge",
      [&](int* lw) { return syevd_buf(tag<T>(), h, mode, fill, n, a, lda, w, lw); },
      [&](T* wk, int lw, int* info) { return syevd_run(tag<T>(), h, mode, fill, n, a, lda, w, wk, lw, info); });
}

#define EMBER_CUDA_SOLVER(T)                                                                                    \
  template void geqrf<T>(std::int64_t, std::int64_t, T*, std::int64_t, T*, stream_t);                           \
  template void orgqr<T>(std::int64_t, std::int64_t, std::int64_t, T*, std::int64_t, const T*, stream_t);       \
  template void gesvd<T>(char, std::int64_t, std::int64_t, T*, std::int64_t, T*, T*, std::int64_t, T*,          \
                         std::int64_t, stream_t);                                                               \
  template void syevd<T>(char, char, std::int64_t, T*, std::int64_t, T*, stream_t);
EMBER_CUDA_SOLVER(float)
EMBER_CUDA_SOLVER(double)
#undef EMBER_CUDA_SOLVER

}  // namespace ember::cuda::solver
