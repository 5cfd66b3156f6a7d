// Indexing: a(i0, i1, ...) with NumPy's basic indexing, as lazy views.
//
//   a(3, ember::all)                   row 3 (drops axis 0)
//   a(ember::slice(1, -1), ember::all) rows 1 .. n-2
//   a(ember::all, ember::slice(ember::none, ember::none, -1))   columns reversed
//   a(ember::newaxis, ember::all)      a new axis of extent 1 in front
//
// A view references the base array's storage (building one copies nothing and
// allocates no block) and is an expression leaf like an array: the planner sees
// its layout (runtime/view.hpp: per-rank boxes, possibly unbalanced or empty) and
// computes on it where it lies or moves it. `dndarray<T, M> v = view` and
// `ember::eval(view)` materialize it; `view = expr` / `view = 0.0` write into the
// base array, reading the right side first (as NumPy does).
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>

#include "../planner/plan.hpp"
#include "../runtime/view.hpp"
#include "eval.hpp"
#include "ufuncs.hpp"
#include "reductions.hpp"

namespace ember {

// NumPy's start:stop:step. ember::none for a bound means "from the end that the
// step's sign starts at" (as an empty bound in Python).
struct slice {
  std::optional<std::int64_t> start, stop;
  std::int64_t step = 1;
  slice(std::optional<std::int64_t> stop_) : stop(stop_) {}  // NOLINT: slice(stop), as Python's
  slice(std::optional<std::int64_t> start_, std::optional<std::int64_t> stop_, std::int64_t step_ = 1)
      : start(start_), stop(stop_), step(step_) {}
};
// A new axis of extent 1 (NumPy's np.newaxis / None in an index).
struct newaxis_t {};
inline constexpr newaxis_t newaxis{};

namespace detail {
template <class I>
concept integer_index = std::integral<std::remove_cvref_t<I>> && !std::same_as<std::remove_cvref_t<I>, bool>;
template <class I>
concept index_argument = integer_index<I> || std::same_as<std::remove_cvref_t<I>, slice> ||
                         std::same_as<std::remove_cvref_t<I>, all_t> || std::same_as<std::remove_cvref_t<I>, newaxis_t>;

// How many axes of the indexed array the arguments consume, and the result's rank.
template <class... I>
inline constexpr int consumed_axes = (0 + ... + (std::same_as<std::remove_cvref_t<I>, newaxis_t> ? 0 : 1));
template <int N, class... I>
inline constexpr int view_ndim =
    N - (0 + ... + (integer_index<I> ? 1 : 0)) + (0 + ... + (std::same_as<std::remove_cvref_t<I>, newaxis_t> ? 1 : 0));

// One argument applied to the selection so far. `axes` is the selection of the
// array being indexed (for a view of a view, the first view's axes over the base);
// `next` the next of its axes to consume.
inline std::int64_t normalized_index(std::int64_t i, std::int64_t n, int axis) {
  const std::int64_t j = i < 0 ? i + n : i;
  if (j < 0 || j >= n)
    throw index_error("ember: index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(axis) +
                      " with size " + std::to_string(n));
  return j;
}

struct view_builder {
  const std::vector<view_axis>& in;  // the axes being indexed
  view_spec out;
  std::size_t next = 0;

  void add(std::int64_t i) {
    const view_axis a = in[next];
    const std::int64_t j = normalized_index(i, a.count, int(next));
    ++next;
    if (a.base_axis >= 0) out.fixed[std::size_t(a.base_axis)] = a.start + j * a.step;
  }
  void add(const slice& s) {
    if (s.step == 0) throw value_error("ember::slice: step cannot be zero (axis " + std::to_string(next) + ")");
    const view_axis a = in[next++];
    const auto si = normalize_slice(s.start, s.stop, s.step, a.count);
    view_axis b = a;
    b.count = si.count;
    if (a.base_axis >= 0) {
      b.start = si.count > 0 ? a.start + si.start * a.step : 0;
      b.step = a.step * s.step;
    }
    out.axes.push_back(b);
  }
  void add(all_t) { out.axes.push_back(in[next++]); }
  void add(newaxis_t) { out.axes.push_back(view_axis{-1, 0, 1, 1}); }
  void finish() {
    while (next < in.size()) out.axes.push_back(in[next++]);  // missing trailing axes: ember::all
  }
};

// The selection of a whole array (every axis, in order).
inline view_spec whole_spec(const index_vec& shape) {
  view_spec s;
  s.fixed.assign(shape.size(), -1);
  for (std::size_t d = 0; d < shape.size(); ++d) s.axes.push_back(view_axis{int(d), 0, 1, shape[d]});
  return s;
}

template <class... I>
view_spec select(const view_spec& from, const I&... idx) {
  view_builder b{from.axes, view_spec{{}, from.fixed}};
  (b.add(idx), ...);
  b.finish();
  return b.out;
}

}  // namespace detail

namespace detail {
// view(mask), view(indices) (indexing/indexing.hpp).
template <class V, class S>
auto select_view_by(const V& view, const S& sel);
}  // namespace detail

namespace expr {

// A view as an expression leaf: the base array's handle (the storage is read in
// place) and the geometry of the selection.
template <dtype T, int N, int M>
struct view_leaf : node_base {
  static_assert(M <= 32, "ember: views of more than 32 dimensions");
  using value_type = T;
  static constexpr int ndim = M;
  static constexpr bool exact_ndim = true;
  static constexpr int node_count = 1;
  dndarray<T, N> a;
  std::shared_ptr<const view_geometry> geo;

