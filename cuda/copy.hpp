// Copies between host and device memory (optional CUDA backend).
//
// The *_async calls are queued on a stream (by default the current device's ember
// stream) and return at once; from pageable host memory CUDA completes them
// before returning, from pinned memory (cuda::pinned_allocate) they overlap with
// the caller. Pointers are told apart by CUDA's unified addressing.
//
// The staged copies are the device side of a future exchange: a device block is
// moved through two pinned chunks, so that while the caller consumes one chunk
// (e.g. MPI_Isend + wait, in runtime/), the next one is already being copied.
// No MPI here: the caller's callback is where the transfer happens.
#pragma once

#include <cstddef>
#include <functional>

#include "device.hpp"

namespace ember::cuda {

// Any direction (host->device, device->host, device->device, also across
// devices with unified addressing), ordered on `s`.
void copy_async(void* dst, const void* src, std::size_t bytes, stream_t s = stream());
void copy_to_device_async(void* dst_device, const void* src_host, std::size_t bytes, stream_t s = stream());
void copy_to_host_async(void* dst_host, const void* src_device, std::size_t bytes, stream_t s = stream());
void copy_device_async(void* dst_device, const void* src_device, std::size_t bytes, stream_t s = stream());
// Between two devices (peer access if enabled, otherwise through the host).
void copy_peer_async(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes,
                     stream_t s = stream());
// Synchronous forms: queue on the device's ember stream and wait for it.
void copy_to_device(void* dst_device, const void* src_host, std::size_t bytes);
void copy_to_host(void* dst_host, const void* src_device, std::size_t bytes);

// Called once per chunk, in order: `chunk` points at `bytes` bytes of pinned host
// memory that hold (or, for the upload, must be filled with) bytes
// [offset, offset + bytes) of the transfer. The pointer is valid during the call only.
using staged_consumer = std::function<void(const void* chunk, std::size_t offset, std::size_t bytes)>;
using staged_producer = std::function<void(void* chunk, std::size_t offset, std::size_t bytes)>;

// Device -> pinned chunk -> consume(chunk): chunk i+1 is copied to the other
// pinned buffer while consume() works on chunk i. Returns when every chunk has
// been consumed. If consume() throws, the copies in flight are waited for and the
// exception propagates.
void staged_download(const void* src_device, std::size_t bytes, std::size_t chunk_bytes,
                     const staged_consumer& consume, stream_t s = stream());
// produce(chunk) -> pinned chunk -> device: while chunk i is copied to the
// device, produce() fills the other buffer with chunk i+1. Returns when
// everything has arrived on the device.
void staged_upload(void* dst_device, std::size_t bytes, std::size_t chunk_bytes, const staged_producer& produce,
                   stream_t s = stream());

}  // namespace ember::cuda
