// Results and options of ember::linalg, shared by its algorithms.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "../dsl/dndarray.hpp"

namespace ember::linalg {

enum class qr_mode {
  reduced,  // Q (m x k) and R (k x n), k = min(m, n), as numpy.linalg.qr's default
  r,        // R only (Q is a null handle): no Q is formed or applied
};
struct qr_options {
  qr_mode mode = qr_mode::reduced;
};
template <class T>
struct qr_result {
  dndarray<T, 2> Q;  // null when mode == r
  dndarray<T, 2> R;
};

struct svd_options {
  bool compute_uv = true;  // false: S only (U and Vh are null handles)
};
// linalg::svd: A = U diag(S) Vh, NumPy's order and NumPy's Vh (V^T, k x n; V^H
// for complex A; Heat >= 1.8 does the same); S descending, not split, and real
// (float64 for complex128, as NumPy).
template <class T>
struct svd_result {
  dndarray<T, 2> U;
  dndarray<real_of_t<T>, 1> S;
  dndarray<T, 2> Vh;
};
// linalg::rsvd: A ~ U diag(S) V^T with V (n x r), as Heat's rsvd returns it.
template <class T>
struct rsvd_result {
  dndarray<T, 2> U;
  dndarray<T, 1> S;
  dndarray<T, 2> V;
};

namespace impl {
// GPU arrays in the host algorithms (ScaLAPACK, the LAPACK trees of TSQR-SVD and
// hsvd): the operands are copied to the host, the results back to the device.
// Every rank does the same (the device is replicated metadata); the operand was
// a GPU array, so every rank has a device and no collective check is repeated.
template <class T, int N>
dndarray<T, N> on(const dndarray<T, N>& r, device_kind d) {
  return r.valid() ? ember::detail::on_device(r, d) : r;
}
template <class R>
R results_on(R r, device_kind d) {
  r.U = on(r.U, d);
  r.S = on(r.S, d);
  if constexpr (requires { r.Vh; }) r.Vh = on(r.Vh, d);
  else r.V = on(r.V, d);
  return r;
}
// Two operands must live on one device (as an expression's arrays).
template <class T, int N, class U, int M>
void require_same_device(const char* fn, const dndarray<T, N>& a, const dndarray<U, M>& b) {
  if (a.device() != b.device())
    throw value_error(std::string("ember::linalg::") + fn + ": A is on " + std::string(device_name(a.device())) +
                      " and B on " + std::string(device_name(b.device())) + "; move one with .to() first");
}
// Collective: every element of `a` is finite, or every rank throws the same
// value_error naming the ranks whose blocks hold NaN or infinity. ScaLAPACK's
// p?syevd and p?gesvd would instead report "argument 5 had an illegal value"
// (and print pages of their own) on such input. One allreduce of one int.
template <class T>
void require_finite(const dndarray<T, 2>& a, const char* fn) {
  const T* p = a.ldata();
  const std::int64_t n = a.lnumel();
  auto finite = [](T v) {
    if constexpr (is_complex_v<T>) return std::isfinite(v.real()) && std::isfinite(v.imag());
    else return std::isfinite(v);
  };
  bool ok = true;
  for (std::int64_t i = 0; i < n; ++i)
    if (!finite(p[i])) {
      ok = false;
      break;
    }
  const auto& c = a.comm();
  const bool dist = a.split().has_value() && c.size() > 1;
  const int bad = dist ? c.allreduce(ok ? 0 : 1, reduce_op::max) : (ok ? 0 : 1);
  if (!bad) return;
  std::string where;
  if (dist) {
    const auto flags = c.allgather(std::int32_t(ok ? 0 : 1));
    for (int r = 0; r < c.size(); ++r)
      if (flags[std::size_t(r)]) where += (where.empty() ? "" : ", ") + std::to_string(r);
    where = " (in the block of rank" + std::string(where.find(',') != std::string::npos ? "s " : " ") + where + ")";
  }
  throw value_error(std::string("ember::linalg::") + fn + ": the matrix of shape " + ember::detail::shape_str(a.shape()) +
                    " contains NaN or infinity" + where);
}
}  // namespace impl

}  // namespace ember::linalg
