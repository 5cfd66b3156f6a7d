// Lazy expressions: small node types held by value (leaves hold dndarray handles,
// so an expression outlives the arrays' names), built by the operators and
// functions below. Building one computes nothing; evaluation (dsl/eval.hpp) lowers
// it to the planner's graph and runs the plan.
//
// Boost.Hana does the compile-time bookkeeping: argument tuples, node counts for
// pre-order numbering, static rank and dtype inference.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// GCC 12 reports a false -Wstringop-overread and -Warray-bounds (a memmove "out
// of the bounds" of the node being moved) inside small_vector's move when it is
// inlined into expression constructors; the state of the pragma at the header's
// lines is what counts, so they are silenced for this header only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <boost/container/small_vector.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include <boost/hana/at.hpp>
#include <boost/hana/fold_left.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/size.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

#include "../planner/ir.hpp"
#include "dndarray.hpp"
#include "node_base.hpp"
#include "ops.hpp"

namespace ember {

namespace hana = boost::hana;
class view_geometry;

namespace expr {

// Shapes inside expression nodes live inline (no heap) up to 6 dimensions, so
// building and copying an expression in a loop costs no allocation.
using dims = boost::container::small_vector<std::int64_t, 6>;
template <class V>
dims to_dims(const V& v) {
  return dims(v.begin(), v.end());
}

// ---- leaves ----
template <dtype T, int N>
struct leaf : node_base {
  using value_type = T;
  static constexpr int ndim = N;
  static constexpr bool exact_ndim = true;
  static constexpr int node_count = 1;
  dndarray<T, N> a;
  dims shape_dims() const { return to_dims(a.layout().shape()); }
  index_vec shape() const { return a.layout().shape(); }
  // What every leaf answers (a view, dsl/view.hpp, answers with its selection).
  const layout& lay() const { return a.layout(); }
  static constexpr const view_geometry* view() { return nullptr; }
  static std::shared_ptr<const view_geometry> view_handle() { return {}; }
};

template <class T>
struct scalar : node_base {
  using value_type = T;
  static constexpr int ndim = 0;
  static constexpr bool exact_ndim = true;
  static constexpr int node_count = 1;
  T v;
  dims shape_dims() const { return {}; }
  index_vec shape() const { return {}; }
};

// NumPy broadcasting of two shapes (aligned on the right); throws shape_error
// naming both shapes and the axis on every rank alike (shapes are replicated).
inline dims broadcast_shapes(const dims& a, const dims& b, std::string_view op) {
  const std::size_t n = std::max(a.size(), b.size());
  dims r(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1)
      throw shape_error("ember::" + std::string(op) + ": operands could not be broadcast together with shapes " +
                        detail::shape_str(a) + " and " + detail::shape_str(b) + " (axis " + std::to_string(i) +
                        " of the result: " + std::to_string(x) + " vs " + std::to_string(y) + ")");
    r[i] = x == 1 ? y : x;
  }
  return r;
}

// ---- elementwise: one node type for every arity ----
template <class Op, class... A>
struct elementwise : node_base {
  using value_type = typename Op::template result<typename A::value_type...>;
  static constexpr int ndim = std::max({A::ndim...});
  static constexpr bool exact_ndim = (A::exact_ndim && ...);
  static constexpr int node_count = 1 + (A::node_count + ...);
  hana::tuple<A...> args;
  dims shape_;
  // Most ops are empty types; an op with state (a lookup's sorted table,
  // sorting/lookup.hpp) is kept here and copied into the kernel's evaluator.
  [[no_unique_address]] Op op_{};
  static Op op_tag() { return {}; }
  const Op& op() const { return op_; }
  explicit elementwise(A... a) : args(std::move(a)...) { shape_ = broadcast_all(); }
  elementwise(Op op, A... a) : args(std::move(a)...), op_(std::move(op)) { shape_ = broadcast_all(); }
  dims broadcast_all() const {
    return hana::fold_left(args, dims{}, [](dims s, const auto& x) {
      return broadcast_shapes(s, x.shape_dims(), Op::name);
    });
  }
  const dims& shape_dims() const { return shape_; }
  index_vec shape() const { return index_vec(shape_.begin(), shape_.end()); }
};

// ---- reductions over axes of an argument ----
// R is the static rank of the result; with runtime keepdims or several axes it
// is an upper bound (exact_ndim false) and conversions check the runtime rank.
template <class Op, class A, int R, bool Exact>
struct reduction : node_base {
  using arg_type = typename A::value_type;
  using value_type = typename Op::template result<arg_type>;
  static constexpr int ndim = R;
  static constexpr bool exact_ndim = Exact && A::exact_ndim;
  static constexpr int node_count = 1 + A::node_count;
  static constexpr bool index_result = op::is_arg_reduction_v<Op>;
  static Op op_tag() { return {}; }
  A arg;
  std::vector<int> axes;  // normalized, sorted, distinct
  bool keepdims = false;
  dims shape_;
  reduction(A a, std::vector<int> ax, bool kd) : arg(std::move(a)), keepdims(kd) {
    const dims s = arg.shape_dims();
    const int n = int(s.size());
    for (int x : ax) {
      const int y = x < 0 ? x + n : x;
      if (y < 0 || y >= n)
        throw axis_error("ember::" + std::string(Op::name) + ": axis " + std::to_string(x) +
                         " is out of bounds for an operand of shape " + detail::shape_str(s));
      if (std::find(axes.begin(), axes.end(), y) != axes.end())
        throw axis_error("ember::" + std::string(Op::name) + ": axis " + std::to_string(x) + " repeated");
      axes.push_back(y);
    }
    std::sort(axes.begin(), axes.end());
    if (op::is_arg_reduction_v<Op> && axes.size() > 1 && int(axes.size()) != n)
      throw axis_error("ember::" + std::string(Op::name) + ": takes one axis or all of them, not " +
                       detail::shape_str(axes) + " of shape " + detail::shape_str(s));
    for (int d = 0; d < n; ++d) {
      const bool red = std::find(axes.begin(), axes.end(), d) != axes.end();
      if (red && s[std::size_t(d)] == 0 && (op::is_arg_reduction_v<Op> || std::is_same_v<Op, op::min> || std::is_same_v<Op, op::max>))
        throw value_error("ember::" + std::string(Op::name) + ": zero-size axis " + std::to_string(d) +
                          " of shape " + detail::shape_str(s) + " has no identity");
      if (!red) shape_.push_back(s[std::size_t(d)]);
      else if (keepdims) shape_.push_back(1);
    }
  }
  const dims& shape_dims() const { return shape_; }
  index_vec shape() const { return index_vec(shape_.begin(), shape_.end()); }
};

// ---- operations that are steps of their own: matrix product, transpose ----
// They keep their operands in `args` like elementwise nodes (so every traversal
// walks through them); the planner gives them an algorithm and a layout, and the
// fused kernel after them reads their result like an array.
struct matmul_op {
  static constexpr std::string_view name = "matmul";
};
struct transpose_op {
  static constexpr std::string_view name = "transpose";
};

// C = A @ B by NumPy's matmul rules: a 1-D A is a row, a 1-D B a column, and
// their axis is dropped from the result; operands of 3 or more axes are stacks
// of matrices in their last two axes, the leading (batch) axes broadcast
// against each other. `outer`: a (m,) times b (n,) as a column times a row, (m, n).
template <class A, class B, bool Outer = false>
struct matmul_node : node_base {
  static_assert(std::is_same_v<typename A::value_type, typename B::value_type>, "matmul operands are cast first");
  using value_type = typename A::value_type;
  static constexpr int ndim = Outer ? 2
                                    : std::max(std::max(A::ndim, 2), std::max(B::ndim, 2)) - (A::ndim == 1) -
                                          (B::ndim == 1);
  static constexpr bool exact_ndim = A::exact_ndim && B::exact_ndim;
  static constexpr int node_count = 1 + A::node_count + B::node_count;
  static matmul_op op_tag() { return {}; }
  hana::tuple<A, B> args;
  static constexpr bool outer = Outer;
  dims shape_;
  matmul_node(A a, B b) : args(std::move(a), std::move(b)) {
    const dims sa = hana::at_c<0>(args).shape_dims(), sb = hana::at_c<1>(args).shape_dims();
    if (outer) {
      if (sa.size() != 1 || sb.size() != 1)
        throw shape_error("ember::outer: takes two 1-D operands, got shapes " + detail::shape_str(sa) + " and " +
                          detail::shape_str(sb));
      shape_ = {sa[0], sb[0]};
      return;
    }
    if (sa.empty() || sb.empty())
      throw shape_error("ember::matmul: operands must have at least one axis, got shapes " + detail::shape_str(sa) +
                        " and " + detail::shape_str(sb));
    const std::size_t kb_axis = sb.size() == 1 ? 0 : sb.size() - 2;
    const std::int64_t ka = sa.back(), kb = sb[kb_axis];
    if (ka != kb)
      throw shape_error("ember::matmul: shapes " + detail::shape_str(sa) + " and " + detail::shape_str(sb) +
                        " not aligned: " + std::to_string(ka) + " (dim " + std::to_string(sa.size() - 1) +
                        " of A) != " + std::to_string(kb) + " (dim " + std::to_string(kb_axis) + " of B)");
    if (sa.size() > 2 || sb.size() > 2) {  // the batch axes, broadcast
      const dims ba(sa.begin(), sa.end() - std::min<std::ptrdiff_t>(2, std::ptrdiff_t(sa.size())));
      const dims bb(sb.begin(), sb.end() - std::min<std::ptrdiff_t>(2, std::ptrdiff_t(sb.size())));
      try {
        shape_ = broadcast_shapes(ba, bb, "matmul");
      } catch (const shape_error&) {
        throw shape_error("ember::matmul: the batch axes " + detail::shape_str(ba) + " and " + detail::shape_str(bb) +
                          " of shapes " + detail::shape_str(sa) + " and " + detail::shape_str(sb) +
                          " could not be broadcast together");
      }
    }
    if (sa.size() >= 2) shape_.push_back(sa[sa.size() - 2]);
    if (sb.size() >= 2) shape_.push_back(sb.back());
  }
  const dims& shape_dims() const { return shape_; }
  index_vec shape() const { return index_vec(shape_.begin(), shape_.end()); }
};

// The axes reversed (NumPy's .T); a 1-D array is unchanged.
template <class A>
struct transpose_node : node_base {
  using value_type = typename A::value_type;
  static constexpr int ndim = A::ndim;
  static constexpr bool exact_ndim = A::exact_ndim;
  static constexpr int node_count = 1 + A::node_count;
  static transpose_op op_tag() { return {}; }
  hana::tuple<A> args;
  dims shape_;
  explicit transpose_node(A a) : args(std::move(a)) {
    const dims s = hana::at_c<0>(args).shape_dims();
    shape_.assign(s.rbegin(), s.rend());
  }
  const dims& shape_dims() const { return shape_; }
  index_vec shape() const { return index_vec(shape_.begin(), shape_.end()); }
};

}  // namespace expr

