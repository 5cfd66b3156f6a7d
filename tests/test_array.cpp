// dndarray handles, factories, random numbers and printing, against serial
// references computed on the gathered data.
#include <cmath>
#include <numeric>

#include "common.hpp"

using ember::layout;

TEST_CASE("handles share data, copy() is deep", "[dndarray]") {
  auto a = ember::zeros<double>({6, 3}, {.split = 0});
  auto b = a;  // same array
  if (a.lnumel() > 0) b.ldata()[0] = 42.0;
  CHECK((a.lnumel() == 0 || a.ldata()[0] == 42.0));
  auto c = a.copy();
  if (c.lnumel() > 0) c.ldata()[0] = 7.0;
  CHECK((a.lnumel() == 0 || a.ldata()[0] == 42.0));
  b.resplit_(1);  // a is the same DNDarray, as a Python name would be
  CHECK(a.split() == 1);
  CHECK(c.split() == 0);
  ember::dndarray<double, 2> null;
  CHECK(!null.valid());
  REQUIRE_THROWS_AS(null.shape(), ember::error);
}

TEST_CASE("expressions of a leaf outlive the handle they were built from", "[dndarray]") {
  ember::dndarray<float, 1> keep;
  {
    auto tmp = ember::ones<float>({9}, {.split = 0});
    keep = tmp;
  }
  auto g = test::gathered(keep);
  CHECK(g == std::vector<float>(9, 1.0f));
}

TEST_CASE("wrap: an array over the host code's memory, without a copy", "[dndarray][wrap]") {
  const auto& w = ember::world();
  const int P = w.size(), me = w.rank();
  // uneven blocks, one of them empty from 3 ranks on
  auto rows_of = [&](int r) { return std::int64_t(P > 2 && r == 1 ? 0 : r + 1); };
  const std::int64_t cols = 3, rows = rows_of(me);
  std::int64_t off = 0, total = 0;
  for (int r = 0; r < P; ++r) {
    if (r < me) off += rows_of(r);
    total += rows_of(r);
  }
  std::vector<double> mine(std::size_t(rows * cols)), global(std::size_t(total * cols));
  for (std::int64_t i = 0; i < total * cols; ++i) global[std::size_t(i)] = double(i / cols) * 10 + double(i % cols);
  std::copy_n(global.begin() + off * cols, rows * cols, mine.begin());

  auto a = ember::wrap(mine.data(), {rows, cols}, {.split = 0});
  CHECK(a.shape() == std::array<std::int64_t, 2>{total, cols});
  CHECK(a.split() == 0);
  for (int r = 0; r < P; ++r) CHECK(a.lshape_map()[std::size_t(r)] == std::array<std::int64_t, 2>{rows_of(r), cols});
  CHECK((rows == 0 || a.ldata() == mine.data()));  // no copy
  CHECK(test::gathered(a) == global);
  CHECK(ember::sum(a * a) == std::inner_product(global.begin(), global.end(), global.begin(), 0.0));

  // ember's writes are writes into the host code's memory
  a = a * 2.0 + 1.0;
  bool ok = true;
  for (std::int64_t i = 0; i < rows * cols; ++i)
    ok = ok && mine[std::size_t(i)] == 2 * global[std::size_t(off * cols + i)] + 1;
  CHECK(test::all_ranks(ok));
  // and the host code's writes are seen by the next expression
  std::fill(mine.begin(), mine.end(), 1.0);
  CHECK(ember::sum(a) == double(total * cols));

  // split along axis 1: blocks of rank-dependent widths
  std::vector<std::int32_t> wide(std::size_t(2 * rows));
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < rows; ++j) wide[std::size_t(i * rows + j)] = std::int32_t(i * 1000 + off + j);
  auto b = ember::wrap(wide.data(), {2, rows}, {.split = 1});
  CHECK(b.shape() == std::array<std::int64_t, 2>{2, total});
  std::vector<std::int32_t> want(std::size_t(2 * total));
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < total; ++j) want[std::size_t(i * total + j)] = std::int32_t(i * 1000 + j);
  CHECK(test::gathered(b) == want);

  // not split: every rank holds a whole copy
  std::vector<float> copy(12);
  std::iota(copy.begin(), copy.end(), 0.0f);
  auto c = ember::wrap(copy.data(), {4, 3});
  CHECK(!c.split());
  CHECK(c.ldata() == copy.data());
  CHECK(ember::sum(c) == 66.0f);
}

