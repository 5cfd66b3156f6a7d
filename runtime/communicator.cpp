#include "communicator.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

#include "failure.hpp"

namespace ember {

runtime_config& config() {
  static runtime_config c;
  return c;
}

namespace detail {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  int rank = -1;
  int init = 0;
  MPI_Initialized(&init);
  if (init) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  throw communication_error(std::string("ember: ") + what + " failed on world rank " + std::to_string(rank) + ": " +
                            std::string(msg, std::size_t(len)));
}

MPI_Op mpi_op(reduce_op op) {
  switch (op) {
    case reduce_op::sum: return MPI_SUM;
    case reduce_op::prod: return MPI_PROD;
    case reduce_op::min: return MPI_MIN;
    case reduce_op::max: return MPI_MAX;
    case reduce_op::land: return MPI_LAND;
    case reduce_op::lor: return MPI_LOR;
    case reduce_op::band: return MPI_BAND;
    case reduce_op::bor: return MPI_BOR;
  }
  return MPI_SUM;
}

namespace {
template <class T, bool Max>
void nan_minmax(void* in, void* inout, int* len, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) {
    const T x = a[i], y = b[i];
    if (x != x) b[i] = x;
    else if (y == y) b[i] = Max ? (x > y ? x : y) : (x < y ? x : y);
  }
}
// NumPy's minimum/maximum of complex numbers (dsl/ops.hpp's less_equal): a NaN
// in either part of the incoming value wins, else the lexicographic extreme.
template <class T, bool Max>
void complex_minmax(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::complex<T>*>(in);
  auto* b = static_cast<std::complex<T>*>(inout);
  const auto nan = [](std::complex<T> z) { return z.real() != z.real() || z.imag() != z.imag(); };
  const auto le = [](std::complex<T> x, std::complex<T> y) {
    return (x.real() < y.real() && x.imag() == x.imag() && y.imag() == y.imag()) ||
           (x.real() == y.real() && x.imag() <= y.imag());
  };
  for (int i = 0; i < *len; ++i) {
    const std::complex<T> x = a[i], y = b[i];
    if (nan(y)) continue;  // a NaN in either value wins
    if (nan(x) || (Max ? !le(x, y) : !le(y, x))) b[i] = x;
  }
}

// An MPI_Op per (precision, min or max) from `fns`, created on first use
// (after MPI_Init) into `cache`; MPI_Finalize reclaims them.
MPI_Op cached_minmax_op(MPI_Op (&cache)[2][2], MPI_User_function* const (&fns)[2][2], reduce_op op, bool is_double) {
  const int t = is_double ? 1 : 0, m = op == reduce_op::max ? 1 : 0;
  if (cache[t][m] == MPI_OP_NULL) check_mpi(MPI_Op_create(fns[t][m], 1, &cache[t][m]), "MPI_Op_create");
  return cache[t][m];
}
}  // namespace

MPI_Op complex_minmax_op(reduce_op op, bool is_double) {
  static MPI_Op ops[2][2] = {{MPI_OP_NULL, MPI_OP_NULL}, {MPI_OP_NULL, MPI_OP_NULL}};
  static MPI_User_function* const fns[2][2] = {{&complex_minmax<float, false>, &complex_minmax<float, true>},
                                               {&complex_minmax<double, false>, &complex_minmax<double, true>}};
  return cached_minmax_op(ops, fns, op, is_double);
}

MPI_Op nan_propagating_op(reduce_op op, bool is_double) {
  static MPI_Op ops[2][2] = {{MPI_OP_NULL, MPI_OP_NULL}, {MPI_OP_NULL, MPI_OP_NULL}};
  static MPI_User_function* const fns[2][2] = {{&nan_minmax<float, false>, &nan_minmax<float, true>},
                                               {&nan_minmax<double, false>, &nan_minmax<double, true>}};
  return cached_minmax_op(ops, fns, op, is_double);
}

std::int64_t chunk_elems(std::size_t elem_size) {
  const std::int64_t limit = std::min<std::int64_t>(config().max_message_bytes, INT_MAX);
  return std::max<std::int64_t>(1, limit / std::int64_t(elem_size));
}

struct comm_state {
  MPI_Comm comm = MPI_COMM_NULL;
  mutable traffic sent;
  mutable traffic control;
  mutable std::uint64_t sequence = 0;
  ~comm_state() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    // A handle outliving MPI_Finalize (a global array in the host code) must not
    // call into MPI any more; the duplicate is reclaimed by MPI_Finalize itself.
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

}  // namespace detail

