// ember::einsum and tensordot (issue 18) against a direct sum over every index
// assignment written out here, on the gathered operands: matrix products in
// every operand order, batched products, inner and outer products, traces,
// diagonals, transposes and reductions, ellipses with broadcasting, extent-1
// broadcasting, 3- and 4-operand chains in every order; every split of every
// operand (uneven blocks), 1-4 ranks, float64, float32, complex128 and int64;
// the order einsum picks (the pure planner) and errors on every rank.
#include <complex>
#include <map>
#include <random>
#include <string>

#include "common.hpp"

namespace {

using ember::split_axis;
using cd = std::complex<double>;
namespace C = ember::contract;

// out[output] = sum over the other labels of the operands' product; a label of
// extent 1 in an operand broadcasts (that operand reads index 0).
template <class T>
std::vector<T> reference(const std::vector<std::string>& in, const std::string& out, const std::vector<std::vector<T>>& xs,
                         const std::vector<ember::index_vec>& shapes) {
  std::map<char, std::int64_t> ext;
  for (std::size_t i = 0; i < in.size(); ++i)
    for (std::size_t d = 0; d < in[i].size(); ++d) ext[in[i][d]] = std::max(ext[in[i][d]], shapes[i][d]);
  std::string labels;
  for (const auto& [c, e] : ext) labels += c;
  std::int64_t out_n = 1;
  for (char c : out) out_n *= ext[c];
  std::vector<T> r(std::size_t(out_n), T(0));
  std::map<char, std::int64_t> idx;
  for (char c : labels) idx[c] = 0;
  for (;;) {
    T prod = T(1);
    for (std::size_t i = 0; i < in.size(); ++i) {
      std::int64_t flat = 0;
      for (std::size_t d = 0; d < in[i].size(); ++d)
        flat = flat * shapes[i][d] + (shapes[i][d] == 1 ? 0 : idx[in[i][d]]);
      prod *= xs[i][std::size_t(flat)];
    }
    std::int64_t o = 0;
    for (char c : out) o = o * ext[c] + idx[c];
    r[std::size_t(o)] += prod;
    std::size_t k = labels.size();
    while (k > 0) {
      const char c = labels[k - 1];
      if (++idx[c] < ext[c]) break;
      idx[c] = 0;
      --k;
    }
    if (k == 0) break;
  }
  return r;
}

template <class T>
std::vector<T> values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) {
    if constexpr (ember::is_complex_v<T>) x = T(u(rng), u(rng));
    else if constexpr (std::is_integral_v<T>) x = T(std::int64_t(rng() % 7) - 3);
    else x = T(u(rng));
  }
  return v;
}

std::int64_t numel(const ember::index_vec& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

template <class T>
double max_error(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return 1e300;
  double err = 0, top = 1e-300;
  for (std::size_t i = 0; i < got.size(); ++i) {
    err = std::max(err, double(std::abs(got[i] - want[i])));
    top = std::max(top, double(std::abs(want[i])));
  }
  return err / top;
}

template <class T, int N>
ember::dndarray<T, N> operand(const std::vector<T>& g, const ember::index_vec& s, int split) {
  std::array<std::int64_t, std::size_t(N)> shape{};
  std::copy(s.begin(), s.end(), shape.begin());
  auto a = ember::array(std::span<const T>(g), shape, {.split = split < 0 ? split_axis{} : split_axis{split}});
  test::unbalance(a);
  return a;
}

// Every split of every operand (up to 24 combinations, spread over the rest).
inline std::vector<std::vector<int>> split_choices(const std::vector<int>& ranks) {
  std::vector<std::vector<int>> all{{}};
  for (int r : ranks) {
    std::vector<std::vector<int>> next;
    for (const auto& c : all)
      for (int s = -1; s < r; ++s) {
        auto d = c;
        d.push_back(s);
        next.push_back(d);
      }
    all = next;
  }
  if (all.size() <= 24) return all;
  std::vector<std::vector<int>> some;
  for (std::size_t i = 0; i < all.size(); i += all.size() / 24 + 1) some.push_back(all[i]);
  some.push_back(all.back());
  return some;
}

// einsum(text) over operands of ranks Ns against the reference on `in -> out`.
template <class T, int... Ns>
void check(const std::string& text, const std::vector<std::string>& in, const std::string& out,
           const std::vector<ember::index_vec>& shapes, double tol, ember::einsum_options o = {}) {
  std::vector<std::vector<T>> xs;
  for (std::size_t i = 0; i < shapes.size(); ++i) xs.push_back(values<T>(numel(shapes[i]), 7 * i + shapes[i].size()));
  const auto want = reference(in, out, xs, shapes);
  for (const auto& sp : split_choices({Ns...})) {
    std::string sps;
    for (int s : sp) sps += std::to_string(s) + " ";
    INFO(text << " (" << ember::dtype_name<T>() << ") splits " << sps);
    const auto r = [&]<std::size_t... I>(std::index_sequence<I...>) {
      return ember::einsum(text, operand<T, Ns>(xs[I], shapes[I], sp[I])..., o);
    }(std::make_index_sequence<sizeof...(Ns)>{});
    INFO(r.plan().to_string());
    REQUIRE(r.ndim() == int(out.size()));
    std::vector<T> got;
    if constexpr (true) {
      if (out.empty()) {
        got.push_back(T(r));
      } else {
        switch (r.ndim()) {
          case 1: got = test::gathered(r.template as<1>()); break;
          case 2: got = test::gathered(r.template as<2>()); break;
          case 3: got = test::gathered(r.template as<3>()); break;
          case 4: got = test::gathered(r.template as<4>()); break;
          default: FAIL("rank");
        }
      }
    }
    REQUIRE(test::all_ranks(test::trace_exact()));
    if constexpr (std::is_integral_v<T>) REQUIRE(test::all_ranks(got == want));
    else REQUIRE(test::all_ranks(max_error(got, want) < tol));
  }
}

}  // namespace

