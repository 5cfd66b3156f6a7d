// nvmath's jobs: box-to-box reshape (ember::reshape_boxes) and symmetric memory
// (ember::allocate_symmetric). Run at 1-4 ranks; every rank-dependent truth goes
// through test::all_ranks.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common.hpp"

namespace {

const ember::communicator& W() { return ember::world(); }

template <std::size_t N>
using boxes = std::vector<ember::box<N>>;

// A random tiling of `g` into `parts` boxes (some may be empty): recursive cuts
// at random positions along random axes, then shuffled over the ranks. The same
// seed gives the same tiling on every rank.
template <std::size_t N>
void cut(const ember::box<N>& b, int parts, std::mt19937_64& rng, boxes<N>& out) {
  if (parts == 1) {
    out.push_back(b);
    return;
  }
  const int left = std::uniform_int_distribution<int>(1, parts - 1)(rng);
  const std::size_t axis = std::uniform_int_distribution<std::size_t>(0, N - 1)(rng);
  const std::int64_t at = std::uniform_int_distribution<std::int64_t>(b.lo[axis], b.hi[axis])(rng);
  auto l = b, r = b;
  l.hi[axis] = at;
  r.lo[axis] = at;
  cut(l, left, rng, out);
  cut(r, parts - left, rng, out);
}
template <std::size_t N>
boxes<N> random_tiling(const ember::box<N>& g, int parts, std::mt19937_64& rng) {
  boxes<N> out;
  cut(g, parts, rng, out);
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

// The serial reference: the global array's value at a global index.
template <std::size_t N>
double value_at(const std::array<std::int64_t, N>& idx) {
  double v = 0;
  for (std::size_t d = 0; d < N; ++d) v = v * 1000.0 + double(idx[d]) + 0.25 * double(d);
  return v;
}
// A box of the global array, row-major: what a rank holding it must have.
template <std::size_t N>
std::vector<double> extract(const ember::box<N>& b) {
  std::vector<double> v;
  if (b.volume() == 0) return v;
  std::array<std::int64_t, N> idx = b.lo;
  while (true) {
    v.push_back(value_at<N>(idx));
    std::size_t d = N;
    while (d-- > 0) {
      if (++idx[d] < b.hi[d]) break;
      idx[d] = b.lo[d];
      if (d == 0) return v;
    }
  }
}

template <std::size_t N>
void round_trips(const ember::box<N>& global, int trials, std::uint64_t seed) {
  const int P = W().size(), me = W().rank();
  std::mt19937_64 rng(seed);
  for (int t = 0; t < trials; ++t) {
    const auto in = random_tiling(global, P, rng);
    const auto out = random_tiling(global, P, rng);
    const auto a = extract(in[std::size_t(me)]);
    const auto b = ember::reshape_boxes(a, in[std::size_t(me)], out[std::size_t(me)]);
    const auto c = ember::reshape_boxes(b, out[std::size_t(me)], in[std::size_t(me)]);
    INFO("N=" << N << " trial " << t << " rank " << me);
    // out holds exactly the serial reference's values of its box, and the way
    // back restores the original, bit for bit
    REQUIRE(test::all_ranks(b == extract(out[std::size_t(me)])));
    REQUIRE(test::all_ranks(c == a));
  }
}

}  // namespace

TEST_CASE("reshape_boxes: nvmath's 4x4 column-to-row example", "[boxes]") {
  const int P = W().size(), me = W().rank();
  // Columns split over the ranks (rank r's columns hold the value r: rank 0
  // zeros, rank 1 ones, as in the seed), rows split for the output.
  const auto cols = ember::layout::balanced_extents(4, P);
  const auto rows = ember::layout::balanced_extents(4, P);
  std::int64_t c0 = 0, r0 = 0;
  for (int r = 0; r < me; ++r) {
    c0 += cols[std::size_t(r)];
    r0 += rows[std::size_t(r)];
  }
  const ember::box<2> in{{0, c0}, {4, c0 + cols[std::size_t(me)]}};
  const ember::box<2> out{{r0, 0}, {r0 + rows[std::size_t(me)], 4}};
  std::vector<double> A(std::size_t(in.volume()), double(me));
  const auto B = ember::reshape_boxes(A, in, out);
  // column j's owner under the balanced column split
  std::vector<double> owner(4);
  for (int r = 0, j = 0; r < P; ++r)
    for (std::int64_t k = 0; k < cols[std::size_t(r)]; ++k) owner[std::size_t(j++)] = r;
  std::vector<double> want;
  for (std::int64_t i = 0; i < rows[std::size_t(me)]; ++i) want.insert(want.end(), owner.begin(), owner.end());
  REQUIRE(test::all_ranks(B == want));
  if (P == 2) {  // the seed's printed values, on both ranks: [[0 0 1 1] [0 0 1 1]]
    REQUIRE(test::all_ranks(B == std::vector<double>{0, 0, 1, 1, 0, 0, 1, 1}));
  }
}

TEST_CASE("reshape_boxes: random tilings round-trip in 1-D, 2-D and 3-D", "[boxes]") {
  round_trips<1>({{0}, {97}}, 12, 1);
  round_trips<1>({{-40}, {3}}, 6, 2);  // the global box need not start at 0
  round_trips<2>({{0, 0}, {13, 17}}, 12, 3);
  round_trips<2>({{5, -3}, {9, 20}}, 6, 4);
  round_trips<3>({{0, 0, 0}, {6, 7, 5}}, 12, 5);
  round_trips<3>({{1, 2, 3}, {4, 12, 9}}, 6, 6);
}

TEST_CASE("reshape_boxes: traffic is what the engine predicted", "[boxes]") {
  const int P = W().size(), me = W().rank();
  std::mt19937_64 rng(77);
  const ember::box<3> g{{0, 0, 0}, {8, 9, 10}};
  const auto in = random_tiling(g, P, rng);
  const auto out = random_tiling(g, P, rng);
  ember::box_reshape plan(in[std::size_t(me)].to_nd(), out[std::size_t(me)].to_nd(), sizeof(double), W());
  const auto a = extract(in[std::size_t(me)]);
  std::vector<double> b(std::size_t(plan.out_size()));
  const auto before = W().sent();
  plan.run(a.data(), b.data());
  const auto sent = W().sent() - before;
  REQUIRE(test::all_ranks(sent == plan.predicted()));
  REQUIRE(test::all_ranks(b == extract(out[std::size_t(me)])));
  // and again: the stateful form runs as often as needed
  std::fill(b.begin(), b.end(), 0.0);
  plan.run(a.data(), b.data());
  REQUIRE(test::all_ranks(b == extract(out[std::size_t(me)])));
}

TEST_CASE("reshape_boxes: Eigen tensors and integer elements", "[boxes]") {
  const int P = W().size(), me = W().rank();
  // rows split on input, the last axis split on output
  const auto rx = ember::layout::balanced_extents(6, P), cx = ember::layout::balanced_extents(5, P);
  std::int64_t r0 = 0, c0 = 0;
  for (int r = 0; r < me; ++r) r0 += rx[std::size_t(r)], c0 += cx[std::size_t(r)];
  const ember::box<3> in{{r0, 0, 0}, {r0 + rx[std::size_t(me)], 4, 5}};
  const ember::box<3> out{{0, 0, c0}, {6, 4, c0 + cx[std::size_t(me)]}};
  Eigen::Tensor<std::int32_t, 3, Eigen::RowMajor> t(rx[std::size_t(me)], 4, 5);
  for (Eigen::Index i = 0; i < t.dimension(0); ++i)
    for (Eigen::Index j = 0; j < 4; ++j)
      for (Eigen::Index k = 0; k < 5; ++k) t(i, j, k) = std::int32_t((r0 + i) * 100 + j * 10 + k);
  const auto u = ember::reshape_boxes(t, in, out);
  bool ok = u.dimension(0) == 6 && u.dimension(1) == 4 && u.dimension(2) == cx[std::size_t(me)];
  for (Eigen::Index i = 0; ok && i < 6; ++i)
    for (Eigen::Index j = 0; j < 4; ++j)
      for (Eigen::Index k = 0; k < u.dimension(2); ++k) ok = ok && u(i, j, k) == std::int32_t(i * 100 + j * 10 + c0 + k);
  REQUIRE(test::all_ranks(ok));
}

TEST_CASE("reshape_boxes: bad tilings raise on every rank, naming ranks and boxes", "[boxes]") {
  const int P = W().size(), me = W().rank();
  auto raises = [&](const ember::box<2>& in, const ember::box<2>& out, std::int64_t n, const std::string& needle) {
    std::vector<double> a(std::size_t(n), 1.0);
    bool ok = false;
    try {
      ember::reshape_boxes(a, in, out);
    } catch (const ember::error& e) {
      const std::string m = e.what();
      INFO(m);
      ok = m.find(needle) != std::string::npos;
      CHECK(ok);
    }
    return test::all_ranks(ok);
  };
  const ember::box<2> rows{{me, 0}, {me + 1, 4}};  // a valid tiling: one row each
  SECTION("input and output cover different global boxes") {
    const ember::box<2> wider{{me, 0}, {me + 1, 5}};
    REQUIRE(raises(rows, wider, 4, "tile [(0, 0), (" + std::to_string(P) + ", 4))"));
  }
  SECTION("overlapping boxes") {
    if (P == 1) return;
    const ember::box<2> fat{{me, 0}, {std::min(me + 2, P), 4}};  // rank r and r+1 share row r+1
    REQUIRE(raises(fat, rows, fat.volume(), "input boxes of rank 0 [(0, 0), (2, 4)) and rank 1 [(1, 0), ("));
  }
  SECTION("a hole") {
    if (P == 1) return;
    const ember::box<2> spaced{{2 * me, 0}, {2 * me + 1, 4}};  // rows 1, 3, ... belong to nobody
    REQUIRE(raises(rows, spaced, 4, "output boxes leave a hole"));
  }
  SECTION("a block that does not fit its box") {
    REQUIRE(raises(rows, rows, me == P - 1 ? 3 : 4,
                   "rank " + std::to_string(P - 1) + " passes 3 values for its input box"));
  }
  SECTION("a box that ends before it starts") {
    const ember::box<2> bad{{me, 4}, {me + 1, 0}};
    REQUIRE(raises(bad, rows, 0, "ends before it starts"));
  }
}

// Found by tests/fuzz/fuzz_boxes.cpp: check_box_tilings read past the end of
// boxes with fewer coordinates than the first (a crash for a box with 0 lower and
// 1 upper bound), accepted 2 input boxes with 3 output boxes, and computed volumes
// with signed overflow: [INT64_MIN, INT64_MAX) was accepted as a box of 0
// elements. box_distribution checked nothing. Pure checks, alike on every rank.
TEST_CASE("check_box_tilings and box_distribution reject malformed boxes", "[boxes]") {
  using ember::box_nd;
  const std::int64_t lo = INT64_MIN, hi = INT64_MAX;
  auto raises = [](auto&& f, const std::string& needle, auto type_tag) {
    using E = decltype(type_tag);
    try {
      f();
    } catch (const E& e) {
      INFO(e.what());
      return std::string(e.what()).find(needle) != std::string::npos;
    } catch (...) {
    }
    return false;
  };
  const ember::value_error V("");
  const ember::shape_error S("");
  auto tilings = [](std::vector<box_nd> in, std::vector<box_nd> out) {
    return [=] { (void)ember::check_box_tilings(in, out); };
  };
  const box_nd left{{0}, {2}}, right{{2}, {4}}, all{{0}, {4}}, none{{0}, {0}};
  REQUIRE(test::all_ranks(raises(tilings({left, right}, {all, none, none}), "2 input boxes but 3 output boxes", V)));
  REQUIRE(test::all_ranks(raises(tilings({all}, {box_nd{{}, {4}}}), "has 0 lower and 1 upper bounds, not 1", S)));
  REQUIRE(test::all_ranks(raises(tilings({left, box_nd{{2, 0}, {4, 1}}}, {all, none}), "rank 1 [(2, 0), (4, 1))", S)));
  REQUIRE(test::all_ranks(raises(tilings({box_nd{}, box_nd{}}, {box_nd{}, box_nd{}}), "at least one dimension", V)));
  REQUIRE(test::all_ranks(raises(tilings({box_nd{{lo}, {hi}}}, {box_nd{{lo}, {hi}}}), "more than 2^63 - 1", V)));
  const std::int64_t h = std::int64_t(1) << 62;  // each half fits, the whole does not
  const std::vector<box_nd> halves{box_nd{{-h}, {0}}, box_nd{{0}, {h}}};
  REQUIRE(test::all_ranks(raises(tilings(halves, halves), "bounding box", V)));
  // an empty box may have any other extents, even ones whose difference overflows
  const box_nd far{{lo, 5}, {hi, 5}};
  REQUIRE(test::all_ranks(far.volume() == 0 && ember::box<2>{{lo, 5}, {hi, 5}}.volume() == 0));
  const box_nd g{{0, 0}, {4, 2}};
  REQUIRE(test::all_ranks(ember::check_box_tilings({g, far}, {far, g}) == g));

  auto dist = [](ember::index_vec shape, std::vector<box_nd> bs) {
    return [=] { ember::box_distribution d(shape, bs); };
  };
  REQUIRE(test::all_ranks(raises(dist({4}, {box_nd{{0}, {9}}}), "not the array of shape (4,)", V)));
  REQUIRE(test::all_ranks(raises(dist({4}, {left}), "not the array of shape (4,)", V)));
  REQUIRE(test::all_ranks(raises(dist({4}, {left, box_nd{{1}, {4}}}), "overlap", V)));
  REQUIRE(test::all_ranks(raises(dist({4}, {left, right, box_nd{{1}, {3}}}), "overlap", V)));
  REQUIRE(test::all_ranks(raises(dist({4}, {left, box_nd{{2, 0}, {4, 1}}}), "upper bounds", S)));
  REQUIRE(test::all_ranks(raises(dist({4}, {}), "none", V)));
  REQUIRE(test::all_ranks(raises(dist({-1}, {none}), "negative extent", V)));
  REQUIRE(test::all_ranks(raises(dist({4, 2}, {g, box_nd{{0, 0}, {1, 1}}}), "overlap", V)));
  ember::box_distribution ok({4, 2}, {far, g, box_nd{{7, 7}, {7, 9}}});  // empty boxes anywhere
  REQUIRE(test::all_ranks(ok.nranks() == 3 && ok.local_size(0) == 0 && ok.local_size(1) == 8 && ok.pieces(0).empty()));
  ember::box_distribution two({4}, {left, right});
  ember::box_distribution three({4}, {left, right, none});
  REQUIRE(test::all_ranks(raises([&] { ember::exchange x(two, three, 0, 8); }, "ranks", V)));
}

TEST_CASE("reshape_boxes: huge boxes raise, empty boxes may have any coordinates", "[boxes]") {
  const int P = W().size(), me = W().rank();
  const std::int64_t lo = INT64_MIN, hi = INT64_MAX;
  // rank 0 claims [INT64_MIN, INT64_MAX) with an empty block: was accepted (its
  // volume overflowed to 0 elements)
  {
    const ember::box<1> in = me == 0 ? ember::box<1>{{lo}, {hi}} : ember::box<1>{{0}, {0}};
    bool ok = false;
    try {
      ember::reshape_boxes(std::vector<double>{}, in, in);
    } catch (const ember::value_error& e) {
      INFO(e.what());
      ok = std::string(e.what()).find("rank 0 [(-9223372036854775808,), (9223372036854775807,)) holds more than") !=
           std::string::npos;
    }
    REQUIRE(test::all_ranks(ok));
  }
  // every row to rank 0; the other ranks ask for an empty box whose other extent overflows
  const ember::box<2> row{{me, 0}, {me + 1, 3}};
  const ember::box<2> out = me == 0 ? ember::box<2>{{0, 0}, {P, 3}} : ember::box<2>{{lo, 7}, {hi, 7}};
  const auto b = ember::reshape_boxes(extract(row), row, out);
  REQUIRE(test::all_ranks(b == extract(out)));
}

// ---------------------------------------------------------------------------
TEST_CASE("symmetric memory: puts from every rank land where intended", "[symmetric]") {
  const int P = W().size(), me = W().rank();
  const std::int64_t K = 5;
  auto a = ember::allocate_symmetric<std::int64_t>({P, K});
  REQUIRE(test::all_ranks(a.capacity() == P * K && a.size() == P * K && a.shape()[0] == P));
  std::vector<std::int64_t> row(K);
  for (std::int64_t k = 0; k < K; ++k) row[std::size_t(k)] = me * 100 + k;
  const auto before = W().sent();
  for (int t = 0; t < P; ++t) a.put(std::span<const std::int64_t>(row), t, me * K);  // my row in everyone's buffer
  const auto sent = W().sent() - before;
  a.fence();
  bool ok = sent == ember::traffic{P * K * 8, P};
  for (int s = 0; s < P; ++s)
    for (std::int64_t k = 0; k < K; ++k) ok = ok && a.local()[std::size_t(s * K + k)] == s * 100 + k;
  REQUIRE(test::all_ranks(ok));
  // gets: every rank reads its neighbour's whole buffer
  std::vector<std::int64_t> got(std::size_t(P * K), -1);
  a.get(std::span<std::int64_t>(got), (me + 1) % P, 0);
  a.fence();
  ok = true;
  for (int s = 0; s < P; ++s)
    for (std::int64_t k = 0; k < K; ++k) ok = ok && got[std::size_t(s * K + k)] == s * 100 + k;
  REQUIRE(test::all_ranks(ok));
  // local writes, then a fence, then a remote read sees them
  a.local()[0] = -me;
  a.fence();
  std::int64_t x = 0;
  a.get(std::span<std::int64_t>(&x, 1), (me + P - 1) % P, 0);
  a.fence();
  REQUIRE(test::all_ranks(x == -((me + P - 1) % P)));
  REQUIRE_THROWS_AS(a.put(std::span<const std::int64_t>(row), 0, P * K - 1), ember::value_error);
  REQUIRE_THROWS_AS(a.get(std::span<std::int64_t>(row), P, 0), ember::value_error);
  a.release();
  REQUIRE(!a.held());
}

TEST_CASE("symmetric memory: sizes must agree unless make_symmetric", "[symmetric]") {
  const int P = W().size(), me = W().rank();
  const std::int64_t rows = me == 0 ? 3 : 2;
  if (P > 1) {
    bool ok = false;
    try {
      auto a = ember::allocate_symmetric<float>({rows, 3});
    } catch (const ember::value_error& e) {
      const std::string m = e.what();
      INFO(m);
      ok = m.find("rank 0 asks for (3, 3) (36 bytes)") != std::string::npos &&
           m.find("rank 1 asks for (2, 3) (24 bytes)") != std::string::npos;
      CHECK(ok);
    }
    REQUIRE(test::all_ranks(ok));
  }
  auto b = ember::allocate_symmetric<float>({rows, 3}, W(), {.make_symmetric = true});
  REQUIRE(test::all_ranks(b.capacity() == 9 && b.size() == rows * 3 && b.shape()[0] == rows));
  // the whole symmetric capacity is reachable on every rank, beyond its own shape
  const float v = 1.5f + float(me);
  b.put(std::span<const float>(&v, 1), (me + 1) % P, 8);
  b.fence();
  REQUIRE(test::all_ranks(b.data()[8] == 1.5f + float((me + P - 1) % P)));
}

TEST_CASE("symmetric memory: handles released in the same order everywhere (RAII)", "[symmetric]") {
  setenv("EMBER_CHECK_SYMMETRIC", "1", 1);
  for (int round = 0; round < 3; ++round) {
    auto a = ember::allocate_symmetric<double>({4});
    auto b = ember::allocate_symmetric<double>({2, 2});
    {
      auto c = ember::allocate_symmetric<int>({7});
      REQUIRE(test::all_ranks(c.sequence() > b.sequence() && b.sequence() > a.sequence()));
    }  // c released here on every rank
    auto moved = std::move(a);  // moving a handle moves the allocation, not its place in the order
    REQUIRE(test::all_ranks(!a.held() && moved.held()));
  }  // b, then moved: the same order on every rank
  unsetenv("EMBER_CHECK_SYMMETRIC");
  SUCCEED();
}

TEST_CASE("symmetric memory: releasing in a different order is detected, not a hang", "[symmetric]") {
  const int P = W().size(), me = W().rank();
  setenv("EMBER_CHECK_SYMMETRIC", "1", 1);
  auto a = ember::allocate_symmetric<double>({4});
  auto b = ember::allocate_symmetric<double>({4});
  if (P > 1) {
    bool ok = false;
    try {
      if (me == 0) a.release();  // rank 0 frees a while the others free b
      else b.release();
    } catch (const ember::error& e) {
      const std::string m = e.what();
      INFO(m);
      ok = m.find("out of order") != std::string::npos &&
           m.find("rank 0 #" + std::to_string(a.sequence())) != std::string::npos &&
           m.find("rank 1 #" + std::to_string(b.sequence())) != std::string::npos;
      CHECK(ok);
    }
    // nothing was freed: both handles still work and are released in order
    REQUIRE(test::all_ranks(ok && a.held() && b.held()));
  }
  a.release();
  b.release();
  unsetenv("EMBER_CHECK_SYMMETRIC");
  REQUIRE(test::all_ranks(!a.held() && !b.held()));
}
