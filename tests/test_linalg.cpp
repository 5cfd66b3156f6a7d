// Distributed linear algebra against serial LAPACK on the gathered matrices:
// the ScaLAPACK bridge (block-cyclic layouts through the exchange engine), QR,
// SVD, truncated SVDs, solvers; errors on every rank.
#include <cmath>
#include <limits>
#include <random>

#include "common.hpp"

namespace {

template <class T>
ember::dndarray<T, 2> random_matrix(std::int64_t m, std::int64_t n, ember::split_axis split, std::uint64_t seed) {
  std::vector<T> g(std::size_t(m * n));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  for (auto& x : g) x = T(nd(rng));
  return ember::array(std::span<const T>(g), std::array<std::int64_t, 2>{m, n}, {.split = split});
}


template <class T>
ember::dndarray<T, 1> random_vector(std::int64_t n, ember::split_axis split, std::uint64_t seed) {
  std::vector<T> g(static_cast<std::size_t>(n));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  for (auto& x : g) x = T(nd(rng));
  return ember::array(std::span<const T>(g), std::array<std::int64_t, 1>{n}, {.split = split});
}

// ---- serial references on gathered data: row-major double matrices ----
using mat = std::vector<double>;

template <class T>
mat to_double(const std::vector<T>& v) {
  return mat(v.begin(), v.end());
}
template <class T, int N>
mat gathered_d(const ember::dndarray<T, N>& a) {
  return to_double(test::gathered(a));
}
// a (m x k) times b (k x n), row-major.
mat mul(const mat& a, const mat& b, std::int64_t m, std::int64_t k, std::int64_t n) {
  mat c(std::size_t(m * n), 0.0);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p) {
      const double x = a[std::size_t(i * k + p)];
      for (std::int64_t j = 0; j < n; ++j) c[std::size_t(i * n + j)] += x * b[std::size_t(p * n + j)];
    }
  return c;
}
mat transposed(const mat& a, std::int64_t m, std::int64_t n) {
  mat t(a.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) t[std::size_t(j * m + i)] = a[std::size_t(i * n + j)];
  return t;
}
double fro(const mat& a) {
  double s = 0;
  for (double x : a) s += x * x;
  return std::sqrt(s);
}
double fro_diff(const mat& a, const mat& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s);
}
// ||Q^T Q - I||_F for Q m x k.
double orthogonality_error(const mat& q, std::int64_t m, std::int64_t k) {
  const mat g = mul(transposed(q, m, k), q, k, m, k);
  double s = 0;
  for (std::int64_t i = 0; i < k; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      const double d = g[std::size_t(i * k + j)] - (i == j ? 1.0 : 0.0);
      s += d * d;
    }
  return std::sqrt(s);
}
// Serial LAPACK singular values (a row-major m x n is the column-major n x m A^T,
// which has the same singular values).
std::vector<double> serial_singular_values(mat a, std::int64_t m, std::int64_t n) {
  std::vector<double> s(std::size_t(std::min(m, n)));
  if (!s.empty()) ember::lapack::gesdd<double>('N', n, m, a.data(), n, s.data(), nullptr, 1, nullptr, 1);
  return s;
}
// Serial LAPACK R (k x n, row-major) with a nonnegative diagonal.
mat serial_r(const mat& a, std::int64_t m, std::int64_t n) {
  const std::int64_t k = std::min(m, n);
  mat c = transposed(a, m, n);  // column-major m x n
  std::vector<double> tau(std::size_t(std::max<std::int64_t>(k, 1)));
  ember::lapack::geqrf<double>(m, n, c.data(), m, tau.data());
  mat r(std::size_t(k * n), 0.0);
  for (std::int64_t i = 0; i < k; ++i) {
    const double sg = c[std::size_t(i + i * m)] < 0 ? -1.0 : 1.0;
    for (std::int64_t j = i; j < n; ++j) r[std::size_t(i * n + j)] = sg * c[std::size_t(i + j * m)];
  }
  return r;
}

const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {{200, 7}, {64, 64}, {7, 5}, {5, 7},   {10, 3},
                                                                   {16, 4},  {1, 1},   {3, 40}, {7, 200}, {33, 2}};
