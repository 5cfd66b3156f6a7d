// The expression-independent part of running a plan (dsl/executor.hpp's
// executor_base), compiled once into libember instead of once per expression
// type in every program.
#include "executor.hpp"

namespace ember {

namespace detail {

namespace {
std::vector<step_trace>& trace_store() {
  static std::vector<step_trace> t;
  return t;
}
}  // namespace

void check_traffic(const communicator& c, const std::vector<step_trace>& t) {
  // (a bound: data-dependent steps may send less than predicted, never more)
  auto differs = [](const step_trace& x) {
    return x.bound ? x.measured.bytes > x.predicted.bytes || x.measured.messages > x.predicted.messages
                   : x.measured != x.predicted;
  };
  std::array<std::int64_t, 6> mine{-1, 0, 0, 0, 0, 0};
  for (std::size_t i = 0; i < t.size(); ++i)
    if (differs(t[i])) {
      mine = {std::int64_t(i), t[i].measured.bytes, t[i].measured.messages, t[i].predicted.bytes, t[i].predicted.messages,
              std::int64_t(t[i].bound)};
      break;
    }
  const auto all = c.allgather(mine);
  std::string msg;
  for (int r = 0; r < c.size(); ++r) {
    const auto& a = all[std::size_t(r)];
    if (a[0] < 0) continue;
    msg += std::string(msg.empty() ? "" : "; ") + "rank " + std::to_string(r) + ": step " + std::to_string(a[0] + 1) +
           " of " + std::to_string(t.size()) + " (" + planner::name(t[std::size_t(a[0])].kind) + ") sent " +
           std::to_string(a[1]) + " B in " + std::to_string(a[2]) + " messages, the plan predicted " +
           (a[5] ? "at most " : "") +
           std::to_string(a[3]) + " B in " + std::to_string(a[4]);
  }
  if (!msg.empty()) throw error("ember: EMBER_CHECK_TRAFFIC: measured traffic differs from the plan: " + msg);
}

std::shared_ptr<void> alloc_bytes(std::int64_t n) {
  try {
    return allocate<unsigned char>(std::max<std::int64_t>(n, 1));
  } catch (const std::bad_alloc&) {
    // inside a plan step: the failure policy reports it with the rank and the step
    throw memory_error("ember: out of memory: cannot allocate " + bytes_str(n) + " for a value of the plan");
  }
}

std::shared_ptr<void> executor_base::run(std::shared_ptr<void> dest, const view_geometry* dest_view) {
  const auto& p = cp_.p;
  vals_.clear();
  vals_.resize(p.values.size());
  bind_leaves();
  dest_ = std::move(dest);
  dest_view_ = dest_view;
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
      // halos still in flight complete before anything but the kernel reading them
      if (s.kind != planner::step_kind::halo && s.kind != planner::step_kind::fused_kernel) finish_halos();
      switch (s.kind) {
        case planner::step_kind::fused_kernel: run_kernel(s); break;
        case planner::step_kind::allreduce:
        case planner::step_kind::gather_index: run_combine(s); break;
        case planner::step_kind::matmul:
        case planner::step_kind::transpose:
        case planner::step_kind::scan:
        case planner::step_kind::sample_sort:
        case planner::step_kind::local_sort:
        case planner::step_kind::local_select:
        case planner::step_kind::local_fft:
        case planner::step_kind::distributed_select:
        case planner::step_kind::distributed_partition:
        case planner::step_kind::distributed_topk: run_op(s); break;
        case planner::step_kind::to_host:
        case planner::step_kind::to_device: run_copy(s); break;
        case planner::step_kind::realign:
        case planner::step_kind::resplit:
        case planner::step_kind::allgather:
        case planner::step_kind::partition:
        case planner::step_kind::reverse: run_move(i, s); break;
        case planner::step_kind::halo: run_halo(i, s); break;
      }
    });
    const traffic predicted = s.traffic.per_rank.empty() ? traffic{} : s.traffic.per_rank[std::size_t(c_.rank())];
    trace.push_back({s.kind, predicted, c_.sent() - before, s.bound});
  }
  if (!in_flight_.empty())
    failure::guarded_step(c_, ordinal, {"plan", int(p.steps.size()), int(p.steps.size()), "halo", "completion"},
                          [&] { finish_halos(); });
  // (predictions per rank exist up to 4096 ranks: plan_cached)
  if (env_flag("EMBER_CHECK_TRAFFIC") && c_.size() <= 4096) check_traffic(c_, trace);
  auto& r = vals_[std::size_t(p.result)];
  if (dest_ && r.ptr != dest_.get()) {
    // the result landed elsewhere (aliasing hazard, or no step wrote it): copy
    const std::int64_t elem = node_elem(p.value_node[std::size_t(p.result)]);
    if (dest_view_) {  // through the view (host memory: views of GPU arrays are refused)
      const auto seg = segment_into(*dest_view_, c_.rank(), row_major_strides(p.values[std::size_t(p.result)].lshape(c_.rank())));
      copy_segment(seg, static_cast<const char*>(r.ptr), static_cast<char*>(dest_.get()), std::size_t(elem));
      vals_.clear();
      return dest_;
    }
    const auto n = p.values[std::size_t(p.result)].local_size(c_.rank()) * elem;
    copy_between(dest_.get(), p.device, r.ptr, r.dev, n);
    vals_.clear();
    return dest_;
  }
  auto result = r.hold;
  last_parts_ = r.parts;
  vals_.clear();  // release temporaries now
  return result;
}

