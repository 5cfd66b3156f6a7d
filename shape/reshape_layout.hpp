// A C-order reshape of a distributed array, as layouts and exchanges (no MPI in
// the planning part, no dsl header: the runtime half of shape/).
//
// A reshape keeps every element's flat (C-order) index. When the two shapes have
// a common refinement (their suffix products divide one another: (4096, 4096) and
// (2048, 8192) refine to (2048, 2, 4096)), both layouts are described as boxes of
// that refined index space (`refined_distribution`) and the exchange engine moves
// what changes rank, with exact predicted bytes, like any other move. Shapes
// without one ((4, 6) -> (6, 4)) go through the flat array: two such moves.
//
// The result's split is chosen so that as few elements as possible change rank:
// each axis of the new shape, balanced, and the axis whose rows line up with the
// source's ("aligned": the same elements before it, rank boundaries carried
// over), are scored by the elements every rank keeps. When every rank keeps its
// whole block in the same order, nothing moves and the result shares the
// source's storage, as NumPy's reshape returns a view.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "../runtime/communicator.hpp"
#include "../runtime/device.hpp"
#include "../runtime/exchange.hpp"
#include "../runtime/layout.hpp"

namespace ember {

// Two shapes as axis groups of one finer shape: axis j of `a` is the refined axes
// [a_groups[j].first, a_groups[j].second) (empty for an axis of extent 1).
struct shape_refinement {
  index_vec refined;
  std::vector<std::pair<int, int>> a_groups, b_groups;
};
// The common refinement of two shapes of the same (nonzero) element count, when
// their suffix products form one divisibility chain.
std::optional<shape_refinement> refine_shapes(const index_vec& a, const index_vec& b);

// A layout of shape A seen as boxes of a refinement of A: the same local buffer,
// each rank's block one box or a few (a range of a merged axis in mixed radix).
class refined_distribution final : public distribution {
 public:
  refined_distribution(layout l, index_vec refined, std::vector<std::pair<int, int>> groups);
  const index_vec& shape() const override { return refined_; }
  int nranks() const override { return lay_.nranks(); }
  bool replicated() const override { return lay_.replicated(); }
  std::vector<piece> pieces(int rank) const override;
  std::int64_t local_size(int rank) const override { return lay_.local_size(rank); }

 private:
  layout lay_;
  index_vec refined_;
  std::vector<std::pair<int, int>> groups_;
};

class reshape_geometry {
 public:
  // `src` reshaped to `shape` (same element count: else shape_error on every rank,
  // naming both shapes). `split`: the result's split the caller asks for (none:
  // replicated), or nullopt to let the geometry choose.
  reshape_geometry(layout src, index_vec shape, std::optional<std::optional<int>> split);

  const layout& source() const { return src_; }
  const layout& target() const { return dst_; }
  // Every rank's block is the same elements in the same order: no copy at all.
  bool shares_storage() const { return shares_; }
  // No common refinement: the move goes through the flat array (two exchanges).
  bool through_flat() const { return flat_.has_value(); }
  // Exactly what run() adds to `rank`'s traffic counters.
  traffic predicted(int rank, std::size_t elem_size) const;
  // Collective: `src_buf` is this rank's block of source(), `dst_buf` of target()
  // (not overlapping). Staging for the flat path is allocated inside.
  void run(const communicator& c, const void* src_buf, void* dst_buf, std::size_t elem_size,
           device_kind where = device_kind::cpu) const;
  // One line for plans and logs: "reshape (4096, 4096) split 1 -> (2048, 8192) split 0: ...".
  std::string describe(int rank, std::size_t elem_size) const;

 private:
  layout src_, dst_;
  bool shares_ = false;
  std::optional<layout> flat_;  // the intermediate flat layout, when there is no refinement
  std::vector<exchange> steps(int rank, std::size_t elem_size) const;
};

// The layout of a C-order reshape of `src` to `shape` that keeps the most elements
// where they are (see the header comment), or the requested split.
layout reshape_target(const layout& src, const index_vec& shape, std::optional<std::optional<int>> split);

}  // namespace ember
