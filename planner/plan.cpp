#include "plan.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <map>
#include <set>
#include <ostream>
#include <sstream>

#include "../runtime/error.hpp"

namespace ember::planner {

namespace {
// A cost constant from the environment: a finite number >= 0 (> 0 where zero
// makes no sense), the whole string. Garbage is an error, never a silent 0: a
// negative beta would make the planner maximise traffic.
void env_number(const char* name, double& out, bool positive) {
  const char* v = std::getenv(name);
  if (!v) return;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v, &end);
  const bool parsed = *v && end && *end == '\0' && errno != ERANGE;
  if (!parsed || !std::isfinite(x) || x < 0 || (positive && x == 0))
    throw value_error(std::string(name) + "='" + v + "': expected a finite number " + (positive ? "> 0" : ">= 0") +
                      " (seconds per message or per byte for the cost model; bytes for EMBER_MEMORY_LIMIT)");
  out = x;
}
}  // namespace

cost_params& cost_model() {
  // Read once; a bad value throws on every call (the same on every rank, whose
  // environments mpirun makes alike), so no plan is made from it.
  static cost_params p = [] {
    cost_params c;
    env_number("EMBER_ALPHA", c.alpha, false);
    env_number("EMBER_BETA", c.beta, false);
    env_number("EMBER_GAMMA", c.gamma, false);
    env_number("EMBER_KAPPA", c.kappa, false);
    env_number("EMBER_MEMORY_LIMIT", c.memory_limit, false);
    env_number("EMBER_PCIE_ALPHA", c.pcie_alpha, false);
    env_number("EMBER_PCIE_BETA", c.pcie_beta, false);
    return c;
  }();
  return p;
}

const char* name(step_kind k) {
  switch (k) {
    case step_kind::realign: return "realign";
    case step_kind::resplit: return "resplit";
    case step_kind::allgather: return "allgather";
    case step_kind::partition: return "partition";
    case step_kind::halo: return "halo";
    case step_kind::reverse: return "reverse";
    case step_kind::fused_kernel: return "fused_kernel";
    case step_kind::allreduce: return "allreduce";
    case step_kind::gather_index: return "gather_index";
    case step_kind::matmul: return "matmul";
    case step_kind::transpose: return "transpose";
    case step_kind::scan: return "scan";
    case step_kind::sample_sort: return "sample_sort";
    case step_kind::local_sort: return "local_sort";
    case step_kind::local_select: return "local_select";
    case step_kind::local_fft: return "local_fft";
    case step_kind::distributed_select: return "distributed_select";
    case step_kind::distributed_partition: return "distributed_partition";
    case step_kind::distributed_topk: return "distributed_topk";
    case step_kind::to_host: return "to_host";
    case step_kind::to_device: return "to_device";
  }
  return "?";
}

bool is_move(step_kind k) {
  switch (k) {
    case step_kind::realign:
    case step_kind::resplit:
    case step_kind::allgather:
    case step_kind::partition:
    case step_kind::halo:
    case step_kind::reverse: return true;
    case step_kind::fused_kernel:
    case step_kind::allreduce:
    case step_kind::gather_index:
    case step_kind::matmul:
    case step_kind::transpose:
    case step_kind::scan:
    case step_kind::sample_sort:
    case step_kind::local_sort:
    case step_kind::local_select:
    case step_kind::local_fft:
    case step_kind::distributed_select:
    case step_kind::distributed_partition:
    case step_kind::distributed_topk:
    case step_kind::to_host:
    case step_kind::to_device: return false;
  }
  return false;
}

layout needed_layout(const layout& iter, const index_vec& s) {
  const int R = iter.ndim(), n = int(s.size());
  if (!iter.split()) return replicated_layout(s, iter.nranks());
  const int k = *iter.split();
  const int kin = k - (R - n);
  if (kin < 0 || (s[std::size_t(kin)] == 1 && iter.shape()[std::size_t(k)] != 1)) return replicated_layout(s, iter.nranks());
  if (kin == k && s == iter.shape()) return iter;
  return iter.with_shape(s, kin);
}

layout reduced_layout(const layout& iter, const index_vec& out_shape, const std::vector<int>& axes, bool keepdims) {
  if (!iter.split()) return replicated_layout(out_shape, iter.nranks());
  const int k = *iter.split();
  if (std::find(axes.begin(), axes.end(), k) != axes.end()) return replicated_layout(out_shape, iter.nranks());
  int kout = k;
  if (!keepdims)
    for (int a : axes)
      if (a < k) --kout;
  return iter.with_shape(out_shape, kout);
}

namespace {

// FNV-1a over the facts that define a layout.
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= 0x100000001b3ull;
  }
  return h;
}
std::uint64_t layout_hash(const layout& l) { return l.hash(); }

// Two layouts of one shape whose block on every rank is the same box of the
// array (every layout at one rank; an array held by one rank): the same bytes in
// the same order, so a value in one is a value in the other and "moving" it is a
// rename. An empty block is the same as any other empty block.
// ember::fft's line operations (fft/fft.hpp): `local_fft` steps.
bool is_transform(const std::string& op) {
  return op == "fft" || op == "ifft" || op == "rfft" || op == "irfft" || op == "hfft" || op == "ihfft";
}

bool same_blocks(const layout& a, const layout& b) {
  if (a == b) return true;
  if (a.shape() != b.shape() || a.nranks() != b.nranks()) return false;
  auto range = [](const layout& l, int d, int r) {
    return l.split() && *l.split() == d ? std::pair(l.offset(r), l.offset(r) + l.extent(r))
                                        : std::pair(std::int64_t(0), l.shape()[std::size_t(d)]);
  };
  for (int r = 0; r < a.nranks(); ++r) {
    const std::int64_t na = a.local_size(r), nb = b.local_size(r);
    if (na == 0 && nb == 0) continue;
    if (na != nb) return false;
    for (int d = 0; d < a.ndim(); ++d)
      if (range(a, d, r) != range(b, d, r)) return false;
  }
  return true;
}

// Along a split axis the scan reads its operand twice (the totals, then the
// scan): folded there only when computing it again costs less than writing and
// reading a temporary (arithmetic, comparisons, selections; no transcendental).
bool cheap_to_recompute(const graph& g, int i) {
  static const std::set<std::string, std::less<>> cheap = {
      "add",   "sub",   "mul",     "div",        "eq",         "ne",          "lt",          "le",         "gt",
      "ge",    "minimum", "maximum", "fmin",     "fmax",       "neg",         "abs",         "abs2",       "where",
      "astype", "clip", "isnan",   "isinf",      "isfinite",   "logical_and", "logical_or",  "logical_xor", "logical_not",
      "square", "positive", "sign", "bitwise_and", "bitwise_or", "bitwise_xor", "invert",   "real",       "imag",
      "conj"};
  const ir_node& n = g.nodes[std::size_t(i)];
  if (n.kind != node_kind::elementwise) return true;  // a leaf, a scalar, or a value another step computed
  if (!cheap.count(n.op)) return false;
  return std::all_of(n.args.begin(), n.args.end(), [&](int a) { return cheap_to_recompute(g, a); });
}

struct candidate {
  layout iter;
  layout out;
  double cost = 0;
  double input_cost = 0;  // the part of `cost` spent moving inputs
  std::vector<int> child_choice{};  // per boundary: chosen candidate of a child group (-1 for leaves)
  // operations (matmul, transpose): the layout each operand must have, the product
  std::vector<layout> need{};
  std::vector<int> operands{};  // the nodes read, when not the operation's arguments (a lazy transpose's operand)
  std::optional<matmul_problem> product{};
  std::int64_t memory = 0;
};

struct group {
  int root = -1;          // the reduce node, the operation, or the root of an elementwise region
  bool is_reduce = false;
  bool is_op = false;     // matmul or transpose: boundaries are its operands
  int region = -1;        // first node of the elementwise region
  std::vector<int> boundaries;  // leaves and reductions read by the region, pre-order
  std::vector<candidate> cands;
  bool solved = false;
};

class planner_impl {
 public:
  planner_impl(const graph& g, bool per_rank) : g_(g), per_rank_(per_rank), cm_(cost_model()) {}
  const cost_params& costs() const { return cm_; }

