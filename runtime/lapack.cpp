#include "lapack.hpp"

#include <algorithm>
#include <climits>
#include <complex>
#include <string>
#include <vector>

#include "error.hpp"
#include "factorization_errors.hpp"

extern "C" {
#define EMBER_DECL(p, T)                                                                                           \
  void p##gemm_(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,       \
                const T*, const int*, const T*, T*, const int*);                                                    \
  void p##syrk_(const char*, const char*, const int*, const int*, const T*, const T*, const int*, const T*, T*,     \
                const int*);                                                                                       \
  void p##gemv_(const char*, const int*, const int*, const T*, const T*, const int*, const T*, const int*, const T*, \
                T*, const int*);                                                                                   \
  void p##geqrf_(const int*, const int*, T*, const int*, T*, T*, const int*, int*);                                 \
  void p##orgqr_(const int*, const int*, const int*, T*, const int*, const T*, T*, const int*, int*);              \
  void p##ormqr_(const char*, const char*, const int*, const int*, const int*, const T*, const int*, const T*, T*,  \
                 const int*, T*, const int*, int*);                                                                \
  void p##gesdd_(const char*, const int*, const int*, T*, const int*, T*, T*, const int*, T*, const int*, T*,       \
                 const int*, int*, int*);                                                                           \
  void p##syevd_(const char*, const char*, const int*, T*, const int*, T*, T*, const int*, int*, const int*, int*); \
  void p##potrf_(const char*, const int*, T*, const int*, int*);                                                    \
  void p##gesv_(const int*, const int*, T*, const int*, int*, T*, const int*, int*);                               \
  void p##geqrt_(const int*, const int*, const int*, T*, const int*, T*, const int*, T*, int*);
EMBER_DECL(d, double)
EMBER_DECL(s, float)
#undef EMBER_DECL
// complex products (std::complex<T> has the layout of Fortran's COMPLEX)
#define EMBER_DECL_COMPLEX(p, T, R)                                                                                 \
  void p##gemm_(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,       \
                const T*, const int*, const T*, T*, const int*);                                                    \
  void p##gemv_(const char*, const int*, const int*, const T*, const T*, const int*, const T*, const int*, const T*, \
                T*, const int*);                                                                                   \
  void p##gesdd_(const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*, const int*, T*,       \
                 const int*, R*, int*, int*);                                                                       \
  void p##geqrt_(const int*, const int*, const int*, T*, const int*, T*, const int*, T*, int*);
EMBER_DECL_COMPLEX(z, std::complex<double>, double)
EMBER_DECL_COMPLEX(c, std::complex<float>, float)
#undef EMBER_DECL_COMPLEX
}

