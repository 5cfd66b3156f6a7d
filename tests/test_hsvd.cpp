// Hierarchical SVD (hsvd_rank, hsvd_rtol) and randomized SVD (rsvd), for float
// and double and A split 0, split 1 and not split, against serial LAPACK (gesdd in
// double) on the gathered matrix: reconstruction, singular values,
// orthonormality, layouts, the error bound, and errors raised on every rank.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "common.hpp"

namespace {

using i64 = std::int64_t;
namespace la = ember::linalg;

const ember::split_axis splits[] = {ember::split_axis{0}, ember::split_axis{1}, ember::none};

std::string split_name(ember::split_axis s) { return s ? std::to_string(*s) : "none"; }

// Row-major m x n Gaussian matrix, the same on every rank (seeded locally).
std::vector<double> gaussian(i64 m, i64 n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> d;
  std::vector<double> a(std::size_t(m * n));
  for (auto& v : a) v = d(g);
  return a;
}
// C (m x n) = A (m x k) B (k x n), row-major, in double.
std::vector<double> product(const std::vector<double>& a, const std::vector<double>& b, i64 m, i64 k, i64 n) {
  std::vector<double> c(std::size_t(m * n), 0.0);
  for (i64 i = 0; i < m; ++i)
    for (i64 p = 0; p < k; ++p)
      for (i64 j = 0; j < n; ++j) c[std::size_t(i * n + j)] += a[std::size_t(i * k + p)] * b[std::size_t(p * n + j)];
  return c;
}
// Row-major m x k matrix with orthonormal columns (QR of a Gaussian matrix).
std::vector<double> orthonormal(i64 m, i64 k, std::uint64_t seed) {
  auto g = gaussian(k, m, seed);  // row-major k x m = column-major m x k
  std::vector<double> tau(static_cast<std::size_t>(k));
  ember::lapack::geqrf<double>(m, k, g.data(), m, tau.data());
  ember::lapack::orgqr<double>(m, k, k, g.data(), m, tau.data());
  std::vector<double> q(std::size_t(m * k));
  for (i64 i = 0; i < m; ++i)
    for (i64 j = 0; j < k; ++j) q[std::size_t(i * k + j)] = g[std::size_t(i + j * m)];
  return q;
}
// A = Q1 diag(sigma) Q2^T, m x n, the given singular values.
std::vector<double> with_spectrum(i64 m, i64 n, const std::vector<double>& sigma, std::uint64_t seed) {
  const i64 k = i64(sigma.size());
  auto q1 = orthonormal(m, k, seed), q2 = orthonormal(n, k, seed + 1);
  for (i64 i = 0; i < m; ++i)
    for (i64 j = 0; j < k; ++j) q1[std::size_t(i * k + j)] *= sigma[std::size_t(j)];
  std::vector<double> q2t(std::size_t(k * n));
  for (i64 i = 0; i < n; ++i)
    for (i64 j = 0; j < k; ++j) q2t[std::size_t(j * n + i)] = q2[std::size_t(i * k + j)];
  return product(q1, q2t, m, k, n);
}
// Exactly rank r: (m x r Gaussian)(r x n Gaussian).
std::vector<double> low_rank(i64 m, i64 n, i64 r, std::uint64_t seed) {
  return product(gaussian(m, r, seed), gaussian(r, n, seed + 7), m, r, n);
}

template <class T>
std::vector<T> cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}
template <class T>
std::vector<double> to_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

template <class T>
ember::dndarray<T, 2> distributed(const std::vector<T>& a, i64 m, i64 n, ember::split_axis split) {
  return ember::array(std::span<const T>(a), std::array<i64, 2>{m, n}, {.split = split});
}

// Serial reference: all singular values of the row-major m x n matrix (LAPACK
// gesdd in double on the gathered values).
std::vector<double> serial_singular_values(std::vector<double> a, i64 m, i64 n) {
  // Row-major A is the column-major n x m matrix A^T: same singular values.
  std::vector<double> s(std::size_t(std::min(m, n)));
  double dummy = 0;
  ember::lapack::gesdd<double>('N', n, m, a.data(), n, s.data(), &dummy, 1, &dummy, 1);
  return s;
}

