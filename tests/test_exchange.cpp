// The exchange engine and everything built on it: redistribute_, resplit_,
// balance_, resplit to none. Every move is checked bit for bit against a serial
// reference computed without ember's communication (the generator evaluated on the
// global index range), and the traffic counters against the engine's prediction.
#include <algorithm>
#include <random>

#include "common.hpp"
#include "runtime/memory_pool.hpp"

using ember::index_vec;
using ember::layout;

namespace {

// The global array a seeded randn would produce, computed serially.
std::vector<double> reference(std::uint64_t seed, std::uint64_t call, std::int64_t n) {
  std::vector<double> v(std::size_t(std::max<std::int64_t>(n, 1)));
  ember::rng::fill_normal(v.data(), n, {seed, call}, 0, 0.0, 1.0);
  v.resize(std::size_t(n));
  return v;
}

// My block of the global row-major array `g` under layout `l`.
std::vector<double> block_of(const std::vector<double>& g, const layout& l, int rank) {
  std::vector<double> out(std::size_t(l.local_size(rank)));
  ember::for_each_global_run(l, rank, [&](std::int64_t lo, std::int64_t go, std::int64_t n) {
    std::copy_n(g.begin() + go, n, out.begin() + lo);
  });
  return out;
}

template <int N>
bool local_matches(const ember::dndarray<double, N>& a, const std::vector<double>& g) {
  auto want = block_of(g, a.layout(), a.comm().rank());
  return a.lnumel() == std::int64_t(want.size()) &&
         (want.empty() || std::memcmp(want.data(), a.ldata(), want.size() * sizeof(double)) == 0);
}

// Runs f (a move) and checks that this rank's counters grew by `predicted`.
template <class F>
bool counters_match(const ember::communicator& c, ember::traffic predicted, F&& f) {
  const auto before = c.sent();
  f();
  return (c.sent() - before) == predicted;
}

template <int N>
void random_moves(const std::array<std::int64_t, N>& shape, std::uint64_t seed, int steps) {
  const auto& w = ember::world();
  const int P = w.size();
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  ember::random::seed(seed);
  auto a = ember::random::randn<double>(shape, {.split = 0});
  const auto ref = reference(seed, 0, n);
  REQUIRE(test::all_ranks(local_matches(a, ref)));
  std::mt19937_64 gen(seed);  // same sequence on every rank: moves are replicated
  for (int s = 0; s < steps; ++s) {
    const int kind = int(gen() % 4);
    layout target = a.layout();
    if (kind == 0 || !a.split()) {  // resplit to a random axis or none
      const int ax = int(gen() % (N + 1));
      target = a.resplit_target(ax == N ? ember::split_axis{} : ember::split_axis{ax});
    } else if (kind == 1) {  // random extents along the current axis
      const int k = *a.split();
      index_vec e(P, 0);
      for (std::int64_t i = 0; i < shape[k]; ++i) ++e[gen() % P];
      target = layout(a.layout().shape(), k, e);
    } else if (kind == 2) {
      target = layout::balanced(a.layout().shape(), a.split(), P);
    } else {  // everything on one rank
      const int k = *a.split();
      index_vec e(P, 0);
      e[gen() % P] = shape[k];
      target = layout(a.layout().shape(), k, e);
    }
    const auto predicted = a.plan_move(target).predicted();
    INFO("step " << s << " from split " << ember::detail::axis_str(a.split()) << " to split "
                 << ember::detail::axis_str(target.split()) << " extents "
                 << ember::detail::shape_str(target.extents()));
    const bool counted = counters_match(w, predicted, [&] { a.move_to(target); });
    REQUIRE(test::all_ranks(counted));
    REQUIRE(a.layout() == target);
    REQUIRE(test::all_ranks(local_matches(a, ref)));
  }
}

}  // namespace

