// zgemv_ and cgemv_ as libember exports them, ahead of the BLAS library in the
// process's symbol lookup order, so that ScaLAPACK's PBLAS (p?gemv inside
// p?gebrd, p?hetrd, p?gesvd, p?heevd) and ember's own complex products reach
// them.
//
// Why: OpenBLAS before 0.3.22 built with GCC 12 - Debian 12's 0.3.21 - has its
// x86_64 zgemv_n_4.c/cgemv_n_4.c kernels auto-vectorized into reads past the
// end of the operands (OpenBLAS issue #4013, fixed in 0.3.22 by turning GCC's
// tree vectorizer off for those files). Usually the bytes read are mapped and
// the result is right; under AddressSanitizer's allocator a CI run faulted in
// zgemv_n_SKYLAKEX inside pzgesvd. On such a library these entry points compute
// the product with the same library's zgemm/cgemm (which are not affected), the
// vectors gathered to unit stride when they are strided; on any other library
// they forward to the library's own routine untouched. EMBER_BLAS_GEMV_WORKAROUND
// = 1 or 0 forces the choice.
#include <dlfcn.h>

#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

template <class T>
using gemv_fn = void (*)(const char*, const int*, const int*, const T*, const T*, const int*, const T*, const int*,
                         const T*, T*, const int*, std::size_t);
template <class T>
using gemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*,
                         const int*, const T*, const int*, const T*, T*, const int*, std::size_t, std::size_t);

// Whether the BLAS next in the lookup order is an OpenBLAS older than 0.3.22.
bool affected_openblas() {
  if (const char* e = std::getenv("EMBER_BLAS_GEMV_WORKAROUND")) return std::strcmp(e, "0") != 0;
  auto config = reinterpret_cast<const char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  if (!config) return false;
  const std::string c = config();  // "OpenBLAS 0.3.21 NO_AFFINITY ..."
  int major = 0, minor = 0, patch = 0;
  if (std::sscanf(c.c_str(), "OpenBLAS %d.%d.%d", &major, &minor, &patch) != 3) return false;
#if defined(__x86_64__)
  return major == 0 && (minor < 3 || (minor == 3 && patch < 22));
#else
  return false;
#endif
}

template <class T>
struct routines {
  gemv_fn<T> gemv = nullptr;
  gemm_fn<T> gemm = nullptr;
  bool workaround = false;
};
template <class T>
const routines<T>& next_routines(const char* gemv_name, const char* gemm_name) {
  static const routines<T> r = [&] {
    routines<T> x;
    x.gemv = reinterpret_cast<gemv_fn<T>>(dlsym(RTLD_NEXT, gemv_name));
    x.gemm = reinterpret_cast<gemm_fn<T>>(dlsym(RTLD_NEXT, gemm_name));
    x.workaround = x.gemm && affected_openblas();
    return x;
  }();
  return r;
}

// y = alpha op(A) x + beta y (BLAS's ?gemv, any strides) as the product of
// op(A) and the one-column matrix x.
template <class T>
void gemv_by_gemm(const routines<T>& r, const char* trans, const int* m, const int* n, const T* alpha, const T* a,
                  const int* lda, const T* x, const int* incx, const T* beta, T* y, const int* incy) {
  const bool notrans = *trans == 'N' || *trans == 'n';
  const int lx = notrans ? *n : *m, ly = notrans ? *m : *n;
  if (*m <= 0 || *n <= 0 || (*alpha == T(0) && *beta == T(1))) return;
  auto at = [](int i, int len, int inc) { return std::ptrdiff_t(inc > 0 ? i * inc : (len - 1 - i) * -inc); };
  // unit-stride copies of strided vectors, kept per thread (PBLAS calls this in loops)
  thread_local std::vector<T> xs, ys;
  const T* xp = x;
  T* yp = y;
  if (*incx != 1) {
    xs.resize(std::size_t(lx));
    for (int i = 0; i < lx; ++i) xs[std::size_t(i)] = x[at(i, lx, *incx)];
    xp = xs.data();
  }
  if (*incy != 1) {
    ys.resize(std::size_t(ly));
    if (*beta != T(0))
      for (int i = 0; i < ly; ++i) ys[std::size_t(i)] = y[at(i, ly, *incy)];
    yp = ys.data();
  }
  const int one = 1;
  const char nt = 'N';
  r.gemm(trans, &nt, &ly, &one, &lx, alpha, a, lda, xp, &lx, beta, yp, &ly, 1, 1);
  if (*incy != 1)
    for (int i = 0; i < ly; ++i) y[at(i, ly, *incy)] = ys[std::size_t(i)];
}

}  // namespace

namespace {
// The exported entry points: the workaround, or the BLAS library's own routine.
template <class T>
void gemv_entry(const char* gemv_name, const char* gemm_name, const char* trans, const int* m, const int* n,
                const T* alpha, const T* a, const int* lda, const T* x, const int* incx, const T* beta, T* y,
                const int* incy, std::size_t trans_len) {
  const auto& r = next_routines<T>(gemv_name, gemm_name);
  if (r.workaround) gemv_by_gemm(r, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
  else r.gemv(trans, m, n, alpha, a, lda, x, incx, beta, y, incy, trans_len);
}
}  // namespace

extern "C" {
__attribute__((visibility("default"))) void zgemv_(const char* trans, const int* m, const int* n,
                                                   const std::complex<double>* alpha, const std::complex<double>* a,
                                                   const int* lda, const std::complex<double>* x, const int* incx,
                                                   const std::complex<double>* beta, std::complex<double>* y,
                                                   const int* incy, std::size_t trans_len) {
  gemv_entry("zgemv_", "zgemm_", trans, m, n, alpha, a, lda, x, incx, beta, y, incy, trans_len);
}
__attribute__((visibility("default"))) void cgemv_(const char* trans, const int* m, const int* n,
                                                   const std::complex<float>* alpha, const std::complex<float>* a,
                                                   const int* lda, const std::complex<float>* x, const int* incx,
                                                   const std::complex<float>* beta, std::complex<float>* y,
                                                   const int* incy, std::size_t trans_len) {
  gemv_entry("cgemv_", "cgemm_", trans, m, n, alpha, a, lda, x, incx, beta, y, incy, trans_len);
}
}
