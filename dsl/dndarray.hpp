// ember::dndarray<T, N>: a distributed N-dimensional array, split along one axis
// across the ranks of a communicator (or replicated), like Heat's DNDarray.
//
// A dndarray is a handle: copies share the local block and the distribution
// metadata (as a Python name bound to the same DNDarray), `copy()` is deep.
//
// The local block lives on the host (ember::cpu, the default) or in the memory of
// the rank's GPU (ember::gpu, runtime/device.hpp), like a CuPy array or a torch
// tensor's device; `device()` says which, `to(d)` copies it over.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <unsupported/Eigen/CXX11/Tensor>

#include "../runtime/communicator.hpp"
#include "../runtime/device.hpp"
#include "../runtime/exchange.hpp"
#include "../runtime/layout.hpp"
#include "../runtime/memory.hpp"
#include "dtype.hpp"
#include "node_base.hpp"

namespace ember {

template <dtype T, int N>
class dndarray;
namespace detail {
// What compiled the code that evaluates an expression: a host compiler, or nvcc
// (whose code can run the fused kernels of GPU arrays on the GPU). Every
// evaluation entry point takes it as a defaulted template argument, so the two
// instantiations are different functions with different symbols, and a program
// linking g++ and nvcc objects gets each object's own (no ODR clash).
struct host_code {};
struct cuda_code {};
#if defined(__CUDACC__)
using this_code = cuda_code;
#else
using this_code = host_code;
#endif
template <class Code>
inline constexpr bool device_kernels_v = std::is_same_v<Code, cuda_code>;

// Evaluates expression `e` into `dst` (dsl/eval.hpp): into its storage when it
// already has the expression's shape, otherwise into new storage.
template <class Code, class T, int N, class E>
void assign_expression(dndarray<T, N>& dst, const E& e);
// `a`'s values in `d` memory (`a` itself when there already), without the
// collective device check: for callers that made it (to(), the factories) or
// whose arrays prove it (results of a GPU array's linear algebra).
template <dtype T, int N>
dndarray<T, N> on_device(const dndarray<T, N>& a, device_kind d);
}  // namespace detail

// A GPU block as a typed view: the device pointer and the local shape. For CUDA
// kernels, cuBLAS or another CUDA library; never dereferenced on the host.
template <class T, int N>
struct device_view {
  T* data = nullptr;
  std::array<std::int64_t, N> shape{};
  std::int64_t size() const {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  }
};

// The "not split" value of a split axis.
inline constexpr std::nullopt_t none = std::nullopt;
using split_axis = std::optional<int>;

template <dtype T, int N>
class dndarray {
  static_assert(N >= 1, "ember::dndarray: the rank N must be at least 1");

 public:
  using value_type = T;
  using shape_type = std::array<std::int64_t, N>;
  using map_type = std::vector<shape_type>;
  using local_type = Eigen::TensorMap<Eigen::Tensor<T, N, Eigen::RowMajor>>;
  static constexpr int rank_v = N;

  dndarray() = default;  // a null handle; assign to it before use

  // Evaluates an expression (one fused pass, planned communication). Assigning to
  // an array that already has the expression's shape writes into its storage
  // (every handle sharing it sees the result) and allocates nothing.
  template <class E, class Code = detail::this_code>
    requires expr::is_node_v<E>
  dndarray(const E& e) {  // NOLINT: implicit, like Eigen's evaluation on assignment
    detail::assign_expression<Code>(*this, e);
  }
  template <class E, class Code = detail::this_code>
    requires expr::is_node_v<E>
  dndarray& operator=(const E& e) {
    detail::assign_expression<Code>(*this, e);
    return *this;
  }

  // Wraps existing local storage laid out as `l` on `c` (no copy); `d` says
  // where `data` points (a device pointer for ember::gpu).
  dndarray(const ember::layout& l, const communicator& c, std::shared_ptr<T[]> data, device_kind d = device_kind::cpu)
      : s_((check_layout(l, c), std::make_shared<state>(state{l, c, std::move(data), d}))) {}

