// The linear-algebra completions (issue 16) against Eigen's serial algorithms on
// the gathered matrices: inv, det, slogdet, solve_triangular, matrix_power,
// lstsq and pinv (full rank and rank-deficient), and NumPy's cross, vdot,
// inner, kron, at every split and 1-4 ranks; errors on every rank alike.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "collective.hpp"

namespace {

using i64 = std::int64_t;
using dmat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<double> normal_values(i64 n, std::uint64_t seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  for (auto& x : v) x = nd(g);
  return v;
}
template <class T = double>
ember::dndarray<T, 2> matrix(const dmat& m, ember::split_axis s) {
  std::vector<T> v(static_cast<std::size_t>(m.size()));
  for (i64 i = 0; i < m.size(); ++i) v[std::size_t(i)] = T(m.data()[i]);
  return ember::array(std::span<const T>(v), std::array<i64, 2>{i64(m.rows()), i64(m.cols())}, {.split = s});
}
dmat random_dmat(i64 m, i64 n, std::uint64_t seed) {
  auto v = normal_values(m * n, seed);
  return Eigen::Map<dmat>(v.data(), m, n);
}
template <class T>
dmat gathered_mat(const ember::dndarray<T, 2>& a) {
  auto g = test::gathered(a);
  dmat m(a.shape()[0], a.shape()[1]);
  for (i64 i = 0; i < m.size(); ++i) m.data()[i] = double(g[std::size_t(i)]);
  return m;
}
double rel_err(const dmat& got, const dmat& want) {
  const double d = (got - want).norm(), w = want.norm();
  return w > 0 ? d / w : d;
}
std::vector<ember::split_axis> splits2() { return {ember::none, 0, 1}; }
// The same bits on every rank (compared on the test's own communicator).
bool same_on_all_ranks(double v) {
  double lo = v, hi = v;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, judge());
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, judge());
  return lo == hi;
}

}  // namespace

TEST_CASE("inv, det, slogdet against Eigen's LU at every split", "[linalg][lu]") {
  for (i64 n : {1, 5, 37, 70}) {
    const dmat a = random_dmat(n, n, std::uint64_t(n));
    Eigen::PartialPivLU<Eigen::MatrixXd> lu(a);
    const double det = lu.determinant();
    for (auto s : splits2()) {
      INFO("n " << n << " split " << ember::detail::axis_str(s));
      auto A = matrix(a, s);
      auto Ai = ember::linalg::inv(A);
      CHECK(test::all_ranks(Ai.shape() == std::array<i64, 2>{n, n}));
      CHECK(test::all_ranks(Ai.split() == (W().size() > 1 ? s : Ai.split())));
      CHECK(test::all_ranks(rel_err(gathered_mat(Ai), lu.inverse()) < 1e-11));
      // A @ inv(A) = I
      ember::dndarray<double, 2> I = ember::matmul(A, Ai);
      CHECK(test::all_ranks((gathered_mat(I) - dmat::Identity(n, n)).norm() < 1e-10 * double(n)));
      const double d = ember::linalg::det(A);
      CHECK(test::all_ranks(std::abs(d - det) <= 1e-10 * std::abs(det)));
      const auto [sign, logdet] = ember::linalg::slogdet(A);
      CHECK(test::all_ranks(sign == (det < 0 ? -1.0 : 1.0)));
      CHECK(test::all_ranks(std::abs(logdet - std::log(std::abs(det))) <= 1e-10 * std::max(1.0, std::abs(logdet))));
      // the same bits on every rank
      CHECK(test::all_ranks(same_on_all_ranks(logdet)));
      // an expression operand, evaluated once; float32
      CHECK(test::all_ranks(std::abs(ember::linalg::det(2.0 * A) - std::pow(2.0, double(n)) * det) <=
                            1e-9 * std::pow(2.0, double(n)) * std::abs(det)));
      auto Af = matrix<float>(a, s);  // float32: log|det| to float32's accuracy over n pivots
      const auto [sf, lf] = ember::linalg::slogdet(Af);
      CHECK(test::all_ranks(double(sf) == (det < 0 ? -1.0 : 1.0)));
      CHECK(test::all_ranks(std::abs(double(lf) - std::log(std::abs(det))) <= 1e-5 * double(n) * 4.0));
    }
  }
  // exact values: a permutation matrix (det -1), an integer matrix (float64, NumPy's rule)
  for (auto s : splits2()) {
    dmat p = dmat::Zero(4, 4);
    p(0, 1) = p(1, 0) = p(2, 3) = p(3, 2) = 1;
    p(2, 3) = 1;
    const auto [sg, ld] = ember::linalg::slogdet(matrix(p, s));
    CHECK(test::all_ranks(sg == 1.0 && ld == 0.0));  // two swaps
    dmat q = dmat::Identity(3, 3);
    q.row(0).swap(q.row(2));
    CHECK(test::all_ranks(ember::linalg::det(matrix(q, s)) == -1.0));
    auto Ai = matrix<std::int64_t>(dmat{{2, 0}, {0, 4}}, s);
    auto inv = ember::linalg::inv(Ai);
    static_assert(std::is_same_v<decltype(inv), ember::dndarray<double, 2>>);
    CHECK(test::all_ranks(test::gathered(inv) == std::vector<double>{0.5, 0, 0, 0.25}));
    // NumPy computes det as sign * exp(log 2 + log 4): 7.999999999999998, not 8
    CHECK(test::all_ranks(ember::linalg::det(Ai) == std::exp(std::log(2.0) + std::log(4.0))));
  }
  // singular: det 0, slogdet (0, -inf), inv a value_error on every rank
  for (auto s : splits2()) {
    dmat z = random_dmat(6, 6, 3);
    z.row(4) = z.row(1);
    z.row(4).setZero();
    auto Z = matrix(z, s);
    CHECK(test::all_ranks(ember::linalg::det(Z) == 0.0));
    const auto [sg, ld] = ember::linalg::slogdet(Z);
    CHECK(test::all_ranks(sg == 0.0 && ld == -std::numeric_limits<double>::infinity()));
    expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::inv(Z); }, {"inv", "singular", "(6, 6)"});
    expect_collective_throw<ember::shape_error>([&] { (void)ember::linalg::inv(matrix(random_dmat(3, 4, 1), s)); },
                                                {"square", "(3, 4)"});
  }
  // 0 x 0: det 1 (NumPy)
  CHECK(test::all_ranks(ember::linalg::det(ember::zeros<double>({0, 0})) == 1.0));
}

