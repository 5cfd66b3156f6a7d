// Issue 22: what an adversarial user found, each case kept so it cannot come
// back. Every call below runs on every rank and must end with the same
// ember::error on every rank (type and message, tests/collective.hpp), with
// ember's communicator still usable afterwards: no hang, no silent mixing.
// Run at 2, 3 and 4 ranks (tests/run_tests.py). The cases that end the job
// (null handles, lifetime misuse, garbage in the environment, a SIGKILLed save)
// are processes of their own: tests/adversarial/run.py.
//
//  [disk]      a full file system (a 1 MiB tmpfs the runner mounts and names in
//              EMBER_TEST_SMALLFS): save_npy (sync and not, split 0 and 1),
//              save_csv, save_hdf5 fail on every rank, the previous file is
//              byte for byte intact, no temporary file is left
//  [overflow]  shapes whose element or byte count overflows int64, a target map
//              whose sum wraps, a tiny arange step: value_error naming the shape
//  [memory]    one rank out of memory (its address space limited by setrlimit)
//              in a factory, a resplit to none, copy(), load_npy: memory_error
//              naming that rank, on every rank
//  [replicated] per-rank file names (load_npy, save_npy), factory shapes, splits,
//              fill values, seeds: value_error naming the ranks (default on)
//  [leftovers] temporaries of a killed save are removed by the next save;
//              eigh and p?gesvd on NaN say so instead of "illegal value"
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "../collective.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::int64_t big = std::int64_t(1) << 32;

// The directory of the small file system, or "" (then the [disk] cases fail:
// the runner must provide it; run_tests.py counts them skipped where it cannot).
std::string small_fs() {
  const char* d = std::getenv("EMBER_TEST_SMALLFS");
  return d ? d : "";
}

std::string read_bytes(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Files whose name contains ".ember-tmp-" in `dir` (every rank sees rank 0's view
// after a barrier: one shared file system).
int temp_files(const std::string& dir) {
  W().barrier();
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".ember-tmp-") != std::string::npos) ++n;
  return n;
}

// The full-disk protocol for one save: an old file that fits, then a save that
// does not fit must fail alike everywhere, leave the old bytes, and no temporary.
template <class Save>
void full_disk_case(const std::string& name, Save&& save_big, const std::vector<std::string>& needles) {
  const std::string dir = small_fs();
  REQUIRE(!dir.empty());
  const std::string path = dir + "/" + name;
  const std::string before = me() == 0 ? read_bytes(path) : std::string();
  if (me() == 0) REQUIRE(!before.empty());
  expect_collective_throw<ember::error>(save_big, needles);
  if (me() == 0) CHECK(read_bytes(path) == before);
  CHECK(temp_files(dir) == 0);
}

// Limits this rank's address space to what it uses now plus `extra` bytes
// (std::bad_alloc beyond), for one scope.
struct address_limit {
  rlimit old{};
  bool active = false;
  explicit address_limit(bool here, std::int64_t extra) {
    if (!here) return;
    getrlimit(RLIMIT_AS, &old);
    std::ifstream f("/proc/self/statm");
    long pages = 0;
    f >> pages;
    rlimit l = old;
    l.rlim_cur = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + rlim_t(extra);
    active = setrlimit(RLIMIT_AS, &l) == 0;
  }
  ~address_limit() {
    if (active) setrlimit(RLIMIT_AS, &old);
  }
};

}  // namespace

// ===========================================================================
TEST_CASE("a full disk: no save reports success, the previous file survives", "[adversarial][disk]") {
  const std::string dir = small_fs();
  REQUIRE(!dir.empty());
  // 2 MiB of data against a 1 MiB file system (the case), split 0 and 1.
  auto rows = ember::arange<double>(0, 262144, 1, {.split = 0});
  auto cols = ember::random::rand<double>({512, 512}, {.split = 1});
  auto small = ember::arange<double>(0, 1000, 1, {.split = 0});
  ember::io::save_npy(small, dir + "/old.npy");
  full_disk_case("old.npy", [&] { ember::io::save_npy(rows, dir + "/old.npy"); }, {"old.npy", "is unchanged"});
  full_disk_case("old.npy", [&] { ember::io::save_npy(rows, dir + "/old.npy", {.sync = false}); }, {"old.npy"});
  full_disk_case("old.npy", [&] { ember::io::save_npy(cols, dir + "/old.npy"); }, {"old.npy"});
  full_disk_case("old.npy", [&] { ember::io::save_npy(ember::resplit(cols, ember::none), dir + "/old.npy"); },
                 {"old.npy"});
  // The old file still loads with its own values.
  auto back = ember::io::load_npy<double, 1>(dir + "/old.npy", {.split = 0});
  CHECK(ember::sum(back) == 999.0 * 1000.0 / 2);

}

