#include "file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "checked.hpp"

namespace ember::io {

namespace fs = std::filesystem;

namespace detail {

using ember::detail::arg_hash;

namespace {
std::string mpi_error(int rc) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return std::string(msg, std::size_t(len));
}

struct fault_state {
  std::string stage;
  int rank = -1;
};
fault_state& fault() {
  static fault_state f;
  return f;
}
}  // namespace

std::optional<std::string> agreed_error(const communicator& c, const std::string& local_error) {
  const int bad = local_error.empty() ? 0 : 1;
  const auto flags = c.allgather(bad);
  int first = -1;
  std::string others;
  int nbad = 0;
  for (int r = 0; r < c.size(); ++r) {
    if (!flags[std::size_t(r)]) continue;
    if (first < 0) first = r;
    else others += (nbad > 1 ? ", " : "") + std::to_string(r);
    ++nbad;
  }
  if (first < 0) return std::nullopt;
  // The first failing rank tells everyone its message.
  std::int64_t len = c.rank() == first ? std::int64_t(local_error.size()) : 0;
  c.bcast(&len, 1, first);
  std::string msg = c.rank() == first ? local_error : std::string(std::size_t(len), '\0');
  c.bcast(msg.data(), len, first);
  msg += " [on rank " + std::to_string(first) + " of " + std::to_string(c.size());
  if (nbad > 1) msg += "; also failed on rank" + std::string(nbad > 2 ? "s " : " ") + others;
  msg += "]";
  return msg;
}

void agree(const communicator& c, const std::string& local_error) {
  if (auto e = agreed_error(c, local_error)) throw error(*e);
}

void same_arguments(const communicator& c, const std::string& what, const std::vector<std::string>& args) {
  arg_hash h;
  for (const auto& a : args) h.add(a);
  ember::detail::agreed_entry(c, {what.c_str(), "arguments", h.h, [&] {
                                    std::string d;
                                    for (const auto& a : args) d += (d.empty() ? "" : ", ") + a;
                                    return d;
                                  }},
                              [] {});
}

void* agreed_alloc(const communicator& c, const alloc_fn& alloc, const layout& l) {
  return ember::detail::agreed_entry(c, {"ember::io", "layout", l.hash(), [] { return std::string(); }},
                                     [&] { return alloc(l); });
}

void inject_fault(const std::string& stage, int rank) { fault() = {stage, rank}; }

bool fault_here(const communicator& c, std::string_view stage) {
  int wrank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  (void)c;
  if (fault().rank >= 0 && fault().stage == stage && fault().rank == wrank) return true;
  if (const char* env = std::getenv("EMBER_IO_FAULT")) {
    const std::string_view e(env);
    const auto colon = e.rfind(':');
    if (colon != std::string_view::npos && e.substr(0, colon) == stage &&
        std::to_string(wrank) == e.substr(colon + 1))
      return true;
  }
  return false;
}

}  // namespace detail

using detail::mpi_error;

file_slab slab_of(const layout& l, int rank, std::int64_t itemsize, std::int64_t data_offset) {
  const auto& shape = l.shape();
  const int nd = l.ndim();
  const int k = l.split() ? *l.split() : 0;
  file_slab s;
  if (nd == 0) {
    s.start = data_offset;
    s.outer = 1;
    s.run = itemsize;
    s.stride = itemsize;
    return s;
  }
  std::int64_t inner = itemsize;
  for (int d = k + 1; d < nd; ++d) inner *= shape[std::size_t(d)];
  std::int64_t outer = 1;
  for (int d = 0; d < k; ++d) outer *= shape[std::size_t(d)];
  const std::int64_t lo = l.split() ? l.offset(rank) : 0;
  const std::int64_t ext = l.split() ? l.extent(rank) : shape[std::size_t(k)];
  s.start = data_offset + lo * inner;
  s.run = ext * inner;
  s.outer = s.run == 0 ? 0 : outer;
  s.stride = shape[std::size_t(k)] * inner;
  return s;
}

// ---------------------------------------------------------------------------
// mpi_file

