// matmul benchmark (2 ranks, one BLAS thread per rank): ember::matmul of n x n
// doubles for every split pair of A and B, against the baseline the issue names:
// one local dgemm per rank of the same flops divided over the ranks (an n/P x n
// times n x n product), with no communication at all. Also prints the algorithm
// the planner chose and what plan_for picks at 2 and 4096 ranks.
#include <complex>
#include <string>

#include <ember.hpp>

#include "bench_util.hpp"

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const int rank = w.rank(), P = w.size();
  MPI_Comm comm = MPI_COMM_WORLD;
  const std::int64_t n = argc > 1 ? std::stoll(argv[1]) : 2048;
  const int reps = argc > 2 ? std::stoi(argv[2]) : 3;
  if (rank == 0) std::printf("ember matmul benchmarks: %d ranks, %lld x %lld doubles, median ratio of %d rounds\n", P, (long long)n, (long long)n, reps);

  // baseline: the same flops divided over the ranks, local dgemm only
  const std::int64_t rows = (n + P - 1) / P;
  auto la = ember::detail::allocate<double>(rows * n), lb = ember::detail::allocate<double>(n * n),
       lc = ember::detail::allocate<double>(rows * n);
  std::fill_n(la.get(), rows * n, 0.5);
  std::fill_n(lb.get(), n * n, 0.25);
  auto baseline = [&] { ember::local_gemm<double>(rows, n, n, la.get(), n, lb.get(), n, 0.0, lc.get(), n); };

  const ember::split_axis splits[] = {ember::split_axis{0}, ember::split_axis{1}, ember::split_axis{}};
  auto text = [](ember::split_axis s) { return s ? std::to_string(*s) : std::string("none"); };
  double worst = 0;
  for (auto sa : splits)
    for (auto sb : splits) {
      auto A = ember::random::randn<double>({n, n}, {.split = sa});
      auto B = ember::random::randn<double>({n, n}, {.split = sb});
      ember::dndarray<double, 2> C = ember::matmul(A, B);
      const auto p = ember::explain(ember::matmul(A, B));
      std::string alg = "?";
      for (const auto& s : p.steps)
        if (s.product) alg = ember::name(s.product->alg);
      // the baseline and the candidate back to back in each round; the median of
      // the rounds' ratios, so the drifting speed of a shared machine hits both alike
      const auto [ratio, t_base] = bench::ratio_rounds(comm, reps, baseline, [&] { C = ember::matmul(A, B); });
      worst = std::max(worst, ratio);
      char extra[160];
      std::snprintf(extra, sizeof extra, "%s, %lld KiB/rank moved, dgemm %.3f s", alg.c_str(),
                    (long long)(p.max_rank().bytes >> 10), t_base);
      bench::report(rank, ("matmul A split " + text(sa) + " x B split " + text(sb) + " / local dgemm").c_str(), ratio,
                    "<=", 1.15, extra);
    }
  bench::report(rank, "matmul, worst split pair / local dgemm", worst, "<=", 1.15, "");

  // complex128: the same against one local zgemm of the same flops (three split
  // pairs: the local product, a ring and a reduction over k)
  {
    using c128 = ember::complex128;
    using namespace std::complex_literals;
    auto za = ember::detail::allocate<c128>(rows * n), zb = ember::detail::allocate<c128>(n * n),
         zc = ember::detail::allocate<c128>(rows * n);
    std::fill_n(za.get(), rows * n, c128(0.5, -0.25));
    std::fill_n(zb.get(), n * n, c128(0.25, 0.5));
    auto zbase = [&] { ember::local_gemm<c128>(rows, n, n, za.get(), n, zb.get(), n, c128(0), zc.get(), n); };
    const std::pair<ember::split_axis, ember::split_axis> pairs[] = {
        {ember::split_axis{0}, ember::split_axis{}}, {ember::split_axis{0}, ember::split_axis{0}},
        {ember::split_axis{1}, ember::split_axis{0}}};
    double zworst = 0;
    for (auto [sa, sb] : pairs) {
      ember::dndarray<c128, 2> A = ember::random::randn<double>({n, n}, {.split = sa}) + 1.0i * ember::random::randn<double>({n, n}, {.split = sa});
      ember::dndarray<c128, 2> B = ember::random::randn<double>({n, n}, {.split = sb}) - 0.5i * ember::random::randn<double>({n, n}, {.split = sb});
      ember::dndarray<c128, 2> C = ember::matmul(A, B);
      const auto p = ember::explain(ember::matmul(A, B));
      std::string alg = "?";
      for (const auto& s : p.steps)
        if (s.product) alg = ember::name(s.product->alg);
      const auto [ratio, t_base] = bench::ratio_rounds(comm, reps, zbase, [&] { C = ember::matmul(A, B); });
      zworst = std::max(zworst, ratio);
      char extra[160];
      std::snprintf(extra, sizeof extra, "%s, zgemm %.3f s", alg.c_str(), t_base);
      bench::report(rank, ("complex128 matmul A split " + text(sa) + " x B split " + text(sb) + " / local zgemm").c_str(),
                    ratio, "<=", 1.15, extra);
    }
    bench::report(rank, "complex128 matmul, worst split pair / local zgemm", zworst, "<=", 1.15, "");
  }

  // batched matmul, stacks split on the batch axis: against a loop of local
  // dgemms over each rank's own batches (buffers allocated once), and, for one
  // weight matrix shared by every batch, against the one dgemm a hand-written
  // code does over all local rows. No communication on either side.
  {
    struct stack_case {
      std::int64_t b, m;
    };
    for (const auto [nb, m] : {stack_case{64, 256}, stack_case{8192, 16}}) {
      const std::int64_t lb = (nb + P - 1) / P, mm = m * m;
      auto xa = ember::detail::allocate<double>(lb * mm), xb = ember::detail::allocate<double>(lb * mm),
           xc = ember::detail::allocate<double>(lb * mm);
      std::fill_n(xa.get(), lb * mm, 0.5);
      std::fill_n(xb.get(), lb * mm, 0.25);
      auto loop = [&] {
        for (std::int64_t t = 0; t < lb; ++t)
          ember::local_gemm<double>(m, m, m, xa.get() + t * mm, m, xb.get() + t * mm, m, 0.0, xc.get() + t * mm, m);
      };
      auto one = [&] { ember::local_gemm<double>(lb * m, m, m, xa.get(), m, xb.get(), m, 0.0, xc.get(), m); };
      auto A = ember::random::randn<double>({nb, m, m}, {.split = 0});
      auto B = ember::random::randn<double>({nb, m, m}, {.split = 0});
      auto W = ember::random::randn<double>({m, m});
      ember::dndarray<double, 3> C = ember::matmul(A, B);
      const auto p = ember::explain(ember::matmul(A, B));
      char what[160], extra[160];
      const auto [r1, t1] = bench::ratio_rounds(comm, reps, loop, [&] { C = ember::matmul(A, B); });
      std::snprintf(what, sizeof what, "batched matmul (%lld, %lld, %lld) split 0 / loop of local dgemms",
                    (long long)nb, (long long)m, (long long)m);
      std::snprintf(extra, sizeof extra, "%lld B moved, loop %.3f s", (long long)p.max_rank().bytes, t1);
      bench::report(rank, what, r1, "<=", 1.15, extra);
      C = ember::matmul(A, W);
      const auto [r2, t2] = bench::ratio_rounds(comm, reps, one, [&] { C = ember::matmul(A, W); });
      std::snprintf(what, sizeof what, "batched matmul (%lld, %lld, %lld) split 0 @ shared (%lld, %lld) / one local dgemm",
                    (long long)nb, (long long)m, (long long)m, (long long)m, (long long)m);
      std::snprintf(extra, sizeof extra, "%lld B moved, dgemm %.3f s",
                    (long long)ember::explain(ember::matmul(A, W)).max_rank().bytes, t2);
      bench::report(rank, what, r2, "<=", 1.15, extra);
    }
  }

  // the 2-D algorithm at scale, a 1-D one on 2 ranks (plans only, nothing runs)
  const std::int64_t N = 65536;
  ember::dndarray<double, 2> Ab(ember::layout::balanced({N, N}, 0, P), w, std::shared_ptr<double[]>());
  for (int ranks : {2, 64, 4096}) {
    const auto p = ember::plan_for(ember::matmul(Ab, Ab), ranks);
    std::string alg;
    for (const auto& s : p.steps)
      if (s.product) alg = ember::name(s.product->alg);
    if (rank == 0)
      std::printf("plan_for(matmul(A, B), %d), %lld^2 split 0: %s, %.1f MiB/rank predicted\n", ranks, (long long)N,
                  alg.c_str(), double(p.max_rank().bytes) / (1 << 20));
  }
  return 0;
}