  view_leaf(dndarray<T, N> base, std::shared_ptr<const view_geometry> g) : a(std::move(base)), geo(std::move(g)) {}
  view_leaf(const view_leaf&) = default;
  view_leaf(view_leaf&&) noexcept = default;

  dims shape_dims() const { return to_dims(geo->shape()); }
  index_vec shape() const { return geo->shape(); }
  // Where the elements are; for a view read backwards along the split axis, the
  // mirror the planner moves it from (runtime/view.hpp).
  const layout& lay() const { return geo->planning_layout(); }
  const view_geometry* view() const { return geo.get(); }
  const std::shared_ptr<const view_geometry>& view_handle() const { return geo; }
  std::array<std::int64_t, std::size_t(M)> shape_array() const {
    std::array<std::int64_t, std::size_t(M)> s{};
    for (int d = 0; d < M; ++d) s[std::size_t(d)] = geo->shape()[std::size_t(d)];
    return s;
  }

  // A view of this view (indices relative to this view's axes).
  template <class... I>
    requires(detail::index_argument<I> && ...)
  auto operator()(const I&... idx) const {
    static_assert(detail::consumed_axes<I...> <= M, "ember: too many indices for the view");
    constexpr int R = detail::view_ndim<M, I...>;
    static_assert(R > 0, "ember: a 0-d view; use ember::item(a, {i, j, ...}) for one element");
    return view_leaf<T, N, R>(a, std::make_shared<const view_geometry>(geo->base(), detail::select(geo->spec(), idx...),
                                                                       /*reversed_ok=*/true));
  }

  // Advanced indexing of a view, as of an array: view(mask), view(indices)
  // (indexing/indexing.hpp).
  template <class S>
    requires detail::selection_operand<S>::value
  auto operator()(const S& sel) const {
    return detail::select_view_by(*this, sel);
  }

  // Setitem: writes into the base array's storage (collective).
  template <class R>
    requires(operand<R>)
  const view_leaf& operator=(const R& rhs) const {
    assign(rhs);
    return *this;
  }
  const view_leaf& operator=(const view_leaf& rhs) const {  // u(s) = u(t): a setitem, not a rebinding
    assign(rhs);
    return *this;
  }
  // a(0, ember::all) += b: the setitem of a(0, ember::all) + b (same casting
  // rule as the arrays' in-place operators, dsl/ufuncs.hpp).
#define EMBER_VIEW_INPLACE(SYM, NAME)                                                                 \
  template <class R>                                                                                  \
    requires(operand<R>)                                                                              \
  const view_leaf& operator SYM(const R& rhs) const {                                                 \
    auto e = ember::NAME(*this, rhs);                                                                 \
    static_assert(detail::same_kind_v<T, typename decltype(e)::value_type>,                           \
                  "ember: `view " #SYM " b` gives a value that does not cast to the array's dtype "   \
                  "under NumPy's same_kind rule; cast explicitly: view = ember::astype<T>(view op b)"); \
    assign(e);                                                                                        \
    return *this;                                                                                     \
  }
  EMBER_FOR_EACH_INPLACE(EMBER_VIEW_INPLACE)
#undef EMBER_VIEW_INPLACE