TEST_CASE("balanced split follows Heat: 7 rows over 4 ranks are 2,2,2,1", "[layout]") {
  CHECK(layout::balanced_extents(7, 4) == index_vec{2, 2, 2, 1});
  CHECK(layout::balanced_extents(10, 4) == index_vec{3, 3, 2, 2});
  CHECK(layout::balanced_extents(3, 4) == index_vec{1, 1, 1, 0});
  CHECK(layout::balanced_extents(0, 3) == index_vec{0, 0, 0});
  auto l = layout::balanced({7, 4, 3}, 0, 4);
  CHECK(l.lshape_map() == std::vector<index_vec>{{2, 4, 3}, {2, 4, 3}, {2, 4, 3}, {1, 4, 3}});
  CHECK(l.offset(3) == 6);
  CHECK(l.is_balanced());
}

TEST_CASE("the seed tutorial, step by step", "[tutorial]") {
  const auto& w = ember::world();
  const int P = w.size();
  ember::random::seed(1);
  auto a = ember::random::randn<float>({7, 4, 3}, {.split = 0});
  const auto original = test::gathered(a);
  CHECK(a.shape() == std::array<std::int64_t, 3>{7, 4, 3});
  CHECK(a.comm().size() == P);
  auto map = a.lshape_map();
  REQUIRE(int(map.size()) == P);
  auto e = layout::balanced_extents(7, P);
  for (int r = 0; r < P; ++r) CHECK(map[r] == std::array<std::int64_t, 3>{e[r], 4, 3});
  if (P == 4) {
    CHECK(map == decltype(map){{2, 4, 3}, {2, 4, 3}, {2, 4, 3}, {1, 4, 3}});
    CHECK(a.lshape() == std::array<std::int64_t, 3>{w.rank() == 3 ? 1 : 2, 4, 3});
  }

  // redistribute_ to [1, 2, 2, 2] (at P ranks: the first rank gives a row away)
  auto target = a.lshape_map();
  if (P > 1) {
    std::vector<std::int64_t> ext(P, 0);
    ext[0] = 1;
    std::int64_t left = 6;
    for (int r = 1; r < P; ++r) ext[r] = left / (P - 1) + (r - 1 < left % (P - 1) ? 1 : 0);
    for (int r = 0; r < P; ++r) target[r][0] = ext[r];
    if (P == 4) CHECK(ext == std::vector<std::int64_t>{1, 2, 2, 2});
  }
  a.redistribute_(target);
  CHECK(a.lshape_map() == target);
  CHECK(test::bit_equal(test::gathered(a), original));

  a.resplit_(1);
  CHECK(a.split() == 1);
  auto e1 = layout::balanced_extents(4, P);
  for (int r = 0; r < P; ++r) CHECK(a.lshape_map()[r] == std::array<std::int64_t, 3>{7, e1[r], 3});
  if (P == 4)
    for (int r = 0; r < P; ++r) CHECK(a.lshape_map()[r] == std::array<std::int64_t, 3>{7, 1, 3});
  CHECK(test::bit_equal(test::gathered(a), original));

  a.resplit_(ember::none);
  CHECK(!a.split());
  CHECK(a.lshape() == std::array<std::int64_t, 3>{7, 4, 3});
  // every rank holds the identical whole array
  std::vector<float> mine(a.ldata(), a.ldata() + a.lnumel());
  CHECK(test::bit_equal(mine, original));
  auto from0 = mine;
  w.bcast(from0.data(), std::int64_t(from0.size()), 0);
  CHECK(test::all_ranks(test::bit_equal(mine, from0)));

  // ember::array(a, split=0) makes it split again: no communication
  const auto before = w.sent();
  Eigen::Tensor<float, 3, Eigen::RowMajor> whole = a.larray();
  auto b = ember::array(whole, {.split = 0});
  CHECK(w.sent() == before);
  CHECK(b.split() == 0);
  CHECK(test::bit_equal(test::gathered(b), original));
}

