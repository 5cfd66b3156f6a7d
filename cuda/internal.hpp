// Shared by the cuda/ sources only (not installed, not for users): per-device state
// created on first use. Includes the CUDA runtime API header.
#pragma once

#include <mutex>

#include <cuda_runtime_api.h>

#include "device.hpp"

namespace ember::cuda::detail {

struct per_device {
  std::once_flag props_once, stream_once, pool_once, blas_once, solver_once;
  device_properties props;
  cudaStream_t stream = nullptr;
  cudaMemPool_t pool = nullptr;
  void* blas = nullptr;    // cublasHandle_t
  void* solver = nullptr;  // cusolverDnHandle_t
};

// The device's ordinal (-1: the current device), checked against device_count();
// throws device_error when there is no device at all.
int resolve(int device);
// The state of a resolved device (never destroyed, like the streams it holds).
per_device& state(int device);

// A library handle (cuBLAS, cuSOLVER) of the current device: created once per
// device by create(H*) into the per_device slot `slot` (guarded by `once`), then
// bound by bind(H) to the caller's stream on every use.
template <class H, class Create, class Bind>
H library_handle(std::once_flag per_device::*once, void* per_device::*slot, Create&& create, Bind&& bind) {
  auto& st = state(resolve(-1));
  std::call_once(st.*once, [&] {
    H h = nullptr;
    create(&h);
    st.*slot = h;
  });
  auto h = static_cast<H>(st.*slot);
  bind(h);
  return h;
}

}  // namespace ember::cuda::detail
