// ember::par (split_round_robin, split_managed, map_unordered, serializable
// collectives) and ember::broadcast (buffers, Eigen, dndarrays, array(.root)).
// Run at 1-4 ranks; every rank-dependent truth goes through test::all_ranks.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <list>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <range/v3/view/iota.hpp>

#include "common.hpp"

namespace {

const ember::communicator& W() { return ember::world(); }

// Lowers config().max_message_bytes for one test (it must be equal on every rank).
struct chunk_limit {
  std::int64_t saved;
  explicit chunk_limit(std::int64_t bytes) : saved(ember::config().max_message_bytes) {
    ember::config().max_message_bytes = bytes;
  }
  ~chunk_limit() { ember::config().max_message_bytes = saved; }
};

// Every index 0..n-1 exactly once across all ranks' lists (decided on the root,
// told to every rank).
bool each_once(const std::vector<std::int64_t>& mine, std::int64_t n) {
  auto all = ember::par::gather(mine);
  bool ok = true;
  if (ember::par::is_root()) {
    std::vector<std::int64_t> flat;
    for (const auto& v : all) flat.insert(flat.end(), v.begin(), v.end());
    std::sort(flat.begin(), flat.end());
    std::vector<std::int64_t> want(static_cast<std::size_t>(n));
    std::iota(want.begin(), want.end(), 0);
    ok = flat == want;
  }
  return ember::par::bcast(ok);
}

struct record {
  std::string name;
  std::vector<double> values;
  std::map<std::string, int> tags;
  int rank = -1;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(name, values, tags, rank);
  }
  friend bool operator==(const record&, const record&) = default;
};

record make_record(int r) {
  record x;
  x.name = "rank-" + std::to_string(r) + std::string(std::size_t(r) * 3, '*');
  for (int i = 0; i <= r; ++i) x.values.push_back(i * 0.5 - r);
  x.tags = {{"rank", r}, {"square", r * r}};
  x.rank = r;
  return x;
}

// Deterministic bit patterns, NaNs and infinities included.
std::vector<double> pattern(std::size_t n) {
  std::vector<double> v(n);
  std::uint64_t s = 0x9e3779b97f4a7c15ull;
  for (auto& x : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    std::memcpy(&x, &s, sizeof x);
  }
  return v;
}

}  // namespace

TEST_CASE("par: rank, size and root follow the communicator", "[par]") {
  REQUIRE(ember::par::rank() == W().rank());
  REQUIRE(ember::par::size() == W().size());
  REQUIRE(ember::par::is_root() == (W().rank() == 0));
  ember::par::barrier();
}

TEST_CASE("par: split_round_robin is examples[rank::size], each item once, no communication", "[par]") {
  for (std::int64_t n : {0, 1, 3, 23}) {
    std::vector<std::int64_t> items(static_cast<std::size_t>(n));
    std::iota(items.begin(), items.end(), 0);
    const auto before = W().sent();
    std::vector<std::int64_t> mine;
    for (auto x : ember::par::split_round_robin(items)) mine.push_back(x);
    const bool silent = W().sent() == before;
    std::vector<std::int64_t> want;
    for (std::int64_t i = W().rank(); i < n; i += W().size()) want.push_back(i);
    REQUIRE(test::all_ranks(silent && mine == want));
    REQUIRE(each_once(mine, n));
  }
}

TEST_CASE("par: split_managed processes every item exactly once", "[par]") {
  const int P = W().size();
  for (std::int64_t n : {0, 1, 2, 5, 37}) {
    std::vector<std::int64_t> items(static_cast<std::size_t>(n));
    std::iota(items.begin(), items.end(), 0);
    std::vector<std::int64_t> mine;
    for (auto x : ember::par::split_managed(items)) mine.push_back(x);
    // with more than one rank the root only manages
    const bool root_idle = P == 1 || W().rank() != 0 || mine.empty();
    REQUIRE(test::all_ranks(root_idle && std::is_sorted(mine.begin(), mine.end())));
    REQUIRE(each_once(mine, n));
  }
  // any forward range: a list (walked forward) and a range-v3 iota view
  std::list<std::int64_t> lst(19);
  std::iota(lst.begin(), lst.end(), 0);
  std::vector<std::int64_t> a, b;
  for (auto x : ember::par::split_managed(lst)) a.push_back(x);
  REQUIRE(each_once(a, 19));
  for (auto x : ember::par::split_managed(ranges::views::iota(std::int64_t(0), std::int64_t(11)))) b.push_back(x);
  REQUIRE(each_once(b, 11));
}

