// Catch2 runner for test_gpu (no MPI). Runs one of two sets of test cases:
//   with a device:    every case but the [nodevice] ones; exit 0 or 1 as usual;
//   without a device: the [nodevice] cases, then prints
//                       SKIPPED: no CUDA device (<CUDA error name>: <string>)
//                       SKIPPED: N [gpu] test cases not run: <names>
//                     and exits 77 (meson test: SKIP), or 1 if a [nodevice] case failed.
// A device of compute capability < 9.0 counts as no device (this build has
// sm_90 code only). EMBER_GPU_TESTS_REQUIRED=1: no usable device is a failure
// (exit 1), not a skip. With a device, a test filter on the command line replaces
// the default set (e.g. test_gpu "[bench]").
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cuda/device.hpp"

namespace cu = ember::cuda;

int main(int argc, char** argv) {
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv)) return rc;
  const bool filtered = !session.configData().testsOrTags.empty();
  const char* req = std::getenv("EMBER_GPU_TESTS_REQUIRED");
  const bool required = req && std::string(req) == "1";

  std::string why;
  if (cu::device_count() == 0) {
    why = "no CUDA device (" + cu::no_device_reason() + ")";
  } else {
    const auto p = cu::properties(0);
    if (p.cc_major < 9)
      why = "device 0 (" + p.name + ") has compute capability " + std::to_string(p.cc_major) + "." +
            std::to_string(p.cc_minor) + "; this build has sm_90/compute_90 code only (add a -gencode to -Dcuda_args)";
  }
  if (why.empty()) {
    if (!filtered) session.configData().testsOrTags = {"~[nodevice]"};
    const auto p = cu::properties(0);
    std::cout << "test_gpu: " << cu::device_count() << " device(s); device 0: " << p.name << ", cc " << p.cc_major
              << "." << p.cc_minor << ", " << p.sm_count << " SMs, " << (p.total_memory >> 20) << " MiB\n";
    return session.run();
  }
  if (required) {
    std::cout << "FAILED: " << why << " (EMBER_GPU_TESTS_REQUIRED=1)\n";
    return 1;
  }
  // Without a device only the [nodevice] cases can run, whatever was asked for.
  session.configData().testsOrTags = {"[nodevice]"};
  const int rc = session.run();
  std::vector<std::string> skipped;
  for (const auto& tc : Catch::getRegistryHub().getTestCaseRegistry().getAllTests())
    if (std::find(tc.tags.begin(), tc.tags.end(), "gpu") != tc.tags.end()) skipped.push_back(tc.name);
  std::cout << "SKIPPED: " << why << "\n";
  std::cout << "SKIPPED: " << skipped.size() << " [gpu] test cases not run:";
  for (const auto& s : skipped) std::cout << "\n  - " << s;
  std::cout << std::endl;
  return rc != 0 ? 1 : 77;
}
