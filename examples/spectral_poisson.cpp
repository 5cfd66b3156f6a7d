// A periodic Poisson problem solved spectrally, as a NumPy user writes it:
//
//   kx = np.fft.fftfreq(n, 1 / n)[:, None]; ky = np.fft.rfftfreq(n, 1 / n)[None, :]
//   k2 = kx**2 + ky**2
//   uh = np.where(k2 > 0, np.fft.rfft2(f) / np.where(k2 > 0, k2, 1), 0)
//   u = np.fft.irfft2(uh, (n, n))
//
// -lap u = f on [0, 2 pi)^2 with f from a known u (zero mean), on a grid split
// by rows. The plan is printed: the forward rfft2 transforms the local rows,
// moves the data once (a resplit: the slab transpose, exact bytes) and
// transforms the columns, the division by k^2 is one fused pass in that
// transposed layout, and the inverse goes back the same way. Checked against the
// analytic solution (a spectral method is exact for these modes to rounding:
// the error must be below 1e-12).
//
//   mpirun -n 4 build/examples/spectral_poisson [n]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <numbers>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const std::int64_t n = argc > 1 ? std::atol(argv[1]) : 256;
  namespace fft = ember::fft;
  using ember::all;
  using ember::newaxis;

  // the grid x_i = 2 pi i / n along both axes, split by rows
  const double h = 2 * std::numbers::pi / double(n);
  auto x = ember::eval(ember::arange<double>(n) * h);
  auto X = ember::eval(x(all, newaxis) + ember::zeros<double>({n, n}, {.split = 0}));  // x along axis 0
  auto Y = ember::eval(x(newaxis, all) + ember::zeros<double>({n, n}, {.split = 0}));  // y along axis 1
  // u = sin(3x) cos(2y) + cos(5x + y) / 2, so -lap u = 13 sin(3x) cos(2y) + 13 cos(5x + y)
  ember::dndarray<double, 2> exact = ember::sin(3.0 * X) * ember::cos(2.0 * Y) + 0.5 * ember::cos(5.0 * X + Y);
  ember::dndarray<double, 2> f = 13.0 * ember::sin(3.0 * X) * ember::cos(2.0 * Y) + 13.0 * ember::cos(5.0 * X + Y);

  // the wave numbers: integers, kx over the full axis 0, ky over rfft's half of axis 1
  const auto kx = fft::fftfreq(n, 1.0 / double(n));
  const auto ky = fft::rfftfreq(n, 1.0 / double(n));
  auto k2 = kx(all, newaxis) * kx(all, newaxis) + ky(newaxis, all) * ky(newaxis, all);

  auto uh = ember::where(k2 > 0.0, fft::rfft2(f) / ember::where(k2 > 0.0, k2, 1.0), std::complex<double>(0));
  auto solve = fft::irfft2(uh, {n, n});
  const auto p = ember::explain(solve);
  if (w.rank() == 0) std::cout << "spectral_poisson: " << n << " x " << n << " on " << w.size() << " ranks\n" << p << std::flush;
  ember::dndarray<double, 2> u = solve;

  const double err = ember::max(ember::abs(u - exact));
  const double top = ember::max(ember::abs(exact));
  if (w.rank() == 0)
    std::printf("max |u - exact| = %.3e (max |u| %.3f); result split along axis %d\n", err, top, u.split() ? *u.split() : -1);
  if (!(err < 1e-12)) {
    if (w.rank() == 0) std::printf("spectral_poisson: FAILED (error %.3e)\n", err);
    return 1;
  }
  if (w.rank() == 0) std::printf("spectral_poisson: ok\n");
  return 0;
}