TEST_CASE("array(local, is_split) joins per-rank blocks", "[tutorial]") {
  const auto& w = ember::world();
  const int P = w.size();
  Eigen::Tensor<double, 2, Eigen::RowMajor> local(3, 4);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) local(i, j) = 100.0 * w.rank() + 10 * i + j;
  auto a0 = ember::array(local, {.is_split = 0});
  CHECK(a0.shape() == std::array<std::int64_t, 2>{3 * P, 4});
  CHECK(a0.split() == 0);
  auto g = test::gathered(a0);
  for (int r = 0; r < P; ++r)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) CHECK(g[std::size_t((3 * r + i) * 4 + j)] == 100.0 * r + 10 * i + j);
  auto a1 = ember::array(local, {.is_split = 1});
  CHECK(a1.shape() == std::array<std::int64_t, 2>{3, 4 * P});
  auto g1 = test::gathered(a1);
  for (int r = 0; r < P; ++r)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) CHECK(g1[std::size_t(i * 4 * P + 4 * r + j)] == 100.0 * r + 10 * i + j);

  // blocks may differ along the split axis only: rank r has r+1 rows
  Eigen::Tensor<double, 2, Eigen::RowMajor> uneven(w.rank() + 1, 2);
  uneven.setConstant(double(w.rank()));
  auto u = ember::array(uneven, {.is_split = 0});
  CHECK(u.shape()[0] == P * (P + 1) / 2);
  CHECK(u.lshape()[0] == w.rank() + 1);
}

TEST_CASE("the tutorial's exercise: 10x4, resplit to 1, redistribute to [1,3,3,3]", "[tutorial]") {
  const auto& w = ember::world();
  const int P = w.size();
  auto A = ember::random::randn<double>({10, 4}, {.split = 0});
  auto B = A.copy();
  B.resplit_(1);
  CHECK(B.split() == 1);
  CHECK(B.lshape() == std::array<std::int64_t, 2>{10, layout::balanced_extents(4, P)[w.rank()]});
  auto map = A.lshape_map();
  std::vector<std::int64_t> ext(P, 0);
  if (P == 1) ext[0] = 10;
  else {
    ext[0] = 1;  // rank 0 holds 1 row, the other 9 are balanced over the others
    auto rest = layout::balanced_extents(9, P - 1);
    for (int r = 1; r < P; ++r) ext[r] = rest[r - 1];
  }
  for (int r = 0; r < P; ++r) map[r][0] = ext[r];
  auto C = A.copy();
  C.redistribute_(map);
  if (P == 4) CHECK(C.lshape() == std::array<std::int64_t, 2>{w.rank() == 0 ? 1 : 3, 4});
  CHECK(C.lshape_map() == map);
  CHECK(A.split() == 0);
  CHECK(A.is_balanced());
  const auto ga = test::gathered(A);
  CHECK(test::bit_equal(ga, test::gathered(B)));
  CHECK(test::bit_equal(ga, test::gathered(C)));
}

TEST_CASE("random chains of moves keep the array bit-identical; counters equal predictions", "[exchange]") {
  random_moves<1>({13}, 11, 12);
  random_moves<2>({9, 7}, 12, 16);
  random_moves<3>({7, 4, 3}, 13, 16);
  random_moves<3>({2, 5, 6}, 14, 16);  // fewer rows than ranks at 3 and 4
  random_moves<4>({3, 2, 5, 4}, 15, 16);
  random_moves<2>({0, 5}, 16, 6);      // empty
}

TEST_CASE("messages above the size limit are chunked, staging stays bounded", "[exchange]") {
  auto saved = ember::config();
  ember::config().max_message_bytes = 1000;  // a few rows of the arrays below
  ember::config().staging_bytes = 200;
  random_moves<2>({37, 29}, 21, 16);
  random_moves<3>({11, 6, 7}, 22, 16);
  // a typed collective above the limit
  const auto& w = ember::world();
  std::vector<double> v(1000, 1.0);
  w.allreduce(v.data(), std::int64_t(v.size()), ember::reduce_op::sum);
  CHECK(v[999] == double(w.size()));
  std::vector<std::int64_t> big(777);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = std::int64_t(i) * (w.rank() + 1);
  auto all = w.allgather(big.data(), std::int64_t(big.size()));
  bool ok = true;
  for (int r = 0; r < w.size(); ++r)
    for (std::size_t i = 0; i < big.size(); ++i) ok = ok && all[r * big.size() + i] == std::int64_t(i) * (r + 1);
  CHECK(ok);
  // staging is bounded by the configured size, not by the array
  auto a = ember::random::randn<double>({64, 64}, {.split = 0});
  auto ex = a.plan_move(a.resplit_target(1));
  CHECK(ex.staging_bytes() <= 2 * 200);
  ember::config() = saved;
}

