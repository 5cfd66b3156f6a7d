// Distributed matrix products against a serial product of the gathered operands:
// every split pair through the planner, every algorithm through the runtime with
// uneven blocks, vectors, outer products, transposes, fusion after the product,
// expression operands, and the algorithm the planner picks at scale. The
// counters must equal the plan's prediction, step by step.
#include <random>

#include "common.hpp"

namespace {

using ember::split_axis;
const split_axis splits[] = {split_axis{0}, split_axis{1}, split_axis{}};

template <class T>
ember::dndarray<T, 2> matrix(std::int64_t m, std::int64_t n, split_axis s, std::uint64_t seed) {
  std::vector<T> g(static_cast<std::size_t>(m * n));
  std::mt19937_64 rng(seed);
  for (auto& x : g) {
    if constexpr (std::is_floating_point_v<T>) x = T(std::uniform_real_distribution<double>(-1, 1)(rng));
    else x = T(std::int64_t(rng() % 19) - 9);
  }
  return ember::array(std::span<const T>(g), std::array<std::int64_t, 2>{m, n}, {.split = s});
}
template <class T>
ember::dndarray<T, 1> vec(std::int64_t n, split_axis s, std::uint64_t seed) {
  std::vector<T> g(static_cast<std::size_t>(n));
  std::mt19937_64 rng(seed);
  for (auto& x : g) x = T(std::int64_t(rng() % 19) - 9) / T(4);
  return ember::array(std::span<const T>(g), std::array<std::int64_t, 1>{n}, {.split = s});
}

// C = A B serially in long double (A m x k, B k x n, row-major).
template <class T>
std::vector<long double> serial_product(const std::vector<T>& a, const std::vector<T>& b, std::int64_t m,
                                        std::int64_t k, std::int64_t n) {
  std::vector<long double> c(static_cast<std::size_t>(m * n), 0.0L);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t l = 0; l < k; ++l)
      for (std::int64_t j = 0; j < n; ++j)
        c[std::size_t(i * n + j)] += (long double)a[std::size_t(i * k + l)] * (long double)b[std::size_t(l * n + j)];
  return c;
}

template <class T>
bool close_to(const std::vector<T>& got, const std::vector<long double>& want, std::int64_t k) {
  if (got.size() != want.size()) return false;
  const long double eps = std::is_floating_point_v<T> ? (long double)std::numeric_limits<T>::epsilon() : 0.0L;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::fabs((long double)got[i] - want[i]) > 4 * eps * (long double)(k + 1) * (1 + std::fabs(want[i]))) return false;
  return true;
}

bool trace_matches() {
  for (const auto& s : ember::last_trace())
    if (!(s.predicted == s.measured)) return false;
  return !ember::last_trace().empty();
}

template <class T>
void every_split_pair(std::int64_t m, std::int64_t k, std::int64_t n) {
  for (auto sa : splits)
    for (auto sb : splits) {
      INFO("A " << m << "x" << k << " split " << (sa ? *sa : -1) << ", B " << k << "x" << n << " split "
                << (sb ? *sb : -1) << ", dtype " << ember::dtype_name<T>());
      auto A = matrix<T>(m, k, sa, 11 + std::uint64_t(m));
      auto B = matrix<T>(k, n, sb, 23 + std::uint64_t(n));
      ember::dndarray<T, 2> C = ember::matmul(A, B);
      REQUIRE(test::all_ranks(trace_matches()));
      const auto want = serial_product(test::gathered(A), test::gathered(B), m, k, n);
      REQUIRE(test::all_ranks(close_to(test::gathered(C), want, k)));
      // the plan's choice is visible and agrees with what ran
      const auto p = ember::explain(ember::matmul(A, B));
      bool has_matmul = false;
      for (const auto& s : p.steps) has_matmul = has_matmul || (s.kind == ember::planner::step_kind::matmul && s.product);
      REQUIRE(has_matmul);
    }
}

}  // namespace

TEST_CASE("matmul equals the serial product for every split pair", "[matmul]") {
  every_split_pair<double>(7, 5, 3);
  every_split_pair<double>(33, 17, 29);
  every_split_pair<float>(20, 9, 13);
  every_split_pair<std::int64_t>(6, 11, 5);
  every_split_pair<double>(2, 1, 9);   // fewer rows than ranks
  every_split_pair<double>(5, 0, 4);   // empty inner dimension: zeros
}

