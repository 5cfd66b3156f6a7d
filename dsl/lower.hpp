// Lowering: an expression tree becomes the planner's graph (one IR node per tree
// node, numbered in pre-order by dsl/traversal.hpp), and the facts a cached plan
// depends on become a fingerprint. Also the expression's communicator and device,
// which every leaf must share.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "../planner/ir.hpp"
#include "../runtime/view.hpp"
#include "traversal.hpp"

namespace ember::detail {

// Distinct leaf keys in the order first seen: the storage of an array, or a
// storage and a selection (a view). Leaves with one key share one value (the
// planner moves a leaf read twice once); two views of one array are two values.
// Selections compare whole (the hash only rules out quickly: two views that
// differ in one fixed index may hash alike, and must not share a value).
struct storage_index {
  struct entry {
    const void* storage;
    std::uint64_t selection;
    const view_spec* spec;  // the view's selection (null for an array), alive while the expression is
  };
  std::vector<entry> seen;
  // The index of `p`, and whether it was new.
  std::pair<std::size_t, bool> of(const void* p, std::uint64_t selection = 0, const view_spec* spec = nullptr) {
    auto same = [&](const entry& e) {
      return e.storage == p && e.selection == selection && (e.spec == spec || (e.spec && spec && *e.spec == *spec));
    };
    std::size_t k = 0;
    while (k < seen.size() && !same(seen[k])) ++k;
    if (k < seen.size()) return {k, false};
    seen.push_back({p, selection, spec});
    return {k, true};
  }
};

// The selection part of a leaf's key: 0 for an array, and for a view that reads
// its whole base in order (it is the array).
template <class X>
std::uint64_t selection_key(const X& x) {
  const view_geometry* v = x.view();
  return v && !v->is_whole() ? v->spec().hash() | 1 : 0;
}
template <class X>
const view_spec* selection_spec(const X& x) {
  const view_geometry* v = x.view();
  return v && !v->is_whole() ? &v->spec() : nullptr;
}

struct lower_state {
  planner::graph g;
  storage_index storage;             // by array: the label a0, a1, ...
  storage_index keys;                // by array and selection: the planner's alias
  std::vector<int> key_node;         // first leaf node of each key
  std::optional<int> rebalance_for;  // plan_for: leaves laid out as balanced for P ranks
  bool scalar_values = true;         // label scalars by value (not for cached plans: values change)
  std::optional<device_kind> device; // of the first leaf; every leaf must agree
  std::string first_leaf;            // "float64 (4, 5)", for the message when they do not
};

template <class X>
void lower_leaf(const X& x, planner::ir_node& n, int id, lower_state& st) {
  n.kind = planner::node_kind::leaf;
  n.op = "leaf";
  const std::uint64_t sel = selection_key(x);
  const auto [key, fresh] = st.keys.of(x.a.identity(), sel, selection_spec(x));
  if (fresh) st.key_node.push_back(id);
  n.alias = st.key_node[key];
  n.label = "a" + std::to_string(st.storage.of(x.a.identity()).first);
  if constexpr (expr::is_strided_leaf<X>::value)
    if (sel) n.label += x.view()->spec().text(x.view()->base().shape());
  // One device per expression, as in CuPy and PyTorch: mixing needs an explicit
  // .to(), so no copy over the host-device link happens unannounced.
  const device_kind d = x.a.device();
  const std::string what = std::string(x.a.dtype()) + " array of shape " + shape_str(n.shape);
  if (!st.device) {
    st.device = d;
    st.first_leaf = what;
    st.g.device = d;
  } else if (*st.device != d) {
    throw value_error("ember: an expression mixes arrays on different devices: a0 (" + st.first_leaf + ") is on " +
                      std::string(device_name(*st.device)) + ", " + n.label + " (" + what + ") is on " +
                      std::string(device_name(d)) + "; move one with .to(ember::" +
                      std::string(device_name(*st.device)) + ") first");
  }
  if (!st.rebalance_for) {
    n.lay = x.lay();
    if constexpr (expr::is_strided_leaf<X>::value)
      if (x.view()->reversed()) n.source = std::make_shared<view_distribution>(x.view_handle());
  } else if constexpr (expr::is_strided_leaf<X>::value) {  // the same selection of the base balanced over P ranks
    const view_geometry& v = *x.view();
    auto g = std::make_shared<const view_geometry>(
        layout::balanced(v.base().shape(), v.base().split(), *st.rebalance_for), v.spec(), /*reversed_ok=*/true);
    n.lay = g->planning_layout();
    if (g->reversed()) n.source = std::make_shared<view_distribution>(g);
  } else {
    n.lay = layout::balanced(n.shape, x.a.split(), *st.rebalance_for);
  }
}

// Appends x (pre-order id `id`, which is the graph's next node) and its subtree.
template <class X>
void lower(const X& x, lower_state& st, int id = 0) {
  using K = expr::node_class;
  constexpr K kind = expr::kind_of<X>;
  st.g.nodes.emplace_back();
  {
    auto& n = st.g.nodes.back();
    n.shape = x.shape();
    n.dtype = dtype_code<typename X::value_type>();
    n.elem = std::int64_t(sizeof(typename X::value_type));
    if constexpr (kind == K::scalar) {
      n.kind = planner::node_kind::scalar;
      n.op = "scalar";
      std::ostringstream os;
      if (!st.scalar_values) os << "scalar";
      else if constexpr (std::is_same_v<typename X::value_type, bool>) os << (x.v ? "True" : "False");
      else os << +x.v;
      n.label = os.str();
    } else if constexpr (kind == K::leaf) {
      lower_leaf(x, n, id, st);
    } else if constexpr (kind == K::reduction) {
      n.kind = planner::node_kind::reduce;
      n.op = std::string(decltype(x.op_tag())::name);
      n.axes = x.axes;
      n.keepdims = x.keepdims;
      n.index_result = x.index_result;
      if (x.index_result) n.value_elem = std::int64_t(sizeof(typename X::arg_type));
      if constexpr (requires { x.options_text(true); }) n.label = x.options_text(st.scalar_values);  // histogram's bins
    } else if constexpr (kind == K::step_op) {
      n.kind = std::is_same_v<decltype(x.op_tag()), expr::matmul_op> ? planner::node_kind::matmul
                                                                      : planner::node_kind::transpose;
      if constexpr (requires { x.scan_axis; }) {
        n.kind = planner::node_kind::scan;
        n.axes = {x.scan_axis};
      }
      if constexpr (requires { x.sort_axis; }) {
        n.kind = planner::node_kind::sort;
        n.axes = {x.sort_axis};
        n.index_result = x.with_index;
        n.label = x.options_text();
      }
      if constexpr (requires { x.line_axis; }) {  // partition, median, quantile along an axis
        n.kind = planner::node_kind::lines;
        n.axes = {x.line_axis};
        n.index_result = x.with_index;
        n.label = x.options_text();
        n.ranks_selected = x.ranks_placed();  // a vector's partition: distributed along its split axis
      }
      if constexpr (requires { x.selects; }) {  // median, quantile over every axis
        n.kind = planner::node_kind::select;
        n.ranks_selected = x.ranks_selected();
        n.label = x.options_text();
      }
      if constexpr (requires { x.outer; }) n.outer = x.outer;
      n.op = std::string(decltype(x.op_tag())::name);
    } else if constexpr (kind == K::tuple) {
      n.kind = planner::node_kind::elementwise;
      n.op = std::string(decltype(x.op_tag())::name);
      n.elem = 0;  // one buffer per part; every part's size is in its own node
      expr::for_each_child(x, id, [&](const auto& a, int) {
        n.elem += std::int64_t(sizeof(typename std::remove_cvref_t<decltype(a)>::value_type));
      });
    } else {
      static_assert(kind == K::elementwise);
      n.kind = planner::node_kind::elementwise;
      n.op = std::string(decltype(x.op_tag())::name);
      if constexpr (requires { x.op().text(); }) n.label = x.op().text();  // an op with state: its table
    }
  }
  // (children after the node itself: emplace_back may move the nodes)
  expr::for_each_child(x, id, [&](const auto& a, int cid) {
    st.g.nodes[std::size_t(id)].args.push_back(cid);
    lower(a, st, cid);
  });
}

// Two independent 64-bit FNV-1a streams: a 128-bit key for the plan cache.
struct fingerprint {
  std::uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
  storage_index storage;
  void add(std::uint64_t v) {
    // word-wise FNV-style mixing, two independent streams
    h1 = (h1 ^ v) * 0x100000001b3ull;
    h1 ^= h1 >> 29;
    h2 = (h2 ^ (v * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    h2 ^= h2 >> 31;
  }
  void add(const layout& l) {
    add(std::uint64_t(l.ndim()));
    for (auto s : l.shape()) add(std::uint64_t(s));
    add(l.split() ? std::uint64_t(*l.split()) : ~0ull);
    add(l.hash());  // covers the per-rank extents, computed once per map
  }
  bool operator==(const fingerprint& o) const { return h1 == o.h1 && h2 == o.h2; }
};
struct fingerprint_hash {
  std::size_t operator()(const std::pair<std::uint64_t, std::uint64_t>& k) const { return k.first ^ (k.second * 31); }
};

// What the plan of x depends on beyond x's type: leaf layouts, devices and
// aliasing, reduction axes, shapes where broadcasting happens.
template <class X>
void fingerprint_of(const X& x, fingerprint& f) {
  using K = expr::node_class;
  constexpr K kind = expr::kind_of<X>;
  if constexpr (kind == K::scalar) {
    return;  // values do not change the plan
  } else if constexpr (kind == K::leaf) {
    const std::uint64_t sel = selection_key(x);
    f.add(f.storage.of(x.a.identity(), sel, selection_spec(x)).first);
    f.add(sel);  // a view's offsets and strides follow from its selection and layouts
    f.add(std::uint64_t(x.a.device()) + 0xde00);
    f.add(x.a.layout());
    if (sel) f.add(x.lay());
    return;
  } else if constexpr (kind == K::reduction) {
    f.add(std::uint64_t(x.keepdims));
    for (int a : x.axes) f.add(std::uint64_t(a));
    f.add(0xa5a5);
    if constexpr (requires { x.plan_key(); }) f.add(x.plan_key());
  } else {
    static_assert(kind == K::elementwise || kind == K::step_op || kind == K::tuple);
    if constexpr (requires { x.outer; }) f.add(0x6d6d + std::uint64_t(x.outer));
    if constexpr (requires { x.scan_axis; }) f.add(0x5ca0 + std::uint64_t(x.scan_axis));
    if constexpr (requires { x.sort_axis; })
      f.add(0x5047 + std::uint64_t(x.sort_axis) * 4 + std::uint64_t(x.opts.stable) * 2 + std::uint64_t(x.opts.descending));
    if constexpr (requires { x.line_axis; }) {  // two words: a sum would let (axis, options) pairs collide
      f.add(0x11e5 + std::uint64_t(x.line_axis));
      f.add(x.plan_key());
    }
    if constexpr (requires { x.selects; }) {
      f.add(0x5e1ec7);
      f.add(x.plan_key());
    }
    if constexpr (requires { x.op().key(); }) f.add(0x10c4 + x.op().key());  // what EXPLAIN shows of an op's state
    f.add(x.shape_dims().size());  // broadcasting changes with shapes; leaves carry them
  }
  expr::for_each_child(x, 0, [&](const auto& a, int) { fingerprint_of(a, f); });
}

// The first leaf's communicator; every leaf must live on the same group of ranks.
template <class X>
const communicator* comm_of(const X& x) {
  const communicator* found = nullptr;
  expr::for_each_leaf(x, 0, [&](const auto& l, int) {
    const communicator& c = l.a.comm();
    if (found && !(c == *found) && !c.congruent(*found))
      throw value_error("ember: an expression mixes arrays on different communicators (sizes " +
                        std::to_string(found->size()) + " and " + std::to_string(c.size()) + ")");
    if (!found) found = &c;
  });
  return found;
}

// The device of the expression's arrays (the first leaf's; lower() checks that
// every leaf agrees).
template <class X>
device_kind device_of(const X& x) {
  std::optional<device_kind> d;
  expr::for_each_leaf(x, 0, [&](const auto& l, int) {
    if (!d) d = l.a.device();
  });
  return d.value_or(device_kind::cpu);
}

}  // namespace ember::detail
