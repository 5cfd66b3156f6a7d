// Advanced indexing (selection), NumPy's semantics over distributed arrays:
//
//   auto s = a(mask);                 // a[mask]: the selected elements, 1-D in C order, balanced
//   ember::dndarray<double, 1> s = a(a > 0.0);
//   a(mask) = 0.0;                    // a[mask] = 0: in place, one fused pass
//   a(mask) = v;                      // a[mask] = v: v 1-D with one element per true value
//   a(mask) += 1.0;                   // += -= *= /=: a scalar or such a v
//   ember::masked(a, mask)            // the same as a(mask), as a function (also ember::select)
//   ember::nonzero(mask)              // std::array of N int64 arrays (C order, balanced)
//   ember::where(mask)                // = nonzero(mask) (ember::where(c, x, y) is the elementwise one)
//   ember::argwhere(mask)             // int64 (count, N), split 0, balanced
//   ember::take(a, idx, axis)         // np.take(a, idx, axis): idx an integer 1-D array of any split
//   ember::take(a, idx)               // np.take(a, idx): over the flattened array (C order)
//   a(idx)                            // a[idx] = take(a, idx, 0); a(idx) = v writes those rows
//   ember::put(a, idx, v)             // np.put: flat indices, in place, v cycled
//   ember::sum(a(mask)), a(idx) * 2   // a selection is an operand: taken at its first read, kept
//   view(mask), view(idx)             // the same on a view (through a block of its elements)
//
// Layouts of the results:
// - a mask selection, nonzero and argwhere: Heat's balanced split 0 over the
//   count (n/P each, the first n%P one more), whatever the layouts of a and mask.
//   The mask is evaluated (an expression: one fused pass) or moved into a's
//   layout; a replicated a is read as if split along 0 (no move). Each rank
//   filters its own block, one allgather shares the counts (per run of the
//   block when a is split along an axis k > 0, whose blocks interleave in C
//   order: one count per index of the axes before k), and the selected
//   elements travel once, straight to their balanced owner. a(mask) = v moves
//   the values once, each to the rank holding its selected element.
// - take along axis k:
//     a split along k:   the result is split along k, its rows following the
//                        index array's distribution (rank r gets the rows of
//                        its own indices); replicated indices: balanced. One
//                        distributed gather: the counts' all-to-all (which also
//                        carries every rank's first bad index), the requests to
//                        their owners, the rows back.
//     a split along another axis: the result keeps a's split and extents; every
//                        rank takes from its own block (the indices are
//                        allgathered when they are split). No other traffic.
//     a replicated:      split along k like the indices (local takes), or
//                        replicated when the indices are.
//   Flat take: the result follows the indices' distribution (replicated
//   indices on a split array: balanced); one element per request.
// - put: a keeps its layout. Duplicate indices: NumPy leaves the winner
//   unspecified; here the writes land in the index array's global order (rank
//   0's indices first), so the last one wins, as NumPy's serial loop does.
//
// Errors (thrown on every rank alike): a mask of another shape is a shape_error
// naming both shapes; an index out of range is an index_error naming the index,
// the axis and its size (and the rank whose indices hold it, found during the
// collective every rank makes anyway); a value array of the wrong length is a
// value_error with NumPy's wording.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "../dsl/eval.hpp"
#include "../dsl/factories.hpp"
#include "../dsl/shift.hpp"
#include "../dsl/view.hpp"
#include "gather.hpp"

