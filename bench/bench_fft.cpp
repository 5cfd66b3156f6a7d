// Distributed FFTs (issue 18), 2 ranks, one thread per rank, against FFTW-MPI on
// the same data in the same run (median ratio of rounds; both plans made once,
// FFTW_ESTIMATE for both (`measure`: FFTW-MPI's FFTW_MEASURE), buffers allocated once; ember's results written into
// arrays allocated once, as a time loop would):
//   fftn of a 256^3 complex128 array split 0, the result in the transposed
//   layout: against fftw_mpi_plan_dft_3d with FFTW_MPI_TRANSPOSED_OUT;
//   the same back in split 0: against fftw_mpi_plan_dft_3d without the flag;
//   rfft2 of a 4096^2 float64 array split 0: against fftw_mpi_plan_dft_r2c_2d
//   with FFTW_MPI_TRANSPOSED_OUT (and back in split 0 without it; FFTW-MPI's
//   r2c input is padded to 2 (n/2 + 1) columns, which its user stores so).
// Also the local building block: a 1-D batch of rfft lines against one FFTW
// plan over the same batch.
// Usage: bench_fft [n3 = 256] [n2 = 4096] [rounds = 5] [measure]
#include <fftw3-mpi.h>

#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include <ember.hpp>

#include "bench_util.hpp"

