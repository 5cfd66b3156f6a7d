// NumPy's basic indexing, ported line by line: the program NumPy runs in
// tests/run_examples_views.sh, on the same .npy input, at any rank count. Every
// result is saved and NumPy compares it with its own, bit for bit (the same
// operations in the same order on every element).
//
//   x = np.load(in)                         # split by rows over the ranks
//   a = x[2:-1:3, ::-2]
//   s = x[1:-1, 1:-1] + 0.25 * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] - 4 * x[1:-1, 1:-1])
//   c = x[::2, 1] + 1
//   y = x.copy(); y[0, :] = 0; y[1:-1, 3] = x[1:-1, 2] * 2; y[-1] = x[0]
//
//   mpirun -n 3 build/examples/views_numpy in.npy out_dir
#include <cstdio>
#include <string>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  if (argc < 3) {
    if (ember::world().rank() == 0) std::fprintf(stderr, "usage: views_numpy in.npy out_dir\n");
    return 2;
  }
  const std::string in = argv[1], out = argv[2];
  using ember::all;
  using ember::none;
  using ember::slice;
  auto x = ember::io::load_npy<double, 2>(in, {.split = 0});

  ember::dndarray<double, 2> a = x(slice(2, -1, 3), slice(none, none, -2));
  ember::dndarray<double, 2> s =
      x(slice(1, -1), slice(1, -1)) + 0.25 * (x(slice(none, -2), slice(1, -1)) + x(slice(2, none), slice(1, -1)) +
                                              x(slice(1, -1), slice(none, -2)) + x(slice(1, -1), slice(2, none)) -
                                              4.0 * x(slice(1, -1), slice(1, -1)));
  ember::dndarray<double, 1> c = x(slice(none, none, 2), 1) + 1.0;
  auto y = x.copy();
  y(0, all) = 0.0;
  y(slice(1, -1), 3) = x(slice(1, -1), 2) * 2.0;
  y(-1) = x(0);

  ember::io::save_npy(a, out + "/a.npy");
  ember::io::save_npy(s, out + "/s.npy");
  ember::io::save_npy(c, out + "/c.npy");
  ember::io::save_npy(y, out + "/y.npy");
  if (ember::world().rank() == 0)
    std::printf("views_numpy: x %lld x %lld on %d ranks: a, s, c, y saved\n", static_cast<long long>(x.shape()[0]),
                static_cast<long long>(x.shape()[1]), ember::world().size());
  return 0;
}
