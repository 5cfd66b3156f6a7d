// Inspecting communication plans: the same expression planned for 4, 64, 1024
// and 65536 ranks, without running anything (plan_for never calls MPI), with the
// predicted traffic per rank, and its Graphviz export.
//
//   build/examples/plans            (one process is enough)
//   build/examples/plans --dot > plan.dot && dot -Tsvg plan.dot > plan.svg
#include <cstring>
#include <iostream>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const bool dot = argc > 1 && std::strcmp(argv[1], "--dot") == 0;
  // Shapes only matter here: the arrays of this process are small stand-ins with
  // the global shapes below.
  auto a = ember::zeros<double>({1 << 16, 1 << 10}, {.split = 0});
  auto b = ember::zeros<double>({1 << 16, 1 << 10}, {.split = 1});
  auto mu = ember::mean(a, 0);
  auto e = (a - mu) * ember::tanh(b) + 2.0 * ember::abs(a);
  if (dot) {
    std::cout << ember::plan_for(e, 64).to_dot();
    return 0;
  }
  if (ember::world().rank() != 0) return 0;
  std::cout << "expression: (a - mean(a, 0)) * tanh(b) + 2 * abs(a)\n"
               "a: (65536, 1024) float64 split 0, b: (65536, 1024) float64 split 1\n\n";
  for (int P : {4, 64, 1024, 65536}) {
    const auto p = ember::plan_for(e, P);
    std::cout << p << '\n';
  }
  std::cout << "the same for 4 ranks as JSON:\n" << ember::plan_for(e, 4).to_json();
  return 0;
}
