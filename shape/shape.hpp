// Shape manipulation with NumPy's semantics (C order), for any split:
//
//   ember::reshape<2>(a, {2048, -1})        a view of a's storage when nothing moves
//   ember::flatten(a), ember::ravel(a)      1-D (flatten always copies)
//   ember::expand_dims(a, 1)                lazy views: a new axis,
//   ember::squeeze(a, 0), squeeze<M>(a)       dropped extent-1 axes,
//   ember::transpose(a, {2, 0, 1})            permuted axes (the split axis moves with them)
//   ember::moveaxis(a, 0, -1), swapaxes(a, 0, 2)
//   ember::concatenate({a, b}, 0), stack, hstack, vstack
//   ember::split(a, 4, 0), array_split(a, 3, 1), split(a, {2, 5}, 0)   views
//   ember::tile(a, {2, 1}), repeat(a, 3, 0)
//   ember::tril(a, k), triu(a, k), diagonal(a, k), diag(v, k), trace(a, k)
//   ember::meshgrid(x, y, {.indexing = ember::indexing::xy})
//   ember::pad(a, {{1, 1}, {2, 0}}, {.mode = ember::pad_mode::edge})
//
// What moves is the exchange engine's, with exact predicted bytes: a reshape is
// one move between two layouts of a common refinement of the shapes
// (shape/reshape_layout.hpp); a concatenation moves each input into its slab of
// the result (a view of the result as the destination). Each result's split is
// chosen so data moves as little as possible; `{.split = k}` overrides it.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "../dsl/factories.hpp"
#include "../dsl/shift.hpp"
#include "../dsl/view.hpp"
#include "../indexing/indexing.hpp"
#include "reshape_layout.hpp"

