// Principal component analysis of a distributed data set with known principal
// directions, three ways: Heat's hierarchical SVD (hsvd_rank), the randomized SVD
// (rsvd) and the exact distributed SVD (linalg::svd).
//
// Data: n samples in d dimensions (rows, split over the ranks as data is loaded),
// x = mu + B diag(sqrt(var)) z with z standard normal, B a random orthonormal
// basis and distinct variances var. The principal directions of the centered data
// are the columns of B (V of the SVD, replicated since the samples are split) and
// the variances are S^2 / (n - 1). Self-checking: exits 1 unless every method
// recovers the k leading directions (|cos| near 1) and variances (to sampling error).
//
//   mpirun -n 4 build/examples/pca [n d]      (defaults 20000 24)
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <ember.hpp>

namespace {

using i64 = std::int64_t;

// d x d orthonormal basis, the same on every rank (seeded locally), column-major.
std::vector<double> random_basis(i64 d, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  std::vector<double> b(std::size_t(d * d));
  for (auto& v : b) v = nd(g);
  std::vector<double> tau(static_cast<std::size_t>(d));
  ember::lapack::geqrf<double>(d, d, b.data(), d, tau.data());
  ember::lapack::orgqr<double>(d, d, d, b.data(), d, tau.data());
  return b;
}

struct outcome {
  double worst_cos = 1, worst_var = 0;
  bool ok = true;
};

// Compares V (d x k replicated, row-major) and S with the truth, prints a line.
outcome check(const char* method, const ember::dndarray<double, 2>& V, const ember::dndarray<double, 1>& S, i64 n,
              const std::vector<double>& basis, const std::vector<double>& var, i64 k, double seconds) {
  const i64 d = V.shape()[0];
  outcome o;
  std::string detail;
  for (i64 j = 0; j < k; ++j) {
    double c = 0;
    for (i64 i = 0; i < d; ++i) c += V.ldata()[i * V.shape()[1] + j] * basis[std::size_t(i + j * d)];
    const double est = S.ldata()[j] * S.ldata()[j] / double(n - 1);
    const double rel = std::abs(est - var[std::size_t(j)]) / var[std::size_t(j)];
    o.worst_cos = std::min(o.worst_cos, std::abs(c));
    o.worst_var = std::max(o.worst_var, rel);
    char buf[96];
    std::snprintf(buf, sizeof buf, " %.3f(%.2f)", est, std::abs(c));
    detail += buf;
  }
  // sampling error of a variance is about sqrt(2 / n); of a direction, about
  // sqrt(var_i var_j / n) / (var_i - var_j) radians
  o.ok = o.worst_cos > 0.99 && o.worst_var < 6 * std::sqrt(2.0 / double(n));
  if (ember::world().rank() == 0)
    std::printf("  %-10s %7.3fs  variance(|cos|):%s   min|cos| %.5f  max var err %.2f%%  %s\n", method, seconds,
                detail.c_str(), o.worst_cos, 100 * o.worst_var, o.ok ? "ok" : "WRONG");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const i64 n = argc > 1 ? std::stoll(argv[1]) : 20000;
  const i64 d = argc > 2 ? std::stoll(argv[2]) : 24;
  const i64 k = 4;
  // distinct leading variances, then a flat small tail
  std::vector<double> var(std::size_t(d), 0.5);
  const double lead[] = {25.0, 12.0, 6.0, 3.0};
  for (i64 j = 0; j < std::min<i64>(k, d); ++j) var[std::size_t(j)] = lead[j];
  const auto B = random_basis(d, 2024);
  std::vector<double> mu(static_cast<std::size_t>(d));
  for (i64 j = 0; j < d; ++j) mu[std::size_t(j)] = 10.0 + double(j);

  // Z: standard normal samples, split 0 (each rank generates only its rows);
  // X = mu + Z diag(sqrt(var)) B^T, a local product per rank.
  ember::random::seed(7);
  auto Z = ember::random::randn<double>({n, d}, {.split = 0});
  std::vector<double> scaledBt(std::size_t(d * d));  // row-major d x d: diag(sqrt(var)) B^T
  for (i64 a = 0; a < d; ++a)
    for (i64 b = 0; b < d; ++b) scaledBt[std::size_t(a * d + b)] = std::sqrt(var[std::size_t(a)]) * B[std::size_t(b + a * d)];
  auto X = ember::empty_like(Z);
  const i64 ln = Z.lshape()[0];
  // row-major (ln x d) = (ln x d)(d x d): in column-major terms X^T = S^T Z^T
  ember::lapack::gemm<double>(false, false, d, ln, d, 1.0, scaledBt.data(), d, Z.ldata(), d, 0.0, X.ldata(), d);
  for (i64 i = 0; i < ln; ++i)
    for (i64 j = 0; j < d; ++j) X.ldata()[i * d + j] += mu[std::size_t(j)];

  // Centering with the DSL: the column means are a reduction over the split axis
  // (one allreduce, replicated), the subtraction broadcasts them over the rows.
  ember::dndarray<double, 1> mean = ember::mean(X, 0);
  ember::dndarray<double, 2> Xc = X - mean;
  double mean_err = 0;
  for (i64 j = 0; j < d; ++j) mean_err = std::max(mean_err, std::abs(mean.ldata()[j] - mu[std::size_t(j)]));

  if (w.rank() == 0)
    std::printf("PCA of %lld samples in %lld dimensions over %d ranks (samples split), k = %lld\n"
                "  true variances: %.1f %.1f %.1f %.1f, rest %.1f; max |mean - mu| = %.3f\n",
                (long long)n, (long long)d, w.size(), (long long)k, var[0], var[1], var[2], var[3], var[std::size_t(k)],
                mean_err);

  // the sample mean is within a few standard errors sqrt(var_max / n) of mu
  const double mean_tol = 6 * std::sqrt(var[0] / double(n));
  bool ok = mean_err < mean_tol;
  if (!ok && w.rank() == 0) std::printf("  the sample mean is off by %.3f (tolerance %.3f)\n", mean_err, mean_tol);
  auto timed = [&](auto&& f) {
    w.barrier();
    const double t0 = MPI_Wtime();
    auto r = f();
    w.barrier();
    return std::make_pair(std::move(r), MPI_Wtime() - t0);
  };
  {
    auto [h, t] = timed([&] { return ember::linalg::hsvd_rank(Xc, k); });
    ok = check("hsvd_rank", h.V, h.S, n, B, var, k, t).ok && ok;
    if (w.rank() == 0) std::printf("             error estimate of the rank-%lld approximation: %.3f\n", (long long)k, h.error_estimate);
  }
  {
    auto [s, t] = timed([&] { return ember::linalg::rsvd(Xc, k, {.seed = 1}); });
    ok = check("rsvd", s.V, s.S, n, B, var, k, t).ok && ok;
  }
  {
    auto [s, t] = timed([&] { return ember::linalg::svd(Xc); });
    // the exact SVD returns every component as the rows of Vh (NumPy's); V = Vh^T, gathered
    ember::dndarray<double, 2> V = ember::eval(s.Vh.T(), {.split = ember::none});
    ok = check("svd", V, s.S, n, B, var, k, t).ok && ok;
  }
  if (!ok) {
    if (w.rank() == 0) std::fprintf(stderr, "pca: FAILED: a method did not recover the principal components\n");
    return 1;
  }
  if (w.rank() == 0) std::printf("pca: ok\n");
  return 0;
}
