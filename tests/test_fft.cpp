// ember::fft (issue 18) against a direct DFT written out here in long double
// on the gathered data (not FFTW, which computes the results): every 1-D
// transform, n cropping and padding, every norm, odd and even lengths, lengths
// that do not divide P, float32 and float64, every axis of every split of 2-D
// and 3-D arrays, N-D transforms, round trips and Parseval; the plans (a
// `local_fft` step, a resplit with exact bytes along the split axis, nothing
// sent along a local one), errors on every rank; fftfreq, rfftfreq, fftshift.
#include <cmath>
#include <complex>
#include <numbers>
#include <random>

#include "common.hpp"

namespace {

using ember::split_axis;
using cd = std::complex<double>;
using cld = std::complex<long double>;
using K = ember::planner::step_kind;
namespace F = ember::fft;

// NumPy's transforms, directly: X[k] = sum_j x[j] e^(-+2 pi i j k / n), the
// input cropped or zero-padded to the transform's input length.
std::vector<cld> dft(std::vector<cld> x, std::int64_t n, bool inverse) {
  x.resize(std::size_t(n));
  std::vector<cld> X(static_cast<std::size_t>(n));
  const long double s = (inverse ? 2 : -2) * std::numbers::pi_v<long double> / (long double)n;
  for (std::int64_t k = 0; k < n; ++k) {
    cld acc = 0;
    for (std::int64_t j = 0; j < n; ++j) acc += x[std::size_t(j)] * std::polar(1.0L, s * (long double)((j * k) % n));
    X[std::size_t(k)] = acc;
  }
  return X;
}
// irfft: n real values from the first n/2 + 1 of a Hermitian spectrum (the
// imaginary parts of the zero and Nyquist terms are not read, as pocketfft and FFTW)
std::vector<cld> c2r(std::vector<cld> X, std::int64_t n) {
  X.resize(std::size_t(n / 2 + 1));
  std::vector<cld> x(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    long double acc = X[0].real();
    for (std::int64_t k = 1; k < (n + 1) / 2; ++k)
      acc += 2 * (X[std::size_t(k)] * std::polar(1.0L, 2 * std::numbers::pi_v<long double> * (long double)((j * k) % n) / (long double)n)).real();
    if (n % 2 == 0) acc += X[std::size_t(n / 2)].real() * (j % 2 ? -1 : 1);
    x[std::size_t(j)] = acc;
  }
  return x;
}
long double scale_of(F::norm nm, std::int64_t n, bool inverse) {
  if (nm == F::norm::ortho) return 1 / std::sqrt((long double)n);
  return (nm == F::norm::backward) == inverse ? 1 / (long double)n : 1;
}
// One line of transform w with length n (<= 0: NumPy's default) and norm.
std::vector<cld> reference(F::which w, std::vector<cld> x, std::int64_t n, F::norm nm) {
  const auto m = std::int64_t(x.size());
  using W = F::which;
  std::vector<cld> r;
  if (w == W::fft || w == W::ifft) {
    if (n <= 0) n = m;
    r = dft(x, n, w == W::ifft);
  } else if (w == W::rfft || w == W::ihfft) {
    if (n <= 0) n = m;
    r = dft(x, n, false);
    r.resize(std::size_t(n / 2 + 1));
    if (w == W::ihfft)
      for (auto& z : r) z = std::conj(z);
  } else {  // irfft, hfft
    if (n <= 0) n = 2 * (m - 1);
    if (w == W::hfft)
      for (auto& z : x) z = std::conj(z);
    r = c2r(x, n);
  }
  const bool inverse = w == W::ifft || w == W::irfft || w == W::ihfft;
  for (auto& z : r) z *= scale_of(nm, n, inverse);
  return r;
}

template <class A>
ember::index_vec shape_of(const A& a) {
  const auto s = a.shape();
  return ember::index_vec(s.begin(), s.end());
}

template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> v(n);
  for (auto& x : v) {
    if constexpr (ember::is_complex_v<T>) x = T(u(rng), u(rng));
    else x = T(u(rng));
  }
  return v;
}

