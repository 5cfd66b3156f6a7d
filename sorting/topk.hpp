// Partial sorts: NumPy's partition and argpartition, and topk (PyTorch's
// spelling; NumPy writes np.sort(a)[::-1][:k]).
//
//   auto p = ember::partition(x, 5);                 // p[5] is where a sort puts it; smaller before, larger after
//   auto i = ember::argpartition(x, {10, 20});       // global int64 indices
//   auto [v, idx] = ember::topk(x, 10);              // the 10 largest, largest first, their global indices
//   auto [lo, li] = ember::topk(a, 3, 1, {.largest = false});   // along a local axis: no communication
//
// Along the split axis of a vector these are distributed (sorting/partition.hpp:
// distributed selection of the pivots, no sort; one all-to-all places every
// element) and the result is balanced; along a local axis each rank works on
// its lines. An N-D array along its split axis is first resplit along another
// axis, as for sort. NaN sorts last (partition) and counts as the largest
// value (topk, as sort's descending order). topk's values come sorted, ties in
// index order. A partition of a split vector keeps the elements of each
// partition in their global order (NumPy leaves that order unspecified); along
// a local axis it is std::nth_element's.
//
// partition and argpartition are nodes of the expression and steps of the plan
// (sorting/line_op.hpp): along a local axis `local_select`; a vector along its
// split axis `distributed_partition` (its traffic a bound: the selection's
// rounds and the all-to-all; the result balanced); an array of more axes along
// its split axis has its operand resplit first, a planned move. topk is a line
// node too (`local_select` along a local axis, `distributed_topk` along a
// vector's split axis: the k-th value selected, the candidates sorted across the
// ranks, a bound), evaluated when topk() is called, as it returns two arrays.
#pragma once

#include <algorithm>
#include <memory>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "../dsl/eval.hpp"
#include "../dsl/shift.hpp"
#include "../shape/shape.hpp"
#include "line_op.hpp"
#include "partition.hpp"
#include "sort.hpp"

