// Sorting (issue 17): sort and argsort against std::sort / std::stable_sort of
// the gathered data: a split vector by the sample sort (random, all equal,
// already sorted, reverse sorted, few distinct values, NaN and +-inf, uneven
// blocks and ranks without elements, 1-4 ranks), balanced results, global
// stable argsort indices, descending order; N-D arrays along every axis of
// every split; errors on every rank. partition/argpartition: NumPy's property
// for every kth, a permutation, and along a split vector exactly the stable
// class order the distributed algorithm promises; topk against the first k of
// a stable sort (values and global indices, NaN largest).
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numeric>
#include <random>

#include "common.hpp"

namespace {

using ember::split_axis;
constexpr double qnan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

template <class T>
bool less_nan_last(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a < b || (!std::isnan(a) && std::isnan(b));
  else return a < b;
}

// Bitwise equality with NaN == NaN.
template <class T>
bool same_values(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    }
    if (!(a[i] == b[i])) return false;
  }
  return true;
}

template <class T>
std::vector<test::host_t<T>> data_of(const std::string& kind, std::int64_t n, std::uint64_t seed) {
  std::vector<test::host_t<T>> v(static_cast<std::size_t>(n));
  std::mt19937_64 rng(seed);
  for (std::int64_t i = 0; i < n; ++i) {
    auto& x = v[static_cast<std::size_t>(i)];
    if (kind == "random") x = test::host_t<T>(std::int64_t(rng() % 2001) - 1000);
    else if (kind == "equal") x = test::host_t<T>(3);
    else if (kind == "sorted") x = test::host_t<T>(i / 2);
    else if (kind == "reversed") x = test::host_t<T>(n - i);
    else x = test::host_t<T>(rng() % 3);  // few distinct values
    if constexpr (std::is_same_v<T, bool>) x = rng() % 2;
  }
  return v;
}

// The last evaluation's steps sent what the plan predicted: exactly, or at
// most the bound of a data-dependent step (sample_sort).
bool trace_within() {
  for (const auto& t : ember::last_trace()) {
    if (t.bound ? t.measured.bytes > t.predicted.bytes || t.measured.messages > t.predicted.messages
                : !(t.measured == t.predicted))
      return false;
  }
  return !ember::last_trace().empty();
}

template <class T>
void check_vector(const std::vector<test::host_t<T>>& g, split_axis sp, bool uneven, const ember::sort_options& o) {
  const std::int64_t n = std::int64_t(g.size());
  auto x = ember::array(std::span<const T>(reinterpret_cast<const T*>(g.data()), g.size()), std::array<std::int64_t, 1>{n},
                        {.split = sp});
  if (uneven) test::unbalance(x);
  auto s = ember::eval(ember::sort(x, -1, o));
  REQUIRE(test::all_ranks(trace_within()));
  auto want = g;
  auto ord = [&](test::host_t<T> a, test::host_t<T> b) {
    return o.descending ? less_nan_last<test::host_t<T>>(b, a) : less_nan_last<test::host_t<T>>(a, b);
  };
  std::stable_sort(want.begin(), want.end(), ord);
  REQUIRE(test::all_ranks(same_values(test::gathered(s), want)));
  if (sp) REQUIRE(s.is_balanced());
  auto i = ember::eval(ember::argsort(x, 0, o));
  REQUIRE(test::all_ranks(trace_within()));
  static_assert(std::is_same_v<typename decltype(i)::value_type, std::int64_t>);
  std::vector<std::int64_t> wi(g.size());
  std::iota(wi.begin(), wi.end(), 0);
  std::stable_sort(wi.begin(), wi.end(), [&](std::int64_t a, std::int64_t b) {
    return ord(g[static_cast<std::size_t>(a)], g[static_cast<std::size_t>(b)]);
  });
  REQUIRE(test::all_ranks(test::gathered(i) == wi));  // global, stable
}

}  // namespace

TEST_CASE("sort and argsort of a vector equal std::stable_sort of the gathered data", "[sort]") {
  const int P = ember::world().size();
  for (const std::string kind : {"random", "equal", "sorted", "reversed", "few"})
    for (const std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(3), std::int64_t(37), std::int64_t(1000)})
      for (auto sp : {split_axis{0}, split_axis{}})
        for (const bool uneven : {false, true})
          for (const bool desc : {false, true}) {
            INFO(kind << " n " << n << " split " << (sp ? 0 : -1) << " uneven " << uneven << " descending " << desc
                      << " ranks " << P);
            const ember::sort_options o{.stable = false, .descending = desc};
            check_vector<double>(data_of<double>(kind, n, 7 + std::uint64_t(n)), sp, uneven, o);
            check_vector<std::int64_t>(data_of<std::int64_t>(kind, n, 9), sp, uneven, o);
            if (n == 1000) {
              check_vector<float>(data_of<float>(kind, n, 11), sp, uneven, o);
              check_vector<std::int32_t>(data_of<std::int32_t>(kind, n, 12), sp, uneven, o);
              check_vector<bool>(data_of<bool>(kind, n, 13), sp, uneven, o);
            }
          }
}

