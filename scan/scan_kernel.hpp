// Scans along one axis of a distributed array: cumulative sums, products, maxima
// and minima (NumPy's cumsum, cumprod, maximum.accumulate, minimum.accumulate).
//
// Along an axis that is not split, a scan is local: each rank scans its block.
// Along the split axis, each rank first combines its block along the axis into
// one slice (its totals: a read-only pass), one exclusive scan of those slices
// across the ranks (MPI_Exscan) gives every rank the carry of the ranks before
// it, and one pass scans the block starting from that carry. The slice is the
// block without the scanned axis, so the traffic is tiny next to the data.
//
// Runtime only (no dsl types): the planner prices it with scan_traffic, the dsl's
// executor runs it with run_scan.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "../runtime/communicator.hpp"
#include "../runtime/layout.hpp"

namespace ember {

enum class scan_kind : std::uint8_t { sum, prod, max, min };
const char* name(scan_kind k);  // "cumsum", "cumprod", "cummax", "cummin"

// What scanning a block laid out as `l` along `axis` sends from `rank`: nothing
// unless `axis` is the split axis of more than one rank; then the exclusive scan
// of one slice (l's shape without `axis`), counted as MPI's linear Exscan sends
// it: every rank but the last passes one slice to the next (chunked like every
// collective above the message limit).
traffic scan_traffic(const layout& l, int axis, std::int64_t elem, int rank);
std::vector<traffic> scan_traffic_all(const layout& l, int axis, std::int64_t elem);

// out = the scan of `in` (this rank's block of `l`) along `axis`; in == out is
// allowed. Collective over `comm` when `axis` is split (every rank calls it).
// Max and min propagate NaN as NumPy's maximum and minimum do.
// T: every arithmetic dtype, and complex64/complex128 for sum and prod.
template <class T>
void run_scan(scan_kind k, const layout& l, int axis, const communicator& comm, const T* in, T* out);

// The same scan for an operand that is computed as it is read (a fused
// expression, `cumsum(x * w)`): the dsl's kernel hands this rank's block of the
// operand over in chunks, in row-major order, and no temporary of the operand
// is written. When needs_carry() (the axis is split over more than one rank)
// the chunks come twice: first to add_totals, then carry() (collective: every
// rank calls it), then to scan; otherwise only to scan. `pos` is a chunk's flat
// row-major position in the block.
template <class T>
class scan_pass {
 public:
  scan_pass(scan_kind k, const layout& l, int axis, int rank);
  bool needs_carry() const { return split_; }
  void add_totals(std::int64_t pos, const T* v, std::int64_t len);
  void carry(const communicator& comm);
  // The scan of a chunk into y[0, len) (into the output block: y = out + pos;
  // or a buffer of its own, for a kernel that consumes the scan as it is made).
  // The previous row (or the line's running value) is kept here, so chunks must
  // come in order.
  void scan_chunk(std::int64_t pos, const T* v, std::int64_t len, T* y);

 private:
  scan_kind k_;
  const layout& l_;
  int axis_;
  std::int64_t n_ = 0, inner_ = 1;  // the block's extent along the axis, and the elements after it
  bool split_ = false;
  bool have_carry_ = false;  // false on rank 0 and when not split: lines start from their first element
  std::unique_ptr<T[]> totals_, carry_;  // (arrays: vector<bool> has no data())
  std::unique_ptr<T[]> row_;              // scan_chunk: the last scanned row (inner elements; one for inner == 1)
};

}  // namespace ember