void executor_base::finish_halos() {
  for (auto& f : in_flight_) f.finish();
  in_flight_.clear();
}

void executor_base::bind_leaf(int id, void* storage, device_kind dev, const view_geometry* view) {
  if (view) views_[std::size_t(id)] = view;
  auto& v = vals_[std::size_t(cp_.p.leaf_value[std::size_t(id)])];
  if (v.ptr) return;
  v.ptr = storage;
  v.dev = dev;
  v.hold = std::shared_ptr<void>(std::shared_ptr<void>(), storage);  // non-owning
}

value_slot& executor_base::output(int v, std::int64_t bytes, bool may_use_dest, bool strided) {
  auto& slot = vals_[std::size_t(v)];
  slot.dev = cp_.p.value_device.empty() ? device_kind::cpu : cp_.p.value_device[std::size_t(v)];
  if (v == cp_.p.result && dest_ && may_use_dest && (!dest_view_ || strided)) {
    slot.hold = dest_;
    slot.ptr = dest_.get();
  } else {
    slot.hold = slot.dev == device_kind::cpu ? alloc_bytes(bytes) : allocate_on(slot.dev, bytes);
    slot.ptr = slot.hold.get();
  }
  return slot;
}

// GPU plans: a value's block over the host-device link.
void executor_base::run_copy(const planner::step& s) {
  const std::int64_t bytes = s.to->local_size(c_.rank()) * node_elem(s.node);
  const auto& in = vals_[std::size_t(s.input)];
  auto& out = output(s.output, bytes, in.ptr != dest_.get());
  copy_between(out.ptr, out.dev, in.ptr, in.dev, bytes);
}

void executor_base::run_move(std::size_t i, const planner::step& s) {
  const std::int64_t bytes = s.to->local_size(c_.rank()) * node_elem(s.node);
  const void* src = vals_[std::size_t(s.input)].ptr;
  auto& out = output(s.output, bytes, true);
  cp_.moves[i]->run(c_, src, out.ptr, s.on);
}

// The rows a leaf's kernel lacks, into its ghost buffer; the rest stays where
// it is (the kernel reads it there: cp_.halos[output]).
void executor_base::run_halo(std::size_t i, const planner::step& s) {
  const ghost_rows& g = *cp_.ghosts[i];
  const int r = c_.rank();
  const auto rows = g.rows(r);
  const std::int64_t elem = node_elem(s.node);
  // the ghost buffer: the same size at every run of this plan, allocated once
  auto& buf = cp_.ghost_blocks[i];
  if (!buf) buf = alloc_bytes(g.local_size(r) * elem);
  auto& out = vals_[std::size_t(s.output)];
  out.hold = buf;
  out.ptr = buf.get();
  out.dev = device_kind::cpu;
  const auto& in = vals_[std::size_t(s.input)];
  if (s.on == device_kind::cpu) in_flight_.push_back(cp_.moves[i]->begin(c_, in.ptr, out.ptr));
  else cp_.moves[i]->run(c_, in.ptr, out.ptr, s.on);
  auto& h = cp_.halos[std::size_t(s.output)];
  h.own = in.ptr;
  h.view = view_at(s.node, s.input);
  h.have = &cp_.p.values[std::size_t(s.input)];
  h.ghosts = out.ptr;
  h.top = rows.top;
  h.own_rows = rows.own;
  h.bottom = rows.bottom;
  h.own_lo = rows.own_lo;
  h.axis = g.axis();
}

void executor_base::prepare_bindings(const planner::step& s) {
  bind_.resize(cp_.g.nodes.size());
  for (auto [node, v] : s.bindings) {
    const bool halo = cp_.halos[std::size_t(v)].have != nullptr;
    bind_[std::size_t(node)] = {vals_[std::size_t(v)].ptr, &cp_.p.values[std::size_t(v)], view_at(node, v),
                                halo ? &cp_.halos[std::size_t(v)] : nullptr};
  }
}

