// ember::par: data-parallel utilities in the manner of dlp_mpi (shared/seeds/
// dlp_mpi-readme.txt), for a list of independent items that every rank holds in
// the same order.
//
//   for (auto& ex : ember::par::split_round_robin(examples)) work(ex);  // examples[rank::size]
//   for (auto& ex : ember::par::split_managed(examples)) work(ex);      // root hands out indices
//   for (auto&& [i, r] : ember::par::map_unordered(score, examples))   // results reach the root
//     table[i] = r;                                                     // (root: bookkeeping only)
//   auto all = ember::par::gather(my_metrics);                          // root: one per rank
//
// Everything talks on ember's own duplicate of the communicator (ember::world()
// by default), so none of these messages can ever match the host code's. A binary
// started without mpirun is one rank and simply iterates everything, as dlp_mpi
// does without MPI.
//
// Values are serialized with cereal (binary archives, the machines of one job
// share a byte order): numbers, std::string, std::vector, std::map, std::pair,
// std::tuple, std::optional and user types with a `serialize(Archive&)` member
// work as they are; include the matching <cereal/types/...> header for others.
//
// Managed loops (split_managed, map_unordered): the root (rank 0) only manages
// when there is more than one rank: it hands out item indices in increasing order,
// one per request; only indices and results travel, never the items. The protocol
// (every message carries its loop's tag, taken from communicator::next_sequence(),
// so two loops in a row never mix):
//   worker -> root  {request, i}  "done with item i (or -1 at the start), next?"
//                   {result, i, payload}   map_unordered: the result doubles as request
//                   {error, i, what}  the worker's code threw on item i; it sends
//                                     nothing more in this loop
//                   {leave, i}   the worker left the loop early (break) or never entered it
//   root -> worker  {index}  or  {stop}  or  {stop_with_error, failing rank, item}
// A worker that asks when no item is left is parked: it gets its final {stop}
// (or {stop_with_error}) only when every worker has asked or left, because a
// slower worker may still fail on its last item and then every rank must throw.
// (So a managed loop ends on all ranks together, like a barrier.)
// After an error the root answers every other worker's next message with
// stop_with_error, waits until every worker has been answered or has left, and
// throws an ember::error naming the failing rank and item; each worker throws the
// same facts when told to stop with an error, and the failing worker's exception
// propagates on that worker (in map_unordered wrapped in an ember::error naming
// the item, the original nested). No rank is left waiting.
//
// Rules (as with any MPI collective): every rank constructs the same managed
// loops in the same order, over ranges of the same length and order.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <iterator>
#include <optional>
#include <ranges>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <cereal/archives/binary.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/complex.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/set.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/tuple.hpp>
#include <cereal/types/unordered_map.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>
#include <range/v3/iterator/operations.hpp>
#include <range/v3/range/access.hpp>
#include <range/v3/range/concepts.hpp>
#include <range/v3/range/operations.hpp>
#include <range/v3/range/primitives.hpp>
#include <range/v3/view/all.hpp>
#include <range/v3/view/drop.hpp>
#include <range/v3/view/stride.hpp>

#include "broadcast.hpp"
#include "communicator.hpp"
#include "error.hpp"

