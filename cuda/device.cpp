#include "device.hpp"

#include <memory>
#include <vector>

#include "internal.hpp"

namespace ember::cuda {
namespace {

struct discovery {
  int count = 0;
  cudaError_t code = cudaSuccess;
};

const discovery& discover() {
  static const discovery d = [] {
    discovery r;
    int n = 0;
    r.code = cudaGetDeviceCount(&n);
    // Without a driver (cudaErrorInsufficientDriver, the toolkit-only machine),
    // or with one and no GPU (cudaErrorNoDevice), the count is left unset.
    if (r.code != cudaSuccess) {
      (void)cudaGetLastError();
      n = 0;
    }
    r.count = n;
    return r;
  }();
  return d;
}

std::string error_text(int code) {
  const auto e = cudaError_t(code);
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

}  // namespace

int device_count() noexcept { return discover().count; }

std::string no_device_reason() {
  const discovery& d = discover();
  if (d.count > 0) return {};
  if (d.code != cudaSuccess) return error_text(d.code);
  return "cudaGetDeviceCount found 0 devices";
}

namespace detail {

[[noreturn]] void throw_cuda_error(int code, const char* what) {
  (void)cudaGetLastError();  // a non-sticky error must not resurface in a later check
  throw device_error(std::string(what) + ": " + error_text(code), code);
}

int resolve(int device) {
  const int n = device_count();
  if (n == 0) {
    const int code = discover().code != cudaSuccess ? int(discover().code) : int(cudaErrorNoDevice);
    throw device_error("ember::cuda: no CUDA device (" + no_device_reason() + ")", code);
  }
  if (device < 0) {
    int d = 0;
    check(cudaGetDevice(&d), "cudaGetDevice");
    return d;
  }
  if (device >= n)
    throw value_error("ember::cuda: device " + std::to_string(device) + " out of range (" + std::to_string(n) +
                      " devices)");
  return device;
}

per_device& state(int device) {
  static per_device* all = new per_device[std::size_t(device_count() > 0 ? device_count() : 1)];
  return all[resolve(device)];
}

}  // namespace detail

device_properties properties(int device) {
  const int d = detail::resolve(device);
  auto& s = detail::state(d);
  std::call_once(s.props_once, [&] {
    cudaDeviceProp p{};
    detail::check(cudaGetDeviceProperties(&p, d), "cudaGetDeviceProperties");
    s.props.ordinal = d;
    s.props.name = p.name;
    s.props.cc_major = p.major;
    s.props.cc_minor = p.minor;
    s.props.sm_count = p.multiProcessorCount;
    s.props.total_memory = p.totalGlobalMem;
  });
  return s.props;
}

int sm_count(int device) { return properties(device).sm_count; }

int current_device() { return detail::resolve(-1); }

void set_device(int device) {
  const int d = detail::resolve(device);
  detail::check(cudaSetDevice(d), "cudaSetDevice");
}

device_guard::device_guard(int device) : previous_(current_device()) {
  const int d = detail::resolve(device);
  if (d != previous_) detail::check(cudaSetDevice(d), "cudaSetDevice");
}

device_guard::~device_guard() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) (void)cudaSetDevice(previous_);
  (void)cudaGetLastError();
}

stream_t stream(int device) {
  const int d = detail::resolve(device);
  auto& s = detail::state(d);
  std::call_once(s.stream_once, [&] {
    device_guard g(d);
    cudaStream_t st = nullptr;
    detail::check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    s.stream = st;
  });
  return s.stream;
}

void synchronize(stream_t s) { detail::check(cudaStreamSynchronize(s), "cudaStreamSynchronize"); }

}  // namespace ember::cuda