TEST_CASE("einsum of two operands: products in every order, batches, inner and outer, every split", "[einsum]") {
  using V = ember::index_vec;
  check<double, 2, 2>("ij,jk->ik", {"ij", "jk"}, "ik", {V{5, 7}, V{7, 3}}, 1e-13);
  check<double, 2, 2>("ij,kj->ik", {"ij", "kj"}, "ik", {V{5, 7}, V{3, 7}}, 1e-13);
  check<double, 2, 2>("ji,jk->ik", {"ji", "jk"}, "ik", {V{7, 5}, V{7, 3}}, 1e-13);
  check<double, 2, 2>("ji,kj->ki", {"ji", "kj"}, "ki", {V{7, 5}, V{3, 7}}, 1e-13);
  check<double, 2, 2>("ij,jk", {"ij", "jk"}, "ik", {V{4, 6}, V{6, 5}}, 1e-13);  // implicit output
  check<double, 3, 3>("bij,bjk->bik", {"bij", "bjk"}, "bik", {V{4, 5, 6}, V{4, 6, 3}}, 1e-13);
  check<double, 3, 3>("bij,bkj->bki", {"bij", "bkj"}, "bki", {V{3, 5, 6}, V{3, 2, 6}}, 1e-13);
  check<double, 3, 2>("bij,jk->bik", {"bij", "jk"}, "bik", {V{3, 4, 5}, V{5, 6}}, 1e-13);
  check<double, 3, 2>("ijk,jl->kil", {"ijk", "jl"}, "kil", {V{3, 4, 5}, V{4, 2}}, 1e-13);
  check<double, 1, 1>("i,i->", {"i", "i"}, "", {V{9}, V{9}}, 1e-13);
  check<double, 1, 1>("i,j->ij", {"i", "j"}, "ij", {V{4}, V{5}}, 1e-13);
  check<double, 1, 1>("i,i->i", {"i", "i"}, "i", {V{6}, V{6}}, 1e-13);
  check<double, 2, 1>("ij,j->i", {"ij", "j"}, "i", {V{5, 4}, V{4}}, 1e-13);
  check<double, 3, 3>("abc,cba->", {"abc", "cba"}, "", {V{2, 3, 4}, V{4, 3, 2}}, 1e-13);
  check<double, 3, 2>("aij,ai->aj", {"aij", "ai"}, "aj", {V{3, 4, 5}, V{3, 4}}, 1e-13);
  // a label of extent 1 broadcasts, as NumPy: j summed over the first operand only
  check<double, 2, 2>("ij,jk", {"ij", "jk"}, "ik", {V{2, 3}, V{1, 4}}, 1e-13);
  check<double, 1, 1>("i,i->i", {"i", "i"}, "i", {V{5}, V{1}}, 1e-13);
  // ellipses, broadcast against each other (right-aligned)
  check<double, 4, 3>("...ij,...jk->...ik", {"ABij", "Bjk"}, "ABik", {V{2, 3, 4, 5}, V{3, 5, 2}}, 1e-13);
  check<double, 3, 2>("i...,i...->...", {"iAB", "iB"}, "AB", {V{4, 1, 3}, V{4, 3}}, 1e-13);
}

