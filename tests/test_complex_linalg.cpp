// Complex linear algebra (issue 16) against Eigen's serial complex algorithms on
// the gathered matrices, at every split and 1-4 ranks, complex128 and complex64:
// solve, cholesky, inv, det, slogdet, solve_triangular (N, T, C), eigh (p?heevd),
// qr (TSQR and ScaLAPACK: R's diagonal real and nonnegative, Q^H Q = I), svd
// (TSQR, transposed TSQR, p?gesvd: S real, Vh = V^H), lstsq, pinv, norms and vdot.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>

#include "collective.hpp"

namespace {

using i64 = std::int64_t;
using c128 = std::complex<double>;
using c64 = std::complex<float>;
using cmat = Eigen::Matrix<c128, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using cvec = Eigen::Matrix<c128, Eigen::Dynamic, 1>;

cmat random_cmat(i64 m, i64 n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  cmat a(m, n);
  for (i64 i = 0; i < a.size(); ++i) a.data()[i] = c128(nd(g), nd(g));
  return a;
}
template <class T = c128>
ember::dndarray<T, 2> matrix(const cmat& m, ember::split_axis s) {
  std::vector<T> v(static_cast<std::size_t>(m.size()));
  for (i64 i = 0; i < m.size(); ++i) v[std::size_t(i)] = T(m.data()[i]);
  return ember::array(std::span<const T>(v), std::array<i64, 2>{i64(m.rows()), i64(m.cols())}, {.split = s});
}
template <class T>
cmat gathered_mat(const ember::dndarray<T, 2>& a) {
  auto g = test::gathered(a);
  cmat m(a.shape()[0], a.shape()[1]);
  for (i64 i = 0; i < m.size(); ++i) m.data()[i] = c128(g[std::size_t(i)]);
  return m;
}
template <class T>
cvec gathered_vec(const ember::dndarray<T, 1>& a) {
  auto g = test::gathered(a);
  cvec v(a.shape()[0]);
  for (i64 i = 0; i < v.size(); ++i) v(i) = c128(g[std::size_t(i)]);
  return v;
}
template <class M1, class M2>
double rel_err(const M1& got, const M2& want) {
  const double d = (got - want).norm(), w = want.norm();
  return w > 0 ? d / w : d;
}
std::vector<ember::split_axis> splits2() { return {ember::none, 0, 1}; }
cmat hermitian_pd(i64 n, std::uint64_t seed) {
  const cmat x = random_cmat(n, n, seed);
  return x * x.adjoint() + double(n) * cmat::Identity(n, n);
}
// R normalized as ember returns it: rows divided by the phase of the diagonal.
void normalize_qr(cmat& q, cmat& r) {
  for (i64 i = 0; i < r.rows(); ++i) {
    const c128 d = r(i, i) == 0.0 ? c128(1) : r(i, i) / std::abs(r(i, i));
    r.row(i) *= std::conj(d);
    q.col(i) *= d;
  }
}

}  // namespace

