// Device loops for fused kernels (optional CUDA backend). nvcc only (.cu files).
//
//   launch_elementwise(n, f)        f(i) for every i in [0, n), one grid-stride kernel
//   transform_reduce(n, f, op, init) op-reduction of f(i) over [0, n) (CUB), result on the host
//
// f is a functor callable on the device (a struct with a __host__ __device__
// operator(), or an __device__ lambda, which needs nvcc's --extended-lambda). It is
// passed to the kernel by value: it holds device pointers and scalars, like the
// leaves of a fused expression. Indices are std::int64_t: blocks above 2^31
// elements work. The grid is sized from the kernel's occupancy (enough resident
// blocks to fill every SM once), not from n, so each thread strides over several
// elements and large arrays do not pay for launching millions of blocks.
#pragma once

#include <cstdint>
#include <memory>

#include <cuda_runtime.h>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "device.hpp"
#include "memory.hpp"

namespace ember::cuda {

namespace detail {

constexpr int elementwise_threads = 256;

template <class F>
__global__ void __launch_bounds__(elementwise_threads) elementwise_kernel(std::int64_t n, F f) {
  const std::int64_t stride = std::int64_t(blockDim.x) * gridDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) f(i);
}

// Blocks that are resident at once on the device for this kernel (computed once per
// functor type; assumes every device of the process is of the same kind).
template <class F>
int resident_blocks(int device) {
  static const int per_sm = [] {
    int b = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, elementwise_kernel<F>, elementwise_threads, 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return b > 0 ? b : 1;
  }();
  return per_sm * sm_count(device);
}

}  // namespace detail

// f(i) for i in [0, n), queued on `s` (asynchronous). A launch error (bad
// configuration, no device) throws device_error; an error inside the kernel shows
// at the next synchronization.
template <class F>
void launch_elementwise(std::int64_t n, F f, stream_t s = stream()) {
  if (n <= 0) return;
  const std::int64_t t = detail::elementwise_threads;
  const std::int64_t needed = (n + t - 1) / t;
  const std::int64_t resident = detail::resident_blocks<F>(-1);
  const int blocks = int(needed < resident ? needed : resident);
  detail::elementwise_kernel<<<blocks, int(t), 0, s>>>(n, f);
  detail::check(cudaGetLastError(), "ember::cuda::launch_elementwise");
}

// Reduces f(0), ..., f(n-1) with op (associative and commutative, e.g.
// ::cuda::std::plus<>, ::cuda::minimum<>) starting from init, into *out_device,
// asynchronously on `s`. The accumulator type is T. Temporary storage comes from
// the stream-ordered pool and is freed in stream order.
template <class T, class F, class Op>
void transform_reduce_async(std::int64_t n, F f, Op op, T init, T* out_device, stream_t s = stream()) {
  thrust::counting_iterator<std::int64_t> first(0);
  std::size_t temp_bytes = 0;
  detail::check(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, first, out_device, n, op, f, init, s),
                "cub::DeviceReduce::TransformReduce (size query)");
  auto temp = device_allocate(temp_bytes);
  detail::check(cub::DeviceReduce::TransformReduce(temp.get(), temp_bytes, first, out_device, n, op, f, init, s),
                "cub::DeviceReduce::TransformReduce");
}

// The same, synchronously, returning the result on the host.
template <class T, class F, class Op>
T transform_reduce(std::int64_t n, F f, Op op, T init, stream_t s = stream()) {
  auto out = device_allocate_n<T>(1);
  transform_reduce_async(n, f, op, init, out.get(), s);
  T r{};
  detail::check(cudaMemcpyAsync(&r, out.get(), sizeof(T), cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
  synchronize(s);
  return r;
}

}  // namespace ember::cuda