TEST_CASE("par: split_managed gives a slow item's rank fewer items than round robin", "[par]") {
  const int P = W().size();
  if (P < 3) {
    SUCCEED("needs two workers besides the managing root");
    return;
  }
  // Item 0 sleeps; the others are trivial. Round robin would give rank 0 (and
  // every rank) about n/P items whatever they cost; the managed loop lets the
  // other workers take everything while one sleeps.
  const std::int64_t n = 40;
  std::vector<std::int64_t> items(n);
  std::iota(items.begin(), items.end(), 0);
  std::int64_t count = 0;
  bool slow = false;
  for (auto x : ember::par::split_managed(items)) {
    ++count;
    if (x == 0) {
      slow = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
    }
  }
  const auto counts = ember::par::allgather(count);
  const auto slows = ember::par::allgather(slow);
  int slow_rank = -1;
  for (int r = 0; r < P; ++r)
    if (slows[std::size_t(r)]) slow_rank = r;
  REQUIRE(slow_rank > 0);
  // round robin's share of the slow rank, and the makespan in items of the two
  std::int64_t rr_share = 0;
  for (auto x : ember::par::split_round_robin(items)) (void)x, ++rr_share;
  const auto rr = ember::par::allgather(rr_share);
  INFO("managed counts per rank, slow rank " << slow_rank << ": " << counts[1] << " " << counts[2]);
  REQUIRE(counts[std::size_t(slow_rank)] < rr[std::size_t(slow_rank)]);
  REQUIRE(counts[std::size_t(slow_rank)] <= 3);
  REQUIRE(std::accumulate(counts.begin(), counts.end(), std::int64_t(0)) == n);
}

TEST_CASE("par: an exception in a managed loop stops every rank and names the item", "[par]") {
  const int P = W().size();
  std::vector<std::int64_t> items(30);
  std::iota(items.begin(), items.end(), 0);
  // Item 7 fails at once; item 29, the last, fails late, when the other workers
  // have asked for more and none is left: they must still learn of it.
  for (std::int64_t bad : {7, 29}) {
    bool ok = false;
    try {
      for (auto x : ember::par::split_managed(items))
        if (x == bad) {
          if (bad == 29) std::this_thread::sleep_for(std::chrono::milliseconds(300));
          throw std::runtime_error("boom");
        }
    } catch (const ember::error& e) {
      // the root and the other workers: the failing rank and item are named
      const std::string m = e.what();
      ok = m.find("item " + std::to_string(bad)) != std::string::npos && P > 1;
      INFO(m);
      CHECK(ok);
    } catch (const std::runtime_error& e) {
      // the failing worker (or the only rank): its own exception propagates
      ok = std::string(e.what()) == "boom";
    }
    REQUIRE(test::all_ranks(ok));
  }
  // nothing is left in flight: the next managed loop works normally
  std::vector<std::int64_t> mine;
  for (auto x : ember::par::split_managed(items)) mine.push_back(x);
  REQUIRE(each_once(mine, 30));
}

TEST_CASE("par: a worker leaving a managed loop early leaves nobody waiting", "[par]") {
  std::vector<std::int64_t> items(25);
  std::iota(items.begin(), items.end(), 0);
  std::vector<std::int64_t> mine;
  for (auto x : ember::par::split_managed(items)) {
    mine.push_back(x);
    if (W().rank() == 1) break;  // rank 1 takes one item only
  }
  REQUIRE(test::all_ranks(W().rank() != 1 || mine.size() == 1));
  if (W().size() != 2) {
    REQUIRE(each_once(mine, 25));  // the other workers took the rest
  } else {
    // rank 1 was the only worker: 24 items were never handed out, and nobody waits
    const auto all = ember::par::allgather(std::int64_t(mine.size()));
    REQUIRE(all[1] == 1);
  }
}

