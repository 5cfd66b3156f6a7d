// Evaluation: lower an expression to the planner's graph, look its plan up in a
// per-type cache (or plan it), check on request that every rank planned the
// same, and execute the steps: exchange-engine moves, fused kernels, collectives.
#pragma once

#include <bit>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "../planner/plan.hpp"
#include <boost/hana/transform.hpp>

#include "../runtime/failure.hpp"
#include "../runtime/matmul.hpp"
#include "kernel.hpp"

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

// What the last evaluation on this process did, step by step: the plan's
// prediction for this rank and what the counters measured.
struct step_trace {
  planner::step_kind kind;
  traffic predicted;
  traffic measured;
};
const std::vector<step_trace>& last_trace();

namespace detail {

inline std::vector<step_trace>& trace_store() {
  static std::vector<step_trace> t;
  return t;
}

inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

// ---- lowering and fingerprints (pre-order, matching the kernels' numbering) ----
struct lower_state {
  planner::graph g;
  std::vector<const void*> storage;  // distinct leaf storages seen so far
  std::vector<int> storage_node;     // first leaf node of each
  std::optional<int> rebalance_for;  // plan_for: leaves laid out as balanced for P ranks
  bool scalar_values = true;         // label scalars by value (not for cached plans: values change)
  std::optional<device_kind> device; // of the first leaf; every leaf must agree
  std::string first_leaf;            // "float64 (4, 5)", for the message when they do not
};

template <class X>
void lower(const X& x, lower_state& st) {
  const int id = int(st.g.nodes.size());
  st.g.nodes.emplace_back();
  auto& n = st.g.nodes.back();
  n.shape = x.shape();
  n.dtype = dtype_code<typename X::value_type>();
  n.elem = std::int64_t(sizeof(typename X::value_type));
  if constexpr (std::is_same_v<X, expr::scalar<typename X::value_type>>) {
    n.kind = planner::node_kind::scalar;
    n.op = "scalar";
    std::ostringstream os;
    if (!st.scalar_values) os << "scalar";
    else if constexpr (std::is_same_v<typename X::value_type, bool>) os << (x.v ? "True" : "False");
    else os << +x.v;
    n.label = os.str();
  } else if constexpr (expr::is_reduction<X>::value) {
    n.kind = planner::node_kind::reduce;
    n.op = std::string(decltype(x.op_tag())::name);
    n.axes = x.axes;
    n.keepdims = x.keepdims;
    n.index_result = x.index_result;
    n.args = {id + 1};
    lower(x.arg, st);
  } else if constexpr (requires { x.a; }) {
    n.kind = planner::node_kind::leaf;
    n.op = "leaf";
    const void* p = x.a.identity();
    std::size_t k = 0;
    while (k < st.storage.size() && st.storage[k] != p) ++k;
    if (k == st.storage.size()) {
      st.storage.push_back(p);
      st.storage_node.push_back(id);
    }
    n.alias = st.storage_node[k];
    n.label = "a" + std::to_string(k);
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
    if (st.rebalance_for)
      n.lay = layout::balanced(n.shape, x.a.split(), *st.rebalance_for);
    else
      n.lay = x.a.distribution();
  } else {
    n.kind = planner::node_kind::elementwise;
    if constexpr (expr::is_op_node<X>::value) {
      n.kind = std::is_same_v<decltype(x.op_tag()), expr::matmul_op> ? planner::node_kind::matmul
                                                                      : planner::node_kind::transpose;
      if constexpr (requires { x.outer; }) n.outer = x.outer;
    }
    n.op = std::string(decltype(x.op_tag())::name);
    if constexpr (expr::is_tuple_root<X>::value) {
      n.elem = 0;  // one buffer per part; every part's size is in its own node
      hana::for_each(x.args, [&](const auto& a) { n.elem += std::int64_t(sizeof(typename std::remove_cvref_t<decltype(a)>::value_type)); });
    }
    int next = id + 1;
    hana::for_each(x.args, [&](const auto& a) {
      st.g.nodes[std::size_t(id)].args.push_back(next);
      next += std::remove_cvref_t<decltype(a)>::size;
      lower(a, st);
    });
  }
}

// Two independent 64-bit FNV-1a streams: a 128-bit key for the plan cache.
struct fingerprint {
  std::uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
  std::vector<const void*> storage;
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

template <class X>
void fingerprint_of(const X& x, fingerprint& f) {
  if constexpr (std::is_same_v<X, expr::scalar<typename X::value_type>>) {
    return;
  } else if constexpr (expr::is_reduction<X>::value) {
    f.add(std::uint64_t(x.keepdims));
    for (int a : x.axes) f.add(std::uint64_t(a));
    f.add(0xa5a5);
    fingerprint_of(x.arg, f);
  } else if constexpr (requires { x.a; }) {
    const void* p = x.a.identity();
    std::size_t k = 0;
    while (k < f.storage.size() && f.storage[k] != p) ++k;
    if (k == f.storage.size()) f.storage.push_back(p);
    f.add(k);
    f.add(std::uint64_t(x.a.device()) + 0xde00);
    f.add(x.a.distribution());
  } else {
    if constexpr (requires { x.outer; }) f.add(0x6d6d + std::uint64_t(x.outer));
    f.add(x.shape_dims().size());  // broadcasting changes with shapes; leaves carry them
    hana::for_each(x.args, [&](const auto& a) { fingerprint_of(a, f); });
  }
}

// The first leaf's communicator; every leaf must live on the same group of ranks.
template <class X>
const communicator* comm_of(const X& x, const communicator* found = nullptr) {
  if constexpr (std::is_same_v<X, expr::scalar<typename X::value_type>>) {
    return found;
  } else if constexpr (expr::is_reduction<X>::value) {
    return comm_of(x.arg, found);
  } else if constexpr (requires { x.a; }) {
    const communicator& c = x.a.comm();
    if (found && !(c == *found) && !c.congruent(*found))
      throw value_error("ember: an expression mixes arrays on different communicators (sizes " +
                        std::to_string(found->size()) + " and " + std::to_string(c.size()) + ")");
    return found ? found : &c;
  } else {
    hana::for_each(x.args, [&](const auto& a) { found = comm_of(a, found); });
    return found;
  }
}

// The device of the expression's arrays (the first leaf's; lower() checks that
// every leaf agrees).
template <class X>
device_kind device_of(const X& x) {
  if constexpr (std::is_same_v<X, expr::scalar<typename X::value_type>>) {
    return device_kind::cpu;
  } else if constexpr (expr::is_reduction<X>::value) {
    return device_of(x.arg);
  } else if constexpr (requires { x.a; }) {
    return x.a.device();
  } else {
    std::optional<device_kind> d;
    hana::for_each(x.args, [&](const auto& a) {
      using A = std::remove_cvref_t<decltype(a)>;
      if (!d && !std::is_same_v<A, expr::scalar<typename A::value_type>>) d = device_of(a);
    });
    return d.value_or(device_kind::cpu);
  }
}

// Calls f(node) for the node with pre-order id `target`, which is of a kind
// `Is` accepts (f is instantiated for those node types only).
template <template <class> class Is, class X, class F>
void visit_node(const X& x, int id, int target, F&& f) {
  if constexpr (Is<X>::value) {
    if (id == target) {
      f(x);
      return;
    }
  }
  if constexpr (expr::is_reduction<X>::value) {
    visit_node<Is>(x.arg, id + 1, target, f);
  } else if constexpr (requires { x.args; }) {
    int next = id + 1;
    hana::for_each(x.args, [&](const auto& a) {
      constexpr int sz = std::remove_cvref_t<decltype(a)>::size;
      if (target >= next && target < next + sz) visit_node<Is>(a, next, target, f);
      next += sz;
    });
  }
}
template <class X, class F>
void visit_reduction(const X& x, int id, int target, F&& f) {
  visit_node<expr::is_reduction>(x, id, target, f);
}
template <class X, class F>
void visit_op(const X& x, int id, int target, F&& f) {
  visit_node<expr::is_op_node>(x, id, target, f);
}

// Calls f(node) for the elementwise operand of a matmul/transpose with id
// `target` (the root of a fused group that is not the expression's root).
template <class X, class F>
void visit_operand(const X& x, int id, int target, F&& f) {
  if constexpr (expr::is_reduction<X>::value) {
    visit_operand(x.arg, id + 1, target, f);
  } else if constexpr (requires { x.args; }) {
    int next = id + 1;
    hana::for_each(x.args, [&](const auto& a) {
      using Arg = std::remove_cvref_t<decltype(a)>;
      constexpr int sz = Arg::size;
      bool here = false;
      if constexpr (expr::is_op_node<X>::value && requires { a.args; } && !expr::is_op_node<Arg>::value) {
        if (next == target) {
          f(a);
          here = true;
        }
      }
      if (!here && target > next && target < next + sz) visit_operand(a, next, target, f);
      next += sz;
    });
  }
}

// ---- the plan cache: per expression type, keyed by every fact the plan depends on ----
struct value_slot {
  std::shared_ptr<void> hold;
  void* ptr = nullptr;
  device_kind dev = device_kind::cpu;
  std::shared_ptr<void> aux_hold;  // argmin/argmax: the extreme values
  void* aux = nullptr;
  std::vector<std::shared_ptr<void>> parts;  // eval(e1, e2, ...): one buffer per result
};
struct cached_plan {
  planner::graph g;
  planner::plan p;
  std::vector<std::unique_ptr<exchange>> moves;  // this rank's schedule of each move step
  // scratch reused by every execution of this plan (no allocation per evaluation)
  std::vector<value_slot> vals;
  std::vector<kernel::binding> bind;
  std::optional<layout> target;
};

// A cache hit is confirmed by comparing the layouts themselves (cheap: shared
// extents compare by pointer), so a hash collision can never run a wrong plan.
template <class X>
bool same_leaf_layouts(const X& x, const cached_plan& cp, int id) {
  if constexpr (std::is_same_v<X, expr::scalar<typename X::value_type>>) {
    return true;
  } else if constexpr (expr::is_reduction<X>::value) {
    return same_leaf_layouts(x.arg, cp, id + 1);
  } else if constexpr (requires { x.a; }) {
    const auto& n = cp.g.nodes[std::size_t(id)];
    return n.lay && *n.lay == x.a.distribution() && x.a.device() == cp.g.device;
  } else {
    bool ok = true;
    int next = id + 1;
    hana::for_each(x.args, [&](const auto& a) {
      ok = ok && same_leaf_layouts(a, cp, next);
      next += std::remove_cvref_t<decltype(a)>::size;
    });
    return ok;
  }
}
template <class E>
bool same_inputs(const E& e, const cached_plan& cp, const std::optional<layout>& target) {
  if (target.has_value() != cp.target.has_value() || (target && !(*target == *cp.target))) return false;
  return same_leaf_layouts(e, cp, 0);
}

template <class Code, class E>
std::shared_ptr<cached_plan> plan_cached(const E& e, const communicator& c, const std::optional<layout>& target) {
  fingerprint f;
  fingerprint_of(e, f);
  f.add(std::uint64_t(c.size()));
  f.add(std::uint64_t(c.rank()));
  f.add(std::uint64_t(config().max_message_bytes));
  f.add(std::uint64_t(config().staging_bytes));
  f.add(std::bit_cast<std::uint64_t>(planner::cost_model().alpha));
  f.add(std::bit_cast<std::uint64_t>(planner::cost_model().beta));
  if (target) f.add(*target);
  else f.add(0x7a);
  static std::unordered_map<std::pair<std::uint64_t, std::uint64_t>, std::shared_ptr<cached_plan>, fingerprint_hash>
      cache;
  const auto key = std::make_pair(f.h1, f.h2);
  if (auto it = cache.find(key); it != cache.end() && same_inputs(e, *it->second, target)) return it->second;
  auto cp = std::make_shared<cached_plan>();
  lower_state st;
  st.scalar_values = false;
  lower(e, st);
  st.g.nranks = c.size();
  st.g.device_kernels = device_kernels_v<Code>;
  cp->g = std::move(st.g);
  cp->p = planner::make_plan(cp->g, target, /*per_rank=*/c.size() <= 4096);
  cp->target = target;
  cp->moves.resize(cp->p.steps.size());
  for (std::size_t i = 0; i < cp->p.steps.size(); ++i) {
    const auto& s = cp->p.steps[i];
    if (s.kind != planner::step_kind::fused_kernel && s.kind != planner::step_kind::allreduce &&
        s.kind != planner::step_kind::gather_index && s.kind != planner::step_kind::matmul &&
        s.kind != planner::step_kind::transpose && s.kind != planner::step_kind::to_host &&
        s.kind != planner::step_kind::to_device)
      cp->moves[i] = std::make_unique<exchange>(*s.from, *s.to, c.rank(), std::size_t(cp->g.nodes[std::size_t(s.node)].elem));
  }
  if (cache.size() > 256) cache.clear();  // bound memory for programs that plan endlessly many shapes
  cache[key] = cp;
  return cp;
}

// EMBER_CHECK_PLANS=1: every rank must have planned the same (one allreduce; on
// a mismatch one allgather more names the ranks, the same message everywhere).
inline void check_same_plan(const planner::plan& p, const communicator& c) {
  const std::uint64_t h = p.hash();
  const std::string d = divergence(c, h, [&] {
    std::ostringstream os;
    os << "plan " << std::hex << h << std::dec << " (" << p.steps.size() << (p.steps.size() == 1 ? " step)" : " steps)");
    return os.str();
  });
  if (!d.empty()) throw error("ember: ranks planned differently (replicated metadata diverged): " + d);
}

// The plan an evaluation runs: cached, checked across ranks and printed on request.
template <class Code, class E>
std::shared_ptr<cached_plan> planned(const E& e, const communicator& c, const std::optional<layout>& target) {
  auto cp = plan_cached<Code>(e, c, target);
  if (env_flag("EMBER_CHECK_PLANS")) check_same_plan(cp->p, c);
  if (env_flag("EMBER_EXPLAIN") && c.rank() == 0) std::cerr << cp->p;
  return cp;
}

// ---- execution ----

// out = in with its axes reversed (row-major local blocks of shape `ls`); 2-D in
// cache-sized tiles.
template <class T>
void transpose_local(const T* in, T* out, const index_vec& ls) {
  const int n = int(ls.size());
  std::int64_t total = 1;
  for (auto e : ls) total *= e;
  if (total == 0) return;
  if (n <= 1) {
    std::copy_n(in, total, out);
    return;
  }
  if (n == 2) {
    const std::int64_t R = ls[0], C = ls[1], B = 32;
    for (std::int64_t i0 = 0; i0 < R; i0 += B)
      for (std::int64_t j0 = 0; j0 < C; j0 += B)
        for (std::int64_t i = i0; i < std::min(R, i0 + B); ++i)
          for (std::int64_t j = j0; j < std::min(C, j0 + B); ++j) out[j * R + i] = in[i * C + j];
    return;
  }
  // general: odometer over the input, strides of the reversed output
  index_vec ostr(static_cast<std::size_t>(n)), idx(static_cast<std::size_t>(n), 0);
  std::int64_t st = 1;
  for (int d = 0; d < n; ++d) {  // output axis n-1-d is input axis d; output row-major
    ostr[std::size_t(d)] = st;
    st *= ls[std::size_t(d)];
  }
  std::int64_t o = 0;
  for (std::int64_t i = 0; i < total; ++i) {
    out[o] = in[i];
    for (int d = n - 1; d >= 0; --d) {
      o += ostr[std::size_t(d)];
      if (++idx[std::size_t(d)] < ls[std::size_t(d)]) break;
      o -= ostr[std::size_t(d)] * ls[std::size_t(d)];
      idx[std::size_t(d)] = 0;
    }
  }
}

inline std::shared_ptr<void> alloc_bytes(std::int64_t n) {
  try {
    return allocate<unsigned char>(std::max<std::int64_t>(n, 1));
  } catch (const std::bad_alloc&) {
    // inside a plan step: the failure policy reports it with the rank and the step
    throw memory_error("ember: out of memory: cannot allocate " + bytes_str(n) + " for a value of the plan");
  }
}

template <int MR>
kernel::space<MR> space_of(const layout& l, int rank) {
  kernel::space<MR> sp;
  const index_vec& gs = l.shape();
  if (gs.empty()) {
    sp.rank = 1;
    sp.ext[0] = 1;
    return sp;
  }
  sp.rank = int(gs.size());
  const int k = l.split() ? *l.split() : -1;
  for (int d = 0; d < sp.rank; ++d) sp.ext[std::size_t(d)] = d == k ? l.extent(rank) : gs[std::size_t(d)];
  return sp;
}

template <class Op>
constexpr reduce_op mpi_reduce_of() {
  if constexpr (std::is_same_v<Op, op::sum>) return reduce_op::sum;
  else if constexpr (std::is_same_v<Op, op::prod>) return reduce_op::prod;
  else if constexpr (std::is_same_v<Op, op::min>) return reduce_op::min;
  else if constexpr (std::is_same_v<Op, op::max>) return reduce_op::max;
  else if constexpr (std::is_same_v<Op, op::all>) return reduce_op::land;
  else return reduce_op::lor;
}

// The GPU side of fused kernels: specialized for cuda_code by
// dsl/device_kernels.cuh (nvcc only); host code never instantiates it, because
// its plans never put a kernel on the GPU.
template <class Code>
struct device_ops;

template <class E, class Code = host_code>
class executor {
 public:
  executor(const E& e, cached_plan& cp, const communicator& c) : e_(e), cp_(cp), c_(c), vals_(cp.vals), bind_(cp.bind) {}

