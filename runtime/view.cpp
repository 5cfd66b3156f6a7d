#include "view.hpp"

#include <algorithm>
#include <sstream>

namespace ember {

namespace {
std::int64_t floor_div(std::int64_t a, std::int64_t b) {  // b > 0
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {  // b > 0
  return -floor_div(-a, b);
}
// How many of start, start + step, ..., start + (count-1) step lie in [lo, hi),
// and the position i of the first of them (they are consecutive in i).
std::pair<std::int64_t, std::int64_t> selected_in(const view_axis& a, std::int64_t lo, std::int64_t hi) {
  if (a.count == 0 || lo >= hi) return {0, 0};
  std::int64_t i0, i1;  // [i0, i1)
  if (a.step > 0) {
    i0 = std::max<std::int64_t>(0, ceil_div(lo - a.start, a.step));
    i1 = std::min(a.count, ceil_div(hi - a.start, a.step));
  } else {
    const std::int64_t s = -a.step;  // start - i s in [lo, hi): i in (start - hi, start - lo] / s
    i0 = std::max<std::int64_t>(0, floor_div(a.start - hi, s) + 1);
    i1 = std::min(a.count, floor_div(a.start - lo, s) + 1);
  }
  return {i0, std::max<std::int64_t>(0, i1 - i0)};
}
}  // namespace

slice_indices normalize_slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop, std::int64_t step,
                              std::int64_t n) {
  // Python's PySlice_AdjustIndices
  auto adjust = [&](std::optional<std::int64_t> v, std::int64_t dflt) {
    if (!v) return dflt;
    std::int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= n) {
      x = step < 0 ? n - 1 : n;
    }
    return x;
  };
  const std::int64_t b = adjust(start, step < 0 ? n - 1 : 0);
  const std::int64_t e = adjust(stop, step < 0 ? -1 : n);
  std::int64_t count = 0;
  if (step > 0 && b < e) count = (e - b - 1) / step + 1;
  if (step < 0 && e < b) count = (b - e - 1) / (-step) + 1;
  return {count > 0 ? b : 0, count};
}