const std::vector<ember::split_axis> splits = {ember::split_axis{0}, ember::split_axis{1}, ember::none};

// The documented TSQR rule (qr.hpp): split 0 and every rank holds >= n rows.
template <class T>
bool expect_tsqr(const ember::dndarray<T, 2>& a) {
  if (a.split() != 0) return false;
  for (const auto& row : a.lshape_map())
    if (row[0] < a.shape()[1]) return false;
  return true;
}
// ... and its transpose for the SVD of short-fat split-1 matrices.
template <class T>
bool expect_tsqr_transposed(const ember::dndarray<T, 2>& a) {
  if (a.split() != 1) return false;
  for (const auto& row : a.lshape_map())
    if (row[1] < a.shape()[0]) return false;
  return true;
}

// Children of `rank` in TSQR's binary tree over P ranks: rank + s for every power
// of two s below the lowest set bit of rank (any s < P for rank 0).
int tree_children(int rank, int P) {
  const int low = rank == 0 ? P : (rank & -rank);
  int c = 0;
  for (int s = 1; s < low && s < P; s *= 2)
    if (rank + s < P) ++c;
  return c;
}

template <class T>
double tol_eps(std::int64_t n) {
  return 50.0 * double(std::max<std::int64_t>(n, 1)) * double(std::numeric_limits<T>::epsilon());
}

}  // namespace

TEST_CASE("block-cyclic round trip through the exchange engine", "[linalg][bridge]") {
  const auto& c = ember::world();
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{7, 5}, {130, 70}, {1, 9}, {0, 3}})
    for (ember::split_axis s : {ember::split_axis{0}, ember::split_axis{1}, ember::split_axis{}})
      for (std::int64_t mb : {1, 2, 64}) {
        auto a = random_matrix<double>(m, n, s, 42 + std::uint64_t(m));
        const auto [pr, pc] = ember::scalapack::grid_shape(c.size());
        ember::scalapack::block_cyclic bl(m, n, pr, pc, mb, mb + 1);
        const auto before = c.sent();
        auto bc = ember::linalg::to_block_cyclic(a, bl);
        const auto moved = c.sent() - before;
        const auto predicted = ember::exchange(a.layout(), bl, c.rank(), sizeof(double)).predicted();
        REQUIRE(test::all_ranks(moved == predicted));
        // every local element is where ScaLAPACK's indexing says it is
        const auto g = test::gathered(a);
        bool ok = true;
        const int myr = bl.my_row(c.rank()), myc = bl.my_col(c.rank());
        for (std::int64_t lj = 0; lj < bc.local_cols(); ++lj)
          for (std::int64_t li = 0; li < bc.local_rows(); ++li) {
            const std::int64_t gi = (li / mb * pr + myr) * mb + li % mb;
            const std::int64_t gj = (lj / (mb + 1) * pc + myc) * (mb + 1) + lj % (mb + 1);
            ok = ok && bc.local()[li + lj * bc.lld()] == g[std::size_t(gi * n + gj)];
          }
        REQUIRE(test::all_ranks(ok));
        for (ember::split_axis t : {ember::split_axis{0}, ember::split_axis{1}, ember::split_axis{}}) {
          auto back = ember::linalg::from_block_cyclic(bc, t);
          REQUIRE(back.split() == t);
          REQUIRE(test::all_ranks(test::bit_equal(test::gathered(back), g)));
        }
      }
  const int before = ember::scalapack::grids_created();
  const auto [pr, pc] = ember::scalapack::grid_shape(c.size());
  (void)ember::scalapack::grid::get(c, pr, pc);
  (void)ember::scalapack::grid::get(c, pr, pc);
  REQUIRE(ember::scalapack::grids_created() == before);  // cached per communicator and shape
}

