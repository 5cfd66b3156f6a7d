// The adversarial cases that must run in a process of their own (run.py runs
// this under mpirun and checks each rank's RESULT line or the job's end):
//   before_env   a factory before any ember::environment: ember::error (then an
//                environment, and the factory works)
//   after_env    an array used after its environment ended: ember::error
//   second_env   an environment after the first one ended: ember::error
//   null_expr    a null handle in an expression on one rank: the job ends with
//                one line naming the rank (its peers would wait in the allreduce)
//   null_move    the same for a move
//   env_garbage  a plan with EMBER_ALPHA/BETA/... set to garbage by the runner:
//                value_error naming the variable, on every rank
//   oom_eval     one rank out of memory inside a plan step: the documented abort
//                naming the rank and the step
//   save_loop <path>  saves 64 MiB to <path> again and again (run.py kills it)
//   save_once <path>  one small save to <path>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <typeinfo>

#include <ember.hpp>

namespace {
void result(int rank, const std::string& type, const std::string& what) {
  std::printf("RESULT %d %s|%s\n", rank, type.c_str(), what.c_str());
  std::fflush(stdout);
}
template <class F>
void report(int rank, F&& f) {
  try {
    f();
    result(rank, "ok", "");
  } catch (const ember::value_error& e) {
    result(rank, "value_error", e.what());
  } catch (const ember::error& e) {
    result(rank, "error", e.what());
  } catch (const std::exception& e) {
    result(rank, typeid(e).name(), e.what());
  }
}
int env_rank() {
  const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
  return r ? std::atoi(r) : 0;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "before_env") {
    report(env_rank(), [] { (void)ember::zeros<double>({4}); });
    ember::environment env(argc, argv);
    report(ember::world().rank(), [] {
      auto a = ember::arange<double>(0, 10, 1, {.split = 0});
      if (ember::sum(a) != 45.0) throw std::runtime_error("wrong sum after the late environment");
    });
    return 0;
  }
  if (mode == "after_env" || mode == "second_env") {
    ember::dndarray<double, 1> a;
    int rank = 0;
    {
      ember::environment env(argc, argv);
      rank = ember::world().rank();
      a = ember::arange<double>(0, 10, 1, {.split = 0});
    }
    if (mode == "after_env") report(rank, [&] { a.resplit_(ember::none); });
    else report(rank, [&] { ember::environment again(argc, argv); });
    return 0;
  }
  ember::environment env(argc, argv);
  const int rank = ember::world().rank(), P = ember::world().size();
  if (mode == "null_expr" || mode == "null_move") {
    auto a = ember::arange<double>(0, 10, 1, {.split = 0});
    ember::dndarray<double, 1> b = a;
    if (rank == P - 1) b = ember::dndarray<double, 1>();  // a null handle on the last rank only
    report(rank, [&] {
      if (mode == "null_expr") (void)ember::sum(a + b);
      else b.resplit_(ember::none);
    });
    return 0;
  }
  if (mode == "env_garbage") {
    report(rank, [&] {
      auto a = ember::arange<double>(0, 10, 1, {.split = 0});
      auto b = ember::arange<double>(0, 10, 1, {.split = ember::none});
      (void)ember::sum(a + b);
    });
    return 0;
  }
  if (mode == "oom_eval") {
    auto a = ember::arange<double>(0, double(std::int64_t(P) << 22), 1, {.split = 0});  // 32 MiB per rank
    if (rank == P - 1) {
      std::ifstream f("/proc/self/statm");
      long pages = 0;
      f >> pages;
      rlimit l{};
      getrlimit(RLIMIT_AS, &l);
      l.rlim_cur = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(16) << 20);
      setrlimit(RLIMIT_AS, &l);
    }
    report(rank, [&] { (void)ember::eval(a * 2.0, {.split = ember::none}); });
    return 0;
  }
  if (mode == "save_loop" || mode == "save_once") {
    const std::string path = argv[2];
    auto a = ember::arange<double>(0, mode == "save_loop" ? double(1 << 23) : 100.0, 1, {.split = 0});
    if (mode == "save_once") {
      report(rank, [&] { ember::io::save_npy(a, path); });
      return 0;
    }
    if (rank == 0) {
      std::printf("SAVING\n");
      std::fflush(stdout);
    }
    for (;;) ember::io::save_npy(a, path, {.sync = false});
  }
  std::fprintf(stderr, "adversarial_program: unknown mode '%s'\n", mode.c_str());
  return 2;
}