std::uint64_t view_spec::hash() const {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  auto mix = [&](std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  for (const auto& a : axes) {
    mix(std::uint64_t(std::int64_t(a.base_axis)));
    mix(std::uint64_t(a.start));
    mix(std::uint64_t(a.step));
    mix(std::uint64_t(a.count));
  }
  mix(0xf1);
  for (auto f : fixed) mix(std::uint64_t(f));
  return h;
}

std::string view_spec::text(const index_vec& base_shape) const {
  std::ostringstream os;
  os << "[";
  std::size_t next = 0;  // next view axis
  bool first = true;
  auto sep = [&] {
    if (!first) os << ", ";
    first = false;
  };
  for (int b = 0; b < int(fixed.size()); ++b) {
    while (next < axes.size() && axes[next].base_axis < 0) {  // new axes before base axis b
      sep();
      os << "newaxis";
      ++next;
    }
    sep();
    if (fixed[std::size_t(b)] >= 0) {
      os << fixed[std::size_t(b)];
      continue;
    }
    const auto& a = axes[next++];
    const std::int64_t n = base_shape[std::size_t(b)];
    if (a.step == 1 && a.start == 0 && a.count == n) {
      os << ":";
      continue;
    }
    const std::int64_t last = a.start + (a.count - 1) * a.step;
    if (a.count == 0) os << "0:0";
    else if (a.step > 0) os << a.start << ":" << last + 1;
    else os << a.start << ":" << (last == 0 ? std::string() : std::to_string(last - 1));
    if (a.step != 1) os << ":" << a.step;
  }
  while (next < axes.size()) {
    sep();
    os << "newaxis";
    ++next;
  }
  os << "]";
  return os.str();
}

view_geometry::view_geometry(layout base, view_spec spec, bool reversed_ok)
    : base_(std::move(base)), spec_(std::move(spec)), logical_(replicated_layout({}, 1)) {
  const int n = base_.ndim();
  if (int(spec_.fixed.size()) != n)
    throw value_error("ember: a view of an array of dimension " + std::to_string(n) + " selects " +
                      std::to_string(spec_.fixed.size()) + " axes");
  index_vec shape;
  std::vector<int> seen(std::size_t(n), 0);
  for (int b = 0; b < n; ++b) {
    const std::int64_t f = spec_.fixed[std::size_t(b)];
    if (f >= base_.shape()[std::size_t(b)])
      throw value_error("ember: index " + std::to_string(f) + " is out of bounds for axis " + std::to_string(b) +
                        " with size " + std::to_string(base_.shape()[std::size_t(b)]));
    if (f >= 0) seen[std::size_t(b)] = 1;
  }
  for (const auto& a : spec_.axes) {
    if (a.base_axis < 0) {  // a new axis (of extent 0 once sliced empty)
      if (a.count != 0 && a.count != 1) throw value_error("ember: internal: a new axis of extent " + std::to_string(a.count));
      shape.push_back(a.count);
      continue;
    }
    const std::int64_t e = base_.shape()[std::size_t(a.base_axis)];
    if (a.step == 0 || a.count < 0 || seen[std::size_t(a.base_axis)]++ ||
        (a.count > 0 && (a.start < 0 || a.start >= e || a.start + (a.count - 1) * a.step < 0 ||
                         a.start + (a.count - 1) * a.step >= e)))
      throw value_error("ember: internal: an invalid view of axis " + std::to_string(a.base_axis) + " (start " +
                        std::to_string(a.start) + ", step " + std::to_string(a.step) + ", count " +
                        std::to_string(a.count) + ") of shape " + detail::shape_str(base_.shape()));
    shape.push_back(a.count);
  }
  for (int b = 0; b < n; ++b)
    if (!seen[std::size_t(b)]) throw value_error("ember: internal: a view leaves axis " + std::to_string(b) + " out");

  shape_ = shape;
  const int P = base_.nranks();
  if (!base_.split()) {
    logical_ = replicated_layout(shape, P);
    return;
  }
  const int k = *base_.split();
  index_vec extents(std::size_t(P), 0);
  if (spec_.fixed[std::size_t(k)] >= 0) {
    // the split axis is indexed: the view lives on the rank that owns that index
    if (shape.empty())
      throw value_error("ember: a 0-d view of a split array lives on one rank; use item() for one element");
    const std::int64_t f = spec_.fixed[std::size_t(k)];
    for (int r = 0; r < P; ++r)
      if (base_.extent(r) > 0 && f >= base_.offset(r) && f < base_.offset(r) + base_.extent(r)) extents[std::size_t(r)] = shape[0];
    logical_ = layout(shape, 0, std::move(extents));
    return;
  }
  int v = 0;  // the view axis that selects from the split axis
  while (spec_.axes[std::size_t(v)].base_axis != k) ++v;
  const view_axis& a = spec_.axes[std::size_t(v)];
  int holders = 0;
  for (int r = 0; r < P; ++r) {
    extents[std::size_t(r)] = selected_in(a, base_.offset(r), base_.offset(r) + base_.extent(r)).second;
    holders += extents[std::size_t(r)] > 0;
  }
  // Read backwards along the split axis, the view's first elements are on the
  // last ranks: that is no layout unless one rank holds them all.
  if (a.step < 0 && holders > 1 && reversed_ok) {
    reversed_ = true;
    split_view_axis_ = v;
    std::reverse(extents.begin(), extents.end());  // the mirror: rank r holds what rank P-1-r has
    logical_ = layout(shape, v, std::move(extents));
    return;
  }
  if (a.step < 0 && holders > 1)
    throw value_error("ember: a view with step " + std::to_string(a.step) + " along the split axis " +
                      std::to_string(k) + " of an array of shape " + detail::shape_str(base_.shape()) +
                      " (its elements would be in reverse rank order) is not supported yet; resplit the array "
                      "along another axis first");
  logical_ = layout(shape, v, std::move(extents));
}

const layout& view_geometry::mirror() const {
  if (!reversed_) throw value_error("ember: internal: only a view read backwards along the split axis has a mirror");
  return logical_;
}

const layout& view_geometry::logical() const {
  if (reversed_) throw value_error("ember: internal: a view read backwards along the split axis has no layout");
  return logical_;
}

box_nd view_geometry::box(int rank) const {
  if (!reversed_) return logical_.box_of(rank);
  box_nd b;
  b.lo.assign(shape_.size(), 0);
  b.hi = shape_;
  const view_axis& a = spec_.axes[std::size_t(split_view_axis_)];
  const auto [i0, c] = selected_in(a, base_.offset(rank), base_.offset(rank) + base_.extent(rank));
  b.lo[std::size_t(split_view_axis_)] = c > 0 ? i0 : 0;
  b.hi[std::size_t(split_view_axis_)] = c > 0 ? i0 + c : 0;
  return b;
}

std::int64_t view_geometry::local_start(int rank, int b) const {
  const bool split_here = base_.split() && *base_.split() == b;
  const std::int64_t off = split_here ? base_.offset(rank) : 0;
  const std::int64_t f = spec_.fixed[std::size_t(b)];
  if (f >= 0) return f - off;
  for (const auto& a : spec_.axes) {
    if (a.base_axis != b) continue;
    if (!split_here) return a.start;
    const auto [i0, c] = selected_in(a, off, off + base_.extent(rank));
    return c > 0 ? a.start + i0 * a.step - off : 0;
  }
  return 0;
}

std::int64_t view_geometry::offset(int rank) const {
  if ((reversed_ ? box(rank).volume() : logical_.local_size(rank)) == 0) return 0;
  const index_vec str = row_major_strides(base_.lshape(rank));
  std::int64_t o = 0;
  for (int b = 0; b < base_.ndim(); ++b) o += local_start(rank, b) * str[std::size_t(b)];
  return o;
}

void view_geometry::strides(int rank, std::int64_t* out) const {
  // row-major strides of the base block, without allocating
  const int n = base_.ndim();
  const int k = base_.split() ? *base_.split() : -1;
  for (std::size_t v = 0; v < spec_.axes.size(); ++v) {
    const auto& a = spec_.axes[v];
    if (a.base_axis < 0) {
      out[v] = 0;
      continue;
    }
    std::int64_t s = 1;
    for (int d = n - 1; d > a.base_axis; --d) s *= d == k ? base_.extent(rank) : base_.shape()[std::size_t(d)];
    out[v] = s * a.step;
  }
}

index_vec view_geometry::strides(int rank) const {
  index_vec s(spec_.axes.size());
  strides(rank, s.data());
  return s;
}

bool view_geometry::is_whole() const {
  if (int(spec_.axes.size()) != base_.ndim()) return false;
  for (int b = 0; b < base_.ndim(); ++b) {
    const auto& a = spec_.axes[std::size_t(b)];
    if (a.base_axis != b || a.start != 0 || a.step != 1 || a.count != base_.shape()[std::size_t(b)]) return false;
  }
  return true;
}

exchange_segment segment_into(const view_geometry& g, int rank, index_vec src_strides) {
  exchange_segment seg;
  const box_nd b = g.box(rank);
  seg.extents.resize(b.lo.size());
  for (std::size_t d = 0; d < seg.extents.size(); ++d) seg.extents[d] = b.hi[d] - b.lo[d];
  seg.src_strides = std::move(src_strides);
  seg.dst_offset = g.offset(rank);
  seg.dst_strides = g.strides(rank);
  return seg;
}

std::vector<piece> view_distribution::pieces(int rank) const {
  return {piece{g_->box(rank), g_->offset(rank), g_->strides(rank)}};
}

ghost_rows::ghost_rows(layout have, layout need) : have_(std::move(have)), need_(std::move(need)) {
  if (have_.shape() != need_.shape() || !have_.split() || !need_.split() || *have_.split() != *need_.split())
    throw value_error("ember: internal: a halo between layouts of shapes " + detail::shape_str(have_.shape()) + " and " +
                      detail::shape_str(need_.shape()) + " split along different axes");
  for (int d = 0; d < need_.ndim(); ++d)
    if (d != axis()) row_elems_ *= need_.shape()[std::size_t(d)];
}

ghost_rows::rows_of ghost_rows::rows(int rank) const {
  rows_of r;
  const std::int64_t n_lo = need_.offset(rank), n_hi = n_lo + need_.extent(rank);
  const std::int64_t f_lo = have_.offset(rank), f_hi = f_lo + have_.extent(rank);
  const std::int64_t o_lo = std::max(n_lo, f_lo), o_hi = std::min(n_hi, f_hi);
  if (o_hi <= o_lo) {  // nothing of it here: all of it is ghost rows
    r.top_lo = n_lo;
    r.top = n_hi - n_lo;
    r.own_lo = r.bottom_lo = n_hi;
    return r;
  }
  r.top_lo = n_lo;
  r.top = o_lo - n_lo;
  r.own_lo = o_lo;
  r.own = o_hi - o_lo;
  r.bottom_lo = o_hi;
  r.bottom = n_hi - o_hi;
  return r;
}

std::vector<piece> ghost_rows::pieces(int rank) const {
  const rows_of r = rows(rank);
  std::vector<piece> out;
  auto block = [&](std::int64_t lo, std::int64_t n, std::int64_t offset) {
    if (n == 0) return;
    piece p;
    p.global.lo.assign(need_.shape().size(), 0);
    p.global.hi = need_.shape();
    p.global.lo[std::size_t(axis())] = lo;
    p.global.hi[std::size_t(axis())] = lo + n;
    index_vec ext = need_.shape();
    ext[std::size_t(axis())] = n;
    p.offset = offset;
    p.strides = row_major_strides(ext);
    out.push_back(std::move(p));
  };
  block(r.top_lo, r.top, 0);
  block(r.bottom_lo, r.bottom, r.top * row_elems_);
  return out;
}

std::int64_t ghost_rows::local_size(int rank) const {
  const rows_of r = rows(rank);
  return (r.top + r.bottom) * row_elems_;
}

}  // namespace ember
