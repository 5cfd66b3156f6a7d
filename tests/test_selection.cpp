// Advanced indexing (issue 14, selection): a(mask), a(mask) = v, nonzero,
// argwhere, where(mask), take (with and without an axis), a(indices), put,
// against a serial reference computed on the gathered data. Exact equality
// (selection moves values, it computes nothing). Random shapes and masks, every
// split of the array, of the mask and of the indices, uneven layouts, empty and
// all-true masks, masks true on one rank only, duplicate and negative indices,
// and the errors on every rank alike.
#include <random>

#include "collective.hpp"

namespace {

using i64 = std::int64_t;

std::vector<double> values_of(i64 n, int seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) v[std::size_t(i)] = double((i * 37 + seed) % 101) - 50.0 + 0.25 * double(i % 3);
  return v;
}

template <int N>
i64 numel(const std::array<i64, N>& s) {
  i64 n = 1;
  for (auto e : s) n *= e;
  return n;
}

// An array of `shape` holding `data`, split along `split`, made uneven where it
// can be (one row moved from rank 0 to rank 1, or everything moved to the last rank).
template <class T, int N>
ember::dndarray<T, N> make(const std::vector<T>& data, const std::array<i64, N>& shape, ember::split_axis split,
                           int uneven = 1) {
  auto a = ember::array(std::span<const T>(data), shape, {.split = split});
  if (split && W().size() > 1 && uneven) {
    auto map = a.lshape_map();
    const auto k = std::size_t(*split);
    if (uneven == 1 && map[0][k] > 0) {
      --map[0][k];
      ++map[1][k];
    } else if (uneven == 2) {
      for (auto& row : map) row[k] = 0;
      map.back()[k] = shape[k];
    }
    a.redistribute_(map);
  }
  return a;
}

std::vector<ember::split_axis> splits_of(int N) {
  std::vector<ember::split_axis> s{ember::none};
  for (int k = 0; k < N; ++k) s.push_back(k);
  return s;
}

// A mask as a bool array (through a comparison, so its layout is the planner's).
template <int N>
ember::dndarray<bool, N> make_mask(const std::vector<double>& m, const std::array<i64, N>& shape, ember::split_axis split,
                                   int uneven = 1) {
  auto x = make<double, N>(m, shape, split, uneven);
  ember::dndarray<bool, N> b = x > 0.5;
  return b;
}

// Random 0/1 mask of density p; kind 1: all false, 2: all true, 3: true only in
// the first third of the elements (one rank's block, for a split-0 array).
std::vector<double> mask_values(i64 n, std::mt19937_64& g, double p, int kind) {
  std::vector<double> m(static_cast<std::size_t>(n));
  std::bernoulli_distribution b(p);
  for (i64 i = 0; i < n; ++i) {
    switch (kind) {
      case 1: m[std::size_t(i)] = 0; break;
      case 2: m[std::size_t(i)] = 1; break;
      case 3: m[std::size_t(i)] = i < n / 3 ? (b(g) ? 1 : 0) : 0; break;
      default: m[std::size_t(i)] = b(g) ? 1 : 0;
    }
  }
  return m;
}

template <class T, int N>
bool balanced_split0(const ember::dndarray<T, N>& r) {
  return r.split() == 0 && r.is_balanced();
}

std::array<i64, 3> random_shape3(std::mt19937_64& g) {
  std::uniform_int_distribution<i64> e(0, 6);
  return {e(g), e(g) + 1, e(g)};
}

}  // namespace