// ---- what may appear in an expression ----
template <class X>
struct is_dndarray : std::false_type {};
template <dtype T, int N>
struct is_dndarray<dndarray<T, N>> : std::true_type {};

// An advanced-indexing selection (a(mask), a(indices): indexing/indexing.hpp)
// reads as the array it selects: its size depends on the data, so it is taken
// (one collective) when it first becomes an operand, then kept.
template <class X>
struct is_selection : std::false_type {};

template <class X>
concept expression = expr::is_node_v<std::remove_cvref_t<X>>;
template <class X>
concept array_like = expression<X> || is_dndarray<std::remove_cvref_t<X>>::value ||
                     is_selection<std::remove_cvref_t<X>>::value;
// A number: arithmetic, or a complex number (`2.0 * 1i` with std::complex_literals).
template <class X>
concept scalar_like = std::is_arithmetic_v<std::remove_cvref_t<X>> || is_complex_v<std::remove_cvref_t<X>>;
template <class X>
concept operand = array_like<X> || scalar_like<X>;

namespace expr {

// The node of an operand, by value: lvalues are copied, temporaries (the
// subexpressions of a bigger expression) are moved, so building an expression
// of n nodes copies each array handle once, not n times.
template <class X>
auto as_node(X&& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (is_dndarray<D>::value) return leaf<typename D::value_type, D::ndim_v>{{}, std::forward<X>(x)};
  else if constexpr (is_selection<D>::value) return as_node(x.read());
  else return D(std::forward<X>(x));
}
template <class X>
using node_t = decltype(as_node(std::declval<X>()));

// A leaf whose elements are strided in its storage (a view, dsl/view.hpp).
template <class X>
struct is_strided_leaf : std::false_type {};
// Matrix products and transposes read their operands' blocks as contiguous
// row-major buffers: a view operand is first copied by a fused kernel.
template <class N>
auto step_operand(N n) {
  if constexpr (is_strided_leaf<N>::value) return elementwise<op::astype<typename N::value_type>, N>(std::move(n));
  else return n;
}

// A scalar operand takes its type from the array operand it meets (NumPy's rule
// for Python scalars): float32 * 2.0 stays float32.
template <class S, class Other>
auto as_scalar(S s) {
  using T = op::weak_scalar_t<std::remove_cvref_t<S>, typename node_t<Other>::value_type>;
  // An integer that the array's integer dtype cannot hold is NumPy 2's
  // OverflowError (uint8_array + 300, uint8_array * -1): the same on every rank.
  if constexpr (op::is_int_v<S> && op::is_int_v<T> && !std::is_same_v<S, T>)
    if (!std::in_range<T>(s))
      throw value_error("ember: the scalar " + std::to_string(s) + " is out of bounds for an operand of dtype " +
                        std::string(dtype_name<T>()) + " (NumPy 2 raises too); cast the array first, e.g. ember::astype<std::int64_t>(a)");
  return scalar<T>{{}, op::convert<T>(s)};
}

template <class Op, class A, class B>
auto binary(A&& a, B&& b) {
  static_assert(array_like<A> || array_like<B>, "ember: an expression needs at least one array operand");
  if constexpr (scalar_like<A>) {
    auto sa = as_scalar<std::remove_cvref_t<A>, B>(a);
    return elementwise<Op, decltype(sa), node_t<B>>(sa, as_node(std::forward<B>(b)));
  } else if constexpr (scalar_like<B>) {
    auto sb = as_scalar<std::remove_cvref_t<B>, A>(b);
    return elementwise<Op, node_t<A>, decltype(sb)>(as_node(std::forward<A>(a)), sb);
  } else {
    return elementwise<Op, node_t<A>, node_t<B>>(as_node(std::forward<A>(a)), as_node(std::forward<B>(b)));
  }
}

template <class Op, class A>
auto unary(A&& a) {
  return elementwise<Op, node_t<A>>(as_node(std::forward<A>(a)));
}

// A scalar in a ternary op takes the type of the array operand `Ref`.
template <class X, class Ref>
auto operand_node(const X& x) {
  if constexpr (scalar_like<X>) return as_scalar<X, Ref>(x);
  else return as_node(x);
}

}  // namespace expr