TEST_CASE("par: map_unordered brings every result to the root", "[par]") {
  const int P = W().size();
  for (std::int64_t n : {0, 1, 17}) {
    std::vector<std::int64_t> items(static_cast<std::size_t>(n));
    std::iota(items.begin(), items.end(), 0);
    std::map<std::int64_t, std::string> got;
    int body_runs = 0;
    for (auto&& [i, s] : ember::par::map_unordered(
             [](std::int64_t x) { return std::to_string(x * x) + "/" + std::to_string(ember::par::rank()); }, items)) {
      ++body_runs;
      got[i] = s;
    }
    bool ok = true;
    if (W().rank() == 0) {
      ok = std::int64_t(got.size()) == n && body_runs == n;
      for (const auto& [i, s] : got) {
        const auto slash = s.find('/');
        const int by = std::stoi(s.substr(slash + 1));
        ok = ok && s.substr(0, slash) == std::to_string(i * i) && (P == 1 || by != 0);
      }
    } else {
      ok = body_runs == 0;  // workers yield nothing
    }
    REQUIRE(test::all_ranks(ok));
  }
}

TEST_CASE("par: map_unordered results may be user structs", "[par]") {
  std::vector<int> items{3, 1, 4, 1, 5, 9, 2, 6};
  std::map<std::int64_t, record> got;
  for (auto&& r : ember::par::map_unordered([](int x) { return make_record(x); }, items)) got[r.index] = r.value;
  bool ok = true;
  if (W().rank() == 0) {
    ok = got.size() == items.size();
    for (const auto& [i, r] : got) ok = ok && r == make_record(items[std::size_t(i)]);
  }
  REQUIRE(test::all_ranks(ok));
}

TEST_CASE("par: an exception in map_unordered reaches every rank as an ember::error naming the item", "[par]") {
  std::vector<std::int64_t> items(20);
  std::iota(items.begin(), items.end(), 0);
  for (std::int64_t bad : {11, 19}) {  // 19, the last, fails late (see the managed loop's test)
    bool ok = false;
    try {
      for (auto&& r : ember::par::map_unordered(
               [bad](std::int64_t x) {
                 if (x == bad) {
                   if (bad == 19) std::this_thread::sleep_for(std::chrono::milliseconds(300));
                   throw std::invalid_argument("bad item " + std::to_string(x));
                 }
                 return x;
               },
               items))
        (void)r;
    } catch (const ember::error& e) {
      const std::string m = e.what();
      INFO(m);
      ok = m.find("item " + std::to_string(bad)) != std::string::npos;
      // the root also learns what the worker's exception said
      if (W().rank() == 0) ok = ok && m.find(": bad item " + std::to_string(bad)) != std::string::npos;
      CHECK(ok);
    }
    REQUIRE(test::all_ranks(ok));
  }
  std::vector<std::int64_t> mine;
  for (auto x : ember::par::split_managed(items)) mine.push_back(x);
  REQUIRE(each_once(mine, 20));
}

TEST_CASE("par: the root leaving map_unordered early stops the workers cleanly", "[par]") {
  std::vector<std::int64_t> items(40);
  std::iota(items.begin(), items.end(), 0);
  int seen = 0;
  for (auto&& r : ember::par::map_unordered([](std::int64_t x) { return x; }, items)) {
    (void)r;
    if (++seen == 3) break;
  }
  REQUIRE(test::all_ranks(W().rank() != 0 || seen == std::min<int>(3, 40)));
  const auto all = ember::par::allgather(W().rank());
  REQUIRE(test::all_ranks(int(all.size()) == W().size()));
}

TEST_CASE("par: an exception in the root's map_unordered loop body stops the workers", "[par]") {
  std::vector<std::int64_t> items(30);
  std::iota(items.begin(), items.end(), 0);
  bool ok = false;
  try {
    for (auto&& r : ember::par::map_unordered([](std::int64_t x) { return x; }, items)) {
      (void)r;
      throw std::logic_error("bookkeeping failed");  // the root's body (workers never run it)
    }
    ok = false;  // every rank must have thrown
  } catch (const std::logic_error& e) {
    ok = W().rank() == 0 && std::string(e.what()) == "bookkeeping failed";
  } catch (const ember::error& e) {
    const std::string m = e.what();
    INFO(m);
    ok = W().rank() != 0 && m.find("the root (rank 0) left the loop") != std::string::npos;
    CHECK(ok);
  }
  REQUIRE(test::all_ranks(ok));
  std::vector<std::int64_t> mine;
  for (auto x : ember::par::split_managed(items)) mine.push_back(x);
  REQUIRE(each_once(mine, 30));
}