namespace ember::par {

inline int rank(const communicator& c = world()) { return c.rank(); }
inline int size(const communicator& c = world()) { return c.size(); }
// The root is rank 0, as dlp_mpi's IS_MASTER.
inline bool is_root(const communicator& c = world()) { return c.rank() == 0; }
inline void barrier(const communicator& c = world()) { c.barrier(); }

// ---- serialization (cereal) ----
namespace detail {

// A read-only streambuf over bytes already in memory (no copy into a stringstream).
struct memory_buf : std::streambuf {
  memory_buf(const char* p, std::size_t n) {
    char* b = const_cast<char*>(p);  // never written through: get area only
    setg(b, b, b + n);
  }
};

template <class T>
void serialize_into(std::ostream& os, const T& v) {
  cereal::BinaryOutputArchive ar(os);
  ar(v);
}
template <class T>
std::string serialize(const T& v) {
  std::ostringstream os(std::ios::binary);
  serialize_into(os, v);
  return std::move(os).str();
}
template <class T>
T deserialize(const char* p, std::size_t n) {
  static_assert(std::is_default_constructible_v<T>,
                "ember::par: received values are default-constructed, then loaded by cereal");
  memory_buf buf(p, n);
  std::istream is(&buf);
  T v{};
  cereal::BinaryInputArchive ar(is);
  ar(v);
  return v;
}

// Byte blobs of any size between two ranks: the first message carries the total
// length, messages stay within config().max_message_bytes. Returns the source.
void send_blob(const communicator& c, std::string_view data, int peer, int tag);
int recv_blob(const communicator& c, std::string& out, int peer, int tag);

// Collectives on serialized bytes.
std::vector<std::string> gather_bytes(const communicator& c, const std::string& mine, int root);
std::string bcast_bytes(const communicator& c, std::string data, int root);
std::vector<std::string> allgather_bytes(const communicator& c, const std::string& mine);

// ---- the managed-loop protocol (par.cpp) ----
enum msg_kind : std::int64_t { msg_request = 1, msg_result = 2, msg_error = 3, msg_leave = 4 };
enum reply_code : std::int64_t { reply_stop = -1, reply_stop_error = -2 };

struct loop_tags {
  int request = 0, reply = 0;
};
// Tags of a new managed loop on `c` (takes a sequence number: call on every rank).
loop_tags new_loop(const communicator& c);

// A worker's answer from the root: an index, stop, or stop with an error.
struct reply {
  std::int64_t code = reply_stop;
  std::int64_t failed_rank = -1, failed_item = -1;
};

// Worker side: sends {kind, item} (fixed size) and, for a request, waits for the reply.
reply worker_request(const communicator& c, const loop_tags& t, std::int64_t done_item);
void worker_notify(const communicator& c, const loop_tags& t, msg_kind kind, std::int64_t item) noexcept;
// The one message of a managed loop stopped by a failure, the same on every rank
// (the root, the stopped workers and, in map_unordered, the failing worker):
// "ember::par::<what>: rank F failed on item I[: detail]; every rank was stopped"
// or, for rank 0 outside any item (item -1), that the root left the loop with an
// exception.
std::string stopped_message(const char* what, std::int64_t failed_rank, std::int64_t failed_item,
                            const std::string& detail);
[[noreturn]] void throw_stopped(const char* what, const reply& r, const std::string& detail = {});
// Rules of managed loops: every rank iterates a range of the same length. With
// EMBER_CHECK_REPLICATED=1 (runtime/communicator.hpp) that is checked
// (collectively) when the loop is made.
void check_loop_length(const communicator& c, std::int64_t n, const char* what);

// Root side of split_managed: hands out 0..n-1 until every worker is done; throws
// the error of a failing worker after all others were told to stop. With
// `abort` every message is answered with stop_with_error (the root's own code
// failed before it managed anything).
void manage_indices(const communicator& c, const loop_tags& t, std::int64_t n, bool abort);

// Root side of map_unordered, one received message at a time.
class map_root {
 public:
  map_root(const communicator& c, loop_tags t, std::int64_t n)
      : c_(c), t_(t), n_(n), active_(c.size() - 1) {}
  // Waits for the next result; false when every worker is done. Throws (after
  // draining) when a worker failed.
  bool next(std::int64_t& index, std::string& payload);
  // Tells every remaining worker to stop (with an error when `error`); never throws.
  void drain(bool error) noexcept;
  bool finished() const { return active_ == 0; }  // every worker has its final answer

