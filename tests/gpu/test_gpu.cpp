// Unit tests of the CUDA backend (cuda/) against CPU references. No MPI.
//
// [gpu] cases need a device of compute capability >= 9.0 (this build's code is
// sm_90 + compute_90 PTX). [nodevice] cases check the behaviour without one
// (device_count() == 0, every entry point throws device_error, argument checks
// that come before any CUDA call). main.cpp runs one set or the other.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda/blas.hpp"
#include "cuda/copy.hpp"
#include "cuda/device.hpp"
#include "cuda/memory.hpp"
#include "cuda/reduce.hpp"
#include "cuda/solver.hpp"
#include "runtime/lapack.hpp"
#include "tests/gpu/kernels.hpp"

namespace cu = ember::cuda;
using std::int64_t;

namespace {

template <class T>
std::vector<T> random_vector(int64_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<T> v(static_cast<std::size_t>(n > 0 ? n : 0));
  if constexpr (std::is_floating_point_v<T>) {
    std::normal_distribution<T> d(0, 1);
    for (auto& x : v) x = d(g);
  } else {
    std::uniform_int_distribution<T> d(-1000000, 1000000);
    for (auto& x : v) x = d(g);
  }
  return v;
}

template <class T>
std::shared_ptr<T[]> upload(const std::vector<T>& h) {
  auto d = cu::device_allocate_n<T>(int64_t(h.size()));
  cu::copy_to_device(d.get(), h.data(), h.size() * sizeof(T));
  return d;
}

template <class T>
std::vector<T> download(const T* d, int64_t n) {
  std::vector<T> h(static_cast<std::size_t>(n > 0 ? n : 0));
  cu::copy_to_host(h.data(), d, h.size() * sizeof(T));
  return h;
}

template <class T>
double eps() {
  return double(std::numeric_limits<T>::epsilon());
}

// max |a - b| / (max |b| + tiny)
template <class T>
double rel_diff(const std::vector<T>& a, const std::vector<T>& b) {
  REQUIRE(a.size() == b.size());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::abs(double(a[i]) - double(b[i])));
    den = std::max(den, std::abs(double(b[i])));
  }
  return num / (den + 1e-300);
}

// Column-major helpers (ld = rows unless given).
template <class T>
std::vector<T> naive_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const std::vector<T>& a, int64_t lda,
                          const std::vector<T>& b, int64_t ldb) {
  std::vector<T> c(static_cast<std::size_t>(m * n));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = ta ? a[std::size_t(p + i * lda)] : a[std::size_t(i + p * lda)];
        const double y = tb ? b[std::size_t(j + p * ldb)] : b[std::size_t(p + j * ldb)];
        s += x * y;
      }
      c[std::size_t(i + j * m)] = T(s);
    }
  return c;
}

// || Q^T Q - I ||_max for column-major Q (m x n, ld m).
template <class T>
double orthogonality(const std::vector<T>& q, int64_t m, int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < m; ++p) s += double(q[std::size_t(p + i * m)]) * double(q[std::size_t(p + j * m)]);
      worst = std::max(worst, std::abs(s - (i == j ? 1.0 : 0.0)));
    }
  return worst;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

// ============================================================================
// Without a device
// ============================================================================

TEST_CASE("no device: device_count is 0 and the reason is CUDA's error", "[nodevice]") {
  REQUIRE(cu::device_count() == 0);
  const std::string why = cu::no_device_reason();
  INFO(why);
  REQUIRE(!why.empty());
  REQUIRE(contains(why, "cuda"));  // "cudaErrorInsufficientDriver: ...", "cudaErrorNoDevice: ..."
}