TEST_CASE("einsum of one operand: trace, diagonal, transposes, reductions", "[einsum]") {
  using V = ember::index_vec;
  check<double, 2>("ii", {"ii"}, "", {V{5, 5}}, 1e-13);
  check<double, 2>("ii->i", {"ii"}, "i", {V{6, 6}}, 1e-13);
  check<double, 2>("ij->ji", {"ij"}, "ji", {V{4, 7}}, 1e-13);
  check<double, 2>("ba", {"ba"}, "ab", {V{4, 7}}, 1e-13);
  check<double, 2>("ij->", {"ij"}, "", {V{4, 7}}, 1e-13);
  check<double, 2>("ij->j", {"ij"}, "j", {V{4, 7}}, 1e-13);
  check<double, 3>("iji->j", {"iji"}, "j", {V{3, 4, 3}}, 1e-13);
  check<double, 3>("iij->ji", {"iij"}, "ji", {V{3, 3, 5}}, 1e-13);
  check<double, 3>("iii->i", {"iii"}, "i", {V{4, 4, 4}}, 1e-13);
  check<double, 3>("abc->cab", {"abc"}, "cab", {V{2, 3, 4}}, 1e-13);
  check<double, 3>("...ii->...i", {"Aii"}, "Ai", {V{3, 4, 4}}, 1e-13);
}

TEST_CASE("einsum chains of three and four operands, in every order, and other dtypes", "[einsum]") {
  using V = ember::index_vec;
  check<double, 2, 2, 2>("ij,jk,kl->il", {"ij", "jk", "kl"}, "il", {V{5, 2}, V{2, 6}, V{6, 4}}, 1e-13);
  check<double, 2, 2, 2>("ij,jk,kl->il", {"ij", "jk", "kl"}, "il", {V{5, 2}, V{2, 6}, V{6, 4}}, 1e-13,
                         {.path = {{0, 1}, {0, 1}}});
  check<double, 2, 2, 2>("ij,jk,kl->il", {"ij", "jk", "kl"}, "il", {V{5, 2}, V{2, 6}, V{6, 4}}, 1e-13,
                         {.optimize = ember::einsum_optimize::greedy});
  check<double, 1, 2, 1>("i,ij,j->", {"i", "ij", "j"}, "", {V{5}, V{5, 6}, V{6}}, 1e-13);
  check<double, 2, 2, 2, 2>("ab,bc,cd,de->ae", {"ab", "bc", "cd", "de"}, "ae", {V{3, 4}, V{4, 2}, V{2, 5}, V{5, 3}},
                            1e-13);
  check<double, 1, 1, 1>("i,i,i->i", {"i", "i", "i"}, "i", {V{7}, V{7}, V{7}}, 1e-13);
  check<double, 3, 2, 2>("bij,jk,bk->bi", {"bij", "jk", "bk"}, "bi", {V{3, 4, 5}, V{5, 2}, V{3, 2}}, 1e-13);
  check<float, 2, 2>("ij,jk->ik", {"ij", "jk"}, "ik", {V{5, 7}, V{7, 3}}, 1e-5);
  check<cd, 2, 2>("ij,kj->ik", {"ij", "kj"}, "ik", {V{5, 7}, V{3, 7}}, 1e-13);
  check<cd, 3, 3>("bij,bjk->bik", {"bij", "bjk"}, "bik", {V{2, 3, 4}, V{2, 4, 3}}, 1e-13);
  check<std::int64_t, 2, 2>("ij,jk->ik", {"ij", "jk"}, "ik", {V{5, 7}, V{7, 3}}, 0);
  check<std::int64_t, 2>("ii", {"ii"}, "", {V{4, 4}}, 0);
}