TEST_CASE("complex solve, cholesky, inv, det and slogdet against Eigen", "[linalg][complex]") {
  for (i64 n : {1, 6, 37}) {
    const cmat a = random_cmat(n, n, std::uint64_t(n) + 5);
    const cmat b = random_cmat(n, 3, 11);
    const cmat h = hermitian_pd(n, std::uint64_t(n) + 7);
    Eigen::PartialPivLU<Eigen::MatrixXcd> lu(a);
    const c128 det = lu.determinant();
    const Eigen::MatrixXcd lref = Eigen::LLT<Eigen::MatrixXcd>(h).matrixL();
    for (auto s : splits2()) {
      INFO("n " << n << " split " << ember::detail::axis_str(s));
      auto A = matrix(a, s);
      auto X = ember::linalg::solve(A, matrix(b, s));
      static_assert(std::is_same_v<decltype(X), ember::dndarray<c128, 2>>);
      CHECK(test::all_ranks(rel_err(gathered_mat(X), lu.solve(b)) < 1e-11));
      // a vector right side
      auto bv = ember::eval(matrix(b, s)(ember::all, 1) * 1.0);
      CHECK(test::all_ranks(rel_err(gathered_vec(ember::linalg::solve(A, bv)), cvec(lu.solve(cvec(b.col(1))))) < 1e-11));
      // L L^H = H, L lower with a real positive diagonal: unique, so equal to Eigen's
      auto L = ember::linalg::cholesky(matrix(h, s));
      CHECK(test::all_ranks(rel_err(gathered_mat(L), lref) < 1e-12));
      CHECK(test::all_ranks(L.split() == (ember::world().size() > 1 ? s : L.split())));
      auto Ai = ember::linalg::inv(A);
      CHECK(test::all_ranks(rel_err(gathered_mat(Ai), lu.inverse()) < 1e-10));
      const c128 d = ember::linalg::det(A);
      CHECK(test::all_ranks(std::abs(d - det) <= 1e-10 * std::abs(det)));
      const auto [sign, logdet] = ember::linalg::slogdet(A);
      static_assert(std::is_same_v<std::remove_const_t<decltype(logdet)>, double>);
      CHECK(test::all_ranks(std::abs(std::abs(sign) - 1.0) < 1e-14));
      CHECK(test::all_ranks(std::abs(sign - det / std::abs(det)) < 1e-10));
      CHECK(test::all_ranks(std::abs(logdet - std::log(std::abs(det))) <= 1e-10 * std::max(1.0, std::abs(logdet))));
      // complex64: the same answers to float32's accuracy
      auto Af = matrix<c64>(a, s);
      auto Xf = ember::linalg::solve(Af, matrix<c64>(b, s));
      static_assert(std::is_same_v<decltype(Xf), ember::dndarray<c64, 2>>);
      CHECK(test::all_ranks(rel_err(gathered_mat(Xf), lu.solve(b)) < 2e-4));
      const auto [sf, lf] = ember::linalg::slogdet(Af);
      static_assert(std::is_same_v<std::remove_const_t<decltype(lf)>, float>);
      CHECK(test::all_ranks(std::abs(double(lf) - std::log(std::abs(det))) <= 1e-5 * double(n) * 4.0));
    }
  }
  // exact: det of a diagonal complex matrix with a row swap
  for (auto s : splits2()) {
    cmat p = cmat::Zero(3, 3);
    p(0, 1) = c128(0, 2);
    p(1, 0) = c128(1, 0);
    p(2, 2) = c128(0, -1);
    const auto [sg, ld] = ember::linalg::slogdet(matrix(p, s));
    // det = -(2i)(1)(-i) = -2: sign -1 (from the swap and i * -i = 1), log 2
    CHECK(test::all_ranks(sg == c128(-1, 0) && ld == std::log(2.0)));
  }
  // failures on every rank alike
  cmat notpd = hermitian_pd(5, 3);
  notpd(2, 2) = -100.0;
  expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::cholesky(matrix(notpd, 0)); },
                                              {"positive definite"});
  cmat sing = random_cmat(6, 6, 4);
  sing.row(3).setZero();
  expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::inv(matrix(sing, 1)); }, {"inv", "singular"});
  CHECK(test::all_ranks(ember::linalg::det(matrix(sing, 0)) == c128(0)));
  expect_collective_throw<ember::shape_error>(
      [&] { (void)ember::linalg::solve(matrix(random_cmat(4, 5, 1), 0), matrix(random_cmat(4, 1, 2), 0)); },
      {"square", "(4, 5)"});
}