  plan run(const std::optional<layout>& target) {
    if (g_.nodes.empty()) throw value_error("ember::planner: empty expression");
    find_common_subexpressions();
    const int root_group = build_group(0);
    solve(root_group);
    // choose the root candidate (plus the final move to a fixed target)
    int best = -1;
    double best_cost = 0;
    auto& G = groups_[std::size_t(root_group)];
    for (std::size_t c = 0; c < G.cands.size(); ++c) {
      double cost = G.cands[c].cost;
      if (target) cost += move_cost(G.cands[c].out, *target, g_.nodes[0].elem);
      if (best < 0 || cost < best_cost) {
        best = int(c);
        best_cost = cost;
      }
    }
    plan p;
    p.nranks = g_.nranks;
    p.cost = best_cost;
    p.leaf_value.assign(g_.nodes.size(), -1);
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      const auto& n = g_.nodes[i];
      if (n.kind != node_kind::leaf) continue;
      if (n.alias >= 0 && n.alias != int(i)) {
        p.leaf_value[i] = p.leaf_value[std::size_t(n.alias)];
      } else {
        p.leaf_value[i] = int(p.values.size());
        p.values.push_back(*n.lay);
        p.value_node.push_back(int(i));
      }
    }
    int v = emit(p, root_group, best);
    if (target && !(p.values[std::size_t(v)] == *target)) v = emit_move(p, 0, v, *target);
    p.result = v;
    return p;
  }

 private:
  const graph& g_;
  bool per_rank_;
  cost_params cm_;
  std::vector<group> groups_;
  std::map<int, int> group_of_;
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::int64_t>, double> move_cost_memo_;
  std::map<std::pair<int, std::uint64_t>, int> moved_leaf_;  // (alias, target hash) -> value
  std::vector<int> canon_;                       // per node: its class of nodes computing the same value
  std::map<int, int> class_group_;               // class -> the group that computes it
  std::map<std::pair<int, int>, int> emitted_;   // (group, candidate) -> its value: emitted once
  std::map<std::pair<int, std::uint64_t>, int> moved_value_;  // (value, target hash) -> moved value

  const ir_node& node(int i) const { return g_.nodes[std::size_t(i)]; }
  bool is_op(int i) const {
    const node_kind k = node(i).kind;
    return k == node_kind::matmul || k == node_kind::transpose || k == node_kind::scan || k == node_kind::sort ||
           k == node_kind::lines || k == node_kind::select;
  }
  int leaf_key(int i) const { return node(i).alias >= 0 ? node(i).alias : i; }

  // Common subexpressions: two nodes with the same operation over the same
  // canonical arguments (leaves: the same storage and view) compute the same
  // value. The reduction, product or transpose of the first such node is one
  // group that every copy reads (var's mean, computed once). Pre-order puts a
  // node's arguments after it, so this runs from the back.
  void find_common_subexpressions() {
    const int n = int(g_.nodes.size());
    canon_.assign(std::size_t(n), -1);
    std::map<std::string, int> seen;
    for (int i = n - 1; i >= 0; --i) {  // arguments first
      const ir_node& x = node(i);
      std::string key = std::to_string(int(x.kind)) + '|' + x.op + '|' + std::to_string(x.dtype) + '|' +
                        std::to_string(x.elem) + '|' + detail::shape_str(x.shape) + '|' + detail::shape_str(x.axes) +
                        (x.keepdims ? "k" : "") + (x.index_result ? "i" : "") + (x.outer ? "o" : "") + '|' +
                        (x.kind == node_kind::sort || x.kind == node_kind::lines || x.kind == node_kind::select ? x.label + '|'
                                                                                                   : std::string());
      if (x.kind == node_kind::leaf) key += x.source ? "view" + std::to_string(i) : "leaf" + std::to_string(leaf_key(i));
      else if (x.kind == node_kind::reduce && !x.label.empty()) key += "binned" + std::to_string(i);  // edges may differ
      else if (x.kind == node_kind::elementwise && !x.label.empty()) key += "table" + std::to_string(i);  // so may tables
      else if (x.kind == node_kind::scalar) key += "scalar" + std::to_string(i);  // a cached plan's scalars change value
      for (int a : x.args) key += std::to_string(canon_[std::size_t(a)]) + ',';
      canon_[std::size_t(i)] = seen.emplace(std::move(key), i).first->second;
    }
  }

  int build_group(int root) {
    const int gi = int(groups_.size());
    groups_.emplace_back();
    groups_[std::size_t(gi)].root = root;
    groups_[std::size_t(gi)].is_reduce = node(root).kind == node_kind::reduce;
    if (is_op(root)) {
      groups_[std::size_t(gi)].is_op = true;
      std::vector<int> bounds;
      for (int a : node(root).args) {
        bounds.push_back(a);
        if (node(a).kind != node_kind::leaf) group_of_[a] = build_group(a);
      }
      groups_[std::size_t(gi)].boundaries = bounds;
      return gi;
    }
    const int region = groups_[std::size_t(gi)].is_reduce ? node(root).args.at(0) : root;
    groups_[std::size_t(gi)].region = region;
    std::vector<int> bounds;
    walk(region, bounds);
    groups_[std::size_t(gi)].boundaries = bounds;
    return gi;
  }
  void walk(int i, std::vector<int>& bounds) {
    const auto& n = node(i);
    switch (n.kind) {
      case node_kind::scalar: return;
      case node_kind::leaf: bounds.push_back(i); return;
      case node_kind::reduce:
      case node_kind::matmul:
      case node_kind::transpose:
      case node_kind::scan:
      case node_kind::sort:
      case node_kind::lines:
      case node_kind::select: {
        bounds.push_back(i);
        const int cls = canon_.empty() ? i : canon_[std::size_t(i)];
        auto it = class_group_.find(cls);
        group_of_[i] = it != class_group_.end() ? it->second : (class_group_[cls] = build_group(i));
        return;
      }
      case node_kind::elementwise:
        for (int a : n.args) walk(a, bounds);
        return;
    }
  }

  double move_cost(const layout& a, const layout& b, std::int64_t elem) {
    if (a == b) return 0;
    auto key = std::make_tuple(layout_hash(a), layout_hash(b), elem);
    auto it = move_cost_memo_.find(key);
    if (it != move_cost_memo_.end()) return it->second;
    if (same_blocks(a, b)) return move_cost_memo_[key] = 0;  // a rename
    const auto t = move_traffic(a, b, elem);
    const double c = cm_.alpha * double(t.max_rank.messages) + cm_.beta * double(t.max_rank.bytes) +
                     cm_.kappa * double(max_block_bytes(b, elem));
    move_cost_memo_.emplace(key, c);
    return c;
  }

  // The largest block of `l` (bytes): what the busiest rank writes when it fills one.
  static std::int64_t max_block_bytes(const layout& l, std::int64_t elem) {
    std::int64_t mx = 0;
    for (int r = 0; r < l.nranks(); ++r) mx = std::max(mx, l.local_size(r));
    return mx * elem;
  }
  // A leaf's move to `need`; a reversed view's is priced on where its elements are.
  double leaf_cost(int b, const layout& need) {
    const ir_node& n = node(b);
    if (!n.source) return move_cost(*n.lay, need, n.elem);
    const auto t = distribution_traffic(*n.source, need, n.elem);
    return cm_.alpha * double(t.max_rank.messages) + cm_.beta * double(t.max_rank.bytes) +
           cm_.kappa * double(max_block_bytes(need, n.elem));
  }

  const index_vec& iter_shape(const group& G) const { return node(G.region).shape; }

  void solve(int gi) {
    if (groups_[std::size_t(gi)].solved) return;
    // children first
    for (int b : groups_[std::size_t(gi)].boundaries)
      if (node(b).kind != node_kind::leaf) solve(group_of_.at(b));
    if (groups_[std::size_t(gi)].is_op) {
      solve_op(gi);
      groups_[std::size_t(gi)].solved = true;
      return;
    }
    group& G = groups_[std::size_t(gi)];
    const index_vec S = iter_shape(G);
    const int R = int(S.size());
    const int P = g_.nranks;
    // Candidate iteration layouts, in a fixed order (the tie-break): the layouts
    // the inputs already have (so a tie keeps data where it is), then balanced
    // splits, then replicated.
    std::vector<layout> cand;
    auto add = [&](layout l) {
      for (const auto& c : cand)
        if (c == l) return;
      cand.push_back(std::move(l));
    };
    for (int b : G.boundaries) {
      std::vector<const layout*> have;
      if (node(b).kind == node_kind::leaf) {
        if (!node(b).source) have.push_back(&*node(b).lay);  // a reversed view is nowhere in place
      } else
        for (const auto& cc : groups_[std::size_t(group_of_.at(b))].cands) have.push_back(&cc.out);
      const index_vec& s = node(b).shape;
      for (const layout* l : have) {
        if (!l->split()) {
          // a replicated input of the full shape: iterating replicated moves nothing
          if (s == S) add(replicated_layout(S, P));
          continue;
        }
        const int k = *l->split() + (R - int(s.size()));
        if (k >= 0 && k < R && s[std::size_t(*l->split())] == S[std::size_t(k)]) add(l->with_shape(S, k));
      }
    }
    for (int k = 0; k < R; ++k) add(layout::balanced(S, k, P));
    add(replicated_layout(S, P));

    for (const auto& c : cand) {
      candidate cd{c, c, 0, {}};
      std::vector<std::pair<int, std::uint64_t>> seen;
      for (int b : G.boundaries) {
        const layout need = needed_layout(c, node(b).shape);
        if (node(b).kind == node_kind::leaf) {
          cd.child_choice.push_back(-1);
          auto key = std::make_pair(leaf_key(b), layout_hash(need));
          if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;  // moved once
          seen.push_back(key);
          cd.cost += leaf_cost(b, need);
        } else {
          const auto [bc, bi] = operand_cost(b, need);
          cd.child_choice.push_back(bi);
          cd.cost += bc;
        }
      }
      cd.input_cost = cd.cost;
      if (G.is_reduce) {
        const auto& rn = node(G.root);
        cd.out = reduced_layout(c, rn.shape, rn.axes, rn.keepdims);
        if (c.split() && std::find(rn.axes.begin(), rn.axes.end(), *c.split()) != rn.axes.end()) {
          const auto t = combine_traffic(rn, false);
          cd.cost += cm_.alpha * double(t.max_rank.messages) + cm_.beta * double(t.max_rank.bytes);
        }
      }
      G.cands.push_back(std::move(cd));
    }
    if (G.is_reduce) {
      // Heat's rule: a reduction runs where its argument lies (over the split
      // axis: local reduction + allreduce, result replicated; over another axis:
      // the result keeps the split). Moving the argument first is considered only
      // when it has to move anyway.
      double least = G.cands.front().input_cost;
      for (const auto& cd : G.cands) least = std::min(least, cd.input_cost);
      if (least == 0)
        G.cands.erase(std::remove_if(G.cands.begin(), G.cands.end(), [](const candidate& cd) { return cd.input_cost > 0; }),
                      G.cands.end());
    }
    G.solved = true;
  }

  // Traffic of combining partial reductions across ranks.
  traffic_summary combine_traffic(const ir_node& rn, bool per_rank) const {
    std::int64_t n = 1;
    for (auto s : rn.shape) n *= s;
    if (rn.index_result) {
      // (value, index) pairs of every output element from every rank
      std::vector<std::int64_t> units(static_cast<std::size_t>(g_.nranks), n);
      return allgather_traffic(units, (rn.value_elem > 0 ? rn.value_elem : rn.elem) + 8, per_rank);
    }
    return allreduce_traffic(n * rn.elem, rn.elem, g_.nranks, per_rank);
  }

  int new_value(plan& p, int node_id, layout l) {
    p.values.push_back(std::move(l));
    p.value_node.push_back(node_id);
    return int(p.values.size()) - 1;
  }

  // A leaf moving to another split of the same axis, for a kernel on the host
  // that iterates over more than that axis (the kernel picks each row's source
  // per row): it need not be copied whole, only the rows this rank lacks travel
  // (exactly the rows a realign would send).
  bool can_halo(const layout& from, const layout& to) const {
    return g_.device == device_kind::cpu && from.split() && to.split() && *from.split() == *to.split() &&
           *from.split() + 1 < from.ndim();
  }

  int emit_move(plan& p, int node_id, int from_value, const layout& to, bool halo = false) {
    const layout from = p.values[std::size_t(from_value)];
    step s;
    const bool reversed = node(node_id).kind == node_kind::leaf && node(node_id).source &&
                          from_value == leaf_value_of(p, node_id);
    if (halo) s.kind = step_kind::halo;
    else if (reversed) s.kind = step_kind::reverse;
    else if (!from.split()) s.kind = step_kind::partition;
    else if (!to.split()) s.kind = step_kind::allgather;
    else if (*from.split() == *to.split()) s.kind = step_kind::realign;
    else s.kind = step_kind::resplit;
    s.node = node_id;
    s.input = from_value;
    s.from = from;
    s.to = to;
    s.text = label(node_id);
    s.traffic = reversed ? distribution_traffic(*node(node_id).source, to, node(node_id).elem, per_rank_)
                         : move_traffic(from, to, node(node_id).elem, per_rank_);
    s.output = new_value(p, node_id, to);
    const int out = s.output;
    p.steps.push_back(std::move(s));
    return out;
  }

  static int leaf_value_of(const plan& p, int node_id) {
    return node_id < int(p.leaf_value.size()) ? p.leaf_value[std::size_t(node_id)] : -1;
  }

  std::string label(int i) const {
    const auto& n = node(i);
    if (n.kind == node_kind::leaf || n.kind == node_kind::scalar) return n.label;
    if (n.kind == node_kind::reduce) return "r" + std::to_string(i);
    if (n.kind == node_kind::matmul) return "mm" + std::to_string(i);
    if (n.kind == node_kind::transpose) return "t" + std::to_string(i);
    if (n.kind == node_kind::scan) return "s" + std::to_string(i);
    if (n.kind == node_kind::sort) return "srt" + std::to_string(i);
    if (n.kind == node_kind::lines) return "l" + std::to_string(i);
    if (n.kind == node_kind::select) return "q" + std::to_string(i);
    return "e" + std::to_string(i);
  }
  std::string text(int i) const {
    const auto& n = node(i);
    if (n.kind != node_kind::elementwise) return label(i);
    std::string s = n.op + "(";
    for (std::size_t a = 0; a < n.args.size(); ++a) s += (a ? ", " : "") + text(n.args[a]);
    return s + (n.label.empty() ? "" : ", " + n.label) + ")";
  }

  // ---- operations: matmul and transpose ----

  // What having operand `b` in layout `need` costs, and which candidate of its
  // group gives it (-1 for a leaf).
  std::pair<double, int> operand_cost(int b, const layout& need) {
    if (node(b).kind == node_kind::leaf) return {leaf_cost(b, need), -1};
    const auto& child = groups_[std::size_t(group_of_.at(b))];
    int bi = -1;
    double bc = 0;
    for (std::size_t cc = 0; cc < child.cands.size(); ++cc) {
      const double x = child.cands[cc].cost + move_cost(child.cands[cc].out, need, node(b).elem);
      if (bi < 0 || x < bc) {
        bi = int(cc);
        bc = x;
      }
    }
    return {bc, bi};
  }
  // The layouts operand `b` can be produced in without a move.
  std::vector<layout> haves(int b) const {
    std::vector<layout> out;
    if (node(b).kind == node_kind::leaf) return {*node(b).lay};
    for (const auto& cc : groups_[std::size_t(group_of_.at(b))].cands)
      if (std::find(out.begin(), out.end(), cc.out) == out.end()) out.push_back(cc.out);
    return out;
  }
  static layout transposed(const layout& l, const index_vec& out_shape) {
    if (!l.split()) return replicated_layout(out_shape, l.nranks());
    return l.with_shape(out_shape, l.ndim() - 1 - *l.split());
  }

  void solve_op(int gi) {
    group& G = groups_[std::size_t(gi)];
    const ir_node& n = node(G.root);
    if (n.kind == node_kind::transpose) {
      const int a = n.args.at(0);
      for (const layout& l : haves(a)) {
        candidate cd{transposed(l, n.shape), transposed(l, n.shape)};
        const auto [c, ch] = operand_cost(a, l);
        cd.cost = c + cm_.kappa * double(max_block_bytes(cd.out, n.elem));  // a physical transpose copies
        cd.input_cost = c;
        cd.child_choice = {ch};
        cd.need = {l};
        G.cands.push_back(std::move(cd));
      }
      return;
    }
    if (n.kind == node_kind::scan) return solve_scan(G);
    if (n.kind == node_kind::sort) return solve_sort(G);
    if (n.kind == node_kind::lines) return solve_lines(G);
    if (n.kind == node_kind::select) return solve_select(G);
    solve_matmul(G);
  }

  // An order statistic over every axis reads its operand where it lies (any
  // split, or replicated) and, when the operand can be had replicated, also
  // from a balanced split along axis 0 (a partition: nothing is sent) so the
  // ranks share the work. The result is replicated. Its own work is priced as
  // the passes over the block (one a rank wanted) and its traffic by the bound.
  void solve_select(group& G) {
    const ir_node& n = node(G.root);
    const int a = n.args.at(0), P = g_.nranks;
    const index_vec& in_shape = node(a).shape;
    std::vector<layout> ls = haves(a);
    if (P > 1 && !in_shape.empty()) {
      const layout bal = layout::balanced(in_shape, 0, P);
      if (std::find(ls.begin(), ls.end(), bal) == ls.end()) ls.push_back(bal);
    }
    const layout out = replicated_layout(n.shape, P);
    for (const layout& l : ls) {
      candidate cd{l, out};
      const auto [c, ch] = operand_cost(a, l);
      const auto t = selection_traffic(l, node(a).elem, n.ranks_selected);
      // (about four passes over the block for each rank wanted: the copy, the
      // selection's partitioning, the counting)
      cd.cost = c + 4 * cm_.kappa * double(max_block_bytes(l, node(a).elem)) * double(std::max<std::int64_t>(1, n.ranks_selected)) +
                cm_.alpha * double(t.max_rank.messages) + cm_.beta * double(t.max_rank.bytes);
      cd.input_cost = c;
      cd.child_choice = {ch};
      cd.need = {l};
      G.cands.push_back(std::move(cd));
    }
  }

  // A sort along a local axis sorts each rank's lines where they lie (every
  // layout the operand has that is not split along the axis). Along the split
  // axis a vector is sample sorted (the result balanced); an array of more axes
  // is first moved to a split along another axis (each a candidate, priced with
  // its move), so that the sorted axis is local. The sort's own work is priced
  // as the bytes it writes (twice for a sample sort: the merge and the rebalance).
  void solve_sort(group& G) {
    const ir_node& n = node(G.root);
    const int a = n.args.at(0), axis = n.axes.at(0), P = g_.nranks;
    const int R = int(n.shape.size());
    auto along = [&](const layout& l) { return P > 1 && l.split() && *l.split() == axis; };
    // A vector that can be had split is sorted split: every rank sorting all of
    // it (replicated) repeats n log n work the cost model does not price.
    const auto have = haves(a);
    const bool any_split = std::any_of(have.begin(), have.end(), [](const layout& l) { return l.split().has_value(); });
    std::vector<layout> ls;
    for (const layout& l : have)
      if ((R == 1 && (l.split() || !any_split)) || (R > 1 && !along(l))) ls.push_back(l);
    if (R > 1)
      for (int k = 0; k < R && P > 1; ++k) {
        const layout bal = layout::balanced(n.shape, k, P);
        if (k != axis && std::find(ls.begin(), ls.end(), bal) == ls.end()) ls.push_back(bal);
      }
    for (const layout& l : ls) {
      const bool sample = along(l);
      candidate cd{l, sample ? layout::balanced(n.shape, 0, P) : l};
      const auto [c, ch] = operand_cost(a, l);
      double own = cm_.kappa * double(max_block_bytes(cd.out, n.elem)) * (sample ? 2.0 : 1.0);
      if (sample) {
        const auto t = sample_sort_traffic(l, node(a).elem, n.index_result);
        own += cm_.alpha * double(t.max_rank.messages) + cm_.beta * double(t.max_rank.bytes);
      }
      cd.cost = c + own;
      cd.input_cost = c;
      cd.child_choice = {ch};
      cd.need = {l};
      G.cands.push_back(std::move(cd));
    }
  }

  // An operation on each line along an axis runs where the axis is local: every
  // layout the operand has that is not split along it, and balanced splits
  // along the other axes (each priced with its move). Its result keeps the
  // lines' split (without the axis when the operation drops it); its own work
  // is priced as the bytes it writes.
  void solve_lines(group& G) {
    const ir_node& n = node(G.root);
    const int a = n.args.at(0), axis = n.axes.at(0), P = g_.nranks;
    const index_vec& in_shape = node(a).shape;
    const int R = int(in_shape.size());
    std::vector<layout> ls;
    for (const layout& l : haves(a))
      if (P == 1 || !l.split() || *l.split() != axis) ls.push_back(l);
    for (int k = 0; k < R && P > 1; ++k) {
      const layout bal = layout::balanced(in_shape, k, P);
      if (k != axis && std::find(ls.begin(), ls.end(), bal) == ls.end()) ls.push_back(bal);
    }
    // A vector's partition along its split axis (n.ranks_selected: the kth it
    // places) is distributed: the pivots selected, one all-to-all (the result
    // balanced), priced as its bound and the two passes that classify and place.
    const bool distributed = R == 1 && n.ranks_selected > 0 && P > 1;
    if (distributed) {
      for (const layout& l : haves(a))
        if (l.split()) ls.push_back(l);
      const layout bal = layout::balanced(in_shape, 0, P);
      if (std::find(ls.begin(), ls.end(), bal) == ls.end()) ls.push_back(bal);
    }
    // a vector along its split axis, where the operation is not distributed
    // (a transform): gathered on every rank
    if (ls.empty()) ls.push_back(replicated_layout(in_shape, P));
    for (const layout& l : ls) {
      const bool along = distributed && l.split();
      // the result: balanced along the split axis; else the lines' layout, without
      // the axis or (topk) with its own length along it
      const layout out = along                        ? layout::balanced(n.shape, 0, P)
                         : n.shape == in_shape        ? l
                         : n.shape.size() < in_shape.size() ? reduced_layout(l, n.shape, {axis}, false)
                         : !l.split()                 ? replicated_layout(n.shape, P)
                         : *l.split() != axis         ? l.with_shape(n.shape, *l.split())
                                                      : layout::balanced(n.shape, axis, P);  // (one rank)
      candidate cd{l, out};
      const auto [c, ch] = operand_cost(a, l);
      cd.cost = c + cm_.kappa * double(max_block_bytes(out, n.elem));
      if (along) {
        const auto t = line_traffic(n, l, node(a).elem, false);
        cd.cost += 2 * cm_.kappa * double(max_block_bytes(l, node(a).elem)) + cm_.alpha * double(t.max_rank.messages) +
                   cm_.beta * double(t.max_rank.bytes);
      }
      cd.input_cost = c;
      cd.child_choice = {ch};
      cd.need = {l};
      G.cands.push_back(std::move(cd));
    }
  }

  // The bound of a distributed line operation of a split vector laid out as `l`.
  static traffic_summary line_traffic(const ir_node& n, const layout& l, std::int64_t elem, bool per_rank) {
    if (n.op == "topk") return topk_traffic(l, elem, n.shape.at(0), per_rank);
    return partition_traffic(l, elem, n.index_result, n.ranks_selected, per_rank);
  }

  // A scan keeps its operand's layout: the layouts the operand has (or its group
  // produces) and, for a replicated or otherwise split operand, a balanced split
  // along the scan axis (a partition of a replicated operand sends nothing, and
  // the scan's own traffic is one slice per rank).
  void solve_scan(group& G) {
    const ir_node& n = node(G.root);
    const int a = n.args.at(0), axis = n.axes.at(0);
    std::vector<layout> ls = haves(a);
    const layout bal = layout::balanced(n.shape, axis, g_.nranks);
    if (g_.nranks > 1 && std::find(ls.begin(), ls.end(), bal) == ls.end()) ls.push_back(bal);
    for (const layout& l : ls) {
      candidate cd{l, l};
      auto [c, ch] = operand_cost(a, l);
      const bool split_here = l.split() && *l.split() == axis && g_.nranks > 1;
      if (node(a).kind == node_kind::elementwise) {
        // Unless folded into the scan (fuse_scan_operands), the operand's kernel
        // writes a temporary that the scan reads back; folded, it is computed as
        // the scan reads it, in the scan's layout.
        const auto& child = groups_[std::size_t(group_of_.at(a))];
        c += cm_.kappa * double(max_block_bytes(child.cands[std::size_t(ch)].out, node(a).elem));
        if (!split_here || cheap_to_recompute(g_, a))
          for (std::size_t ci = 0; ci < child.cands.size(); ++ci)
            if (child.cands[ci].iter == l && child.cands[ci].out == l && child.cands[ci].cost < c) {
              c = child.cands[ci].cost;
              ch = int(ci);
            }
      }
      traffic mx;
      for (const auto& t : scan_traffic_all(l, axis, n.elem)) {
        mx.bytes = std::max(mx.bytes, t.bytes);
        mx.messages = std::max(mx.messages, t.messages);
      }
      // a read pass for the totals (split axis only) and the written scan
      cd.cost = c + cm_.alpha * double(mx.messages) + cm_.beta * double(mx.bytes) +
                cm_.kappa * double(max_block_bytes(l, n.elem)) * (split_here ? 1.5 : 1.0);
      cd.input_cost = c;
      cd.child_choice = {ch};
      cd.need = {l};
      G.cands.push_back(std::move(cd));
    }
  }

  // Every algorithm over the operand layouts worth trying: those the operands
  // already have (or their groups can produce) and balanced ones. A vector
  // operand is a 1 x k (A) or k x 1 (B) matrix view of the same storage.
  void solve_matmul(group& G) {
    const ir_node& n = node(G.root);
    const int ia = n.args.at(0), ib = n.args.at(1);
    const index_vec &sa = node(ia).shape, &sb = node(ib).shape;
    const int ra = int(sa.size()), rb = int(sb.size());
    if (!n.outer && (ra > 2 || rb > 2)) return solve_batched(G);
    // outer: a (m,) is the column (m, 1), b (n,) the row (1, n)
    const bool outer = n.outer;
    const std::int64_t m = outer ? sa[0] : ra == 2 ? sa[0] : 1, k = outer ? 1 : sa[std::size_t(ra - 1)];
    const std::int64_t nn = outer ? sb[0] : rb == 2 ? sb[1] : 1;
    const index_vec A2{m, k}, B2{k, nn}, C2{m, nn};
    const int P = g_.nranks;
    const int c_axis = ra == 2 ? 0 : 1;  // the axis of C's view that a 1-D result lies along
    const int a_axis = outer ? 0 : 1, b_axis = outer ? 1 : 0;  // the axis of a vector operand's view
    auto view = [&](const layout& l, const index_vec& shape2, int vec_axis) {
      if (!l.split()) return replicated_layout(shape2, P);
      return l.ndim() == 2 ? l : l.with_shape(shape2, vec_axis);
    };
    auto unview = [&](const layout& l2, const index_vec& shape, int vec_axis) -> std::optional<layout> {
      if (!l2.split()) return replicated_layout(shape, P);
      if (shape.size() == 2) return l2;
      if (shape.empty() || *l2.split() != vec_axis) return std::nullopt;
      return l2.with_shape(shape, 0);
    };
    // A 2-D transpose of a 2-D operand that only this product needs stays lazy:
    // the product reads the transpose's operand with a BLAS transpose flag. The
    // lazy operand's node (or -1).
    auto lazy_transpose = [&](int x) {
      const ir_node& t = node(x);
      return t.kind == node_kind::transpose && t.shape.size() == 2 && node(t.args.at(0)).shape.size() == 2
                 ? t.args[0] : -1;
    };
    const int ta_src = lazy_transpose(ia), tb_src = lazy_transpose(ib);
    auto split_set = [&](const std::vector<layout>& have, const index_vec& shape2, int axis) {
      std::vector<layout> out;
      for (const auto& l : have)
        if (l.split() && *l.split() == axis && std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
      const layout bal = layout::balanced(shape2, axis, P);
      if (std::find(out.begin(), out.end(), bal) == out.end()) out.push_back(bal);
      return out;
    };
    const layout Arep = replicated_layout(A2, P), Brep = replicated_layout(B2, P), Crep = replicated_layout(C2, P);

    std::vector<candidate> cands;
    for (const bool ta : {false, true}) {
      if (ta && ta_src < 0) continue;
      for (const bool tb : {false, true}) {
        if (tb && tb_src < 0) continue;
        const bool lazy = ta || tb;
        // the matrix views of the layouts the operands have (or their groups produce)
        std::vector<layout> va, vb;
        if (ta)
          for (const auto& l : haves(ta_src)) va.push_back(transposed(l, A2));
        else
          for (const auto& l : haves(ia)) va.push_back(view(l, A2, a_axis));
        if (tb)
          for (const auto& l : haves(tb_src)) vb.push_back(transposed(l, B2));
        else
          for (const auto& l : haves(ib)) vb.push_back(view(l, B2, b_axis));
        const auto A0 = split_set(va, A2, 0), A1 = split_set(va, A2, 1);
        const auto B0 = split_set(vb, B2, 0), B1 = split_set(vb, B2, 1);
        auto consider = [&](matmul_algorithm alg, const layout& la, const layout& lb, const layout& lc) {
          const int xa = ta ? ta_src : ia, xb = tb ? tb_src : ib;  // the nodes read
          const auto na = ta ? std::optional<layout>(transposed(la, node(ta_src).shape)) : unview(la, sa, a_axis);
          const auto nb = tb ? std::optional<layout>(transposed(lb, node(tb_src).shape)) : unview(lb, sb, b_axis);
          const auto nc = unview(lc, n.shape, c_axis);
          if (!na || !nb || !nc) return;
          matmul_problem pr{alg, la, lb, lc, n.elem, ta, tb};
          try {
            validate(pr);
          } catch (const error&) {
            return;
          }
          const auto [ca, cha] = operand_cost(xa, *na);
          const auto [cb, chb] = operand_cost(xb, *nb);
          traffic mx;
          for (const auto& t : matmul_traffic_all(pr, true)) {
            mx.bytes = std::max(mx.bytes, t.bytes);
            mx.messages = std::max(mx.messages, t.messages);
          }
          double mem = double(matmul_workspace(pr));
          if (!la.split() && ca > 0) mem += double(m * k * n.elem);  // an operand replicated for this product
          if (!lb.split() && cb > 0) mem += double(k * nn * n.elem);
          candidate cd{*nc, *nc};
          cd.input_cost = ca + cb;
          cd.cost = ca + cb + cm_.alpha * double(mx.messages) + cm_.beta * double(mx.bytes) +
                    cm_.gamma * matmul_flops(pr) + cm_.mu * mem;
          cd.child_choice = {cha, chb};
          cd.need = {*na, *nb};
          cd.operands = {xa, xb};
          cd.product = pr;
          cd.memory = std::int64_t(mem);
          cands.push_back(std::move(cd));
        };
        using A = matmul_algorithm;
        for (const auto& la : A0) consider(A::local, la, Brep, la.with_shape(C2, 0));
        for (const auto& lb : B1) consider(A::local, Arep, lb, lb.with_shape(C2, 1));
        consider(A::local, Arep, Brep, Crep);
        // partial products over matching k ranges (at one rank too: a split-1 A
        // is then the same block as a replicated one, and nothing is reduced)
        std::vector<std::pair<layout, layout>> pairs;
        for (const auto& la : A1) pairs.emplace_back(la, la.with_shape(B2, 0));
        for (const auto& lb : B0) pairs.emplace_back(lb.with_shape(A2, 1), lb);
        for (const auto& [la, lb] : pairs) {
          if (P > 1) consider(A::reduce_scatter, la, lb, layout::balanced(C2, 0, P));
          consider(A::allreduce, la, lb, Crep);
        }
        if (P > 1 && !lazy) {
          for (const auto& la : A0) {
            for (const auto& lb : B0) consider(A::ring_b, la, lb, la.with_shape(C2, 0));
            for (const auto& lb : B1) consider(A::ring_b, la, lb, la.with_shape(C2, 0));
          }
          for (const auto& lb : B1) {
            for (const auto& la : A0) consider(A::ring_a, la, lb, lb.with_shape(C2, 1));
            for (const auto& la : A1) consider(A::ring_a, la, lb, lb.with_shape(C2, 1));
          }
          // ScaLAPACK from wherever the operands are
          if ((n.dtype == 4 || n.dtype == 5) && m > 0 && k > 0 && nn > 0)
            for (const auto& la : va)
              for (const auto& lb : vb) {
                consider(A::summa, la, lb, layout::balanced(C2, c_axis, P));
                if (n.shape.size() == 2) consider(A::summa, la, lb, layout::balanced(C2, 1, P));
              }
        }
      }
    }
    keep_products(G, std::move(cands));
  }

  // NumPy's stacked matmul, (..., m, k) @ (..., k, n) with the batch axes
  // broadcast: every candidate is a local product per batch, no communication.
  // C is split on a batch axis (with the blocks an operand already has there,
  // or balanced; an operand that broadcasts along it is replicated), on rows
  // (A alike, B replicated), on columns (B alike, A replicated), or replicated;
  // the operands are moved to match, which the cost prices.
  void solve_batched(group& G) {
    const ir_node& n = node(G.root);
    const int ia = n.args.at(0), ib = n.args.at(1);
    const index_vec &sa = node(ia).shape, &sb = node(ib).shape;
    const int ra = int(sa.size()), rb = int(sb.size()), P = g_.nranks;
    // the views: a 1-D A is a (1, k) row, a 1-D B a (k, 1) column
    const index_vec va = ra == 1 ? index_vec{1, sa[0]} : sa, vb = rb == 1 ? index_vec{sb[0], 1} : sb;
    const int na = int(va.size()), nb = int(vb.size()), nc = std::max(na, nb);
    auto axis_of = [&](int nx, int d) { return d - (nc - nx); };  // an operand's axis aligned with C's axis d
    index_vec vc(static_cast<std::size_t>(nc));
    for (int d = 0; d < nc - 2; ++d) {
      const int da = axis_of(na, d), db = axis_of(nb, d);
      const std::int64_t x = da >= 0 ? va[std::size_t(da)] : 1, y = db >= 0 ? vb[std::size_t(db)] : 1;
      vc[std::size_t(d)] = x == 1 ? y : x;
    }
    vc[std::size_t(nc - 2)] = va[std::size_t(na - 2)];
    vc[std::size_t(nc - 1)] = vb[std::size_t(nb - 1)];
    // The operand axis split like C's axis d, or -1 (replicated): a batch axis
    // the operand has at full extent, A's rows, B's columns.
    auto split_axis = [&](bool is_a, int d) {
      const int nx = is_a ? na : nb, rx = is_a ? ra : rb;
      const index_vec& vx = is_a ? va : vb;
      if (d < nc - 2) {
        const int dx = axis_of(nx, d);
        return dx >= 0 && vx[std::size_t(dx)] == vc[std::size_t(d)] && vc[std::size_t(d)] != 1 ? dx : -1;
      }
      if (rx == 1) return -1;
      return is_a ? (d == nc - 2 ? na - 2 : -1) : (d == nc - 1 ? nb - 1 : -1);
    };
    // C's splits worth trying: every axis, with balanced blocks and the blocks
    // an operand has (or its group produces) along it.
    std::vector<std::pair<int, index_vec>> splits;
    for (int d = 0; d < nc; ++d) {
      if ((d == nc - 2 && ra == 1) || (d == nc - 1 && rb == 1)) continue;  // the result has no such axis
      if (vc[std::size_t(d)] == 1) continue;
      auto add = [&](index_vec e) {
        if (std::find(splits.begin(), splits.end(), std::make_pair(d, e)) == splits.end()) splits.emplace_back(d, std::move(e));
      };
      for (const bool is_a : {true, false}) {
        const int dx = split_axis(is_a, d);
        if (dx < 0) continue;
        for (const auto& l : haves(is_a ? ia : ib))
          if (l.split() && *l.split() == dx) add(l.extents());
      }
      add(layout::balanced_extents(vc[std::size_t(d)], P));
    }
    auto c_axis = [&](int d) { return ra == 1 && d == nc - 1 ? nc - 2 : d; };  // a 1-D A drops C's rows axis
    std::vector<candidate> cands;
    auto consider = [&](std::optional<std::pair<int, index_vec>> sp) {
      auto operand = [&](bool is_a, bool view) {
        const int dx = sp ? split_axis(is_a, sp->first) : -1;
        const index_vec& shape = view ? (is_a ? va : vb) : (is_a ? sa : sb);
        return dx < 0 ? replicated_layout(shape, P) : layout(shape, dx, sp->second);
      };
      const layout na_l = operand(true, false), nb_l = operand(false, false);
      const layout lc = sp ? layout(vc, sp->first, sp->second) : replicated_layout(vc, P);
      const layout out = sp ? layout(n.shape, c_axis(sp->first), sp->second) : replicated_layout(n.shape, P);
      matmul_problem pr{matmul_algorithm::batched, operand(true, true), operand(false, true), lc, n.elem};
      validate(pr);  // by construction; a failure is a planner bug
      const auto [ca, cha] = operand_cost(ia, na_l);
      const auto [cb, chb] = operand_cost(ib, nb_l);
      double mem = 0;  // an operand replicated for this product
      if (!na_l.split() && ca > 0) mem += double(na_l.local_size(0) * n.elem);
      if (!nb_l.split() && cb > 0) mem += double(nb_l.local_size(0) * n.elem);
      candidate cd{out, out};
      cd.input_cost = ca + cb;
      cd.cost = ca + cb + cm_.gamma * matmul_flops(pr) + cm_.mu * mem;
      cd.child_choice = {cha, chb};
      cd.need = {na_l, nb_l};
      cd.operands = {ia, ib};
      cd.product = pr;
      cd.memory = std::int64_t(mem);
      cands.push_back(std::move(cd));
    };
    // (at one rank too: a result that follows its operand's split, as a 2-D product's does)
    for (const auto& sp : splits) consider(sp);
    consider(std::nullopt);
    keep_products(G, std::move(cands));
  }

  // A product's candidates into its group: those that fit the memory limit
  // (all, when none does), the cheapest per output layout (the consumer chooses
  // among outputs).
  void keep_products(group& G, std::vector<candidate> cands) {
    const ir_node& n = node(G.root);
    if (cands.empty()) throw value_error("ember::planner: no matmul algorithm applies to shapes " +
                                         detail::shape_str(node(n.args.at(0)).shape) + " and " +
                                         detail::shape_str(node(n.args.at(1)).shape));
    // Memory limit: drop what does not fit, unless nothing does.
    if (cm_.memory_limit > 0) {
      std::int64_t least = cands.front().memory;
      for (const auto& c : cands) least = std::min(least, c.memory);
      const double lim = std::max(cm_.memory_limit, double(least));
      cands.erase(std::remove_if(cands.begin(), cands.end(), [&](const candidate& c) { return double(c.memory) > lim; }),
                  cands.end());
    }
    // Keep the cheapest algorithm per output layout (the consumer chooses among outputs).
    for (auto& c : cands) {
      auto it = std::find_if(G.cands.begin(), G.cands.end(), [&](const candidate& g) { return g.out == c.out; });
      if (it == G.cands.end()) G.cands.push_back(std::move(c));
      else if (c.cost < it->cost) *it = std::move(c);
    }
  }

  // A boundary's value in layout `need`: a leaf's own data (moved once per layout)
  // or the output of its group's chosen candidate, moved if needed.
  // `kernel_input`: the value is read by a fused kernel (not a product, not the
  // result), which can read a leaf's rows where they lie plus ghost rows.
  int operand_value(plan& p, int b, int choice, const layout& need, bool kernel_input = false) {
    int v;
    if (node(b).kind == node_kind::leaf) {
      v = p.leaf_value[std::size_t(b)];
      if (!same_blocks(p.values[std::size_t(v)], need) || node(b).source) {  // a reversed view always moves
        const bool halo = kernel_input && !node(b).source && can_halo(p.values[std::size_t(v)], need);
        auto key = std::make_pair(leaf_key(b), layout_hash(need) ^ (halo ? 0x9a10ull : 0));
        auto it = moved_leaf_.find(key);
        if (it != moved_leaf_.end() && p.values[std::size_t(it->second)] == need) v = it->second;
        else v = moved_leaf_[key] = emit_move(p, b, v, need, halo);
      }
      return v;
    }
    v = emit(p, group_of_.at(b), choice);
    if (!same_blocks(p.values[std::size_t(v)], need)) {
      // a common subexpression read twice in one layout moves once
      auto key = std::make_pair(v, layout_hash(need));
      auto it = moved_value_.find(key);
      if (it != moved_value_.end() && p.values[std::size_t(it->second)] == need) v = it->second;
      else v = moved_value_[key] = emit_move(p, b, v, need);
    }
    return v;
  }

  int emit_op(plan& p, int gi, int ci) {
    const group& G = groups_[std::size_t(gi)];
    const candidate& c = G.cands[std::size_t(ci)];
    const ir_node& n = node(G.root);
    step s;
    s.kind = n.kind == node_kind::matmul ? step_kind::matmul
             : n.kind == node_kind::scan ? step_kind::scan
             : n.kind == node_kind::lines
                 ? (c.need[0].split() && *c.need[0].split() == n.axes.at(0) && g_.nranks > 1
                        ? (n.op == "topk" ? step_kind::distributed_topk : step_kind::distributed_partition)
                        : is_transform(n.op) ? step_kind::local_fft : step_kind::local_select)
             : n.kind == node_kind::select ? step_kind::distributed_select
             : n.kind == node_kind::sort
                 ? (c.need[0].split() && *c.need[0].split() == n.axes.at(0) && g_.nranks > 1 ? step_kind::sample_sort
                                                                                             : step_kind::local_sort)
                 : step_kind::transpose;
    s.node = G.root;
    std::string args;
    for (std::size_t i = 0; i < n.args.size(); ++i) {
      const int x = c.operands.empty() ? n.args[i] : c.operands[i];
      const int v = operand_value(p, x, c.child_choice[i], c.need[i]);
      s.bindings.emplace_back(x, v);
      args += (i ? ", " : "") + text(n.args[i]);
    }
    s.to = c.out;
    if (s.kind == step_kind::scan) {
      s.from = c.need[0];
      s.text = n.op + "(" + args + ", axis=" + std::to_string(n.axes.at(0)) + ")";
      accumulate(s.traffic, scan_traffic_all(c.out, n.axes.at(0), n.elem), per_rank_);
    } else if (s.kind == step_kind::local_select || s.kind == step_kind::local_fft) {
      s.from = c.need[0];
      s.text = n.op + "(" + args + ", axis=" + std::to_string(n.axes.at(0)) + (n.label.empty() ? "" : ", " + n.label) + ")";
      if (per_rank_) s.traffic.per_rank.assign(std::size_t(g_.nranks), {});
    } else if (s.kind == step_kind::distributed_partition || s.kind == step_kind::distributed_topk) {
      s.from = c.need[0];
      s.text = n.op + "(" + args + ", axis=" + std::to_string(n.axes.at(0)) + (n.label.empty() ? "" : ", " + n.label) + ")";
      s.bound = true;
      accumulate(s.traffic, line_traffic(n, c.need[0], node(n.args[0]).elem, true).per_rank, per_rank_);
    } else if (s.kind == step_kind::distributed_select) {
      s.from = c.need[0];
      s.text = n.op + "(" + args + (n.label.empty() ? "" : ", " + n.label) + ")";
      s.bound = c.need[0].split() && g_.nranks > 1;
      accumulate(s.traffic, selection_traffic(c.need[0], node(n.args[0]).elem, n.ranks_selected, true).per_rank, per_rank_);
    } else if (s.kind == step_kind::sample_sort || s.kind == step_kind::local_sort) {
      s.from = c.need[0];
      s.text = n.op + "(" + args + ", axis=" + std::to_string(n.axes.at(0)) + (n.label.empty() ? "" : ", " + n.label) + ")";
      if (s.kind == step_kind::sample_sort) {
        s.bound = true;
        accumulate(s.traffic, sample_sort_traffic(c.need[0], node(n.args[0]).elem, n.index_result, true).per_rank, per_rank_);
      } else if (per_rank_) {
        s.traffic.per_rank.assign(std::size_t(g_.nranks), {});
      }
    } else if (s.kind == step_kind::transpose) {
      s.from = c.need[0];
      s.text = "transpose(" + args + ")";
      if (per_rank_) s.traffic.per_rank.assign(std::size_t(g_.nranks), {});
    } else {
      s.product = c.product;
      s.memory = c.memory;
      s.text = "matmul(" + args + ") by " + name(c.product->alg);
      accumulate(s.traffic, matmul_traffic_all(*c.product, true), per_rank_);
    }
    s.output = new_value(p, G.root, c.out);
    const int out = s.output;
    p.steps.push_back(std::move(s));
    return out;
  }
  static void accumulate(traffic_summary& sum, const std::vector<traffic>& per, bool keep) {
    for (const auto& t : per) {
      sum.max_rank.bytes = std::max(sum.max_rank.bytes, t.bytes);
      sum.max_rank.messages = std::max(sum.max_rank.messages, t.messages);
      sum.total += t;
    }
    if (keep) sum.per_rank = per;
  }

  int emit(plan& p, int gi, int ci) {
    if (auto it = emitted_.find({gi, ci}); it != emitted_.end()) return it->second;  // a common subexpression
    const int v = emit_group(p, gi, ci);
    emitted_[{gi, ci}] = v;
    return v;
  }
  int emit_group(plan& p, int gi, int ci) {
    const group& G = groups_[std::size_t(gi)];
    if (G.is_op) return emit_op(p, gi, ci);
    const candidate& c = G.cands[std::size_t(ci)];
    step k;
    k.kind = step_kind::fused_kernel;
    k.node = G.root;
    for (std::size_t bi = 0; bi < G.boundaries.size(); ++bi) {
      const int b = G.boundaries[bi];
      const layout need = needed_layout(c.iter, node(b).shape);
      const int v = operand_value(p, b, node(b).kind == node_kind::leaf ? -1 : c.child_choice[bi], need, true);
      k.bindings.emplace_back(b, v);
    }
    k.from = c.iter;
    k.to = c.out;
    k.text = !G.is_reduce                  ? text(G.root)
             : !node(G.root).label.empty() ? node(G.root).op + "(" + text(G.region) + ", " + node(G.root).label + ")"
                                           : node(G.root).op + "(" + text(G.region) + ", axes=" +
                                                 detail::shape_str(node(G.root).axes) + (node(G.root).keepdims ? ", keepdims" : "") + ")";
    k.traffic = {};  // a kernel sends nothing
    if (per_rank_) k.traffic.per_rank.assign(std::size_t(g_.nranks), {});
    k.output = new_value(p, G.root, c.out);
    const int out = k.output;
    p.steps.push_back(std::move(k));
    if (G.is_reduce && c.iter.split() && (g_.nranks > 1 || node(G.root).index_result)) {  // one rank: nothing to combine
      const auto& rn = node(G.root);
      if (std::find(rn.axes.begin(), rn.axes.end(), *c.iter.split()) != rn.axes.end()) {
        step a;
        a.kind = rn.index_result ? step_kind::gather_index : step_kind::allreduce;
        a.node = G.root;
        a.input = a.output = out;
        a.from = a.to = c.out;
        a.text = label(G.root);
        a.traffic = combine_traffic(rn, per_rank_);
        p.steps.push_back(std::move(a));
      }
    }
    return out;
  }
};