// ---- operators (at least one operand is an array or an expression) ----
#define EMBER_OPERATOR(SYM, OP)                                                  \
  template <operand A, operand B>                                                \
    requires(array_like<A> || array_like<B>)                                     \
  auto operator SYM(A&& a, B&& b) {                                              \
    return expr::binary<op::OP>(std::forward<A>(a), std::forward<B>(b));         \
  }
EMBER_OPERATOR(+, add)
EMBER_OPERATOR(-, sub)
EMBER_OPERATOR(*, mul)
EMBER_OPERATOR(/, div)
EMBER_OPERATOR(==, eq)
EMBER_OPERATOR(!=, ne)
EMBER_OPERATOR(<, lt)
EMBER_OPERATOR(<=, le)
EMBER_OPERATOR(>, gt)
EMBER_OPERATOR(>=, ge)
#undef EMBER_OPERATOR

// Anything else next to an array is a compile error that says so.
#define EMBER_REJECT(SYM)                                                                                 \
  template <class A, class B>                                                                             \
    requires((array_like<A> && !operand<B>) || (array_like<B> && !operand<A>))                            \
  void operator SYM(const A&, const B&) {                                                                 \
    static_assert(sizeof(A) == 0,                                                                         \
                  "ember: an operand must be a dndarray, an ember expression or an arithmetic scalar");  \
  }