TEST_CASE("complex solve_triangular: N, T and C, upper and lower", "[linalg][complex]") {
  const i64 n = 23;
  cmat t = random_cmat(n, n, 9);
  t.diagonal().array() += c128(6, 1);
  const cmat up = t.triangularView<Eigen::Upper>(), lo = t.triangularView<Eigen::Lower>();
  const cmat b = random_cmat(n, 2, 10);
  for (auto s : splits2()) {
    INFO("split " << ember::detail::axis_str(s));
    auto T = matrix(t, s);
    auto B = matrix(b, s);
    CHECK(test::all_ranks(rel_err(gathered_mat(ember::linalg::solve_triangular(T, B)), cmat(up.inverse() * b)) < 1e-11));
    CHECK(test::all_ranks(
        rel_err(gathered_mat(ember::linalg::solve_triangular(T, B, {.lower = true})), cmat(lo.inverse() * b)) < 1e-11));
    CHECK(test::all_ranks(rel_err(gathered_mat(ember::linalg::solve_triangular(T, B, {.trans = true})),
                                  cmat(up.transpose().inverse() * b)) < 1e-11));
    CHECK(test::all_ranks(rel_err(gathered_mat(ember::linalg::solve_triangular(T, B, {.trans = true, .conjugate = true})),
                                  cmat(up.adjoint().inverse() * b)) < 1e-11));
  }
}

TEST_CASE("complex eigh: real ascending eigenvalues, unitary eigenvectors", "[linalg][complex]") {
  for (i64 n : {1, 8, 41}) {
    const cmat h = [&] {
      const cmat x = random_cmat(n, n, std::uint64_t(n) * 3);
      return cmat(x + x.adjoint());
    }();
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXcd> es(h);
    for (auto s : splits2()) {
      INFO("n " << n << " split " << ember::detail::axis_str(s));
      cmat lower_only = h;  // only the lower triangle is read (numpy's UPLO='L')
      for (i64 i = 0; i < n; ++i)
        for (i64 j = i + 1; j < n; ++j) lower_only(i, j) = c128(1e3, -7);
      auto [w, V] = ember::linalg::eigh(matrix(lower_only, s));
      static_assert(std::is_same_v<decltype(w), ember::dndarray<double, 1>>);
      const auto wv = test::gathered(w);
      double err = 0;
      for (i64 i = 0; i < n; ++i) err = std::max(err, std::abs(wv[std::size_t(i)] - es.eigenvalues()(i)));
      CHECK(test::all_ranks(err < 1e-11 * std::max(1.0, es.eigenvalues().cwiseAbs().maxCoeff())));
      CHECK(test::all_ranks(std::is_sorted(wv.begin(), wv.end())));
      const cmat v = gathered_mat(V);
      Eigen::VectorXd wd(n);
      for (i64 i = 0; i < n; ++i) wd(i) = wv[std::size_t(i)];
      CHECK(test::all_ranks((h * v - v * wd.asDiagonal()).norm() < 1e-10 * h.norm()));
      CHECK(test::all_ranks((v.adjoint() * v - cmat::Identity(n, n)).norm() < 1e-11 * double(n)));
    }
  }
  // complex64
  const cmat h = hermitian_pd(16, 5);
  auto [wf, Vf] = ember::linalg::eigh(matrix<c64>(h, 0));
  static_assert(std::is_same_v<decltype(wf), ember::dndarray<float, 1>>);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXcd> es(h);
  const auto wv = test::gathered(wf);
  double err = 0;
  for (i64 i = 0; i < 16; ++i) err = std::max(err, std::abs(double(wv[std::size_t(i)]) - es.eigenvalues()(i)));
  CHECK(test::all_ranks(err < 1e-4 * es.eigenvalues().maxCoeff()));
}