TEST_CASE("NaN sorts last and infinities in place, as in NumPy", "[sort]") {
  for (auto sp : {split_axis{0}, split_axis{}}) {
    const std::vector<double> v{3.0, qnan, -inf, 0.0, inf, qnan, -1.0, 2.0, -0.5, 7.0, qnan};
    check_vector<double>(v, sp, false, {});
    check_vector<double>(v, sp, true, {.descending = true});
    auto x = ember::array(std::span<const double>(v), std::array<std::int64_t, 1>{11}, {.split = sp});
    const auto s = test::gathered(ember::eval(ember::sort(x)));
    REQUIRE(test::all_ranks(s[0] == -inf && s[7] == inf && std::isnan(s[8]) && std::isnan(s[10])));
  }
}

TEST_CASE("sort and argsort of N-D arrays along every axis of every split", "[sort]") {
  const std::int64_t r = 7, c = 5;
  std::vector<double> g(static_cast<std::size_t>(r * c));
  std::mt19937_64 rng(3);
  for (auto& x : g) x = double(std::int64_t(rng() % 11) - 5);
  for (auto sp : {split_axis{0}, split_axis{1}, split_axis{}})
    for (int axis : {0, 1, -1}) {
      INFO("split " << (sp ? *sp : -1) << " axis " << axis);
      auto x = ember::array(std::span<const double>(g), std::array<std::int64_t, 2>{r, c}, {.split = sp});
      test::unbalance(x);
      const int ax = axis < 0 ? axis + 2 : axis;
      auto s = ember::eval(ember::sort(x, axis));
      ember::dndarray<std::int64_t, 2> i = ember::argsort(x, axis);
      const auto sg = test::gathered(s);
      const auto ig = test::gathered(i);
      bool ok = true;
      const std::int64_t lines = ax == 0 ? c : r, len = ax == 0 ? r : c;
      for (std::int64_t l = 0; l < lines; ++l) {
        auto at = [&](std::int64_t k) { return static_cast<std::size_t>(ax == 0 ? k * c + l : l * c + k); };
        std::vector<double> line;
        std::vector<std::int64_t> idx(static_cast<std::size_t>(len));
        for (std::int64_t k = 0; k < len; ++k) line.push_back(g[at(k)]);
        std::iota(idx.begin(), idx.end(), 0);
        std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) {
          return line[static_cast<std::size_t>(a)] < line[static_cast<std::size_t>(b)];
        });
        for (std::int64_t k = 0; k < len; ++k) {
          ok = ok && ig[at(k)] == idx[static_cast<std::size_t>(k)];
          ok = ok && sg[at(k)] == line[static_cast<std::size_t>(idx[static_cast<std::size_t>(k)])];
        }
      }
      REQUIRE(test::all_ranks(ok));
      // sorting along the split axis of a 2-D array leaves it split along the other axis
      if (sp && *sp == ax && ember::world().size() > 1) REQUIRE(s.split() == split_axis{1 - ax});
      // an expression operand is evaluated first
      auto e = ember::eval(ember::sort(x * -1.0, axis));
      const auto eg = test::gathered(e);
      REQUIRE(test::all_ranks(eg.size() == sg.size()));
    }
}

TEST_CASE("the sample sort keeps memory near the block and sends at most the data", "[sort]") {
  const int P = ember::world().size();
  const std::int64_t n = 200000;
  auto x = ember::random::uniform<double>(0.0, 1.0, std::array<std::int64_t, 1>{n}, {.split = 0});
  const auto before = ember::world().sent();
  ember::dndarray<double, 1> s = ember::sort(x);
  const auto sent = ember::world().sent() - before;
  // the data once (all-to-all), the samples, counts and the rebalance: under 2x the block
  REQUIRE(test::all_ranks(sent.bytes <= 2 * (n / P + 1) * 8 + 64 * P * P * 16));
  REQUIRE(s.is_balanced());
  const auto sg = test::gathered(s);
  REQUIRE(test::all_ranks(std::is_sorted(sg.begin(), sg.end())));
}