namespace ember {

struct shape_options {
  split_request split{};  // the result's split; by default the one that moves the least
};

namespace detail {

template <class A>
struct view_parts;
template <dtype T, int N>
struct view_parts<dndarray<T, N>> {
  using value_type = T;
  static constexpr int base_ndim = N, ndim = N;
  static const dndarray<T, N>& base(const dndarray<T, N>& a) { return a; }
  static view_spec spec(const dndarray<T, N>& a) { return whole_spec(a.layout().shape()); }
};
template <dtype T, int N, int M>
struct view_parts<expr::view_leaf<T, N, M>> {
  using value_type = T;
  static constexpr int base_ndim = N, ndim = M;
  static const dndarray<T, N>& base(const expr::view_leaf<T, N, M>& v) { return v.a; }
  static view_spec spec(const expr::view_leaf<T, N, M>& v) { return v.geo->spec(); }
};
// Arrays and views: what the view functions below re-select from.
template <class A>
concept viewable = requires { view_parts<std::remove_cvref_t<A>>::ndim; };

// A view of the same base with a new selection of `M` axes.
template <int M, class A>
auto reselect(const A& a, view_spec s) {
  using P = view_parts<std::remove_cvref_t<A>>;
  const auto& b = P::base(a);
  if (b.device() != device_kind::cpu) throw value_error("ember: views of GPU arrays are not supported yet");
  return expr::view_leaf<typename P::value_type, P::base_ndim, M>(
      b, std::make_shared<const view_geometry>(b.layout(), std::move(s), /*reversed_ok=*/true));
}

inline std::uint64_t hash_of(const index_vec& v, arg_hash h = {}) {
  h.add(v.size());
  for (auto x : v) h.add(std::uint64_t(x));
  return h.h;
}
inline std::optional<std::optional<int>> requested(const split_request& s) {
  if (!s.given) return std::nullopt;
  return s.axis;
}
inline std::uint64_t split_code(const split_request& s) { return !s.given ? 0 : s.axis ? std::uint64_t(*s.axis) + 2 : 1; }

// NumPy's one -1 in a new shape.
template <std::size_t M>
index_vec resolved_shape(const std::array<std::int64_t, M>& shape, std::int64_t n, const index_vec& from) {
  index_vec s(shape.begin(), shape.end());
  int unknown = -1;
  std::int64_t known = 1;
  for (std::size_t d = 0; d < M; ++d) {
    if (s[d] == -1) {
      if (unknown >= 0) throw value_error("ember::reshape: can only specify one unknown dimension in " + shape_str(s));
      unknown = int(d);
    } else if (s[d] < 0) {
      throw value_error("ember::reshape: negative dimension " + std::to_string(s[d]) + " in " + shape_str(s));
    } else {
      known *= s[d];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || n % known != 0)
      throw shape_error("ember::reshape: cannot reshape an array of size " + std::to_string(n) + " and shape " +
                        shape_str(from) + " into shape " + shape_str(s));
    s[std::size_t(unknown)] = n / known;
  }
  return s;
}

// Moves `src` into the elements of `dst` that `spec` selects (same shape as src):
// one exchange, from src's layout to that view of dst's storage.
template <dtype T, int N, int M>
void place_into(const dndarray<T, M>& src, const dndarray<T, N>& dst, view_spec spec) {
  auto g = std::make_shared<const view_geometry>(dst.layout(), std::move(spec));
  exchange(src.layout(), view_distribution(g), dst.comm().rank(), sizeof(T))
      .run(dst.comm(), src.lstorage(), dst.lstorage());
}

template <class A>
index_vec shape_vec(const A& a) {
  if constexpr (is_dndarray<A>::value) return a.layout().shape();
  else return a.shape();
}

template <class A>
auto materialized(const A& a) {
  if constexpr (is_dndarray<std::remove_cvref_t<A>>::value) return a;
  else return ember::eval(a);
}

inline void require_host(device_kind d, const char* what) {
  if (d != device_kind::cpu) throw value_error(std::string(what) + ": GPU arrays are not supported yet");
}
}  // namespace detail

// ---- reshape ----

// NumPy's reshape in C order (one -1 allowed). When every rank keeps the same
// elements (a split-0 array whose rank boundaries fall on rows of the new shape,
// a replicated array, one rank), the result shares the source's storage, as
// NumPy returns a view; otherwise the exchange engine moves what changes rank
// into a new array. The result's split keeps the most elements in place, or is
// `{.split = k}` / `{.split = ember::none}`. An expression is evaluated first.
template <std::size_t M, class A>
  requires(is_dndarray<std::remove_cvref_t<A>>::value || expr::is_node_v<std::remove_cvref_t<A>>)
auto reshape(const A& x, const std::array<std::int64_t, M>& shape, const shape_options& o = {}) {
  const auto a = detail::materialized(x);
  using T = typename std::remove_cvref_t<decltype(a)>::value_type;
  const layout& l = a.layout();
  const communicator& c = a.comm();
  std::optional<reshape_geometry> geo;
  auto r = detail::agreed_entry(
      c,
      {"ember::reshape", "array, new shape and split",
       detail::arg_hash().add(l.hash()).add(detail::hash_of(index_vec(shape.begin(), shape.end()))).add(detail::split_code(o.split)).h,
       [&] {
         return "array of shape " + detail::shape_str(l.shape()) + " to " + detail::shape_str(shape) + ", split " +
                (o.split.given ? detail::axis_str(o.split.axis) : std::string("chosen"));
       }},
      [&] {
        geo.emplace(l, detail::resolved_shape(shape, l.numel(), l.shape()), detail::requested(o.split));
        if (geo->shares_storage()) return dndarray<T, int(M)>(geo->target(), c, a.lstorage_handle(), a.device());
        return dndarray<T, int(M)>(geo->target(), c, a.device());
      });
  if (!geo->shares_storage()) geo->run(c, a.lstorage(), r.lstorage(), sizeof(T), a.device());
  return r;
}
template <std::size_t M, class A>
  requires(is_dndarray<std::remove_cvref_t<A>>::value || expr::is_node_v<std::remove_cvref_t<A>>)
auto reshape(const A& x, const std::int64_t (&shape)[M], const shape_options& o = {}) {
  std::array<std::int64_t, M> s{};
  std::copy(shape, shape + M, s.begin());
  return reshape(x, s, o);
}
// The geometry reshape would use (target layout, predicted bytes; nothing moves).
template <std::size_t M, dtype T, int N>
reshape_geometry plan_reshape(const dndarray<T, N>& a, const std::array<std::int64_t, M>& shape,
                              const shape_options& o = {}) {
  return reshape_geometry(a.layout(), detail::resolved_shape(shape, a.numel(), a.layout().shape()),
                          detail::requested(o.split));
}

template <std::size_t M, dtype T, int N>
reshape_geometry plan_reshape(const dndarray<T, N>& a, const std::int64_t (&shape)[M], const shape_options& o = {}) {
  std::array<std::int64_t, M> s{};
  std::copy(shape, shape + M, s.begin());
  return plan_reshape(a, s, o);
}

// 1-D in C order: ravel shares storage when reshape does; flatten always copies.
template <class A>
auto ravel(const A& a, const shape_options& o = {}) {
  return reshape(a, std::array<std::int64_t, 1>{-1}, o);
}
template <class A>
auto flatten(const A& a, const shape_options& o = {}) {
  // (decided from the replicated geometry, so every rank copies or none does)
  if constexpr (is_dndarray<std::remove_cvref_t<A>>::value)
    if (plan_reshape(a, std::array<std::int64_t, 1>{-1}, o).shares_storage()) return ravel(a, o).copy();
  return ravel(a, o);
}

// ---- axes: lazy views (no copy; the split axis moves with its axis) ----

// A new axis of extent 1 at `axis` (in -(N+1) .. N), as NumPy's expand_dims.
template <class A>
  requires detail::viewable<A>
auto expand_dims(const A& a, int axis) {
  constexpr int N = detail::view_parts<A>::ndim;
  const int ax = detail::normalized_axis(axis, N + 1, "expand_dims");
  view_spec s = detail::view_parts<A>::spec(a);
  s.axes.insert(s.axes.begin() + ax, view_axis{-1, 0, 1, 1});
  return detail::reselect<N + 1>(a, std::move(s));
}

// Drops `axis`, which must have extent 1 (value_error otherwise).
template <class A>
  requires detail::viewable<A>
auto squeeze(const A& a, int axis) {
  constexpr int N = detail::view_parts<A>::ndim;
  static_assert(N >= 2, "ember::squeeze: the result would be 0-d; use item()");
  const int ax = detail::normalized_axis(axis, N, "squeeze");
  view_spec s = detail::view_parts<A>::spec(a);
  const view_axis v = s.axes[std::size_t(ax)];
  if (v.count != 1)
    throw value_error("ember::squeeze: cannot select an axis to squeeze out which has size not equal to one (axis " +
                      std::to_string(ax) + " of shape " + detail::shape_str(detail::shape_vec(a)) + ")");
  if (v.base_axis >= 0) s.fixed[std::size_t(v.base_axis)] = v.start;
  s.axes.erase(s.axes.begin() + ax);
  return detail::reselect<N - 1>(a, std::move(s));
}
// The same with the result's dimension spelled out (the squeeze<M>(a, axis)).
template <int M, class A>
  requires detail::viewable<A>
auto squeeze(const A& a, int axis) {
  static_assert(M == detail::view_parts<A>::ndim - 1, "ember::squeeze<M>(a, axis): M must be a's dimension minus one");
  return squeeze(a, axis);
}
// Drops every axis of extent 1; there must be exactly N - M of them.
template <int M, class A>
  requires detail::viewable<A>
auto squeeze(const A& a) {
  constexpr int N = detail::view_parts<A>::ndim;
  static_assert(M >= 1 && M <= N, "ember::squeeze<M>: M must be between 1 and the array's dimension");
  view_spec s = detail::view_parts<A>::spec(a);
  view_spec out{{}, s.fixed};
  for (const auto& v : s.axes) {
    if (v.count != 1) out.axes.push_back(v);
    else if (v.base_axis >= 0) out.fixed[std::size_t(v.base_axis)] = v.start;
  }
  if (int(out.axes.size()) != M)
    throw shape_error("ember::squeeze<" + std::to_string(M) + ">: an array of shape " +
                      detail::shape_str(detail::shape_vec(a)) + " has " + std::to_string(N - int(out.axes.size())) +
                      " axes of size one, so squeezing leaves " + std::to_string(out.axes.size()) + " dimensions");
  return detail::reselect<M>(a, std::move(out));
}

// Axes permuted: result axis d is axis axes[d] of `a` (negative counts from the
// end), as numpy.transpose(a, axes).
template <class A, std::size_t K>
  requires detail::viewable<A>
auto transpose(const A& a, const std::array<int, K>& axes) {
  constexpr int N = detail::view_parts<A>::ndim;
  static_assert(int(K) == N, "ember::transpose: give one axis per dimension");
  view_spec s = detail::view_parts<A>::spec(a);
  view_spec out{{}, s.fixed};
  std::vector<int> seen(std::size_t(N), 0);
  for (int d = 0; d < N; ++d) {
    const int ax = detail::normalized_axis(axes[std::size_t(d)], N, "transpose");
    if (seen[std::size_t(ax)]++)
      throw value_error("ember::transpose: repeated axis " + std::to_string(ax) + " in the permutation");
    out.axes.push_back(s.axes[std::size_t(ax)]);
  }
  return detail::reselect<N>(a, std::move(out));
}
template <class A, std::size_t K>
  requires detail::viewable<A>
auto transpose(const A& a, const int (&axes)[K]) {
  std::array<int, K> p{};
  std::copy(axes, axes + K, p.begin());
  return transpose(a, p);
}
// Axis `source` moved to position `destination`, the others in order.
template <class A>
  requires detail::viewable<A>
auto moveaxis(const A& a, int source, int destination) {
  constexpr int N = detail::view_parts<A>::ndim;
  const int s = detail::normalized_axis(source, N, "moveaxis"), d = detail::normalized_axis(destination, N, "moveaxis");
  std::vector<int> order;
  for (int i = 0; i < N; ++i)
    if (i != s) order.push_back(i);
  order.insert(order.begin() + d, s);
  std::array<int, std::size_t(N)> p{};
  std::copy(order.begin(), order.end(), p.begin());
  return transpose(a, p);
}
template <class A>
  requires detail::viewable<A>
auto swapaxes(const A& a, int axis1, int axis2) {
  constexpr int N = detail::view_parts<A>::ndim;
  const int i = detail::normalized_axis(axis1, N, "swapaxes"), j = detail::normalized_axis(axis2, N, "swapaxes");
  std::array<int, std::size_t(N)> p{};
  std::iota(p.begin(), p.end(), 0);
  std::swap(p[std::size_t(i)], p[std::size_t(j)]);
  return transpose(a, p);
}

// ---- joining ----

namespace detail {
template <dtype T, int N>
void check_joinable(const std::vector<dndarray<T, N>>& xs, int axis, bool same_shape, const char* what) {
  if (xs.empty()) throw value_error(std::string(what) + ": need at least one array to join");
  const index_vec& s0 = xs[0].layout().shape();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    require_host(xs[i].device(), what);
    const index_vec& s = xs[i].layout().shape();
    if (xs[i].comm().size() != xs[0].comm().size())
      throw value_error(std::string(what) + ": array " + std::to_string(i) + " is on " +
                        std::to_string(xs[i].comm().size()) + " ranks, array 0 on " + std::to_string(xs[0].comm().size()));
    for (int d = 0; d < N; ++d)
      if (s[std::size_t(d)] != s0[std::size_t(d)] && (same_shape || d != axis))
        throw shape_error(std::string(what) + ": all the input array dimensions" +
                          (same_shape ? std::string() : " except for the concatenation axis " + std::to_string(axis)) +
                          " must match exactly, but array 0 has shape " + shape_str(s0) + " and array " +
                          std::to_string(i) + " has shape " + shape_str(s));
  }
}
// The result layout of joining arrays whose split axes map to `result_axis(s)` in
// the result: the inputs' common split (same extents) when there is one and it
// is not the joined axis; otherwise the split of the first split input, balanced.
template <dtype T, int N, class F>
layout joined_layout(const std::vector<dndarray<T, N>>& xs, const index_vec& shape, int joined, F&& result_axis,
                     const split_request& req) {
  const int P = xs[0].comm().size();
  if (req.given) return req.axis ? layout::balanced(shape, *req.axis, P) : replicated_layout(shape, P);
  const dndarray<T, N>* first = nullptr;
  bool common = true;
  for (const auto& x : xs) {
    if (!x.layout().split()) continue;
    if (!first) first = &x;
    else common = common && x.layout().split() == first->layout().split() && x.layout().extents() == first->layout().extents();
  }
  if (!first) return replicated_layout(shape, P);
  const int k = result_axis(*first->layout().split());
  if (common && k != joined) return first->layout().with_shape(shape, k);
  return layout::balanced(shape, k, P);
}
template <dtype T, int N>
std::uint64_t hash_of_arrays(const std::vector<dndarray<T, N>>& xs, std::int64_t axis, const split_request& r) {
  arg_hash h;
  h.add(xs.size()).add(std::uint64_t(axis)).add(split_code(r));
  for (const auto& x : xs) h.add(x.layout().hash());
  return h.h;
}
}  // namespace detail