struct factors {
  std::vector<double> U, S, V;  // row-major m x k, k, n x k (gathered, in double)
  i64 k = 0;
};
template <class T>
factors gather(const ember::dndarray<T, 2>& U, const ember::dndarray<T, 1>& S, const ember::dndarray<T, 2>& V) {
  factors f;
  f.U = to_double(test::gathered(U));
  f.S = to_double(test::gathered(S));
  f.V = to_double(test::gathered(V));
  f.k = S.shape()[0];
  return f;
}
// ||A - U diag(S) V^T||_F / ||A||_F on the gathered factors.
double relative_error(const std::vector<double>& a, const factors& f, i64 m, i64 n) {
  double num = 0, den = 0;
  for (i64 i = 0; i < m; ++i)
    for (i64 j = 0; j < n; ++j) {
      double r = 0;
      for (i64 p = 0; p < f.k; ++p) r += f.U[std::size_t(i * f.k + p)] * f.S[std::size_t(p)] * f.V[std::size_t(j * f.k + p)];
      const double x = a[std::size_t(i * n + j)];
      num += (x - r) * (x - r);
      den += x * x;
    }
  return std::sqrt(num / den);
}
// max |Q^T Q - I| for a row-major rows x k matrix.
double orthonormality_defect(const std::vector<double>& q, i64 rows, i64 k) {
  double worst = 0;
  for (i64 a = 0; a < k; ++a)
    for (i64 b = 0; b < k; ++b) {
      double d = 0;
      for (i64 i = 0; i < rows; ++i) d += q[std::size_t(i * k + a)] * q[std::size_t(i * k + b)];
      worst = std::max(worst, std::abs(d - (a == b ? 1.0 : 0.0)));
    }
  return worst;
}
double tail(const std::vector<double>& s, i64 from) {
  double t = 0;
  for (std::size_t j = std::size_t(from); j < s.size(); ++j) t += s[j] * s[j];
  return std::sqrt(t);
}
double norm(const std::vector<double>& s) { return tail(s, 0); }

// A replicated array is bit-identical on every rank (rank 0's copy compared with each).
template <class T, int N>
bool replicated_identically(const ember::dndarray<T, N>& a) {
  if (a.split()) return false;
  const auto& c = a.comm();
  std::vector<T> mine(a.ldata(), a.ldata() + a.lnumel());
  std::vector<T> root(mine);
  c.bcast(root.data(), i64(root.size()), 0);
  return test::all_ranks(test::bit_equal(mine, root), c);
}

// The factor along A's split axis keeps A's split and per-rank extents; the other
// is replicated.
template <class T>
bool layouts_follow(const ember::dndarray<T, 2>& A, const ember::dndarray<T, 2>& U, const ember::dndarray<T, 2>& V,
                    i64 k) {
  const auto s = A.shape();
  bool ok = U.shape() == std::array<i64, 2>{s[0], k} && V.shape() == std::array<i64, 2>{s[1], k};
  const auto am = A.lshape_map();
  if (A.split() == 0) {
    ok = ok && U.split() == 0 && !V.split();
    for (std::size_t p = 0; p < am.size(); ++p) ok = ok && U.lshape_map()[p][0] == am[p][0];
  } else if (A.split() == 1) {
    ok = ok && !U.split() && V.split() == 0;
    for (std::size_t p = 0; p < am.size(); ++p) ok = ok && V.lshape_map()[p][0] == am[p][1];
  } else {
    ok = ok && !U.split() && !V.split();
  }
  return ok;
}

template <class T>
constexpr double eps() {
  return double(std::numeric_limits<T>::epsilon());
}

}  // namespace