namespace ember {

namespace detail {

template <class X>
index_vec selection_shape(const X& x) {
  if constexpr (is_dndarray<X>::value) {
    const auto s = x.shape();
    return index_vec(s.begin(), s.end());
  } else {
    return x.shape();
  }
}

template <class M>
constexpr int mask_rank() {
  if constexpr (is_dndarray<M>::value) return M::ndim_v;
  else return M::ndim;
}

template <class M>
concept bool_mask = (is_dndarray<M>::value || expression<M>) && std::is_same_v<typename M::value_type, bool>;
template <class I>
concept index_dtype = std::is_integral_v<I> && !std::is_same_v<I, bool>;

template <dtype T, int N>
void require_cpu(const dndarray<T, N>& a, const char* what) {
  if (a.device() != device_kind::cpu)
    throw value_error(std::string(what) + ": arrays in GPU memory are not supported yet (use to(ember::cpu))");
}

inline void check_mask_shape(const index_vec& a, const index_vec& m, const char* what) {
  if (a != m)
    throw shape_error(std::string(what) + ": the boolean mask of shape " + shape_str(m) +
                      " does not match the indexed array of shape " + shape_str(a));
}

// `mask` as a bool array laid out as `l` (a move or a fused evaluation into l).
template <int N, class M>
dndarray<bool, N> mask_in_layout(const M& mask, const layout& l, const communicator& c) {
  if constexpr (is_dndarray<M>::value) {
    require_cpu(mask, "ember: a boolean mask");
    if (mask.layout() == l) return mask;
    return mask.moved_to(l);
  } else {
    auto r = evaluate<this_code>(mask, l, nullptr);
    if (r.device != device_kind::cpu) throw value_error("ember: boolean masks of GPU arrays are not supported yet");
    dndarray<bool, N> b(r.lay, c, std::shared_ptr<bool[]>(r.storage, static_cast<bool*>(r.storage.get())));
    if (!(r.lay == l)) return b.moved_to(l);
    return b;
  }
}

// How a selection reads the elements of `a` in C order: as this rank's block
// of `lay`, `outer` runs of equal length (one when split along axis 0; the
// blocks of an array split along axis k > 0 interleave in C order, one run per
// index of the axes before k). A replicated array is read as if split along
// axis 0 (this rank's balanced rows of its copy): nothing moves.
template <dtype T, int N>
struct row_block {
  dndarray<T, N> holder;
  layout lay;  // the layout whose block this rank reads (the mask is brought into it)
  const T* data;
  std::int64_t n;  // elements read
  std::int64_t outer = 1;
  int axis = 0;  // lay's split axis (0 for a replicated array)
  compaction plan(const communicator& c, const bool* mask) const {
    return outer > 1 ? plan_compaction_runs(c, mask, outer, n / outer) : plan_compaction(c, mask, n);
  }
};
template <dtype T, int N>
row_block<T, N> rows_of(const dndarray<T, N>& a) {
  const layout& l = a.layout();
  const int r = a.comm().rank();
  if (!l.split()) {
    layout b = layout::balanced(l.shape(), 0, a.comm().size());
    const std::int64_t n0 = l.shape()[0], row = n0 > 0 ? l.numel() / n0 : 0;
    return {a, b, a.lstorage() + b.offset(r) * row, b.local_size(r), 1, 0};
  }
  const int k = *l.split();
  std::int64_t outer = 1;
  for (int d = 0; d < k; ++d) outer *= l.shape()[std::size_t(d)];
  return {a, l, a.lstorage(), l.local_size(r), outer, k};
}

// A bool mask as a run of whole rows per rank (rows_of), from an array or an expression.
template <class M>
auto mask_rows(const M& mask, const communicator& c) {
  constexpr int N = mask_rank<M>();
  if constexpr (is_dndarray<M>::value) {
    require_cpu(mask, "ember: a boolean mask");
    return rows_of(mask);
  } else {
    const layout b = layout::balanced(mask.shape(), 0, c.size());
    auto m = mask_in_layout<N>(mask, b, c);
    return row_block<bool, N>{m, b, m.lstorage(), b.local_size(c.rank()), 1, 0};
  }
}

template <class M>
const communicator& comm_of_operand(const M& m) {
  if constexpr (is_dndarray<M>::value) return m.comm();
  else return *comm_of(m);
}

// This rank's indices as int64 (a view of an int64 block, or a converted copy).
template <index_dtype I>
struct local_indices {
  std::vector<std::int64_t> copy;
  const std::int64_t* data = nullptr;
  std::int64_t n = 0;
};
template <index_dtype I>
local_indices<I> indices_of(const dndarray<I, 1>& idx, std::int64_t first = 0, std::int64_t count = -1) {
  local_indices<I> li;
  const std::int64_t n = count < 0 ? idx.lnumel() : count;
  li.n = n;
  if constexpr (std::is_same_v<I, std::int64_t>) {
    li.data = idx.lstorage() + first;
  } else {
    li.copy.resize(std::size_t(n));
    for (std::int64_t j = 0; j < n; ++j) li.copy[std::size_t(j)] = std::int64_t(idx.lstorage()[first + j]);
    li.data = li.copy.data();
  }
  return li;
}
// Every index on every rank (an allgather when the index array is split).
template <index_dtype I>
std::vector<std::int64_t> all_indices(const dndarray<I, 1>& idx) {
  const layout& l = idx.layout();
  const communicator& c = idx.comm();
  std::vector<I> all(std::size_t(l.numel()));
  if (!l.split() || c.size() == 1) {
    if (!all.empty()) std::memcpy(all.data(), idx.lstorage(), all.size() * sizeof(I));
  } else {
    std::vector<std::int64_t> counts, displs;
    for (int q = 0; q < c.size(); ++q) counts.push_back(l.extent(q)), displs.push_back(l.offset(q));
    c.allgatherv_bytes(idx.lstorage(), l.local_size(c.rank()), all.data(), counts, displs, sizeof(I));
  }
  return std::vector<std::int64_t>(all.begin(), all.end());
}

inline index_vec with_extent(index_vec s, int axis, std::int64_t m) {
  s[std::size_t(axis)] = m;
  return s;
}

inline std::uint64_t entry_hash(std::uint64_t a, std::uint64_t b, std::int64_t c = 0) {
  return arg_hash().add(a).add(b).add(std::uint64_t(c)).h;
}

}  // namespace detail

// ---- boolean masks ----

// a[mask]: the elements of `a` where `mask` (a bool array or expression of a's
// shape) is true, in C order, as a 1-D array split 0 and balanced. Collective.
template <dtype T, int N, class M>
  requires detail::bool_mask<M>
dndarray<T, 1> masked(const dndarray<T, N>& a, const M& mask) {
  detail::require_cpu(a, "ember::masked");
  const communicator& c = a.comm();
  detail::check_mask_shape(a.layout().shape(), detail::selection_shape(mask), "ember::masked");
  auto rb = detail::rows_of(a);
  auto m = detail::mask_in_layout<N>(mask, rb.lay, c);
  const auto p = rb.plan(c, m.lstorage());
  auto r = detail::agreed_array<T, 1>(layout(index_vec{p.total}, 0, p.extents), c, "ember::masked", a.layout().hash());
  detail::run_compaction(c, p, rb.data, m.lstorage(), rb.n, sizeof(T), r.lstorage());
  return r;
}
template <dtype T, int N, class M>
  requires detail::bool_mask<M>
dndarray<T, 1> select(const dndarray<T, N>& a, const M& mask) {
  return masked(a, mask);
}

// a(mask): converts to the selection (dndarray<T, 1>), and assigns through the mask.
template <dtype T, int N, class M>
class mask_selection {
 public:
  mask_selection(dndarray<T, N> a, M mask) : a_(std::move(a)), mask_(std::move(mask)) {
    detail::check_mask_shape(a_.layout().shape(), detail::selection_shape(mask_), "ember: a(mask)");
  }
  using value_type = T;
  static constexpr int ndim = 1;
  // As a value, a(mask) is NumPy's a[mask], taken at its first read (as an
  // operand, by eval or by a conversion) and kept by this object; a write
  // through it (a(mask) = v) forgets it. The handle shares the kept storage,
  // as `x = s` shares an array in Python.
  const dndarray<T, 1>& read() const {
    if (!taken_) taken_ = masked(a_, mask_);
    return *taken_;
  }
  operator dndarray<T, 1>() const { return read(); }  // NOLINT: a(mask) reads like an array
  dndarray<T, 1> eval() const { return read(); }
  const dndarray<T, N>& base() const { return a_; }
  const M& mask() const { return mask_; }