TEST_CASE("every algorithm, uneven blocks, counters equal the formula", "[matmul][runtime]") {
  const auto& c = ember::world();
  const int P = c.size();
  std::mt19937_64 rng(5);
  auto uneven = [&](std::int64_t n) {  // random extents summing to n (some ranks may get none)
    ember::index_vec e(std::size_t(P), 0);
    for (std::int64_t i = 0; i < n; ++i) ++e[std::size_t(rng() % std::uint64_t(P))];
    return e;
  };
  const std::int64_t m = 13, k = 10, n = 7;
  using A = ember::matmul_algorithm;
  for (int trial = 0; trial < 6; ++trial) {
    const ember::layout a0({m, k}, 0, uneven(m)), a1({m, k}, 1, uneven(k)), b0({k, n}, 0, uneven(k)),
        b1({k, n}, 1, uneven(n));
    const ember::layout arep = ember::replicated_layout({m, k}, P), brep = ember::replicated_layout({k, n}, P);
    const ember::layout crep = ember::replicated_layout({m, n}, P);
    std::vector<ember::matmul_problem> probs = {
        {A::local, a0, brep, a0.with_shape({m, n}, 0)},
        {A::local, arep, b1, b1.with_shape({m, n}, 1)},
        {A::local, arep, brep, crep},
        {A::ring_b, a0, b0, a0.with_shape({m, n}, 0)},
        {A::ring_b, a0, b1, a0.with_shape({m, n}, 0)},
        {A::ring_a, a0, b1, b1.with_shape({m, n}, 1)},
        {A::ring_a, a1, b1, b1.with_shape({m, n}, 1)},
        {A::reduce_scatter, a1, a1.with_shape({k, n}, 0), ember::layout({m, n}, 0, uneven(m))},
        {A::allreduce, a1, a1.with_shape({k, n}, 0), crep},
        {A::summa, a0, b1, ember::layout({m, n}, 1, uneven(n))},
        {A::summa, arep, b0, ember::layout::balanced({m, n}, 0, P)},
    };
    for (auto& pr : probs) {
      pr.elem = sizeof(double);
      INFO("algorithm " << ember::name(pr.alg) << " trial " << trial);
      auto Ag = matrix<double>(m, k, ember::none, 100 + std::uint64_t(trial));
      auto Bg = matrix<double>(k, n, ember::none, 200 + std::uint64_t(trial));
      ember::dndarray<double, 2> Al = Ag.moved_to(pr.a), Bl = Bg.moved_to(pr.b);
      ember::dndarray<double, 2> Cl(pr.c, c);
      const auto before = c.sent();
      ember::run_matmul<double>(pr, c, Al.ldata(), Bl.ldata(), Cl.ldata());
      REQUIRE(test::all_ranks(c.sent() - before == ember::matmul_traffic(pr, c.rank())));
      REQUIRE(test::all_ranks(ember::matmul_traffic_all(pr, false)[std::size_t(c.rank())] ==
                              ember::matmul_traffic(pr, c.rank())));
      const auto want = serial_product(test::gathered(Ag), test::gathered(Bg), m, k, n);
      REQUIRE(test::all_ranks(close_to(test::gathered(Cl), want, k)));
    }
  }
  // a layout that does not fit the algorithm is refused on every rank
  const auto a1 = ember::layout::balanced({m, k}, 1, P);
  REQUIRE_THROWS_AS(ember::validate({A::ring_b, a1, a1.with_shape({k, n}, 0), ember::layout::balanced({m, n}, 1, P), 8}),
                    ember::value_error);
}

