#include "exchange.hpp"
#include "failure.hpp"
#include "memory.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>

namespace ember {
namespace {

constexpr int exchange_tag = 0x656d;

// A segment seen from one side (source or destination buffer), with the dimensions
// that are contiguous in that buffer folded into one run.
struct runs_view {
  std::int64_t run_elems = 1;  // elements per contiguous run
  index_vec outer_ext, outer_str;  // remaining dimensions, row-major order
  std::int64_t offset = 0;
};

runs_view make_runs(const index_vec& ext, const index_vec& str, std::int64_t offset) {
  runs_view v;
  v.offset = offset;
  int d = int(ext.size()) - 1;
  std::int64_t expect = 1;
  // Fold trailing dimensions while they are laid out back to back.
  for (; d >= 0; --d) {
    if (ext[d] == 1) continue;
    if (str[d] != expect) break;
    expect *= ext[d];
  }
  v.run_elems = expect;
  for (int e = 0; e <= d; ++e)
    if (ext[e] != 1) {
      v.outer_ext.push_back(ext[e]);
      v.outer_str.push_back(str[e]);
    }
  return v;
}

bool is_contiguous(const index_vec& ext, const index_vec& str) {
  for (auto e : ext)
    if (e == 0) return true;
  return make_runs(ext, str, 0).outer_ext.empty();
}

std::int64_t volume(const index_vec& ext) {
  std::int64_t v = 1;
  for (auto e : ext) v *= e;
  return v;
}

// Copies `count` elements between a strided buffer (stride in elements) and a
// packed one; U is an unsigned type of the element's size (bytes are moved, not
// values: memcpy keeps it free of aliasing and alignment assumptions).
template <class U>
void strided_copy(char* strided, char* packed, std::int64_t count, std::int64_t stride, bool pack) {
  const std::int64_t step = stride * std::int64_t(sizeof(U));
  for (std::int64_t i = 0; i < count; ++i) {
    U v;
    if (pack) {
      std::memcpy(&v, strided + i * step, sizeof(U));
      std::memcpy(packed + i * std::int64_t(sizeof(U)), &v, sizeof(U));
    } else {
      std::memcpy(&v, packed + i * std::int64_t(sizeof(U)), sizeof(U));
      std::memcpy(strided + i * step, &v, sizeof(U));
    }
  }
}

// The unsigned type that moves one element of `bytes` bytes (complex128: two
// words), for the typed copies below; f gets a value of that type. Returns
// false (f not called) for other sizes, which take the byte-wise paths.
struct word16 {
  std::uint64_t lo, hi;
};
template <class F>
bool with_word(std::int64_t bytes, F&& f) {
  switch (bytes) {
    case 1: f(std::uint8_t{}); return true;
    case 2: f(std::uint16_t{}); return true;
    case 4: f(std::uint32_t{}); return true;
    case 8: f(std::uint64_t{}); return true;
    case 16: f(word16{}); return true;
    default: return false;
  }
}

// A 2-D copy between two strided buffers (element strides ss, ds), in 32 x 32
// tiles so a transposing copy reads and writes whole cache lines.
template <class U>
void tiled_copy_2d(const char* src, char* dst, std::int64_t e0, std::int64_t e1, std::int64_t ss0, std::int64_t ss1,
                   std::int64_t ds0, std::int64_t ds1) {
  constexpr std::int64_t tile = 32;
  const std::int64_t es = std::int64_t(sizeof(U));
  for (std::int64_t i0 = 0; i0 < e0; i0 += tile)
    for (std::int64_t j0 = 0; j0 < e1; j0 += tile) {
      const std::int64_t i1 = std::min(e0, i0 + tile), j1 = std::min(e1, j0 + tile);
      for (std::int64_t i = i0; i < i1; ++i)
        for (std::int64_t j = j0; j < j1; ++j) {
          U v;
          std::memcpy(&v, src + (i * ss0 + j * ss1) * es, sizeof(U));
          std::memcpy(dst + (i * ds0 + j * ds1) * es, &v, sizeof(U));
        }
    }
}

// Walks the runs of a list of segments on one side, in order, so a packed stream
// can be produced or consumed in chunks of any size (bounded staging).
class run_cursor {
 public:
  run_cursor(const std::vector<exchange_segment>& segs, bool src_side, std::size_t elem)
      : segs_(segs), src_(src_side), elem_(std::int64_t(elem)) {
    load(0);
  }
  // Copies the next n bytes of the stream between `buf` and the strided buffer.
  void transfer(char* strided, char* buf, std::int64_t n, bool pack) {
    while (n > 0 && seg_ < segs_.size()) {
      // Single elements (e.g. a row-major segment read into a column-major buffer,
      // as block-cyclic conversion does): copy along the innermost dimension with
      // a typed strided loop instead of one memcpy call per element.
      if (view_.run_elems == 1 && pos_ == 0 && !idx_.empty() && elem_ <= 16 && (elem_ & (elem_ - 1)) == 0 &&
          n >= elem_) {
        const std::size_t d = idx_.size() - 1;
        const std::int64_t count = std::min(view_.outer_ext[d] - idx_[d], n / elem_);
        char* p = strided + base_ * elem_;
        with_word(elem_, [&](auto w) { strided_copy<decltype(w)>(p, buf, count, view_.outer_str[d], pack); });
        buf += count * elem_;
        n -= count * elem_;
        idx_[d] += count - 1;  // next_run() advances the last one and carries
        base_ += (count - 1) * view_.outer_str[d];
        next_run();
        continue;
      }
      const std::int64_t run_bytes = view_.run_elems * elem_;
      const std::int64_t take = std::min(run_bytes - pos_, n);
      char* p = strided + (base_ * elem_) + pos_;
      if (pack) std::memcpy(buf, p, std::size_t(take));
      else std::memcpy(p, buf, std::size_t(take));
      buf += take;
      n -= take;
      pos_ += take;
      if (pos_ == run_bytes) next_run();
    }
  }

