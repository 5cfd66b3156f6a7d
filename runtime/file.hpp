// Parallel file I/O below the dsl: an MPI_File wrapper, the agreement of errors
// across ranks, the atomic save protocol, and the type-erased readers and writers
// of .npy, CSV and HDF5 (io/ wraps them into dndarrays).
//
// Two rules hold everywhere here:
//  * Every rank enters every collective, even a rank that has already failed
//    locally (it then moves zero bytes): a local error is recorded, never thrown
//    between collectives, so no rank is ever left waiting.
//  * A local error becomes an exception only through `agree`, which tells every
//    rank which rank failed and why, so every rank throws the same ember::error.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "communicator.hpp"
#include "layout.hpp"
#include "npy_format.hpp"

namespace ember::io {

// Called with the layout of the array to create; returns its local buffer.
using alloc_fn = std::function<void*(const layout&)>;

namespace detail {

// Collective. `local_error` is empty when this rank succeeded. When any rank
// failed, returns (on every rank) the first failing rank's message followed by
// which ranks failed; otherwise nullopt.
std::optional<std::string> agreed_error(const communicator& c, const std::string& local_error);
// The same, throwing ember::error on every rank.
void agree(const communicator& c, const std::string& local_error);

// Collective: one allreduce that every rank passes the same `args` (file name,
// dataset, dtype, shape, split, options) to the I/O call `what`; otherwise every
// rank throws the same value_error naming the ranks and what each passed (two
// ranks writing different files would otherwise silently share rank 0's).
void same_arguments(const communicator& c, const std::string& what, const std::vector<std::string>& args);
// Runs alloc(l) and agrees on the outcome: one rank out of memory is a
// memory_error on every rank (the caller has not read anything yet).
void* agreed_alloc(const communicator& c, const alloc_fn& alloc, const layout& l);

// Fault injection, for tests and for checking the save protocol by hand: the
// given world-`rank` of a communicator fails the next saves at `stage`
// ("save:before_data": the rank writes nothing; "save:after_data": it has written
// its data, then fails before the file is synced and renamed). rank < 0 disables.
// The environment variable EMBER_IO_FAULT="<stage>:<rank>" does the same.
void inject_fault(const std::string& stage, int rank);
// True when this rank must fail at `stage` now.
bool fault_here(const communicator& c, std::string_view stage);

}  // namespace detail

// One rank's part of a C-order array stored in a file: `outer` runs of `run`
// bytes, `stride` bytes apart, the first at byte `start` of the file.
struct file_slab {
  std::int64_t start = 0;
  std::int64_t outer = 0;
  std::int64_t run = 0;
  std::int64_t stride = 0;
  std::int64_t bytes() const { return outer * run; }
};
// The slab of `rank`'s block of `l` for elements of `itemsize` bytes stored from
// byte `data_offset` on (a split-0 or replicated block is one run).
file_slab slab_of(const layout& l, int rank, std::int64_t itemsize, std::int64_t data_offset);

// RAII over an MPI_File opened collectively on a communicator. Opening throws
// (agreed) ember::error naming the file; the destructor closes collectively (it
// runs on every rank alike, since errors are agreed).
class mpi_file {
 public:
  mpi_file(const communicator& c, const std::string& path, int amode, const char* what);
  ~mpi_file();
  mpi_file(const mpi_file&) = delete;
  mpi_file& operator=(const mpi_file&) = delete;

  MPI_File native() const { return fh_; }
  const std::string& path() const { return path_; }
  // Local query of the file's size; "" or an error in `err`.
  std::int64_t size(std::string& err) const;

  // Collective reads/writes of this rank's slab (or of one contiguous byte range):
  // the number of rounds (each at most min(config().max_message_bytes, 1 GiB),
  // since MPI counts are int) is agreed, and every rank takes part in every round.
  // `skip` makes this rank move nothing (it already failed). Return "" or this
  // rank's error.
  std::string read_slab(const file_slab& s, void* buf, bool skip = false);
  std::string write_slab(const file_slab& s, const void* buf, bool skip = false);

  // Collective: optionally MPI_File_sync, then MPI_File_close. Returns this rank's error.
  std::string close(bool sync);

