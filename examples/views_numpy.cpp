// NumPy's basic indexing and shape functions, ported line by line: the NumPy
// program at the end of this file runs the same operations on the same .npy
// input (tests/run_examples_numpy.sh, at 1-4 ranks). Every result is saved and
// NumPy compares it with its own, bit for bit (the same operations in the same
// order on every element).
//
//   x = np.load(in)                         # split by rows over the ranks
//   a = x[2:-1:3, ::-2]
//   s = x[1:-1, 1:-1] + 0.25 * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] - 4 * x[1:-1, 1:-1])
//   c = x[::2, 1] + 1
//   y = x.copy(); y[0, :] = 0; y[1:-1, 3] = x[1:-1, 2] * 2; y[-1] = x[0]
//   r = x[::-2, 1:4] * 2                    # backwards along the split axis
//   m = x.reshape(x.shape[1], -1)           # no common refinement: through the flat array
//   v = np.ravel(x.T)                        # a transposed view, flattened
//   j = np.concatenate([x, x[::-1]], axis=1)
//   k = np.stack([x, 2 * x], axis=2)
//   p = np.pad(x, ((1, 2), (0, 3)), mode="reflect")
//   l = np.tril(x, -1); d = np.diagonal(x, 1); e = np.repeat(x, 2, axis=0); t = np.tile(x, (2, 1))
//
//   mpirun -n 3 build/examples/views_numpy in.npy out_dir
//   (tests/run_examples_numpy.sh runs it and the NumPy check at the end of this file)
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

  ember::dndarray<double, 2> r = x(slice(none, none, -2), slice(1, 4)) * 2.0;
  auto m = ember::reshape(x, {x.shape()[1], -1});
  auto v = ember::ravel(ember::transpose(x, {1, 0}));
  auto j = ember::concatenate({x, ember::eval(x(slice(none, none, -1)))}, 1);
  auto k = ember::stack({x, ember::eval(2.0 * x)}, 2);
  auto p = ember::pad(x, {{1, 2}, {0, 3}}, {.mode = ember::pad_mode::reflect});
  auto l = ember::tril(x, -1);
  auto d = ember::diagonal(x, 1);
  auto e = ember::repeat(x, 2, 0);
  auto t = ember::tile(x, {2, 1});

  ember::io::save_npy(a, out + "/a.npy");
  ember::io::save_npy(r, out + "/r.npy");
  ember::io::save_npy(m, out + "/m.npy");
  ember::io::save_npy(v, out + "/v.npy");
  ember::io::save_npy(j, out + "/j.npy");
  ember::io::save_npy(k, out + "/k.npy");
  ember::io::save_npy(p, out + "/p.npy");
  ember::io::save_npy(l, out + "/l.npy");
  ember::io::save_npy(d, out + "/d.npy");
  ember::io::save_npy(e, out + "/e.npy");
  ember::io::save_npy(t, out + "/t.npy");
  ember::io::save_npy(s, out + "/s.npy");
  ember::io::save_npy(c, out + "/c.npy");
  ember::io::save_npy(y, out + "/y.npy");
  if (ember::world().rank() == 0)
    std::printf("views_numpy: x %lld x %lld on %d ranks: a, s, c, y saved\n", static_cast<long long>(x.shape()[0]),
                static_cast<long long>(x.shape()[1]), ember::world().size());
  return 0;
}

// CHECK (NumPy, run on the same input; exits non-zero on the first difference)
// import numpy as np, sys
// x = np.load(sys.argv[1]); d = sys.argv[2]
// def same(name, want):
//     got = np.load(f"{d}/{name}.npy")
//     assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
//     assert got.tobytes() == np.ascontiguousarray(want).tobytes(), f"{name} differs"
// same("a", x[2:-1:3, ::-2])
// same("s", x[1:-1, 1:-1] + 0.25 * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] - 4 * x[1:-1, 1:-1]))
// same("c", x[::2, 1] + 1)
// y = x.copy(); y[0, :] = 0; y[1:-1, 3] = x[1:-1, 2] * 2; y[-1] = x[0]
// same("y", y)
// same("r", x[::-2, 1:4] * 2)
// same("m", x.reshape(x.shape[1], -1))
// same("v", np.ravel(x.T))
// same("j", np.concatenate([x, x[::-1]], axis=1))
// same("k", np.stack([x, 2 * x], axis=2))
// same("p", np.pad(x, ((1, 2), (0, 3)), mode="reflect"))
// same("l", np.tril(x, -1))
// same("d", np.diagonal(x, 1))
// same("e", np.repeat(x, 2, axis=0))
// same("t", np.tile(x, (2, 1)))
// print("numpy check ok")
