#include "symmetric.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ember::detail {
namespace {

constexpr int max_dims = 32;

std::string shape_text(const std::int64_t* s, int n) {
  std::string t = "(";
  for (int d = 0; d < n; ++d) t += (d ? ", " : "") + std::to_string(s[d]);
  return t + (n == 1 ? ",)" : ")");
}

bool mpi_alive() {
  int fin = 0;
  MPI_Finalized(&fin);
  return !fin;
}

}  // namespace

bool symmetric_check_enabled() {
#ifndef NDEBUG
  return true;
#else
  // Read at every release, so a program (or a test) may switch it on at run
  // time; it must be the same on every rank, or only some ranks would take part
  // in the check's allgather.
  const char* v = std::getenv("EMBER_CHECK_SYMMETRIC");
  return v && std::strcmp(v, "1") == 0;
#endif
}

symmetric_window::symmetric_window(const std::int64_t* shape, int ndim, std::size_t elem_size, const char* dtype,
                                   const communicator& c, bool make_symmetric)
    : comm_(c) {
  if (ndim > max_dims) throw value_error("ember::allocate_symmetric: more than 32 dimensions");
  std::int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  what_ = shape_text(shape, ndim) + " " + dtype;
  // Every rank's request in one allgather: [bytes, ndim, elem size, valid +
  // 2 * make_symmetric, shape...]: what one rank alone passes is checked everywhere.
  std::array<std::int64_t, 4 + max_dims> rec{};
  rec[0] = n * std::int64_t(elem_size);
  rec[1] = ndim;
  rec[2] = std::int64_t(elem_size);
  bool valid = true;
  for (int d = 0; d < ndim; ++d) {
    rec[4 + std::size_t(d)] = shape[d];
    valid = valid && shape[d] >= 0;
  }
  rec[3] = (valid ? 1 : 0) + (make_symmetric ? 2 : 0);
  const std::size_t R = rec.size();
  const auto all = c.allgather(rec.data(), std::int64_t(R));
  auto at = [&](int r, std::size_t i) { return all[std::size_t(r) * R + i]; };
  auto request = [&](int r) {
    return "rank " + std::to_string(r) + " asks for " + shape_text(all.data() + std::size_t(r) * R + 4, int(at(r, 1))) +
           " (" + std::to_string(at(r, 0)) + " bytes)";
  };
  std::int64_t largest = 0;
  for (int r = 1; r < c.size(); ++r)
    if ((at(r, 3) & 2) != (at(0, 3) & 2))
      throw value_error(std::string("ember::allocate_symmetric: every rank must pass the same make_symmetric, but rank 0 "
                                    "passes ") + ((at(0, 3) & 2) ? "true" : "false") + " and rank " + std::to_string(r) +
                        " passes " + ((at(r, 3) & 2) ? "true" : "false"));
  for (int r = 0; r < c.size(); ++r) {
    if (!(at(r, 3) & 1))
      throw value_error("ember::allocate_symmetric: " + request(r) + ": a negative extent");
    if (at(r, 2) != at(0, 2))
      throw type_error("ember::allocate_symmetric: rank 0 allocates elements of " + std::to_string(at(0, 2)) +
                       " bytes but rank " + std::to_string(r) + " of " + std::to_string(at(r, 2)));
    largest = std::max(largest, at(r, 0));
  }
  if (!make_symmetric)
    for (int r = 1; r < c.size(); ++r)
      if (at(r, 0) != at(0, 0))
        throw value_error("ember::allocate_symmetric: symmetric memory needs the same size on every rank, but " +
                          request(0) + " and " + request(r) +
                          "; pass {.make_symmetric = true} to give every rank a buffer of the largest request");
  bytes_ = largest;
  elem_ = std::int64_t(elem_size);
  // Taken only once the allocation is certain to happen, on every rank alike.
  seq_ = c.next_sequence();

  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "same_size", "true");  // guaranteed above
  void* base = nullptr;
  const int rc = MPI_Win_allocate(MPI_Aint(bytes_), int(elem_size), info, c.native(), &base, &win_);
  MPI_Info_free(&info);
  check_mpi(rc, "MPI_Win_allocate");
  base_ = base;
  MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
  // Opens the first access/exposure epoch (nothing precedes it).
  check_mpi(MPI_Win_fence(MPI_MODE_NOPRECEDE, win_), "MPI_Win_fence");
}

symmetric_window::~symmetric_window() = default;

void symmetric_window::put(const void* src, std::int64_t elems, MPI_Datatype type, int per_elem, int target,
                           std::int64_t target_elem) const {
  // Chunks keep each count within int and config().max_message_bytes; the target
  // displacement is in elements (the window's displacement unit).
  const std::int64_t step = chunk_elems(std::size_t(elem_));
  const char* p = static_cast<const char*>(src);
  for (std::int64_t off = 0; off < elems; off += step) {
    const std::int64_t k = std::min(step, elems - off);
    const int cnt = int(k * per_elem);
    check_mpi(MPI_Put(p + off * elem_, cnt, type, target, MPI_Aint(target_elem + off), cnt, type, win_), "MPI_Put");
    comm_.count({k * elem_, 1});
  }
}

void symmetric_window::get(void* dst, std::int64_t elems, MPI_Datatype type, int per_elem, int target,
                           std::int64_t target_elem) const {
  // The data is sent by the target's side of the window, not by this rank's
  // code: a get adds nothing to this rank's counters.
  const std::int64_t step = chunk_elems(std::size_t(elem_));
  char* p = static_cast<char*>(dst);
  for (std::int64_t off = 0; off < elems; off += step) {
    const std::int64_t k = std::min(step, elems - off);
    const int cnt = int(k * per_elem);
    check_mpi(MPI_Get(p + off * elem_, cnt, type, target, MPI_Aint(target_elem + off), cnt, type, win_), "MPI_Get");
  }
}

void symmetric_window::fence() const { check_mpi(MPI_Win_fence(0, win_), "MPI_Win_fence"); }

void symmetric_window::release() {
  if (win_ == MPI_WIN_NULL) return;
  if (!mpi_alive()) {
    // MPI_Finalize reclaimed the window already.
    win_ = MPI_WIN_NULL;
    return;
  }
  if (symmetric_check_enabled()) {
    const auto seqs = comm_.allgather(std::int64_t(seq_));
    std::string who;
    bool bad = false;
    for (int r = 0; r < comm_.size(); ++r) {
      bad = bad || seqs[std::size_t(r)] != seqs[0];
      who += (r ? ", " : "") + std::string("rank ") + std::to_string(r) + " #" + std::to_string(seqs[std::size_t(r)]);
    }
    if (bad)
      throw error("ember: symmetric memory released out of order: the ranks are releasing different allocations "
                "(creation numbers: " + who + "). Every rank must release its symmetric handles in "
                "the same order (MPI_Win_free is collective); nothing was freed");
  }
  // Completes outstanding puts/gets and closes the last epoch.
  check_mpi(MPI_Win_fence(MPI_MODE_NOSUCCEED, win_), "MPI_Win_fence");
  check_mpi(MPI_Win_free(&win_), "MPI_Win_free");
  win_ = MPI_WIN_NULL;
  base_ = nullptr;
}

void symmetric_window::release_quietly() noexcept {
  try {
    release();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s (while another exception was in flight; the buffer is leaked)\n", e.what());
    win_ = MPI_WIN_NULL;  // never retried: every rank saw the same failure
  } catch (...) {
    win_ = MPI_WIN_NULL;
  }
}

}  // namespace ember::detail
