// MPI runtime: environment, communicator, typed collectives and traffic counters.
//
// ember never talks on the communicator it is given: it duplicates it, so its
// messages can never match the host code's receives. Errors are returned (not
// fatal) on the duplicate and turned into ember::communication_error.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "reduce_op.hpp"

#include "error.hpp"

namespace ember {

// Knobs that must be identical on every rank (they shape message counts).
struct runtime_config {
  // Largest single MPI message in bytes. MPI counts are int, and OpenMPI 4.1 has no
  // large-count calls, so anything larger is sent in several messages. Tests lower
  // it to exercise the chunking with small arrays.
  std::int64_t max_message_bytes = 1 << 30;
  // Per-direction staging buffer of the exchange engine for data that is not
  // contiguous on both sides: bounds a resplit's extra memory independently of the
  // array size.
  std::int64_t staging_bytes = 32 << 20;
};
runtime_config& config();

// Bytes and messages sent by this rank. Point-to-point traffic is counted as sent;
// a collective is counted by the logical model in traffic.hpp (what each rank would
// send if the collective were written with point-to-point messages), the same model
// the planner uses for its predictions.
struct traffic {
  std::int64_t bytes = 0;
  std::int64_t messages = 0;
  traffic& operator+=(const traffic& o) {
    bytes += o.bytes;
    messages += o.messages;
    return *this;
  }
  friend traffic operator-(traffic a, const traffic& b) { return {a.bytes - b.bytes, a.messages - b.messages}; }
  friend traffic operator+(traffic a, const traffic& b) { return a += b; }
  friend bool operator==(const traffic&, const traffic&) = default;
};

namespace detail {
template <class T> MPI_Datatype mpi_type();
void check_mpi(int rc, const char* what);
struct comm_state;
}  // namespace detail

class communicator {
 public:
  // Duplicates `user` (MPI must be initialized). Collective over `user`.
  explicit communicator(MPI_Comm user);

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm native() const;  // ember's private duplicate

  traffic sent() const;   // cumulative on this rank: data, what plans and moves predict
  void count(const traffic& t) const;  // used by collectives and the exchange engine
  // The agreements that open collective entry points (detail::agreed_entry: one
  // allreduce of four int64 each), counted apart from sent(): they are checks,
  // not data, and no plan predicts them.
  traffic control_sent() const;
  void count_control(const traffic& t) const;

  void barrier() const;

  template <class T> void bcast(T* data, std::int64_t n, int root) const;
  template <class T> void allreduce(T* inout, std::int64_t n, reduce_op op) const;
  template <class T> T allreduce(T value, reduce_op op) const {
    allreduce(&value, 1, op);
    return value;
  }
  // Each rank contributes `n` elements; result has size()*n elements in rank order.
  template <class T> std::vector<T> allgather(const T* data, std::int64_t n) const;
  template <class T> std::vector<T> allgather(const T& value) const { return allgather(&value, 1); }

  // Raw byte point-to-point, one message each (callers chunk). Counted on send.
  void isend_bytes(const void* buf, std::int64_t bytes, int peer, int tag, MPI_Request* req) const;
  void irecv_bytes(void* buf, std::int64_t bytes, int peer, int tag, MPI_Request* req) const;
  static void wait_all(std::vector<MPI_Request>& reqs);

  // Blocking point-to-point of raw bytes, one message (callers chunk above
  // config().max_message_bytes). Counted on send. Used by ember::par's protocols.
  void send_bytes(const void* buf, std::int64_t bytes, int peer, int tag) const;
  // Receives the next message with `tag` from `peer` (or MPI_ANY_SOURCE) whatever
  // its size: probes, resizes `out` to fit, receives. Returns the source rank.
  int recv_message(std::vector<char>& out, int peer, int tag) const;
  // Receives raw bytes into a buffer of known size; returns the source rank.
  int recv_bytes(void* buf, std::int64_t bytes, int peer, int tag) const;