TEST_CASE("no device: every entry point throws device_error, an ember::error", "[nodevice]") {
  auto no_device = [](auto&& f) {
    try {
      f();
      FAIL("no exception");
    } catch (const cu::device_error& e) {
      INFO(e.what());
      CHECK(contains(e.what(), "no CUDA device"));
      CHECK(e.code() != 0);
      const ember::error& base = e;  // catchable as ember::error
      CHECK(std::string(base.what()) == e.what());
    }
  };
  no_device([] { cu::device_allocate(1 << 20); });
  no_device([] { cu::device_allocate_n<double>(10); });
  no_device([] { cu::pinned_allocate(1 << 20); });
  no_device([] { cu::stream(); });
  no_device([] { cu::current_device(); });
  no_device([] { cu::properties(0); });
  no_device([] { cu::device_pool(); });
  no_device([] { cu::testing::fused5(1, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr); });
  no_device([] { cu::reduce_sum<double>(nullptr, 10, nullptr); });
  no_device([] { cu::blas::gemm<double>(false, false, 2, 2, 2, 1.0, nullptr, 2, nullptr, 2, 0.0, nullptr, 2, nullptr); });
  no_device([] { cu::solver::geqrf<float>(4, 2, nullptr, 4, nullptr, nullptr); });
}

TEST_CASE("no device: argument checks come before any CUDA call", "[nodevice]") {
  using Catch::Matchers::Contains;
  // An explicit (null) stream: the default argument would ask for the device's stream.
  cu::stream_t s = nullptr;
  REQUIRE_THROWS_WITH(cu::blas::gemm<double>(false, false, 4, 3, 2, 1.0, nullptr, 3, nullptr, 2, 0.0, nullptr, 4, s),
                      Contains("lda = 3 is less than 4"));
  REQUIRE_THROWS_WITH(
      cu::blas::gemm_row_major<double>(false, true, 4, 3, 2, 1.0, nullptr, 2, nullptr, 1, 0.0, nullptr, 3, s),
      Contains("ldb = 1 is less than 2"));
  REQUIRE_THROWS_AS(cu::blas::transpose<float>(3, 2, nullptr, 2, nullptr, 2, s), ember::value_error);
  REQUIRE_THROWS_WITH(cu::solver::geqrf<double>(5, 3, nullptr, 4, nullptr, s),
                      Contains("argument 4 (lda = 4) is less than 5"));
  REQUIRE_THROWS_WITH(cu::solver::orgqr<double>(5, 6, 3, nullptr, 5, nullptr, s), Contains("exceeds m = 5"));
  REQUIRE_THROWS_WITH(cu::solver::gesvd<double>('A', 5, 3, nullptr, 5, nullptr, nullptr, 5, nullptr, 3, s),
                      Contains("must be 'S' or 'N'"));
  REQUIRE_THROWS_WITH(cu::solver::syevd<float>('V', 'X', 3, nullptr, 3, nullptr, s), Contains("must be 'U' or 'L'"));
  REQUIRE_THROWS_WITH(cu::solver::geqrf<double>(int64_t(1) << 32, 3, nullptr, int64_t(1) << 32, nullptr, s),
                      Contains("exceeds cuSOLVER's int range"));
  REQUIRE_THROWS_AS(cu::reduce_min<double>(nullptr, 0, s), ember::value_error);
}

// ============================================================================
// With a device
// ============================================================================

TEST_CASE("device discovery, stream and device_guard", "[gpu]") {
  REQUIRE(cu::device_count() >= 1);
  REQUIRE(cu::no_device_reason().empty());
  const auto p = cu::properties(0);
  INFO(p.name << " cc " << p.cc_major << "." << p.cc_minor << ", " << p.sm_count << " SMs, " << p.total_memory
              << " bytes");
  CHECK(p.sm_count > 0);
  CHECK(p.total_memory > 0);
  CHECK(cu::sm_count(0) == p.sm_count);
  cu::stream_t s = cu::stream(0);
  CHECK(s != nullptr);
  CHECK(cu::stream(0) == s);  // one stream per device
  CHECK(cu::stream() == cu::stream(cu::current_device()));
  {
    cu::device_guard g(cu::device_count() - 1);
    CHECK(cu::current_device() == cu::device_count() - 1);
  }
  CHECK(cu::current_device() == 0);
  CHECK_THROWS_AS(cu::properties(cu::device_count()), ember::value_error);
  cu::synchronize(s);
}