// The arrays joined along an existing axis (numpy.concatenate). Each input moves
// into its slab of the result; when they share a split on another axis, nothing
// moves.
template <dtype T, int N>
dndarray<T, N> concatenate(const std::vector<dndarray<T, N>>& xs, int axis = 0, const shape_options& o = {}) {
  if (xs.empty()) throw value_error("ember::concatenate: need at least one array to concatenate");
  const int ax = detail::normalized_axis(axis, N, "concatenate");
  const communicator& c = xs[0].comm();
  index_vec shape = xs[0].layout().shape();
  auto r = detail::agreed_entry(
      c, {"ember::concatenate", "arrays, axis and split", detail::hash_of_arrays(xs, ax, o.split), [&] {
            std::string d;
            for (const auto& x : xs) d += (d.empty() ? "" : ", ") + detail::shape_str(x.layout().shape());
            return "arrays " + d + " along axis " + std::to_string(ax);
          }},
      [&] {
        detail::check_joinable(xs, ax, false, "ember::concatenate");
        std::int64_t n = 0;
        for (const auto& x : xs) n += x.layout().shape()[std::size_t(ax)];
        shape[std::size_t(ax)] = n;
        return dndarray<T, N>(detail::joined_layout(xs, shape, ax, [](int s) { return s; }, o.split), c);
      });
  std::int64_t at = 0;
  for (const auto& x : xs) {
    const std::int64_t n = x.layout().shape()[std::size_t(ax)];
    view_spec s = detail::whole_spec(shape);
    s.axes[std::size_t(ax)] = view_axis{ax, n > 0 ? at : 0, 1, n};
    detail::place_into(x, r, std::move(s));
    at += n;
  }
  return r;
}
template <dtype T, int N>
dndarray<T, N> concatenate(std::initializer_list<dndarray<T, N>> xs, int axis = 0, const shape_options& o = {}) {
  return concatenate(std::vector<dndarray<T, N>>(xs), axis, o);
}

