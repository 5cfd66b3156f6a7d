// Full reductions of a device array (optional CUDA backend), through CUB's
// DeviceReduce. Plain C++ header; instantiated in reduce.cu for float, double,
// std::int32_t and std::int64_t. The synchronous forms wait for the stream and
// return the value on the host; the _async forms write *out_device in stream order.
#pragma once

#include <cstdint>
#include <type_traits>

#include "device.hpp"

namespace ember::cuda {

// NumPy's accumulator: integer sums in int64, floating sums in their own type.
template <class T>
using sum_type = std::conditional_t<std::is_integral_v<T>, std::int64_t, T>;

template <class T>
sum_type<T> reduce_sum(const T* data, std::int64_t n, stream_t s = stream());
// Minimum / maximum; n == 0 throws value_error (NumPy: "zero-size array").
template <class T>
T reduce_min(const T* data, std::int64_t n, stream_t s = stream());
template <class T>
T reduce_max(const T* data, std::int64_t n, stream_t s = stream());

template <class T>
void reduce_sum_async(const T* data, std::int64_t n, sum_type<T>* out_device, stream_t s = stream());
template <class T>
void reduce_min_async(const T* data, std::int64_t n, T* out_device, stream_t s = stream());
template <class T>
void reduce_max_async(const T* data, std::int64_t n, T* out_device, stream_t s = stream());

}  // namespace ember::cuda
