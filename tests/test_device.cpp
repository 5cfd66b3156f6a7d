// GPU arrays (issue 7) against the same program on host arrays, at any rank
// count. Every case needs a CUDA device on every rank, so they are hidden
// ([.gpu]): CI on a machine without a GPU does not run them (the refusal without
// a device is checked in test_collective_safety [device]); tests/gpu/run_on_device.sh
// runs them at 1 and 2 ranks on a GPU machine, and fails if they cannot run.
#include <cmath>

#include "common.hpp"

namespace {

bool have_gpus() { return test::all_ranks(ember::gpu_available()); }

template <class T>
void check_close(const std::vector<T>& got, const std::vector<T>& want, double rtol = 1e-13) {
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = double(got[i]), w = double(want[i]);
    if (std::isnan(w) ? !std::isnan(g) : std::abs(g - w) > rtol * std::max(1.0, std::abs(w))) ++bad;
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("GPU: the device is there on every rank", "[.gpu]") { REQUIRE(have_gpus()); }

TEST_CASE("GPU: round trips and factories give the host's values", "[.gpu]") {
  REQUIRE(have_gpus());
  ember::random::seed(7);
  auto h = ember::random::randn<double>({37, 5}, {.split = 0});
  auto g = h.to(ember::gpu);
  CHECK(g.device() == ember::gpu);
  CHECK(g.to(ember::gpu).identity() == g.identity());
  CHECK(test::bit_equal(test::gathered(g), test::gathered(h)));
  CHECK(test::bit_equal(test::gathered(g.to(ember::cpu)), test::gathered(h)));
  ember::random::seed(7);
  auto r = ember::random::randn<double>({37, 5}, {.split = 0, .device = ember::gpu});
  CHECK(test::bit_equal(test::gathered(r), test::gathered(h)));
  CHECK(test::bit_equal(test::gathered(ember::arange<double>(0, 50, 1, {.split = 0, .device = ember::gpu})),
                        test::gathered(ember::arange<double>(0, 50, 1, {.split = 0}))));
  CHECK(test::bit_equal(test::gathered(ember::full<std::int64_t>({6, 4}, 3, {.split = 1, .device = ember::gpu})),
                        test::gathered(ember::full<std::int64_t>({6, 4}, 3, {.split = 1}))));
  auto z = ember::zeros_like(g);
  CHECK(z.device() == ember::gpu);
  auto v = g.larray_device();
  CHECK(v.data != nullptr);
  CHECK(v.shape == g.lshape());
  CHECK_THROWS_AS(g.larray(), ember::value_error);
}

TEST_CASE("GPU: moves of GPU arrays match the host's bit for bit", "[.gpu]") {
  REQUIRE(have_gpus());
  auto h = ember::random::rand<double>({23, 9, 4}, {.split = 0});
  auto g = h.to(ember::gpu);
  for (ember::split_axis ax : {ember::split_axis(1), ember::split_axis(2), ember::split_axis(ember::none)}) {
    h.resplit_(ax);
    g.resplit_(ax);
    CHECK(g.device() == ember::gpu);
    CHECK(g.layout() == h.layout());
    CHECK(test::bit_equal(test::gathered(g), test::gathered(h)));
  }
  h.resplit_(0);
  g.resplit_(0);
  auto map = h.lshape_map();
  if (map.size() > 1) {
    map[0][0] += 1;
    map[1][0] -= 1;
    if (map[1][0] >= 0) {
      h.redistribute_(map);
      g.redistribute_(map);
      CHECK(test::bit_equal(test::gathered(g), test::gathered(h)));
    }
  }
}

TEST_CASE("GPU: expressions, reductions and assignment match the host", "[.gpu]") {
  REQUIRE(have_gpus());
  auto a = ember::random::randn<double>({64, 48}, {.split = 0});
  auto b = ember::random::rand<double>({64, 48}, {.split = 1});
  auto c = ember::random::randn<double>({48}, {.split = 0});
  auto ga = a.to(ember::gpu), gb = b.to(ember::gpu);
  auto gc = c.to(ember::gpu);
  ember::dndarray<double, 2> want = a * b + ember::sin(c) - 2.0 * ember::exp(-ember::abs(a));
  ember::dndarray<double, 2> got = ga * gb + ember::sin(gc) - 2.0 * ember::exp(-ember::abs(ga));
  CHECK(got.device() == ember::gpu);
  check_close(test::gathered(got), test::gathered(want));
  check_close(test::gathered(ember::eval(ember::sum(ga * gb, 0))), test::gathered(ember::eval(ember::sum(a * b, 0))));
  CHECK(std::abs(ember::sum(ga) - ember::sum(a)) <= 1e-12 * std::abs(ember::sum(a)) + 1e-12);
  CHECK(ember::max(gb) == ember::max(b));
  check_close(test::gathered(ember::eval(ember::argmax(ga, 1))), test::gathered(ember::eval(ember::argmax(a, 1))), 0);
  check_close(test::gathered(ember::eval(ga - ember::mean(ga, 0))), test::gathered(ember::eval(a - ember::mean(a, 0))));
  // assignment into an existing GPU array writes its storage
  auto dst = ember::zeros_like(ga);
  const void* id = dst.identity();
  dst = ga + 1.0;
  CHECK(dst.identity() == id);
  CHECK(dst.device() == ember::gpu);
  check_close(test::gathered(dst), test::gathered(ember::eval(a + 1.0)));
  auto [s, d] = ember::eval(ga + gb, ga - gb);
  CHECK(s.device() == ember::gpu);
  check_close(test::gathered(s), test::gathered(ember::eval(a + b)));
  check_close(test::gathered(d), test::gathered(ember::eval(a - b)));
  const auto plan = ember::explain(ga + gb);
  CHECK(plan.device == ember::gpu);
  CHECK(plan.to_string().find("device: gpu") != std::string::npos);
  CHECK(ember::to_string(gc).find("device=gpu") != std::string::npos);
  CHECK_THROWS_AS(ember::eval(a + gb), ember::value_error);
}

TEST_CASE("GPU: matmul and transpose (cuBLAS for local products) match the host", "[.gpu]") {
  REQUIRE(have_gpus());
  auto a = ember::random::randn<double>({96, 40}, {.split = 0});
  auto b = ember::random::randn<double>({40, 24}, {.split = ember::none});
  auto ga = a.to(ember::gpu), gb = b.to(ember::gpu);
  // A split 0 times a replicated B: the local algorithm, on the GPU
  check_close(test::gathered(ember::eval(ember::matmul(ga, gb))), test::gathered(ember::eval(ember::matmul(a, b))), 1e-12);
  // a distributed algorithm (on host copies) and a transpose
  auto bs = ember::resplit(b, 1);
  auto gbs = bs.to(ember::gpu);
  check_close(test::gathered(ember::eval(ember::matmul(ga, gbs) + 1.0)),
              test::gathered(ember::eval(ember::matmul(a, bs) + 1.0)), 1e-12);
  check_close(test::gathered(ember::eval(ember::transpose(ga))), test::gathered(ember::eval(ember::transpose(a))), 0);
}

TEST_CASE("GPU: QR (TSQR with cuSOLVER local factors, ScaLAPACK on host copies) and SVD match the host", "[.gpu]") {
  REQUIRE(have_gpus());
  const int P = ember::world().size();
  // tall-skinny: TSQR with the local factor on the GPU
  auto a = ember::random::randn<double>({200 * P, 16}, {.split = 0});
  auto ga = a.to(ember::gpu);
  auto [q, r] = ember::linalg::qr(a);
  auto [gq, gr] = ember::linalg::qr(ga);
  CHECK(gq.device() == ember::gpu);
  CHECK(gr.device() == ember::gpu);
  check_close(test::gathered(gr), test::gathered(r), 1e-10);
  check_close(test::gathered(gq), test::gathered(q), 1e-10);
  // Q^T Q = I and Q R = A, computed on the GPU arrays themselves
  auto qtq = test::gathered(ember::eval(ember::matmul(ember::transpose(gq), gq)));
  for (std::int64_t i = 0; i < 16; ++i)
    for (std::int64_t j = 0; j < 16; ++j) CHECK(std::abs(qtq[std::size_t(i * 16 + j)] - (i == j ? 1.0 : 0.0)) < 1e-12);
  check_close(test::gathered(ember::eval(ember::matmul(gq, gr))), test::gathered(a), 1e-12);
  auto ronly = ember::linalg::qr(ga, {.mode = ember::linalg::qr_mode::r});
  CHECK(!ronly.Q.valid());
  check_close(test::gathered(ronly.R), test::gathered(r), 1e-10);
  // square: ScaLAPACK on host copies, results back on the GPU
  auto s = ember::random::randn<double>({48, 48}, {.split = 0});
  auto [sq, sr] = ember::linalg::qr(s.to(ember::gpu));
  auto [hq, hr] = ember::linalg::qr(s);
  CHECK(sq.device() == ember::gpu);
  check_close(test::gathered(sr), test::gathered(hr), 1e-10);
  auto sv = ember::linalg::svd(ga);
  auto hv = ember::linalg::svd(a);
  CHECK(sv.S.device() == ember::gpu);
  check_close(test::gathered(sv.S), test::gathered(hv.S), 1e-10);
  CHECK(std::abs(ember::linalg::norm(ga) - ember::linalg::norm(a)) < 1e-9);
}

TEST_CASE("GPU: every kind of expression step, dtype and layout matches the host", "[.gpu]") {
  REQUIRE(have_gpus());
  ember::random::seed(11);
  auto x = ember::random::randn<double>({33, 7, 5}, {.split = 1});
  auto y = ember::random::rand<float>({7, 5}, {.split = 0});
  auto i = ember::arange<std::int64_t>(0, 35, 1, {.split = 0});
  auto gx = x.to(ember::gpu);
  auto gy = y.to(ember::gpu);
  auto gi = i.to(ember::gpu);
  // broadcasting, mixed dtypes, where/clip/astype/pow, comparisons
  check_close(test::gathered(ember::eval(gx * gy + ember::where(gx > 0.0, gx, -gx))),
              test::gathered(ember::eval(x * y + ember::where(x > 0.0, x, -x))), 1e-6);
  check_close(test::gathered(ember::eval(ember::clip(gx, -0.5, 0.5) + ember::pow(ember::abs(gx), 1.5))),
              test::gathered(ember::eval(ember::clip(x, -0.5, 0.5) + ember::pow(ember::abs(x), 1.5))));
  check_close(test::gathered(ember::eval(ember::astype<float>(gi) * 0.5f)),
              test::gathered(ember::eval(ember::astype<float>(i) * 0.5f)), 0);
  // results with a requested split, reductions with keepdims, over several axes
  check_close(test::gathered(ember::eval(gx + 1.0, {.split = 2})), test::gathered(ember::eval(x + 1.0, {.split = 2})));
  check_close(test::gathered(ember::eval<3>(ember::sum(gx, 1, {.keepdims = true}))),
              test::gathered(ember::eval<3>(ember::sum(x, 1, {.keepdims = true}))));
  check_close(test::gathered(ember::eval<1>(ember::max(gx, {0, 2}))), test::gathered(ember::eval<1>(ember::max(x, {0, 2}))), 0);
  check_close(test::gathered(ember::eval(ember::argmin(gx, 1))), test::gathered(ember::eval(ember::argmin(x, 1))), 0);
  CHECK(ember::argmax(gi) == ember::argmax(i));
  CHECK(std::abs(ember::mean(gx) - ember::mean(x)) < 1e-12);
  CHECK(std::abs(ember::var(gx) - ember::var(x)) < 1e-12);
  CHECK(ember::all(gi >= std::int64_t(0)) == true);
  // assignment of another dtype into an existing GPU array, and a GPU expression
  // assigned to a host array: the name is rebound to a GPU result
  auto gf = ember::zeros<float>({7, 5}, {.split = 0, .device = ember::gpu});
  const void* id = gf.identity();
  gf = gy * 2.0;
  CHECK(gf.identity() == id);
  check_close(test::gathered(gf), test::gathered(ember::eval(y * 2.0f)), 1e-6);
  ember::dndarray<float, 2> h = ember::zeros<float>({7, 5}, {.split = 0});
  h = gy + 1.0f;
  CHECK(h.device() == ember::gpu);
  // moves of GPU arrays in every direction, balance and move_to
  auto m = gx.copy();
  m.resplit_(0);
  m.resplit_(2);
  m.balance_();
  CHECK(m.device() == ember::gpu);
  check_close(test::gathered(m), test::gathered(x), 0);
  auto target = ember::layout::balanced({33, 7, 5}, 0, ember::world().size());
  check_close(test::gathered(gx.moved_to(target)), test::gathered(x), 0);
  auto ex = ember::explain(gx + gy);
  CHECK(ex.copy_bytes() > 0);
}

TEST_CASE("GPU: the other linear algebra runs on host copies and returns GPU arrays", "[.gpu]") {
  REQUIRE(have_gpus());
  const std::int64_t n = 24;
  auto b0 = ember::random::randn<double>({n, n}, {.split = 0});
  auto spd = ember::eval(ember::matmul(b0, ember::transpose(b0)) + double(n));  // symmetric positive definite
  auto rhs = ember::random::randn<double>({n, 3}, {.split = 0});
  auto gs = spd.to(ember::gpu), gr = rhs.to(ember::gpu);
  auto x = ember::linalg::solve(gs, gr);
  CHECK(x.device() == ember::gpu);
  check_close(test::gathered(x), test::gathered(ember::linalg::solve(spd, rhs)), 1e-10);
  CHECK_THROWS_AS(ember::linalg::solve(gs, rhs), ember::value_error);
  auto l = ember::linalg::cholesky(gs);
  CHECK(l.device() == ember::gpu);
  check_close(test::gathered(l), test::gathered(ember::linalg::cholesky(spd)), 1e-10);
  auto e = ember::linalg::eigh(gs);
  check_close(test::gathered(e.eigenvalues), test::gathered(ember::linalg::eigh(spd).eigenvalues), 1e-9);
  auto tall = ember::random::randn<double>({40 * ember::world().size(), 6}, {.split = 0});
  auto hs = ember::linalg::hsvd_rank(tall.to(ember::gpu), 3);
  CHECK(hs.S.device() == ember::gpu);
  check_close(test::gathered(hs.S), test::gathered(ember::linalg::hsvd_rank(tall, 3).S), 1e-9);
}