  // Runs the plan. `dest`: storage of an existing array to write the result into
  // (its layout is the plan's target). Returns the result's storage.
  // eval(e1, e2, ...): the storage of each result of the last run.
  const std::vector<std::shared_ptr<void>>& result_parts() const { return last_parts_; }

  std::shared_ptr<void> run(std::shared_ptr<void> dest) {
    const auto& p = cp_.p;
    vals_.clear();
    vals_.resize(p.values.size());
    bind_leaves(e_, 0);
    dest_ = std::move(dest);
    auto& trace = trace_store();
    trace.clear();
    // A step that throws on one rank strands its peers in a collective: the
    // failure policy (runtime/failure.hpp) aborts the job with a message instead.
    failure::operation_scope scope;
    const int ordinal = failure::begin_operation(int(p.steps.size()));
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
      const auto& s = p.steps[i];
      const traffic before = c_.sent();
      failure::guarded_step(c_, ordinal, {"plan", int(i) + 1, int(p.steps.size()), planner::name(s.kind), s.text}, [&] {
        switch (s.kind) {
          case planner::step_kind::fused_kernel: run_kernel(s); break;
          case planner::step_kind::allreduce:
          case planner::step_kind::gather_index: run_combine(s); break;
          case planner::step_kind::matmul:
          case planner::step_kind::transpose: run_op(s); break;
          case planner::step_kind::to_host:
          case planner::step_kind::to_device: run_copy(s); break;
          default: run_move(i, s); break;
        }
      });
      const traffic predicted = s.traffic.per_rank.empty() ? traffic{} : s.traffic.per_rank[std::size_t(c_.rank())];
      trace.push_back({s.kind, predicted, c_.sent() - before});
    }
    auto& r = vals_[std::size_t(p.result)];
    if (dest_ && r.ptr != dest_.get()) {
      // the result landed elsewhere (aliasing hazard, or no step wrote it): copy
      const auto n = p.values[std::size_t(p.result)].local_size(c_.rank()) * node_elem(p.value_node[std::size_t(p.result)]);
      copy_between(dest_.get(), p.device, r.ptr, r.dev, n);
      vals_.clear();
      return dest_;
    }
    auto result = r.hold;
    last_parts_ = r.parts;
    vals_.clear();  // release temporaries now
    return result;
  }