TEST_CASE("sort is a plan step: sample_sort with a traffic bound, fused before and after", "[sort][planner]") {
  using K = ember::planner::step_kind;
  const int P = ember::world().size();
  const std::int64_t n = 5000;
  auto x = ember::random::uniform<double>(-1.0, 1.0, std::array<std::int64_t, 1>{n}, {.split = 0});
  test::unbalance(x);
  const auto g = test::gathered(x);
  // x * 2 in one pass before the sort, + 1 in one pass after; nothing moves apart from the sort
  const auto p = ember::explain(ember::sort(x * 2.0) + 1.0);
  INFO(p.to_string());
  int kernels = 0, sorts = 0, moves = 0;
  for (const auto& s : p.steps) {
    kernels += s.kind == K::fused_kernel;
    sorts += s.kind == (P > 1 ? K::sample_sort : K::local_sort);
    moves += ember::planner::is_move(s.kind);
    if (s.kind == K::sample_sort) {
      REQUIRE(s.bound);
      REQUIRE(s.to->is_balanced());
    }
  }
  REQUIRE(sorts == 1);
  REQUIRE(kernels == 2);
  REQUIRE(moves == 0);
  const std::string text = p.to_string();
  REQUIRE(text.find(P > 1 ? "sample_sort" : "local_sort") != std::string::npos);
  if (P > 1) REQUIRE(text.find("<=") != std::string::npos);
  REQUIRE(p.to_json().find(P > 1 ? "\"bound\": true" : "local_sort") != std::string::npos);
  ember::dndarray<double, 1> r = ember::sort(x * 2.0) + 1.0;
  REQUIRE(test::all_ranks(trace_within()));
  auto want = g;
  for (auto& v : want) v = v * 2.0;
  std::sort(want.begin(), want.end());
  for (auto& v : want) v = v + 1.0;
  REQUIRE(test::all_ranks(test::gathered(r) == want));
  // the bound holds the measured traffic, and it is not vacuous: at most about
  // twice the block (the data once, the rebalance at most a bucket) plus the samples
  if (P > 1) {
    std::int64_t measured = 0, predicted = 0;
    for (const auto& t : ember::last_trace()) {
      measured += t.measured.bytes;
      predicted += t.predicted.bytes;
    }
    INFO("measured " << measured << " bound " << predicted);
    REQUIRE(test::all_ranks(predicted <= 3 * (n / P + 200) * 8 + 16 * P * 24 * P));
  }
  // argsort's pairs: the bound covers 16-byte (value, index) pairs
  ember::dndarray<std::int64_t, 1> ix = ember::argsort(x, -1, {.descending = true});
  REQUIRE(test::all_ranks(trace_within()));
  // descending shows in EXPLAIN; the cached plan of the ascending sort is not reused
  REQUIRE(ember::explain(ember::argsort(x, -1, {.descending = true})).to_string().find("descending") != std::string::npos);
  std::vector<std::int64_t> wi(g.size());
  std::iota(wi.begin(), wi.end(), 0);
  std::stable_sort(wi.begin(), wi.end(), [&](std::int64_t a, std::int64_t b) { return g[std::size_t(a)] > g[std::size_t(b)]; });
  REQUIRE(test::all_ranks(test::gathered(ix) == wi));
  ember::dndarray<std::int64_t, 1> ia = ember::argsort(x);
  std::stable_sort(wi.begin(), wi.end(), [&](std::int64_t a, std::int64_t b) { return g[std::size_t(a)] < g[std::size_t(b)]; });
  REQUIRE(test::all_ranks(test::gathered(ia) == wi));
  // 2-D along the split axis: the planner moves it to a split along the other
  // axis (one resplit step, exact bytes) and each rank sorts its columns
  auto a = ember::random::uniform<double>(0.0, 1.0, std::array<std::int64_t, 2>{40, 12}, {.split = 0});
  const auto p2 = ember::explain(ember::sort(a, 0));
  INFO(p2.to_string());
  int resplits = 0, local = 0;
  for (const auto& s : p2.steps) {
    resplits += s.kind == K::resplit;
    local += s.kind == K::local_sort;
    REQUIRE(!s.bound);
  }
  REQUIRE(local == 1);
  REQUIRE(resplits == (P > 1 ? 1 : 0));
  ember::dndarray<double, 2> sa = ember::sort(a, 0);
  REQUIRE(test::all_ranks(trace_within()));
  if (P > 1) REQUIRE(sa.split() == split_axis{1});
  // along the local axis nothing is sent
  REQUIRE(ember::explain(ember::sort(a, 1)).total().bytes == 0);
  // plan_for at scale: a bound for 65536 ranks without running anything
  auto big = ember::dndarray<double, 1>(ember::layout::balanced({std::int64_t(1) << 30}, 0, P), ember::world(),
                                        std::shared_ptr<double[]>());
  const auto ps = ember::plan_for(ember::sort(big), 65536);
  bool has_sample_sort = false;
  for (const auto& s : ps.steps) has_sample_sort = has_sample_sort || (s.kind == K::sample_sort && s.bound);
  REQUIRE(has_sample_sort);
  // the block is 16384 doubles: the data, a bucket, counts and sizes, and the
  // samples - min(16 P, block) 16-byte keys from every rank to every rank, which
  // at this scale is what dominates (the README says so)
  const std::int64_t block = (std::int64_t(1) << 30) / 65536, ranks = 65536;
  const std::int64_t samples = std::min(16 * ranks, block) * 16 * (ranks - 1);
  REQUIRE(ps.max_rank().bytes >= block * 8 + samples);
  REQUIRE(ps.max_rank().bytes <= 3 * block * 8 + samples + 16 * ranks);
}

