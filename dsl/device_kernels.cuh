// Fused kernels on the GPU, for code compiled by nvcc (ember.hpp includes this
// file only then). The evaluator tree is the host kernels' own (dsl/kernel.hpp):
// the same node types, the same op functors (dsl/ops.hpp, __host__ __device__
// under nvcc), instantiated for one more place to run. A group is ONE kernel:
//
// - elementwise: a grid-stride loop over the local iteration space. When every
//   operand is laid out as the space (no broadcast axis, no strided view) element
//   i of each is at base + i: consecutive threads read consecutive elements
//   (coalesced), with no index arithmetic. Otherwise each thread decomposes its
//   index into the outer axes and reads through the operands' strides.
// - reductions: over every axis, CUB's TransformReduce over the fused values;
//   over some axes, one block per output element (grid-stride over outputs), its
//   threads striding over the reduced elements, combined with CUB's BlockReduce.
//   Argmin/argmax groups run on the host (the planner places them there).
//
// Kernels are queued on the device's ember stream (the plugin's, through
// runtime/device.hpp), the stream every other device step is ordered on.
#pragma once

#if !defined(__CUDACC__)
#error "dsl/device_kernels.cuh is for code compiled by nvcc"
#endif

#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <string>

#include "../runtime/device.hpp"
#include "../runtime/error.hpp"
#include "eval.hpp"
#include "kernel.hpp"

namespace ember::kernel::device {

inline constexpr int block_threads = 256;

inline cudaStream_t stream() {
  return static_cast<cudaStream_t>(ember::detail::gpu_or_throw("ember: a fused GPU kernel").stream());
}

inline void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw device_error(std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e), int(e));
}

// Enough blocks to fill the device a few times over; the loops stride the rest.
inline unsigned grid_for(std::int64_t n) {
  static const std::int64_t cap = std::int64_t(ember::detail::gpu_or_throw("ember: a fused GPU kernel").sm_count()) * 8;
  const std::int64_t want = (n + block_threads - 1) / block_threads;
  return unsigned(want < 1 ? 1 : want < cap ? want : cap);
}

// Row-major strides of a space.
template <int MR>
std::array<std::int64_t, space<MR>::cap> row_major(const space<MR>& sp) {
  std::array<std::int64_t, space<MR>::cap> rm{};
  std::int64_t s = 1;
  for (int d = sp.ndim - 1; d >= 0; --d) {
    rm[std::size_t(d)] = s;
    s *= sp.ext[std::size_t(d)];
  }
  return rm;
}

// The value of the fused expression at multi-index `idx` of the space.
template <int MR, class Ev>
__device__ auto value_at(Ev e, const std::int64_t* idx, int ndim) {
  e.start(idx, ndim - 1);
  return e.template at<false>(idx[ndim - 1]);
}

// idx = the multi-index of row-major position i over the axes of `sp`.
template <int MR>
__device__ void unflatten(std::int64_t i, const space<MR>& sp, std::int64_t* idx) {
  for (int d = sp.ndim - 1; d >= 0; --d) {
    const std::int64_t e = sp.ext[std::size_t(d)];
    idx[d] = i % e;
    i /= e;
  }
}

template <class Ev, class Out>
__global__ void elementwise_flat(Ev ev, Out* out, std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = Out(ev.template at<true>(i));
}

template <int MR, class Ev, class Out>
__global__ void elementwise_strided(Ev ev, Out* out, space<MR> sp, std::int64_t n) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  std::int64_t idx[space<MR>::cap];
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    unflatten(i, sp, idx);
    out[i] = Out(value_at<MR>(ev, idx, sp.ndim));
  }
}

// out (row-major over the space, device memory) = the expression.
template <int MR, class Out, class Ev>
void run_elementwise(Ev ev, Out* out, const space<MR>& sp) {
  const std::int64_t n = sp.count();
  if (n == 0) return;
  const auto rm = row_major(sp);
  if (ev.flat(rm.data(), sp.ndim)) {
    const std::array<std::int64_t, space<MR>::cap> zero{};
    ev.start(zero.data(), sp.ndim - 1);  // every row pointer at its base
    elementwise_flat<<<grid_for(n), block_threads, 0, stream()>>>(ev, out, n);
  } else {
    elementwise_strided<MR><<<grid_for(n), block_threads, 0, stream()>>>(ev, out, sp, n);
  }
  check_launch("ember: fused elementwise kernel");
}

// ---- reductions ----
template <class Op, class Acc>
struct combine_op {
  __device__ Acc operator()(const Acc& a, const Acc& b) const { return Op::combine(a, b); }
};

template <int MR, class Ev, class Acc>
struct value_of_index {
  Ev ev;
  space<MR> sp;
  bool flat;
  __device__ Acc operator()(std::int64_t i) const {
    if (flat) return Acc(ev.template at<true>(i));
    std::int64_t idx[space<MR>::cap];
    unflatten(i, sp, idx);
    return Acc(value_at<MR>(ev, idx, sp.ndim));
  }
};

