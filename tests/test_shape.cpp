// Shape manipulation (issue 14, shape/): reshape, flatten/ravel, expand_dims,
// squeeze, transpose/moveaxis/swapaxes, concatenate/stack/hstack/vstack,
// split/array_split, repeat/tile, tril/triu/diagonal/diag/trace, meshgrid, pad.
// Every result is gathered and compared, element by element and exactly, with a
// serial reference written from NumPy's definitions (index arithmetic on the
// flat data, independent of the library); each at every split, on uneven
// layouts, with the measured traffic equal to the prediction where it is given.
#include <functional>
#include <random>

#include "collective.hpp"

namespace {

using i64 = std::int64_t;
using shape_t = std::vector<i64>;

// ---- the serial reference: a row-major N-d array ----
struct nd {
  shape_t shape;
  std::vector<double> v;
  i64 size() const { return i64(v.size()); }
  i64 flat(const shape_t& idx) const {
    i64 f = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
    return f;
  }
  double at(const shape_t& idx) const { return v[std::size_t(flat(idx))]; }
};
i64 numel_of(const shape_t& s) {
  i64 n = 1;
  for (auto e : s) n *= e;
  return n;
}
shape_t unflat(i64 f, const shape_t& s) {
  shape_t idx(s.size());
  for (std::size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? f % s[d] : 0;
    f = s[d] ? f / s[d] : 0;
  }
  return idx;
}
// The array of `shape` whose element at idx is f(idx).
nd build(const shape_t& shape, const std::function<double(const shape_t&)>& f) {
  nd r{shape, std::vector<double>(std::size_t(numel_of(shape)))};
  for (i64 i = 0; i < r.size(); ++i) r.v[std::size_t(i)] = f(unflat(i, shape));
  return r;
}
nd values(const shape_t& shape, int seed) {
  return build(shape, [&, i = i64(0)](const shape_t&) mutable {
    const i64 k = i++;
    return double((k * 31 + seed) % 97) - 40.0 + 0.5 * double(k % 4);
  });
}

// An array holding `x`, split along `split`, with an uneven map (one row moved
// from rank 0 to rank 1 where it can).
template <int N>
ember::dndarray<double, N> make(const nd& x, ember::split_axis split) {
  std::array<i64, N> s{};
  std::copy(x.shape.begin(), x.shape.end(), s.begin());
  auto a = ember::array(std::span<const double>(x.v), s, {.split = split});
  test::unbalance(a);
  return a;
}
template <class A>
nd got(const A& x) {
  auto a = ember::eval(x);
  const auto s = a.shape();
  return {shape_t(s.begin(), s.end()), test::gathered(a)};
}
bool same(const nd& a, const nd& b) { return test::all_ranks(a.shape == b.shape && a.v == b.v); }

std::vector<ember::split_axis> splits(int n) {
  std::vector<ember::split_axis> s{ember::none};
  for (int d = 0; d < n; ++d) s.emplace_back(d);
  return s;
}

}  // namespace

TEST_CASE("reshape: values in C order, every split, exact predicted traffic", "[shape][reshape]") {
  struct pair_case {
    shape_t from;
    std::array<i64, 3> to;
  };
  // (refinable pairs, one without a common refinement, a -1, extent-1 axes, empty)
  const std::vector<pair_case> cases = {
      {{12, 10}, {3, 4, 10}}, {{12, 10}, {6, 2, 10}}, {{12, 10}, {2, 60, 1}}, {{12, 10}, {4, 6, 5}},
      {{12, 10}, {5, 4, 6}},  {{12, 10}, {-1, 3, 5}}, {{12, 10}, {1, 120, 1}}, {{1, 7}, {7, 1, 1}},
      {{0, 5}, {5, 0, 3}}};
  for (const auto& c : cases)
    for (auto sp : splits(2)) {
      const nd x = values(c.from, 3);
      auto a = make<2>(x, sp);
      for (int want = -2; want < 3; ++want) {  // -2: chosen, -1: none, k: split k
        ember::shape_options o;
        if (want == -1) o.split = ember::none;
        if (want >= 0) o.split = want;
        INFO("from " << ember::detail::shape_str(c.from) << " split " << ember::detail::axis_str(sp) << " to "
                     << ember::detail::shape_str(c.to) << " want " << want);
        const auto geo = ember::plan_reshape(a, c.to, o);
        const auto before = W().sent();
        auto r = ember::reshape(a, c.to, o);
        const auto moved = W().sent() - before;
        CHECK(moved.bytes == geo.predicted(me(), sizeof(double)).bytes);
        CHECK(moved.messages == geo.predicted(me(), sizeof(double)).messages);
        const nd g = got(r);
        shape_t to(c.to.begin(), c.to.end());
        for (auto& e : to)
          if (e == -1) e = numel_of(c.from) / (c.to[1] * c.to[2]);
        CHECK(same(g, nd{to, x.v}));
        if (want == -1) CHECK(!r.split());
        if (want >= 0) CHECK(r.split() == want);
        CHECK(test::all_ranks(geo.target() == r.layout()));
      }
    }
}

