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

#include "../runtime/eigen_tensor.hpp"

#include "../runtime/checked.hpp"
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
// src's values into dst's storage (same shape, any two layouts, same device):
// a copy of the block when the layouts match, otherwise the exchange engine
// straight into dst's blocks. What every move and ember::copyto run.
template <dtype T, int N>
void move_values(const dndarray<T, N>& src, const dndarray<T, N>& dst);
// a(i0, i1, ...): a lazy view (dsl/view.hpp).
template <dtype T, int N, class... I>
auto make_view(const dndarray<T, N>& a, const I&... idx);
// a(mask), a(indices): advanced indexing (indexing/indexing.hpp).
template <class X>
struct selection_operand : std::bool_constant<expr::is_node_v<X>> {};
template <dtype U, int M>
struct selection_operand<dndarray<U, M>>
    : std::bool_constant<std::is_same_v<U, bool> || (M == 1 && std::is_integral_v<U>)> {};
template <dtype T, int N, class S>
auto select_by(const dndarray<T, N>& a, const S& sel);
// The member spellings' implementations (a.sum(), a.T(), ...): dsl/methods.hpp,
// which ember.hpp includes after every free function they call.
template <class Array>
struct array_methods;
}  // namespace detail
struct reduce_options;  // dsl/reductions.hpp
struct all_axes_t;
struct shape_options;  // shape/shape.hpp

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

template <dtype Elem, int N>
class dndarray {
  // (the element type is Elem in here, not T: a.T() is NumPy's transpose)
  static_assert(N >= 1, "ember::dndarray: the rank N must be at least 1");

 public:
  using value_type = Elem;
  using shape_type = std::array<std::int64_t, N>;
  using map_type = std::vector<shape_type>;
  using local_type = Eigen::TensorMap<Eigen::Tensor<Elem, N, Eigen::RowMajor>>;
  static constexpr int ndim_v = N;

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
  dndarray(const ember::layout& l, const communicator& c, std::shared_ptr<Elem[]> data, device_kind d = device_kind::cpu)
      : s_((check_layout(l, c), std::make_shared<state>(state{l, c, std::move(data), d}))) {}

  // Allocates an uninitialized local block for `l` on `c`, in `d` memory (for
  // ember::gpu the caller has checked with detail::require_gpu that every rank
  // has a device).
  dndarray(const ember::layout& l, const communicator& c, device_kind d = device_kind::cpu)
      : s_((check_layout(l, c), std::make_shared<state>(state{l, c, allocate_block(l, c.rank(), d), d}))) {}

  // ---- metadata (replicated: identical on every rank) ----
  shape_type shape() const { return to_shape(st().lay.shape()); }
  shape_type lshape() const { return to_shape(st().lay.lshape(rank())); }
  map_type lshape_map() const {
    map_type m;
    for (const auto& row : st().lay.lshape_map()) m.push_back(to_shape(row));
    return m;
  }
  split_axis split() const { return st().lay.split(); }
  // comm() and layout() are what operations of several ranks read: on a
  // null handle they end the job at P > 1 (detail::null_handle) rather than
  // throw on one rank while its peers wait in a collective. The other queries
  // throw ember::error.
  const communicator& comm() const { return op_st("ember::dndarray::comm").comm; }
  std::int64_t numel() const { return st().lay.numel(); }
  std::int64_t lnumel() const { return st().lay.local_size(rank()); }
  static constexpr int ndim() { return N; }
  static constexpr std::string_view dtype() { return dtype_name<Elem>(); }
  bool is_distributed() const { return split().has_value() && comm().size() > 1; }
  bool is_balanced() const { return st().lay.is_balanced(); }
  // Offset of this rank's block along the split axis (0 when not split).
  std::int64_t loffset() const { return st().lay.offset(rank()); }
  const ember::layout& layout() const { return op_st("ember::dndarray::layout").lay; }
  // NumPy's basic indexing, one argument per axis (missing trailing axes: all):
  // an integer (drops the axis; negative counts from the end), ember::slice(start,
  // stop, step), ember::all, ember::newaxis. A lazy view of this array's storage
  // (dsl/view.hpp): an expression leaf, and assignable (a(0, ember::all) = 0.0).
  template <class... I>
  auto operator()(const I&... idx) const {
    return detail::make_view(*this, idx...);
  }
  // NumPy's advanced indexing (indexing/indexing.hpp): a(mask) with a bool array
  // or expression of this shape, a(indices) with a 1-D integer array (rows).
  template <class S>
    requires detail::selection_operand<S>::value
  auto operator()(const S& sel) const {
    return detail::select_by(*this, sel);
  }
  // One element on every rank, from the rank that holds it (ember::item).
  Elem item(const std::array<std::int64_t, std::size_t(N)>& index) const;
  [[deprecated("ember: dndarray::distribution() is now layout()")]] const ember::layout& distribution() const {
    return layout();
  }
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
  Elem* ldata() const { return host_data("ldata"); }
  // The GPU block (device pointer and local shape); a host array refuses.
  device_view<Elem, N> larray_device() const {
    if (device() != device_kind::gpu)
      throw value_error("ember::dndarray::larray_device: this " + std::string(dtype_name<Elem>()) + " array of shape " +
                        detail::shape_str(shape()) + " is in host memory (device cpu); use larray(), or to(ember::gpu)");
    return {st().data.get(), lshape()};
  }
  // The local block wherever it lives (device() says where): for code that
  // handles both kinds of memory, as the evaluator and the exchange do.
  Elem* lstorage() const { return st().data.get(); }
  const std::shared_ptr<Elem[]>& lstorage_handle() const { return st().data; }