 private:
  const E& e_;
  cached_plan& cp_;
  const communicator& c_;
  std::vector<value_slot>& vals_;
  std::vector<kernel::binding>& bind_;
  std::shared_ptr<void> dest_;
  std::vector<std::shared_ptr<void>> last_parts_;

  std::int64_t node_elem(int node) const { return cp_.g.nodes[std::size_t(node)].elem; }

  template <class X>
  void bind_leaves(const X& x, int id) {
    if constexpr (std::is_same_v<X, expr::scalar<typename X::value_type>>) {
    } else if constexpr (expr::is_reduction<X>::value) {
      bind_leaves(x.arg, id + 1);
    } else if constexpr (requires { x.a; }) {
      auto& v = vals_[std::size_t(cp_.p.leaf_value[std::size_t(id)])];
      if (!v.ptr) {
        v.ptr = x.a.lstorage();
        v.dev = x.a.device();
        v.hold = std::shared_ptr<void>(std::shared_ptr<typename X::value_type[]>(), v.ptr);  // non-owning: e_ holds it
      }
    } else {
      int next = id + 1;
      hana::for_each(x.args, [&](const auto& a) {
        bind_leaves(a, next);
        next += std::remove_cvref_t<decltype(a)>::size;
      });
    }
  }

  // Storage for value v; the result goes straight into the destination when safe.
  value_slot& output(int v, std::int64_t bytes, bool may_use_dest) {
    auto& slot = vals_[std::size_t(v)];
    slot.dev = cp_.p.value_device.empty() ? device_kind::cpu : cp_.p.value_device[std::size_t(v)];
    if (v == cp_.p.result && dest_ && may_use_dest) {
      slot.hold = dest_;
      slot.ptr = dest_.get();
    } else {
      slot.hold = slot.dev == device_kind::cpu ? alloc_bytes(bytes) : allocate_on(slot.dev, bytes);
      slot.ptr = slot.hold.get();
    }
    return slot;
  }