std::string layout_text(const layout& l) {
  std::ostringstream os;
  os << detail::shape_str(l.shape());
  if (!l.split()) {
    os << " none";
    return os.str();
  }
  os << " split " << *l.split();
  if (!l.is_balanced()) {
    if (l.nranks() <= 8) os << ' ' << detail::shape_str(l.extents());
    else os << " (custom extents)";
  }
  return os.str();
}

std::string human_bytes(std::int64_t b) {
  std::ostringstream os;
  if (b < 10 * 1024) os << b << " B";
  else if (b < 10ll * 1024 * 1024) os << std::fixed << std::setprecision(1) << double(b) / 1024 << " KiB";
  else if (b < 10ll * 1024 * 1024 * 1024) os << std::fixed << std::setprecision(1) << double(b) / (1024 * 1024) << " MiB";
  else os << std::fixed << std::setprecision(1) << double(b) / (1024.0 * 1024 * 1024) << " GiB";
  return os.str();
}

std::string json_layout(const layout& l) {
  std::ostringstream os;
  os << "{\"shape\": [";
  for (std::size_t i = 0; i < l.shape().size(); ++i) os << (i ? ", " : "") << l.shape()[i];
  os << "], \"split\": ";
  if (l.split()) os << *l.split();
  else os << "null";
  os << ", \"balanced\": " << (l.is_balanced() ? "true" : "false");
  if (l.split() && !l.is_balanced()) {
    os << ", \"extents\": [";
    for (std::size_t i = 0; i < l.extents().size(); ++i) os << (i ? ", " : "") << l.extents()[i];
    os << "]";
  }
  os << "}";
  return os.str();
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

}  // namespace