// The arrays (all of one shape) joined along a new axis (numpy.stack).
template <dtype T, int N>
dndarray<T, N + 1> stack(const std::vector<dndarray<T, N>>& xs, int axis = 0, const shape_options& o = {}) {
  if (xs.empty()) throw value_error("ember::stack: need at least one array to stack");
  const int ax = detail::normalized_axis(axis, N + 1, "stack");
  const communicator& c = xs[0].comm();
  index_vec shape = xs[0].layout().shape();
  shape.insert(shape.begin() + ax, std::int64_t(xs.size()));
  auto r = detail::agreed_entry(
      c, {"ember::stack", "arrays, axis and split", detail::hash_of_arrays(xs, ax, o.split), [&] {
            return std::to_string(xs.size()) + " arrays of shape " + detail::shape_str(xs[0].layout().shape());
          }},
      [&] {
        detail::check_joinable(xs, ax, true, "ember::stack");
        return dndarray<T, N + 1>(
            detail::joined_layout(xs, shape, ax, [ax](int s) { return s >= ax ? s + 1 : s; }, o.split), c);
      });
  for (std::size_t i = 0; i < xs.size(); ++i) {
    view_spec s = detail::whole_spec(shape);
    s.fixed[std::size_t(ax)] = std::int64_t(i);
    s.axes.erase(s.axes.begin() + ax);
    detail::place_into(xs[i], r, std::move(s));
  }
  return r;
}
template <dtype T, int N>
dndarray<T, N + 1> stack(std::initializer_list<dndarray<T, N>> xs, int axis = 0, const shape_options& o = {}) {
  return stack(std::vector<dndarray<T, N>>(xs), axis, o);
}

// numpy.vstack: along axis 0, 1-D arrays first becoming rows (1, n).
template <dtype T, int N>
auto vstack(const std::vector<dndarray<T, N>>& xs, const shape_options& o = {}) {
  if constexpr (N == 1) return stack(xs, 0, o);
  else return concatenate(xs, 0, o);
}
template <dtype T, int N>
auto vstack(std::initializer_list<dndarray<T, N>> xs, const shape_options& o = {}) {
  return vstack(std::vector<dndarray<T, N>>(xs), o);
}
// numpy.hstack: along axis 1 (axis 0 for 1-D arrays).
template <dtype T, int N>
dndarray<T, N> hstack(const std::vector<dndarray<T, N>>& xs, const shape_options& o = {}) {
  return concatenate(xs, N == 1 ? 0 : 1, o);
}
template <dtype T, int N>
dndarray<T, N> hstack(std::initializer_list<dndarray<T, N>> xs, const shape_options& o = {}) {
  return hstack(std::vector<dndarray<T, N>>(xs), o);
}

// ---- splitting: views of consecutive slabs (NumPy returns views too) ----