  // GPU plans: a value's block over the host-device link.
  void run_copy(const planner::step& s) {
    const std::int64_t bytes = s.to->local_size(c_.rank()) * node_elem(s.node);
    const auto& in = vals_[std::size_t(s.input)];
    auto& out = output(s.output, bytes, in.ptr != dest_.get());
    copy_between(out.ptr, out.dev, in.ptr, in.dev, bytes);
  }

  void run_move(std::size_t i, const planner::step& s) {
    const std::int64_t bytes = s.to->local_size(c_.rank()) * node_elem(s.node);
    const void* src = vals_[std::size_t(s.input)].ptr;
    auto& out = output(s.output, bytes, true);
    cp_.moves[i]->run(c_, src, out.ptr, s.on);
  }

  void prepare_bindings(const planner::step& s) {
    bind_.resize(cp_.g.nodes.size());
    for (auto [node, v] : s.bindings) bind_[std::size_t(node)] = {vals_[std::size_t(v)].ptr, &cp_.p.values[std::size_t(v)]};
  }

  // Writing the result in place is safe when every input that shares the
  // destination's storage is read at the position being written.
  bool dest_safe(const planner::step& s, bool is_reduction) const {
    if (!dest_) return true;
    for (auto [node, v] : s.bindings) {
      if (vals_[std::size_t(v)].ptr != dest_.get()) continue;
      if (is_reduction) return false;
      if (!(cp_.p.values[std::size_t(v)] == *s.from) || cp_.g.nodes[std::size_t(node)].shape != cp_.g.nodes[std::size_t(s.node)].shape)
        return false;
    }
    return true;
  }

