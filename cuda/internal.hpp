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

}  // namespace ember::cuda::detail