  // a[mask] = v for a scalar: one fused pass in place (where(mask, v, a)).
  template <class V>
    requires scalar_like<V>
  const mask_selection& operator=(const V& v) const {
    detail::require_cpu(a_, "ember: a(mask) = v");
    taken_.reset();
    dndarray<T, N> t = a_;
    t = ember::where(mask_, T(v), a_);
    return *this;
  }
  // a[mask] = v for a 1-D array or expression with one element per true value
  // (or one element, broadcast).
  template <class V>
    requires array_like<V>
  const mask_selection& operator=(const V& v) const {
    assign_values(to_array(v));
    return *this;
  }
  // a[mask] += v and the like: a scalar in one fused pass (where(mask, a + v, a)),
  // a 1-D v (one value per true element) through the selection.
#define EMBER_MASK_COMPOUND(OP)                                               \
  template <class V>                                                          \
    requires(scalar_like<V> || array_like<V>)                                 \
  const mask_selection& operator OP##=(const V& v) const {                    \
    taken_.reset();                                                           \
    if constexpr (scalar_like<V>) {                                           \
      dndarray<T, N> t = a_;                                                  \
      t = ember::where(mask_, astype<T>(a_ OP T(v)), a_);                     \
    } else {                                                                  \
      assign_values(ember::eval(astype<T>(masked(a_, mask_) OP to_array(v)))); \
    }                                                                         \
    return *this;                                                             \
  }
  EMBER_MASK_COMPOUND(+)
  EMBER_MASK_COMPOUND(-)
  EMBER_MASK_COMPOUND(*)
  EMBER_MASK_COMPOUND(/)
#undef EMBER_MASK_COMPOUND
  const mask_selection& operator=(const mask_selection& o) const {  // a(m) = b(m2): a setitem
    assign_values(to_array(o.read()));
    return *this;
  }

 private:
  dndarray<T, N> a_;
  M mask_;
  mutable std::optional<dndarray<T, 1>> taken_;