  void run_kernel(const planner::step& s) {
    prepare_bindings(s);
    const kernel::context ctx{&bind_, c_.rank()};
    if (cp_.g.nodes[std::size_t(s.node)].kind == planner::node_kind::reduce) {
      visit_reduction(e_, 0, s.node, [&](const auto& r) { run_reduction_kernel(r, s, ctx); });
      return;
    }
    if (s.node != 0) {  // an operand of a matmul or transpose
      visit_operand(e_, 0, s.node, [&](const auto& x) { run_region_kernel(x, s, ctx); });
      return;
    }
    if constexpr (expr::is_tuple_root<E>::value) {
      run_tuple_kernel(s, ctx);
    } else if constexpr (!expr::is_reduction<E>::value && !expr::is_op_node<E>::value) {
      run_region_kernel(e_, s, ctx);
    }
  }

  template <class X>
  void run_region_kernel(const X& x, const planner::step& s, const kernel::context& ctx) {
    using T = typename X::value_type;
    constexpr int MR = X::rank;
    const auto sp = space_of<MR>(*s.from, c_.rank());
    auto& out = output(s.output, sp.count() * std::int64_t(sizeof(T)), dest_safe(s, false));
    auto ev = kernel::make_eval<MR>(x, s.node, ctx, sp);
    if (s.on == device_kind::gpu) {
      if constexpr (device_kernels_v<Code>) device_ops<Code>::template elementwise<MR>(ev, static_cast<T*>(out.ptr), sp);
      else throw_no_device_kernels(s);
      return;
    }
    kernel::run_elementwise<MR>(ev, static_cast<T*>(out.ptr), sp);
  }