TEST_CASE("reshape: measured bytes equal the prediction, and nothing moves when rows stay whole", "[shape][reshape]") {
  const nd x = values({16, 6}, 1);
  for (auto sp : splits(2)) {
    auto a = ember::array(std::span<const double>(x.v), std::array<i64, 2>{16, 6}, {.split = sp});
    for (const auto& to : std::vector<std::array<i64, 2>>{{8, 12}, {4, 24}, {12, 8}, {96, 1}, {3, 32}}) {
      const auto geo = ember::plan_reshape(a, to);
      const auto t0 = W().sent();
      auto r = ember::reshape(a, to);
      const auto t1 = W().sent();
      CHECK(t1.bytes - t0.bytes == geo.predicted(me(), sizeof(double)).bytes);
      CHECK(t1.messages - t0.messages == geo.predicted(me(), sizeof(double)).messages);
      CHECK(same(got(r), nd{{to[0], to[1]}, x.v}));
      if (geo.shares_storage()) CHECK(r.lstorage() == a.lstorage());
      else CHECK(test::all_ranks(r.lstorage() != a.lstorage() || r.lnumel() == 0));
    }
  }
  // split 0, 16 rows over P ranks to (8, 12): whole pairs of rows stay (P = 1, 2, 4)
  auto a = ember::array(std::span<const double>(x.v), std::array<i64, 2>{16, 6}, {.split = 0});
  const auto geo = ember::plan_reshape(a, {8, 12});
  CHECK(geo.shares_storage() == (16 / P() % 2 == 0 && 16 % P() == 0));
  auto r = ember::reshape(a, {8, 12});
  if (geo.shares_storage()) {
    CHECK(r.lstorage() == a.lstorage());
    r(0, ember::slice(0, 1)) = 1000.0;  // a view, as NumPy's: a[0, 0] sees it
    CHECK(a.item({0, 0}) == 1000.0);
  }
  // a replicated array reshapes in place, on every rank
  auto b = ember::array(std::span<const double>(x.v), std::array<i64, 2>{16, 6});
  CHECK(ember::plan_reshape(b, {4, 4, 6}).shares_storage());
  // a split-1 array to split 0 moves (the second case)
  auto c = ember::array(std::span<const double>(x.v), std::array<i64, 2>{16, 6}, {.split = 1});
  const auto g2 = ember::plan_reshape(c, {8, 12}, {.split = 0});
  if (P() == 2) CHECK(ember::plan_reshape(c, {8, 12}).target().split() == 0);  // as much stays as with split 1
  if (P() > 1) CHECK(!g2.shares_storage());
  CHECK(g2.describe(me(), 8).find("reshape (16, 6) split 1 -> (8, 12) split 0") != std::string::npos);
}

TEST_CASE("reshape: errors on every rank", "[shape][reshape][collective]") {
  auto a = ember::zeros<double>({6, 4}, {.split = 0});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::reshape(a, {5, 5}); },
                                              {"size 24", "(6, 4)", "(5, 5)"});
  expect_collective_throw<ember::value_error>([&] { (void)ember::reshape(a, {-1, -1}); }, {"one unknown dimension"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::reshape(a, {5, -1}); }, {"(5, -1)"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::reshape(a, {24}, {.split = 1}); }, {"split axis 1"});
}