TEST_CASE("a(mask): random masks of 1-D, 2-D and 3-D arrays at every split of the array and the mask", "[selection]") {
  std::mt19937_64 g(11);
  for (int trial = 0; trial < 6; ++trial) {
    auto s3 = random_shape3(g);
    if (trial == 0) s3 = {0, 3, 2};
    const std::array<i64, 1> s1{s3[0] * 3 + s3[2]};
    const std::array<i64, 2> s2{s3[0] + 1, s3[1] + 1};
    for (int kind = 0; kind < 4; ++kind) {
      auto run = [&](auto shape_c) {
        constexpr int N = decltype(shape_c)::value;
        std::array<i64, N> shape{};
        if constexpr (N == 1) shape = s1;
        if constexpr (N == 2) shape = s2;
        if constexpr (N == 3) shape = s3;
        const i64 n = numel<N>(shape);
        const auto data = values_of(n, trial + kind);
        const auto mv = mask_values(n, g, 0.4, kind);
        std::vector<double> want;
        for (i64 i = 0; i < n; ++i)
          if (mv[std::size_t(i)] > 0.5) want.push_back(data[std::size_t(i)]);
        for (auto sa : splits_of(N))
          for (auto sm : splits_of(N)) {
            INFO("shape " << ember::detail::shape_str(shape) << " split " << ember::detail::axis_str(sa) << " mask split "
                          << ember::detail::axis_str(sm) << " kind " << kind);
            auto a = make<double, N>(data, shape, sa, 1 + (trial % 2));
            auto m = make_mask<N>(mv, shape, sm);
            ember::dndarray<double, 1> r = a(m);
            CHECK(test::all_ranks(balanced_split0(r)));
            CHECK(test::all_ranks(r.shape()[0] == i64(want.size())));
            CHECK(test::all_ranks(test::gathered(r) == want));
            auto r2 = ember::masked(a, m);
            CHECK(test::all_ranks(test::gathered(r2) == want));
          }
      };
      run(std::integral_constant<int, 1>{});
      run(std::integral_constant<int, 2>{});
      run(std::integral_constant<int, 3>{});
    }
  }
}

TEST_CASE("a(mask) with an expression mask; int32, int64, float and bool elements", "[selection]") {
  const std::array<i64, 2> shape{7, 5};
  const auto data = values_of(35, 3);
  for (auto sa : splits_of(2)) {
    auto a = make<double, 2>(data, shape, sa);
    std::vector<double> want;
    for (double v : data)
      if (v > 0.0) want.push_back(v);
    ember::dndarray<double, 1> r = a(a > 0.0);
    CHECK(test::all_ranks(test::gathered(r) == want));
    auto r2 = ember::eval(a(a > 0.0));
    CHECK(test::all_ranks(test::gathered(r2) == want));
    auto r3 = ember::select(a, a > 0.0);
    CHECK(test::all_ranks(test::gathered(r3) == want));

    std::vector<std::int32_t> di(data.begin(), data.end());
    auto ai = make<std::int32_t, 2>(di, shape, sa);
    std::vector<std::int32_t> wi;
    for (auto v : di)
      if (v > 3) wi.push_back(v);
    ember::dndarray<std::int32_t, 1> ri = ai(ai > 3);
    CHECK(test::all_ranks(test::gathered(ri) == wi));

    std::vector<float> df(data.begin(), data.end());
    auto af = make<float, 2>(df, shape, sa);
    std::vector<float> wf;
    for (auto v : df)
      if (v < -10.f) wf.push_back(v);
    ember::dndarray<float, 1> rf = af(af < -10.f);
    CHECK(test::all_ranks(test::gathered(rf) == wf));

    ember::dndarray<bool, 2> ab = a > 5.0;
    ember::dndarray<bool, 1> rb = ab(a < 20.0);
    std::vector<unsigned char> wb;
    for (double v : data)
      if (v < 20.0) wb.push_back(v > 5.0);
    CHECK(test::all_ranks(test::gathered(rb) == wb));
  }
}