  // A per-communicator counter (shared by copies of this communicator). Every
  // ember operation that must be matched across ranks in program order (a managed
  // loop, a symmetric allocation) takes the next value, so the value is the same
  // on every rank as long as the ranks run those operations in the same order:
  // ember::par derives message tags from it, symmetric memory checks its release
  // order with it.
  std::uint64_t next_sequence() const;

  // Allgatherv of bytes, counts and displacements in units of `unit` bytes
  // (all must fit in int). Counted with the allgather model.
  void allgatherv_bytes(const void* send, std::int64_t send_units, void* recv,
                        const std::vector<std::int64_t>& counts, const std::vector<std::int64_t>& displs,
                        std::int64_t unit) const;

  friend bool operator==(const communicator& a, const communicator& b) { return a.state_ == b.state_; }
  // True when both wrap duplicates of the same group in the same order.
  bool congruent(const communicator& other) const;

 private:
  std::shared_ptr<detail::comm_state> state_;
  int rank_ = 0;
  int size_ = 1;
};

// RAII MPI initialization. Initializes MPI unless the host program already did,
// and finalizes only what it initialized. A binary started without mpirun runs as
// a single rank (MPI singleton).
class environment {
 public:
  environment();
  environment(int& argc, char**& argv);
  ~environment();
  environment(const environment&) = delete;
  environment& operator=(const environment&) = delete;
  bool owns_mpi() const { return owns_; }