namespace detail {
template <class A>
auto slabs(const A& a, int axis, const std::vector<std::int64_t>& bounds) {
  constexpr int N = view_parts<A>::ndim;
  const view_spec base = view_parts<A>::spec(a);
  const view_axis v = base.axes[std::size_t(axis)];
  std::vector<decltype(reselect<N>(a, base))> out;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    view_spec s = base;
    const std::int64_t lo = bounds[i], n = std::max<std::int64_t>(0, bounds[i + 1] - lo);
    s.axes[std::size_t(axis)] = view_axis{v.base_axis, n > 0 ? v.start + lo * v.step : 0, v.step, n};
    out.push_back(reselect<N>(a, std::move(s)));
  }
  return out;
}
}  // namespace detail

// numpy.array_split: `sections` pieces along `axis`, the first n % sections one longer.
template <class A>
  requires detail::viewable<A>
auto array_split(const A& a, std::int64_t sections, int axis = 0) {
  constexpr int N = detail::view_parts<A>::ndim;
  const int ax = detail::normalized_axis(axis, N, "array_split");
  if (sections <= 0) throw value_error("ember::array_split: number sections must be larger than 0");
  const std::int64_t n = detail::shape_vec(a)[std::size_t(ax)];
  std::vector<std::int64_t> b{0};
  for (std::int64_t i = 0; i < sections; ++i) b.push_back(b.back() + n / sections + (i < n % sections ? 1 : 0));
  return detail::slabs(a, ax, b);
}
// numpy.split with a number of equal sections (value_error when they are not).
template <class A>
  requires detail::viewable<A>
auto split(const A& a, std::int64_t sections, int axis = 0) {
  constexpr int N = detail::view_parts<A>::ndim;
  const int ax = detail::normalized_axis(axis, N, "split");
  const std::int64_t n = detail::shape_vec(a)[std::size_t(ax)];
  if (sections <= 0 || n % sections != 0)
    throw value_error("ember::split: array split does not result in an equal division (axis " + std::to_string(ax) +
                      " of size " + std::to_string(n) + " into " + std::to_string(sections) + " sections)");
  return array_split(a, sections, ax);
}
// numpy.split at indices: a[:i0], a[i0:i1], ..., a[ik:] (indices clamped, as slices).
template <class A>
  requires detail::viewable<A>
auto split(const A& a, const std::vector<std::int64_t>& indices, int axis = 0) {
  constexpr int N = detail::view_parts<A>::ndim;
  const int ax = detail::normalized_axis(axis, N, "split");
  const std::int64_t n = detail::shape_vec(a)[std::size_t(ax)];
  std::vector<std::int64_t> b{0};  // a[0:i0], a[i0:i1], ..., a[ik:], each a Python slice
  for (auto i : indices) b.push_back(std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n));
  b.push_back(n);
  return detail::slabs(a, ax, b);
}
template <class A>
  requires detail::viewable<A>
auto split(const A& a, std::initializer_list<std::int64_t> indices, int axis = 0) {
  return split(a, std::vector<std::int64_t>(indices), axis);
}

// ---- repetition ----

// numpy.repeat with one count for every element along `axis`: element i becomes
// elements i * r .. i * r + r - 1. Along the split axis each rank's rows stay
// on it (the result's extents are r times the input's): no communication.
template <dtype T, int N>
dndarray<T, N> repeat(const dndarray<T, N>& a, std::int64_t repeats, int axis) {
  const int ax = detail::normalized_axis(axis, N, "repeat");
  if (repeats < 0) throw value_error("ember::repeat: negative dimensions are not allowed (repeats " + std::to_string(repeats) + ")");
  detail::require_host(a.device(), "ember::repeat");
  const layout& l = a.layout();
  index_vec shape = l.shape();
  const std::int64_t n = shape[std::size_t(ax)];
  shape[std::size_t(ax)] = n * repeats;
  layout target = replicated_layout(shape, l.nranks());
  if (l.split() && *l.split() == ax) {
    index_vec e = l.extents();
    for (auto& x : e) x *= repeats;
    target = layout(shape, ax, std::move(e));
  } else if (l.split()) {
    target = l.with_shape(shape, *l.split());
  }
  auto r = detail::agreed_array<T, N>(target, a.comm(), "ember::repeat", detail::arg_hash().add(std::uint64_t(repeats)).add(std::uint64_t(ax)).h);
  for (std::int64_t k = 0; k < repeats && n > 0; ++k) {
    view_spec s = detail::whole_spec(shape);
    s.axes[std::size_t(ax)] = view_axis{ax, k, repeats, n};
    detail::place_into(a, r, std::move(s));
  }
  return r;
}
// numpy.repeat with one count per element along `axis` (counts.size() equal to
// that axis's extent): a distributed take of the index array 0 (c0 times), 1
// (c1 times), ..., built split over the ranks (each rank writes its part from
// the counts' prefix sums), so the result is balanced along `axis` when `a` is
// split there.
template <dtype T, int N>
dndarray<T, N> repeat(const dndarray<T, N>& a, const std::vector<std::int64_t>& counts, int axis) {
  const int ax = detail::normalized_axis(axis, N, "repeat");
  const std::int64_t n = a.layout().shape()[std::size_t(ax)];
  if (counts.size() == 1 && n != 1) return repeat(a, counts[0], ax);  // one count broadcasts (NumPy)
  if (std::int64_t(counts.size()) != n)
    throw value_error("ember::repeat: operands could not be broadcast together: " + std::to_string(counts.size()) +
                      " counts for axis " + std::to_string(ax) + " of size " + std::to_string(n));
  std::vector<std::int64_t> end(counts.size());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] < 0) throw value_error("ember::repeat: negative dimensions are not allowed (count " + std::to_string(counts[i]) + ")");
    end[i] = total += counts[i];
  }
  auto idx = detail::agreed_array<std::int64_t, 1>(layout::balanced({total}, 0, a.comm().size()), a.comm(),
                                                   "ember::repeat", detail::hash_of(index_vec(counts.begin(), counts.end())));
  const std::int64_t lo = idx.layout().offset(a.comm().rank());
  for (std::int64_t j = 0; j < idx.lnumel(); ++j)  // the element whose run holds position lo + j
    idx.lstorage()[j] = std::upper_bound(end.begin(), end.end(), lo + j) - end.begin();
  return take(a, idx, ax);
}
template <dtype T, int N>
dndarray<T, N> repeat(const dndarray<T, N>& a, std::initializer_list<std::int64_t> counts, int axis) {
  return repeat(a, std::vector<std::int64_t>(counts), axis);
}
// Without an axis: over the flattened array (NumPy).
template <dtype T, int N>
dndarray<T, 1> repeat(const dndarray<T, N>& a, std::int64_t repeats) {
  return repeat(ravel(a), repeats, 0);
}