 private:
  const communicator& c_;
  loop_tags t_;
  std::int64_t n_, next_ = 0;
  int active_;
  std::string buf_;
  struct failure {
    int rank;
    std::int64_t item;
    std::string what;
  };
  std::optional<failure> failed_;
  std::vector<int> parked_;  // workers waiting for the final answer
  int src_ = -1;
  struct {
    std::int64_t kind = 0, item = -1;
  } msg_;
  void receive(bool stop_handing_out);
  void finish(bool error);
};

// Worker side of map_unordered (messages are blobs {kind, item, payload}): the
// first request (kind msg_request, item -1), then each result, which asks for
// the next index.
// A {stop_with_error} reply is followed by the failure's what() (a blob), stored
// in `detail`, so a stopped worker throws the same message as the root.
reply map_worker_send(const communicator& c, const loop_tags& t, msg_kind kind, std::int64_t item,
                      const std::string& payload, std::string& detail);
// {error, item, what} (or {leave, -1}): the worker sends nothing more in this loop.
void worker_send_error(const communicator& c, const loop_tags& t, std::int64_t item, const std::string& what,
                       msg_kind kind = msg_error) noexcept;

// The message of the exception in flight (inside a catch block).
std::string current_what();

// The input iterator of the managed loops: the range owns the position and pulls
// its next element (a message exchange) on ++; the iterator only forwards.
template <class Range>
class pull_iterator {
 public:
  using value_type = typename Range::pull_value;
  using difference_type = std::ptrdiff_t;
  struct sentinel {};
  pull_iterator() = default;
  explicit pull_iterator(Range* r) : r_(r) {}
  decltype(auto) operator*() const { return r_->current(); }
  pull_iterator& operator++() {
    r_->advance();
    return *this;
  }
  void operator++(int) { ++*this; }
  bool at_end() const { return r_->done_; }  // a member: the ranges befriend the iterator, not its friends
  friend bool operator==(const pull_iterator& i, sentinel) { return i.at_end(); }

 private:
  Range* r_ = nullptr;
};

}  // namespace detail

// ---- collectives for any serializable value ----

// Every rank's value on the root, in rank order; an empty vector on other ranks
// (dlp_mpi's gather, which returns None there).
template <class T>
std::vector<T> gather(const T& value, int root = 0, const communicator& c = world()) {
  ember::detail::check_root(c, root, "par::gather");
  auto parts = detail::gather_bytes(c, detail::serialize(value), root);
  std::vector<T> out;
  out.reserve(parts.size());
  for (const auto& p : parts) out.push_back(detail::deserialize<T>(p.data(), p.size()));
  return out;
}

// Root's value on every rank (others pass anything, e.g. a default value):
// `cfg = ember::par::bcast(cfg)`, as mpi4py's `obj = comm.bcast(obj, root)`.
template <class T>
T bcast(const T& value, int root = 0, const communicator& c = world()) {
  ember::detail::check_root(c, root, "par::bcast");
  if (c.size() == 1) return value;
  auto bytes = detail::bcast_bytes(c, c.rank() == root ? detail::serialize(value) : std::string(), root);
  if (c.rank() == root) return value;
  return detail::deserialize<T>(bytes.data(), bytes.size());
}

// Every rank's value on every rank, in rank order.
template <class T>
std::vector<T> allgather(const T& value, const communicator& c = world()) {
  auto parts = detail::allgather_bytes(c, detail::serialize(value));
  std::vector<T> out;
  out.reserve(parts.size());
  for (const auto& p : parts) out.push_back(detail::deserialize<T>(p.data(), p.size()));
  return out;
}

// ---- splitting ----

// This rank's share: items rank, rank + size, ... (examples[rank::size]). A
// range-v3 view over `r` (which must outlive it); no communication at all.
template <class R>
auto split_round_robin(R&& r, const communicator& c = world()) {
  return std::forward<R>(r) | ranges::views::drop(c.rank()) | ranges::views::stride(c.size());
}

// split_managed(r): with more than one rank the root hands out indices on request
// and iterates nothing itself; each worker iterates the items it was given, and
// asks for the next one when its loop body finishes, so uneven item costs balance.
// With one rank it iterates every item. `r` must be a forward range (workers walk
// it forward to the indices they get, which only increase) of the same length and
// order on every rank.
//
// Leaving the loop with `break` on a worker tells the root this worker takes no
// more items (the others carry on); an exception escaping the loop body on a
// worker reaches the root, which stops every rank with an ember::error naming
// the rank and the item.
template <ranges::forward_range R>
class managed_range {
  using base_t = ranges::views::all_t<R>;
  using base_iter = ranges::iterator_t<base_t>;

