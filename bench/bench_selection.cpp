// Issue 14 (selection): a(mask) and take against the hand-written MPI code they
// replace, in the same run.
//
//   mask:  a(mask) on 2^25 doubles split 0 (a random bool mask, half true)
//          baseline: a branch-free local filter into a buffer allocated once,
//          MPI_Allgather of the counts, MPI_Alltoallv into the balanced result
//          (also allocated once).                               target <= 2.0
//   take:  ember::take(a, idx, 0) of 2^22 random int64 indices (split 0) from
//          2^25 doubles split 0
//          baseline: owners by comparison, a counting sort of the requests,
//          MPI_Alltoall of the counts, MPI_Alltoallv of the requests, the owners
//          pack the values, MPI_Alltoallv back, unscatter; every buffer
//          allocated once.                                      target <= 1.5
//
//   mpirun -n 2 build/bench/bench_selection [log2 n = 25] [log2 m = 22] [rounds = 5]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <ember.hpp>

#include "bench_util.hpp"

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  MPI_Comm comm = w.native();
  const int rank = w.rank(), P = w.size();
  const std::int64_t n = std::int64_t(1) << (argc > 1 ? std::atoi(argv[1]) : 25);
  const std::int64_t m = std::int64_t(1) << (argc > 2 ? std::atoi(argv[2]) : 22);
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;

  // ---- the data: a split 0, balanced; a random mask in a's layout ----
  auto a = ember::arange<double>(0, double(n), 1, {.split = 0});
  auto coin = ember::random::rand<double>({n}, {.split = 0});
  ember::dndarray<bool, 1> mask = coin < 0.5;
  const std::int64_t ln = a.lnumel();
  const double* la = a.ldata();
  const bool* lm = mask.ldata();

  // ---- baseline mask: filter, allgather counts, alltoallv to balanced ----
  std::vector<double> sel(static_cast<std::size_t>(ln)), out(static_cast<std::size_t>(n / P + 1));
  std::vector<std::int64_t> counts(static_cast<std::size_t>(P));
  std::vector<int> scount(static_cast<std::size_t>(P)), sdispl(static_cast<std::size_t>(P)),
      rcount(static_cast<std::size_t>(P)), rdispl(static_cast<std::size_t>(P));
  std::int64_t base_total = 0;
  auto baseline_mask = [&] {
    const auto* mb = reinterpret_cast<const unsigned char*>(lm);
    std::int64_t k = 0;
    for (std::int64_t i = 0; i < ln; ++i) {
      sel[std::size_t(k)] = la[i];
      k += mb[i];
    }
    MPI_Allgather(&k, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm);
    std::int64_t total = 0, first = 0;
    for (int q = 0; q < P; ++q) {
      if (q == rank) first = total;
      total += counts[std::size_t(q)];
    }
    base_total = total;
    auto bstart = [&](int q) { return q * (total / P) + std::min<std::int64_t>(q, total % P); };
    const std::int64_t lo = bstart(rank), hi = bstart(rank + 1);
    std::int64_t src = 0;
    for (int q = 0; q < P; ++q) {
      const std::int64_t a0 = std::max(first, bstart(q)), a1 = std::min(first + k, bstart(q + 1));
      scount[std::size_t(q)] = int(std::max<std::int64_t>(0, a1 - a0));
      sdispl[std::size_t(q)] = int(std::max<std::int64_t>(0, a0 - first));
      const std::int64_t b0 = std::max(src, lo), b1 = std::min(src + counts[std::size_t(q)], hi);
      rcount[std::size_t(q)] = int(std::max<std::int64_t>(0, b1 - b0));
      rdispl[std::size_t(q)] = int(std::max<std::int64_t>(0, b0 - lo));
      src += counts[std::size_t(q)];
    }
    MPI_Alltoallv(sel.data(), scount.data(), sdispl.data(), MPI_DOUBLE, out.data(), rcount.data(), rdispl.data(),
                  MPI_DOUBLE, comm);
  };
  ember::dndarray<double, 1> er;
  auto ember_mask = [&] { er = a(mask); };

  baseline_mask();
  ember_mask();
  bool same = er.shape()[0] == base_total;
  for (std::int64_t i = 0; same && i < er.lnumel(); ++i) same = er.ldata()[i] == out[std::size_t(i)];
  same = w.allreduce(int(same), ember::reduce_op::land) != 0;
  {
    const auto [ratio, base_t] = bench::ratio_rounds(comm, rounds, baseline_mask, ember_mask);
    if (rank == 0)
      std::printf("bench_selection: a(mask) of %lld doubles on %d ranks (%lld selected); results %s\n",
                  static_cast<long long>(n), P, static_cast<long long>(base_total),
                  same ? "identical to the baseline" : "DIFFER FROM THE BASELINE");
    bench::report(rank, "a(mask): ember / filter + Allgather + Alltoallv", ratio, "<=", 2.0,
                  "baseline " + std::to_string(base_t * 1e3) + " ms");
  }

  // ---- take: m random indices, split 0 ----
  const auto il = ember::layout::balanced({m}, 0, P);
  const std::int64_t lm_idx = il.extent(rank);
  std::vector<std::int64_t> myidx(static_cast<std::size_t>(lm_idx));
  std::mt19937_64 g(1234 + std::uint64_t(rank));
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  for (auto& i : myidx) i = pick(g);
  auto idx = ember::array(std::span<const std::int64_t>(myidx), std::array<std::int64_t, 1>{lm_idx}, {.is_split = 0});
  const auto& al = a.layout();
  std::vector<std::int64_t> offs(static_cast<std::size_t>(P) + 1, 0);
  for (int q = 0; q < P; ++q) offs[std::size_t(q) + 1] = offs[std::size_t(q)] + al.extent(q);
  // buffers allocated once
  std::vector<int> own(static_cast<std::size_t>(lm_idx)), tsc(static_cast<std::size_t>(P)), tsd(static_cast<std::size_t>(P)),
      trc(static_cast<std::size_t>(P)), trd(static_cast<std::size_t>(P)), cur(static_cast<std::size_t>(P));
  std::vector<std::int64_t> req(static_cast<std::size_t>(lm_idx)), pos(static_cast<std::size_t>(lm_idx)),
      inreq(static_cast<std::size_t>(m)), tout(static_cast<std::size_t>(lm_idx));
  std::vector<double> resp(static_cast<std::size_t>(m)), back(static_cast<std::size_t>(lm_idx)),
      tres(static_cast<std::size_t>(lm_idx));
  auto baseline_take = [&] {
    std::fill(tsc.begin(), tsc.end(), 0);
    for (std::int64_t j = 0; j < lm_idx; ++j) {
      const std::int64_t i = myidx[std::size_t(j)];
      int o = 0;
      for (int q = 1; q < P; ++q) o += i >= offs[std::size_t(q)];
      own[std::size_t(j)] = o;
      ++tsc[std::size_t(o)];
    }
    int s = 0;
    for (int q = 0; q < P; ++q) tsd[std::size_t(q)] = s, cur[std::size_t(q)] = s, s += tsc[std::size_t(q)];
    for (std::int64_t j = 0; j < lm_idx; ++j) {
      const int o = own[std::size_t(j)];
      const int slot = cur[std::size_t(o)]++;
      req[std::size_t(slot)] = myidx[std::size_t(j)] - offs[std::size_t(o)];
      pos[std::size_t(slot)] = j;
    }
    MPI_Alltoall(tsc.data(), 1, MPI_INT, trc.data(), 1, MPI_INT, comm);
    int r = 0;
    for (int q = 0; q < P; ++q) trd[std::size_t(q)] = r, r += trc[std::size_t(q)];
    MPI_Alltoallv(req.data(), tsc.data(), tsd.data(), MPI_INT64_T, inreq.data(), trc.data(), trd.data(), MPI_INT64_T, comm);
    for (int k = 0; k < r; ++k) resp[std::size_t(k)] = la[inreq[std::size_t(k)]];
    MPI_Alltoallv(resp.data(), trc.data(), trd.data(), MPI_DOUBLE, back.data(), tsc.data(), tsd.data(), MPI_DOUBLE, comm);
    for (std::int64_t k = 0; k < lm_idx; ++k) tres[std::size_t(pos[std::size_t(k)])] = back[std::size_t(k)];
  };
  ember::dndarray<double, 1> et;
  auto ember_take = [&] { et = ember::take(a, idx, 0); };
  baseline_take();
  ember_take();
  bool tsame = et.lnumel() == lm_idx;
  for (std::int64_t j = 0; tsame && j < lm_idx; ++j) tsame = et.ldata()[j] == tres[std::size_t(j)];
  tsame = w.allreduce(int(tsame), ember::reduce_op::land) != 0;
  {
    const auto [ratio, base_t] = bench::ratio_rounds(comm, rounds, baseline_take, ember_take);
    if (rank == 0)
      std::printf("bench_selection: take of %lld random indices from %lld doubles on %d ranks; results %s\n",
                  static_cast<long long>(m), static_cast<long long>(n), P,
                  tsame ? "identical to the baseline" : "DIFFER FROM THE BASELINE");
    bench::report(rank, "take: ember / Alltoallv request + response", ratio, "<=", 1.5,
                  "baseline " + std::to_string(base_t * 1e3) + " ms");
  }
  return same && tsame ? 0 : 1;
}