TEST_CASE("a(mask) = scalar and a(mask) = values write in place at every split", "[selection]") {
  std::mt19937_64 g(5);
  const std::array<i64, 3> shape{5, 3, 4};
  const i64 n = 60;
  const auto data = values_of(n, 1);
  for (int kind = 0; kind < 4; ++kind) {
    const auto mv = mask_values(n, g, 0.5, kind);
    for (auto sa : splits_of(3))
      for (auto sm : splits_of(3)) {
        INFO("split " << ember::detail::axis_str(sa) << " mask split " << ember::detail::axis_str(sm) << " kind " << kind);
        auto a = make<double, 3>(data, shape, sa);
        auto alias = a;  // shares the storage: sees the writes
        auto m = make_mask<3>(mv, shape, sm);
        a(m) = -7.0;
        auto want = data;
        i64 count = 0;
        for (i64 i = 0; i < n; ++i)
          if (mv[std::size_t(i)] > 0.5) want[std::size_t(i)] = -7.0, ++count;
        CHECK(test::all_ranks(test::gathered(alias) == want));
        CHECK(test::all_ranks(a.layout() == alias.layout()));

        // values: one per true element, in C order, from an array of any split
        std::vector<double> vals(static_cast<std::size_t>(count));
        for (i64 j = 0; j < count; ++j) vals[std::size_t(j)] = 1000.0 + double(j);
        for (auto sv : splits_of(1)) {
          auto b = make<double, 3>(data, shape, sa);
          const auto before = b.layout();
          auto v = make<double, 1>(vals, {count}, sv);
          b(m) = v;
          auto w2 = data;
          i64 j = 0;
          for (i64 i = 0; i < n; ++i)
            if (mv[std::size_t(i)] > 0.5) w2[std::size_t(i)] = vals[std::size_t(j++)];
          CHECK(test::all_ranks(test::gathered(b) == w2));
          CHECK(test::all_ranks(b.layout() == before));
        }
        // compound assignment through the mask
        {
          auto e = make<double, 3>(data, shape, sa);
          e(m) += 1.5;
          e(m) *= 2.0;
          auto w4 = data;
          for (i64 i = 0; i < n; ++i)
            if (mv[std::size_t(i)] > 0.5) w4[std::size_t(i)] = (data[std::size_t(i)] + 1.5) * 2.0;
          CHECK(test::all_ranks(test::gathered(e) == w4));
          std::vector<double> inc(static_cast<std::size_t>(count), 0.5);
          e(m) -= make<double, 1>(inc, {count}, 0);
          for (i64 i = 0; i < n; ++i)
            if (mv[std::size_t(i)] > 0.5) w4[std::size_t(i)] -= 0.5;
          CHECK(test::all_ranks(test::gathered(e) == w4));
        }
        // a(m) = b(m): the selection of another array
        auto c = make<double, 3>(data, shape, sa);
        auto d = ember::full<double>({5, 3, 4}, 2.5, {.split = 0});
        c(m) = d(m);
        auto w3 = data;
        for (i64 i = 0; i < n; ++i)
          if (mv[std::size_t(i)] > 0.5) w3[std::size_t(i)] = 2.5;
        CHECK(test::all_ranks(test::gathered(c) == w3));
      }
  }
}

TEST_CASE("nonzero, argwhere and where(mask): coordinates in C order, balanced", "[selection]") {
  std::mt19937_64 g(7);
  for (int trial = 0; trial < 5; ++trial) {
    const auto shape = random_shape3(g);
    const i64 n = numel<3>(shape);
    for (int kind = 0; kind < 4; ++kind) {
      const auto mv = mask_values(n, g, 0.3, kind);
      std::vector<std::vector<i64>> want(3);
      std::vector<i64> rows;
      for (i64 i = 0; i < n; ++i)
        if (mv[std::size_t(i)] > 0.5) {
          const i64 c[3] = {i / (shape[1] * shape[2]), (i / shape[2]) % shape[1], i % shape[2]};
          for (int d = 0; d < 3; ++d) want[std::size_t(d)].push_back(c[d]), rows.push_back(c[d]);
        }
      for (auto sm : splits_of(3)) {
        INFO("shape " << ember::detail::shape_str(shape) << " mask split " << ember::detail::axis_str(sm) << " kind " << kind);
        auto m = make_mask<3>(mv, shape, sm, 2);
        auto nz = ember::nonzero(m);
        for (int d = 0; d < 3; ++d) {
          CHECK(test::all_ranks(balanced_split0(nz[std::size_t(d)])));
          CHECK(test::all_ranks(test::gathered(nz[std::size_t(d)]) == want[std::size_t(d)]));
        }
        auto aw = ember::argwhere(m);
        CHECK(test::all_ranks(aw.shape() == std::array<i64, 2>{i64(want[0].size()), 3}));
        CHECK(test::all_ranks(balanced_split0(aw)));
        CHECK(test::all_ranks(test::gathered(aw) == rows));
        auto wh = ember::where(m);
        CHECK(test::all_ranks(test::gathered(wh[1]) == want[1]));
      }
      // 1-D, from an expression
      auto x = make<double, 1>(mv, {n}, 0);
      auto nz1 = ember::nonzero(x > 0.5);
      std::vector<i64> w1;
      for (i64 i = 0; i < n; ++i)
        if (mv[std::size_t(i)] > 0.5) w1.push_back(i);
      CHECK(test::all_ranks(test::gathered(nz1[0]) == w1));
    }
  }
}