TEMPLATE_TEST_CASE("block-cyclic round trip in small staged chunks (transposing copies split mid-element)",
                   "[linalg][bridge]", float, double) {
  using T = TestType;
  const auto& c = ember::world();
  const auto saved = ember::config();
  // 100-byte messages and 60-byte staging: chunks end inside elements and rows
  ember::config().max_message_bytes = 100;
  ember::config().staging_bytes = 60;
  bool ok = true;
  for (ember::split_axis s : splits) {
    auto a = random_matrix<T>(37, 23, s, 5);
    const auto g = test::gathered(a);
    const auto [pr, pc] = ember::scalapack::grid_shape(c.size());
    for (std::int64_t mb : {1, 4, 64}) {
      ember::scalapack::block_cyclic bl(37, 23, pr, pc, mb, mb + 2);
      auto bc = ember::linalg::to_block_cyclic(a, bl);
      for (ember::split_axis t : splits) ok = ok && test::bit_equal(test::gathered(ember::linalg::from_block_cyclic(bc, t)), g);
    }
  }
  ember::config() = saved;
  REQUIRE(test::all_ranks(ok));
}

TEMPLATE_TEST_CASE("qr: A = Q R, Q orthonormal, R upper triangular, against serial LAPACK", "[linalg][qr]", float,
                   double) {
  using T = TestType;
  const auto& c = ember::world();
  std::uint64_t seed = 1;
  for (auto [m, n] : shapes)
    for (auto split : splits) {
      INFO("shape (" << m << ", " << n << "), split " << ember::detail::axis_str(split) << ", " << c.size() << " ranks");
      auto a = random_matrix<T>(m, n, split, seed++);
      const std::int64_t k = std::min(m, n);
      const bool tsqr = expect_tsqr(a);
      auto [q, r] = ember::linalg::qr(a);
      REQUIRE(q.shape() == std::array<std::int64_t, 2>{m, k});
      REQUIRE(r.shape() == std::array<std::int64_t, 2>{k, n});
      // layouts: Q keeps A's split (and A's lshape_map under TSQR); R is replicated
      // under TSQR and has A's split otherwise.
      REQUIRE(q.split() == split);
      REQUIRE(r.split() == (tsqr ? ember::none : split));
      if (tsqr) REQUIRE(q.lshape_map() == a.lshape_map());

      const mat A = gathered_d(a), Q = gathered_d(q), R = gathered_d(r);
      bool upper = true, nonneg = true;
      for (std::int64_t i = 0; i < k; ++i) {
        nonneg = nonneg && R[std::size_t(i * n + i)] >= 0;
        for (std::int64_t j = 0; j < std::min(i, n); ++j) upper = upper && R[std::size_t(i * n + j)] == 0;
      }
      REQUIRE(test::all_ranks(upper));
      REQUIRE(test::all_ranks(nonneg));
      const double resid = fro_diff(A, mul(Q, R, m, k, n)) / fro(A);
      const double orth = orthogonality_error(Q, m, k);
      CAPTURE(resid, orth);
      REQUIRE(test::all_ranks(resid < tol_eps<T>(n)));
      REQUIRE(test::all_ranks(orth < tol_eps<T>(n)));
      // R is unique (full rank, nonnegative diagonal): it equals serial LAPACK's.
      const double rdiff = fro_diff(R, serial_r(A, m, n)) / fro(A);
      CAPTURE(rdiff);
      REQUIRE(test::all_ranks(rdiff < (std::is_same_v<T, double> ? 1e-10 : 2e-3)));

      // mode r: the same R, no Q
      auto rq = ember::linalg::qr(a, {.mode = ember::linalg::qr_mode::r});
      REQUIRE_FALSE(rq.Q.valid());
      REQUIRE(test::all_ranks(test::bit_equal(test::gathered(rq.R), test::gathered(r))));
    }
}