template <class T>
cld to_cld(const T& v) {
  if constexpr (ember::is_complex_v<T>) return cld(v.real(), v.imag());
  else return cld((long double)v, 0);
}

// The largest |got - want| relative to the largest |want| (1 when sizes differ).
template <class G>
double rel_error(const std::vector<G>& got, const std::vector<cld>& want) {
  if (got.size() != want.size()) return 1;
  long double err = 0, top = 1e-300L;
  for (std::size_t i = 0; i < got.size(); ++i) {
    err = std::max(err, std::abs(to_cld(got[i]) - want[i]));
    top = std::max(top, std::abs(want[i]));
  }
  return double(err / top);
}

// The lines along `axis` of a row-major array of shape s, each transformed by the reference.
template <class T>
std::vector<cld> reference_along(F::which w, const std::vector<T>& g, const ember::index_vec& s, int axis, std::int64_t n,
                                 F::norm nm, ember::index_vec& out_shape) {
  std::int64_t outer = 1, inner = 1, len = s[std::size_t(axis)];
  for (int d = 0; d < axis; ++d) outer *= s[std::size_t(d)];
  for (int d = axis + 1; d < int(s.size()); ++d) inner *= s[std::size_t(d)];
  std::int64_t lo = -1;
  std::vector<cld> out;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      std::vector<cld> line(static_cast<std::size_t>(len));
      for (std::int64_t j = 0; j < len; ++j) line[std::size_t(j)] = to_cld(g[std::size_t((o * len + j) * inner + i)]);
      const auto r = reference(w, line, n, nm);
      if (lo < 0) {
        lo = std::int64_t(r.size());
        out.assign(std::size_t(outer * lo * inner), 0);
      }
      for (std::int64_t j = 0; j < lo; ++j) out[std::size_t((o * lo + j) * inner + i)] = r[std::size_t(j)];
    }
  out_shape = s;
  out_shape[std::size_t(axis)] = lo;
  return out;
}

template <class T, int N>
ember::dndarray<T, N> distributed(const std::vector<T>& g, const std::array<std::int64_t, std::size_t(N)>& shape, split_axis sp, bool uneven) {
  auto a = ember::array(std::span<const T>(g), shape, {.split = sp});
  if (uneven) test::unbalance(a);
  return a;
}

template <F::which W, class T, std::size_t N>
void check_transform(const std::vector<T>& g, const std::array<std::int64_t, N>& shape, double tol) {
  const int P = ember::world().size();
  for (int sp = -1; sp < int(N); ++sp)
    for (int axis = 0; axis < int(N); ++axis)
      for (const std::int64_t n : {std::int64_t(-1), std::int64_t(5), std::int64_t(12)})
        for (const auto nm : {F::norm::backward, F::norm::ortho, F::norm::forward}) {
          if (nm != F::norm::backward && n != -1) continue;
          INFO(F::detail::name_of(W) << " of " << ember::dtype_name<T>() << " shape " << ember::detail::shape_str(ember::index_vec(shape.begin(), shape.end()))
                                     << " split " << sp << " axis " << axis << " n " << n << " norm " << F::detail::norm_name(nm));
          const auto a = distributed<T, int(N)>(g, shape, sp < 0 ? split_axis{} : split_axis{sp}, true);
          const auto e = F::detail::make<W>(a, n > 0 ? std::optional<std::int64_t>(n) : std::nullopt, axis, nm, false);
          const auto p = ember::explain(e);
          INFO(p.to_string());
          int ffts = 0, resplits = 0;
          for (const auto& s : p.steps) {
            ffts += s.kind == K::local_fft;
            resplits += s.kind == K::resplit || s.kind == K::allgather;
          }
          REQUIRE(ffts == 1);
          // along a local axis nothing moves; along the split axis one move
          REQUIRE(resplits == (sp == axis && P > 1 ? 1 : 0));
          const auto r = ember::eval(e);
          REQUIRE(test::all_ranks(test::trace_exact()));
          if (sp == axis && P > 1 && N > 1) REQUIRE(r.split() != split_axis{axis});  // the transposed layout
          ember::index_vec ws;
          const auto want = reference_along(W, g, ember::index_vec(shape.begin(), shape.end()), axis, n, nm, ws);
          REQUIRE(shape_of(r) == ws);
          REQUIRE(test::all_ranks(rel_error(test::gathered(r), want) < tol));
        }
}

}  // namespace

