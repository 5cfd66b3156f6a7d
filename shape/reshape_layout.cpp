#include "reshape_layout.hpp"

#include <algorithm>
#include <functional>
#include <string>

#include "../runtime/checked.hpp"

namespace ember {
namespace {

std::int64_t product(const index_vec& v, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

index_vec suffix_products(const index_vec& s) {
  index_vec out(s.size() + 1, 1);
  for (std::size_t j = s.size(); j-- > 0;) out[j] = out[j + 1] * s[j];
  return out;
}

// The range [lo, hi) of a mixed-radix number with digits of extents `ext` (most
// significant first), as boxes of digits: at most 2 * ext.size() - 1 of them.
// Each box comes with the number its lower corner stands for.
struct digit_box {
  index_vec lo, hi;
  std::int64_t first = 0;
};
std::vector<digit_box> decompose(std::int64_t lo, std::int64_t hi, const index_vec& ext) {
  std::vector<digit_box> out;
  const std::size_t k = ext.size();
  if (lo >= hi) return out;
  if (k == 0) {
    out.push_back({{}, {}, 0});
    return out;
  }
  index_vec weight(k, 1);
  for (std::size_t i = k - 1; i-- > 0;) weight[i] = weight[i + 1] * ext[i + 1];
  index_vec prefix;  // fixed digits of the levels above
  std::int64_t base = 0;
  // [lo, hi) relative to the block of `level` (0 <= lo < hi <= ext[level] * weight[level]).
  std::function<void(std::int64_t, std::int64_t, std::size_t)> rec = [&](std::int64_t l, std::int64_t h,
                                                                          std::size_t level) {
    if (l >= h) return;
    const std::int64_t w = weight[level];
    auto emit = [&](std::int64_t d0, std::int64_t d1) {  // digits [d0, d1) at `level`, everything below whole
      digit_box b;
      b.lo = prefix;
      b.hi = prefix;
      for (auto& v : b.hi) ++v;
      b.lo.push_back(d0);
      b.hi.push_back(d1);
      for (std::size_t i = level + 1; i < k; ++i) {
        b.lo.push_back(0);
        b.hi.push_back(ext[i]);
      }
      b.first = base + d0 * w;
      out.push_back(std::move(b));
    };
    std::int64_t d0 = l / w;
    const std::int64_t d1 = h / w;
    if (l % w == 0 && h % w == 0) return emit(d0, d1);
    auto descend = [&](std::int64_t d, std::int64_t sl, std::int64_t sh) {
      prefix.push_back(d);
      base += d * w;
      rec(sl, sh, level + 1);
      base -= d * w;
      prefix.pop_back();
    };
    if (d0 == d1) return descend(d0, l - d0 * w, h - d0 * w);
    if (l % w != 0) descend(d0++, l % w, w);
    if (d1 > d0) emit(d0, d1);
    if (h % w != 0) descend(d1, 0, h % w);
  };
  rec(lo, hi, 0);
  return out;
}

std::int64_t kept_elements(const distribution& a, const distribution& b, int rank) {
  std::int64_t kept = 0;
  const auto pa = a.pieces(rank), pb = b.pieces(rank);
  for (const auto& x : pa)
    for (const auto& y : pb) kept += intersect(x.global, y.global).volume();
  return kept;
}

std::string split_text(const layout& l) { return detail::axis_str(l.split()); }

}  // namespace

std::optional<shape_refinement> refine_shapes(const index_vec& a, const index_vec& b) {
  const index_vec sa = suffix_products(a), sb = suffix_products(b);
  if (sa[0] != sb[0] || sa[0] == 0) return std::nullopt;
  index_vec m(sa.begin(), sa.end());
  m.insert(m.end(), sb.begin(), sb.end());
  std::sort(m.begin(), m.end(), std::greater<>());
  m.erase(std::unique(m.begin(), m.end()), m.end());
  shape_refinement r;
  for (std::size_t i = 0; i + 1 < m.size(); ++i) {
    if (m[i] % m[i + 1] != 0) return std::nullopt;
    r.refined.push_back(m[i] / m[i + 1]);
  }
  auto pos = [&](std::int64_t v) { return int(std::find(m.begin(), m.end(), v) - m.begin()); };
  for (std::size_t j = 0; j < a.size(); ++j) r.a_groups.emplace_back(pos(sa[j]), pos(sa[j + 1]));
  for (std::size_t j = 0; j < b.size(); ++j) r.b_groups.emplace_back(pos(sb[j]), pos(sb[j + 1]));
  return r;
}

refined_distribution::refined_distribution(layout l, index_vec refined, std::vector<std::pair<int, int>> groups)
    : lay_(std::move(l)), refined_(std::move(refined)), groups_(std::move(groups)) {
  if (int(groups_.size()) != lay_.ndim())
    throw value_error("ember: internal: a refinement of " + std::to_string(groups_.size()) + " axes for a layout of " +
                      std::to_string(lay_.ndim()));
}

std::vector<piece> refined_distribution::pieces(int rank) const {
  const index_vec ls = lay_.lshape(rank);
  if (product(ls, 0, ls.size()) == 0) return {};
  const index_vec lstr = row_major_strides(ls);
  index_vec str(refined_.size(), 0);
  for (std::size_t j = 0; j < groups_.size(); ++j) {
    const auto [c0, c1] = groups_[j];
    for (int c = c0; c < c1; ++c)
      str[std::size_t(c)] = lstr[j] * product(refined_, std::size_t(c) + 1, std::size_t(c1));
  }
  box_nd whole{index_vec(refined_.size(), 0), refined_};
  if (!lay_.split()) return {piece{whole, 0, str}};
  const int s = *lay_.split();
  const auto [c0, c1] = groups_[std::size_t(s)];
  const std::int64_t lo = lay_.offset(rank), hi = lo + lay_.extent(rank);
  const index_vec ext(refined_.begin() + c0, refined_.begin() + c1);
  std::vector<piece> out;
  for (const auto& d : decompose(lo, hi, ext)) {
    piece p{whole, (d.first - lo) * lstr[std::size_t(s)], str};
    for (int c = c0; c < c1; ++c) {
      p.global.lo[std::size_t(c)] = d.lo[std::size_t(c - c0)];
      p.global.hi[std::size_t(c)] = d.hi[std::size_t(c - c0)];
    }
    out.push_back(std::move(p));
  }
  return out;
}

layout reshape_target(const layout& src, const index_vec& shape, std::optional<std::optional<int>> split) {
  const int P = src.nranks();
  const std::int64_t n = src.numel();
  std::int64_t m = 1;
  for (auto e : shape) {
    if (e < 0) throw value_error("ember::reshape: negative dimension in the new shape " + detail::shape_str(shape));
    m *= e;
  }
  if (m != n)
    throw shape_error("ember::reshape: cannot reshape an array of size " + std::to_string(n) + " and shape " +
                      detail::shape_str(src.shape()) + " into shape " + detail::shape_str(shape));
  if (split && *split && (**split < 0 || **split >= int(shape.size())))
    throw axis_error("ember::reshape: split axis " + std::to_string(**split) + " is out of bounds for the new shape " +
                     detail::shape_str(shape));
  if (split && !*split) return replicated_layout(shape, P);
  if (!src.split() || n == 0) {
    if (split) return layout::balanced(shape, **split, P);
    return src.split() && !shape.empty() ? layout::balanced(shape, 0, P) : replicated_layout(shape, P);
  }
  auto ref = refine_shapes(src.shape(), shape);
  if (!ref) return reshape_target(reshape_target(src, {n}, std::nullopt), shape, split);

  const int s = *src.split();
  const index_vec& a = src.shape();
  const refined_distribution from(src, ref->refined, ref->a_groups);
  std::optional<layout> best;
  std::int64_t best_kept = -1;
  auto consider = [&](layout cand) {
    const refined_distribution to(cand, ref->refined, ref->b_groups);
    std::int64_t kept = 0;
    for (int r = 0; r < P; ++r) kept += kept_elements(from, to, r);
    if (kept > best_kept) {
      best_kept = kept;
      best = std::move(cand);
    }
  };
  const std::int64_t pre_a = product(a, 0, std::size_t(s)), in_a = product(a, std::size_t(s) + 1, a.size());
  for (int t = 0; t < int(shape.size()); ++t) {
    if (split && **split != t) continue;
    // Aligned: the same elements before axis t as before the source's split axis,
    // so each rank's rows carry over (rounded where they do not divide).
    const std::int64_t pre_b = product(shape, 0, std::size_t(t)), in_b = product(shape, std::size_t(t) + 1, shape.size());
    if (pre_b == pre_a && in_b > 0) {
      index_vec ext(std::size_t(P), 0);
      std::int64_t prev = 0;
      for (int r = 0; r < P; ++r) {
        const std::int64_t end = src.offset(r) + src.extent(r);
        const std::int64_t b = r == P - 1 ? shape[std::size_t(t)] : (end * in_a + in_b / 2) / in_b;
        ext[std::size_t(r)] = std::max<std::int64_t>(0, b - prev);
        prev = std::max(prev, b);
      }
      consider(layout(shape, t, std::move(ext)));
    }
    consider(layout::balanced(shape, t, P));
  }
  return *best;
}

reshape_geometry::reshape_geometry(layout src, index_vec shape, std::optional<std::optional<int>> split)
    : src_(std::move(src)), dst_(reshape_target(src_, shape, split)) {
  const int P = src_.nranks();
  if (src_.numel() == 0) {
    shares_ = true;  // no element anywhere
    return;
  }
  auto ref = refine_shapes(src_.shape(), dst_.shape());
  if (!ref) {
    flat_ = reshape_target(src_, {src_.numel()}, std::nullopt);
    return;
  }
  // A block's buffer holds its elements in increasing flat order, whatever the
  // layout: the same elements on a rank means the same bytes.
  const refined_distribution from(src_, ref->refined, ref->a_groups), to(dst_, ref->refined, ref->b_groups);
  shares_ = true;
  for (int r = 0; r < P && shares_; ++r)
    shares_ = src_.local_size(r) == dst_.local_size(r) && kept_elements(from, to, r) == src_.local_size(r);
}

std::vector<exchange> reshape_geometry::steps(int rank, std::size_t elem_size) const {
  std::vector<exchange> out;
  if (shares_ || src_.numel() == 0) return out;
  auto one = [&](const layout& a, const layout& b) {
    const auto ref = refine_shapes(a.shape(), b.shape());
    out.emplace_back(refined_distribution(a, ref->refined, ref->a_groups),
                     refined_distribution(b, ref->refined, ref->b_groups), rank, elem_size);
  };
  if (flat_) {
    one(src_, *flat_);
    one(*flat_, dst_);
  } else {
    one(src_, dst_);
  }
  return out;
}

traffic reshape_geometry::predicted(int rank, std::size_t elem_size) const {
  traffic t;
  for (const auto& e : steps(rank, elem_size)) t += e.predicted();
  return t;
}

void reshape_geometry::run(const communicator& c, const void* src_buf, void* dst_buf, std::size_t elem_size,
                           device_kind where) const {
  const int r = c.rank();
  if (shares_ || src_.numel() == 0) {
    if (src_buf != dst_buf)
      detail::copy_between(dst_buf, where, src_buf, where, src_.local_size(r) * std::int64_t(elem_size));
    return;
  }
  const auto ex = steps(r, elem_size);
  if (ex.size() == 1) return ex[0].run(c, src_buf, dst_buf, where);
  auto mid = detail::allocate_on(where, std::max<std::int64_t>(1, flat_->local_size(r)) * std::int64_t(elem_size));
  ex[0].run(c, src_buf, mid.get(), where);
  ex[1].run(c, mid.get(), dst_buf, where);
}

std::string reshape_geometry::describe(int rank, std::size_t elem_size) const {
  const traffic t = predicted(rank, elem_size);
  std::string s = "reshape " + detail::shape_str(src_.shape()) + " split " + split_text(src_) + " -> " +
                  detail::shape_str(dst_.shape()) + " split " + split_text(dst_) + ": ";
  if (shares_) return s + "nothing moves (the result shares the source's storage)";
  if (flat_) s += "through the flat array (no common refinement), ";
  return s + detail::bytes_str(t.bytes) + " in " + std::to_string(t.messages) + " messages sent by rank " +
         std::to_string(rank);
}

}  // namespace ember
