// Device kernels for test_gpu.cpp, compiled by nvcc in kernels.cu (Catch2 stays
// out of nvcc). All queue on the current device's ember stream.
#pragma once

#include <cstdint>

namespace ember::cuda::testing {

// out[i] = a[i] * b[i] + c[i] * d[i] - 2 * e[i]: the fused expression,
// through launch_elementwise with a __host__ __device__ struct functor.
void fused5(std::int64_t n, const double* a, const double* b, const double* c, const double* d, const double* e,
            double* out);
// y[i] += alpha * x[i] with a __device__ lambda (--extended-lambda).
void axpy(std::int64_t n, float alpha, const float* x, float* y);
// p[i] = i % 251 over n bytes (n may exceed 2^31), then counts the bytes that
// differ from that pattern with transform_reduce (int64 indices end to end).
std::int64_t fill_and_count_mismatches(std::uint8_t* p, std::int64_t n);
// sum x[i] * y[i] through transform_reduce (the shape of a fused sum(a * b)).
double dot(std::int64_t n, const double* x, const double* y);

}  // namespace ember::cuda::testing