TEST_CASE("complex qr: TSQR and ScaLAPACK agree with Eigen's normalized Householder QR", "[linalg][complex]") {
  const int P = ember::world().size();
  struct qr_case {
    i64 m, n;
  };
  // 8P x 5 split 0 takes TSQR (every rank holds >= 5 rows); the others ScaLAPACK
  for (auto c : {qr_case{8 * i64(P), 5}, qr_case{30, 30}, qr_case{12, 20}, qr_case{3, 1}}) {
    const cmat a = random_cmat(c.m, c.n, std::uint64_t(c.m * 7 + c.n));
    const i64 k = std::min(c.m, c.n);
    Eigen::HouseholderQR<Eigen::MatrixXcd> hq(a);
    cmat qref = hq.householderQ() * Eigen::MatrixXcd::Identity(c.m, k);
    cmat rref = cmat(hq.matrixQR().topRows(k)).triangularView<Eigen::Upper>();
    normalize_qr(qref, rref);
    for (auto s : splits2()) {
      INFO("shape " << c.m << " x " << c.n << " split " << ember::detail::axis_str(s));
      auto [Q, R] = ember::linalg::qr(matrix(a, s));
      const cmat q = gathered_mat(Q), r = gathered_mat(R);
      CHECK(test::all_ranks(rel_err(q, qref) < 1e-11));
      CHECK(test::all_ranks(rel_err(r, rref) < 1e-11));
      bool real_diag = true, zeros_below = true;
      for (i64 i = 0; i < k; ++i) {
        real_diag = real_diag && r(i, i).imag() == 0.0 && r(i, i).real() >= 0.0;
        for (i64 j = 0; j < i; ++j) zeros_below = zeros_below && r(i, j) == c128(0);
      }
      CHECK(test::all_ranks(real_diag && zeros_below));
      CHECK(test::all_ranks((q.adjoint() * q - cmat::Identity(k, k)).norm() < 1e-12 * double(k)));
      auto [Qr, Rr] = ember::linalg::qr(matrix(a, s), {.mode = ember::linalg::qr_mode::r});
      CHECK(test::all_ranks(!Qr.valid() && rel_err(gathered_mat(Rr), rref) < 1e-11));
    }
    auto [Qf, Rf] = ember::linalg::qr(matrix<c64>(a, 0));
    CHECK(test::all_ranks(rel_err(gathered_mat(Rf), rref) < 1e-4));
  }
}

TEST_CASE("complex svd: TSQR, transposed TSQR and p?gesvd; S real, A = U S Vh", "[linalg][complex]") {
  const int P = ember::world().size();
  struct svd_case {
    i64 m, n;
    ember::split_axis s;
  };
  // tall-skinny split 0 and short-fat split 1 take the TSQR paths, the rest p?gesvd
  for (auto c : {svd_case{9 * i64(P), 4, 0}, svd_case{4, 9 * i64(P), 1}, svd_case{25, 18, ember::none},
                 svd_case{18, 25, 0}, svd_case{21, 21, 1}}) {
    INFO("shape " << c.m << " x " << c.n << " split " << ember::detail::axis_str(c.s));
    const cmat a = random_cmat(c.m, c.n, std::uint64_t(c.m + 13 * c.n));
    const i64 k = std::min(c.m, c.n);
    Eigen::JacobiSVD<Eigen::MatrixXcd> js(a);
    auto [U, S, Vh] = ember::linalg::svd(matrix(a, c.s));
    static_assert(std::is_same_v<decltype(S), ember::dndarray<double, 1>>);
    const auto sv = test::gathered(S);
    double err = 0;
    for (i64 i = 0; i < k; ++i) err = std::max(err, std::abs(sv[std::size_t(i)] - js.singularValues()(i)));
    CHECK(test::all_ranks(err < 1e-12 * js.singularValues()(0)));
    const cmat u = gathered_mat(U), vh = gathered_mat(Vh);
    Eigen::VectorXd sd(k);
    for (i64 i = 0; i < k; ++i) sd(i) = sv[std::size_t(i)];
    CHECK(test::all_ranks(rel_err(cmat(u * sd.asDiagonal() * vh), a) < 1e-12));
    CHECK(test::all_ranks((u.adjoint() * u - cmat::Identity(k, k)).norm() < 1e-12 * double(k)));
    CHECK(test::all_ranks((vh * vh.adjoint() - cmat::Identity(k, k)).norm() < 1e-12 * double(k)));
    auto So = ember::linalg::svd(matrix(a, c.s), {.compute_uv = false}).S;
    CHECK(test::all_ranks(test::gathered(So).size() == std::size_t(k)));
    // the matrix norms that take the SVD: 2 and nuclear, real
    const double n2 = ember::linalg::norm(matrix(a, c.s), 2.0);
    const double nn = ember::linalg::norm(matrix(a, c.s), ember::linalg::matrix_norm::nuc);
    CHECK(test::all_ranks(std::abs(n2 - js.singularValues()(0)) < 1e-12 * n2));
    CHECK(test::all_ranks(std::abs(nn - js.singularValues().sum()) < 1e-12 * nn));
    // complex64: float singular values
    auto Sf = ember::linalg::svd(matrix<c64>(a, c.s), {.compute_uv = false}).S;
    static_assert(std::is_same_v<decltype(Sf), ember::dndarray<float, 1>>);
    CHECK(test::all_ranks(std::abs(double(test::gathered(Sf)[0]) - js.singularValues()(0)) < 1e-5 * n2));
  }
}

