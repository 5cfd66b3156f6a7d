// Issue 14: ember::reshape against the hand-written MPI code it replaces, in the
// same run.
//
//   (1) 4096^2 split 0 -> (2048, 8192): every rank's rows stay whole, so nothing
//       may move: bytes sent (target 0) and the time, which is metadata only.
//   (2) 4096^2 split 1 -> (2048, 8192) split 0: an exchange. Baseline: pack each
//       destination's rows, one MPI_Alltoallv, unpack into the result, with
//       every buffer (send, receive, result) allocated once and reused: what a
//       competent MPI code does. Target <= 1.3x. ember allocates its result on
//       each call (a new array, as NumPy's reshape); the ratio into a reused
//       result (reshape_geometry::run, the engine alone) is reported beside it.
//
//   mpirun -n 2 build/bench/bench_reshape [n]
#include <mpi.h>

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
  const std::int64_t m0 = n / 2, m1 = 2 * n;  // the new shape

  // ---- (1) split 0: nothing moves ----
  auto a0 = ember::random::randn<double>({n, n}, {.split = 0});
  const auto sent0 = w.sent();
  auto r0 = ember::reshape(a0, {m0, m1});
  const std::int64_t bytes0 = w.allreduce((w.sent() - sent0).bytes, ember::reduce_op::max);
  const bool shared = w.allreduce(int(r0.lstorage() == a0.lstorage()), ember::reduce_op::land) != 0;
  const double t0 = bench::time_collective(comm, 20, [&] { r0 = ember::reshape(a0, {m0, m1}); });

  // ---- (2) split 1 -> split 0 ----
  auto a = ember::random::randn<double>({n, n}, {.split = 1});
  const ember::layout src = a.layout(), dst = ember::layout::balanced({m0, m1}, 0, P);
  const std::int64_t cw = src.extent(rank);
  // baseline: rank q's columns of the A rows that destination rank r holds
  const auto np = static_cast<std::size_t>(P);
  std::vector<int> scount(np), sdispl(np), rcount(np), rdispl(np);
  for (int r = 0, s = 0, t = 0; r < P; ++r) {
    scount[std::size_t(r)] = int(2 * dst.extent(r) * cw);
    rcount[std::size_t(r)] = int(2 * dst.extent(rank) * src.extent(r));
    sdispl[std::size_t(r)] = s;
    rdispl[std::size_t(r)] = t;
    s += scount[std::size_t(r)];
    t += rcount[std::size_t(r)];
  }
  std::vector<double> sendbuf(std::size_t(n * cw)), recvbuf(std::size_t(2 * dst.extent(rank) * n)),
      out(std::size_t(dst.extent(rank) * m1));
  const double* in = a.ldata();
  auto baseline = [&] {
    std::int64_t at = 0;
    for (int r = 0; r < P; ++r)
      for (std::int64_t i = 2 * dst.offset(r); i < 2 * (dst.offset(r) + dst.extent(r)); ++i, at += cw)
        std::copy(in + i * cw, in + (i + 1) * cw, sendbuf.data() + at);
    MPI_Alltoallv(sendbuf.data(), scount.data(), sdispl.data(), MPI_DOUBLE, recvbuf.data(), rcount.data(),
                  rdispl.data(), MPI_DOUBLE, comm);
    const std::int64_t first = 2 * dst.offset(rank), rows = 2 * dst.extent(rank);
    for (int q = 0; q < P; ++q) {
      const double* p = recvbuf.data() + rdispl[std::size_t(q)];
      const std::int64_t qw = src.extent(q), qc = src.offset(q);
      for (std::int64_t i = 0; i < rows; ++i) {
        const std::int64_t g = first + i;  // A row; B row g / 2, columns (g % 2) * n + qc ..
        std::copy(p + i * qw, p + (i + 1) * qw, out.data() + (g / 2 - dst.offset(rank)) * m1 + (g % 2) * n + qc);
      }
    }
  };
  ember::dndarray<double, 2> r;
  auto candidate = [&] { r = ember::reshape(a, {m0, m1}); };
  const auto geo = ember::plan_reshape(a, {m0, m1});
  auto reused = ember::empty<double>({m0, m1}, {.split = 0});
  auto engine = [&] { geo.run(w, a.lstorage(), reused.lstorage(), sizeof(double)); };

  baseline();
  candidate();
  bool same = r.split() == 0 && r.layout() == dst;
  for (std::int64_t i = 0; same && i < r.lnumel(); ++i) same = r.ldata()[i] == out[std::size_t(i)];
  same = w.allreduce(int(same), ember::reduce_op::land) != 0;
  const auto before = w.sent();
  candidate();
  const auto sent = w.sent() - before;
  const std::int64_t expect = std::int64_t(sendbuf.size() - std::size_t(scount[std::size_t(rank)])) * 8;

  const auto [ratio, base_t] = bench::ratio_rounds(comm, 7, baseline, candidate);
  const auto [ratio_engine, base_t2] = bench::ratio_rounds(comm, 7, baseline, engine);
  (void)base_t2;
  if (rank == 0)
    std::printf("bench_reshape: %lld x %lld on %d ranks; split 1 result %s; split 0 reshape %s\n",
                static_cast<long long>(n), static_cast<long long>(n), P,
                same ? "bit-identical to the baseline" : "DIFFERS FROM THE BASELINE",
                shared ? "shares the source's storage" : "COPIED");
  bench::report(rank, "reshape split 0 -> (n/2, 2n): bytes sent", double(bytes0), "<=", 0.0,
                std::to_string(t0 * 1e3) + " ms per call (Heat 1.4.2: 0.2 ms)");
  bench::report(rank, "reshape split 1 -> split 0: ember / pack+Alltoallv+unpack", ratio, "<=", 1.3,
                "baseline " + std::to_string(base_t * 1e3) + " ms, buffers reused; ember allocates its result");
  bench::report(rank, "reshape split 1 -> split 0: engine into a reused result / baseline", ratio_engine, "<=", 1.3,
                "reshape_geometry::run");
  bench::report(rank, "reshape split 1 -> split 0: bytes sent / needed", double(sent.bytes) / double(std::max<std::int64_t>(1, expect)),
                "<=", 1.01, std::to_string(sent.bytes) + " B by this rank");
  return same && shared ? 0 : 1;
}