TEST_CASE("stream-ordered pool: counters, reuse, threshold, trim", "[gpu]") {
  const auto before = cu::device_pool();
  const std::size_t bytes = std::size_t(64) << 20;
  {
    auto a = cu::device_allocate(bytes);
    REQUIRE(a.get() != nullptr);
    const auto during = cu::device_pool();
    CHECK(during.live_bytes == before.live_bytes + int64_t(bytes));
    CHECK(during.count == before.count + 1);
    CHECK(during.used_bytes >= bytes);
    CHECK(during.reserved_bytes >= bytes);
  }
  cu::synchronize(cu::stream());
  const auto after = cu::device_pool();
  CHECK(after.live_bytes == before.live_bytes);
  CHECK(after.peak_live_bytes >= int64_t(bytes));
  // Freed memory stays reserved (threshold UINT64_MAX) and is reused: no growth.
  const auto reserved = after.reserved_bytes;
  {
    auto b = cu::device_allocate(bytes);
    CHECK(cu::device_pool().reserved_bytes == reserved);
  }
  cu::synchronize(cu::stream());
  cu::trim_pool(0);
  CHECK(cu::device_pool().reserved_bytes < reserved);
  // Zero bytes: a null block, no counters touched.
  auto z = cu::device_allocate(0);
  CHECK(z.get() == nullptr);
  // Typed blocks and a usable block after a threshold change.
  cu::set_release_threshold(std::uint64_t(256) << 20);
  auto t = cu::device_allocate_n<double>(1000);
  std::vector<double> h(1000, 3.5);
  cu::copy_to_device(t.get(), h.data(), 1000 * sizeof(double));
  CHECK(download(t.get(), 1000) == h);
  cu::set_release_threshold(std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("device_allocate: an impossible size is a device_error naming it", "[gpu]") {
  const std::size_t huge = cu::properties(0).total_memory * 4;
  try {
    cu::device_allocate(huge);
    FAIL("no exception");
  } catch (const cu::device_error& e) {
    INFO(e.what());
    CHECK(contains(e.what(), std::to_string(huge) + " bytes"));
  }
}

TEST_CASE("pinned staging buffers are cached by size class", "[gpu]") {
  cu::trim_pinned_cache();
  const auto s0 = cu::pinned_cache();
  void* first = nullptr;
  {
    auto a = cu::pinned_allocate(100000);  // class 128 KiB
    first = a.get();
    REQUIRE(first != nullptr);
    std::fill_n(static_cast<char*>(a.get()), 100000, 7);  // host-writable
    CHECK(cu::pinned_cache().live_bytes == s0.live_bytes + (128 << 10));
  }
  CHECK(cu::pinned_cache().cached_bytes == s0.cached_bytes + (128 << 10));
  {
    auto b = cu::pinned_allocate(131072);  // same class: the same buffer again
    CHECK(b.get() == first);
    CHECK(cu::pinned_cache().hits == s0.hits + 1);
  }
  cu::trim_pinned_cache();
  CHECK(cu::pinned_cache().cached_bytes == 0);
}

TEST_CASE("copies: host <-> device <-> device round trip", "[gpu]") {
  for (int64_t n : {int64_t(1), int64_t(1000), int64_t(1) << 22}) {
    auto h = random_vector<double>(n, 11 + std::uint64_t(n));
    auto d1 = upload(h);
    auto d2 = cu::device_allocate_n<double>(n);
    cu::copy_device_async(d2.get(), d1.get(), std::size_t(n) * sizeof(double));
    auto d3 = cu::device_allocate_n<double>(n);
    cu::copy_async(d3.get(), d2.get(), std::size_t(n) * sizeof(double));  // direction from the pointers
    // pinned destination, asynchronous
    auto pin = cu::pinned_allocate(std::size_t(n) * sizeof(double));
    cu::copy_to_host_async(pin.get(), d3.get(), std::size_t(n) * sizeof(double));
    cu::synchronize(cu::stream());
    const double* p = static_cast<const double*>(pin.get());
    CHECK(std::equal(h.begin(), h.end(), p));
  }
}

TEST_CASE("staged copies through two pinned chunks", "[gpu]") {
  const int64_t n = (int64_t(1) << 20) + 3;  // bytes, not a multiple of any chunk
  std::vector<std::uint8_t> h(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = std::uint8_t((i * 7 + 3) % 256);
  auto d = upload(h);
  for (std::size_t chunk : {std::size_t(1000), std::size_t(1) << 16, std::size_t(n), std::size_t(n) * 2}) {
    INFO("chunk " << chunk);
    // download: chunks arrive in order and cover everything once
    std::vector<std::uint8_t> got;
    std::size_t expect_off = 0, calls = 0;
    cu::staged_download(d.get(), std::size_t(n), chunk, [&](const void* c, std::size_t off, std::size_t len) {
      CHECK(off == expect_off);
      CHECK(len == std::min(chunk, std::size_t(n) - off));
      const auto* b = static_cast<const std::uint8_t*>(c);
      got.insert(got.end(), b, b + len);
      expect_off += len;
      ++calls;
    });
    CHECK(calls == (std::size_t(n) + chunk - 1) / chunk);
    CHECK(got == h);
    // upload: the producer fills each chunk, the device gets the whole
    auto back = cu::device_allocate_n<std::uint8_t>(n);
    cu::staged_upload(back.get(), std::size_t(n), chunk, [&](void* c, std::size_t off, std::size_t len) {
      std::copy_n(h.data() + off, len, static_cast<std::uint8_t*>(c));
    });
    CHECK(download(back.get(), n) == h);
  }
  // A consumer that throws: the exception propagates, the buffers are waited for.
  CHECK_THROWS_AS(cu::staged_download(d.get(), std::size_t(n), 4096,
                                      [&](const void*, std::size_t off, std::size_t) {
                                        if (off >= 3 * 4096) throw std::runtime_error("consumer failed");
                                      }),
                  std::runtime_error);
  CHECK_THROWS_AS(cu::staged_download(d.get(), 10, 0, [](const void*, std::size_t, std::size_t) {}),
                  ember::value_error);
}

TEST_CASE("launch_elementwise: the fused a*b + c*d - 2*e against the CPU", "[gpu]") {
  for (int64_t n : {int64_t(1), int64_t(255), int64_t(257), (int64_t(1) << 20) + 7}) {
    INFO("n = " << n);
    std::vector<std::vector<double>> in;
    for (int k = 0; k < 5; ++k) in.push_back(random_vector<double>(n, 100 + std::uint64_t(k)));
    std::vector<std::shared_ptr<double[]>> d;
    for (auto& v : in) d.push_back(upload(v));
    auto out = cu::device_allocate_n<double>(n);
    cu::testing::fused5(n, d[0].get(), d[1].get(), d[2].get(), d[3].get(), d[4].get(), out.get());
    auto got = download(out.get(), n);
    std::vector<double> want(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < want.size(); ++i)
      want[i] = in[0][i] * in[1][i] + in[2][i] * in[3][i] - 2.0 * in[4][i];
    // nvcc contracts to FMA: a few ulps, not bitwise
    CHECK(rel_diff(got, want) < 1e-14);
  }
}

TEST_CASE("launch_elementwise: a __device__ lambda", "[gpu]") {
  const int64_t n = 100003;
  auto x = random_vector<float>(n, 5), y = random_vector<float>(n, 6);
  auto dx = upload(x), dy = upload(y);
  cu::testing::axpy(n, 0.5f, dx.get(), dy.get());
  auto got = download(dy.get(), n);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += 0.5f * x[i];
  CHECK(rel_diff(got, y) < 4 * eps<float>());
}

TEST_CASE("launch_elementwise and transform_reduce with 64-bit indices (2^31 + 17 bytes)", "[gpu]") {
  const int64_t n = (int64_t(1) << 31) + 17;
  auto p = cu::device_allocate_n<std::uint8_t>(n);
  CHECK(cu::testing::fill_and_count_mismatches(p.get(), n) == 0);
  std::uint8_t tail[17];
  cu::copy_to_host(tail, p.get() + (n - 17), 17);
  for (int64_t i = 0; i < 17; ++i) CHECK(int(tail[i]) == int((n - 17 + i) % 251));
}

TEST_CASE("transform_reduce: a fused dot product", "[gpu]") {
  const int64_t n = (int64_t(1) << 20) + 11;
  auto x = random_vector<double>(n, 7), y = random_vector<double>(n, 8);
  auto dx = upload(x), dy = upload(y);
  double want = 0, mag = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    want += x[i] * y[i];
    mag += std::abs(x[i] * y[i]);
  }
  CHECK(std::abs(cu::testing::dot(n, dx.get(), dy.get()) - want) <= 1e-13 * mag);
}

TEMPLATE_TEST_CASE("reductions: sum, min, max against the CPU", "[gpu]", float, double, std::int32_t, std::int64_t) {
  using T = TestType;
  for (int64_t n : {int64_t(1), int64_t(1000), (int64_t(1) << 20) + 3}) {
    INFO("n = " << n);
    auto h = random_vector<T>(n, 42 + std::uint64_t(n));
    auto d = upload(h);
    long double s = 0, mag = 0;
    for (T v : h) {
      s += v;
      mag += std::abs(double(v));
    }
    const auto got = cu::reduce_sum(d.get(), n);
    if constexpr (std::is_integral_v<T>) {
      CHECK(got == int64_t(s));
    } else {
      CHECK(std::abs(double(got) - double(s)) <= 4 * eps<T>() * std::log2(double(n) + 2) * double(mag));
    }
    CHECK(cu::reduce_min(d.get(), n) == *std::min_element(h.begin(), h.end()));
    CHECK(cu::reduce_max(d.get(), n) == *std::max_element(h.begin(), h.end()));
  }
  // empty: sum is 0, min/max have no identity
  auto one = cu::device_allocate_n<T>(1);
  CHECK(cu::reduce_sum(one.get(), 0) == 0);
  CHECK_THROWS_AS(cu::reduce_min(one.get(), 0), ember::value_error);
  CHECK_THROWS_AS(cu::reduce_max(one.get(), 0), ember::value_error);
}

TEST_CASE("reductions: int32 sums in int64, NaN propagates to min and max", "[gpu]") {
  const int64_t n = int64_t(1) << 20;
  std::vector<std::int32_t> big(std::size_t(n), std::int32_t(1) << 30);
  auto d = upload(big);
  CHECK(cu::reduce_sum(d.get(), n) == n << 30);
  std::vector<double> v = {1.0, std::nan(""), -3.0, 2.0};
  auto dv = upload(v);
  CHECK(std::isnan(cu::reduce_min(dv.get(), 4)));
  CHECK(std::isnan(cu::reduce_max(dv.get(), 4)));
}

TEMPLATE_TEST_CASE("cuBLAS gemm: column-major, every transpose, padded ld", "[gpu]", float, double) {
  using T = TestType;
  const int64_t m = 37, n = 29, k = 41;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("trans_a " << ta << " trans_b " << tb);
      const int64_t arows = ta ? k : m, acols = ta ? m : k, brows = tb ? n : k, bcols = tb ? k : n;
      const int64_t lda = arows + 3, ldb = brows + 1, ldc = m + 2;
      auto a = random_vector<T>(lda * acols, 1), b = random_vector<T>(ldb * bcols, 2);
      auto c0 = random_vector<T>(ldc * n, 3);
      auto da = upload(a), db = upload(b), dc = upload(c0);
      cu::blas::gemm<T>(ta, tb, m, n, k, T(2), da.get(), lda, db.get(), ldb, T(-1), dc.get(), ldc);
      auto got = download(dc.get(), ldc * n);
      auto ab = naive_gemm(ta, tb, m, n, k, a, lda, b, ldb);
      std::vector<T> g, w;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          g.push_back(got[std::size_t(i + j * ldc)]);
          w.push_back(T(2 * double(ab[std::size_t(i + j * m)]) - double(c0[std::size_t(i + j * ldc)])));
        }
      CHECK(rel_diff(g, w) < 50 * eps<T>());
      // padding rows of C untouched
      CHECK(got[std::size_t(m)] == c0[std::size_t(m)]);
    }
}

