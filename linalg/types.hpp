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

}  // namespace ember::linalg