// numpy.tile with one count per axis: copies of `a` laid side by side.
template <dtype T, int N>
dndarray<T, N> tile(const dndarray<T, N>& a, const std::array<std::int64_t, std::size_t(N)>& reps) {
  detail::require_host(a.device(), "ember::tile");
  const layout& l = a.layout();
  index_vec shape = l.shape();
  for (int d = 0; d < N; ++d) {
    if (reps[std::size_t(d)] < 0) throw value_error("ember::tile: negative repetition " + std::to_string(reps[std::size_t(d)]));
    shape[std::size_t(d)] *= reps[std::size_t(d)];
  }
  const layout target = l.split() ? layout::balanced(shape, *l.split(), l.nranks()) : replicated_layout(shape, l.nranks());
  auto r = detail::agreed_array<T, N>(target, a.comm(), "ember::tile", detail::hash_of(index_vec(reps.begin(), reps.end())));
  std::int64_t copies = 1;
  for (auto x : reps) copies *= x;
  if (a.numel() == 0) return r;
  for (std::int64_t c = 0; c < copies; ++c) {
    view_spec s = detail::whole_spec(shape);
    std::int64_t rest = c;
    for (int d = N - 1; d >= 0; --d) {
      const std::int64_t k = rest % reps[std::size_t(d)];
      rest /= reps[std::size_t(d)];
      const std::int64_t n = l.shape()[std::size_t(d)];
      s.axes[std::size_t(d)] = view_axis{d, k * n, 1, n};
    }
    detail::place_into(a, r, std::move(s));
  }
  return r;
}

// ---- triangles and diagonals (the last two axes; local work, no communication) ----

namespace detail {
// Calls f(local flat index, i, j) for each element, i and j its global indices
// along the last two axes.
template <dtype T, int N, class F>
void for_each_ij(const dndarray<T, N>& a, F&& f) {
  const layout& l = a.layout();
  const int r = a.comm().rank();
  const index_vec ls = l.lshape(r);
  const std::int64_t rows = ls[std::size_t(N - 2)], cols = ls[std::size_t(N - 1)];
  std::int64_t outer = 1;
  for (int d = 0; d < N - 2; ++d) outer *= ls[std::size_t(d)];
  const std::int64_t i0 = l.split() && *l.split() == N - 2 ? l.offset(r) : 0;
  const std::int64_t j0 = l.split() && *l.split() == N - 1 ? l.offset(r) : 0;
  std::int64_t at = 0;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j, ++at) f(at, i0 + i, j0 + j);
}
template <dtype T, int N>
dndarray<T, N> triangle(const dndarray<T, N>& a, std::int64_t k, bool lower) {
  static_assert(N >= 2, "ember::tril/triu: the array needs at least two dimensions");
  require_host(a.device(), lower ? "ember::tril" : "ember::triu");
  dndarray<T, N> r = a.copy();
  T* p = r.lstorage();
  for_each_ij(r, [&](std::int64_t at, std::int64_t i, std::int64_t j) {
    if (lower ? j - i > k : j - i < k) p[at] = T(0);
  });
  return r;
}
}  // namespace detail

// Zeros above the k-th diagonal of the last two axes (numpy.tril).
template <dtype T, int N>
dndarray<T, N> tril(const dndarray<T, N>& a, std::int64_t k = 0) {
  return detail::triangle(a, k, true);
}
// Zeros below the k-th diagonal (numpy.triu).
template <dtype T, int N>
dndarray<T, N> triu(const dndarray<T, N>& a, std::int64_t k = 0) {
  return detail::triangle(a, k, false);
}

