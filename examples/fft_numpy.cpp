// numpy.fft, ported line by line: NumPy runs the same program on the same .npy
// input and compares every result (to 1e-12 of the result's largest value:
// FFTW and NumPy's pocketfft add in different orders).
//
//   x = np.load(in)                               # split by rows over the ranks
//   f1 = np.fft.fft(x)                            # along the last axis: each rank its rows
//   f0 = np.fft.fft(x, axis=0)                    # along the split axis: a resplit, then the columns
//   r = np.fft.rfft(x, n=16, axis=1, norm="ortho") # zero-padded or cropped to 16
//   ir = np.fft.irfft(np.fft.rfft(x), n=x.shape[1])  # the round trip
//   i0 = np.fft.ifft(x + 2j, 7, axis=0, norm="forward")
//   f2 = np.fft.fft2(x); r2 = np.fft.rfft2(x); ir2 = np.fft.irfft2(r2, s=x.shape)
//   fn = np.fft.fftn(x, s=(8, 6)); in_ = np.fft.ifftn(fn)
//   h = np.fft.hfft(x * (1 - 0.5j)); ih = np.fft.ihfft(x, axis=0)
//   w = 1 + np.arange(n) / n                      # a window
//   p = np.abs(np.fft.rfft(x * w)) ** 2           # the window one pass into the transform, |.|^2 one after
//   fr = np.fft.fftfreq(m, 0.1); rf = np.fft.rfftfreq(n); sh = np.fft.fftshift(x); ish = np.fft.ifftshift(x)
//
//   mpirun -n 3 build/examples/fft_numpy in.npy out_dir
//   python3 -c "$(sed -n '/^\/\/ CHECK/,$p' examples/fft_numpy.cpp | cut -c4- | tail -n +2)" in.npy out_dir
#include <complex>
#include <cstdio>
#include <string>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  if (argc < 3) {
    if (ember::world().rank() == 0) std::fprintf(stderr, "usage: fft_numpy in.npy out_dir\n");
    return 2;
  }
  namespace em = ember;
  namespace fft = ember::fft;
  using cd = std::complex<double>;
  const std::string in = argv[1], out = argv[2];
  auto x = em::io::load_npy<double, 2>(in, {.split = 0});
  const auto [m, n] = x.shape();
  auto save = [&](const char* name, const auto& e) { em::io::save_npy(em::eval(e), out + "/" + name + ".npy"); };
  save("f1", fft::fft(x));
  save("f0", fft::fft(x, {}, 0));
  save("r", fft::rfft(x, {.n = 16, .axis = 1, .norm = fft::norm::ortho}));
  save("ir", fft::irfft(fft::rfft(x), n));
  save("i0", fft::ifft(x + cd(0, 2), 7, 0, fft::norm::forward));
  save("f2", fft::fft2(x));
  em::dndarray<cd, 2> r2 = fft::rfft2(x);
  save("r2", r2);
  save("ir2", fft::irfft2(r2, {m, n}));
  em::dndarray<cd, 2> fn = fft::fftn(x, {8, 6}, {0, 1});
  save("fn", fn);
  save("in_", fft::ifftn(fn));
  save("h", fft::hfft(x * cd(1, -0.5)));
  save("ih", fft::ihfft(x, {}, 0));
  auto w = em::eval(1.0 + em::arange<double>(n) / double(n));
  auto spectrum = fft::rfft(x * w);
  save("p", em::real(spectrum * em::conj(spectrum)));
  save("fr", fft::fftfreq(m, 0.1));
  save("rf", fft::rfftfreq(n));
  save("sh", fft::fftshift(x));
  save("ish", fft::ifftshift(x));
  if (em::world().rank() == 0) std::printf("fft_numpy: %lld x %lld on %d ranks written\n", (long long)m, (long long)n, em::world().size());
  return 0;
}
// CHECK (NumPy, run on the same input; exits non-zero on the first difference)
// import numpy as np, sys
// x = np.load(sys.argv[1]); d = sys.argv[2]
// m, n = x.shape
// def close(name, want, tol=1e-12):
//     g = np.load(f"{d}/{name}.npy")
//     assert g.shape == want.shape, f"{name}: shape {g.shape} != {want.shape}"
//     assert g.dtype == want.dtype, f"{name}: dtype {g.dtype} != {want.dtype}"
//     top = max(np.abs(want).max(initial=0), 1)
//     assert np.abs(g - want).max(initial=0) <= tol * top, f"{name}: max error {np.abs(g - want).max():.3g} of {top:.3g}"
// close("f1", np.fft.fft(x))
// close("f0", np.fft.fft(x, axis=0))
// close("r", np.fft.rfft(x, n=16, axis=1, norm="ortho"))
// close("ir", np.fft.irfft(np.fft.rfft(x), n=n))
// close("i0", np.fft.ifft(x + 2j, 7, axis=0, norm="forward"))
// close("f2", np.fft.fft2(x))
// r2 = np.fft.rfft2(x)
// close("r2", r2)
// close("ir2", np.fft.irfft2(r2, s=x.shape))
// fn = np.fft.fftn(x, s=(8, 6))
// close("fn", fn)
// close("in_", np.fft.ifftn(fn))
// close("h", np.fft.hfft(x * (1 - 0.5j)))
// close("ih", np.fft.ihfft(x, axis=0))
// w = 1 + np.arange(n) / n
// close("p", np.abs(np.fft.rfft(x * w)) ** 2)
// close("fr", np.fft.fftfreq(m, 0.1)); close("rf", np.fft.rfftfreq(n))
// close("sh", np.fft.fftshift(x), 0); close("ish", np.fft.ifftshift(x), 0)
