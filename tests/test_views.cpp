// Indexing and views (issue 14): a(i0, i1, ...) with NumPy's basic indexing,
// against a serial reference computed on the gathered data with an independent
// implementation of Python's slice rules. Random slices (negative steps, empty
// results, slices that leave ranks empty, views of views) at every split, on
// uneven layouts; setitem with broadcasting and aliasing; item(); the errors.
#include <functional>
#include <random>

#include "collective.hpp"

namespace {

using i64 = std::int64_t;

// ---- the serial reference ----
// Python's range(*slice(start, stop, step).indices(n)), written out.
std::vector<i64> py_indices(std::optional<i64> start, std::optional<i64> stop, i64 step, i64 n) {
  i64 lo, hi;
  if (step > 0) {
    lo = !start ? 0 : *start < 0 ? std::max<i64>(0, *start + n) : std::min(*start, n);
    hi = !stop ? n : *stop < 0 ? std::max<i64>(0, *stop + n) : std::min(*stop, n);
  } else {
    lo = !start ? n - 1 : *start < 0 ? std::max<i64>(-1, *start + n) : std::min(*start, n - 1);
    hi = !stop ? -1 : *stop < 0 ? std::max<i64>(-1, *stop + n) : std::min(*stop, n - 1);
  }
  std::vector<i64> r;
  for (i64 i = lo; step > 0 ? i < hi : i > hi; i += step) r.push_back(i);
  return r;
}

// One index of the reference: the base indices an axis selects (an integer: one,
// and the axis is dropped), or a new axis.
struct ref_axis {
  std::vector<i64> idx;
  bool dropped = false, fresh = false;
};
ref_axis ref_of(i64 i, i64 n) { return {{i < 0 ? i + n : i}, true, false}; }
ref_axis ref_of(const ember::slice& s, i64 n) { return {py_indices(s.start, s.stop, s.step, n), false, false}; }
ref_axis ref_of(ember::all_t, i64 n) { return {py_indices(std::nullopt, std::nullopt, 1, n), false, false}; }

// The reference view of row-major `data` of `shape`: its shape and values.
struct ref_view {
  std::vector<i64> shape;
  std::vector<double> v;
};
ref_view reference(const std::vector<double>& data, const std::vector<i64>& shape, const std::vector<ref_axis>& axes) {
  // gather every base index combination, dropping and inserting axes
  std::vector<i64> str(shape.size(), 1);
  for (int d = int(shape.size()) - 2; d >= 0; --d) str[std::size_t(d)] = str[std::size_t(d) + 1] * shape[std::size_t(d) + 1];
  ref_view out;
  for (const auto& a : axes)
    if (a.fresh) out.shape.push_back(1);
    else if (!a.dropped) out.shape.push_back(i64(a.idx.size()));
  std::function<void(std::size_t, i64)> walk = [&](std::size_t k, i64 off) {
    if (k == axes.size()) {
      out.v.push_back(data[std::size_t(off)]);
      return;
    }
    if (axes[k].fresh) return walk(k + 1, off);
    std::size_t base = 0;  // base axis of axes[k]
    for (std::size_t j = 0; j < k; ++j) base += axes[j].fresh ? 0 : 1;
    for (i64 i : axes[k].idx) walk(k + 1, off + i * str[base]);
  };
  walk(0, 0);
  return out;
}

std::vector<double> values_of(const std::vector<i64>& shape, int seed) {
  i64 n = 1;
  for (auto e : shape) n *= e;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) v[std::size_t(i)] = double((i * 37 + seed) % 101) - 50.0 + 0.25 * double(i % 3);
  return v;
}

// An array of `shape` holding `data`, split along `split` with an uneven map
// (the first rank holds one row fewer than balanced where it can).
template <int N>
ember::dndarray<double, N> make(const std::vector<double>& data, const std::array<i64, N>& shape, ember::split_axis split) {
  auto a = ember::array(std::span<const double>(data), shape, {.split = split});
  test::unbalance(a);
  return a;
}

template <class T, int M>
std::vector<i64> shape_of(const ember::dndarray<T, M>& a) {
  const auto s = a.shape();
  return {s.begin(), s.end()};
}

// Every traced step's measured traffic equals its prediction.
bool trace_exact() {
  for (const auto& s : ember::last_trace())
    if (!(s.predicted == s.measured)) return false;
  return true;
}