  template <class V>
  static auto to_array(const V& v) {
    if constexpr (is_dndarray<V>::value && std::is_same_v<typename V::value_type, T>) return v;
    else return ember::eval(astype<T>(v));
  }
  template <int K>
  void assign_values(const dndarray<T, K>& v) const {
    static_assert(K == 1, "ember: a(mask) = v needs a 1-D v (one value per true element of the mask) or a scalar");
    taken_.reset();
    detail::require_cpu(a_, "ember: a(mask) = v");
    detail::require_cpu(v, "ember: a(mask) = v");
    const communicator& c = a_.comm();
    const layout& la = a_.layout();
    const int r = c.rank();
    auto count_error = [&](std::int64_t total) {
      return value_error("ember: a(mask) = v: NumPy boolean array indexing assignment cannot assign " +
                         std::to_string(v.numel()) + " input values to the " + std::to_string(total) +
                         " output values where the mask is true");
    };
    if (!la.split()) {
      // every rank updates its whole copy: the mask and the values replicated
      auto m = detail::mask_in_layout<N>(mask_, la, c);
      const auto* mb = reinterpret_cast<const unsigned char*>(m.lstorage());
      std::int64_t total = 0;
      for (std::int64_t i = 0; i < la.numel(); ++i) total += mb[i];
      if (v.numel() != total && v.numel() != 1) throw count_error(total);
      if (v.numel() == 1 && total != 1) return void(*this = ember::item(v, {0}));
      auto vr = resplit(v, ember::none);
      detail::scatter_masked(a_.lstorage(), m.lstorage(), la.numel(), sizeof(T), vr.lstorage());
      return;
    }
    // every rank's selected elements take the values at their positions in C
    // order: one exchange from v's layout into the selection's distribution
    auto m = detail::mask_in_layout<N>(mask_, la, c);
    const auto rb = detail::rows_of(a_);
    const std::int64_t n = la.local_size(r);
    const auto p = rb.plan(c, m.lstorage());
    if (v.numel() != p.total && v.numel() != 1) throw count_error(p.total);
    if (v.numel() == 1 && p.total != 1) return void(*this = ember::item(v, {0}));
    auto vals = detail::agreed_array<T, 1>(layout(index_vec{p.total}, 0, p.counts), c, "ember: a(mask) = v");
    exchange(v.layout(), detail::selection_distribution(p, c.size()), r, sizeof(T)).run(c, v.lstorage(), vals.lstorage());
    detail::scatter_masked(a_.lstorage(), m.lstorage(), n, sizeof(T), vals.lstorage());
  }
};


// Coordinates of the true elements, one row per element in C order: int64 of
// shape (count, N), split 0, balanced (NumPy's argwhere).
template <class M>
  requires detail::bool_mask<M>
dndarray<std::int64_t, 2> argwhere(const M& mask) {
  constexpr int N = detail::mask_rank<M>();
  const communicator& c = detail::comm_of_operand(mask);
  auto rb = detail::mask_rows(mask, c);
  const auto p = rb.plan(c, rb.data);
  auto r = detail::agreed_array<std::int64_t, 2>(layout(index_vec{p.total, N}, 0, p.extents), c, "ember::argwhere",
                                                rb.lay.hash());
  detail::run_compaction_coords(c, p, rb.data, rb.lay.lshape(c.rank()), rb.axis, rb.lay.offset(c.rank()), r.lstorage());
  return r;
}

// The indices of the true elements, one int64 array per axis (NumPy's nonzero):
// each of length count, C order, split 0 and balanced.
template <class M>
  requires detail::bool_mask<M>
auto nonzero(const M& mask) {
  constexpr int N = detail::mask_rank<M>();
  auto aw = argwhere(mask);
  const communicator& c = aw.comm();
  const std::int64_t total = aw.shape()[0], k = aw.lshape()[0];
  const layout l1(index_vec{total}, 0, aw.layout().extents());
  std::array<dndarray<std::int64_t, 1>, std::size_t(N)> out;
  for (int d = 0; d < N; ++d) {
    out[std::size_t(d)] = detail::agreed_array<std::int64_t, 1>(l1, c, "ember::nonzero");
    std::int64_t* o = out[std::size_t(d)].lstorage();
    const std::int64_t* s = aw.lstorage();
    for (std::int64_t i = 0; i < k; ++i) o[i] = s[i * N + d];
  }
  return out;
}

// where(mask) with one argument is nonzero(mask), as in NumPy.
template <class M>
  requires detail::bool_mask<M>
auto where(const M& mask) {
  return nonzero(mask);
}

// ---- take and put ----

