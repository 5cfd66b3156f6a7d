// Dynamic mode decomposition (exact DMD, Tu et al. 2014) of snapshots of a linear
// system with known eigenvalues, the spatial axis split over the ranks.
//
// The system: a small real 6 x 6 operator with eigenvalues 0.97 e^{+-0.3i},
// 0.9 e^{+-1.1i}, 0.8 and 0.5 (made non-normal by a random similarity transform),
// embedded in R^D by a random orthonormal basis Phi: x_{k+1} = M x_k with
// M = Phi M6 Phi^T. Snapshots X = [x_0 .. x_{T-1}], X' = [x_1 .. x_T] (D x T, rows
// split: each rank holds a slab of space, every snapshot).
//
// DMD: X = U S V^T truncated to r (U split like X's rows, V replicated), the
// reduced operator Atilde = U^T X' V S^{-1} (r x r: a local product and one
// allreduce), its eigenvalues (Eigen's EigenSolver on the small replicated
// matrix) are the DMD eigenvalues, the modes Phi_dmd = X' V S^{-1} W (split like
// X). Self-checking: exits 1 unless the eigenvalues match the known ones and the
// modes are eigenvectors of M.
//
//   mpirun -n 4 build/examples/dmd [D T]      (defaults 4000 40)
#include <algorithm>
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

// Eigen's EigenSolver trips GCC 12's -Wmaybe-uninitialized inside Eigen itself
// (a known false positive in TriangularMatrixVector.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Dense>
#pragma GCC diagnostic pop
#include <ember.hpp>