// Random slice of an axis of extent n: bounds past the ends, negative bounds,
// steps of both signs (negative only where `backwards`), sometimes empty.
ember::slice random_slice(std::mt19937_64& g, i64 n, bool backwards) {
  std::uniform_int_distribution<int> pick(0, 9);
  auto bound = [&]() -> std::optional<i64> {
    const int k = pick(g);
    if (k < 2) return std::nullopt;
    return std::uniform_int_distribution<i64>(-n - 2, n + 2)(g);
  };
  i64 step = std::uniform_int_distribution<i64>(1, 3)(g);
  if (backwards && pick(g) < 4) step = -step;
  return ember::slice(bound(), bound(), step);
}

}  // namespace

TEST_CASE("views: random slices of 1-D, 2-D and 3-D arrays at every split", "[views]") {
  std::mt19937_64 g(1234);  // the same cases on every rank
  for (int round = 0; round < 12; ++round) {
    // 2-D
    {
      const std::array<i64, 2> shape{11, 7};
      const auto data = values_of({11, 7}, round);
      for (int sp = -1; sp < 2; ++sp) {
        const ember::split_axis split = sp < 0 ? ember::none : ember::split_axis(sp);
        CAPTURE(round, sp);
        auto a = make<2>(data, shape, split);
        const bool back0 = true, back1 = true;  // backwards along the split axis too (a reverse step)
        const auto s0 = random_slice(g, 11, back0), s1 = random_slice(g, 7, back1);
        ember::dndarray<double, 2> v = a(s0, s1);
        auto want = reference(data, {11, 7}, {ref_of(s0, 11), ref_of(s1, 7)});
        CHECK(shape_of(v) == want.shape);
        CHECK(test::gathered(v) == want.v);
        CHECK(trace_exact());
        // an integer drops the axis; missing trailing axes are ember::all
        const i64 row = std::uniform_int_distribution<i64>(-11, 10)(g);
        ember::dndarray<double, 1> r = a(row);
        CHECK(test::gathered(r) == reference(data, {11, 7}, {ref_of(row, 11), ref_of(ember::all, 7)}).v);
        const i64 col = std::uniform_int_distribution<i64>(-7, 6)(g);
        ember::dndarray<double, 1> c = a(s0, col);
        CHECK(test::gathered(c) == reference(data, {11, 7}, {ref_of(s0, 11), ref_of(col, 7)}).v);
        // a new axis; a view of a view
        ember::dndarray<double, 3> n = a(s0, ember::newaxis, ember::all);
        auto wn = reference(data, {11, 7}, {ref_of(s0, 11), ref_axis{{}, false, true}, ref_of(ember::all, 7)});
        CHECK(shape_of(n) == wn.shape);
        CHECK(test::gathered(n) == wn.v);
        auto vv = a(s0, ember::all);
        const auto s2 = random_slice(g, 7, back1);
        ember::dndarray<double, 2> w = vv(ember::all, s2);
        CHECK(test::gathered(w) == reference(data, {11, 7}, {ref_of(s0, 11), ref_of(s2, 7)}).v);
        // in expressions: fused with arithmetic, reduced, mixed with an array
        if (!want.v.empty()) {
          double ref_sum = 0;
          for (double x : want.v) ref_sum += x * 2 + 1;
          CHECK(ember::sum(a(s0, s1) * 2.0 + 1.0) == Approx(ref_sum).margin(1e-9));
        }
        CHECK(trace_exact());
      }
    }
    // 3-D, the split axis sliced with a step, another axis indexed
    {
      const std::array<i64, 3> shape{6, 5, 4};
      const auto data = values_of({6, 5, 4}, 100 + round);
      for (int sp = -1; sp < 3; ++sp) {
        const ember::split_axis split = sp < 0 ? ember::none : ember::split_axis(sp);
        CAPTURE(round, sp);
        auto a = make<3>(data, shape, split);
        const auto s0 = random_slice(g, 6, true);
        const auto s2 = random_slice(g, 4, true);
        const i64 mid = std::uniform_int_distribution<i64>(-5, 4)(g);
        ember::dndarray<double, 2> v = a(s0, mid, s2);
        auto want = reference(data, {6, 5, 4}, {ref_of(s0, 6), ref_of(mid, 5), ref_of(s2, 4)});
        CHECK(shape_of(v) == want.shape);
        CHECK(test::gathered(v) == want.v);
        CHECK(trace_exact());
      }
    }
  }
}