TEST_CASE("take along every axis: every split of the array and of the indices, duplicates and negatives", "[selection][take]") {
  std::mt19937_64 g(13);
  for (int trial = 0; trial < 5; ++trial) {
    auto shape = random_shape3(g);
    for (auto& e : shape) e = std::max<i64>(e, 1);
    const i64 n = numel<3>(shape);
    const auto data = values_of(n, trial);
    for (int ax = 0; ax < 3; ++ax) {
      const i64 len = shape[std::size_t(ax)];
      std::uniform_int_distribution<i64> pick(-len, len - 1);
      const i64 m = std::uniform_int_distribution<i64>(0, 9)(g);
      std::vector<i64> idx(static_cast<std::size_t>(m));
      for (auto& i : idx) i = pick(g);
      if (m > 1) idx[1] = idx[0];  // a duplicate
      // reference
      std::array<i64, 3> rs = shape;
      rs[std::size_t(ax)] = m;
      std::vector<double> want;
      for (i64 i0 = 0; i0 < rs[0]; ++i0)
        for (i64 i1 = 0; i1 < rs[1]; ++i1)
          for (i64 i2 = 0; i2 < rs[2]; ++i2) {
            i64 c[3] = {i0, i1, i2};
            i64 k = idx[std::size_t(c[ax])];
            c[ax] = k < 0 ? k + len : k;
            want.push_back(data[std::size_t((c[0] * shape[1] + c[1]) * shape[2] + c[2])]);
          }
      for (auto sa : splits_of(3))
        for (auto si : splits_of(1)) {
          INFO("shape " << ember::detail::shape_str(shape) << " axis " << ax << " split " << ember::detail::axis_str(sa)
                        << " index split " << ember::detail::axis_str(si) << " m " << m);
          auto a = make<double, 3>(data, shape, sa, 1 + trial % 2);
          auto ia = make<i64, 1>(idx, {m}, si, 1 + trial % 2);
          auto r = ember::take(a, ia, ax);
          CHECK(test::all_ranks(r.shape() == rs));
          CHECK(test::all_ranks(test::gathered(r) == want));
          // the documented layouts
          if (sa == ax) CHECK(test::all_ranks(r.split() == ax));
          else if (sa) CHECK(test::all_ranks(r.split() == sa && r.lshape_map()[0][std::size_t(*sa)] == a.lshape_map()[0][std::size_t(*sa)]));
          else CHECK(test::all_ranks(r.split() == (si ? ember::split_axis(ax) : ember::none)));
          if (sa == ax && si) CHECK(test::all_ranks(r.lshape()[std::size_t(ax)] == ia.lshape()[0]));
          // the last axis as -1
          if (ax == 2) CHECK(test::all_ranks(test::gathered(ember::take(a, ia, -1)) == want));
          // int32 indices
          std::vector<std::int32_t> idx32(idx.begin(), idx.end());
          auto i32 = make<std::int32_t, 1>(idx32, {m}, si);
          CHECK(test::all_ranks(test::gathered(ember::take(a, i32, ax)) == want));
          if (ax == 1) {  // expressions and views for the array and the indices
            CHECK(test::all_ranks(test::gathered(ember::take(a * 1.0, ia, ax)) == want));
            CHECK(test::all_ranks(test::gathered(ember::take(a, ia + 0, ax)) == want));
            CHECK(test::all_ranks(test::gathered(ember::take(a(ember::all), ia * 1, ax)) == want));
          }
          if (ax == 0) {
            ember::dndarray<double, 3> r0 = a(ia);
            CHECK(test::all_ranks(test::gathered(r0) == want));
            r0 = a(ia + 0);
            CHECK(test::all_ranks(test::gathered(r0) == want));
          }
        }
    }
  }
}

