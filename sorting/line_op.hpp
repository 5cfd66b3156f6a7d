// Operations on every line along one axis of an array, each line on its own:
// partition and argpartition, median and quantile along an axis. A node of the
// expression (nothing is computed when it is built) and a step of the plan,
// `local_select`: the planner gives the operand a layout in which the axis is
// local (moving it first when it is split along the axis: a planned resplit
// with exact bytes), each rank selects within its lines, nothing is sent, and
// the result keeps the lines' split (without the axis when the operation drops
// it). An expression operand is one fused pass before it; the next fused
// kernel reads the result (`median(a * w, 1) / s`).
//
// The operation is a small options type Op (sorting/topk.hpp,
// sorting/order_statistics.hpp): its `name`, whether it drops the axis (or
// gives it a `length` of its own: topk's k), its result type, its options as
// EXPLAIN shows them and as the plan cache keys them, and `run` over one
// rank's block.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "../dsl/eval.hpp"
#include "../dsl/shift.hpp"

namespace ember {
namespace expr {

template <class Op, class A>
struct line_node : node_base {
  using operand_type = typename A::value_type;
  using value_type = typename Op::template result<operand_type>;
  static constexpr int ndim = Op::drops_axis ? A::ndim - 1 : A::ndim;
  static constexpr bool exact_ndim = A::exact_ndim;
  static constexpr int node_count = 1 + A::node_count;
  static constexpr bool with_index = Op::with_index;
  static Op op_tag() { return {}; }
  hana::tuple<A> args;
  int line_axis = 0;
  Op opts;
  dims shape_;
  line_node(A a, int axis, Op o) : args(std::move(a)), opts(std::move(o)) {
    const dims s = hana::at_c<0>(args).shape_dims();
    line_axis = detail::normalized_axis(axis, int(s.size()), Op::name.data());
    opts.check(index_vec(s.begin(), s.end()), line_axis);
    for (int d = 0; d < int(s.size()); ++d) {
      if (Op::drops_axis && d == line_axis) continue;
      if constexpr (requires { opts.length; })  // topk: k along the axis
        shape_.push_back(d == line_axis ? opts.length : s[std::size_t(d)]);
      else
        shape_.push_back(s[std::size_t(d)]);
    }
  }
  const dims& shape_dims() const { return shape_; }
  index_vec shape() const { return index_vec(shape_.begin(), shape_.end()); }
  std::string options_text() const { return opts.text(); }
  // The ranks a distributed operation over a split vector places (partition's
  // kth; the planner's bound), or 0: the operation runs on local lines only.
  std::int64_t ranks_placed() const {
    if constexpr (requires { opts.ranks_placed(); })
      return ndim == 1 ? std::int64_t(opts.ranks_placed()) : 0;
    else
      return 0;
  }
  std::uint64_t plan_key() const { return opts.key(); }
  // this rank's block of the operand (local shape `lshape`, the axis whole) into
  // its block of the result
  void run_lines(const index_vec& lshape, const operand_type* in, value_type* out) const {
    opts.run(lshape, line_axis, in, out);
  }
  // a vector split along the axis (laid out as `l`) into this rank's block of the balanced result
  void run_vector(const layout& l, const communicator& c, const operand_type* in, value_type* out) const {
    opts.run_vector(l, c, in, out);
  }
};

template <class Op, class A>
struct node_traits<line_node<Op, A>> {
  static constexpr node_class kind = node_class::step_op;
};

}  // namespace expr

namespace detail {

template <class Op, class A>
auto make_line_node(A&& a, int axis, Op o) {
  auto n = expr::step_operand(expr::as_node(std::forward<A>(a)));
  return expr::line_node<Op, decltype(n)>(std::move(n), axis, std::move(o));
}

// (the rows of a row-major block as (outer, n, inner) around `axis`)
inline void line_geometry(const index_vec& ls, int axis, std::int64_t& outer, std::int64_t& len, std::int64_t& inner) {
  outer = inner = 1;
  len = ls[std::size_t(axis)];
  for (int d = 0; d < axis; ++d) outer *= ls[std::size_t(d)];
  for (int d = axis + 1; d < int(ls.size()); ++d) inner *= ls[std::size_t(d)];
}

}  // namespace detail
}  // namespace ember