namespace {

using cd = std::complex<double>;

void report(int rank, const char* what, std::pair<double, double> r, double target) {
  if (rank == 0)
    std::printf("  %-58s %7.3f  (FFTW-MPI %.4f s; target <= %.2f%s)\n", what, r.first, r.second, target,
                r.first <= target ? "" : ", MISS");
}

// Every rank's count of FFTW's local rows.
std::vector<std::int64_t> rows_of(MPI_Comm comm, ptrdiff_t mine) {
  int P = 1;
  MPI_Comm_size(comm, &P);
  long long m = mine;
  std::vector<long long> all(static_cast<std::size_t>(P));
  MPI_Allgather(&m, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, comm);
  return std::vector<std::int64_t>(all.begin(), all.end());
}

}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const int rank = w.rank(), P = w.size();
  MPI_Comm comm = MPI_COMM_WORLD;
  const std::int64_t n3 = argc > 1 ? std::stoll(argv[1]) : 256;
  const std::int64_t n2 = argc > 2 ? std::stoll(argv[2]) : 4096;
  const int reps = argc > 3 ? std::stoi(argv[3]) : 5;
  // `measure`: FFTW-MPI plans with FFTW_MEASURE (its planner times candidate
  // algorithms: minutes for these sizes; ember keeps FFTW_ESTIMATE)
  const bool measure = argc > 4 && std::string(argv[4]) == "measure";
  const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  fftw_mpi_init();
  namespace fft = ember::fft;
  if (rank == 0)
    std::printf("ember fft benchmarks: %d ranks, ratio ember / FFTW-MPI (median of %d rounds; FFTW-MPI plans %s)\n", P, reps,
                measure ? "FFTW_MEASURE" : "FFTW_ESTIMATE");

  {  // 3-D complex
    const ptrdiff_t N = n3;
    ptrdiff_t ln0, l0s, ln1, l1s;
    const ptrdiff_t alloc = fftw_mpi_local_size_3d_transposed(N, N, N, comm, &ln0, &l0s, &ln1, &l1s);
    fftw_complex* in = fftw_alloc_complex(std::size_t(alloc));
    fftw_complex* out = fftw_alloc_complex(std::size_t(alloc));
    // ember's array with FFTW's row distribution (balanced for N divisible by P)
    const auto rows = rows_of(comm, ln0);
    auto a = ember::random::uniform<double>(-1.0, 1.0, std::array<std::int64_t, 3>{n3, n3, n3}, {.split = 0});
    ember::dndarray<cd, 3> z = ember::astype<cd>(a);
    std::vector<std::array<std::int64_t, 3>> map;
    for (int q = 0; q < P; ++q) map.push_back({rows[static_cast<std::size_t>(q)], n3, n3});
    z.redistribute_(map);
    fftw_plan pt = fftw_mpi_plan_dft_3d(N, N, N, in, out, comm, FFTW_FORWARD, flags | FFTW_MPI_TRANSPOSED_OUT);
    fftw_plan pn = fftw_mpi_plan_dft_3d(N, N, N, in, out, comm, FFTW_FORWARD, flags);
    // the data after planning: FFTW_MEASURE overwrites the arrays it plans on
    std::memcpy(in, z.ldata(), std::size_t(z.lnumel()) * sizeof(cd));
    ember::dndarray<cd, 3> rt = fft::fftn(z);                      // the transposed layout, allocated once
    ember::dndarray<cd, 3> rn = ember::eval(fft::fftn(z), {.split = 0});
    if (rank == 0) std::printf("%s", ember::explain(fft::fftn(z)).to_string().c_str());
    // the transforms agree (FFTW-MPI's transposed output is (n1, n0, n2) ordered; compare split 0)
    fftw_execute(pn);
    double err = 0, top = 0;
    for (std::int64_t i = 0; i < rn.lnumel(); ++i) {
      err = std::max(err, std::abs(rn.ldata()[i] - cd(out[i][0], out[i][1])));
      top = std::max(top, std::abs(rn.ldata()[i]));
    }
    double gerr = 0;
    MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (rank == 0) std::printf("  fftn %lld^3 vs FFTW-MPI: max difference %.2e of %.2e\n", (long long)n3, gerr, top);
    const std::string t1 = "fftn " + std::to_string(n3) + "^3 c128 split 0, transposed out";
    report(rank, t1.c_str(), bench::ratio_rounds(comm, reps, [&] { fftw_execute(pt); }, [&] { rt = fft::fftn(z); }), 1.2);
    const std::string t2 = "fftn " + std::to_string(n3) + "^3 c128 split 0, back to split 0";
    report(rank, t2.c_str(),
           bench::ratio_rounds(comm, reps, [&] { fftw_execute(pn); }, [&] { ember::copyto(rn, fft::fftn(z)); }), 1.2);
    fftw_destroy_plan(pt);
    fftw_destroy_plan(pn);
    fftw_free(in);
    fftw_free(out);
  }

  {  // 2-D real to complex
    const ptrdiff_t N0 = n2, N1 = n2, H = N1 / 2 + 1;
    ptrdiff_t ln0, l0s, ln1, l1s;
    const ptrdiff_t alloc = fftw_mpi_local_size_2d_transposed(N0, H, comm, &ln0, &l0s, &ln1, &l1s);
    double* in = fftw_alloc_real(std::size_t(2 * alloc));
    fftw_complex* out = fftw_alloc_complex(std::size_t(alloc));
    auto x = ember::random::uniform<double>(-1.0, 1.0, std::array<std::int64_t, 2>{n2, n2}, {.split = 0});
    const auto rows = rows_of(comm, ln0);
    std::vector<std::array<std::int64_t, 2>> map;
    for (int q = 0; q < P; ++q) map.push_back({rows[static_cast<std::size_t>(q)], n2});
    x.redistribute_(map);
    fftw_plan pt = fftw_mpi_plan_dft_r2c_2d(N0, N1, in, out, comm, flags | FFTW_MPI_TRANSPOSED_OUT);
    fftw_plan pn = fftw_mpi_plan_dft_r2c_2d(N0, N1, in, out, comm, flags);
    for (ptrdiff_t i = 0; i < ln0; ++i) std::memcpy(in + i * 2 * H, x.ldata() + i * N1, std::size_t(N1) * sizeof(double));
    ember::dndarray<cd, 2> rt = fft::rfft2(x);
    ember::dndarray<cd, 2> rn = ember::eval(fft::rfft2(x), {.split = 0});
    if (rank == 0) std::printf("%s", ember::explain(fft::rfft2(x)).to_string().c_str());
    const std::string t1 = "rfft2 " + std::to_string(n2) + "^2 f64 split 0, transposed out";
    report(rank, t1.c_str(), bench::ratio_rounds(comm, reps, [&] { fftw_execute(pt); }, [&] { rt = fft::rfft2(x); }), 1.2);
    const std::string t2 = "rfft2 " + std::to_string(n2) + "^2 f64 split 0, back to split 0";
    report(rank, t2.c_str(),
           bench::ratio_rounds(comm, reps, [&] { fftw_execute(pn); }, [&] { ember::copyto(rn, fft::rfft2(x)); }), 1.2);
    // the local building block: rfft of every row of the local block, one FFTW plan
    fftw_iodim64 dim{N1, 1, 1}, many{ln0, N1, H};
    std::vector<double> lines(static_cast<std::size_t>(ln0 * N1));
    std::memcpy(lines.data(), x.ldata(), lines.size() * sizeof(double));
    fftw_complex* lout = fftw_alloc_complex(std::size_t(ln0 * H));
    fftw_plan pl = fftw_plan_guru64_dft_r2c(1, &dim, 1, &many, lines.data(), lout, FFTW_ESTIMATE);
    ember::dndarray<cd, 2> rl = fft::rfft(x);
    const std::string t3 = "rfft along the local axis (" + std::to_string(n2) + "^2 f64), per-rank FFTW plan";
    report(rank, t3.c_str(), bench::ratio_rounds(comm, reps, [&] { fftw_execute(pl); }, [&] { rl = fft::rfft(x); }), 1.1);
    fftw_destroy_plan(pl);
    fftw_free(lout);
    fftw_destroy_plan(pt);
    fftw_destroy_plan(pn);
    fftw_free(in);
    fftw_free(out);
  }
  fftw_mpi_cleanup();
  return 0;
}