TEST_CASE("a full disk: save_csv and save_hdf5 too", "[adversarial][disk]") {
  const std::string dir = small_fs();
  REQUIRE(!dir.empty());
  auto small = ember::random::rand<double>({10, 3}, {.split = 0});
  auto large = ember::random::rand<double>({512, 512}, {.split = 0});  // about 5 MB of text, 2 MiB binary
  ember::io::save_csv(small, dir + "/old.csv");
  full_disk_case("old.csv", [&] { ember::io::save_csv(large, dir + "/old.csv"); }, {"old.csv"});
  full_disk_case("old.csv", [&] { ember::io::save_csv(large, dir + "/old.csv", {.sync = false}); }, {"old.csv"});
  if (!ember::io::hdf5_available()) return;
  ember::io::save_hdf5(small, dir + "/old.h5", "/x");
  full_disk_case("old.h5", [&] { ember::io::save_hdf5(large, dir + "/old.h5", "/x"); }, {"old.h5"});
  auto back = ember::io::load_hdf5<double, 2>(dir + "/old.h5", "/x", {.split = 0});
  CHECK(test::gathered(back) == test::gathered(small));
}

// ===========================================================================
TEST_CASE("int64 overflow of element and byte counts is a value_error", "[adversarial][overflow]") {
  expect_collective_throw<ember::value_error>([] { (void)ember::zeros<double>({std::int64_t(1) << 61}); },
                                              {"(2305843009213693952,)", "too big"});
  expect_collective_throw<ember::value_error>([] { (void)ember::zeros<double>({big, big}, {.split = 0}); },
                                              {"(4294967296, 4294967296)", "too big"});
  expect_collective_throw<ember::value_error>([] { (void)ember::linspace(0.0, 1.0, std::int64_t(1) << 62); },
                                              {"(4611686018427387904,)", "too big"});
  expect_collective_throw<ember::value_error>([] { (void)ember::random::randn<float>({big, big, 2}, {.split = 1}); },
                                              {"(4294967296, 4294967296, 2)"});
  expect_collective_throw<ember::value_error>([] { (void)ember::arange<double>(0.0, 1e300, 1e-300); }, {"too big"});
  expect_collective_throw<ember::value_error>([] { (void)ember::eye<double>(big, big); }, {"too big"});
  // A zero extent: zero elements, as in NumPy, whatever the other extents.
  CHECK(ember::zeros<double>({0, std::int64_t(1) << 62}).numel() == 0);
  // A block that overflows in ember::array(is_split).
  std::vector<double> one(1, 1.0);
  expect_collective_throw<ember::value_error>(
      [&] {
        (void)ember::array(std::span<const double>(one), std::array<std::int64_t, 2>{me() == 0 ? big : 1, big * 4},
                           {.is_split = 0});
      },
      {"too big"});
}

TEST_CASE("a target map whose sum wraps around is refused", "[adversarial][overflow]") {
  if (P() < 3) return;  // two non-negative int64 cannot wrap to a small sum
  auto a = ember::arange<double>(0, 8, 1, {.split = 0});
  auto map = a.lshape_map();
  // (2^63 - 1) + (2^63 - 1) + 10 = 2^64 + 8: wraps to 8, the array's extent
  for (auto& row : map) row[0] = 0;
  map[0][0] = std::numeric_limits<std::int64_t>::max();
  map[1][0] = std::numeric_limits<std::int64_t>::max();
  map[2][0] = 10;
  expect_collective_throw<ember::shape_error>([&] { a.redistribute_(map); }, {"overflow"});
  CHECK(test::gathered(a) == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});
}