 public:
  managed_range(R&& r, const communicator& c)
      : base_(ranges::views::all(std::forward<R>(r))), comm_(c), uncaught_(std::uncaught_exceptions()) {
    if (ember::detail::replicated_checks())
      detail::check_loop_length(comm_, static_cast<std::int64_t>(ranges::distance(base_)), "split_managed");
    if (comm_.size() > 1) tags_ = detail::new_loop(comm_);
  }
  managed_range(const managed_range&) = delete;
  managed_range& operator=(const managed_range&) = delete;

  ~managed_range() {
    if (comm_.size() == 1) return;
    const bool unwinding = std::uncaught_exceptions() > uncaught_;
    if (comm_.rank() == 0) {
      // The root never entered the loop: serve the workers anyway so none waits.
      if (!started_) try {
          detail::manage_indices(comm_, tags_, static_cast<std::int64_t>(ranges::distance(base_)), unwinding);
        } catch (...) {
        }
      return;
    }
    if (done_) return;
    // Left early: an exception from the loop body (error) or a break (leave).
    detail::worker_notify(comm_, tags_, unwinding ? detail::msg_error : detail::msg_leave, started_ ? cur_ : -1);
  }

  using pull_value = ranges::range_value_t<base_t>;
  using iterator = detail::pull_iterator<managed_range>;
  using sentinel = typename iterator::sentinel;

  iterator begin() {
    if (!started_) start();
    return iterator(this);
  }
  sentinel end() const { return {}; }
  // Index (in the underlying range) of the item the loop body is processing.
  std::int64_t index() const { return cur_; }

 private:
  friend class detail::pull_iterator<managed_range>;
  decltype(auto) current() { return *it_; }
  base_t base_;
  communicator comm_;
  detail::loop_tags tags_;
  base_iter it_{};
  std::int64_t pos_ = 0;   // index of it_
  std::int64_t cur_ = -1;  // item being processed
  bool started_ = false, done_ = false;
  int uncaught_;

  void start() {
    started_ = true;
    it_ = ranges::begin(base_);
    if (comm_.size() == 1) {
      cur_ = 0;
      done_ = it_ == ranges::end(base_);
      return;
    }
    if (comm_.rank() == 0) {
      done_ = true;  // set first: a failure below must not make the destructor serve again
      detail::manage_indices(comm_, tags_, static_cast<std::int64_t>(ranges::distance(base_)), false);
      return;
    }
    next_from_root();
  }
  void advance() {
    if (comm_.size() == 1) {
      ++it_;
      ++cur_;
      done_ = it_ == ranges::end(base_);
      return;
    }
    next_from_root();
  }
  void next_from_root() {
    const auto r = detail::worker_request(comm_, tags_, cur_);
    if (r.code >= 0) {
      ranges::advance(it_, static_cast<ranges::iter_difference_t<base_iter>>(r.code - pos_));
      pos_ = cur_ = r.code;
      return;
    }
    done_ = true;
    if (r.code == detail::reply_stop_error) detail::throw_stopped("split_managed", r);
  }
};

template <class R>
managed_range<R> split_managed(R&& r, const communicator& c = world()) {
  return managed_range<R>(std::forward<R>(r), c);
}

// One result of map_unordered on the root: the item's index and fn's value.
template <class V>
struct indexed {
  std::int64_t index = 0;
  V value{};
};

// map_unordered(fn, r): the workers compute fn(item) and send the results to the
// root, which sees them in the order they finish: iterating the returned range
// yields `indexed<V>{index, value}` on the root and nothing on the workers (whose
// begin() does all their work). Keep the root's loop body to bookkeeping: while
// it runs, workers that finish wait for their next index. With one rank the root
// computes every item itself, in order. An exception in fn on a worker reaches
// every rank as an ember::error naming the rank, the item and what() (on the
// failing rank the original exception is nested in it).
template <class Fn, ranges::forward_range R>
class unordered_map_range {
  using base_t = ranges::views::all_t<R>;
  using base_iter = ranges::iterator_t<base_t>;

 public:
  using result_type = std::remove_cvref_t<std::invoke_result_t<Fn&, ranges::range_reference_t<base_t>>>;
  static_assert(!std::is_void_v<result_type>, "ember::par::map_unordered: fn must return a (serializable) value");
  using value_type = indexed<result_type>;

