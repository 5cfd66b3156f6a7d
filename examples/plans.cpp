// Inspecting communication plans: the same expression planned for 4, 64, 1024
// and 65536 ranks, without running anything (plan_for never calls MPI), with the
// predicted traffic per rank, and its Graphviz export; then a matrix product.
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

  // A product: the planner picks the algorithm (allgather + local product or a
  // ring on few ranks, ScaLAPACK's 2-D SUMMA where per-rank traffic must shrink
  // like 1/sqrt(P)), and the addition after it fuses into one pass.
  const std::int64_t n = 1 << 16;
  ember::dndarray<double, 2> A(ember::layout::balanced({n, n}, 0, ember::world().size()), ember::world(),
                               std::shared_ptr<double[]>());
  ember::dndarray<double, 2> C(ember::layout::balanced({n, n}, 1, ember::world().size()), ember::world(),
                               std::shared_ptr<double[]>());
  std::cout << "\nexpression: matmul(A, A) + C, A: (65536, 65536) split 0, C split 1\n\n";
  for (int P : {2, 64, 4096}) std::cout << ember::plan_for(ember::matmul(A, A) + C, P) << '\n';
  return 0;
}
