// Quickstart: create a distributed array, inspect how it is split, move it
// around with the exchange engine and print it.
//
//   mpirun -n 4 build/examples/quickstart
#include <iostream>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();

  ember::random::seed(42);
  auto a = ember::random::randn<double>({7, 4, 3}, {.split = 0});
  if (w.rank() == 0) {
    std::cout << "a: global shape " << ember::detail::shape_str(a.shape()) << ", split " << *a.split() << ", over "
              << w.size() << " ranks\nlshape_map:\n";
    for (const auto& row : a.lshape_map()) std::cout << "  " << ember::detail::shape_str(row) << '\n';
  }
  std::cout << std::flush;
  w.barrier();
  std::cout << "rank " << w.rank() << " holds lshape " << ember::detail::shape_str(a.lshape()) << '\n' << std::flush;
  w.barrier();

  // Move the split boundary: rank 0 hands one row to rank 1.
  auto map = a.lshape_map();
  if (w.size() > 1 && map[0][0] > 0) {
    map[0][0] -= 1;
    map[1][0] += 1;
  }
  auto plan = a.plan_move(a.redistribute_target(map));
  const auto before = w.sent();
  a.redistribute_(map);
  const auto moved = w.sent() - before;
  std::cout << "rank " << w.rank() << ": redistribute_ predicted " << plan.predicted().bytes << " bytes in "
            << plan.predicted().messages << " messages, sent " << moved.bytes << " bytes in " << moved.messages
            << '\n' << std::flush;
  w.barrier();

  a.resplit_(1);
  if (w.rank() == 0) std::cout << "after resplit_(1): lshape " << ember::detail::shape_str(a.lshape()) << '\n';
  a.resplit_(ember::none);
  if (w.rank() == 0) std::cout << "after resplit_(none): every rank holds " << ember::detail::shape_str(a.lshape()) << '\n';
  ember::print(a);
  auto big = ember::arange<std::int64_t>(0, 100000, 1, {.split = 0});
  ember::print(big);  // summarized: only the shown corners travel

  // Lazy expressions: nothing is computed until the assignment. The planner sees
  // that x is split along rows and y along columns, moves the cheaper operand
  // once, and fuses every elementwise operation into one pass.
  auto x = ember::random::randn<double>({6, 4}, {.split = 0});
  auto y = ember::random::randn<double>({6, 4}, {.split = 1});
  auto e = x * 2.0 + ember::sin(y) - ember::mean(x, 0);
  const auto expr_plan = ember::explain(e);
  if (w.rank() == 0) std::cout << "\nexplain(x * 2.0 + sin(y) - mean(x, 0)):\n" << expr_plan;
  ember::dndarray<double, 2> r = e;
  ember::print(r);
  const double total = ember::sum(r * r);  // fused: r * r is never stored
  if (w.rank() == 0) std::cout << "sum(r * r) = " << total << '\n';
  return 0;
}