TEST_CASE("ring and reduce-scatter messages are chunked under a small message limit", "[matmul][runtime]") {
  const auto& c = ember::world();
  const auto saved = ember::config();
  ember::config().max_message_bytes = 200;
  auto A = matrix<double>(30, 20, 0, 3);
  auto B = matrix<double>(20, 10, 0, 4);
  const ember::matmul_problem pr{ember::matmul_algorithm::ring_b, A.layout(), B.layout(),
                                 A.layout().with_shape({30, 10}, 0), 8};
  ember::dndarray<double, 2> C(pr.c, c);
  const auto before = c.sent();
  ember::run_matmul<double>(pr, c, A.ldata(), B.ldata(), C.ldata());
  const auto sent = c.sent() - before;
  const auto predicted = ember::matmul_traffic(pr, c.rank());
  ember::config() = saved;
  REQUIRE(test::all_ranks(sent == predicted));
  if (c.size() > 1) REQUIRE(test::all_ranks(sent.messages > c.size() - 1));  // several messages per block
  REQUIRE(test::all_ranks(close_to(test::gathered(C), serial_product(test::gathered(A), test::gathered(B), 30, 20, 10), 20)));
  // the reduce-scatter ring too: A split 1 x B split 0, C's row blocks of 24 doubles
  ember::config().max_message_bytes = 200;
  auto A1 = matrix<double>(30, 20, 1, 5);
  auto B0 = matrix<double>(20, 10, 0, 6);
  const ember::matmul_problem rs{ember::matmul_algorithm::reduce_scatter, A1.layout(), B0.layout(),
                                 ember::layout::balanced({30, 10}, 0, c.size()), 8};
  ember::dndarray<double, 2> C1(rs.c, c);
  const auto before_rs = c.sent();
  ember::run_matmul<double>(rs, c, A1.ldata(), B0.ldata(), C1.ldata());
  const auto sent_rs = c.sent() - before_rs;
  const auto predicted_rs = ember::matmul_traffic(rs, c.rank());  // under the same message limit
  ember::config() = saved;
  REQUIRE(test::all_ranks(sent_rs == predicted_rs));
  if (c.size() > 1) REQUIRE(test::all_ranks(sent_rs.messages > c.size() - 1));
  REQUIRE(test::all_ranks(close_to(test::gathered(C1), serial_product(test::gathered(A1), test::gathered(B0), 30, 20, 10), 20)));
}

TEST_CASE("vectors, dot, outer and transpose follow NumPy", "[matmul]") {
  for (auto sa : splits)
    for (auto sv : {split_axis{0}, split_axis{}}) {
      auto A = matrix<double>(9, 6, sa, 7);
      auto x = vec<double>(6, sv, 8), y = vec<double>(9, sv, 9);
      const auto Ag = test::gathered(A), xg = test::gathered(x), yg = test::gathered(y);
      ember::dndarray<double, 1> Ax = ember::matmul(A, x);  // (9,)
      REQUIRE(test::all_ranks(trace_matches()));
      REQUIRE(test::all_ranks(close_to(test::gathered(Ax), serial_product(Ag, xg, 9, 6, 1), 6)));
      ember::dndarray<double, 1> yA = ember::matmul(y, A);  // (6,)
      REQUIRE(test::all_ranks(close_to(test::gathered(yA), serial_product(yg, Ag, 1, 9, 6), 9)));
      const double d = ember::dot(x, x);
      long double want = 0;
      for (double v : xg) want += (long double)v * v;
      REQUIRE(test::all_ranks(std::fabs(d - double(want)) < 1e-12));
      ember::dndarray<double, 2> O = ember::outer(y, x);  // (9, 6)
      REQUIRE(test::all_ranks(close_to(test::gathered(O), serial_product(yg, xg, 9, 1, 6), 1)));
      ember::dndarray<double, 2> T = ember::transpose(A);
      REQUIRE(T.shape() == std::array<std::int64_t, 2>{6, 9});
      if (sa) REQUIRE(T.split() == split_axis{1 - *sa});  // nothing moved, the split axis turned
      const auto Tg = test::gathered(T);
      bool ok = true;
      for (int i = 0; i < 9; ++i)
        for (int j = 0; j < 6; ++j) ok = ok && Tg[std::size_t(j * 9 + i)] == Ag[std::size_t(i * 6 + j)];
      REQUIRE(test::all_ranks(ok));
      // the Gram matrix through a lazy transpose
      ember::dndarray<double, 2> G = ember::matmul(ember::transpose(A), A);
      REQUIRE(test::all_ranks(close_to(test::gathered(G), serial_product(Tg, Ag, 6, 9, 6), 9)));
    }
}

// Serial transpose of a row-major r x c matrix.
template <class T>
std::vector<T> transposed_values(const std::vector<T>& a, std::int64_t r, std::int64_t c) {
  std::vector<T> t(a.size());
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) t[std::size_t(j * r + i)] = a[std::size_t(i * c + j)];
  return t;
}

int count_steps(const ember::planner::plan& p, ember::planner::step_kind k) {
  int n = 0;
  for (const auto& s : p.steps) n += s.kind == k;
  return n;
}
bool moves_data(ember::planner::step_kind k) {
  using K = ember::planner::step_kind;
  return k == K::realign || k == K::resplit || k == K::allgather || k == K::partition || k == K::halo || k == K::reverse;
}

