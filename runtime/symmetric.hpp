// Symmetric memory: a buffer of the same byte size on every rank of a
// communicator, reachable by one-sided put/get from any rank (an MPI window made
// by MPI_Win_allocate; nvmath's symmetric heap, shared/seeds/
// nvmath-distributed-utilities.txt).
//
//   auto a = ember::allocate_symmetric<double>({3, 3}, comm);        // same shape everywhere
//   auto b = ember::allocate_symmetric<double>({rank == 0 ? 3 : 2, 3}, comm,
//                                              {.make_symmetric = true});  // sized to the largest
//   a.local()[0] = 1.0;                     // this rank's part, of its requested shape
//   a.put(std::span(src), peer, offset);    // into peer's buffer, at an element offset
//   a.fence();                              // collective: completes every put and get
//   a.release();                            // collective (the destructor does it otherwise)
//
// Access: allocation opens the first epoch; put() and get() start one-sided
// transfers that are complete (at both ends) only after the next fence(), which
// every rank calls. Local reads and writes of local() that race with remote
// puts or gets must be separated from them by a fence.
//
// Release is collective (MPI_Win_free), which is why nvmath says Python's garbage
// collector cannot free symmetric memory. In C++ a handle frees its buffer when
// it is destroyed (or at release()), and that is safe under one rule:
//
//   EVERY RANK RELEASES ITS SYMMETRIC HANDLES IN THE SAME ORDER
//
// which scoped (RAII) handles created in the same order on every rank satisfy by
// construction: C++ destroys locals in reverse order of creation, identically on
// every rank, including while unwinding an exception thrown on every rank.
// What breaks it: releasing handles in rank-dependent order, or keeping them in
// containers whose destruction order differs between ranks.
//
// A violation is detected, instead of hanging: each allocation takes a sequence
// number from its communicator (communicator::next_sequence(), equal on every
// rank for the same allocation), and before MPI_Win_free one allgather compares
// the numbers of the handles that every rank is releasing; on a mismatch every
// rank throws an ember::error naming the ranks and their allocations, and frees
// nothing. The check is on in debug builds (NDEBUG not defined when the library
// is compiled) and whenever the environment has EMBER_CHECK_SYMMETRIC=1 (the
// same on every rank). From release() the handle stays valid after the error;
// from a destructor the error is thrown when no other exception is in flight
// (the destructor is noexcept(false)) and printed to stderr otherwise, and the
// buffer is leaked on every rank alike.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "communicator.hpp"
#include "error.hpp"

namespace ember {

struct symmetric_options {
  // Allocate the largest request on every rank when ranks ask for different
  // sizes (each handle keeps its own requested shape); without it a mismatch is
  // an ember::value_error on every rank.
  bool make_symmetric = false;
};

namespace detail {

// The window behind a symmetric handle (symmetric.cpp).
class symmetric_window {
 public:
  // Collective. `shape` and `elem_size` describe this rank's request (for the
  // size check and its messages).
  symmetric_window(const std::int64_t* shape, int ndim, std::size_t elem_size, const char* dtype,
                   const communicator& c, bool make_symmetric);
  ~symmetric_window();  // frees nothing: release() does, collectively
  symmetric_window(const symmetric_window&) = delete;
  symmetric_window& operator=(const symmetric_window&) = delete;

  void* base() const { return base_; }
  std::int64_t bytes() const { return bytes_; }  // every rank's buffer size
  std::uint64_t sequence() const { return seq_; }
  bool held() const { return win_ != MPI_WIN_NULL; }
  const communicator& comm() const { return comm_; }

  // `elems` elements of the allocation's type, each `per_elem` items of MPI type
  // `type`, to/from `target`'s buffer at element `target_elem`.
  void put(const void* src, std::int64_t elems, MPI_Datatype type, int per_elem, int target,
           std::int64_t target_elem) const;
  void get(void* dst, std::int64_t elems, MPI_Datatype type, int per_elem, int target,
           std::int64_t target_elem) const;
  void fence() const;
  // Collective: order check (when enabled), closing fence, MPI_Win_free.
  void release();
  // The same from a destructor while an exception is in flight: never throws.
  void release_quietly() noexcept;

 private:
  communicator comm_;
  MPI_Win win_ = MPI_WIN_NULL;
  void* base_ = nullptr;
  std::int64_t bytes_ = 0;
  std::int64_t elem_ = 1;  // element size: the window's displacement unit
  std::uint64_t seq_ = 0;
  std::string what_;  // "(3, 3) float64" for messages
};

// True when release order is checked (debug build or EMBER_CHECK_SYMMETRIC=1).
bool symmetric_check_enabled();

}  // namespace detail

// A move-only handle to this rank's part of a symmetric allocation.
template <class T, std::size_t N>
class symmetric_array {
  static_assert(std::is_trivially_copyable_v<T>, "ember::symmetric_array: elements must be trivially copyable");

 public:
  using shape_type = std::array<std::int64_t, N>;

