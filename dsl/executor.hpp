// The executor: runs a plan's steps in order on this rank (exchange-engine
// moves, fused kernels built from the expression tree, collectives, matrix
// products), each under the local-failure policy, and records what each step
// predicted and measured.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "../runtime/failure.hpp"
#include "../runtime/matmul.hpp"
#include "plan_cache.hpp"

namespace ember {

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

// EMBER_CHECK_TRAFFIC=1 (the same on every rank): after every evaluation, each
// rank's measured bytes and messages of every step must be the plan's prediction
// for that rank; otherwise ember::error on every rank naming each rank's first
// differing step. One allgather of five int64 per evaluation (counted in sent()
// after the plan's steps, like EMBER_CHECK_PLANS's allreduce before them).
inline void check_traffic(const communicator& c, const std::vector<step_trace>& t) {
  std::array<std::int64_t, 5> mine{-1, 0, 0, 0, 0};
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i].measured != t[i].predicted) {
      mine = {std::int64_t(i), t[i].measured.bytes, t[i].measured.messages, t[i].predicted.bytes, t[i].predicted.messages};
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
           std::to_string(a[3]) + " B in " + std::to_string(a[4]);
  }
  if (!msg.empty()) throw error("ember: EMBER_CHECK_TRAFFIC: measured traffic differs from the plan: " + msg);
}

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
    sp.ndim = 1;
    sp.ext[0] = 1;
    return sp;
  }
  sp.ndim = int(gs.size());
  const int k = l.split() ? *l.split() : -1;
  for (int d = 0; d < sp.ndim; ++d) sp.ext[std::size_t(d)] = d == k ? l.extent(rank) : gs[std::size_t(d)];
  return sp;
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

  // `dest_view`: `dest` is the base storage of a view and the result goes
  // through the view's offset and strides (setitem).
  std::shared_ptr<void> run(std::shared_ptr<void> dest, const view_geometry* dest_view = nullptr) {
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
          case planner::step_kind::transpose: run_op(s); break;
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
      trace.push_back({s.kind, predicted, c_.sent() - before});
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
        const auto seg = segment_into(*dest_view_, c_.rank(),
                                      row_major_strides(p.values[std::size_t(p.result)].lshape(c_.rank())));
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

 private:
  const E& e_;
  cached_plan& cp_;
  const communicator& c_;
  std::vector<value_slot>& vals_;
  std::vector<kernel::binding>& bind_;
  std::shared_ptr<void> dest_;
  std::vector<std::shared_ptr<void>> last_parts_;
  std::vector<const view_geometry*> views_;  // per IR node: a view leaf's selection
  const view_geometry* dest_view_ = nullptr;  // run(dest, view): the result is stored through it
  // Halo moves begun and not yet waited for: the kernel reading them computes
  // the rows that need no ghost row while they travel (run_region_kernel).
  std::vector<exchange_in_flight> in_flight_;

  void finish_halos() {
    for (auto& f : in_flight_) f.finish();
    in_flight_.clear();
  }

  // The selection to read value v through at node `node`: a view's own data (not a
  // moved copy, which is a contiguous block of its layout).
  const view_geometry* view_at(int node, int v) const {
    const auto* g = views_[std::size_t(node)];
    return g && cp_.p.leaf_value[std::size_t(node)] == v ? g : nullptr;
  }

  std::int64_t node_elem(int node) const { return cp_.g.nodes[std::size_t(node)].elem; }

  // Leaves read in place: their storage, non-owning (e_ holds the handles); a
  // view's value is its base array's block, read through the view's geometry.
  void bind_leaves() {
    views_.assign(cp_.g.nodes.size(), nullptr);
    expr::for_each_leaf(e_, 0, [&](const auto& l, int id) {
      if (selection_key(l)) views_[std::size_t(id)] = l.view();
      auto& v = vals_[std::size_t(cp_.p.leaf_value[std::size_t(id)])];
      if (!v.ptr) {
        v.ptr = l.a.lstorage();
        v.dev = l.a.device();
        v.hold = std::shared_ptr<void>(std::shared_ptr<typename std::remove_cvref_t<decltype(l)>::value_type[]>(), v.ptr);
      }
    });
  }

  // Storage for value v; the result goes straight into the destination when safe.
  // Into a view's strides only a fused elementwise kernel writes (`strided`);
  // other steps write a block and run() stores it through the view.
  value_slot& output(int v, std::int64_t bytes, bool may_use_dest, bool strided = false) {
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

  // The rows a leaf's kernel lacks, into its ghost buffer; the rest stays where
  // it is (the kernel reads it there: cp_.halos[output]).
  void run_halo(std::size_t i, const planner::step& s) {
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

  void prepare_bindings(const planner::step& s) {
    bind_.resize(cp_.g.nodes.size());
    for (auto [node, v] : s.bindings) {
      const bool halo = cp_.halos[std::size_t(v)].have != nullptr;
      bind_[std::size_t(node)] = {vals_[std::size_t(v)].ptr, &cp_.p.values[std::size_t(v)], view_at(node, v),
                                  halo ? &cp_.halos[std::size_t(v)] : nullptr};
    }
  }

  // Writing the result in place is safe when every input that shares the
  // destination's storage is read at the position being written.
  // The storage a binding reads (a halo'd value reads its leaf's block too).
  const void* read_storage(int v) const {
    const auto& h = cp_.halos[std::size_t(v)];
    return h.have ? h.own : vals_[std::size_t(v)].ptr;
  }
  bool dest_safe(const planner::step& s, bool is_reduction) const {
    if (!dest_) return true;
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

  void run_kernel(const planner::step& s) {
    // only a region kernel overlaps halos with its interior rows
    const bool region = cp_.g.nodes[std::size_t(s.node)].kind != planner::node_kind::reduce &&
                        (s.node != 0 || expr::kind_of<E> == expr::node_class::elementwise);
    if (!region || s.on != device_kind::cpu) finish_halos();
    prepare_bindings(s);
    const kernel::context ctx{&bind_, c_.rank()};
    if (cp_.g.nodes[std::size_t(s.node)].kind == planner::node_kind::reduce) {
      expr::visit_node<expr::is_reduction_node>(e_, 0, s.node, [&](const auto& r) { run_reduction_kernel(r, s, ctx); });
      return;
    }
    if (s.node != 0) {  // an elementwise operand of a matmul or transpose
      expr::visit_step_operand(e_, 0, s.node, [&](const auto& x) { run_region_kernel(x, s, ctx); });
      return;
    }
    if constexpr (expr::kind_of<E> == expr::node_class::tuple) {
      run_tuple_kernel(s, ctx);
    } else if constexpr (expr::kind_of<E> == expr::node_class::elementwise) {
      run_region_kernel(e_, s, ctx);
    } else {
      // the planner gives a lone leaf no kernel of its own to run (copyto and
      // eval(array) move or return arrays without a plan)
      throw error(std::string("ember: internal error: a fused kernel step '") + s.text + "' over a lone leaf");
    }
  }

  template <class X>
  void run_region_kernel(const X& x, const planner::step& s, const kernel::context& ctx) {
    using T = typename X::value_type;
    constexpr int MR = X::ndim;
    const auto sp = space_of<MR>(*s.from, c_.rank());
    auto& out = output(s.output, sp.count() * std::int64_t(sizeof(T)), dest_safe(s, false), s.on == device_kind::cpu);
    auto ev = kernel::make_eval<MR>(x, s.node, ctx, sp);
    if (s.on == device_kind::gpu) {
      if constexpr (device_kernels_v<Code>) device_ops<Code>::template elementwise<MR>(ev, static_cast<T*>(out.ptr), sp);
      else throw_no_device_kernels(s);
      return;
    }
    std::array<std::int64_t, kernel::space<MR>::cap> ostr{};
    const bool strided = dest_view_ && out.ptr == dest_.get();  // setitem: straight into the view's elements
    if (strided) dest_view_->strides(c_.rank(), ostr.data());
    auto rows = [&](std::int64_t r0, std::int64_t r1) {
      if (strided)
        kernel::run_elementwise_strided<MR>(ev, static_cast<T*>(out.ptr) + dest_view_->offset(c_.rank()), ostr.data(),
                                            sp, r0, r1);
      else
        kernel::run_elementwise<MR>(ev, static_cast<T*>(out.ptr), sp, r0, r1);
    };
    if (in_flight_.empty()) return rows(0, -1);
    // Halos in flight: first the rows that read no ghost row (the interior),
    // then wait, then the boundary rows. Along iteration axis 0 only, where a
    // range of its indices is a range of outer rows.
    std::int64_t top = 0, bottom = 0;
    bool ok = s.from->split() == 0 && sp.ndim >= 2 && sp.count() > 0;
    for (auto [node, v] : s.bindings) {
      const auto& h = cp_.halos[std::size_t(v)];
      if (!h.have) continue;
      ok = ok && h.axis == 0 && h.have->ndim() == MR;
      top = std::max(top, h.top);
      bottom = std::max(bottom, h.bottom);
    }
    const std::int64_t e0 = ok ? sp.ext[0] : 0, per = ok ? sp.count() / (e0 * sp.ext[std::size_t(sp.ndim - 1)]) : 0;
    if (!ok || e0 - top - bottom <= 0) {
      finish_halos();
      return rows(0, -1);
    }
    rows(top * per, (e0 - bottom) * per);
    finish_halos();
    rows(0, top * per);
    rows((e0 - bottom) * per, e0 * per);
  }

  [[noreturn]] void throw_no_device_kernels(const planner::step& s) const {
    throw error("ember: internal: plan step '" + s.text + "' runs on the GPU but this code was not compiled by nvcc");
  }

  // matmul by the plan's algorithm (runtime/matmul.hpp), or a local transpose.
  void run_op(const planner::step& s) {
    expr::visit_node<expr::is_step_op_node>(e_, 0, s.node, [&](const auto& x) {
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
    constexpr int MR = E::ndim;
    const auto sp = space_of<MR>(*s.from, c_.rank());
    auto& slot = vals_[std::size_t(s.output)];
    constexpr auto ids = expr::child_offsets<E>();  // the root is node 0
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
    constexpr int MR = A::ndim;
    const auto sp = space_of<MR>(*s.from, c_.rank());
    std::array<bool, kernel::space<MR>::cap> red{};
    for (int a : r.axes) red[std::size_t(a + (sp.ndim - int(cp_.g.nodes[std::size_t(s.node + 1)].shape.size())))] = true;
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
      for (int d = 0; d < sp.ndim && d < int(g.size()); ++d) gstr[std::size_t(d)] = g[std::size_t(d)];
      kernel::run_arg_reduction<Op, MR>(ev, static_cast<V*>(slot.aux), idx, sp, red, off, gstr, r.axes.size() > 1 || sp.ndim == 1);
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
    expr::visit_node<expr::is_reduction_node>(e_, 0, s.node, [&](const auto& r) {
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
        c_.allreduce(static_cast<T*>(slot.ptr), n, Op::mpi);
      }
    });
  }
};


}  // namespace detail

inline const std::vector<step_trace>& last_trace() { return detail::trace_store(); }

}  // namespace ember
