// Timing helpers for the benchmarks: every figure is a ratio against a baseline
// measured in the same run, never a bare absolute time.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace bench {

// Median over `reps` runs of the slowest rank's time (what a user waits for).
inline double time_collective(MPI_Comm comm, int reps, const std::function<void()>& f) {
  std::vector<double> t;
  f();  // warm-up
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    f();
    double dt = MPI_Wtime() - t0, mx = 0;
    MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, comm);
    t.push_back(mx);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Minimum over `reps` runs of the slowest rank's time, for several functions run
// in turn within each repetition, so a change of load on a shared machine hits a
// candidate and its baseline alike. One warm-up run each unless told otherwise.
inline std::vector<double> time_interleaved(MPI_Comm comm, int reps, const std::vector<std::function<void()>>& fs,
                                            bool warm_up = true) {
  if (warm_up)
    for (const auto& f : fs) f();
  std::vector<double> best(fs.size(), 1e300);
  for (int i = 0; i < reps; ++i)
    for (std::size_t k = 0; k < fs.size(); ++k) {
      MPI_Barrier(comm);
      const double t0 = MPI_Wtime();
      fs[k]();
      double dt = MPI_Wtime() - t0, mx = 0;
      MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, comm);
      best[k] = std::min(best[k], mx);
    }
  return best;
}

// Median over `reps` rounds of t(candidate) / t(baseline), the two run back to
// back in each round (slowest rank's time each): on a machine whose speed drifts
// over minutes (shared VMs) this is steadier than a ratio of two minima.
// Returns {median ratio, minimum baseline time}.
inline std::pair<double, double> ratio_rounds(MPI_Comm comm, int reps, const std::function<void()>& baseline,
                                              const std::function<void()>& candidate) {
  baseline();
  candidate();
  std::vector<double> r;
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    const auto t = time_interleaved(comm, 1, {baseline, candidate}, false);
    r.push_back(t[1] / t[0]);
    best = std::min(best, t[0]);
  }
  std::sort(r.begin(), r.end());
  return {r[r.size() / 2], best};
}

// A memory figure of this process from /proc/self/status, in bytes: "VmHWM:" is
// the peak resident set, "VmRSS:" the current one.
inline long long status_bytes(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string k;
  long long v = 0;
  while (f >> k) {
    if (k == key) {
      f >> v;
      return v * 1024;
    }
    std::getline(f, k);
  }
  return -1;
}
inline long long peak_rss() { return status_bytes("VmHWM:"); }
inline long long current_rss() { return status_bytes("VmRSS:"); }
inline void reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
}

inline void report(int rank, const char* name, double ratio, const char* cmp, double target, const std::string& extra) {
  if (rank != 0) return;
  const bool ok = cmp[0] == '<' ? ratio <= target : ratio >= target;
  std::printf("%-44s %8.3f  (target %s %.2f)  %-4s %s\n", name, ratio, cmp, target, ok ? "ok" : "MISS", extra.c_str());
  std::fflush(stdout);
}

}  // namespace bench
