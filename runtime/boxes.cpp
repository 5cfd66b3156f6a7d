#include "boxes.hpp"

#include <algorithm>
#include <numeric>

namespace ember {

std::string box_str(const box_nd& b) {
  // Each side with its own length: the messages below also name malformed boxes.
  auto side = [](const index_vec& v) {
    std::string s = "(";
    for (std::size_t d = 0; d < v.size(); ++d) s += (d ? ", " : "") + std::to_string(v[d]);
    return s + (v.size() == 1 ? ",)" : ")");
  };
  return "[" + side(b.lo) + ", " + side(b.hi) + ")";
}

namespace {

// One tiling's checks, named by `one` ("ember::reshape_boxes: the input box",
// "ember::box_distribution: the box"; "es" is added for several): at least one
// box, `nd` >= 1 coordinates on both sides of every box, no box that ends before
// it starts, no non-empty box or bounding box of more than INT64_MAX elements (so
// no volume computed here or later overflows), no overlap, no hole in their
// bounding box. Returns that box (all zeros when every box is empty).
box_nd check_tiling(const std::vector<box_nd>& bs, std::size_t nd, const std::string& one) {
  const std::string all = one + "es";
  auto rank_box = [&](std::size_t r) { return "rank " + std::to_string(r) + " " + box_str(bs[r]); };
  if (bs.empty()) throw value_error(all + ": there are none (one box per rank)");
  if (nd < 1) throw value_error(all + " need at least one dimension");
  for (std::size_t r = 0; r < bs.size(); ++r) {
    if (bs[r].lo.size() != nd || bs[r].hi.size() != nd)
      throw shape_error(one + " of " + rank_box(r) + " has " + std::to_string(bs[r].lo.size()) +
                        " lower and " + std::to_string(bs[r].hi.size()) + " upper bounds, not " +
                        std::to_string(nd));
    for (std::size_t d = 0; d < nd; ++d)
      if (bs[r].hi[d] < bs[r].lo[d])
        throw value_error(one + " of " + rank_box(r) + " ends before it starts on axis " +
                          std::to_string(d));
  }
  // Element counts without overflow (box_nd::volume() is safe once these pass).
  auto count = [](const box_nd& b, std::int64_t& v) {
    v = 0;
    if (b.empty()) return true;  // whatever its other extents
    v = 1;
    for (std::size_t d = 0; d < b.lo.size(); ++d) {
      std::int64_t e;
      if (__builtin_sub_overflow(b.hi[d], b.lo[d], &e) || __builtin_mul_overflow(v, e, &v)) return false;
    }
    return true;
  };
  const std::string too_many = " holds more than 2^63 - 1 elements";
  std::int64_t v;
  for (std::size_t r = 0; r < bs.size(); ++r)
    if (!count(bs[r], v)) throw value_error(one + " of " + rank_box(r) + too_many);
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
        throw value_error(all + " of rank " + std::to_string(a) + " " + box_str(bs[a]) + " and rank " +
                          std::to_string(b) + " " + box_str(bs[b]) + " overlap in " +
                          box_str(intersect(bs[a], bs[b])));
      }
  // Bounding box of the non-empty boxes.
  box_nd g{index_vec(nd, 0), index_vec(nd, 0)};
  for (std::size_t i = 0; i < order.size(); ++i)
    for (std::size_t d = 0; d < nd; ++d) {
      const box_nd& b = bs[order[i]];
      g.lo[d] = i ? std::min(g.lo[d], b.lo[d]) : b.lo[d];
      g.hi[d] = i ? std::max(g.hi[d], b.hi[d]) : b.hi[d];
    }
  std::int64_t whole;
  if (!count(g, whole)) throw value_error(all + " span a bounding box " + box_str(g) + " that" + too_many);
  // Without overlaps, the boxes tile their bounding box iff their volumes add up
  // (and the sum cannot overflow: disjoint boxes inside g hold at most `whole`).
  std::int64_t covered = 0;
  for (const auto& b : bs) covered += b.volume();
  if (covered != whole) {
    std::string list;
    for (std::size_t r = 0; r < bs.size() && r < 16; ++r) list += (r ? ", " : "") + rank_box(r);
    if (bs.size() > 16) list += ", ...";
    throw value_error(all + " leave a hole: they cover " + std::to_string(covered) + " of the " +
                      std::to_string(whole) + " elements of their bounding box " + box_str(g) + " (" + list + ")");
  }
  return g;
}

}  // namespace

box_distribution::box_distribution(index_vec shape, std::vector<box_nd> boxes)
    : shape_(std::move(shape)), boxes_(std::move(boxes)) {
  const std::string where = "ember::box_distribution: the box";
  for (std::size_t d = 0; d < shape_.size(); ++d)
    if (shape_[d] < 0)
      throw value_error("ember::box_distribution: negative extent " + std::to_string(shape_[d]) + " on axis " +
                        std::to_string(d) + " in shape " + detail::shape_str(shape_));
  const box_nd g = check_tiling(boxes_, shape_.size(), where);
  // They tile g; g must be [0, shape) (or hold nothing when the shape does not).
  const box_nd whole{index_vec(shape_.size(), 0), shape_};
  if (whole.empty() ? !g.empty() : g != whole)
    throw value_error(where + "es tile " + box_str(g) + ", not the array of shape " + detail::shape_str(shape_) +
                      " (" + box_str(whole) + ")");
}

std::vector<piece> box_distribution::pieces(int rank) const {
  const box_nd& b = boxes_[std::size_t(rank)];
  if (b.empty()) return {};
  index_vec ext(std::size_t(b.ndim()));
  for (int d = 0; d < b.ndim(); ++d) ext[std::size_t(d)] = b.extent(d);
  return {piece{b, 0, row_major_strides(ext)}};
}

box_nd check_box_tilings(const std::vector<box_nd>& in, const std::vector<box_nd>& out) {
  if (in.size() != out.size())
    throw value_error("ember::reshape_boxes: " + std::to_string(in.size()) + " input boxes but " +
                      std::to_string(out.size()) + " output boxes (one of each per rank)");
  const std::size_t nd = in.empty() ? 0 : in[0].lo.size();
  const box_nd gi = check_tiling(in, nd, "ember::reshape_boxes: the input box");
  const box_nd go = check_tiling(out, nd, "ember::reshape_boxes: the output box");
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
