// Box-to-box redistribution of local blocks, as nvmath's distributed reshape
// (shared/seeds/nvmath-distributed-utilities.txt): each rank holds one box
// [lo, hi) of a global array, row-major in its local buffer, and asks for another
// box of the same global array.
//
//   ember::box<2> in{{0, 2}, {4, 4}}, out{{2, 0}, {4, 4}};
//   std::vector<double> b = ember::reshape_boxes(a, in, out);   // this rank's block of `out`
//
// It is a thin public face of the exchange engine (runtime/exchange.hpp): one
// allgather tells every rank every box, the input and output boxes are checked
// to tile the same global box exactly (no overlap, no hole; an ember::error naming
// the ranks and boxes on every rank otherwise), both tilings become a
// `box_distribution` and the engine moves the data, sending each rank exactly
// the intersections it needs.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "communicator.hpp"
#include "exchange.hpp"
#include "layout.hpp"

namespace ember {

// A half-open box [lo, hi) of an N-dimensional global index space.
template <std::size_t N>
struct box {
  static_assert(N >= 1, "ember::box: at least one dimension");
  std::array<std::int64_t, N> lo{}, hi{};

  std::array<std::int64_t, N> shape() const {
    std::array<std::int64_t, N> s;
    for (std::size_t d = 0; d < N; ++d) s[d] = hi[d] - lo[d];
    return s;
  }
  std::int64_t volume() const {  // 0 when empty, whatever the other extents
    for (std::size_t d = 0; d < N; ++d)
      if (hi[d] <= lo[d]) return 0;
    std::int64_t v = 1;
    for (std::size_t d = 0; d < N; ++d) v *= hi[d] - lo[d];
    return v;
  }
  box_nd to_nd() const { return box_nd{index_vec(lo.begin(), lo.end()), index_vec(hi.begin(), hi.end())}; }
  friend bool operator==(const box&, const box&) = default;
};
template <std::size_t N>
box(std::array<std::int64_t, N>, std::array<std::int64_t, N>) -> box<N>;

// "[(0, 2), (4, 4))"
std::string box_str(const box_nd& b);

// One box per rank, each stored row-major (and alone) in that rank's buffer.
// Boxes are in the coordinates of the distribution (the global box starts at 0).
// The constructor checks that they tile [0, shape) exactly (empty boxes may sit
// anywhere) and throws ember::error otherwise, as check_box_tilings does.
class box_distribution final : public distribution {
 public:
  box_distribution(index_vec shape, std::vector<box_nd> boxes);
  const index_vec& shape() const override { return shape_; }
  int nranks() const override { return int(boxes_.size()); }
  bool replicated() const override { return false; }
  std::vector<piece> pieces(int rank) const override;
  std::int64_t local_size(int rank) const override { return boxes_[std::size_t(rank)].volume(); }
  const box_nd& box_of(int rank) const { return boxes_[std::size_t(rank)]; }

 private:
  index_vec shape_;
  std::vector<box_nd> boxes_;
};

// Checks that `in` and `out` (one box per rank: as many of each, all of one
// dimension >= 1) each tile the same global box exactly, and that no box (nor the
// global box) holds more than 2^63 - 1 elements; returns that box (all zeros when
// every box is empty). Pure (no MPI): every rank that calls it with the same boxes
// throws the same ember::error, naming the ranks and boxes.
box_nd check_box_tilings(const std::vector<box_nd>& in, const std::vector<box_nd>& out);

// The stateful form (nvmath's Reshape class): the allgather, the checks and the
// schedule once; run() as often as needed. Collective construction.
class box_reshape {
 public:
  // What this rank passes, checked against its input box on every rank (a
  // mismatch throws everywhere): `local_count` elements (-1: not checked) or, for
  // a tensor, `local_shape` (empty: not checked).
  box_reshape(const box_nd& in, const box_nd& out, std::size_t elem_size, const communicator& c = world(),
              std::int64_t local_count = -1, const index_vec& local_shape = {});

