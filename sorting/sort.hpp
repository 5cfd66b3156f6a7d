// Sorting: NumPy's sort and argsort, along any axis of any split.
//
//   ember::dndarray<double, 1> s = ember::sort(x);      // 1-D split: a sample sort, balanced result
//   auto i = ember::argsort(x, -1, {.stable = true});   // global int64 indices
//   auto d = ember::sort(a, 1, {.descending = true});   // along a local axis: no communication
//   std::cout << ember::explain(ember::sort(x));        // sample_sort, its bytes a bound ("<=")
//
// sort and argsort build a node (nothing is computed), a step of the plan like
// cumsum: an expression operand is one fused pass before it, and the next fused
// kernel reads the result (`sort(x * w) / n`). Along a local axis each rank sorts
// its lines (step local_sort). A 1-D array split over the ranks is sorted by the
// sample sort of sorting/sample_sort.hpp (step sample_sort): the result is
// balanced, argsort's indices are global, and the traffic depends on the data,
// so the plan predicts a bound and last_trace() reports what was sent. An N-D
// array sorted along its split axis is first moved to a split along another
// axis (the planner picks which), so the sorted axis is local; the result stays
// split along that axis (its split() says which).
// NaN sorts last, as in NumPy (`descending` is the ascending order reversed, so
// NaN comes first there). argsort is stable always (ties in index order), so
// `.stable` changes nothing for it; for sort it picks std::stable_sort locally.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "../dsl/eval.hpp"
#include "../dsl/shift.hpp"
#include "../shape/shape.hpp"
#include "sample_sort.hpp"

namespace ember {

namespace expr {

template <bool WithIndex>
struct sort_op {
  static constexpr std::string_view name = WithIndex ? "argsort" : "sort";
};

// sort(A) or argsort(A) along `sort_axis`: A's shape; A's dtype or int64.
template <bool WithIndex, class A>
struct sort_node : node_base {
  using operand_type = typename A::value_type;
  using value_type = std::conditional_t<WithIndex, std::int64_t, operand_type>;
  static constexpr int ndim = A::ndim;
  static constexpr bool exact_ndim = A::exact_ndim;
  static constexpr int node_count = 1 + A::node_count;
  static constexpr bool with_index = WithIndex;
  static sort_op<WithIndex> op_tag() { return {}; }
  hana::tuple<A> args;
  int sort_axis = 0;
  sort_options opts;
  dims shape_;
  sort_node(A a, int axis, const sort_options& o) : args(std::move(a)), opts(o), shape_(hana::at_c<0>(args).shape_dims()) {
    sort_axis = detail::normalized_axis(axis, int(shape_.size()), sort_op<WithIndex>::name.data());
  }
  const dims& shape_dims() const { return shape_; }
  index_vec shape() const { return index_vec(shape_.begin(), shape_.end()); }
  // as EXPLAIN shows them (NumPy's spelling of a stable sort)
  std::string options_text() const {
    std::string t = opts.descending ? "descending" : "";
    if (opts.stable && !WithIndex) t += std::string(t.empty() ? "" : ", ") + "kind='stable'";
    return t;
  }
};

template <bool WithIndex, class A>
struct node_traits<sort_node<WithIndex, A>> {
  static constexpr node_class kind = node_class::step_op;
};

}  // namespace expr

namespace detail {

template <bool WithIndex, array_like A>
auto make_sort(A&& a, int axis, const sort_options& o) {
  static_assert(expr::node_t<A>::ndim >= 1, "ember::sort/argsort: needs an array of at least one axis");
  auto n = expr::step_operand(expr::as_node(std::forward<A>(a)));
  return expr::sort_node<WithIndex, decltype(n)>(std::move(n), axis, o);
}

}  // namespace detail

// np.sort(a, axis=-1): `a` sorted along `axis` (a node: assign or eval it).
// Options: {.stable = false, .descending = false}.
template <array_like A>
auto sort(A&& a, int axis = -1, const sort_options& o = {}) {
  return detail::make_sort<false>(std::forward<A>(a), axis, o);
}

// np.argsort(a, axis=-1): int64 indices along `axis` that sort it (global
// indices for a split vector), ties in index order.
template <array_like A>
auto argsort(A&& a, int axis = -1, const sort_options& o = {}) {
  return detail::make_sort<true>(std::forward<A>(a), axis, o);
}

}  // namespace ember
