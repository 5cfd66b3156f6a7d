// Views: which elements of a base array a NumPy-style selection reads, where they
// lie in each rank's local block, and which rank holds which of them.
//
// A view is a layout, not a copy: for each rank it is one box of the view's index
// space (its `logical()` layout, possibly unbalanced, with empty ranks), stored in
// that rank's block of the base array at an offset with one element stride per
// view axis. Kernels read that storage in place; the exchange engine moves it from
// there (`view_distribution`), so a move out of a view sends exactly the elements
// the view selects.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exchange.hpp"
#include "layout.hpp"

namespace ember {

// One axis of a view.
struct view_axis {
  int base_axis = -1;       // the base array's axis it selects from; -1: a new axis of extent 1
  std::int64_t start = 0;   // first selected index along base_axis
  std::int64_t step = 1;    // nonzero; negative reads backwards
  std::int64_t count = 1;   // how many: start, start + step, ..., start + (count - 1) * step
  friend bool operator==(const view_axis&, const view_axis&) = default;
};

// A selection normalized against the base shape (NumPy's basic indexing).
struct view_spec {
  std::vector<view_axis> axes;     // the view's axes, in order
  std::vector<std::int64_t> fixed;  // per base axis: the index an integer selects, or -1 (a kept axis)
  std::uint64_t hash() const;
  // "[1:-1, ::2, 3]"-style text for plans, against the base shape.
  std::string text(const index_vec& base_shape) const;
  friend bool operator==(const view_spec&, const view_spec&) = default;
};

// NumPy's slice semantics for an axis of extent n (Python's slice.indices): the
// first index, and how many indices start, start + step, ... lie in range.
struct slice_indices {
  std::int64_t start = 0, count = 0;
};
slice_indices normalize_slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop, std::int64_t step,
                              std::int64_t n);

class view_geometry {
 public:
  // Validates `spec` against `base` (axes in range, indices inside); throws
  // ember::error alike on every rank (everything here is replicated metadata).
  // `reversed_ok`: a view reading the split axis backwards (its elements in
  // reverse rank order) is accepted as a source of moves only: it has boxes per
  // rank but no logical() layout.
  view_geometry(layout base, view_spec spec, bool reversed_ok = false);

  const layout& base() const { return base_; }
  const view_spec& spec() const { return spec_; }
  // Which rank holds which elements of the view (not for a reversed view).
  const layout& logical() const;
  const index_vec& shape() const { return shape_; }
  int ndim() const { return int(shape_.size()); }
  bool reversed() const { return reversed_; }
  // A reversed view's mirror layout: rank r holds the view rows that rank
  // nranks-1-r really holds (read backwards). The planner sees it as the leaf's
  // layout and always moves the leaf, priced on view_distribution (the truth).
  const layout& mirror() const;
  // What a planner sees: logical(), or the mirror of a reversed view.
  const layout& planning_layout() const { return reversed_ ? logical_ : logical(); }
  // `rank`'s box of the view's index space.
  box_nd box(int rank) const;
  std::int64_t local_count(int rank) const { return box(rank).volume(); }
  // Where `rank`'s box of the view starts in that rank's base block (elements;
  // 0 for an empty box) and the element stride of each view axis there (0 on new
  // axes). `out` has ndim() entries.
  std::int64_t offset(int rank) const;
  void strides(int rank, std::int64_t* out) const;
  index_vec strides(int rank) const;
  // The view reads its whole base in order (a(ember::all, ...)): it is the base.
  bool is_whole() const;

 private:
  layout base_;
  view_spec spec_;
  index_vec shape_;
  layout logical_;
  bool reversed_ = false;
  int split_view_axis_ = -1;  // reversed: the view axis reading the split axis
  // per base axis: the first selected index in `rank`'s block (local), for the
  // kept and fixed axes; the split axis depends on the rank
  std::int64_t local_start(int rank, int base_axis) const;
};

// The local copy of a block into `rank`'s elements of the view (a setitem's
// store): the block's element strides per view axis (0 where it is broadcast),
// the view's offset and strides in the base block. For copy_segment.
exchange_segment segment_into(const view_geometry& g, int rank, index_vec src_strides);

// A view as the exchange engine sees it: each rank's box of the view, at its
// offset and strides in that rank's block of the base array.
class view_distribution final : public distribution {
 public:
  explicit view_distribution(std::shared_ptr<const view_geometry> g) : g_(std::move(g)) {}
  const index_vec& shape() const override { return g_->shape(); }
  int nranks() const override { return g_->base().nranks(); }
  bool replicated() const override { return !g_->base().split(); }
  std::vector<piece> pieces(int rank) const override;
  std::vector<int> owners(const box_nd& b) const override {
    return g_->reversed() ? distribution::owners(b) : g_->logical().owners(b);
  }
  std::int64_t local_size(int rank) const override { return g_->base().local_size(rank); }

 private:
  std::shared_ptr<const view_geometry> g_;
};

// The halo of a leaf read in another split of its axis: for each rank, the rows
// of `need` (along the common split axis) that `have` does not hold there, as a
// top block (before the rows it holds) and a bottom block (after them), stored
// one after the other, row-major. The exchange engine fills them from `have`;
// a kernel reads the rows a rank holds in place and these from the buffer.
class ghost_rows final : public distribution {
 public:
  ghost_rows(layout have, layout need);  // same shape, both split along one axis
  struct rows_of {
    std::int64_t top = 0, own = 0, bottom = 0;  // counts along the axis, in need's order
    std::int64_t top_lo = 0, own_lo = 0, bottom_lo = 0;  // their first global index
  };
  rows_of rows(int rank) const;
  int axis() const { return *need_.split(); }
  const layout& have() const { return have_; }
  const layout& need() const { return need_; }

  const index_vec& shape() const override { return need_.shape(); }
  int nranks() const override { return need_.nranks(); }
  bool replicated() const override { return false; }
  std::vector<piece> pieces(int rank) const override;
  std::int64_t local_size(int rank) const override;

 private:
  layout have_, need_;
  std::int64_t row_elems_ = 1;  // elements of one index of the axis (the product of the other extents)
};

}  // namespace ember