communicator::communicator(MPI_Comm user) : state_(std::make_shared<detail::comm_state>()) {
  detail::require_mpi("ember::communicator");
  // MPI reports an invalid communicator through MPI_COMM_WORLD's error handler
  // (by default: abort the job). A rank outside a group (MPI_Comm_split with
  // MPI_UNDEFINED) gets this error alone, and its peers are not in that group.
  if (user == MPI_COMM_NULL)
    throw value_error("ember::communicator: MPI_COMM_NULL is not a communicator (a rank outside the group of an "
                      "MPI_Comm_split with MPI_UNDEFINED has no communicator to use)");
  detail::check_mpi(MPI_Comm_dup(user, &state_->comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(state_->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(state_->comm, &rank_);
  MPI_Comm_size(state_->comm, &size_);
}

MPI_Comm communicator::native() const {
  // Every MPI call of ember goes through here: after MPI_Finalize (an array used
  // after its environment ended) that is an ember::error, not an MPI abort.
  int fin = 0;
  MPI_Finalized(&fin);
  if (fin) detail::require_mpi("ember");
  return state_->comm;
}
traffic communicator::sent() const { return state_->sent; }
traffic communicator::control_sent() const { return state_->control; }
void communicator::count(const traffic& t) const { state_->sent += t; }
void communicator::count_control(const traffic& t) const { state_->control += t; }

bool communicator::congruent(const communicator& other) const {
  if (state_ == other.state_) return true;
  int result = MPI_UNEQUAL;
  detail::check_mpi(MPI_Comm_compare(native(), other.native(), &result), "MPI_Comm_compare");
  return result == MPI_IDENT || result == MPI_CONGRUENT;
}

void communicator::barrier() const {
  detail::check_mpi(MPI_Barrier(native()), "MPI_Barrier");
}

void communicator::isend_bytes(const void* buf, std::int64_t bytes, int peer, int tag, MPI_Request* req) const {
  detail::check_mpi(MPI_Isend(buf, int(bytes), MPI_BYTE, peer, tag, native(), req), "MPI_Isend");
  count({bytes, 1});
}

void communicator::irecv_bytes(void* buf, std::int64_t bytes, int peer, int tag, MPI_Request* req) const {
  detail::check_mpi(MPI_Irecv(buf, int(bytes), MPI_BYTE, peer, tag, native(), req), "MPI_Irecv");
}

void communicator::send_bytes(const void* buf, std::int64_t bytes, int peer, int tag) const {
  detail::check_mpi(MPI_Send(buf, int(bytes), MPI_BYTE, peer, tag, native()), "MPI_Send");
  count({bytes, 1});
}

int communicator::recv_message(std::vector<char>& out, int peer, int tag) const {
  MPI_Status st;
  detail::check_mpi(MPI_Probe(peer, tag, native(), &st), "MPI_Probe");
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  out.resize(std::size_t(n));
  // Receive from the probed source exactly: with MPI_ANY_SOURCE another sender's
  // message could otherwise be matched instead.
  detail::check_mpi(MPI_Recv(out.data(), n, MPI_BYTE, st.MPI_SOURCE, tag, native(), MPI_STATUS_IGNORE), "MPI_Recv");
  return st.MPI_SOURCE;
}

int communicator::recv_bytes(void* buf, std::int64_t bytes, int peer, int tag) const {
  MPI_Status st;
  detail::check_mpi(MPI_Recv(buf, int(bytes), MPI_BYTE, peer, tag, native(), &st), "MPI_Recv");
  return st.MPI_SOURCE;
}

std::uint64_t communicator::next_sequence() const { return state_->sequence++; }

void communicator::wait_all(std::vector<MPI_Request>& reqs) {
  if (reqs.empty()) return;
  detail::check_mpi(MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  reqs.clear();
}

void communicator::allgatherv_bytes(const void* send, std::int64_t send_units, void* recv,
                                    const std::vector<std::int64_t>& counts, const std::vector<std::int64_t>& displs,
                                    std::int64_t unit) const {
  // Rounds of at most `step` units per rank keep every message within the limit.
  // The number of rounds derives from replicated counts, so every rank agrees.
  const std::int64_t step = detail::chunk_elems(std::size_t(unit));
  std::int64_t max_count = 0, max_end = 0;
  for (int r = 0; r < size_; ++r) {
    max_count = std::max(max_count, counts[r]);
    max_end = std::max(max_end, displs[r] + counts[r]);
  }
  if (max_count == 0) return;
  if (max_count <= step && max_end * unit <= INT_MAX) {
    // The common case: one MPI call, MPI's own algorithm, on predefined MPI_BYTE
    // (derived types can take slower paths inside MPI); plain Allgather when
    // every rank contributes the same amount.
    bool equal = true;
    for (int r = 0; r < size_; ++r) equal = equal && counts[r] == counts[0] && displs[r] == r * counts[0];
    if (equal) {
      detail::check_mpi(MPI_Allgather(send, int(send_units * unit), MPI_BYTE, recv, int(counts[0] * unit), MPI_BYTE,
                                      native()),
                        "MPI_Allgather");
    } else {
      std::vector<int> c(size_), d(size_);
      for (int r = 0; r < size_; ++r) {
        c[r] = int(counts[r] * unit);
        d[r] = int(displs[r] * unit);
      }
      detail::check_mpi(MPI_Allgatherv(send, int(send_units * unit), MPI_BYTE, recv, c.data(), d.data(), MPI_BYTE,
                                       native()),
                        "MPI_Allgatherv");
    }
    count(model::allgather(send_units * unit, size_));
    return;
  }
  // General case: per round, MPI_Alltoallw with a one-block hindexed receive type
  // per peer places each block at an arbitrary 64-bit byte offset.
  MPI_Datatype type;
  detail::check_mpi(MPI_Type_contiguous(int(unit), MPI_BYTE, &type), "MPI_Type_contiguous");
  MPI_Type_commit(&type);
  struct type_guard {
    MPI_Datatype* t;
    ~type_guard() { MPI_Type_free(t); }
  } guard{&type};

  const std::int64_t rounds = (max_count + step - 1) / step;
  std::vector<int> scounts(size_), sdispl(size_, 0), ones(size_), rdispl(size_, 0);
  std::vector<MPI_Datatype> stypes(size_, type), rtypes(size_);
  for (std::int64_t k = 0; k < rounds; ++k) {
    const std::int64_t lo = k * step;
    const std::int64_t mine = std::clamp<std::int64_t>(send_units - lo, 0, step);
    for (int r = 0; r < size_; ++r) {
      int blen = int(std::clamp<std::int64_t>(counts[r] - lo, 0, step));
      MPI_Aint bdisp = MPI_Aint((displs[r] + lo) * unit);
      detail::check_mpi(MPI_Type_create_hindexed(1, &blen, &bdisp, type, &rtypes[r]), "MPI_Type_create_hindexed");
      MPI_Type_commit(&rtypes[r]);
      ones[r] = blen > 0 ? 1 : 0;
      scounts[r] = int(mine);
    }
    const char* sbase = static_cast<const char*>(send) + lo * unit;
    int rc = MPI_Alltoallw(sbase, scounts.data(), sdispl.data(), stypes.data(), recv, ones.data(), rdispl.data(),
                           rtypes.data(), native());
    for (auto& t : rtypes) MPI_Type_free(&t);
    detail::check_mpi(rc, "MPI_Alltoallw");
    count(model::allgather(mine * unit, size_));
  }
}

namespace detail {

check_level replicated_level() {
  // Read at every call (tests switch it); must be the same on every rank.
  const char* v = std::getenv("EMBER_CHECK_REPLICATED");
  if (!v || !*v) return check_level::metadata;
  if (std::strcmp(v, "0") == 0) return check_level::off;
  if (std::strcmp(v, "1") == 0) return check_level::full;
  throw value_error(std::string("EMBER_CHECK_REPLICATED='") + v +
                    "': expected 0 (no cross-rank checks), 1 (metadata and data) or unset (metadata checks, the default)");
}
bool replicated_checks() { return replicated_level() == check_level::full; }
bool metadata_checks() { return replicated_level() != check_level::off; }

namespace {
// The error path of a divergence: every rank's hash and description, naming who
// differs. `hash` is already mixed.
std::string describe_divergence(const communicator& c, std::uint64_t hash, const std::function<std::string()>& describe);
}  // namespace

std::string divergence(const communicator& c, std::uint64_t hash, const std::function<std::string()>& describe) {
  if (c.size() == 1) return {};
  // 63 bits of the (mixed: callers may pass small integers) hash, min and -max
  // in one allreduce: equal iff min == max.
  hash = arg_hash().add(hash).h;
  std::int64_t v[2] = {std::int64_t(hash >> 1), -std::int64_t(hash >> 1)};
  c.allreduce(v, 2, reduce_op::min);
  if (v[0] == -v[1]) return {};
  return describe_divergence(c, hash, describe);
}

namespace {
std::string describe_divergence(const communicator& c, std::uint64_t hash, const std::function<std::string()>& describe) {
  // The error path: every rank's hash and description, to name who differs.
  const auto hashes = c.allgather(std::int64_t(hash >> 1));
  const std::string mine = describe();
  const auto lens = c.allgather(std::int64_t(mine.size()));
  std::vector<std::int64_t> displs(std::size_t(c.size()), 0);
  for (int r = 1; r < c.size(); ++r) displs[std::size_t(r)] = displs[std::size_t(r - 1)] + lens[std::size_t(r - 1)];
  std::string all(std::size_t(displs.back() + lens.back()), '\0');
  c.allgatherv_bytes(mine.data(), std::int64_t(mine.size()), all.data(), lens, displs, 1);
  auto desc = [&](int r) { return all.substr(std::size_t(displs[std::size_t(r)]), std::size_t(lens[std::size_t(r)])); };
  // The most common hash (ties: the one rank 0 has, then the lowest rank's) is
  // "the others"; every rank outside it is named with what it passes.
  std::map<std::int64_t, int> count;
  for (auto h : hashes) ++count[h];
  std::int64_t major = hashes[0];
  for (int r = 0; r < c.size(); ++r)
    if (count[hashes[std::size_t(r)]] > count[major]) major = hashes[std::size_t(r)];
  std::string out;
  int named = 0, first_major = -1;
  for (int r = 0; r < c.size(); ++r) {
    if (hashes[std::size_t(r)] == major) {
      if (first_major < 0) first_major = r;
      continue;
    }
    if (named == 8) {
      out += "; ...";
      ++named;
    }
    if (named > 8) continue;
    out += (named ? "; rank " : "rank ") + std::to_string(r) + ": " + desc(r);
    ++named;
  }
  const int others = count[major] - 1;
  out += "; rank " + std::to_string(first_major) +
         (others > 0 ? " and " + std::to_string(others) + " other rank" + (others > 1 ? "s" : "") : std::string()) +
         ": " + desc(first_major);
  return out;
}

}  // namespace

void check_replicated(const communicator& c, std::uint64_t hash, const char* what, const char* subject,
                      const std::function<std::string()>& describe) {
  if (!replicated_checks()) return;
  const std::string d = divergence(c, hash, describe);
  if (!d.empty())
    throw value_error(std::string(what) + ": every rank must pass the same " + subject + ", but they differ: " + d +
                      " (found by EMBER_CHECK_REPLICATED=1)");
}

int error_class_of(std::exception_ptr e) {
  if (!e) return 0;
  try {
    std::rethrow_exception(e);
  } catch (const value_error&) {
    return 1;
  } catch (const shape_error&) {
    return 2;
  } catch (const axis_error&) {
    return 3;
  } catch (const type_error&) {
    return 4;
  } catch (const memory_error&) {
    return 6;
  } catch (const error&) {
    return 5;
  } catch (const std::bad_alloc&) {
    return 6;
  } catch (...) {
    return 7;
  }
}

void throw_error_class(int cls, const std::string& msg) {
  switch (cls) {
    case 1: throw value_error(msg);
    case 2: throw shape_error(msg);
    case 3: throw axis_error(msg);
    case 4: throw type_error(msg);
    case 6: throw memory_error(msg);
    default: throw error(msg);
  }
}

namespace {
std::string what_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return "out of memory (std::bad_alloc)";
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}
}  // namespace

void agree_entry(const communicator& c, const entry_args& a, std::exception_ptr local) {
  const int cls = error_class_of(local);
  const std::uint64_t hash = arg_hash().add(a.hash).h;
  constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
  // min over ranks of: hash, -hash (equal iff all hashes are), the first failing
  // rank, and whether every rank failed validating (1 only if all did).
  std::int64_t v[4] = {std::int64_t(hash >> 1), -std::int64_t(hash >> 1), cls ? std::int64_t(c.rank()) : none,
                       (cls >= 1 && cls <= 5) ? 1 : 0};
  // counted in control_sent(), not sent(): a check, not data (communicator.hpp)
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT64_T, MPI_MIN, c.native()), "MPI_Allreduce");
  c.count_control(model::allreduce(std::int64_t(sizeof v), c.size()));
  if (v[0] != -v[1])
    throw value_error(std::string(a.what) + ": every rank must pass the same " + a.subject +
                      ", but they differ: " + describe_divergence(c, hash, a.describe));
  if (v[2] == none) return;
  // Equal arguments validate alike: when every rank failed validating, each
  // throws its own (identical) error, type and all.
  if (v[3] == 1) std::rethrow_exception(local);
  // Some ranks failed alone (out of memory, mostly): the first one's error, on every rank.
  const int first = int(v[2]);
  const auto failed = c.allgather(std::int32_t(cls != 0));
  std::string others;
  int nbad = 0;
  for (int r = 0; r < c.size(); ++r)
    if (failed[std::size_t(r)] && r != first) others += (nbad++ ? ", " : "") + std::to_string(r);
  std::int64_t head[2] = {cls, 0};
  std::string msg = c.rank() == first ? what_of(local) : std::string();
  head[1] = std::int64_t(msg.size());
  c.bcast(head, 2, first);
  msg.resize(std::size_t(head[1]));
  c.bcast(msg.data(), head[1], first);
  msg += " [on rank " + std::to_string(first) + " of " + std::to_string(c.size());
  if (nbad) msg += "; also failed on rank" + std::string(nbad > 1 ? "s " : " ") + others;
  msg += "]";
  throw_error_class(int(head[0]), msg);
}

void entry_failed_alone(const communicator& c, const char* what, std::exception_ptr e) {
  failure::local_failure(c, {what, 1, 1, "", ""}, e);
}

void null_handle(const char* what) {
  const std::string msg = std::string(what) + ": use of a null array handle (default-constructed, or moved from)";
  int init = 0, fin = 0, wsize = 1;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (wsize == 1 || on_failure() == failure_policy::rethrow) throw error(msg);
  failure::local_failure(world(), {"collective operation", 1, 1, "", ""},
                         std::make_exception_ptr(error(msg + "; the rank holding it cannot know its peers' "
                                                              "communicator to tell them")));
}

void require_mpi(const char* what) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (fin)
    throw error(std::string(what) + ": MPI has been finalized (the ember::environment ended, or the host code "
                "called MPI_Finalize); MPI cannot be used, nor initialized again, in this process");
  if (!init)
    throw error(std::string(what) + ": MPI is not initialized: construct an ember::environment at the start of "
                "main (or call MPI_Init in the host code) before using ember");
}

}  // namespace detail