namespace {
std::int64_t plan_count = 0;
}
std::int64_t plans_made() { return plan_count; }

namespace {
// The graph's facts the planner relies on; a dsl bug or a hand-built graph that
// breaks one gets an ember::error, never a plan over inconsistent metadata.
void validate_graph(const graph& g, const std::optional<layout>& target) {
  const auto where = [](std::size_t i) { return "ember::planner: node " + std::to_string(i); };
  const std::size_t N = g.nodes.size();
  for (std::size_t i = 0; i < N; ++i) {
    const ir_node& n = g.nodes[i];
    for (int a : n.args)
      if (a <= int(i) || a >= int(N)) throw value_error(where(i) + " has argument " + std::to_string(a) + " out of pre-order");
    if (n.kind == node_kind::leaf) {
      if (!n.lay) throw value_error(where(i) + " is a leaf without a layout");
      if (n.lay->nranks() != g.nranks)
        throw value_error(where(i) + ": a leaf laid out over " + std::to_string(n.lay->nranks()) +
                          " ranks in a plan for " + std::to_string(g.nranks));
      if (n.lay->shape() != n.shape)
        throw shape_error(where(i) + ": leaf of shape " + detail::shape_str(n.shape) + " with a layout of shape " +
                          detail::shape_str(n.lay->shape()));
    } else if (n.kind == node_kind::matmul) {
      if (n.args.size() != 2) throw value_error(where(i) + ": matmul takes two operands");
      const index_vec& a = g.nodes[std::size_t(n.args[0])].shape;
      const index_vec& b = g.nodes[std::size_t(n.args[1])].shape;
      const bool ranks_ok = n.outer ? a.size() == 1 && b.size() == 1 : !a.empty() && !b.empty();
      // (..., m, k) @ (..., k, n): B's rows are its first axis when 1-D, else its second last
      if (!ranks_ok || (!n.outer && a.back() != b[b.size() < 2 ? 0 : b.size() - 2]))
        throw shape_error(where(i) + ": matmul operands of shapes " + detail::shape_str(a) + " and " +
                          detail::shape_str(b) + " do not chain");
    } else if (n.kind == node_kind::scan) {
      if (n.args.size() != 1 || n.axes.size() != 1) throw value_error(where(i) + ": a scan takes one operand and one axis");
      const index_vec& a = g.nodes[std::size_t(n.args[0])].shape;
      if (a != n.shape || n.axes[0] < 0 || n.axes[0] >= int(n.shape.size()))
        throw shape_error(where(i) + ": scan of shape " + detail::shape_str(a) + " along axis " +
                          std::to_string(n.axes[0]) + " cannot have shape " + detail::shape_str(n.shape));
    } else if (n.kind == node_kind::sort) {
      if (n.args.size() != 1 || n.axes.size() != 1) throw value_error(where(i) + ": a sort takes one operand and one axis");
      const index_vec& a = g.nodes[std::size_t(n.args[0])].shape;
      if (a != n.shape || n.shape.empty() || n.axes[0] < 0 || n.axes[0] >= int(n.shape.size()))
        throw shape_error(where(i) + ": sort of shape " + detail::shape_str(a) + " along axis " +
                          std::to_string(n.axes[0]) + " cannot have shape " + detail::shape_str(n.shape));
    } else if (n.kind == node_kind::lines) {
      if (n.args.size() != 1 || n.axes.size() != 1) throw value_error(where(i) + ": a line operation takes one operand and one axis");
      const index_vec& a = g.nodes[std::size_t(n.args[0])].shape;
      index_vec dropped = a;
      if (n.axes[0] >= 0 && n.axes[0] < int(a.size())) dropped.erase(dropped.begin() + n.axes[0]);
      index_vec resized = a;  // topk: its own length along the axis
      if (n.axes[0] >= 0 && n.axes[0] < int(a.size()) && n.shape.size() == a.size())
        resized[std::size_t(n.axes[0])] = n.shape[std::size_t(n.axes[0])];
      if (a.empty() || n.axes[0] < 0 || n.axes[0] >= int(a.size()) || (n.shape != a && n.shape != dropped && n.shape != resized))
        throw shape_error(where(i) + ": " + n.op + " of shape " + detail::shape_str(a) + " along axis " +
                          std::to_string(n.axes[0]) + " cannot have shape " + detail::shape_str(n.shape));
    } else if (n.kind == node_kind::select) {
      if (n.args.size() != 1) throw value_error(where(i) + ": an order statistic takes one operand");
      if (n.shape.size() > 1 || n.ranks_selected < 0)
        throw shape_error(where(i) + ": " + n.op + " over every axis cannot have shape " + detail::shape_str(n.shape));
    } else if (n.kind == node_kind::transpose) {
      if (n.args.size() != 1) throw value_error(where(i) + ": transpose takes one operand");
      const index_vec& a = g.nodes[std::size_t(n.args[0])].shape;
      if (index_vec(a.rbegin(), a.rend()) != n.shape)
        throw shape_error(where(i) + ": transpose of shape " + detail::shape_str(a) + " cannot have shape " +
                          detail::shape_str(n.shape));
    }
  }
  if (target && N > 0 && (target->nranks() != g.nranks || target->shape() != g.nodes[0].shape))
    throw value_error("ember::planner: a target layout of shape " + detail::shape_str(target->shape()) + " over " +
                      std::to_string(target->nranks()) + " ranks for a result of shape " +
                      detail::shape_str(g.nodes[0].shape) + " over " + std::to_string(g.nranks));
}
}  // namespace