TEMPLATE_TEST_CASE("cuBLAS gemm_row_major and transpose", "[gpu]", float, double) {
  using T = TestType;
  const int64_t m = 23, n = 31, k = 17;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("trans_a " << ta << " trans_b " << tb);
      // row-major storage: A is (ta ? k x m : m x k), B is (tb ? n x k : k x n)
      const int64_t acols = ta ? m : k, bcols = tb ? k : n;
      auto a = random_vector<T>((ta ? k : m) * acols, 4), b = random_vector<T>((tb ? n : k) * bcols, 5);
      auto da = upload(a), db = upload(b);
      auto dc = cu::device_allocate_n<T>(m * n);
      cu::blas::gemm_row_major<T>(ta, tb, m, n, k, T(1), da.get(), acols, db.get(), bcols, T(0), dc.get(), n);
      auto got = download(dc.get(), m * n);
      std::vector<T> want(static_cast<std::size_t>(m * n));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t p = 0; p < k; ++p)
            s += double(ta ? a[std::size_t(p * acols + i)] : a[std::size_t(i * acols + p)]) *
                 double(tb ? b[std::size_t(j * bcols + p)] : b[std::size_t(p * bcols + j)]);
          want[std::size_t(i * n + j)] = T(s);
        }
      CHECK(rel_diff(got, want) < 50 * eps<T>());
    }
  // transpose: column-major 5 x 3 (ld 6) -> 3 x 5 (ld 4)
  auto a = random_vector<T>(6 * 3, 9);
  auto da = upload(a);
  auto db = cu::device_allocate_n<T>(4 * 5);
  cu::blas::transpose<T>(5, 3, da.get(), 6, db.get(), 4);
  auto b = download(db.get(), 4 * 5);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 3; ++j) CHECK(b[std::size_t(j + i * 4)] == a[std::size_t(i + j * 6)]);
}