TEST_CASE("complex lstsq and pinv against Eigen's complete orthogonal decomposition", "[linalg][complex]") {
  struct ls_case {
    i64 m, n;
    bool deficient;
  };
  for (auto c : {ls_case{50, 6, false}, ls_case{30, 9, true}, ls_case{7, 12, false}}) {
    cmat a = random_cmat(c.m, c.n, std::uint64_t(c.m * 5 + c.n));
    if (c.deficient) a.col(2) = a.col(0) + c128(0, 2) * a.col(1);
    const cmat b = random_cmat(c.m, 2, 77);
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXcd> cod(a);
    const cmat xref = cod.solve(b);
    const cmat pref = cod.pseudoInverse();
    for (auto s : splits2()) {
      INFO("shape " << c.m << " x " << c.n << (c.deficient ? " rank-deficient" : "") << " split "
                    << ember::detail::axis_str(s));
      auto [x, res, rank, sv] = ember::linalg::lstsq(matrix(a, s), matrix(b, s));
      static_assert(std::is_same_v<decltype(res), ember::dndarray<double, 1>>);
      CHECK(test::all_ranks(rank == (c.deficient ? c.n - 1 : std::min(c.m, c.n))));
      CHECK(test::all_ranks(rel_err(gathered_mat(x), xref) < 1e-10));
      if (!c.deficient && c.m > c.n) {
        const auto r = test::gathered(res);
        bool ok = r.size() == 2;
        for (i64 j = 0; ok && j < 2; ++j) {
          const double want = (b.col(j) - a * xref.col(j)).squaredNorm();
          ok = std::abs(r[std::size_t(j)] - want) < 1e-10 * want;
        }
        CHECK(test::all_ranks(ok));
      }
      CHECK(test::all_ranks(rel_err(gathered_mat(ember::linalg::pinv(matrix(a, s))), pref) < 1e-10));
    }
  }
}

TEST_CASE("complex vdot conjugates its first operand; norms of complex matrices", "[linalg][complex]") {
  const cmat a = random_cmat(6, 7, 1), b = random_cmat(6, 7, 2);
  c128 want = 0;
  for (i64 i = 0; i < a.size(); ++i) want += std::conj(a.data()[i]) * b.data()[i];
  for (auto s : splits2()) {
    const c128 got = ember::vdot(matrix(a, s), matrix(b, s));
    CHECK(test::all_ranks(std::abs(got - want) < 1e-12 * std::abs(want)));
    CHECK(test::all_ranks(std::abs(ember::linalg::norm(matrix(a, s)) - a.norm()) < 1e-12 * a.norm()));
  }
  // exact: vdot([1j], [1j]) = conj(1j) * 1j = 1
  const c128 one = ember::vdot(matrix(cmat::Constant(1, 1, c128(0, 1)), ember::none),
                               matrix(cmat::Constant(1, 1, c128(0, 1)), ember::none));
  CHECK(test::all_ranks(one == c128(1, 0)));
}