TEST_CASE("ravel, flatten, and reshape of an expression", "[shape][reshape]") {
  const nd x = values({5, 3, 4}, 2);
  for (auto sp : splits(3)) {
    auto a = make<3>(x, sp);
    CHECK(same(got(ember::ravel(a)), nd{{60}, x.v}));
    auto f = ember::flatten(a);
    CHECK(test::all_ranks(f.lstorage() != a.lstorage() || f.lnumel() == 0));
    CHECK(same(got(f), nd{{60}, x.v}));
    nd twice = x;
    for (auto& e : twice.v) e = 2.0 * e + 1.0;
    CHECK(same(got(ember::reshape(2.0 * a + 1.0, {15, 4})), nd{{15, 4}, twice.v}));
  }
}

TEST_CASE("expand_dims, squeeze, transpose, moveaxis, swapaxes are views", "[shape][axes]") {
  const nd x = values({4, 1, 5}, 5);
  for (auto sp : splits(3)) {
    auto a = make<3>(x, sp);
    const auto blocks = ember::allocations().count;
    auto e = ember::expand_dims(a, 1);
    auto t = ember::transpose(a, {2, 0, 1});
    CHECK(ember::allocations().count == blocks);  // building views allocates no block
    CHECK(same(got(e), build({4, 1, 1, 5}, [&](const shape_t& i) { return x.at({i[0], i[1], i[3]}); })));
    CHECK(same(got(ember::expand_dims(a, -1)), build({4, 1, 5, 1}, [&](const shape_t& i) { return x.at({i[0], i[1], i[2]}); })));
    CHECK(same(got(ember::squeeze(a, 1)), build({4, 5}, [&](const shape_t& i) { return x.at({i[0], 0, i[1]}); })));
    CHECK(same(got(ember::squeeze<2>(a, 1)), got(ember::squeeze(a, 1))));
    CHECK(same(got(ember::squeeze<2>(a)), build({4, 5}, [&](const shape_t& i) { return x.at({i[0], 0, i[1]}); })));
    CHECK(same(got(t), build({5, 4, 1}, [&](const shape_t& i) { return x.at({i[1], i[2], i[0]}); })));
    CHECK(same(got(ember::moveaxis(a, 0, -1)), build({1, 5, 4}, [&](const shape_t& i) { return x.at({i[2], i[0], i[1]}); })));
    CHECK(same(got(ember::swapaxes(a, 0, 2)), build({5, 1, 4}, [&](const shape_t& i) { return x.at({i[2], i[1], i[0]}); })));
    // views of views compose; a transposed view in an expression
    auto tt = ember::transpose(ember::transpose(a, {2, 0, 1}), {1, 2, 0});
    CHECK(same(got(tt), x));
    CHECK(same(got(t + 1.0), build({5, 4, 1}, [&](const shape_t& i) { return x.at({i[1], i[2], i[0]}) + 1.0; })));
    // (n, 1, d) - (1, m, d): pairwise differences by broadcasting
    auto y2 = ember::squeeze(a, 1);  // (4, 5)
    auto pd = ember::eval(ember::expand_dims(y2, 1) - ember::expand_dims(y2, 0));
    CHECK(same(got(pd), build({4, 4, 5}, [&](const shape_t& i) { return x.at({i[0], 0, i[2]}) - x.at({i[1], 0, i[2]}); })));
    // assignment through a transposed view writes a's storage
    auto c = a.copy();
    ember::transpose(c, {2, 1, 0}) = ember::transpose(a, {2, 1, 0}) * 3.0;
    CHECK(same(got(c), build({4, 1, 5}, [&](const shape_t& i) { return 3.0 * x.at(i); })));
  }
  auto a = ember::zeros<double>({4, 1, 5}, {.split = 0});
  expect_collective_throw<ember::value_error>([&] { (void)ember::squeeze(a, 0); }, {"size not equal to one", "axis 0"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::squeeze<1>(a); }, {"(4, 1, 5)"});
  expect_collective_throw<ember::value_error>([&] { (void)ember::transpose(a, {0, 0, 1}); }, {"repeated axis 0"});
  expect_collective_throw<ember::axis_error>([&] { (void)ember::expand_dims(a, 5); }, {"axis 5"});
}

