// Results and options of ember::linalg, shared by its algorithms.
#pragma once

#include <cstdint>

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
  bool compute_uv = true;  // false: S only (U and V are null handles)
};
// A = U diag(S) V^T (V, not V^T, as in Heat); S descending, not split.
template <class T>
struct svd_result {
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
  r.V = on(r.V, d);
  return r;
}
// Two operands must live on one device (as an expression's arrays).
template <class T, int N, class U, int M>
void require_same_device(const char* fn, const dndarray<T, N>& a, const dndarray<U, M>& b) {
  if (a.device() != b.device())
    throw value_error(std::string("ember::linalg::") + fn + ": A is on " + std::string(device_name(a.device())) +
                      " and B on " + std::string(device_name(b.device())) + "; move one with .to() first");
}
}  // namespace impl

}  // namespace ember::linalg