TEST_CASE("1-D transforms of vectors equal the DFT: every kind, n, norm, split, float32 and float64", "[fft]") {
  using W = F::which;
  for (const std::int64_t len : {std::int64_t(1), std::int64_t(2), std::int64_t(7), std::int64_t(16), std::int64_t(33)}) {
    const auto z = random_values<cd>(std::size_t(len), std::uint64_t(len));
    const auto x = random_values<double>(std::size_t(len), std::uint64_t(len) + 100);
    const auto zf = random_values<std::complex<float>>(std::size_t(len), std::uint64_t(len) + 200);
    const auto xf = random_values<float>(std::size_t(len), std::uint64_t(len) + 300);
    const std::array<std::int64_t, 1> s{len};
    check_transform<W::fft>(z, s, 1e-13);
    check_transform<W::ifft>(z, s, 1e-13);
    check_transform<W::fft>(x, s, 1e-13);  // real input: a complex result
    check_transform<W::rfft>(x, s, 1e-13);
    check_transform<W::ihfft>(x, s, 1e-13);
    check_transform<W::fft>(zf, s, 2e-6);
    check_transform<W::rfft>(xf, s, 2e-6);
    if (len > 1) {  // irfft's default length 2 (m - 1) is 0 for one value
      check_transform<W::irfft>(z, s, 1e-13);
      check_transform<W::hfft>(z, s, 1e-13);
      check_transform<W::irfft>(zf, s, 2e-6);
    }
  }
  // integers are transformed as float64
  const std::vector<std::int32_t> iv{3, -1, 4, 1, -5, 9, 2};
  const auto r = ember::eval(F::fft(distributed<std::int32_t, 1>(iv, {7}, split_axis{0}, false)));
  static_assert(std::is_same_v<decltype(r)::value_type, cd>);
  std::vector<cld> in(iv.begin(), iv.end());
  REQUIRE(test::all_ranks(rel_error(test::gathered(r), reference(W::fft, in, -1, F::norm::backward)) < 1e-14));
}

TEST_CASE("transforms along every axis of every split of 2-D and 3-D arrays", "[fft]") {
  using W = F::which;
  const std::array<std::int64_t, 2> s2{9, 6};
  const auto z2 = random_values<cd>(54, 1);
  const auto x2 = random_values<double>(54, 2);
  check_transform<W::fft>(z2, s2, 1e-13);
  check_transform<W::ifft>(z2, s2, 1e-13);
  check_transform<W::rfft>(x2, s2, 1e-13);
  check_transform<W::irfft>(z2, s2, 1e-13);
  const std::array<std::int64_t, 3> s3{5, 4, 7};
  const auto z3 = random_values<cd>(140, 3);
  check_transform<W::fft>(z3, s3, 1e-13);
  check_transform<W::rfft>(random_values<double>(140, 4), s3, 1e-13);
}