TEST_CASE("qr: TSQR sends exactly the tree's messages and the broadcast of R", "[linalg][qr][traffic]") {
  const auto& c = ember::world();
  const int P = c.size(), me = c.rank();
  for (std::int64_t n : {7, 1}) {
    auto a = random_matrix<double>(200, n, 0, 7);
    REQUIRE(expect_tsqr(a));
    const std::int64_t bytes = n * n * std::int64_t(sizeof(double));
    const std::int64_t up = me == 0 ? 0 : 1, down = tree_children(me, P);
    const auto bcast = ember::model::bcast(bytes, P, me == 0);
    for (bool with_q : {true, false}) {
      const auto before = c.sent();
      auto res = ember::linalg::qr(a, {.mode = with_q ? ember::linalg::qr_mode::reduced : ember::linalg::qr_mode::r});
      const auto moved = c.sent() - before;
      const std::int64_t msgs = up + (with_q ? down : 0);
      const ember::traffic expected{msgs * bytes + bcast.bytes, msgs + bcast.messages};
      CAPTURE(n, with_q, moved.bytes, moved.messages, expected.bytes, expected.messages);
      REQUIRE(test::all_ranks(moved == expected));
    }
  }
  // chunked messages: the tree's n x n messages split at max_message_bytes
  const auto saved = ember::config().max_message_bytes;
  ember::config().max_message_bytes = 100;
  auto a = random_matrix<double>(200, 7, 0, 9);
  const auto before = c.sent();
  auto [q, r] = ember::linalg::qr(a);
  const auto moved = c.sent() - before;
  ember::config().max_message_bytes = saved;
  const std::int64_t bytes = 49 * 8, per_msg = (bytes + 99) / 100;
  const std::int64_t msgs = (me == 0 ? 0 : 1) + tree_children(me, P);
  std::int64_t bcast_msgs = me == 0 ? (P - 1) * per_msg : 0;  // bcast chunks of 100 / 8 = 12 elements
  if (me == 0) bcast_msgs = std::int64_t(P - 1) * ((49 + 11) / 12);
  REQUIRE(test::all_ranks(moved.messages == msgs * per_msg + bcast_msgs));
  const mat A = gathered_d(a), Q = gathered_d(q), R = gathered_d(r);
  REQUIRE(test::all_ranks(fro_diff(A, mul(Q, R, 200, 7, 7)) / fro(A) < tol_eps<double>(7)));
}

TEMPLATE_TEST_CASE("svd: singular values equal serial LAPACK, U and V orthonormal, A = U S V^T", "[linalg][svd]",
                   float, double) {
  using T = TestType;
  const auto& c = ember::world();
  const double stol = std::is_same_v<T, double> ? 1e-10 : 1e-4;
  std::uint64_t seed = 100;
  for (auto [m, n] : shapes)
    for (auto split : splits) {
      INFO("shape (" << m << ", " << n << "), split " << ember::detail::axis_str(split) << ", " << c.size() << " ranks");
      auto a = random_matrix<T>(m, n, split, seed++);
      const std::int64_t k = std::min(m, n);
      // NumPy's contract: (U, S, Vh) with Vh = V^T, k x n
      auto [u, s, vh] = ember::linalg::svd(a);
      REQUIRE(u.shape() == std::array<std::int64_t, 2>{m, k});
      REQUIRE(s.shape() == std::array<std::int64_t, 1>{k});
      REQUIRE(vh.shape() == std::array<std::int64_t, 2>{k, n});
      REQUIRE(s.split() == ember::none);
      REQUIRE(u.split() == (split == 0 ? ember::split_axis{0} : ember::none));
      REQUIRE(vh.split() == (split == 1 ? ember::split_axis{1} : ember::none));
      if (expect_tsqr(a)) REQUIRE(u.lshape_map() == a.lshape_map());
      if (expect_tsqr_transposed(a))
        for (int r = 0; r < c.size(); ++r) REQUIRE(vh.lshape_map()[std::size_t(r)][1] == a.lshape_map()[std::size_t(r)][1]);

      const mat A = gathered_d(a), U = gathered_d(u), S = gathered_d(s), Vh = gathered_d(vh);
      const mat V = transposed(Vh, k, n);
      const auto ref = serial_singular_values(A, m, n);
      double sdiff = 0;
      bool descending = true;
      for (std::int64_t i = 0; i < k; ++i) {
        sdiff = std::max(sdiff, std::abs(S[std::size_t(i)] - ref[std::size_t(i)]) / ref[0]);
        if (i > 0) descending = descending && S[std::size_t(i)] <= S[std::size_t(i - 1)];
      }
      // the replicated S is the same on every rank, bit for bit
      const auto s_local = test::gathered(s);
      std::vector<T> s0(s_local);
      c.bcast(s0.data(), std::int64_t(s0.size()), 0);
      REQUIRE(test::all_ranks(test::bit_equal(s0, s_local)));
      mat us = U;
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < k; ++j) us[std::size_t(i * k + j)] *= S[std::size_t(j)];
      const double resid = fro_diff(A, mul(us, transposed(V, n, k), m, k, n)) / fro(A);
      const double ou = orthogonality_error(U, m, k), ov = orthogonality_error(V, n, k);
      CAPTURE(sdiff, resid, ou, ov);
      REQUIRE(test::all_ranks(descending));
      REQUIRE(test::all_ranks(sdiff < stol));
      REQUIRE(test::all_ranks(resid < tol_eps<T>(std::max(m, n))));
      REQUIRE(test::all_ranks(ou < tol_eps<T>(std::max(m, n))));
      REQUIRE(test::all_ranks(ov < tol_eps<T>(std::max(m, n))));

      auto so = ember::linalg::svd(a, {.compute_uv = false});
      REQUIRE_FALSE(so.U.valid());
      REQUIRE_FALSE(so.Vh.valid());
      const mat S2 = gathered_d(so.S);
      double sdiff2 = 0;
      for (std::int64_t i = 0; i < k; ++i)
        sdiff2 = std::max(sdiff2, std::abs(S2[std::size_t(i)] - ref[std::size_t(i)]) / ref[0]);
      REQUIRE(test::all_ranks(sdiff2 < stol));
    }
}

