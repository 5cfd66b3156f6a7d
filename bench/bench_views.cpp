// Issue 14: a 5-point Jacobi step written with views against the hand-written MPI
// code it replaces, in the same run.
//
//   ember:     v(in, in) = u(in, in) + k * (u(up, in) + u(down, in) + u(in, up) + u(in, down) - 4 u(in, in))
//   baseline:  local rows plus two ghost rows allocated once; MPI_Sendrecv of the
//              boundary rows with both neighbours; one loop over the interior.
//
// Reported: time per step ember / baseline (target <= 1.15), the bytes the busiest
// rank sends per step against the halo (one interior row per neighbour), and the
// blocks ember allocates per step (target 0).
//
//   mpirun -n 2 build/bench/bench_views [n] [steps]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <ember.hpp>

#include "bench_util.hpp"

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  MPI_Comm comm = w.native();
  const int rank = w.rank(), P = w.size();
  const std::int64_t n = argc > 1 ? std::atol(argv[1]) : 4096;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
  const double k = 0.2;

  // ---- baseline: ghost rows, Sendrecv, one loop ----
  const auto lay = ember::layout::balanced({n, n}, 0, P);
  const std::int64_t rows = lay.extent(rank), first = lay.offset(rank);
  std::vector<double> bu(std::size_t((rows + 2) * n)), bv(bu.size());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < n; ++j) bu[std::size_t((i + 1) * n + j)] = double((first + i) * 7 + j) * 1e-3;
  bv = bu;
  const int upper = rank > 0 ? rank - 1 : MPI_PROC_NULL, lower = rank < P - 1 ? rank + 1 : MPI_PROC_NULL;
  auto baseline_step = [&] {
    MPI_Sendrecv(&bu[std::size_t(n)], int(n), MPI_DOUBLE, upper, 0, &bu[std::size_t((rows + 1) * n)], int(n),
                 MPI_DOUBLE, lower, 0, comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&bu[std::size_t(rows * n)], int(n), MPI_DOUBLE, lower, 1, &bu[0], int(n), MPI_DOUBLE, upper, 1, comm,
                 MPI_STATUS_IGNORE);
    const std::int64_t i0 = first == 0 ? 2 : 1, i1 = first + rows == n ? rows : rows + 1;  // global boundary rows fixed
    for (std::int64_t i = i0; i < i1; ++i) {
      const double* c = &bu[std::size_t(i * n)];
      double* o = &bv[std::size_t(i * n)];
      for (std::int64_t j = 1; j < n - 1; ++j)
        o[j] = c[j] + k * (c[j - n] + c[j + n] + c[j - 1] + c[j + 1] - 4.0 * c[j]);
    }
    std::swap(bu, bv);
  };

  // ---- ember ----
  auto u = ember::zeros<double>({n, n}, {.split = 0});
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < n; ++j) u.ldata()[i * n + j] = double((first + i) * 7 + j) * 1e-3;
  auto v = u.copy();
  using ember::slice;
  const auto in = slice(1, -1), up = slice(0, -2), down = slice(2, ember::none);
  auto ember_step = [&] {
    v(in, in) = u(in, in) + k * (u(up, in) + u(down, in) + u(in, up) + u(in, down) - 4.0 * u(in, in));
    std::swap(u, v);
  };

  // same result first (both from the same start, the same number of steps)
  for (int s = 0; s < 2; ++s) {
    baseline_step();
    ember_step();
  }
  bool same = true;
  for (std::int64_t i = 0; i < rows * n; ++i) same = same && u.ldata()[i] == bu[std::size_t(n + i)];
  same = w.allreduce(int(same), ember::reduce_op::land) != 0;

  const auto before = w.sent();
  const auto blocks = ember::allocations().count;
  ember_step();
  const auto sent = w.sent() - before;
  const auto per_step_blocks = ember::allocations().count - blocks;
  const std::int64_t bytes_max = w.allreduce(sent.bytes, ember::reduce_op::max);

  const auto [ratio, base_t] = bench::ratio_rounds(comm, 5, [&] {
    for (int s = 0; s < steps; ++s) baseline_step();
  }, [&] {
    for (int s = 0; s < steps; ++s) ember_step();
  });
  if (rank == 0) std::printf("bench_views: %lld x %lld split 0 on %d ranks, %d steps per round; results %s\n",
                             static_cast<long long>(n), static_cast<long long>(n), P, steps,
                             same ? "bit-identical to the baseline" : "DIFFER FROM THE BASELINE");
  bench::report(rank, "jacobi step: views / Sendrecv + loop", ratio, "<=", 1.15,
                "baseline " + std::to_string(base_t / steps * 1e3) + " ms per step");
  // the halo: one interior row (n - 2 values) to each neighbour; ember's entry
  // agreement adds one small allreduce (16 bytes) per evaluation
  const double halo_bytes = double(std::min(2, P - 1) * (n - 2) * 8);
  bench::report(rank, "jacobi step: bytes sent per rank / halo rows", P > 1 ? double(bytes_max) / halo_bytes : 0.0,
                "<=", 1.01, std::to_string(bytes_max) + " B on the busiest rank, halo " +
                                std::to_string(static_cast<long long>(halo_bytes)) + " B");
  bench::report(rank, "jacobi step: blocks allocated per step", double(per_step_blocks), "<=", 0.0,
                "(ghost rows allocated once per plan, setitem straight into v)");
  return same ? 0 : 1;
}