  [[noreturn]] void throw_no_device_kernels(const planner::step& s) const {
    throw error("ember: internal: plan step '" + s.text + "' runs on the GPU but this code was not compiled by nvcc");
  }

  // matmul by the plan's algorithm (runtime/matmul.hpp), or a local transpose.
  void run_op(const planner::step& s) {
    visit_op(e_, 0, s.node, [&](const auto& x) {
      using T = typename std::remove_cvref_t<decltype(x)>::value_type;
      const int r = c_.rank();
      const void* in0 = vals_[std::size_t(s.bindings[0].second)].ptr;
      const void* in1 = s.bindings.size() > 1 ? vals_[std::size_t(s.bindings[1].second)].ptr : nullptr;
      const bool aliased = dest_ && (in0 == dest_.get() || in1 == dest_.get());
      auto& out = output(s.output, s.to->local_size(r) * std::int64_t(sizeof(T)), !aliased);
      if (s.on == device_kind::gpu) {  // cuBLAS, through the CUDA plugin
        if constexpr (std::is_same_v<decltype(x.op_tag()), expr::matmul_op>) {
          run_matmul_device(*s.product, r, dtype_code<T>(), in0, in1, out.ptr);
        } else {
          const auto ls = s.from->lshape(r);
          gpu_or_throw("ember::transpose").transpose_row_major(dtype_code<T>(), ls[0], ls[1], in0, out.ptr);
        }
        return;
      }
      if constexpr (std::is_same_v<decltype(x.op_tag()), expr::matmul_op>)
        run_matmul<T>(*s.product, c_, static_cast<const T*>(in0), static_cast<const T*>(in1), static_cast<T*>(out.ptr));
      else
        transpose_local(static_cast<const T*>(in0), static_cast<T*>(out.ptr), s.from->lshape(r));
    });
  }