 private:
  const std::vector<exchange_segment>& segs_;
  bool src_;
  std::int64_t elem_;
  std::size_t seg_ = 0;
  runs_view view_;
  index_vec idx_;
  std::int64_t base_ = 0, pos_ = 0;

  void load(std::size_t s) {
    seg_ = s;
    while (seg_ < segs_.size() && volume(segs_[seg_].extents) == 0) ++seg_;
    if (seg_ == segs_.size()) return;
    const auto& g = segs_[seg_];
    view_ = src_ ? make_runs(g.extents, g.src_strides, g.src_offset) : make_runs(g.extents, g.dst_strides, g.dst_offset);
    idx_.assign(view_.outer_ext.size(), 0);
    base_ = view_.offset;
    pos_ = 0;
  }
  void next_run() {
    pos_ = 0;
    for (int d = int(idx_.size()) - 1; d >= 0; --d) {
      ++idx_[d];
      base_ += view_.outer_str[d];
      if (idx_[d] < view_.outer_ext[d]) return;
      base_ -= view_.outer_str[d] * idx_[d];
      idx_[d] = 0;
    }
    load(seg_ + 1);
  }
};

void validate(const distribution& src, const distribution& dst) {
  if (src.shape() != dst.shape())
    throw shape_error("ember::exchange: source shape " + detail::shape_str(src.shape()) +
                      " differs from destination shape " + detail::shape_str(dst.shape()));
  if (src.nranks() != dst.nranks())
    throw value_error("ember::exchange: source is distributed over " + std::to_string(src.nranks()) +
                      " ranks, destination over " + std::to_string(dst.nranks()));
}

std::vector<exchange_segment> pair_segments(const std::vector<piece>& sp, const std::vector<piece>& dp) {
  std::vector<exchange_segment> out;
  for (const auto& a : sp)
    for (const auto& b : dp) {
      box_nd ib = intersect(a.global, b.global);
      if (ib.empty()) continue;
      exchange_segment s;
      const int n = ib.ndim();
      s.extents.resize(n);
      s.src_offset = a.offset;
      s.dst_offset = b.offset;
      for (int d = 0; d < n; ++d) {
        s.extents[d] = ib.hi[d] - ib.lo[d];
        s.src_offset += (ib.lo[d] - a.global.lo[d]) * a.strides[d];
        s.dst_offset += (ib.lo[d] - b.global.lo[d]) * b.strides[d];
      }
      s.src_strides = a.strides;
      s.dst_strides = b.strides;
      out.push_back(std::move(s));
    }
  return out;
}

exchange_transfer make_transfer(int peer, std::vector<exchange_segment> segs, std::size_t elem) {
  exchange_transfer t;
  t.peer = peer;
  for (const auto& s : segs) t.bytes += volume(s.extents) * std::int64_t(elem);
  t.src_contiguous = segs.size() == 1 && is_contiguous(segs[0].extents, segs[0].src_strides);
  t.dst_contiguous = segs.size() == 1 && is_contiguous(segs[0].extents, segs[0].dst_strides);
  const std::int64_t max_msg = std::min<std::int64_t>(config().max_message_bytes, INT_MAX);
  t.chunk_bytes = (t.src_contiguous && t.dst_contiguous) ? max_msg : std::min(max_msg, config().staging_bytes);
  t.chunk_bytes = std::max<std::int64_t>(t.chunk_bytes, 1);
  t.segments = std::move(segs);
  return t;
}

std::set<int> owners_of(const distribution& d, const std::vector<piece>& ps) {
  std::set<int> r;
  for (const auto& p : ps)
    if (!p.global.empty())
      for (int q : d.owners(p.global)) r.insert(q);
  return r;
}

// The allgather fast path applies when the destination is replicated as one
// row-major piece and every source rank holds one contiguous piece that is also
// one contiguous run of the destination.
bool allgather_applies(const distribution& src, const distribution& dst, std::vector<std::int64_t>& counts,
                       std::vector<std::int64_t>& displs, std::vector<std::int64_t>& src_offsets) {
  if (!dst.replicated() || src.replicated()) return false;
  const auto gstr = row_major_strides(src.shape());
  const int P = src.nranks();
  counts.assign(P, 0);
  displs.assign(P, 0);
  src_offsets.assign(P, 0);
  for (int r = 0; r < P; ++r) {
    auto dp = dst.pieces(r);
    if (dp.size() != 1 || dp[0].offset != 0 || dp[0].strides != gstr) return false;
    auto sp = src.pieces(r);
    if (sp.size() != 1) return false;
    const auto& p = sp[0];
    index_vec ext(p.global.ndim());
    for (int d = 0; d < p.global.ndim(); ++d) ext[d] = p.global.extent(d);
    const std::int64_t v = volume(ext);
    if (v > 0 && (!is_contiguous(ext, p.strides) || !is_contiguous(ext, gstr))) return false;
    counts[r] = v;
    std::int64_t off = 0;
    for (int d = 0; d < p.global.ndim(); ++d) off += p.global.lo[d] * gstr[d];
    displs[r] = v > 0 ? off : 0;
    src_offsets[r] = p.offset;
  }
  return true;
}

}  // namespace

void copy_segment(const exchange_segment& s, const char* src, char* dst, std::size_t elem_size) {
  const int n = int(s.extents.size());
  if (volume(s.extents) == 0) return;
  // Fold trailing dimensions that are contiguous in both buffers into one memcpy.
  std::int64_t run = 1;
  int d = n - 1;
  for (; d >= 0; --d) {
    if (s.extents[d] == 1) continue;
    if (s.src_strides[d] != run || s.dst_strides[d] != run) break;
    run *= s.extents[d];
  }
  index_vec ext, ss, ds;
  for (int e = 0; e <= d; ++e)
    if (s.extents[e] != 1) {
      ext.push_back(s.extents[e]);
      ss.push_back(s.src_strides[e]);
      ds.push_back(s.dst_strides[e]);
    }
  const std::int64_t es = std::int64_t(elem_size);
  const std::size_t run_bytes = std::size_t(run * es);
  // Element by element in two dimensions (a transposing copy, as between a
  // row-major block and a column-major block-cyclic one): tiled, typed.
  if (run == 1 && ext.size() == 2) {
    const char* sp = src + s.src_offset * es;
    char* dp = dst + s.dst_offset * es;
    if (with_word(es, [&](auto w) { tiled_copy_2d<decltype(w)>(sp, dp, ext[0], ext[1], ss[0], ss[1], ds[0], ds[1]); }))
      return;
  }
  // Odometer over the outer dimensions.
  index_vec idx(ext.size(), 0);
  std::int64_t so = s.src_offset, dof = s.dst_offset;
  while (true) {
    std::memcpy(dst + dof * es, src + so * es, run_bytes);
    int k = int(ext.size()) - 1;
    for (; k >= 0; --k) {
      ++idx[k];
      so += ss[k];
      dof += ds[k];
      if (idx[k] < ext[k]) break;
      so -= ss[k] * idx[k];
      dof -= ds[k] * idx[k];
      idx[k] = 0;
    }
    if (k < 0) break;
  }
}

exchange::exchange(const distribution& src, const distribution& dst, int rank, std::size_t elem_size)
    : rank_(rank), nranks_(src.nranks()), elem_(elem_size) {
  validate(src, dst);
  src_bytes_ = src.local_size(rank) * std::int64_t(elem_size);
  dst_bytes_ = dst.local_size(rank) * std::int64_t(elem_size);
  if (rank < 0 || rank >= nranks_)
    throw value_error("ember::exchange: rank " + std::to_string(rank) + " outside a distribution over " +
                      std::to_string(nranks_) + " ranks");

  std::vector<std::int64_t> src_offsets;
  if (allgather_applies(src, dst, ag_counts_, ag_displs_, src_offsets)) {
    method_ = exchange_method::allgather;
    ag_mine_ = ag_counts_[rank];
    ag_src_offset_ = src_offsets[rank];
    const std::int64_t step = std::max<std::int64_t>(
        1, std::min<std::int64_t>(config().max_message_bytes, INT_MAX) / std::int64_t(elem_size));
    std::int64_t max_count = *std::max_element(ag_counts_.begin(), ag_counts_.end());
    const std::int64_t rounds = max_count == 0 ? 0 : (max_count + step - 1) / step;
    predicted_ = {ag_mine_ * std::int64_t(elem_size) * (nranks_ - 1), rounds * (nranks_ - 1)};
    return;
  }

  const auto my_src = src.pieces(rank);
  const auto my_dst = dst.pieces(rank);
  // Where my data goes: nowhere but myself when the source is replicated (every
  // rank already has it), every rank when the destination is.
  std::set<int> to, from;
  if (src.replicated()) {
    to = {rank};
    from = {rank};
  } else {
    if (dst.replicated())
      for (int q = 0; q < nranks_; ++q) to.insert(q);
    else
      to = owners_of(dst, my_src);
    from = owners_of(src, my_dst);
  }
  for (int q : to) {
    if (q == rank) continue;
    auto segs = pair_segments(my_src, dst.pieces(q));
    if (segs.empty()) continue;
    auto t = make_transfer(q, std::move(segs), elem_size);
    if (t.bytes == 0) continue;
    predicted_ += {t.bytes, t.messages()};
    if (!t.src_contiguous) staging_ = std::max(staging_, t.chunk_bytes);
    sends_.push_back(std::move(t));
  }
  for (int q : from) {
    if (q == rank) continue;
    auto segs = pair_segments(src.pieces(q), my_dst);
    if (segs.empty()) continue;
    auto t = make_transfer(q, std::move(segs), elem_size);
    if (t.bytes == 0) continue;
    recvs_.push_back(std::move(t));
  }
  if (from.count(rank) || to.count(rank)) self_ = pair_segments(my_src, my_dst);
  std::int64_t rstage = 0;
  for (const auto& t : recvs_)
    if (!t.dst_contiguous) rstage = std::max(rstage, t.chunk_bytes);
  staging_ += rstage;
}

std::int64_t exchange::received_bytes() const {
  if (method_ == exchange_method::allgather) {
    std::int64_t b = 0;
    for (int r = 0; r < nranks_; ++r)
      if (r != rank_) b += ag_counts_[r];
    return b * std::int64_t(elem_);
  }
  std::int64_t b = 0;
  for (const auto& t : recvs_) b += t.bytes;
  return b;
}

void exchange::run(const communicator& comm, const void* src_buf, void* dst_buf) const {
  run(comm, src_buf, dst_buf, device_kind::cpu);
}

void exchange::run_host(const communicator& comm, const char* src, char* dst) const {
  if (method_ == exchange_method::allgather)
    comm.allgatherv_bytes(src + ag_src_offset_ * std::int64_t(elem_), ag_mine_, dst, ag_counts_, ag_displs_,
                          std::int64_t(elem_));
  else
    run_p2p(comm, src, dst);
}

// A segment that is one contiguous run in both buffers: its byte offsets and size.
static bool single_run(const exchange_segment& s, std::size_t elem, std::int64_t& src_off, std::int64_t& dst_off,
                std::int64_t& bytes) {
  std::int64_t run = 1;
  for (int d = int(s.extents.size()) - 1; d >= 0; --d) {
    if (s.extents[std::size_t(d)] == 1) continue;
    if (s.src_strides[std::size_t(d)] != run || s.dst_strides[std::size_t(d)] != run) return false;
    run *= s.extents[std::size_t(d)];
  }
  src_off = s.src_offset * std::int64_t(elem);
  dst_off = s.dst_offset * std::int64_t(elem);
  bytes = run * std::int64_t(elem);
  return true;
}

bool exchange::device_local_copies(detail::device_backend& g, const char* src, char* dst) const {
  // Nothing to send or receive and every local segment one contiguous run: the
  // move is a few device-to-device copies (a resplit or gather on one rank).
  if (method_ == exchange_method::allgather && nranks_ == 1) {  // the whole block, as it is
    g.copy(dst, src + ag_src_offset_ * std::int64_t(elem_), std::size_t(ag_mine_) * elem_);
    return true;
  }
  if (method_ != exchange_method::point_to_point || !sends_.empty() || !recvs_.empty()) return false;
  std::int64_t so = 0, d_o = 0, b = 0;
  for (const auto& s : self_)
    if (!single_run(s, elem_, so, d_o, b)) return false;
  for (const auto& s : self_) {
    single_run(s, elem_, so, d_o, b);
    g.copy(dst + d_o, src + so, std::size_t(b));
  }
  return true;
}

void exchange::run(const communicator& comm, const void* src_buf, void* dst_buf, device_kind where) const {
  if (comm.size() != nranks_ || comm.rank() != rank_)
    throw value_error("ember::exchange: planned for rank " + std::to_string(rank_) + " of " + std::to_string(nranks_) +
                      " but run on rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.size()));
  const char* src = static_cast<const char*>(src_buf);
  char* dst = static_cast<char*>(dst_buf);
  auto move = [&] {
    if (where == device_kind::cpu) return run_host(comm, src, dst);
    auto& g = detail::gpu_or_throw("ember::exchange");
    if (device_local_copies(g, src, dst)) return;
    auto in = g.allocate_pinned(std::size_t(std::max<std::int64_t>(src_bytes_, 1)));
    auto out = g.allocate_pinned(std::size_t(std::max<std::int64_t>(dst_bytes_, 1)));
    g.copy(in.get(), src, std::size_t(src_bytes_));
    run_host(comm, static_cast<const char*>(in.get()), static_cast<char*>(out.get()));
    g.copy(dst, out.get(), std::size_t(dst_bytes_));
  };
  // Inside a plan step the plan's executor owns the failure policy; a standalone
  // move is a one-step operation of its own (runtime/failure.hpp).
  if (failure::inside_operation()) return move();
  failure::operation_scope scope;
  const int ordinal = failure::begin_operation(1);
  failure::guarded_step(comm, ordinal, {"move", 1, 1, method_ == exchange_method::allgather ? "allgather" : "point-to-point", ""},
                        move);
}

exchange_in_flight exchange::begin(const communicator& comm, const void* src_buf, void* dst_buf) const {
  exchange_in_flight f;
  std::int64_t staged = 0;
  for (const auto& t : sends_) staged += t.src_contiguous ? 0 : t.bytes;
  for (const auto& t : recvs_) staged += t.dst_contiguous ? 0 : t.bytes;
  if (method_ != exchange_method::point_to_point || staged > config().staging_bytes || comm.size() != nranks_ ||
      comm.rank() != rank_) {
    run(comm, src_buf, dst_buf);
    return f;
  }
  const char* src = static_cast<const char*>(src_buf);
  char* dst = static_cast<char*>(dst_buf);
  const std::int64_t es = std::int64_t(elem_);
  f.dst_ = dst;
  f.elem_ = elem_;
  if (staged > 0) {
    // this exchange's staging block again, unless a move still in flight holds it
    if (!begin_staging_ || begin_staging_.use_count() > 1 || begin_staging_bytes_ < staged) {
      begin_staging_ = std::shared_ptr<char[]>(new char[std::size_t(staged)]);
      begin_staging_bytes_ = staged;
    }
    f.staging_ = begin_staging_;
  }
  char* next = f.staging_.get();
  // Each transfer in the chunks run() uses (the same messages): receives first.
  auto post = [&](const exchange_transfer& t, char* base, bool send) {
    for (std::int64_t c = 0, n = t.messages(); c < n; ++c) {
      f.reqs_.emplace_back();
      const std::int64_t len = std::min(t.chunk_bytes, t.bytes - c * t.chunk_bytes);
      if (send) comm.isend_bytes(base + c * t.chunk_bytes, len, t.peer, exchange_tag, &f.reqs_.back());
      else comm.irecv_bytes(base + c * t.chunk_bytes, len, t.peer, exchange_tag, &f.reqs_.back());
    }
  };
  for (const auto& t : recvs_) {
    if (t.dst_contiguous) {
      post(t, dst + t.segments[0].dst_offset * es, false);
    } else {
      post(t, next, false);
      f.unpack_.emplace_back(&t, next);
      next += t.bytes;
    }
  }
  for (const auto& t : sends_) {
    if (t.src_contiguous) {
      post(t, const_cast<char*>(src + t.segments[0].src_offset * es), true);
    } else {
      pack_transfer(t, src, next, elem_);
      post(t, next, true);
      next += t.bytes;
    }
  }
  for (const auto& s : self_) copy_segment(s, src, dst, elem_);
  return f;
}

void exchange_in_flight::finish() {
  communicator::wait_all(reqs_);
  reqs_.clear();
  for (const auto& [t, bytes] : unpack_) unpack_transfer(*t, bytes, dst_, elem_);
  unpack_.clear();
  staging_.reset();
}

void exchange_in_flight::finish_noexcept() noexcept {
  try {
    if (pending()) finish();
  } catch (...) {  // an MPI failure here ends like any other (the failure policy)
  }
}

void exchange::run_p2p(const communicator& comm, const char* src, char* dst) const {
  const std::int64_t es = std::int64_t(elem_);
  std::vector<MPI_Request> reqs;
  auto chunks = [](const exchange_transfer& t) { return t.messages(); };

  // 1. Everything that needs no staging is posted at once, so it is in flight
  //    while this rank copies its own part and packs the rest.
  for (const auto& t : recvs_)
    if (t.dst_contiguous) {
      char* base = dst + t.segments[0].dst_offset * es;
      for (std::int64_t c = 0, n = chunks(t); c < n; ++c) {
        reqs.emplace_back();
        comm.irecv_bytes(base + c * t.chunk_bytes, std::min(t.chunk_bytes, t.bytes - c * t.chunk_bytes), t.peer,
                         exchange_tag, &reqs.back());
      }
    }
  for (const auto& t : sends_)
    if (t.src_contiguous) {
      const char* base = src + t.segments[0].src_offset * es;
      for (std::int64_t c = 0, n = chunks(t); c < n; ++c) {
        reqs.emplace_back();
        comm.isend_bytes(base + c * t.chunk_bytes, std::min(t.chunk_bytes, t.bytes - c * t.chunk_bytes), t.peer,
                         exchange_tag, &reqs.back());
      }
    }

  // 2. My own part.
  for (const auto& s : self_) copy_segment(s, src, dst, elem_);

  // 3. Staged transfers in pairwise rounds (send to rank+k, receive from rank-k),
  //    one bounded chunk at a time per direction.
  // From the block pool (runtime/memory_pool.hpp): a move repeated in a loop
  // gets the same staging pages back instead of faulting in fresh ones per call.
  std::shared_ptr<char[]> sbuf, rbuf;
  std::int64_t sbuf_size = 0, rbuf_size = 0;
  for (int k = 1; k < nranks_; ++k) {
    const int to = (rank_ + k) % nranks_, from = (rank_ - k + nranks_) % nranks_;
    const exchange_transfer* ts = nullptr;
    const exchange_transfer* tr = nullptr;
    for (const auto& t : sends_)
      if (t.peer == to && !t.src_contiguous) ts = &t;
    for (const auto& t : recvs_)
      if (t.peer == from && !t.dst_contiguous) tr = &t;
    if (!ts && !tr) continue;
    if (ts && sbuf_size < std::min(ts->chunk_bytes, ts->bytes)) {
      sbuf_size = std::min(ts->chunk_bytes, ts->bytes);
      sbuf = detail::allocate<char>(sbuf_size);
    }
    if (tr && rbuf_size < std::min(tr->chunk_bytes, tr->bytes)) {
      rbuf_size = std::min(tr->chunk_bytes, tr->bytes);
      rbuf = detail::allocate<char>(rbuf_size);
    }
    std::optional<run_cursor> pack, unpack;
    if (ts) pack.emplace(ts->segments, true, elem_);
    if (tr) unpack.emplace(tr->segments, false, elem_);
    const std::int64_t ns = ts ? chunks(*ts) : 0, nr = tr ? chunks(*tr) : 0;
    std::vector<MPI_Request> step;
    for (std::int64_t c = 0; c < std::max(ns, nr); ++c) {
      std::int64_t rlen = 0;
      if (c < nr) {
        rlen = std::min(tr->chunk_bytes, tr->bytes - c * tr->chunk_bytes);
        step.emplace_back();
        comm.irecv_bytes(rbuf.get(), rlen, tr->peer, exchange_tag, &step.back());
      }
      if (c < ns) {
        const std::int64_t slen = std::min(ts->chunk_bytes, ts->bytes - c * ts->chunk_bytes);
        pack->transfer(const_cast<char*>(src), sbuf.get(), slen, true);
        step.emplace_back();
        comm.isend_bytes(sbuf.get(), slen, ts->peer, exchange_tag, &step.back());
      }
      communicator::wait_all(step);
      if (c < nr) unpack->transfer(dst, rbuf.get(), rlen, false);
    }
  }
  communicator::wait_all(reqs);
}

// run_p2p's staged path, one chunk of t.chunk_bytes per message, without MPI.
namespace {
// The chunk loop shared by pack and unpack: `buf` is the sender's or receiver's
// buffer, `stream` the byte stream, `pack` the direction.
void stream_chunks(const exchange_transfer& t, char* buf, char* stream, std::size_t elem_size, bool pack) {
  run_cursor cur(t.segments, pack, elem_size);
  for (std::int64_t c = 0, n = t.messages(); c < n; ++c)
    cur.transfer(buf, stream + c * t.chunk_bytes, std::min(t.chunk_bytes, t.bytes - c * t.chunk_bytes), pack);
}
}  // namespace

void pack_transfer(const exchange_transfer& t, const void* src_buf, void* stream, std::size_t elem_size) {
  // only read: pack = true
  stream_chunks(t, const_cast<char*>(static_cast<const char*>(src_buf)), static_cast<char*>(stream), elem_size, true);
}

void unpack_transfer(const exchange_transfer& t, const void* stream, void* dst_buf, std::size_t elem_size) {
  // only read: pack = false
  stream_chunks(t, static_cast<char*>(dst_buf), const_cast<char*>(static_cast<const char*>(stream)), elem_size, false);
}

std::vector<traffic> predict_exchange(const distribution& src, const distribution& dst, std::size_t elem_size) {
  std::vector<traffic> out;
  out.reserve(std::size_t(src.nranks()));
  for (int r = 0; r < src.nranks(); ++r) out.push_back(exchange(src, dst, r, elem_size).predicted());
  return out;
}

}  // namespace ember