namespace {

// Largest local block of `l` over the ranks, in bytes.
std::int64_t max_local_bytes(const layout& l, std::int64_t elem) {
  std::int64_t m = 0;
  for (int r = 0; r < l.nranks(); ++r) m = std::max(m, l.local_size(r));
  return m * elem;
}

// GPU plans: every step gets the device it runs on, and values that a step needs
// on the other side of the host-device link get a to_host/to_device step first
// (one copy per value and direction, reused while the value is unchanged). Fused
// kernels run on the GPU when the evaluating code was compiled by nvcc; local
// products and 2-D transposes on cuBLAS; moves that send nothing as device
// copies; moves and collectives that send, on the GPU's data only when
// g.device_mpi says MPI is CUDA-aware (no build sets it yet: the runtime's GPU
// exchange stages through host memory either way); argmin/argmax combination on
// the host. The result ends on the device. The layout choice is the CPU planner's: the copies
// cost the same whichever layout a group iterates in, so they do not change it.
void place_on_device(plan& p, const graph& g, const cost_params& cm, bool per_rank) {
  p.device = g.device;
  p.value_device.assign(p.values.size(), device_kind::cpu);
  for (std::size_t v = 0; v < p.values.size(); ++v)
    if (g.nodes[std::size_t(p.value_node[v])].kind == node_kind::leaf) p.value_device[v] = g.device;
  if (g.device == device_kind::cpu) return;
  const auto gpu = device_kind::gpu, cpu = device_kind::cpu;
  // copies[v] = {value on the host, value on the device} holding v's current content
  std::vector<std::array<int, 2>> copies(p.values.size());
  for (std::size_t v = 0; v < p.values.size(); ++v) {
    copies[v] = {-1, -1};
    copies[v][p.value_device[v] == gpu ? 1 : 0] = int(v);
  }
  std::vector<int> logical(p.values.size());  // value id -> the value whose copies it is
  for (std::size_t v = 0; v < logical.size(); ++v) logical[v] = int(v);
  std::vector<step> out;
  auto place = [&](int v, device_kind d) {
    const int l = logical[std::size_t(v)];
    const std::size_t want = d == gpu ? 1 : 0;
    if (copies[std::size_t(l)][want] >= 0) return copies[std::size_t(l)][want];
    const int from = copies[std::size_t(l)][1 - want];
    const int node = p.value_node[std::size_t(from)];
    step k;
    k.kind = d == gpu ? step_kind::to_device : step_kind::to_host;
    k.node = node;
    k.input = from;
    k.from = k.to = p.values[std::size_t(from)];
    k.on = d;
    const std::int64_t elem = g.nodes[std::size_t(node)].elem;
    k.copy_bytes = max_local_bytes(*k.from, elem);
    const auto& n = g.nodes[std::size_t(node)];
    k.text = (n.kind == node_kind::leaf ? n.label : "v" + std::to_string(l)) + " (" + human_bytes(k.copy_bytes) +
             (d == gpu ? " up)" : " down)");
    if (per_rank) k.traffic.per_rank.assign(std::size_t(g.nranks), {});
    k.output = int(p.values.size());
    p.values.push_back(*k.to);
    p.value_node.push_back(node);
    p.value_device.push_back(d);
    logical.push_back(l);
    copies.push_back({-1, -1});
    copies[std::size_t(l)][want] = k.output;
    p.cost += cm.pcie_alpha + cm.pcie_beta * double(k.copy_bytes);
    out.push_back(std::move(k));
    return out.back().output;
  };
  for (auto& s : p.steps) {
    device_kind d = cpu;
    if (s.kind == step_kind::fused_kernel) d = g.device_kernels && !g.nodes[std::size_t(s.node)].index_result ? gpu : cpu;
    else if (s.kind == step_kind::allreduce)
      d = g.device_mpi ? gpu : cpu;
    else if (is_move(s.kind))
      // a move that sends nothing (one rank, a partition) copies on the device
      d = g.device_mpi || s.traffic.total.bytes == 0 ? gpu : cpu;
    else if (s.kind == step_kind::matmul)  // cuBLAS for local products (no nvcc needed: the plugin has it)
      d = s.product && runs_on_device(*s.product, g.nodes[std::size_t(s.node)].dtype) ? gpu : cpu;
    else if (s.kind == step_kind::transpose) {  // 2-D float: cuBLAS geam
      const auto& n = g.nodes[std::size_t(s.node)];
      d = n.shape.size() == 2 && (n.dtype == 4 || n.dtype == 5) ? gpu : cpu;
    }
    s.on = d;
    for (auto& b : s.bindings) b.second = place(b.second, d);
    const bool in_place = s.input >= 0 && s.input == s.output;
    if (s.input >= 0) s.input = place(s.input, d);
    if (in_place) {
      // an allreduce changes its value where it runs: the other side's copy is stale
      const int l = logical[std::size_t(s.input)];
      s.output = s.input;
      copies[std::size_t(l)] = {-1, -1};
      copies[std::size_t(l)][d == gpu ? 1 : 0] = s.input;
    } else if (s.output >= 0) {
      p.value_device[std::size_t(s.output)] = d;
      copies[std::size_t(s.output)] = {-1, -1};
      copies[std::size_t(s.output)][d == gpu ? 1 : 0] = s.output;
    }
    out.push_back(std::move(s));
  }
  // the result lives where the leaves do
  p.result = place(p.result, gpu);
  p.steps = std::move(out);
}

// A scan reads its operand in order, once per pass, so an elementwise operand
// computed for the scan alone needs no pass and no temporary of its own: its
// fused_kernel step is folded into the scan step, whose bindings become the
// kernel's (the executor evaluates the operand chunk by chunk as it scans).
// Only where the kernel iterates in the scan's layout and nothing else reads its
// value; on the host (a GPU plan keeps the kernel on the device).
void fuse_scan_operands(plan& p, const graph& g) {
  if (g.device != device_kind::cpu) return;
  std::vector<int> readers(p.values.size(), 0);
  for (const auto& s : p.steps) {
    for (const auto& b : s.bindings) ++readers[std::size_t(b.second)];
    if (s.input >= 0) ++readers[std::size_t(s.input)];
  }
  if (p.result >= 0) ++readers[std::size_t(p.result)];
  std::vector<bool> folded(p.steps.size(), false);
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    step& s = p.steps[i];
    if (s.kind != step_kind::scan || s.bindings.size() != 1) continue;
    const auto [operand, v] = s.bindings[0];
    if (readers[std::size_t(v)] != 1 || g.nodes[std::size_t(s.node)].args.at(0) != operand) continue;
    for (std::size_t j = 0; j < i; ++j) {
      const step& k = p.steps[j];
      if (k.kind != step_kind::fused_kernel || k.output != v) continue;
      const int axis = g.nodes[std::size_t(s.node)].axes.at(0);
      const bool twice = s.from->split() && *s.from->split() == axis && p.nranks > 1;
      if (k.node == operand && g.nodes[std::size_t(operand)].kind == node_kind::elementwise && *k.from == *s.from &&
          *k.to == *s.from && (!twice || cheap_to_recompute(g, operand))) {
        s.bindings = k.bindings;
        folded[j] = true;
      }
      break;
    }
  }
  std::vector<step> kept;
  for (std::size_t i = 0; i < p.steps.size(); ++i)
    if (!folded[i]) kept.push_back(std::move(p.steps[i]));
  p.steps = std::move(kept);
}