  // ---- copies ----
  // Allocation is agreed across ranks (one out of memory: memory_error on every rank).
  dndarray copy() const {
    const auto& c = comm();
    dndarray r = detail::agreed_entry(c, {"ember::dndarray::copy", "array", st().lay.hash(), [&] { return describe(); }},
                                      [&] { return dndarray(st().lay, c, device()); });
    detail::copy_between(r.lstorage(), device(), lstorage(), device(), lnumel() * std::int64_t(sizeof(Elem)));
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

  // ---- NumPy's member spellings: the same lazy nodes as the free functions ----
  // a.sum() is ember::sum(a) (a value on every rank), a.sum(1) is ember::sum(a, 1)
  // (lazy), and so on for prod min max mean var std argmin argmax any all;
  // a.astype<U>(), a.Elem(), a.reshape({..}), a.ravel(), a.flatten(), a.squeeze(),
  // a.clip(lo, hi), a.round(d), a.conj(), a.dot(b), a.fill(v) likewise.
#define EMBER_MEMBER_REDUCTION(NAME)                                                                 \
  template <class M = detail::array_methods<dndarray>>                                               \
  auto NAME() const {                                                                                \
    return M::NAME(*this);                                                                           \
  }                                                                                                  \
  template <class M = detail::array_methods<dndarray>>                                               \
  auto NAME(const all_axes_t& t) const {                                                             \
    return M::NAME(*this, t);                                                                        \
  }                                                                                                  \
  template <class M = detail::array_methods<dndarray>>                                               \
  auto NAME(const all_axes_t& t, const reduce_options& o) const {                                    \
    return M::NAME(*this, t, o);                                                                     \
  }                                                                                                  \
  template <class M = detail::array_methods<dndarray>>                                               \
  auto NAME(int axis) const {                                                                        \
    return M::NAME(*this, axis);                                                                     \
  }                                                                                                  \
  template <class M = detail::array_methods<dndarray>>                                               \
  auto NAME(int axis, const reduce_options& o) const {                                               \
    return M::NAME(*this, axis, o);                                                                  \
  }                                                                                                  \
  template <class M = detail::array_methods<dndarray>>                                               \
  auto NAME(std::initializer_list<int> axes) const {                                                 \
    return M::NAME(*this, axes);                                                                     \
  }                                                                                                  \
  template <class M = detail::array_methods<dndarray>>                                               \
  auto NAME(std::initializer_list<int> axes, const reduce_options& o) const {                        \
    return M::NAME(*this, axes, o);                                                                  \
  }
  EMBER_MEMBER_REDUCTION(sum)
  EMBER_MEMBER_REDUCTION(prod)
  EMBER_MEMBER_REDUCTION(min)
  EMBER_MEMBER_REDUCTION(max)
  EMBER_MEMBER_REDUCTION(mean)
  EMBER_MEMBER_REDUCTION(var)
  EMBER_MEMBER_REDUCTION(std)
  EMBER_MEMBER_REDUCTION(argmin)
  EMBER_MEMBER_REDUCTION(argmax)
  EMBER_MEMBER_REDUCTION(any)
  EMBER_MEMBER_REDUCTION(all)
#undef EMBER_MEMBER_REDUCTION
  // var and std over every axis with options: a.var({.ddof = 1}).
  template <class M = detail::array_methods<dndarray>>
  auto var(const reduce_options& o) const {
    return M::var(*this, o);
  }
  template <class M = detail::array_methods<dndarray>>
  auto std(const reduce_options& o) const {
    return M::std(*this, o);
  }
  template <ember::dtype U, class M = detail::array_methods<dndarray>>
  auto astype() const {
    return M::template astype<U>(*this);
  }
  template <class M = detail::array_methods<dndarray>>
  auto T() const {
    return M::T(*this);
  }
  template <std::size_t K, class M = detail::array_methods<dndarray>>
  auto reshape(const std::int64_t (&shape)[K]) const {
    return M::reshape(*this, shape);
  }
  template <std::size_t K, class M = detail::array_methods<dndarray>>
  auto reshape(const std::int64_t (&shape)[K], const shape_options& o) const {
    return M::reshape(*this, shape, o);
  }
  template <class M = detail::array_methods<dndarray>>
  auto ravel() const {
    return M::ravel(*this);
  }
  template <class M = detail::array_methods<dndarray>>
  auto flatten() const {
    return M::flatten(*this);
  }
  template <class M = detail::array_methods<dndarray>, class... A>
  auto squeeze(const A&... axis) const {
    return M::squeeze(*this, axis...);
  }
  template <class L, class H, class M = detail::array_methods<dndarray>>
  auto clip(const L& lo, const H& hi) const {
    return M::clip(*this, lo, hi);
  }
  template <class M = detail::array_methods<dndarray>>
  auto round(int decimals = 0) const {
    return M::round(*this, decimals);
  }
  template <class M = detail::array_methods<dndarray>>
  auto conj() const {
    return M::conj(*this);
  }
  template <class B, class M = detail::array_methods<dndarray>>
  auto dot(const B& b) const {
    return M::dot(*this, b);
  }
  // NumPy's a.fill(v): every element set to v, in place.
  template <class V, class M = detail::array_methods<dndarray>>
  void fill(const V& v) const {
    M::fill(*this, v);
  }

  // ---- redistribution: every one of these is the exchange engine ----
  // The arguments (target map, axis, layout) must be the same on every rank.
  // Each move opens with one small collective (detail::agreed_entry) that checks
  // this, and that every rank could allocate its destination block, so bad or
  // rank-dependent arguments and one rank out of memory are the same error on
  // every rank (EMBER_CHECK_REPLICATED=0 skips it).
  // Same split axis, new per-rank extents; `target_map` has one row per rank, the
  // lshape that rank should hold (Heat's redistribute_).
  void redistribute_(const map_type& target_map) {
    move_in_place(map_entry(target_map, "ember::redistribute_"), [&] { return redistribute_target(target_map); });
  }
  // New split axis (balanced), or ember::none to replicate the whole array on
  // every rank. Resplitting a replicated array only keeps each rank's slice.
  // As in Heat, resplitting to the current axis changes nothing.
  void resplit_(split_axis axis) {
    move_in_place(axis_entry(axis, "ember::resplit_"), [&] { return resplit_target(axis); });
  }
  // Heat's balanced block split along the current split axis.
  void balance_() {
    move_in_place(plain_entry("ember::balance_"),
                  [&] { return ember::layout::balanced(st().lay.shape(), split(), comm().size()); });
  }

  // Moves the data to any layout of the same shape over the same communicator.
  void move_to(const ember::layout& target) {
    move_in_place(layout_entry(target, "ember::move_to"), [&] { return target; });
  }
  // A new array with this one's values in `target` (this one is unchanged).
  dndarray moved_to(const ember::layout& target) const {
    return moved(layout_entry(target, "ember::moved_to"), [&] { return target; });
  }
  // The exchange that move_to(target) would run on this rank, for inspection
  // (predicted bytes and messages) without moving anything.
  exchange plan_move(const ember::layout& target) const { return exchange(st().lay, target, rank(), sizeof(Elem)); }

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
    std::shared_ptr<Elem[]> data;
    device_kind dev = device_kind::cpu;
  };
  std::shared_ptr<state> s_;