TEST_CASE("concatenate, stack, hstack, vstack at every split", "[shape][join]") {
  const nd x = values({4, 3}, 1), y = values({2, 3}, 2), z = values({4, 5}, 3);
  for (auto sx : splits(2))
    for (auto sy : splits(2)) {
      auto a = make<2>(x, sx), b = make<2>(y, sy), c = make<2>(z, sy);
      // axis 0: (4, 3) + (2, 3)
      CHECK(same(got(ember::concatenate({a, b, a}, 0)), build({10, 3}, [&](const shape_t& i) {
                   return i[0] < 4 ? x.at(i) : i[0] < 6 ? y.at({i[0] - 4, i[1]}) : x.at({i[0] - 6, i[1]});
                 })));
      // axis 1: (4, 3) + (4, 5)
      CHECK(same(got(ember::concatenate({a, c}, -1)),
                 build({4, 8}, [&](const shape_t& i) { return i[1] < 3 ? x.at(i) : z.at({i[0], i[1] - 3}); })));
      CHECK(same(got(ember::hstack({a, c})), got(ember::concatenate({a, c}, 1))));
      CHECK(same(got(ember::vstack({a, b})), got(ember::concatenate({a, b}, 0))));
      auto a2 = make<2>(x, sy);
      for (int ax = 0; ax < 3; ++ax)
        CHECK(same(got(ember::stack({a, a2}, ax)), build(ax == 0 ? shape_t{2, 4, 3} : ax == 1 ? shape_t{4, 2, 3} : shape_t{4, 3, 2},
                                                       [&](const shape_t& i) {
                                                         shape_t j = i;
                                                         j.erase(j.begin() + ax);
                                                         return x.at(j);
                                                       })));
      CHECK(same(got(ember::concatenate({a, b}, 0, {.split = ember::none})), got(ember::concatenate({a, b}, 0))));
    }
  // a common split on another axis: nothing moves
  auto a = ember::random::randn<double>({6, 4}, {.split = 1});
  auto b = ember::random::randn<double>({3, 4}, {.split = 1});
  const auto t0 = W().sent();
  auto r = ember::concatenate({a, b}, 0);
  CHECK(W().sent().bytes == t0.bytes);
  CHECK(r.split() == 1);
  // 1-D vstack makes rows
  auto v = ember::arange<double>(5, {.split = 0});
  CHECK(same(got(ember::vstack({v, v})), build({2, 5}, [](const shape_t& i) { return double(i[1]); })));
  CHECK(same(got(ember::hstack({v, v})), build({10}, [](const shape_t& i) { return double(i[0] % 5); })));
  expect_collective_throw<ember::shape_error>([&] { (void)ember::concatenate({a, ember::zeros<double>({3, 5})}, 0); },
                                              {"concatenation axis 0", "(6, 4)", "(3, 5)"});
  expect_collective_throw<ember::shape_error>([&] { (void)ember::stack({a, b}); }, {"(6, 4)", "(3, 4)"});
}

TEST_CASE("split and array_split: views of slabs", "[shape][split]") {
  const nd x = values({7, 6}, 4);
  for (auto sp : splits(2)) {
    auto a = make<2>(x, sp);
    auto parts = ember::array_split(a, 3, 0);  // 3, 2, 2 rows
    REQUIRE(parts.size() == 3);
    i64 at = 0;
    for (auto& p : parts) {
      const i64 n = p.shape()[0];
      CHECK(same(got(p), build({n, 6}, [&](const shape_t& i) { return x.at({at + i[0], i[1]}); })));
      at += n;
    }
    CHECK(at == 7);
    auto cols = ember::split(a, 3, 1);
    CHECK(same(got(cols[2]), build({7, 2}, [&](const shape_t& i) { return x.at({i[0], 4 + i[1]}); })));
    auto idx = ember::split(a, {2, -2, 3}, 0);  // a[:2], a[2:5], a[5:3] (empty), a[3:]
    REQUIRE(idx.size() == 4);
    CHECK(idx[1].shape()[0] == 3);
    CHECK(idx[2].shape()[0] == 0);
    CHECK(same(got(idx[3]), build({4, 6}, [&](const shape_t& i) { return x.at({3 + i[0], i[1]}); })));
    // a split piece is assignable: it is a view of a
    auto c = a.copy();
    ember::split(c, 7, 0)[6] = 0.5;
    CHECK(same(got(c), build({7, 6}, [&](const shape_t& i) { return i[0] == 6 ? 0.5 : x.at(i); })));
  }
  auto a = ember::zeros<double>({7, 6});
  expect_collective_throw<ember::value_error>([&] { (void)ember::split(a, 3, 0); }, {"equal division", "size 7"});
}