// The kernel that reads a scan can compute the scan itself, chunk by chunk as
// it goes, when nothing else reads the scan, it iterates in the scan's layout
// over the scan's shape (every element read where it is made) and the scan's
// operand is a value of the plan (an operand folded into the scan stays so):
// the scan step goes, its value is never written, and the kernel step carries
// the scan's traffic (the exclusive scan of the totals, along a split axis).
// On the host, without halos (those kernels overlap messages with rows).
void fuse_scan_consumers(plan& p, const graph& g) {
  if (g.device != device_kind::cpu) return;
  std::vector<int> readers(p.values.size(), 0), producer(p.values.size(), -1);
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const auto& s = p.steps[i];
    for (const auto& b : s.bindings) ++readers[std::size_t(b.second)];
    if (s.input >= 0) ++readers[std::size_t(s.input)];
    if (s.output >= 0) producer[std::size_t(s.output)] = int(i);
  }
  if (p.result >= 0) ++readers[std::size_t(p.result)];
  std::vector<bool> folded(p.steps.size(), false);
  for (auto& k : p.steps) {
    if (k.kind != step_kind::fused_kernel || g.nodes[std::size_t(k.node)].kind != node_kind::elementwise) continue;
    const bool halo = std::any_of(k.bindings.begin(), k.bindings.end(), [&](auto b) {
      const int q = producer[std::size_t(b.second)];
      return q >= 0 && p.steps[std::size_t(q)].kind == step_kind::halo;
    });
    if (halo) continue;
    const std::vector<std::pair<int, int>> bound = k.bindings;  // (a copy: k.bindings grows below)
    for (const auto& [b, v] : bound) {
      const int si = producer[std::size_t(v)];
      if (g.nodes[std::size_t(b)].kind != node_kind::scan || si < 0 || readers[std::size_t(v)] != 1) continue;
      const step& s = p.steps[std::size_t(si)];
      if (s.kind != step_kind::scan || s.node != b || s.bindings.size() != 1 ||
          s.bindings[0].first != g.nodes[std::size_t(b)].args.at(0) || !(*s.to == *k.from) ||
          g.nodes[std::size_t(b)].shape != g.nodes[std::size_t(k.node)].shape)
        continue;
      k.inline_scan = b;
      k.traffic = s.traffic;
      k.bindings.push_back(s.bindings[0]);
      const std::string lbl = "s" + std::to_string(b);
      for (std::size_t at = k.text.find(lbl); at != std::string::npos;) {
        const std::size_t end = at + lbl.size();
        const bool whole = (end == k.text.size() || !std::isalnum(static_cast<unsigned char>(k.text[end]))) &&
                           (at == 0 || !std::isalnum(static_cast<unsigned char>(k.text[at - 1])));  // (not s12, not abs1)
        if (whole) k.text.replace(at, lbl.size(), s.text);
        at = k.text.find(lbl, whole ? at + s.text.size() : end);
      }
      folded[std::size_t(si)] = true;
      break;  // one scan per kernel
    }
  }
  std::vector<step> kept;
  for (std::size_t i = 0; i < p.steps.size(); ++i)
    if (!folded[i]) kept.push_back(std::move(p.steps[i]));
  p.steps = std::move(kept);
}