// np.take(a, indices, axis): the result has a's shape with `axis` replaced by
// the indices' length. Negative indices count from the end; out of range is
// index_error on every rank. Collective; see the header comment for layouts.
template <dtype T, int N, detail::index_dtype I>
dndarray<T, N> take(const dndarray<T, N>& a, const dndarray<I, 1>& indices, int axis) {
  const int ax = detail::normalized_axis(axis, N, "take");
  detail::require_cpu(a, "ember::take");
  detail::require_cpu(indices, "ember::take");
  const communicator& c = a.comm();
  const layout& la = a.layout();
  const layout& li = indices.layout();
  const int P = c.size(), r = c.rank();
  const std::int64_t n = la.shape()[std::size_t(ax)], m = li.numel();
  const index_vec rs = detail::with_extent(la.shape(), ax, m);
  const std::uint64_t h = detail::entry_hash(la.hash(), li.hash(), ax);
  if (la.split() == ax) {
    // the distributed gather: this rank's indices ask their owners for rows
    const layout rl = li.split() ? layout(rs, ax, li.extents()) : layout::balanced(rs, ax, P);
    auto res = detail::agreed_array<T, N>(rl, c, "ember::take", h);
    auto idx = li.split() ? detail::indices_of(indices) : detail::indices_of(indices, rl.offset(r), rl.extent(r));
    detail::take_along_split(c, la, a.lstorage(), sizeof(T), idx.data, idx.n, res.lstorage(), "ember::take");
    return res;
  }
  if (la.split()) {
    // split along another axis: every rank takes every index from its own block
    const layout rl(rs, *la.split(), la.extents());
    std::vector<std::int64_t> all = detail::all_indices(indices);
    const std::int64_t bad = detail::normalize_indices(all.data(), m, n, all.data());
    if (bad >= 0) {
      const auto orig = detail::all_indices(indices);  // the index as passed, for the message
      throw index_error(detail::index_message("ember::take", orig[std::size_t(bad)], ax, n));
    }
    auto res = detail::agreed_array<T, N>(rl, c, "ember::take", h);
    const index_vec ls = la.lshape(r);
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; ++d) outer *= ls[std::size_t(d)];
    for (int d = ax + 1; d < N; ++d) inner *= ls[std::size_t(d)];
    detail::take_local(a.lstorage(), sizeof(T), outer, n, inner, all.data(), m, res.lstorage());
    return res;
  }
  // a replicated: local takes, the result distributed like the indices
  const layout rl = li.split() ? layout(rs, ax, li.extents()) : layout::balanced(rs, std::nullopt, P);
  auto idx = detail::indices_of(indices);
  std::vector<std::int64_t> norm(std::size_t(idx.n));
  const std::int64_t bad = detail::normalize_indices(idx.data, idx.n, n, norm.data());
  if (li.split()) detail::agree_indices(c, bad >= 0, bad >= 0 ? idx.data[bad] : 0, n, ax, "ember::take");
  else if (bad >= 0) throw index_error(detail::index_message("ember::take", idx.data[bad], ax, n));
  auto res = detail::agreed_array<T, N>(rl, c, "ember::take", h);
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; ++d) outer *= la.shape()[std::size_t(d)];
  for (int d = ax + 1; d < N; ++d) inner *= la.shape()[std::size_t(d)];
  detail::take_local(a.lstorage(), sizeof(T), outer, n, inner, norm.data(), idx.n, res.lstorage());
  return res;
}

// np.take(a, indices) without an axis: over the flattened array (C order); the
// result has the indices' shape and follows their distribution (replicated
// indices on a split array: balanced).
template <dtype T, int N, detail::index_dtype I>
dndarray<T, 1> take(const dndarray<T, N>& a, const dndarray<I, 1>& indices) {
  if constexpr (N == 1) {
    return take(a, indices, 0);
  } else {
    detail::require_cpu(a, "ember::take");
    detail::require_cpu(indices, "ember::take");
    const communicator& c = a.comm();
    const layout& la = a.layout();
    const layout& li = indices.layout();
    const int P = c.size(), r = c.rank();
    const std::int64_t m = li.numel(), total = la.numel();
    const std::uint64_t h = detail::entry_hash(la.hash(), li.hash(), -1);
    if (la.split()) {
      const layout rl = li.split() ? layout(index_vec{m}, 0, li.extents()) : layout::balanced(index_vec{m}, 0, P);
      auto res = detail::agreed_array<T, 1>(rl, c, "ember::take", h);
      auto idx = li.split() ? detail::indices_of(indices) : detail::indices_of(indices, rl.offset(r), rl.extent(r));
      detail::take_flat(c, la, a.lstorage(), sizeof(T), idx.data, idx.n, res.lstorage(), "ember::take");
      return res;
    }
    const layout rl = li.split() ? layout(index_vec{m}, 0, li.extents()) : layout::balanced(index_vec{m}, std::nullopt, P);
    auto idx = detail::indices_of(indices);
    std::vector<std::int64_t> norm(std::size_t(idx.n));
    const std::int64_t bad = detail::normalize_indices(idx.data, idx.n, total, norm.data());
    if (li.split()) detail::agree_indices(c, bad >= 0, bad >= 0 ? idx.data[bad] : 0, total, 0, "ember::take");
    else if (bad >= 0) throw index_error(detail::index_message("ember::take", idx.data[bad], 0, total));
    auto res = detail::agreed_array<T, 1>(rl, c, "ember::take", h);
    detail::take_local(a.lstorage(), sizeof(T), 1, total, 1, norm.data(), idx.n, res.lstorage());
    return res;
  }
}

