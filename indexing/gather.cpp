#include "gather.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <optional>

#include "../runtime/error.hpp"
#include "../runtime/failure.hpp"

namespace ember::detail {

namespace {

constexpr int selection_tag = 0x7365;  // "se"

// Scratch memory, uninitialized (std::vector would zero it: a pass over memory
// for nothing) and kept between calls, one buffer per role: a take or a mask
// selection of the same size again touches no fresh pages (the kernel's zeroing
// of fresh pages costs as much as the copies themselves). A buffer much larger
// than a call needs is given back.
enum slot : int { s_own, s_key, s_keys, s_pos, s_inkeys, s_back, s_out, s_low, s_high, s_stage, s_vals, s_invals, n_slots };
template <class T>
struct scratch_ptr {
  T* p;
  T* get() const { return p; }
  T& operator[](std::size_t i) const { return p[i]; }
};
template <class T>
scratch_ptr<T> scratch(slot s, std::int64_t n) {
  struct buffer {
    std::unique_ptr<char[]> p;
    std::size_t cap = 0;
  };
  thread_local buffer pool[n_slots];
  buffer& b = pool[s];
  const std::size_t want = std::size_t(std::max<std::int64_t>(n, 1)) * sizeof(T);
  if (b.cap < want || (b.cap > 8 * want && b.cap > (std::size_t(64) << 20))) {
    b.p.reset();
    b.p.reset(new char[want]);
    b.cap = want;
  }
  return {reinterpret_cast<T*>(b.p.get())};
}

std::int64_t message_limit() { return std::max<std::int64_t>(1, std::min<std::int64_t>(config().max_message_bytes, INT_MAX)); }

// The failure policy (runtime/failure.hpp): once a rank has started moving
// data, an exception on it alone (out of memory for scratch, an MPI error)
// would leave its peers waiting, so it ends the job instead. The agreed errors
// (a bad index) are thrown between the steps, on every rank alike, never inside one.
class guarded_operation {
 public:
  guarded_operation(const communicator& c, int steps, const char* what)
      : c_(c), nested_(failure::inside_operation()), steps_(steps), what_(what) {
    if (!nested_) {
      scope_.emplace();
      ordinal_ = failure::begin_operation(steps);
    }
  }
  template <class F>
  void step(int i, const char* kind, F&& f) {
    if (nested_) return f();
    failure::guarded_step(c_, ordinal_, {"move", i, steps_, kind, what_}, std::forward<F>(f));
  }

