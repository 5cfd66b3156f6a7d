// numpy.linalg ported line by line: inverse, determinant, triangular solves,
// least squares, the pseudo-inverse, matrix powers, and NumPy's cross, vdot,
// inner and kron, plus a selection read as an operand; then the same for a
// complex128 matrix (Hermitian inverse, slogdet, cholesky, eigh, solve, qr, svd,
// lstsq, pinv, vdot, cov through ScaLAPACK's z routines). NumPy runs the same
// program on the same .npy input and compares: bit for bit where the operations
// are the same (cross, kron, the selection's count), to 1e-9 of the result's
// norm where the factorizations differ in rounding (ScaLAPACK's blocked LU and
// SVD against LAPACK's). The check is the Python below.
//
//   x = np.load(in)                               # m x n, split by rows over the ranks
//   S = x.T @ x + n * np.eye(n)                   # symmetric positive definite, n x n
//   np.linalg.inv(S), np.linalg.det(S / 4), np.linalg.slogdet(S)
//   np.linalg.solve(np.triu(S), x.T)              # scipy's solve_triangular(S, x.T)
//   b = x @ np.arange(n) + x[:, 0] ** 2
//   np.linalg.lstsq(x, b, rcond=None), np.linalg.pinv(x), np.linalg.matrix_power(S / np.linalg.norm(S), 5)
//   np.cross(x[:, :3], x[:, 3:6]), np.vdot(x, 2 * x), np.inner(x, x), np.kron(x[:3, :2], x[1:3, :3])
//   x[x > 0].sum()
//   z = x * (1 - 0.5j) + 1j * x ** 2; H = z.conj().T @ z + n * np.eye(n)   # complex128, Hermitian
//   np.linalg.inv(H), slogdet(H), cholesky(H), eigvalsh(H), solve(H, z.conj().T), qr(z), svd(z), lstsq, pinv(z), np.cov(z)
//
//   mpirun -n 3 build/examples/linalg_numpy in.npy out_dir
//   python3 -c "$(sed -n '/^\/\/ CHECK/,$p' examples/linalg_numpy.cpp | cut -c4- | tail -n +2)" in.npy out_dir
#include <cstdio>
#include <string>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  if (argc < 3) {
    if (ember::world().rank() == 0) std::fprintf(stderr, "usage: linalg_numpy in.npy out_dir\n");
    return 2;
  }
  const std::string in = argv[1], out = argv[2];
  namespace em = ember;
  namespace la = ember::linalg;
  using em::slice;
  auto x = em::io::load_npy<double, 2>(in, {.split = 0});
  const auto [m, n] = x.shape();
  auto save = [&](const char* name, const auto& e) { em::io::save_npy(em::eval(e), out + "/" + name + ".npy"); };
  auto save_scalar = [&](const char* name, double v) { save(name, em::full<double>({1}, v)); };

  em::dndarray<double, 2> S = em::matmul(em::transpose(x), x) + double(n) * em::eye<double>(n);
  save("inv", la::inv(S));
  save_scalar("det", la::det(S / 4.0));  // an expression: evaluated once
  const auto [sign, logdet] = la::slogdet(S);
  save_scalar("sign", sign);
  save_scalar("logdet", logdet);
  save("solve_triangular", la::solve_triangular(em::triu(S), em::eval(em::transpose(x))));
  em::dndarray<double, 1> b = em::matmul(x, em::arange<double>(n)) + em::square(x(em::all, 0));
  auto [sol, residuals, rank, sv] = la::lstsq(x, b);
  save("lstsq_x", sol);
  save("lstsq_res", residuals);
  save_scalar("lstsq_rank", double(rank));
  save("lstsq_s", sv);
  save("pinv", la::pinv(x));
  save("matrix_power", la::matrix_power(S / la::norm(S), 5));
  save("cross", em::cross(x(em::all, slice(0, 3)), x(em::all, slice(3, 6))));
  save_scalar("vdot", em::vdot(x, 2.0 * x));
  save("inner", em::inner(x, x));
  save("kron", em::kron(x(slice(0, 3), slice(0, 2)), x(slice(1, 3), slice(0, 3))));
  save_scalar("sel_sum", em::sum(x(x > 0.0)));
  save_scalar("sel_count", double(x(x > 0.0).read().shape()[0]));
  // stacks of matrices: matmul over the leading (batch) axis, broadcast like NumPy's
  em::dndarray<double, 3> X3 = em::reshape(em::arange<double>(1.0, 4.0), {3, 1, 1}) * em::expand_dims(x, 0);
  X3.resplit_(0);  // split on the batch axis: the products below send nothing
  save("batched", em::matmul(X3, em::swapaxes(X3, 1, 2)));  // (3, m, m)
  save("batched_shared", em::matmul(X3, S));  // one (n, n) matrix for every batch
  save("batched_vec", em::matmul(em::arange<double>(m), X3));  // (3, n)

  // complex128: the same functions through ScaLAPACK's z routines
  using c128 = em::complex128;
  using namespace std::complex_literals;
  auto save_complex = [&](const char* name, c128 v) { save(name, em::full<c128>({1}, v)); };
  em::dndarray<c128, 2> z = x * (1.0 - 0.5i) + 1.0i * em::square(x);
  em::dndarray<c128, 2> zh = em::conj(em::transpose(z));
  em::dndarray<c128, 2> H = em::matmul(zh, z) + double(n) * em::eye<double>(n);
  save("z_inv", la::inv(H));
  const auto [zsign, zlogdet] = la::slogdet(H);
  save_complex("z_sign", zsign);
  save_scalar("z_logdet", zlogdet);
  save_complex("z_det", la::det(H / 4.0));
  save("z_cholesky", la::cholesky(H));
  save("z_eigvals", la::eigh(H).eigenvalues);
  save("z_solve", la::solve(H, zh));
  const auto [zq, zr] = la::qr(z);
  save("z_q", zq);
  save("z_r", zr);
  save("z_s", la::svd(z, {.compute_uv = false}).S);
  em::dndarray<c128, 1> bz = em::matmul(z, em::arange<double>(n) * (1.0 + 1.0i));
  save("z_lstsq_x", la::lstsq(z, bz).x);
  save("z_pinv", la::pinv(z));
  save_complex("z_vdot", em::vdot(z, 2.0i * z));
  save("z_cov", em::cov(z, {.rowvar = false}));
  if (em::world().rank() == 0)
    std::printf("linalg_numpy: x %lld x %lld on %d ranks, rank %lld, logdet %.6f; results saved\n",
                static_cast<long long>(m), static_cast<long long>(n), em::world().size(), static_cast<long long>(rank),
                logdet);
  return 0;
}

