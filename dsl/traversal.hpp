// One walk over expression trees. Every pass over an expression (lowering to the
// planner's graph, the plan-cache fingerprint, binding leaves to storage, finding
// the node of a plan step, building a fused kernel's evaluator) goes through
// `for_each_child`, which owns the pre-order numbering the planner's node ids use:
// a node is `id`, its first child `id + 1`, each next child the previous one's id
// plus the previous subtree's node count. A new node kind is one `node_traits`
// specialization here and one branch per pass that treats it differently.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/size.hpp>

#include "expr.hpp"

namespace ember::expr {

// What a node is to the passes over the tree.
enum class node_class {
  scalar,       // a constant, no storage
  leaf,         // an array handle
  elementwise,  // fused into its consumers' kernel
  reduction,    // the end of a fused group: its argument is read in the kernel
  step_op,      // a step of its own (matmul, transpose, scan): the planner gives it an algorithm
  tuple,        // the root of eval(e1, e2, ...)
};

// Undefined for anything else: a new node type fails to compile until it says
// what it is.
template <class X>
struct node_traits;
template <class T>
struct node_traits<scalar<T>> {
  static constexpr node_class kind = node_class::scalar;
};
template <dtype T, int N>
struct node_traits<leaf<T, N>> {
  static constexpr node_class kind = node_class::leaf;
};
template <class Op, class... A>
struct node_traits<elementwise<Op, A...>> {
  static constexpr node_class kind = node_class::elementwise;
};
template <class Op, class A, int R, bool E>
struct node_traits<reduction<Op, A, R, E>> {
  static constexpr node_class kind = node_class::reduction;
};
template <class A, class B, bool O>
struct node_traits<matmul_node<A, B, O>> {
  static constexpr node_class kind = node_class::step_op;
};
template <class A>
struct node_traits<transpose_node<A>> {
  static constexpr node_class kind = node_class::step_op;
};
template <class... E>
struct node_traits<tuple_root<E...>> {
  static constexpr node_class kind = node_class::tuple;
};

template <class X>
inline constexpr node_class kind_of = node_traits<std::remove_cvref_t<X>>::kind;

// Nodes in the subtree of X (itself included): the distance from a node's id to
// its next sibling's.
template <class X>
inline constexpr int node_count_v = std::remove_cvref_t<X>::node_count;

// The pre-order ids of X's children relative to X's own id (1, 1 + the first
// child's node count, ...), known at compile time.
template <class X>
constexpr auto child_offsets() {
  using D = std::remove_cvref_t<X>;
  if constexpr (kind_of<D> == node_class::reduction) {
    return std::array<int, 1>{1};
  } else if constexpr (kind_of<D> == node_class::scalar || kind_of<D> == node_class::leaf) {
    return std::array<int, 0>{};
  } else {
    return []<class... A>(hana::tuple<A...>*) {
      std::array<int, sizeof...(A)> r{};
      int next = 1;
      std::size_t k = 0;
      ((r[k++] = next, next += node_count_v<A>), ...);
      return r;
    }(static_cast<decltype(std::declval<D>().args)*>(nullptr));
  }
}

// Child I of x (a reduction's argument is its child 0).
template <std::size_t I, class X>
constexpr const auto& child(const X& x) {
  if constexpr (kind_of<X> == node_class::reduction) {
    static_assert(I == 0, "a reduction has one child");
    return x.arg;
  } else {
    return hana::at_c<I>(x.args);
  }
}

template <class X>
inline constexpr std::size_t child_count_v = child_offsets<X>().size();

// f(child, child_id) for each child of x, whose id is `id`, in order.
template <class X, class F>
void for_each_child(const X& x, int id, F&& f) {
  constexpr auto off = child_offsets<X>();
  [&]<std::size_t... I>(std::index_sequence<I...>) { (f(child<I>(x), id + off[I]), ...); }(
      std::make_index_sequence<off.size()>{});
}

// f(leaf, id) for every array leaf of x, in pre-order.
template <class X, class F>
void for_each_leaf(const X& x, int id, F&& f) {
  if constexpr (kind_of<X> == node_class::leaf) f(x, id);
  else for_each_child(x, id, [&](const auto& c, int cid) { for_each_leaf(c, cid, f); });
}

// f(node) for the node with id `target` in x (whose id is `id`), instantiated for
// the node types whose kind `Is` accepts only; nothing if that node is of another
// kind. Only the subtree holding `target` is walked.
template <template <class> class Is, class X, class F>
void visit_node(const X& x, int id, int target, F&& f) {
  if constexpr (Is<X>::value) {
    if (id == target) {
      f(x);
      return;
    }
  }
  for_each_child(x, id, [&](const auto& c, int cid) {
    if (target >= cid && target < cid + node_count_v<decltype(c)>) visit_node<Is>(c, cid, target, f);
  });
}

// f(node) for the elementwise operand, with id `target`, of a step op (the root
// of a fused group that is not the expression's root). Instantiated for those
// operands only: a kernel is compiled per group, not per subexpression.
template <class X, class F>
void visit_step_operand(const X& x, int id, int target, F&& f) {
  for_each_child(x, id, [&](const auto& c, int cid) {
    using C = std::remove_cvref_t<decltype(c)>;
    if constexpr (kind_of<X> == node_class::step_op && kind_of<C> == node_class::elementwise) {
      if (cid == target) {
        f(c);
        return;
      }
    }
    if (target > cid && target < cid + node_count_v<C>) visit_step_operand(c, cid, target, f);
  });
}

// Whether an op in x's tree carries state (an elementwise lookup's sorted
// table, sorting/lookup.hpp: host memory). Such expressions get no GPU kernels:
// their kernels run on the host (the plan copies GPU operands there).
template <class X>
constexpr bool has_op_state() {
  using D = std::remove_cvref_t<X>;
  if constexpr (kind_of<D> == node_class::scalar || kind_of<D> == node_class::leaf) {
    return false;
  } else {
    bool own = false;
    if constexpr (kind_of<D> == node_class::elementwise) own = !std::is_empty_v<decltype(D::op_tag())>;
    return own || []<std::size_t... I>(std::index_sequence<I...>) {
      return (has_op_state<decltype(child<I>(std::declval<const D&>()))>() || ... || false);
    }(std::make_index_sequence<child_count_v<D>>{});
  }
}
template <class X>
inline constexpr bool has_op_state_v = has_op_state<X>();

// Kind predicates for visit_node.
template <node_class K>
struct is_kind {
  template <class X>
  struct pred : std::bool_constant<kind_of<X> == K> {};
};
template <class X>
using is_reduction_node = is_kind<node_class::reduction>::pred<X>;
template <class X>
using is_step_op_node = is_kind<node_class::step_op>::pred<X>;

}  // namespace ember::expr
