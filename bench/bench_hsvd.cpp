// Truncated SVDs against the exact distributed SVD (2 ranks, one BLAS thread per
// rank), on the same m x n matrix split 0 in the same run:
//   hsvd_rank(A, r) / svd(A)   and   rsvd(A, r) / svd(A),   targets <= 0.5,
// where svd is ember::linalg::svd (TSQR + LAPACK on R for this tall-skinny
// shape). Then the accuracy of both at rank r on the same matrix, whose spectrum
// decays geometrically: the top-r singular values against svd's, the
// reconstruction error against the optimal (Eckart-Young) one, and hsvd's error
// bound against its true error.
// Each time is the minimum over `reps` rounds (after a warm-up) of the slowest
// rank's time, the three methods interleaved within each round so that a change
// of load on a shared machine hits candidates and baseline alike.
//
//   mpirun -n 2 build/bench/bench_hsvd [m=16384 n=512 r=10 reps=3]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <ember.hpp>

#include "bench_util.hpp"

namespace {

using i64 = std::int64_t;


std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

// ||A - U diag(S) V^T||_F / ||A||_F for A split 0, U split 0 with A's rows, V
// replicated: local residual rows, one allreduce.
double relative_error(const ember::dndarray<double, 2>& A, const ember::linalg::rsvd_result<double>& f, i64 k) {
  const i64 ln = A.lshape()[0], n = A.shape()[1], ku = f.U.shape()[1], kv = f.V.shape()[1];
  auto U = f.U.moved_to(A.layout().with_shape({A.shape()[0], ku}, 0));
  auto V = ember::resplit(f.V, ember::none);
  // R = A_i - (U_i diag(S)) V^T, column-major n x ln (= row-major ln x n)
  std::vector<double> US(std::size_t(ln * k)), R(A.ldata(), A.ldata() + ln * n);
  for (i64 i = 0; i < ln; ++i)
    for (i64 j = 0; j < k; ++j) US[std::size_t(i * k + j)] = U.ldata()[i * ku + j] * f.S.ldata()[j];
  // row-major: R (ln x n) -= US (ln x k) V[:, :k]^T; column-major: R^T -= V_k US^T
  ember::lapack::gemm<double>(true, false, n, ln, k, -1.0, V.ldata(), kv, US.data(), k, 1.0, R.data(), n);
  double part[2] = {0, 0};
  for (i64 i = 0; i < ln * n; ++i) {
    part[0] += R[std::size_t(i)] * R[std::size_t(i)];
    part[1] += A.ldata()[i] * A.ldata()[i];
  }
  A.comm().allreduce(part, 2, ember::reduce_op::sum);
  return std::sqrt(part[0] / part[1]);
}

}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const int rank = w.rank();
  const i64 m = argc > 1 ? std::stoll(argv[1]) : 16384;
  const i64 n = argc > 2 ? std::stoll(argv[2]) : 512;
  const i64 r = argc > 3 ? std::stoll(argv[3]) : 10;
  const int reps = argc > 4 ? std::stoi(argv[4]) : 3;
  if (rank == 0)
    std::printf("truncated SVD benchmarks: %d ranks, A %lld x %lld float64 split 0, r = %lld, min of %d rounds\n",
                w.size(), (long long)m, (long long)n, (long long)r, reps);

  // A = Z diag(sigma) Q^T: Z Gaussian (split 0, generated per rank), Q a random
  // orthonormal n x n basis (replicated), sigma_j = 0.7^j: a geometrically
  // decaying spectrum (roughly sqrt(m) sigma_j), so a rank-r truncation has a
  // well-defined error to compare.
  ember::random::seed(1);
  auto Z = ember::random::randn<double>({m, n}, {.split = 0});
  std::vector<double> Q(std::size_t(n * n));
  {
    std::mt19937_64 g(9);
    std::normal_distribution<double> nd;
    for (auto& v : Q) v = nd(g);
    std::vector<double> tau(static_cast<std::size_t>(n));
    ember::lapack::geqrf<double>(n, n, Q.data(), n, tau.data());
    ember::lapack::orgqr<double>(n, n, n, Q.data(), n, tau.data());
    for (i64 j = 0; j < n; ++j)  // column j of Q scaled by sigma_j
      for (i64 i = 0; i < n; ++i) Q[std::size_t(i + j * n)] *= std::pow(0.7, double(j));
  }
  auto A = ember::empty_like(Z);
  // row-major A_i = Z_i (Q diag(sigma))^T; column-major A_i^T = (Q diag) Z_i^T
  ember::lapack::gemm<double>(false, false, n, Z.lshape()[0], n, 1.0, Q.data(), n, Z.ldata(), n, 0.0, A.ldata(), n);

  ember::linalg::svd_result<double> exact;
  ember::linalg::rsvd_result<double> rs;
  ember::linalg::hsvd_result<double> hs;
  const auto t = bench::time_interleaved(MPI_COMM_WORLD, reps,
                          {[&] { exact = ember::linalg::svd(A); }, [&] { hs = ember::linalg::hsvd_rank(A, r); },
                           [&] { rs = ember::linalg::rsvd(A, r); }});
  const std::string base = fmt("svd %.3f s", t[0]);
  bench::report(rank, "hsvd_rank(A, r) / svd(A)", t[1] / t[0], "<=", 0.5, fmt("hsvd %.3f s, ", t[1]) + base);
  bench::report(rank, "rsvd(A, r) / svd(A)", t[2] / t[0], "<=", 0.5, fmt("rsvd %.3f s, ", t[2]) + base);

  // accuracy at rank r against the exact SVD of the same matrix
  const double* se = exact.S.ldata();
  double total = 0, rest = 0;
  for (i64 j = 0; j < std::min(m, n); ++j) {
    total += se[j] * se[j];
    if (j >= r) rest += se[j] * se[j];
  }
  const double best = std::sqrt(rest / total);
  auto sv_err = [&](const ember::dndarray<double, 1>& S) {
    double e = 0;
    for (i64 j = 0; j < r; ++j) e = std::max(e, std::abs(S.ldata()[j] - se[j]) / se[j]);
    return e;
  };
  const double h_err = relative_error(A, {hs.U, hs.S, hs.V}, r), r_err = relative_error(A, rs, r);
  if (rank == 0)
    std::printf("accuracy at r = %lld: optimal relative error %.4e (sigma_%lld / sigma_1 = %.3e)\n", (long long)r, best,
                (long long)r + 1, se[r] / se[0]);
  bench::report(rank, "hsvd: error / optimal error", h_err / best, "<=", 1.05,
                fmt("error %.4e, max rel error of top-r sigma %.2e, bound %.4e", h_err, sv_err(hs.S), hs.error_estimate));
  bench::report(rank, "hsvd: error bound / true error", hs.error_estimate / h_err, ">=", 1.0,
                fmt("(the a-posteriori bound must hold: bound - error = %.2e)", hs.error_estimate - h_err));
  bench::report(rank, "rsvd: error / optimal error", r_err / best, "<=", 1.05,
                fmt("error %.4e, max rel error of top-r sigma %.2e", r_err, sv_err(rs.S)));
  return 0;
}