  const state& st() const {
    if (!s_) throw error("ember::dndarray: use of a null array handle (default-constructed, or moved from)");
    return *s_;
  }
  const state& op_st(const char* what) const {
    if (!s_) detail::null_handle(what);
    return *s_;
  }
  std::string describe() const {
    return std::string(dtype_name<Elem>()) + " array of shape " + detail::shape_str(st().lay.shape()) + ", split " +
           detail::axis_str(st().lay.split());
  }
  Elem* host_data(const char* what) const {
    if (st().dev == device_kind::gpu)
      throw value_error(std::string("ember::dndarray::") + what + ": the local block of this " +
                        std::string(dtype_name<Elem>()) + " array of shape " + detail::shape_str(shape()) +
                        " is in GPU memory; use larray_device() for a device view, or to(ember::cpu) for a host copy");
    return st().data.get();
  }
  static std::shared_ptr<Elem[]> allocate_block(const ember::layout& l, int rank, device_kind d) {
    // The global byte count must fit (a replicated check: every rank alike).
    detail::checked_bytes(l.shape(), std::int64_t(sizeof(Elem)),
                          "ember::dndarray<" + std::string(dtype_name<Elem>()) + ", " + std::to_string(N) + ">");
    const std::int64_t n = l.local_size(rank);
    try {
      if (d == device_kind::cpu) return detail::allocate<Elem>(n);
      auto p = detail::allocate_on(d, n * std::int64_t(sizeof(Elem)));
      return std::shared_ptr<Elem[]>(p, static_cast<Elem*>(p.get()));
    } catch (const std::bad_alloc&) {
      throw memory_error("ember: out of memory: cannot allocate " + detail::bytes_str(n * std::int64_t(sizeof(Elem))) +
                         " for the local block " + detail::shape_str(l.lshape(rank)) + " of a " +
                         std::string(dtype_name<Elem>()) + " array of shape " + detail::shape_str(l.shape()) +
                         " (split " + detail::axis_str(l.split()) + ")" + (d == device_kind::gpu ? " on the GPU" : ""));
    }
  }
  template <ember::dtype U, int M>
  friend dndarray<U, M> resplit(const dndarray<U, M>&, split_axis);
  template <ember::dtype U, int M>
  friend dndarray<U, M> redistribute(const dndarray<U, M>&, const typename dndarray<U, M>::map_type&);
  template <ember::dtype U, int M>
  friend dndarray<U, M> balance(const dndarray<U, M>&);