TEST_CASE("views: shifted slices of one array in one expression (a stencil's shape)", "[views]") {
  const int P = W().size();
  const i64 n = 4 * P + 3;
  const auto data = values_of({n, 5}, 7);
  for (int sp = -1; sp < 2; ++sp) {
    const ember::split_axis split = sp < 0 ? ember::none : ember::split_axis(sp);
    CAPTURE(sp);
    auto u = make<2>(data, {n, 5}, split);
    using ember::slice;
    // interior = up + down + left + right - 4 centre (5-point Laplacian)
    ember::dndarray<double, 2> lap = u(slice(0, -2), slice(1, -1)) + u(slice(2, ember::none), slice(1, -1)) +
                                     u(slice(1, -1), slice(0, -2)) + u(slice(1, -1), slice(2, ember::none)) -
                                     4.0 * u(slice(1, -1), slice(1, -1));
    CHECK(trace_exact());
    std::vector<double> want;
    for (i64 i = 1; i < n - 1; ++i)
      for (i64 j = 1; j < 4; ++j) {
        auto at = [&](i64 r, i64 c) { return data[std::size_t(r * 5 + c)]; };
        want.push_back(at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) - 4.0 * at(i, j));
      }
    CHECK(shape_of(lap) == std::vector<i64>{n - 2, 3});
    CHECK(test::gathered(lap) == want);
    // the plan names each view by its selection
    const std::string plan = ember::explain(u(slice(1, ember::none)) - u(slice(ember::none, -1))).to_string();
    INFO(plan);
    CHECK(plan.find("a0[1:" + std::to_string(n) + ", :]") != std::string::npos);
    CHECK(plan.find("a0[0:" + std::to_string(n - 1) + ", :]") != std::string::npos);
  }
}

TEST_CASE("views: a difference along a middle split axis is a halo; along the last one a realign", "[views]") {
  const int P = W().size();
  const i64 m = 4 * P + 3;
  using ember::slice;
  // (5, m, 4) split 1: np.diff(u, axis=1)
  const auto data = values_of({5, m, 4}, 5);
  auto u = make<3>(data, {5, m, 4}, 1);
  auto d = u(ember::all, slice(1, ember::none), ember::all) - u(ember::all, slice(ember::none, -1), ember::all);
  const auto plan = ember::explain(d);
  int halos = 0, realigns = 0;
  for (const auto& s : plan.steps) {
    halos += s.kind == ember::planner::step_kind::halo;
    realigns += s.kind == ember::planner::step_kind::realign;
  }
  CHECK(halos == (P > 1 ? 1 : 0));
  CHECK(realigns == 0);
  ember::dndarray<double, 3> r = d;
  CHECK(trace_exact());
  std::vector<double> want;
  for (i64 i = 0; i < 5; ++i)
    for (i64 j = 0; j + 1 < m; ++j)
      for (i64 k = 0; k < 4; ++k)
        want.push_back(data[std::size_t((i * m + j + 1) * 4 + k)] - data[std::size_t((i * m + j) * 4 + k)]);
  CHECK(test::gathered(r) == want);
  // (m, 3) split 1 along its last axis: the kernel cannot pick rows, so a realign
  const auto d2 = values_of({3, m}, 6);
  auto v = make<2>(d2, {3, m}, 1);
  auto e = v(ember::all, slice(1, ember::none)) - v(ember::all, slice(ember::none, -1));
  const auto plan2 = ember::explain(e);
  int halos2 = 0;
  for (const auto& s : plan2.steps) halos2 += s.kind == ember::planner::step_kind::halo;
  CHECK(halos2 == 0);
  ember::dndarray<double, 2> r2 = e;
  CHECK(trace_exact());
  std::vector<double> want2;
  for (i64 i = 0; i < 3; ++i)
    for (i64 j = 0; j + 1 < m; ++j) want2.push_back(d2[std::size_t(i * m + j + 1)] - d2[std::size_t(i * m + j)]);
  CHECK(test::gathered(r2) == want2);
}

