// ember: lazy, NumPy-like expressions over arrays distributed across MPI ranks.
// The one public header. See README.md and DESIGN.md (shared/) for the architecture:
// dsl/ (what users write) -> planner/ (what will move) -> runtime/ (MPI, layouts,
// the exchange engine, kernels).
#pragma once

#include "runtime/communicator.hpp"
#include "runtime/error.hpp"
#include "runtime/exchange.hpp"
#include "runtime/failure.hpp"
#include "runtime/layout.hpp"
#include "runtime/memory.hpp"
#include "runtime/scalapack.hpp"
// ember::par's range adaptors (range-v3) do not pass nvcc's front end (cudafe++
// rejects range-v3's inheriting constructors): code compiled by nvcc gets
// everything else, and uses ember::par from a .cpp file.
#if !defined(__CUDACC__)
#include "runtime/par.hpp"
#endif
#include "runtime/broadcast.hpp"
#include "runtime/boxes.hpp"
#include "runtime/symmetric.hpp"
#include "runtime/view.hpp"
#include "planner/plan.hpp"
#include "dsl/dtype.hpp"
#include "dsl/dndarray.hpp"
#include "dsl/factories.hpp"
#include "dsl/random.hpp"
#include "dsl/expr.hpp"
#include "dsl/eval.hpp"
#include "dsl/ufuncs.hpp"
#include "dsl/reductions.hpp"
#include "dsl/statistics.hpp"
#include "dsl/matmul.hpp"
#include "dsl/view.hpp"
#include "dsl/shift.hpp"
#include "indexing/indexing.hpp"
#include "shape/shape.hpp"
#include "scan/scan.hpp"
#include "sorting/sort.hpp"
#include "sorting/topk.hpp"
#include "sorting/order_statistics.hpp"
#include "sorting/unique.hpp"
#include "histogram/histogram.hpp"
#include "fft/fft.hpp"
#include "contract/einsum.hpp"
#include "dsl/broadcast.hpp"
#include "dsl/print.hpp"
#include "dsl/methods.hpp"
#include "linalg/linalg.hpp"
#include "io/io.hpp"
#if defined(__CUDACC__)
// nvcc: fused kernels of GPU arrays run on the GPU (dsl/device_kernels.cuh).
#include "dsl/device_kernels.cuh"
#endif