TEST_CASE("svd: tall-skinny TSQR traffic is the tree, S and V broadcast", "[linalg][svd][traffic]") {
  const auto& c = ember::world();
  const int P = c.size(), me = c.rank();
  const std::int64_t n = 6;
  auto a = random_matrix<double>(120, n, 0, 3);
  REQUIRE(expect_tsqr(a));
  const std::int64_t bytes = n * n * 8;
  const auto before = c.sent();
  auto res = ember::linalg::svd(a);
  const auto moved = c.sent() - before;
  const std::int64_t msgs = (me == 0 ? 0 : 1) + tree_children(me, P);
  const auto bs = ember::model::bcast(n * 8, P, me == 0), bv = ember::model::bcast(bytes, P, me == 0);
  const ember::traffic expected{msgs * bytes + bs.bytes + bv.bytes, msgs + bs.messages + bv.messages};
  CAPTURE(moved.bytes, moved.messages, expected.bytes, expected.messages);
  REQUIRE(test::all_ranks(moved == expected));
}

TEMPLATE_TEST_CASE("solve: A X = B against serial LAPACK", "[linalg][solve]", float, double) {
  using T = TestType;
  const double tol = std::is_same_v<T, double> ? 1e-10 : 1e-3;
  for (std::int64_t n : {1, 5, 33})
    for (auto sa : splits)
      for (auto sb : splits) {
        INFO("n " << n << ", A split " << ember::detail::axis_str(sa) << ", B split " << ember::detail::axis_str(sb));
        // diagonally dominated, so well conditioned
        auto a0 = random_matrix<double>(n, n, ember::none, std::uint64_t(n) * 7);
        std::vector<T> ag(std::size_t(n * n));
        for (std::int64_t i = 0; i < n * n; ++i) ag[std::size_t(i)] = T(a0.ldata()[i] + (i % (n + 1) == 0 ? 2.0 * double(n) : 0.0));
        auto a = ember::array(std::span<const T>(ag), std::array<std::int64_t, 2>{n, n}, {.split = sa});
        const mat A = to_double(ag);
        // serial reference: LAPACK gesv on the gathered (column-major = transposed) system
        auto serial = [&](mat b, std::int64_t k) {
          mat ac = transposed(A, n, n), bc = transposed(b, n, k);
          ember::lapack::gesv<double>(n, k, ac.data(), n, bc.data(), n);
          return transposed(bc, k, n);
        };
        {  // 2-D B
          const std::int64_t k = 3;
          auto b = random_matrix<T>(n, k, sb, 11);
          auto x = ember::linalg::solve(a, b);
          REQUIRE(x.shape() == b.shape());
          REQUIRE(x.split() == sb);
          const mat X = gathered_d(x), ref = serial(gathered_d(b), k);
          const double d = fro_diff(X, ref) / fro(ref);
          CAPTURE(d);
          REQUIRE(test::all_ranks(d < tol));
        }
        if (sb != 1) {  // 1-D B
          auto b = random_vector<T>(n, sb, 12);
          auto x = ember::linalg::solve(a, b);
          REQUIRE(x.shape() == b.shape());
          REQUIRE(x.split() == sb);
          const mat X = gathered_d(x), ref = serial(gathered_d(b), 1);
          const double d = fro_diff(X, ref) / fro(ref);
          CAPTURE(d);
          REQUIRE(test::all_ranks(d < tol));
        }
      }
}