TEST_CASE("a bad sort axis raises on every rank", "[sort][errors]") {
  auto x = ember::zeros<double>({4, 3}, {.split = 0});
  REQUIRE_THROWS_AS(ember::sort(x, 2), ember::axis_error);
  REQUIRE_THROWS_AS(ember::argsort(x, -3), ember::axis_error);
  REQUIRE(test::all_ranks(true));
}

namespace {

// NumPy's partition property for each kth of the gathered result `p` (NaN
// last), and that `p` holds the input's values.
template <class T>
bool partitioned(const std::vector<T>& p, const std::vector<T>& sorted, const std::vector<std::int64_t>& kth) {
  std::vector<T> ps(p);
  std::stable_sort(ps.begin(), ps.end(), less_nan_last<T>);
  if (!same_values(ps, sorted)) return false;
  for (std::int64_t k : kth) {
    const auto kk = static_cast<std::size_t>(k);
    if (!same_values(std::vector<T>{p[kk]}, std::vector<T>{sorted[kk]})) return false;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (i < kk && less_nan_last(p[kk], p[i])) return false;
      if (i > kk && less_nan_last(p[i], p[kk])) return false;
    }
  }
  return true;
}

// What the distributed partition computes exactly: a stable partition of the
// elements into the classes below / equal to each pivot, NaN last.
template <class T>
std::vector<std::int64_t> class_order(const std::vector<T>& g, const std::vector<T>& sorted, std::vector<std::int64_t> kth) {
  std::sort(kth.begin(), kth.end());
  std::vector<T> piv;
  for (std::int64_t k : kth)
    if constexpr (std::is_floating_point_v<T>) {
      if (!std::isnan(sorted[std::size_t(k)])) piv.push_back(sorted[std::size_t(k)]);
    } else {
      piv.push_back(sorted[std::size_t(k)]);
    }
  piv.erase(std::unique(piv.begin(), piv.end()), piv.end());
  auto cls = [&](T x) -> std::int64_t {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) return 2 * std::int64_t(piv.size()) + 1;
    const auto j = std::int64_t(std::lower_bound(piv.begin(), piv.end(), x) - piv.begin());
    return j < std::int64_t(piv.size()) && piv[std::size_t(j)] == x ? 2 * j + 1 : 2 * j;
  };
  std::vector<std::int64_t> idx(g.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) { return cls(g[std::size_t(a)]) < cls(g[std::size_t(b)]); });
  return idx;
}

