// libFuzzer target over the planner (planner/plan.cpp, planner/traffic.cpp): the
// input bytes are decoded into a random but VALID planner::graph (a pre-order tree
// of leaf / scalar / elementwise / reduce / transpose / matmul nodes, small shapes,
// 1..64 ranks, leaf layouts split or replicated with random extents summing to the
// axis length) and planned with make_plan(g, target, per_rank = true). Invariants,
// each a TRAP() on violation:
//   - make_plan never throws on valid IR (any exception traps);
//   - every step's input value (and every kernel binding) is a leaf value or was
//     produced by an earlier step; every value id is in range;
//   - a move step's `from` is the layout of its input value, its `to` that of its
//     output value;
//   - the result value has the root's shape (and is the target when one is given);
//   - for every move step, the bytes summed over ranks equal what the exchange
//     engine predicts with ember::predict_exchange(from, to, elem), exactly.
// Some inputs are decoded into INVALID layouts (extents not summing to the axis,
// a split axis out of range): those must throw ember::error, never crash.
// No MPI function is ever called (runtime code is linked only for its pure parts).
// Built and run by tests/fuzz/run.sh.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <vector>

#include "planner/plan.hpp"
#include "runtime/exchange.hpp"

// Names the violated check (line) before trapping, so a finding explains itself.
#define TRAP() (std::fprintf(stderr, "fuzz_planner: invariant violated at line %d\n", __LINE__), __builtin_trap())

namespace {

using namespace ember;
using namespace ember::planner;

struct reader {
  const std::uint8_t* p;
  std::size_t n, i = 0;
  unsigned byte() { return i < n ? p[i++] : 0u; }
  unsigned pick(unsigned k) { return k ? byte() % k : 0u; }
  bool done() const { return i >= n; }
};

struct builder {
  reader& r;
  graph g;
  int leaves = 0;
  std::vector<int> leaf_ids;  // for aliasing

  layout random_layout(const index_vec& shape) {
    const int nd = int(shape.size());
    const unsigned k = r.pick(unsigned(nd) + 1);
    if (int(k) == nd) return replicated_layout(shape, g.nranks);
    const std::int64_t len = shape[k];
    index_vec ext(std::size_t(g.nranks), 0);
    if (r.pick(2)) {
      ext = layout::balanced_extents(len, g.nranks);
    } else {
      for (std::int64_t i = 0; i < len; ++i) ++ext[r.pick(unsigned(g.nranks))];
    }
    return layout(shape, int(k), ext);
  }

  int add_leaf(const index_vec& shape) {
    const int id = int(g.nodes.size());
    // reuse an earlier leaf's storage when it has this shape (aliasing)
    if (r.pick(4) == 0)
      for (int l : leaf_ids)
        if (g.nodes[std::size_t(l)].shape == shape) {
          ir_node n = g.nodes[std::size_t(l)];
          g.nodes.push_back(n);
          return id;
        }
    ir_node n;
    n.kind = node_kind::leaf;
    n.op = "leaf";
    n.shape = shape;
    n.dtype = 0;
    n.elem = 8;
    n.label = "a" + std::to_string(leaves++);
    n.lay = random_layout(shape);
    n.alias = id;
    g.nodes.push_back(n);
    leaf_ids.push_back(id);
    return id;
  }

  index_vec random_shape(int nd) {
    index_vec s(static_cast<std::size_t>(nd));
    for (auto& x : s) x = std::int64_t(r.pick(6));  // 0..5: empty and size-1 axes
    return s;
  }

