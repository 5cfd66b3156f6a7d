// The errors a failed factorization reports, shared by the local LAPACK and the
// ScaLAPACK wrappers so both say the same thing for the same condition.
#pragma once

#include <string>

#include "error.hpp"

namespace ember::detail {

// INFO > 0 from p?gesv / ?gesv: U(info, info) is exactly zero.
[[noreturn]] inline void throw_singular(int info) {
  throw value_error("ember::linalg::solve: the matrix is singular (U(" + std::to_string(info) + ", " +
                    std::to_string(info) + ") is exactly zero)");
}
// INFO > 0 from p?potrf / ?potrf: the leading minor of that order is not positive.
[[noreturn]] inline void throw_not_positive_definite(int info) {
  throw value_error("ember::linalg::cholesky: the matrix is not positive definite (leading minor of order " +
                    std::to_string(info) + ")");
}

}  // namespace ember::detail
