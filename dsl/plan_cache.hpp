// The plan cache: per expression type, keyed by every fact the plan depends on
// (the fingerprint of dsl/lower.hpp, the rank count, the cost model), with the
// scratch each execution of a plan reuses, so that a loop evaluating the same
// expression plans once and allocates no bookkeeping per iteration.
#pragma once

#include <bit>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "../planner/plan.hpp"
#include "kernel.hpp"
#include "lower.hpp"

namespace ember::detail {

inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

// The storage of one value of a plan during its execution.
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
  // per IR node: the selection of a view leaf (null for arrays and whole views)
  std::vector<std::shared_ptr<const view_geometry>> views;
  // halo steps: the ghost rows of each (by step), and per value what the kernel
  // reading it needs (scratch, reused)
  std::vector<std::shared_ptr<const ghost_rows>> ghosts;
  std::vector<std::shared_ptr<void>> ghost_blocks;
  std::vector<kernel::halo_source> halos;
};

// A cache hit is confirmed by comparing the layouts themselves (cheap: shared
// extents compare by pointer), so a hash collision can never run a wrong plan.
template <class E>
bool same_inputs(const E& e, const cached_plan& cp, const std::optional<layout>& target) {
  if (target.has_value() != cp.target.has_value() || (target && !(*target == *cp.target))) return false;
  bool same = true;
  expr::for_each_leaf(e, 0, [&](const auto& l, int id) {
    const auto& n = cp.g.nodes[std::size_t(id)];
    same = same && n.lay && *n.lay == l.lay() && l.a.device() == cp.g.device;
    const auto& v = cp.views[std::size_t(id)];
    same = same && (selection_key(l) == 0) == !v;
    if constexpr (expr::is_strided_leaf<std::remove_cvref_t<decltype(l)>>::value)
      if (same && v) same = v->spec() == l.view()->spec() && v->base() == l.view()->base();
  });
  return same;
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
  f.add(std::bit_cast<std::uint64_t>(planner::cost_model().gamma));
  f.add(std::bit_cast<std::uint64_t>(planner::cost_model().mu));
  f.add(std::bit_cast<std::uint64_t>(planner::cost_model().kappa));
  f.add(std::bit_cast<std::uint64_t>(planner::cost_model().memory_limit));
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
  cp->views.resize(cp->g.nodes.size());
  expr::for_each_leaf(e, 0, [&](const auto& l, int id) {
    if (selection_key(l)) cp->views[std::size_t(id)] = l.view_handle();
  });
  cp->moves.resize(cp->p.steps.size());
  cp->ghosts.resize(cp->p.steps.size());
  cp->ghost_blocks.resize(cp->p.steps.size());
  cp->halos.resize(cp->p.values.size());
  for (std::size_t i = 0; i < cp->p.steps.size(); ++i) {
    const auto& s = cp->p.steps[i];
    if (!planner::is_move(s.kind)) continue;
    const std::size_t elem = std::size_t(cp->g.nodes[std::size_t(s.node)].elem);
    // a move out of a view reads the view's elements where they lie in the base
    // array's blocks (the same boxes as its layout: the same bytes move)
    const int src_node = cp->p.value_node[std::size_t(s.input)];
    const auto& v = cp->views[std::size_t(src_node)];
    const bool from_view = v && cp->p.leaf_value[std::size_t(src_node)] == s.input;
    if (s.kind == planner::step_kind::halo) cp->ghosts[i] = std::make_shared<const ghost_rows>(*s.from, *s.to);
    const distribution& to = s.kind == planner::step_kind::halo ? static_cast<const distribution&>(*cp->ghosts[i]) : *s.to;
    if (from_view) cp->moves[i] = std::make_unique<exchange>(view_distribution(v), to, c.rank(), elem);
    else cp->moves[i] = std::make_unique<exchange>(*s.from, to, c.rank(), elem);
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

}  // namespace ember::detail
