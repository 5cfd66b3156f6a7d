#include "random.hpp"

#include <cstdlib>

#include "random_kernels.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>
#include <algorithm>

namespace ember::rng {
namespace {

constexpr std::uint64_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
constexpr std::uint64_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;

// One Philox4x32-10 block; written on plain integers so the batch loops below
// vectorize.
inline void philox(std::uint32_t& c0, std::uint32_t& c1, std::uint32_t& c2, std::uint32_t& c3, std::uint32_t k0,
                   std::uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    const std::uint64_t p0 = std::uint64_t(M0) * c0;
    const std::uint64_t p1 = std::uint64_t(M1) * c2;
    const std::uint32_t n0 = std::uint32_t(p1 >> 32) ^ c1 ^ k0;
    const std::uint32_t n1 = std::uint32_t(p1);
    const std::uint32_t n2 = std::uint32_t(p0 >> 32) ^ c3 ^ k1;
    const std::uint32_t n3 = std::uint32_t(p0);
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += W0;
    k1 += W1;
  }
}

constexpr int B = kernels::batch;

// The widest kernel this CPU runs; both give bit-identical values.
struct kernel_set {
  void (*words)(const stream&, std::uint64_t, std::uint64_t*, std::uint64_t*);
  void (*uniform53)(const stream&, std::uint64_t, double*);
  void (*normal)(const stream&, std::uint64_t, double*);
};
const kernel_set& active() {
  static const kernel_set k = [] {
    __builtin_cpu_init();
    const bool baseline = std::getenv("EMBER_RNG_BASELINE") != nullptr;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && !baseline)
      return kernel_set{kernels::avx512::words, kernels::avx512::uniform53, kernels::avx512::normal};
    if (__builtin_cpu_supports("avx2") && !baseline)
      return kernel_set{kernels::avx2::words, kernels::avx2::uniform53, kernels::avx2::normal};
    return kernel_set{kernels::base::words, kernels::base::uniform53, kernels::base::normal};
  }();
  return k;
}

template <class T, class Gen>
void fill_pairs(T* out, std::int64_t n, std::int64_t first, Gen gen) {
  if (n <= 0) return;
  const std::int64_t last = first + n;  // exclusive
  std::int64_t j = first / 2;
  alignas(64) T vals[2 * B];
  while (2 * j < last) {
    const std::int64_t e0 = 2 * j;
    if (e0 >= first && e0 + 2 * B <= last) {
      gen(std::uint64_t(j), out + (e0 - first));  // a whole batch: straight into place
    } else {
      gen(std::uint64_t(j), vals);
      const std::int64_t lo = std::max(e0, first), hi = std::min(e0 + 2 * B, last);
      for (std::int64_t e = lo; e < hi; ++e) out[e - first] = vals[e - e0];
    }
    j += B;
  }
}

template <class T>
void uniform_impl(T* out, std::int64_t n, const stream& s, std::int64_t first, double lo, double hi) {
  const double scale = hi - lo;
  fill_pairs(out, n, first, [&](std::uint64_t j, T* v) {
    alignas(64) double u[2 * B];
    if constexpr (std::is_same_v<T, float>) {
      // 24 random bits: a float in [0, 1) that cannot round up to 1.
      alignas(64) std::uint64_t wa[B], wb[B];
      active().words(s, j, wa, wb);
      for (int l = 0; l < B; ++l) {
        u[2 * l] = double(std::int32_t(wa[l] >> 40)) * 0x1.0p-24;
        u[2 * l + 1] = double(std::int32_t(wb[l] >> 40)) * 0x1.0p-24;
      }
    } else {
      active().uniform53(s, j, u);
    }
    for (int l = 0; l < 2 * B; ++l) v[l] = T(lo + scale * u[l]);
  });
}

template <class T>
void normal_impl(T* out, std::int64_t n, const stream& s, std::int64_t first, double mean, double sd) {
  fill_pairs(out, n, first, [&](std::uint64_t j, T* v) {
    if constexpr (std::is_same_v<T, double>) {
      active().normal(s, j, v);
      if (mean != 0.0 || sd != 1.0)
        for (int l = 0; l < 2 * B; ++l) v[l] = mean + sd * v[l];
    } else {
      alignas(64) double z[2 * B];
      active().normal(s, j, z);
      for (int l = 0; l < 2 * B; ++l) v[l] = T(mean + sd * z[l]);
    }
  });
}

template <class T>
void randint_impl(T* out, std::int64_t n, const stream& s, std::int64_t first, std::int64_t lo, std::int64_t hi) {
  const unsigned __int128 range = (unsigned __int128)(std::uint64_t(hi - lo));
  fill_pairs(out, n, first, [&](std::uint64_t j, T* v) {
    alignas(64) std::uint64_t wa[B], wb[B];
    active().words(s, j, wa, wb);
    // Multiply-shift maps 64 random bits onto the range (bias below 2^-64 * range).
    for (int l = 0; l < B; ++l) {
      v[2 * l] = T(lo + std::int64_t((wa[l] * range) >> 64));
      v[2 * l + 1] = T(lo + std::int64_t((wb[l] * range) >> 64));
    }
  });
}

}  // namespace

void philox4x32(const std::uint32_t ctr[4], const std::uint32_t key[2], std::uint32_t out[4]) {
  std::uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  philox(c0, c1, c2, c3, key[0], key[1]);
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

void fill_uniform(double* o, std::int64_t n, const stream& s, std::int64_t f, double lo, double hi) {
  uniform_impl(o, n, s, f, lo, hi);
}
void fill_uniform(float* o, std::int64_t n, const stream& s, std::int64_t f, float lo, float hi) {
  uniform_impl(o, n, s, f, lo, hi);
}
void fill_normal(double* o, std::int64_t n, const stream& s, std::int64_t f, double m, double sd) {
  normal_impl(o, n, s, f, m, sd);
}
void fill_normal(float* o, std::int64_t n, const stream& s, std::int64_t f, float m, float sd) {
  normal_impl(o, n, s, f, m, sd);
}
void fill_randint(std::int64_t* o, std::int64_t n, const stream& s, std::int64_t f, std::int64_t lo, std::int64_t hi) {
  randint_impl(o, n, s, f, lo, hi);
}
void fill_randint(std::int32_t* o, std::int64_t n, const stream& s, std::int64_t f, std::int64_t lo, std::int64_t hi) {
  randint_impl(o, n, s, f, lo, hi);
}

}  // namespace ember::rng
