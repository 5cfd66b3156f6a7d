// Data-parallel scoring with ember::par, as dlp_mpi does it in Python: a list of
// items of very uneven cost is scored with split_managed (the root hands out
// indices, the workers pull the next one when done), the per-item metrics are
// gathered to the root, which prints a summary and each rank's busy time. A
// second pass does the same with map_unordered (results stream to the root,
// whose loop body only keeps a running top 3). The example checks that every
// item was scored exactly once and that both passes agree, and exits 1 if not.
//
//   mpirun -n 4 build/examples/dataparallel [items]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <ember.hpp>

namespace {

// The cost of an item, in work units: most are cheap, every 23rd is 60 times as
// expensive, so round robin would leave some ranks far busier than others.
int cost(int i) { return i % 23 == 0 ? 120 : 2 + i % 3; }

// The "score" of an item: deterministic work proportional to its cost.
double score(int i) {
  double s = 0, x = 0.5 + 0.001 * i;
  for (int k = 0; k < cost(i) * 20000; ++k) {
    x = 3.9 * x * (1 - x);  // logistic map: cheap, not optimizable away
    s += x;
  }
  return s / (cost(i) * 20000);
}

struct metric {
  int index = -1;
  double value = 0;
  int rank = -1;
  double seconds = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(index, value, rank, seconds);
  }
};

}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const int rank = ember::par::rank(), P = ember::par::size();
  const int n = argc > 1 ? std::atoi(argv[1]) : 200;
  std::vector<int> items(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) items[std::size_t(i)] = i;

  // ---- pass 1: split_managed, metrics gathered to the root ----
  std::vector<metric> mine;
  double busy = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i : ember::par::split_managed(items)) {
    const auto s = std::chrono::steady_clock::now();
    const double v = score(i);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count();
    busy += dt;
    mine.push_back({i, v, rank, dt});
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto all = ember::par::gather(mine);
  const auto busy_all = ember::par::gather(busy);

  bool ok = true;
  std::vector<double> by_index(static_cast<std::size_t>(n), std::nan(""));
  if (ember::par::is_root()) {
    std::vector<int> seen(static_cast<std::size_t>(n), 0);
    std::vector<int> count(static_cast<std::size_t>(P), 0);
    double total = 0, best = -1;
    int best_i = -1;
    for (const auto& per_rank : all)
      for (const auto& m : per_rank) {
        if (m.index < 0 || m.index >= n) {
          ok = false;
          continue;
        }
        ++seen[std::size_t(m.index)];
        ++count[std::size_t(m.rank)];
        by_index[std::size_t(m.index)] = m.value;
        total += m.value;
        if (m.value > best) best = m.value, best_i = m.index;
      }
    ok = ok && std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; });
    // spot checks against a serial computation on the root
    for (int i : {0, 1, n / 2, n - 1})
      if (i >= 0 && i < n && by_index[std::size_t(i)] != score(i)) ok = false;
    std::printf("dataparallel: %d items of uneven cost on %d rank%s (split_managed)\n", n, P, P > 1 ? "s" : "");
    std::printf("  mean score %.6f, best item %d (%.6f), wall %.3f s\n", n ? total / n : 0.0, best_i, best, wall);
    // what round robin would have given each rank, in cost units, for comparison
    std::vector<long> rr(static_cast<std::size_t>(P), 0), managed(static_cast<std::size_t>(P), 0);
    for (int i = 0; i < n; ++i) rr[std::size_t(i % P)] += cost(i);
    for (const auto& per_rank : all)
      for (const auto& m : per_rank) managed[std::size_t(m.rank)] += cost(m.index);
    for (int r = 0; r < P; ++r)
      std::printf("  rank %d: %4d items, busy %.3f s, %6ld cost units (round robin: %6ld)%s\n", r,
                  count[std::size_t(r)], busy_all[std::size_t(r)], managed[std::size_t(r)], rr[std::size_t(r)],
                  P > 1 && r == 0 ? "  [root: manages]" : "");
  }

  // ---- pass 2: map_unordered, the root's loop body does bookkeeping only ----
  std::vector<std::pair<double, int>> top;  // running top 3 (root)
  int received = 0;
  for (auto&& [i, v] : ember::par::map_unordered([](int i) { return score(i); }, items)) {
    ++received;
    if (v != by_index[std::size_t(i)]) ok = false;  // the same score as pass 1
    top.emplace_back(v, int(i));
    std::sort(top.rbegin(), top.rend());
    if (top.size() > 3) top.pop_back();
  }
  if (ember::par::is_root()) {
    ok = ok && received == n;
    std::printf("  map_unordered: %d results, top 3:", received);
    for (const auto& [v, i] : top) std::printf(" item %d (%.6f)", i, v);
    std::printf("\n");
    if (!ok) std::fprintf(stderr, "dataparallel: WRONG result\n");
  }
  ok = ember::par::bcast(ok);
  return ok ? 0 : 1;
}