template <class T>
void check_partition(const std::vector<T>& g, split_axis sp, bool uneven, const std::vector<std::int64_t>& kth_in) {
  const std::int64_t n = std::int64_t(g.size());
  auto x = ember::array(std::span<const T>(g), std::array<std::int64_t, 1>{n}, {.split = sp});
  if (uneven) test::unbalance(x);
  std::vector<std::int64_t> kth;
  for (auto k : kth_in) kth.push_back(k < 0 ? k + n : k);
  auto sorted = g;
  std::stable_sort(sorted.begin(), sorted.end(), less_nan_last<T>);
  // a plan step: distributed_partition along the split axis (its traffic a
  // bound, within it), each rank's copy partitioned when replicated
  const bool distributed = sp && ember::world().size() > 1;
  const auto plan = ember::explain(ember::argpartition(x, kth_in));
  REQUIRE(plan.steps.size() == 1);
  REQUIRE(plan.steps[0].kind == (distributed ? ember::planner::step_kind::distributed_partition
                                             : ember::planner::step_kind::local_select));
  REQUIRE(plan.steps[0].bound == distributed);
  const ember::dndarray<T, 1> p = ember::partition(x, kth_in);
  REQUIRE(test::all_ranks(trace_within()));
  const ember::dndarray<std::int64_t, 1> i = ember::argpartition(x, kth_in);
  REQUIRE(test::all_ranks(trace_within()));
  const auto pg = test::gathered(p);
  const auto ig = test::gathered(i);
  std::vector<T> at_i;
  bool perm = ig.size() == g.size();
  std::vector<bool> seen(g.size(), false);
  for (auto k : ig) {
    perm = perm && k >= 0 && k < n && !seen[std::size_t(k)];
    if (perm) seen[std::size_t(k)] = true, at_i.push_back(g[std::size_t(k)]);
  }
  REQUIRE(test::all_ranks(perm && partitioned(pg, sorted, kth) && partitioned(at_i, sorted, kth)));
  if (distributed) {  // distributed: exactly the stable class order
    REQUIRE(p.is_balanced());
    const auto want = class_order(g, sorted, kth);
    std::vector<T> wv;
    for (auto k : want) wv.push_back(g[std::size_t(k)]);
    REQUIRE(test::all_ranks(ig == want && same_values(pg, wv)));
  }
}

template <class T>
void check_topk(const std::vector<test::host_t<T>>& g, split_axis sp, bool uneven, std::int64_t k, bool largest) {
  using H = test::host_t<T>;
  const std::int64_t n = std::int64_t(g.size());
  auto x = ember::array(std::span<const T>(reinterpret_cast<const T*>(g.data()), g.size()), std::array<std::int64_t, 1>{n},
                        {.split = sp});
  if (uneven) test::unbalance(x);
  // a plan step: distributed_topk along the split axis (a bound, within it),
  // local_select of each rank's copy when replicated
  const bool distributed = sp && ember::world().size() > 1;
  const auto plan = ember::explain(ember::detail::topk_node(x, k, -1, {.largest = largest}));
  REQUIRE(plan.steps.size() == 1);
  REQUIRE(plan.steps[0].kind == (distributed ? ember::planner::step_kind::distributed_topk
                                             : ember::planner::step_kind::local_select));
  REQUIRE(plan.steps[0].bound == distributed);
  REQUIRE(plan.steps[0].text == "topk(a0, axis=0, k=" + std::to_string(k) + (largest ? ")" : ", smallest)"));
  const auto [v, idx] = ember::topk(x, k, -1, {.largest = largest});
  REQUIRE(test::all_ranks(trace_within()));
  std::vector<std::int64_t> want(g.size());
  std::iota(want.begin(), want.end(), 0);
  std::stable_sort(want.begin(), want.end(), [&](std::int64_t a, std::int64_t b) {
    const H p = g[std::size_t(a)], q = g[std::size_t(b)];
    return largest ? less_nan_last(q, p) : less_nan_last(p, q);
  });
  want.resize(std::size_t(k));
  std::vector<H> wv;
  for (auto i : want) wv.push_back(g[std::size_t(i)]);
  REQUIRE(test::all_ranks(test::gathered(idx) == want && same_values(test::gathered(v), wv)));
  REQUIRE(v.shape()[0] == k);
  if (sp) REQUIRE(v.is_balanced());
}

}  // namespace

TEST_CASE("partition and argpartition put each kth where a sort does", "[sort][partition]") {
  const int P = ember::world().size();
  for (const std::string kind : {"random", "equal", "sorted", "reversed", "few"})
    for (const std::int64_t n : {std::int64_t(1), std::int64_t(37), std::int64_t(1000)})
      for (auto sp : {split_axis{0}, split_axis{}})
        for (const bool uneven : {false, true}) {
          INFO(kind << " n " << n << " split " << (sp ? 0 : -1) << " uneven " << uneven << " ranks " << P);
          const auto gd = data_of<double>(kind, n, 21 + std::uint64_t(n));
          const auto gi = data_of<std::int64_t>(kind, n, 22);
          const std::vector<std::vector<std::int64_t>> kths{{0}, {n - 1}, {n / 2}, {-1}, {n / 3, n / 2, n / 2, 0}};
          for (const auto& kth : kths) {
            check_partition<double>(gd, sp, uneven, kth);
            check_partition<std::int64_t>(gi, sp, uneven, kth);
          }
          if (n == 1000) {
            check_partition<float>(data_of<float>(kind, n, 23), sp, uneven, {10, 500});
            check_partition<std::uint8_t>(data_of<std::uint8_t>(kind, n, 24), sp, uneven, {999, 3});
            // more than 8 distinct pivots: classes found by binary search, not the branchless count
            check_partition<double>(gd, sp, uneven, {5, 90, 170, 250, 333, 410, 499, 500, 620, 700, 810, 905, 998});
          }
        }
  // NaN last: a kth in the NaN part, one before it; +-inf in place
  const std::vector<double> v{3.0, qnan, -inf, 0.0, inf, qnan, -1.0, 2.0, -0.5, 7.0, qnan, 2.0};
  for (auto sp : {split_axis{0}, split_axis{}})
    for (const bool uneven : {false, true}) {
      check_partition<double>(v, sp, uneven, {10});
      check_partition<double>(v, sp, uneven, {0, 8, 9});
      check_partition<double>(v, sp, uneven, {4, 5});
    }
}

