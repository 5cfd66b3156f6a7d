#include "layout.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "checked.hpp"

namespace ember {

std::int64_t box_nd::volume() const {
  // An empty box is checked first: its other extents may be anything (a box of
  // reshape_boxes with no elements), and are then never subtracted.
  if (empty()) return 0;
  std::int64_t v = 1;
  for (int d = 0; d < ndim(); ++d) v *= hi[d] - lo[d];
  return v;
}

bool box_nd::empty() const {
  for (int d = 0; d < ndim(); ++d)
    if (hi[d] <= lo[d]) return true;
  return false;
}

box_nd intersect(const box_nd& a, const box_nd& b) {
  box_nd r{a.lo, a.hi};
  for (int d = 0; d < a.ndim(); ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::max(r.lo[d], std::min(a.hi[d], b.hi[d]));
  }
  return r;
}

index_vec row_major_strides(const index_vec& extents) {
  index_vec s(extents.size(), 1);
  for (int d = int(extents.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * extents[d + 1];
  return s;
}

std::vector<int> distribution::owners(const box_nd&) const {
  std::vector<int> all(nranks());
  std::iota(all.begin(), all.end(), 0);
  return all;
}

void check_shape(const index_vec& shape) {
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0)
      throw value_error("ember: negative extent " + std::to_string(shape[d]) + " on axis " + std::to_string(d) +
                        " in shape " + detail::shape_str(shape));
  detail::checked_numel(shape, "ember");
}

void check_axis(int axis, int ndim, const char* where) {
  if (axis < 0 || axis >= ndim)
    throw axis_error(std::string("ember::") + where + ": axis " + std::to_string(axis) +
                     " is out of bounds for an array of dimension " + std::to_string(ndim));
}

index_vec layout::balanced_extents(std::int64_t n, int nranks) {
  index_vec e(std::size_t(nranks), n / nranks);
  for (int r = 0; r < n % nranks; ++r) ++e[r];
  return e;
}

std::shared_ptr<const layout::split_map> layout::make_map(index_vec extents) {
  auto m = std::make_shared<split_map>();
  const int P = int(extents.size());
  m->offsets.assign(std::size_t(P) + 1, 0);
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (int r = 0; r < P; ++r) {
    m->offsets[std::size_t(r) + 1] = m->offsets[std::size_t(r)] + extents[std::size_t(r)];
    h = (h ^ std::uint64_t(extents[std::size_t(r)])) * 0x100000001b3ull;
  }
  const std::int64_t n = m->offsets.back();
  bool bal = true;
  for (int r = 0; r < P && bal; ++r) bal = extents[std::size_t(r)] == n / P + (r < n % P ? 1 : 0);
  m->balanced = bal;
  m->hash = h;
  m->extents = std::move(extents);
  return m;
}

layout::layout(index_vec shape, std::optional<int> split, index_vec extents)
    : shape_(std::move(shape)), split_(split), nranks_(int(extents.size())) {
  check_shape(shape_);
  if (!split_) throw value_error("ember::layout: a split layout needs a split axis (use replicated_layout)");
  check_axis(*split_, int(shape_.size()), "layout");
  if (nranks_ < 1) throw value_error("ember::layout: no ranks");
  std::int64_t sum = 0;
  for (int r = 0; r < nranks_; ++r) {
    if (extents[std::size_t(r)] < 0)
      throw value_error("ember: negative extent " + std::to_string(extents[std::size_t(r)]) + " for rank " +
                        std::to_string(r) + " along split axis " + std::to_string(*split_) + " of shape " +
                        detail::shape_str(shape_));
    const auto next = detail::add_checked(sum, extents[std::size_t(r)]);
    if (!next)
      throw shape_error("ember: per-rank extents " + detail::shape_str(extents) + " along split axis " +
                        std::to_string(*split_) + " of shape " + detail::shape_str(shape_) +
                        " overflow a 64-bit sum; they must sum to " + std::to_string(shape_[std::size_t(*split_)]));
    sum = *next;
  }
  if (sum != shape_[std::size_t(*split_)])
    throw shape_error("ember: per-rank extents " + detail::shape_str(extents) + " along split axis " +
                      std::to_string(*split_) + " sum to " + std::to_string(sum) + ", but the global shape " +
                      detail::shape_str(shape_) + " has " + std::to_string(shape_[std::size_t(*split_)]) + " there");
  map_ = make_map(std::move(extents));
}

layout layout::with_shape(index_vec shape, int split) const {
  if (!map_) throw value_error("ember::layout::with_shape: the layout is not split");
  check_axis(split, int(shape.size()), "layout");
  if (shape[std::size_t(split)] != map_->offsets.back())
    throw shape_error("ember: extents summing to " + std::to_string(map_->offsets.back()) +
                      " cannot split axis " + std::to_string(split) + " of shape " + detail::shape_str(shape));
  layout l;
  l.shape_ = std::move(shape);
  l.split_ = split;
  l.map_ = map_;
  l.nranks_ = nranks_;
  return l;
}

std::uint64_t layout::hash() const {
  std::uint64_t h = 0x84222325cbf29ce4ull;
  auto mix = [&](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  mix(std::uint64_t(nranks_));
  for (auto s : shape_) mix(std::uint64_t(s));
  mix(split_ ? std::uint64_t(*split_) : ~0ull);
  if (map_) mix(map_->hash);
  return h;
}

const index_vec& layout::extents() const {
  static const index_vec none;
  return map_ ? map_->extents : none;
}

layout replicated_layout(index_vec shape, int nranks) {
  check_shape(shape);
  layout l;
  l.shape_ = std::move(shape);
  l.nranks_ = nranks;
  return l;
}

layout layout::balanced(index_vec shape, std::optional<int> split, int nranks) {
  if (!split) return replicated_layout(std::move(shape), nranks);
  check_axis(*split, int(shape.size()), "layout");
  if (shape[std::size_t(*split)] < 0 || nranks < 1)
    return layout(std::move(shape), split, balanced_extents(shape[std::size_t(*split)], nranks));  // throws
  // Balanced maps are shared per (extent, ranks): planning for 65536 ranks builds
  // many layouts over the same few maps.
  static std::map<std::pair<std::int64_t, int>, std::shared_ptr<const split_map>> cache;
  const auto key = std::make_pair(shape[std::size_t(*split)], nranks);
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() > 1024) cache.clear();
    it = cache.emplace(key, make_map(balanced_extents(key.first, nranks))).first;
  }
  check_shape(shape);
  layout l;
  l.shape_ = std::move(shape);
  l.split_ = split;
  l.map_ = it->second;
  l.nranks_ = nranks;
  return l;
}

std::int64_t layout::extent(int rank) const {
  return split_ ? map_->extents[std::size_t(rank)] : shape_.empty() ? 1 : shape_[0];
}
std::int64_t layout::offset(int rank) const { return split_ ? map_->offsets[std::size_t(rank)] : 0; }

index_vec layout::lshape(int rank) const {
  index_vec s = shape_;
  if (split_) s[std::size_t(*split_)] = map_->extents[std::size_t(rank)];
  return s;
}

std::vector<index_vec> layout::lshape_map() const {
  std::vector<index_vec> m;
  m.reserve(std::size_t(nranks_));
  for (int r = 0; r < nranks_; ++r) m.push_back(lshape(r));
  return m;
}

box_nd layout::box_of(int rank) const {
  box_nd b{index_vec(shape_.size(), 0), shape_};
  if (split_) {
    b.lo[std::size_t(*split_)] = map_->offsets[std::size_t(rank)];
    b.hi[std::size_t(*split_)] = map_->offsets[std::size_t(rank) + 1];
  }
  return b;
}

std::int64_t layout::numel() const {
  std::int64_t n = 1;
  for (auto s : shape_) n *= s;
  return n;
}

std::int64_t layout::local_size(int rank) const {
  std::int64_t n = 1;
  for (auto s : lshape(rank)) n *= s;
  return n;
}

std::vector<piece> layout::pieces(int rank) const {
  return {piece{box_of(rank), 0, row_major_strides(lshape(rank))}};
}

std::vector<int> layout::owners(const box_nd& b) const {
  if (!split_ || b.empty()) return distribution::owners(b);
  const int k = *split_;
  // Slabs are sorted along the split axis: binary search the first and last owner.
  const auto& off = map_->offsets;
  auto first = std::upper_bound(off.begin(), off.end(), b.lo[std::size_t(k)]) - off.begin() - 1;
  std::vector<int> r;
  for (auto q = std::max<std::ptrdiff_t>(first, 0); q < nranks_ && off[std::size_t(q)] < b.hi[std::size_t(k)]; ++q)
    if (map_->extents[std::size_t(q)] > 0) r.push_back(int(q));
  return r;
}

bool layout::is_balanced() const {
  if (!split_) return true;
  return map_->balanced;
}

index_vec extents_from_map(const layout& current, const std::vector<index_vec>& target_map) {
  const auto& shape = current.shape();
  if (!current.split())
    throw value_error("ember::redistribute: the array " + detail::shape_str(shape) +
                      " is not split (split=none); redistribute keeps the split axis, use resplit to split it");
  const int k = *current.split();
  if (int(target_map.size()) != current.nranks())
    throw value_error("ember::redistribute: target map has " + std::to_string(target_map.size()) +
                      " rows but the communicator has " + std::to_string(current.nranks()) + " ranks");
  index_vec e(target_map.size());
  for (std::size_t r = 0; r < target_map.size(); ++r) {
    const auto& row = target_map[r];
    if (row.size() != shape.size())
      throw shape_error("ember::redistribute: target map row for rank " + std::to_string(r) + " " +
                        detail::shape_str(row) + " has " + std::to_string(row.size()) +
                        " entries, the array " + detail::shape_str(shape) + " has " + std::to_string(shape.size()) +
                        " dimensions");
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (int(d) != k && row[d] != shape[d])
        throw shape_error("ember::redistribute: target map row for rank " + std::to_string(r) + " " +
                          detail::shape_str(row) + " differs from the global shape " + detail::shape_str(shape) +
                          " on axis " + std::to_string(d) + ", which is not the split axis " + std::to_string(k));
    e[r] = row[k];
  }
  layout check(shape, k, e);  // validates sums and signs
  return e;
}

}  // namespace ember