TEST_CASE("larray is the local block as a row-major Eigen TensorMap", "[dndarray]") {
  const auto& w = ember::world();
  auto a = ember::arange<std::int64_t>(0, 24, 1, {.split = 0});
  CHECK(a.larray().dimension(0) == a.lshape()[0]);
  for (std::int64_t i = 0; i < a.lshape()[0]; ++i) CHECK(a.larray()(i) == a.loffset() + i);
  auto m = ember::zeros<double>({5, 4}, {.split = 1});
  auto t = m.larray();
  for (Eigen::Index i = 0; i < t.dimension(0); ++i)
    for (Eigen::Index j = 0; j < t.dimension(1); ++j) t(i, j) = double(10 * i + j + m.loffset());
  auto g = test::gathered(m);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) CHECK(g[std::size_t(i * 4 + j)] == double(10 * i + j));
  (void)w;
}

TEST_CASE("factories equal their serial definitions for every split", "[factories]") {
  for (int sp = -1; sp < 2; ++sp) {
    ember::split_axis split = sp < 0 ? ember::split_axis{} : ember::split_axis{sp};
    INFO("split " << sp);
    auto z = ember::zeros<std::int32_t>({5, 3}, {.split = split});
    auto o = ember::ones<bool>({5, 3}, {.split = split});
    auto f = ember::full<float>({5, 3}, 2.5f, {.split = split});
    auto e = ember::eye<double>(5, 3, 0, {.split = split});
    auto e1 = ember::eye<double>(4, std::nullopt, 1, {.split = split});
    CHECK(test::gathered(z) == std::vector<std::int32_t>(15, 0));
    CHECK(test::gathered(o) == std::vector<unsigned char>(15, 1));
    CHECK(test::gathered(f) == std::vector<float>(15, 2.5f));
    auto ge = test::gathered(e);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 3; ++j) CHECK(ge[std::size_t(i * 3 + j)] == (i == j ? 1.0 : 0.0));
    auto ge1 = test::gathered(e1);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) CHECK(ge1[std::size_t(i * 4 + j)] == (j - i == 1 ? 1.0 : 0.0));
    auto zl = ember::zeros_like(f);
    CHECK(zl.layout() == f.layout());
    CHECK(test::gathered(zl) == std::vector<float>(15, 0.0f));
    CHECK(test::gathered(ember::full_like(z, 7)) == std::vector<std::int32_t>(15, 7));
    CHECK(ember::empty_like(e).layout() == e.layout());
    CHECK(test::gathered(ember::ones_like(e)) == std::vector<double>(15, 1.0));
  }
  auto r = ember::arange<double>(1, 2, 0.25, {.split = 0});
  CHECK(test::gathered(r) == std::vector<double>{1.0, 1.25, 1.5, 1.75});
  auto r2 = ember::arange<std::int64_t>(10, {.split = 0});
  CHECK(r2.numel() == 10);
  CHECK(ember::arange<std::int32_t>(5, 0, -2, {.split = 0}).numel() == 3);
  auto l = ember::linspace<double>(0, 1, 5, {.split = 0});
  CHECK(test::gathered(l) == std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0});
  auto l2 = ember::linspace<double>(0, 1, 4, {.split = 0, .endpoint = false});
  CHECK(test::gathered(l2) == std::vector<double>{0.0, 0.25, 0.5, 0.75});
  auto g = ember::array(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3}, {.split = 1});
  CHECK(g.shape() == std::array<std::int64_t, 2>{2, 3});
  CHECK(test::gathered(g) == std::vector<double>{1, 2, 3, 4, 5, 6});
  REQUIRE_THROWS_AS(ember::zeros<double>({-1, 2}), ember::value_error);
  REQUIRE_THROWS_AS(ember::arange<double>(0, 1, 0), ember::value_error);
}

