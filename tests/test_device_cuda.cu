// test_device compiled by nvcc: the same cases, with the fused kernels of the GPU
// arrays' expressions running on the GPU (dsl/device_kernels.cuh) instead of on
// host copies. Run by tests/gpu/run_on_device.sh at 1 and 2 ranks.
#include "test_device.cpp"