  // A move: the agreed opening (arguments alike, validated, destination
  // allocated on every rank), then the exchange.
  template <class F>
  void move_in_place(const detail::entry_args& e, F&& target_of) {
    const auto& c = comm();
    auto dst = detail::agreed_entry(c, e, [&]() -> std::optional<dndarray> {
      const ember::layout t = checked_target(target_of());
      if (t == st().lay) return std::nullopt;
      return dndarray(t, c, device());
    });
    if (!dst) return;
    fill_from_this(*dst);
    s_->lay = std::move(dst->s_->lay);
    s_->data = std::move(dst->s_->data);
  }
  template <class F>
  dndarray moved(const detail::entry_args& e, F&& target_of) const {
    const auto& c = comm();
    dndarray dst = detail::agreed_entry(c, e, [&] { return dndarray(checked_target(target_of()), c, device()); });
    fill_from_this(dst);
    return dst;
  }
  ember::layout checked_target(ember::layout target) const {
    if (target.shape() != st().lay.shape())
      throw shape_error("ember: cannot move an array of shape " + detail::shape_str(st().lay.shape()) +
                        " to a layout of shape " + detail::shape_str(target.shape()));
    return target;
  }
  void fill_from_this(dndarray& dst) const { detail::move_values(*this, dst); }