// The k-th diagonal of a matrix (numpy.diagonal(a, k)). Each rank keeps the
// diagonal elements of its own block: the result is split like the matrix's
// split axis, with those counts (unbalanced, some ranks possibly empty).
template <dtype T>
dndarray<T, 1> diagonal(const dndarray<T, 2>& a, std::int64_t k = 0) {
  detail::require_host(a.device(), "ember::diagonal");
  const layout& l = a.layout();
  const int P = l.nranks(), me = a.comm().rank();
  const std::int64_t n0 = l.shape()[0], n1 = l.shape()[1];
  const std::int64_t r0 = std::max<std::int64_t>(0, -k), c0 = std::max<std::int64_t>(0, k);
  const std::int64_t len = std::max<std::int64_t>(0, std::min(n0 - r0, n1 - c0));
  layout target = replicated_layout({len}, P);
  if (l.split()) {
    const int s = *l.split();
    const std::int64_t shift = s == 0 ? r0 : c0;
    index_vec e(static_cast<std::size_t>(P));
    for (int q = 0; q < P; ++q) {
      const std::int64_t lo = std::clamp<std::int64_t>(l.offset(q) - shift, 0, len);
      const std::int64_t hi = std::clamp<std::int64_t>(l.offset(q) + l.extent(q) - shift, 0, len);
      e[std::size_t(q)] = hi - lo;
    }
    target = layout({len}, 0, std::move(e));
  }
  auto r = detail::agreed_array<T, 1>(target, a.comm(), "ember::diagonal", std::uint64_t(k));
  const index_vec ls = l.lshape(me);
  const std::int64_t i0 = l.split() && *l.split() == 0 ? l.offset(me) : 0;
  const std::int64_t j0 = l.split() && *l.split() == 1 ? l.offset(me) : 0;
  const std::int64_t t0 = target.offset(me);
  for (std::int64_t t = 0; t < target.extent(me) || (!target.split() && t < len); ++t) {
    const std::int64_t g = t0 + t;
    r.lstorage()[t] = a.lstorage()[(g + r0 - i0) * ls[1] + (g + c0 - j0)];
  }
  return r;
}
// numpy.diag: of a matrix, its k-th diagonal; of a vector, the square matrix with
// it on the k-th diagonal (rows split like the vector: no communication).
template <dtype T>
dndarray<T, 1> diag(const dndarray<T, 2>& a, std::int64_t k = 0) {
  return diagonal(a, k);
}
template <dtype T>
dndarray<T, 2> diag(const dndarray<T, 1>& v, std::int64_t k = 0) {
  detail::require_host(v.device(), "ember::diag");
  const layout& l = v.layout();
  const int P = l.nranks(), me = v.comm().rank();
  const std::int64_t n = l.shape()[0], r0 = std::max<std::int64_t>(0, -k), c0 = std::max<std::int64_t>(0, k);
  const std::int64_t m = n + r0 + c0;
  layout target = replicated_layout({m, m}, P);
  if (l.split()) {
    index_vec e = l.extents();
    e.front() += r0;  // rows above the diagonal's first element
    e.back() += c0;   // rows below its last
    target = layout({m, m}, 0, std::move(e));
  }
  auto r = detail::agreed_array<T, 2>(target, v.comm(), "ember::diag", std::uint64_t(k));
  std::fill(r.lstorage(), r.lstorage() + r.lnumel(), T(0));
  const std::int64_t lo = l.split() ? l.offset(me) : 0, cnt = l.split() ? l.extent(me) : n;
  const std::int64_t row0 = target.split() ? target.offset(me) : 0;
  for (std::int64_t i = 0; i < cnt; ++i) {
    const std::int64_t g = lo + i;
    r.lstorage()[(g + r0 - row0) * m + (g + c0)] = v.lstorage()[i];
  }
  return r;
}
// The sum of the k-th diagonal, on every rank (numpy.trace).
template <dtype T>
T trace(const dndarray<T, 2>& a, std::int64_t k = 0) {
  return T(ember::sum(diagonal(a, k)));
}

// ---- grids ----

enum class indexing { xy, ij };
struct meshgrid_options {
  ::ember::indexing indexing = ::ember::indexing::xy;  // xy: Cartesian (the first two axes swapped), ij: matrix
  split_request split{};             // of every result; by default axis 0
};
// numpy.meshgrid of K vectors: K arrays of K dimensions, each the broadcast of
// one vector along its axis.
template <dtype T, std::size_t K>
std::array<dndarray<T, int(K)>, K> meshgrid(const std::array<dndarray<T, 1>, K>& xs, const meshgrid_options& o = {}) {
  static_assert(K >= 1, "ember::meshgrid: give at least one vector");
  index_vec shape;
  for (const auto& x : xs) shape.push_back(x.layout().shape()[0]);
  auto pos = [&](std::size_t i) -> std::size_t {
    if (o.indexing == indexing::xy && K >= 2 && i < 2) return 1 - i;
    return i;
  };
  if (o.indexing == indexing::xy && K >= 2) std::swap(shape[0], shape[1]);
  const communicator& c = xs[0].comm();
  bool any_split = false;
  for (const auto& x : xs) any_split = any_split || x.layout().split().has_value();
  const split_axis k = o.split.given ? o.split.axis : (any_split ? split_axis(0) : split_axis());
  const layout target = k ? layout::balanced(shape, *k, c.size()) : replicated_layout(shape, c.size());
  std::array<dndarray<T, int(K)>, K> out;
  for (std::size_t i = 0; i < K; ++i) {
    out[i] = detail::agreed_array<T, int(K)>(target, c, "ember::meshgrid", std::uint64_t(o.indexing == indexing::ij));
    // the vector along its axis, new axes elsewhere: broadcast by the setitem
    view_spec s{{}, {-1}};
    for (std::size_t d = 0; d < K; ++d)
      s.axes.push_back(d == pos(i) ? view_axis{0, 0, 1, shape[d]} : view_axis{-1, 0, 1, 1});
    auto v = detail::reselect<int(K)>(xs[i], std::move(s));
    detail::reselect<int(K)>(out[i], detail::whole_spec(shape)) = v;
  }
  return out;
}
template <dtype T>
std::array<dndarray<T, 2>, 2> meshgrid(const dndarray<T, 1>& x, const dndarray<T, 1>& y, const meshgrid_options& o = {}) {
  return meshgrid(std::array<dndarray<T, 1>, 2>{x, y}, o);
}
template <dtype T>
std::array<dndarray<T, 3>, 3> meshgrid(const dndarray<T, 1>& x, const dndarray<T, 1>& y, const dndarray<T, 1>& z,
                                       const meshgrid_options& o = {}) {
  return meshgrid(std::array<dndarray<T, 1>, 3>{x, y, z}, o);
}

