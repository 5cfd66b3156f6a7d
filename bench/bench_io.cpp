// ember::io throughput against baselines measured in the same run (2 ranks):
//   save_npy vs raw MPI_File_write_at_all (+ MPI_File_sync, as save_npy syncs)
//            of the same bytes at the same offsets           target >= 0.8
//   save_npy{.sync = false} vs raw write_at_all without sync (for information)
//   load_npy vs raw MPI_File_read_at_all of the same bytes    target >= 0.8
//   load_npy vs NumPy: `python3 -c np.load` on rank 0 (minus the interpreter's
//            start-up and `import numpy`) + MPI_Scatterv of the array to the
//            ranks                                            target >= 1 (faster)
// Ratios are baseline time / ember time (throughput ratio: > 1 means ember is
// faster); each time is the median over `reps` of the slowest rank.
//
//   mpirun -n 2 bench_io [MiB, default 1024] [directory, default $TMPDIR or /tmp] [reps, default 3]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <ember.hpp>

#include "bench_util.hpp"

namespace {

double wall() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Collective raw I/O of this rank's contiguous bytes at `offset`, in rounds of at
// most 1 GiB (MPI counts are int), as few as ember uses.
// `fresh`: the file is replaced by a new one (rank 0 deletes it first, inside the
// timing), which is the file-system work of an atomic save (a new file renamed
// over the old one); without it the old file's blocks are overwritten in place.
void raw_io(MPI_Comm comm, const std::string& path, bool write, bool sync, char* buf, std::int64_t bytes,
            std::int64_t offset, bool fresh = false) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (fresh) {
    if (rank == 0) MPI_File_delete(path.c_str(), MPI_INFO_NULL);
    MPI_Barrier(comm);
  }
  MPI_File fh;
  MPI_File_open(comm, path.c_str(), write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  const std::int64_t chunk = std::int64_t(1) << 30;
  std::int64_t rounds = (bytes + chunk - 1) / chunk, all = 0;
  MPI_Allreduce(&rounds, &all, 1, MPI_INT64_T, MPI_MAX, comm);
  for (std::int64_t r = 0, done = 0; r < all; ++r) {
    const int n = int(std::max<std::int64_t>(0, std::min(chunk, bytes - done)));
    if (write) MPI_File_write_at_all(fh, offset + done, buf + done, n, MPI_BYTE, MPI_STATUS_IGNORE);
    else MPI_File_read_at_all(fh, offset + done, buf + done, n, MPI_BYTE, MPI_STATUS_IGNORE);
    done += n;
  }
  if (sync) MPI_File_sync(fh);
  MPI_File_close(&fh);
}

}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  MPI_Comm comm = MPI_COMM_WORLD;
  const std::int64_t mib = argc > 1 ? std::atoll(argv[1]) : 1024;
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string dir = argc > 2 ? argv[2] : (tmpdir && *tmpdir ? tmpdir : "/tmp");
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  const std::int64_t cols = 1024;
  const std::int64_t rows = std::max<std::int64_t>(1, mib * (1 << 20) / (8 * cols));
  const std::string pid = std::to_string(getpid());
  const std::string f_ember = dir + "/bench_io_ember_" + pid + ".npy", f_raw = dir + "/bench_io_raw_" + pid + ".npy";
  std::string pf = f_ember;  // rank 0's name is the one everyone uses
  std::int64_t len = std::int64_t(pf.size());
  w.bcast(&len, 1, 0);
  pf.resize(std::size_t(len));
  w.bcast(pf.data(), len, 0);
  std::string pr = dir + "/bench_io_raw_" + pf.substr(pf.rfind('_') + 1);

  auto a = ember::empty<double>({rows, cols}, {.split = 0});
  for (std::int64_t i = 0; i < a.lnumel(); ++i) a.ldata()[i] = double(a.loffset() * cols + i) * 0.5;
  const std::int64_t bytes = a.lnumel() * 8;
  const std::int64_t hdr = std::int64_t(ember::io::make_npy_header(5, {rows, cols}).size());
  const std::int64_t off = hdr + a.loffset() * cols * 8;
  std::vector<char> buf(static_cast<std::size_t>(bytes));
  std::memcpy(buf.data(), a.ldata(), std::size_t(bytes));
  if (w.rank() == 0)
    std::printf("bench_io: %lld x %lld float64 (%.0f MiB) split 0 on %d ranks, in %s, median of %d\n", (long long)rows,
                (long long)cols, double(rows * cols * 8) / (1 << 20), w.size(), dir.c_str(), reps);

  const double gib = double(rows * cols * 8) / (1 << 30);
  auto rate = [&](double t) { return std::to_string(gib / t).substr(0, 5) + " GiB/s"; };

  // ---- save ----
  // The target compares with raw MPI-IO writing the same bytes to a new file that
  // replaces the old one (what any atomic save must do); the in-place overwrite
  // of an existing file is shown for information.
  const double t_raw_w = bench::time_collective(comm, reps, [&] { raw_io(comm, pr, true, true, buf.data(), bytes, off, true); });
  const double t_save = bench::time_collective(comm, reps, [&] { ember::io::save_npy(a, pf); });
  bench::report(w.rank(), "save_npy vs raw write_at_all+sync (new file)", t_raw_w / t_save, ">", 0.8,
                "ember " + rate(t_save) + ", raw " + rate(t_raw_w));
  const double t_raw_w0 = bench::time_collective(comm, reps, [&] { raw_io(comm, pr, true, false, buf.data(), bytes, off, true); });
  const double t_save0 = bench::time_collective(comm, reps, [&] { ember::io::save_npy(a, pf, {.sync = false}); });
  bench::report(w.rank(), "save_npy{.sync=false} vs raw, no sync", t_raw_w0 / t_save0, ">", 0.8,
                "ember " + rate(t_save0) + ", raw " + rate(t_raw_w0));
  const double t_raw_wi = bench::time_collective(comm, reps, [&] { raw_io(comm, pr, true, false, buf.data(), bytes, off); });
  if (w.rank() == 0)
    std::printf("%-44s %8.3f  (information: raw overwriting in place, %s)\n", "save_npy{.sync=false} vs raw in place",
                t_raw_wi / t_save0, rate(t_raw_wi).c_str());

  // ---- load ----
  const double t_raw_r = bench::time_collective(comm, reps, [&] { raw_io(comm, pf, false, false, buf.data(), bytes, off); });
  double check = 0;
  const double t_load = bench::time_collective(comm, reps, [&] {
    auto b = ember::io::load_npy<double, 2>(pf, {.split = 0});
    check = b.ldata()[b.lnumel() > 0 ? b.lnumel() - 1 : 0];
  });
  // load_npy returns a new array: its pages are first touched by the read. The
  // target compares with a raw read into a new buffer too; into a reused
  // (already touched) buffer for information.
  const double t_raw_rn = bench::time_collective(comm, reps, [&] {
    std::unique_ptr<char[]> fresh(new char[std::size_t(bytes)]);
    raw_io(comm, pf, false, false, fresh.get(), bytes, off);
  });
  bench::report(w.rank(), "load_npy vs raw read_at_all (new buffer)", t_raw_rn / t_load, ">", 0.8,
                "ember " + rate(t_load) + ", raw " + rate(t_raw_rn));
  if (w.rank() == 0)
    std::printf("%-44s %8.3f  (information: raw into a reused buffer, %s)\n", "load_npy vs raw read_at_all (reused)",
                t_raw_r / t_load, rate(t_raw_r).c_str());
  (void)check;

  // ---- NumPy: np.load on rank 0 + scatter ----
  double t_np = 0;
  if (w.rank() == 0) {
    auto run = [](const std::string& cmd) {
      std::vector<double> t;
      for (int i = 0; i < 3; ++i) {
        const double t0 = wall();
        if (std::system(cmd.c_str()) != 0) return -1.0;
        t.push_back(wall() - t0);
      }
      std::sort(t.begin(), t.end());
      return t[1];
    };
    // Debian's python3-numpy serves /usr/bin/python3; the first python3 on PATH may be another.
    const std::string py = std::system("python3 -c 'import numpy' 2>/dev/null") == 0 ? "python3" : "/usr/bin/python3";
    const double start = run(py + " -c 'import numpy'");
    const double load = run(py + " -c 'import numpy, sys; numpy.load(sys.argv[1])' " + pf);
    t_np = start < 0 || load < 0 ? -1 : std::max(0.0, load - start);
  }
  w.bcast(&t_np, 1, 0);
  if (t_np < 0) {
    if (w.rank() == 0) std::printf("%-44s  skipped (python3-numpy not available)\n", "load_npy vs np.load + scatter");
  } else {
    std::vector<int> counts(std::size_t(w.size())), displs(std::size_t(w.size()));
    // Scatterv counts are int: scatter in units of one row.
    MPI_Datatype row;
    MPI_Type_contiguous(int(cols), MPI_DOUBLE, &row);
    MPI_Type_commit(&row);
    const auto map = a.lshape_map();
    for (int r = 0, d = 0; r < w.size(); ++r) {
      counts[std::size_t(r)] = int(map[std::size_t(r)][0]);
      displs[std::size_t(r)] = d;
      d += counts[std::size_t(r)];
    }
    std::vector<double> full(w.rank() == 0 ? std::size_t(rows * cols) : 0);
    std::vector<double> mine(std::size_t(a.lnumel()));
    const double t_scatter = bench::time_collective(comm, reps, [&] {
      MPI_Scatterv(full.data(), counts.data(), displs.data(), row, mine.data(), counts[std::size_t(w.rank())], row, 0, comm);
    });
    MPI_Type_free(&row);
    const double t_base = t_np + t_scatter;
    bench::report(w.rank(), "load_npy vs np.load + MPI_Scatterv", t_base / t_load, ">", 1.0,
                  "np.load " + std::to_string(t_np).substr(0, 6) + " s + scatter " + std::to_string(t_scatter).substr(0, 6) +
                      " s vs load_npy " + std::to_string(t_load).substr(0, 6) + " s");
  }
  if (w.rank() == 0) {
    std::error_code ec;
    std::filesystem::remove(pf, ec);
    std::filesystem::remove(pr, ec);
  }
  (void)f_raw;
  return 0;
}