TEST_CASE("solve_triangular: upper, lower, transposed, unit diagonal; vectors and matrices", "[linalg][lu]") {
  const i64 n = 29;
  dmat t = random_dmat(n, n, 7);
  t.diagonal().array() += 6.0;  // well conditioned
  const dmat up = t.triangularView<Eigen::Upper>(), lo = t.triangularView<Eigen::Lower>();
  const dmat b = random_dmat(n, 4, 8);
  dmat tt = t;  // garbage in the triangle that must not be read
  for (auto s : splits2())
    for (auto sb : splits2()) {
      INFO("split " << ember::detail::axis_str(s) << " b split " << ember::detail::axis_str(sb));
      auto T = matrix(tt, s);
      auto B = matrix(b, sb);
      auto X = ember::linalg::solve_triangular(T, B);
      CHECK(test::all_ranks(X.split() == ember::dndarray<double, 2>(B).split()));
      CHECK(test::all_ranks(rel_err(gathered_mat(X), up.triangularView<Eigen::Upper>().solve(b)) < 1e-12));
      auto XL = ember::linalg::solve_triangular(T, B, {.lower = true});
      CHECK(test::all_ranks(rel_err(gathered_mat(XL), lo.triangularView<Eigen::Lower>().solve(b)) < 1e-12));
      auto XT = ember::linalg::solve_triangular(T, B, {.trans = true});
      CHECK(test::all_ranks(rel_err(gathered_mat(XT), dmat(up.transpose()).triangularView<Eigen::Lower>().solve(b)) <
                            1e-12));
      auto XU = ember::linalg::solve_triangular(T, B, {.lower = true, .unit_diagonal = true});
      CHECK(test::all_ranks(rel_err(gathered_mat(XU), lo.triangularView<Eigen::UnitLower>().solve(b)) < 1e-12));
      // a vector right side (and an expression for it)
      const Eigen::VectorXd bv = b.col(0);
      auto bcol = ember::eval(B(ember::all, 0) * 1.0);
      auto xv = ember::linalg::solve_triangular(T, bcol);
      static_assert(std::is_same_v<decltype(xv), ember::dndarray<double, 1>>);
      const Eigen::VectorXd want = up.triangularView<Eigen::Upper>().solve(bv);
      const auto got = test::gathered(xv);
      double err = 0;
      for (i64 i = 0; i < n; ++i) err = std::max(err, std::abs(got[std::size_t(i)] - want(i)));
      CHECK(test::all_ranks(err < 1e-11 * want.lpNorm<Eigen::Infinity>()));
    }
  dmat sing = up;
  sing(3, 3) = 0;
  expect_collective_throw<ember::value_error>(
      [&] { (void)ember::linalg::solve_triangular(matrix(sing, 0), matrix(b, 0)); }, {"solve_triangular", "singular", "A[3, 3]", "(29, 29)"});
  expect_collective_throw<ember::shape_error>(
      [&] { (void)ember::linalg::solve_triangular(matrix(up, 0), matrix(random_dmat(5, 2, 1), 0)); }, {"(29, 29)", "(5, 2)"});
}