TEST_CASE("take of many random indices from a 1-D array (the benchmark's shape); flat take", "[selection][take]") {
  std::mt19937_64 g(17);
  const i64 n = 1000, m = 3000;
  const auto data = values_of(n, 9);
  std::vector<i64> idx(static_cast<std::size_t>(m));
  std::uniform_int_distribution<i64> pick(-n, n - 1);
  for (auto& i : idx) i = pick(g);
  std::vector<double> want;
  for (auto i : idx) want.push_back(data[std::size_t(i < 0 ? i + n : i)]);
  for (auto sa : splits_of(1))
    for (auto si : splits_of(1)) {
      auto a = make<double, 1>(data, {n}, sa);
      auto ia = make<i64, 1>(idx, {m}, si, 2);
      CHECK(test::all_ranks(test::gathered(ember::take(a, ia, 0)) == want));
      CHECK(test::all_ranks(test::gathered(ember::take(a, ia)) == want));
    }
  // flat take from 2-D and 3-D arrays at every split
  const std::array<i64, 3> shape{4, 5, 6};
  const auto d3 = values_of(120, 4);
  std::vector<i64> fidx;
  std::uniform_int_distribution<i64> fp(-120, 119);
  for (int j = 0; j < 77; ++j) fidx.push_back(fp(g));
  std::vector<double> fw;
  for (auto i : fidx) fw.push_back(d3[std::size_t(i < 0 ? i + 120 : i)]);
  for (auto sa : splits_of(3))
    for (auto si : splits_of(1)) {
      auto a = make<double, 3>(d3, shape, sa);
      auto ia = make<i64, 1>(fidx, {77}, si);
      auto r = ember::take(a, ia);
      CHECK(test::all_ranks(test::gathered(r) == fw));
      CHECK(test::all_ranks(r.split() == (sa || si ? ember::split_axis(0) : ember::none)));
    }
}

TEST_CASE("put: flat indices, cycled values, scalars, duplicates (the last write wins)", "[selection][put]") {
  std::mt19937_64 g(19);
  const std::array<i64, 2> shape{6, 7};
  const i64 n = 42;
  const auto data = values_of(n, 2);
  for (int trial = 0; trial < 4; ++trial) {
    const i64 m = std::uniform_int_distribution<i64>(0, 30)(g);
    std::vector<i64> idx(static_cast<std::size_t>(m));
    std::uniform_int_distribution<i64> pick(-n, n - 1);
    for (auto& i : idx) i = pick(g);
    if (m > 3) idx[3] = idx[0] < 0 ? idx[0] + n : idx[0] - n;  // the same element, spelt the other way
    const i64 L = trial == 0 ? m : std::max<i64>(1, m / 3);
    std::vector<double> vals(static_cast<std::size_t>(L));
    for (i64 j = 0; j < L; ++j) vals[std::size_t(j)] = 500.0 + double(j);
    auto want = data, wscalar = data;
    for (i64 j = 0; j < m; ++j) {
      const i64 f = idx[std::size_t(j)] < 0 ? idx[std::size_t(j)] + n : idx[std::size_t(j)];
      want[std::size_t(f)] = vals[std::size_t(j % L)];
      wscalar[std::size_t(f)] = -1.0;
    }
    for (auto sa : splits_of(2))
      for (auto si : splits_of(1))
        for (auto sv : splits_of(1)) {
          INFO("split " << ember::detail::axis_str(sa) << " index split " << ember::detail::axis_str(si) << " values split "
                        << ember::detail::axis_str(sv) << " m " << m << " L " << L);
          auto a = make<double, 2>(data, shape, sa);
          auto ia = make<i64, 1>(idx, {m}, si);
          auto v = make<double, 1>(vals, {L}, sv, 2);
          ember::put(a, ia, v);
          CHECK(test::all_ranks(test::gathered(a) == want));
          auto b = make<double, 2>(data, shape, sa);
          ember::put(b, ia, -1.0);
          CHECK(test::all_ranks(test::gathered(b) == wscalar));
        }
  }
}

TEST_CASE("a(indices) = v writes rows along axis 0", "[selection][put]") {
  const std::array<i64, 2> shape{6, 3};
  const auto data = values_of(18, 5);
  const std::vector<i64> idx{4, -1, 0, 2};
  std::vector<double> rowsv(12);
  for (int j = 0; j < 12; ++j) rowsv[std::size_t(j)] = 100.0 + j;
  for (auto sa : splits_of(2))
    for (auto si : splits_of(1)) {
      auto a = make<double, 2>(data, shape, sa);
      auto ia = make<i64, 1>(idx, {4}, si);
      a(ia) = 9.0;
      auto want = data;
      for (auto i : idx)
        for (int k = 0; k < 3; ++k) want[std::size_t((i < 0 ? i + 6 : i) * 3 + k)] = 9.0;
      CHECK(test::all_ranks(test::gathered(a) == want));
      auto b = make<double, 2>(data, shape, sa);
      auto v = make<double, 2>(rowsv, {4, 3}, si);
      b(ia) = v;
      auto w2 = data;
      for (std::size_t j = 0; j < idx.size(); ++j)
        for (int k = 0; k < 3; ++k) w2[std::size_t((idx[j] < 0 ? idx[j] + 6 : idx[j]) * 3 + k)] = rowsv[j * 3 + std::size_t(k)];
      CHECK(test::all_ranks(test::gathered(b) == w2));
    }
}