// CHECK (NumPy, run on the same input; exits non-zero on the first difference)
// import numpy as np, sys
// x = np.load(sys.argv[1]); d = sys.argv[2]
// m, n = x.shape
// def got(name, want):
//     want = np.asarray(want)
//     want = want.astype(np.complex128 if np.iscomplexobj(want) else np.float64)
//     g = np.load(f"{d}/{name}.npy")
//     if want.ndim == 0: want = want.reshape(1)
//     assert g.shape == want.shape, f"{name}: shape {g.shape} != {want.shape}"
//     return g, want
// def same(name, want):
//     g, want = got(name, want)
//     assert (g == want).all(), f"{name} differs: {g.ravel()[:3]} vs {want.ravel()[:3]}"
// def close(name, want, tol=1e-9):
//     g, want = got(name, want)
//     err = np.linalg.norm(g - want) / max(np.linalg.norm(want), 1e-300)
//     assert err <= tol, f"{name}: relative error {err:.3g}"
// S = x.T @ x + n * np.eye(n)
// close("inv", np.linalg.inv(S))
// close("det", np.linalg.det(S / 4))
// s, ld = np.linalg.slogdet(S)
// same("sign", s); close("logdet", ld, 1e-12)
// close("solve_triangular", np.linalg.solve(np.triu(S), x.T))
// b = x @ np.arange(n, dtype=np.float64) + x[:, 0] ** 2
// lx, lres, lrank, ls = np.linalg.lstsq(x, b, rcond=None)
// close("lstsq_x", lx, 1e-8); same("lstsq_rank", lrank); close("lstsq_s", ls, 1e-12)
// if lres.size: close("lstsq_res", lres, 1e-8)
// else: got("lstsq_res", lres)
// close("pinv", np.linalg.pinv(x), 1e-8)
// close("matrix_power", np.linalg.matrix_power(S / np.linalg.norm(S), 5))
// same("cross", np.cross(x[:, :3], x[:, 3:6]))
// close("vdot", np.vdot(x, 2 * x), 1e-13)
// close("inner", np.inner(x, x), 1e-13)
// same("kron", np.kron(x[:3, :2], x[1:3, :3]))
// close("sel_sum", x[x > 0].sum(), 1e-13); same("sel_count", (x > 0).sum())
// X3 = np.arange(1.0, 4.0).reshape(3, 1, 1) * x[None]
// close("batched", X3 @ X3.swapaxes(1, 2), 1e-13)
// close("batched_shared", X3 @ S, 1e-13)
// close("batched_vec", np.arange(m, dtype=np.float64) @ X3, 1e-13)
// z = x * (1 - 0.5j) + 1j * x ** 2
// zh = z.conj().T
// H = zh @ z + n * np.eye(n)
// close("z_inv", np.linalg.inv(H))
// zs, zld = np.linalg.slogdet(H)
// close("z_sign", zs, 1e-12); close("z_logdet", zld, 1e-12)
// close("z_det", np.linalg.det(H / 4))
// close("z_cholesky", np.linalg.cholesky(H), 1e-12)
// close("z_eigvals", np.linalg.eigvalsh(H), 1e-12)
// close("z_solve", np.linalg.solve(H, zh))
// q, r = np.linalg.qr(z)   # NumPy leaves R's diagonal as LAPACK does: ember's is real and >= 0
// ph = np.diag(r) / np.abs(np.diag(r))
// close("z_q", q * ph, 1e-9); close("z_r", r / ph[:, None], 1e-9)
// close("z_s", np.linalg.svd(z, compute_uv=False), 1e-12)
// bz = z @ (np.arange(n) * (1 + 1j))
// close("z_lstsq_x", np.linalg.lstsq(z, bz, rcond=None)[0], 1e-8)
// close("z_pinv", np.linalg.pinv(z), 1e-8)
// close("z_vdot", np.vdot(z, 2j * z), 1e-13)
// close("z_cov", np.cov(z, rowvar=False), 1e-12)
