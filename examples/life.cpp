// Conway's game of life on a periodic board, as NumPy code writes it with np.roll:
//
//   n = sum(np.roll(np.roll(g, di, 0), dj, 1) for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0))
//   g = ((n == 3) | ((g == 1) & (n == 2))).astype(np.int32)
//
// on a board split by rows over the ranks (the rolls along axis 0 move one row
// between neighbours, with wrap-around between the last rank and the first).
// Checked against the same generations computed serially; prints the population.
//
//   mpirun -n 4 build/examples/life [n] [generations]
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const std::int64_t n = argc > 1 ? std::atol(argv[1]) : 24;
  const int gens = argc > 2 ? std::atoi(argv[2]) : 30;
  // a glider and a blinker
  std::vector<std::int32_t> init(std::size_t(n * n), 0);
  auto set = [&](std::int64_t i, std::int64_t j) { init[std::size_t((i % n) * n + (j % n))] = 1; };
  set(1, 2), set(2, 3), set(3, 1), set(3, 2), set(3, 3);
  set(n / 2, n / 2), set(n / 2, n / 2 + 1), set(n / 2, n / 2 + 2);
  auto g = ember::array(std::span<const std::int32_t>(init), std::array<std::int64_t, 2>{n, n}, {.split = 0});

  for (int t = 0; t < gens; ++t) {
    auto cnt = ember::zeros_like(g);
    for (int di = -1; di <= 1; ++di)
      for (int dj = -1; dj <= 1; ++dj)
        if (di != 0 || dj != 0) cnt = cnt + ember::roll(ember::roll(g, di, 0), dj, 1);
    g = ember::astype<std::int32_t>(cnt == 3) + ember::astype<std::int32_t>(g == 1) * ember::astype<std::int32_t>(cnt == 2);
  }

  // serial reference
  std::vector<std::int32_t> a = init, b(a.size());
  for (int t = 0; t < gens; ++t) {
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        int c = 0;
        for (int di = -1; di <= 1; ++di)
          for (int dj = -1; dj <= 1; ++dj)
            if (di != 0 || dj != 0) c += a[std::size_t(((i + di + n) % n) * n + (j + dj + n) % n)];
        const int alive = a[std::size_t(i * n + j)];
        b[std::size_t(i * n + j)] = (c == 3 || (alive == 1 && c == 2)) ? 1 : 0;
      }
    std::swap(a, b);
  }
  auto all = ember::resplit(g, ember::none);
  bool ok = true;
  for (std::int64_t i = 0; i < n * n; ++i) ok = ok && all.ldata()[i] == a[std::size_t(i)];
  ok = w.allreduce(int(ok), ember::reduce_op::land) != 0;
  const auto population = ember::sum(g);
  if (w.rank() == 0)
    std::printf("life: %lld x %lld periodic board on %d ranks, %d generations, population %lld (serial reference: %s)\n",
                static_cast<long long>(n), static_cast<long long>(n), w.size(), gens, static_cast<long long>(population),
                ok ? "equal" : "DIFFERENT");
  return ok ? 0 : 1;
}
