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
#include "../scan/scan_kernel.hpp"
#include "../sorting/sample_sort.hpp"
#include "plan_cache.hpp"

namespace ember {

// What the last evaluation on this process did, step by step: the plan's
// prediction for this rank and what the counters measured.
struct step_trace {
  planner::step_kind kind;
  traffic predicted;
  traffic measured;
  bool bound = false;  // `predicted` is an upper bound (planner::step::bound: a data-dependent step)
};
const std::vector<step_trace>& last_trace();

namespace detail {

// EMBER_CHECK_TRAFFIC=1 (the same on every rank): after every evaluation, each
// rank's measured bytes and messages of every step must be the plan's prediction
// for that rank; otherwise ember::error on every rank naming each rank's first
// differing step. One allgather of six int64 per evaluation (counted in sent()
// after the plan's steps, like EMBER_CHECK_PLANS's allreduce before them).
void check_traffic(const communicator& c, const std::vector<step_trace>& t);

// Storage for a value of a plan (memory_error naming the size when it fails).
std::shared_ptr<void> alloc_bytes(std::int64_t n);

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

// The part of running a plan that does not depend on the expression's type
// (dsl/executor.cpp, compiled once into libember): the step loop under the
// failure policy, the traces, storage of values, moves, halos and copies.
// executor<E, Code> adds what does: binding the leaves and the kernels, matrix
// products and reductions built from the tree. Keeping this out of the template
// keeps it out of every program's compile, once per expression type.
class executor_base {
 public:
  executor_base(cached_plan& cp, const communicator& c) : cp_(cp), c_(c), vals_(cp.vals), bind_(cp.bind) {}
  executor_base(const executor_base&) = delete;
  executor_base& operator=(const executor_base&) = delete;

  // Runs the plan. `dest`: storage of an existing array to write the result into
  // (its layout is the plan's target). Returns the result's storage.
  // `dest_view`: `dest` is the base storage of a view and the result goes
  // through the view's offset and strides (setitem).
  std::shared_ptr<void> run(std::shared_ptr<void> dest, const view_geometry* dest_view = nullptr);
  // eval(e1, e2, ...): the storage of each result of the last run.
  const std::vector<std::shared_ptr<void>>& result_parts() const { return last_parts_; }

 protected:
  ~executor_base() = default;
  // what the expression's type decides
  virtual void bind_leaves() = 0;
  virtual void run_kernel(const planner::step& s) = 0;
  virtual void run_op(const planner::step& s) = 0;
  virtual void run_combine(const planner::step& s) = 0;

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

  void finish_halos();
  // The selection to read value v through at node `node`: a view's own data (not a
  // moved copy, which is a contiguous block of its layout).
  const view_geometry* view_at(int node, int v) const {
    const auto* g = views_[std::size_t(node)];
    return g && cp_.p.leaf_value[std::size_t(node)] == v ? g : nullptr;
  }
  std::int64_t node_elem(int node) const { return cp_.g.nodes[std::size_t(node)].elem; }
  // Leaf `id` read in place: its storage, non-owning (the expression holds the
  // handles); a view's value is its base array's block, read through `view`.
  void bind_leaf(int id, void* storage, device_kind dev, const view_geometry* view);
  // Storage for value v; the result goes straight into the destination when safe.
  // Into a view's strides only a fused elementwise kernel writes (`strided`);
  // other steps write a block and run() stores it through the view.
  value_slot& output(int v, std::int64_t bytes, bool may_use_dest, bool strided = false);
  // sort/argsort: the sample sort of a split vector, or each rank's lines along `axis`
  template <class V>
  void run_sort(const planner::step& s, int axis, const sort_options& o, const V* in, V* values, std::int64_t* index) {
    if (s.kind == planner::step_kind::sample_sort) sort_vector<V>(*s.from, c_, in, values, index, o);
    else sort_local<V>(s.from->lshape(c_.rank()), axis, in, values, index, o);
  }
  void run_copy(const planner::step& s);
  void run_move(std::size_t i, const planner::step& s);
  void run_halo(std::size_t i, const planner::step& s);
  void prepare_bindings(const planner::step& s);
  // Writing the result in place is safe when every input that shares the
  // destination's storage is read at the position being written.
  bool dest_safe(const planner::step& s, bool is_reduction) const;
  // A kernel step over `ndim` axes of local extents `ext` while halos are in
  // flight: the flat index ranges to compute before the wait (the interior) and
  // after it; none when the step reads no halo along iteration axis 0.
  struct overlap_ranges {
    std::int64_t interior0, interior1, end;
  };
  std::optional<overlap_ranges> halo_overlap(const planner::step& s, int ndim, const std::int64_t* ext, int mr) const;
  // argmin/argmax: each rank's (value, index) pairs of value size `vsize`,
  // allgathered; the best kept (the first index on ties).
  void combine_arg_reduction(value_slot& slot, std::int64_t n, std::size_t vsize,
                             bool (*better)(const void*, const void*)) const;
  [[noreturn]] void throw_no_device_kernels(const planner::step& s) const;
  [[noreturn]] void throw_lone_leaf_kernel(const planner::step& s) const;
};

template <class E, class Code = host_code>
class executor final : public executor_base {
 public:
  executor(const E& e, cached_plan& cp, const communicator& c) : executor_base(cp, c), e_(e) {}