 private:
  template <class R>
  void assign(const R& rhs) const;
};

template <dtype T, int N, int M>
struct node_traits<view_leaf<T, N, M>> {
  static constexpr node_class kind = node_class::leaf;
};
template <dtype T, int N, int M>
struct is_strided_leaf<view_leaf<T, N, M>> : std::true_type {};

template <dtype T, int N, int M>
template <class R>
void view_leaf<T, N, M>::assign(const R& rhs) const {
  const communicator& c = a.comm();
  if (a.device() != device_kind::cpu)
    throw value_error("ember: assigning through a view of a GPU array is not supported yet");
  if (geo->reversed()) {
    // Read backwards along the split axis: store through the same elements read
    // forwards, the value reversed along that axis (unless it is broadcast there).
    view_spec fwd = geo->spec();
    const int v = geo->base().split() ? [&] {
      int k = 0;
      while (fwd.axes[std::size_t(k)].base_axis != *geo->base().split()) ++k;
      return k;
    }() : 0;
    view_axis& ax = fwd.axes[std::size_t(v)];
    ax.start += (ax.count - 1) * ax.step;
    ax.step = -ax.step;
    const view_leaf forward(a, std::make_shared<const view_geometry>(geo->base(), std::move(fwd)));
    if constexpr (scalar_like<R>) {
      forward.assign(rhs);
    } else {
      auto value = ember::eval(astype<T>(rhs));
      const int e = v - (M - value.ndim());  // the value's axis aligned with v (broadcasting from the right)
      if (e < 0 || value.shape()[std::size_t(e)] == 1) forward.assign(value);
      else forward.assign(flip(value, e));
    }
    return;
  }
  const int r = c.rank();
  const index_vec ls = geo->logical().lshape(r);
  char* out = reinterpret_cast<char*>(a.lstorage());
  if constexpr (scalar_like<R>) {
    const T v = T(rhs);
    copy_segment(segment_into(*geo, r, index_vec(std::size_t(M), 0)), reinterpret_cast<const char*>(&v), out, sizeof(T));
  } else {
    // The right side is evaluated first, into the layout the view's elements have
    // (broadcast as NumPy does), then stored through the view's strides.
    auto value = astype<T>(rhs);
    const index_vec rs = value.shape();
    const dims bs = broadcast_shapes(to_dims(geo->shape()), to_dims(rs), "setitem");
    if (bs != to_dims(geo->shape()))
      throw shape_error("ember: could not broadcast a value of shape " + detail::shape_str(rs) +
                        " into a view of shape " + detail::shape_str(geo->shape()));
    if (to_dims(rs) == to_dims(geo->shape())) {
      // one pass: the fused kernel writes the view's elements in place (through a
      // block first only when the right side reads this array: NumPy's order)
      std::shared_ptr<void> storage(std::shared_ptr<T[]>(), a.lstorage());
      detail::evaluate<detail::this_code>(value, geo->logical(), storage, geo.get());
      return;
    }
    const layout target = planner::needed_layout(geo->logical(), rs);
    auto res = detail::evaluate<detail::this_code>(value, target, nullptr);
    // strides of the value's local block, aligned on the right, 0 where broadcast
    index_vec istr(static_cast<std::size_t>(M), 0);
    const index_vec vls = res.lay.lshape(r);
    std::int64_t s = 1;
    for (int d = M - 1, e = int(vls.size()) - 1; d >= 0; --d, --e) {
      if (e < 0) continue;
      istr[std::size_t(d)] = vls[std::size_t(e)] == 1 && ls[std::size_t(d)] != 1 ? 0 : s;
      s *= vls[std::size_t(e)];
    }
    copy_segment(segment_into(*geo, r, std::move(istr)), static_cast<const char*>(res.storage.get()), out, sizeof(T));
  }
}

}  // namespace expr

namespace detail {
template <dtype T, int N, class... I>
auto make_view(const dndarray<T, N>& a, const I&... idx) {
  static_assert(consumed_axes<I...> <= N, "ember: too many indices for the array");
  constexpr int M = view_ndim<N, I...>;
  static_assert(M > 0, "ember: a 0-d view; use a.item({i, j, ...}) for one element");
  if (a.device() != device_kind::cpu) throw value_error("ember: views of GPU arrays are not supported yet");
  const layout& l = a.layout();
  return expr::view_leaf<T, N, M>(
      a, std::make_shared<const view_geometry>(l, select(whole_spec(l.shape()), idx...), /*reversed_ok=*/true));
}
}  // namespace detail

// One element, from the rank that holds it, on every rank (collective for a split
// array: one broadcast). Negative indices count from the end.
template <dtype T, int N>
T item(const dndarray<T, N>& a, const std::array<std::int64_t, std::size_t(N)>& index) {
  const layout& l = a.layout();
  const communicator& c = a.comm();
  index_vec g(static_cast<std::size_t>(N), 0);
  for (int d = 0; d < N; ++d) g[std::size_t(d)] = detail::normalized_index(index[std::size_t(d)], l.shape()[std::size_t(d)], d);
  int owner = -1;
  if (l.split()) {
    const int k = *l.split();
    for (int q = 0; q < c.size() && owner < 0; ++q)
      if (g[std::size_t(k)] >= l.offset(q) && g[std::size_t(k)] < l.offset(q) + l.extent(q)) owner = q;
  }
  T v{};
  if (!l.split() || owner == c.rank()) {
    const index_vec ls = l.lshape(c.rank()), str = row_major_strides(ls);
    std::int64_t o = 0;
    for (int d = 0; d < N; ++d)
      o += (g[std::size_t(d)] - (l.split() && *l.split() == d ? l.offset(c.rank()) : 0)) * str[std::size_t(d)];
    detail::copy_between(&v, device_kind::cpu, a.lstorage() + o, a.device(), std::int64_t(sizeof(T)));
  }
  if (l.split() && c.size() > 1) c.bcast(&v, 1, owner);
  return v;
}
template <dtype E, int N>
E dndarray<E, N>::item(const std::array<std::int64_t, std::size_t(N)>& index) const {
  return ember::item(*this, index);
}

}  // namespace ember