TEST_CASE("views: setitem with scalars, expressions, broadcasting and aliasing", "[views]") {
  const int P = W().size();
  const i64 n = 3 * P + 2;
  for (int sp = -1; sp < 2; ++sp) {
    const ember::split_axis split = sp < 0 ? ember::none : ember::split_axis(sp);
    CAPTURE(sp);
    using ember::slice;
    auto data = values_of({n, 6}, 3);
    auto a = make<2>(data, {n, 6}, split);
    auto at = [&](i64 i, i64 j) -> double& { return data[std::size_t(i * 6 + j)]; };

    a(0, ember::all) = 0.0;  // a row
    for (i64 j = 0; j < 6; ++j) at(0, j) = 0.0;
    // strided, columns reversed (through a reverse step where the columns are split)
    const i64 cs = -2;
    a(slice(1, ember::none, 2), slice(ember::none, ember::none, cs)) = -1.5;
    for (i64 i = 1; i < n; i += 2)
      for (i64 j = cs > 0 ? 0 : 5; j >= 0 && j < 6; j += cs) at(i, j) = -1.5;
    CHECK(test::gathered(a) == data);

    // an expression of another array, broadcast from one row
    const auto rowdata = values_of({1, 6}, 9);
    auto row = ember::array(std::span<const double>(rowdata), std::array<i64, 2>{1, 6}, {.split = ember::none});
    a(slice(1, -1), ember::all) = row * 2.0;
    for (i64 i = 1; i < n - 1; ++i)
      for (i64 j = 0; j < 6; ++j) at(i, j) = rowdata[std::size_t(j)] * 2.0;
    CHECK(test::gathered(a) == data);

    // aliasing: the right side is read first (NumPy's u[1:] = u[:-1] shifts down)
    a(slice(1, ember::none), ember::all) = a(slice(ember::none, -1), ember::all);
    for (i64 i = n - 1; i >= 1; --i)
      for (i64 j = 0; j < 6; ++j) at(i, j) = at(i - 1, j);
    CHECK(test::gathered(a) == data);
    if (!(split == 1 && P > 1)) {
      a(ember::all, slice(ember::none, ember::none, -1)) = a(ember::all, ember::all) + 0.0;  // mirror columns
      for (i64 i = 0; i < n; ++i)
        for (i64 j = 0; j < 3; ++j) std::swap(at(i, j), at(i, 5 - j));
      CHECK(test::gathered(a) == data);
    }

    // another dtype is cast, as NumPy's a[...] = int_array
    auto ints = ember::arange<std::int64_t>(0, 6, 1);
    a(2, ember::all) = ints;
    for (i64 j = 0; j < 6; ++j) at(2, j) = double(j);
    CHECK(test::gathered(a) == data);

    // a whole-array assignment from a reversed view of itself (in place would be wrong)
    auto b = ember::arange<double>(0, double(n), 1, {.split = split ? ember::split_axis(0) : ember::none});
    if (!split || P == 1) {
      b = b(slice(ember::none, ember::none, -1));
      std::vector<double> rev;
      for (i64 i = n - 1; i >= 0; --i) rev.push_back(double(i));
      CHECK(test::gathered(b) == rev);
    }
  }
}

TEST_CASE("views: item() on every rank, from the rank that holds the element", "[views]") {
  const auto data = values_of({5, 4}, 11);
  for (int sp = -1; sp < 2; ++sp) {
    const ember::split_axis split = sp < 0 ? ember::none : ember::split_axis(sp);
    auto a = make<2>(data, {5, 4}, split);
    bool ok = true;
    for (i64 i = -5; i < 5; ++i)
      for (i64 j = -4; j < 4; ++j) ok = ok && a.item({i, j}) == data[std::size_t(((i + 5) % 5) * 4 + (j + 4) % 4)];
    CHECK(test::all_ranks(ok));
    CHECK(ember::item(a, {4, 3}) == data.back());
  }
}

TEST_CASE("views: building one allocates nothing; eval materializes it where it lies", "[views]") {
  auto a = ember::arange<double>(0, 40, 1, {.split = 0});
  const auto before = ember::allocations().count;
  auto v = a(ember::slice(3, 30, 2));
  auto vv = v(ember::slice(ember::none, ember::none, 1));
  CHECK(ember::allocations().count == before);
  auto m = ember::eval(vv);
  CHECK(m.shape()[0] == 14);
  std::vector<double> want;
  for (int i = 3; i < 30; i += 2) want.push_back(i);
  CHECK(test::gathered(m) == want);
  CHECK(ember::last_trace().size() == 1);  // one fused kernel: the elements stay on their ranks
}