TEMPLATE_TEST_CASE("hsvd_rank recovers an exactly low-rank matrix", "[hsvd]", float, double) {
  using T = TestType;
  const double tol = std::is_same_v<T, double> ? 1e-12 : 2e-5;
  struct shape { i64 m, n, r; };
  // tall and wide, with blocks thinner and thicker than N (both leaf paths),
  // at 3-4 ranks some blocks hold fewer rows than r + safetyshift
  for (auto sh : {shape{37, 29, 4}, shape{29, 37, 4}, shape{64, 9, 3}, shape{9, 64, 3}, shape{20, 20, 20}}) {
    const auto a = cast<T>(low_rank(sh.m, sh.n, std::min<i64>(sh.r, 20), 11 + std::uint64_t(sh.m)));
    const auto ref = serial_singular_values(to_double(a), sh.m, sh.n);
    for (auto split : splits) {
      INFO("shape (" << sh.m << ", " << sh.n << "), r = " << sh.r << ", split " << split_name(split));
      auto A = distributed(a, sh.m, sh.n, split);
      const auto h = la::hsvd_rank(A, sh.r);
      REQUIRE(h.S.shape()[0] == sh.r);
      CHECK(layouts_follow(A, h.U, h.V, sh.r));
      CHECK(replicated_identically(h.S));
      CHECK(replicated_identically(split == 1 ? h.U : h.V));
      const auto f = gather(h.U, h.S, h.V);
      const double err = relative_error(to_double(a), f, sh.m, sh.n);
      CHECK(err < tol);
      CHECK(h.error_estimate >= err);  // the bound holds even at rounding level
      CHECK(h.error_estimate < 100 * tol);
      for (i64 j = 0; j < sh.r; ++j) CHECK(std::abs(f.S[std::size_t(j)] - ref[std::size_t(j)]) <= tol * ref[0]);
      CHECK(orthonormality_defect(f.U, sh.m, sh.r) < tol);
      CHECK(orthonormality_defect(f.V, sh.n, sh.r) < tol);
    }
  }
}

TEMPLATE_TEST_CASE("hsvd_rank on uneven and empty per-rank blocks", "[hsvd]", float, double) {
  using T = TestType;
  const auto& w = ember::world();
  const double tol = std::is_same_v<T, double> ? 1e-12 : 2e-5;
  const i64 m = 30, n = 12, r = 5;
  const auto a = cast<T>(low_rank(m, n, r, 5));
  for (int axis : {0, 1}) {
    INFO("split " << axis);
    auto A = distributed(a, m, n, axis);
    // rank 0 holds nothing, the last rank everything else
    auto map = A.lshape_map();
    if (w.size() > 1) {
      for (auto& row : map) row[std::size_t(axis)] = 0;
      map.back()[std::size_t(axis)] = axis == 0 ? m : n;
      A.redistribute_(map);
    }
    const auto h = la::hsvd_rank(A, r);
    CHECK(layouts_follow(A, h.U, h.V, r));
    const auto f = gather(h.U, h.S, h.V);
    CHECK(relative_error(to_double(a), f, m, n) < tol);
    CHECK(orthonormality_defect(axis == 0 ? f.U : f.V, axis == 0 ? m : n, r) < tol);
  }
}