TEST_CASE("long strided lines: blocks of columns gathered, transformed and scattered back", "[fft]") {
  // along axis 0 of (300, 120): lines 120 values apart, over 256 KiB a block,
  // transformed a few columns at a time (fft/fftw.cpp), with a last narrower block
  using W = F::which;
  const std::array<std::int64_t, 2> s{300, 120};
  const auto z = random_values<cd>(36000, 31);
  const auto x = random_values<double>(36000, 32);
  for (auto sp : {split_axis{1}, split_axis{}}) {
    INFO("split " << (sp ? *sp : -1));
    ember::index_vec ws;
    const auto a = distributed<cd, 2>(z, s, sp, true);
    REQUIRE(test::all_ranks(rel_error(test::gathered(ember::eval(F::ifft(a, {}, 0))),
                                      reference_along(W::ifft, z, {300, 120}, 0, -1, F::norm::backward, ws)) < 1e-13));
    const auto b = distributed<double, 2>(x, s, sp, true);
    const auto want = reference_along(W::rfft, x, {300, 120}, 0, -1, F::norm::backward, ws);
    const auto r = ember::eval(F::rfft(b, {}, 0));
    REQUIRE(test::all_ranks(rel_error(test::gathered(r), want) < 1e-13));
    // and back: c2r along the strided axis
    std::vector<cld> xv(x.begin(), x.end());
    REQUIRE(test::all_ranks(rel_error(test::gathered(ember::eval(F::irfft(r, 300, 0))), xv) < 1e-13));
  }
}

TEST_CASE("N-D transforms: fftn, rfftn, irfftn and fft2 equal transforms axis by axis; round trips; Parseval", "[fft]") {
  const int P = ember::world().size();
  const std::array<std::int64_t, 3> s{6, 5, 8};
  const auto g = random_values<double>(240, 11);
  const ember::index_vec shape(s.begin(), s.end());
  // the reference: NumPy's order, the last axis first
  auto along = [&](F::which w, std::vector<cld> v, ember::index_vec& sh, int axis, std::int64_t n) {
    ember::index_vec out;
    auto r = reference_along(w, v, sh, axis, n, F::norm::backward, out);
    sh = out;
    return r;
  };
  for (int sp = -1; sp < 3; ++sp) {
    INFO("split " << sp);
    const auto a = distributed<double, 3>(g, s, sp < 0 ? split_axis{} : split_axis{sp}, true);
    std::vector<cld> v(g.begin(), g.end());
    // fftn over every axis moves the data once at most
    {
      const auto e = F::fftn(a);
      const auto p = ember::explain(e);
      INFO(p.to_string());
      int moves = 0, ffts = 0;  // moves that send (a replicated operand may be partitioned, sending nothing)
      for (const auto& st : p.steps) {
        moves += ember::planner::is_move(st.kind) && st.traffic.max_rank.bytes > 0;
        ffts += st.kind == K::local_fft;
      }
      REQUIRE(ffts == 3);
      REQUIRE(moves == (sp >= 0 && P > 1 ? 1 : 0));
      const auto r = ember::eval(e);
      REQUIRE(test::all_ranks(test::trace_exact()));
      ember::index_vec sh = shape;
      auto w = along(F::which::fft, v, sh, 2, -1);
      w = along(F::which::fft, w, sh, 1, -1);
      w = along(F::which::fft, w, sh, 0, -1);
      REQUIRE(test::all_ranks(rel_error(test::gathered(r), w) < 1e-13));
      // Parseval: sum |x|^2 = sum |X|^2 / n
      long double ex = 0, eX = 0;
      for (double x : g) ex += (long double)x * x;
      for (const auto& z : test::gathered(r)) eX += std::norm(cld(z.real(), z.imag()));
      REQUIRE(test::all_ranks(std::abs(ex - eX / 240) < 1e-12 * ex));
      // ifftn(fftn(a)) == a
      const auto back = test::gathered(ember::eval(ember::real(F::ifftn(r))));
      std::vector<cld> gv(g.begin(), g.end());
      REQUIRE(test::all_ranks(rel_error(back, gv) < 1e-13));
    }
    // rfftn over axes (0, 2) with lengths, and irfftn back with the original lengths
    {
      const auto r = ember::eval(F::rfftn(a, {4, 10}, {0, 2}));
      ember::index_vec sh = shape;
      auto w = along(F::which::rfft, v, sh, 2, 10);
      w = along(F::which::fft, w, sh, 0, 4);
      REQUIRE(shape_of(r) == sh);
      REQUIRE(test::all_ranks(rel_error(test::gathered(r), w) < 1e-13));
      const auto u = ember::eval(F::irfftn(F::rfftn(a), {5, 8}, {1, 2}));
      REQUIRE(shape_of(u) == shape);
      // rfftn over every axis, then irfftn over the last two: the first axis stays transformed
      ember::index_vec sh2 = shape;
      auto w2 = along(F::which::rfft, v, sh2, 2, -1);
      w2 = along(F::which::fft, w2, sh2, 1, -1);
      w2 = along(F::which::fft, w2, sh2, 0, -1);
      w2 = along(F::which::ifft, w2, sh2, 1, 5);
      w2 = along(F::which::irfft, w2, sh2, 2, 8);
      REQUIRE(test::all_ranks(rel_error(test::gathered(u), w2) < 1e-13));
    }
    // 2-D: fft2 and irfft2(rfft2(x)) == x, odd lengths
    {
      const std::array<std::int64_t, 2> s2{7, 9};
      const auto g2 = random_values<double>(63, 5);
      const auto b = distributed<double, 2>(g2, s2, sp < 0 || sp > 1 ? split_axis{} : split_axis{sp}, true);
      const auto back = ember::eval(F::irfft2(F::rfft2(b), {7, 9}));
      std::vector<cld> gv(g2.begin(), g2.end());
      REQUIRE(test::all_ranks(rel_error(test::gathered(back), gv) < 1e-13));
      ember::index_vec sh{7, 9};
      auto w = along(F::which::fft, gv, sh, 1, -1);
      w = along(F::which::fft, w, sh, 0, -1);
      REQUIRE(test::all_ranks(rel_error(test::gathered(ember::eval(F::fft2(b))), w) < 1e-13));
    }
  }
}