mpi_file::mpi_file(const communicator& c, const std::string& path, int amode, const char* what)
    : comm_(&c), path_(path) {
  std::string err;
  // First what each rank can see for itself: a file (or, to create one, its
  // directory) that some rank cannot reach makes OpenMPI's MPI_File_open itself
  // hang (the failing rank leaves its internal collectives early), so that is
  // agreed before MPI_File_open is entered at all.
  {
    std::string pre;
    if (amode & MPI_MODE_CREATE) {
      const fs::path p(path);
      const std::string dir = p.has_parent_path() ? p.parent_path().string() : std::string(".");
      if (::access(dir.c_str(), W_OK | X_OK) != 0)
        pre = std::string(what) + ": cannot create '" + path + "': directory '" + dir + "': " + std::strerror(errno);
    } else if (::access(path.c_str(), (amode & MPI_MODE_RDONLY) ? R_OK : R_OK | W_OK) != 0) {
      pre = std::string(what) + ": cannot open '" + path + "': " + std::strerror(errno);
    }
    if (auto e = detail::agreed_error(c, pre)) throw error(*e);
  }
  const int rc = MPI_File_open(c.native(), path.c_str(), amode, MPI_INFO_NULL, &fh_);
  if (rc != MPI_SUCCESS) {
    fh_ = MPI_FILE_NULL;
    err = std::string(what) + ": cannot open '" + path + "': " + mpi_error(rc);
  } else {
    MPI_File_set_errhandler(fh_, MPI_ERRORS_RETURN);
  }
  if (auto e = detail::agreed_error(c, err)) {
    // Open is collective and fails alike on every rank in practice; should some
    // rank have succeeded, its handle is left open rather than risk a close
    // that the failed ranks would never match.
    fh_ = MPI_FILE_NULL;
    throw error(*e);
  }
}

mpi_file::~mpi_file() {
  if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
}

std::int64_t mpi_file::size(std::string& err) const {
  MPI_Offset n = 0;
  const int rc = MPI_File_get_size(fh_, &n);
  if (rc != MPI_SUCCESS) err = "cannot get the size of '" + path_ + "': " + mpi_error(rc);
  return std::int64_t(n);
}

std::string mpi_file::read_slab(const file_slab& s, void* buf, bool skip) { return slab_io(s, buf, false, skip); }
std::string mpi_file::write_slab(const file_slab& s, const void* buf, bool skip) {
  return slab_io(s, const_cast<void*>(buf), true, skip);
}

std::string mpi_file::slab_io(const file_slab& s, void* buf, bool write, bool skip) {
  std::string err;
  const std::int64_t chunk = std::max<std::int64_t>(1, std::min<std::int64_t>(config().max_message_bytes, 1 << 30));
  std::int64_t bytes = skip ? 0 : s.bytes();
  // A strided slab is described to MPI-IO as a file view (one hvector of runs), so
  // one collective call moves the whole slab and the MPI-IO layer can aggregate
  // across ranks; a contiguous slab (split 0, replicated) needs no view.
  MPI_Datatype run_t = MPI_DATATYPE_NULL, file_t = MPI_DATATYPE_NULL;
  MPI_Offset disp = 0;
  MPI_Datatype view_t = MPI_BYTE;
  if (bytes > 0 && s.outer > 1) {
    if (s.run > INT_MAX || s.outer > INT_MAX) {
      err = "slab of " + std::to_string(s.outer) + " runs of " + std::to_string(s.run) +
            " bytes in '" + path_ + "' exceeds MPI's int counts";
      bytes = 0;
    } else {
      MPI_Type_contiguous(int(s.run), MPI_BYTE, &run_t);
      MPI_Type_create_hvector(int(s.outer), 1, MPI_Aint(s.stride), run_t, &file_t);
      MPI_Type_commit(&file_t);
      view_t = file_t;
      disp = s.start;
    }
  }
  // Every rank sets a view (collective), the contiguous ones a plain byte view.
  int rc = MPI_File_set_view(fh_, disp, MPI_BYTE, view_t, "native", MPI_INFO_NULL);
  if (rc != MPI_SUCCESS && err.empty()) {
    err = "MPI_File_set_view on '" + path_ + "' failed: " + mpi_error(rc);
    bytes = 0;
  }
  const std::int64_t base = view_t == MPI_BYTE ? s.start : 0;
  const std::int64_t mine = (bytes + chunk - 1) / chunk;
  const std::int64_t rounds = comm_->allreduce(mine, reduce_op::max);
  char* p = static_cast<char*>(buf);
  std::int64_t done = 0;
  for (std::int64_t r = 0; r < rounds; ++r) {
    const std::int64_t n = std::min(chunk, bytes - done);
    const int cnt = int(std::max<std::int64_t>(n, 0));
    MPI_Status st;
    rc = write ? MPI_File_write_at_all(fh_, MPI_Offset(base + done), p + (cnt ? done : 0), cnt, MPI_BYTE, &st)
               : MPI_File_read_at_all(fh_, MPI_Offset(base + done), p + (cnt ? done : 0), cnt, MPI_BYTE, &st);
    if (rc != MPI_SUCCESS) {
      if (err.empty())
        err = std::string(write ? "writing" : "reading") + " '" + path_ + "' failed: " + mpi_error(rc);
      bytes = done;  // move nothing more, but keep taking part in the rounds
      continue;
    }
    if (cnt > 0) {
      int got = 0;
      MPI_Get_count(&st, MPI_BYTE, &got);
      if (got != cnt && err.empty()) {
        err = std::string(write ? "short write to" : "short read from") + " '" + path_ + "': " + std::to_string(got) +
              " of " + std::to_string(cnt) + " bytes (did the file change while it was read?)";
        bytes = done;
        continue;
      }
      done += n;
    }
  }
  if (file_t != MPI_DATATYPE_NULL) MPI_Type_free(&file_t);
  if (run_t != MPI_DATATYPE_NULL) MPI_Type_free(&run_t);
  return err;
}

