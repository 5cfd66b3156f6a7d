// Fused kernels: one evaluator tree mirrors the expression, built per evaluation
// over the local blocks (and moved copies) the plan binds to each leaf; one loop
// over the local iteration space runs every elementwise operation of a group, and
// a reduction consumes its argument chunk by chunk without materializing it.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/size.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

#include "../runtime/view.hpp"
#include "traversal.hpp"

namespace ember::kernel {

namespace hana = boost::hana;

// The local iteration space of a group: ndim >= 1 (a 0-d space is 1-d of
// extent 1), extents per axis. MR bounds R statically.
template <int MR>
struct space {
  static constexpr int cap = MR < 1 ? 1 : MR;
  int ndim = 1;
  std::array<std::int64_t, cap> ext{};
  EMBER_HD std::int64_t count() const {
    std::int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= ext[std::size_t(d)];
    return n;
  }
};

// What the plan binds to a boundary node (a leaf or a reduction result): a
// block laid out as `lay`, row-major and contiguous, or a view's elements inside
// its base array's block (`view`: offset and strides per rank).
// Where a halo'd operand's rows come from, per region along the split axis's
// iteration dimension: 0 the top ghost rows, 1 the rows in place, 2 the bottom
// ghost rows (element strides per iteration dimension, bytes for the bases).
struct halo_rows {
  int axis = -1;
  std::int64_t top = 0, own = 0;
  std::array<const char*, 3> base{};
  std::array<std::array<std::int64_t, 32>, 3> str{};
  std::array<std::int64_t, 3> inner{};
};
// What a halo step leaves for the kernel reading its value: the leaf's own block
// (a view's base block) and the ghost rows the step received.
struct halo_source {
  const void* own = nullptr;
  const view_geometry* view = nullptr;
  const layout* have = nullptr;  // the leaf's layout
  const void* ghosts = nullptr;  // top rows, then bottom rows, row-major
  std::int64_t top = 0, own_rows = 0, bottom = 0, own_lo = 0;  // counts, and the first own row (global)
  int axis = 0;                  // the split axis of the leaf
  mutable halo_rows rows;        // filled per kernel by make_eval
};

struct binding {
  const void* ptr = nullptr;
  const layout* lay = nullptr;
  const view_geometry* view = nullptr;
  const halo_source* halo = nullptr;
};

struct context {
  const std::vector<binding>* bind;  // by IR node id
  int rank;                          // this process's rank (local shapes)
};

// ---- evaluators ----
template <class T, int MR>
struct buffer_eval {
  static constexpr int cap = space<MR>::cap;
  const T* base;
  std::array<std::int64_t, cap> str{};
  std::int64_t inner = 0;
  const T* row = nullptr;
  const halo_rows* halo = nullptr;  // host kernels after a halo step: rows from three places
  EMBER_HD void start(const std::int64_t* idx, int outer) {
    if (halo) {
      const std::int64_t i = idx[halo->axis];
      const int k = i < halo->top ? 0 : i < halo->top + halo->own ? 1 : 2;
      const std::int64_t first = k == 0 ? 0 : k == 1 ? halo->top : halo->top + halo->own;
      const T* p = reinterpret_cast<const T*>(halo->base[std::size_t(k)]);
      const auto& hs = halo->str[std::size_t(k)];
      for (int d = 0; d < outer; ++d) p += (d == halo->axis ? idx[d] - first : idx[d]) * hs[std::size_t(d)];
      row = p;
      inner = halo->inner[std::size_t(k)];
      return;
    }
    const T* p = base;
    for (int d = 0; d < outer; ++d) p += idx[d] * str[std::size_t(d)];
    row = p;
  }
  template <bool C>
  EMBER_HD T at(std::int64_t j) const {
    if constexpr (C) return row[j];
    else return row[j * inner];
  }
  EMBER_HD bool contiguous() const { return inner == 1; }
  // Laid out exactly as the space, row-major: element i of the space is base[i].
  bool flat(const std::int64_t* rm, int ndim) const {
    for (int d = 0; d < ndim; ++d)
      if (str[std::size_t(d)] != rm[d]) return false;
    return true;
  }
};

template <class T>
struct scalar_eval {
  T v;
  EMBER_HD void start(const std::int64_t*, int) {}
  template <bool C>
  EMBER_HD T at(std::int64_t) const {
    return v;
  }
  EMBER_HD bool contiguous() const { return true; }
  bool flat(const std::int64_t*, int) const { return true; }
};

template <class Op, class R, class... E>
struct elementwise_eval {
  // (Children through hana::at_c and index sequences: hana's algorithms are
  // function objects, which device code cannot call; at_c is a constexpr function.)
  hana::tuple<E...> e;
  [[no_unique_address]] Op op;  // empty but for ops with state (a lookup's table)
  using ids = std::index_sequence_for<E...>;
  EMBER_HD void start(const std::int64_t* idx, int outer) { start_each(idx, outer, ids{}); }
  template <bool C>
  EMBER_HD R at(std::int64_t j) const {
    return at_each<C>(j, ids{});
  }
  EMBER_HD bool contiguous() const { return contiguous_each(ids{}); }
  template <std::size_t... I>
  EMBER_HD void start_each(const std::int64_t* idx, int outer, std::index_sequence<I...>) {
    (hana::at_c<I>(e).start(idx, outer), ...);
  }
  template <bool C, std::size_t... I>
  EMBER_HD R at_each(std::int64_t j, std::index_sequence<I...>) const {
    return op.template apply<R>(hana::at_c<I>(e).template at<C>(j)...);
  }
  template <std::size_t... I>
  EMBER_HD bool contiguous_each(std::index_sequence<I...>) const {
    return (hana::at_c<I>(e).contiguous() && ...);
  }
  bool flat(const std::int64_t* rm, int ndim) const {
    return hana::unpack(e, [&](const auto&... x) { return (x.flat(rm, ndim) && ...); });
  }
};

// Strides of a buffer laid out as `lay` (on this rank) read in iteration space
// `sp`: shapes align on the right, broadcast axes get stride 0.
// A view's element strides come from its geometry instead of its local shape.
template <int MR>
void broadcast_strides(const layout& lay, const view_geometry* view, int rank, const space<MR>& sp, std::int64_t* str,
                       std::int64_t& inner) {
  // local shape and element strides of the buffer, without allocating
  const index_vec& gs = lay.shape();
  const int n = int(gs.size()), R = sp.ndim;
  const int k = lay.split() ? *lay.split() : -1;
  auto local = [&](int d) { return d == k ? lay.extent(rank) : gs[std::size_t(d)]; };
  std::array<std::int64_t, 32> vstr{};
  if (view) view->strides(rank, vstr.data());
  std::int64_t stride = 1;
  for (int d = R - 1; d >= 0; --d) {
    const int din = d - (R - n);
    if (din < 0) {
      str[d] = 0;
      continue;
    }
    const std::int64_t ext = local(din);
    const std::int64_t own = view ? vstr[std::size_t(din)] : stride;
    str[d] = (ext == 1 && sp.ext[std::size_t(d)] != 1) ? 0 : own;
    stride *= ext;
  }
  inner = str[R - 1];
}

// Builds the evaluator of node `x` (IR id `id`) for iteration space `sp`: a
// boundary of the group (leaf, reduction result, step result) reads the buffer
// the plan bound to it; elementwise nodes combine their children's evaluators.
// The three regions of a halo'd operand for iteration space `sp` (its split axis
// is an outer axis of the space: the planner emits halo steps only then).
template <int MR>
void fill_halo(const halo_source& h, std::size_t elem, int rank, const space<MR>& sp) {
  halo_rows& r = h.rows;
  const index_vec& gs = h.have->shape();
  const int n = int(gs.size()), R = sp.ndim;
  r.axis = h.axis + (R - n);
  r.top = h.top;
  r.own = h.own_rows;
  // in place: the leaf's block (or its view's), from the first own row
  std::array<std::int64_t, 32> own{};
  if (h.view) h.view->strides(rank, own.data());
  else {
    const index_vec ls = h.have->lshape(rank), rm = row_major_strides(ls);
    for (int d = 0; d < n; ++d) own[std::size_t(d)] = rm[std::size_t(d)];
  }
  const std::int64_t first_local = h.own_lo - h.have->offset(rank);
  r.base[1] = static_cast<const char*>(h.own) +
              std::int64_t(elem) * ((h.view ? h.view->offset(rank) : 0) + first_local * own[std::size_t(h.axis)]);
  // ghosts: row-major boxes of `top` and `bottom` rows
  std::int64_t row_elems = 1;
  for (int d = 0; d < n; ++d)
    if (d != h.axis) row_elems *= gs[std::size_t(d)];
  r.base[0] = static_cast<const char*>(h.ghosts);
  r.base[2] = static_cast<const char*>(h.ghosts) + std::int64_t(elem) * h.top * row_elems;
  for (int k = 0; k < 3; ++k) {
    const std::int64_t rows = k == 0 ? h.top : k == 2 ? h.bottom : 0;
    std::int64_t stride = 1;
    for (int d = R - 1; d >= 0; --d) {
      const int din = d - (R - n);
      auto& out = r.str[std::size_t(k)][std::size_t(d)];
      if (din < 0) {
        out = 0;
        continue;
      }
      const std::int64_t ext = din == h.axis ? rows : gs[std::size_t(din)];
      const std::int64_t s = k == 1 ? own[std::size_t(din)] : stride;
      out = (gs[std::size_t(din)] == 1 && sp.ext[std::size_t(d)] != 1) ? 0 : s;  // a broadcast axis
      stride *= ext;
    }
    r.inner[std::size_t(k)] = r.str[std::size_t(k)][std::size_t(R - 1)];
  }
}

template <int MR, class X>
auto make_eval(const X& x, int id, const context& ctx, const space<MR>& sp) {
  using K = expr::node_class;
  constexpr K kind = expr::kind_of<X>;
  using T = typename X::value_type;
  if constexpr (kind == K::leaf || kind == K::reduction || kind == K::step_op) {
    const binding& b = (*ctx.bind)[std::size_t(id)];
    if (b.halo) {
      fill_halo(*b.halo, sizeof(T), ctx.rank, sp);
      buffer_eval<T, MR> ev{nullptr};
      ev.halo = &b.halo->rows;
      const auto& in = b.halo->rows.inner;
      ev.inner = in[0] == 1 && in[1] == 1 && in[2] == 1 ? 1 : 0;  // contiguous() before the first row
      return ev;
    }
    buffer_eval<T, MR> ev{static_cast<const T*>(b.ptr) + (b.view ? b.view->offset(ctx.rank) : 0)};
    broadcast_strides(*b.lay, b.view, ctx.rank, sp, ev.str.data(), ev.inner);
    return ev;
  } else if constexpr (kind == K::scalar) {
    return scalar_eval<T>{x.v};
  } else {
    static_assert(kind == K::elementwise, "a tuple root is evaluated part by part");
    constexpr auto off = expr::child_offsets<X>();
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return elementwise_eval<decltype(x.op_tag()), T, decltype(make_eval<MR>(expr::child<I>(x), 0, ctx, sp))...>{
          hana::make_tuple(make_eval<MR>(expr::child<I>(x), id + off[I], ctx, sp)...), x.op()};
    }(std::make_index_sequence<off.size()>{});
  }
}