TEST_CASE("par: gather, bcast and allgather carry serializable values", "[par]") {
  const int P = W().size(), me = W().rank();
  SECTION("numbers, strings, maps, structs") {
    const auto g = ember::par::gather(make_record(me));
    bool ok = true;
    if (me == 0) {
      ok = int(g.size()) == P;
      for (int r = 0; r < P && ok; ++r) ok = g[std::size_t(r)] == make_record(r);
    } else {
      ok = g.empty();
    }
    REQUIRE(test::all_ranks(ok));

    std::map<std::string, std::vector<int>> cfg;
    if (me == P - 1) cfg = {{"a", {1, 2, 3}}, {"bb", {}}, {"ccc", {-7}}};
    cfg = ember::par::bcast(cfg, P - 1);
    REQUIRE(test::all_ranks(cfg.size() == 3 && cfg["a"] == std::vector<int>{1, 2, 3} && cfg["ccc"][0] == -7));

    const auto names = ember::par::allgather(std::string(std::size_t(me), 'x'));
    ok = int(names.size()) == P;
    for (int r = 0; r < P && ok; ++r) ok = names[std::size_t(r)] == std::string(std::size_t(r), 'x');
    REQUIRE(test::all_ranks(ok));

    const double pi = ember::par::bcast(me == 0 ? 3.14159 : 0.0);
    REQUIRE(test::all_ranks(pi == 3.14159));
  }
  SECTION("values larger than the message limit") {
    chunk_limit limit(1000);
    const std::string big(std::size_t(5000 + 333 * me), char('a' + me));
    const auto g = ember::par::gather(big, P - 1);  // above the limit: point-to-point, chunked
    bool ok = true;
    if (me == P - 1)
      for (int r = 0; r < P; ++r) ok = ok && g[std::size_t(r)] == std::string(std::size_t(5000 + 333 * r), char('a' + r));
    REQUIRE(test::all_ranks(ok));
    const auto b = ember::par::bcast(me == 0 ? pattern(3001) : std::vector<double>{});
    REQUIRE(test::all_ranks(test::bit_equal(b, pattern(3001))));
    const auto a = ember::par::allgather(big);
    ok = int(a.size()) == P;
    for (int r = 0; r < P && ok; ++r) ok = a[std::size_t(r)] == std::string(std::size_t(5000 + 333 * r), char('a' + r));
    REQUIRE(test::all_ranks(ok));
  }
}

// ---------------------------------------------------------------------------
TEST_CASE("broadcast: buffers above the chunk limit arrive bit-identical", "[broadcast]") {
  const int P = W().size(), me = W().rank();
  chunk_limit limit(1000);
  const int root = P - 1;
  const auto want = pattern(10007);  // 80056 bytes: 81 chunks

  std::vector<double> v;
  if (me == root) v = want;
  const auto before = W().sent();
  ember::broadcast(v, root);
  const auto sent = W().sent() - before;
  REQUIRE(test::all_ranks(test::bit_equal(v, want)));
  // counted as the root sending to every rank: the size, then 81 chunks
  const std::int64_t expect_bytes = me == root ? (8 + 80056) * (P - 1) : 0;
  REQUIRE(test::all_ranks(sent.bytes == expect_bytes));

  std::vector<double> s(want.size(), me == root ? 0.0 : -1.0);
  if (me == root) s = want;
  ember::broadcast(std::span<double>(s), root);
  REQUIRE(test::all_ranks(test::bit_equal(s, want)));

  std::vector<std::int32_t> raw(777, me);
  ember::broadcast(raw.data(), std::int64_t(raw.size()), 0);
  REQUIRE(test::all_ranks(std::all_of(raw.begin(), raw.end(), [](std::int32_t x) { return x == 0; })));

  struct triple {
    char c[3];
  };
  std::vector<triple> t(2000, triple{{char(me), char(me + 1), char(me + 2)}});
  ember::broadcast(t, root);
  REQUIRE(test::all_ranks(std::all_of(t.begin(), t.end(), [&](const triple& x) {
    return x.c[0] == char(root) && x.c[1] == char(root + 1) && x.c[2] == char(root + 2);
  })));
}