TEMPLATE_TEST_CASE("hsvd error estimate bounds the true error on a decaying spectrum", "[hsvd]", float, double) {
  using T = TestType;
  const auto& w = ember::world();
  const i64 gram_before = la::lowrank_detail::gram_leaves();
  // square-ish (thin leaves: exact SVD of the block) and tall or wide such that
  // the distributed side gives tall leaves (Gram path, or its exact fallback)
  for (auto [m, n] : {std::pair<i64, i64>{50, 44}, {240, 16}, {16, 240}}) {
    std::vector<double> sigma(std::size_t(std::min(m, n)));
    for (std::size_t j = 0; j < sigma.size(); ++j) sigma[j] = std::pow(0.7, double(j));
    const auto a = cast<T>(with_spectrum(m, n, sigma, 3 + std::uint64_t(m)));
    const auto ref = serial_singular_values(to_double(a), m, n);
    for (auto split : splits) {
      for (i64 shift : {i64(0), i64(5)}) {
        for (i64 r : {i64(3), i64(8)}) {
          INFO("shape (" << m << ", " << n << "), split " << split_name(split) << ", safetyshift " << shift << ", r " << r);
          auto A = distributed(a, m, n, split);
          const auto h = la::hsvd_rank(A, r, {.safetyshift = shift});
          const auto f = gather(h.U, h.S, h.V);
          const double err = relative_error(to_double(a), f, m, n);
          const double best = tail(ref, r) / norm(ref);  // Eckart-Young: no rank-r approximation does better
          const int P = split ? w.size() : 1;
          CHECK(err >= best * (1 - 1e-3));
          CHECK(h.error_estimate >= err);
          // Every node's dropped tail is at most A's tail beyond its rank, and there
          // are 2P - 1 nodes: the estimate is never looser than that (a Gram leaf's
          // residual may exceed its optimal tail by 1% before it falls back).
          CHECK(h.error_estimate <= std::sqrt(2.0 * P - 1) * best * 1.01 + 1e-4);
          if (!split) CHECK(std::abs(h.error_estimate - best) < 1e-4);  // one node: the exact tail
          CHECK(orthonormality_defect(f.U, m, f.k) < 100 * eps<T>());
          CHECK(orthonormality_defect(f.V, n, f.k) < 100 * eps<T>());
          // the top singular values are those of A to the truncation level
          for (i64 j = 0; j < f.k; ++j)
            CHECK(std::abs(f.S[std::size_t(j)] - ref[std::size_t(j)]) <= 2 * err * norm(ref));
        }
      }
    }
  }
  // with more than one rank, some tall leaf took the Gram path
  if (w.size() > 1)
    CHECK(w.allreduce(la::lowrank_detail::gram_leaves() - gram_before, ember::reduce_op::sum) > 0);
}

TEMPLATE_TEST_CASE("hsvd_rtol meets the tolerance", "[hsvd]", float, double) {
  using T = TestType;
  for (auto [m, n] : {std::pair<i64, i64>{48, 40}, {200, 14}}) {
    std::vector<double> sigma(std::size_t(std::min(m, n)));
    for (std::size_t j = 0; j < sigma.size(); ++j) sigma[j] = std::pow(0.7, double(j));
    const auto a = cast<T>(with_spectrum(m, n, sigma, 21));
    const auto ref = serial_singular_values(to_double(a), m, n);
    for (auto split : splits) {
      for (double rtol : {0.2, 1e-2, 1e-3}) {
        INFO("shape (" << m << ", " << n << "), split " << split_name(split) << ", rtol " << rtol);
        auto A = distributed(a, m, n, split);
        const auto h = la::hsvd_rtol(A, rtol);
        const auto f = gather(h.U, h.S, h.V);
        const double err = relative_error(to_double(a), f, m, n);
        CHECK(err <= rtol);
        CHECK(err <= h.error_estimate);
        CHECK(h.error_estimate <= rtol + 1e-4);
        CHECK(layouts_follow(A, h.U, h.V, f.k));
        // and the rank is not needlessly large: one column fewer would miss rtol
        // by the local-tolerance rule's factor sqrt(2P - 1) at most
        CHECK(tail(ref, f.k - 1) / norm(ref) > rtol / std::sqrt(2.0 * ember::world().size() - 1) * (1 - 1e-3));
      }
    }
  }
  const i64 m = 48, n = 40;
  std::vector<double> sigma(std::size_t(std::min(m, n)));
  for (std::size_t j = 0; j < sigma.size(); ++j) sigma[j] = std::pow(0.7, double(j));
  const auto a = cast<T>(with_spectrum(m, n, sigma, 21));
  // a rank cap that cannot meet the tolerance: the estimate says so
  auto A = distributed(a, m, n, 0);
  const auto h = la::hsvd_rtol(A, 1e-3, {.maxrank = 2});
  CHECK(h.S.shape()[0] <= 2);
  CHECK(h.error_estimate > 1e-3);
}