TEST_CASE("a transpose that only a product reads is a BLAS flag, not a copy", "[matmul][planner]") {
  const int P = ember::world().size();
  using K = ember::planner::step_kind;
  for (auto sx : splits)
    for (auto sy : splits) {
      // A = X^T (X 11 x 7), B = Y^T (Y 5 x 11), C = A @ Y^T^T...: every combination of lazy operands
      auto X = matrix<double>(11, 7, sx, 31), Y = matrix<double>(5, 11, sy, 32), B = matrix<double>(11, 5, sy, 33);
      auto W = matrix<double>(7, 11, sx, 34);
      const auto Xg = test::gathered(X), Yg = test::gathered(Y), Bg = test::gathered(B), Wg = test::gathered(W);
      const auto Xt = transposed_values(Xg, 11, 7), Yt = transposed_values(Yg, 5, 11);
      INFO("X split " << (sx ? *sx : -1) << ", Y split " << (sy ? *sy : -1) << ", " << P << " ranks");
      ember::dndarray<double, 2> C1 = ember::matmul(ember::transpose(X), B);  // (7, 5)
      REQUIRE(test::all_ranks(trace_matches()));
      REQUIRE(test::all_ranks(close_to(test::gathered(C1), serial_product(Xt, Bg, 7, 11, 5), 11)));
      ember::dndarray<double, 2> C2 = ember::matmul(W, ember::transpose(Y));  // (7, 5)
      REQUIRE(test::all_ranks(trace_matches()));
      REQUIRE(test::all_ranks(close_to(test::gathered(C2), serial_product(Wg, Yt, 7, 11, 5), 11)));
      ember::dndarray<double, 2> C3 = ember::matmul(ember::transpose(X), ember::transpose(Y));
      REQUIRE(test::all_ranks(trace_matches()));
      REQUIRE(test::all_ranks(close_to(test::gathered(C3), serial_product(Xt, Yt, 7, 11, 5), 11)));
      // a vector, as in a gradient X^T r
      auto r = vec<double>(11, sy ? split_axis{0} : split_axis{}, 35);
      ember::dndarray<double, 1> g = ember::matmul(ember::transpose(X), r);
      REQUIRE(test::all_ranks(trace_matches()));
      REQUIRE(test::all_ranks(close_to(test::gathered(g), serial_product(Xt, test::gathered(r), 7, 11, 1), 11)));
      // integers take the same path (the loop kernel reads the flags too)
      auto Xi = matrix<std::int64_t>(11, 7, sx, 36), Bi = matrix<std::int64_t>(11, 5, sy, 37);
      ember::dndarray<std::int64_t, 2> Ci = ember::matmul(ember::transpose(Xi), ember::transpose(ember::transpose(Bi)));
      REQUIRE(test::all_ranks(close_to(test::gathered(Ci),
                                       serial_product(transposed_values(test::gathered(Xi), 11, 7), test::gathered(Bi), 7, 11, 5), 11)));
      // at one rank every layout is the same block: nothing is copied or transposed
      if (P == 1)
        for (const auto& p : {ember::explain(ember::matmul(ember::transpose(X), B)),
                              ember::explain(ember::matmul(W, ember::transpose(Y))),
                              ember::explain(ember::matmul(ember::transpose(X), ember::transpose(Y))),
                              ember::explain(ember::matmul(ember::transpose(X), r))}) {
          INFO(p.to_string());
          for (const auto& s : p.steps) REQUIRE((!moves_data(s.kind) && s.kind != K::transpose));
        }
    }
  // the gradient of a row-split design matrix: one local product and one
  // collective over d numbers, at every rank count - no transpose, no move
  auto Z = matrix<double>(40, 6, 0, 41);
  auto res = vec<double>(40, 0, 42);
  const auto p = ember::explain(ember::matmul(ember::transpose(Z), res));
  INFO(p.to_string());
  REQUIRE(count_steps(p, K::transpose) == 0);
  for (const auto& s : p.steps) REQUIRE(!moves_data(s.kind));
  for (const auto& s : p.steps)
    if (s.product && P > 1)
      REQUIRE((s.product->alg == ember::matmul_algorithm::allreduce ||
               s.product->alg == ember::matmul_algorithm::reduce_scatter));
  REQUIRE(count_steps(p, K::matmul) == 1);
}

