// Compiled twice (see random_kernels.hpp): EMBER_RNG_ISA names the namespace.
#include "random_kernels.hpp"

#include <immintrin.h>

#include <cmath>
#include <cstring>

#ifndef EMBER_RNG_ISA
#error "compile with -DEMBER_RNG_ISA=base or avx2"
#endif

namespace ember::rng::kernels::EMBER_RNG_ISA {
namespace {

constexpr int B = batch;

// Philox4x32-10 over B counters. Each 32-bit word sits in a 64-bit lane so the
// 32x32->64 products are the vector unit's even-lane multiply (pmuludq).
#if defined(__AVX512F__)
using vec = __m512i;
constexpr int W = 8;
inline vec set1(std::uint64_t x) { return _mm512_set1_epi64((long long)x); }
inline vec mul_lo32(vec a, vec b) { return _mm512_mul_epu32(a, b); }
inline vec shr32(vec a) { return _mm512_srli_epi64(a, 32); }
inline vec shl32(vec a) { return _mm512_slli_epi64(a, 32); }
inline vec vand(vec a, vec b) { return _mm512_and_si512(a, b); }
inline vec vor(vec a, vec b) { return _mm512_or_si512(a, b); }
inline vec vxor(vec a, vec b) { return _mm512_xor_si512(a, b); }
inline vec load(const std::uint64_t* p) { return _mm512_loadu_si512(p); }
inline void store(std::uint64_t* p, vec v) { _mm512_storeu_si512(p, v); }
#elif defined(__AVX2__)
using vec = __m256i;
constexpr int W = 4;
inline vec set1(std::uint64_t x) { return _mm256_set1_epi64x((long long)x); }
inline vec mul_lo32(vec a, vec b) { return _mm256_mul_epu32(a, b); }
inline vec shr32(vec a) { return _mm256_srli_epi64(a, 32); }
inline vec shl32(vec a) { return _mm256_slli_epi64(a, 32); }
inline vec vand(vec a, vec b) { return _mm256_and_si256(a, b); }
inline vec vor(vec a, vec b) { return _mm256_or_si256(a, b); }
inline vec vxor(vec a, vec b) { return _mm256_xor_si256(a, b); }
inline vec load(const std::uint64_t* p) { return _mm256_loadu_si256(reinterpret_cast<const vec*>(p)); }
inline void store(std::uint64_t* p, vec v) { _mm256_storeu_si256(reinterpret_cast<vec*>(p), v); }
#else
using vec = __m128i;
constexpr int W = 2;
inline vec set1(std::uint64_t x) { return _mm_set1_epi64x((long long)x); }
inline vec mul_lo32(vec a, vec b) { return _mm_mul_epu32(a, b); }
inline vec shr32(vec a) { return _mm_srli_epi64(a, 32); }
inline vec shl32(vec a) { return _mm_slli_epi64(a, 32); }
inline vec vand(vec a, vec b) { return _mm_and_si128(a, b); }
inline vec vor(vec a, vec b) { return _mm_or_si128(a, b); }
inline vec vxor(vec a, vec b) { return _mm_xor_si128(a, b); }
inline vec load(const std::uint64_t* p) { return _mm_loadu_si128(reinterpret_cast<const vec*>(p)); }
inline void store(std::uint64_t* p, vec v) { _mm_storeu_si128(reinterpret_cast<vec*>(p), v); }
#endif

// Uniform from the top 52 bits via the exponent trick (2^52 + x) - 2^52, which
// vectorizes where a 64-bit integer conversion does not.
inline double bits_to_double(std::uint64_t x) {
  std::uint64_t b = 0x4330000000000000ull | x;  // 2^52 + x for x < 2^52
  double d;
  std::memcpy(&d, &b, 8);
  return d - 4503599627370496.0;
}
inline double u01(std::uint64_t x) { return bits_to_double(x >> 12) * 0x1.0p-52; }         // [0, 1)
inline double u01_open0(std::uint64_t x) { return (bits_to_double(x >> 12) + 1.0) * 0x1.0p-52; }  // (0, 1]

// log(x) for x in (0, 1], after fdlibm's __ieee754_log (error below 1 ulp):
// x = 2^e * m with m in [sqrt(1/2), sqrt(2)), f = m - 1, s = f / (2 + f),
// log(m) = f - hfsq + s * (hfsq + R(s^2)) with a degree-7 minimax R. The range
// reduction is integer arithmetic on the bits, not a branch, so lanes vectorize.
inline double log_unit(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  std::uint64_t mb = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;  // m in [1, 2)
  // m >= sqrt(2): halve m (exponent field - 1) and count one more in e
  const std::uint64_t big = std::uint64_t(-std::int64_t(mb > 0x3ff6a09e667f3bcdull));
  mb -= big & 0x0010000000000000ull;
  const double e = bits_to_double((b >> 52) + (big & 1)) - 1023.0;
  double m;
  std::memcpy(&m, &mb, 8);
  const double f = m - 1.0, hfsq = 0.5 * f * f, s = f / (2.0 + f), z = s * s, w = z * z;
  const double t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
  const double t2 = z * (6.666666666666735130e-01 +
                         w * (2.857142874366239149e-01 + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
  const double R = t2 + t1;
  return e * 6.93147180369123816490e-01 - ((hfsq - (s * (hfsq + R) + e * 1.90821492927058770002e-10)) - f);
}

// cos(2*pi*u), sin(2*pi*u) for u in [0, 1): the nearest quarter turn q, Taylor
// series on |t| <= pi/4 (error < 1e-16 there), then a rotation by q mod 4
// quarter turns written as arithmetic, not branches.
inline void sincos_turn(double u, double& c, double& s) {
  const std::int32_t q = std::int32_t(u * 4.0 + 0.5);  // 0..4
  const double t = (u - double(q) * 0.25) * 6.283185307179586;
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
  // odd k swaps sine and cosine; k = 1, 2 negate the cosine; k = 2, 3 the sine
  const std::int32_t k = q & 3;
  const double swap = double(k & 1);
  const double csign = 1.0 - 2.0 * double(((k + 1) >> 1) & 1);
  const double ssign = 1.0 - 2.0 * double((k >> 1) & 1);
  c = csign * (ct + swap * (st - ct));
  s = ssign * (st + swap * (ct - st));
}

}  // namespace

void words(const stream& s, std::uint64_t j0, std::uint64_t* wa, std::uint64_t* wb) {
  constexpr int V = B / W;
  const vec lo32 = set1(0xffffffffull), M0 = set1(0xD2511F53u), M1 = set1(0xCD9E8D57u);
  vec c0[V], c1[V], c2[V], c3[V];
  alignas(64) std::uint64_t js[B];
  for (int l = 0; l < B; ++l) js[l] = j0 + std::uint64_t(l);
  const vec call_lo = set1(s.call & 0xffffffffull), call_hi = set1(s.call >> 32);
  for (int v = 0; v < V; ++v) {
    const vec j = load(js + v * W);
    c0[v] = vand(j, lo32);
    c1[v] = shr32(j);
    c2[v] = call_lo;
    c3[v] = call_hi;
  }
  std::uint64_t k0 = s.seed & 0xffffffffull, k1 = s.seed >> 32;
  for (int r = 0; r < 10; ++r) {
    const vec K0 = set1(k0), K1 = set1(k1);
    for (int v = 0; v < V; ++v) {
      const vec p0 = mul_lo32(c0[v], M0), p1 = mul_lo32(c2[v], M1);
      const vec n0 = vxor(vxor(shr32(p1), c1[v]), K0);
      const vec n2 = vxor(vxor(shr32(p0), c3[v]), K1);
      c1[v] = vand(p1, lo32);
      c3[v] = vand(p0, lo32);
      c0[v] = n0;
      c2[v] = n2;
    }
    k0 = (k0 + 0x9E3779B9u) & 0xffffffffull;
    k1 = (k1 + 0xBB67AE85u) & 0xffffffffull;
  }
  for (int v = 0; v < V; ++v) {
    store(wa + v * W, vor(shl32(c1[v]), c0[v]));
    store(wb + v * W, vor(shl32(c3[v]), c2[v]));
  }
}

void uniform53(const stream& s, std::uint64_t j0, double* u) {
  alignas(64) std::uint64_t wa[B], wb[B];
  words(s, j0, wa, wb);
  for (int l = 0; l < B; ++l) {
    u[2 * l] = u01(wa[l]);
    u[2 * l + 1] = u01(wb[l]);
  }
}

void normal(const stream& s, std::uint64_t j0, double* z) {
  alignas(64) std::uint64_t wa[B], wb[B];
  words(s, j0, wa, wb);
  alignas(64) double r[B], c[B], sn[B];
  for (int l = 0; l < B; ++l) r[l] = std::sqrt(-2.0 * log_unit(u01_open0(wa[l])));
  for (int l = 0; l < B; ++l) sincos_turn(u01(wb[l]), c[l], sn[l]);
  for (int l = 0; l < B; ++l) {
    z[2 * l] = r[l] * c[l];
    z[2 * l + 1] = r[l] * sn[l];
  }
}

}  // namespace ember::rng::kernels::EMBER_RNG_ISA
