// The reductions a communicator combines with (MPI_SUM, MPI_LAND, ...); on its own
// so that the expression ops (dsl/ops.hpp, compiled by nvcc too) can name the
// collective that finishes each of them without including MPI.
#pragma once

namespace ember {
enum class reduce_op { sum, prod, min, max, land, lor, band, bor };
}  // namespace ember
