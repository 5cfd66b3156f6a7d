// k-means (Lloyd's algorithm) on well-separated Gaussian blobs, the samples split
// over the ranks (split 0), one allreduce per iteration.
//
// Data: n points in d dimensions, point i drawn around center i % k with unit
// standard deviation (ember::random::randn for the noise: the same data at any
// number of ranks). Initialization: farthest-point seeding, each step an argmax
// over the distributed distances (ember::argmax: a reduction over the split
// axis). Iteration: every rank assigns its points to the nearest center and sums
// them per cluster; one allreduce of [per-cluster sums | counts | changed
// assignments] gives the new centers on every rank. Self-checking: exits 1 unless
// it converges to the true centers (to sampling error) with every point assigned
// to its own blob.
//
//   mpirun -n 4 build/examples/kmeans [n d k]      (defaults 40000 8 5)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <ember.hpp>

namespace {
using i64 = std::int64_t;
}

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const i64 n = argc > 1 ? std::stoll(argv[1]) : 40000;
  const i64 d = argc > 2 ? std::stoll(argv[2]) : 8;
  const i64 k = argc > 3 ? std::stoll(argv[3]) : 5;

  // true centers: random directions at distance 15 from the origin, at least 10
  // apart (redrawn until so), the same on every rank
  std::mt19937_64 g(17);
  std::normal_distribution<double> nd;
  std::vector<double> centers;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    centers.assign(std::size_t(k * d), 0.0);
    for (i64 c = 0; c < k; ++c) {
      double nrm = 0;
      for (i64 j = 0; j < d; ++j) nrm += std::pow(centers[std::size_t(c * d + j)] = nd(g), 2);
      for (i64 j = 0; j < d; ++j) centers[std::size_t(c * d + j)] *= 15.0 / std::sqrt(nrm);
    }
    double closest = 1e300;
    for (i64 a = 0; a < k; ++a)
      for (i64 b = a + 1; b < k; ++b) {
        double s = 0;
        for (i64 j = 0; j < d; ++j) s += std::pow(centers[std::size_t(a * d + j)] - centers[std::size_t(b * d + j)], 2);
        closest = std::min(closest, std::sqrt(s));
      }
    if (closest > 10) break;
  }

  // points: noise from ember's generator (split 0), the blob center added per row
  ember::random::seed(3);
  auto X = ember::random::randn<double>({n, d}, {.split = 0});
  const i64 ln = X.lshape()[0], off = X.loffset();
  double* x = X.ldata();
  for (i64 i = 0; i < ln; ++i)
    for (i64 j = 0; j < d; ++j) x[i * d + j] += centers[std::size_t(((off + i) % k) * d + j)];

  auto dist2 = [&](const double* p, const double* c) {
    double s = 0;
    for (i64 j = 0; j < d; ++j) s += (p[j] - c[j]) * (p[j] - c[j]);
    return s;
  };
  // The row at global index `gi` on every rank: its owner contributes it, the
  // others zeros, summed (one allreduce of d values).
  auto fetch_row = [&](i64 gi) {
    std::vector<double> row(std::size_t(d), 0.0);
    if (gi >= off && gi < off + ln) std::copy_n(x + (gi - off) * d, d, row.begin());
    w.allreduce(row.data(), d, ember::reduce_op::sum);
    return row;
  };

  // Farthest-point seeding: start at sample 0; repeatedly take the sample farthest
  // from every center chosen so far (argmax over the split axis, global index).
  std::vector<double> mu;
  // squared distance of each sample to its nearest chosen center, split like X's rows
  ember::dndarray<double, 1> mind(X.layout().with_shape({n}, 0), w);
  std::fill_n(mind.ldata(), ln, 1e300);
  {
    auto first = fetch_row(0);
    mu.insert(mu.end(), first.begin(), first.end());
  }
  for (i64 c = 1; c < k; ++c) {
    const double* last = mu.data() + (c - 1) * d;
    for (i64 i = 0; i < ln; ++i) mind.ldata()[i] = std::min(mind.ldata()[i], dist2(x + i * d, last));
    const i64 far = i64(ember::argmax(mind));
    auto row = fetch_row(far);
    mu.insert(mu.end(), row.begin(), row.end());
  }

  // Lloyd iterations: one allreduce of [sums (k d) | counts (k) | changed (1)].
  std::vector<int> label(std::size_t(ln), -1);
  std::vector<double> buf(std::size_t(k * d + k + 1));
  int it = 0;
  bool converged = false;
  for (; it < 100 && !converged; ++it) {
    std::fill(buf.begin(), buf.end(), 0.0);
    for (i64 i = 0; i < ln; ++i) {
      int best = 0;
      double bd = dist2(x + i * d, mu.data());
      for (i64 c = 1; c < k; ++c) {
        const double dc = dist2(x + i * d, mu.data() + c * d);
        if (dc < bd) bd = dc, best = int(c);
      }
      if (label[std::size_t(i)] != best) buf[std::size_t(k * d + k)] += 1;
      label[std::size_t(i)] = best;
      for (i64 j = 0; j < d; ++j) buf[std::size_t(best * d + j)] += x[i * d + j];
      buf[std::size_t(k * d + best)] += 1;
    }
    w.allreduce(buf.data(), i64(buf.size()), ember::reduce_op::sum);
    for (i64 c = 0; c < k; ++c)
      if (buf[std::size_t(k * d + c)] > 0)
        for (i64 j = 0; j < d; ++j) mu[std::size_t(c * d + j)] = buf[std::size_t(c * d + j)] / buf[std::size_t(k * d + c)];
    converged = buf[std::size_t(k * d + k)] == 0;  // no point changed cluster: a fixed point
  }

  // Checks (replicated facts, the same verdict on every rank): each found center
  // is near a distinct true center (sampling error ~ 1 / sqrt(n / k) per coordinate),
  // and every point sits in its own blob's cluster (one allreduce of the mismatches).
  std::vector<int> match(std::size_t(k), -1);
  double worst = 0;
  bool distinct = true;
  for (i64 c = 0; c < k; ++c) {
    int best = 0;
    double bd = 1e300;
    for (i64 t = 0; t < k; ++t) {
      const double dt = std::sqrt(dist2(mu.data() + c * d, centers.data() + t * d));
      if (dt < bd) bd = dt, best = int(t);
    }
    worst = std::max(worst, bd);
    for (i64 c2 = 0; c2 < c; ++c2) distinct = distinct && match[std::size_t(c2)] != best;
    match[std::size_t(c)] = best;
  }
  double wrong = 0;
  for (i64 i = 0; i < ln; ++i) wrong += match[std::size_t(label[std::size_t(i)])] != int((off + i) % k) ? 1 : 0;
  wrong = w.allreduce(wrong, ember::reduce_op::sum);
  // the DSL's view of the same data: the global mean of the points equals the
  // count-weighted mean of the true centers up to sampling noise
  ember::dndarray<double, 1> gmean = ember::mean(X, 0);
  double mean_err = 0;
  for (i64 j = 0; j < d; ++j) {
    double m = 0;
    for (i64 t = 0; t < k; ++t) m += centers[std::size_t(t * d + j)] * double(n / k + (t < n % k ? 1 : 0));
    mean_err = std::max(mean_err, std::abs(gmean.ldata()[j] - m / double(n)));
  }
  const double tol = 6.0 * std::sqrt(double(d) * double(k) / double(n));
  const bool ok = converged && distinct && worst < tol && wrong == 0 && mean_err < tol;
  if (w.rank() == 0) {
    std::printf("k-means: %lld points in %lld dimensions, %lld blobs, %d ranks (samples split)\n", (long long)n,
                (long long)d, (long long)k, w.size());
    std::printf("  %s after %d iterations (one allreduce of %lld values each)\n",
                converged ? "converged" : "NOT converged", it, (long long)buf.size());
    std::printf("  max distance found center - true center: %.4f (tolerance %.4f)\n", worst, tol);
    std::printf("  points assigned to another blob's cluster: %.0f; |global mean - expected| = %.4f\n", wrong, mean_err);
    std::printf("kmeans: %s\n", ok ? "ok" : "FAILED");
    if (!ok) std::fprintf(stderr, "kmeans: FAILED: did not converge to the true centers\n");
  }
  return ok ? 0 : 1;
}
