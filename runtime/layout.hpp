// Layouts: where each element of a global array lives.
//
// Every layout is described to the exchange engine as a list of boxes per rank,
// each stored somewhere in that rank's local buffer (a `piece`). The engine
// intersects source and destination pieces and never needs to know which kind of
// layout it is moving between: split, replicated, block-cyclic or arbitrary boxes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "error.hpp"

namespace ember {

using index_vec = std::vector<std::int64_t>;

// Half-open box [lo, hi) in global index space.
struct box_nd {
  index_vec lo, hi;
  int ndim() const { return int(lo.size()); }
  std::int64_t extent(int d) const { return hi[d] - lo[d]; }
  std::int64_t volume() const;
  bool empty() const;
  friend bool operator==(const box_nd&, const box_nd&) = default;
};
// Intersection; empty() when the boxes do not overlap.
box_nd intersect(const box_nd& a, const box_nd& b);
index_vec row_major_strides(const index_vec& extents);

// A box of the global array held by one rank, at `offset` (elements) in its local
// buffer with element strides `strides`.
struct piece {
  box_nd global;
  std::int64_t offset = 0;
  index_vec strides;
};

// The interface the exchange engine sees.
class distribution {
 public:
  virtual ~distribution() = default;
  virtual const index_vec& shape() const = 0;
  virtual int nranks() const = 0;
  // True when every rank holds every element (the engine then never sends a byte
  // for data the receiver already has).
  virtual bool replicated() const = 0;
  virtual std::vector<piece> pieces(int rank) const = 0;
  // Ranks that may own part of `b` (a superset is allowed; the default is all).
  virtual std::vector<int> owners(const box_nd& b) const;
  // Number of elements of `rank`'s local buffer.
  virtual std::int64_t local_size(int rank) const = 0;
};

// A dense array split along one axis into contiguous per-rank slabs (Heat's
// layout), or not split at all (every rank holds the whole array).
class layout final : public distribution {
 public:
  // `extents` is the lshape_map column of the split axis, one entry per rank.
  // Validates everything and throws ember::error with shapes, axes and ranks.
  layout(index_vec shape, std::optional<int> split, index_vec extents);
  // Heat's balanced block split: n over P gives n/P each, the first n%P ranks one more.
  static layout balanced(index_vec shape, std::optional<int> split, int nranks);
  static index_vec balanced_extents(std::int64_t n, int nranks);

  const index_vec& shape() const override { return shape_; }
  int nranks() const override { return nranks_; }
  bool replicated() const override { return !split_; }
  std::vector<piece> pieces(int rank) const override;
  std::vector<int> owners(const box_nd& b) const override;
  std::int64_t local_size(int rank) const override;

  int ndim() const { return int(shape_.size()); }
  std::optional<int> split() const { return split_; }
  const index_vec& extents() const;  // per rank along the split axis; empty when not split
  std::int64_t extent(int rank) const;  // along the split axis
  std::int64_t offset(int rank) const;  // first global index along the split axis
  index_vec lshape(int rank) const;
  std::vector<index_vec> lshape_map() const;
  box_nd box_of(int rank) const;
  std::int64_t numel() const;
  bool is_balanced() const;

  // The same per-rank extents along axis `split` of another shape (whose extent
  // there must equal this layout's): O(ndim), the extents are shared, not copied.
  layout with_shape(index_vec shape, int split) const;
  // A hash of shape, split and extents; O(ndim) (the extents' part is computed once).
  std::uint64_t hash() const;

  friend bool operator==(const layout& a, const layout& b) {
    if (a.shape_ != b.shape_ || a.split_ != b.split_ || a.nranks_ != b.nranks_) return false;
    if (a.map_ == b.map_) return true;
    return a.map_ && b.map_ && a.map_->hash == b.map_->hash && a.map_->extents == b.map_->extents;
  }

 private:
  // Per-rank extents along the split axis and their prefix sums: immutable and
  // shared, so layouts over thousands of ranks copy and compare cheaply.
  struct split_map {
    index_vec extents;  // per rank
    index_vec offsets;  // prefix sums, size nranks + 1
    std::uint64_t hash = 0;
    bool balanced = false;
  };
  static std::shared_ptr<const split_map> make_map(index_vec extents);
  index_vec shape_;
  std::optional<int> split_;
  std::shared_ptr<const split_map> map_;  // null when not split
  int nranks_ = 1;
  layout() = default;
  friend layout replicated_layout(index_vec shape, int nranks);
};

layout replicated_layout(index_vec shape, int nranks);

// Throws value_error for a negative extent, or when the shape's element count
// overflows 64 bits (runtime/checked.hpp).
void check_shape(const index_vec& shape);
// Throws axis_error unless 0 <= axis < ndim.
void check_axis(int axis, int ndim, const char* where);
// Validates a Heat-style target map (one row per rank, the array's lshape on that
// rank) for `current`; returns the split-axis extents. Throws on every rank alike.
index_vec extents_from_map(const layout& current, const std::vector<index_vec>& target_map);

}  // namespace ember

namespace ember {
// Calls fn(local_offset, global_offset, length) for the runs of `rank`'s block of
// `l` that are contiguous both locally and in the global row-major order (element
// offsets). Used by factories whose values depend on the global index.
template <class Fn>
void for_each_global_run(const layout& l, int rank, Fn&& fn) {
  const int nd = l.ndim();
  const index_vec gstr = row_major_strides(l.shape());
  const box_nd b = l.box_of(rank);
  if (b.volume() == 0) return;
  // Dimensions from the split axis on are one run (the slab is contiguous from
  // there); dimensions before it are iterated.
  const int k = l.split() ? *l.split() : 0;
  std::int64_t run = 1;
  for (int d = k; d < nd; ++d) run *= b.extent(d);
  std::int64_t outer = 1;
  for (int d = 0; d < k; ++d) outer *= b.extent(d);
  for (std::int64_t o = 0; o < outer; ++o) {
    std::int64_t rem = o, g = 0;
    for (int d = k - 1; d >= 0; --d) {
      g += (rem % b.extent(d)) * gstr[d];
      rem /= b.extent(d);
    }
    if (k < nd) g += b.lo[k] * gstr[k];
    fn(o * run, g, run);
  }
}
}  // namespace ember