 private:
  const communicator& c_;
  bool nested_;
  int steps_, ordinal_ = 0;
  const char* what_;
  std::optional<failure::operation_scope> scope_;
};

// A contiguous byte range to or from `peer`, in messages of at most the agreed
// limit (both sides chunk alike: config() is the same on every rank).
void post_send(const communicator& c, const void* buf, std::int64_t bytes, int peer, std::vector<MPI_Request>& reqs) {
  const std::int64_t step = message_limit();
  for (std::int64_t off = 0; off < bytes; off += step) {
    reqs.emplace_back();
    c.isend_bytes(static_cast<const char*>(buf) + off, std::min(step, bytes - off), peer, selection_tag, &reqs.back());
  }
}
void post_recv(const communicator& c, void* buf, std::int64_t bytes, int peer, std::vector<MPI_Request>& reqs) {
  const std::int64_t step = message_limit();
  for (std::int64_t off = 0; off < bytes; off += step) {
    reqs.emplace_back();
    c.irecv_bytes(static_cast<char*>(buf) + off, std::min(step, bytes - off), peer, selection_tag, &reqs.back());
  }
}

// The owner of global index i along the split axis: offs has nranks + 1 prefix sums.
struct owner_finder {
  const std::int64_t* offs;
  int P;
  int operator()(std::int64_t i) const {
    if (P <= 16) {
      int o = 0;
      for (int r = 1; r < P; ++r) o += i >= offs[r];
      return o;
    }
    return int(std::upper_bound(offs + 1, offs + P, i) - (offs + 1));
  }
};

index_vec prefix(const layout& l) {
  index_vec o(std::size_t(l.nranks()) + 1, 0);
  for (int r = 0; r < l.nranks(); ++r) o[std::size_t(r) + 1] = o[std::size_t(r)] + l.extent(r);
  return o;
}

// ---- copying rows of fixed size ----
// A row: `outer` pieces of `inner` elements, the pieces `src_stride` apart in the
// owner's block and `dst_stride` apart in the result (elements).
struct rows {
  std::size_t elem;
  std::int64_t outer, inner, src_stride, dst_stride;
  std::int64_t piece_bytes() const { return inner * std::int64_t(elem); }
  std::int64_t bytes() const { return outer * piece_bytes(); }
};

template <std::size_t B>
inline void copy_fixed(char* d, const char* s) {
  std::memcpy(d, s, B);
}

// dst_row(k) <- src_row(k) for k in [0, n): both given as byte addresses by functors.
template <class D, class S>
void copy_rows(std::int64_t n, std::int64_t bytes, D&& dst, S&& src) {
  switch (bytes) {
    case 1: for (std::int64_t k = 0; k < n; ++k) copy_fixed<1>(dst(k), src(k)); return;
    case 2: for (std::int64_t k = 0; k < n; ++k) copy_fixed<2>(dst(k), src(k)); return;
    case 4: for (std::int64_t k = 0; k < n; ++k) copy_fixed<4>(dst(k), src(k)); return;
    case 8: for (std::int64_t k = 0; k < n; ++k) copy_fixed<8>(dst(k), src(k)); return;
    case 16: for (std::int64_t k = 0; k < n; ++k) copy_fixed<16>(dst(k), src(k)); return;
    default: for (std::int64_t k = 0; k < n; ++k) std::memcpy(dst(k), src(k), std::size_t(bytes));
  }
}

// ---- the request/response protocol ----
// Requests sorted by owner (a stable counting sort): keys[slot] is the element
// offset the owner reads (or writes), pos[slot] the request's position j.
struct routed {
  std::vector<std::int64_t> counts, displs;  // per owner; displs has P + 1 entries
  scratch_ptr<std::int64_t> keys{nullptr}, pos{nullptr};
};

// Exchanges the counts (and every rank's first bad index) with one all-to-all.
// Returns the counts this rank receives from each peer; throws index_error on
// every rank alike when some rank had a bad index.
std::vector<std::int64_t> exchange_counts(const communicator& c, const std::vector<std::int64_t>& counts, bool bad,
                                          std::int64_t bad_value, std::int64_t n, int axis, const std::string& what) {
  const int P = c.size(), me = c.rank();
  std::vector<std::int64_t> s(static_cast<std::size_t>(3 * P)), r(static_cast<std::size_t>(3 * P));
  for (int q = 0; q < P; ++q) {
    s[std::size_t(3 * q)] = counts[std::size_t(q)];
    s[std::size_t(3 * q + 1)] = bad ? 1 : 0;
    s[std::size_t(3 * q + 2)] = bad_value;
  }
  if (P > 1) {
    check_mpi(MPI_Alltoall(s.data(), 3, MPI_INT64_T, r.data(), 3, MPI_INT64_T, c.native()), "MPI_Alltoall");
    c.count({std::int64_t(P - 1) * 24, P - 1});
  } else {
    r = s;
  }
  for (int q = 0; q < P; ++q)
    if (r[std::size_t(3 * q + 1)])
      throw index_error(index_message(what, r[std::size_t(3 * q + 2)], axis, n) +
                        (P > 1 ? " (in the indices of rank " + std::to_string(q) + ")" : std::string()));
  std::vector<std::int64_t> rc(static_cast<std::size_t>(P));
  for (int q = 0; q < P; ++q) rc[std::size_t(q)] = r[std::size_t(3 * q)];
  (void)me;
  return rc;
}

// Routes m requests: owner_of(j, owner&) returns false for a bad index;
// key_of(j, owner) is the element offset the owner reads or writes.
template <class Owner, class Key>
routed route(int P, std::int64_t m, Owner&& owner_of, Key&& key_of, bool& bad, std::int64_t& bad_j) {
  routed rt;
  rt.counts.assign(std::size_t(P), 0);
  bad = false;
  bad_j = -1;
  rt.keys = scratch<std::int64_t>(s_keys, m);
  rt.pos = scratch<std::int64_t>(s_pos, m);
  if (P == 1) {
    for (std::int64_t j = 0; j < m; ++j) {
      int o = 0;
      if (!owner_of(j, o)) [[unlikely]] {
        if (!bad) bad_j = j;
        bad = true;
        rt.keys[std::size_t(j)] = 0;
      } else {
        rt.keys[std::size_t(j)] = key_of(j, 0);
      }
      rt.pos[std::size_t(j)] = j;
    }
    rt.counts[0] = m;
    rt.displs = {0, m};
    return rt;
  }
  auto own = scratch<std::int32_t>(s_own, m);
  for (std::int64_t j = 0; j < m; ++j) {
    int o = 0;
    if (!owner_of(j, o)) [[unlikely]] {
      if (!bad) bad_j = j;
      bad = true;
      o = -1;
    }
    own[std::size_t(j)] = o;
    ++rt.counts[std::size_t(o < 0 ? 0 : o)];
  }
  rt.displs.assign(std::size_t(P) + 1, 0);
  for (int q = 0; q < P; ++q) rt.displs[std::size_t(q) + 1] = rt.displs[std::size_t(q)] + rt.counts[std::size_t(q)];
  if (bad) return rt;  // every rank throws after the counts' exchange; nothing else is read
  std::vector<std::int64_t> cur(rt.displs.begin(), rt.displs.end() - 1);
  for (std::int64_t j = 0; j < m; ++j) {
    const int o = own[std::size_t(j)];
    const std::int64_t s = cur[std::size_t(o)]++;
    rt.keys[std::size_t(s)] = key_of(j, o);
    rt.pos[std::size_t(s)] = j;
  }
  return rt;
}

// The gather: requests routed as `rt`, rows described by `rw`, results into dst.
void serve_gather(const communicator& c, const routed& rt, const std::vector<std::int64_t>& rcounts, const rows& rw,
                  const char* src, char* dst) {
  const int P = c.size(), me = c.rank();
  const std::int64_t rb = rw.bytes(), pb = rw.piece_bytes(), E = std::int64_t(rw.elem);
  std::vector<std::int64_t> rdispls(std::size_t(P) + 1, 0);
  for (int q = 0; q < P; ++q)
    rdispls[std::size_t(q) + 1] = rdispls[std::size_t(q)] + (q == me ? 0 : rcounts[std::size_t(q)]);
  auto inkeys = scratch<std::int64_t>(s_inkeys, rdispls[std::size_t(P)]);
  std::vector<MPI_Request> reqs;
  for (int q = 0; q < P; ++q)
    if (q != me && rcounts[std::size_t(q)] > 0)
      post_recv(c, inkeys.get() + rdispls[std::size_t(q)], rcounts[std::size_t(q)] * 8, q, reqs);
  for (int q = 0; q < P; ++q)
    if (q != me && rt.counts[std::size_t(q)] > 0)
      post_send(c, rt.keys.get() + rt.displs[std::size_t(q)], rt.counts[std::size_t(q)] * 8, q, reqs);

  // what this rank owns itself: straight from its block, while the keys travel
  auto direct = [&](std::int64_t s0, std::int64_t n, const char* from, std::int64_t from_stride_bytes) {
    for (std::int64_t o = 0; o < rw.outer; ++o)
      copy_rows(
          n, pb, [&](std::int64_t k) { return dst + (o * rw.dst_stride + rt.pos[std::size_t(s0 + k)] * rw.inner) * E; },
          [&](std::int64_t k) { return from + k * from_stride_bytes + o * pb; });
  };
  {
    const std::int64_t s0 = rt.displs[std::size_t(me)], n = rt.counts[std::size_t(me)];
    for (std::int64_t o = 0; o < rw.outer; ++o)
      copy_rows(
          n, pb, [&](std::int64_t k) { return dst + (o * rw.dst_stride + rt.pos[std::size_t(s0 + k)] * rw.inner) * E; },
          [&](std::int64_t k) { return src + (rt.keys[std::size_t(s0 + k)] + o * rw.src_stride) * E; });
  }
  communicator::wait_all(reqs);

  // the responses: received rows land in `back`, in the order of the requests sent
  const std::int64_t nback = rt.displs[std::size_t(P)] - rt.counts[std::size_t(me)];
  auto back = scratch<char>(s_back, nback * rb);
  std::vector<std::int64_t> bdispls(static_cast<std::size_t>(P), 0);
  {
    std::int64_t b = 0;
    for (int q = 0; q < P; ++q) {
      bdispls[std::size_t(q)] = b;
      if (q != me) b += rt.counts[std::size_t(q)];
    }
  }
  for (int q = 0; q < P; ++q)
    if (q != me && rt.counts[std::size_t(q)] > 0)
      post_recv(c, back.get() + bdispls[std::size_t(q)] * rb, rt.counts[std::size_t(q)] * rb, q, reqs);
  auto out = scratch<char>(s_out, rdispls[std::size_t(P)] * rb);
  for (int q = 0; q < P; ++q) {
    const std::int64_t n = q == me ? 0 : rcounts[std::size_t(q)];
    if (n == 0) continue;
    const std::int64_t s0 = rdispls[std::size_t(q)];
    char* o0 = out.get() + s0 * rb;
    for (std::int64_t o = 0; o < rw.outer; ++o)
      copy_rows(
          n, pb, [&](std::int64_t k) { return o0 + k * rb + o * pb; },
          [&](std::int64_t k) { return src + (inkeys[std::size_t(s0 + k)] + o * rw.src_stride) * E; });
    post_send(c, o0, n * rb, q, reqs);
  }
  communicator::wait_all(reqs);
  for (int q = 0; q < P; ++q)
    if (q != me && rt.counts[std::size_t(q)] > 0)
      direct(rt.displs[std::size_t(q)], rt.counts[std::size_t(q)], back.get() + bdispls[std::size_t(q)] * rb, rb);
}

}  // namespace

// ---- index checks ----
std::int64_t normalize_indices(const std::int64_t* idx, std::int64_t m, std::int64_t n, std::int64_t* out) {
  std::int64_t bad = -1;
  for (std::int64_t j = 0; j < m; ++j) {
    const std::int64_t i = idx[j];
    const std::int64_t k = i < 0 ? i + n : i;
    if ((k < 0 || k >= n) && bad < 0) bad = j;
    out[j] = k;
  }
  return bad;
}

std::string index_message(const std::string& what, std::int64_t index, int axis, std::int64_t n) {
  return what + ": index " + std::to_string(index) + " is out of bounds for axis " + std::to_string(axis) +
         " with size " + std::to_string(n);
}

void agree_indices(const communicator& c, bool bad, std::int64_t bad_value, std::int64_t n, int axis,
                   const std::string& what) {
  if (c.size() == 1) {
    if (bad) throw index_error(index_message(what, bad_value, axis, n));
    return;
  }
  const std::int64_t mine[2] = {bad ? 1 : 0, bad_value};
  const auto all = c.allgather(mine, 2);
  for (int q = 0; q < c.size(); ++q)
    if (all[std::size_t(2 * q)])
      throw index_error(index_message(what, all[std::size_t(2 * q + 1)], axis, n) + " (in the indices of rank " +
                        std::to_string(q) + ")");
}

// ---- mask compaction ----
compaction plan_compaction(const communicator& c, const bool* mask, std::int64_t n) {
  const auto* m = reinterpret_cast<const unsigned char*>(mask);
  std::int64_t k = 0;
  for (std::int64_t i = 0; i < n; ++i) k += m[i];
  compaction p;
  p.counts = c.size() > 1 ? c.allgather(k) : std::vector<std::int64_t>{k};
  for (int q = 0; q < c.size(); ++q) {
    if (q == c.rank()) p.first = p.total;
    p.total += p.counts[std::size_t(q)];
  }
  p.extents = layout::balanced_extents(p.total, c.size());
  return p;
}

compaction plan_compaction_runs(const communicator& c, const bool* mask, std::int64_t outer, std::int64_t run) {
  if (outer <= 1) return plan_compaction(c, mask, outer * run);
  const auto* m = reinterpret_cast<const unsigned char*>(mask);
  std::vector<std::int64_t> mine(static_cast<std::size_t>(outer), 0);
  for (std::int64_t o = 0; o < outer; ++o) {
    std::int64_t k = 0;
    for (std::int64_t i = 0; i < run; ++i) k += m[o * run + i];
    mine[std::size_t(o)] = k;
  }
  compaction p;
  p.outer = outer;
  p.run_counts = c.size() > 1 ? c.allgather(mine.data(), outer) : mine;
  p.counts.assign(std::size_t(c.size()), 0);
  for (int q = 0; q < c.size(); ++q)
    for (std::int64_t o = 0; o < outer; ++o) p.counts[std::size_t(q)] += p.run_counts[std::size_t(q * outer + o)];
  for (int q = 0; q < c.size(); ++q) p.total += p.counts[std::size_t(q)];
  p.first = -1;  // not one run
  p.extents = layout::balanced_extents(p.total, c.size());
  return p;
}

namespace {
// Writes the next k selected records from position i on (emit(i, out) writes
// record i at out, `rec` bytes); returns the position after the last one used.
template <class Emit>
void compact_step(const communicator& c, const compaction& p, const bool* mask, std::int64_t rec, char* dst, Emit& emit);

template <class Emit>
std::int64_t filter_into(const unsigned char* m, std::int64_t i, std::int64_t k, char* out, std::int64_t rec,
                         Emit&& emit) {
  std::int64_t w = 0;
  while (w < k) {  // branch-free: the write is always in range, the count decides whether it stays
    emit(i, out + w * rec);
    w += m[i];
    ++i;
  }
  return i;
}

template <class Emit>
void compact(const communicator& c, const compaction& p, const bool* mask, std::int64_t rec, char* dst, Emit&& emit) {
  guarded_operation op(c, 1, "mask selection");
  op.step(1, "compaction", [&] { compact_step(c, p, mask, rec, dst, emit); });
}

// Where every rank's selected elements go: run (q, o) of rank q (its block's
// o-th run of the mask, in local order) covers the global positions
// [start, start + count) of the result.
struct run_table {
  int P;
  std::int64_t outer;
  std::vector<std::int64_t> cnt, start;  // [q * outer + o]
  run_table(const compaction& p, int P_) : P(P_), outer(p.outer) {
    if (outer == 1) {
      cnt = p.counts;
    } else {
      cnt = p.run_counts;
    }
    start.assign(cnt.size(), 0);
    std::int64_t base = 0;
    for (std::int64_t o = 0; o < outer; ++o)
      for (int q = 0; q < P; ++q) {
        start[std::size_t(q * outer + o)] = base;
        base += cnt[std::size_t(q * outer + o)];
      }
  }
  // how many of rank q's selected elements lie before global position x
  std::int64_t before(int q, std::int64_t x) const {
    std::int64_t n = 0;
    for (std::int64_t o = 0; o < outer; ++o) {
      const std::size_t r = std::size_t(q * outer + o);
      if (x <= start[r]) break;  // the runs of one rank are in increasing order
      n += std::min(x - start[r], cnt[r]);
    }
    return n;
  }
};

template <class Emit>
void compact_step(const communicator& c, const compaction& p, const bool* mask, std::int64_t rec, char* dst, Emit& emit) {
  const int P = c.size(), me = c.rank();
  const auto* m = reinterpret_cast<const unsigned char*>(mask);
  const run_table R(p, P);
  index_vec boff(std::size_t(P) + 1, 0);
  for (int q = 0; q < P; ++q) boff[std::size_t(q) + 1] = boff[std::size_t(q)] + p.extents[std::size_t(q)];
  const std::int64_t mine = p.counts[std::size_t(me)], lo = boff[std::size_t(me)], hi = boff[std::size_t(me) + 1];
  const bool one_run = p.outer == 1;
  std::vector<MPI_Request> reqs;
  // receives: the part of every other rank's selected sequence that falls into
  // this rank's balanced range [lo, hi): one piece of the result (one run per
  // rank), or staged and placed run by run afterwards
  std::vector<std::int64_t> ra(std::size_t(P), 0), rb(std::size_t(P), 0), roff(std::size_t(P) + 1, 0);
  for (int q = 0; q < P; ++q) {
    if (q != me) ra[std::size_t(q)] = R.before(q, lo), rb[std::size_t(q)] = R.before(q, hi);
    roff[std::size_t(q) + 1] = roff[std::size_t(q)] + (one_run ? 0 : rb[std::size_t(q)] - ra[std::size_t(q)]);
  }
  auto stage = scratch<char>(s_stage, roff[std::size_t(P)] * rec);
  for (int q = 0; q < P; ++q) {
    const std::int64_t a = ra[std::size_t(q)], b = rb[std::size_t(q)];
    if (q == me || a >= b) continue;
    char* to = one_run ? dst + (R.start[std::size_t(q)] + a - lo) * rec : stage.get() + roff[std::size_t(q)] * rec;
    post_recv(c, to, (b - a) * rec, q, reqs);
  }
  // this rank's selected sequence [0, mine): [0, nlow) goes to lower ranks,
  // [nlow, nlow + nmid) stays, the rest goes to higher ranks
  const std::int64_t nlow = R.before(me, lo), nmid = R.before(me, hi) - nlow, nhigh = mine - nlow - nmid;
  auto low = scratch<char>(s_low, nlow * rec);
  auto high = scratch<char>(s_high, nhigh * rec);
  auto send_range = [&](const char* buf, std::int64_t s0, std::int64_t s1) {  // sequence [s0, s1) staged at buf
    for (int q = 0; q < P; ++q) {
      if (q == me) continue;
      const std::int64_t a = std::max(s0, R.before(me, boff[std::size_t(q)]));
      const std::int64_t b = std::min(s1, R.before(me, boff[std::size_t(q) + 1]));
      if (a < b) post_send(c, buf + (a - s0) * rec, (b - a) * rec, q, reqs);
    }
  };
  std::int64_t i = 0;
  i = filter_into(m, i, nlow, low.get(), rec, emit);
  send_range(low.get(), 0, nlow);
  if (one_run) {
    i = filter_into(m, i, nmid, dst + (R.start[std::size_t(me)] + nlow - lo) * rec, rec, emit);
  } else {
    for (std::int64_t o = 0; o < p.outer; ++o) {
      const std::size_t r = std::size_t(me * p.outer + o);
      const std::int64_t x0 = std::max(R.start[r], lo), x1 = std::min(R.start[r] + R.cnt[r], hi);
      if (x0 < x1) i = filter_into(m, i, x1 - x0, dst + (x0 - lo) * rec, rec, emit);
    }
  }
  i = filter_into(m, i, nhigh, high.get(), rec, emit);
  send_range(high.get(), nlow + nmid, mine);
  communicator::wait_all(reqs);
  if (one_run) return;
  // the staged pieces, run by run, to their places
  for (int q = 0; q < P; ++q) {
    if (q == me || ra[std::size_t(q)] >= rb[std::size_t(q)]) continue;
    std::int64_t seq = 0;  // offset of run o in q's sequence
    for (std::int64_t o = 0; o < p.outer; ++o) {
      const std::size_t r = std::size_t(q * p.outer + o);
      const std::int64_t x0 = std::max(R.start[r], lo), x1 = std::min(R.start[r] + R.cnt[r], hi);
      if (x0 < x1) {
        const std::int64_t s = seq + (x0 - R.start[r]) - ra[std::size_t(q)];
        std::memcpy(dst + (x0 - lo) * rec, stage.get() + (roff[std::size_t(q)] + s) * rec, std::size_t((x1 - x0) * rec));
      }
      seq += R.cnt[r];
    }
  }
}

template <class U>
void compact_typed(const communicator& c, const compaction& p, const void* src, const bool* mask, void* dst) {
  const U* s = static_cast<const U*>(src);
  compact(c, p, mask, sizeof(U), static_cast<char*>(dst),
          [s](std::int64_t i, char* out) { std::memcpy(out, s + i, sizeof(U)); });
}
}  // namespace

void run_compaction(const communicator& c, const compaction& p, const void* src, const bool* mask, std::int64_t n,
                    std::size_t elem, void* dst) {
  (void)n;
  switch (elem) {
    case 1: return compact_typed<std::uint8_t>(c, p, src, mask, dst);
    case 2: return compact_typed<std::uint16_t>(c, p, src, mask, dst);
    case 4: return compact_typed<std::uint32_t>(c, p, src, mask, dst);
    case 8: return compact_typed<std::uint64_t>(c, p, src, mask, dst);
    default: {
      const char* s = static_cast<const char*>(src);
      compact(c, p, mask, std::int64_t(elem), static_cast<char*>(dst),
              [s, elem](std::int64_t i, char* out) { std::memcpy(out, s + i * std::int64_t(elem), elem); });
    }
  }
}

void run_compaction_coords(const communicator& c, const compaction& p, const bool* mask, const index_vec& lshape,
                           int axis, std::int64_t offset, void* dst) {
  const int nd = int(lshape.size());
  index_vec str = row_major_strides(lshape);
  compact(c, p, mask, std::int64_t(nd) * 8, static_cast<char*>(dst), [&](std::int64_t i, char* out) {
    std::int64_t rem = i;
    for (int d = 0; d < nd; ++d) {
      const std::int64_t v = rem / str[std::size_t(d)];
      rem -= v * str[std::size_t(d)];
      const std::int64_t g = d == axis ? v + offset : v;
      std::memcpy(out + 8 * d, &g, 8);
    }
  });
}

selection_distribution::selection_distribution(const compaction& p, int nranks)
    : shape_{p.total}, nranks_(nranks), outer_(p.outer), counts_(p.counts) {
  const run_table R(p, nranks);
  cnt_ = R.cnt;
  start_ = R.start;
}

std::vector<piece> selection_distribution::pieces(int rank) const {
  std::vector<piece> out;
  std::int64_t off = 0;
  for (std::int64_t o = 0; o < outer_; ++o) {
    const std::size_t r = std::size_t(rank * outer_ + o);
    if (cnt_[r] == 0) continue;
    out.push_back(piece{box_nd{{start_[r]}, {start_[r] + cnt_[r]}}, off, {1}});
    off += cnt_[r];
  }
  return out;
}

void scatter_masked(void* dst, const bool* mask, std::int64_t n, std::size_t elem, const void* values) {
  const auto* m = reinterpret_cast<const unsigned char*>(mask);
  char* d = static_cast<char*>(dst);
  const char* v = static_cast<const char*>(values);
  std::int64_t w = 0;
  for (std::int64_t i = 0; i < n; ++i)
    if (m[i]) std::memcpy(d + i * std::int64_t(elem), v + (w++) * std::int64_t(elem), elem);
}

// ---- take and put ----
void take_local(const void* src, std::size_t elem, std::int64_t outer, std::int64_t n, std::int64_t inner,
                const std::int64_t* idx, std::int64_t m, void* dst) {
  const std::int64_t pb = inner * std::int64_t(elem);
  const char* s = static_cast<const char*>(src);
  char* d = static_cast<char*>(dst);
  for (std::int64_t o = 0; o < outer; ++o)
    copy_rows(
        m, pb, [&](std::int64_t k) { return d + (o * m + k) * pb; },
        [&](std::int64_t k) { return s + (o * n + idx[k]) * pb; });
}

void take_along_split(const communicator& c, const layout& l, const void* src, std::size_t elem,
                      const std::int64_t* idx, std::int64_t m, void* dst, const std::string& what) {
  const int k = *l.split(), P = c.size(), me = c.rank();
  const index_vec& sh = l.shape();
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < k; ++d) outer *= sh[std::size_t(d)];
  for (int d = k + 1; d < l.ndim(); ++d) inner *= sh[std::size_t(d)];
  const std::int64_t n = sh[std::size_t(k)];
  const index_vec offs = prefix(l);
  const owner_finder find{offs.data(), P};
  bool bad = false;
  std::int64_t bad_j = -1;
  guarded_operation op(c, 2, "take");
  routed rt;
  op.step(1, "route", [&] {
    rt = route(
      P, m,
      [&](std::int64_t j, int& o) {
        std::int64_t i = idx[j];
        i = i < 0 ? i + n : i;
        if (i < 0 || i >= n) [[unlikely]]
          return false;
        o = find(i);
        return true;
      },
      [&](std::int64_t j, int o) {
        const std::int64_t i = idx[j];
        return ((i < 0 ? i + n : i) - offs[std::size_t(o)]) * inner;
      },
      bad, bad_j);
  });
  const auto rc = exchange_counts(c, rt.counts, bad, bad ? idx[bad_j] : 0, n, k, what);
  const rows rw{elem, outer, inner, l.extent(me) * inner, m * inner};
  op.step(2, "gather", [&] { serve_gather(c, rt, rc, rw, static_cast<const char*>(src), static_cast<char*>(dst)); });
}