TEST_CASE("local, reduce_scatter and allreduce read transposed blocks; the others refuse", "[matmul][runtime]") {
  const auto& c = ember::world();
  const int P = c.size();
  std::mt19937_64 rng(9);
  auto uneven = [&](std::int64_t n) {
    ember::index_vec e(std::size_t(P), 0);
    for (std::int64_t i = 0; i < n; ++i) ++e[std::size_t(rng() % std::uint64_t(P))];
    return e;
  };
  // the stored operand of a lazily transposed view: the view's layout transposed
  auto stored = [&](const ember::layout& v) {
    const ember::index_vec s{v.shape()[1], v.shape()[0]};
    return v.split() ? v.with_shape(s, 1 - *v.split()) : ember::replicated_layout(s, P);
  };
  const std::int64_t m = 9, k = 12, n = 4;
  using A = ember::matmul_algorithm;
  for (int trial = 0; trial < 4; ++trial) {
    const ember::layout a0({m, k}, 0, uneven(m)), a1({m, k}, 1, uneven(k)), b1({k, n}, 1, uneven(n));
    const ember::layout arep = ember::replicated_layout({m, k}, P), brep = ember::replicated_layout({k, n}, P);
    const ember::layout crep = ember::replicated_layout({m, n}, P);
    for (int flags = 1; flags < 4; ++flags) {
      const bool ta = flags & 1, tb = flags & 2;
      std::vector<ember::matmul_problem> probs = {
          {A::local, a0, brep, a0.with_shape({m, n}, 0), 8, ta, tb},
          {A::local, arep, b1, b1.with_shape({m, n}, 1), 8, ta, tb},
          {A::local, arep, brep, crep, 8, ta, tb},
          {A::reduce_scatter, a1, a1.with_shape({k, n}, 0), ember::layout({m, n}, 0, uneven(m)), 8, ta, tb},
          {A::allreduce, a1, a1.with_shape({k, n}, 0), crep, 8, ta, tb},
      };
      for (auto& pr : probs) {
        INFO("algorithm " << ember::name(pr.alg) << " trans_a " << ta << " trans_b " << tb << " trial " << trial);
        const auto Ag = test::gathered(matrix<double>(m, k, ember::none, 300 + std::uint64_t(trial)));
        const auto Bg = test::gathered(matrix<double>(k, n, ember::none, 400 + std::uint64_t(trial)));
        auto As = ta ? ember::array(std::span<const double>(transposed_values(Ag, m, k)), std::array<std::int64_t, 2>{k, m})
                     : ember::array(std::span<const double>(Ag), std::array<std::int64_t, 2>{m, k});
        auto Bs = tb ? ember::array(std::span<const double>(transposed_values(Bg, k, n)), std::array<std::int64_t, 2>{n, k})
                     : ember::array(std::span<const double>(Bg), std::array<std::int64_t, 2>{k, n});
        ember::dndarray<double, 2> Al = As.moved_to(ta ? stored(pr.a) : pr.a), Bl = Bs.moved_to(tb ? stored(pr.b) : pr.b);
        ember::dndarray<double, 2> Cl(pr.c, c);
        const auto before = c.sent();
        ember::run_matmul<double>(pr, c, Al.ldata(), Bl.ldata(), Cl.ldata());
        REQUIRE(test::all_ranks(c.sent() - before == ember::matmul_traffic(pr, c.rank())));
        REQUIRE(test::all_ranks(close_to(test::gathered(Cl), serial_product(Ag, Bg, m, k, n), k)));
      }
    }
    const ember::layout b0({k, n}, 0, uneven(k));
    REQUIRE_THROWS_AS(ember::validate({A::ring_b, a0, b0, a0.with_shape({m, n}, 0), 8, true, false}), ember::value_error);
    REQUIRE_THROWS_AS(ember::validate({A::summa, a0, b1, ember::layout::balanced({m, n}, 0, P), 8, false, true}),
                      ember::value_error);
  }
}

TEST_CASE("an addition after the product fuses; expression operands are planned", "[matmul]") {
  for (auto sa : splits)
    for (auto sb : splits) {
      auto A = matrix<double>(12, 8, sa, 1), B = matrix<double>(8, 10, sb, 2), C = matrix<double>(12, 10, sb, 3);
      const auto p = ember::explain(ember::matmul(A, B) + C);
      int kernels = 0, products = 0;
      for (const auto& s : p.steps) {
        kernels += s.kind == ember::planner::step_kind::fused_kernel;
        products += s.kind == ember::planner::step_kind::matmul;
      }
      REQUIRE(products == 1);
      REQUIRE(kernels == 1);  // C + (the product) in one pass after the product
      ember::dndarray<double, 2> D = ember::matmul(A, B) + C;
      REQUIRE(test::all_ranks(trace_matches()));
      auto want = serial_product(test::gathered(A), test::gathered(B), 12, 8, 10);
      const auto Cg = test::gathered(C);
      for (std::size_t i = 0; i < want.size(); ++i) want[i] += Cg[i];
      REQUIRE(test::all_ranks(close_to(test::gathered(D), want, 8)));
      // operands that are expressions
      ember::dndarray<double, 2> E = ember::matmul(A * 2.0 + 1.0, ember::sin(B));
      REQUIRE(test::all_ranks(trace_matches()));
      auto Ag = test::gathered(A), Bg = test::gathered(B);
      for (auto& v : Ag) v = v * 2.0 + 1.0;
      for (auto& v : Bg) v = std::sin(v);
      REQUIRE(test::all_ranks(close_to(test::gathered(E), serial_product(Ag, Bg, 12, 8, 10), 8)));
      // mixed dtypes promote like NumPy: int64 @ float64 -> float64
      auto I = matrix<std::int64_t>(8, 10, sb, 4);
      ember::dndarray<double, 2> F = ember::matmul(A, I);
      std::vector<double> Ig;
      for (auto v : test::gathered(I)) Ig.push_back(double(v));
      REQUIRE(test::all_ranks(close_to(test::gathered(F), serial_product(test::gathered(A), Ig, 12, 8, 10), 8)));
    }
}