TEST_CASE("selection errors are the same on every rank", "[selection][collective]") {
  auto a = ember::arange<double>(0, 24, 1, {.split = 0});
  ember::dndarray<double, 2> a2 = ember::zeros<double>({6, 4}, {.split = 0});
  auto bad_mask = ember::zeros<double>({6, 3}, {.split = 0});
  expect_collective_throw<ember::shape_error>([&] { ember::dndarray<double, 1> r = a2(bad_mask > 0.0); (void)r; },
                                              {"(6, 3)", "(6, 4)", "mask"});
  // an out-of-range index held by one rank only (the last), at every split of a
  std::vector<i64> local;
  if (me() == P() - 1) local = {1, 24, 3};
  else local = {0, -24};
  auto ia = ember::array(std::span<const i64>(local), std::array<i64, 1>{i64(local.size())}, {.is_split = 0});
  for (auto sa : splits_of(1)) {
    auto b = ember::arange<double>(0, 24, 1, {.split = sa});
    expect_collective_throw<ember::index_error>([&] { (void)ember::take(b, ia, 0); }, {"index 24", "axis 0", "size 24"});
    expect_collective_throw<ember::index_error>([&] { (void)ember::take(b, ia); }, {"index 24", "size 24"});
    expect_collective_throw<ember::index_error>([&] { ember::put(b, ia, 1.0); }, {"index 24", "size 24"});
    expect_collective_throw<ember::index_error>([&] { b(ia) = 1.0; }, {"index 24", "axis 0", "size 24"});
  }
  auto b2 = ember::zeros<double>({6, 4}, {.split = 1});
  std::vector<i64> i5{0, -7};
  auto ib = ember::array(std::span<const i64>(i5), std::array<i64, 1>{2}, {.split = 0});
  expect_collective_throw<ember::index_error>([&] { (void)ember::take(b2, ib, 0); }, {"index -7", "axis 0", "size 6"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::take(b2, ib, 2); }, {"axis 2"});
  // a(mask) = v with the wrong number of values
  auto v = ember::ones<double>({5}, {.split = 0});
  expect_collective_throw<ember::value_error>([&] { a(a < 3.0) = v; }, {"cannot assign 5 input values to the 3 output values"});
  expect_collective_throw<ember::value_error>([&] { a2(a2 < 1.0) = v; }, {"cannot assign 5", "24 output values"});
}

TEST_CASE("selection sends what it must: a local take sends no rows, a mask on balanced data little", "[selection]") {
  // split along another axis than the take's: no data traffic beyond the indices' allgather
  auto a = ember::arange<double>(0, 40, 1, {.split = 0});
  ember::dndarray<double, 2> a2 = ember::zeros<double>({8, 5}, {.split = 1});
  std::vector<i64> idx{7, 0, 3};
  auto ir = ember::array(std::span<const i64>(idx), std::array<i64, 1>{3}, {.split = ember::none});
  const auto before = a2.comm().sent().bytes;
  auto r = ember::take(a2, ir, 0);
  const auto sent_take = a2.comm().sent().bytes - before;
  CHECK(test::all_ranks(sent_take == 0));
  CHECK(test::all_ranks(r.split() == 1 && r.lshape_map()[0][1] == a2.lshape_map()[0][1]));
  // an all-true mask on a balanced split-0 array: every element stays where it is
  ember::dndarray<bool, 1> all_true = a >= 0.0;
  const auto b0 = a.comm().sent().bytes;
  auto s = ember::masked(a, all_true);
  const auto sent_mask = a.comm().sent().bytes - b0;
  CHECK(test::all_ranks(s.layout() == a.layout()));
  CHECK(test::all_ranks(sent_mask == std::int64_t(P() - 1) * 8));  // only the counts' allgather
  // split along axis 1: no move of the array, one count per row, each selected element sent at most once
  auto b1 = ember::resplit(ember::dndarray<double, 2>(ember::zeros<double>({8, 40}, {.split = 0})), 1);
  ember::dndarray<bool, 2> half = b1 < 1.0;
  const auto s0 = b1.comm().sent().bytes;
  auto sb = ember::masked(b1, half);
  const auto sent1 = b1.comm().sent().bytes - s0;
  CHECK(test::all_ranks(sb.shape()[0] == 320));
  CHECK(test::all_ranks(sent1 <= b1.lnumel() * 8 + std::int64_t(P() - 1) * 8 * 8));
}