TEST_CASE("redistribute_ moving one boundary sends only the rows that change owner", "[exchange]") {
  const auto& w = ember::world();
  const int P = w.size();
  if (P < 2) return;
  auto a = ember::random::randn<double>({7, 4, 3}, {.split = 0});
  const auto orig = test::gathered(a);
  auto map = a.lshape_map();
  // one row moves from rank P-2 to rank P-1
  map[P - 2][0] -= 1;
  map[P - 1][0] += 1;
  const auto before = w.sent();
  a.redistribute_(map);
  const auto sent = w.sent() - before;
  const std::int64_t row = 4 * 3 * sizeof(double);
  if (w.rank() == P - 2) CHECK(sent == ember::traffic{row, 1});
  else CHECK(sent == ember::traffic{0, 0});
  CHECK(test::bit_equal(test::gathered(a), orig));
}

TEST_CASE("predictions for every rank agree with what each rank measures", "[exchange]") {
  const auto& w = ember::world();
  auto a = ember::random::randn<double>({11, 6}, {.split = 0});
  const auto target = a.resplit_target(1);
  const auto all = ember::predict_exchange(a.layout(), target, sizeof(double));
  const auto before = w.sent();
  a.move_to(target);
  CHECK((w.sent() - before) == all[w.rank()]);
}

TEST_CASE("bad target maps and axes raise ember::error on every rank", "[errors]") {
  const auto& w = ember::world();
  const int P = w.size();
  auto a = ember::random::randn<double>({7, 4, 3}, {.split = 0});
  auto map = a.lshape_map();

  auto sum_wrong = map;
  sum_wrong[0][0] += 1;
  REQUIRE_THROWS_AS(a.redistribute_(sum_wrong), ember::shape_error);
  try {
    a.redistribute_(sum_wrong);
  } catch (const ember::error& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("sum to 8") != std::string::npos);
    CHECK(std::string(e.what()).find("(7, 4, 3)") != std::string::npos);
  }
  auto rows = map;
  rows.push_back(map[0]);
  REQUIRE_THROWS_AS(a.redistribute_(rows), ember::value_error);
  auto neg = map;
  neg[0][0] = -1;
  neg[P - 1][0] += 1 + map[0][0];
  if (P > 1) REQUIRE_THROWS_AS(a.redistribute_(neg), ember::value_error);
  auto off_axis = map;
  off_axis[0][1] = 5;
  REQUIRE_THROWS_AS(a.redistribute_(off_axis), ember::shape_error);
  REQUIRE_THROWS_AS(a.resplit_(3), ember::axis_error);
  REQUIRE_THROWS_AS(a.resplit_(-1), ember::axis_error);
  REQUIRE_THROWS_AS(ember::random::randn<double>({4, 4}, {.split = 2}), ember::axis_error);
  // nothing was moved by the failed calls, and the array still works collectively
  CHECK(a.lshape_map() == map);
  a.resplit_(1);
  CHECK(a.split() == 1);
  auto r = ember::resplit(a, ember::none);
  CHECK(r.numel() == 84);
}