  // The arguments of each move, hashed with the array's own layout (a rank
  // holding another array is a divergence too) and described for the message.
  detail::entry_args plain_entry(const char* what) const {
    op_st(what);  // a null handle ends the job here (P > 1), before any collective
    return {what, "array", st().lay.hash(), [this] { return describe(); }};
  }
  detail::entry_args map_entry(const map_type& m, const char* what) const {
    op_st(what);  // a null handle ends the job here (P > 1), before any collective
    detail::arg_hash h;
    h.add(st().lay.hash()).add(m.size());
    for (const auto& row : m)
      for (auto v : row) h.add(std::uint64_t(v));
    return {what, "array and target map", h.h, [this, &m] {
              std::string d = "[";
              for (std::size_t r = 0; r < m.size() && r < 8; ++r) d += (r ? ", " : "") + detail::shape_str(m[r]);
              return describe() + ", target map " + d + (m.size() > 8 ? ", ...]" : "]");
            }};
  }
  detail::entry_args axis_entry(split_axis axis, const char* what) const {
    op_st(what);  // a null handle ends the job here (P > 1), before any collective
    detail::arg_hash h;
    h.add(st().lay.hash()).add(axis ? std::uint64_t(*axis) + 1 : 0);
    return {what, "array and split axis", h.h, [this, axis] { return describe() + ", to axis " + detail::axis_str(axis); }};
  }
  detail::entry_args layout_entry(const ember::layout& l, const char* what) const {
    op_st(what);  // a null handle ends the job here (P > 1), before any collective
    detail::arg_hash h;
    h.add(st().lay.hash()).add(l.hash());
    return {what, "array and target layout", h.h, [this, &l] {
              std::string d = "shape " + detail::shape_str(l.shape()) + ", split " + detail::axis_str(l.split());
              if (l.split()) {
                const auto& e = l.extents();
                d += ", extents (";
                for (std::size_t r = 0; r < e.size() && r < 8; ++r) d += (r ? ", " : "") + std::to_string(e[r]);
                d += e.size() > 8 ? ", ...)" : ")";
              }
              return describe() + ", target layout " + d + " over " + std::to_string(l.nranks()) + " ranks";
            }};
  }
  int rank() const { return st().comm.rank(); }
  static shape_type to_shape(const index_vec& v) {
    shape_type s{};
    for (int i = 0; i < N; ++i) s[i] = v[i];
    return s;
  }
  static void check_layout(const ember::layout& l, const communicator& c) {
    if (l.ndim() != N)
      throw shape_error("ember::dndarray<" + std::string(dtype_name<Elem>()) + ", " + std::to_string(N) +
                        ">: layout of shape " + detail::shape_str(l.shape()) + " has " + std::to_string(l.ndim()) +
                        " dimensions");
    if (l.nranks() != c.size())
      throw value_error("ember::dndarray: layout over " + std::to_string(l.nranks()) +
                        " ranks used on a communicator of " + std::to_string(c.size()) + " ranks");
  }
};

namespace detail {
// A new array's block, allocated under one agreement (agreed_entry): one rank out
// of memory is a memory_error on every rank. For callers whose arguments were
// agreed already (`hash` 0) or that fold their own into `hash`.
template <dtype T, int N>
dndarray<T, N> agreed_array(const layout& l, const communicator& c, const char* what, std::uint64_t hash = 0) {
  return agreed_entry(c, {what, "layout", arg_hash().add(hash).add(l.hash()).h, [&] {
                            return std::string(dtype_name<T>()) + " array of shape " + shape_str(l.shape()) + ", split " +
                                   axis_str(l.split());
                          }},
                      [&] { return dndarray<T, N>(l, c); });
}

template <dtype T, int N>
void move_values(const dndarray<T, N>& src, const dndarray<T, N>& dst) {
  if (src.layout() != dst.layout())
    src.plan_move(dst.layout()).run(src.comm(), src.lstorage(), dst.lstorage(), src.device());
  else if (src.lstorage() != dst.lstorage())  // (the same block: nothing to do)
    copy_between(dst.lstorage(), dst.device(), src.lstorage(), src.device(), src.lnumel() * std::int64_t(sizeof(T)));
}

template <dtype T, int N>
dndarray<T, N> on_device(const dndarray<T, N>& a, device_kind d) {
  if (d == a.device()) return a;
  dndarray<T, N> r(a.layout(), a.comm(), d);
  copy_between(r.lstorage(), d, a.lstorage(), a.device(), a.lnumel() * std::int64_t(sizeof(T)));
  return r;
}
}  // namespace detail

// Out-of-place versions: the input is unchanged, the result has its own storage.
template <dtype T, int N>
dndarray<T, N> resplit(const dndarray<T, N>& a, split_axis axis) {
  return a.moved(a.axis_entry(axis, "ember::resplit"), [&] { return a.resplit_target(axis); });
}

template <dtype T, int N>
dndarray<T, N> redistribute(const dndarray<T, N>& a, const typename dndarray<T, N>::map_type& target_map) {
  return a.moved(a.map_entry(target_map, "ember::redistribute"), [&] { return a.redistribute_target(target_map); });
}

template <dtype T, int N>
dndarray<T, N> balance(const dndarray<T, N>& a) {
  return a.moved(a.plain_entry("ember::balance"),
                 [&] { return layout::balanced(a.layout().shape(), a.split(), a.comm().size()); });
}

}  // namespace ember