std::string mpi_file::close(bool sync) {
  std::string err;
  if (fh_ == MPI_FILE_NULL) return err;
  if (sync) {
    const int rc = MPI_File_sync(fh_);
    if (rc != MPI_SUCCESS) err = "syncing '" + path_ + "' failed: " + mpi_error(rc);
  }
  const int rc = MPI_File_close(&fh_);
  fh_ = MPI_FILE_NULL;
  if (rc != MPI_SUCCESS && err.empty()) err = "closing '" + path_ + "' failed: " + mpi_error(rc);
  return err;
}

// ---------------------------------------------------------------------------
// atomic_target

namespace {
void bcast_string(const communicator& c, std::string& s, int root) {
  std::int64_t n = std::int64_t(s.size());
  c.bcast(&n, 1, root);
  s.resize(std::size_t(n));
  c.bcast(s.data(), n, root);
}

void fsync_path(const std::string& p, bool directory) {
  const int fd = ::open(p.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}
}  // namespace

namespace {
std::string host_name() {
  char h[256] = {0};
  if (::gethostname(h, sizeof h - 1) != 0 || !*h) return "host";
  std::string s(h);
  for (auto& ch : s)
    if (ch == '/' || ch == ' ') ch = '_';
  return s;
}

// Whether process `pid` of this host still runs (a zombie, killed but not yet
// reaped by its new parent, does not).
bool process_runs(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return true;  // no /proc: trust kill()
  const auto close = line.rfind(')');     // "pid (comm) S ..." (comm may hold spaces)
  return !(close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z');
}

// Removes temporary files of `target` that a killed save left behind (see
// file.hpp). Rank 0 only, best effort: whatever cannot be removed stays.
void remove_stale_temps(const fs::path& dir, const std::string& target_name) {
  const std::string prefix = "." + target_name + ".ember-tmp-";
  const std::string me = host_name();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    // <host>-<pid>-<n>-<stamp> (host may contain '-'), or the older <pid>-<n>-<stamp>
    std::vector<std::string> f;
    std::string rest = name.substr(prefix.size());
    for (int k = 0; k < 3; ++k) {
      const auto dash = rest.rfind('-');
      if (dash == std::string::npos) break;
      f.push_back(rest.substr(dash + 1));
      rest = rest.substr(0, dash);
    }
    bool stale = false;
    if (f.size() == 3 && rest == me) {
      const long pid = std::strtol(f[2].c_str(), nullptr, 10);
      stale = pid > 0 && !process_runs(pid_t(pid));
    } else {
      std::error_code e2;
      const auto t = fs::last_write_time(it->path(), e2);
      stale = !e2 && fs::file_time_type::clock::now() - t > std::chrono::hours(24);
    }
    if (stale) {
      std::error_code e3;
      fs::remove(it->path(), e3);
    }
  }
}
}  // namespace

atomic_target::atomic_target(const communicator& c, std::string path, std::string what)
    : comm_(&c), path_(std::move(path)), what_(std::move(what)) {
  std::string err;
  if (c.rank() == 0) {
    // The temporary file lives next to the target: rename() is atomic only within
    // one file system. Its name is unique per host, process and call.
    static std::atomic<unsigned> counter{0};
    const fs::path p(path_);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::error_code ec;
    if (p.filename().empty()) err = what_ + ": '" + path_ + "' names no file";
    else if (!fs::is_directory(dir, ec)) err = what_ + ": cannot save '" + path_ + "': directory '" + dir.string() + "' does not exist";
    else if (fs::is_directory(p, ec)) err = what_ + ": cannot save '" + path_ + "': it is a directory";
    if (err.empty()) remove_stale_temps(dir, p.filename().string());
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    temp_ = (dir / ("." + p.filename().string() + ".ember-tmp-" + host_name() + "-" + std::to_string(::getpid()) + "-" +
                    std::to_string(counter++) + "-" + std::to_string(stamp % 1000000)))
                .string();
  }
  detail::agree(c, err);
  bcast_string(c, temp_, 0);
}

atomic_target::~atomic_target() {
  if (!done_ && comm_->rank() == 0) {
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void atomic_target::reserve(std::int64_t bytes) {
  std::string err;
  if (comm_->rank() == 0 && bytes > 0) {
    const int fd = ::open(temp_.c_str(), O_WRONLY);
    if (fd < 0) {
      err = what_ + ": cannot open '" + temp_ + "' to reserve space: " + std::strerror(errno);
    } else {
      // FALLOC_FL_KEEP_SIZE: blocks reserved, size unchanged.
      if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, off_t(bytes)) != 0) {
        const int e = errno;
        if (e == ENOSPC || e == EDQUOT || e == EFBIG) {
          const fs::path p(path_);
          std::error_code ec;
          const auto sp = fs::space(p.has_parent_path() ? p.parent_path() : fs::path("."), ec);
          err = what_ + ": cannot save '" + path_ + "': it needs " + ember::detail::bytes_str(bytes) +
                (ec ? std::string() : ", the file system has " + ember::detail::bytes_str(std::int64_t(sp.available)) + " free") +
                " (" + std::strerror(e) + ")" +
                (fs::exists(path_) ? "; the previous '" + path_ + "' is unchanged" : "; no file was written");
        }
        // EOPNOTSUPP, ENOSYS, EINVAL: no reservation here; commit's checks remain.
      }
      ::close(fd);
    }
  }
  detail::agree(*comm_, err);
}

void atomic_target::commit(const std::string& local_error, bool durable, std::int64_t expected_bytes,
                           std::int64_t min_bytes) {
  done_ = true;
  const bool existed = comm_->rank() == 0 && fs::exists(path_);
  const std::string keep = existed ? "; the previous '" + path_ + "' is unchanged" : "; no file was written";
  // First every rank's own outcome; only when every rank reported success for
  // its writes does rank 0 check what reached the file (a collective write's
  // aggregator may lose a short write without an error).
  auto e = detail::agreed_error(*comm_, local_error);
  std::string err;
  if (!e && comm_->rank() == 0 && (expected_bytes >= 0 || min_bytes >= 0)) {
    struct stat st {};
    if (::stat(temp_.c_str(), &st) != 0) {
      err = "cannot stat '" + temp_ + "': " + std::strerror(errno);
    } else {
      const std::int64_t size = std::int64_t(st.st_size);
      if (expected_bytes >= 0 && size != expected_bytes)
        err = "the written file has " + std::to_string(size) + " bytes, the data needs " + std::to_string(expected_bytes) +
              " (a write was lost: is the disk full?)";
      else if (min_bytes >= 0 && size < min_bytes)
        err = "the written file has " + std::to_string(size) + " bytes, its data ends at byte " + std::to_string(min_bytes) +
              " (a write was lost: is the disk full?)";
      if (err.empty() && size > 0) {
        const int fd = ::open(temp_.c_str(), O_RDONLY);
        if (fd >= 0) {
          // A hole before the end: bytes some rank reported written never landed.
          const off_t hole = ::lseek(fd, 0, SEEK_HOLE);
          if (hole >= 0 && std::int64_t(hole) < size)
            err = "the written file has a hole at byte " + std::to_string(hole) + " of " + std::to_string(size) +
                  " (a write was lost: is the disk full?)";
          ::close(fd);
        }
      }
    }
  }
  if (!e) e = detail::agreed_error(*comm_, err);
  if (e) {
    if (comm_->rank() == 0) {
      std::error_code ec;
      fs::remove(temp_, ec);
    }
    // Only rank 0 knows whether the target existed; tell the others.
    std::string k = keep;
    bcast_string(*comm_, k, 0);
    throw error(what_ + ": saving '" + path_ + "' failed: " + *e + k);
  }
  // Every rank has written, synced and closed, and the file is whole.
  err.clear();
  if (comm_->rank() == 0) {
    std::error_code ec;
    fs::rename(temp_, path_, ec);
    if (ec) {
      err = what_ + ": renaming '" + temp_ + "' to '" + path_ + "' failed: " + ec.message() + keep;
      fs::remove(temp_, ec);
    } else if (durable) {
      const fs::path p(path_);
      fsync_path(p.has_parent_path() ? p.parent_path().string() : ".", true);  // make the rename durable
    }
  }
  detail::agree(*comm_, err);
}

// ---------------------------------------------------------------------------
// .npy

namespace {

std::string dname(int code) {
  static const char* n[] = {"unknown", "bool",  "int32", "int64",  "float32", "float64", "complex64",
                            "complex128", "int8", "int16", "uint8", "uint16",  "uint32",  "uint64"};
  return n[(code >= 1 && code <= 13) ? code : 0];
}

// Rank 0's header write, its byte count checked.
std::string write_header(mpi_file& f, const std::string& header) {
  MPI_Status st;
  const int rc = MPI_File_write_at(f.native(), 0, header.data(), int(header.size()), MPI_BYTE, &st);
  if (rc != MPI_SUCCESS) return "writing the header failed: " + mpi_error(rc);
  int got = 0;
  MPI_Get_count(&st, MPI_BYTE, &got);
  if (got != int(header.size()))
    return "short write of the header: " + std::to_string(got) + " of " + std::to_string(header.size()) + " bytes";
  return {};
}

void byteswap(void* p, std::int64_t n, int itemsize) {
  auto* b = static_cast<unsigned char*>(p);
  for (std::int64_t i = 0; i < n; ++i, b += itemsize) std::reverse(b, b + itemsize);
}

// dst (row-major, shape `ls`) = the axes-reversed transpose of src (row-major,
// shape reversed(ls)): a Fortran-order block read as C order is its transpose.
void reverse_axes(const char* src, char* dst, const index_vec& ls, std::size_t item) {
  const int nd = int(ls.size());
  std::int64_t n = 1;
  for (auto e : ls) n *= e;
  if (n == 0) return;
  index_vec rs(ls.rbegin(), ls.rend());
  const index_vec sstr = row_major_strides(rs);
  index_vec step(static_cast<std::size_t>(nd));  // src stride of dst axis d is sstr[nd-1-d]
  for (int d = 0; d < nd; ++d) step[std::size_t(d)] = sstr[std::size_t(nd - 1 - d)];
  index_vec idx(std::size_t(nd), 0);
  std::int64_t so = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * std::int64_t(item), src + so * std::int64_t(item), item);
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[std::size_t(d)] < ls[std::size_t(d)]) {
        so += step[std::size_t(d)];
        break;
      }
      so -= step[std::size_t(d)] * (ls[std::size_t(d)] - 1);
      idx[std::size_t(d)] = 0;
    }
  }
}

}  // namespace

