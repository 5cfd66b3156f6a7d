// NumPy's scans, ported line by line: NumPy runs the same program on the same
// .npy input and compares every result (bit for bit where the order of the
// additions is NumPy's; to 1e-12 where a split axis adds each rank's carry first).
//
//   x = np.load(in)                          # split by rows over the ranks
//   c0 = np.cumsum(x, axis=0)                # along the split axis: one MPI_Exscan of a row
//   c1 = np.cumsum(x, axis=1)                # along a local axis: no communication
//   cf = np.cumsum(x)                        # axis=None: the flattened array
//   mean = np.cumsum(x, axis=0) / np.arange(1, m + 1)[:, None]   # a running mean
//   g = np.cumprod(1 + x / 10, axis=0)       # growth factors
//   hi = np.maximum.accumulate(x, axis=0); lo = np.minimum.accumulate(x, axis=1)
//   k = np.cumsum(x > 0, axis=0)             # bool counts in int64
//
//   mpirun -n 3 build/examples/scans_numpy in.npy out_dir
//   python3 -c "$(sed -n '/^\/\/ CHECK/,$p' examples/scans_numpy.cpp | cut -c4- | tail -n +2)" in.npy out_dir
#include <cstdio>
#include <string>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  if (argc < 3) {
    if (ember::world().rank() == 0) std::fprintf(stderr, "usage: scans_numpy in.npy out_dir\n");
    return 2;
  }
  namespace em = ember;
  const std::string in = argv[1], out = argv[2];
  auto x = em::io::load_npy<double, 2>(in, {.split = 0});
  const auto [m, n] = x.shape();
  auto save = [&](const char* name, const auto& e) { em::io::save_npy(em::eval(e), out + "/" + name + ".npy"); };
  save("c0", em::cumsum(x, 0));
  save("c1", em::cumsum(x, 1));
  save("cf", em::cumsum(x));
  save("mean", em::cumsum(x, 0) / em::expand_dims(em::arange<double>(1.0, double(m + 1)), 1));
  save("g", em::cumprod(1.0 + x / 10.0, 0));
  save("hi", em::cummax(x, 0));
  save("lo", em::cummin(x, -1));
  save("k", em::cumsum(x > 0.0, 0));
  if (em::world().rank() == 0) {
    std::printf("scans_numpy: x %lld x %lld on %d ranks; the plan of cumsum(x, 0):\n", static_cast<long long>(m),
                static_cast<long long>(n), em::world().size());
    std::printf("%s", em::explain(em::cumsum(x, 0)).to_string().c_str());
  }
  return 0;
}

// CHECK (NumPy, run on the same input; exits non-zero on the first difference)
// import numpy as np, sys
// x = np.load(sys.argv[1]); d = sys.argv[2]
// m, n = x.shape
// def got(name, want):
//     g = np.load(f"{d}/{name}.npy")
//     assert g.shape == want.shape, f"{name}: shape {g.shape} != {want.shape}"
//     assert g.dtype == want.dtype, f"{name}: dtype {g.dtype} != {want.dtype}"
//     return g
// def same(name, want):
//     g = got(name, want)
//     assert (g == want).all(), f"{name} differs: {g.ravel()[:4]} vs {want.ravel()[:4]}"
// def close(name, want, tol=1e-12):
//     g = got(name, want)
//     assert np.allclose(g, want, rtol=tol, atol=tol), f"{name}: max error {np.abs(g - want).max():.3g}"
// close("c0", np.cumsum(x, axis=0))
// same("c1", np.cumsum(x, axis=1))
// close("cf", np.cumsum(x))
// close("mean", np.cumsum(x, axis=0) / np.arange(1, m + 1)[:, None])
// close("g", np.cumprod(1 + x / 10, axis=0))
// same("hi", np.maximum.accumulate(x, axis=0))
// same("lo", np.minimum.accumulate(x, axis=1))
// same("k", np.cumsum(x > 0, axis=0))
