#include "boxes.hpp"

#include <algorithm>
#include <numeric>

namespace ember {

std::string box_str(const box_nd& b) {
  std::string s = "[(";
  for (int d = 0; d < b.ndim(); ++d) s += (d ? ", " : "") + std::to_string(b.lo[std::size_t(d)]);
  s += b.ndim() == 1 ? ",), (" : "), (";
  for (int d = 0; d < b.ndim(); ++d) s += (d ? ", " : "") + std::to_string(b.hi[std::size_t(d)]);
  s += b.ndim() == 1 ? ",))" : "))";
  return s;
}

box_distribution::box_distribution(index_vec shape, std::vector<box_nd> boxes)
    : shape_(std::move(shape)), boxes_(std::move(boxes)) {}

std::vector<piece> box_distribution::pieces(int rank) const {
  const box_nd& b = boxes_[std::size_t(rank)];
  if (b.empty()) return {};
  index_vec ext(std::size_t(b.ndim()));
  for (int d = 0; d < b.ndim(); ++d) ext[std::size_t(d)] = b.extent(d);
  return {piece{b, 0, row_major_strides(ext)}};
}

namespace {

std::string which(bool input) { return input ? "input" : "output"; }

// Bounding box of the non-empty boxes (all zeros when there are none).
box_nd bounding(const std::vector<box_nd>& bs, int nd) {
  box_nd g{index_vec(std::size_t(nd), 0), index_vec(std::size_t(nd), 0)};
  bool any = false;
  for (const auto& b : bs) {
    if (b.empty()) continue;
    for (int d = 0; d < nd; ++d) {
      const auto k = std::size_t(d);
      g.lo[k] = any ? std::min(g.lo[k], b.lo[k]) : b.lo[k];
      g.hi[k] = any ? std::max(g.hi[k], b.hi[k]) : b.hi[k];
    }
    any = true;
  }
  return g;
}

void check_one(const std::vector<box_nd>& bs, bool input) {
  const int nd = bs.empty() ? 0 : bs[0].ndim();
  for (std::size_t r = 0; r < bs.size(); ++r)
    for (int d = 0; d < nd; ++d)
      if (bs[r].hi[std::size_t(d)] < bs[r].lo[std::size_t(d)])
        throw value_error("ember::reshape_boxes: the " + which(input) + " box " + box_str(bs[r]) + " of rank " +
                          std::to_string(r) + " ends before it starts on axis " + std::to_string(d));
  // Overlaps: sweep along axis 0, comparing a box only with those that start
  // before it ends there (every pair for the worst case, few for real tilings).
  std::vector<std::size_t> order;
  for (std::size_t r = 0; r < bs.size(); ++r)
    if (!bs[r].empty()) order.push_back(r);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return bs[a].lo[0] != bs[b].lo[0] ? bs[a].lo[0] < bs[b].lo[0] : a < b;
  });
  for (std::size_t i = 0; i < order.size(); ++i)
    for (std::size_t j = i + 1; j < order.size() && bs[order[j]].lo[0] < bs[order[i]].hi[0]; ++j)
      if (!intersect(bs[order[i]], bs[order[j]]).empty()) {
        const auto a = std::min(order[i], order[j]), b = std::max(order[i], order[j]);
        throw value_error("ember::reshape_boxes: the " + which(input) + " boxes of rank " + std::to_string(a) + " " +
                          box_str(bs[a]) + " and rank " + std::to_string(b) + " " + box_str(bs[b]) +
                          " overlap in " + box_str(intersect(bs[a], bs[b])));
      }
  // Without overlaps, the boxes tile their bounding box iff their volumes add up.
  const box_nd g = bounding(bs, nd);
  std::int64_t covered = 0;
  for (const auto& b : bs) covered += b.volume();
  if (covered != g.volume()) {
    std::string list;
    for (std::size_t r = 0; r < bs.size() && r < 16; ++r)
      list += (r ? ", " : "") + std::string("rank ") + std::to_string(r) + " " + box_str(bs[r]);
    if (bs.size() > 16) list += ", ...";
    throw value_error("ember::reshape_boxes: the " + which(input) + " boxes leave a hole: they cover " +
                      std::to_string(covered) + " of the " + std::to_string(g.volume()) +
                      " elements of their bounding box " + box_str(g) + " (" + list + ")");
  }
}

}  // namespace

box_nd check_box_tilings(const std::vector<box_nd>& in, const std::vector<box_nd>& out) {
  check_one(in, true);
  check_one(out, false);
  const int nd = in.empty() ? 0 : in[0].ndim();
  const box_nd gi = bounding(in, nd), go = bounding(out, nd);
  if (gi != go)
    throw value_error("ember::reshape_boxes: the input boxes tile " + box_str(gi) + " but the output boxes tile " +
                      box_str(go) + "; both must describe the same global array");
  return gi;
}