TEST_CASE("fft plans: fused operands, the transposed layout, eval's split, plans at scale", "[fft][planner]") {
  const int P = ember::world().size();
  const std::int64_t r = 12, c = 10;
  const auto g = random_values<double>(std::size_t(r * c), 21);
  const auto a = distributed<double, 2>(g, {r, c}, split_axis{0}, false);
  auto w = ember::eval(ember::arange<double>(c) * 0.1);  // a window along the last axis
  // the window product is one pass into the transform's input; abs() one pass after
  const auto e = ember::abs(F::rfft(a * w, {}, 1));
  const auto p = ember::explain(e);
  INFO(p.to_string());
  int kernels = 0, moves = 0, ffts = 0;
  for (const auto& s : p.steps) {
    kernels += s.kind == K::fused_kernel;
    moves += ember::planner::is_move(s.kind) && s.traffic.max_rank.bytes > 0;
    ffts += s.kind == K::local_fft;
  }
  REQUIRE(ffts == 1);
  REQUIRE(kernels == 2);
  REQUIRE(moves == 0);
  REQUIRE(p.to_string().find("rfft(") != std::string::npos);
  REQUIRE(p.to_string().find("n=10") != std::string::npos);
  const auto got = test::gathered(ember::eval(e));
  std::vector<double> wg(g.size());
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) wg[std::size_t(i * c + j)] = g[std::size_t(i * c + j)] * (0.1 * double(j));
  ember::index_vec os;
  auto want = reference_along(F::which::rfft, wg, {r, c}, 1, -1, F::norm::backward, os);
  for (auto& z : want) z = std::abs(z);
  REQUIRE(test::all_ranks(rel_error(got, want) < 1e-13));
  // along the split axis: a resplit, the result split along axis 1, unless asked
  const auto t = ember::eval(F::fft(a, {}, 0));
  if (P > 1) REQUIRE(t.split() == split_axis{1});
  const auto back = ember::eval(F::fft(a, {}, 0), {.split = 0});
  REQUIRE(back.split() == split_axis{0});
  REQUIRE(test::all_ranks(test::trace_exact()));
  REQUIRE(test::all_ranks(test::gathered(back) == test::gathered(t)));
  // predicted bytes at scale: a 1024^3 complex fftn at 4096 ranks, one resplit of the whole array
  auto big = ember::dndarray<cd, 3>(ember::layout::balanced({1024, 1024, 1024}, 0, P), ember::world(), std::shared_ptr<cd[]>());
  const auto ps = ember::plan_for(F::fftn(big), 4096);
  INFO(ps.to_string());
  int big_moves = 0, big_ffts = 0;
  for (const auto& s : ps.steps) {
    big_moves += ember::planner::is_move(s.kind);
    big_ffts += s.kind == K::local_fft;
  }
  REQUIRE(big_ffts == 3);
  REQUIRE(big_moves == 1);
  // a slab decomposition of 1024 planes holds a plane on 1024 of the 4096
  // ranks (a pencil one would use them all: not yet); each of those keeps the
  // 1024 values of its plane that stay and sends the rest, 16 bytes each
  REQUIRE(ps.max_rank().bytes == (1024 * 1024 - 1024) * 16);
  // FFTW plans are reused: the same transform again plans nothing new
  const auto before = F::cached_plans();
  (void)ember::eval(F::rfft(a * w, {}, 1));
  REQUIRE(F::cached_plans() == before);
}

