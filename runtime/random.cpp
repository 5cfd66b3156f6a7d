#include "random.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>
#include <algorithm>

namespace ember::rng {
namespace {

constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
constexpr std::uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;

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

constexpr int B = 16;  // counters per batch

// 2*B 64-bit words for counters j0 .. j0+B-1 (two words per counter).
inline void block_words(const stream& s, std::uint64_t j0, std::uint64_t* w) {
  const std::uint32_t k0 = std::uint32_t(s.seed), k1 = std::uint32_t(s.seed >> 32);
  std::uint32_t c0[B], c1[B], c2[B], c3[B];
  for (int l = 0; l < B; ++l) {
    const std::uint64_t j = j0 + std::uint64_t(l);
    c0[l] = std::uint32_t(j);
    c1[l] = std::uint32_t(j >> 32);
    c2[l] = std::uint32_t(s.call);
    c3[l] = std::uint32_t(s.call >> 32);
  }
  for (int l = 0; l < B; ++l) philox(c0[l], c1[l], c2[l], c3[l], k0, k1);
  for (int l = 0; l < B; ++l) {
    w[2 * l] = (std::uint64_t(c1[l]) << 32) | c0[l];
    w[2 * l + 1] = (std::uint64_t(c3[l]) << 32) | c2[l];
  }
}

// Uniform in [0, 1) with 53 random bits, and in (0, 1] for the logarithm.
inline double u01(std::uint64_t x) { return double(x >> 11) * 0x1.0p-53; }
inline double u01_open0(std::uint64_t x) { return (double(x >> 11) + 1.0) * 0x1.0p-53; }

// log(x) for x in (0, 1]: x = 2^e * m with m in [sqrt(1/2), sqrt(2)),
// log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.1716; the series to s^23 is below
// 1e-17 relative. Branch-free so the batch loop vectorizes.
inline double log_unit(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  std::int64_t e = std::int64_t((b >> 52) & 0x7ff) - 1023;
  std::uint64_t mb = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
  double m;
  std::memcpy(&m, &mb, 8);
  const bool big = m > 1.4142135623730951;
  m = big ? m * 0.5 : m;
  e = big ? e + 1 : e;
  const double s = (m - 1.0) / (m + 1.0), z = s * s;
  double p = 1.0 / 23;
  p = p * z + 1.0 / 21;
  p = p * z + 1.0 / 19;
  p = p * z + 1.0 / 17;
  p = p * z + 1.0 / 15;
  p = p * z + 1.0 / 13;
  p = p * z + 1.0 / 11;
  p = p * z + 1.0 / 9;
  p = p * z + 1.0 / 7;
  p = p * z + 1.0 / 5;
  p = p * z + 1.0 / 3;
  p = p * z + 1.0;
  return double(e) * 0.6931471805599453 + 2.0 * s * p;
}

// cos(2*pi*u), sin(2*pi*u) for u in [0, 1): reduce to an octant-free angle in
// [-pi/4, pi/4] via the quadrant, then Taylor series (error < 1e-16 there).
inline void sincos_turn(double u, double& c, double& s) {
  const double q = std::floor(u * 4.0 + 0.5);  // nearest quarter turn, 0..4
  const double t = (u - q * 0.25) * 6.283185307179586;
  const double t2 = t * t;
  double sp = -1.0 / 1307674368000.0;
  sp = sp * t2 + 1.0 / 6227020800.0;
  sp = sp * t2 - 1.0 / 39916800.0;
  sp = sp * t2 + 1.0 / 362880.0;
  sp = sp * t2 - 1.0 / 5040.0;
  sp = sp * t2 + 1.0 / 120.0;
  sp = sp * t2 - 1.0 / 6.0;
  const double st = t + t * t2 * sp;
  double cp = 1.0 / 20922789888000.0;
  cp = cp * t2 - 1.0 / 87178291200.0;
  cp = cp * t2 + 1.0 / 479001600.0;
  cp = cp * t2 - 1.0 / 3628800.0;
  cp = cp * t2 + 1.0 / 40320.0;
  cp = cp * t2 - 1.0 / 720.0;
  cp = cp * t2 + 1.0 / 24.0;
  cp = cp * t2 - 0.5;
  const double ct = 1.0 + t2 * cp;
  const int k = int(q) & 3;
  // rotate by k quarter turns
  c = k == 0 ? ct : k == 1 ? -st : k == 2 ? -ct : st;
  s = k == 0 ? st : k == 1 ? ct : k == 2 ? -st : -ct;
}

// Calls fn(batch_first_counter, words) over the counters covering elements
// [first, first+n) with two elements per counter, and lets `emit` copy the
// elements of the batch that fall in range.
template <class T, class Gen>
void fill_pairs(T* out, std::int64_t n, std::int64_t first, Gen gen) {
  if (n <= 0) return;
  const std::int64_t last = first + n;  // exclusive
  std::int64_t j = first / 2;
  T vals[2 * B];
  while (2 * j < last) {
    gen(std::uint64_t(j), vals);
    const std::int64_t e0 = 2 * j;
    const std::int64_t lo = std::max(e0, first), hi = std::min(e0 + 2 * B, last);
    for (std::int64_t e = lo; e < hi; ++e) out[e - first] = vals[e - e0];
    j += B;
  }
}

template <class T>
void uniform_impl(T* out, std::int64_t n, const stream& s, std::int64_t first, double lo, double hi) {
  const double scale = hi - lo;
  fill_pairs(out, n, first, [&](std::uint64_t j, T* v) {
    std::uint64_t w[2 * B];
    block_words(s, j, w);
    if constexpr (std::is_same_v<T, float>) {
      // 24 random bits: a float in [0, 1) that cannot round up to 1.
      for (int l = 0; l < 2 * B; ++l) v[l] = T(lo + scale * double(float(w[l] >> 40) * 0x1.0p-24f));
    } else {
      for (int l = 0; l < 2 * B; ++l) v[l] = T(lo + scale * u01(w[l]));
    }
  });
}

template <class T>
void normal_impl(T* out, std::int64_t n, const stream& s, std::int64_t first, double mean, double sd) {
  fill_pairs(out, n, first, [&](std::uint64_t j, T* v) {
    std::uint64_t w[2 * B];
    block_words(s, j, w);
    double r[B], c[B], sn[B];
    for (int l = 0; l < B; ++l) r[l] = std::sqrt(-2.0 * log_unit(u01_open0(w[2 * l])));
    for (int l = 0; l < B; ++l) sincos_turn(u01(w[2 * l + 1]), c[l], sn[l]);
    for (int l = 0; l < B; ++l) {
      v[2 * l] = T(mean + sd * r[l] * c[l]);
      v[2 * l + 1] = T(mean + sd * r[l] * sn[l]);
    }
  });
}

template <class T>
void randint_impl(T* out, std::int64_t n, const stream& s, std::int64_t first, std::int64_t lo, std::int64_t hi) {
  const unsigned __int128 range = (unsigned __int128)(std::uint64_t(hi - lo));
  fill_pairs(out, n, first, [&](std::uint64_t j, T* v) {
    std::uint64_t w[2 * B];
    block_words(s, j, w);
    // Multiply-shift maps 64 random bits onto the range (bias below 2^-64 * range).
    for (int l = 0; l < 2 * B; ++l) v[l] = T(lo + std::int64_t((w[l] * range) >> 64));
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