  const box_nd& global_box() const { return global_; }
  const std::vector<box_nd>& in_boxes() const { return in_; }    // every rank's, as given
  const std::vector<box_nd>& out_boxes() const { return out_; }
  // This rank's schedule: predicted() is exactly what run() adds to the counters.
  const exchange& schedule() const { return *ex_; }
  traffic predicted() const { return ex_->predicted(); }
  std::int64_t in_size() const;   // elements of this rank's input block
  std::int64_t out_size() const;  // elements of this rank's output block

  // Collective. `in` holds this rank's input box row-major, `out` receives its
  // output box row-major (out_size() elements; must not overlap `in`).
  void run(const void* in, void* out) const;

 private:
  communicator comm_;
  std::vector<box_nd> in_, out_;
  box_nd global_;
  std::unique_ptr<box_distribution> src_, dst_;
  std::unique_ptr<exchange> ex_;
};

// This rank's block of the output distribution: `local` is this rank's input
// box, row-major. Any N >= 1, any trivially copyable T.
template <class T, std::size_t E, std::size_t N>
std::vector<std::remove_const_t<T>> reshape_boxes(std::span<T, E> local, const box<N>& in, const box<N>& out,
                                                  const communicator& c = world()) {
  using U = std::remove_const_t<T>;
  static_assert(std::is_trivially_copyable_v<U>, "ember::reshape_boxes: elements must be trivially copyable");
  box_reshape r(in.to_nd(), out.to_nd(), sizeof(U), c, std::int64_t(local.size()));
  std::vector<U> result(std::size_t(r.out_size()));
  r.run(local.data(), result.data());
  return result;
}
template <class T, class A, std::size_t N>
std::vector<T> reshape_boxes(const std::vector<T, A>& local, const box<N>& in, const box<N>& out,
                             const communicator& c = world()) {
  return reshape_boxes(std::span<const T>(local), in, out, c);
}

// Eigen overloads: templates for user code. The library's own sources are
// compiled without Eigen on the include path, and never need them.
#if __has_include(<unsupported/Eigen/CXX11/Tensor>)
}  // namespace ember
#include "eigen_tensor.hpp"
namespace ember {
namespace detail {
template <class T, std::size_t N>
Eigen::Tensor<T, int(N), Eigen::RowMajor> reshape_tensor(const T* data, const std::int64_t* dims, const box<N>& in,
                                                          const box<N>& out, const communicator& c) {
  box_reshape r(in.to_nd(), out.to_nd(), sizeof(T), c, -1, index_vec(dims, dims + N));
  Eigen::array<Eigen::Index, N> od;
  for (std::size_t d = 0; d < N; ++d) {  // an empty box may have any other extents
    std::int64_t e;
    od[d] = Eigen::Index(__builtin_sub_overflow(out.hi[d], out.lo[d], &e) || e < 0 ? 0 : e);
  }
  Eigen::Tensor<T, int(N), Eigen::RowMajor> result(od);
  r.run(data, result.data());
  return result;
}
}  // namespace detail

// Row-major Eigen tensors (or maps, e.g. a dndarray's larray()) of the input
// box's shape; the result has the output box's shape.
template <class T, int NT, std::size_t N>
  requires(NT == int(N))
Eigen::Tensor<T, NT, Eigen::RowMajor> reshape_boxes(const Eigen::Tensor<T, NT, Eigen::RowMajor>& local,
                                                    const box<N>& in, const box<N>& out,
                                                    const communicator& c = world()) {
  std::array<std::int64_t, N> d;
  for (std::size_t i = 0; i < N; ++i) d[i] = local.dimension(int(i));
  return detail::reshape_tensor<T, N>(local.data(), d.data(), in, out, c);
}
template <class T, int NT, std::size_t N>
  requires(NT == int(N))
Eigen::Tensor<std::remove_const_t<T>, NT, Eigen::RowMajor> reshape_boxes(
    const Eigen::TensorMap<Eigen::Tensor<T, NT, Eigen::RowMajor>>& local, const box<N>& in, const box<N>& out,
    const communicator& c = world()) {
  std::array<std::int64_t, N> d;
  for (std::size_t i = 0; i < N; ++i) d[i] = local.dimension(int(i));
  return detail::reshape_tensor<std::remove_const_t<T>, N>(local.data(), d.data(), in, out, c);
}

#endif

}  // namespace ember
