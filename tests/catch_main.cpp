// Catch2 runner for distributed tests: initializes MPI through ember, and, when
// EMBER_TEST_REPORT is set, makes each rank write its own JUnit report
// (<EMBER_TEST_REPORT>.rank<R>.xml) so the test runner sees a failure on any rank.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include <runtime/communicator.hpp>   // ember::environment, ember::world: all a runner needs
#include <runtime/sanitizers.hpp>

// Sanitizer builds (tests/sanitizers/build.sh): LeakSanitizer can only name the
// library of an allocation while that library is loaded, and OpenMPI dlclose()s
// plugins (mca_*.so) both inside MPI_Init (the components it did not select) and
// in MPI_Finalize (all of them). So what MPI_Init allocates is not tracked (it is
// all OpenMPI's: ember's code does not run inside it), and the leak check runs
// before MPI_Finalize, not at exit. OpenMPI's later allocations (its progress
// threads, plugins creating communicators) are suppressed by library in
// tests/sanitizers/lsan.supp; ember's own leaks are reported.
#ifdef EMBER_ADDRESS_SANITIZER
#define EMBER_TEST_LEAK_CHECK 1
#endif
#ifdef EMBER_TEST_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif

int main(int argc, char** argv) {
#ifdef EMBER_TEST_LEAK_CHECK
  __lsan_disable();
#endif
  ember::environment env(argc, argv);
#ifdef EMBER_TEST_LEAK_CHECK
  __lsan_enable();
#endif
  const int rank = ember::world().rank();
  std::vector<std::string> args(argv, argv + argc);
  if (const char* rep = std::getenv("EMBER_TEST_REPORT")) {
    args.push_back("-r");
    args.push_back("junit");
    args.push_back("-o");
    args.push_back(std::string(rep) + ".rank" + std::to_string(rank) + ".xml");
  } else if (rank != 0) {
    // Only rank 0 talks on the console unless a rank fails.
    args.push_back("-r");
    args.push_back("compact");
  }
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  Catch::Session session;
  int rc = session.applyCommandLine(int(cargs.size()), cargs.data());
  if (rc != 0) return rc;
  rc = session.run();
#ifdef EMBER_TEST_LEAK_CHECK
  // Every array, plan and communicator the tests made is gone or still reachable
  // (ember's caches) by now; a leak report ends the process with an error, and
  // the at-exit check is skipped.
  __lsan_do_leak_check();
#endif
  return rc;
}