TEST_CASE("einsum<\"...\"> and tensordot: ranks at compile time, mixed dtypes", "[einsum]") {
  const auto A = ember::arange<double>(12).reshape({3, 4});
  const auto B = ember::arange<double>(20).reshape({4, 5});
  const auto M = ember::matmul(A, B);
  const ember::dndarray<double, 2> Me = M;
  auto C = ember::einsum<"ij,jk->ik">(A, B);
  static_assert(std::is_same_v<decltype(C), ember::dndarray<double, 2>>);
  REQUIRE(test::gathered(C) == test::gathered(Me));
  const double t = ember::einsum<"ii">(ember::eval(ember::matmul(A, ember::transpose(A))));
  double want = 0;
  const auto g = test::gathered(A);
  for (std::size_t i = 0; i < g.size(); ++i) want += g[i] * g[i];
  REQUIRE(t == want);
  const double s = ember::einsum("i,i", ember::arange<double>(5), ember::arange<double>(5));
  REQUIRE(s == 30);
  // float32 with float64: float64, as NumPy
  const auto F = ember::astype<float>(A);
  auto D = ember::einsum<"ij,jk">(F, B);
  static_assert(std::is_same_v<decltype(D), ember::dndarray<double, 2>>);
  REQUIRE(test::gathered(D) == test::gathered(Me));
  // tensordot: explicit pairs of axes and the last K with the first K
  const auto X = ember::arange<double>(60, {.split = 0}).reshape({3, 4, 5});
  const auto Y = ember::arange<double>(24, {.split = 0}).reshape({4, 3, 2});
  auto T = ember::tensordot(X, Y, {{1, 0}, {0, 1}});
  static_assert(std::is_same_v<decltype(T), ember::dndarray<double, 2>>);
  const auto gx = test::gathered(X), gy = test::gathered(Y);
  std::vector<double> wt(10, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k)
        for (int l = 0; l < 2; ++l) wt[std::size_t(k * 2 + l)] += gx[std::size_t((i * 4 + j) * 5 + k)] * gy[std::size_t((j * 3 + i) * 2 + l)];
  REQUIRE(test::gathered(T) == wt);
  auto T1 = ember::tensordot<1>(A, B);
  REQUIRE(test::gathered(T1) == test::gathered(Me));
  auto T0 = ember::tensordot<0>(ember::arange<double>(2), ember::arange<double>(3));
  static_assert(std::is_same_v<decltype(T0), ember::dndarray<double, 2>>);
  REQUIRE(test::gathered(T0) == std::vector<double>{0, 0, 0, 0, 1, 2});
  auto T2 = ember::tensordot(X, ember::arange<double>(20).reshape({4, 5}));  // axes = 2
  static_assert(std::is_same_v<decltype(T2), ember::dndarray<double, 1>>);
  std::vector<double> w2(3, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 20; ++j) w2[std::size_t(i)] += gx[std::size_t(i * 20 + j)] * j;
  REQUIRE(test::gathered(T2) == w2);
}

TEST_CASE("einsum's order: the small middle dimension first, as NumPy's optimal path; the path is honoured", "[einsum]") {
  // ij,jk,kl->il with j = 2: (jk, kl) costs 2 n^3 / n... NumPy's path is [(1, 2), (0, 1)]
  const auto subs = C::parse_subscripts("ij,jk,kl->il", {2, 2, 2});
  REQUIRE(subs.output == "il");
  const std::vector<ember::index_vec> shapes{{100, 2}, {2, 100}, {100, 100}};
  for (int P : {1, 2, 4, 4096}) {
    const auto p = C::plan_einsum(subs, shapes, {}, P, 8);
    INFO(p.to_string());
    REQUIRE(p.path() == std::vector<std::pair<int, int>>{{1, 2}, {0, 1}});
    REQUIRE(p.optimized_flops == 80000);
    REQUIRE(p.naive_flops == 6e6);
    const auto g = C::plan_einsum(subs, shapes, {.optimize = ember::einsum_optimize::greedy}, P, 8);
    REQUIRE(g.path() == p.path());
    const auto none = C::plan_einsum(subs, shapes, {.optimize = ember::einsum_optimize::none}, P, 8);
    REQUIRE(none.path() == std::vector<std::pair<int, int>>{{0, 1}, {0, 1}});
    REQUIRE(none.optimized_flops == 2 * 100 * 2 * 100 + 2 * 100 * 100 * 100);
  }
  // the other way round the other order wins
  const auto q = C::plan_einsum(subs, {{100, 100}, {100, 2}, {2, 100}}, {}, 2, 8);
  REQUIRE(q.path() == std::vector<std::pair<int, int>>{{0, 1}, {0, 1}});
  // ellipses and implicit outputs as NumPy names them
  REQUIRE(C::parse_subscripts("...ij,...jk", {4, 3}).output == "ABik");
  REQUIRE(C::parse_subscripts("Ba,ab", {2, 2}).output == "Bb");
  REQUIRE(C::parse_subscripts("ii", {2}).output == "");
  REQUIRE(C::parse_subscripts(" i j , j k -> i k ", {2, 2}).text() == "ij,jk->ik");
  constexpr int r2[] = {2, 2};
  static_assert(C::output_rank("ij,jk->ik", r2, 2) == 2);
  static_assert(C::output_rank("ij,jk", r2, 2) == 2);
  static_assert(C::output_rank("ii,jj", r2, 2) == 0);
  static_assert(C::output_rank("ij,jk->", r2, 2) == 0);
  static_assert(C::output_rank("ijk,jk", r2, 2) == -1);
  constexpr int r43[] = {4, 3};
  static_assert(C::output_rank("...ij,...jk->...ik", r43, 2) == 4);
  static_assert(C::output_rank("...ij,...jk->ik", r43, 2) == -1);
}