// ===========================================================================
TEST_CASE("one rank out of memory: memory_error naming it, on every rank", "[adversarial][memory]") {
  const int bad = P() - 1;
  const std::int64_t n = std::int64_t(P()) * (std::int64_t(64) << 20);  // 512 MiB of doubles per rank
  {
    address_limit lim(me() == bad, std::int64_t(256) << 20);
    expect_collective_throw<ember::memory_error>([&] { (void)ember::empty<double>({n}, {.split = 0}); },
                                                 {"out of memory", "rank " + std::to_string(bad), "(" + std::to_string(n) + ",)"});
    expect_collective_throw<ember::memory_error>([&] { (void)ember::zeros<double>({n}, {.split = 0}); },
                                                 {"rank " + std::to_string(bad)});
  }
  // A move whose destination does not fit on one rank: the array is unchanged.
  // 40 MiB per rank: above glibc's largest mmap threshold (32 MiB), so each
  // allocation below needs new address space (not a free chunk of the heap).
  const std::int64_t rows = std::int64_t(P()) * (std::int64_t(16) << 20);  // 128 MiB per rank
  auto a = ember::arange<double>(0, double(rows), 1, {.split = 0});
  {
    address_limit lim(me() == bad, std::int64_t(16) << 20);
    expect_collective_throw<ember::memory_error>([&] { a.resplit_(ember::none); }, {"rank " + std::to_string(bad)});
    expect_collective_throw<ember::memory_error>([&] { (void)a.copy(); }, {"rank " + std::to_string(bad)});
    expect_collective_throw<ember::memory_error>([&] { (void)ember::resplit(a, ember::none); },
                                                 {"rank " + std::to_string(bad)});
    expect_collective_throw<ember::memory_error>([&] { (void)ember::zeros_like(a); }, {"rank " + std::to_string(bad)});
  }
  CHECK(a.split() == 0);
  CHECK(ember::sum(a) == double(rows) * double(rows - 1) / 2);
  // load_npy allocates before it reads
  const fs::path shm = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
  const std::string path = (shm / ("ember-adv-oom-" + std::to_string(P()) + ".npy")).string();
  ember::io::save_npy(a, path);
  {
    address_limit lim(me() == bad, std::int64_t(16) << 20);
    expect_collective_throw<ember::memory_error>([&] { (void)ember::io::load_npy<double, 1>(path); },
                                                 {"rank " + std::to_string(bad)});
  }
  W().barrier();
  if (me() == 0) fs::remove(path);
}

// ===========================================================================
TEST_CASE("rank-dependent arguments are found by default", "[adversarial][replicated]") {
  const int bad = P() / 2;
  const std::string dir = fs::temp_directory_path().string();
  const std::string base = dir + "/ember-adv-" + std::to_string(P());
  auto a = ember::arange<double>(0, 10, 1, {.split = 0});
  ember::io::save_npy(a, base + "-0.npy");
  ember::io::save_npy(a, base + "-1.npy");
  const std::string mine = base + (me() == bad ? "-1.npy" : "-0.npy");
  expect_collective_throw<ember::value_error>([&] { (void)ember::io::load_npy<double, 1>(mine, {.split = 0}); },
                                              {"rank " + std::to_string(bad), "-1.npy", "-0.npy"});
  const std::string out = base + "-out-" + std::to_string(me() == bad) + ".npy";
  expect_collective_throw<ember::value_error>([&] { ember::io::save_npy(a, out); }, {"rank " + std::to_string(bad)});
  W().barrier();
  CHECK(!fs::exists(base + "-out-0.npy"));
  CHECK(!fs::exists(base + "-out-1.npy"));
  CHECK(temp_files(dir) == 0);
  expect_collective_throw<ember::value_error>(
      [&] { ember::io::save_csv(ember::random::rand<double>({4, 2}, {.split = 0}), out); }, {"rank " + std::to_string(bad)});
  // factories: shape, split, fill value, seed
  expect_collective_throw<ember::value_error>([&] { (void)ember::zeros<double>({me() == bad ? 11 : 10}, {.split = 0}); },
                                              {"rank " + std::to_string(bad), "(11,)", "(10,)"});
  expect_collective_throw<ember::value_error>(
      [&] { (void)ember::ones<float>({6, 4}, {.split = me() == bad ? ember::split_axis{1} : ember::split_axis{0}}); },
      {"rank " + std::to_string(bad), "split 1", "split 0"});
  expect_collective_throw<ember::value_error>([&] { (void)ember::full<double>({5}, me() == bad ? 2.0 : 1.0); },
                                              {"rank " + std::to_string(bad), "fill value"});
  ember::random::seed(me() == bad ? 7 : 8);
  expect_collective_throw<ember::value_error>([&] { (void)ember::random::randn<double>({100}, {.split = 0}); },
                                              {"rank " + std::to_string(bad), "seed 7", "seed 8"});
  ember::random::seed(1);
  // an invalid split on one rank only: still the divergence, not a lone axis_error
  expect_collective_throw<ember::value_error>([&] { (void)ember::zeros<double>({4}, {.split = me() == bad ? 3 : 0}); },
                                              {"rank " + std::to_string(bad)});
  // the same seed on every rank after a divergence: the streams are in step again
  auto r = ember::random::randn<double>({100}, {.split = 0});
  CHECK(r.numel() == 100);
  W().barrier();
  if (me() == 0)
    for (const char* s : {"-0.npy", "-1.npy"}) fs::remove(base + s);
}