namespace ember {

struct topk_options {
  bool largest = true;  // false: the k smallest, smallest first
};

template <class T, int N>
struct topk_result {
  dndarray<T, N> values;
  dndarray<std::int64_t, N> indices;  // along the axis (global for a split vector)
};

namespace detail {

// NumPy's kth: negative counts from the end; sorted, each once.
inline std::vector<std::int64_t> normalized_kth(std::vector<std::int64_t> kth, std::int64_t len, int axis,
                                                const index_vec& shape, const char* what) {
  for (auto& k : kth) {
    const std::int64_t orig = k;
    if (k < 0) k += len;
    if (k < 0 || k >= len)
      throw value_error(std::string(what) + ": kth(=" + std::to_string(orig) + ") out of bounds (" + std::to_string(len) +
                        ") for axis " + std::to_string(axis) + " of an array of shape " + shape_str(shape));
  }
  std::sort(kth.begin(), kth.end());
  kth.erase(std::unique(kth.begin(), kth.end()), kth.end());
  return kth;
}

// partition/argpartition along an axis, as a line operation (sorting/line_op.hpp).
template <bool WithIndex>
struct partition_line_op {
  static constexpr std::string_view name = WithIndex ? "argpartition" : "partition";
  static constexpr bool drops_axis = false, with_index = WithIndex;
  template <class T>
  using result = std::conditional_t<WithIndex, std::int64_t, T>;
  std::vector<std::int64_t> kth;
  void check(const index_vec& shape, int axis) {
    kth = normalized_kth(std::move(kth), shape[std::size_t(axis)], axis, shape, WithIndex ? "ember::argpartition" : "ember::partition");
  }
  std::string text() const {
    std::string t = "kth=[";
    for (std::size_t i = 0; i < kth.size(); ++i) t += (i ? ", " : "") + std::to_string(kth[i]);
    return t + "]";
  }
  std::uint64_t key() const {
    std::uint64_t h = 0x9a47;
    for (auto k : kth) h = (h ^ std::uint64_t(k)) * 0x100000001b3ull;
    return h;
  }
  template <class T>
  void run(const index_vec& ls, int axis, const T* in, result<T>* out) const {
    if constexpr (WithIndex) {  // the partitioned values are scratch; the indices are the result
      std::int64_t n = 1;
      for (auto e : ls) n *= e;
      std::vector<T> values(static_cast<std::size_t>(n));
      partition_local<T>(ls, axis, in, values.data(), out, kth);
    } else {
      partition_local<T>(ls, axis, in, out, nullptr, kth);
    }
  }
  // a split vector (sorting/partition.hpp): distributed, the result balanced
  std::size_t ranks_placed() const { return kth.size(); }
  template <class T>
  void run_vector(const layout& l, const communicator& c, const T* in, result<T>* out) const {
    if constexpr (WithIndex) {
      std::vector<T> values(static_cast<std::size_t>(layout::balanced(l.shape(), 0, c.size()).local_size(c.rank())));
      partition_vector<T>(l, c, in, values.data(), out, kth);
    } else {
      partition_vector<T>(l, c, in, out, nullptr, kth);
    }
  }
};

template <bool WithIndex, class A>
auto make_partition(A&& a, std::vector<std::int64_t> kth, int axis) {
  using T = typename expr::node_t<A>::value_type;
  constexpr int N = expr::node_t<A>::ndim;
  static_assert(N >= 1, "ember: partition needs an array of at least one axis");
  static_assert(!is_complex_v<T>, "ember: partition takes real numbers (NumPy orders complex lexicographically; not here yet)");
  return make_line_node(std::forward<A>(a), axis, partition_line_op<WithIndex>{std::move(kth)});
}

// topk along an axis, as a line operation (sorting/line_op.hpp) whose values
// are the node's result; the indices, its second result, land in `indices`
// (this rank's block of them, in the values' layout), which topk() hands out
// with the values: a plan step has one output value, and the indices need no
// place in the plan of their own.
struct topk_line_op {
  static constexpr std::string_view name = "topk";
  static constexpr bool drops_axis = false, with_index = false;
  template <class T>
  using result = T;
  std::int64_t length = 0;  // k
  bool largest = true;
  std::shared_ptr<std::vector<std::int64_t>> indices = std::make_shared<std::vector<std::int64_t>>();
  void check(const index_vec& shape, int axis) const {
    const std::int64_t len = shape[std::size_t(axis)];
    if (length < 0 || length > len)
      throw value_error("ember::topk: k = " + std::to_string(length) + " is out of range for axis " + std::to_string(axis) +
                        " of length " + std::to_string(len) + " (shape " + shape_str(shape) + ")");
  }
  std::string text() const { return "k=" + std::to_string(length) + (largest ? "" : ", smallest"); }
  std::uint64_t key() const { return std::uint64_t(length) * 2 + largest; }
  template <class T>
  void run(const index_vec& ls, int axis, const T* in, T* out) const {
    index_vec os = ls;
    os[std::size_t(axis)] = length;
    std::int64_t n = 1;
    for (auto e : os) n *= e;
    indices->assign(static_cast<std::size_t>(n), 0);
    topk_local<T>(ls, axis, in, length, largest, out, indices->data());
  }
  // a split vector (sorting/partition.hpp): the k-th value selected, the
  // candidates sorted across the ranks; the result balanced
  std::size_t ranks_placed() const { return 1; }
  template <class T>
  void run_vector(const layout& l, const communicator& c, const T* in, T* out) const {
    indices->assign(static_cast<std::size_t>(layout::balanced({length}, 0, c.size()).local_size(c.rank())), 0);
    topk_vector<T>(l, c, in, length, largest, out, indices->data());
  }
};

// topk as a node: the step EXPLAIN shows (local_select along a local axis,
// distributed_topk along a vector's split axis).
template <class A>
auto topk_node(A&& a, std::int64_t k, int axis, const topk_options& o) {
  using T = typename expr::node_t<A>::value_type;
  static_assert(expr::node_t<A>::ndim >= 1, "ember::topk needs an array of at least one axis");
  static_assert(!is_complex_v<T>, "ember::topk takes real numbers (NumPy orders complex lexicographically; not here yet)");
  return make_line_node(std::forward<A>(a), axis, topk_line_op{k, o.largest});
}

}  // namespace detail

// np.partition(a, kth, axis=-1): the element at position kth is the one a sort
// puts there; every element before it is not larger, every one after not smaller.
// A node: assign or eval it.
template <array_like A>
auto partition(A&& a, std::int64_t kth, int axis = -1) {
  return detail::make_partition<false>(std::forward<A>(a), {kth}, axis);
}
// np.partition(a, [k0, k1, ...], axis=-1): every kth in its sorted place at once.
template <array_like A>
auto partition(A&& a, const std::vector<std::int64_t>& kth, int axis = -1) {
  return detail::make_partition<false>(std::forward<A>(a), kth, axis);
}
// np.argpartition: the int64 indices along `axis` (global for a split vector)
// that partition `a`.
template <array_like A>
auto argpartition(A&& a, std::int64_t kth, int axis = -1) {
  return detail::make_partition<true>(std::forward<A>(a), {kth}, axis);
}
template <array_like A>
auto argpartition(A&& a, const std::vector<std::int64_t>& kth, int axis = -1) {
  return detail::make_partition<true>(std::forward<A>(a), kth, axis);
}

// The k largest elements along `axis` (or the k smallest: {.largest = false}),
// in that order, with their indices along the axis: `auto [values, indices] =
// ember::topk(a, k)`. Ties in index order; NaN is the largest value. Evaluated
// now through the plan (explain(ember::detail::topk_node(a, k)) shows it).
template <array_like A>
auto topk(A&& a, std::int64_t k, int axis = -1, const topk_options& o = {}) {
  using T = typename expr::node_t<A>::value_type;
  constexpr int N = expr::node_t<A>::ndim;
  auto node = detail::topk_node(std::forward<A>(a), k, axis, o);
  const auto indices = node.opts.indices;
  dndarray<T, N> values = ember::eval(std::move(node));
  dndarray<std::int64_t, N> idx(values.layout(), values.comm());
  if (std::int64_t(indices->size()) != idx.lnumel())
    throw error("ember::topk: internal: " + std::to_string(indices->size()) + " indices for a block of " +
                std::to_string(idx.lnumel()) + " values on rank " + std::to_string(values.comm().rank()));
  std::copy(indices->begin(), indices->end(), idx.ldata());
  return topk_result<T, N>{std::move(values), std::move(idx)};
}

}  // namespace ember
