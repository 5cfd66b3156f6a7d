// Differential "random program" test (issue 6, item 2). Every case is a small
// program generated at RUN time from one 64-bit seed (the same on every rank, so
// every rank draws the same numbers): random shapes (1-3-D, empty and size-1 axes,
// more ranks than rows), random splits and uneven lshape_maps, chains of
// redistribute_ / resplit_ / balance_, then one of a fixed set of expression
// templates instantiated with those runtime shapes and splits:
//   a*b+c (c may broadcast), sum(a, axis), mean(a*a, axis, keepdims), transpose(a),
//   matmul(A, B), matmul(A, B) + C, linalg::qr(A).
// Each result is compared with a serial computation on the host copy of the inputs
// (plain loops, or tests/reference.hpp for the elementwise/reduction templates),
// and every evaluation's measured traffic must equal the plan's prediction
// (ember::last_trace()). Truths that may differ by rank go through test::all_ranks.
//
//   build/tests/test_programs                              default: 400 cases (CI)
//   EMBER_PROGRAM_CASES=5000 mpirun -n 3 build/tests/test_programs   a longer run
//   EMBER_PROGRAM_SEED=<n> mpirun -n 3 build/tests/test_programs     replays one case
// A failing case prints its seed (EMBER_PROGRAM_SEED=<n>) and the program it ran.
#include <cstdlib>
#include <random>
#include <sstream>

#include "reference.hpp"

namespace {

using ember::index_vec;
using ember::split_axis;
using i64 = std::int64_t;

struct gen {
  std::mt19937_64 g;
  std::ostringstream log;  // the program, for the failure message
  i64 dim() {  // mostly 1..6, sometimes 0 or 1
    const unsigned r = unsigned(g() % 10);
    if (r == 0) return 0;
    if (r == 1) return 1;
    return 1 + i64(g() % 6);
  }
  split_axis split(int nd) {
    const int k = int(g() % unsigned(nd + 1));
    return k == nd ? split_axis{} : split_axis{k};
  }
  std::vector<double> values(i64 n) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = double(i64(g() % 2001) - 1000) / 256.0;  // exact in binary
    return v;
  }
};

std::string axis_str(split_axis s) { return s ? std::to_string(*s) : std::string("none"); }

template <int N>
std::string shape_str(const std::array<i64, N>& s) {
  std::ostringstream os;
  os << "(";
  for (int d = 0; d < N; ++d) os << (d ? "," : "") << s[std::size_t(d)];
  os << ")";
  return os.str();
}

// A random uneven map for a's split axis (same on every rank).
template <int N>
typename ember::dndarray<double, N>::map_type random_map(gen& G, const ember::dndarray<double, N>& a) {
  auto map = a.lshape_map();
  const int k = *a.split();
  const int P = ember::world().size();
  for (auto& row : map) row[std::size_t(k)] = 0;
  const int mode = int(G.g() % 3);
  for (i64 i = 0; i < a.shape()[std::size_t(k)]; ++i) {
    int r = int(G.g() % unsigned(P));
    if (mode == 1) r = 0;          // everything on rank 0
    if (mode == 2) r = P - 1;      // everything on the last rank
    ++map[std::size_t(r)][std::size_t(k)];
  }
  return map;
}

// Every evaluation's measured traffic equals the plan's prediction on this rank.
bool trace_matches() {
  for (const auto& s : ember::last_trace())
    if (!(s.predicted == s.measured)) return false;
  return true;
}

bool lshape_map_ok(const auto& a) {
  const auto map = a.lshape_map();
  const auto sh = a.shape();
  if (int(map.size()) != ember::world().size()) return false;
  for (std::size_t d = 0; d < sh.size(); ++d) {
    i64 sum = 0;
    for (const auto& row : map) {
      if (!(a.split() && std::size_t(*a.split()) == d) && row[d] != sh[d]) return false;
      sum += row[d];
    }
    if (a.split() && std::size_t(*a.split()) == d && sum != sh[d]) return false;
  }
  return map[std::size_t(ember::world().rank())] == a.lshape();
}

// A random array: host copy + distributed copy with a random split and, half the
// time, an uneven map.
template <int N>
ember::dndarray<double, N> make(gen& G, const std::array<i64, N>& shape, std::vector<double>& host, const char* name) {
  i64 n = 1;
  for (auto x : shape) n *= x;
  host = G.values(n);
  const split_axis s = G.split(N);
  auto a = ember::array(std::span<const double>(host), shape, {.split = s});
  G.log << name << " = array" << shape_str<N>(shape) << " split " << axis_str(s);
  if (a.split() && G.g() % 2) {
    const auto map = random_map(G, a);
    a.redistribute_(map);
    G.log << ", redistribute_ to extents [";
    for (const auto& row : map) G.log << row[std::size_t(*a.split())] << " ";
    G.log << "]";
  }
  G.log << "\n";
  return a;
}

