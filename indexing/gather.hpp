// Advanced indexing's kernels (runtime level: no dsl header): boolean-mask
// compaction into Heat's balanced layout, and the distributed gather (take) and
// scatter (put) of elements or rows by index, as one request/response exchange.
//
// Everything here is type-erased on the element size in bytes; indexing/
// indexing.hpp is the typed front end (ember::masked, take, put, nonzero, ...).
//
// Collectives: every rank of the communicator calls each function with the same
// replicated metadata (layouts, element size); the per-rank data (indices, masks)
// differs. An invalid index found on one rank is reported on every rank alike:
// the check rides on a collective every rank makes anyway (the counts'
// all-to-all of a distributed gather, or one small allgather), and every rank
// throws the same ember::index_error before any data moves. Once data moves, a
// failure on one rank alone (out of memory for scratch, an MPI error) follows
// runtime/failure.hpp: the job ends rather than hang (EMBER_ON_FAILURE=throw
// rethrows).
//
// Messages are point-to-point (tag 0x7365, chunked at config().max_message_bytes)
// and counted in comm.sent(); the counts' all-to-all is counted as P - 1 messages
// of 24 bytes. Scratch buffers (the routed requests, the rows in flight) are kept
// per thread between calls, so repeating a take or a mask selection of one size
// touches no fresh pages; they hold at most what the largest recent call needed
// (about 40 bytes per index of a take).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../runtime/communicator.hpp"
#include "../runtime/exchange.hpp"
#include "../runtime/layout.hpp"

namespace ember::detail {

// ---- index checks ----
// Normalizes idx[0..m) into out (negative indices count from the end of an axis
// of extent n); returns the position of the first index outside [-n, n), or -1.
std::int64_t normalize_indices(const std::int64_t* idx, std::int64_t m, std::int64_t n, std::int64_t* out);
// NumPy's message: "<what>: index 7 is out of bounds for axis 0 with size 6".
std::string index_message(const std::string& what, std::int64_t index, int axis, std::int64_t n);
// Collective (one allgather of two int64): throws index_error on every rank when
// some rank had a bad index (`bad`: that rank's first one), naming the lowest
// such rank's index, the axis and its size.
void agree_indices(const communicator& c, bool bad, std::int64_t bad_value, std::int64_t n, int axis,
                   const std::string& what);

// ---- mask compaction ----
// The selected elements of every rank, in C order, balanced over the ranks.
// A rank's block is `outer` runs of the mask in local order (one for an array
// split along axis 0; shape[0..k) products of them for a split along axis k,
// whose blocks interleave in C order): run o of rank q is followed by run o of
// rank q + 1, then run o + 1 of rank 0.
struct compaction {
  std::vector<std::int64_t> counts;  // per rank: true values in its block
  std::int64_t total = 0;            // over every rank
  std::int64_t first = 0;            // one run: global position of this rank's first selected element
  index_vec extents;                 // balanced extents of `total` over the ranks
  std::int64_t outer = 1;            // runs per rank
  std::vector<std::int64_t> run_counts;  // outer > 1: [q * outer + o] true values in run o of rank q
};
// Collective (one allgather of one int64): counts mask[0..n) and shares the counts.
compaction plan_compaction(const communicator& c, const bool* mask, std::int64_t n);
// Collective (one allgather of `outer` int64): the same for a block of `outer`
// runs of `run` mask values each.
compaction plan_compaction_runs(const communicator& c, const bool* mask, std::int64_t outer, std::int64_t run);
// Collective: the elements src[i] (elem bytes each) with mask[i], in order over
// the ranks, into dst: this rank's extents[rank] of them. Elements that stay on
// this rank are written in place; the rest travel to their balanced owner (one
// message per pair of ranks that exchange anything).
void run_compaction(const communicator& c, const compaction& p, const void* src, const bool* mask, std::int64_t n,
                    std::size_t elem, void* dst);
// The same where the record of a selected element is its coordinates (lshape.size()
// int64) in the global array, this rank's block having local shape `lshape` and
// starting at global index `offset` along `axis`: argwhere's rows.
void run_compaction_coords(const communicator& c, const compaction& p, const bool* mask, const index_vec& lshape,
                           int axis, std::int64_t offset, void* dst);
// The selected positions as a distribution of the 1-D result's index space
// [0, total): rank q holds its runs, in order, contiguously in its buffer (its
// counts[q] elements). An exchange from any layout of a 1-D array of `total`
// values into it gives every rank the values of its own selected elements, in
// local order (a(mask) = v).
class selection_distribution final : public distribution {
 public:
  selection_distribution(const compaction& p, int nranks);
  const index_vec& shape() const override { return shape_; }
  int nranks() const override { return nranks_; }
  bool replicated() const override { return false; }
  std::vector<piece> pieces(int rank) const override;
  std::int64_t local_size(int rank) const override { return counts_[std::size_t(rank)]; }

 private:
  index_vec shape_;
  int nranks_;
  std::int64_t outer_;
  std::vector<std::int64_t> counts_, cnt_, start_;  // cnt_/start_: [q * outer + o]
};
// Local: dst[i] = values[k++] for each i with mask[i] (in order), elem bytes each.
void scatter_masked(void* dst, const bool* mask, std::int64_t n, std::size_t elem, const void* values);

// ---- take and put ----
// Local take: src is (outer, n, inner) elements, dst (outer, m, inner); idx[0..m)
// already normalized to [0, n).
void take_local(const void* src, std::size_t elem, std::int64_t outer, std::int64_t n, std::int64_t inner,
                const std::int64_t* idx, std::int64_t m, void* dst);

// Collective: take along the split axis `k` of layout l (this rank's block is
// src). Each rank asks for m rows idx[0..m) (not yet normalized: negative count
// from the end; out of range is index_error on every rank naming `what`, the
// index, the axis and its extent). dst is (outer, m, inner) in C order, outer
// and inner the products of l.shape() before and after k. One exchange of counts
// (all-to-all), requests to the owners, rows back.
void take_along_split(const communicator& c, const layout& l, const void* src, std::size_t elem,
                      const std::int64_t* idx, std::int64_t m, void* dst, const std::string& what);
// Collective: take of flat (C-order) indices idx[0..m) from an array of any split
// layout l (not replicated); dst gets m elements. Same protocol, one element per request.
void take_flat(const communicator& c, const layout& l, const void* src, std::size_t elem, const std::int64_t* idx,
               std::int64_t m, void* dst, const std::string& what);
// Collective: the scatter: element idx[j] (flat, C order; negative from the end)
// of the split layout l's blocks (dst, this rank's) gets values[j]. Writes to one
// element land in the order of the requests over the ranks (rank 0's first, each
// rank's in its order), so the last one in the index array's global order wins.
void put_flat(const communicator& c, const layout& l, void* dst, std::size_t elem, const std::int64_t* idx,
              std::int64_t m, const void* values, const std::string& what);
// Local: dst[idx[j]] = values[j % nvalues] for j in [0, m) (flat, normalized).
void put_local(void* dst, std::size_t elem, const std::int64_t* idx, std::int64_t m, const void* values,
               std::int64_t nvalues);

}  // namespace ember::detail