// Odometer over the outer axes (all but the last) of a space.
template <int MR>
struct outer_iter {
  std::array<std::int64_t, space<MR>::cap> idx{};
  const space<MR>& sp;
  explicit outer_iter(const space<MR>& s) : sp(s) {}
  std::int64_t rows() const {
    std::int64_t n = 1;
    for (int d = 0; d + 1 < sp.ndim; ++d) n *= sp.ext[std::size_t(d)];
    return n;
  }
  void next() {
    for (int d = sp.ndim - 2; d >= 0; --d) {
      if (++idx[std::size_t(d)] < sp.ext[std::size_t(d)]) return;
      idx[std::size_t(d)] = 0;
    }
  }
  // Positions the iterator at outer row r (row-major over the outer dimensions).
  void seek(std::int64_t r) {
    for (int d = sp.ndim - 2; d >= 0; --d) {
      const std::int64_t e = sp.ext[std::size_t(d)];
      idx[std::size_t(d)] = e > 0 ? r % e : 0;
      r = e > 0 ? r / e : 0;
    }
  }
};

template <bool C, class Out, class Ev>
inline void row(Ev& ev, Out* o, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) o[j] = Out(ev.template at<C>(j));
}

// out = the expression, one pass, into strided storage (`ostr` per axis, in
// elements: a view's elements for setitem, or row-major); outer rows [r0, r1)
// only when given (r1 < 0: to the end).
template <int MR, class Out, class Ev>
void run_elementwise_strided(Ev ev, Out* out, const std::int64_t* ostr, const space<MR>& sp, std::int64_t r0 = 0,
                             std::int64_t r1 = -1) {
  if (sp.count() == 0) return;
  const std::int64_t n = sp.ext[std::size_t(sp.ndim - 1)], os = ostr[sp.ndim - 1];
  outer_iter<MR> it(sp);
  const bool c = ev.contiguous();
  if (r0 > 0) it.seek(r0);
  for (std::int64_t r = r0, rows = r1 < 0 ? it.rows() : r1; r < rows; ++r, it.next()) {
    ev.start(it.idx.data(), sp.ndim - 1);
    Out* o = out;
    for (int d = 0; d + 1 < sp.ndim; ++d) o += it.idx[std::size_t(d)] * ostr[d];
    if (os == 1) {
      if (c) row<true>(ev, o, n);
      else row<false>(ev, o, n);
    } else {
      for (std::int64_t j = 0; j < n; ++j) o[j * os] = Out(ev.template at<false>(j));
    }
  }
}