npy_header read_npy_header(const communicator& c, const std::string& path, std::int64_t* file_size) {
  // Rank 0 reads the few header bytes; everyone gets the same parsed header (or
  // the same error), so every later check is identical on every rank.
  std::string blob;
  if (c.rank() == 0) {
    try {
      std::ifstream f(path, std::ios::binary);
      if (!f) throw error("ember::io: cannot open '" + path + "': " + std::strerror(errno));
      std::error_code ec;
      const auto fsize = fs::file_size(path, ec);
      if (ec) throw error("ember::io: cannot stat '" + path + "': " + ec.message());
      std::string buf(npy_prefix_bytes, '\0');
      f.read(buf.data(), std::streamsize(buf.size()));
      buf.resize(std::size_t(f.gcount()));
      const std::int64_t hsize = npy_header_size(buf.data(), buf.size(), path);
      // NumPy's own reader refuses huge headers too; ember reads no dtype that needs one.
      if (hsize > (1 << 20))
        throw error("ember::io: '" + path + "' is not a valid .npy file: header length " + std::to_string(hsize) +
                    " bytes is implausible");
      if (std::int64_t(fsize) < hsize)
        throw error("ember::io: '" + path + "' is truncated: its header needs " + std::to_string(hsize) +
                    " bytes, the file has " + std::to_string(fsize));
      buf.resize(std::size_t(hsize));
      f.seekg(0);
      f.read(buf.data(), std::streamsize(hsize));
      buf.resize(std::size_t(f.gcount()));
      const npy_header h = parse_npy_header(buf.data(), buf.size(), path);
      std::vector<std::int64_t> v = {h.version_major, h.kind, h.itemsize, h.big_endian, h.fortran_order,
                                     h.data_offset, std::int64_t(fsize), std::int64_t(h.shape.size())};
      v.insert(v.end(), h.shape.begin(), h.shape.end());
      blob = "H" + std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(std::int64_t));
    } catch (const std::exception& e) {
      blob = std::string("E") + e.what();
    }
  }
  bcast_string(c, blob, 0);
  if (blob.empty() || blob[0] == 'E') throw error(blob.empty() ? "ember::io: internal error" : blob.substr(1));
  std::vector<std::int64_t> v((blob.size() - 1) / sizeof(std::int64_t));
  std::memcpy(v.data(), blob.data() + 1, v.size() * sizeof(std::int64_t));
  npy_header h;
  h.version_major = int(v[0]);
  h.kind = char(v[1]);
  h.itemsize = int(v[2]);
  h.big_endian = v[3] != 0;
  h.fortran_order = v[4] != 0;
  h.data_offset = v[5];
  if (file_size) *file_size = v[6];
  h.shape.assign(v.begin() + 8, v.begin() + 8 + v[7]);
  return h;
}

