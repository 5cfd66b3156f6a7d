// DSL and planner benchmarks (2 ranks): fused expression against a hand-written
// loop and against op-by-op evaluation with temporaries; fused sum(a*b) against a
// vectorized loop + MPI_Allreduce; per-evaluation overhead on a small array;
// plan_for at 65536 ranks. Every figure is a ratio measured in this run.
#include <chrono>
#include <cstring>
#include <string>

#include <ember.hpp>

#include "bench_util.hpp"

namespace {

// The hand-written reference: what a user would write over the local blocks.
void hand_loop(const double* a, const double* b, const double* c, const double* d, const double* e, double* r,
               std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) r[i] = a[i] * b[i] + c[i] * d[i] - 2.0 * e[i];
}

double hand_dot(const double* a, const double* b, std::int64_t n) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (std::int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const int rank = w.rank();
  MPI_Comm comm = MPI_COMM_WORLD;
  const std::int64_t n = argc > 1 ? std::stoll(argv[1]) : (std::int64_t(1) << 25);
  const int reps = argc > 2 ? std::stoi(argv[2]) : 7;
  if (rank == 0) std::printf("ember expression benchmarks: %d ranks, %lld doubles, median of %d\n", w.size(), (long long)n, reps);

  auto a = ember::random::randn<double>({n}, {.split = 0});
  auto b = ember::random::randn<double>({n}, {.split = 0});
  auto c = ember::random::randn<double>({n}, {.split = 0});
  auto d = ember::random::randn<double>({n}, {.split = 0});
  auto e = ember::random::randn<double>({n}, {.split = 0});
  const std::int64_t ln = a.lnumel();

  // ---- r = a*b + c*d - 2*e ----
  {
    ember::dndarray<double, 1> r = a * b + c * d - 2.0 * e;  // result storage exists: writes in place
    auto out = ember::detail::allocate<double>(ln);
    const double t_hand = bench::time_collective(comm, reps, [&] {
      hand_loop(a.ldata(), b.ldata(), c.ldata(), d.ldata(), e.ldata(), out.get(), ln);
    });
    const double t_fused = bench::time_collective(comm, reps, [&] { r = a * b + c * d - 2.0 * e; });
    // op by op, each into a temporary, as an eager array library evaluates it
    const double t_eager = bench::time_collective(comm, reps, [&] {
      ember::dndarray<double, 1> t1 = a * b;
      ember::dndarray<double, 1> t2 = c * d;
      ember::dndarray<double, 1> t3 = t1 + t2;
      ember::dndarray<double, 1> t4 = 2.0 * e;
      ember::dndarray<double, 1> t5 = t3 - t4;
    });
    // NumPy's way: every op allocates a fresh temporary (new pages, first-touch
    // faults) and makes one pass over memory
    const double t_numpy = bench::time_collective(comm, reps, [&] {
      auto op = [&](auto f) {
        std::unique_ptr<double[]> t(new double[std::size_t(ln)]);
        for (std::int64_t i = 0; i < ln; ++i) t[std::size_t(i)] = f(i);
        return t;
      };
      const double *pa = a.ldata(), *pb = b.ldata(), *pc = c.ldata(), *pd = d.ldata(), *pe = e.ldata();
      auto t1 = op([&](std::int64_t i) { return pa[i] * pb[i]; });
      auto t2 = op([&](std::int64_t i) { return pc[i] * pd[i]; });
      auto t3 = op([&](std::int64_t i) { return t1[std::size_t(i)] + t2[std::size_t(i)]; });
      auto t4 = op([&](std::int64_t i) { return 2.0 * pe[i]; });
      auto t5 = op([&](std::int64_t i) { return t3[std::size_t(i)] - t4[std::size_t(i)]; });
    });
    const bool same = std::memcmp(out.get(), r.ldata(), std::size_t(ln) * 8) == 0;
    bench::report(rank, "fused a*b+c*d-2*e / hand-written loop", t_fused / t_hand, "<=", 1.1,
                  "fused " + std::to_string(t_fused) + " s, hand " + std::to_string(t_hand) + " s" +
                      (same ? "" : "  RESULTS DIFFER"));
    bench::report(rank, "op-by-op, NumPy-style temporaries / fused", t_numpy / t_fused, ">=", 10.0,
                  "op-by-op " + std::to_string(t_numpy) + " s");
    bench::report(rank, "op-by-op, ember eager temporaries / fused", t_eager / t_fused, ">=", 10.0,
                  "eager " + std::to_string(t_eager) + " s (ember's allocator: huge pages)");
  }

  // ---- sum(a * b) ----
  {
    double s_hand = 0, s_ember = 0;
    const double t_hand = bench::time_collective(comm, reps, [&] {
      double local = hand_dot(a.ldata(), b.ldata(), ln);
      MPI_Allreduce(&local, &s_hand, 1, MPI_DOUBLE, MPI_SUM, comm);
    });
    const double t_ember = bench::time_collective(comm, reps, [&] { s_ember = ember::sum(a * b); });
    bench::report(rank, "sum(a*b) / (vectorized loop + Allreduce)", t_ember / t_hand, "<=", 1.2,
                  "ember " + std::to_string(t_ember) + " s, hand " + std::to_string(t_hand) +
                      " s, |diff| " + std::to_string(std::abs(s_ember - s_hand)));
  }

  // ---- std(a, 0) against mean(a, 0) on a 4096 x 4096 split-0 matrix (issue 15):
  // the planner computes the mean once (one pass, one allreduce) and then the
  // squared deviations (a second pass, a second allreduce); also reported: how
  // many passes over A the plan makes.
  {
    auto A = ember::random::randn<double>({4096, 4096}, {.split = 0});
    ember::dndarray<double, 1> mu = ember::mean(A, 0), sd = ember::std(A, 0);  // planned once
    const double t_mean = bench::time_collective(comm, reps, [&] { mu = ember::mean(A, 0); });
    const double t_std = bench::time_collective(comm, reps, [&] { sd = ember::std(A, 0); });
    int sums = 0;
    for (const auto& st : ember::explain(ember::std(A, 0)).steps)
      sums += st.kind == ember::planner::step_kind::fused_kernel && st.text.rfind("sum(", 0) == 0;
    bench::report(rank, "std(A, 0) / mean(A, 0), 4096^2 split 0", t_std / t_mean, "<=", 1.3,
                  "std " + std::to_string(t_std) + " s, mean " + std::to_string(t_mean) + " s, " +
                      std::to_string(sums) + " passes over A");
  }

  // ---- per-evaluation overhead: a 10-op expression over 1000 elements ----
  {
    auto x = ember::random::randn<double>({1000}, {.split = 0});
    auto y = ember::random::randn<double>({1000}, {.split = 0});
    ember::dndarray<double, 1> r = x * y + x - y * 2.0 + ember::sin(x) * ember::abs(y) - x / 3.0 + y;
    auto out = ember::detail::allocate<double>(x.lnumel());
    const std::int64_t m = x.lnumel();
    const int iters = 20000;
    auto loop = [&] {
      const double* px = x.ldata();
      const double* py = y.ldata();
      double* o = out.get();
      for (std::int64_t i = 0; i < m; ++i)
        o[i] = px[i] * py[i] + px[i] - py[i] * 2.0 + std::sin(px[i]) * std::abs(py[i]) - px[i] / 3.0 + py[i];
    };
    const double t_loop = bench::time_collective(comm, 5, [&] {
      for (int k = 0; k < iters; ++k) loop();
    });
    const double t_ember = bench::time_collective(comm, 5, [&] {
      for (int k = 0; k < iters; ++k) r = x * y + x - y * 2.0 + ember::sin(x) * ember::abs(y) - x / 3.0 + y;
    });
    const double overhead_us = (t_ember - t_loop) / iters * 1e6;
    bench::report(rank, "10-op expr on 1000 elements: overhead us/eval", overhead_us, "<=", 5.0,
                  "loop " + std::to_string(t_loop / iters * 1e6) + " us, ember " + std::to_string(t_ember / iters * 1e6) + " us");
  }

  // ---- plan_for a 20-node expression at 65536 ranks ----
  {
    auto p = ember::zeros<double>({1 << 20, 256}, {.split = 0});
    auto q = ember::zeros<double>({1 << 20, 256}, {.split = 1});
    auto expr = ember::sin(p) * 2.0 + q / (1.0 + ember::abs(p)) - ember::sqrt(ember::abs(q)) * p + ember::exp(-p);
    const auto t0 = std::chrono::steady_clock::now();
    int plans = 0;
    while (seconds_since(t0) < 0.5 || plans < 3) {
      auto pl = ember::plan_for(expr, 65536);
      ++plans;
    }
    const double ms = seconds_since(t0) / plans * 1e3;
    bench::report(rank, "plan_for 20-node expr at P=65536: ms", ms, "<=", 10.0, std::to_string(plans) + " plans");
  }
  return 0;
}