// The same into row-major storage over the space. One kernel body per
// expression, not two: the strided loop with row-major strides costs one
// multiply-add per outer row, and every distinct expression type compiles one
// body fewer (a quarter of its object code).
template <int MR, class Out, class Ev>
void run_elementwise(Ev ev, Out* out, const space<MR>& sp, std::int64_t r0 = 0, std::int64_t r1 = -1) {
  std::array<std::int64_t, space<MR>::cap> str{};
  std::int64_t s = 1;
  for (int d = sp.ndim - 1; d >= 0; --d) {
    str[std::size_t(d)] = s;
    s *= sp.ext[std::size_t(d)];
  }
  run_elementwise_strided<MR>(ev, out, str.data(), sp, r0, r1);
}

// Several expressions over one space, each into its own output, in one pass.
template <int MR, class Evs, class Outs>
void run_elementwise_multi(Evs evs, Outs outs, const space<MR>& sp) {
  if (sp.count() == 0) return;
  const std::int64_t n = sp.ext[std::size_t(sp.ndim - 1)];
  outer_iter<MR> it(sp);
  const bool c = hana::unpack(evs, [](const auto&... e) { return (e.contiguous() && ...); });
  for (std::int64_t r = 0, rows = it.rows(); r < rows; ++r, it.next()) {
    hana::for_each(evs, [&](auto& e) { e.start(it.idx.data(), sp.ndim - 1); });
    constexpr std::size_t K = decltype(hana::size(evs))::value;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      if (c)
        for (std::int64_t j = 0; j < n; ++j)
          ((hana::at_c<I>(outs)[r * n + j] =
                std::remove_pointer_t<std::remove_cvref_t<decltype(hana::at_c<I>(outs))>>(hana::at_c<I>(evs).template at<true>(j))),
           ...);
      else
        for (std::int64_t j = 0; j < n; ++j)
          ((hana::at_c<I>(outs)[r * n + j] =
                std::remove_pointer_t<std::remove_cvref_t<decltype(hana::at_c<I>(outs))>>(hana::at_c<I>(evs).template at<false>(j))),
           ...);
    }(std::make_index_sequence<K>{});
  }
}

