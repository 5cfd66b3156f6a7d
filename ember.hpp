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
#include "runtime/par.hpp"
#include "runtime/broadcast.hpp"
#include "runtime/boxes.hpp"
#include "runtime/symmetric.hpp"
#include "planner/plan.hpp"
#include "dsl/dtype.hpp"
#include "dsl/dndarray.hpp"
#include "dsl/factories.hpp"
#include "dsl/random.hpp"
#include "dsl/expr.hpp"
#include "dsl/eval.hpp"
#include "dsl/reductions.hpp"
#include "dsl/matmul.hpp"
#include "dsl/broadcast.hpp"
#include "dsl/print.hpp"
#include "linalg/linalg.hpp"
#include "io/io.hpp"