namespace {

using i64 = std::int64_t;
using cplx = std::complex<double>;
constexpr i64 r = 6;

// D x r orthonormal (column-major), the same on every rank.
std::vector<double> orthonormal(i64 D, i64 k, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  std::vector<double> q(std::size_t(D * k));
  for (auto& v : q) v = nd(g);
  std::vector<double> tau(static_cast<std::size_t>(k));
  ember::lapack::geqrf<double>(D, k, q.data(), D, tau.data());
  ember::lapack::orgqr<double>(D, k, k, q.data(), D, tau.data());
  return q;
}

// Matches each computed eigenvalue to the nearest unused known one; the worst distance.
double eigen_distance(std::vector<cplx> got, std::vector<cplx> want) {
  double worst = 0;
  for (const auto& g : got) {
    auto it = std::min_element(want.begin(), want.end(),
                               [&](const cplx& a, const cplx& b) { return std::abs(a - g) < std::abs(b - g); });
    worst = std::max(worst, std::abs(*it - g));
    want.erase(it);
  }
  return worst;
}

struct dmd_out {
  std::vector<cplx> eig;
  double mode_residual = 0;  // max_j ||M phi_j - lambda_j phi_j|| / ||phi_j||
};

// Exact DMD from the rank-r SVD (U split 0 like X, S, V replicated).
dmd_out dmd(const ember::dndarray<double, 2>& U, const ember::dndarray<double, 1>& S, const ember::dndarray<double, 2>& V,
            const ember::dndarray<double, 2>& Xp, const std::vector<double>& Phi, const Eigen::MatrixXd& M6) {
  const auto& w = ember::world();
  const i64 ln = Xp.lshape()[0], T = Xp.shape()[1], k = S.shape()[0];
  // U^T X' (k x T): local product of the row blocks, summed over the ranks.
  // Row-major blocks: U_i (ln x k), X'_i (ln x T); column-major (U^T X')^T = X'^T U.
  std::vector<double> UtXp(std::size_t(k * T), 0.0);  // row-major k x T = column-major T x k
  ember::lapack::gemm<double>(false, true, T, k, ln, 1.0, Xp.ldata(), T, U.ldata(), k, 0.0, UtXp.data(), T);
  w.allreduce(UtXp.data(), i64(UtXp.size()), ember::reduce_op::sum);
  // Atilde = (U^T X') V S^{-1}, small and replicated
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> A1(UtXp.data(), k, T);
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> Vm(V.ldata(), T, k);
  Eigen::VectorXd sinv(k);
  for (i64 j = 0; j < k; ++j) sinv[j] = 1.0 / S.ldata()[j];
  const Eigen::MatrixXd VSinv = Vm * sinv.asDiagonal();
  const Eigen::MatrixXd At = A1 * VSinv;
  Eigen::EigenSolver<Eigen::MatrixXd> es(At);
  dmd_out out;
  for (i64 j = 0; j < k; ++j) out.eig.push_back(es.eigenvalues()[j]);
  // Modes phi_j = X' V S^{-1} w_j (split like X); M phi_j = Phi M6 Phi^T phi_j, so
  // the residual needs Phi^T phi_j (r values: local product + allreduce).
  const Eigen::MatrixXcd G = VSinv.cast<cplx>() * es.eigenvectors();  // T x k
  const i64 off = Xp.loffset(), D = Xp.shape()[0];
  std::vector<cplx> modes(std::size_t(ln * k), 0.0);
  for (i64 i = 0; i < ln; ++i)
    for (i64 j = 0; j < k; ++j) {
      cplx s = 0;
      for (i64 t = 0; t < T; ++t) s += Xp.ldata()[i * T + t] * G(t, j);
      modes[std::size_t(i * k + j)] = s;
    }
  // c_j = Phi^T phi_j (r x k complex: a local product and one allreduce), then
  // the residual M phi_j - lambda_j phi_j = Phi (M6 c_j) - lambda_j phi_j row by
  // row, its squared norm and phi_j's summed in a second allreduce.
  std::vector<double> cr(std::size_t(2 * r * k), 0.0);
  for (i64 i = 0; i < ln; ++i)
    for (i64 j = 0; j < k; ++j) {
      const cplx m = modes[std::size_t(i * k + j)];
      for (i64 a = 0; a < r; ++a) {
        const double p = Phi[std::size_t(off + i + a * D)];
        cr[std::size_t(2 * (a * k + j))] += p * m.real();
        cr[std::size_t(2 * (a * k + j) + 1)] += p * m.imag();
      }
    }
  w.allreduce(cr.data(), i64(cr.size()), ember::reduce_op::sum);
  Eigen::MatrixXcd Mc(r, k);  // column j: M6 c_j
  for (i64 j = 0; j < k; ++j) {
    Eigen::VectorXcd c(r);
    for (i64 a = 0; a < r; ++a) c[a] = cplx(cr[std::size_t(2 * (a * k + j))], cr[std::size_t(2 * (a * k + j) + 1)]);
    Mc.col(j) = M6.cast<cplx>() * c;
  }
  std::vector<double> nr(std::size_t(2 * k), 0.0);  // [||residual_j||^2 | ||phi_j||^2]
  for (i64 i = 0; i < ln; ++i)
    for (i64 j = 0; j < k; ++j) {
      cplx mphi = 0;
      for (i64 a = 0; a < r; ++a) mphi += Phi[std::size_t(off + i + a * D)] * Mc(a, j);
      const cplx phi = modes[std::size_t(i * k + j)];
      nr[std::size_t(j)] += std::norm(mphi - out.eig[std::size_t(j)] * phi);
      nr[std::size_t(k + j)] += std::norm(phi);
    }
  w.allreduce(nr.data(), i64(nr.size()), ember::reduce_op::sum);
  for (i64 j = 0; j < k; ++j)
    out.mode_residual = std::max(out.mode_residual, std::sqrt(nr[std::size_t(j)] / nr[std::size_t(k + j)]));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();
  const i64 D = argc > 1 ? std::stoll(argv[1]) : 4000;
  const i64 T = argc > 2 ? std::stoll(argv[2]) : 40;

  // the small system: real block form of the known eigenvalues, then a similarity
  const std::vector<cplx> known = {std::polar(0.97, 0.3), std::polar(0.97, -0.3), std::polar(0.9, 1.1),
                                   std::polar(0.9, -1.1), cplx(0.8), cplx(0.5)};
  Eigen::MatrixXd L = Eigen::MatrixXd::Zero(r, r);
  for (int b = 0; b < 2; ++b) {
    const cplx l = known[std::size_t(2 * b)];
    L(2 * b, 2 * b) = l.real();
    L(2 * b, 2 * b + 1) = -l.imag();
    L(2 * b + 1, 2 * b) = l.imag();
    L(2 * b + 1, 2 * b + 1) = l.real();
  }
  L(4, 4) = 0.8;
  L(5, 5) = 0.5;
  std::mt19937_64 g(5);
  std::uniform_real_distribution<double> ud(-0.3, 0.3);
  Eigen::MatrixXd Sim = Eigen::MatrixXd::Identity(r, r);
  for (i64 a = 0; a < r; ++a)
    for (i64 b = 0; b < r; ++b) Sim(a, b) += ud(g);
  const Eigen::MatrixXd M6 = Sim * L * Sim.inverse();
  const auto Phi = orthonormal(D, r, 11);  // column-major D x r

  // Trajectory in the small space (replicated, tiny), lifted to this rank's rows.
  Eigen::MatrixXd C(r, T + 1);
  C.col(0) = Eigen::VectorXd::Ones(r);
  for (i64 t = 0; t < T; ++t) C.col(t + 1) = M6 * C.col(t);
  const auto rows = ember::layout::balanced_extents(D, w.size());
  i64 off = 0;
  for (int p = 0; p < w.rank(); ++p) off += rows[std::size_t(p)];
  const i64 ln = rows[std::size_t(w.rank())];
  Eigen::Tensor<double, 2, Eigen::RowMajor> xl(ln, T), xpl(ln, T);
  for (i64 i = 0; i < ln; ++i)
    for (i64 t = 0; t <= T; ++t) {
      double v = 0;
      for (i64 a = 0; a < r; ++a) v += Phi[std::size_t(off + i + a * D)] * C(a, t);
      if (t < T) xl(i, t) = v;
      if (t > 0) xpl(i, t - 1) = v;
    }
  // each rank's slab joined into the global D x T arrays (no communication)
  auto X = ember::array(xl, {.is_split = 0});
  auto Xp = ember::array(xpl, {.is_split = 0});

  if (w.rank() == 0)
    std::printf("DMD of %lld snapshots in R^%lld over %d ranks (space split), rank %lld\n"
                "  known eigenvalues:", (long long)T, (long long)D, w.size(), (long long)r);
  if (w.rank() == 0) {
    for (const auto& l : known) std::printf(" %.4f%+.4fi", l.real(), l.imag());
    std::printf("\n");
  }
  bool ok = true;
  auto report = [&](const char* how, const dmd_out& o) {
    const double dist = eigen_distance(o.eig, known);
    const bool good = dist < 1e-8 && o.mode_residual < 1e-8;
    ok = ok && good;
    if (w.rank() == 0) {
      std::printf("  %-10s eigenvalues:", how);
      auto e = o.eig;
      std::sort(e.begin(), e.end(), [](cplx a, cplx b) { return std::abs(a) != std::abs(b) ? std::abs(a) > std::abs(b) : a.imag() > b.imag(); });
      for (const auto& l : e) std::printf(" %.4f%+.4fi", l.real(), l.imag());
      std::printf("\n             max |lambda - known| = %.2e, max mode residual ||M phi - lambda phi|| / ||phi|| = %.2e  %s\n",
                  dist, o.mode_residual, good ? "ok" : "WRONG");
    }
  };
  {
    const auto h = ember::linalg::hsvd_rank(X, r);
    report("hsvd_rank", dmd(h.U, h.S, h.V, Xp, Phi, M6));
  }
  {
    auto s = ember::linalg::svd(X);
    // truncate the exact SVD to rank r (columns 0..r-1) on the local blocks
    const i64 kk = s.S.shape()[0];
    // U with X's row slabs, whatever layout svd chose (the exchange engine moves it)
    auto U = s.U.moved_to(X.layout().with_shape({D, kk}, 0));
    ember::dndarray<double, 2> V = ember::eval(s.Vh.T(), {.split = ember::none});  // V = Vh^T
    Eigen::Tensor<double, 2, Eigen::RowMajor> ul(ln, r), vl(T, r);
    for (i64 i = 0; i < ln; ++i)
      for (i64 j = 0; j < r; ++j) ul(i, j) = U.ldata()[i * kk + j];
    for (i64 i = 0; i < T; ++i)
      for (i64 j = 0; j < r; ++j) vl(i, j) = V.ldata()[i * kk + j];
    std::vector<double> sv(s.S.ldata(), s.S.ldata() + r);  // S is replicated
    auto Ur = ember::array(ul, {.is_split = 0});
    auto Vr = ember::array(vl, {});
    auto Sr = ember::array(sv, {});
    report("svd", dmd(Ur, Sr, Vr, Xp, Phi, M6));
  }
  if (!ok) {
    if (w.rank() == 0) std::fprintf(stderr, "dmd: FAILED: the DMD eigenvalues or modes do not match the known system\n");
    return 1;
  }
  if (w.rank() == 0) std::printf("dmd: ok\n");
  return 0;
}