TEMPLATE_TEST_CASE("rsvd matches the top singular values of a low-rank plus noise matrix", "[rsvd]", float, double) {
  using T = TestType;
  const i64 m = 70, n = 45, r = 6;
  std::vector<double> sigma(std::size_t(std::min(m, n)));
  for (std::size_t j = 0; j < sigma.size(); ++j) sigma[j] = j < std::size_t(r) ? 10.0 / double(j + 1) : 1e-3 * std::pow(0.9, double(j));
  const auto a = cast<T>(with_spectrum(m, n, sigma, 33));
  const auto ref = serial_singular_values(to_double(a), m, n);
  // Ritz values of a range that captures the top r directions up to the noise:
  // errors of order sigma_{r+1} (and rounding)
  const double tol = 10 * ref[std::size_t(r)] + 100 * eps<T>() * ref[0];
  std::vector<std::vector<double>> S_by_split;
  for (auto split : splits) {
    for (i64 q : {i64(0), i64(1)}) {
      INFO("split " << split_name(split) << ", power iterations " << q);
      auto A = distributed(a, m, n, split);
      const auto s = la::rsvd(A, r, {.oversample = 10, .power_iterations = q, .seed = 7});
      REQUIRE(s.S.shape()[0] == r);
      CHECK(layouts_follow(A, s.U, s.V, r));
      CHECK(replicated_identically(s.S));
      const auto f = gather(s.U, s.S, s.V);
      for (i64 j = 0; j < r; ++j) CHECK(std::abs(f.S[std::size_t(j)] - ref[std::size_t(j)]) <= tol);
      for (i64 j = 1; j < r; ++j) CHECK(f.S[std::size_t(j)] <= f.S[std::size_t(j - 1)]);
      CHECK(orthonormality_defect(f.U, m, r) < 100 * eps<T>());
      CHECK(orthonormality_defect(f.V, n, r) < 100 * eps<T>());
      const double err = relative_error(to_double(a), f, m, n);
      CHECK(err <= 1.5 * tail(ref, r) / norm(ref) + 100 * eps<T>());
      if (q == 1) S_by_split.push_back(f.S);
    }
  }
  // Omega depends on the seed only: split 0 runs the same algorithm as the serial
  // (not split) one, so both agree to rounding whatever the number of ranks.
  for (std::size_t j = 0; j < std::size_t(r); ++j)
    CHECK(std::abs(S_by_split[0][j] - S_by_split[2][j]) <= 1e3 * eps<T>() * ref[0]);
}

TEMPLATE_TEST_CASE("rsvd with the sample size capped by min(m, n)", "[rsvd]", float, double) {
  using T = TestType;
  const i64 m = 40, n = 8, r = 5;  // r + oversample > n: the range is all of R^n
  const auto a = cast<T>(low_rank(m, n, r, 99));
  const double tol = std::is_same_v<T, double> ? 1e-12 : 2e-5;
  for (auto split : splits) {
    INFO("split " << split_name(split));
    const auto s = la::rsvd(distributed(a, m, n, split), r, {.power_iterations = 0});
    const auto f = gather(s.U, s.S, s.V);
    CHECK(relative_error(to_double(a), f, m, n) < tol);
  }
}

