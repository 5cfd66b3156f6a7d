// Catch2 runner for distributed tests: initializes MPI through ember, and, when
// EMBER_TEST_REPORT is set, makes each rank write its own JUnit report
// (<EMBER_TEST_REPORT>.rank<R>.xml) so the test runner sees a failure on any rank.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
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
  return rc;
}
