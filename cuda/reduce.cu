#include "reduce.hpp"

#include <limits>
#include <string>

#include <cub/device/device_reduce.cuh>

#include "memory.hpp"

namespace ember::cuda {
namespace {

// NumPy's min/max: a NaN anywhere makes the result NaN.
struct min_op {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return b < a ? b : a;
  }
};
struct max_op {
  template <class T>
  __host__ __device__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a < b ? b : a;
  }
};
// Adds in the accumulator type (int32 inputs are summed as int64, never as int32).
template <class Acc>
struct plus_op {
  template <class A, class B>
  __host__ __device__ Acc operator()(A a, B b) const {
    return Acc(a) + Acc(b);
  }
};

template <class T, class Out, class Op>
void reduce_async(const T* data, std::int64_t n, Out* out, Op op, Out init, stream_t s, const char* what) {
  std::size_t temp_bytes = 0;
  detail::check(cub::DeviceReduce::Reduce(nullptr, temp_bytes, data, out, n, op, init, s), what);
  auto temp = device_allocate(temp_bytes);
  detail::check(cub::DeviceReduce::Reduce(temp.get(), temp_bytes, data, out, n, op, init, s), what);
}

template <class Out>
Out fetch(const Out* out_device, stream_t s) {
  Out r{};
  detail::check(cudaMemcpyAsync(&r, out_device, sizeof(Out), cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
  synchronize(s);
  return r;
}

void check_nonempty(std::int64_t n, const char* what) {
  if (n <= 0)
    throw value_error(std::string(what) + ": zero-size array to reduction operation which has no identity");
}

template <class T>
T lowest() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                              : std::numeric_limits<T>::lowest();
}
template <class T>
T highest() {
  return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
}

}  // namespace

template <class T>
void reduce_sum_async(const T* data, std::int64_t n, sum_type<T>* out, stream_t s) {
  reduce_async(data, n > 0 ? n : 0, out, plus_op<sum_type<T>>{}, sum_type<T>(0), s, "ember::cuda::reduce_sum");
}
template <class T>
void reduce_min_async(const T* data, std::int64_t n, T* out, stream_t s) {
  check_nonempty(n, "ember::cuda::reduce_min");
  reduce_async(data, n, out, min_op{}, highest<T>(), s, "ember::cuda::reduce_min");
}
template <class T>
void reduce_max_async(const T* data, std::int64_t n, T* out, stream_t s) {
  check_nonempty(n, "ember::cuda::reduce_max");
  reduce_async(data, n, out, max_op{}, lowest<T>(), s, "ember::cuda::reduce_max");
}

template <class T>
sum_type<T> reduce_sum(const T* data, std::int64_t n, stream_t s) {
  auto out = device_allocate_n<sum_type<T>>(1);
  reduce_sum_async(data, n, out.get(), s);
  return fetch(out.get(), s);
}
template <class T>
T reduce_min(const T* data, std::int64_t n, stream_t s) {
  check_nonempty(n, "ember::cuda::reduce_min");
  auto out = device_allocate_n<T>(1);
  reduce_min_async(data, n, out.get(), s);
  return fetch(out.get(), s);
}
template <class T>
T reduce_max(const T* data, std::int64_t n, stream_t s) {
  check_nonempty(n, "ember::cuda::reduce_max");
  auto out = device_allocate_n<T>(1);
  reduce_max_async(data, n, out.get(), s);
  return fetch(out.get(), s);
}

#define EMBER_CUDA_REDUCE(T)                                                          \
  template sum_type<T> reduce_sum<T>(const T*, std::int64_t, stream_t);              \
  template T reduce_min<T>(const T*, std::int64_t, stream_t);                         \
  template T reduce_max<T>(const T*, std::int64_t, stream_t);                         \
  template void reduce_sum_async<T>(const T*, std::int64_t, sum_type<T>*, stream_t); \
  template void reduce_min_async<T>(const T*, std::int64_t, T*, stream_t);            \
  template void reduce_max_async<T>(const T*, std::int64_t, T*, stream_t);
EMBER_CUDA_REDUCE(float)
EMBER_CUDA_REDUCE(double)
EMBER_CUDA_REDUCE(std::int32_t)
EMBER_CUDA_REDUCE(std::int64_t)
#undef EMBER_CUDA_REDUCE

}  // namespace ember::cuda