// One block per output element: its threads stride over the reduced elements.
// `kept`/`reduced`: the axes of each kind (counts nk, nr), extents from sp.
template <class Op, int MR, class Ev, class Acc>
__global__ void reduce_blocks(Ev ev, Acc* out, space<MR> sp, std::array<int, space<MR>::cap> kept, int nk,
                              std::array<int, space<MR>::cap> reduced, int nr, std::int64_t nout,
                              std::int64_t per_out) {
  using block_reduce = cub::BlockReduce<Acc, block_threads>;
  __shared__ typename block_reduce::TempStorage tmp;
  std::int64_t idx[space<MR>::cap];
  for (std::int64_t o = blockIdx.x; o < nout; o += gridDim.x) {
    std::int64_t r = o;
    for (int a = nk - 1; a >= 0; --a) {
      const int d = kept[std::size_t(a)];
      idx[d] = r % sp.ext[std::size_t(d)];
      r /= sp.ext[std::size_t(d)];
    }
    Acc acc = Op::template identity<Acc>();
    for (std::int64_t k = threadIdx.x; k < per_out; k += blockDim.x) {
      std::int64_t q = k;
      for (int a = nr - 1; a >= 0; --a) {
        const int d = reduced[std::size_t(a)];
        idx[d] = q % sp.ext[std::size_t(d)];
        q /= sp.ext[std::size_t(d)];
      }
      acc = Op::combine(acc, Acc(value_at<MR>(ev, idx, sp.ndim)));
    }
    const Acc total = block_reduce(tmp).Reduce(acc, combine_op<Op, Acc>{});
    if (threadIdx.x == 0) out[o] = total;
    __syncthreads();  // tmp is reused by the next output
  }
}

// out[nout] (device memory, row-major over the kept axes) = the reduction of the
// expression over the axes marked in `red`.
template <class Op, int MR, class Acc, class Ev>
void run_reduction(Ev ev, Acc* out, const space<MR>& sp, const std::array<bool, space<MR>::cap>& red) {
  std::array<int, space<MR>::cap> kept{}, reduced{};
  int nk = 0, nr = 0;
  std::int64_t nout = 1, per_out = 1;
  for (int d = 0; d < sp.ndim; ++d) {
    if (red[std::size_t(d)]) {
      reduced[std::size_t(nr++)] = d;
      per_out *= sp.ext[std::size_t(d)];
    } else {
      kept[std::size_t(nk++)] = d;
      nout *= sp.ext[std::size_t(d)];
    }
  }
  if (nout == 0) return;
  cudaStream_t s = stream();
  auto& g = ember::detail::gpu_or_throw("ember: a fused GPU reduction");
  if (nk == 0) {
    // every axis: one CUB reduction over the fused values (no intermediate array)
    const auto rm = row_major(sp);
    const bool flat = ev.flat(rm.data(), sp.ndim);
    if (flat) {
      const std::array<std::int64_t, space<MR>::cap> zero{};
      ev.start(zero.data(), sp.ndim - 1);
    }
    thrust::counting_iterator<std::int64_t> first(0);
    const value_of_index<MR, Ev, Acc> value{ev, sp, flat};
    std::size_t temp_bytes = 0;
    auto reduce = [&](void* temp) {
      return cub::DeviceReduce::TransformReduce(temp, temp_bytes, first, out, per_out, combine_op<Op, Acc>{}, value,
                                                Op::template identity<Acc>(), s);
    };
    auto check = [](cudaError_t e, const char* what) {
      if (e != cudaSuccess)
        throw device_error(std::string("ember: fused reduction (cub::DeviceReduce::TransformReduce") + what + "): " +
                               cudaGetErrorName(e) + ": " + cudaGetErrorString(e),
                           int(e));
    };
    check(reduce(nullptr), ", workspace query");  // returns the error; it launches nothing
    auto temp = g.allocate(temp_bytes > 0 ? temp_bytes : 1);  // stream-ordered: freed after the kernel
    check(reduce(temp.get()), "");
    return;
  }
  reduce_blocks<Op, MR><<<grid_for(nout * block_threads), block_threads, 0, s>>>(ev, out, sp, kept, nk, reduced, nr,
                                                                                 nout, per_out);
  check_launch("ember: fused reduction kernel");
}

}  // namespace ember::kernel::device

namespace ember::detail {

// What executor<E, cuda_code> calls for a kernel step that the plan put on the GPU.
template <>
struct device_ops<cuda_code> {
  template <int MR, class Out, class Ev>
  static void elementwise(Ev ev, Out* out, const kernel::space<MR>& sp) {
    kernel::device::run_elementwise<MR>(ev, out, sp);
  }
  template <class Op, int MR, class Acc, class Ev>
  static void reduce(Ev ev, Acc* out, const kernel::space<MR>& sp, const std::array<bool, kernel::space<MR>::cap>& red) {
    kernel::device::run_reduction<Op, MR>(ev, out, sp, red);
  }
};

}  // namespace ember::detail
