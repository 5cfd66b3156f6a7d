// The local-failure policy and EMBER_FAULT (see failure.hpp).
#include "runtime/failure.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/communicator.hpp"

namespace ember {

namespace {

struct fault_spec {
  bool active = false;
  int rank = -1;
  int step = 0;
  int nth = 1;
};

// "<rank>:<step>[:<n>]"; anything else is a usage error reported when first read.
fault_spec parse_fault(const char* s) {
  fault_spec f;
  if (!s || !*s) return f;
  int r = -1, st = 0, n = 1, used = 0;
  const int got = std::sscanf(s, "%d:%d%n:%d", &r, &st, &used, &n);
  if (got < 2 || r < 0 || st < 1 || n < 1 || (got == 2 && s[used] != '\0'))
    throw value_error(std::string("EMBER_FAULT='") + s +
                      "': expected <rank>:<step>[:<n>] with rank >= 0, step >= 1 (as explain numbers steps), n >= 1");
  f = {true, r, st, n};
  return f;
}

const fault_spec& fault() {
  static const fault_spec f = parse_fault(std::getenv("EMBER_FAULT"));
  return f;
}

thread_local int operation_depth = 0;
int operation_count = 0;

}  // namespace

failure_policy on_failure() {
  static const failure_policy p = [] {
    const char* s = std::getenv("EMBER_ON_FAILURE");
    if (!s || !*s || std::strcmp(s, "abort") == 0) return failure_policy::abort;
    if (std::strcmp(s, "throw") == 0) return failure_policy::rethrow;
    std::fprintf(stderr, "ember: EMBER_ON_FAILURE='%s' is neither 'abort' nor 'throw'; using 'abort'\n", s);
    return failure_policy::abort;
  }();
  return p;
}

namespace failure {

bool inside_operation() { return operation_depth > 0; }
operation_scope::operation_scope() { ++operation_depth; }
operation_scope::~operation_scope() { --operation_depth; }

int begin_operation(int steps) {
  const auto& f = fault();
  if (f.active && steps >= f.step) ++operation_count;
  return operation_count;
}

void inject(const communicator& c, int operation_ordinal, const site& where) {
  const auto& f = fault();
  if (!f.active || where.step != f.step || operation_ordinal != f.nth) return;
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (world_rank != f.rank) return;
  (void)c;
  throw injected_fault("EMBER_FAULT=" + std::to_string(f.rank) + ":" + std::to_string(f.step) + ":" +
                       std::to_string(f.nth) + ": injected fault on rank " + std::to_string(world_rank));
}

void local_failure(const communicator& c, const site& where, std::exception_ptr e) {
  if (c.size() == 1 || on_failure() == failure_policy::rethrow) std::rethrow_exception(e);
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    what = x.what();
  } catch (...) {
  }
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  std::string msg = "ember: rank " + std::to_string(c.rank()) + " of " + std::to_string(c.size()) +
                    " (world rank " + std::to_string(world_rank) + " of " + std::to_string(world_size) +
                    ") failed at step " + std::to_string(where.step) + " of " + std::to_string(where.steps) + " of a " +
                    std::string(where.operation);
  if (!where.kind.empty() || !where.detail.empty())
    msg += " (" + std::string(where.kind) + (where.detail.empty() ? "" : " ") + std::string(where.detail) + ")";
  msg += ": " + what +
         "\nember: its peers may already be inside a collective this rank will never join, so the job is aborted"
         " instead of left hanging (EMBER_ON_FAILURE=throw rethrows instead; see runtime/failure.hpp)\n";
  std::fputs(msg.c_str(), stderr);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 70);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

}  // namespace failure
}  // namespace ember