TEST_CASE("views: bad indices are the same error on every rank", "[views][collective]") {
  auto a = ember::zeros<double>({6, 4}, {.split = 0});
  expect_collective_throw<ember::index_error>([&] { (void)a(6, ember::all); }, {"index 6", "axis 0", "size 6"});
  expect_collective_throw<ember::index_error>([&] { (void)a(ember::all, -5); }, {"index -5", "axis 1", "size 4"});
  expect_collective_throw<ember::index_error>([&] { (void)a.item({0, 4}); }, {"index 4", "axis 1"});
  expect_collective_throw<ember::value_error>([&] { (void)a(ember::slice(0, 4, 0)); }, {"step cannot be zero"});
  expect_collective_throw<ember::shape_error>(
      [&] { a(ember::slice(0, 3), ember::all) = ember::ones<double>({2, 4}); }, {"(2, 4)", "(3, 4)"});
}

TEST_CASE("diff, roll, flip along every axis at every split, against NumPy's definitions", "[views][shift]") {
  const int P = W().size();
  const std::array<i64, 3> shape{2 * P + 3, 5, 4};
  const std::vector<i64> vs(shape.begin(), shape.end());
  const auto data = values_of(vs, 21);
  auto at = [&](i64 i, i64 j, i64 k) { return data[std::size_t((i * shape[1] + j) * shape[2] + k)]; };
  for (int sp = -1; sp < 3; ++sp) {
    const ember::split_axis split = sp < 0 ? ember::none : ember::split_axis(sp);
    auto a = make<3>(data, shape, split);
    for (int ax = 0; ax < 3; ++ax) {
      CAPTURE(sp, ax);
      const i64 n = shape[std::size_t(ax)];
      auto elem = [&](std::array<i64, 3> idx) { return at(idx[0], idx[1], idx[2]); };
      // flip
      auto f = ember::flip(a, ax);
      CHECK(f.split() == a.split());
      std::vector<double> want;
      for (i64 i = 0; i < shape[0]; ++i)
        for (i64 j = 0; j < shape[1]; ++j)
          for (i64 k = 0; k < shape[2]; ++k) {
            std::array<i64, 3> idx{i, j, k};
            idx[std::size_t(ax)] = n - 1 - idx[std::size_t(ax)];
            want.push_back(elem(idx));
          }
      CHECK(test::gathered(f) == want);
      // roll by -1, 2 and n + 3
      for (i64 shift : {i64(-1), i64(2), n + 3}) {
        CAPTURE(shift);
        auto r = ember::roll(a, shift, ax);
        want.clear();
        for (i64 i = 0; i < shape[0]; ++i)
          for (i64 j = 0; j < shape[1]; ++j)
            for (i64 k = 0; k < shape[2]; ++k) {
              std::array<i64, 3> idx{i, j, k};
              idx[std::size_t(ax)] = ((idx[std::size_t(ax)] - shift) % n + n) % n;  // out[i] = a[i - shift]
              want.push_back(elem(idx));
            }
        CHECK(test::gathered(r) == want);
        CHECK(trace_exact());
      }
      // diff of order 1 and 2
      for (int order : {1, 2}) {
        CAPTURE(order);
        auto d = ember::diff(a, order, ax);
        CHECK(d.shape()[std::size_t(ax)] == n - order);
        want.clear();
        std::array<i64, 3> ext = shape;
        ext[std::size_t(ax)] = n - order;
        for (i64 i = 0; i < ext[0]; ++i)
          for (i64 j = 0; j < ext[1]; ++j)
            for (i64 k = 0; k < ext[2]; ++k) {
              std::array<i64, 3> i0{i, j, k}, i1 = i0, i2 = i0;
              i1[std::size_t(ax)] += 1;
              i2[std::size_t(ax)] += 2;
              want.push_back(order == 1 ? elem(i1) - elem(i0) : (elem(i2) - elem(i1)) - (elem(i1) - elem(i0)));
            }
        CHECK(test::gathered(d) == want);
      }
    }
  }
  auto a = make<3>(data, shape, 0);
  expect_collective_throw<ember::axis_error>([&] { (void)ember::roll(a, 1, 3); }, {"ember::roll", "axis 3"});
  expect_collective_throw<ember::value_error>([&] { (void)ember::diff(a, -1); }, {"order must be non-negative"});
  CHECK(ember::diff(a, 9, 1).shape()[1] == 0);  // longer than the axis: empty, as NumPy
}