 private:
  bool owns_ = false;
};

// ember's duplicate of MPI_COMM_WORLD, created on first use (MPI must be initialized,
// by ember::environment or by the host code).
const communicator& world();

// Logical traffic of collectives, per rank (see `traffic`): allgather as a ring
// (each rank's block to every other rank), bcast as the root sending to every
// rank, allreduce as reduce-scatter + allgather. Shared with the planner, so
// predictions and counters agree by construction for collectives.
namespace model {
traffic allgather(std::int64_t my_bytes, int nranks);
traffic bcast(std::int64_t bytes, int nranks, bool is_root);
traffic allreduce(std::int64_t bytes, int nranks);
}  // namespace model

// ---- arguments that every rank must pass alike ----
//
// Shapes, axes, target maps, seeds, file names and roots are replicated
// metadata: every rank validates them alone and throws the same error. A rank
// that passes something ELSE than the others cannot be noticed without
// communication, and it would leave its peers waiting in a collective (a hang)
// or silently build an inconsistent array; a rank that fails alone (one rank out
// of memory) would do the same. So the collective entry points that take such
// arguments (factories and random arrays, moves, I/O) open with ONE small
// allreduce (`agreed_entry`: four int64) that compares a hash of the arguments
// and every rank's outcome of validating them and allocating its block; then
// every rank throws the same error, naming the ranks and what each passed.
//
// EMBER_CHECK_REPLICATED (must be the same on every rank, like EMBER_CHECK_PLANS):
//   unset   metadata checks (the default): the one allreduce above per entry point
//   0       off: entry points send nothing beyond their data; a rank that fails
//           alone then ends the job (runtime/failure.hpp) instead of throwing
//   1       also hashes of data that every rank must pass alike (the global data
//           of ember::array(..., {.split}), the ranges of par loops, roots)
// Garbage in the variable is an error on every rank.
namespace detail {
enum class check_level { off, metadata, full };
check_level replicated_level();
bool replicated_checks();  // level full: the data hashes too
bool metadata_checks();    // level metadata or full
// 64-bit FNV-1a, for hashing arguments.
struct arg_hash {
  std::uint64_t h = 14695981039346656037ull;
  arg_hash& add(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
    return *this;
  }
  arg_hash& add(const std::string& s) {
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
    return add(std::uint64_t(s.size()));
  }
};
// Collective: "" when every rank's `hash` is the same; otherwise (on every rank
// alike) which ranks differ and what each passes, from `describe()` (called
// only then): "rank 2: X; rank 0 and 2 other ranks: Y".
std::string divergence(const communicator& c, std::uint64_t hash, const std::function<std::string()>& describe);
// When replicated_checks(): collective; throws value_error on every rank when
// the ranks' hashes differ: "<what>: every rank must pass the same <subject>,
// but they differ: rank 2: X; rank 0 and 2 other ranks: Y". No-op otherwise.
void check_replicated(const communicator& c, std::uint64_t hash, const char* what, const char* subject,
                      const std::function<std::string()>& describe);

// The arguments of a collective entry point, for `agreed_entry`.
struct entry_args {
  const char* what;     // "ember::zeros<float64>"
  const char* subject;  // "shape, split and dtype"
  std::uint64_t hash;   // of everything that must be alike on every rank
  std::function<std::string()> describe;  // this rank's arguments, for the message (error path only)
};
// What a rank's local part of an entry point ended with: 0 fine; otherwise the
// class of the exception: 1 value_error, 2 shape_error, 3 axis_error,
// 4 type_error, 5 another ember::error, 6 out of memory (std::bad_alloc or
// memory_error), 7 anything else.
int error_class_of(std::exception_ptr e);
[[noreturn]] void throw_error_class(int cls, const std::string& msg);
// Collective (one allreduce of four int64; more only when something failed):
// throws on every rank alike when the ranks' hashes differ (value_error naming
// the ranks), when some but not all ranks failed (the first failing rank's
// error, its class kept, naming the ranks; an allocation failure becomes
// memory_error), and rethrows `local` when every rank failed (the arguments
// being equal, that is the same error everywhere). Returns when every rank
// succeeded.
void agree_entry(const communicator& c, const entry_args& a, std::exception_ptr local);
// A rank that failed alone with the checks off: ends the job (failure policy).
[[noreturn]] void entry_failed_alone(const communicator& c, const char* what, std::exception_ptr e);

// Runs `body` — everything a rank does alone before the entry point's first
// collective: validation and allocation — and agrees on the outcome (above).
// With one rank or EMBER_CHECK_REPLICATED=0 there is no collective; then an
// ember::error (validation of replicated arguments: alike on every rank) is
// rethrown, anything else (std::bad_alloc) ends the job on P > 1.
template <class F>
auto agreed_entry(const communicator& c, const entry_args& a, F&& body) -> decltype(body()) {
  using R = decltype(body());
  std::exception_ptr local;
  std::optional<std::conditional_t<std::is_void_v<R>, bool, R>> result;
  try {
    if constexpr (std::is_void_v<R>) {
      body();
      result.emplace(true);
    } else {
      result.emplace(body());
    }
  } catch (...) {
    local = std::current_exception();
  }
  if (c.size() > 1 && metadata_checks()) agree_entry(c, a, local);
  else if (local) {
    if (c.size() > 1 && error_class_of(local) >= 6) entry_failed_alone(c, a.what, local);
    std::rethrow_exception(local);
  }
  if constexpr (!std::is_void_v<R>) return std::move(*result);
}

// A null (default-constructed or moved-from) array handle used where the ranks
// must act together (an expression, a move, I/O, linear algebra, printing): its
// rank cannot know its peers' communicator, so it cannot tell them. With one
// world rank (or EMBER_ON_FAILURE=throw) this throws ember::error; otherwise it
// ends the job with one line naming the rank (runtime/failure.hpp), rather than
// leave the peers waiting in a collective.
[[noreturn]] void null_handle(const char* what);
// Throws ember::error when MPI is not usable: never initialized (no
// ember::environment yet) or already finalized (the environment ended).
void require_mpi(const char* what);
}  // namespace detail

// ---------------------------------------------------------------------------
namespace detail {
template <class T> MPI_Datatype mpi_type() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<U, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<U, long double>) return MPI_LONG_DOUBLE;
  else if constexpr (std::is_same_v<U, bool>) return MPI_C_BOOL;
  else if constexpr (std::is_same_v<U, char>) return MPI_CHAR;
  else if constexpr (std::is_same_v<U, std::int8_t>) return MPI_INT8_T;
  else if constexpr (std::is_same_v<U, std::uint8_t>) return MPI_UINT8_T;
  else if constexpr (std::is_same_v<U, std::int16_t>) return MPI_INT16_T;
  else if constexpr (std::is_same_v<U, std::uint16_t>) return MPI_UINT16_T;
  else if constexpr (std::is_same_v<U, std::int32_t>) return MPI_INT32_T;
  else if constexpr (std::is_same_v<U, std::uint32_t>) return MPI_UINT32_T;
  else if constexpr (std::is_same_v<U, std::int64_t> || std::is_same_v<U, long long>) return MPI_INT64_T;
  else if constexpr (std::is_same_v<U, std::uint64_t> || std::is_same_v<U, unsigned long long>) return MPI_UINT64_T;
  else if constexpr (std::is_same_v<U, std::complex<float>>) return MPI_C_FLOAT_COMPLEX;
  else if constexpr (std::is_same_v<U, std::complex<double>>) return MPI_C_DOUBLE_COMPLEX;
  else static_assert(sizeof(T) == 0, "ember: no MPI datatype for this element type");
}
MPI_Op mpi_op(reduce_op op);
// min/max that propagate NaN (MPI's MPI_MIN/MPI_MAX drop it), for float/double.
MPI_Op nan_propagating_op(reduce_op op, bool is_double);
// min/max of complex numbers (MPI defines none): NumPy's lexicographic order,
// a NaN in either part propagating.
MPI_Op complex_minmax_op(reduce_op op, bool is_double);
template <class T>
MPI_Op mpi_op_for(reduce_op op) {
  if constexpr (std::is_floating_point_v<T> && (std::is_same_v<T, float> || std::is_same_v<T, double>))
    if (op == reduce_op::min || op == reduce_op::max) return nan_propagating_op(op, std::is_same_v<T, double>);
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    if (op == reduce_op::min || op == reduce_op::max) return complex_minmax_op(op, std::is_same_v<T, std::complex<double>>);
  return mpi_op(op);
}
std::int64_t chunk_elems(std::size_t elem_size);
}  // namespace detail