namespace {
// Where flat (C-order) element f of split layout l lives: owner and local offset.
struct flat_locator {
  std::int64_t total, nk, inner, block;  // block = nk * inner
  index_vec offs, ext;
  owner_finder find;
  int k;
  explicit flat_locator(const layout& l) : offs(prefix(l)), find{nullptr, l.nranks()}, k(*l.split()) {
    const index_vec& sh = l.shape();
    total = l.numel();
    nk = sh[std::size_t(k)];
    inner = 1;
    for (int d = k + 1; d < l.ndim(); ++d) inner *= sh[std::size_t(d)];
    block = nk * inner;
    for (int r = 0; r < l.nranks(); ++r) ext.push_back(l.extent(r));
    find.offs = offs.data();
  }
  bool operator()(std::int64_t f, int& o, std::int64_t& key) const {
    f = f < 0 ? f + total : f;
    if (f < 0 || f >= total) return false;
    std::int64_t out = 0, r = f;
    if (k > 0) {
      out = f / block;
      r = f - out * block;
    }
    const std::int64_t ci = inner == 1 ? r : r / inner, in = r - ci * inner;
    o = find(ci);
    key = out * ext[std::size_t(o)] * inner + (ci - offs[std::size_t(o)]) * inner + in;
    return true;
  }
  auto owner_fn(const std::int64_t* idx) const {
    return [this, idx](std::int64_t j, int& o) {
      std::int64_t k;
      return (*this)(idx[j], o, k);
    };
  }
  auto key_fn(const std::int64_t* idx) const {
    return [this, idx](std::int64_t j, int) {
      int o;
      std::int64_t k = 0;
      (*this)(idx[j], o, k);
      return k;
    };
  }
};
}  // namespace