TEST_CASE("topk: the k largest or smallest, sorted, ties by global index", "[sort][topk]") {
  for (const std::string kind : {"random", "equal", "sorted", "reversed", "few"})
    for (const std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(37), std::int64_t(1000)})
      for (auto sp : {split_axis{0}, split_axis{}})
        for (const bool uneven : {false, true})
          for (const bool largest : {true, false}) {
            INFO(kind << " n " << n << " split " << (sp ? 0 : -1) << " uneven " << uneven << " largest " << largest);
            for (const std::int64_t k : {std::int64_t(0), std::int64_t(1), std::int64_t(5), n / 2, n}) {
              if (k > n) continue;
              check_topk<double>(data_of<double>(kind, n, 31 + std::uint64_t(n)), sp, uneven, k, largest);
              check_topk<std::int32_t>(data_of<std::int32_t>(kind, n, 32), sp, uneven, k, largest);
            }
            if (n == 1000) check_topk<bool>(data_of<bool>(kind, n, 33), sp, uneven, 600, largest);
          }
  const std::vector<double> v{3.0, qnan, -inf, 0.0, inf, qnan, -1.0, 2.0, -0.5, 7.0, qnan, 2.0};
  for (auto sp : {split_axis{0}, split_axis{}})
    for (const std::int64_t k : {1, 2, 3, 4, 9, 10, 12})
      for (const bool largest : {true, false}) check_topk<double>(v, sp, true, k, largest);
}