  unordered_map_range(Fn fn, R&& r, const communicator& c)
      : fn_(std::move(fn)), base_(ranges::views::all(std::forward<R>(r))), comm_(c), uncaught_(std::uncaught_exceptions()) {
    if (ember::detail::replicated_checks())
      detail::check_loop_length(comm_, static_cast<std::int64_t>(ranges::distance(base_)), "map_unordered");
    if (comm_.size() > 1) tags_ = detail::new_loop(comm_);
  }
  unordered_map_range(const unordered_map_range&) = delete;
  unordered_map_range& operator=(const unordered_map_range&) = delete;

  ~unordered_map_range() {
    if (comm_.size() == 1) return;
    const bool unwinding = std::uncaught_exceptions() > uncaught_;
    if (comm_.rank() == 0) {
      if (!started_) root_.emplace(comm_, tags_, static_cast<std::int64_t>(ranges::distance(base_)));
      // The root left its loop early (break, or an exception from its body):
      // answer every worker's next message so none waits.
      if (!root_->finished()) root_->drain(unwinding);
      return;
    }
    if (!started_) detail::worker_send_error(comm_, tags_, -1, {}, detail::msg_leave);
  }

  using pull_value = value_type;
  using iterator = detail::pull_iterator<unordered_map_range>;
  using sentinel = typename iterator::sentinel;

  iterator begin() {
    if (!started_) start();
    return iterator(this);
  }
  sentinel end() const { return {}; }

 private:
  friend class detail::pull_iterator<unordered_map_range>;
  value_type& current() { return cur_; }
  Fn fn_;
  base_t base_;
  communicator comm_;
  detail::loop_tags tags_;
  int uncaught_;
  bool started_ = false, done_ = false;
  value_type cur_{};
  base_iter it_{};
  std::int64_t pos_ = 0;
  std::optional<detail::map_root> root_;
  std::string buf_;

  result_type call(std::int64_t i) {
    try {
      return fn_(*it_);
    } catch (...) {
      const std::string what = detail::current_what();
      if (comm_.size() > 1) detail::worker_send_error(comm_, tags_, i, what);
      std::throw_with_nested(error(detail::stopped_message("map_unordered", comm_.rank(), i, what)));
    }
  }

  void start() {
    started_ = true;
    it_ = ranges::begin(base_);
    if (comm_.size() == 1) {
      if (it_ == ranges::end(base_)) {
        done_ = true;
        return;
      }
      cur_ = {0, call(0)};
      return;
    }
    if (comm_.rank() == 0) {
      root_.emplace(comm_, tags_, static_cast<std::int64_t>(ranges::distance(base_)));
      advance();
      return;
    }
    // A worker does all its work here and yields nothing.
    done_ = true;
    std::string why;
    auto r = detail::map_worker_send(comm_, tags_, detail::msg_request, -1, {}, why);
    while (r.code >= 0) {
      ranges::advance(it_, static_cast<ranges::iter_difference_t<base_iter>>(r.code - pos_));
      pos_ = r.code;
      const std::string payload = detail::serialize(call(r.code));
      r = detail::map_worker_send(comm_, tags_, detail::msg_result, r.code, payload, why);
    }
    if (r.code == detail::reply_stop_error) detail::throw_stopped("map_unordered", r, why);
  }

  void advance() {
    if (comm_.size() == 1) {
      ++it_;
      ++pos_;
      if (it_ == ranges::end(base_)) {
        done_ = true;
        return;
      }
      cur_ = {pos_, call(pos_)};
      return;
    }
    std::int64_t i = 0;
    if (!root_->next(i, buf_)) {
      done_ = true;
      return;
    }
    cur_ = {i, detail::deserialize<result_type>(buf_.data(), buf_.size())};
  }
};

template <class Fn, class R>
unordered_map_range<std::decay_t<Fn>, R> map_unordered(Fn&& fn, R&& r, const communicator& c = world()) {
  return unordered_map_range<std::decay_t<Fn>, R>(std::forward<Fn>(fn), std::forward<R>(r), c);
}

}  // namespace ember::par