 private:
  const E& e_;

  void bind_leaves() override {
    views_.assign(cp_.g.nodes.size(), nullptr);
    expr::for_each_leaf(e_, 0, [&](const auto& l, int id) {
      bind_leaf(id, l.a.lstorage(), l.a.device(), selection_key(l) ? l.view() : nullptr);
    });
  }

  void run_kernel(const planner::step& s) override {
    // only a region kernel overlaps halos with its interior rows
    const bool region = cp_.g.nodes[std::size_t(s.node)].kind != planner::node_kind::reduce &&
                        (s.node != 0 || expr::kind_of<E> == expr::node_class::elementwise);
    if (!region || s.on != device_kind::cpu) finish_halos();
    prepare_bindings(s);
    const kernel::context ctx{&bind_, c_.rank()};
    if (s.inline_scan >= 0) {  // a kernel that computes the scan it reads (planner: fuse_scan_consumers)
      finish_halos();
      if (s.node != 0) {
        expr::visit_step_operand(e_, 0, s.node, [&](const auto& x) { run_scanning_kernel(x, s, ctx); });
        return;
      }
      if constexpr (expr::kind_of<E> == expr::node_class::elementwise) run_scanning_kernel(e_, s, ctx);
      else throw_lone_leaf_kernel(s);
      return;
    }
    if (cp_.g.nodes[std::size_t(s.node)].kind == planner::node_kind::reduce) {
      expr::visit_node<expr::is_reduction_node>(e_, 0, s.node, [&](const auto& r) {
        if constexpr (requires { std::remove_cvref_t<decltype(r)>::binned; }) run_binned_kernel(r, s, ctx);
        else run_reduction_kernel(r, s, ctx);
      });
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
      throw_lone_leaf_kernel(s);
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
      if constexpr (device_kernels_v<Code> && !expr::has_op_state_v<X>) device_ops<Code>::template elementwise<MR>(ev, static_cast<T*>(out.ptr), sp);
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
    // then wait, then the boundary rows.
    const auto o = halo_overlap(s, sp.ndim, sp.ext.data(), MR);
    if (!o) {
      finish_halos();
      return rows(0, -1);
    }
    rows(o->interior0, o->interior1);
    finish_halos();
    rows(0, o->interior0);
    rows(o->interior1, o->end);
  }

  // matmul by the plan's algorithm (runtime/matmul.hpp), or a local transpose.
  void run_op(const planner::step& s) override {
    expr::visit_node<expr::is_step_op_node>(e_, 0, s.node, [&](const auto& x) {
      using T = typename std::remove_cvref_t<decltype(x)>::value_type;
      if constexpr (requires { x.scan_axis; }) {
        using A = std::remove_cvref_t<decltype(hana::at_c<0>(x.args))>;
        if constexpr (expr::kind_of<A> == expr::node_class::elementwise)
          if (s.bindings.empty() || s.bindings[0].first != s.node + 1)  // its operand's leaves: computed as read
            return run_fused_scan(hana::at_c<0>(x.args), s.node + 1, x.scan, x.scan_axis, s);
      }
      const int r = c_.rank();
      const void* in0 = vals_[std::size_t(s.bindings[0].second)].ptr;
      const void* in1 = s.bindings.size() > 1 ? vals_[std::size_t(s.bindings[1].second)].ptr : nullptr;
      const bool aliased = dest_ && (in0 == dest_.get() || in1 == dest_.get());
      auto& out = output(s.output, s.to->local_size(r) * std::int64_t(sizeof(T)), !aliased);
      if constexpr (requires { x.scan_axis; }) {  // cumsum and its kin (scan/scan_kernel.hpp), on the host
        run_scan<T>(x.scan, *s.to, x.scan_axis, c_, static_cast<const T*>(in0), static_cast<T*>(out.ptr));
        return;
      }
      if constexpr (requires { x.line_axis; }) {  // partition, median, quantile (sorting/), each line on the host
        using V = typename std::remove_cvref_t<decltype(x)>::operand_type;
        if constexpr (std::remove_cvref_t<decltype(x)>::ndim == 1 && requires { x.opts.ranks_placed(); })
          if (s.kind == planner::step_kind::distributed_partition || s.kind == planner::step_kind::distributed_topk)
            return x.run_vector(*s.from, c_, static_cast<const V*>(in0), static_cast<T*>(out.ptr));
        x.run_lines(s.from->lshape(r), static_cast<const typename std::remove_cvref_t<decltype(x)>::operand_type*>(in0),
                    static_cast<T*>(out.ptr));
        return;
      }
      if constexpr (requires { x.selects; }) {  // median, quantile over every axis (sorting/selection.hpp)
        using V = typename std::remove_cvref_t<decltype(x)>::operand_type;
        x.run_select(c_, s.from->split() && c_.size() > 1, static_cast<const V*>(in0), s.from->local_size(r),
                     static_cast<T*>(out.ptr));
        return;
      }
      if constexpr (requires { x.sort_axis; }) {  // sort and argsort (sorting/sample_sort.hpp), on the host
        using V = typename std::remove_cvref_t<decltype(x)>::operand_type;
        const V* in = static_cast<const V*>(in0);
        if constexpr (!std::remove_cvref_t<decltype(x)>::with_index) {
          run_sort<V>(s, x.sort_axis, x.opts, in, static_cast<V*>(out.ptr), nullptr);
        } else {  // the sorted values are scratch; the indices are the result
          const auto values = alloc_bytes(s.to->local_size(r) * std::int64_t(sizeof(V)));
          run_sort<V>(s, x.sort_axis, x.opts, in, static_cast<V*>(values.get()), static_cast<std::int64_t*>(out.ptr));
        }
        return;
      }
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

  // The kernel x over its rows, chunk by chunk, with the scan node s.inline_scan
  // made just before each chunk is read: the scan of the chunk's elements goes
  // into a small buffer that the scan's binding points into (its value has the
  // kernel's layout and shape, so element p of the block is read only while p
  // is in the chunk), and no block of the scan is ever written.
  template <class X>
  void run_scanning_kernel(const X& x, const planner::step& s, const kernel::context& ctx) {
    using T = typename X::value_type;
    constexpr int MR = X::ndim;
    expr::visit_node<expr::is_step_op_node>(e_, 0, s.inline_scan, [&](const auto& sc) {
      if constexpr (requires { sc.scan_axis; }) {
        using S = typename std::remove_cvref_t<decltype(sc)>::value_type;
        const int r = c_.rank();
        const auto sp = space_of<MR>(*s.from, r);
        auto& out = output(s.output, sp.count() * std::int64_t(sizeof(T)), dest_safe(s, false), true);
        const S* opnd = nullptr;
        for (auto [n, v] : s.bindings)
          if (n == s.inline_scan + 1) opnd = static_cast<const S*>(vals_[std::size_t(v)].ptr);
        scan_pass<S> pass(sc.scan, *s.from, sc.scan_axis, r);
        if (pass.needs_carry()) {
          pass.add_totals(0, opnd, sp.count());
          pass.carry(c_);
        }
        if (sp.count() == 0) return;
        // the destination: a view's elements (setitem) or row-major
        std::array<std::int64_t, kernel::space<MR>::cap> ostr{};
        T* obase = static_cast<T*>(out.ptr);
        if (dest_view_ && out.ptr == dest_.get()) {
          dest_view_->strides(r, ostr.data());
          obase += dest_view_->offset(r);
        } else {
          std::int64_t st = 1;
          for (int d = sp.ndim - 1; d >= 0; --d) ostr[std::size_t(d)] = st, st *= sp.ext[std::size_t(d)];
        }
        constexpr std::int64_t K = 4096;
        const std::unique_ptr<S[]> buf(new S[K]);
        auto& sb = bind_[std::size_t(s.inline_scan)];
        const std::int64_t n = sp.ext[std::size_t(sp.ndim - 1)], os = ostr[std::size_t(sp.ndim - 1)];
        kernel::outer_iter<MR> it(sp);
        if (pass.along_last_axis() && sp.ndim >= 1) {
          // each row one line: the scan's running value made and read in one loop
          // (a chain of dependent operations overlapped with the kernel's work)
          scan_detail::with_combine<S>(sc.scan, [&](auto f) {
            const S* carry = pass.line_carry();
            for (std::int64_t row = 0, rows = it.rows(); row < rows; ++row, it.next()) {
              T* o = obase;
              for (int d = 0; d + 1 < sp.ndim; ++d) o += it.idx[std::size_t(d)] * ostr[std::size_t(d)];
              const S* in = opnd + row * n;
              S acc{};
              for (std::int64_t j0 = 0; j0 < n; j0 += K) {
                const std::int64_t len = std::min(K, n - j0), pos = row * n + j0;
                S* b = buf.get() - j0;  // b[j]: the scan's element j of this row
                sb.ptr = reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(buf.get()) - std::uintptr_t(pos) * sizeof(S));
                auto ev = kernel::make_eval<MR>(x, s.node, ctx, sp);
                ev.start(it.idx.data(), sp.ndim - 1);
                std::int64_t j = j0;
                if (j0 == 0) {
                  acc = carry ? f(carry[row], in[0]) : in[0];
                  b[0] = acc;
                  if (ev.contiguous() && os == 1) o[0] = T(ev.template at<true>(0));
                  else o[0] = T(ev.template at<false>(0));
                  j = 1;
                }
                if (ev.contiguous() && os == 1)
                  for (; j < j0 + len; ++j) {
                    b[j] = acc = f(acc, in[j]);
                    o[j] = T(ev.template at<true>(j));
                  }
                else
                  for (; j < j0 + len; ++j) {
                    b[j] = acc = f(acc, in[j]);
                    o[j * os] = T(ev.template at<false>(j));
                  }
              }
            }
          });
          return;
        }
        for (std::int64_t row = 0, rows = it.rows(); row < rows; ++row, it.next()) {
          T* o = obase;
          for (int d = 0; d + 1 < sp.ndim; ++d) o += it.idx[std::size_t(d)] * ostr[std::size_t(d)];
          for (std::int64_t j0 = 0; j0 < n; j0 += K) {
            const std::int64_t len = std::min(K, n - j0), pos = row * n + j0;
            pass.scan_chunk(pos, opnd + pos, len, buf.get());
            // the binding's element p is buf[p - pos] (an address, never read outside the chunk)
            sb.ptr = reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(buf.get()) - std::uintptr_t(pos) * sizeof(S));
            auto ev = kernel::make_eval<MR>(x, s.node, ctx, sp);
            ev.start(it.idx.data(), sp.ndim - 1);
            if (ev.contiguous() && os == 1)
              for (std::int64_t j = j0; j < j0 + len; ++j) o[j] = T(ev.template at<true>(j));
            else
              for (std::int64_t j = j0; j < j0 + len; ++j) o[j * os] = T(ev.template at<false>(j));
          }
        }
      }
    });
  }

  // A scan whose elementwise operand `a` (node `id`) the planner folded into it
  // (planner: fuse_scan_operands): the operand is evaluated chunk by chunk as
  // the scan reads it, twice along a split axis (the totals, then the scan).
  template <class X>
  void run_fused_scan(const X& a, int id, scan_kind k, int axis, const planner::step& s) {
    using T = typename X::value_type;
    constexpr int MR = X::ndim;
    finish_halos();
    prepare_bindings(s);
    const kernel::context ctx{&bind_, c_.rank()};
    const auto sp = space_of<MR>(*s.from, c_.rank());
    auto& out = output(s.output, sp.count() * std::int64_t(sizeof(T)), dest_safe(s, false));
    T* o = static_cast<T*>(out.ptr);
    scan_pass<T> pass(k, *s.from, axis, c_.rank());
    auto ev = kernel::make_eval<MR>(a, id, ctx, sp);
    if (pass.along_last_axis() && sp.ndim >= 1) {  // one loop computes the operand and scans it
      scan_detail::with_combine<T>(k, [&](auto f) { fused_line_scan(ev, sp, pass, f, k, o); });
      return;
    }
    if (pass.needs_carry()) {
      kernel::for_each_chunk<T, MR>(ev, sp, [&](std::int64_t pos, const T* v, std::int64_t len) { pass.add_totals(pos, v, len); });
      pass.carry(c_);
    }
    kernel::for_each_chunk<T, MR>(ev, sp, [&](std::int64_t pos, const T* v, std::int64_t len) { pass.scan_chunk(pos, v, len, o + pos); });
  }

  // A scan along the last axis of an operand computed as it is read: each row
  // of the iteration space is one line, its elements computed inside the loop
  // that combines them (the totals in four chains, then the running value), so
  // the operand's loads overlap the chain of dependent operations.
  template <int MR, class T, class Ev, class F>
  void fused_line_scan(Ev& ev, const kernel::space<MR>& sp, scan_pass<T>& pass, F f, scan_kind k, T* out) {
    const std::int64_t n = sp.ext[std::size_t(sp.ndim - 1)];
    const bool c = ev.contiguous();
    auto rows = [&](auto&& line) {
      kernel::outer_iter<MR> it(sp);
      for (std::int64_t r = 0, R = it.rows(); r < R; ++r, it.next()) {
        ev.start(it.idx.data(), sp.ndim - 1);
        if (c) line(r, [&](std::int64_t j) { return T(ev.template at<true>(j)); });
        else line(r, [&](std::int64_t j) { return T(ev.template at<false>(j)); });
      }
    };
    if (sp.count() > 0 && pass.needs_carry()) {
      T* tot = pass.line_totals();
      const T id = scan_detail::identity<T>(k);
      rows([&](std::int64_t r, auto at) { tot[r] = f(tot[r], scan_detail::combine_run(at, n, id, id, f)); });
    }
    if (pass.needs_carry()) pass.carry(c_);  // (collective: every rank, also one with no elements)
    if (sp.count() == 0 || n == 0) return;
    const T* carry = pass.line_carry();
    rows([&](std::int64_t r, auto at) {
      T* y = out + r * n;
      T acc = carry ? f(carry[r], at(0)) : at(0);
      y[0] = acc;
      for (std::int64_t j = 1; j < n; ++j) y[j] = acc = f(acc, at(j));
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
      if constexpr (device_kernels_v<Code> && !op::is_arg_reduction_v<Op> && !expr::has_op_state_v<A>)
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

  // A histogram (histogram/histogram.hpp): counts (or sums of weights) per bin
  // of its operand's values, computed as they are read, on the host. A node of
  // several value streams (R::streams > 1: values and weights, or the two axes
  // of histogram2d) bins its operand's children in step, each computed as read.
  template <class R>
  void run_binned_kernel(const R& r, const planner::step& s, const kernel::context& ctx) {
    using A = std::remove_cvref_t<decltype(r.arg)>;
    using T = typename R::value_type;
    constexpr int MR = A::ndim;
    if (s.on == device_kind::gpu) throw_no_device_kernels(s);
    const auto sp = space_of<MR>(*s.from, c_.rank());
    auto& out = output(s.output, s.to->local_size(c_.rank()) * std::int64_t(sizeof(T)), dest_safe(s, true));
    if constexpr (R::streams == 1) {
      auto ev = kernel::make_eval<MR>(r.arg, s.node + 1, ctx, sp);
      r.count(
          [&](auto&& f) {
            kernel::for_each_chunk<double, MR>(ev, sp, [&](std::int64_t, const double* v, std::int64_t n) { f(&v, n); });
          },
          static_cast<T*>(out.ptr));
    } else {
      constexpr auto off = expr::child_offsets<A>();
      static_assert(off.size() == std::size_t(R::streams));
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        auto evs = hana::make_tuple(kernel::make_eval<MR>(expr::child<I>(r.arg), s.node + 1 + off[I], ctx, sp)...);
        r.count([&](auto&& f) { kernel::for_each_chunk_of<MR>(sp, f, hana::at_c<I>(evs)...); }, static_cast<T*>(out.ptr));
      }(std::make_index_sequence<off.size()>{});
    }
  }

  void run_combine(const planner::step& s) override {
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
        combine_arg_reduction(slot, n, sizeof(V), [](const void* x, const void* y) {
          V a, b;
          std::memcpy(&a, x, sizeof(V));
          std::memcpy(&b, y, sizeof(V));
          return Op::better(a, b);
        });
      } else {
        c_.allreduce(static_cast<T*>(slot.ptr), n, Op::mpi);
      }
    });
  }
};


}  // namespace detail


}  // namespace ember