void take_flat(const communicator& c, const layout& l, const void* src, std::size_t elem, const std::int64_t* idx,
               std::int64_t m, void* dst, const std::string& what) {
  const flat_locator loc(l);
  bool bad = false;
  std::int64_t bad_j = -1;
  guarded_operation op(c, 2, "take");
  routed rt;
  op.step(1, "route", [&] { rt = route(c.size(), m, loc.owner_fn(idx), loc.key_fn(idx), bad, bad_j); });
  const auto rc = exchange_counts(c, rt.counts, bad, bad ? idx[bad_j] : 0, loc.total, 0, what);
  const rows rw{elem, 1, 1, 0, 0};
  op.step(2, "gather", [&] { serve_gather(c, rt, rc, rw, static_cast<const char*>(src), static_cast<char*>(dst)); });
}

namespace {
void scatter_routed(const communicator& c, const routed& rt, const std::vector<std::int64_t>& rc, std::size_t elem,
                    const char* v, char* d);
}  // namespace

void put_flat(const communicator& c, const layout& l, void* dst, std::size_t elem, const std::int64_t* idx,
              std::int64_t m, const void* values, const std::string& what) {
  const int P = c.size();
  const flat_locator loc(l);
  bool bad = false;
  std::int64_t bad_j = -1;
  guarded_operation op(c, 2, "put");
  routed rt;
  op.step(1, "route", [&] { rt = route(P, m, loc.owner_fn(idx), loc.key_fn(idx), bad, bad_j); });
  const auto rc = exchange_counts(c, rt.counts, bad, bad ? idx[bad_j] : 0, loc.total, 0, what);
  op.step(2, "scatter", [&] { scatter_routed(c, rt, rc, elem, static_cast<const char*>(values), static_cast<char*>(dst)); });
}