namespace model {
traffic allgather(std::int64_t my_bytes, int nranks) {
  return {my_bytes * (nranks - 1), nranks - 1};
}
traffic bcast(std::int64_t bytes, int nranks, bool is_root) {
  return is_root ? traffic{bytes * (nranks - 1), nranks - 1} : traffic{};
}
traffic allreduce(std::int64_t bytes, int nranks) {
  // Reduce-scatter + allgather (Rabenseifner): each rank sends 2 (P-1)/P of the
  // data in 2 ceil(log2 P) messages; independent of P in bytes, as real MPI
  // allreduce algorithms are for large messages.
  if (nranks <= 1) return {};
  std::int64_t rounds = 0;
  while ((std::int64_t(1) << rounds) < nranks) ++rounds;
  return {2 * bytes * (nranks - 1) / nranks, 2 * rounds};
}
}  // namespace model

// ---------------------------------------------------------------------------
namespace {
void check_not_finalized() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (fin)
    throw error("ember::environment: MPI was finalized already (by an earlier ember::environment, or the host code); "
                "MPI cannot be initialized twice in one process: keep one ember::environment alive for the whole "
                "of main");
}
}  // namespace

environment::environment() {
  check_not_finalized();
  int init = 0;
  MPI_Initialized(&init);
  if (!init) {
    int provided = 0;
    detail::check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    owns_ = true;
  }
}

environment::environment(int& argc, char**& argv) {
  check_not_finalized();
  int init = 0;
  MPI_Initialized(&init);
  if (!init) {
    int provided = 0;
    detail::check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    owns_ = true;
  }
}

namespace detail {
std::unique_ptr<communicator>& world_slot() {
  static std::unique_ptr<communicator> w;
  return w;
}
}  // namespace detail

environment::~environment() {
  // Free ember's duplicate while MPI is still alive.
  detail::world_slot().reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

const communicator& world() {
  auto& w = detail::world_slot();
  if (w) {
    int fin = 0;
    MPI_Finalized(&fin);
    if (fin) detail::require_mpi("ember::world");
  }
  if (!w) w = std::make_unique<communicator>(MPI_COMM_WORLD);
  return *w;
}

}  // namespace ember