TEST_CASE("repeat and tile", "[shape][repeat]") {
  const nd x = values({5, 3}, 6);
  for (auto sp : splits(2)) {
    auto a = make<2>(x, sp);
    for (int ax = 0; ax < 2; ++ax) {
      const auto t0 = W().sent();
      auto r = ember::repeat(a, 3, ax);
      if (sp) CHECK(W().sent().bytes == t0.bytes);  // each rank's rows stay on it
      CHECK(same(got(r), build(ax == 0 ? shape_t{15, 3} : shape_t{5, 9}, [&](const shape_t& i) {
                   return ax == 0 ? x.at({i[0] / 3, i[1]}) : x.at({i[0], i[1] / 3});
                 })));
    }
    CHECK(same(got(ember::repeat(a, 2)), build({30}, [&](const shape_t& i) { return x.v[std::size_t(i[0] / 2)]; })));
    // one count per element (a distributed take): rows 0, 0, 2, 2, 2, 3, 4 ...
    const std::vector<i64> counts{2, 0, 3, 1, 1};
    std::vector<i64> src_row;
    for (i64 r = 0; r < 5; ++r)
      for (i64 c = 0; c < counts[std::size_t(r)]; ++c) src_row.push_back(r);
    CHECK(same(got(ember::repeat(a, counts, 0)),
               build({7, 3}, [&](const shape_t& i) { return x.at({src_row[std::size_t(i[0])], i[1]}); })));
    CHECK(same(got(ember::repeat(a, {2, 1, 0}, 1)),
               build({5, 3}, [&](const shape_t& i) { return x.at({i[0], i[1] < 2 ? 0 : 1}); })));
    CHECK(same(got(ember::repeat(a, {2}, 1)), got(ember::repeat(a, 2, 1))));  // one count broadcasts
    CHECK(same(got(ember::repeat(a, 0, 1)), nd{{5, 0}, {}}));
    CHECK(same(got(ember::tile(a, {2, 3})),
               build({10, 9}, [&](const shape_t& i) { return x.at({i[0] % 5, i[1] % 3}); })));
  }
}

TEST_CASE("tril, triu, diagonal, diag, trace", "[shape][triangle]") {
  const nd x = values({6, 4}, 7), s = values({2, 5, 5}, 8), v = values({5}, 9);
  for (auto sp : splits(2)) {
    auto a = make<2>(x, sp);
    for (i64 k = -7; k <= 5; k += 2) {
      CHECK(same(got(ember::tril(a, k)), build({6, 4}, [&](const shape_t& i) { return i[1] - i[0] <= k ? x.at(i) : 0.0; })));
      CHECK(same(got(ember::triu(a, k)), build({6, 4}, [&](const shape_t& i) { return i[1] - i[0] >= k ? x.at(i) : 0.0; })));
      const i64 r0 = std::max<i64>(0, -k), c0 = std::max<i64>(0, k);
      const i64 len = std::max<i64>(0, std::min<i64>(6 - r0, 4 - c0));
      const nd dg = build({len}, [&](const shape_t& i) { return x.at({i[0] + r0, i[0] + c0}); });
      CHECK(same(got(ember::diagonal(a, k)), dg));
      double tr = 0;
      for (double e : dg.v) tr += e;
      CHECK(ember::trace(a, k) == tr);  // the same few additions in the same order up to rounding
    }
    for (i64 k = -2; k <= 2; ++k) {
      auto d = ember::diag(make<1>(v, sp ? ember::split_axis(0) : ember::none), k);
      const i64 m = 5 + std::abs(k);
      CHECK(same(got(d), build({m, m}, [&](const shape_t& i) {
                   const i64 t = k >= 0 ? i[0] : i[1];
                   return i[1] - i[0] == k ? v.v[std::size_t(t)] : 0.0;
                 })));
    }
  }
  for (auto sp : splits(3)) {  // a stack of matrices: the last two axes
    auto a = make<3>(s, sp);
    CHECK(same(got(ember::tril(a, -1)), build({2, 5, 5}, [&](const shape_t& i) { return i[2] - i[1] <= -1 ? s.at(i) : 0.0; })));
  }
}