TEST_CASE("is_split blocks that disagree raise the same error on every rank", "[errors]") {
  const auto& w = ember::world();
  const int P = w.size();
  // off-axis extents differ on the last rank
  Eigen::Tensor<double, 2, Eigen::RowMajor> t(2, w.rank() == P - 1 && P > 1 ? 5 : 4);
  t.setZero();
  if (P > 1) {
    std::string msg;
    try {
      ember::array(t, {.is_split = 0});
    } catch (const ember::shape_error& e) {
      msg = e.what();
    }
    CHECK(msg.find("rank " + std::to_string(P - 1)) != std::string::npos);
    CHECK(msg.find("axis 1") != std::string::npos);
    // every rank got the same message
    std::int64_t len = std::int64_t(msg.size());
    CHECK(w.allreduce(len, ember::reduce_op::min) == w.allreduce(len, ember::reduce_op::max));
    CHECK(len > 0);
  }
  // mismatched dtypes across ranks
  if (P > 1) {
    bool threw = false;
    try {
      if (w.rank() == 0) {
        Eigen::Tensor<float, 1, Eigen::RowMajor> f(2);
        f.setZero();
        ember::array(f, {.is_split = 0});
      } else {
        Eigen::Tensor<double, 1, Eigen::RowMajor> d(2);
        d.setZero();
        ember::array(d, {.is_split = 0});
      }
    } catch (const ember::type_error& e) {
      threw = std::string(e.what()).find("float32") != std::string::npos;
    }
    CHECK(test::all_ranks(threw));
  }
  // an is_split axis beyond the rank, and split together with is_split
  Eigen::Tensor<double, 2, Eigen::RowMajor> ok(2, 2);
  ok.setZero();
  REQUIRE_THROWS_AS(ember::array(ok, {.is_split = 2}), ember::axis_error);
  REQUIRE_THROWS_AS(ember::array(ok, {.split = 0, .is_split = 0}), ember::value_error);
  // joining still works afterwards (no rank left in a collective)
  auto j = ember::array(ok, {.is_split = 0});
  CHECK(j.shape()[0] == 2 * P);
}

TEST_CASE("a communicator of the host code is duplicated, not used", "[runtime]") {
  ember::communicator c(MPI_COMM_WORLD);
  CHECK(c.native() != MPI_COMM_WORLD);
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(c.native(), MPI_COMM_WORLD, &cmp);
  CHECK(cmp == MPI_CONGRUENT);
  CHECK(c.size() == ember::world().size());
  auto a = ember::zeros<double>({5, 2}, {.split = 0, .comm = c});
  CHECK(&a.comm() != &ember::world());
  CHECK(a.comm() == c);
  // a split communicator: arrays live on a subset of the ranks
  MPI_Comm half;
  const int color = ember::world().rank() % 2;
  MPI_Comm_split(MPI_COMM_WORLD, color, 0, &half);
  {
    ember::communicator h(half);
    auto b = ember::arange<std::int64_t>(0, 10, 1, {.split = 0, .comm = h});
    auto g = test::gathered(b);
    bool ok = g.size() == 10;
    for (std::size_t i = 0; i < g.size(); ++i) ok = ok && g[i] == std::int64_t(i);
    CHECK(ok);
  }
  MPI_Comm_free(&half);
}

TEST_CASE("MPI errors become ember::communication_error", "[runtime]") {
  const auto& w = ember::world();
  MPI_Request req;
  double x = 0;
  // an invalid peer rank: MPI returns an error on ember's duplicate instead of aborting
  REQUIRE_THROWS_AS(w.irecv_bytes(&x, 8, w.size() + 5, 0, &req), ember::communication_error);
}