EMBER_REJECT(+)
EMBER_REJECT(-)
EMBER_REJECT(*)
EMBER_REJECT(/)
#undef EMBER_REJECT

template <array_like A>
auto operator-(A&& a) {
  static_assert(!std::is_same_v<typename expr::node_t<A>::value_type, bool>,
                "ember: unary minus on a bool array is not supported (NumPy refuses it too); use logical not");
  return expr::unary<op::neg>(std::forward<A>(a));
}

// ---- elementwise functions ----
#define EMBER_UNARY_FN(NAME)                          \
  template <array_like A>                             \
  auto NAME(A&& a) {                                  \
    return expr::unary<op::NAME>(std::forward<A>(a)); \
  }
EMBER_UNARY_FN(exp)
EMBER_UNARY_FN(log)
EMBER_UNARY_FN(sqrt)
EMBER_UNARY_FN(sin)
EMBER_UNARY_FN(cos)
EMBER_UNARY_FN(tanh)
EMBER_UNARY_FN(abs)
#undef EMBER_UNARY_FN

template <operand A, operand B>
  requires(array_like<A> || array_like<B>)
auto pow(const A& a, const B& b) {
  return expr::binary<op::power>(a, b);
}
template <operand A, operand B>
  requires(array_like<A> || array_like<B>)