TEST_CASE("the planner picks the 2-D algorithm at scale, a 1-D one on 2 ranks", "[matmul][planner]") {
  auto A = ember::zeros<double>({64, 64}, {.split = 0});
  auto B = ember::zeros<double>({64, 64}, {.split = 0});
  // plan_for keeps the operands' split axes and rebalances them for P ranks; the
  // shapes are what the cost model sees, so large shapes are planned from small
  // arrays by giving them the right shape.
  const std::int64_t n = 65536;
  auto Ab = ember::dndarray<double, 2>(ember::layout::balanced({n, n}, 0, ember::world().size()), ember::world(),
                                       std::shared_ptr<double[]>());
  auto big = ember::plan_for(ember::matmul(Ab, Ab), 4096);
  auto small = ember::plan_for(ember::matmul(Ab, Ab), 2);
  auto alg = [](const ember::planner::plan& p) {
    for (const auto& s : p.steps)
      if (s.product) return s.product->alg;
    return ember::matmul_algorithm::local;
  };
  INFO(big.to_string() << small.to_string());
  REQUIRE(alg(big) == ember::matmul_algorithm::summa);
  REQUIRE(alg(small) != ember::matmul_algorithm::summa);
  REQUIRE(big.to_string().find("summa") != std::string::npos);
  REQUIRE(big.to_json().find("\"algorithm\"") != std::string::npos);
  (void)A;
  (void)B;
}

TEST_CASE("bad matmul input raises on every rank", "[matmul][errors]") {
  auto A = matrix<double>(7, 5, 0, 1);
  auto B = matrix<double>(4, 3, 1, 2);
  REQUIRE_THROWS_AS(ember::matmul(A, B), ember::shape_error);
  try {
    (void)ember::matmul(A, B);
  } catch (const ember::shape_error& e) {
    const std::string w = e.what();
    REQUIRE(w.find("(7, 5)") != std::string::npos);
    REQUIRE(w.find("(4, 3)") != std::string::npos);
  }
  auto x = vec<double>(4, 0, 3);
  REQUIRE_THROWS_AS(ember::matmul(A, x), ember::shape_error);
  REQUIRE(test::all_ranks(true));  // nobody is left in a collective
}

// ---- batched matmul: stacks of matrices, NumPy's broadcasting of the batch axes ----

namespace {

template <class T, std::size_t N>
ember::dndarray<T, int(N)> stack(const std::array<std::int64_t, N>& shape, split_axis s, std::uint64_t seed) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  std::vector<T> g(static_cast<std::size_t>(n));
  std::mt19937_64 rng(seed);
  for (auto& x : g) {
    const std::int64_t v = std::int64_t(rng() % 19) - 9;
    if constexpr (ember::is_complex_v<T>) x = T(double(v) / 4, double(std::int64_t(rng() % 7) - 3) / 2);
    else if constexpr (std::is_floating_point_v<T>) x = T(v) / T(4);
    else x = T(v);
  }
  return ember::array(std::span<const T>(g), shape, {.split = s});
}