// ---- reductions ----
inline constexpr std::int64_t chunk = 1024;

// f(pos, values, len) over the expression's elements in the space, in row-major
// order, `chunk` at a time converted to T (pos: the flat position of the first;
// a contiguous array of type T is handed over a row at a time, in place):
// what consumes an expression in order without materializing it (a fused scan).
template <class T, int MR, class Ev, class F>
void for_each_chunk(Ev& ev, const space<MR>& sp, F&& f) {
  if (sp.count() == 0) return;
  const std::int64_t n = sp.ext[std::size_t(sp.ndim - 1)];
  outer_iter<MR> it(sp);
  const bool c = ev.contiguous();
  alignas(64) T tmp[chunk];
  for (std::int64_t r = 0, rows = it.rows(); r < rows; ++r, it.next()) {
    ev.start(it.idx.data(), sp.ndim - 1);
    if constexpr (std::is_same_v<Ev, buffer_eval<T, MR>>)
      if (c) {  // an array of the type asked for, read in place: no copy
        f(r * n, ev.row, n);
        continue;
      }
    for (std::int64_t j0 = 0; j0 < n; j0 += chunk) {
      const std::int64_t len = std::min(chunk, n - j0);
      if (c)
        for (std::int64_t j = 0; j < len; ++j) tmp[j] = T(ev.template at<true>(j0 + j));
      else
        for (std::int64_t j = 0; j < len; ++j) tmp[j] = T(ev.template at<false>(j0 + j));
      f(r * n + j0, static_cast<const T*>(tmp), len);
    }
  }
}

