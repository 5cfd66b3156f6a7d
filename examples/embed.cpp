// Embedding ember in an existing MPI code: the "simulation" below initializes MPI
// itself, works on a communicator of its own (the world split in two halves of
// ranks, as a coupled code would), and owns its field as a std::vector of local
// rows of rank-dependent length. ember wraps that memory without a copy, runs a
// fused update in place and a reduction, and the host code checks the result
// with its own loop and its own MPI_Allreduce.
//
//   mpirun -n 4 build/examples/embed [rows per rank]
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <ember.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);  // the host code's MPI
  int wrank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm half;  // the host code's own group of ranks
  MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half);
  int rank = 0, size = 1;
  MPI_Comm_rank(half, &rank);
  MPI_Comm_size(half, &size);

  const long base = argc > 1 ? std::atol(argv[1]) : 50;
  const std::int64_t nx = 7, rows = base + rank;  // uneven: each rank one row more
  std::int64_t first = 0;
  for (int r = 0; r < rank; ++r) first += base + r;
  std::vector<double> u(std::size_t(rows * nx));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < nx; ++j) u[std::size_t(i * nx + j)] = std::cos(double((first + i) * nx + j));
  const std::vector<double> before = u;

  bool ok = true;
  {
    ember::environment env(argc, argv);  // MPI is already up: ember leaves it to the host
    ember::communicator comm(half);      // a duplicate of the host's communicator
    auto U = ember::wrap(u.data(), {rows, nx}, {.split = 0, .comm = comm});
    ok = ok && U.shape()[0] == std::int64_t(size) * base + std::int64_t(size) * (size - 1) / 2;
    ok = ok && U.ldata() == u.data();  // no copy

    U = U * 0.5 + ember::sin(U);           // in place, over the host's memory
    const double energy = ember::sum(U * U);

    // the host code's own check: its loop and its allreduce
    double mine = 0, want = 0;
    for (std::size_t k = 0; k < u.size(); ++k) {
      const double v = before[k] * 0.5 + std::sin(before[k]);
      ok = ok && std::abs(u[k] - v) <= 1e-15 * std::abs(v) + 1e-300;
      mine += v * v;
    }
    MPI_Allreduce(&mine, &want, 1, MPI_DOUBLE, MPI_SUM, half);
    ok = ok && std::abs(energy - want) <= 1e-12 * want;
    if (rank == 0 && wrank == 0)
      std::printf("embed: %d ranks per half, field %lld x %lld wrapped in place, energy %.12g (host loop %.12g)\n",
                  size, static_cast<long long>(U.shape()[0]), static_cast<long long>(nx), energy, want);
  }
  int all_ok = ok ? 1 : 0, every = 0;
  MPI_Allreduce(&all_ok, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Comm_free(&half);
  MPI_Finalize();  // the host's, after ember's environment has ended
  if (!every) {
    if (wrank == 0) std::fprintf(stderr, "embed: FAILED: ember's in-place update or reduction differs from the host's\n");
    return 1;
  }
  return 0;
}