  // Builds a node of exactly `shape` in pre-order; returns its id.
  int build(const index_vec& shape, int depth) {
    const unsigned kind = depth <= 0 || r.done() ? r.pick(2) : r.pick(8);
    const int id = int(g.nodes.size());
    const int nd = int(shape.size());
    if (kind == 0 || (kind == 1 && nd == 0)) return add_leaf(shape);
    if (kind == 1) {  // a scalar broadcast into the shape through an elementwise op
      g.nodes.emplace_back();
      g.nodes[std::size_t(id)] = ir_node{};
      auto& n = g.nodes[std::size_t(id)];
      n.kind = node_kind::elementwise;
      n.op = "mul";
      n.shape = shape;
      n.elem = 8;
      g.nodes[std::size_t(id)].args.push_back(int(g.nodes.size()));
      ir_node s;
      s.kind = node_kind::scalar;
      s.op = "scalar";
      s.label = "2";
      s.elem = 8;
      g.nodes.push_back(s);
      const int b = build(shape, depth - 1);
      g.nodes[std::size_t(id)].args.push_back(b);
      return id;
    }
    g.nodes.emplace_back();
    {
      auto& n = g.nodes[std::size_t(id)];
      n.shape = shape;
      n.elem = 8;
    }
    if (kind <= 3) {  // elementwise, unary or binary, with right-aligned broadcasting
      const int nargs = 1 + int(r.pick(2));
      g.nodes[std::size_t(id)].kind = node_kind::elementwise;
      g.nodes[std::size_t(id)].op = nargs == 1 ? "sin" : "add";
      for (int a = 0; a < nargs; ++a) {
        index_vec cs = shape;
        if (r.pick(3) == 0) {  // broadcast: drop leading axes and/or set some to 1
          const int drop = int(r.pick(unsigned(nd) + 1));
          cs.erase(cs.begin(), cs.begin() + drop);
          for (auto& x : cs)
            if (r.pick(3) == 0) x = 1;
        }
        const int c = build(cs, depth - 1);
        g.nodes[std::size_t(id)].args.push_back(c);
      }
      return id;
    }
    if (kind <= 5 && nd < 3) {  // reduce: insert 1..2 axes into the output shape
      const bool keep = r.pick(2);
      const int nred = 1 + int(r.pick(nd < 2 ? 2 : 1));
      index_vec in;
      std::vector<int> axes;
      if (keep) {
        // keepdims: the output already has ones where axes were reduced; pick axes of size 1
        for (int d = 0; d < nd; ++d)
          if (shape[std::size_t(d)] == 1 && int(axes.size()) < nred && r.pick(2)) axes.push_back(d);
        if (axes.empty()) {
          g.nodes[std::size_t(id)].kind = node_kind::elementwise;
          g.nodes[std::size_t(id)].op = "neg";
          {
        const int c = build(shape, depth - 1);  // may grow g.nodes: index after
        g.nodes[std::size_t(id)].args.push_back(c);
      }
          return id;
        }
        in = shape;
        for (int a : axes) in[std::size_t(a)] = std::int64_t(r.pick(5));
      } else {
        in = shape;
        for (int j = 0; j < nred && int(in.size()) < 3; ++j) {
          const int pos = int(r.pick(unsigned(in.size()) + 1));
          in.insert(in.begin() + pos, std::int64_t(r.pick(5)));
          for (auto& a : axes)
            if (a >= pos) ++a;
          axes.push_back(pos);
        }
        std::sort(axes.begin(), axes.end());
      }
      static const char* ops[] = {"sum", "max", "mean", "argmax"};
      const unsigned o = r.pick(4);
      auto& n = g.nodes[std::size_t(id)];
      n.kind = node_kind::reduce;
      n.op = ops[o];
      n.axes = axes;
      n.keepdims = keep;
      n.index_result = o == 3 && axes.size() == 1;
      if (o == 3 && axes.size() != 1) n.op = "sum";
      g.nodes[std::size_t(id)].args.push_back(int(g.nodes.size()));
      build(in, depth - 1);
      return id;
    }
    if (kind == 6 && nd >= 1) {  // transpose
      g.nodes[std::size_t(id)].kind = node_kind::transpose;
      g.nodes[std::size_t(id)].op = "transpose";
      index_vec in(shape.rbegin(), shape.rend());
      g.nodes[std::size_t(id)].args.push_back(int(g.nodes.size()));
      build(in, depth - 1);
      return id;
    }
    if (kind == 6 && nd >= 1 && r.pick(2) == 0) {  // a scan along a random axis (cumsum, ...)
      static const char* ops[] = {"cumsum", "cumprod", "cummax", "cummin"};
      auto& n = g.nodes[std::size_t(id)];
      n.kind = node_kind::scan;
      n.op = ops[r.pick(4)];
      n.axes = {int(r.pick(unsigned(nd)))};
      n.args.push_back(int(g.nodes.size()));
      build(shape, depth - 1);
      return id;
    }
    if (nd == 3 && r.pick(2) == 0) {  // batched matmul (b,m,k) @ (k,n) or (b,k,n)
      g.nodes[std::size_t(id)].kind = node_kind::matmul;
      g.nodes[std::size_t(id)].op = "matmul";
      const std::int64_t k = std::int64_t(r.pick(6));
      g.nodes[std::size_t(id)].args.push_back(int(g.nodes.size()));
      build({shape[0], shape[1], k}, depth - 1);
      g.nodes[std::size_t(id)].args.push_back(int(g.nodes.size()));
      if (r.pick(2)) build({shape[0], k, shape[2]}, depth - 1);
      else build({k, shape[2]}, depth - 1);
      return id;
    }
    if (nd == 2) {  // matmul (m,k) @ (k,n)
      g.nodes[std::size_t(id)].kind = node_kind::matmul;
      g.nodes[std::size_t(id)].op = "matmul";
      const std::int64_t k = std::int64_t(r.pick(6));
      g.nodes[std::size_t(id)].args.push_back(int(g.nodes.size()));
      build({shape[0], k}, depth - 1);
      g.nodes[std::size_t(id)].args.push_back(int(g.nodes.size()));
      build({k, shape[1]}, depth - 1);
      return id;
    }
    g.nodes[std::size_t(id)].kind = node_kind::elementwise;
    g.nodes[std::size_t(id)].op = "abs";
    {
        const int c = build(shape, depth - 1);  // may grow g.nodes: index after
        g.nodes[std::size_t(id)].args.push_back(c);
      }
    return id;
  }
};

void check_plan(const graph& g, const plan& p, const std::optional<layout>& target) {
  const int nv = int(p.values.size());
  if (p.result < 0 || p.result >= nv) TRAP();
  if (p.values[std::size_t(p.result)].shape() != g.nodes[0].shape) TRAP();
  if (target && !(p.values[std::size_t(p.result)] == *target)) TRAP();
  std::vector<char> ready(std::size_t(nv), 0);
  for (int v : p.leaf_value)
    if (v >= 0) {
      if (v >= nv) TRAP();
      ready[std::size_t(v)] = 1;
    }
  for (const auto& s : p.steps) {
    if (s.input >= nv || s.output < 0 || s.output >= nv) TRAP();
    if (s.input >= 0 && !ready[std::size_t(s.input)]) TRAP();
    for (auto [node, v] : s.bindings)
      if (v < 0 || v >= nv || !ready[std::size_t(v)]) TRAP();
    if (is_move(s.kind)) {
      if (s.input < 0 || !s.from || !s.to) TRAP();
      if (!(*s.from == p.values[std::size_t(s.input)])) TRAP();
      if (!(*s.to == p.values[std::size_t(s.output)])) TRAP();
      if (s.node < 0 || s.node >= int(g.nodes.size())) TRAP();
      const std::int64_t elem = g.nodes[std::size_t(s.node)].elem;
      const auto want = predict_exchange(*s.from, *s.to, std::size_t(elem));
      std::int64_t wb = 0, gb = 0;
      for (const auto& t : want) wb += t.bytes;
      for (const auto& t : s.traffic.per_rank) gb += t.bytes;
      if (int(s.traffic.per_rank.size()) != p.nranks || wb != gb || s.traffic.total.bytes != wb) TRAP();
    }
    ready[std::size_t(s.output)] = 1;
  }
  if (!ready[std::size_t(p.result)]) TRAP();
  // GPU plans: every value a step reads lives on the side the step runs on (a
  // copy reads from the other side), and the result ends where the leaves are.
  if (p.value_device.size() != p.values.size() || p.device != g.device) TRAP();
  for (int v : p.leaf_value)
    if (v >= 0 && p.value_device[std::size_t(v)] != g.device) TRAP();
  for (const auto& s : p.steps) {
    const bool copy = s.kind == step_kind::to_host || s.kind == step_kind::to_device;
    if (copy && (g.device == ember::device_kind::cpu || s.on != (s.kind == step_kind::to_device ? ember::gpu : ember::cpu)))
      TRAP();
    const auto side = copy ? (s.on == ember::gpu ? ember::cpu : ember::gpu) : s.on;
    if (s.input >= 0 && p.value_device[std::size_t(s.input)] != side) TRAP();
    for (auto [node, v] : s.bindings)
      if (p.value_device[std::size_t(v)] != side) TRAP();
    if (p.value_device[std::size_t(s.output)] != s.on) TRAP();
  }
  if (p.value_device[std::size_t(p.result)] != g.device) TRAP();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  reader r{data, size};
  const unsigned mode = r.byte();
  const int nranks = 1 + int(r.pick(2) ? r.pick(8) : r.pick(64));  // 1..64, mostly small
  if (mode % 8 == 7) {
    // INVALID layouts: extents not summing to the axis, a split axis out of range,
    // negative extents. Must throw ember::error, nothing else.
    const int nd = 1 + int(r.pick(3));
    index_vec shape(static_cast<std::size_t>(nd));
    for (auto& x : shape) x = std::int64_t(r.pick(6));
    const int k = int(r.pick(unsigned(nd) + 2)) - (r.pick(2) ? 0 : 1);
    index_vec ext(static_cast<std::size_t>(nranks));
    std::int64_t sum = 0;
    for (auto& e : ext) sum += (e = std::int64_t(r.pick(4)) - (r.pick(8) == 0 ? 1 : 0));
    const bool valid = k >= 0 && k < nd && sum == shape[std::size_t(k)] &&
                       std::all_of(ext.begin(), ext.end(), [](std::int64_t e) { return e >= 0; });
    try {
      layout l(shape, k, ext);
      if (!valid) TRAP();
    } catch (const ember::error&) {
      if (valid) TRAP();
    } catch (...) {
      TRAP();
    }
    return 0;
  }
  // INVALID IR handed to make_plan must throw ember::error. Found by this target
  // before make_plan validated its graph: a leaf laid out for another rank count
  // than g.nranks overflowed a buffer in planner::move_traffic, and matmul
  // (2,3) @ (4,5) was planned without an error.
  if (mode % 8 == 6) {
    graph g;
    g.nranks = nranks;
    const std::int64_t m = 1 + r.pick(5), k = 1 + r.pick(5), n = 1 + r.pick(5);
    auto leaf = [&](index_vec sh, int id, int P) {
      ir_node l;
      l.kind = node_kind::leaf;
      l.op = "leaf";
      l.shape = sh;
      l.label = "a" + std::to_string(id);
      l.alias = id;
      l.lay = layout::balanced(sh, int(r.pick(unsigned(sh.size()))), P);
      return l;
    };
    ir_node root;
    root.shape = {m, n};
    root.args = {1, 2};
    if (r.pick(2)) {  // matmul with mismatched inner extents
      root.kind = node_kind::matmul;
      root.op = "matmul";
      g.nodes = {root, leaf({m, k}, 1, nranks), leaf({k + 1, n}, 2, nranks)};
    } else {  // a leaf laid out for another rank count
      root.kind = node_kind::elementwise;
      root.op = "add";
      g.nodes = {root, leaf({m, n}, 1, nranks), leaf({m, n}, 2, nranks + 1 + int(r.pick(4)))};
    }
    try {
      (void)make_plan(g, std::nullopt, true);
      TRAP();  // invalid IR planned without an error
    } catch (const ember::error&) {
    } catch (...) {
      TRAP();
    }
    return 0;
  }
  builder b{r, {}};
  b.g.nranks = nranks;
  try {
    const int nd = int(r.pick(4));
    index_vec shape = b.random_shape(nd);
    b.build(shape, 1 + int(r.pick(5)));
  } catch (const ember::error& e) {
    std::fprintf(stderr, "fuzz_planner: the decoder built an invalid layout: %s\n", e.what());
    TRAP();  // the decoder only builds valid layouts
  }
  std::optional<layout> target;
  if (r.pick(3) == 0) target = b.random_layout(b.g.nodes[0].shape);
  if (r.pick(3) == 0) {  // the arrays on the GPU, evaluated by g++ or nvcc code, with or without CUDA-aware MPI
    b.g.device = ember::gpu;
    b.g.device_kernels = r.pick(2) != 0;
    b.g.device_mpi = r.pick(2) != 0;
  }
  try {
    const plan p = make_plan(b.g, target, true);
    check_plan(b.g, p, target);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_planner: make_plan threw on valid IR: %s\n", e.what());
    TRAP();  // valid IR must always plan
  } catch (...) {
    TRAP();  // valid IR must always plan
  }
  return 0;
}