// NumPy's matmul on gathered row-major data: a 1-D A is (1, k), a 1-D B (k, 1),
// batch axes aligned on the right and broadcast. Written out index by index.
template <class T, class W>
std::vector<W> serial_matmul(const std::vector<T>& a, std::vector<std::int64_t> sa, const std::vector<T>& b,
                             std::vector<std::int64_t> sb) {
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  const std::size_t nc = std::max(sa.size(), sb.size());
  sa.insert(sa.begin(), nc - sa.size(), 1);
  sb.insert(sb.begin(), nc - sb.size(), 1);
  const std::int64_t m = sa[nc - 2], k = sa[nc - 1], n = sb[nc - 1];
  std::vector<std::int64_t> batch(nc - 2);
  std::int64_t nbatch = 1;
  for (std::size_t d = 0; d + 2 < nc; ++d) nbatch *= batch[d] = sa[d] == 1 ? sb[d] : sa[d];
  std::vector<W> c(std::size_t(nbatch * m * n), W(0));
  for (std::int64_t t = 0; t < nbatch; ++t) {
    std::int64_t rem = t, oa = 0, ob = 0, run_a = 1, run_b = 1;
    for (std::size_t d = nc - 2; d-- > 0;) {
      const std::int64_t i = rem % batch[d];
      rem /= batch[d];
      oa += (sa[d] == 1 ? 0 : i) * run_a;
      ob += (sb[d] == 1 ? 0 : i) * run_b;
      run_a *= sa[d];
      run_b *= sb[d];
    }
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        W s = W(0);
        for (std::int64_t l = 0; l < k; ++l)
          s += W(a[std::size_t((oa * m + i) * k + l)]) * W(b[std::size_t((ob * k + l) * n + j)]);
        c[std::size_t((t * m + i) * n + j)] = s;
      }
  }
  return c;
}

template <class T, std::size_t NA, std::size_t NB>
void batched_every_split(const std::array<std::int64_t, NA>& sa, const std::array<std::int64_t, NB>& sb) {
  std::vector<split_axis> spa{split_axis{}}, spb{split_axis{}};
  for (int d = 0; d < int(NA); ++d) spa.push_back(split_axis{d});
  for (int d = 0; d < int(NB); ++d) spb.push_back(split_axis{d});
  using W = std::conditional_t<ember::is_complex_v<T>, std::complex<long double>,
                               std::conditional_t<std::is_floating_point_v<T>, long double, T>>;
  for (auto xa : spa)
    for (auto xb : spb)
      for (const bool uneven : {false, true}) {
        INFO("A " << ember::detail::shape_str(sa) << " split " << (xa ? *xa : -1) << ", B "
                  << ember::detail::shape_str(sb) << " split " << (xb ? *xb : -1) << ", uneven " << uneven
                  << ", dtype " << ember::dtype_name<T>());
        auto A = stack<T>(sa, xa, 3 + NA);
        auto B = stack<T>(sb, xb, 5 + NB);
        if (uneven) {
          test::unbalance(A);
          test::unbalance(B);
        }
        auto C = ember::eval(ember::matmul(A, B));
        REQUIRE(test::all_ranks(trace_matches()));
        const auto want = serial_matmul<T, W>(test::gathered(A), {sa.begin(), sa.end()}, test::gathered(B),
                                              {sb.begin(), sb.end()});
        const auto got = test::gathered(C);
        bool ok = got.size() == want.size();
        const long double tol = std::is_integral_v<T> ? 0.0L : 1e-12L;
        for (std::size_t i = 0; ok && i < got.size(); ++i)
          ok = std::abs(W(got[i]) - want[i]) <= tol * (1 + std::abs(want[i]));
        REQUIRE(test::all_ranks(ok));
      }
}

}  // namespace

TEST_CASE("batched matmul equals NumPy's stacked product for every split pair", "[matmul][batched]") {
  using A3 = std::array<std::int64_t, 3>;
  using A2 = std::array<std::int64_t, 2>;
  using A1 = std::array<std::int64_t, 1>;
  batched_every_split<double>(A3{5, 7, 4}, A3{5, 4, 6});
  batched_every_split<std::int64_t>(A3{5, 7, 4}, A3{5, 4, 6});  // exact
  batched_every_split<double>(std::array<std::int64_t, 4>{3, 1, 5, 4}, A3{2, 4, 6});  // -> (3, 2, 5, 6)
  batched_every_split<std::int64_t>(A3{1, 7, 4}, A3{5, 4, 6});  // a batch of one broadcast
  batched_every_split<double>(A3{5, 7, 4}, A2{4, 6});  // one matrix for every batch
  batched_every_split<std::int64_t>(A2{7, 4}, A3{5, 4, 6});
  batched_every_split<double>(A1{4}, A3{5, 4, 6});  // -> (5, 6)
  batched_every_split<std::int64_t>(A3{5, 7, 4}, A1{4});  // -> (5, 7)
  batched_every_split<std::complex<double>>(A3{3, 4, 5}, A3{3, 5, 2});
  batched_every_split<float>(A3{0, 3, 4}, A3{1, 4, 2});  // an empty batch
  batched_every_split<double>(A3{4, 3, 0}, A3{4, 0, 2});  // k = 0: zeros
  // the result's static rank and shape
  auto x = stack<double>(A3{5, 7, 4}, 0, 1);
  auto v = stack<double>(A1{4}, {}, 2);
  static_assert(decltype(ember::matmul(x, v))::ndim == 2);
  static_assert(decltype(ember::matmul(x, x))::ndim == 3);
  REQUIRE(ember::eval(ember::matmul(x, v)).shape() == A2{5, 7});
}