TEMPLATE_TEST_CASE("cholesky and eigh against serial LAPACK", "[linalg][cholesky][eigh]", float, double) {
  using T = TestType;
  const auto& c = ember::world();
  const double tol = std::is_same_v<T, double> ? 1e-10 : 1e-3;
  for (std::int64_t n : {1, 6, 40})
    for (auto split : splits) {
      INFO("n " << n << ", split " << ember::detail::axis_str(split) << ", " << c.size() << " ranks");
      const mat M = gathered_d(random_matrix<double>(n, n, ember::none, std::uint64_t(n) + 5));
      // SPD: M M^T + n I; symmetric: (M + M^T) / 2
      mat spd = mul(M, transposed(M, n, n), n, n, n), sym(M.size());
      for (std::int64_t i = 0; i < n; ++i) {
        spd[std::size_t(i * n + i)] += double(n);
        for (std::int64_t j = 0; j < n; ++j) sym[std::size_t(i * n + j)] = 0.5 * (M[std::size_t(i * n + j)] + M[std::size_t(j * n + i)]);
      }
      std::vector<T> spd_t(spd.begin(), spd.end()), sym_t(sym.begin(), sym.end());
      const mat SPD(spd_t.begin(), spd_t.end()), SYM(sym_t.begin(), sym_t.end());  // exactly the values factored
      auto a = ember::array(std::span<const T>(spd_t), std::array<std::int64_t, 2>{n, n}, {.split = split});
      auto l = ember::linalg::cholesky(a);
      REQUIRE(l.split() == split);
      const mat L = gathered_d(l);
      bool lower = true;
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = i + 1; j < n; ++j) lower = lower && L[std::size_t(i * n + j)] == 0;
      REQUIRE(test::all_ranks(lower));
      mat ref = transposed(SPD, n, n);  // column-major; potrf 'U' of A^T = L^T in row-major terms
      ember::lapack::potrf<double>('U', n, ref.data(), n);
      double ld = 0;
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j <= i; ++j)
          ld = std::max(ld, std::abs(L[std::size_t(i * n + j)] - ref[std::size_t(i * n + j)]));
      const double resid = fro_diff(SPD, mul(L, transposed(L, n, n), n, n, n)) / fro(SPD);
      CAPTURE(ld, resid);
      REQUIRE(test::all_ranks(ld / std::sqrt(fro(SPD)) < tol));
      REQUIRE(test::all_ranks(resid < tol_eps<T>(n)));

      auto s = ember::array(std::span<const T>(sym_t), std::array<std::int64_t, 2>{n, n}, {.split = split});
      auto [w, v] = ember::linalg::eigh(s);
      REQUIRE(w.split() == ember::none);
      REQUIRE(v.split() == split);
      const mat W = gathered_d(w), V = gathered_d(v);
      mat sc = SYM;
      std::vector<double> wref(static_cast<std::size_t>(n));
      ember::lapack::syevd<double>('N', 'L', n, sc.data(), n, wref.data());
      double wd = 0;
      bool ascending = true;
      for (std::int64_t i = 0; i < n; ++i) {
        wd = std::max(wd, std::abs(W[std::size_t(i)] - wref[std::size_t(i)]) / fro(SYM));
        if (i > 0) ascending = ascending && W[std::size_t(i)] >= W[std::size_t(i - 1)];
      }
      mat vw = V;  // V diag(w)
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) vw[std::size_t(i * n + j)] *= W[std::size_t(j)];
      const double eres = fro_diff(mul(SYM, V, n, n, n), vw) / fro(SYM);
      const double orth = orthogonality_error(V, n, n);
      CAPTURE(wd, eres, orth);
      REQUIRE(test::all_ranks(ascending));
      REQUIRE(test::all_ranks(wd < tol));
      REQUIRE(test::all_ranks(eres < tol_eps<T>(n)));
      REQUIRE(test::all_ranks(orth < tol_eps<T>(n)));
    }
}