namespace detail {
template <class X>
concept array_or_expression = is_dndarray<X>::value || expression<X> || is_selection<X>::value;
// An array as it is, an expression (or a view) evaluated.
template <class X>
auto as_array(const X& x) {
  if constexpr (is_dndarray<X>::value) return x;
  else if constexpr (is_selection<X>::value) return x.read();
  else return ember::eval(x);
}
}  // namespace detail

// take with an expression or a view for the array or the indices: evaluated first.
template <class A, class X>
  requires((expression<A> || expression<X>) && detail::array_or_expression<A> && detail::array_or_expression<X>)
auto take(const A& a, const X& indices, int axis) {
  return take(detail::as_array(a), detail::as_array(indices), axis);
}
template <class A, class X>
  requires((expression<A> || expression<X>) && detail::array_or_expression<A> && detail::array_or_expression<X>)
auto take(const A& a, const X& indices) {
  return take(detail::as_array(a), detail::as_array(indices));
}
// a[mask] of an expression or a view: evaluated first.
template <class A, class M>
  requires(expression<A> && detail::bool_mask<M>)
auto masked(const A& a, const M& mask) {
  return masked(ember::eval(a), mask);
}

namespace detail {
// The values of a put aligned with this rank's indices (`first`, `count` of the
// index array's global order): values[(first + j) % L], as NumPy cycles them.
template <dtype T, class V>
std::vector<T> put_values(const V& values, const communicator& c, const layout& li, std::int64_t first,
                          std::int64_t count) {
  std::vector<T> out(static_cast<std::size_t>(count));
  if constexpr (scalar_like<V>) {
    std::fill(out.begin(), out.end(), T(values));
    (void)c;
    (void)li;
    (void)first;
  } else {
    auto v = [&] {
      if constexpr (is_dndarray<V>::value && std::is_same_v<typename V::value_type, T>) return values;
      else return ember::eval(astype<T>(values));
    }();
    static_assert(decltype(v)::ndim_v == 1, "ember::put: the values must be 1-D (or a scalar)");
    require_cpu(v, "ember::put");
    const std::int64_t L = v.numel(), m = li.numel();
    if (L == 0) {
      if (m > 0) throw value_error("ember::put: cannot put " + std::to_string(m) + " indices with an empty array of values");
      return out;
    }
    if (L == m && li.split()) {
      // the values already (or after one move) where the indices are
      auto vl = v.layout() == li ? v : v.moved_to(layout(index_vec{m}, 0, li.extents()));
      if (count > 0) std::memcpy(out.data(), vl.lstorage(), std::size_t(count) * sizeof(T));
      return out;
    }
    auto vr = resplit(v, ember::none);
    for (std::int64_t j = 0; j < count; ++j) out[std::size_t(j)] = vr.lstorage()[(first + j) % L];
  }
  return out;
}
}  // namespace detail

// np.put(a, indices, values): a.flat[indices[j]] = values[j % len(values)], in
// place (a keeps its layout). values: a scalar or a 1-D array/expression.
// Collective: a distributed scatter (one exchange of counts, then indices and
// values to their owners) when a is split; a replicated a gets every write on
// every rank.
template <dtype T, int N, detail::index_dtype I, class V>
  requires(scalar_like<V> || array_like<V>)
void put(const dndarray<T, N>& a, const dndarray<I, 1>& indices, const V& values) {
  detail::require_cpu(a, "ember::put");
  detail::require_cpu(indices, "ember::put");
  const communicator& c = a.comm();
  const layout& la = a.layout();
  const layout& li = indices.layout();
  const int r = c.rank();
  const std::int64_t total = la.numel(), m = li.numel();
  if (la.split()) {
    const std::int64_t first = li.split() ? li.offset(r) : 0, count = li.split() ? li.extent(r) : 0;
    // replicated indices: rank 0 makes every write (each once)
    const bool all_here = !li.split() && r == 0;
    auto vals = detail::put_values<T>(values, c, li, first, all_here ? m : count);
    auto idx = li.split() ? detail::indices_of(indices) : detail::indices_of(indices, 0, all_here ? m : 0);
    detail::put_flat(c, la, a.lstorage(), sizeof(T), idx.data, idx.n, vals.data(), "ember::put");
    return;
  }
  std::vector<std::int64_t> all = detail::all_indices(indices);
  std::vector<std::int64_t> norm(all.size());
  const std::int64_t bad = detail::normalize_indices(all.data(), m, total, norm.data());
  if (bad >= 0) throw index_error(detail::index_message("ember::put", all[std::size_t(bad)], 0, total));
  auto vals = detail::put_values<T>(values, c, layout::balanced(index_vec{m}, std::nullopt, c.size()), 0, m);
  detail::put_local(a.lstorage(), sizeof(T), norm.data(), m, vals.data(), m);
}