template <int N>
std::array<i64, N> random_shape(gen& G) {
  std::array<i64, N> s{};
  for (auto& x : s) x = G.dim();
  return s;
}

#define EXPECT_ALL(cond)                        \
  do {                                          \
    const bool ok_ = test::all_ranks(bool(cond)); \
    CHECK(ok_);                                 \
    if (!ok_) ++failures;                       \
  } while (0)

int failures = 0;

bool close(const std::vector<double>& got, const std::vector<double>& want, double rtol, std::string& why) {
  return ref::close<double>(got, want, rtol, why);
}

// ---- 0: layout chains: redistribute_ / resplit_ / balance_, data bit for bit ----
template <int N>
void layout_chain(gen& G) {
  std::vector<double> h;
  auto a = make<N>(G, random_shape<N>(G), h, "a");
  const int steps = 1 + int(G.g() % 5);
  for (int i = 0; i < steps; ++i) {
    const int op = int(G.g() % 3);
    if (op == 0 && a.split()) {
      const auto map = random_map(G, a);
      G.log << "a.redistribute_(random map)\n";
      a.redistribute_(map);
    } else if (op == 1 || !a.split()) {
      const split_axis s = G.split(N);
      G.log << "a.resplit_(" << axis_str(s) << ")\n";
      a.resplit_(s);
      EXPECT_ALL(a.split() == s);
    } else {
      G.log << "a.balance_()\n";
      a.balance_();
      EXPECT_ALL(a.is_balanced());
    }
    INFO(G.log.str());
    EXPECT_ALL(lshape_map_ok(a));
    EXPECT_ALL(test::bit_equal(test::gathered(a), h));
  }
  // out of place: the source keeps its layout and data
  const auto before = a.lshape_map();
  const split_axis s = G.split(N);
  auto b = ember::resplit(a, s);
  INFO(G.log.str() << "b = resplit(a, " << axis_str(s) << ")");
  // to another axis the result is balanced; to the same axis nothing moves (Heat)
  EXPECT_ALL(a.lshape_map() == before && b.split() == s &&
             (s == a.split() ? b.lshape_map() == before : b.is_balanced()));
  EXPECT_ALL(test::bit_equal(test::gathered(b), h) && test::bit_equal(test::gathered(a), h));
}

// ---- 1-3, 6: elementwise, reductions, transpose ----
template <int N>
void elementwise(gen& G) {
  const auto s = random_shape<N>(G);
  std::vector<double> ha, hb, hc;
  auto a = make<N>(G, s, ha, "a");
  auto b = make<N>(G, s, hb, "b");
  const bool row = G.g() % 2;  // c broadcasts along every axis but the last
  std::vector<double> want(ha.size());
  std::string why;
  bool ok;
  if (row) {
    auto c = make<1>(G, std::array<i64, 1>{s[N - 1]}, hc, "c");
    G.log << "r = eval(a * b + c)\n";
    INFO(G.log.str());
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = ha[i] * hb[i] + hc[i % std::size_t(s[N - 1])];
    ok = close(test::gathered(ember::eval(a * b + c)), want, 1e-12, why);
  } else {
    auto c = make<N>(G, s, hc, "c");
    G.log << "r = eval(a * b + c)\n";
    INFO(G.log.str());
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = ha[i] * hb[i] + hc[i];
    ok = close(test::gathered(ember::eval(a * b + c)), want, 1e-12, why);
  }
  INFO(G.log.str() << why);
  EXPECT_ALL(ok);
  EXPECT_ALL(trace_matches());
}

