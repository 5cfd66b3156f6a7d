// ember::einsum against its baselines, measured in the same run (issue 18):
//   ij,jk->ik       vs ember::matmul on the same operands (target <= 1.05)
//   bij,bjk->bik    split on b, vs a loop of local dgemms over each rank's
//                   batches, output allocated once (target <= 1.15)
//   ij,jk,kl->il    j small: einsum's chosen order vs the bad order (a speedup)
// Usage: mpirun -n 2 bench_einsum [n=1024] [batches=64] [m=128] [reps=5]
#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <ember.hpp>

namespace {
template <class F>
double best(int reps, F&& f) {
  double t = 1e300;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    f();
    MPI_Barrier(MPI_COMM_WORLD);
    t = std::min(t, MPI_Wtime() - t0);
  }
  return t;
}
}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1024, b = argc > 2 ? std::atoll(argv[2]) : 64,
                     m = argc > 3 ? std::atoll(argv[3]) : 128;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 5;
  const bool root = ember::world().rank() == 0;
  const int P = ember::world().size();

  const auto A = ember::random::rand<double>({n, n}, {.split = 0});
  const auto B = ember::random::rand<double>({n, n}, {.split = 0});
  const double t_mm = best(reps, [&] { ember::dndarray<double, 2> C = ember::matmul(A, B); });
  const double t_es = best(reps, [&] { ember::dndarray<double, 2> C = ember::einsum("ij,jk->ik", A, B); });

  const auto X = ember::random::rand<double>({b, m, m}, {.split = 0});
  const auto Y = ember::random::rand<double>({b, m, m}, {.split = 0});
  ember::dndarray<double, 3> Z = ember::empty<double>({b, m, m}, {.split = 0});
  const double t_loop = best(reps, [&] {
    const std::int64_t lb = X.lshape()[0];
    for (std::int64_t i = 0; i < lb; ++i)
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(m), int(m), 1.0, X.ldata() + i * m * m,
                  int(m), Y.ldata() + i * m * m, int(m), 0.0, Z.ldata() + i * m * m, int(m));
  });
  const double t_bes = best(reps, [&] { auto W = ember::einsum<"bij,bjk->bik">(X, Y); });

  const auto U = ember::random::rand<double>({n, 2}, {.split = 0});
  const auto V = ember::random::rand<double>({2, n}, {.split = 0});
  const double t_good = best(reps, [&] { ember::dndarray<double, 2> R = ember::einsum("ij,jk,kl->il", U, V, A); });
  const double t_bad = best(reps, [&] {
    ember::dndarray<double, 2> R = ember::einsum("ij,jk,kl->il", U, V, A, ember::einsum_options{.path = {{0, 1}, {0, 1}}});
  });
  if (root) {
    std::printf("bench_einsum at %d ranks (best of %d)\n", P, reps);
    std::printf("ij,jk->ik %lldx%lld:      einsum %.4f s, matmul %.4f s, ratio %.3f (target <= 1.05)\n", (long long)n,
                (long long)n, t_es, t_mm, t_es / t_mm);
    std::printf("bij,bjk->bik %lldx%lld^2: einsum %.4f s, local dgemm loop %.4f s, ratio %.3f (target <= 1.15)\n",
                (long long)b, (long long)m, t_bes, t_loop, t_bes / t_loop);
    std::printf("ij,jk,kl->il j=2:       chosen order %.4f s, left to right %.4f s, speedup %.1fx\n", t_good, t_bad,
                t_bad / t_good);
    std::printf("%s", ember::einsum_path("ij,jk,kl->il", U, V, A).to_string().c_str());
  }
}