TEST_CASE("fftfreq, rfftfreq and fftshift equal NumPy's formulas", "[fft]") {
  for (const std::int64_t n : {std::int64_t(1), std::int64_t(8), std::int64_t(9)}) {
    const auto f = test::gathered(F::fftfreq(n, 0.5, {.split = 0}));
    const auto rf = test::gathered(F::rfftfreq(n, 0.5));
    bool ok = std::int64_t(f.size()) == n && std::int64_t(rf.size()) == n / 2 + 1;
    for (std::int64_t k = 0; ok && k < n; ++k) ok = f[std::size_t(k)] == double(k < (n + 1) / 2 ? k : k - n) / (0.5 * double(n));
    for (std::int64_t k = 0; ok && k <= n / 2; ++k) ok = rf[std::size_t(k)] == double(k) / (0.5 * double(n));
    REQUIRE(test::all_ranks(ok));
    // fftshift puts frequency 0 in the middle: the shifted frequencies increase
    const auto s = test::gathered(F::fftshift(F::fftfreq(n, 1.0, {.split = 0})));
    ok = std::is_sorted(s.begin(), s.end()) && s[std::size_t(n / 2)] == 0.0;
    const auto back = test::gathered(F::ifftshift(F::fftshift(F::fftfreq(n))));
    REQUIRE(test::all_ranks(ok && back == test::gathered(F::fftfreq(n))));
  }
}

TEST_CASE("bad transform lengths and axes raise on every rank", "[fft][errors]") {
  auto a = ember::zeros<double>({4, 6}, {.split = 0});
  REQUIRE_THROWS_AS(F::fft(a, 0), ember::value_error);
  REQUIRE_THROWS_AS(F::fft(a, {}, 2), ember::error);
  REQUIRE_THROWS_AS(F::irfft(ember::zeros<cd>({3, 1}), {}, 1), ember::value_error);  // 2 (m - 1) = 0
  REQUIRE_THROWS_AS(F::fftfreq(0), ember::value_error);
  try {
    (void)F::rfft(a, -3);
    FAIL("no error");
  } catch (const ember::value_error& e) {
    REQUIRE(std::string(e.what()).find("(-3)") != std::string::npos);
    REQUIRE(std::string(e.what()).find("(4, 6)") != std::string::npos);
  }
}
