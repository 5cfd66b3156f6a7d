// What ember does when one rank fails in the middle of a collective operation.
//
// Two kinds of failure, two policies:
//
// 1. Agreed errors. Input validation on replicated metadata (shapes, axes, maps),
//    and outcomes the ranks agree on with a collective before throwing (LAPACK
//    INFO, I/O results, failures inside par loops, per-rank input of `array`).
//    Every rank throws the same ember::error; the job goes on and the caller may
//    catch it. These never reach the code below.
//
// 2. Local failures during execution. Once an operation has started moving data
//    (a plan step, a standalone move), an exception on ONE rank — std::bad_alloc,
//    an MPI error, an injected fault — leaves its peers inside a collective or a
//    receive that this rank will never join: catching it would turn a failure into
//    a silent hang of every other rank. So by default the failing rank writes one
//    line to stderr naming itself, the operation, the step and the error, and calls
//    MPI_Abort(MPI_COMM_WORLD, 70); mpirun then ends every rank within seconds.
//    With one rank in the communicator there is no peer to strand, and the
//    exception is rethrown. EMBER_ON_FAILURE=throw rethrows on any rank count: for
//    a debugger, or for code that knows every rank fails alike.
//
// Fault injection (tests, and for users checking their own job scripts):
//    EMBER_FAULT=<rank>:<step>[:<n>]   rank <rank> of the world communicator throws
//    ember::injected_fault when it starts step <step> (1-based, as `explain`
//    numbers them) of its <n>-th operation (1-based, default 1) that has that many
//    steps. An operation is an evaluation of a plan (its steps) or a standalone
//    move (`redistribute_`, `resplit_`, `balance_`, `move_to`, the block-cyclic
//    conversions: one step). Read once per process.
#pragma once

#include <exception>
#include <string>
#include <string_view>

#include "runtime/error.hpp"

namespace ember {

class communicator;

// Thrown by EMBER_FAULT's injection point.
class injected_fault : public error { using error::error; };

enum class failure_policy { abort, rethrow };
// EMBER_ON_FAILURE: "abort" (default) or "throw"; read once per process.
failure_policy on_failure();

namespace failure {

// Where a local failure happened, for the abort message.
struct site {
  std::string_view operation;  // "plan" or "move"
  int step = 1;                // 1-based
  int steps = 1;               // how many the operation has
  std::string_view kind;       // what the step is ("resplit", "allreduce")
  std::string_view detail;     // and on what ("a1", "r5"), as explain prints it
};

// Marks the start of an operation with `steps` steps; returns its ordinal on this
// process among operations with at least `fault_step()` steps (for EMBER_FAULT's <n>).
int begin_operation(int steps);
// Throws injected_fault if EMBER_FAULT selects this rank, operation and step.
void inject(const communicator& c, int operation_ordinal, const site& where);

// Handles the exception in flight at `where`: rethrows it (one rank, or
// EMBER_ON_FAILURE=throw), or reports and aborts the job.
[[noreturn]] void local_failure(const communicator& c, const site& where, std::exception_ptr e);

// True while this thread is inside a guarded operation: nested operations (the
// exchange run by a plan's move step) leave the handling to the outermost one.
bool inside_operation();

class operation_scope {
 public:
  operation_scope();
  ~operation_scope();
  operation_scope(const operation_scope&) = delete;
  operation_scope& operator=(const operation_scope&) = delete;
};

// Runs `f` as step `where.step` of an operation, under the policy above.
template <class F>
void guarded_step(const communicator& c, int operation_ordinal, const site& where, F&& f) {
  try {
    inject(c, operation_ordinal, where);
    f();
  } catch (...) {
    local_failure(c, where, std::current_exception());
  }
}

}  // namespace failure
}  // namespace ember