TEST_CASE("partition and topk of N-D arrays along every axis of every split", "[sort][partition][topk]") {
  const std::int64_t r = 7, c = 5;
  std::vector<double> g(static_cast<std::size_t>(r * c));
  std::mt19937_64 rng(5);
  for (auto& x : g) x = double(std::int64_t(rng() % 11) - 5);
  for (auto sp : {split_axis{0}, split_axis{1}, split_axis{}})
    for (int axis : {0, 1, -1}) {
      INFO("split " << (sp ? *sp : -1) << " axis " << axis);
      auto x = ember::array(std::span<const double>(g), std::array<std::int64_t, 2>{r, c}, {.split = sp});
      test::unbalance(x);
      const int ax = axis < 0 ? axis + 2 : axis;
      const std::int64_t lines = ax == 0 ? c : r, len = ax == 0 ? r : c, k = 3, kth = len / 2;
      const auto pg = test::gathered(ember::eval(ember::partition(x, kth, axis)));
      const auto ig = test::gathered(ember::eval(ember::argpartition(x, {0, kth}, axis)));
      {  // a plan step (local_select): a resplit first only along the split axis, bytes exact
        const auto p = ember::explain(ember::partition(x - 1.0, kth, axis));
        INFO(p.to_string());
        int selects = 0, moves = 0;
        for (const auto& st : p.steps) {
          selects += st.kind == ember::planner::step_kind::local_select;
          moves += ember::planner::is_move(st.kind) && st.traffic.max_rank.bytes > 0;  // (a partition sends nothing)
        }
        REQUIRE(selects == 1);
        REQUIRE(moves == ((sp && *sp == ax && ember::world().size() > 1) ? 1 : 0));
        ember::dndarray<double, 2> shifted = ember::partition(x - 1.0, kth, axis);
        for (const auto& t : ember::last_trace()) REQUIRE(t.predicted == t.measured);
        const auto sg = test::gathered(shifted);
        std::vector<double> want(pg);
        for (auto& v : want) v -= 1.0;
        REQUIRE(test::all_ranks(sg == want));  // (nth_element makes the same moves on values shifted alike)
      }
      const auto [tv, ti] = ember::topk(x * 1.0, k, axis);  // an expression operand
      for (const auto& t : ember::last_trace()) REQUIRE(t.predicted == t.measured);
      {  // a plan step (local_select) after the operand's pass, a resplit only along the split axis
        const auto p = ember::explain(ember::detail::topk_node(x * 1.0, k, axis, {}));
        INFO(p.to_string());
        int selects = 0, moves = 0;
        for (const auto& st : p.steps) {
          selects += st.kind == ember::planner::step_kind::local_select;
          moves += ember::planner::is_move(st.kind) && st.traffic.max_rank.bytes > 0;
        }
        REQUIRE(selects == 1);
        REQUIRE(moves == ((sp && *sp == ax && ember::world().size() > 1) ? 1 : 0));
      }
      const auto [bv, bi] = ember::topk(x, k, axis, {.largest = false});
      REQUIRE(tv.shape()[std::size_t(ax)] == k);
      const auto tvg = test::gathered(tv);
      const auto tig = test::gathered(ti), big = test::gathered(bi);
      bool ok = true;
      for (std::int64_t l = 0; l < lines; ++l) {
        auto at = [&](std::int64_t j) { return static_cast<std::size_t>(ax == 0 ? j * c + l : l * c + j); };
        auto kat = [&](std::int64_t j) { return static_cast<std::size_t>(ax == 0 ? j * c + l : l * k + j); };
        std::vector<double> line, pl, il;
        for (std::int64_t j = 0; j < len; ++j) {
          line.push_back(g[at(j)]);
          pl.push_back(pg[at(j)]);
          il.push_back(g[at(ig[at(j)])]);
        }
        auto sorted = line;
        std::stable_sort(sorted.begin(), sorted.end());
        ok = ok && partitioned(pl, sorted, {kth}) && partitioned(il, sorted, {0, kth});
        std::vector<std::int64_t> idx(static_cast<std::size_t>(len));
        std::iota(idx.begin(), idx.end(), 0);
        auto desc = idx;
        std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) { return line[std::size_t(a)] < line[std::size_t(b)]; });
        std::stable_sort(desc.begin(), desc.end(), [&](std::int64_t a, std::int64_t b) { return line[std::size_t(a)] > line[std::size_t(b)]; });
        for (std::int64_t j = 0; j < k; ++j) {
          ok = ok && tig[kat(j)] == desc[std::size_t(j)] && tvg[kat(j)] == line[std::size_t(desc[std::size_t(j)])];
          ok = ok && big[kat(j)] == idx[std::size_t(j)];
        }
      }
      REQUIRE(test::all_ranks(ok));
    }
}

TEST_CASE("bad kth, k and axes raise on every rank", "[sort][partition][topk][errors]") {
  auto x = ember::zeros<double>({4, 3}, {.split = 0});
  auto v = ember::zeros<double>({10}, {.split = 0});
  REQUIRE_THROWS_AS(ember::partition(v, 10), ember::value_error);
  REQUIRE_THROWS_AS(ember::argpartition(v, {2, -11}), ember::value_error);
  REQUIRE_THROWS_AS(ember::partition(x, 3, 1), ember::value_error);
  REQUIRE_THROWS_AS(ember::partition(x, 0, 2), ember::axis_error);
  REQUIRE_THROWS_AS(ember::topk(v, 11), ember::value_error);
  REQUIRE_THROWS_AS(ember::topk(v, -1), ember::value_error);
  REQUIRE_THROWS_AS(ember::topk(x, 1, -3), ember::axis_error);
  try {
    ember::partition(x, 5, 0);
  } catch (const ember::value_error& e) {
    REQUIRE(std::string(e.what()).find("kth(=5) out of bounds (4) for axis 0 of an array of shape (4, 3)") != std::string::npos);
  }
  REQUIRE(test::all_ranks(true));
}