// step::local_bytes of every step: the largest block of its output.
void set_local_bytes(plan& p, const graph& g) {
  for (auto& s : p.steps) {
    s.local_bytes = 0;
    if (s.output < 0 || s.kind == step_kind::halo || s.kind == step_kind::to_host || s.kind == step_kind::to_device)
      continue;
    s.local_bytes = max_local_bytes(p.values[std::size_t(s.output)], g.nodes[std::size_t(s.node)].elem);
  }
}

}  // namespace

plan make_plan(const graph& g, const std::optional<layout>& target, bool per_rank) {
  validate_graph(g, target);
  ++plan_count;
  planner_impl impl(g, per_rank);
  plan p = impl.run(target);
  fuse_scan_operands(p, g);
  fuse_scan_consumers(p, g);
  place_on_device(p, g, impl.costs(), per_rank);
  set_local_bytes(p, g);
  return p;
}

std::int64_t plan::local_bytes() const {
  std::int64_t b = 0;
  for (const auto& s : steps) b += s.local_bytes;
  return b;
}

std::int64_t plan::copy_bytes() const {
  std::int64_t b = 0;
  for (const auto& s : steps) b += s.copy_bytes;
  return b;
}

traffic plan::max_rank() const {
  traffic t;
  for (const auto& s : steps) t += s.traffic.max_rank;
  return t;
}
traffic plan::total() const {
  traffic t;
  for (const auto& s : steps) t += s.traffic.total;
  return t;
}

