// Evaluation entry points: assignment to a dndarray, ember::eval (one or several
// expressions), explain and plan_for. Lowering is dsl/lower.hpp, the plan cache
// dsl/plan_cache.hpp, running a plan dsl/executor.hpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include <boost/hana/unpack.hpp>

#include "executor.hpp"

namespace ember {

// Options of ember::eval: `{.split = k}` or `{.split = ember::none}` fixes the
// result's layout; by default the planner chooses.
struct split_request {
  bool given = false;
  split_axis axis;
  split_request() = default;
  split_request(int k) : given(true), axis(k) {}                // NOLINT: designated-initializer use
  split_request(std::nullopt_t) : given(true), axis() {}        // NOLINT
};
struct eval_options {
  split_request split;
};

namespace detail {

// EMBER_CHECK_REPLICATED: every rank asks eval for the same result split.
inline void check_same_options(const communicator& c, const eval_options& o) {
  if (!replicated_checks()) return;
  const std::uint64_t h = !o.split.given ? 0 : o.split.axis ? std::uint64_t(*o.split.axis) + 2 : 1;
  check_replicated(c, h, "ember::eval", "options", [&] {
    return !o.split.given ? std::string("no split") : "{.split = " + axis_str(o.split.axis) + "}";
  });
}

template <class E>
std::optional<layout> target_layout(const E& e, const communicator& c, const eval_options& o) {
  if (!o.split.given) return std::nullopt;
  const index_vec s = e.shape();
  if (o.split.axis) check_axis(*o.split.axis, int(s.size()), "eval");
  return layout::balanced(s, o.split.axis, c.size());
}

// Evaluates `e` and returns (layout, storage) of the result.
struct evaluated {
  layout lay;
  std::shared_ptr<void> storage;
  device_kind device;
};
// `dest_view`: `dest` is a view's base storage, written through the view.
template <class Code, class E>
evaluated evaluate(const E& e, const std::optional<layout>& target, std::shared_ptr<void> dest,
                   const view_geometry* dest_view = nullptr) {
  if constexpr (expr::is_strided_leaf<E>::value) {
    // a view alone: a fused kernel copies its elements out (a plan's steps
    // compute or move values; a leaf is neither)
    return evaluate<Code>(astype<typename E::value_type>(e), target, std::move(dest), dest_view);
  } else {
    const communicator& c = *comm_of(e);
    auto cp = planned<Code>(e, c, target);
    executor<E, Code> ex(e, *cp, c);
    auto storage = ex.run(std::move(dest), dest_view);
    return evaluated{cp->p.values[std::size_t(cp->p.result)], std::move(storage), cp->p.device};
  }
}

// Evaluates an expression with a replicated 0-d result and returns the value on
// the host of every rank (from the device for GPU arrays).
template <class Code, class E>
typename E::value_type evaluate_scalar(const E& e) {
  using T = typename E::value_type;
  auto r = evaluate<Code>(e, std::nullopt, nullptr);
  T v{};
  copy_between(&v, device_kind::cpu, r.storage.get(), r.device, std::int64_t(sizeof(T)));
  return v;
}

template <class Code, class T, int N, class E>
void assign_expression(dndarray<T, N>& dst, const E& e) {
  using V = typename E::value_type;
  static_assert(!E::exact_ndim || E::ndim == N,
                "ember: assigning an expression to a dndarray of a different rank (expression rank != array rank)");
  const auto& shape = e.shape_dims();
  if (int(shape.size()) != N)
    throw shape_error("ember: the expression has shape " + shape_str(shape) + " (rank " +
                      std::to_string(shape.size()) + "), assigned to a dndarray of rank " + std::to_string(N));
  if constexpr (std::is_same_v<V, T>) {
    if (dst.valid() && std::equal(shape.begin(), shape.end(), dst.layout().shape().begin(),
                                  dst.layout().shape().end()) &&
        comm_of(e)->congruent(dst.comm()) && dst.device() == device_of(e)) {
      // into the existing storage, in the existing layout
      std::shared_ptr<void> storage(std::shared_ptr<T[]>(), dst.lstorage());
      evaluate<Code>(e, dst.layout(), storage);
      return;
    }
    // otherwise the name is rebound to a new array (another shape, or another
    // device: the result lives where the expression's arrays do)
    auto r = evaluate<Code>(e, std::nullopt, nullptr);
    dst = dndarray<T, N>(r.lay, *comm_of(e), std::shared_ptr<T[]>(r.storage, static_cast<T*>(r.storage.get())), r.device);
  } else {
    // a different element type: cast on the way in, as NumPy's r[...] = expr
    assign_expression<Code>(dst, astype<T>(e));
  }
}

}  // namespace detail

// Evaluates an expression into a new array (one fused pass per group, planned
// communication). `{.split = k}` / `{.split = ember::none}` fixes its layout.
// The same with the result's rank given, for expressions whose rank is known only
// at run time (reductions with keepdims options or several axes).
template <int M, expression E, class Code = detail::this_code>
auto eval(const E& e, const eval_options& o = {}) {
  using T = typename E::value_type;
  const communicator& c = *detail::comm_of(e);
  const index_vec shape = e.shape();
  if (int(shape.size()) != M)
    throw shape_error("ember::eval: the expression's result has shape " + detail::shape_str(shape) + " (rank " +
                      std::to_string(shape.size()) + "), not rank " + std::to_string(M) +
                      "; its rank is known only at run time: use ember::eval<rank>(e) or assign it to a dndarray");
  detail::check_same_options(c, o);
  auto r = detail::evaluate<Code>(e, detail::target_layout(e, c, o), nullptr);
  return dndarray<T, M>(r.lay, c, std::shared_ptr<T[]>(r.storage, static_cast<T*>(r.storage.get())), r.device);
}

// Evaluates an expression into a new array (one fused pass per group, planned
// communication). `{.split = k}` / `{.split = ember::none}` fixes its layout.
template <expression E, class Code = detail::this_code>
auto eval(const E& e, const eval_options& o = {}) {
  return eval<E::ndim, E, Code>(e, o);
}

template <dtype T, int N>
dndarray<T, N> eval(const dndarray<T, N>& a, const eval_options& o = {}) {
  detail::check_same_options(a.comm(), o);
  if (!o.split.given) return a;
  return resplit(a, o.split.axis);
}

namespace detail {
// copyto's same-shape case: one planned evaluation into dst's storage.
template <dtype T, int N, class E>
void copy_into(const dndarray<T, N>& dst, const E& node) {
  const auto& d = dst.layout();
  if (!comm_of(node)->congruent(dst.comm()))
    throw value_error("ember::copyto: the source and the destination (" + std::string(dtype_name<T>()) +
                      " array of shape " + shape_str(d.shape()) + ") live on different communicators");
  if (device_of(node) != dst.device())
    throw value_error("ember::copyto: the source is in " + std::string(device_name(device_of(node))) +
                      " memory and the destination (" + std::string(dtype_name<T>()) + " array of shape " +
                      shape_str(d.shape()) + ") in " + std::string(device_name(dst.device())) +
                      " memory; move one with .to()");
  if constexpr (std::is_same_v<E, expr::leaf<T, N>>) {
    move_values(node.a, dst);  // an array of the same dtype: no plan, the move itself
  } else {
    dndarray<T, N> handle = dst;  // same storage: the assignment writes into it
    assign_expression<this_code>(handle, node);
  }
}
}  // namespace detail

// NumPy's np.copyto(dst, src): src's values written into dst's existing storage
// (never a rebinding: every handle and view of dst sees them), whatever the two
// layouts are. `src` is an array, an expression or a scalar, broadcast to dst's
// shape. An array or expression of dst's shape in another layout is one planned
// move straight into dst's blocks: `ember::copyto(Y, X)` with X split 0 and Y
// split 1 is the exchange of ember::resplit(X, 1) with Y's storage as its
// destination, allocating nothing after a loop's first iteration. (`Y =
// ember::resplit(X, 1)` instead makes Y a handle to a new array, like `Y = X`;
// its block comes from the pool, runtime/memory_pool.hpp.) Casting follows
// NumPy's default casting='same_kind': float to integer or anything to bool is
// a compile error (cast with ember::astype<T>(src)).
template <dtype T, int N, class S>
  requires operand<S>
void copyto(const dndarray<T, N>& dst, const S& src) {
  using V = typename decltype([] {
    if constexpr (scalar_like<S>) return std::type_identity<std::remove_cvref_t<S>>{};
    else return std::type_identity<typename std::remove_cvref_t<S>::value_type>{};
  }())::type;
  static_assert(!(std::is_integral_v<T> && std::is_floating_point_v<V>),
                "ember::copyto: a floating-point value into an integer array is not a same_kind cast (NumPy's "
                "default); cast explicitly: ember::copyto(dst, ember::astype<T>(src))");
  static_assert(!std::is_same_v<T, bool> || std::is_same_v<V, bool>,
                "ember::copyto: a non-bool value into a bool array is not a same_kind cast (NumPy's default); "
                "compare explicitly: ember::copyto(mask, src != 0)");
  static_assert(is_complex_v<T> || !is_complex_v<V>,
                "ember::copyto: a complex value into a real array is not a same_kind cast (NumPy's default); "
                "take a part explicitly: ember::copyto(dst, ember::real(src))");
  if constexpr (scalar_like<S>) {
    dst() = src;  // a fill through the whole-array view
  } else {
    const auto node = expr::as_node(src);
    using E = std::remove_cvref_t<decltype(node)>;
    const index_vec s = node.shape();
    const auto& d = dst.layout();
    if constexpr (E::exact_ndim && E::ndim != N) {
      dst() = node;  // broadcast through the whole-array view (shape_error when it does not broadcast)
    } else {
      if (!std::equal(s.begin(), s.end(), d.shape().begin(), d.shape().end())) {
        dst() = node;
        return;
      }
      detail::copy_into(dst, node);
    }
  }
}


// Several expressions of one shape in one fused pass over their shared inputs:
// `auto [s, d] = ember::eval(a + b, a - b);` reads a and b once.
template <class Code = detail::this_code, expression E1, expression E2, expression... Es>
auto eval(const E1& e1, const E2& e2, const Es&... es) {
  expr::tuple_root<E1, E2, Es...> t(e1, e2, es...);
  const communicator& c = *detail::comm_of(t);
  if (detail::device_of(t) == device_kind::gpu) {
    // GPU arrays: one evaluation per expression (the shared pass over the inputs
    // is a host-kernel optimization; the parts of a tuple do not cross the link)
    detail::lower_state st;
    detail::lower(t, st);  // the same device check as the joint evaluation
    return std::tuple{eval<E1, Code>(e1), eval<E2, Code>(e2), eval<Es, Code>(es)...};
  }
  auto cp = detail::planned<Code>(t, c, std::nullopt);
  detail::executor<decltype(t), Code> ex(t, *cp, c);
  ex.run(nullptr);
  const layout& l = cp->p.values[std::size_t(cp->p.result)];
  std::size_t i = 0;
  return hana::unpack(t.args, [&](const auto&... a) {
    auto one = [&](const auto& x) {
      using X = std::remove_cvref_t<decltype(x)>;
      using T = typename X::value_type;
      constexpr int N = X::ndim;
      auto part = ex.result_parts()[i++];
      return dndarray<T, N>(l.ndim() == N ? l : throw shape_error("ember::eval: a result's rank is only known at run time"),
                            c, std::shared_ptr<T[]>(part, static_cast<T*>(part.get())), cp->p.device);
    };
    return std::tuple{one(a)...};
  });
}

// The plan of evaluating `e` on its communicator (nothing runs): printable like
// EXPLAIN, .to_json(), .to_dot(), with this run's per-rank predictions.
template <expression E, class Code = detail::this_code>
planner::plan explain(const E& e, const eval_options& o = {}) {
  const communicator& c = *detail::comm_of(e);
  detail::lower_state st;
  detail::lower(e, st);
  st.g.nranks = c.size();
  st.g.device_kernels = detail::device_kernels_v<Code> && !expr::has_op_state_v<E>;
  return planner::make_plan(st.g, detail::target_layout(e, c, o), c.size() <= 4096);
}

// The plan for `nranks` ranks, from a laptop: leaves keep their split axis with
// Heat's balanced extents for that many ranks. No MPI call.
template <expression E, class Code = detail::this_code>
planner::plan plan_for(const E& e, int nranks, const eval_options& o = {}) {
  if (nranks < 1) throw value_error("ember::plan_for: nranks must be positive, got " + std::to_string(nranks));
  detail::lower_state st;
  st.rebalance_for = nranks;
  detail::lower(e, st);
  st.g.nranks = nranks;
  st.g.device_kernels = detail::device_kernels_v<Code> && !expr::has_op_state_v<E>;
  std::optional<layout> target;
  if (o.split.given) {
    if (o.split.axis) check_axis(*o.split.axis, int(e.shape().size()), "plan_for");
    target = layout::balanced(e.shape(), o.split.axis, nranks);
  }
  return planner::make_plan(st.g, target, nranks <= 64);
}

}  // namespace ember