TEST_CASE("steady-state loops of moves and expressions allocate nothing after the first iteration", "[exchange][memory]") {
  // 2048 x 64 doubles: every rank's block is at least 64 KiB at 1-4 ranks (pooled)
  auto X = ember::random::randn<double>({2048, 64}, {.split = 0});
  const auto Xg = test::gathered(X);
  ember::dndarray<double, 2> Y, G, Z;
  auto step = [&] {
    Y = ember::resplit(X, 1);
    G = ember::resplit(X, ember::none);
    Z = X * 2.0 + 1.0;  // a new array each time (not assigned into an existing one)
    ember::dndarray<double, 2> B = ember::balance(Y);  // a temporary that dies in the loop
    (void)B;
  };
  step();
  step();  // the pool now holds one block of every size the loop frees
  const auto before = ember::allocations().count;
  const auto reused = ember::pool_stats().reused;
  for (int i = 0; i < 5; ++i) step();
  if (ember::memory_pool_limit() > 0) {  // off under AddressSanitizer (use-after-free checks)
    CHECK(test::all_ranks(ember::allocations().count == before));
    CHECK(test::all_ranks(ember::pool_stats().reused > reused));
  }
  // and the pooled blocks hold the right data
  CHECK(test::all_ranks(test::gathered(Y) == Xg));
  CHECK(test::all_ranks(test::gathered(G) == Xg));
  auto Zg = test::gathered(Z);
  bool ok = Zg.size() == Xg.size();
  for (std::size_t i = 0; ok && i < Zg.size(); ++i) ok = Zg[i] == Xg[i] * 2.0 + 1.0;
  CHECK(test::all_ranks(ok));
  CHECK(Y.split() == ember::split_axis{1});
  // a limit of 0 turns the pool off and gives its blocks back
  const auto saved = ember::memory_pool_limit();
  ember::release_memory_pool();
  CHECK(ember::pool_stats().cached_bytes == 0);
  ember::memory_pool_limit() = 0;
  const auto before_off = ember::allocations().count;
  step();
  CHECK(test::all_ranks(ember::allocations().count > before_off));
  ember::memory_pool_limit() = saved;
}

TEST_CASE("copyto writes into the destination's storage, whatever its layout", "[exchange][memory]") {
  const auto& w = ember::world();
  const int P = w.size();
  // 2048 x 64 doubles: every rank's block is at least 64 KiB at 1-4 ranks (pooled staging)
  auto X = ember::random::randn<double>({2048, 64}, {.split = 0});
  const auto Xg = test::gathered(X);
  auto Y = ember::zeros<double>({2048, 64}, {.split = 1});
  const ember::dndarray<double, 2> alias = Y;  // another handle of Y's storage
  const double* block = Y.lstorage();
  const auto predicted = X.plan_move(Y.layout()).predicted();
  const auto sent = w.sent();
  ember::copyto(Y, X);
  // exactly the exchange of resplit(X, 1), into Y's own blocks
  CHECK(test::all_ranks(w.sent() - sent == predicted));
  CHECK(test::all_ranks(Y.lstorage() == block));
  CHECK(Y.split() == ember::split_axis{1});
  CHECK(test::all_ranks(test::gathered(alias) == Xg));
  // in a loop: no allocation after the first iterations (staging from the pool)
  auto G = ember::zeros<double>({2048, 64}, {.split = ember::none});
  auto step = [&] {
    ember::copyto(Y, X);
    ember::copyto(G, X);
  };
  step();
  step();
  const auto before = ember::allocations().count;
  for (int i = 0; i < 4; ++i) step();
  if (ember::memory_pool_limit() > 0) CHECK(test::all_ranks(ember::allocations().count == before));
  CHECK(test::all_ranks(test::gathered(Y) == Xg));
  CHECK(test::all_ranks(G.lnumel() == 2048 * 64));
  bool ok = true;
  for (std::int64_t i = 0; i < G.lnumel(); ++i) ok = ok && G.ldata()[i] == Xg[std::size_t(i)];
  CHECK(test::all_ranks(ok));

  // an expression, broadcasting (a row into every row), a scalar, a cast
  ember::copyto(Y, X * 2.0 - 1.0);
  auto Yg = test::gathered(Y);
  ok = true;
  for (std::size_t i = 0; i < Yg.size(); ++i) ok = ok && Yg[i] == Xg[i] * 2.0 - 1.0;
  CHECK(test::all_ranks(ok));
  auto row = ember::arange<double>(0.0, 64.0, 1.0, {.split = 0});
  ember::copyto(Y, row);
  Yg = test::gathered(Y);
  ok = true;
  for (std::size_t i = 0; i < Yg.size(); ++i) ok = ok && Yg[i] == double(i % 64);
  CHECK(test::all_ranks(ok));
  ember::copyto(Y, 3.5);
  Yg = test::gathered(Y);
  CHECK(test::all_ranks(std::all_of(Yg.begin(), Yg.end(), [](double v) { return v == 3.5; })));
  auto F = ember::zeros<float>({2048, 64}, {.split = 1});
  ember::copyto(F, X);  // float64 -> float32: a same_kind cast
  const auto Fg = test::gathered(F);
  ok = true;
  for (std::size_t i = 0; i < Fg.size(); ++i) ok = ok && Fg[i] == float(Xg[i]);
  CHECK(test::all_ranks(ok));
  auto I = ember::zeros<std::int64_t>({2048, 64}, {.split = 0});
  auto J = ember::arange<std::int32_t>(0, 2048 * 64, 1, {.split = 0});
  ember::copyto(I, ember::reshape(J, {2048, 64}));  // int32 -> int64
  const auto Ig = test::gathered(I);
  ok = true;
  for (std::size_t i = 0; i < Ig.size(); ++i) ok = ok && Ig[i] == std::int64_t(i);
  CHECK(test::all_ranks(ok));

  // the source is the destination, transposed (NumPy buffers the overlap)
  auto S = ember::random::randn<double>({96, 96}, {.split = 0});
  const auto Sg = test::gathered(S);
  ember::copyto(S, ember::transpose(S));
  const auto Tg = test::gathered(S);
  ok = true;
  for (int i = 0; i < 96; ++i)
    for (int j = 0; j < 96; ++j) ok = ok && Tg[std::size_t(i * 96 + j)] == Sg[std::size_t(j * 96 + i)];
  CHECK(test::all_ranks(ok));

  // shapes that do not broadcast: the same shape_error on every rank
  auto small = ember::zeros<double>({3, 5}, {.split = 0});
  REQUIRE_THROWS_AS(ember::copyto(small, ember::zeros<double>({4, 5}, {.split = 0})), ember::shape_error);
  REQUIRE_THROWS_AS(ember::copyto(small, ember::zeros<double>({5, 3}, {.split = 1})), ember::shape_error);
  (void)P;
}

