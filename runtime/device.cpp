#include "device.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "communicator.hpp"
#include "error.hpp"
#include "memory.hpp"

namespace ember {
namespace detail {
namespace {

// The plugin's one exported symbol (cuda/backend.cpp). The version in the name
// changes with the device_backend interface, so a stale plugin is refused by
// dlsym instead of being called through a different vtable.
constexpr const char* entry_symbol = "ember_cuda_backend_v1";

struct loaded {
  device_backend* backend = nullptr;
  std::string reason;
};

std::string directory_of_libember() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&gpu_backend), &info) == 0 || !info.dli_fname) return {};
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

loaded load() {
  loaded r;
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("EMBER_CUDA_BACKEND"); p && *p) {
    candidates.emplace_back(p);
  } else {
    const std::string dir = directory_of_libember();
    candidates.push_back(dir + "/libember_cuda.so");       // installed, next to libember.so
    candidates.push_back(dir + "/cuda/libember_cuda.so");  // meson build tree
  }
  std::string tried;
  void* handle = nullptr;
  for (const auto& c : candidates) {
    // RTLD_LOCAL: CUDA's symbols stay inside the plugin; RTLD_NOW: a missing
    // CUDA library fails here, with dlerror's message, not at the first call.
    handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) break;
    const char* e = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(e ? e : c.c_str());
  }
  if (!handle) {
    r.reason = "the CUDA backend libember_cuda.so was not found or could not be loaded (" + tried +
               "); ember builds it when nvcc is found (meson option cuda)";
    return r;
  }
  using entry_fn = device_backend* (*)();
  auto entry = reinterpret_cast<entry_fn>(dlsym(handle, entry_symbol));
  if (!entry) {
    r.reason = std::string("libember_cuda.so has no ") + entry_symbol + " (a plugin of another ember version)";
    return r;
  }
  device_backend* b = entry();
  if (!b) {
    r.reason = "libember_cuda.so failed to initialize";
    return r;
  }
  if (b->device_count() == 0) {
    r.reason = "no CUDA device (" + b->no_device_reason() + ")";
    return r;
  }
  r.backend = b;
  return r;
}

const loaded& state() {
  static const loaded s = load();  // never unloaded: device memory may outlive main
  return s;
}

// The rank among the ranks of this node: the launcher's variable when there is
// one (no communication), otherwise a split of `c` by shared memory.
int node_local_rank(const communicator& c) {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMI_LOCAL_RANK"})
    if (const char* s = std::getenv(v); s && *s) return std::atoi(s);
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(c.native(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

}  // namespace

device_backend* gpu_backend() { return state().backend; }
std::string gpu_unavailable_reason() { return state().reason; }

device_backend& gpu_or_throw(std::string_view what) {
  if (auto* b = gpu_backend()) return *b;
  throw device_error(std::string(what) + ": no GPU on this rank: " + gpu_unavailable_reason(), 0);
}

void require_gpu(const communicator& c, std::string_view what) {
  const int mine = gpu_backend() ? 1 : 0;
  const auto all = c.allgather(mine);
  std::vector<int> missing;
  for (int r = 0; r < c.size(); ++r)
    if (!all[std::size_t(r)]) missing.push_back(r);
  if (missing.empty()) {
    static std::once_flag chosen;
    std::call_once(chosen, [&] {
      auto& b = *gpu_backend();
      b.use_device(node_local_rank(c) % b.device_count());
    });
    return;
  }
  // One reason in the message, the first failing rank's, so that every rank
  // throws the same text.
  const int first = missing.front();
  std::string reason = c.rank() == first ? gpu_unavailable_reason() : std::string();
  std::int64_t len = std::int64_t(reason.size());
  c.bcast(&len, 1, first);
  reason.resize(std::size_t(len));
  c.bcast(reason.data(), len, first);
  std::string ranks;
  for (std::size_t i = 0; i < missing.size() && i < 16; ++i) ranks += (i ? ", " : "") + std::to_string(missing[i]);
  if (missing.size() > 16) ranks += ", ... (" + std::to_string(missing.size()) + " ranks)";
  throw device_error(std::string(what) + ": GPU arrays need a usable CUDA device on every rank of the communicator (" +
                         std::to_string(c.size()) + (c.size() == 1 ? " rank" : " ranks") + "), but rank" + (missing.size() > 1 ? "s " : " ") + ranks +
                         (missing.size() > 1 ? " have" : " has") + " none; rank " + std::to_string(first) + ": " +
                         reason,
                     0);
}

std::shared_ptr<void> allocate_on(device_kind d, std::int64_t bytes) {
  if (d == device_kind::gpu) return gpu_or_throw("ember: device allocation").allocate(std::size_t(bytes > 0 ? bytes : 0));
  return allocate<unsigned char>(bytes > 0 ? bytes : 1);
}

void copy_between(void* dst, device_kind dst_kind, const void* src, device_kind src_kind, std::int64_t bytes) {
  if (bytes <= 0 || dst == src) return;
  if (dst_kind == device_kind::cpu && src_kind == device_kind::cpu) {
    std::memmove(dst, src, std::size_t(bytes));
    return;
  }
  gpu_or_throw("ember: device copy").copy(dst, src, std::size_t(bytes));
}

}  // namespace detail

bool gpu_available() { return detail::gpu_backend() != nullptr; }

}  // namespace ember
