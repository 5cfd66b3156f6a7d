// Distributed matrix products: the algorithms the planner chooses among, each an
// exact per-rank traffic formula (what the counters will show) and an executor.
//
// Every algorithm works on matrix views: C (m x n) = A (m x k) @ B (k x n), each a
// split-or-replicated `layout` of a 2-D shape (vectors are viewed as 1 x k or k x 1
// by the caller). Moves of the operands into the layouts an algorithm needs are
// separate plan steps (the exchange engine); what is here is only the product's
// own communication.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "communicator.hpp"
#include "layout.hpp"
#include "scalapack.hpp"

namespace ember {

enum class matmul_algorithm : std::uint8_t {
  local,           // one side replicated (or both): C's block is a local product
  ring_b,          // A split 0; B's blocks (split 0 or 1) travel around a ring; C split 0 like A
  ring_a,          // B split 1; A's blocks (split 0 or 1) travel around a ring; C split 1 like B
  reduce_scatter,  // A split 1 x B split 0 over the same k ranges: partial products summed into C split 0 by a ring
                   // reduce-scatter overlapped with the products
  allreduce,       // the same partial products, allreduced: C replicated
  summa,           // ScaLAPACK p?gemm on a 2-D block-cyclic grid (operands converted by the exchange engine)
  batched,         // N-D operands (NumPy's stacks of matrices, batch axes broadcast): C's block is a loop of local
                   // products over its batch; C split on a batch axis (the operands that have it split alike, the
                   // broadcast ones replicated), on rows (A alike, B replicated), on columns, or replicated
};
const char* name(matmul_algorithm a);

struct matmul_problem {
  matmul_algorithm alg{};
  // Matrix views, 2-D; for `batched` the N-D views (..., m, k), (..., k, n),
  // (..., m, n), batch axes aligned on the right and broadcast (extent 1 or
  // absent), a 1-D operand viewed as (1, k) or (k, 1).
  layout a, b, c;
  std::int64_t elem = 8;
  // A transpose only a product reads stays lazy: trans_a says that A's local
  // block is stored as the row-major block of A's transpose (the operand of
  // `transpose`, whose layout is `a` transposed), read by BLAS with a transpose
  // flag; likewise trans_b. Only the algorithms that multiply each rank's blocks
  // in one local product take them (local, reduce_scatter, allreduce).
  bool trans_a = false, trans_b = false;
};

// Checks that the layouts fit the algorithm (throws ember::error otherwise):
// the planner and the executor both call it, so a plan can never run a product
// its layouts do not support.
void validate(const matmul_problem& p);

// The block-cyclic layouts summa converts A, B and C to (ember's default grid).
struct summa_layouts {
  scalapack::block_cyclic a, b, c;
};
summa_layouts summa_layouts_of(const matmul_problem& p);

// Traffic of the product itself on `rank` (operand moves are separate steps).
// Point-to-point rings and the exchange-engine conversions are exact; collectives
// and the p?gemm inside ScaLAPACK are counted by the communicator's models (p?gemm:
// SUMMA's row and column broadcasts of every panel, each a root sending to the
// other members), the same numbers run_matmul adds to the counters.
traffic matmul_traffic(const matmul_problem& p, int rank);
// Estimate for planning over many ranks (summa conversions as (P-1)/P of a block).
traffic matmul_traffic_estimate(const matmul_problem& p, int rank);
// Every rank's traffic, O(P) for the rings and collectives (the planner's view).
// `estimate`: summa's conversions are estimated when computing them exactly would
// intersect too many blocks (more than 64 ranks or 16384 blocks); the executor's
// counters then differ from the plan's per-rank figure for that step.
std::vector<traffic> matmul_traffic_all(const matmul_problem& p, bool estimate);
// Floating-point operations on the busiest rank.
double matmul_flops(const matmul_problem& p);
// Extra memory per rank (bytes) the algorithm allocates beyond its output.
std::int64_t matmul_workspace(const matmul_problem& p);

// Runs the product: a, b, c are this rank's local buffers of p.a, p.b, p.c.
// Collective over `comm`. T: float, double, int32_t, int64_t (summa: float, double).
template <class T>
void run_matmul(const matmul_problem& p, const communicator& comm, const T* a, const T* b, T* c);

// The product on the GPU (cuBLAS through the CUDA plugin), for the `local`
// algorithm and float32/float64 (dtype code as dsl/dtype.hpp): a, b, c are device
// pointers. The planner puts only those products there; the others run on host
// copies. Not collective (a local product has no communication).
bool runs_on_device(const matmul_problem& p, int dtype_code);
void run_matmul_device(const matmul_problem& p, int rank, int dtype_code, const void* a, const void* b, void* c);

// C (m x n, row-major, leading dimension ldc) = A (m x k, lda) @ B (k x n, ldb)
// + beta C, locally (BLAS for float and double; a matrix-vector product by gemv,
// which reads A once where gemm would first pack it).
template <class T>
void local_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda, const T* b,
                std::int64_t ldb, T beta, T* c, std::int64_t ldc);
// The same with A and/or B stored transposed: ta says `a` holds A^T (k x m,
// row-major, leading dimension lda), tb that `b` holds B^T (n x k, ldb).
template <class T>
void local_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda,
                const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc);

}  // namespace ember
