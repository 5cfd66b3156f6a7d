// The base of every expression node type (dsl/expr.hpp); here on its own so that
// dndarray can accept expressions without including the whole dsl. It lives in
// namespace ember so that argument-dependent lookup finds ember's operators and
// functions for every node type.
#pragma once

namespace ember {
struct expression_node {
  using ember_expression_tag = void;
};
namespace expr {
using node_base = expression_node;
template <class X>
inline constexpr bool is_node_v = __is_base_of(expression_node, X);
}  // namespace expr
}  // namespace ember