TEST_CASE("einsum's order is followed: the good order's result equals the bad order's", "[einsum]") {
  const std::int64_t n = 64;
  const auto A = ember::random::rand<double>({n, 2}, {.split = 0});
  const auto B = ember::random::rand<double>({2, n}, {.split = 0});
  const auto Cm = ember::random::rand<double>({n, n}, {.split = 0});
  const ember::einsum_result<double> good = ember::einsum("ij,jk,kl->il", A, B, Cm);
  REQUIRE(good.plan().path() == std::vector<std::pair<int, int>>{{1, 2}, {0, 1}});
  const ember::einsum_result<double> bad = ember::einsum("ij,jk,kl->il", A, B, Cm, ember::einsum_options{.path = {{0, 1}, {0, 1}}});
  REQUIRE(bad.plan().path() == std::vector<std::pair<int, int>>{{0, 1}, {0, 1}});
  REQUIRE(test::all_ranks(max_error(test::gathered(good.as<2>()), test::gathered(bad.as<2>())) < 1e-13));
  const auto path = ember::einsum_path("ij,jk,kl->il", A, B, Cm);
  REQUIRE(path.path() == good.plan().path());
  REQUIRE(path.to_string().find("kl,jk->jl") == std::string::npos);  // our pairs keep the list's order
  REQUIRE(path.to_string().find("jk,kl->jl") != std::string::npos);
}

TEST_CASE("einsum's errors: every rank, naming the subscripts, operands and extents", "[einsum]") {
  const auto A = ember::zeros<double>({3, 4}, {.split = 0});
  const auto B = ember::zeros<double>({5, 6}, {.split = 1});
  const auto v = ember::zeros<double>({4});
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const ember::error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto has = [&](auto&& f, const std::string& what) {
    const std::string m = message(f);
    INFO(m);
    REQUIRE(test::all_ranks(m.find(what) != std::string::npos));
  };
  has([&] { (void)ember::einsum("ij,jk->ik", A); }, "name 2 operands but 1 is given");
  has([&] { (void)ember::einsum("ijk,jk->ik", A, B); }, "operand 0 has 2 dimensions");
  has([&] { (void)ember::einsum("ij,jk->ik", A, B); }, "label 'j' has extent 4 in operand 0 (shape (3, 4)) and 5 in operand 1");
  has([&] { (void)ember::einsum("ij,j1->i", A, v); }, "the character '1'");
  has([&] { (void)ember::einsum("ij->ii", A); }, "the output label 'i' appears more than once");
  has([&] { (void)ember::einsum("ij->k", A); }, "the output label 'k' is in no operand");
  has([&] { (void)ember::einsum("...j->j", A); }, "no '...' ellipsis");
  has([&] { (void)ember::einsum("ii->i", A); }, "the repeated label 'i' of operand 0 (shape (3, 4)) has extents 3 and 4");
  has([&] { (void)ember::einsum("ij,j->i", A, v, ember::einsum_options{.path = {{0, 2}}}); }, "path step 0 (0, 2)");
  has([&] { (void)ember::einsum("ij,j->i", A, v).as<2>(); }, "gives a result of 1 dimension");
  has([&] { (void)ember::tensordot(A, B, {{1}, {0}}); }, "shape-mismatch for sum");
}
