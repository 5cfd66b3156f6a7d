#include "kernels.hpp"

#include <cuda/std/functional>

#include "cuda/elementwise.cuh"

namespace ember::cuda::testing {
namespace {

struct fused5_op {
  const double *a, *b, *c, *d, *e;
  double* out;
  __host__ __device__ void operator()(std::int64_t i) const { out[i] = a[i] * b[i] + c[i] * d[i] - 2.0 * e[i]; }
};

struct pattern_fill {
  std::uint8_t* p;
  __host__ __device__ void operator()(std::int64_t i) const { p[i] = std::uint8_t(i % 251); }
};
struct pattern_mismatch {
  const std::uint8_t* p;
  __host__ __device__ std::int64_t operator()(std::int64_t i) const { return p[i] != std::uint8_t(i % 251) ? 1 : 0; }
};

struct product {
  const double *x, *y;
  __host__ __device__ double operator()(std::int64_t i) const { return x[i] * y[i]; }
};

}  // namespace

void fused5(std::int64_t n, const double* a, const double* b, const double* c, const double* d, const double* e,
            double* out) {
  launch_elementwise(n, fused5_op{a, b, c, d, e, out});
}

void axpy(std::int64_t n, float alpha, const float* x, float* y) {
  launch_elementwise(n, [=] __device__(std::int64_t i) { y[i] += alpha * x[i]; });
}

std::int64_t fill_and_count_mismatches(std::uint8_t* p, std::int64_t n) {
  launch_elementwise(n, pattern_fill{p});
  return transform_reduce(n, pattern_mismatch{p}, ::cuda::std::plus<std::int64_t>{}, std::int64_t(0));
}

double dot(std::int64_t n, const double* x, const double* y) {
  return transform_reduce(n, product{x, y}, ::cuda::std::plus<double>{}, 0.0);
}

}  // namespace ember::cuda::testing