bool executor_base::dest_safe(const planner::step& s, bool is_reduction) const {
  if (!dest_) return true;
  // The storage a binding reads (a halo'd value reads its leaf's block too).
  auto read_storage = [&](int v) -> const void* {
    const auto& h = cp_.halos[std::size_t(v)];
    return h.have ? h.own : vals_[std::size_t(v)].ptr;
  };
  if (dest_view_)  // through a view: nothing read may share its storage
    return std::none_of(s.bindings.begin(), s.bindings.end(), [&](auto b) { return read_storage(b.second) == dest_.get(); });
  for (auto [node, v] : s.bindings) {
    if (read_storage(v) != dest_.get()) continue;
    if (cp_.halos[std::size_t(v)].have) return false;
    if (is_reduction || view_at(node, v)) return false;  // (a view reads other positions)
    if (!(cp_.p.values[std::size_t(v)] == *s.from) || cp_.g.nodes[std::size_t(node)].shape != cp_.g.nodes[std::size_t(s.node)].shape)
      return false;
  }
  return true;
}

// Along iteration axis 0 only, where a range of its indices is a range of outer rows.
std::optional<executor_base::overlap_ranges> executor_base::halo_overlap(const planner::step& s, int ndim,
                                                                         const std::int64_t* ext, int mr) const {
  std::int64_t count = 1;
  for (int d = 0; d < ndim; ++d) count *= ext[d];
  std::int64_t top = 0, bottom = 0;
  bool ok = s.from->split() == 0 && ndim >= 2 && count > 0;
  for (auto [node, v] : s.bindings) {
    const auto& h = cp_.halos[std::size_t(v)];
    if (!h.have) continue;
    ok = ok && h.axis == 0 && h.have->ndim() == mr;
    top = std::max(top, h.top);
    bottom = std::max(bottom, h.bottom);
  }
  if (!ok) return std::nullopt;
  const std::int64_t e0 = ext[0], per = count / (e0 * ext[ndim - 1]);
  if (e0 - top - bottom <= 0) return std::nullopt;
  return overlap_ranges{top * per, (e0 - bottom) * per, e0 * per};
}

void executor_base::combine_arg_reduction(value_slot& slot, std::int64_t n, std::size_t vsize,
                                          bool (*better)(const void*, const void*)) const {
  // allgather (value, index) pairs, keep the best (first index on ties)
  const std::int64_t unit = std::int64_t(vsize + 8);
  std::vector<unsigned char> mine(std::size_t(std::max<std::int64_t>(n, 1) * unit));
  for (std::int64_t i = 0; i < n; ++i) {
    std::memcpy(&mine[std::size_t(i * unit)], static_cast<const char*>(slot.aux) + i * std::int64_t(vsize), vsize);
    std::memcpy(&mine[std::size_t(i * unit + std::int64_t(vsize))], static_cast<std::int64_t*>(slot.ptr) + i, 8);
  }
  const int P = c_.size();
  std::vector<unsigned char> all(std::size_t(std::max<std::int64_t>(n, 1) * unit * P));
  std::vector<std::int64_t> counts(static_cast<std::size_t>(P), n), displs(static_cast<std::size_t>(P));
  for (int q = 0; q < P; ++q) displs[std::size_t(q)] = q * n;
  c_.allgatherv_bytes(mine.data(), n, all.data(), counts, displs, unit);
  auto* idx = static_cast<std::int64_t*>(slot.ptr);
  auto* best = static_cast<char*>(slot.aux);
  for (std::int64_t i = 0; i < n; ++i)
    for (int q = 0; q < P; ++q) {
      const unsigned char* v = &all[std::size_t((q * n + i) * unit)];
      std::int64_t k;
      std::memcpy(&k, v + vsize, 8);
      if (k < 0) continue;
      char* b = best + i * std::int64_t(vsize);
      if (idx[i] < 0 || better(v, b) || (!better(b, v) && k < idx[i])) {
        std::memcpy(b, v, vsize);
        idx[i] = k;
      }
    }
}

void executor_base::throw_no_device_kernels(const planner::step& s) const {
  throw error("ember: internal: plan step '" + s.text + "' runs on the GPU but this code was not compiled by nvcc");
}

void executor_base::throw_lone_leaf_kernel(const planner::step& s) const {
  throw error(std::string("ember: internal error: a fused kernel step '") + s.text + "' over a lone leaf");
}

}  // namespace detail

const std::vector<step_trace>& last_trace() { return detail::trace_store(); }

}  // namespace ember