  // Allocates an uninitialized local block for `l` on `c`, in `d` memory (for
  // ember::gpu the caller has checked with detail::require_gpu that every rank
  // has a device).
  dndarray(const ember::layout& l, const communicator& c, device_kind d = device_kind::cpu)
      : s_((check_layout(l, c), std::make_shared<state>(state{l, c, allocate_block(l.local_size(c.rank()), d), d}))) {}

  // ---- metadata (replicated: identical on every rank) ----
  shape_type shape() const { return to_shape(st().lay.shape()); }
  shape_type lshape() const { return to_shape(st().lay.lshape(rank())); }
  map_type lshape_map() const {
    map_type m;
    for (const auto& row : st().lay.lshape_map()) m.push_back(to_shape(row));
    return m;
  }
  split_axis split() const { return st().lay.split(); }
  const communicator& comm() const { return st().comm; }
  std::int64_t numel() const { return st().lay.numel(); }
  std::int64_t lnumel() const { return st().lay.local_size(rank()); }
  static constexpr int ndim() { return N; }
  static constexpr std::string_view dtype() { return dtype_name<T>(); }
  bool is_distributed() const { return split().has_value() && comm().size() > 1; }
  bool is_balanced() const { return st().lay.is_balanced(); }
  // Offset of this rank's block along the split axis (0 when not split).
  std::int64_t loffset() const { return st().lay.offset(rank()); }
  const ember::layout& distribution() const { return st().lay; }
  // Identity of the array (shared by every copy of the handle): expressions use it
  // to tell an array read twice from two arrays.
  const void* identity() const { return s_.get(); }
  bool valid() const { return s_ != nullptr; }
  // Where the local block lives (the same on every rank).
  device_kind device() const { return st().dev; }

  // ---- local data ----
  // The host block as an Eigen tensor; a GPU array refuses (use larray_device()).
  local_type larray() const {
    auto l = lshape();
    Eigen::DSizes<Eigen::Index, N> d;  // (not std::array: Eigen has its own array type under nvcc)
    for (int i = 0; i < N; ++i) d[i] = Eigen::Index(l[i]);
    return local_type(host_data("larray"), d);
  }
  T* ldata() const { return host_data("ldata"); }
  // The GPU block (device pointer and local shape); a host array refuses.
  device_view<T, N> larray_device() const {
    if (device() != device_kind::gpu)
      throw value_error("ember::dndarray::larray_device: this " + std::string(dtype_name<T>()) + " array of shape " +
                        detail::shape_str(shape()) + " is in host memory (device cpu); use larray(), or to(ember::gpu)");
    return {st().data.get(), lshape()};
  }
  // The local block wherever it lives (device() says where): for code that
  // handles both kinds of memory, as the evaluator and the exchange do.
  T* lstorage() const { return st().data.get(); }
  const std::shared_ptr<T[]>& lstorage_handle() const { return st().data; }

  // ---- copies ----
  dndarray copy() const {
    dndarray r(st().lay, st().comm, device());
    detail::copy_between(r.lstorage(), device(), lstorage(), device(), lnumel() * std::int64_t(sizeof(T)));
    return r;
  }
  // This array's values in `d` memory, same layout: the array itself (a handle to
  // the same storage) when it is there already, as torch's .to() and CuPy's
  // asarray. Collective for ember::gpu: every rank must have a device, or every
  // rank throws ember::device_error naming the ranks without one.
  dndarray to(device_kind d) const {
    if (d == device_kind::gpu) detail::require_gpu(comm(), "ember::dndarray::to(ember::gpu)");
    return detail::on_device(*this, d);
  }