 private:
  std::string slab_io(const file_slab& s, void* buf, bool write, bool skip);
  const communicator* comm_;
  std::string path_;
  MPI_File fh_ = MPI_FILE_NULL;
};

// The atomic save protocol. The data is written to a temporary file in the
// target's directory (rank 0 picks the name and broadcasts it); `reserve` asks
// the file system for the space first (a full disk is an error before a byte is
// written); `commit` then agrees on every rank's outcome, checks on rank 0 that
// the temporary file has the size the data needs and no hole (a write that an
// MPI-IO aggregator dropped without an error), and only if all of that holds
// renames it over the target and syncs the directory. Otherwise rank 0 removes
// the temporary file, the target is untouched, and every rank throws the same
// error naming the failing rank.
//
// Temporary files are named ".<target>.ember-tmp-<host>-<pid>-<n>-<stamp>". A
// save removes the ones of the same target left by a killed job: those of a
// process of this host that no longer exists, and those of other hosts (or of
// the older naming) untouched for 24 hours.
class atomic_target {
 public:
  atomic_target(const communicator& c, std::string path, std::string what);
  ~atomic_target();  // not committed (an agreed error was thrown): removes the temporary file
  atomic_target(const atomic_target&) = delete;
  atomic_target& operator=(const atomic_target&) = delete;
  const std::string& temp_path() const { return temp_; }
  // Collective, after the temporary file exists: rank 0 reserves `bytes` for it
  // (fallocate, keeping the size: the size check in commit still sees a short
  // file). No space is an error on every rank; a file system without
  // fallocate is left to the checks in commit.
  void reserve(std::int64_t bytes);
  // `durable`: also fsync the directory after the rename (with ext4's ordered
  // mode that flushes the file's data too, so it is skipped when the caller
  // did not ask for a synced save). `expected_bytes`: the exact size the file
  // must have (-1: unknown); `min_bytes`: at least this many (HDF5: where the
  // dataset's data ends).
  void commit(const std::string& local_error, bool durable = true, std::int64_t expected_bytes = -1,
              std::int64_t min_bytes = -1);

 private:
  const communicator* comm_;
  std::string path_, temp_, what_;
  bool done_ = false;
};

// ---- .npy ----
// Rank 0 reads and parses the header and broadcasts it: every rank gets the same
// header or throws the same error. `file_size` receives the file's size.
npy_header read_npy_header(const communicator& c, const std::string& path, std::int64_t* file_size = nullptr);
// Loads `path` as a `ndim`-dimensional array of dtype `code` with Heat's balanced
// layout along `split`; each rank reads only its slab. `what` names the caller in
// messages ("ember::io::load_npy<float64, 2>").
void load_npy(const communicator& c, const std::string& path, int code, int ndim, std::optional<int> split,
              const std::string& what, const alloc_fn& alloc);
// Saves (atomically) the array whose local block of layout `l` is `src`.
void save_npy(const communicator& c, const std::string& path, int code, const layout& l, const void* src, bool sync);

// ---- CSV ----
struct csv_rows {
  std::vector<char> data;     // this rank's rows, row-major element bytes
  std::int64_t ncols = 0;
  index_vec rows_per_rank;    // replicated
};
// Each rank reads its byte range, owns the lines starting in it (reading past its
// end to finish the last one) and parses them.
csv_rows read_csv(const communicator& c, const std::string& path, int code, char sep, bool header);
// Writes `rows` x `cols` row-major elements per rank, in rank order, after `header`
// (a line written by rank 0 when not empty). Atomic.
void write_csv(const communicator& c, const std::string& path, int code, const void* data, std::int64_t rows,
               std::int64_t cols, char sep, const std::string& header, bool sync);

// ---- HDF5 (parallel HDF5; throws ember::error when ember was built without it) ----
bool hdf5_available();
void load_hdf5(const communicator& c, const std::string& path, const std::string& dataset, int code, int ndim,
               std::optional<int> split, const std::string& what, const alloc_fn& alloc);
void save_hdf5(const communicator& c, const std::string& path, const std::string& dataset, int code,
               const layout& l, const void* src, bool sync);

}  // namespace ember::io
