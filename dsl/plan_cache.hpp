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

// The facts besides the expression that a plan depends on: the communicator's
// size and this rank, the exchange engine's limits, the cost model, the target.
void add_run_facts(fingerprint& f, const communicator& c, const std::optional<layout>& target);
// Plans the lowered graph `cp.g` (its views set) for `target` and builds this
// rank's schedule of every move step and the scratch the executions reuse.
void prepare_plan(cached_plan& cp, const communicator& c, const std::optional<layout>& target);

template <class Code, class E>
std::shared_ptr<cached_plan> plan_cached(const E& e, const communicator& c, const std::optional<layout>& target) {
  fingerprint f;
  fingerprint_of(e, f);
  add_run_facts(f, c, target);
  static std::unordered_map<std::pair<std::uint64_t, std::uint64_t>, std::shared_ptr<cached_plan>, fingerprint_hash>
      cache;
  const auto key = std::make_pair(f.h1, f.h2);
  if (auto it = cache.find(key); it != cache.end() && same_inputs(e, *it->second, target)) return it->second;
  auto cp = std::make_shared<cached_plan>();
  lower_state st;
  st.scalar_values = false;
  lower(e, st);
  st.g.nranks = c.size();
  st.g.device_kernels = device_kernels_v<Code> && !expr::has_op_state_v<E>;
  cp->g = std::move(st.g);
  cp->views.resize(cp->g.nodes.size());
  expr::for_each_leaf(e, 0, [&](const auto& l, int id) {
    if (selection_key(l)) cp->views[std::size_t(id)] = l.view_handle();
  });
  prepare_plan(*cp, c, target);
  if (cache.size() > 256) cache.clear();  // bound memory for programs that plan endlessly many shapes
  cache[key] = cp;
  return cp;
}

// EMBER_CHECK_PLANS=1: every rank must have planned the same (one allreduce; on
// a mismatch one allgather more names the ranks, the same message everywhere).
void check_same_plan(const planner::plan& p, const communicator& c);
// What every evaluation does with its plan on request: EMBER_CHECK_PLANS,
// EMBER_EXPLAIN (printed by rank 0).
void on_planned(const planner::plan& p, const communicator& c);

// The plan an evaluation runs: cached, checked across ranks and printed on request.
template <class Code, class E>
std::shared_ptr<cached_plan> planned(const E& e, const communicator& c, const std::optional<layout>& target) {
  auto cp = plan_cached<Code>(e, c, target);
  on_planned(cp->p, c);
  return cp;
}

}  // namespace ember::detail
