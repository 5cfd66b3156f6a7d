// A small ember program for tests/faults/run.py, which runs it under mpirun with
// EMBER_FAULT / EMBER_ON_FAILURE set, or kills one of its ranks, and checks that
// the job ENDS (quickly, with the right message) instead of hanging.
//
//   fault_program plan     prints the plan of one expression (moves, an allreduce,
//                          a matmul, a fused kernel) between "<<<plan" and "plan>>>",
//                          evaluates it 3 times, checks the result, prints "done"
//   fault_program move     resplit_ of a distributed array (a standalone move), 3 times
//   fault_program recover  (one rank, EMBER_FAULT set) catches the injected fault,
//                          evaluates again and checks the result
//   fault_program spin <pidfile> <seconds>
//                          every rank loops over allreduces; rank 1 writes its pid
//                          to <pidfile> so the test can SIGKILL it
#include <ember.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <unistd.h>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const std::string mode = argc > 1 ? argv[1] : "plan";

  auto a = ember::random::randn<double>({48, 12}, {.split = 0});
  auto b = ember::random::randn<double>({12, 20}, {.split = 1});
  auto c = ember::random::randn<double>({48, 20}, {.split = 0});
  auto d = ember::random::randn<double>({48, 20}, {.split = 1});
  // a product (matmul step), a reduction over the split axis (allreduce), an
  // operand that must move (d split 1 -> 0) and fused passes
  auto expr = [&] { return ember::matmul(a, b) * 2.0 + d - ember::mean(c, 0); };
  auto serial = [&] {
    auto ga = ember::resplit(a, ember::none), gb = ember::resplit(b, ember::none), gc = ember::resplit(c, ember::none),
         gd = ember::resplit(d, ember::none);
    std::vector<double> r(48 * 20);
    for (int j = 0; j < 20; ++j) {
      double m = 0;
      for (int i = 0; i < 48; ++i) m += gc.ldata()[i * 20 + j];
      m /= 48;
      for (int i = 0; i < 48; ++i) {
        double s = 0;
        for (int k = 0; k < 12; ++k) s += ga.ldata()[i * 12 + k] * gb.ldata()[k * 20 + j];
        r[std::size_t(i * 20 + j)] = s * 2.0 + gd.ldata()[i * 20 + j] - m;
      }
    }
    return r;
  };
  auto check = [&](const ember::dndarray<double, 2>& r) {
    const auto want = serial();
    auto g = ember::resplit(r, ember::none);
    double err = 0;
    for (std::size_t i = 0; i < want.size(); ++i) err = std::max(err, std::abs(g.ldata()[i] - want[i]));
    if (err > 1e-12) {
      std::cerr << "fault_program: wrong result on rank " << w.rank() << " (max error " << err << ")\n";
      std::exit(3);
    }
  };

  if (mode == "plan") {
    if (w.rank() == 0) std::cout << "<<<plan\n" << ember::explain(expr()) << "plan>>>\n" << std::flush;
    for (int it = 0; it < 3; ++it) {
      ember::dndarray<double, 2> r = expr();
      check(r);
    }
  } else if (mode == "move") {
    for (int it = 0; it < 3; ++it) {
      a.resplit_(it % 2 == 0 ? 1 : 0);
    }
  } else if (mode == "recover") {
    try {
      ember::dndarray<double, 2> r = expr();
      std::cout << "fault_program: no fault was injected\n";
      return 4;
    } catch (const ember::injected_fault& e) {
      std::cout << "caught: " << e.what() << "\n";
    }
    ember::dndarray<double, 2> r = expr();  // EMBER_FAULT's <n> = 1: the second evaluation runs
    check(r);
  } else if (mode == "spin") {
    const std::string pidfile = argc > 2 ? argv[2] : "/tmp/ember-fault.pid";
    const double seconds = argc > 3 ? std::stod(argv[3]) : 60;
    if (w.rank() == 1) std::ofstream(pidfile) << ::getpid() << "\n";
    const auto t0 = std::chrono::steady_clock::now();
    std::int64_t n = 0;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
      n += w.allreduce(std::int64_t(1), ember::reduce_op::sum);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (w.rank() == 0) std::cout << "spin: " << n << " allreduces, nobody was killed\n";
  } else {
    std::cerr << "fault_program: unknown mode " << mode << "\n";
    return 2;
  }
  w.barrier();
  if (w.rank() == 0) std::cout << "done\n";
}
