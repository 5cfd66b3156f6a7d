// NumPy's scans, sorts and order statistics, ported line by line: NumPy runs the same program on the same
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
//   v = x.ravel(); s = np.sort(v); i = np.argsort(v, kind="stable")   # a sample sort of a split vector
//   sr = np.sort(x, axis=1); s0 = np.sort(x, axis=0)
//   med = np.median(x); p = np.percentile(x, [5, 50, 95])          # distributed selection, no sort
//   q = [np.quantile(x, 0.3, method=m) for m in methods]; mr = np.median(x, axis=1)
//   y = x.copy(); y[x > 1] = np.nan; nm = np.nanmedian(y); qn = np.median(y)
//   nc = np.nancumsum(y, axis=0); ncp = np.nancumprod(1 + y / 10, axis=1)   # NaN read as 0 / 1
//   p = np.partition(v, [k0, k1]); j = np.argpartition(v, k0)     # selection of the pivots, one all-to-all
//   t = np.argsort(-v, kind="stable")[:10]                          # topk: the 10 largest and where they are
//   h, e = np.histogram(x, 20, weights=x * x); hd, _ = np.histogram(x, 20, density=True)
//   b = np.bincount((x > 0).sum(axis=1), weights=x[:, 0])
//   w = np.cumsum(x * x - 0.5, axis=0)        # the operand computed as the scan reads it
//   ci = np.cumulative_sum(x, axis=0, include_initial=True)   # NumPy 2: a row of zeros first
//   hc = np.histogram(x * 2, 16, range=(-4, 4))[0]            # a plan step: fused pass + allreduce
//   hw = np.histogram(x[:, 0], 12, range=(-3, 3), weights=x[:, 1] ** 2)[0]     # weights computed as read
//   h2, xe, ye = np.histogram2d(x[:, 0], x[:, 1], [8, 5], range=[[-2, 2], [-1, 3]], density=True, weights=x[:, 2] + 4)
//   pr = np.percentile(x, 30, axis=0, method="midpoint"); pa = np.partition(x, 2, axis=0)
//   dg = np.digitize(x * 2, [-2, -1, 0, 0, 1, 2]) * 10 + np.digitize(x, [1, 0, -1], right=True)  # lookups, one pass
//   ii = np.isin(np.floor(x * 2), [-3, 0, 1, 4]) & (x > 0)
//   ss = np.searchsorted(np.sort(x[:, 0]), x + 0.25, side="right")   # a split sorted vector, gathered once
//
//   mpirun -n 3 build/examples/order_numpy in.npy out_dir
//   python3 -c "$(sed -n '/^\/\/ CHECK/,$p' examples/order_numpy.cpp | cut -c4- | tail -n +2)" in.npy out_dir
#include <cstdio>
#include <limits>
#include <vector>
#include <string>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  if (argc < 3) {
    if (ember::world().rank() == 0) std::fprintf(stderr, "usage: order_numpy in.npy out_dir\n");
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
  auto v = em::ravel(x);  // split 0 like x
  save("s", em::sort(v));
  save("i", em::argsort(v, -1, {.stable = true}));
  save("sr", em::sort(x, 1));
  save("s0", em::sort(x, 0));
  auto save_values = [&](const char* name, const std::vector<double>& vals) {
    save(name, em::array(std::span<const double>(vals), std::array<std::int64_t, 1>{std::int64_t(vals.size())}));
  };
  save_values("med", {em::median(x)});
  save_values("p", em::percentile(x, std::vector<double>{5.0, 50.0, 95.0}));
  using M = em::quantile_method;
  std::vector<double> qm;
  for (M m : {M::linear, M::lower, M::higher, M::nearest, M::midpoint}) qm.push_back(em::quantile(x, 0.3, {.method = m}));
  save_values("q", qm);
  save("mr", em::median(x, 1));
  em::dndarray<double, 2> y = em::where(x > 1.0, std::numeric_limits<double>::quiet_NaN(), x);
  save_values("nm", {em::nanmedian(y), em::median(y)});
  save("nc", em::nancumsum(y, 0));
  save("ncp", em::nancumprod(1.0 + y / 10.0, 1));
  const std::int64_t len = m * n, k0 = len / 3, k1 = (2 * len) / 3;
  save("pt", em::partition(v, {k0, k1}));
  save("j", em::argpartition(v, k0));
  auto [tv, ti] = em::topk(v, 10);
  save("tv", tv);
  save("ti", ti);
  auto [h, e] = em::histogram(x, 20, {}, x * x);
  save("h", h);
  save("e", e);
  save("hd", em::histogram<double>(x, 20, {.density = true}).hist);
  save("b", em::bincount(em::sum(x > 0.0, 1), x(em::all, 0)));
  save("w", em::cumsum(x * x - 0.5, 0));
  save("ci", em::cumulative_sum(x, 0, {.include_initial = true}));
  save("hc", em::histogram_counts(x * 2.0, 16, {-4.0, 4.0}));
  save("hw", em::histogram_counts(x(em::all, 0), 12, {-3.0, 3.0}, x(em::all, 1) * x(em::all, 1)));
  auto h2 = em::histogram2d(x(em::all, 0), x(em::all, 1), {8, 5}, {.range = {{{-2.0, 2.0}, {-1.0, 3.0}}}, .density = true},
                            x(em::all, 2) + 4.0);
  save("h2", h2.hist);
  save("ye", h2.yedges);
  save("pr", em::percentile(x, 30.0, 0, {.method = M::midpoint}));
  save("pa", em::partition(x, 2, 0));
  save("dg", em::digitize(x * 2.0, {-2.0, -1.0, 0.0, 0.0, 1.0, 2.0}) * 10 + em::digitize(x, {1.0, 0.0, -1.0}, true));
  const std::vector<double> wanted{-3.0, 0.0, 1.0, 4.0};
  save("ii", em::isin(em::floor(x * 2.0), em::array(wanted)) & (x > 0.0));
  save("ss", em::searchsorted(em::sort(x(em::all, 0)), x + 0.25, {.right = true}));
  // complex: lexicographic, ties in the real part decided by the imaginary part
  em::dndarray<std::complex<double>, 1> z = em::floor(x(em::all, 0)) + std::complex<double>(0.0, 1.0) * x(em::all, 1);
  save("zs", em::sort(z));
  save("zi", em::argsort(z));
  if (em::world().rank() == 0) {
    std::printf("order_numpy: x %lld x %lld on %d ranks; the plan of cumsum(x, 0):\n", static_cast<long long>(m),
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
//     assert np.array_equal(g, want, equal_nan=True), f"{name} differs: {g.ravel()[:4]} vs {want.ravel()[:4]}"
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
// v = x.ravel()
// same("s", np.sort(v)); same("i", np.argsort(v, kind="stable"))
// same("sr", np.sort(x, axis=1)); same("s0", np.sort(x, axis=0))
// same("med", np.array([np.median(x)]))
// same("p", np.percentile(x, [5, 50, 95]))
// same("q", np.array([np.quantile(x, 0.3, method=m) for m in ["linear", "lower", "higher", "nearest", "midpoint"]]))
// same("mr", np.median(x, axis=1))
// y = np.where(x > 1, np.nan, x)
// same("nm", np.array([np.nanmedian(y), np.median(y)]))
// close("nc", np.nancumsum(y, axis=0)); same("ncp", np.nancumprod(1 + y / 10, axis=1))
// k0, k1 = v.size // 3, (2 * v.size) // 3
// p = got("pt", v); srt = np.sort(v)
// assert np.array_equal(np.sort(p), srt) and p[k0] == srt[k0] and p[k1] == srt[k1], "p: not a partition"
// assert (p[:k0] <= p[k0]).all() and (p[k0:k1] >= p[k0]).all() and (p[k0:k1] <= p[k1]).all() and (p[k1:] >= p[k1]).all(), "p: order"
// j = got("j", np.argpartition(v, k0))
// assert np.array_equal(np.sort(j), np.arange(v.size)) and v[j[k0]] == srt[k0], "j: not an argpartition"
// assert (v[j[:k0]] <= srt[k0]).all() and (v[j[k0:]] >= srt[k0]).all(), "j: order"
// t = np.argsort(-v, kind="stable")[:10]
// same("ti", t); same("tv", v[t])
// h, e = np.histogram(x, 20, weights=x * x)
// close("h", h); same("e", e)
// close("hd", np.histogram(x, 20, density=True)[0])
// close("b", np.bincount((x > 0).sum(axis=1), weights=x[:, 0]))
// z = np.floor(x[:, 0]) + 1j * x[:, 1]
// same("zs", np.sort(z)); same("zi", np.argsort(z, kind="stable"))
// close("w", np.cumsum(x * x - 0.5, axis=0))
// ci = got("ci", np.zeros((m + 1, n))); assert (ci[0] == 0).all(), "ci: no initial row"
// assert np.allclose(ci[1:], np.cumsum(x, axis=0), rtol=1e-12, atol=1e-12), "ci differs"
// same("hc", np.histogram(x * 2, 16, range=(-4, 4))[0])
// close("hw", np.histogram(x[:, 0], 12, range=(-3, 3), weights=x[:, 1] ** 2)[0])
// h2, xe, ye = np.histogram2d(x[:, 0], x[:, 1], [8, 5], range=[[-2, 2], [-1, 3]], density=True, weights=x[:, 2] + 4)
// close("h2", h2); same("ye", ye)
// same("pr", np.percentile(x, 30, axis=0, method="midpoint"))
// pa = got("pa", x); sx = np.sort(x, axis=0)
// assert np.array_equal(np.sort(pa, axis=0), sx) and (pa[2] == sx[2]).all(), "pa: not a partition"
// assert (pa[:2] <= pa[2]).all() and (pa[3:] >= pa[2]).all(), "pa: order"
// same("dg", np.digitize(x * 2, [-2, -1, 0, 0, 1, 2]) * 10 + np.digitize(x, [1, 0, -1], right=True))
// same("ii", np.isin(np.floor(x * 2), [-3, 0, 1, 4]) & (x > 0))
// same("ss", np.searchsorted(np.sort(x[:, 0]), x + 0.25, side="right"))