namespace ember::lapack {
namespace {
int to_int(std::int64_t v, const char* routine) {
  if (v > INT_MAX)
    throw value_error(std::string("ember::lapack: ") + routine + ": dimension " + std::to_string(v) +
                      " exceeds the 32-bit LAPACK interface");
  return int(v);
}
void check_info(int info, const char* routine) { detail::check_info(info, std::string("ember::lapack: ") + routine); }
using detail::work_size;
}  // namespace

#define EMBER_IMPL_PRODUCTS(p, T)                                                                                  \
  template <>                                                                                                      \
  void gemm<T>(char ca, char cb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,             \
               std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {                  \
    if (m == 0 || n == 0) return;                                                                                  \
    const int M = to_int(m, #p "gemm"), N = to_int(n, #p "gemm"), K = to_int(k, #p "gemm");                       \
    const int la = to_int(std::max<std::int64_t>(lda, 1), #p "gemm"), lb = to_int(std::max<std::int64_t>(ldb, 1), #p "gemm"), \
              lc = to_int(std::max<std::int64_t>(ldc, 1), #p "gemm");                                             \
    p##gemm_(&ca, &cb, &M, &N, &K, &alpha, a, &la, b, &lb, &beta, c, &lc);                                         \
  }                                                                                                                \
  template <>                                                                                                      \
  void gemm<T>(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,             \
               std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {                  \
    gemm<T>(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                       \
  }                                                                                                                \
  template <>                                                                                                      \
  void gemv<T>(bool tr, std::int64_t m, std::int64_t n, T alpha, const T* a, std::int64_t lda, const T* x,         \
               std::int64_t incx, T beta, T* y, std::int64_t incy) {                                              \
    if (m == 0 || n == 0) return;                                                                                  \
    const char ct = tr ? 'T' : 'N';                                                                                \
    const int M = to_int(m, #p "gemv"), N = to_int(n, #p "gemv"), la = to_int(std::max<std::int64_t>(lda, 1), #p "gemv"); \
    const int ix = to_int(incx, #p "gemv"), iy = to_int(incy, #p "gemv");                                          \
    p##gemv_(&ct, &M, &N, &alpha, a, &la, x, &ix, &beta, y, &iy);                                                  \
  }
#define EMBER_IMPL_GEQRT(p, T)                                                                                     \
  template <>                                                                                                      \
  void geqrt<T>(std::int64_t m, std::int64_t n, std::int64_t nb, T* a, std::int64_t lda, T* t, std::int64_t ldt) { \
    int M = to_int(m, #p "geqrt"), N = to_int(n, #p "geqrt"), NB = to_int(nb, #p "geqrt"), info = 0;              \
    int L = int(std::max<std::int64_t>(lda, 1)), LT = int(std::max<std::int64_t>(ldt, 1));                         \
    std::vector<T> w(static_cast<std::size_t>(std::max<std::int64_t>(nb * n, 1)));                                \
    p##geqrt_(&M, &N, &NB, a, &L, t, &LT, w.data(), &info);                                                        \
    check_info(info, #p "geqrt");                                                                                  \
  }
#define EMBER_IMPL(p, T)                                                                                           \
  EMBER_IMPL_PRODUCTS(p, T)                                                                                        \
  EMBER_IMPL_GEQRT(p, T)                                                                                           \
  template <>                                                                                                      \
  void syrk<T>(char uplo, bool tr, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda, T beta,  \
               T* c, std::int64_t ldc) {                                                                           \
    if (n == 0) return;                                                                                            \
    const char ct = tr ? 'T' : 'N';                                                                                \
    const int N = to_int(n, #p "syrk"), K = to_int(k, #p "syrk"), la = to_int(std::max<std::int64_t>(lda, 1), #p "syrk"), \
              lc = to_int(std::max<std::int64_t>(ldc, 1), #p "syrk");                                              \
    p##syrk_(&uplo, &ct, &N, &K, &alpha, a, &la, &beta, c, &lc);                                                   \
  }                                                                                                                \
  template <>                                                                                                      \
  void geqrf<T>(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau) {                                 \
    int M = to_int(m, #p "geqrf"), N = to_int(n, #p "geqrf"), L = int(std::max<std::int64_t>(lda, 1)), info = 0;   \
    int lw = -1;                                                                                                   \
    T q{};                                                                                                         \
    p##geqrf_(&M, &N, a, &L, tau, &q, &lw, &info);                                                                 \
    lw = work_size(q);                                                                                             \
    std::vector<T> w(static_cast<std::size_t>(lw));                                                                             \
    p##geqrf_(&M, &N, a, &L, tau, w.data(), &lw, &info);                                                           \
    check_info(info, #p "geqrf");                                                                                  \
  }                                                                                                                \
  template <>                                                                                                      \
  void orgqr<T>(std::int64_t m, std::int64_t n, std::int64_t k, T* a, std::int64_t lda, const T* tau) {           \
    int M = to_int(m, #p "orgqr"), N = to_int(n, #p "orgqr"), K = int(k), L = int(std::max<std::int64_t>(lda, 1)); \
    int info = 0, lw = -1;                                                                                         \
    T q{};                                                                                                         \
    p##orgqr_(&M, &N, &K, a, &L, tau, &q, &lw, &info);                                                             \
    lw = work_size(q);                                                                                             \
    std::vector<T> w(static_cast<std::size_t>(lw));                                                                             \
    p##orgqr_(&M, &N, &K, a, &L, tau, w.data(), &lw, &info);                                                       \
    check_info(info, #p "orgqr");                                                                                  \
  }                                                                                                                \
  template <>                                                                                                      \
  void ormqr<T>(char side, char trans, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,                \
                std::int64_t lda, const T* tau, T* c, std::int64_t ldc) {                                         \
    int M = to_int(m, #p "ormqr"), N = to_int(n, #p "ormqr"), K = int(k), LA = int(std::max<std::int64_t>(lda, 1)); \
    int LC = int(std::max<std::int64_t>(ldc, 1)), info = 0, lw = -1;                                               \
    T q{};                                                                                                         \
    p##ormqr_(&side, &trans, &M, &N, &K, a, &LA, tau, c, &LC, &q, &lw, &info);                                     \
    lw = work_size(q);                                                                                             \
    std::vector<T> w(static_cast<std::size_t>(lw));                                                                             \
    p##ormqr_(&side, &trans, &M, &N, &K, a, &LA, tau, c, &LC, w.data(), &lw, &info);                               \
    check_info(info, #p "ormqr");                                                                                  \
  }                                                                                                                \
  template <>                                                                                                      \
  void gesdd<T>(char jobz, std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* s, T* u, std::int64_t ldu,  \
                T* vt, std::int64_t ldvt) {                                                                        \
    int M = to_int(m, #p "gesdd"), N = to_int(n, #p "gesdd"), L = int(std::max<std::int64_t>(lda, 1));             \
    int LU = int(std::max<std::int64_t>(ldu, 1)), LVT = int(std::max<std::int64_t>(ldvt, 1)), info = 0, lw = -1;   \
    std::vector<int> iw(std::size_t(8 * std::max(1, std::min(M, N))));                                             \
    T q{};                                                                                                         \
    p##gesdd_(&jobz, &M, &N, a, &L, s, u, &LU, vt, &LVT, &q, &lw, iw.data(), &info);                               \
    lw = work_size(q);                                                                                             \
    std::vector<T> w(static_cast<std::size_t>(lw));                                                                             \
    p##gesdd_(&jobz, &M, &N, a, &L, s, u, &LU, vt, &LVT, w.data(), &lw, iw.data(), &info);                         \
    check_info(info, #p "gesdd");                                                                                  \
  }                                                                                                                \
  template <>                                                                                                      \
  void syevd<T>(char jobz, char uplo, std::int64_t n, T* a, std::int64_t lda, T* w) {                             \
    int N = to_int(n, #p "syevd"), L = int(std::max<std::int64_t>(lda, 1)), info = 0, lw = -1, liw = -1, iq = 0;   \
    T q{};                                                                                                         \
    p##syevd_(&jobz, &uplo, &N, a, &L, w, &q, &lw, &iq, &liw, &info);                                              \
    lw = work_size(q);                                                                                             \
    liw = std::max(iq, 1);                                                                                         \
    std::vector<T> wk(static_cast<std::size_t>(lw));                                                                            \
    std::vector<int> iw(static_cast<std::size_t>(liw));                                                                         \
    p##syevd_(&jobz, &uplo, &N, a, &L, w, wk.data(), &lw, iw.data(), &liw, &info);                                 \
    check_info(info, #p "syevd");                                                                                  \
  }                                                                                                                \
  template <>                                                                                                      \
  void potrf<T>(char uplo, std::int64_t n, T* a, std::int64_t lda) {                                              \
    int N = to_int(n, #p "potrf"), L = int(std::max<std::int64_t>(lda, 1)), info = 0;                              \
    p##potrf_(&uplo, &N, a, &L, &info);                                                                            \
    if (info > 0)                                                                                                  \
      detail::throw_not_positive_definite(info);                                                               \
    check_info(info, #p "potrf");                                                                                  \
  }                                                                                                                \
  template <>                                                                                                      \
  void gesv<T>(std::int64_t n, std::int64_t nrhs, T* a, std::int64_t lda, T* b, std::int64_t ldb) {               \
    int N = to_int(n, #p "gesv"), R = to_int(nrhs, #p "gesv"), LA = int(std::max<std::int64_t>(lda, 1));           \
    int LB = int(std::max<std::int64_t>(ldb, 1)), info = 0;                                                        \
    std::vector<int> ipiv(std::size_t(std::max(N, 1)));                                                            \
    p##gesv_(&N, &R, a, &LA, ipiv.data(), b, &LB, &info);                                                          \
    if (info > 0)                                                                                                  \
      detail::throw_singular(info);                                              \
    check_info(info, #p "gesv");                                                                                   \
  }
EMBER_IMPL(d, double)
EMBER_IMPL(s, float)
// complex: products, the compact-WY QR and the SVD TSQR needs
#define EMBER_IMPL_COMPLEX(p, T, R)                                                                                \
  EMBER_IMPL_PRODUCTS(p, T)                                                                                        \
  EMBER_IMPL_GEQRT(p, T)                                                                                           \
  template <>                                                                                                      \
  void gesdd<T>(char jobz, std::int64_t m, std::int64_t n, T* a, std::int64_t lda, R* s, T* u, std::int64_t ldu,  \
                T* vt, std::int64_t ldvt) {                                                                        \
    int M = to_int(m, #p "gesdd"), N = to_int(n, #p "gesdd"), L = int(std::max<std::int64_t>(lda, 1));             \
    int LU = int(std::max<std::int64_t>(ldu, 1)), LVT = int(std::max<std::int64_t>(ldvt, 1)), info = 0, lw = -1;   \
    const std::int64_t mn = std::max(1, std::min(M, N)), mx = std::max(1, std::max(M, N));                         \
    /* LAPACK's documented real workspace, the largest of its cases */                                            \
    std::vector<R> rw(std::size_t(std::max({7 * mn, 5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn})));     \
    std::vector<int> iw(std::size_t(8 * mn));                                                                      \
    T q{};                                                                                                         \
    p##gesdd_(&jobz, &M, &N, a, &L, s, u, &LU, vt, &LVT, &q, &lw, rw.data(), iw.data(), &info);                    \
    lw = work_size(q.real());                                                                                      \
    std::vector<T> w(static_cast<std::size_t>(lw));                                                                \
    p##gesdd_(&jobz, &M, &N, a, &L, s, u, &LU, vt, &LVT, w.data(), &lw, rw.data(), iw.data(), &info);              \
    check_info(info, #p "gesdd");                                                                                  \
  }
EMBER_IMPL_COMPLEX(z, std::complex<double>, double)
EMBER_IMPL_COMPLEX(c, std::complex<float>, float)
#undef EMBER_IMPL_COMPLEX
#undef EMBER_IMPL_GEQRT
#undef EMBER_IMPL
#undef EMBER_IMPL_PRODUCTS

}  // namespace ember::lapack