TEST_CASE("a stack split on a batch axis multiplies with no communication", "[matmul][batched][planner]") {
  using A3 = std::array<std::int64_t, 3>;
  using K = ember::planner::step_kind;
  auto A = stack<double>(A3{8, 6, 5}, 0, 1), B = stack<double>(A3{8, 5, 3}, 0, 2);
  auto W = stack<double>(std::array<std::int64_t, 2>{5, 3}, {}, 3);  // shared weights, replicated
  auto quiet = [](const ember::planner::plan& p) {
    bool batched = false;
    for (const auto& s : p.steps) batched = batched || (s.product && s.product->alg == ember::matmul_algorithm::batched);
    return batched && p.total().bytes == 0 && p.total().messages == 0 && count_steps(p, K::matmul) == 1;
  };
  for (const bool uneven : {false, true}) {
    if (uneven) {  // C keeps the operands' own blocks: still nothing sent
      test::unbalance(A);
      test::unbalance(B);
    }
    const auto p = ember::explain(ember::matmul(A, B));
    INFO(p.to_string());
    REQUIRE(quiet(p));
    REQUIRE(p.to_string().find("by batched") != std::string::npos);
    ember::dndarray<double, 3> C = ember::matmul(A, B);
    REQUIRE(C.split() == split_axis{0});
    REQUIRE(C.lshape_map()[std::size_t(C.comm().rank())][0] == A.lshape_map()[std::size_t(A.comm().rank())][0]);
    REQUIRE(test::all_ranks(trace_matches()));
    REQUIRE(quiet(ember::explain(ember::matmul(A, W))));
    // the elementwise work after the product fuses into one pass, still nothing sent
    const auto pf = ember::explain(ember::matmul(A, B) * 2.0 + 1.0);
    REQUIRE(count_steps(pf, K::fused_kernel) == 1);
    REQUIRE(pf.total().bytes == 0);
    ember::dndarray<double, 3> D = ember::matmul(A, B) * 2.0 + 1.0;
    auto want = serial_matmul<double, long double>(test::gathered(A), {8, 6, 5}, test::gathered(B), {8, 5, 3});
    const auto got = test::gathered(D);
    bool ok = got.size() == want.size();
    for (std::size_t i = 0; ok && i < got.size(); ++i) ok = std::fabs(got[i] - double(want[i] * 2 + 1)) < 1e-12;
    REQUIRE(test::all_ranks(ok));
  }
  // rows split with one matrix for every batch: the rows stay where they are
  auto R = stack<double>(A3{4, 9, 5}, 1, 4);
  const auto pr = ember::explain(ember::matmul(R, W));
  REQUIRE(pr.total().bytes == 0);
  // at scale: 4096 ranks, a stack of 65536 matrices split on the batch axis
  auto big = ember::dndarray<double, 3>(ember::layout::balanced({65536, 64, 64}, 0, ember::world().size()),
                                        ember::world(), std::shared_ptr<double[]>());
  const auto ps = ember::plan_for(ember::matmul(big, big), 4096);
  INFO(ps.to_string());
  REQUIRE(quiet(ps));
}

TEST_CASE("bad batched matmul input raises on every rank, naming the shapes", "[matmul][batched][errors]") {
  using A3 = std::array<std::int64_t, 3>;
  auto A = stack<double>(A3{5, 7, 4}, 0, 1);
  auto B = stack<double>(A3{3, 4, 6}, 0, 2);  // batch 5 vs 3
  auto C = stack<double>(A3{5, 3, 6}, 0, 3);  // k 4 vs 3
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const ember::shape_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string wb = message([&] { (void)ember::matmul(A, B); });
  REQUIRE(wb.find("(5, 7, 4)") != std::string::npos);
  REQUIRE(wb.find("broadcast") != std::string::npos);
  const std::string wk = message([&] { (void)ember::matmul(A, C); });
  REQUIRE(wk.find("(5, 3, 6)") != std::string::npos);
  REQUIRE(wk.find("not aligned") != std::string::npos);
  REQUIRE(test::all_ranks(true));  // nobody is left in a collective
}