// ===========================================================================
TEST_CASE("stale temporaries of a killed save are removed by the next save", "[adversarial][leftovers]") {
  const std::string dir = (fs::temp_directory_path() / ("ember-adv-stale-" + std::to_string(P()))).string();
  if (me() == 0) fs::create_directories(dir);
  W().barrier();
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  // a pid no process has: the highest free one below pid_max
  long pid_max = 32768;
  std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
  long dead = pid_max - 1;
  while (dead > 1 && !(kill(pid_t(dead), 0) != 0 && errno == ESRCH)) --dead;
  const std::string stale = dir + "/.t.npy.ember-tmp-" + std::string(host) + "-" + std::to_string(dead) + "-0-1";
  const std::string live = dir + "/.t.npy.ember-tmp-" + std::string(host) + "-" + std::to_string(getppid()) + "-0-2";
  const std::string old_format = dir + "/.t.npy.ember-tmp-12345-0-3";
  const std::string other = dir + "/.u.npy.ember-tmp-" + std::string(host) + "-" + std::to_string(dead) + "-0-4";
  if (me() == 0) {
    for (const auto& p : {stale, live, old_format, other}) std::ofstream(p) << "partial";
    fs::last_write_time(old_format, fs::file_time_type::clock::now() - std::chrono::hours(48));
  }
  W().barrier();
  ember::io::save_npy(ember::arange<double>(0, 5, 1, {.split = 0}), dir + "/t.npy");
  if (me() == 0) {
    CHECK(!fs::exists(stale));       // its process is gone
    CHECK(!fs::exists(old_format));  // untouched for two days
    CHECK(fs::exists(live));         // its process (mpirun) still runs
    CHECK(fs::exists(other));        // another target's
    CHECK(fs::exists(dir + "/t.npy"));
  }
  W().barrier();
  if (me() == 0) fs::remove_all(dir);
}

TEST_CASE("eigh and p?gesvd on NaN say so, on every rank", "[adversarial][linalg]") {
  const std::int64_t n = 3 * P() + 1;
  auto a = ember::random::rand<double>({n, n}, {.split = 0});
  const int bad = P() - 1;
  if (me() == bad) a.ldata()[0] = std::numeric_limits<double>::quiet_NaN();
  expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::eigh(a); },
                                              {"eigh", "NaN or infinity", "rank " + std::to_string(bad)});
  // square and split 0: p?gesvd, not TSQR
  expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::svd(a); },
                                              {"svd", "NaN or infinity", "rank " + std::to_string(bad)});
  if (me() == bad) a.ldata()[0] = std::numeric_limits<double>::infinity();
  expect_collective_throw<ember::value_error>([&] { (void)ember::linalg::svd(a, {.compute_uv = false}); },
                                              {"NaN or infinity"});
}