namespace {
void scatter_routed(const communicator& c, const routed& rt, const std::vector<std::int64_t>& rc, std::size_t elem,
                    const char* v, char* d) {
  const int P = c.size(), me = c.rank();
  const std::int64_t m = rt.displs[std::size_t(P)];
  const std::int64_t E = std::int64_t(elem);
  // the values in owner order, next to their keys
  auto sv = scratch<char>(s_vals, m * E);
  copy_rows(m, E, [&](std::int64_t s) { return sv.get() + s * E; }, [&](std::int64_t s) { return v + rt.pos[std::size_t(s)] * E; });
  std::vector<std::int64_t> rdispls(std::size_t(P) + 1, 0);
  for (int q = 0; q < P; ++q)
    rdispls[std::size_t(q) + 1] = rdispls[std::size_t(q)] + (q == me ? 0 : rc[std::size_t(q)]);
  const std::int64_t nin = rdispls[std::size_t(P)];
  auto inkeys = scratch<std::int64_t>(s_inkeys, nin);
  auto invals = scratch<char>(s_invals, nin * E);
  std::vector<MPI_Request> reqs;
  for (int q = 0; q < P; ++q)
    if (q != me && rc[std::size_t(q)] > 0) {
      post_recv(c, inkeys.get() + rdispls[std::size_t(q)], rc[std::size_t(q)] * 8, q, reqs);
      post_recv(c, invals.get() + rdispls[std::size_t(q)] * E, rc[std::size_t(q)] * E, q, reqs);
    }
  for (int q = 0; q < P; ++q)
    if (q != me && rt.counts[std::size_t(q)] > 0) {
      post_send(c, rt.keys.get() + rt.displs[std::size_t(q)], rt.counts[std::size_t(q)] * 8, q, reqs);
      post_send(c, sv.get() + rt.displs[std::size_t(q)] * E, rt.counts[std::size_t(q)] * E, q, reqs);
    }
  communicator::wait_all(reqs);
  // writes in rank order (then request order): the last in the global order wins
  for (int q = 0; q < P; ++q) {
    const std::int64_t* keys = q == me ? rt.keys.get() + rt.displs[std::size_t(q)] : inkeys.get() + rdispls[std::size_t(q)];
    const char* vals = q == me ? sv.get() + rt.displs[std::size_t(q)] * E : invals.get() + rdispls[std::size_t(q)] * E;
    const std::int64_t n = q == me ? rt.counts[std::size_t(q)] : rc[std::size_t(q)];
    copy_rows(n, E, [&](std::int64_t s) { return d + keys[s] * E; }, [&](std::int64_t s) { return vals + s * E; });
  }
}
}  // namespace

void put_local(void* dst, std::size_t elem, const std::int64_t* idx, std::int64_t m, const void* values,
               std::int64_t nvalues) {
  const std::int64_t E = std::int64_t(elem);
  char* d = static_cast<char*>(dst);
  const char* v = static_cast<const char*>(values);
  if (nvalues == m) {
    copy_rows(m, E, [&](std::int64_t j) { return d + idx[j] * E; }, [&](std::int64_t j) { return v + j * E; });
    return;
  }
  for (std::int64_t j = 0; j < m; ++j) std::memcpy(d + idx[j] * E, v + (j % nvalues) * E, elem);
}

}  // namespace ember::detail