TEST_CASE("EMBER_CHECK_TRAFFIC names the rank and step whose counters differ from the plan", "[exchange][traffic]") {
  const auto& w = ember::world();
  const int P = w.size();
  using ember::planner::step_kind;
  std::vector<ember::step_trace> t = {{step_kind::fused_kernel, {}, {}},
                                      {step_kind::resplit, {4096, 2}, {4096, 2}},
                                      {step_kind::allreduce, {16, 1}, {16, 1}}};
  CHECK_NOTHROW(ember::detail::check_traffic(w, t));
  if (w.rank() == P - 1) t[1].measured = {4000, 2};  // one rank's counters disagree
  std::string msg;
  try {
    ember::detail::check_traffic(w, t);
  } catch (const ember::error& e) {
    msg = e.what();
  }
  const std::string want = "rank " + std::to_string(P - 1) + ": step 2 of 3 (resplit) sent 4000 B in 2 messages, the plan predicted 4096 B in 2";
  CHECK(test::all_ranks(msg.find(want) != std::string::npos));
  // and a real program under the check: moves, a reduction, a product
  setenv("EMBER_CHECK_TRAFFIC", "1", 1);
  auto A = ember::random::randn<double>({300, 40}, {.split = 0});
  ember::dndarray<double, 2> B = ember::resplit(A, 1) * 2.0;
  ember::dndarray<double, 2> C = ember::matmul(ember::transpose(A), A) + 1.0;
  auto s = ember::eval(ember::sum(A * A, 0));
  unsetenv("EMBER_CHECK_TRAFFIC");
  CHECK(C.shape()[0] == 40);
  CHECK(s.shape()[0] == 40);
  CHECK(B.shape()[1] == 40);
}