TEMPLATE_TEST_CASE("norm: vector and matrix orders against serial sums", "[linalg][norm]", float, double) {
  using T = TestType;
  const double tol = std::is_same_v<T, double> ? 1e-12 : 1e-5;
  const double inf = ember::linalg::inf;
  auto close = [&](double got, double want) { return std::abs(got - want) <= tol * std::max(1.0, std::abs(want)); };
  for (auto split : {ember::split_axis{0}, ember::split_axis{}})
    for (std::int64_t n : {1, 10, 37}) {
      INFO("vector of " << n << ", split " << ember::detail::axis_str(split));
      auto x = random_vector<T>(n, split, std::uint64_t(n));
      const mat X = gathered_d(x);
      auto pn = [&](double p) {
        double s = 0;
        for (double v : X) s += std::pow(std::abs(v), p);
        return std::pow(s, 1.0 / p);
      };
      double mx = 0, mn = inf, nz = 0;
      for (double v : X) mx = std::max(mx, std::abs(v)), mn = std::min(mn, std::abs(v)), nz += v != 0;
      REQUIRE(test::all_ranks(close(ember::linalg::norm(x), pn(2))));
      REQUIRE(test::all_ranks(close(ember::linalg::norm(x, 1), pn(1))));
      REQUIRE(test::all_ranks(close(ember::linalg::norm(x, 3), pn(3))));
      REQUIRE(test::all_ranks(close(ember::linalg::norm(x, 0.5), pn(0.5))));
      REQUIRE(test::all_ranks(close(ember::linalg::norm(x, -1), pn(-1))));
      REQUIRE(test::all_ranks(close(ember::linalg::norm(x, inf), mx)));
      REQUIRE(test::all_ranks(close(ember::linalg::norm(x, -inf), mn)));
      REQUIRE(test::all_ranks(ember::linalg::norm(x, 0) == T(nz)));
    }
  // huge values: scaled sums do not overflow
  {
    std::vector<T> big(8, std::numeric_limits<T>::max() / T(4));
    auto x = ember::array(std::span<const T>(big), std::array<std::int64_t, 1>{8}, {.split = 0});
    const double want = double(std::numeric_limits<T>::max()) / 4 * std::sqrt(8.0);
    REQUIRE(test::all_ranks(close(double(ember::linalg::norm(x)), want)));
    REQUIRE(test::all_ranks(close(double(ember::linalg::norm(x, 3)), want / std::sqrt(8.0) * std::cbrt(8.0))));
  }
  // integers are measured in double
  {
    std::vector<std::int32_t> iv = {3, -4, 0, 12};
    auto x = ember::array(std::span<const std::int32_t>(iv), std::array<std::int64_t, 1>{4}, {.split = 0});
    REQUIRE(test::all_ranks(ember::linalg::norm(x) == 13.0));
    REQUIRE(test::all_ranks(ember::linalg::norm(x, 1) == 19.0));
  }
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{9, 4}, {4, 9}, {30, 30}})
    for (auto split : splits) {
      INFO("matrix (" << m << ", " << n << "), split " << ember::detail::axis_str(split));
      auto a = random_matrix<T>(m, n, split, std::uint64_t(m * n));
      const mat A = gathered_d(a);
      std::vector<double> col(std::size_t(n), 0.0), row(std::size_t(m), 0.0);
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          col[std::size_t(j)] += std::abs(A[std::size_t(i * n + j)]);
          row[std::size_t(i)] += std::abs(A[std::size_t(i * n + j)]);
        }
      const auto sv = serial_singular_values(A, m, n);
      double nuc = 0;
      for (double s : sv) nuc += s;
      const double svtol = std::is_same_v<T, double> ? 1e-10 : 1e-4;
      auto sclose = [&](double got, double want) { return std::abs(got - want) <= svtol * want; };
      REQUIRE(test::all_ranks(close(ember::linalg::norm(a), fro(A))));
      REQUIRE(test::all_ranks(close(ember::linalg::norm(a, ember::linalg::matrix_norm::fro), fro(A))));
      REQUIRE(test::all_ranks(close(ember::linalg::norm(a, 1), *std::max_element(col.begin(), col.end()))));
      REQUIRE(test::all_ranks(close(ember::linalg::norm(a, -1), *std::min_element(col.begin(), col.end()))));
      REQUIRE(test::all_ranks(close(ember::linalg::norm(a, inf), *std::max_element(row.begin(), row.end()))));
      REQUIRE(test::all_ranks(close(ember::linalg::norm(a, -inf), *std::min_element(row.begin(), row.end()))));
      REQUIRE(test::all_ranks(sclose(ember::linalg::norm(a, 2), sv.front())));
      REQUIRE(test::all_ranks(sclose(ember::linalg::norm(a, -2), sv.back())));
      REQUIRE(test::all_ranks(sclose(ember::linalg::norm(a, ember::linalg::matrix_norm::nuc), nuc)));
    }
}