TEST_CASE("selection in messages of a few bytes (the chunking of large transfers)", "[selection]") {
  struct limit {
    std::int64_t saved = ember::config().max_message_bytes;
    limit() { ember::config().max_message_bytes = 24; }  // three doubles per message
    ~limit() { ember::config().max_message_bytes = saved; }
  } l;
  std::mt19937_64 g(23);
  const i64 n = 101, m = 157;
  const auto data = values_of(n, 3);
  const auto mv = mask_values(n, g, 0.6, 0);
  std::vector<i64> idx(static_cast<std::size_t>(m));
  std::uniform_int_distribution<i64> pick(-n, n - 1);
  for (auto& i : idx) i = pick(g);
  std::vector<double> wm, wt;
  for (i64 i = 0; i < n; ++i)
    if (mv[std::size_t(i)] > 0.5) wm.push_back(data[std::size_t(i)]);
  for (auto i : idx) wt.push_back(data[std::size_t(i < 0 ? i + n : i)]);
  auto a = make<double, 1>(data, {n}, 0, 2);  // everything on the last rank: every element moves
  auto mk = make_mask<1>(mv, {n}, 0, 2);
  CHECK(test::all_ranks(test::gathered(ember::masked(a, mk)) == wm));
  auto ia = make<i64, 1>(idx, {m}, 0);
  CHECK(test::all_ranks(test::gathered(ember::take(a, ia, 0)) == wt));
  auto aw = ember::argwhere(mk);
  CHECK(test::all_ranks(aw.shape()[0] == i64(wm.size())));
  auto b = make<double, 1>(data, {n}, 0);
  std::vector<double> vals(static_cast<std::size_t>(m));
  for (i64 j = 0; j < m; ++j) vals[std::size_t(j)] = double(j);
  auto want = data;
  for (i64 j = 0; j < m; ++j) want[std::size_t(idx[std::size_t(j)] < 0 ? idx[std::size_t(j)] + n : idx[std::size_t(j)])] = double(j);
  ember::put(b, ia, make<double, 1>(vals, {m}, 0));
  CHECK(test::all_ranks(test::gathered(b) == want));
}

TEST_CASE("a(mask) and a(indices) as operands: reductions, ufuncs, operators, taken once", "[selection][operand]") {
  const std::array<i64, 2> shape{9, 4};
  const auto data = values_of(36, 5);
  std::vector<double> pos;
  for (double v : data)
    if (v > 0.0) pos.push_back(v);
  double s = 0, mx = -1e300;
  for (double v : pos) s += v, mx = std::max(mx, v);
  for (auto sa : splits_of(2)) {
    INFO("split " << ember::detail::axis_str(sa));
    auto a = make<double, 2>(data, shape, sa);
    // NumPy's a[a > 0].sum(), .max(), .mean(), a[a > 0] * 2 + 1, np.sqrt(a[a > 0])
    CHECK(test::all_ranks(std::abs(ember::sum(a(a > 0.0)) - s) <= 1e-12 * std::abs(s)));
    CHECK(test::all_ranks(ember::max(a(a > 0.0)) == mx));
    CHECK(test::all_ranks(std::abs(ember::mean(a(a > 0.0)) - s / double(pos.size())) <= 1e-12 * std::abs(s)));
    ember::dndarray<double, 1> t = a(a > 0.0) * 2.0 + 1.0;
    std::vector<double> wt, wq;
    for (double v : pos) wt.push_back(v * 2.0 + 1.0), wq.push_back(std::sqrt(v));
    CHECK(test::all_ranks(test::gathered(t) == wt));
    ember::dndarray<double, 1> q = ember::sqrt(a(a > 0.0));
    CHECK(test::all_ranks(test::gathered(q) == wq));
    // one selection object read twice is taken once (no second selection's traffic)
    auto sel = a(a > 0.0);
    const double s1 = ember::sum(sel);
    const auto before = a.comm().sent().bytes;
    const double s2 = ember::sum(sel * 1.0);
    const auto sent = a.comm().sent().bytes - before;
    CHECK(test::all_ranks(s1 == s2));
    CHECK(test::all_ranks(sent <= 16 * std::int64_t(P())));  // the sum's allreduce and agreement, no selection
    // a write through it forgets it: the next read sees the new values
    sel = 1.0;
    CHECK(test::all_ranks(ember::sum(sel) == double(pos.size())));
    // a(indices) as an operand: np.take rows, then a reduction over them
    auto idx = ember::array(std::vector<std::int64_t>{3, 0, -1, 3});
    const double want_rows = [&] {
      double w = 0;
      auto b = data;
      for (double& v : b)
        if (v > 0.0) v = 1.0;
      for (i64 r : {3, 0, 8, 3})
        for (i64 j = 0; j < 4; ++j) w += b[std::size_t(r * 4 + j)];
      return w;
    }();
    CHECK(test::all_ranks(ember::sum(a(idx)) == want_rows));
    // a(idx) += 1 is NumPy's buffered a[idx] = a[idx] + 1: a repeated row adds once
    auto c = make<double, 2>(data, shape, sa);
    c(idx) += 1.0;
    auto wc = data;
    for (i64 r : {3, 0, 8})
      for (i64 j = 0; j < 4; ++j) wc[std::size_t(r * 4 + j)] += 1.0;
    CHECK(test::all_ranks(test::gathered(c) == wc));
  }
}