TEST_CASE("the same seed gives the same global array at any rank count and split", "[random]") {
  // Reference: the generator evaluated serially over the global index range. It
  // does not depend on the number of ranks, so equality at 1..4 ranks is the claim.
  for (int sp = -1; sp < 3; ++sp) {
    ember::split_axis split = sp < 0 ? ember::split_axis{} : ember::split_axis{sp};
    INFO("split " << sp);
    ember::random::seed(1234);
    auto n = ember::random::randn<double>({5, 7, 3}, {.split = split});
    auto u = ember::random::rand<float>({5, 7, 3}, {.split = split});
    auto i = ember::random::randint<std::int64_t>(-3, 9, {5, 7, 3}, {.split = split});
    auto nm = ember::random::normal<double>(2.0, 0.5, {5, 7, 3}, {.split = split});
    std::vector<double> rn(105), rnm(105);
    std::vector<float> ru(105);
    std::vector<std::int64_t> ri(105);
    ember::rng::fill_normal(rn.data(), 105, {1234, 0}, 0, 0.0, 1.0);
    ember::rng::fill_uniform(ru.data(), 105, {1234, 1}, 0, 0.0f, 1.0f);
    ember::rng::fill_randint(ri.data(), 105, {1234, 2}, 0, -3, 9);
    ember::rng::fill_normal(rnm.data(), 105, {1234, 3}, 0, 2.0, 0.5);
    CHECK(test::bit_equal(test::gathered(n), rn));
    CHECK(test::bit_equal(test::gathered(u), ru));
    CHECK(test::bit_equal(test::gathered(i), ri));
    CHECK(test::bit_equal(test::gathered(nm), rnm));
  }
  // element i does not depend on where a fill starts (odd offsets split Box-Muller pairs)
  std::vector<double> all(50), part(17);
  ember::rng::fill_normal(all.data(), 50, {9, 4}, 0, 0.0, 1.0);
  ember::rng::fill_normal(part.data(), 17, {9, 4}, 13, 0.0, 1.0);
  CHECK(std::equal(part.begin(), part.end(), all.begin() + 13));
}