TEST_CASE("broadcast: Eigen matrices and tensors are resized on the other ranks", "[broadcast]") {
  const int me = W().rank();
  chunk_limit limit(1000);
  Eigen::MatrixXd m;
  Eigen::MatrixXd ref(37, 29);
  for (int j = 0; j < 29; ++j)
    for (int i = 0; i < 37; ++i) ref(i, j) = std::sin(i * 0.3 + j);
  if (me == 0) m = ref;
  ember::broadcast(m);
  REQUIRE(test::all_ranks(m.rows() == 37 && m.cols() == 29 && m == ref));

  Eigen::Tensor<float, 3, Eigen::RowMajor> t;
  if (me == 0) {
    t.resize(5, 6, 7);
    for (int i = 0; i < t.size(); ++i) t.data()[i] = float(i) * 0.25f;
  }
  ember::broadcast(t);
  bool ok = t.dimension(0) == 5 && t.dimension(1) == 6 && t.dimension(2) == 7;
  for (int i = 0; ok && i < t.size(); ++i) ok = t.data()[i] == float(i) * 0.25f;
  REQUIRE(test::all_ranks(ok));

  Eigen::Matrix3d f = Eigen::Matrix3d::Constant(me);
  ember::broadcast(f);
  REQUIRE(test::all_ranks(f == Eigen::Matrix3d::Constant(0)));
}

TEST_CASE("broadcast: a fixed-size buffer that differs from the root's raises on every rank", "[broadcast]") {
  const int P = W().size(), me = W().rank();
  if (P == 1) {
    SUCCEED("one rank: nothing to differ from");
    return;
  }
  std::vector<double> s(me == P - 1 ? 9 : 10, 1.0);
  bool ok = false;
  try {
    ember::broadcast(std::span<double>(s), 0);
  } catch (const ember::shape_error& e) {
    const std::string m = e.what();
    INFO(m);
    ok = m.find("rank " + std::to_string(P - 1) + " has 9") != std::string::npos;
  }
  REQUIRE(test::all_ranks(ok));
}

TEST_CASE("broadcast: dndarrays and arrays built from the root's data", "[broadcast]") {
  const int P = W().size(), me = W().rank();
  chunk_limit limit(1000);
  const std::int64_t R = 13, C = 11;
  std::vector<double> global(std::size_t(R * C));
  for (std::size_t i = 0; i < global.size(); ++i) global[i] = std::cos(double(i)) * 1e3;

  SECTION("a replicated array takes the root's values, in place") {
    // a "replicated" array whose copies differ: every rank writes its own values
    // (a factory with rank-dependent arguments is refused since issue 22)
    auto a = ember::zeros<double>({R, C});
    std::fill(a.ldata(), a.ldata() + a.lnumel(), double(me));
    auto alias = a;
    ember::broadcast(a, P - 1);
    bool ok = true;
    for (std::int64_t i = 0; i < a.lnumel(); ++i) ok = ok && alias.ldata()[i] == double(P - 1);
    REQUIRE(test::all_ranks(ok));
  }
  SECTION("a split array has no root's copy") {
    auto a = ember::zeros<double>({R, C}, {.split = 0});
    REQUIRE_THROWS_AS(ember::broadcast(a, 0), ember::value_error);
  }
  SECTION("array(data, {.split = none, .root}) when only the root has the data") {
    std::vector<double> mine;
    if (me == P - 1) mine = global;
    auto a = ember::array(mine, {R, C}, {.split = ember::none, .root = P - 1});
    REQUIRE(test::all_ranks(a.shape() == std::array<std::int64_t, 2>{R, C} && !a.split()));
    std::vector<double> local(a.ldata(), a.ldata() + a.lnumel());
    REQUIRE(test::all_ranks(test::bit_equal(local, global)));
  }
  SECTION("array(data, {.split = 0, .root}) scatters slices") {
    std::vector<double> mine;
    if (me == 0) mine = global;
    const auto before = W().sent();
    auto a = ember::array(mine, {R, C}, {.split = 1, .root = 0});
    const auto sent = W().sent() - before;
    REQUIRE(test::all_ranks(a.split() == 1 && a.is_balanced()));
    REQUIRE(test::all_ranks(test::bit_equal(test::gathered(a), global)));
    // non-roots send only the small metadata: no array data
    REQUIRE(test::all_ranks(me == 0 || sent.bytes < 64));
  }
  SECTION("1-D from a vector only the root fills") {
    std::vector<std::int64_t> v;
    if (me == 0) v = {5, 4, 3, 2, 1};
    auto a = ember::array(v, {.split = ember::none, .root = 0});
    REQUIRE(test::all_ranks(a.numel() == 5 && a.ldata()[0] == 5 && a.ldata()[4] == 1));
  }
  SECTION("the root's data not filling its shape raises on every rank") {
    std::vector<double> mine(me == 0 ? 10 : 0, 1.0);
    REQUIRE_THROWS_AS(ember::array(mine, {R, C}, {.root = 0}), ember::shape_error);
  }
}