TEMPLATE_TEST_CASE("hsvd and rsvd on degenerate matrices: zero, a single row or column", "[hsvd][rsvd]", float, double) {
  using T = TestType;
  const double tol = std::is_same_v<T, double> ? 1e-12 : 2e-5;
  for (auto split : splits) {
    INFO("split " << split_name(split));
    // the zero matrix: zero singular values, orthonormal factors, estimate 0
    auto Z = ember::zeros<T>({9, 7}, {.split = split});
    const auto h = la::hsvd_rank(Z, 2);
    const auto fz = gather(h.U, h.S, h.V);
    CHECK(fz.S == std::vector<double>{0.0, 0.0});
    CHECK(h.error_estimate == 0.0);
    CHECK(orthonormality_defect(fz.U, 9, 2) < tol);
    CHECK(orthonormality_defect(fz.V, 7, 2) < tol);
    const auto s = la::rsvd(Z, 2);
    CHECK(gather(s.U, s.S, s.V).S == std::vector<double>{0.0, 0.0});
    // a single row and a single column: rank 1, recovered exactly
    for (auto [m, n] : {std::pair<i64, i64>{1, 50}, {50, 1}}) {
      const auto a = cast<T>(gaussian(m, n, 4));
      auto A = distributed(a, m, n, split);
      const auto h1 = la::hsvd_rank(A, 1);
      CHECK(relative_error(to_double(a), gather(h1.U, h1.S, h1.V), m, n) < tol);
      const auto r1 = la::rsvd(A, 1);
      CHECK(relative_error(to_double(a), gather(r1.U, r1.S, r1.V), m, n) < tol);
      const auto t1 = la::hsvd_rtol(A, 0.5);
      CHECK(relative_error(to_double(a), gather(t1.U, t1.S, t1.V), m, n) < tol);
    }
  }
}

TEST_CASE("hsvd and rsvd reject bad input on every rank", "[hsvd][rsvd]") {
  const auto& w = ember::world();
  auto A = ember::random::randn<double>({12, 7}, {.split = 0});
  CHECK_THROWS_AS(la::hsvd_rank(A, 0), ember::value_error);
  CHECK_THROWS_AS(la::hsvd_rank(A, 8), ember::value_error);
  CHECK_THROWS_AS(la::hsvd_rank(A, 3, {.safetyshift = -1}), ember::value_error);
  CHECK_THROWS_AS(la::hsvd_rtol(A, 0.0), ember::value_error);
  CHECK_THROWS_AS(la::hsvd_rtol(A, -1e-3), ember::value_error);
  CHECK_THROWS_AS(la::hsvd_rtol(A, std::nan("")), ember::value_error);
  CHECK_THROWS_AS(la::hsvd_rtol(A, 0.1, {.maxrank = 9}), ember::value_error);
  CHECK_THROWS_AS(la::rsvd(A, 0), ember::value_error);
  CHECK_THROWS_AS(la::rsvd(A, 8), ember::value_error);
  CHECK_THROWS_AS(la::rsvd(A, 3, {.oversample = -1}), ember::value_error);
  CHECK_THROWS_AS(la::rsvd(A, 3, {.power_iterations = -2}), ember::value_error);
  auto I = ember::zeros<std::int64_t>({12, 7}, {.split = 1});
  CHECK_THROWS_AS(la::hsvd_rank(I, 2), ember::type_error);
  CHECK_THROWS_AS(la::hsvd_rtol(I, 0.1), ember::type_error);
  CHECK_THROWS_AS(la::rsvd(I, 2), ember::type_error);
  auto v = ember::random::randn<float>({12}, {.split = 0});
  CHECK_THROWS_AS(la::hsvd_rank(v, 2), ember::shape_error);
  CHECK_THROWS_AS(la::rsvd(v, 2), ember::shape_error);
  // A NaN on the last rank only: every rank learns it from the norm's allreduce.
  for (int axis : {0, 1}) {
    auto B = ember::random::randn<double>({12, 9}, {.split = axis});
    if (w.rank() == w.size() - 1 && B.lnumel() > 0) B.ldata()[0] = std::nan("");
    CHECK_THROWS_AS(la::hsvd_rank(B, 2), ember::value_error);
    CHECK_THROWS_AS(la::rsvd(B, 2), ember::value_error);
  }
  // and the library still works afterwards (no rank left a message behind)
  const auto h = la::hsvd_rank(A, 3);
  CHECK(h.S.shape()[0] == 3);
}