TEST_CASE("meshgrid, xy and ij", "[shape][meshgrid]") {
  const nd xs = values({4}, 1), ys = values({3}, 2);
  for (auto sp : splits(1)) {
    auto x = make<1>(xs, sp), y = make<1>(ys, sp);
    auto [X, Y] = ember::meshgrid(x, y);
    CHECK(same(got(X), build({3, 4}, [&](const shape_t& i) { return xs.v[std::size_t(i[1])]; })));
    CHECK(same(got(Y), build({3, 4}, [&](const shape_t& i) { return ys.v[std::size_t(i[0])]; })));
    auto [I, J] = ember::meshgrid(x, y, {.indexing = ember::indexing::ij});
    CHECK(same(got(I), build({4, 3}, [&](const shape_t& i) { return xs.v[std::size_t(i[0])]; })));
    CHECK(same(got(J), build({4, 3}, [&](const shape_t& i) { return ys.v[std::size_t(i[1])]; })));
    auto g = ember::meshgrid(x, y, x, {.indexing = ember::indexing::xy});
    CHECK(same(got(g[2]), build({3, 4, 4}, [&](const shape_t& i) { return xs.v[std::size_t(i[2])]; })));
  }
}

TEST_CASE("pad: constant, edge, wrap, reflect, symmetric", "[shape][pad]") {
  const nd x = values({5, 4}, 3);
  const i64 n0 = 5, n1 = 4;
  // NumPy's index maps, per axis, into the original (for the modes that copy)
  auto src = [](ember::pad_mode m, i64 p, i64 before, i64 n) -> i64 {
    const i64 i = p - before;
    if (i >= 0 && i < n) return i;
    switch (m) {
      case ember::pad_mode::edge: return i < 0 ? 0 : n - 1;
      case ember::pad_mode::wrap: return ((i % n) + n) % n;
      case ember::pad_mode::reflect: {  // the even extension, period 2 (n - 1)
        if (n == 1) return 0;
        const i64 m = ((i % (2 * (n - 1))) + 2 * (n - 1)) % (2 * (n - 1));
        return m < n ? m : 2 * (n - 1) - m;
      }
      case ember::pad_mode::symmetric: {  // period 2 n
        const i64 m = ((i % (2 * n)) + 2 * n) % (2 * n);
        return m < n ? m : 2 * n - 1 - m;
      }
      default: return -1;
    }
  };
  for (const auto& w : std::vector<std::array<std::pair<i64, i64>, 2>>{{{{2, 1}, {3, 2}}}, {{{7, 12}, {9, 4}}}})
  for (auto sp : splits(2)) {
    auto a = make<2>(x, sp);
    for (auto m : {ember::pad_mode::constant, ember::pad_mode::edge, ember::pad_mode::wrap, ember::pad_mode::reflect,
                   ember::pad_mode::symmetric}) {
      INFO("mode " << int(m) << " split " << ember::detail::axis_str(sp));
      auto r = ember::pad(a, {w[0], w[1]}, {.mode = m, .value = -7.0});
      CHECK(same(got(r), build({n0 + w[0].first + w[0].second, n1 + w[1].first + w[1].second}, [&](const shape_t& i) {
                   const i64 s0 = src(m, i[0], w[0].first, n0), s1 = src(m, i[1], w[1].first, n1);
                   if (m == ember::pad_mode::constant && (s0 < 0 || s1 < 0)) return -7.0;
                   return x.at({s0, s1});
                 })));
    }
    CHECK(same(got(ember::pad(a, 1)), build({7, 6}, [&](const shape_t& i) {
                 return i[0] >= 1 && i[0] <= 5 && i[1] >= 1 && i[1] <= 4 ? x.at({i[0] - 1, i[1] - 1}) : 0.0;
               })));
  }
  // one element along an axis: every mode repeats it
  auto one = make<2>(values({1, 3}, 2), 0);
  CHECK(same(got(ember::pad(one, {{2, 3}, {0, 0}}, {.mode = ember::pad_mode::reflect})),
             build({6, 3}, [&](const shape_t& i) { return values({1, 3}, 2).at({0, i[1]}); })));
  auto a = ember::zeros<double>({5, 4}, {.split = 0});
  expect_collective_throw<ember::value_error>([&] { (void)ember::pad(a, {{-1, 0}}); }, {"negative"});
  expect_collective_throw<ember::value_error>(
      [&] { (void)ember::pad(ember::zeros<double>({0, 4}), {{1, 0}}, {.mode = ember::pad_mode::wrap}); }, {"empty axis 0"});
}