TEMPLATE_TEST_CASE("cuSOLVER geqrf + orgqr: Q orthonormal, QR == A, R as LAPACK's up to row signs", "[gpu]", float, double) {
  using T = TestType;
  const int64_t m = 67, n = 41;
  auto a = random_vector<T>(m * n, 21);
  auto da = upload(a);
  auto tau = cu::device_allocate_n<T>(n);
  cu::solver::geqrf<T>(m, n, da.get(), m, tau.get());
  auto fact = download(da.get(), m * n);
  std::vector<T> r(std::size_t(n * n), T(0));  // n x n upper
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i <= j; ++i) r[std::size_t(i + j * n)] = fact[std::size_t(i + j * m)];
  cu::solver::orgqr<T>(m, n, n, da.get(), m, tau.get());
  auto q = download(da.get(), m * n);
  CHECK(orthogonality(q, m, n) < 20 * n * eps<T>());
  auto qr = naive_gemm(false, false, m, n, n, q, m, r, n);
  CHECK(rel_diff(qr, a) < 20 * n * eps<T>());
  // LAPACK's Householder QR gives the same R, up to the sign of each row
  auto ha = a;
  std::vector<T> htau(static_cast<std::size_t>(n));
  ember::lapack::geqrf<T>(m, n, ha.data(), m, htau.data());
  std::vector<T> hr(std::size_t(n * n), T(0));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i <= j; ++i) hr[std::size_t(i + j * n)] = ha[std::size_t(i + j * m)];
  for (auto* x : {&r, &hr})
    for (auto& v : *x) v = std::abs(v);
  CHECK(rel_diff(r, hr) < 20 * n * eps<T>());
}