TEST_CASE("matrix_power: NumPy's products for n in -3..9, integers exact", "[linalg][lu]") {
  const i64 n = 12;
  dmat a = random_dmat(n, n, 4) / 3.0;
  a.diagonal().array() += 1.0;
  for (auto s : splits2()) {
    auto A = matrix(a, s);
    for (int p = -3; p <= 9; ++p) {
      INFO("power " << p << " split " << ember::detail::axis_str(s));
      dmat want = dmat::Identity(n, n);
      const dmat base = p < 0 ? dmat(a.inverse()) : a;
      for (int k = 0; k < std::abs(p); ++k) want = want * base;
      auto P = ember::linalg::matrix_power(A, p);
      CHECK(test::all_ranks(rel_err(gathered_mat(P), want) < 1e-11));
    }
    // integer matrices: exact, and stay int64
    dmat ia = dmat::Zero(3, 3);
    ia << 1, 1, 0, 1, 0, 0, 0, 0, 2;  // Fibonacci in the top-left block
    auto I = matrix<std::int64_t>(ia, s);
    auto F = ember::linalg::matrix_power(I, 30);
    static_assert(std::is_same_v<decltype(F), ember::dndarray<std::int64_t, 2>>);
    const auto f = test::gathered(F);
    CHECK(test::all_ranks(f[0] == 1346269 && f[1] == 832040 && f[4] == 514229 && f[8] == (i64(1) << 30)));
    CHECK(test::all_ranks(test::gathered(ember::linalg::matrix_power(I, 0)) ==
                          std::vector<i64>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
    expect_collective_throw<ember::type_error>([&] { (void)ember::linalg::matrix_power(I, -1); }, {"negative power", "int64"});
  }
}

TEST_CASE("lstsq and pinv: full rank, rank-deficient (minimum norm), wide, against Eigen's SVD", "[linalg][lstsq]") {
  struct shape_case {
    i64 m, n;
    bool deficient;
  };
  for (auto c : {shape_case{60, 5, false}, shape_case{40, 12, true}, shape_case{9, 14, false}, shape_case{13, 13, true}}) {
    dmat a = random_dmat(c.m, c.n, std::uint64_t(c.m * 31 + c.n));
    if (c.deficient) a.col(2) = a.col(0) + 2.0 * a.col(1);  // rank n - 1
    const dmat b = random_dmat(c.m, 3, 99);
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(a, Eigen::ComputeThinU | Eigen::ComputeThinV);
    const double eps = std::numeric_limits<double>::epsilon();
    svd.setThreshold(eps * double(std::max(c.m, c.n)));
    const dmat want_x = svd.solve(b);
    const i64 want_rank = svd.rank();
    // pinv: NumPy's cutoff 1e-15 * max(s)
    Eigen::VectorXd si = svd.singularValues();
    // (a rank-deficient A's zero singular value is ~1e-16 * max(s): at NumPy's
    // default cutoff 1e-15 it lands either side by rounding, so cut at 1e-10)
    const double rcond = c.deficient ? 1e-10 : 1e-15;
    for (i64 i = 0; i < si.size(); ++i) si(i) = si(i) > rcond * si(0) ? 1.0 / si(i) : 0.0;
    const dmat want_pinv = svd.matrixV() * si.asDiagonal() * svd.matrixU().transpose();
    for (auto s : splits2())
      for (auto sb : splits2()) {
        INFO("(" << c.m << ", " << c.n << ") split " << ember::detail::axis_str(s) << " b split "
                 << ember::detail::axis_str(sb));
        auto A = matrix(a, s);
        auto B = matrix(b, sb);
        auto [x, res, rank, sv] = ember::linalg::lstsq(A, B);
        CHECK(test::all_ranks(rank == want_rank));
        CHECK(test::all_ranks(x.shape() == std::array<i64, 2>{c.n, 3}));
        CHECK(test::all_ranks(rel_err(gathered_mat(x), want_x) < 1e-10));
        const auto s_got = test::gathered(sv);
        bool s_ok = i64(s_got.size()) == std::min(c.m, c.n);
        for (std::size_t i = 0; s_ok && i < s_got.size(); ++i)
          s_ok = std::abs(s_got[i] - svd.singularValues()(i64(i))) <= 1e-12 * svd.singularValues()(0);
        CHECK(test::all_ranks(s_ok));
        if (!c.deficient && c.m > c.n) {
          const dmat r = a * want_x - b;
          const auto rg = test::gathered(res);
          bool ok = rg.size() == 3;
          for (int j = 0; ok && j < 3; ++j) ok = std::abs(rg[std::size_t(j)] - r.col(j).squaredNorm()) <= 1e-10 * r.col(j).squaredNorm();
          CHECK(test::all_ranks(ok));
        } else {
          CHECK(test::all_ranks(res.shape()[0] == 0));
        }
        // a vector b: residuals of shape (1,)
        auto bv = ember::eval(B(ember::all, 1) * 1.0);
        auto [xv, rv, rk, sv2] = ember::linalg::lstsq(A, bv);
        const auto xg = test::gathered(xv);
        double err = 0;
        for (i64 i = 0; i < c.n; ++i) err = std::max(err, std::abs(xg[std::size_t(i)] - want_x(i, 1)));
        CHECK(test::all_ranks(err <= 1e-10 * std::max(1.0, want_x.col(1).lpNorm<Eigen::Infinity>())));
        CHECK(test::all_ranks(rv.shape()[0] == (!c.deficient && c.m > c.n ? 1 : 0)));
        auto Ap = ember::linalg::pinv(A, rcond);
        CHECK(test::all_ranks(Ap.shape() == std::array<i64, 2>{c.n, c.m}));
        CHECK(test::all_ranks(rel_err(gathered_mat(Ap), want_pinv) < 1e-10));
      }
  }
  expect_collective_throw<ember::shape_error>(
      [&] { (void)ember::linalg::lstsq(matrix(random_dmat(6, 3, 1), 0), matrix(random_dmat(5, 1, 2), 0)); },
      {"lstsq", "(6, 3)", "(5, 1)"});
}

TEST_CASE("cross, vdot, inner, kron: NumPy's definitions at every split", "[linalg][products]") {
  const i64 n = 11;
  const dmat a = random_dmat(n, 3, 1), b = random_dmat(n, 3, 2), a2 = random_dmat(n, 2, 3);
  for (auto s : splits2()) {
    INFO("split " << ember::detail::axis_str(s));
    auto A = matrix(a, s);
    auto B = matrix(b, ember::none);
    auto C = ember::cross(A, B);
    dmat want(n, 3);
    for (i64 i = 0; i < n; ++i) {
      Eigen::Vector3d x = a.row(i).transpose(), y = b.row(i).transpose();
      want.row(i) = x.cross(y).transpose();
    }
    CHECK(test::all_ranks(gathered_mat(C) == want || rel_err(gathered_mat(C), want) < 1e-15));
    // along axis 0 of the transposes, and 2-vectors against 3-vectors
    auto Ct = ember::cross(ember::eval(ember::transpose(A)), ember::eval(ember::transpose(B)), 0);
    CHECK(test::all_ranks(rel_err(gathered_mat(Ct).transpose(), want) < 1e-15));
    auto C23 = ember::cross(matrix(a2, s), B);
    dmat w23(n, 3);
    for (i64 i = 0; i < n; ++i) {
      Eigen::Vector3d x(a2(i, 0), a2(i, 1), 0.0), y = b.row(i).transpose();
      w23.row(i) = x.cross(y).transpose();
    }
    CHECK(test::all_ranks(rel_err(gathered_mat(C23), w23) < 1e-15));
    expect_collective_throw<ember::value_error>([&] { (void)ember::cross(matrix(random_dmat(n, 4, 1), s), B); },
                                                {"cross", "dimension must be 2 or 3"});
    // vdot: same shapes and a reshaped pairing; inner
    double vd = 0;
    for (i64 i = 0; i < a.size(); ++i) vd += a.data()[i] * b.data()[i];
    CHECK(test::all_ranks(std::abs(ember::vdot(A, B) - vd) < 1e-12 * std::abs(vd) + 1e-14));
    auto Br = ember::reshape(B, {3, n});
    CHECK(test::all_ranks(std::abs(ember::vdot(A, Br) - vd) < 1e-12 * std::abs(vd) + 1e-14));
    auto In = ember::inner(A, B);  // a @ b.T
    CHECK(test::all_ranks(rel_err(gathered_mat(In), a * b.transpose()) < 1e-14));
    auto v = ember::eval(A(ember::all, 0) * 1.0);
    CHECK(test::all_ranks(std::abs(ember::inner(v, v) - a.col(0).squaredNorm()) < 1e-12 * a.col(0).squaredNorm()));
    // kron of 2-D arrays against the block definition
    const dmat k1 = random_dmat(4, 3, 5), k2 = random_dmat(2, 5, 6);
    auto K = ember::kron(matrix(k1, s), matrix(k2, ember::none));
    dmat wk(8, 15);
    for (i64 i = 0; i < 4; ++i)
      for (i64 j = 0; j < 3; ++j) wk.block(i * 2, j * 5, 2, 5) = k1(i, j) * k2;
    CHECK(test::all_ranks(gathered_mat(K) == wk));
  }
  // kron of vectors, integer exact
  auto x = ember::array(std::vector<std::int64_t>{1, 2, 3});
  auto y = ember::array(std::vector<std::int64_t>{10, 100});
  CHECK(test::all_ranks(test::gathered(ember::kron(x, y)) == std::vector<std::int64_t>{10, 100, 20, 200, 30, 300}));
}

TEST_CASE("the factorizations take expressions (evaluated once), equal to the same on the array", "[linalg][expr]") {
  // Compared to rounding, not bit for bit: ScaLAPACK's p?gesvd at 3 ranks gives
  // results that differ in the last bit from one call to the next on the same
  // matrix (measured: 2.7e-15 in S), so equality would test BLACS, not ember.
  const i64 n = 17;
  dmat a = random_dmat(n, n, 21);
  const dmat spd = a.transpose() * a + double(n) * dmat::Identity(n, n);
  const auto close = [](const std::vector<double>& x, const std::vector<double>& y) {
    if (x.size() != y.size()) return false;
    double scale = 0, diff = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      scale = std::max(scale, std::abs(y[i]));
      diff = std::max(diff, std::abs(x[i] - y[i]));
    }
    return diff <= 1e-12 * scale;
  };
  for (auto s : splits2()) {
    INFO("split " << ember::detail::axis_str(s));
    auto A = matrix(a, s);
    auto S = matrix(spd, s);
    auto B = matrix(random_dmat(n, 2, 22), s);
    // the array each overload evaluates (an expression's layout is the planner's choice)
    const auto A2 = ember::eval(2.0 * A), B0 = ember::eval(B + 0.0), S1 = ember::eval(S * 1.0), S0 = ember::eval(S + 0.0);
    CHECK(test::all_ranks(close(test::gathered(ember::linalg::svd(2.0 * A).S), test::gathered(ember::linalg::svd(A2).S))));
    CHECK(test::all_ranks(close(test::gathered(ember::linalg::qr(2.0 * A).R), test::gathered(ember::linalg::qr(A2).R))));
    CHECK(test::all_ranks(close(test::gathered(ember::linalg::solve(2.0 * A, B + 0.0)),
                                test::gathered(ember::linalg::solve(A2, B0)))));
    CHECK(test::all_ranks(
        close(test::gathered(ember::linalg::cholesky(S * 1.0)), test::gathered(ember::linalg::cholesky(S1)))));
    CHECK(test::all_ranks(close(test::gathered(ember::linalg::eigh(S + 0.0).eigenvalues),
                                test::gathered(ember::linalg::eigh(S0).eigenvalues))));
    // and the expression's values are used: svd(2A) is twice svd(A)
    const auto s1 = test::gathered(ember::linalg::svd(2.0 * A).S), s2 = test::gathered(ember::linalg::svd(A).S);
    std::vector<double> twice(s2.size());
    for (std::size_t i = 0; i < s2.size(); ++i) twice[i] = 2.0 * s2[i];
    CHECK(test::all_ranks(close(s1, twice)));
  }
}
