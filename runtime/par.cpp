#include "par.hpp"

#include <algorithm>
#include <climits>

namespace ember::par::detail {
namespace {

// Tags: managed loops take a pair in [0x1000, 0x3000) (below the exchange
// engine's 0x656d); gather's point-to-point fallback uses its own.
constexpr int loop_tag_base = 0x1000;
constexpr int loop_tag_pairs = 0x1000;
constexpr int gather_tag = 0x3100;

std::int64_t message_limit() {
  // At least 64 bytes so a blob's header always fits in its first message.
  return std::max<std::int64_t>(64, std::min<std::int64_t>(config().max_message_bytes, INT_MAX));
}

// A worker's fixed-size message to the root: {kind, item}.
struct request_msg {
  std::int64_t kind, item;
};

}  // namespace

void send_blob(const communicator& c, std::string_view data, int peer, int tag) {
  const std::int64_t limit = message_limit();
  const std::int64_t n = std::int64_t(data.size());
  const std::int64_t first = std::min<std::int64_t>(n, limit - 8);
  std::string head(std::size_t(8 + first), '\0');
  std::memcpy(head.data(), &n, 8);
  std::memcpy(head.data() + 8, data.data(), std::size_t(first));
  c.send_bytes(head.data(), std::int64_t(head.size()), peer, tag);
  for (std::int64_t off = first; off < n; off += limit)
    c.send_bytes(data.data() + off, std::min(limit, n - off), peer, tag);
}

int recv_blob(const communicator& c, std::string& out, int peer, int tag) {
  std::vector<char> msg;
  const int src = c.recv_message(msg, peer, tag);
  if (msg.size() < 8) throw communication_error("ember::par: malformed message from rank " + std::to_string(src));
  std::int64_t n = 0;
  std::memcpy(&n, msg.data(), 8);
  out.assign(msg.data() + 8, msg.size() - 8);
  // The rest comes from the same source with the same tag, in order (MPI's
  // non-overtaking rule), and that sender sends nothing else in between.
  while (std::int64_t(out.size()) < n) {
    c.recv_message(msg, src, tag);
    out.append(msg.data(), msg.size());
  }
  return src;
}

std::vector<std::string> gather_bytes(const communicator& c, const std::string& mine, int root) {
  const int P = c.size();
  if (P == 1) return {mine};
  // Every rank learns every size, so all agree on the path below.
  const auto sizes = c.allgather(std::int64_t(mine.size()));
  std::int64_t total = 0, largest = 0;
  for (auto s : sizes) {
    total += s;
    largest = std::max(largest, s);
  }
  std::vector<std::string> out;
  if (total <= INT_MAX && largest <= message_limit()) {
    std::vector<int> counts(P), displs(P);
    for (int r = 0, off = 0; r < P; ++r) {
      counts[r] = int(sizes[r]);
      displs[r] = off;
      off += counts[r];
    }
    std::string all(c.rank() == root ? std::size_t(total) : 0, '\0');
    ember::detail::check_mpi(MPI_Gatherv(mine.data(), int(mine.size()), MPI_BYTE, all.data(), counts.data(),
                                         displs.data(), MPI_BYTE, root, c.native()),
                             "MPI_Gatherv");
    if (c.rank() != root) {
      c.count({std::int64_t(mine.size()), 1});
      return {};
    }
    for (int r = 0; r < P; ++r) out.push_back(all.substr(std::size_t(displs[r]), std::size_t(counts[r])));
    return out;
  }
  // Too large for one gatherv: each rank sends its blob (chunked) to the root,
  // which receives them in rank order.
  if (c.rank() != root) {
    send_blob(c, mine, root, gather_tag);
    return {};
  }
  out.resize(std::size_t(P));
  for (int r = 0; r < P; ++r) {
    if (r == root) out[std::size_t(r)] = mine;
    else recv_blob(c, out[std::size_t(r)], r, gather_tag);
  }
  return out;
}

std::string bcast_bytes(const communicator& c, std::string data, int root) {
  std::int64_t n = std::int64_t(data.size());
  c.bcast(&n, 1, root);
  if (c.rank() != root) data.assign(std::size_t(n), '\0');
  c.bcast(data.data(), n, root);  // chunked by the communicator
  return data;
}

std::vector<std::string> allgather_bytes(const communicator& c, const std::string& mine) {
  const int P = c.size();
  if (P == 1) return {mine};
  const auto sizes = c.allgather(std::int64_t(mine.size()));
  std::vector<std::int64_t> displs(P);
  std::int64_t total = 0;
  for (int r = 0; r < P; ++r) {
    displs[r] = total;
    total += sizes[r];
  }
  std::string all(std::size_t(total), '\0');
  c.allgatherv_bytes(mine.data(), std::int64_t(mine.size()), all.data(), sizes, displs, 1);  // chunks itself
  std::vector<std::string> out;
  for (int r = 0; r < P; ++r) out.push_back(all.substr(std::size_t(displs[r]), std::size_t(sizes[r])));
  return out;
}

loop_tags new_loop(const communicator& c) {
  const int k = int(c.next_sequence() % loop_tag_pairs);
  return {loop_tag_base + 2 * k, loop_tag_base + 2 * k + 1};
}

reply worker_request(const communicator& c, const loop_tags& t, std::int64_t done_item) {
  const request_msg m{msg_request, done_item};
  c.send_bytes(&m, sizeof m, 0, t.request);
  reply r;
  c.recv_bytes(&r, sizeof r, 0, t.reply);
  return r;
}

void worker_notify(const communicator& c, const loop_tags& t, msg_kind kind, std::int64_t item) noexcept {
  const request_msg m{kind, item};
  try {
    c.send_bytes(&m, sizeof m, 0, t.request);
  } catch (...) {
    // Called from destructors: nothing sensible is left to do if MPI itself failed.
  }
}

std::string stopped_message(const char* what, std::int64_t failed_rank, std::int64_t failed_item,
                            const std::string& detail) {
  const std::string head = std::string("ember::par::") + what + ": ";
  // (item -1: the root failed outside any item; with one rank, rank 0 fails on items)
  if (failed_rank == 0 && failed_item < 0)
    return head + "the root (rank 0) left the loop with an exception; every rank was stopped";
  return head + "rank " + std::to_string(failed_rank) + " failed" +
         (failed_item >= 0 ? " on item " + std::to_string(failed_item) : std::string()) +
         (detail.empty() ? " (its exception propagates there)" : ": " + detail) + "; every rank was stopped";
}

void throw_stopped(const char* what, const reply& r, const std::string& detail) {
  throw error(stopped_message(what, r.failed_rank, r.failed_item, detail));
}

void check_loop_length(const communicator& c, std::int64_t n, const char* what) {
  ember::detail::check_replicated(c, std::uint64_t(n), (std::string("ember::par::") + what).c_str(),
                                  "range length", [&] { return std::to_string(n) + " items"; });
}

void manage_indices(const communicator& c, const loop_tags& t, std::int64_t n, bool abort) {
  // Workers that ask when no item is left are parked, not told to stop: another
  // worker may still fail on its last item, and then every rank must throw. Once
  // every worker is parked (or gone), all parked ones get the same final answer.
  int active = c.size() - 1;
  std::vector<int> parked;
  std::int64_t next = 0;
  int failed_rank = abort ? 0 : -1;
  std::int64_t failed_item = -1;
  while (active > int(parked.size())) {
    request_msg m{};
    const int src = c.recv_bytes(&m, sizeof m, MPI_ANY_SOURCE, t.request);
    if (m.kind == msg_request) {
      if (failed_rank >= 0) {
        const reply r{reply_stop_error, failed_rank, failed_item};
        c.send_bytes(&r, sizeof r, src, t.reply);
        --active;
      } else if (next < n) {
        const reply r{next++, -1, -1};
        c.send_bytes(&r, sizeof r, src, t.reply);
      } else {
        parked.push_back(src);
      }
    } else {
      // error or leave: that worker sends nothing more in this loop
      --active;
      if (m.kind == msg_error && failed_rank < 0) {
        failed_rank = src;
        failed_item = m.item;
      }
    }
  }
  const reply last = failed_rank >= 0 ? reply{reply_stop_error, failed_rank, failed_item} : reply{reply_stop, -1, -1};
  for (int w : parked) c.send_bytes(&last, sizeof last, w, t.reply);
  if (failed_rank > 0) throw error(stopped_message("split_managed", failed_rank, failed_item, {}));
}

std::string current_what() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

reply map_worker_send(const communicator& c, const loop_tags& t, msg_kind kind, std::int64_t item,
                      const std::string& payload, std::string& detail) {
  std::string msg(16 + payload.size(), '\0');
  const request_msg m{kind, item};
  std::memcpy(msg.data(), &m, 16);
  std::memcpy(msg.data() + 16, payload.data(), payload.size());
  send_blob(c, msg, 0, t.request);
  reply r;
  c.recv_bytes(&r, sizeof r, 0, t.reply);
  if (r.code == reply_stop_error) recv_blob(c, detail, 0, t.reply);
  return r;
}

void worker_send_error(const communicator& c, const loop_tags& t, std::int64_t item, const std::string& what,
                       msg_kind kind) noexcept {
  try {
    std::string msg(16 + what.size(), '\0');
    const request_msg m{kind, item};
    std::memcpy(msg.data(), &m, 16);
    std::memcpy(msg.data() + 16, what.data(), what.size());
    send_blob(c, msg, 0, t.request);
  } catch (...) {
  }
}

void map_root::receive(bool stop_handing_out) {
  // One worker message: {request|result} gets the next index, or waits parked
  // when none is left (see manage_indices); {error|leave} ends that worker.
  src_ = recv_blob(c_, buf_, MPI_ANY_SOURCE, t_.request);
  std::memcpy(&msg_, buf_.data(), std::min<std::size_t>(16, buf_.size()));
  if (msg_.kind == msg_request || msg_.kind == msg_result) {
    if (failed_) {
      const reply r{reply_stop_error, failed_->rank, failed_->item};
      c_.send_bytes(&r, sizeof r, src_, t_.reply);
      send_blob(c_, failed_->what, src_, t_.reply);
      --active_;
    } else if (!stop_handing_out && next_ < n_) {
      // answered before the root's loop body runs: the worker computes meanwhile
      const reply r{next_++, -1, -1};
      c_.send_bytes(&r, sizeof r, src_, t_.reply);
    } else {
      parked_.push_back(src_);
    }
  } else {
    --active_;
    if (msg_.kind == msg_error && !failed_) failed_ = failure{src_, msg_.item, buf_.substr(16)};
  }
}

void map_root::finish(bool error) {
  const bool err = error || failed_.has_value();
  const reply last = err ? reply{reply_stop_error, failed_ ? failed_->rank : 0, failed_ ? failed_->item : -1}
                         : reply{reply_stop, -1, -1};
  for (int w : parked_) {
    c_.send_bytes(&last, sizeof last, w, t_.reply);
    if (err) send_blob(c_, failed_ ? failed_->what : std::string(), w, t_.reply);
  }
  parked_.clear();
  active_ = 0;
}

bool map_root::next(std::int64_t& index, std::string& payload) {
  while (active_ > int(parked_.size())) {
    receive(false);
    if (msg_.kind == msg_result && !failed_) {
      index = msg_.item;
      payload.assign(buf_, 16);
      return true;
    }
  }
  finish(false);
  if (failed_) throw error(stopped_message("map_unordered", failed_->rank, failed_->item, failed_->what));
  return false;
}

void map_root::drain(bool error) noexcept {
  try {
    if (error && !failed_) failed_ = failure{0, -1, "the root's loop body threw"};
    while (active_ > int(parked_.size())) receive(true);
    finish(error);
  } catch (...) {
  }
}

}  // namespace ember::par::detail
