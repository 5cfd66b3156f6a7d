// Explicit 2-D heat diffusion, written as a NumPy user writes it:
//
//   in = slice(1, -1)
//   v[in, in] = u[in, in] + k * (u[:-2, in] + u[2:, in] + u[in, :-2] + u[in, 2:] - 4 * u[in, in])
//   u, v = v, u
//
// on a field split by rows over the ranks, with fixed (Dirichlet) boundaries, a
// double buffer, and the plan printed once. Checked against the same steps on the
// gathered field computed serially: equal to the last bit (the same operations in
// the same order on every element).
//
//   mpirun -n 4 build/examples/heat2d [n] [steps]
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const std::int64_t n = argc > 1 ? std::atol(argv[1]) : 96;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
  const double k = 0.2;
  using ember::slice;
  const auto in = slice(1, -1), up = slice(0, -2), down = slice(2, ember::none);

  // a hot square in the middle of a cold plate
  std::vector<double> init(std::size_t(n * n), 0.0);
  for (std::int64_t i = n / 3; i < 2 * n / 3; ++i)
    for (std::int64_t j = n / 3; j < 2 * n / 3; ++j) init[std::size_t(i * n + j)] = 100.0;
  auto u = ember::array(std::span<const double>(init), std::array<std::int64_t, 2>{n, n}, {.split = 0});
  auto v = u.copy();

  auto step = [&](const ember::dndarray<double, 2>& a, const ember::dndarray<double, 2>& b) {
    b(in, in) = a(in, in) + k * (a(up, in) + a(down, in) + a(in, up) + a(in, down) - 4.0 * a(in, in));
  };
  if (w.rank() == 0) std::cout << "heat2d: " << n << " x " << n << " on " << w.size() << " ranks, " << steps << " steps\n";
  std::cout << std::flush;
  {
    auto plan = ember::explain(u(in, in) + k * (u(up, in) + u(down, in) + u(in, up) + u(in, down) - 4.0 * u(in, in)));
    if (w.rank() == 0) std::cout << plan;
  }
  for (int s = 0; s < steps; ++s) {
    step(u, v);
    std::swap(u, v);
  }

  // the serial reference, on every rank
  std::vector<double> a = init, b = init;
  for (int s = 0; s < steps; ++s) {
    for (std::int64_t i = 1; i < n - 1; ++i)
      for (std::int64_t j = 1; j < n - 1; ++j) {
        auto at = [&](std::int64_t r, std::int64_t c) { return a[std::size_t(r * n + c)]; };
        b[std::size_t(i * n + j)] =
            at(i, j) + k * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) - 4.0 * at(i, j));
      }
    std::swap(a, b);
  }
  auto g = ember::resplit(u, ember::none);
  bool ok = true;
  for (std::int64_t i = 0; i < n * n; ++i) ok = ok && g.ldata()[i] == a[std::size_t(i)];
  ok = w.allreduce(int(ok), ember::reduce_op::land) != 0;
  const double heat = ember::sum(u);
  if (w.rank() == 0) {
    std::printf("heat2d: total heat %.6f after %d steps (serial reference: %s)\n", heat, steps,
                ok ? "equal to the last bit" : "DIFFERENT");
  }
  return ok ? 0 : 1;
}