// f(values, len) with several expressions of one space walked in step: values[s]
// the chunk of the s-th as double (what a weighted or two-axis histogram bins).
template <int MR, class F, class... Ev>
void for_each_chunk_of(const space<MR>& sp, F&& f, Ev&... ev) {
  if (sp.count() == 0) return;
  constexpr std::size_t S = sizeof...(Ev);
  const std::int64_t n = sp.ext[std::size_t(sp.ndim - 1)];
  outer_iter<MR> it(sp);
  alignas(64) double tmp[S][chunk];
  const double* v[S];
  for (std::size_t s = 0; s < S; ++s) v[s] = tmp[s];
  for (std::int64_t r = 0, rows = it.rows(); r < rows; ++r, it.next()) {
    (ev.start(it.idx.data(), sp.ndim - 1), ...);
    for (std::int64_t j0 = 0; j0 < n; j0 += chunk) {
      const std::int64_t len = std::min(chunk, n - j0);
      std::size_t s = 0;
      ([&](auto& e) {
        double* t = tmp[s++];
        if (e.contiguous())
          for (std::int64_t j = 0; j < len; ++j) t[j] = double(e.template at<true>(j0 + j));
        else
          for (std::int64_t j = 0; j < len; ++j) t[j] = double(e.template at<false>(j0 + j));
      }(ev), ...);
      f(static_cast<const double* const*>(v), len);
    }
  }
}

