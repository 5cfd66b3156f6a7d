// Where a local block lives: host memory (ember::cpu) or a CUDA device's memory
// (ember::gpu), and the runtime's door to the optional CUDA backend.
//
// libember itself never links CUDA. The backend (cuda/, built when nvcc is found)
// is the plugin libember_cuda.so, loaded with dlopen the first time a GPU array is
// asked for: a CPU-only program pays nothing for it, and one libember binary runs
// on machines with and without a GPU. The plugin is looked up next to libember.so
// (installed) or in its cuda/ folder (build tree); EMBER_CUDA_BACKEND=<path>
// names another file.
//
// Each rank uses one device: its rank among the ranks of its node, modulo the
// node's device count (the usual one-GPU-per-rank mapping), chosen on first use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace ember {

class communicator;

enum class device_kind : std::uint8_t { cpu, gpu };
inline constexpr device_kind cpu = device_kind::cpu;
inline constexpr device_kind gpu = device_kind::gpu;

constexpr std::string_view device_name(device_kind d) { return d == device_kind::gpu ? "gpu" : "cpu"; }

namespace detail {

// What the CUDA backend does for the runtime and the DSL. Plain C++ (no CUDA
// type): implemented by cuda/backend.cpp, reached through gpu_backend().
// Every device call is ordered on the device's ember stream; the calls that
// return host-visible results (copies to the host, synchronize) wait for it.
class device_backend {
 public:
  virtual ~device_backend() = default;
  virtual int device_count() = 0;
  virtual std::string no_device_reason() = 0;
  virtual void use_device(int ordinal) = 0;
  virtual std::string device_description() = 0;  // "NVIDIA H200 (sm_90, 139 GiB)"
  // Stream-ordered pool memory of the current device; null for 0 bytes.
  virtual std::shared_ptr<void> allocate(std::size_t bytes) = 0;
  // Page-locked host memory from a cache of released buffers.
  virtual std::shared_ptr<void> allocate_pinned(std::size_t bytes) = 0;
  // Any direction (unified addressing); returns when the bytes have arrived.
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void zero(void* dst_device, std::size_t bytes) = 0;
  virtual void synchronize() = 0;
  virtual void* stream() = 0;  // cudaStream_t of the current device
  virtual int sm_count() = 0;
  // cuBLAS gemm on row-major operands (as runtime/lapack's gemm_rm), dtype by code.
  virtual void gemm_row_major(int dtype_code, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                              std::int64_t k, double alpha, const void* a, std::int64_t lda, const void* b,
                              std::int64_t ldb, double beta, void* c, std::int64_t ldc) = 0;
  // out (cols x rows, row-major) = in (rows x cols, row-major) transposed (cuBLAS geam).
  virtual void transpose_row_major(int dtype_code, std::int64_t rows, std::int64_t cols, const void* in,
                                   void* out) = 0;
  // Column-major, as runtime/lapack.hpp (float32/float64): cuBLAS gemm, cuSOLVER
  // geqrf and orgqr (synchronous: they read cuSOLVER's devInfo).
  virtual void gemm(int dtype_code, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                    double alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb, double beta,
                    void* c, std::int64_t ldc) = 0;
  virtual void geqrf(int dtype_code, std::int64_t m, std::int64_t n, void* a, std::int64_t lda, void* tau) = 0;
  virtual void orgqr(int dtype_code, std::int64_t m, std::int64_t n, std::int64_t k, void* a, std::int64_t lda,
                     const void* tau) = 0;
  // A column-major rows x cols block (elements of `elem` bytes) between any two
  // kinds of memory, leading dimensions in elements; returns when it has arrived.
  virtual void copy_matrix(std::size_t elem, std::int64_t rows, std::int64_t cols, const void* src,
                           std::int64_t lds, void* dst, std::int64_t ldd) = 0;
};

// The backend, loaded on first call; null when it is not available on this rank
// (not built, not loadable, or no device), with the reason in gpu_unavailable_reason().
device_backend* gpu_backend();
std::string gpu_unavailable_reason();
// The backend or a device_error naming `what` and the reason (local: for
// operations every rank reaches only after require_gpu agreed).
device_backend& gpu_or_throw(std::string_view what);

// Collective over `c`: returns when every rank has a usable device, otherwise
// throws the same device_error on every rank, naming the ranks without one and
// the reason of the first of them. `what` names the call ("ember::zeros").
void require_gpu(const communicator& c, std::string_view what);

// `bytes` of uninitialized memory on `d` (device memory: the backend's pool).
std::shared_ptr<void> allocate_on(device_kind d, std::int64_t bytes);
// Copies between any two kinds of memory.
void copy_between(void* dst, device_kind dst_kind, const void* src, device_kind src_kind, std::int64_t bytes);

}  // namespace detail

// True when this rank can use a GPU (the backend loads and sees a device). Local.
bool gpu_available();

}  // namespace ember
