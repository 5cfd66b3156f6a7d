// NumPy's advanced indexing (masks, nonzero, argwhere, take, put), ported line
// by line: NumPy runs the same program on the same .npy input and compares every
// result bit for bit, at any rank count (the check is the Python below).
//
//   x = np.load(in)                          # split by rows over the ranks
//   s = x[x > 0]
//   y = x.copy(); y[y < -1] = 0.0
//   z = x.copy(); z[x > 1] = x[x > 1] * 2
//   r0, r1 = np.nonzero(x > 1)
//   w = np.argwhere(x < -1)
//   t = np.take(x, [3, -1, 0, 3], axis=1)
//   g = x[[-1, 0, 2, 2]]
//   f = np.take(x, [5, -3, 0, 7])
//   p = x.copy(); np.put(p, [0, 5, -1, 6], [10.0, 20.0])
//
//   mpirun -n 3 build/examples/select_numpy in.npy out_dir
//   python3 -c "$(sed -n '/^\/\/ CHECK/,$p' examples/select_numpy.cpp | cut -c4- | tail -n +2)" in.npy out_dir
#include <cstdio>
#include <string>
#include <vector>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  if (argc < 3) {
    if (ember::world().rank() == 0) std::fprintf(stderr, "usage: select_numpy in.npy out_dir\n");
    return 2;
  }
  const std::string in = argv[1], out = argv[2];
  auto x = ember::io::load_npy<double, 2>(in, {.split = 0});
  auto index_array = [](std::vector<std::int64_t> v) {
    return ember::array(std::span<const std::int64_t>(v), std::array<std::int64_t, 1>{std::int64_t(v.size())},
                        {.split = 0});
  };

  ember::dndarray<double, 1> s = x(x > 0.0);
  auto y = x.copy();
  y(y < -1.0) = 0.0;
  auto z = x.copy();
  z(x > 1.0) = ember::masked(x, x > 1.0) * 2.0;
  auto [r0, r1] = ember::nonzero(x > 1.0);
  auto w = ember::argwhere(x < -1.0);
  auto t = ember::take(x, index_array({3, -1, 0, 3}), 1);
  ember::dndarray<double, 2> g = x(index_array({-1, 0, 2, 2}));
  auto f = ember::take(x, index_array({5, -3, 0, 7}));
  auto p = x.copy();
  ember::put(p, index_array({0, 5, -1, 6}), ember::array(std::vector<double>{10.0, 20.0}, {.split = ember::none}));

  ember::io::save_npy(s, out + "/s.npy");
  ember::io::save_npy(y, out + "/y.npy");
  ember::io::save_npy(z, out + "/z.npy");
  ember::io::save_npy(r0, out + "/r0.npy");
  ember::io::save_npy(r1, out + "/r1.npy");
  ember::io::save_npy(w, out + "/w.npy");
  ember::io::save_npy(t, out + "/t.npy");
  ember::io::save_npy(g, out + "/g.npy");
  ember::io::save_npy(f, out + "/f.npy");
  ember::io::save_npy(p, out + "/p.npy");
  if (ember::world().rank() == 0)
    std::printf("select_numpy: x %lld x %lld on %d ranks: %lld positive, %lld above 1; results saved\n",
                static_cast<long long>(x.shape()[0]), static_cast<long long>(x.shape()[1]), ember::world().size(),
                static_cast<long long>(s.shape()[0]), static_cast<long long>(r0.shape()[0]));
  return 0;
}

// CHECK (NumPy, run on the same input; exits non-zero on the first difference)
// import numpy as np, sys
// x = np.load(sys.argv[1]); d = sys.argv[2]
// def same(name, want):
//     got = np.load(f"{d}/{name}.npy")
//     assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
//     assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != {want.dtype}"
//     assert got.tobytes() == np.ascontiguousarray(want).tobytes(), f"{name} differs"
// same("s", x[x > 0])
// y = x.copy(); y[y < -1] = 0.0; same("y", y)
// z = x.copy(); z[x > 1] = x[x > 1] * 2; same("z", z)
// r0, r1 = np.nonzero(x > 1); same("r0", r0.astype(np.int64)); same("r1", r1.astype(np.int64))
// same("w", np.argwhere(x < -1).astype(np.int64))
// same("t", np.take(x, [3, -1, 0, 3], axis=1))
// same("g", x[[-1, 0, 2, 2]])
// same("f", np.take(x, [5, -3, 0, 7]))
// p = x.copy(); np.put(p, [0, 5, -1, 6], [10.0, 20.0]); same("p", p)
// print("numpy check ok")