void load_npy(const communicator& c, const std::string& path, int code, int ndim, std::optional<int> split,
              const std::string& what, const alloc_fn& alloc) {
  detail::same_arguments(c, what, {"file '" + path + "'", "split " + ember::detail::axis_str(split)});
  std::int64_t fsize = 0;
  const npy_header h = read_npy_header(c, path, &fsize);
  // Every check below uses only the broadcast header: identical on every rank.
  if (h.dtype_code() != code)
    throw type_error(what + ": '" + path + "' holds " + dname(h.dtype_code()) + " data (descr '" + h.descr() +
                     "', shape " + ember::detail::shape_str(h.shape) + "), not " + dname(code));
  if (int(h.shape.size()) != ndim)
    throw shape_error(what + ": '" + path + "' holds a " + std::to_string(h.shape.size()) + "-dimensional array of shape " +
                      ember::detail::shape_str(h.shape) + ", not a " + std::to_string(ndim) + "-dimensional one");
  if (fsize - h.data_offset < h.data_bytes())
    throw error(what + ": '" + path + "' is truncated: its header promises shape " + ember::detail::shape_str(h.shape) +
                " of " + dname(code) + ", " + std::to_string(h.data_bytes()) + " bytes of data after a " +
                std::to_string(h.data_offset) + "-byte header, but the file has " + std::to_string(fsize) + " bytes");
  if (split) check_axis(*split, ndim, "load_npy");
  const layout l = layout::balanced(h.shape, split, c.size());
  void* dst = detail::agreed_alloc(c, alloc, l);
  const std::size_t item = std::size_t(h.itemsize);
  const index_vec ls = l.lshape(c.rank());
  std::int64_t n = 1;
  for (auto e : ls) n *= e;

  mpi_file f(c, path, MPI_MODE_RDONLY, what.c_str());
  std::string err;
  if (!h.fortran_order) {
    err = f.read_slab(slab_of(l, c.rank(), h.itemsize, h.data_offset), dst);
  } else {
    // A Fortran-order file is the C-order file of the reversed shape. Split k of
    // the array is split ndim-1-k of that one with the same extents, so each rank
    // reads exactly its own elements and transposes them locally: no traffic.
    const index_vec rshape(h.shape.rbegin(), h.shape.rend());
    const layout fl = split ? layout(rshape, ndim - 1 - *split, l.extents()) : replicated_layout(rshape, c.size());
    std::vector<char> tmp(std::size_t(n) * item);
    err = f.read_slab(slab_of(fl, c.rank(), h.itemsize, h.data_offset), tmp.data());
    if (err.empty()) reverse_axes(tmp.data(), static_cast<char*>(dst), ls, item);
  }
  const std::string cerr = f.close(false);
  if (err.empty()) err = cerr;
  if (!err.empty()) err = what + ": " + err;
  detail::agree(c, err);
  // (a complex number swaps each of its two parts)
  if (item > 1 && h.big_endian != (std::endian::native == std::endian::big))
    byteswap(dst, h.kind == 'c' ? 2 * n : n, h.kind == 'c' ? h.itemsize / 2 : h.itemsize);
  if (code == 1) {
    // A bool must be 0 or 1 in C++; NumPy reads any nonzero byte as True.
    auto* b = static_cast<unsigned char*>(dst);
    for (std::int64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
  }
}

void save_npy(const communicator& c, const std::string& path, int code, const layout& l, const void* src, bool sync) {
  static_assert(std::endian::native == std::endian::little, "ember::io writes little-endian .npy data as it is in memory");
  const std::string what = "ember::io::save_npy";
  detail::same_arguments(c, what, {"file '" + path + "'", dname(code) + " array of shape " + ember::detail::shape_str(l.shape()),
                                   "split " + ember::detail::axis_str(l.split()), sync ? "sync" : "no sync"});
  const std::string header = make_npy_header(code, l.shape());
  const std::int64_t item = std::int64_t(dtype_size(code));
  const std::int64_t total = std::int64_t(header.size()) + ember::detail::checked_bytes(l.shape(), item, what);
  atomic_target t(c, path, what);
  mpi_file f(c, t.temp_path(), MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_EXCL, what.c_str());
  t.reserve(total);
  std::string err;
  if (c.rank() == 0) err = write_header(f, header);
  if (detail::fault_here(c, "save:before_data")) err = "injected fault at save:before_data";
  // A replicated array is written in parallel too: each rank writes its balanced
  // share of rows from its full copy.
  file_slab s;
  const char* p = static_cast<const char*>(src);
  if (l.split()) {
    s = slab_of(l, c.rank(), item, std::int64_t(header.size()));
  } else {
    const layout share = layout::balanced(l.shape(), 0, c.size());
    s = slab_of(share, c.rank(), item, std::int64_t(header.size()));
    p += s.start - std::int64_t(header.size());
  }
  const std::string werr = f.write_slab(s, p, !err.empty());
  if (err.empty()) err = werr;
  if (err.empty() && detail::fault_here(c, "save:after_data")) err = "injected fault at save:after_data";
  const std::string cerr = f.close(sync);
  if (err.empty()) err = cerr;
  t.commit(err, sync, total);
}

// ---------------------------------------------------------------------------
// CSV

csv_rows read_csv(const communicator& c, const std::string& path, int code, char sep, bool header) {
  const std::string what = "ember::io::load_csv<" + dname(code) + ">";
  detail::same_arguments(c, what, {"file '" + path + "'", std::string("separator '") + sep + "'", header ? "header" : "no header"});
  mpi_file f(c, path, MPI_MODE_RDONLY, what.c_str());
  std::string err;
  const std::int64_t S = f.size(err);
  detail::agree(c, err);
  // Byte range [lo, hi) of this rank; it also reads the byte before lo, to know
  // whether a line starts exactly at lo.
  const int P = c.size(), r = c.rank();
  const std::int64_t base = S / P, rem = S % P;
  const std::int64_t lo = r * base + std::min<std::int64_t>(r, rem);
  const std::int64_t hi = lo + base + (r < rem ? 1 : 0);
  const std::int64_t b0 = lo > 0 ? lo - 1 : 0;
  std::string buf(std::size_t(hi - b0), '\0');
  file_slab s{b0, 1, hi - b0, hi - b0};
  err = f.read_slab(s, buf.data());
  // The line starts in [lo, hi) are this rank's lines.
  std::int64_t first = -1;
  if (err.empty()) {
    if (lo == 0 && hi > 0) first = 0;
    else
      for (std::int64_t p = lo; p < hi; ++p)
        if (buf[std::size_t(p - 1 - b0)] == '\n') {
          first = p;
          break;
        }
  }
  std::int64_t end = hi;
  if (first >= 0 && buf.back() != '\n' && hi < S) {
    // The last line runs past hi: read on (independently) until its '\n' or EOF.
    std::int64_t step = 1 << 16;
    while (end < S) {
      const std::int64_t n = std::min(step, S - end);
      std::string more(std::size_t(n), '\0');
      MPI_Status st;
      const int rc = MPI_File_read_at(f.native(), end, more.data(), int(n), MPI_BYTE, &st);
      int got = 0;
      if (rc == MPI_SUCCESS) MPI_Get_count(&st, MPI_BYTE, &got);
      if (rc != MPI_SUCCESS || got != n) {
        err = "reading '" + path + "' past byte " + std::to_string(end) + " failed" +
              (rc != MPI_SUCCESS ? ": " + mpi_error(rc) : std::string(": short read"));
        break;
      }
      const auto nl = more.find('\n');
      buf += nl == std::string::npos ? more : more.substr(0, nl + 1);
      end += nl == std::string::npos ? n : std::int64_t(nl) + 1;
      if (nl != std::string::npos) break;
      step = std::min<std::int64_t>(step * 2, 1 << 26);
    }
  }
  const std::string cerr = f.close(false);
  if (err.empty()) err = cerr;
  if (!err.empty()) err = what + ": " + err;
  detail::agree(c, err);

  std::string_view text;
  if (first >= 0) text = std::string_view(buf).substr(std::size_t(first - b0), std::size_t(end - first));
  // Global line numbers (for messages) from every rank's count of line starts.
  std::int64_t skipped = 0;
  if (header && first == 0) {
    const auto nl = text.find('\n');
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    skipped = 1;
  }
  const auto counts = c.allgather(count_lines(text) + skipped);
  std::int64_t line = 1 + skipped;
  for (int q = 0; q < r; ++q) line += counts[std::size_t(q)];

  csv_rows out;
  std::int64_t ncols = -1, rows = 0;
  err.clear();
  try {
    rows = parse_csv_rows(text, sep, code, out.data, ncols, line, path);
  } catch (const std::exception& e) {
    err = e.what();
  }
  detail::agree(c, err);
  // Every rank's column count must agree (ranks without rows have none to say).
  const auto cols = c.allgather(ncols);
  const auto firsts = c.allgather(line);
  int ref = -1;
  for (int q = 0; q < P; ++q) {
    if (cols[std::size_t(q)] < 0) continue;
    if (ref < 0) ref = q;
    else if (cols[std::size_t(q)] != cols[std::size_t(ref)])
      throw shape_error(what + ": '" + path + "': the rows from line " + std::to_string(firsts[std::size_t(q)]) +
                        " on have " + std::to_string(cols[std::size_t(q)]) + " fields, the rows before (from line " +
                        std::to_string(firsts[std::size_t(ref)]) + ") have " + std::to_string(cols[std::size_t(ref)]));
  }
  out.ncols = ref < 0 ? 0 : cols[std::size_t(ref)];
  const auto rr = c.allgather(rows);
  out.rows_per_rank.assign(rr.begin(), rr.end());
  return out;
}

void write_csv(const communicator& c, const std::string& path, int code, const void* data, std::int64_t rows,
               std::int64_t cols, char sep, const std::string& header, bool sync) {
  const std::string what = "ember::io::save_csv";
  detail::same_arguments(c, what, {"file '" + path + "'", dname(code) + " rows of " + std::to_string(cols) + " columns",
                                   std::string("separator '") + sep + "'", "header '" + header + "'",
                                   sync ? "sync" : "no sync"});
  std::string head = header;
  if (!head.empty() && head.back() != '\n') head += '\n';
  std::string text, err;
  try {
    format_csv_rows(data, code, rows, cols, sep, text);
  } catch (const std::exception& e) {
    err = e.what();
  }
  atomic_target t(c, path, what);
  mpi_file f(c, t.temp_path(), MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_EXCL, what.c_str());
  // Rank order: each rank's text starts where the previous ranks' ends.
  const auto lens = c.allgather(std::int64_t(text.size()));
  std::int64_t off = std::int64_t(head.size()), total = std::int64_t(head.size());
  for (int q = 0; q < c.size(); ++q) {
    if (q < c.rank()) off += lens[std::size_t(q)];
    total += lens[std::size_t(q)];
  }
  t.reserve(total);
  if (c.rank() == 0 && !head.empty() && err.empty()) err = write_header(f, head);
  if (detail::fault_here(c, "save:before_data")) err = "injected fault at save:before_data";
  const file_slab s{off, 1, std::int64_t(text.size()), std::int64_t(text.size())};
  const std::string werr = f.write_slab(s, text.data(), !err.empty());
  if (err.empty()) err = werr;
  if (err.empty() && detail::fault_here(c, "save:after_data")) err = "injected fault at save:after_data";
  const std::string cerr = f.close(sync);
  if (err.empty()) err = cerr;
  t.commit(err, sync, total);
}

}  // namespace ember::io
