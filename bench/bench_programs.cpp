// Issue 15: a user's whole program against NumPy running the same program, timed
// in the same run. Logistic regression by gradient descent, as a NumPy user
// writes it:
//
//   p = 1 / (1 + exp(-(X @ w)));  g = X.T @ (p - y) / n;  w -= lr * g     (50 steps)
//
// X is (100000, 20) split 0, y (100000,) split 0, w (20,) replicated. NumPy's time
// comes from a python3 subprocess (rank 0, one BLAS thread) on data of the same
// shape; ember's result is checked against a serial loop over the gathered data.
// Targets: <= 1.2x NumPy at 1 rank, faster than NumPy at 2 ranks. Also reported:
// the plan of one step (what it moves and copies).
//
//   mpirun -n 1 build/bench/bench_programs [n] [d] [steps]
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <ember.hpp>

#include "bench_util.hpp"

namespace {
// NumPy's time for the same loop (seconds), or a negative number without NumPy.
double numpy_time(long long n, long long d, int steps) {
  const std::string prog =
      "import os, time\n"
      "os.environ['OPENBLAS_NUM_THREADS'] = '1'\n"
      "import numpy as np\n"
      "rng = np.random.default_rng(1)\n"
      "n, d, steps = " + std::to_string(n) + ", " + std::to_string(d) + ", " + std::to_string(steps) + "\n"
      "X = rng.standard_normal((n, d)); y = (rng.random(n) < 0.5).astype(np.float64); w = np.zeros(d)\n"
      "best = 1e300\n"
      "for rep in range(3):\n"
      "    w = np.zeros(d); t = time.perf_counter()\n"
      "    for s in range(steps):\n"
      "        p = 1.0 / (1.0 + np.exp(-(X @ w)))\n"
      "        g = X.T @ (p - y) / n\n"
      "        w = w - 0.5 * g\n"
      "    best = min(best, time.perf_counter() - t)\n"
      "print(best)\n";
  const std::string cmd = "OPENBLAS_NUM_THREADS=1 /usr/bin/python3 -c \"" + prog + "\" 2>/dev/null";
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return -1;
  double t = -1;
  if (std::fscanf(f, "%lf", &t) != 1) t = -1;
  pclose(f);
  return t;
}
}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w0 = ember::world();
  MPI_Comm comm = w0.native();
  const int rank = w0.rank(), P = w0.size();
  const std::int64_t n = argc > 1 ? std::atol(argv[1]) : 100000, d = argc > 2 ? std::atol(argv[2]) : 20;
  const int steps = argc > 3 ? std::atoi(argv[3]) : 50;
  const double lr = 0.5;

  auto X = ember::random::randn<double>({n, d}, {.split = 0});
  auto u = ember::random::rand<double>({n}, {.split = 0});
  ember::dndarray<double, 1> y = ember::astype<double>(u < 0.5);
  ember::dndarray<double, 1> w = ember::zeros<double>({d});
  auto fit = [&] {
    w = ember::zeros<double>({d});
    for (int s = 0; s < steps; ++s) {
      ember::dndarray<double, 1> p = 1.0 / (1.0 + ember::exp(-ember::matmul(X, w)));
      ember::dndarray<double, 1> g = ember::matmul(ember::transpose(X), p - y);
      w = w - (lr / double(n)) * g;
    }
  };
  fit();
  // the serial reference on the gathered data
  auto Xg = ember::resplit(X, ember::none);
  auto yg = ember::resplit(y, ember::none);
  std::vector<double> ws(static_cast<std::size_t>(d), 0.0), p(static_cast<std::size_t>(n));
  for (int s = 0; s < steps; ++s) {
    for (std::int64_t i = 0; i < n; ++i) {
      double z = 0;
      for (std::int64_t j = 0; j < d; ++j) z += Xg.ldata()[i * d + j] * ws[std::size_t(j)];
      p[std::size_t(i)] = 1.0 / (1.0 + std::exp(-z)) - yg.ldata()[i];
    }
    std::vector<double> g(static_cast<std::size_t>(d), 0.0);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < d; ++j) g[std::size_t(j)] += Xg.ldata()[i * d + j] * p[std::size_t(i)];
    for (std::int64_t j = 0; j < d; ++j) ws[std::size_t(j)] -= lr / double(n) * g[std::size_t(j)];
  }
  double err = 0;
  for (std::int64_t j = 0; j < d; ++j) err = std::max(err, std::abs(w.ldata()[j] - ws[std::size_t(j)]));
  const bool ok = w0.allreduce(int(err < 1e-9), ember::reduce_op::land) != 0;

  const double t = bench::time_collective(comm, 3, fit);
  double tn = -1;
  if (rank == 0) tn = numpy_time(n, d, steps);
  MPI_Bcast(&tn, 1, MPI_DOUBLE, 0, comm);
  if (rank == 0) {
    std::printf("bench_programs: logistic regression %lld x %lld, %d steps on %d ranks; result %s (max |w - serial| %.1e)\n",
                static_cast<long long>(n), static_cast<long long>(d), steps, P, ok ? "matches the serial loop" : "DIFFERS",
                err);
    std::printf("one step's product plan:\n%s\n",
                ember::explain(ember::matmul(ember::transpose(X), y - 0.5)).to_string().c_str());
  }
  if (tn > 0)
    bench::report(rank, "logistic regression: ember / NumPy", t / tn, "<=", P == 1 ? 1.2 : 1.0,
                  "ember " + std::to_string(t) + " s, NumPy " + std::to_string(tn) + " s (same run, 1 BLAS thread)");
  else if (rank == 0)
    std::printf("logistic regression: ember %.3f s (no python3-numpy: no ratio)\n", t);
  return ok ? 0 : 1;
}