template <dtype T, int N, class X, class V>
  requires(expression<X> && (scalar_like<V> || array_like<V>))
void put(const dndarray<T, N>& a, const X& indices, const V& values) {
  put(a, ember::eval(indices), values);
}

// a(indices): NumPy's a[indices] along axis 0 (take(a, indices, 0)); assignable:
// a(indices) = v writes rows (v a scalar, or an array of the result's shape).
template <dtype T, int N, detail::index_dtype I>
class index_selection {
 public:
  index_selection(dndarray<T, N> a, dndarray<I, 1> idx) : a_(std::move(a)), idx_(std::move(idx)) {}
  using value_type = T;
  static constexpr int ndim = N;
  // As a value, a(indices) is NumPy's a[indices], taken at its first read and
  // kept by this object (as a(mask)); a write through it forgets it.
  const dndarray<T, N>& read() const {
    if (!taken_) taken_ = take(a_, idx_, 0);
    return *taken_;
  }
  operator dndarray<T, N>() const { return read(); }  // NOLINT
  dndarray<T, N> eval() const { return read(); }

  template <class V>
    requires(scalar_like<V> || array_like<V>)
  const index_selection& operator=(const V& v) const {
    assign(v);
    return *this;
  }
  const index_selection& operator=(const index_selection& o) const {
    assign(o.read());
    return *this;
  }
  // a[idx] += v is NumPy's a[idx] = a[idx] + v (buffered: a repeated index adds once).
#define EMBER_INDEX_COMPOUND(OP)                                  \
  template <class V>                                              \
    requires(scalar_like<V> || array_like<V>)                     \
  const index_selection& operator OP##=(const V& v) const {       \
    assign(ember::eval(astype<T>(take(a_, idx_, 0) OP v)));       \
    return *this;                                                 \
  }
  EMBER_INDEX_COMPOUND(+)
  EMBER_INDEX_COMPOUND(-)
  EMBER_INDEX_COMPOUND(*)
  EMBER_INDEX_COMPOUND(/)
#undef EMBER_INDEX_COMPOUND

 private:
  dndarray<T, N> a_;
  dndarray<I, 1> idx_;
  mutable std::optional<dndarray<T, N>> taken_;

  // Rows as flat indices: row i of a is elements [i * row, (i + 1) * row).
  template <class V>
  void assign(const V& v) const {
    taken_.reset();
    const communicator& c = a_.comm();
    const layout& li = idx_.layout();
    const int P = c.size(), r = c.rank();
    const std::int64_t n0 = a_.layout().shape()[0], m = li.numel();
    const std::int64_t row = n0 > 0 ? a_.layout().numel() / n0 : 0;
    // each index once: a split index array's own, or a balanced share of a replicated one
    const layout share = li.split() ? li : layout::balanced(index_vec{m}, 0, P);
    auto idx = li.split() ? detail::indices_of(idx_) : detail::indices_of(idx_, share.offset(r), share.extent(r));
    std::vector<std::int64_t> norm(std::size_t(idx.n));
    const std::int64_t bad = detail::normalize_indices(idx.data, idx.n, n0, norm.data());
    detail::agree_indices(c, bad >= 0, bad >= 0 ? idx.data[bad] : 0, n0, 0, "ember: a(indices) = v");
    index_vec fe;
    for (int q = 0; q < P; ++q) fe.push_back(share.extent(q) * row);
    const layout fl(index_vec{m * row}, 0, fe);
    dndarray<std::int64_t, 1> fidx(fl, c);  // this rank's rows as flat indices (no collective: fl is replicated)
    std::int64_t* f = fidx.lstorage();
    for (std::int64_t j = 0; j < idx.n; ++j)
      for (std::int64_t k = 0; k < row; ++k) f[j * row + k] = norm[std::size_t(j)] * row + k;
    if constexpr (scalar_like<V>) {
      put(a_, fidx, T(v));
    } else {
      auto val = [&] {
        if constexpr (is_dndarray<V>::value && std::is_same_v<typename V::value_type, T>) return v;
        else return ember::eval(astype<T>(v));
      }();
      constexpr int K = decltype(val)::ndim_v;
      static_assert(K == N, "ember: a(indices) = v needs a scalar or a v of the selection's rank");
      const index_vec want = detail::with_extent(a_.layout().shape(), 0, m);
      if (val.layout().shape() != want)
        throw shape_error("ember: a(indices) = v: a value of shape " + detail::shape_str(val.layout().shape()) +
                          " for the selection of shape " + detail::shape_str(want));
      auto vl = val.moved_to(layout(want, 0, share.extents()));
      dndarray<T, 1> flatv(fl, c, std::shared_ptr<T[]>(vl.lstorage_handle(), vl.lstorage()));
      put(a_, fidx, flatv);
    }
  }
};