// Sum of a contiguous chunk with 8 independent accumulators (vectorizes without
// reassociation flags) combined pairwise.
template <class A, class V>
A chunk_sum(const V* v, std::int64_t n) {
  A acc[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += A(v[i + l]);
  for (; i < n; ++i) acc[0] += A(v[i]);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// Kahan-Babuska (Neumaier) step: s + x with the lost low part kept in c.
template <class A>
inline void compensated_add(A& s, A& c, A x) {
  const A t = s + x;
  if constexpr (std::is_floating_point_v<A>) {
    // an infinite or overflowing sum has no low part to keep (it would be NaN)
    if (std::isfinite(t)) {
      const A big = (s >= 0 ? s : -s) >= (x >= 0 ? x : -x);
      c += big ? (s - t) + x : (x - t) + s;
    }
  }
  s = t;
}

// Reduces the space over the axes marked in `red` into `out` (row-major over the
// kept axes of the local space). Sums are blocked and compensated: chunks of the
// row are summed with vector accumulators, chunks and rows are combined with
// Neumaier's compensation (`comp` has out's size, zeroed).
template <class Op, int MR, class Acc, class Ev>
void run_reduction(Ev ev, Acc* out, Acc* comp, const space<MR>& sp, const std::array<bool, space<MR>::cap>& red) {
  using V = decltype(ev.template at<true>(0));
  // output strides over the iteration axes (0 on reduced ones)
  std::array<std::int64_t, space<MR>::cap> ostr{};
  std::int64_t s = 1;
  for (int d = sp.ndim - 1; d >= 0; --d) {
    if (red[std::size_t(d)]) continue;
    ostr[std::size_t(d)] = s;
    s *= sp.ext[std::size_t(d)];
  }
  if (sp.count() == 0) return;
  const std::int64_t n = sp.ext[std::size_t(sp.ndim - 1)];
  const bool last_reduced = red[std::size_t(sp.ndim - 1)];
  constexpr bool kahan = Op::compensated && std::is_floating_point_v<Acc>;
  outer_iter<MR> it(sp);
  const bool c = ev.contiguous();
  alignas(64) V tmp[chunk];
  for (std::int64_t r = 0, rows = it.rows(); r < rows; ++r, it.next()) {
    ev.start(it.idx.data(), sp.ndim - 1);
    std::int64_t o = 0;
    for (int d = 0; d + 1 < sp.ndim; ++d) o += it.idx[std::size_t(d)] * ostr[std::size_t(d)];
    for (std::int64_t j0 = 0; j0 < n; j0 += chunk) {
      const std::int64_t len = std::min(chunk, n - j0);
      if (c)
        for (std::int64_t j = 0; j < len; ++j) tmp[j] = ev.template at<true>(j0 + j);
      else
        for (std::int64_t j = 0; j < len; ++j) tmp[j] = ev.template at<false>(j0 + j);
      if (last_reduced) {
        Acc part;
        if constexpr (std::is_same_v<Op, op::sum>) part = chunk_sum<Acc>(tmp, len);
        else {
          part = Op::template identity<Acc>();
          for (std::int64_t j = 0; j < len; ++j) part = Op::combine(part, op::convert<Acc>(tmp[j]));
        }
        if constexpr (kahan) compensated_add(out[o], comp[o], part);
        else out[o] = Op::combine(out[o], part);
      } else {
        Acc* orow = out + o + j0;
        if constexpr (kahan) {
          Acc* crow = comp + o + j0;
          for (std::int64_t j = 0; j < len; ++j) compensated_add(orow[j], crow[j], op::convert<Acc>(tmp[j]));
        } else {
          for (std::int64_t j = 0; j < len; ++j) orow[j] = Op::combine(orow[j], op::convert<Acc>(tmp[j]));
        }
      }
    }
  }
}

// argmin/argmax: best value and its global index per output element. `off` is
// the global offset of the local block per axis, `gstr` the global row-major
// strides (used when all axes are reduced: NumPy's flat index).
template <class Op, int MR, class V, class Ev>
void run_arg_reduction(Ev ev, V* best, std::int64_t* index, const space<MR>& sp,
                       const std::array<bool, space<MR>::cap>& red, const std::array<std::int64_t, space<MR>::cap>& off,
                       const std::array<std::int64_t, space<MR>::cap>& gstr, bool flat) {
  std::array<std::int64_t, space<MR>::cap> ostr{};
  std::int64_t s = 1;
  int axis = -1;
  for (int d = sp.ndim - 1; d >= 0; --d) {
    if (red[std::size_t(d)]) {
      axis = d;
      continue;
    }
    ostr[std::size_t(d)] = s;
    s *= sp.ext[std::size_t(d)];
  }
  if (sp.count() == 0) return;
  const std::int64_t n = sp.ext[std::size_t(sp.ndim - 1)];
  outer_iter<MR> it(sp);
  for (std::int64_t r = 0, rows = it.rows(); r < rows; ++r, it.next()) {
    ev.start(it.idx.data(), sp.ndim - 1);
    std::int64_t o = 0, g = 0;
    for (int d = 0; d + 1 < sp.ndim; ++d) {
      o += it.idx[std::size_t(d)] * ostr[std::size_t(d)];
      g += (it.idx[std::size_t(d)] + off[std::size_t(d)]) * gstr[std::size_t(d)];
    }
    const std::int64_t last = std::size_t(sp.ndim - 1);
    for (std::int64_t j = 0; j < n; ++j) {
      const V v = V(ev.template at<false>(j));
      const std::int64_t oo = red[std::size_t(last)] ? o : o + j;
      std::int64_t gi;
      if (flat) gi = g + (j + off[std::size_t(last)]) * gstr[std::size_t(last)];
      else gi = (axis == sp.ndim - 1 ? j : it.idx[std::size_t(axis)]) + off[std::size_t(axis)];
      if (index[oo] < 0 || Op::better(v, best[oo])) {
        best[oo] = v;
        index[oo] = gi;
      }
    }
  }
}

}  // namespace ember::kernel