  // ---- redistribution: every one of these is the exchange engine ----
  // The arguments (target map, axis, layout) must be the same on every rank; with
  // EMBER_CHECK_REPLICATED=1 that is checked first (runtime/communicator.hpp).
  // Same split axis, new per-rank extents; `target_map` has one row per rank, the
  // lshape that rank should hold (Heat's redistribute_).
  void redistribute_(const map_type& target_map) {
    check_same_map(target_map, "ember::redistribute_");
    move_unchecked(redistribute_target(target_map));
  }
  // New split axis (balanced), or ember::none to replicate the whole array on
  // every rank. Resplitting a replicated array only keeps each rank's slice.
  // As in Heat, resplitting to the current axis changes nothing.
  void resplit_(split_axis axis) {
    check_same_axis(axis, "ember::resplit_");
    move_unchecked(resplit_target(axis));
  }
  // Heat's balanced block split along the current split axis.
  void balance_() { move_unchecked(ember::layout::balanced(st().lay.shape(), split(), comm().size())); }

  // Moves the data to any layout of the same shape over the same communicator.
  void move_to(const ember::layout& target) {
    check_same_layout(target, "ember::move_to");
    move_unchecked(target);
  }
  // A new array with this one's values in `target` (this one is unchanged).
  dndarray moved_to(const ember::layout& target) const {
    check_same_layout(target, "ember::moved_to");
    return moved_unchecked(target);
  }
  // The exchange that move_to(target) would run on this rank, for inspection
  // (predicted bytes and messages) without moving anything.
  exchange plan_move(const ember::layout& target) const { return exchange(st().lay, target, rank(), sizeof(T)); }

  ember::layout redistribute_target(const map_type& target_map) const {
    std::vector<index_vec> m;
    for (const auto& row : target_map) m.emplace_back(row.begin(), row.end());
    return ember::layout(st().lay.shape(), st().lay.split(), extents_from_map(st().lay, m));
  }
  ember::layout resplit_target(split_axis axis) const {
    if (axis) check_axis(*axis, N, "resplit");
    if (axis == split()) return st().lay;
    return ember::layout::balanced(st().lay.shape(), axis, comm().size());
  }

 private:
  struct state {
    ember::layout lay;
    communicator comm;
    std::shared_ptr<T[]> data;
    device_kind dev = device_kind::cpu;
  };
  std::shared_ptr<state> s_;

  const state& st() const {
    if (!s_) throw error("ember::dndarray: use of a null (default-constructed) array handle");
    return *s_;
  }
  T* host_data(const char* what) const {
    if (st().dev == device_kind::gpu)
      throw value_error(std::string("ember::dndarray::") + what + ": the local block of this " +
                        std::string(dtype_name<T>()) + " array of shape " + detail::shape_str(shape()) +
                        " is in GPU memory; use larray_device() for a device view, or to(ember::cpu) for a host copy");
    return st().data.get();
  }
  static std::shared_ptr<T[]> allocate_block(std::int64_t n, device_kind d) {
    if (d == device_kind::cpu) return detail::allocate<T>(n);
    auto p = detail::allocate_on(d, n * std::int64_t(sizeof(T)));
    return std::shared_ptr<T[]>(p, static_cast<T*>(p.get()));
  }

  template <ember::dtype U, int M>
  friend dndarray<U, M> resplit(const dndarray<U, M>&, split_axis);
  template <ember::dtype U, int M>
  friend dndarray<U, M> redistribute(const dndarray<U, M>&, const typename dndarray<U, M>::map_type&);
  template <ember::dtype U, int M>
  friend dndarray<U, M> balance(const dndarray<U, M>&);

  void move_unchecked(const ember::layout& target) {
    if (target == st().lay) return;
    auto r = moved_unchecked(target);
    s_->lay = std::move(r.s_->lay);
    s_->data = std::move(r.s_->data);
  }
  dndarray moved_unchecked(const ember::layout& target) const {
    if (target.shape() != st().lay.shape())
      throw shape_error("ember: cannot move an array of shape " + detail::shape_str(st().lay.shape()) +
                        " to a layout of shape " + detail::shape_str(target.shape()));
    dndarray r(target, comm(), device());
    if (target == st().lay)
      detail::copy_between(r.lstorage(), device(), lstorage(), device(), lnumel() * std::int64_t(sizeof(T)));
    else
      exchange(st().lay, target, rank(), sizeof(T)).run(comm(), lstorage(), r.lstorage(), device());
    return r;
  }