box_reshape::box_reshape(const box_nd& in, const box_nd& out, std::size_t elem_size, const communicator& c,
                         std::int64_t local_count, const index_vec& local_shape)
    : comm_(c) {
  const int P = c.size();
  const int nd = in.ndim();
  // 1. Every rank's dimensions and element size, so the records below have one
  //    length everywhere (a mismatch there would break the allgather itself).
  {
    const std::int64_t mine[3] = {nd, out.ndim(), std::int64_t(elem_size)};
    const auto all = c.allgather(mine, 3);
    for (int r = 0; r < P; ++r) {
      const std::int64_t* p = all.data() + 3 * std::size_t(r);
      if (p[0] != all[0] || p[1] != all[0])
        throw shape_error("ember::reshape_boxes: rank 0 passes " + std::to_string(all[0]) +
                          "-dimensional boxes but rank " + std::to_string(r) + " a " + std::to_string(p[0]) +
                          "-dimensional input box and a " + std::to_string(p[1]) + "-dimensional output box");
      if (p[2] != all[2])
        throw type_error("ember::reshape_boxes: rank 0 moves elements of " + std::to_string(all[2]) +
                         " bytes but rank " + std::to_string(r) + " of " + std::to_string(p[2]));
    }
  }
  if (nd < 1) throw value_error("ember::reshape_boxes: boxes need at least one dimension");
  // 2. One allgather of every rank's boxes and what it passes:
  //    [in.lo, in.hi, out.lo, out.hi, check kind (0 none, 1 count, 2 shape), local...]
  const std::size_t R = 5 * std::size_t(nd) + 1;
  std::vector<std::int64_t> rec(R, 0);
  for (int d = 0; d < nd; ++d) {
    const auto k = std::size_t(d);
    rec[k] = in.lo[k];
    rec[nd + k] = in.hi[k];
    rec[2 * nd + k] = out.lo[k];
    rec[3 * nd + k] = out.hi[k];
  }
  if (!local_shape.empty()) {
    rec[4 * nd] = 2;
    for (int d = 0; d < nd && d < int(local_shape.size()); ++d) rec[4 * nd + 1 + std::size_t(d)] = local_shape[std::size_t(d)];
  } else if (local_count >= 0) {
    rec[4 * nd] = 1;
    rec[4 * nd + 1] = local_count;
  }
  const auto all = c.allgather(rec.data(), std::int64_t(R));
  in_.resize(std::size_t(P));
  out_.resize(std::size_t(P));
  for (int r = 0; r < P; ++r) {
    const std::int64_t* p = all.data() + std::size_t(r) * R;
    in_[std::size_t(r)] = {index_vec(p, p + nd), index_vec(p + nd, p + 2 * nd)};
    out_[std::size_t(r)] = {index_vec(p + 2 * nd, p + 3 * nd), index_vec(p + 3 * nd, p + 4 * nd)};
  }
  global_ = check_box_tilings(in_, out_);
  // 3. What each rank passes fits its input box (checked for every rank on every rank).
  for (int r = 0; r < P; ++r) {
    const std::int64_t* p = all.data() + std::size_t(r) * R + 4 * nd;
    const box_nd& b = in_[std::size_t(r)];
    if (p[0] == 1 && p[1] != b.volume())
      throw shape_error("ember::reshape_boxes: rank " + std::to_string(r) + " passes " + std::to_string(p[1]) +
                        " values for its input box " + box_str(b) + " of " + std::to_string(b.volume()) +
                        " elements");
    if (p[0] == 2) {
      index_vec ls(p + 1, p + 1 + nd), ext(static_cast<std::size_t>(nd));
      for (int d = 0; d < nd; ++d) ext[std::size_t(d)] = b.extent(d);
      if (ls != ext)
        throw shape_error("ember::reshape_boxes: rank " + std::to_string(r) + " passes a block of shape " +
                          detail::shape_str(ls) + " for its input box " + box_str(b) + " of shape " +
                          detail::shape_str(ext));
    }
  }
  // 4. The engine's view: boxes relative to the global box's origin.
  index_vec shape(static_cast<std::size_t>(nd));
  for (int d = 0; d < nd; ++d) shape[std::size_t(d)] = global_.extent(d);
  auto shifted = [&](std::vector<box_nd> bs) {
    for (auto& b : bs)
      if (!b.empty())
        for (int d = 0; d < nd; ++d) {
          b.lo[std::size_t(d)] -= global_.lo[std::size_t(d)];
          b.hi[std::size_t(d)] -= global_.lo[std::size_t(d)];
        }
    return bs;
  };
  src_ = std::make_unique<box_distribution>(shape, shifted(in_));
  dst_ = std::make_unique<box_distribution>(shape, shifted(out_));
  ex_ = std::make_unique<exchange>(*src_, *dst_, c.rank(), elem_size);
}

std::int64_t box_reshape::in_size() const { return in_[std::size_t(comm_.rank())].volume(); }
std::int64_t box_reshape::out_size() const { return out_[std::size_t(comm_.rank())].volume(); }

void box_reshape::run(const void* in, void* out) const { ex_->run(comm_, in, out); }

}  // namespace ember