std::uint64_t plan::hash() const {
  std::uint64_t h = 0xcbf29ce484222325ull;
  h = mix(h, std::uint64_t(nranks));
  for (const auto& s : steps) {
    h = mix(h, std::uint64_t(s.kind));
    h = mix(h, std::uint64_t(s.node));
    h = mix(h, std::uint64_t(s.input));
    h = mix(h, std::uint64_t(s.output));
    if (s.from) h = mix(h, layout_hash(*s.from));
    if (s.to) h = mix(h, layout_hash(*s.to));
    for (auto [n, v] : s.bindings) h = mix(mix(h, std::uint64_t(n)), std::uint64_t(v));
    h = mix(h, std::uint64_t(s.on));
    h = mix(h, std::uint64_t(std::int64_t(s.inline_scan)));
    if (s.product)
      h = mix(mix(mix(mix(h, std::uint64_t(s.product->alg)), layout_hash(s.product->a)), layout_hash(s.product->b)),
              layout_hash(s.product->c));
  }
  return mix(h, std::uint64_t(result));
}

std::string plan::to_string() const {
  std::ostringstream os;
  const auto mx = max_rank(), tot = total();
  os << "ember plan: " << steps.size() << " step" << (steps.size() == 1 ? "" : "s") << " on " << nranks
     << " rank" << (nranks == 1 ? "" : "s") << ", predicted per rank (max) " << human_bytes(mx.bytes) << " in "
     << mx.messages << " message" << (mx.messages == 1 ? "" : "s") << ", all ranks " << human_bytes(tot.bytes) << " in "
     << tot.messages << "; local writes per rank (max) " << human_bytes(local_bytes()) << "\n";
  if (device == device_kind::gpu)
    os << "device: gpu; host-device copies " << human_bytes(copy_bytes()) << " per rank (max); steps marked [gpu] run on the GPU, the others on the host\n";
  os << std::left << std::setw(4) << "#" << std::setw(14) << "step" << std::setw(46) << "layout" << std::right
     << std::setw(12) << "bytes/rank" << std::setw(10) << "msgs/rank" << std::setw(12) << "local/rank" << "  " << std::left
     << "detail\n";
  int i = 1;
  for (const auto& s : steps) {
    std::string lay;
    if (s.kind == step_kind::fused_kernel) lay = layout_text(*s.from) + (*s.from == *s.to ? "" : " -> " + layout_text(*s.to));
    else if (s.kind == step_kind::allreduce || s.kind == step_kind::gather_index) lay = layout_text(*s.to);
    else if (s.kind == step_kind::matmul) lay = "-> " + layout_text(*s.to);
    else if (s.kind == step_kind::to_host || s.kind == step_kind::to_device) lay = layout_text(*s.to);
    else lay = layout_text(*s.from) + " -> " + (s.to->split() ? "split " + std::to_string(*s.to->split()) : "none");
    // a data-dependent step's traffic is a bound: "<=" before it
    const std::string le = s.bound ? "<=" : "";
    os << std::left << std::setw(4) << i++ << std::setw(14) << name(s.kind) << std::setw(46) << lay << std::right
       << std::setw(12) << le + std::to_string(s.traffic.max_rank.bytes) << std::setw(10)
       << le + std::to_string(s.traffic.max_rank.messages) << std::setw(12)
       << s.local_bytes << "  " << std::left << (device == device_kind::gpu && s.on == device_kind::gpu ? "[gpu] " : "") << s.text << "\n";
  }
  os << std::left << std::setw(64) << "total (sum of per-step maxima)" << std::right << std::setw(12) << mx.bytes
     << std::setw(10) << mx.messages << std::setw(12) << local_bytes() << "\n";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const plan& p) { return os << p.to_string(); }

std::string plan::to_json() const {
  std::ostringstream os;
  const auto mx = max_rank(), tot = total();
  os << "{\n  \"nranks\": " << nranks << ",\n  \"predicted\": {\"max_rank_bytes\": " << mx.bytes
     << ", \"max_rank_messages\": " << mx.messages << ", \"total_bytes\": " << tot.bytes
     << ", \"total_messages\": " << tot.messages << ", \"copy_bytes\": " << copy_bytes()
     << ", \"max_rank_local_bytes\": " << local_bytes()
     << "},\n  \"device\": \"" << device_name(device) << "\",\n  \"result\": " << result << ",\n  \"steps\": [";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    os << (i ? "," : "") << "\n    {\"id\": " << i + 1 << ", \"kind\": \"" << name(s.kind) << "\", \"node\": " << s.node
       << ", \"text\": \"" << json_escape(s.text) << "\"";
    if (s.input >= 0) os << ", \"input\": " << s.input;
    os << ", \"device\": \"" << device_name(s.on) << "\"";
    if (s.copy_bytes) os << ", \"copy_bytes\": " << s.copy_bytes;
    os << ", \"output\": " << s.output;
    if (!s.bindings.empty()) {
      os << ", \"inputs\": [";
      for (std::size_t b = 0; b < s.bindings.size(); ++b) os << (b ? ", " : "") << s.bindings[b].second;
      os << "]";
    }
 if (s.product) os << ", \"algorithm\": \"" << name(s.product->alg) << "\", \"extra_memory_bytes\": " << s.memory;
    if (s.from) os << ", \"from\": " << json_layout(*s.from);
    if (s.to) os << ", \"to\": " << json_layout(*s.to);
    os << ", \"max_rank_bytes\": " << s.traffic.max_rank.bytes << ", \"max_rank_messages\": " << s.traffic.max_rank.messages
       << ", \"max_rank_local_bytes\": " << s.local_bytes
       << ", \"total_bytes\": " << s.traffic.total.bytes << ", \"total_messages\": " << s.traffic.total.messages;
    if (s.bound) os << ", \"bound\": true";
    if (!s.traffic.per_rank.empty()) {
      os << ", \"per_rank\": [";
      for (std::size_t r = 0; r < s.traffic.per_rank.size(); ++r)
        os << (r ? ", " : "") << "[" << s.traffic.per_rank[r].bytes << ", " << s.traffic.per_rank[r].messages << "]";
      os << "]";
    }
    os << "}";
  }
  os << "\n  ]\n}\n";
  return os.str();
}

std::string plan::to_dot() const {
  std::ostringstream os;
  os << "digraph ember_plan {\n  rankdir=LR;\n  node [fontname=\"monospace\"];\n";
  std::vector<bool> produced(values.size(), false);
  for (const auto& s : steps)
    if (s.output >= 0) produced[std::size_t(s.output)] = true;
  for (std::size_t v = 0; v < values.size(); ++v)
    os << "  v" << v << " [shape=box, label=\"v" << v << "\\n" << layout_text(values[v]) << "\""
       << (produced[v] ? "" : ", style=filled, fillcolor=lightgrey") << (int(v) == result ? ", peripheries=2" : "")
       << "];\n";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    os << "  s" << i + 1 << " [shape=ellipse, label=\"" << i + 1 << " " << name(s.kind) << "\\n" << json_escape(s.text);
    if (s.traffic.max_rank.bytes) os << "\\n" << (s.bound ? "<= " : "") << human_bytes(s.traffic.max_rank.bytes) << "/rank";
    os << "\"];\n";
    if (s.input >= 0) os << "  v" << s.input << " -> s" << i + 1 << ";\n";
    for (auto [n, v] : s.bindings) os << "  v" << v << " -> s" << i + 1 << ";\n";
    if (s.output >= 0 && s.output != s.input) os << "  s" << i + 1 << " -> v" << s.output << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace ember::planner