  symmetric_array() = default;  // holds nothing
  symmetric_array(std::unique_ptr<detail::symmetric_window> w, const shape_type& shape)
      : w_(std::move(w)), shape_(shape) {}
  symmetric_array(symmetric_array&&) noexcept = default;
  // Releases what this handle held first (collective, like release()).
  symmetric_array& operator=(symmetric_array&& o) noexcept(false) {
    if (this != &o) {
      release();
      w_ = std::move(o.w_);
      shape_ = o.shape_;
    }
    return *this;
  }
  ~symmetric_array() noexcept(false) {
    if (!w_ || !w_->held()) return;
    if (std::uncaught_exceptions() > 0) w_->release_quietly();
    else w_->release();
  }

  bool held() const { return w_ && w_->held(); }
  explicit operator bool() const { return held(); }
  const communicator& comm() const { return window().comm(); }
  // This rank's requested shape and its elements.
  const shape_type& shape() const { return shape_; }
  std::int64_t size() const {
    std::int64_t n = 1;
    for (auto s : shape_) n *= s;
    return n;
  }
  // Elements in every rank's buffer (the largest request with make_symmetric):
  // the valid range of target offsets for put and get.
  std::int64_t capacity() const { return window().bytes() / std::int64_t(sizeof(T)); }
  T* data() const { return static_cast<T*>(window().base()); }
  std::span<T> local() const { return {data(), std::size_t(size())}; }
  // Creation number on its communicator (equal on every rank for one allocation).
  std::uint64_t sequence() const { return window().sequence(); }

  // One-sided: src to `target`'s buffer at element `offset` (complete after fence()).
  void put(std::span<const T> src, int target, std::int64_t offset) const {
    check(std::int64_t(src.size()), target, offset, "put");
    auto [type, per] = type_of();
    window().put(src.data(), std::int64_t(src.size()), type, per, target, offset);
  }
  // One-sided: `target`'s elements [offset, offset + dst.size()) into dst (valid after fence()).
  void get(std::span<T> dst, int target, std::int64_t offset) const {
    check(std::int64_t(dst.size()), target, offset, "get");
    auto [type, per] = type_of();
    window().get(dst.data(), std::int64_t(dst.size()), type, per, target, offset);
  }
  // Collective: completes every put and get of every rank on this allocation.
  void fence() const { window().fence(); }
  // Collective: frees the buffer on every rank (see the ordering rule above).
  void release() {
    if (w_ && w_->held()) w_->release();
    if (w_ && !w_->held()) w_.reset();
  }

 private:
  std::unique_ptr<detail::symmetric_window> w_;
  shape_type shape_{};

  const detail::symmetric_window& window() const {
    if (!w_ || !w_->held()) throw error("ember::symmetric_array: use of a handle that holds no allocation");
    return *w_;
  }
  // MPI type and how many of it make one element (bytes for non-arithmetic T).
  static std::pair<MPI_Datatype, int> type_of() {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) return {detail::mpi_type<T>(), 1};
    else return {MPI_BYTE, int(sizeof(T))};
  }
  void check(std::int64_t n, int target, std::int64_t offset, const char* op) const {
    const auto& w = window();
    if (target < 0 || target >= w.comm().size())
      throw value_error(std::string("ember::symmetric_array::") + op + ": target rank " + std::to_string(target) +
                        " is not in a communicator of " + std::to_string(w.comm().size()) + " ranks");
    if (offset < 0 || n < 0 || offset + n > capacity())
      throw value_error(std::string("ember::symmetric_array::") + op + ": elements [" + std::to_string(offset) +
                        ", " + std::to_string(offset + n) + ") of rank " + std::to_string(target) +
                        " are outside its symmetric buffer of " + std::to_string(capacity()) + " elements");
  }
};

namespace detail {
template <class T>
const char* symmetric_dtype_name() {
  if constexpr (std::is_same_v<T, double>) return "float64";
  else if constexpr (std::is_same_v<T, float>) return "float32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else return "elements";
}
}  // namespace detail

// Collective: this rank's part of a new symmetric allocation, of shape
// `local_shape`. Every rank must ask for the same number of bytes unless
// `o.make_symmetric` (then every buffer has the largest size).
template <class T, std::size_t N>
symmetric_array<T, N> allocate_symmetric(const std::array<std::int64_t, N>& local_shape,
                                         const communicator& c = world(), const symmetric_options& o = {}) {
  auto w = std::make_unique<detail::symmetric_window>(local_shape.data(), int(N), sizeof(T),
                                                      detail::symmetric_dtype_name<T>(), c, o.make_symmetric);
  return symmetric_array<T, N>(std::move(w), local_shape);
}
// With a braced shape: allocate_symmetric<double>({3, 3}, comm, {.make_symmetric = true}).
template <class T, std::size_t N>
symmetric_array<T, N> allocate_symmetric(const std::int64_t (&local_shape)[N], const communicator& c = world(),
                                         const symmetric_options& o = {}) {
  return allocate_symmetric<T>(std::to_array(local_shape), c, o);
}

}  // namespace ember