TEST_CASE("Philox4x32-10 matches the Random123 known-answer vectors", "[random]") {
  std::uint32_t out[4];
  {
    const std::uint32_t c[4] = {0, 0, 0, 0}, k[2] = {0, 0};
    ember::rng::philox4x32(c, k, out);
    CHECK(out[0] == 0x6627e8d5u);
    CHECK(out[1] == 0xe169c58du);
    CHECK(out[2] == 0xbc57ac4cu);
    CHECK(out[3] == 0x9b00dbd8u);
  }
  {
    const std::uint32_t c[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, k[2] = {0xffffffffu, 0xffffffffu};
    ember::rng::philox4x32(c, k, out);
    CHECK(out[0] == 0x408f276du);
    CHECK(out[1] == 0x41c83b0eu);
    CHECK(out[2] == 0xa20bc7c6u);
    CHECK(out[3] == 0x6d5451fdu);
  }
  {
    const std::uint32_t c[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, k[2] = {0xa4093822u, 0x299f31d0u};
    ember::rng::philox4x32(c, k, out);
    CHECK(out[0] == 0xd16cfe09u);
    CHECK(out[1] == 0x94fdccebu);
    CHECK(out[2] == 0x5001e420u);
    CHECK(out[3] == 0x24126ea1u);
  }
}

TEST_CASE("randn has the moments of a standard normal; rand is uniform on [0,1)", "[random]") {
  ember::random::seed(7);
  auto a = ember::random::randn<double>({200000}, {.split = 0});
  auto g = test::gathered(a);
  double m = 0, v = 0, m4 = 0;
  for (double x : g) m += x;
  m /= double(g.size());
  for (double x : g) {
    v += (x - m) * (x - m);
    m4 += std::pow(x - m, 4);
  }
  v /= double(g.size());
  m4 /= double(g.size());
  CHECK(std::abs(m) < 0.01);           // sd of the mean: 0.0022
  CHECK(std::abs(v - 1.0) < 0.02);     // sd: 0.0032
  CHECK(std::abs(m4 / (v * v) - 3.0) < 0.06);
  auto u = test::gathered(ember::random::rand<double>({100000}, {.split = 0}));
  double mn = 1, mx = 0, mu = 0;
  for (double x : u) {
    mn = std::min(mn, x);
    mx = std::max(mx, x);
    mu += x;
  }
  CHECK(mn >= 0.0);
  CHECK(mx < 1.0);
  CHECK(std::abs(mu / 100000 - 0.5) < 0.005);
  auto ri = test::gathered(ember::random::randint<std::int32_t>(0, 3, {3000}, {.split = 0}));
  std::array<int, 3> counts{};
  for (auto x : ri) {
    REQUIRE(x >= 0);
    REQUIRE(x < 3);
    ++counts[std::size_t(x)];
  }
  for (int c : counts) CHECK(std::abs(c - 1000) < 120);
}

TEST_CASE("printing follows NumPy's layout with Heat's footer", "[print]") {
  for (int sp = -1; sp < 2; ++sp) {
    ember::split_axis split = sp < 0 ? ember::split_axis{} : ember::split_axis{sp};
    const std::string sp_txt = sp < 0 ? "None" : std::to_string(sp);
    auto a = ember::array(std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4}, {.split = split});
    CHECK(ember::to_string(a) ==
          "DNDarray([[ 0,  1,  2,  3],\n"
          "          [ 4,  5,  6,  7],\n"
          "          [ 8,  9, 10, 11]], dtype=ember.int64, device=cpu, split=" + sp_txt + ")");
    if (sp <= 0) {
      auto f = ember::array(std::vector<double>{1.5, 2.25, -3.0}, {.split = split});
      CHECK(ember::to_string(f) == "DNDarray([ 1.5 ,  2.25, -3.  ], dtype=ember.float64, device=cpu, split=" + sp_txt + ")");
    }
  }
  auto b = ember::array(std::vector<double>{1e-5, 1.0, 1e10}, {.split = 0});
  CHECK(ember::to_string(b) == "DNDarray([1.e-05, 1.e+00, 1.e+10], dtype=ember.float64, device=cpu, split=0)");
  auto t = ember::ones<bool>({2}, {.split = 0});
  CHECK(ember::to_string(t) == "DNDarray([ True,  True], dtype=ember.bool, device=cpu, split=0)");
  auto third = ember::array(std::vector<float>{1.0f / 3, 2.0f / 3}, {.split = 0});
  CHECK(ember::to_string(third) == "DNDarray([0.33333334, 0.6666667 ], dtype=ember.float32, device=cpu, split=0)");
  auto c3 = ember::arange<std::int64_t>(0, 8, 1, {.split = 0});
  auto z = ember::zeros<double>({2, 2, 2}, {.split = 2});
  CHECK(ember::to_string(z) ==
        "DNDarray([[[0., 0.],\n"
        "           [0., 0.]],\n"
        "\n"
        "          [[0., 0.],\n"
        "           [0., 0.]]], dtype=ember.float64, device=cpu, split=2)");
  (void)c3;
}

TEST_CASE("large arrays print summarized and are never gathered whole", "[print]") {
  const auto& w = ember::world();
  auto a = ember::arange<std::int64_t>(0, 2000, 1, {.split = 0});
  const auto before = w.sent();
  const auto s = ember::to_string(a);
  CHECK(s == "DNDarray([   0,    1,    2, ..., 1997, 1998, 1999], dtype=ember.int64, device=cpu, split=0)");
  // 6 shown values at most, plus the text broadcast by to_string
  CHECK((w.sent() - before).bytes <= std::int64_t(6 * 8 + 8 + s.size()) * std::max(1, w.size() - 1));
  auto m = ember::zeros<std::int32_t>({100, 100}, {.split = 1});
  const auto sm = ember::to_string(m);
  CHECK(sm ==
        "DNDarray([[0, 0, 0, ..., 0, 0, 0],\n"
        "          [0, 0, 0, ..., 0, 0, 0],\n"
        "          [0, 0, 0, ..., 0, 0, 0],\n"
        "          ...,\n"
        "          [0, 0, 0, ..., 0, 0, 0],\n"
        "          [0, 0, 0, ..., 0, 0, 0],\n"
        "          [0, 0, 0, ..., 0, 0, 0]], dtype=ember.int32, device=cpu, split=1)");
  auto longrow = ember::arange<std::int64_t>(0, 30, 1, {.split = 0});
  CHECK(ember::to_string(longrow) ==
        "DNDarray([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15,\n"
        "          16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29], dtype=ember.int64, device=cpu, split=0)");
}

#include "runtime/random_kernels.hpp"

TEST_CASE("the baseline, AVX2 and AVX-512 generator kernels agree bit for bit with scalar Philox", "[random]") {
  namespace k = ember::rng::kernels;
  const ember::rng::stream s{0x1234567890abcdefull, 77};
  const std::uint64_t j0 = (std::uint64_t(3) << 32) - 17;  // crosses a 32-bit carry
  std::vector<std::uint64_t> wa(k::batch), wb(k::batch);
  k::base::words(s, j0, wa.data(), wb.data());
  bool ok = true;
  for (int l = 0; l < k::batch; ++l) {
    const std::uint64_t j = j0 + std::uint64_t(l);
    const std::uint32_t c[4] = {std::uint32_t(j), std::uint32_t(j >> 32), std::uint32_t(s.call), std::uint32_t(s.call >> 32)};
    const std::uint32_t key[2] = {std::uint32_t(s.seed), std::uint32_t(s.seed >> 32)};
    std::uint32_t out[4];
    ember::rng::philox4x32(c, key, out);
    ok = ok && wa[std::size_t(l)] == ((std::uint64_t(out[1]) << 32) | out[0]) &&
         wb[std::size_t(l)] == ((std::uint64_t(out[3]) << 32) | out[2]);
  }
  CHECK(ok);
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) {
    std::vector<std::uint64_t> xa(k::batch), xb(k::batch);
    k::avx2::words(s, j0, xa.data(), xb.data());
    CHECK(xa == wa);
    CHECK(xb == wb);
    std::vector<double> z1(2 * k::batch), z2(2 * k::batch), u1(2 * k::batch), u2(2 * k::batch);
    for (std::uint64_t j = 0; j < 4096; j += k::batch) {
      k::base::normal(s, j, z1.data());
      k::avx2::normal(s, j, z2.data());
      k::base::uniform53(s, j, u1.data());
      k::avx2::uniform53(s, j, u2.data());
      REQUIRE(test::bit_equal(z1, z2));
      REQUIRE(test::bit_equal(u1, u2));
    }
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
    std::vector<double> z1(2 * k::batch), z2(2 * k::batch);
    for (std::uint64_t j = 0; j < 4096; j += k::batch) {
      k::base::normal(s, j, z1.data());
      k::avx512::normal(s, j, z2.data());
      REQUIRE(test::bit_equal(z1, z2));
    }
  }
  // Box-Muller accuracy of the hand-written log and sincos against libm
  std::vector<double> z(2 * k::batch), u(2 * k::batch);
  double worst = 0;
  for (std::uint64_t j = 0; j < 8192; j += k::batch) {
    k::base::normal(s, j, z.data());
    std::vector<std::uint64_t> a(k::batch), b(k::batch);
    k::base::words(s, j, a.data(), b.data());
    for (int l = 0; l < k::batch; ++l) {
      const double u1 = (double(a[std::size_t(l)] >> 12) + 1.0) * 0x1.0p-52;
      const double u2 = double(b[std::size_t(l)] >> 12) * 0x1.0p-52;
      const double r = std::sqrt(-2.0 * std::log(u1));
      worst = std::max(worst, std::abs(z[std::size_t(2 * l)] - r * std::cos(2 * M_PI * u2)));
      worst = std::max(worst, std::abs(z[std::size_t(2 * l + 1)] - r * std::sin(2 * M_PI * u2)));
    }
  }
  CHECK(worst < 1e-13);
}