namespace {

// NumPy's complex order, written by class (independently of the runtime's
// comparison): both parts numbers, lexicographic; then NaN imaginary part (by
// the real part); then NaN real part (by the imaginary part); then both NaN.
template <class C>
bool numpy_complex_less(C a, C b) {
  auto cls = [](C z) { return 2 * int(std::isnan(z.real())) + int(std::isnan(z.imag())); };
  const int ca = cls(a), cb = cls(b);
  if (ca != cb) return ca < cb;
  if (ca == 0) return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  if (ca == 1) return a.real() < b.real();
  if (ca == 2) return a.imag() < b.imag();
  return false;
}
template <class C>
bool same_complex(const std::vector<C>& a, const std::vector<C>& b) {
  auto same = [](auto x, auto y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same(a[i].real(), b[i].real()) || !same(a[i].imag(), b[i].imag())) return false;
  return true;
}

template <class C>
void check_complex(const std::vector<C>& g, split_axis sp, bool uneven, bool descending) {
  const std::int64_t n = std::int64_t(g.size());
  auto x = ember::array(std::span<const C>(g), std::array<std::int64_t, 1>{n}, {.split = sp});
  if (uneven) test::unbalance(x);
  auto ord = [&](C a, C b) { return descending ? numpy_complex_less(b, a) : numpy_complex_less(a, b); };
  auto want = g;
  std::stable_sort(want.begin(), want.end(), ord);
  const auto s = ember::eval(ember::sort(x, -1, {.descending = descending}));
  std::vector<std::int64_t> wi(g.size());
  std::iota(wi.begin(), wi.end(), 0);
  std::stable_sort(wi.begin(), wi.end(), [&](std::int64_t a, std::int64_t b) { return ord(g[std::size_t(a)], g[std::size_t(b)]); });
  const auto i = ember::eval(ember::argsort(x, -1, {.descending = descending}));
  REQUIRE(test::all_ranks(same_complex(test::gathered(s), want) && test::gathered(i) == wi));
  if (sp) REQUIRE(s.is_balanced());
}

}  // namespace

TEST_CASE("complex sort and argsort follow NumPy's lexicographic order, NaN parts last", "[sort][complex]") {
  const double nan = qnan;
  for (const std::int64_t n : {std::int64_t(0), std::int64_t(1), std::int64_t(37), std::int64_t(1000)})
    for (auto sp : {split_axis{0}, split_axis{}})
      for (const bool uneven : {false, true})
        for (const bool descending : {false, true}) {
          INFO("n " << n << " split " << (sp ? 0 : -1) << " uneven " << uneven << " descending " << descending);
          std::mt19937_64 rng(std::uint64_t(n) + 77);
          std::vector<std::complex<double>> g(static_cast<std::size_t>(n));
          std::vector<std::complex<float>> gf(g.size());
          for (auto& z : g) {  // few real parts (ties decided by the imaginary part), some NaN parts, infinities
            const double re = double(rng() % 5) - 2, im = double(rng() % 7) - 3;
            const auto k = rng() % 16;
            z = {k == 0 ? nan : k == 1 ? inf : re, k == 2 ? nan : k == 3 ? -inf : k == 4 ? -0.0 : im};
            if (k == 5) z = {nan, nan};
          }
          for (std::size_t j = 0; j < g.size(); ++j) gf[j] = std::complex<float>(g[j]);
          check_complex(g, sp, uneven, descending);
          check_complex(gf, sp, uneven, descending);
        }
  // 2-D along the local axis and along the split axis, against line-by-line stable sorts
  const std::int64_t r = 6, c = 5;
  std::vector<std::complex<double>> g(static_cast<std::size_t>(r * c));
  std::mt19937_64 rng(9);
  for (auto& z : g) z = {double(rng() % 3), rng() % 9 == 0 ? nan : double(rng() % 4)};
  for (auto sp : {split_axis{0}, split_axis{1}, split_axis{}})
    for (int axis : {0, 1}) {
      INFO("2-D split " << (sp ? *sp : -1) << " axis " << axis);
      auto x = ember::array(std::span<const std::complex<double>>(g), std::array<std::int64_t, 2>{r, c}, {.split = sp});
      test::unbalance(x);
      const auto sg = test::gathered(ember::eval(ember::sort(x, axis)));
      const auto ig = test::gathered(ember::eval(ember::argsort(x, axis)));
      bool ok = true;
      const std::int64_t lines = axis == 0 ? c : r, len = axis == 0 ? r : c;
      for (std::int64_t l = 0; l < lines; ++l) {
        auto at = [&](std::int64_t j) { return static_cast<std::size_t>(axis == 0 ? j * c + l : l * c + j); };
        std::vector<std::int64_t> idx(static_cast<std::size_t>(len));
        std::iota(idx.begin(), idx.end(), 0);
        std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) { return numpy_complex_less(g[at(a)], g[at(b)]); });
        std::vector<std::complex<double>> want, got;
        for (std::int64_t j = 0; j < len; ++j) {
          want.push_back(g[at(idx[std::size_t(j)])]);
          got.push_back(sg[at(j)]);
          ok = ok && ig[at(j)] == idx[std::size_t(j)];
        }
        ok = ok && same_complex(got, want);
      }
      REQUIRE(test::all_ranks(ok));
    }
}