TEST_CASE("masks and index arrays on views: read, assign, compound, at every split", "[selection][view]") {
  using ember::slice;
  const std::array<i64, 2> shape{8, 6};
  const auto data = values_of(48, 9);
  // the serial view u[1:7, ::2] (6 x 3) in C order, as flat indices into the base
  std::vector<i64> vix;
  for (i64 i = 1; i < 7; ++i)
    for (i64 j = 0; j < 6; j += 2) vix.push_back(i * 6 + j);
  for (auto sa : splits_of(2)) {
    INFO("split " << ember::detail::axis_str(sa));
    auto u = make<double, 2>(data, shape, sa);
    auto v = u(slice(1, 7), slice(ember::none, ember::none, 2));
    std::vector<double> want;
    for (i64 f : vix)
      if (data[std::size_t(f)] > 0.0) want.push_back(data[std::size_t(f)]);
    ember::dndarray<double, 1> r = v(v > 0.0);  // u[1:7, ::2][u[1:7, ::2] > 0]
    CHECK(test::all_ranks(test::gathered(r) == want));
    // v[v < 0] = 0 writes into u; v[v > 10] *= 2
    v(v < 0.0) = 0.0;
    v(v > 10.0) *= 2.0;
    auto w = data;
    for (i64 f : vix) {
      double& x = w[std::size_t(f)];
      if (x < 0.0) x = 0.0;
      if (x > 10.0) x *= 2.0;
    }
    CHECK(test::all_ranks(test::gathered(u) == w));
    // v[m] = values (one per true element)
    ember::dndarray<bool, 2> m = v > 5.0;
    const i64 count = ember::count_nonzero(m);
    auto vals = ember::arange<double>(count) + 100.0;
    v(m) = vals;
    i64 k = 0;
    for (i64 f : vix)
      if (w[std::size_t(f)] > 5.0) w[std::size_t(f)] = 100.0 + double(k++);
    CHECK(test::all_ranks(k == count));
    CHECK(test::all_ranks(test::gathered(u) == w));
    // v[idx] (rows of the view) read and written
    auto idx = ember::array(std::vector<std::int64_t>{0, -1});
    ember::dndarray<double, 2> rows = v(idx);
    std::vector<double> wr;
    for (i64 rr : {0, 5})
      for (i64 j = 0; j < 3; ++j) wr.push_back(w[std::size_t(vix[std::size_t(rr * 3 + j)])]);
    CHECK(test::all_ranks(test::gathered(rows) == wr));
    v(idx) = -1.0;
    for (i64 rr : {0, 5})
      for (i64 j = 0; j < 3; ++j) w[std::size_t(vix[std::size_t(rr * 3 + j)])] = -1.0;
    CHECK(test::all_ranks(test::gathered(u) == w));
    // a mask of the wrong shape: a shape_error on every rank
    auto bad = ember::zeros<bool>({6, 2});
    expect_collective_throw<ember::shape_error>([&] { ember::dndarray<double, 1> x = v(bad); (void)x; }, {"(6, 2)", "(6, 3)"});
  }
}
