// GPU benchmarks of issue 7, on one rank and one GPU, each a ratio against a
// baseline measured in the same run:
//   1. r = a*b + c*d - 2*e over 2^28 doubles (ember's fused kernel, this file is
//      compiled by nvcc) vs a device-to-device copy: bandwidth ratio, target >= 0.80.
//   2. matmul 8192^2 (float64) through ember vs raw cublasDgemm on the same data:
//      time ratio, target <= 1.1.
//   3. QR 8192 x 8192 through ember::linalg::qr vs raw cuSOLVER geqrf + orgqr on
//      the same data: time ratio, target <= 1.1.
// and, as in Heat's talk, the speedup of each over the same ember call on the
// host (one rank; OPENBLAS_NUM_THREADS decides the CPU's BLAS threads).
// Usage: bench_gpu [log2 n for 1 (28)] [matrix size for 2 and 3 (8192)] [CPU matrix size (4096)]
// Without a GPU it prints why and exits 77.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "ember.hpp"

namespace {

#define CHECK_CUDA(x)                                                                      \
  do {                                                                                     \
    if ((x) != cudaSuccess) {                                                              \
      std::fprintf(stderr, "bench_gpu: %s failed at line %d\n", #x, __LINE__);             \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

cudaStream_t ember_stream() { return static_cast<cudaStream_t>(ember::detail::gpu_or_throw("bench").stream()); }

// Best of `reps` runs (after one warm-up), synchronizing the GPU around each.
double best_seconds(int reps, const std::function<void()>& f) {
  f();
  CHECK_CUDA(cudaDeviceSynchronize());
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    CHECK_CUDA(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    f();
    CHECK_CUDA(cudaDeviceSynchronize());
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

double host_seconds(int reps, const std::function<void()>& f) {
  f();
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void fused(std::int64_t n) {
  const ember::factory_options g{.split = 0, .device = ember::gpu};
  auto a = ember::random::rand<double>({n}, g), b = ember::random::rand<double>({n}, g),
       c = ember::random::rand<double>({n}, g), d = ember::random::rand<double>({n}, g),
       e = ember::random::rand<double>({n}, g);
  auto r = ember::empty<double>({n}, g);
  const double t_fused = best_seconds(10, [&] { r = a * b + c * d - 2.0 * e; });
  double* src = a.larray_device().data;
  double* dst = r.larray_device().data;
  const double t_copy = best_seconds(10, [&] {
    CHECK_CUDA(cudaMemcpyAsync(dst, src, std::size_t(n) * 8, cudaMemcpyDeviceToDevice, ember_stream()));
  });
  const double bw_fused = 6.0 * 8 * double(n) / t_fused, bw_copy = 2.0 * 8 * double(n) / t_copy;
  std::printf("fused a*b+c*d-2*e, n=2^%d: %.1f GB/s vs D2D copy %.1f GB/s: ratio %.3f (target >= 0.80)\n",
              int(std::log2(double(n))), bw_fused / 1e9, bw_copy / 1e9, bw_fused / bw_copy);
  // the host, at 1/16 of the size (same bytes per element)
  const std::int64_t nh = n / 16;
  auto ha = ember::random::rand<double>({nh}), hb = ember::random::rand<double>({nh}), hc = ember::random::rand<double>({nh}),
       hd = ember::random::rand<double>({nh}), he = ember::random::rand<double>({nh});
  auto hr = ember::empty<double>({nh});
  const double t_host = host_seconds(3, [&] { hr = ha * hb + hc * hd - 2.0 * he; });
  std::printf("fused on the host (one rank, n/16): %.1f GB/s; GPU speedup %.1fx\n", 6.0 * 8 * double(nh) / t_host / 1e9,
              bw_fused / (6.0 * 8 * double(nh) / t_host));
}

void matmul(std::int64_t n, std::int64_t n_cpu) {
  const ember::factory_options g{.split = 0, .device = ember::gpu};
  auto a = ember::random::randn<double>({n, n}, g);
  auto b = ember::random::randn<double>({n, n}, {.split = ember::none, .device = ember::gpu});
  auto c = ember::empty<double>({n, n}, g);
  const double t_ember = best_seconds(5, [&] { c = ember::matmul(a, b); });
  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, ember_stream());
  const double one = 1, zero = 0;
  const double* A = a.larray_device().data;
  const double* B = b.larray_device().data;
  double* C = c.larray_device().data;
  const double t_raw = best_seconds(5, [&] {
    // row-major C = A B as column-major C^T = B^T A^T
    cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, B, int(n), A, int(n), &zero, C, int(n));
  });
  cublasDestroy(h);
  const double flops = 2.0 * double(n) * double(n) * double(n);
  std::printf("matmul %lld^2 float64: ember %.3f s (%.1f TFLOP/s) vs raw cublasDgemm %.3f s: ratio %.3f (target <= 1.1)\n",
              (long long)n, t_ember, flops / t_ember / 1e12, t_raw, t_ember / t_raw);
  auto ha = ember::random::randn<double>({n_cpu, n_cpu}, {.split = 0});
  auto hb = ember::random::randn<double>({n_cpu, n_cpu});
  const double t_host = host_seconds(1, [&] { auto hc = ember::eval(ember::matmul(ha, hb)); });
  const double hflops = 2.0 * double(n_cpu) * double(n_cpu) * double(n_cpu);
  std::printf("matmul on the host (%lld^2): %.1f GFLOP/s; GPU speedup %.1fx (by flop rate)\n", (long long)n_cpu,
              hflops / t_host / 1e9, (flops / t_ember) / (hflops / t_host));
}

void qr(std::int64_t n, std::int64_t n_cpu) {
  auto a = ember::random::randn<double>({n, n}, {.split = 0, .device = ember::gpu});
  const double t_ember = best_seconds(3, [&] { auto f = ember::linalg::qr(a); });
  // raw: geqrf + orgqr on a column-major copy (the same values transposed: QR of A^T)
  cusolverDnHandle_t h;
  cusolverDnCreate(&h);
  cusolverDnSetStream(h, ember_stream());
  double *w = nullptr, *tau = nullptr, *work = nullptr;
  int* info = nullptr;
  CHECK_CUDA(cudaMalloc(&w, std::size_t(n * n) * 8));
  CHECK_CUDA(cudaMalloc(&tau, std::size_t(n) * 8));
  CHECK_CUDA(cudaMalloc(&info, sizeof(int)));
  int lw1 = 0, lw2 = 0;
  cusolverDnDgeqrf_bufferSize(h, int(n), int(n), w, int(n), &lw1);
  cusolverDnDorgqr_bufferSize(h, int(n), int(n), int(n), w, int(n), tau, &lw2);
  CHECK_CUDA(cudaMalloc(&work, std::size_t(std::max(lw1, lw2)) * 8));
  const double* A = a.larray_device().data;
  const double t_raw = best_seconds(3, [&] {
    CHECK_CUDA(cudaMemcpyAsync(w, A, std::size_t(n * n) * 8, cudaMemcpyDeviceToDevice, ember_stream()));
    cusolverDnDgeqrf(h, int(n), int(n), w, int(n), tau, work, std::max(lw1, lw2), info);
    cusolverDnDorgqr(h, int(n), int(n), int(n), w, int(n), tau, work, std::max(lw1, lw2), info);
  });
  cudaFree(w);
  cudaFree(tau);
  cudaFree(work);
  cudaFree(info);
  cusolverDnDestroy(h);
  std::printf("QR %lld x %lld float64: ember %.3f s vs raw cuSOLVER geqrf+orgqr %.3f s: ratio %.3f (target <= 1.1)\n",
              (long long)n, (long long)n, t_ember, t_raw, t_ember / t_raw);
  auto ha = ember::random::randn<double>({n_cpu, n_cpu}, {.split = 0});
  const double t_host = host_seconds(1, [&] { auto f = ember::linalg::qr(ha); });
  const double scale = std::pow(double(n) / double(n_cpu), 3);
  std::printf("QR on the host (%lld^2): %.3f s; GPU speedup %.1fx (host time scaled by (n/n_cpu)^3)\n",
              (long long)n_cpu, t_host, t_host * scale / t_ember);
}

}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  if (!ember::gpu_available()) {
    std::printf("bench_gpu: SKIPPED: %s\n", ember::detail::gpu_unavailable_reason().c_str());
    return 77;
  }
  ember::detail::require_gpu(ember::world(), "bench_gpu");
  std::printf("bench_gpu on %s\n", ember::detail::gpu_or_throw("bench").device_description().c_str());
  const int log_n = argc > 1 ? std::atoi(argv[1]) : 28;
  const std::int64_t m = argc > 2 ? std::atoll(argv[2]) : 8192;
  const std::int64_t m_cpu = argc > 3 ? std::atoll(argv[3]) : 4096;
  fused(std::int64_t(1) << log_n);
  matmul(m, m_cpu);
  qr(m, m_cpu);
  return 0;
}