// ---- padding ----

enum class pad_mode { constant, edge, wrap, reflect, symmetric };
struct pad_options {
  pad_mode mode = pad_mode::constant;
  double value = 0;  // for constant
};
// numpy.pad with (before, after) per axis (one pair: every axis). The array's
// rows stay on their ranks (the first rank gets the rows before, the last the
// rows after); the borders are setitems of views of the result (edge rows,
// wrapped or mirrored slabs), so along the split axis only those rows move.
template <dtype T, int N>
dndarray<T, N> pad(const dndarray<T, N>& a, std::initializer_list<std::pair<std::int64_t, std::int64_t>> widths,
                   const pad_options& o = {}) {
  detail::require_host(a.device(), "ember::pad");
  std::vector<std::pair<std::int64_t, std::int64_t>> w(widths);
  if (w.size() == 1) w.assign(std::size_t(N), w[0]);
  if (int(w.size()) != N)
    throw value_error("ember::pad: " + std::to_string(w.size()) + " (before, after) pairs for an array of dimension " +
                      std::to_string(N));
  const layout& l = a.layout();
  index_vec shape = l.shape();
  for (int d = 0; d < N; ++d) {
    const auto [b, e] = w[std::size_t(d)];
    const std::int64_t n = shape[std::size_t(d)];
    if (b < 0 || e < 0) throw value_error("ember::pad: index can't contain negative values (axis " + std::to_string(d) + ")");
    if (o.mode != pad_mode::constant && n == 0 && b + e > 0)
      throw value_error("ember::pad: can't extend the empty axis " + std::to_string(d) + " of shape " +
                        detail::shape_str(shape) + " with a non-constant mode");
    shape[std::size_t(d)] += b + e;
  }
  layout target = replicated_layout(shape, l.nranks());
  if (l.split()) {
    const int s = *l.split();
    index_vec e = l.extents();
    e.front() += w[std::size_t(s)].first;
    e.back() += w[std::size_t(s)].second;
    target = layout(shape, s, std::move(e));
  }
  detail::arg_hash h;
  h.add(std::uint64_t(o.mode)).add(std::uint64_t(std::bit_cast<std::uint64_t>(o.value)));
  for (auto [b, e] : w) h.add(std::uint64_t(b)).add(std::uint64_t(e));
  auto r = detail::agreed_array<T, N>(target, a.comm(), "ember::pad", h.h);
  if (o.mode == pad_mode::constant) std::fill(r.lstorage(), r.lstorage() + r.lnumel(), T(o.value));
  view_spec inner = detail::whole_spec(shape);
  for (int d = 0; d < N; ++d) inner.axes[std::size_t(d)] = view_axis{d, w[std::size_t(d)].first, 1, l.shape()[std::size_t(d)]};
  if (a.numel() > 0) detail::place_into(a, r, inner);
  if (o.mode == pad_mode::constant) return r;
  // Axis by axis, over the whole extent of the axes done before (NumPy's order:
  // the corners come from the borders already filled).
  for (int d = 0; d < N; ++d) {
    const auto [b, e] = w[std::size_t(d)];
    const std::int64_t n = l.shape()[std::size_t(d)];
    auto slab = [&](std::int64_t start, std::int64_t count) {
      view_spec s = detail::whole_spec(shape);
      for (int x = d + 1; x < N; ++x) s.axes[std::size_t(x)] = inner.axes[std::size_t(x)];
      s.axes[std::size_t(d)] = view_axis{d, count > 0 ? start : 0, 1, count};
      return detail::reselect<N>(r, std::move(s));
    };
    auto fill = [&](std::int64_t start, std::int64_t count, std::int64_t from, bool mirrored) {
      if (!mirrored) slab(start, count) = ember::eval(slab(from, count));
      else slab(start, count) = ember::flip(ember::eval(slab(from, count)), d);
    };
    if (o.mode == pad_mode::edge) {
      if (b) slab(0, b) = ember::eval(slab(b, 1));
      if (e) slab(b + n, e) = ember::eval(slab(b + n - 1, 1));
      continue;
    }
    // wrap, reflect, symmetric: chunks of at most one period's reach, each from
    // the part filled already (so a pad wider than the axis repeats, as NumPy's).
    const std::int64_t reach = o.mode == pad_mode::reflect ? std::max<std::int64_t>(1, n - 1) : n;
    for (std::int64_t lo = b; lo > 0;) {  // [lo, ...) filled: grow to the left
      const std::int64_t w = std::min(lo, reach);
      if (n == 1) fill(lo - w, w, lo, false);  // one element: every mode repeats it
      else if (o.mode == pad_mode::wrap) fill(lo - w, w, lo - w + n, false);
      else fill(lo - w, w, o.mode == pad_mode::reflect ? lo + 1 : lo, true);
      lo -= w;
    }
    for (std::int64_t hi = b + n; hi < b + n + e;) {  // [..., hi) filled: grow to the right
      const std::int64_t w = std::min(b + n + e - hi, reach);
      if (n == 1) fill(hi, w, hi - 1, false);
      else if (o.mode == pad_mode::wrap) fill(hi, w, hi - n, false);
      else fill(hi, w, o.mode == pad_mode::reflect ? hi - 1 - w : hi - w, true);
      hi += w;
    }

  }
  return r;
}
// The same width on every side of every axis.
template <dtype T, int N>
dndarray<T, N> pad(const dndarray<T, N>& a, std::int64_t width, const pad_options& o = {}) {
  return pad(a, {{width, width}}, o);
}

}  // namespace ember