auto minimum(const A& a, const B& b) {
  return expr::binary<op::minimum>(a, b);
}
template <operand A, operand B>
  requires(array_like<A> || array_like<B>)
auto maximum(const A& a, const B& b) {
  return expr::binary<op::maximum>(a, b);
}
template <array_like A, operand L, operand H>
auto clip(const A& a, const L& lo, const H& hi) {
  return expr::elementwise<op::clip, expr::node_t<A>, decltype(expr::operand_node<L, A>(lo)),
                           decltype(expr::operand_node<H, A>(hi))>(expr::as_node(a), expr::operand_node<L, A>(lo),
                                                                   expr::operand_node<H, A>(hi));
}
namespace expr {
// An arm of where(): a scalar takes the type of the other arm when that one is an
// array, and keeps its own when both are scalars.
template <class X, class Other>
auto where_arm(const X& x) {
  if constexpr (!scalar_like<X>) return as_node(x);
  else if constexpr (scalar_like<Other>) return scalar<X>{{}, x};
  else return as_scalar<X, Other>(x);
}
}  // namespace expr

template <operand C, operand A, operand B>
  requires(array_like<C> || array_like<A> || array_like<B>)
auto where(const C& c, const A& a, const B& b) {
  auto cn = [&] {
    if constexpr (scalar_like<C>) return expr::scalar<bool>{{}, op::truth(c)};
    else return expr::as_node(c);
  }();
  auto an = expr::where_arm<A, B>(a);
  auto bn = expr::where_arm<B, A>(b);
  return expr::elementwise<op::where, decltype(cn), decltype(an), decltype(bn)>(cn, an, bn);
}
template <dtype U, array_like A>
auto astype(const A& a) {
  return expr::unary<op::astype<U>>(a);
}

}  // namespace ember

namespace ember::expr {

struct tuple_op {
  static constexpr std::string_view name = "tuple";
};

// Several expressions of one shape evaluated together (ember::eval(e1, e2, ...)):
// one fused pass computes every result, reading shared inputs once.
template <class... E>
struct tuple_root : node_base {
  using value_type = typename std::tuple_element_t<0, std::tuple<E...>>::value_type;  // for bookkeeping only
  static constexpr int ndim = std::max({E::ndim...});
  static constexpr bool exact_ndim = (E::exact_ndim && ...);
  static constexpr int node_count = 1 + (E::node_count + ...);
  hana::tuple<E...> args;
  dims shape_;
  static tuple_op op_tag() { return {}; }
  explicit tuple_root(E... e) : args(e...) {
    bool first = true;
    hana::for_each(args, [&](const auto& x) {
      if (first) shape_ = x.shape_dims();
      else if (x.shape_dims() != shape_)
        throw shape_error("ember::eval: expressions evaluated together need one shape; got " +
                          detail::shape_str(shape_) + " and " + detail::shape_str(x.shape_dims()));
      first = false;
    });
  }
  const dims& shape_dims() const { return shape_; }
  index_vec shape() const { return index_vec(shape_.begin(), shape_.end()); }
};

}  // namespace ember::expr