template <int N>
void reduction(gen& G, bool mean) {
  const auto s = random_shape<N>(G);
  std::vector<double> ha;
  auto a = make<N>(G, s, ha, "a");
  const int axis = int(G.g() % unsigned(N));
  std::string why;
  if (mean) {
    // mean over an empty axis is NaN (NumPy); ref and ember must agree
    G.log << "r = eval(mean(a * a, " << axis << ", keepdims))\n";
    INFO(G.log.str());
    auto e = ember::mean(a * a, axis, {.keepdims = true});
    const auto want = ref::eval(e);
    auto r = ember::eval<N>(e);
    EXPECT_ALL(r.shape()[std::size_t(axis)] == 1);
    const bool ok = close(test::gathered(r), want.v, 1e-12, why);
    INFO(why);
    EXPECT_ALL(ok);
  } else {
    // a 1-D sum keeps its axis (a dndarray has rank >= 1)
    G.log << "r = eval(sum(a, " << axis << (N == 1 ? ", keepdims" : "") << "))\n";
    INFO(G.log.str());
    auto e = [&] {
      if constexpr (N == 1) return ember::sum(a, axis, {.keepdims = true});
      else return ember::sum(a, axis);
    }();
    // plain loops over the host copy
    std::array<i64, N> st{};
    i64 acc = 1;
    for (int d = N - 1; d >= 0; --d) {
      st[std::size_t(d)] = acc;
      acc *= s[std::size_t(d)];
    }
    const i64 outer = st[std::size_t(axis)] * s[std::size_t(axis)] == 0 ? 0 : acc / (st[std::size_t(axis)] * s[std::size_t(axis)]);
    const i64 inner = st[std::size_t(axis)];
    i64 outer_n = 1;
    for (int d = 0; d < axis; ++d) outer_n *= s[std::size_t(d)];
    (void)outer;
    std::vector<double> want(std::size_t(outer_n * inner), 0.0);
    for (i64 o = 0; o < outer_n; ++o)
      for (i64 j = 0; j < s[std::size_t(axis)]; ++j)
        for (i64 i = 0; i < inner; ++i)
          want[std::size_t(o * inner + i)] += ha[std::size_t((o * s[std::size_t(axis)] + j) * inner + i)];
    auto r = ember::eval<N == 1 ? 1 : N - 1>(e);
    const bool ok = close(test::gathered(r), want, 1e-12, why);
    INFO(why);
    EXPECT_ALL(ok);
  }
  EXPECT_ALL(trace_matches());
}

template <int N>
void transpose_case(gen& G) {
  const auto s = random_shape<N>(G);
  std::vector<double> ha;
  auto a = make<N>(G, s, ha, "a");
  G.log << "r = eval(transpose(a))\n";
  INFO(G.log.str());
  auto r = ember::eval(ember::transpose(a));
  // r[i_{N-1}, ..., i_0] = a[i_0, ..., i_{N-1}]
  std::array<i64, N> rs{};
  for (int d = 0; d < N; ++d) rs[std::size_t(d)] = s[std::size_t(N - 1 - d)];
  EXPECT_ALL(r.shape() == rs);
  std::vector<double> want(ha.size());
  index_vec sv(s.begin(), s.end()), rv(rs.begin(), rs.end()), idx;
  const auto rst = ember::row_major_strides(rv);
  for (std::size_t f = 0; f < ha.size(); ++f) {
    ref::unflatten(i64(f), sv, idx);
    i64 o = 0;
    for (int d = 0; d < N; ++d) o += idx[std::size_t(N - 1 - d)] * rst[std::size_t(d)];
    want[std::size_t(o)] = ha[f];
  }
  EXPECT_ALL(test::bit_equal(test::gathered(r), want));
  EXPECT_ALL(trace_matches());
}

// ---- 4, 5: matmul(A, B) and matmul(A, B) + C ----
void matmul_case(gen& G, bool plus) {
  const i64 m = G.dim(), k = G.dim(), n = G.dim();
  std::vector<double> hA, hB, hC;
  auto A = make<2>(G, {m, k}, hA, "A");
  auto B = make<2>(G, {k, n}, hB, "B");
  std::vector<double> want(std::size_t(m * n), 0.0);
  for (i64 i = 0; i < m; ++i)
    for (i64 j = 0; j < n; ++j) {
      double acc = 0;
      for (i64 l = 0; l < k; ++l) acc += hA[std::size_t(i * k + l)] * hB[std::size_t(l * n + j)];
      want[std::size_t(i * n + j)] = acc;
    }
  std::string why;
  bool ok;
  if (plus) {
    auto C = make<2>(G, {m, n}, hC, "C");
    for (std::size_t i = 0; i < want.size(); ++i) want[i] += hC[i];
    G.log << "r = eval(matmul(A, B) + C)\n";
    INFO(G.log.str());
    ok = close(test::gathered(ember::eval(ember::matmul(A, B) + C)), want, 1e-12, why);
  } else {
    G.log << "r = eval(matmul(A, B))\n";
    INFO(G.log.str());
    ok = close(test::gathered(ember::eval(ember::matmul(A, B))), want, 1e-12, why);
  }
  INFO(G.log.str() << why);
  EXPECT_ALL(ok);
  EXPECT_ALL(trace_matches());
}