  void run_tuple_kernel(const planner::step& s, const kernel::context& ctx) {
    constexpr int MR = E::rank;
    const auto sp = space_of<MR>(*s.from, c_.rank());
    auto& slot = vals_[std::size_t(s.output)];
    // pre-order ids of the parts: 1, then each previous part's size further
    constexpr auto ids = [] {
      std::array<int, decltype(hana::size(std::declval<E>().args))::value> r{};
      int next = 1, k = 0;
      [&]<class... A>(hana::tuple<A...>*) { ((r[std::size_t(k++)] = next, next += A::size), ...); }(
          static_cast<decltype(std::declval<E>().args)*>(nullptr));
      return r;
    }();
    slot.parts.clear();
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto evs = hana::make_tuple(kernel::make_eval<MR>(hana::at_c<I>(e_.args), ids[I], ctx, sp)...);
      (slot.parts.push_back(alloc_bytes(
           sp.count() * std::int64_t(sizeof(typename std::remove_cvref_t<decltype(hana::at_c<I>(e_.args))>::value_type)))),
       ...);
      auto outs = hana::make_tuple(
          static_cast<typename std::remove_cvref_t<decltype(hana::at_c<I>(e_.args))>::value_type*>(slot.parts[I].get())...);
      kernel::run_elementwise_multi<MR>(evs, outs, sp);
    }(std::make_index_sequence<ids.size()>{});
    slot.hold = slot.parts.front();
    slot.ptr = slot.hold.get();
  }

  template <class R>
  void run_reduction_kernel(const R& r, const planner::step& s, const kernel::context& ctx) {
    using A = std::remove_cvref_t<decltype(r.arg)>;
    using Op = decltype(r.op_tag());
    using V = typename A::value_type;
    using T = typename R::value_type;
    constexpr int MR = A::rank;
    const auto sp = space_of<MR>(*s.from, c_.rank());
    std::array<bool, kernel::space<MR>::cap> red{};
    for (int a : r.axes) red[std::size_t(a + (sp.rank - int(cp_.g.nodes[std::size_t(s.node + 1)].shape.size())))] = true;
    if (cp_.g.nodes[std::size_t(s.node + 1)].shape.empty()) red[0] = true;  // 0-d argument
    const std::int64_t nout = s.to->local_size(c_.rank());
    auto ev = kernel::make_eval<MR>(r.arg, s.node + 1, ctx, sp);
    auto& out = output(s.output, nout * std::int64_t(sizeof(T)), dest_safe(s, true));
    if (s.on == device_kind::gpu) {
      if constexpr (device_kernels_v<Code> && !op::is_arg_reduction_v<Op>)
        device_ops<Code>::template reduce<Op, MR>(ev, static_cast<T*>(out.ptr), sp, red);
      else
        throw_no_device_kernels(s);
      return;
    }
    if constexpr (op::is_arg_reduction_v<Op>) {
      auto& slot = vals_[std::size_t(s.output)];
      slot.aux_hold = alloc_bytes(nout * std::int64_t(sizeof(V)));
      slot.aux = slot.aux_hold.get();
      auto* idx = static_cast<std::int64_t*>(out.ptr);
      std::fill_n(idx, nout, std::int64_t(-1));
      std::array<std::int64_t, kernel::space<MR>::cap> off{}, gstr{};
      const auto& it = *s.from;
      if (it.split()) off[std::size_t(*it.split())] = it.offset(c_.rank());
      const auto g = row_major_strides(it.shape());
      for (int d = 0; d < sp.rank && d < int(g.size()); ++d) gstr[std::size_t(d)] = g[std::size_t(d)];
      kernel::run_arg_reduction<Op, MR>(ev, static_cast<V*>(slot.aux), idx, sp, red, off, gstr, r.axes.size() > 1 || sp.rank == 1);
    } else {
      T* o = static_cast<T*>(out.ptr);
      std::fill_n(o, nout, Op::template identity<T>());
      std::shared_ptr<void> comp;
      if constexpr (Op::compensated && std::is_floating_point_v<T>) {
        comp = alloc_bytes(nout * std::int64_t(sizeof(T)));
        std::fill_n(static_cast<T*>(comp.get()), nout, T(0));
      }
      kernel::run_reduction<Op, MR>(ev, o, static_cast<T*>(comp.get()), sp, red);
      if constexpr (Op::compensated && std::is_floating_point_v<T>)
        for (std::int64_t i = 0; i < nout; ++i)
          if (std::isfinite(o[i])) o[i] += static_cast<T*>(comp.get())[i];
    }
  }