TEST_CASE("linalg errors: every rank throws the same ember::error, none hangs", "[linalg][errors]") {
  const auto& c = ember::world();
  auto rect = random_matrix<double>(4, 5, 0, 1);
  auto sq = random_matrix<double>(4, 4, 1, 2);
  auto b5 = random_matrix<double>(5, 2, 0, 3);
  auto v5 = random_vector<double>(5, 0, 4);
  REQUIRE_THROWS_AS(ember::linalg::solve(rect, random_matrix<double>(4, 2, 0, 5)), ember::shape_error);
  REQUIRE_THROWS_AS(ember::linalg::solve(sq, b5), ember::shape_error);
  REQUIRE_THROWS_AS(ember::linalg::solve(sq, v5), ember::shape_error);
  REQUIRE_THROWS_AS(ember::linalg::cholesky(rect), ember::shape_error);
  REQUIRE_THROWS_AS(ember::linalg::eigh(rect), ember::shape_error);
  REQUIRE_THROWS_AS(ember::linalg::norm(sq, 3.0), ember::value_error);
  try {
    (void)ember::linalg::solve(sq, b5);
  } catch (const ember::shape_error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    REQUIRE(test::all_ranks(what.find("(4, 4)") != std::string::npos && what.find("(5, 2)") != std::string::npos));
  }
  // integer dtypes: a type_error naming the dtype, thrown before any communication
  std::vector<std::int32_t> g32(12, 1);
  std::vector<std::int64_t> g64(12, 1);
  auto i32 = ember::array(std::span<const std::int32_t>(g32), std::array<std::int64_t, 2>{4, 3}, {.split = 0});
  auto i64 = ember::array(std::span<const std::int64_t>(g64), std::array<std::int64_t, 2>{3, 4}, {.split = 1});
  REQUIRE_THROWS_AS(ember::linalg::svd(i32), ember::type_error);
  REQUIRE_THROWS_AS(ember::linalg::svd(i64, {.compute_uv = false}), ember::type_error);
  REQUIRE_THROWS_AS(ember::linalg::qr(i32), ember::type_error);
  REQUIRE_THROWS_AS(ember::linalg::qr(i64), ember::type_error);
  REQUIRE_THROWS_WITH(ember::linalg::svd(i32), Catch::Contains("int32") && Catch::Contains("(4, 3)"));
  // numerical failures found by ScaLAPACK on some ranks: agreed, thrown everywhere
  auto zero = ember::zeros<double>({6, 6}, {.split = 0});
  REQUIRE_THROWS_AS(ember::linalg::solve(zero, random_matrix<double>(6, 2, 0, 6)), ember::value_error);
  auto neg = ember::full<double>({6, 6}, -1.0, {.split = 1});
  REQUIRE_THROWS_AS(ember::linalg::cholesky(neg), ember::value_error);
  // nobody was left behind in a collective
  REQUIRE(test::all_ranks(true));
  c.barrier();
}