namespace detail {
template <dtype T, int N, class S>
auto select_by(const dndarray<T, N>& a, const S& sel);
}  // namespace detail

// view(mask), view(indices): the view's elements are copied into a block; a read
// selects from it, a write updates it as an array's selection does and stores
// it back through the view (NumPy's v[m] = x writes into v's base). Two passes
// over the view's elements more than the same on an array.
template <class V, class S>
class view_selection {
  using T = typename V::value_type;
  static constexpr int M = V::ndim;
  using base_selection = decltype(detail::select_by(std::declval<const dndarray<T, M>&>(), std::declval<const S&>()));
  using taken_type = std::remove_cvref_t<decltype(std::declval<const base_selection&>().read())>;

 public:
  using value_type = T;
  static constexpr int ndim = taken_type::ndim_v;
  view_selection(V view, S sel) : view_(std::move(view)), sel_(std::move(sel)) {}
  const taken_type& read() const {  // taken at the first read and kept, as a(mask)
    if (!taken_) taken_ = detail::select_by(ember::eval(view_), sel_).read();
    return *taken_;
  }
  operator taken_type() const { return read(); }  // NOLINT
  taken_type eval() const { return read(); }

#define EMBER_VIEW_SELECTION_ASSIGN(OP)                                   \
  template <class X>                                                      \
    requires(scalar_like<X> || array_like<X>)                             \
  const view_selection& operator OP(const X& x) const {                   \
    update([&](const base_selection& s) { s OP x; });                     \
    return *this;                                                         \
  }
  EMBER_VIEW_SELECTION_ASSIGN(=)
  EMBER_VIEW_SELECTION_ASSIGN(+=)
  EMBER_VIEW_SELECTION_ASSIGN(-=)
  EMBER_VIEW_SELECTION_ASSIGN(*=)
  EMBER_VIEW_SELECTION_ASSIGN(/=)
#undef EMBER_VIEW_SELECTION_ASSIGN
  const view_selection& operator=(const view_selection& o) const {
    const taken_type v = o.read();
    update([&](const base_selection& s) { s = v; });
    return *this;
  }

 private:
  V view_;
  S sel_;
  mutable std::optional<taken_type> taken_;

  // The selection (a mask expression over the view, a value reading it) reads
  // the view's base before anything is stored back.
  template <class F>
  void update(F f) const {
    taken_.reset();
    dndarray<T, M> block = ember::eval(view_);
    f(detail::select_by(block, sel_));
    view_ = block;
  }
};

template <dtype T, int N, class M>
struct is_selection<mask_selection<T, N, M>> : std::true_type {};
template <dtype T, int N, detail::index_dtype I>
struct is_selection<index_selection<T, N, I>> : std::true_type {};
template <class V, class S>
struct is_selection<view_selection<V, S>> : std::true_type {};

// ember::eval(a(mask)), ember::eval(a(indices)): the selection as an array.
template <class S>
  requires is_selection<S>::value
auto eval(const S& s) {
  return s.eval();
}

namespace detail {
template <class V, class S>
auto select_view_by(const V& view, const S& sel) {
  return view_selection<V, S>(view, sel);
}

// dndarray::operator()(mask or indices) (declared in dsl/dndarray.hpp).
template <dtype T, int N, class S>
auto select_by(const dndarray<T, N>& a, const S& sel) {
  using V = typename S::value_type;
  if constexpr (std::is_same_v<V, bool>) {
    static_assert(mask_rank<S>() == N, "ember: a(mask) needs a boolean mask of the array's rank");
    return mask_selection<T, N, S>(a, sel);
  } else {
    static_assert(index_dtype<V>, "ember: a(x) with an array x needs a bool mask or integer indices");
    if constexpr (is_dndarray<S>::value) {
      return index_selection<T, N, V>(a, sel);
    } else {
      static_assert(S::ndim == 1, "ember: a(indices) needs 1-D indices");
      dndarray<V, 1> idx = ember::eval(sel);
      return index_selection<T, N, V>(a, idx);
    }
  }
}
}  // namespace detail

}  // namespace ember
