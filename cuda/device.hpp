// CUDA device discovery, errors and the per-device stream (optional CUDA backend).
//
// Plain C++: this header includes no CUDA header, so g++-compiled code (runtime/,
// tests) can use it; stream_t is CUDA's cudaStream_t under its own name.
// Every function works on "the current device" (cudaGetDevice) unless given one;
// device_guard switches for a scope.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/error.hpp"

struct CUstream_st;

namespace ember::cuda {

using stream_t = CUstream_st*;  // == cudaStream_t

// A CUDA runtime, cuBLAS or cuSOLVER call failed: ember::device_error
// (runtime/error.hpp), whose what() names the call and carries the library's
// error name and string, and whose code() is the library's status value.
using ember::device_error;

// Number of usable CUDA devices; 0 (never an exception) when there is no driver,
// the driver is older than the runtime, or there is no device. Cached: the first
// call's answer holds for the process.
int device_count() noexcept;
// Why device_count() is 0: the CUDA error name and string, e.g.
// "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA
// runtime version"; empty when there is a device.
std::string no_device_reason();

struct device_properties {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;  // compute capability (9.0 on H100/H200)
  int sm_count = 0;
  std::size_t total_memory = 0;
};
device_properties properties(int device);

int current_device();
void set_device(int device);
// Cached multiprocessor count of a device (for sizing grid-stride launches).
int sm_count(int device);

// Sets a device for the enclosing scope and restores the previous one.
class device_guard {
 public:
  explicit device_guard(int device);
  ~device_guard();
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_;
};

// ember's stream on a device (the current one by default): created on first use,
// non-blocking with respect to the legacy default stream, never destroyed (it
// lives as long as the process; destroying it during static destruction would
// race the driver's own teardown). All of ember's device work on that device is
// ordered on it: allocations, copies, kernels, cuBLAS and cuSOLVER calls.
stream_t stream(int device = -1);
// Waits for everything ordered on the stream.
void synchronize(stream_t s);

namespace detail {
// Throws device_error "<what>: <cudaErrorName>: <string>" for a cudaError_t != 0,
// after clearing CUDA's last-error state.
[[noreturn]] void throw_cuda_error(int code, const char* what);
inline void check(int code, const char* what) {
  if (code != 0) throw_cuda_error(code, what);
}
}  // namespace detail

}  // namespace ember::cuda