TEST_CASE("views read backwards along the split axis: a reverse step, exact traffic, setitem", "[views][reverse]") {
  using ember::slice;
  const i64 n = 13;
  const auto data = values_of({n, 5}, 7);
  for (int sp = -1; sp < 2; ++sp) {
    const ember::split_axis split = sp < 0 ? ember::none : ember::split_axis(sp);
    CAPTURE(sp);
    auto a = make<2>(data, {n, 5}, split);
    for (i64 step : {-1, -2, -3}) {
      const auto s0 = slice(ember::none, ember::none, step), s1 = slice(-2, 0, step);
      auto want = reference(data, {n, 5}, {ref_of(s0, n), ref_of(s1, 5)});
      ember::dndarray<double, 2> v = a(s0, s1);
      CHECK(shape_of(v) == want.shape);
      CHECK(test::gathered(v) == want.v);
      CHECK(trace_exact());
      // fused with the forward array: a[::-1] + a (the planner moves the reversed leaf only)
      if (step == -1) {
        ember::dndarray<double, 2> f = a(s0, ember::all) + a;
        auto rev = reference(data, {n, 5}, {ref_of(s0, n), ref_of(ember::all, 5)});
        for (std::size_t i = 0; i < rev.v.size(); ++i) rev.v[i] += data[i];
        CHECK(test::gathered(f) == rev.v);
        CHECK(trace_exact());
        int reverses = 0;
        for (const auto& s : ember::plan_for(a(s0, ember::all) + a, W().size()).steps)
          reverses += s.kind == ember::planner::step_kind::reverse;
        CHECK(reverses == (split == 0 && W().size() > 1 ? 1 : 0));
        if (split == 0 && W().size() > 1) CHECK(ember::explain(a(s0, ember::all) + a).to_string().find("reverse") != std::string::npos);
      }
    }
    // setitem through a reversed view: b[::-1] = a (b becomes a flipped), and a
    // broadcast row (the same along the reversed axis)
    auto b = ember::zeros<double>({n, 5}, {.split = split});
    b(slice(ember::none, ember::none, -1), ember::all) = a;
    auto flipped = reference(data, {n, 5}, {ref_of(slice(ember::none, ember::none, -1), n), ref_of(ember::all, 5)});
    CHECK(test::gathered(b) == flipped.v);
    b(slice(ember::none, ember::none, -2), ember::all) = a(slice(0, 1), ember::all) * 2.0;
    for (i64 i = n - 1; i >= 0; i -= 2)
      for (i64 j = 0; j < 5; ++j) flipped.v[std::size_t(i * 5 + j)] = data[std::size_t(j)] * 2.0;
    CHECK(test::gathered(b) == flipped.v);
    b(slice(ember::none, ember::none, -1), 0) = 7.0;
    for (i64 i = 0; i < n; ++i) flipped.v[std::size_t(i * 5)] = 7.0;
    CHECK(test::gathered(b) == flipped.v);
    // u[::-1] = u: NumPy reads the right side first
    auto u = make<2>(data, {n, 5}, split);
    u(slice(ember::none, ember::none, -1), ember::all) = u;
    CHECK(test::gathered(u) == reference(data, {n, 5}, {ref_of(slice(ember::none, ember::none, -1), n), ref_of(ember::all, 5)}).v);
  }
}

TEST_CASE("views that differ in one index of one axis are two values (no selection aliasing)", "[views]") {
  // a0[:, 1] * a0[:, 2] once read a0[:, 1] twice: the two selections hashed alike
  // (they differ in the last bit) and the leaves were keyed on the hash
  const std::int64_t m = 11, n = 5;
  std::vector<double> g(std::size_t(m * n));
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = double(i) * 0.5 + 1.0;
  for (ember::split_axis s : {ember::split_axis(ember::none), ember::split_axis(0), ember::split_axis(1)}) {
    auto a = ember::array(std::span<const double>(g), std::array<std::int64_t, 2>{m, n}, {.split = s});
    for (int j = 0; j + 1 < n; ++j)
      for (int k = j + 1; k < n; ++k) {
        INFO("split " << ember::detail::axis_str(s) << " columns " << j << " " << k);
        ember::dndarray<double, 1> r = a(ember::all, j) * a(ember::all, k) - a(ember::all, k);
        std::vector<double> want;
        for (std::int64_t i = 0; i < m; ++i)
          want.push_back(g[std::size_t(i * n + j)] * g[std::size_t(i * n + k)] - g[std::size_t(i * n + k)]);
        CHECK(test::all_ranks(test::gathered(r) == want));
        ember::dndarray<double, 1> q = a(j, ember::all) + a(k, ember::all);
        std::vector<double> wq;
        for (std::int64_t c = 0; c < n; ++c) wq.push_back(g[std::size_t(j * n + c)] + g[std::size_t(k * n + c)]);
        CHECK(test::all_ranks(test::gathered(q) == wq));
      }
  }
}