// ---- 7: QR of a small random matrix: Q R = A, Q^T Q = I, R upper triangular ----
void qr_case(gen& G) {
  const i64 m = 1 + i64(G.g() % 7), n = 1 + i64(G.g() % 5);
  std::vector<double> hA;
  auto A = make<2>(G, {m, n}, hA, "A");
  G.log << "Q, R = linalg::qr(A)\n";
  INFO(G.log.str());
  auto [Q, R] = ember::linalg::qr(A);
  const i64 kk = std::min(m, n);
  EXPECT_ALL(Q.shape() == (std::array<i64, 2>{m, kk}) && R.shape() == (std::array<i64, 2>{kk, n}));
  const auto q = test::gathered(Q), r = test::gathered(R);
  bool ok = q.size() == std::size_t(m * kk) && r.size() == std::size_t(kk * n);
  double err = 0, orth = 0;
  if (ok) {
    for (i64 i = 0; i < m; ++i)
      for (i64 j = 0; j < n; ++j) {
        double acc = 0;
        for (i64 l = 0; l < kk; ++l) acc += q[std::size_t(i * kk + l)] * r[std::size_t(l * n + j)];
        err = std::max(err, std::abs(acc - hA[std::size_t(i * n + j)]));
      }
    for (i64 i = 0; i < kk; ++i)
      for (i64 j = 0; j < n; ++j) {
        if (j < i && r[std::size_t(i * n + j)] != 0.0) ok = false;
        if (j == i && !(r[std::size_t(i * n + j)] >= 0.0)) ok = false;
      }
    // Q's columns are orthonormal where A has full column rank; random A almost
    // surely does, and a rank-deficient draw only changes the tolerance needed.
    for (i64 a = 0; a < kk; ++a)
      for (i64 b = 0; b < kk; ++b) {
        double acc = 0;
        for (i64 i = 0; i < m; ++i) acc += q[std::size_t(i * kk + a)] * q[std::size_t(i * kk + b)];
        orth = std::max(orth, std::abs(acc - (a == b ? 1.0 : 0.0)));
      }
  }
  INFO("max |QR - A| = " << err << ", max |Q^T Q - I| = " << orth);
  EXPECT_ALL(ok && err <= 1e-10 && orth <= 1e-10);
}

void run_case(std::uint64_t seed) {
  gen G{std::mt19937_64(seed), {}};
  G.log << "EMBER_PROGRAM_SEED=" << seed << " (" << ember::world().size() << " ranks)\n";
  const int kind = int(G.g() % 16);
  const int nd = 1 + int(G.g() % 3);
  auto by_rank = [&](auto f1, auto f2, auto f3) { nd == 1 ? f1() : nd == 2 ? f2() : f3(); };
  try {
    switch (kind) {
      case 0: case 1: case 2:
        by_rank([&] { layout_chain<1>(G); }, [&] { layout_chain<2>(G); }, [&] { layout_chain<3>(G); });
        break;
      case 3: case 4:
        by_rank([&] { elementwise<1>(G); }, [&] { elementwise<2>(G); }, [&] { elementwise<3>(G); });
        break;
      case 5: case 6:
        by_rank([&] { reduction<1>(G, false); }, [&] { reduction<2>(G, false); }, [&] { reduction<3>(G, false); });
        break;
      case 7: case 8:
        by_rank([&] { reduction<1>(G, true); }, [&] { reduction<2>(G, true); }, [&] { reduction<3>(G, true); });
        break;
      case 9:
        if (nd == 3) transpose_case<3>(G);
        else transpose_case<2>(G);
        break;
      case 10: case 11: matmul_case(G, false); break;
      case 12: case 13: matmul_case(G, true); break;
      default: qr_case(G); break;
    }
  } catch (const std::exception& e) {
    // ember checks replicated metadata alike on every rank: all ranks land here
    INFO(G.log.str());
    FAIL_CHECK("exception: " << e.what());
    ++failures;
  }
}

std::optional<std::uint64_t> env_u64(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::strtoull(v, nullptr, 0);
}

}  // namespace

TEST_CASE("random programs equal a serial computation on the host data", "[programs][random]") {
  if (auto s = env_u64("EMBER_PROGRAM_SEED")) {
    run_case(*s);
    return;
  }
  const std::uint64_t cases = env_u64("EMBER_PROGRAM_CASES").value_or(400);
  const std::uint64_t base = env_u64("EMBER_PROGRAM_BASE").value_or(0x5EED0000);
  for (std::uint64_t c = 0; c < cases && failures < 10; ++c) run_case(base + c);
}
