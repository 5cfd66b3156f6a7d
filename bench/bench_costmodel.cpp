// Measures the planner's cost-model constants on this machine: alpha (seconds per
// message, from small-message ping-pong) and beta (seconds per byte, from large
// messages), over ember's own communicator, and kappa (seconds per byte a rank
// writes when it copies locally: a 64 MiB memcpy between buffers allocated once,
// both ranks copying at once as they do inside a plan). Prints them as the
// environment variables the planner reads (EMBER_ALPHA, EMBER_BETA, EMBER_KAPPA).
// Run on 2 ranks.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include <ember.hpp>

#include "bench_util.hpp"

namespace {
double pingpong(const ember::communicator& c, std::int64_t bytes, int iters) {
  std::vector<char> buf(std::size_t(std::max<std::int64_t>(bytes, 1)));
  MPI_Comm comm = c.native();
  const int peer = 1 - c.rank();
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    if (c.rank() == 0) {
      MPI_Send(buf.data(), int(bytes), MPI_BYTE, peer, 0, comm);
      MPI_Recv(buf.data(), int(bytes), MPI_BYTE, peer, 0, comm, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), int(bytes), MPI_BYTE, peer, 0, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), int(bytes), MPI_BYTE, peer, 0, comm);
    }
  }
  return (MPI_Wtime() - t0) / (2.0 * iters);  // one-way time
}

// Seconds per byte written by a large local copy (best of several).
double copy_time(const ember::communicator& c, std::int64_t bytes, int reps) {
  std::vector<char> src(std::size_t(bytes), 1), dst(std::size_t(bytes), 0);
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(c.native());
    const double t0 = MPI_Wtime();
    std::memcpy(dst.data(), src.data(), src.size());
    best = std::min(best, MPI_Wtime() - t0);
    src[std::size_t(i) % src.size()] = dst[std::size_t(i + 1) % dst.size()];
  }
  return best / double(bytes);
}
}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  if (w.size() != 2) {
    if (w.rank() == 0) std::fprintf(stderr, "bench_costmodel: run on exactly 2 ranks\n");
    return 1;
  }
  pingpong(w, 8, 1000);  // warm-up
  const double alpha = pingpong(w, 8, 20000);
  const std::int64_t big = 16 << 20;
  const double t_big = pingpong(w, big, 20);
  const double beta = (t_big - alpha) / double(big);
  const double kappa = copy_time(w, 64 << 20, 8);
  const auto& cur = ember::planner::cost_model();
  if (w.rank() == 0) {
    std::printf("cost model measured here: alpha %.3g s/message, beta %.3g s/byte (%.2f GB/s), kappa %.3g s/byte "
                "copied (%.2f GB/s)\n",
                alpha, beta, 1e-9 / beta, kappa, 1e-9 / kappa);
    std::printf("planner defaults:         alpha %.3g s/message, beta %.3g s/byte, kappa %.3g s/byte\n", cur.alpha,
                cur.beta, cur.kappa);
    std::printf("to use the measured values: export EMBER_ALPHA=%.3g EMBER_BETA=%.3g EMBER_KAPPA=%.3g\n", alpha, beta,
                kappa);
  }
  return 0;
}
