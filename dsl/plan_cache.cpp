// The expression-independent part of the plan cache (dsl/plan_cache.hpp),
// compiled once into libember.
#include "plan_cache.hpp"

namespace ember::detail {

void add_run_facts(fingerprint& f, const communicator& c, const std::optional<layout>& target) {
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
}

void prepare_plan(cached_plan& cp, const communicator& c, const std::optional<layout>& target) {
  cp.p = planner::make_plan(cp.g, target, /*per_rank=*/c.size() <= 4096);
  cp.target = target;
  cp.moves.resize(cp.p.steps.size());
  cp.ghosts.resize(cp.p.steps.size());
  cp.ghost_blocks.resize(cp.p.steps.size());
  cp.halos.resize(cp.p.values.size());
  for (std::size_t i = 0; i < cp.p.steps.size(); ++i) {
    const auto& s = cp.p.steps[i];
    if (!planner::is_move(s.kind)) continue;
    const std::size_t elem = std::size_t(cp.g.nodes[std::size_t(s.node)].elem);
    // a move out of a view reads the view's elements where they lie in the base
    // array's blocks (the same boxes as its layout: the same bytes move)
    const int src_node = cp.p.value_node[std::size_t(s.input)];
    const auto& v = cp.views[std::size_t(src_node)];
    const bool from_view = v && cp.p.leaf_value[std::size_t(src_node)] == s.input;
    if (s.kind == planner::step_kind::halo) cp.ghosts[i] = std::make_shared<const ghost_rows>(*s.from, *s.to);
    const distribution& to = s.kind == planner::step_kind::halo ? static_cast<const distribution&>(*cp.ghosts[i]) : *s.to;
    if (from_view) cp.moves[i] = std::make_unique<exchange>(view_distribution(v), to, c.rank(), elem);
    else cp.moves[i] = std::make_unique<exchange>(*s.from, to, c.rank(), elem);
  }
}

void check_same_plan(const planner::plan& p, const communicator& c) {
  const std::uint64_t h = p.hash();
  const std::string d = divergence(c, h, [&] {
    std::ostringstream os;
    os << "plan " << std::hex << h << std::dec << " (" << p.steps.size() << (p.steps.size() == 1 ? " step)" : " steps)");
    return os.str();
  });
  if (!d.empty()) throw error("ember: ranks planned differently (replicated metadata diverged): " + d);
}

void on_planned(const planner::plan& p, const communicator& c) {
  if (env_flag("EMBER_CHECK_PLANS")) check_same_plan(p, c);
  if (env_flag("EMBER_EXPLAIN") && c.rank() == 0) std::cerr << p;
}

}  // namespace ember::detail
