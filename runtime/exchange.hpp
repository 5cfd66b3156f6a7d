// The exchange engine: moves data from any source distribution to any destination
// distribution by intersecting their boxes. resplit, redistribute, balance,
// gather-to-none, gather-to-root and (later) block-cyclic conversion and box
// reshape are all this one mechanism.
//
// An exchange is computed per rank from replicated metadata only, with no
// communication; the same computation gives the exact bytes and messages each rank
// will send, before anything moves.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "communicator.hpp"
#include "device.hpp"
#include "layout.hpp"

namespace ember {

// One intersected sub-box: where it sits in the sender's and the receiver's buffer.
struct exchange_segment {
  index_vec extents;
  std::int64_t src_offset = 0;
  index_vec src_strides;
  std::int64_t dst_offset = 0;
  index_vec dst_strides;
};

// Everything that moves from one rank to one other rank.
struct exchange_transfer {
  int peer = -1;
  std::vector<exchange_segment> segments;
  std::int64_t bytes = 0;
  bool src_contiguous = false;  // one run in the sender's buffer: sent without packing
  bool dst_contiguous = false;  // one run in the receiver's buffer: received in place
  std::int64_t chunk_bytes = 0;  // message size limit agreed by both sides
  std::int64_t messages() const { return bytes == 0 ? 0 : (bytes + chunk_bytes - 1) / chunk_bytes; }
};

enum class exchange_method {
  point_to_point,  // per-peer messages, staged only where data is not contiguous
  allgather,       // destination replicated and every source slab contiguous in it
};

class exchange;

// A move begun by exchange::begin(): its messages are in flight. finish() waits
// for them and stores what arrived staged; until then the destination is not
// complete (and the source must not change). The destructor finishes.
class exchange_in_flight {
 public:
  exchange_in_flight() = default;
  exchange_in_flight(exchange_in_flight&&) noexcept = default;
  exchange_in_flight& operator=(exchange_in_flight&& o) noexcept {
    if (this != &o) {
      finish_noexcept();
      reqs_ = std::move(o.reqs_);
      staging_ = std::move(o.staging_);
      unpack_ = std::move(o.unpack_);
      dst_ = o.dst_;
      elem_ = o.elem_;
    }
    return *this;
  }
  ~exchange_in_flight() { finish_noexcept(); }
  void finish();
  bool pending() const { return !reqs_.empty() || !unpack_.empty(); }

 private:
  friend class exchange;
  std::vector<MPI_Request> reqs_;
  // Packed sends and staged receives: the exchange's own staging block, held
  // here while the messages are in flight (so a second begin() of the same
  // exchange meanwhile stages elsewhere, and the block outlives the exchange).
  std::shared_ptr<char[]> staging_;
  std::vector<std::pair<const exchange_transfer*, const char*>> unpack_;  // staged receive, its bytes
  char* dst_ = nullptr;
  std::size_t elem_ = 1;
  void finish_noexcept() noexcept;
};

class exchange {
 public:
  // The schedule of `rank` for moving elements of `elem_size` bytes from `src` to
  // `dst` (same global shape and rank count; validated, throws ember::error).
  exchange(const distribution& src, const distribution& dst, int rank, std::size_t elem_size);

  exchange_method method() const { return method_; }
  // Exactly what this rank's run() adds to the communicator's counters.
  traffic predicted() const { return predicted_; }
  // Bytes this rank receives from other ranks.
  std::int64_t received_bytes() const;
  // Upper bound on the staging memory run() allocates on this rank.
  std::int64_t staging_bytes() const { return staging_; }
  const std::vector<exchange_transfer>& sends() const { return sends_; }
  const std::vector<exchange_transfer>& recvs() const { return recvs_; }
  // What this rank copies from its own source buffer into its own destination
  // buffer (never counted as traffic).
  const std::vector<exchange_segment>& self_segments() const { return self_; }

  // Collective over `comm` (all ranks of the distributions). `src_buf` is this
  // rank's local buffer of `src`, `dst_buf` of `dst`; they must not overlap.
  void run(const communicator& comm, const void* src_buf, void* dst_buf) const;
  // The same for buffers in `where` memory. GPU buffers travel through pinned
  // host buffers (the MPI library here is not CUDA-aware): the whole local source
  // block down, the host move, the destination block up. The copies are inside
  // the move's failure guard, so a CUDA error on one rank aborts like an MPI one.
  void run(const communicator& comm, const void* src_buf, void* dst_buf, device_kind where) const;
  // The same move in two halves, so a caller can compute while it travels: in
  // host memory, point to point, with at most config().staging_bytes to stage,
  // every message is posted and this rank's own part copied before begin()
  // returns (the same messages and bytes as run()); otherwise begin() runs the
  // whole move and the result has nothing left to wait for.
  exchange_in_flight begin(const communicator& comm, const void* src_buf, void* dst_buf) const;
  // Bytes of this rank's source and destination blocks (what run(gpu) stages).
  std::int64_t source_bytes() const { return src_bytes_; }
  std::int64_t destination_bytes() const { return dst_bytes_; }

 private:
  int rank_;
  int nranks_;
  std::size_t elem_;
  exchange_method method_ = exchange_method::point_to_point;
  std::vector<exchange_transfer> sends_, recvs_;
  std::vector<exchange_segment> self_;
  traffic predicted_;
  std::int64_t staging_ = 0;
  std::int64_t src_bytes_ = 0, dst_bytes_ = 0;
  // allgather method
  std::vector<std::int64_t> ag_counts_, ag_displs_;
  std::int64_t ag_mine_ = 0, ag_src_offset_ = 0;

  // begin()'s staging, kept for the next begin(): a halo exchanged every step of
  // a loop allocates once (reused while no move in flight holds it).
  mutable std::shared_ptr<char[]> begin_staging_;
  mutable std::int64_t begin_staging_bytes_ = 0;

  void run_p2p(const communicator& comm, const char* src, char* dst) const;
  void run_host(const communicator& comm, const char* src, char* dst) const;
  bool device_local_copies(detail::device_backend& g, const char* src, char* dst) const;
};

// Copies one segment between two strided buffers (a local copy, no MPI).
void copy_segment(const exchange_segment& s, const char* src, char* dst, std::size_t elem_size);

// A transfer's byte stream without MPI, staged exactly as run() stages a transfer
// that is not contiguous on that side: pack_transfer writes the t.bytes bytes that
// the sender `t` describes (its segments in the sender's buffer) to `stream`,
// unpack_transfer stores them where the receiver's `t` puts them, both
// t.chunk_bytes at a time through the same cursor as run(). For tests and fuzzing.
void pack_transfer(const exchange_transfer& t, const void* src_buf, void* stream, std::size_t elem_size);
void unpack_transfer(const exchange_transfer& t, const void* stream, void* dst_buf, std::size_t elem_size);

// Predicted traffic of every rank for the move (the planner's view; no MPI).
std::vector<traffic> predict_exchange(const distribution& src, const distribution& dst, std::size_t elem_size);

}  // namespace ember