template <class T>
void communicator::bcast(T* data, std::int64_t n, int root) const {
  // A root every rank passes alike: a bad one is the same error everywhere (MPI
  // would report it as an error naming only the local rank).
  if (root < 0 || root >= size_)
    throw value_error("ember::communicator::bcast: root " + std::to_string(root) +
                      " is not a rank of a communicator of " + std::to_string(size_) + " ranks");
  const std::int64_t step = detail::chunk_elems(sizeof(T));
  for (std::int64_t off = 0; off < n || (n == 0 && off == 0); off += step) {
    const std::int64_t c = std::min(step, n - off);
    if (c > 0) detail::check_mpi(MPI_Bcast(data + off, int(c), detail::mpi_type<T>(), root, native()), "MPI_Bcast");
    count(model::bcast(c * std::int64_t(sizeof(T)), size_, rank_ == root));
    if (n == 0) break;
  }
}

template <class T>
void communicator::allreduce(T* inout, std::int64_t n, reduce_op op) const {
  const std::int64_t step = detail::chunk_elems(sizeof(T));
  for (std::int64_t off = 0; off < n; off += step) {
    const std::int64_t c = std::min(step, n - off);
    detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, inout + off, int(c), detail::mpi_type<T>(), detail::mpi_op_for<T>(op), native()),
                      "MPI_Allreduce");
    count(model::allreduce(c * std::int64_t(sizeof(T)), size_));
  }
}

template <class T>
std::vector<T> communicator::allgather(const T* data, std::int64_t n) const {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<T> out(std::size_t(n) * std::size_t(size_));
  std::vector<std::int64_t> counts(size_, n), displs(size_);
  for (int r = 0; r < size_; ++r) displs[r] = std::int64_t(r) * n;
  allgatherv_bytes(data, n, out.data(), counts, displs, sizeof(T));
  return out;
}

}  // namespace ember