TEMPLATE_TEST_CASE("cuSOLVER gesvd: tall and wide, against LAPACK's singular values", "[gpu]", float, double) {
  using T = TestType;
  for (auto [m, n] : {std::pair<int64_t, int64_t>{50, 30}, {30, 50}, {40, 40}}) {
    INFO(m << " x " << n);
    const int64_t k = std::min(m, n);
    auto a = random_vector<T>(m * n, 31 + std::uint64_t(m));
    // LAPACK reference values
    auto ha = a;
    std::vector<T> hs(static_cast<std::size_t>(k)), hu(static_cast<std::size_t>(m * k)), hvt(static_cast<std::size_t>(k * n));
    ember::lapack::gesdd<T>('S', m, n, ha.data(), m, hs.data(), hu.data(), m, hvt.data(), k);
    // values and vectors
    auto da = upload(a);
    auto ds = cu::device_allocate_n<T>(k), du = cu::device_allocate_n<T>(m * k), dvt = cu::device_allocate_n<T>(k * n);
    cu::solver::gesvd<T>('S', m, n, da.get(), m, ds.get(), du.get(), m, dvt.get(), k);
    auto s = download(ds.get(), k), u = download(du.get(), m * k), vt = download(dvt.get(), k * n);
    CHECK(rel_diff(s, hs) < 20 * k * eps<T>());
    CHECK(orthogonality(u, m, k) < 20 * k * eps<T>());
    // VT rows orthonormal: (VT^T) columns
    std::vector<T> v(static_cast<std::size_t>(n * k));
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) v[std::size_t(j + i * n)] = vt[std::size_t(i + j * k)];
    CHECK(orthogonality(v, n, k) < 20 * k * eps<T>());
    std::vector<T> us = u;
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < m; ++i) us[std::size_t(i + j * m)] *= s[std::size_t(j)];
    CHECK(rel_diff(naive_gemm(false, false, m, n, k, us, m, vt, k), a) < 20 * k * eps<T>());
    // values only
    auto da2 = upload(a);
    auto ds2 = cu::device_allocate_n<T>(k);
    cu::solver::gesvd<T>('N', m, n, da2.get(), m, ds2.get(), nullptr, 1, nullptr, 1);
    CHECK(rel_diff(download(ds2.get(), k), hs) < 20 * k * eps<T>());
  }
}