  void run_combine(const planner::step& s) {
    // a CUDA-aware MPI reads device memory: the kernel that wrote it must be done
    if (s.on == device_kind::gpu) gpu_or_throw("ember: a device allreduce").synchronize();
    visit_reduction(e_, 0, s.node, [&](const auto& r) {
      using R = std::remove_cvref_t<decltype(r)>;
      using Op = decltype(r.op_tag());
      using T = typename R::value_type;
      auto& slot = vals_[std::size_t(s.output)];
      const std::int64_t n = s.to->local_size(c_.rank());
      if constexpr (op::is_arg_reduction_v<Op>) {
        using V = typename std::remove_cvref_t<decltype(r.arg)>::value_type;
        // allgather (value, index) pairs, keep the best (first index on ties)
        constexpr std::int64_t unit = std::int64_t(sizeof(V) + 8);
        std::vector<unsigned char> mine(std::size_t(std::max<std::int64_t>(n, 1) * unit));
        for (std::int64_t i = 0; i < n; ++i) {
          std::memcpy(&mine[std::size_t(i * unit)], static_cast<V*>(slot.aux) + i, sizeof(V));
          std::memcpy(&mine[std::size_t(i * unit + std::int64_t(sizeof(V)))], static_cast<std::int64_t*>(slot.ptr) + i, 8);
        }
        const int P = c_.size();
        std::vector<unsigned char> all(std::size_t(std::max<std::int64_t>(n, 1) * unit * P));
        std::vector<std::int64_t> counts(static_cast<std::size_t>(P), n), displs(static_cast<std::size_t>(P));
        for (int q = 0; q < P; ++q) displs[std::size_t(q)] = q * n;
        c_.allgatherv_bytes(mine.data(), n, all.data(), counts, displs, unit);
        auto* idx = static_cast<std::int64_t*>(slot.ptr);
        auto* best = static_cast<V*>(slot.aux);
        for (std::int64_t i = 0; i < n; ++i)
          for (int q = 0; q < P; ++q) {
            V v;
            std::int64_t k;
            std::memcpy(&v, &all[std::size_t((q * n + i) * unit)], sizeof(V));
            std::memcpy(&k, &all[std::size_t((q * n + i) * unit + std::int64_t(sizeof(V)))], 8);
            if (k < 0) continue;
            if (idx[i] < 0 || Op::better(v, best[i]) || (!Op::better(best[i], v) && k < idx[i])) {
              best[i] = v;
              idx[i] = k;
            }
          }
      } else {
        c_.allreduce(static_cast<T*>(slot.ptr), n, mpi_reduce_of<Op>());
      }
    });
  }
};

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
template <class Code, class E>
evaluated evaluate(const E& e, const std::optional<layout>& target, std::shared_ptr<void> dest) {
  const communicator& c = *comm_of(e);
  auto cp = planned<Code>(e, c, target);
  executor<E, Code> ex(e, *cp, c);
  auto storage = ex.run(std::move(dest));
  return {cp->p.values[std::size_t(cp->p.result)], std::move(storage), cp->p.device};
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
  static_assert(!E::exact_rank || E::rank == N,
                "ember: assigning an expression to a dndarray of a different rank (expression rank != array rank)");
  const auto& shape = e.shape_dims();
  if (int(shape.size()) != N)
    throw shape_error("ember: the expression has shape " + shape_str(shape) + " (rank " +
                      std::to_string(shape.size()) + "), assigned to a dndarray of rank " + std::to_string(N));
  if constexpr (std::is_same_v<V, T>) {
    if (dst.valid() && std::equal(shape.begin(), shape.end(), dst.distribution().shape().begin(),
                                  dst.distribution().shape().end()) &&
        comm_of(e)->congruent(dst.comm()) && dst.device() == device_of(e)) {
      // into the existing storage, in the existing layout
      std::shared_ptr<void> storage(std::shared_ptr<T[]>(), dst.lstorage());
      evaluate<Code>(e, dst.distribution(), storage);
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

inline const std::vector<step_trace>& last_trace() { return detail::trace_store(); }

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
  return eval<E::rank, E, Code>(e, o);
}

template <dtype T, int N>
dndarray<T, N> eval(const dndarray<T, N>& a, const eval_options& o = {}) {
  detail::check_same_options(a.comm(), o);
  if (!o.split.given) return a;
  return resplit(a, o.split.axis);
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
      constexpr int N = X::rank;
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
  st.g.device_kernels = detail::device_kernels_v<Code>;
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
  st.g.device_kernels = detail::device_kernels_v<Code>;
  std::optional<layout> target;
  if (o.split.given) {
    if (o.split.axis) check_axis(*o.split.axis, int(e.shape().size()), "plan_for");
    target = layout::balanced(e.shape(), o.split.axis, nranks);
  }
  return planner::make_plan(st.g, target, nranks <= 64);
}

}  // namespace ember