  // EMBER_CHECK_REPLICATED: the arguments of a move, compared across ranks before
  // any of them is validated (a rank whose argument alone is invalid would
  // otherwise throw alone).
  void check_same_map(const map_type& m, const char* what) const {
    if (!detail::replicated_checks()) return;
    detail::arg_hash h;
    h.add(m.size());
    for (const auto& row : m)
      for (auto v : row) h.add(std::uint64_t(v));
    detail::check_replicated(comm(), h.h, what, "target map", [&] {
      std::string d = "[";
      for (std::size_t r = 0; r < m.size() && r < 8; ++r) d += (r ? ", " : "") + detail::shape_str(m[r]);
      return d + (m.size() > 8 ? ", ...]" : "]");
    });
  }
  void check_same_axis(split_axis axis, const char* what) const {
    if (!detail::replicated_checks()) return;
    detail::check_replicated(comm(), axis ? std::uint64_t(*axis) + 1 : 0, what, "split axis",
                             [&] { return "axis " + detail::axis_str(axis); });
  }
  void check_same_layout(const ember::layout& l, const char* what) const {
    if (!detail::replicated_checks()) return;
    detail::check_replicated(comm(), l.hash(), what, "target layout", [&] {
      std::string d = "shape " + detail::shape_str(l.shape()) + ", split " + detail::axis_str(l.split());
      if (l.split()) {
        const auto& e = l.extents();
        d += ", extents (";
        for (std::size_t r = 0; r < e.size() && r < 8; ++r) d += (r ? ", " : "") + std::to_string(e[r]);
        d += e.size() > 8 ? ", ...)" : ")";
      }
      return d + " over " + std::to_string(l.nranks()) + " ranks";
    });
  }
  int rank() const { return st().comm.rank(); }
  static shape_type to_shape(const index_vec& v) {
    shape_type s{};
    for (int i = 0; i < N; ++i) s[i] = v[i];
    return s;
  }
  static void check_layout(const ember::layout& l, const communicator& c) {
    if (l.ndim() != N)
      throw shape_error("ember::dndarray<" + std::string(dtype_name<T>()) + ", " + std::to_string(N) +
                        ">: layout of shape " + detail::shape_str(l.shape()) + " has " + std::to_string(l.ndim()) +
                        " dimensions");
    if (l.nranks() != c.size())
      throw value_error("ember::dndarray: layout over " + std::to_string(l.nranks()) +
                        " ranks used on a communicator of " + std::to_string(c.size()) + " ranks");
  }
};

namespace detail {
template <dtype T, int N>
dndarray<T, N> on_device(const dndarray<T, N>& a, device_kind d) {
  if (d == a.device()) return a;
  dndarray<T, N> r(a.distribution(), a.comm(), d);
  copy_between(r.lstorage(), d, a.lstorage(), a.device(), a.lnumel() * std::int64_t(sizeof(T)));
  return r;
}
}  // namespace detail

// Out-of-place versions: the input is unchanged, the result has its own storage.
template <dtype T, int N>
dndarray<T, N> resplit(const dndarray<T, N>& a, split_axis axis) {
  a.check_same_axis(axis, "ember::resplit");
  return a.moved_unchecked(a.resplit_target(axis));
}

template <dtype T, int N>
dndarray<T, N> redistribute(const dndarray<T, N>& a, const typename dndarray<T, N>::map_type& target_map) {
  a.check_same_map(target_map, "ember::redistribute");
  return a.moved_unchecked(a.redistribute_target(target_map));
}

template <dtype T, int N>
dndarray<T, N> balance(const dndarray<T, N>& a) {
  return a.moved_unchecked(layout::balanced(a.distribution().shape(), a.split(), a.comm().size()));
}

}  // namespace ember