TEMPLATE_TEST_CASE("cuSOLVER syevd against LAPACK, A V == V diag(w)", "[gpu]", float, double) {
  using T = TestType;
  const int64_t n = 40;
  auto g = random_vector<T>(n * n, 77);
  std::vector<T> a(static_cast<std::size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) a[std::size_t(i + j * n)] = g[std::size_t(i + j * n)] + g[std::size_t(j + i * n)];
  auto ha = a;
  std::vector<T> hw(static_cast<std::size_t>(n));
  ember::lapack::syevd<T>('V', 'L', n, ha.data(), n, hw.data());
  auto da = upload(a);
  auto dw = cu::device_allocate_n<T>(n);
  cu::solver::syevd<T>('V', 'L', n, da.get(), n, dw.get());
  auto w = download(dw.get(), n), v = download(da.get(), n * n);
  CHECK(rel_diff(w, hw) < 20 * n * eps<T>());
  CHECK(std::is_sorted(w.begin(), w.end()));
  CHECK(orthogonality(v, n, n) < 20 * n * eps<T>());
  auto av = naive_gemm(false, false, n, n, n, a, n, v, n);
  std::vector<T> vw = v;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) vw[std::size_t(i + j * n)] *= w[std::size_t(j)];
  CHECK(rel_diff(av, vw) < 20 * n * eps<T>());
}

// Not a test: a measurement for the fused-kernel target of issue 7 (the fused
// a*b + c*d - 2*e over 2^28 doubles against device-to-device copy bandwidth).
// Hidden ([.]): runs only when asked for, e.g. `test_gpu "[bench]"` (6 x 2 GiB).
TEST_CASE("bench: fused a*b + c*d - 2*e vs device-to-device copy, 2^28 doubles", "[.][bench]") {
  const int64_t n = int64_t(1) << 28;
  const std::size_t bytes = std::size_t(n) * sizeof(double);
  std::vector<std::shared_ptr<double[]>> d;
  for (int k = 0; k < 6; ++k) d.push_back(cu::device_allocate_n<double>(n));
  auto best_of = [](int reps, auto&& f) {
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      cu::synchronize(cu::stream());
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  for (int k = 0; k < 5; ++k) cu::testing::fused5(n, d[5].get(), d[5].get(), d[5].get(), d[5].get(), d[5].get(), d[k].get());
  const double t_copy = best_of(20, [&] { cu::copy_device_async(d[5].get(), d[0].get(), bytes); });
  const double t_fused = best_of(20, [&] {
    cu::testing::fused5(n, d[0].get(), d[1].get(), d[2].get(), d[3].get(), d[4].get(), d[5].get());
  });
  const double bw_copy = 2.0 * double(bytes) / t_copy, bw_fused = 6.0 * double(bytes) / t_fused;
  std::cout << "bench: d2d copy " << bw_copy / 1e9 << " GB/s (" << t_copy * 1e3 << " ms), fused a*b+c*d-2*e "
            << bw_fused / 1e9 << " GB/s (" << t_fused * 1e3 << " ms): " << 100.0 * bw_fused / bw_copy
            << "% of copy bandwidth (issue 7 target: >= 80%)" << std::endl;
  CHECK(bw_fused > 0);
}