TEST_CASE("complex cov and corrcoef: the conjugate product, NumPy's clipping", "[stats][complex]") {
  const cmat m = random_cmat(4, 25, 21);  // 4 variables, 25 observations
  cmat x = m;
  for (i64 i = 0; i < 4; ++i) x.row(i).array() -= m.row(i).mean();
  const cmat want = x * x.adjoint() / 24.0;
  for (auto s : splits2()) {
    INFO("split " << ember::detail::axis_str(s));
    auto C = ember::cov(matrix(m, s));
    static_assert(std::is_same_v<decltype(C), ember::dndarray<c128, 2>>);
    const cmat c = gathered_mat(C);
    CHECK(test::all_ranks(rel_err(c, want) < 1e-13));
    // Hermitian with a real diagonal, as NumPy's
    CHECK(test::all_ranks((c - c.adjoint()).norm() < 1e-14 * c.norm()));
    // rowvar = false: the variables in columns
    const cmat ct = gathered_mat(ember::cov(matrix(cmat(m.transpose()), s), {.rowvar = false}));
    CHECK(test::all_ranks(rel_err(ct, want) < 1e-13));
    const cmat r = gathered_mat(ember::corrcoef(matrix(m, s)));
    bool ok = true;
    for (i64 i = 0; i < 4; ++i)
      for (i64 j = 0; j < 4; ++j) {
        const c128 e = want(i, j) / std::sqrt(want(i, i).real() * want(j, j).real());
        ok = ok && std::abs(r(i, j) - e) < 1e-13 && std::abs(r(i, j).real()) <= 1 && std::abs(r(i, j).imag()) <= 1;
      }
    CHECK(test::all_ranks(ok));
  }
}

extern "C" void zgemv_(const char*, const int*, const int*, const c128*, const c128*, const int*, const c128*,
                       const int*, const c128*, c128*, const int*, std::size_t);

TEST_CASE("zgemv_ as libember exports it (runtime/blas_interpose.cpp): N, T, C, strides, beta 0", "[linalg][complex]") {
  // ScaLAPACK's PBLAS binds to this zgemv_; on Debian 12's OpenBLAS 0.3.21 it is
  // computed by zgemm (OpenBLAS issue #4013), elsewhere forwarded. Either way: BLAS's answer.
  const int m = 7, n = 5, lda = 9;
  const cmat a = random_cmat(n, lda, 3);  // column-major lda x n: row j of `a` is column j
  const cmat xv = random_cmat(1, 3 * std::max(m, n), 4), yv = random_cmat(1, 3 * std::max(m, n), 5);
  const c128 alpha(0.5, -2), beta(-1, 0.25);
  bool ok = true;
  for (char tr : {'N', 'T', 'C'})
    for (int incx : {1, 2, -3})
      for (int incy : {1, -2})
        for (c128 b : {beta, c128(0)}) {
          const int lx = tr == 'N' ? n : m, ly = tr == 'N' ? m : n;
          std::vector<c128> x(xv.data(), xv.data() + xv.size()), y(yv.data(), yv.data() + yv.size());
          if (b == c128(0)) std::fill(y.begin(), y.end(), c128(std::nan(""), 0));  // must not be read
          std::vector<c128> want = y;
          auto xi = [&](int i) { return incx > 0 ? i * incx : (lx - 1 - i) * -incx; };
          auto yi = [&](int i) { return incy > 0 ? i * incy : (ly - 1 - i) * -incy; };
          for (int i = 0; i < ly; ++i) {
            c128 s = 0;
            for (int k = 0; k < lx; ++k) {
              const c128 aik = tr == 'N' ? a(k, i) : a(i, k);  // A(i, k) = a.data()[i + k * lda]
              s += (tr == 'C' ? std::conj(aik) : aik) * x[std::size_t(xi(k))];
            }
            want[std::size_t(yi(i))] = alpha * s + (b == c128(0) ? c128(0) : b * y[std::size_t(yi(i))]);
          }
          zgemv_(&tr, &m, &n, &alpha, a.data(), &lda, x.data(), &incx, &b, y.data(), &incy, 1);
          for (std::size_t i = 0; i < y.size(); ++i)  // (untouched entries: NaN in both when beta is 0)
            ok = ok && (std::abs(y[i] - want[i]) <= 1e-13 * (1 + std::abs(want[i])) ||
                        (std::isnan(y[i].real()) && std::isnan(want[i].real())));
        }
  CHECK(test::all_ranks(ok));
}
