// ember::io: .npy, CSV and HDF5 round trips at every dtype and split (bit-exact
// against values computed from the global index on every rank), NumPy interop
// (files written and checked by python3-numpy when it is installed), corrupt and
// mismatched files raising on every rank, fault injection in the save protocol,
// CSV lines straddling every rank boundary. Run at 1-4 ranks; every
// rank-dependent truth goes through test::all_ranks.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "common.hpp"

namespace fs = std::filesystem;

namespace {

const ember::communicator& W() { return ember::world(); }

// A temporary directory agreed by every rank (rank 0 creates it and broadcasts
// its name), removed at exit.
struct temp_dir {
  std::string path;
  int rank = W().rank();  // kept: the destructor runs after MPI_Finalize
  temp_dir() {
    if (rank == 0) {
      const char* base = std::getenv("TMPDIR");
      std::string t = std::string(base && *base ? base : "/tmp") + "/ember-io-XXXXXX";
      path = mkdtemp(t.data()) ? t : std::string();
    }
    std::int64_t n = std::int64_t(path.size());
    W().bcast(&n, 1, 0);
    path.resize(std::size_t(n));
    W().bcast(path.data(), n, 0);
    if (path.empty()) throw std::runtime_error("test_io: cannot create a temporary directory");
  }
  ~temp_dir() {
    if (rank == 0) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};
const std::string& tmp() {
  static temp_dir d;
  return d.path;
}
std::string file(const std::string& name) { return tmp() + "/" + name; }

// The value at global linear index i, per dtype, with nontrivial bits.
template <class T>
T value(std::int64_t i) {
  if constexpr (std::is_same_v<T, bool>) return (i * 7) % 3 == 0;
  else if constexpr (std::is_same_v<T, std::int32_t>) return std::int32_t(i * 2654435761u) ^ 0x5a5a5a5a;
  else if constexpr (std::is_same_v<T, std::int64_t>) return std::int64_t(i) * 1234567890123LL - 77;
  else if constexpr (std::is_integral_v<T>) return T(std::uint64_t(i) * 0x9e3779b97f4a7c15ull >> 7);  // every bit used
  else if constexpr (ember::is_complex_v<T>)
    return T(typename T::value_type(std::sin(double(i) * 0.7) * 1e3 / 7.0), typename T::value_type(std::cos(double(i) * 1.3) / 3.0));
  else return T(std::sin(double(i) * 0.7) * 1e3 / 7.0);
}

template <class T, std::size_t N>
ember::dndarray<T, int(N)> make(const std::array<std::int64_t, N>& shape, ember::split_axis split) {
  auto a = ember::empty<T>(shape, {.split = split});
  ember::detail::fill_by_index(a, [](std::int64_t i) { return value<T>(i); });
  return a;
}

// True on every rank iff a's gathered values are bit-identical to value<T>(i).
template <class T, int N>
bool holds_values(const ember::dndarray<T, N>& a) {
  auto g = test::gathered(a);
  std::vector<test::host_t<T>> want(std::size_t(a.numel()));
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = value<T>(std::int64_t(i));
  return test::all_ranks(test::bit_equal(g, want));
}

template <class T, int N>
bool balanced_as(const ember::dndarray<T, N>& a, ember::split_axis split) {
  return a.split() == split && a.is_balanced();
}

// Runs f, which must throw ember::error on this rank with a message containing
// every one of `parts`. The result is agreed over the ranks.
bool throws_everywhere(const std::function<void()>& f, const std::vector<std::string>& parts) {
  bool ok = false;
  std::string msg;
  try {
    f();
    msg = "(no exception)";
  } catch (const ember::error& e) {
    msg = e.what();
    ok = true;
    for (const auto& p : parts) ok = ok && msg.find(p) != std::string::npos;
  } catch (const std::exception& e) {
    msg = std::string("non-ember exception: ") + e.what();
  }
  if (!ok) UNSCOPED_INFO("rank " << W().rank() << " got: " << msg);
  return test::all_ranks(ok);
}

void write_bytes(const std::string& path, const std::string& bytes) {
  if (W().rank() == 0) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
  }
  W().barrier();
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Rank 0 runs a shell command; every rank gets its success.
bool run_on_root(const std::string& cmd) {
  int ok = 0;
  if (W().rank() == 0) ok = std::system(cmd.c_str()) == 0;
  W().bcast(&ok, 1, 0);
  return ok != 0;
}

// A python3 that has NumPy: the first python3 on PATH may be another
// interpreter (pyenv, a venv) than Debian's, which python3-numpy serves.
const std::string& python() {
  static const std::string py = run_on_root("python3 -c 'import numpy' >/dev/null 2>&1") ? "python3"
                                : run_on_root("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") ? "/usr/bin/python3"
                                                                                                   : "";
  return py;
}
bool have_numpy() { return !python().empty(); }

// No temporary file of the save protocol is left in the directory.
bool no_temp_files() {
  int n = 0;
  if (W().rank() == 0)
    for (const auto& e : fs::directory_iterator(tmp()))
      if (e.path().filename().string().find(".ember-tmp-") != std::string::npos) ++n;
  W().bcast(&n, 1, 0);
  return n == 0;
}

struct chunk_limit {
  std::int64_t saved;
  explicit chunk_limit(std::int64_t bytes) : saved(ember::config().max_message_bytes) {
    ember::config().max_message_bytes = bytes;
  }
  ~chunk_limit() { ember::config().max_message_bytes = saved; }
};

std::vector<ember::split_axis> splits(int n) {
  std::vector<ember::split_axis> s{ember::none};
  for (int k = 0; k < n; ++k) s.push_back(k);
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------
// .npy round trips

template <class T, std::size_t N>
void npy_round_trips(const std::array<std::int64_t, N>& shape, const std::string& tag) {
  for (auto s_save : splits(int(N))) {
    auto a = make<T>(shape, s_save);
    const std::string p = file("rt_" + tag + ".npy");
    ember::io::save_npy(a, p);
    for (auto s_load : splits(int(N))) {
      auto b = ember::io::load_npy<T, int(N)>(p, {.split = s_load});
      INFO("shape " << ember::detail::shape_str(shape) << " saved split " << ember::detail::axis_str(s_save)
                    << " loaded split " << ember::detail::axis_str(s_load));
      REQUIRE(b.shape() == shape);
      REQUIRE(balanced_as(b, s_load));
      REQUIRE(holds_values(b));
    }
  }
}

TEMPLATE_TEST_CASE("npy round trip: every dtype, split, uneven and empty shapes", "[io][npy]", bool, std::int8_t,
                   std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t,
                   float, double, ember::complex64, ember::complex128) {
  using T = TestType;
  npy_round_trips<T>(std::array<std::int64_t, 1>{0}, "a");
  npy_round_trips<T>(std::array<std::int64_t, 1>{1}, "b");   // empty slices at P > 1
  npy_round_trips<T>(std::array<std::int64_t, 1>{11}, "c");
  npy_round_trips<T>(std::array<std::int64_t, 2>{7, 3}, "d");
  npy_round_trips<T>(std::array<std::int64_t, 2>{2, 9}, "e");
  npy_round_trips<T>(std::array<std::int64_t, 3>{5, 3, 2}, "f");
  npy_round_trips<T>(std::array<std::int64_t, 3>{3, 0, 4}, "g");
  npy_round_trips<T>(std::array<std::int64_t, 4>{2, 3, 5, 1}, "h");
  REQUIRE(no_temp_files());
}

TEST_CASE("npy: the file is exactly NumPy's layout, independent of the rank count", "[io][npy]") {
  auto a = make<double>(std::array<std::int64_t, 2>{5, 3}, 1);
  const std::string p = file("layout.npy");
  ember::io::save_npy(a, p);
  bool ok = true;
  if (W().rank() == 0) {
    const std::string b = read_bytes(p);
    const std::string h = ember::io::make_npy_header(5, {5, 3});
    ok = b.size() == h.size() + 15 * 8 && b.compare(0, h.size(), h) == 0 && h.size() % 64 == 0 &&
         h.find("{'descr': '<f8', 'fortran_order': False, 'shape': (5, 3), }") != std::string::npos;
    for (int i = 0; ok && i < 15; ++i) {
      double v;
      const double want = value<double>(i);
      std::memcpy(&v, b.data() + h.size() + 8 * i, 8);
      ok = std::memcmp(&v, &want, 8) == 0;
    }
  }
  REQUIRE(test::all_ranks(run_on_root("true") && ok));
  auto h = ember::io::inspect_npy(p);
  REQUIRE(h.shape == ember::index_vec{5, 3});
  REQUIRE(h.dtype_code() == 5);
}

TEST_CASE("npy: many I/O rounds (message limit lowered) with strided views", "[io][npy]") {
  chunk_limit lim(40);  // rounds of 40 bytes: every rank takes part in every round
  auto a = make<double>(std::array<std::int64_t, 3>{6, 7, 5}, 1);
  const std::string p = file("rounds.npy");
  ember::io::save_npy(a, p);
  for (auto s : splits(3)) {
    auto b = ember::io::load_npy<double, 3>(p, {.split = s});
    REQUIRE(holds_values(b));
  }
}

TEST_CASE("npy: hand-made headers: big-endian, Fortran order, versions 2.0 and 3.0", "[io][npy]") {
  // Written here byte by byte (independently of make_npy_header), so the test does
  // not need NumPy; the NumPy-written files are checked in the next test.
  const std::int64_t n0 = 4, n1 = 3, n2 = 2;
  auto header = [](int major, const std::string& dict) {
    std::string d = dict;
    const std::size_t pre = major == 1 ? 10 : 12;
    while ((pre + d.size() + 1) % 64) d += ' ';
    d += '\n';
    std::string h("\x93NUMPY", 6);
    h += char(major);
    h += char(0);
    const std::uint32_t len = std::uint32_t(d.size());
    for (std::size_t k = 0; k < pre - 8; ++k) h += char((len >> (8 * k)) & 0xff);
    return h + d;
  };
  // Values value<double>(c-order index), stored big-endian / Fortran order.
  std::string be, fo;
  for (std::int64_t i = 0; i < n0 * n1 * n2; ++i) {
    const double v = value<double>(i);
    char b[8];
    std::memcpy(b, &v, 8);
    std::reverse(b, b + 8);
    be.append(b, 8);
  }
  for (std::int64_t k = 0; k < n2; ++k)
    for (std::int64_t j = 0; j < n1; ++j)
      for (std::int64_t i = 0; i < n0; ++i) {
        const double v = value<double>((i * n1 + j) * n2 + k);
        fo.append(reinterpret_cast<const char*>(&v), 8);
      }
  const std::string shape = "'shape': (4, 3, 2)";
  write_bytes(file("be.npy"), header(1, "{'descr': '>f8', 'fortran_order': False, " + shape + ", }") + be);
  write_bytes(file("fo.npy"), header(2, "{\"fortran_order\": True, " + shape + ", \"descr\": \"<f8\"}") + fo);
  write_bytes(file("v3.npy"), header(3, "{'descr': '>f8', 'fortran_order': False, 'shape': (4L, 3L, 2L,)}") + be);
  for (const char* f : {"be.npy", "fo.npy", "v3.npy"})
    for (auto s : splits(3)) {
      INFO(f << " split " << ember::detail::axis_str(s));
      auto a = ember::io::load_npy<double, 3>(file(f), {.split = s});
      REQUIRE(a.shape() == (std::array<std::int64_t, 3>{4, 3, 2}));
      REQUIRE(holds_values(a));
    }
  // Big-endian int32 and bool bytes other than 0/1 (NumPy reads them as True).
  std::string be4, b1;
  for (int i = 0; i < 5; ++i) {
    const std::int32_t v = value<std::int32_t>(i);
    char b[4];
    std::memcpy(b, &v, 4);
    std::reverse(b, b + 4);
    be4.append(b, 4);
    b1 += char(value<bool>(i) ? 2 + i : 0);
  }
  write_bytes(file("be4.npy"), header(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (5,), }") + be4);
  write_bytes(file("b1.npy"), header(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }") + b1);
  for (auto s : splits(1)) {
    REQUIRE(holds_values(ember::io::load_npy<std::int32_t, 1>(file("be4.npy"), {.split = s})));
    REQUIRE(holds_values(ember::io::load_npy<bool, 1>(file("b1.npy"), {.split = s})));
  }
}

TEST_CASE("npy: corrupt, truncated and mismatched files raise on every rank", "[io][npy][errors]") {
  auto a = make<double>(std::array<std::int64_t, 2>{6, 4}, 0);
  const std::string good = file("good.npy");
  ember::io::save_npy(a, good);
  std::string bytes;
  if (W().rank() == 0) bytes = read_bytes(good);
  std::int64_t n = std::int64_t(bytes.size());
  W().bcast(&n, 1, 0);
  bytes.resize(std::size_t(n));
  W().bcast(bytes.data(), n, 0);
  const std::size_t hsize = ember::io::make_npy_header(5, {6, 4}).size();

  auto load2 = [](const std::string& p) { return [p] { ember::io::load_npy<double, 2>(p, {.split = 0}); }; };
  // wrong dtype, wrong ndim
  REQUIRE(throws_everywhere([&] { ember::io::load_npy<float, 2>(good, {.split = 0}); }, {good, "float64", "float32"}));
  REQUIRE(throws_everywhere([&] { ember::io::load_npy<std::int64_t, 2>(good); }, {good, "float64", "int64"}));
  REQUIRE(throws_everywhere([&] { ember::io::load_npy<double, 3>(good, {.split = 1}); }, {good, "(6, 4)", "3-dimensional"}));
  REQUIRE(throws_everywhere([&] { ember::io::load_npy<double, 2>(good, {.split = 2}); }, {"axis"}));
  // truncated data
  const std::string trunc = file("trunc.npy");
  write_bytes(trunc, bytes.substr(0, bytes.size() - 9));
  REQUIRE(throws_everywhere(load2(trunc), {trunc, "truncated", "(6, 4)"}));
  // a header that lies about the shape (more data than there is)
  std::string lie = bytes;
  lie.replace(lie.find("(6, 4)"), 6, "(9, 4)");
  write_bytes(file("lie.npy"), lie);
  REQUIRE(throws_everywhere(load2(file("lie.npy")), {file("lie.npy"), "truncated", "(9, 4)"}));
  std::string huge = bytes;
  huge.replace(huge.find("(6, 4)"), 6, "(999999999999999999, 99)");
  write_bytes(file("huge.npy"), huge.substr(0, hsize));
  REQUIRE(throws_everywhere(load2(file("huge.npy")), {file("huge.npy")}));
  // truncated inside the header, empty file, bad magic, bad version, garbage dict
  write_bytes(file("hdr.npy"), bytes.substr(0, 30));
  REQUIRE(throws_everywhere(load2(file("hdr.npy")), {file("hdr.npy")}));
  write_bytes(file("empty.npy"), "");
  REQUIRE(throws_everywhere(load2(file("empty.npy")), {file("empty.npy"), "shorter"}));
  std::string magic = bytes;
  magic[1] = 'X';
  write_bytes(file("magic.npy"), magic);
  REQUIRE(throws_everywhere(load2(file("magic.npy")), {file("magic.npy"), "magic"}));
  std::string ver = bytes;
  ver[6] = 4;
  write_bytes(file("ver.npy"), ver);
  REQUIRE(throws_everywhere(load2(file("ver.npy")), {file("ver.npy"), "version 4.0"}));
  std::string garbage = bytes;
  garbage.replace(garbage.find("'fortran_order'"), 15, "'fortran_xrder'");
  write_bytes(file("garbage.npy"), garbage);
  REQUIRE(throws_everywhere(load2(file("garbage.npy")), {file("garbage.npy"), "fortran_xrder"}));
  std::string u2 = bytes;
  u2.replace(u2.find("'<f8'"), 5, "'<u2'");
  write_bytes(file("u2.npy"), u2);
  REQUIRE(throws_everywhere(load2(file("u2.npy")), {file("u2.npy"), "<u2"}));
  REQUIRE(throws_everywhere(load2(file("missing.npy")), {file("missing.npy"), "cannot open"}));
  // saving into a directory that does not exist
  REQUIRE(throws_everywhere([&] { ember::io::save_npy(a, file("no/such/dir/x.npy")); }, {"no/such/dir", "does not exist"}));
  REQUIRE(no_temp_files());
}

// ---------------------------------------------------------------------------
// fault injection

TEST_CASE("save protocol: a rank failing mid-save leaves the previous file intact, every rank reports it",
          "[io][fault]") {
  const int bad = W().size() - 1;  // the last rank fails (rank 0 renames: the failure must reach it)
  auto a = make<double>(std::array<std::int64_t, 2>{9, 5}, 0);
  auto other = ember::zeros<double>({9, 5}, {.split = 1});
  const std::string p = file("fault.npy"), c = file("fault.csv");
  ember::io::save_npy(a, p);
  ember::io::save_csv(a, c);
  std::string before;
  if (W().rank() == 0) before = read_bytes(p);
  for (const char* stage : {"save:before_data", "save:after_data"}) {
    INFO(stage);
    ember::io::detail::inject_fault(stage, bad);
    const bool npy = throws_everywhere([&] { ember::io::save_npy(other, p); },
                                       {p, "injected fault", "rank " + std::to_string(bad), "unchanged"});
    const bool csv = throws_everywhere([&] { ember::io::save_csv(other, c); },
                                       {c, "injected fault", "rank " + std::to_string(bad), "unchanged"});
    bool h5 = true;
    if (ember::io::hdf5_available()) {
      const std::string h = file("fault.h5");
      ember::io::detail::inject_fault("", -1);
      ember::io::save_hdf5(a, h, "x");
      ember::io::detail::inject_fault(stage, bad);
      h5 = throws_everywhere([&] { ember::io::save_hdf5(other, h, "x"); }, {h, "injected fault", "unchanged"});
      ember::io::detail::inject_fault("", -1);
      h5 = h5 && holds_values(ember::io::load_hdf5<double, 2>(h, "x", {.split = 0}));
    }
    // A save to a new name leaves no file at all.
    ember::io::detail::inject_fault(stage, bad);
    const bool fresh = throws_everywhere([&] { ember::io::save_npy(other, file("never.npy")); }, {"no file was written"});
    ember::io::detail::inject_fault("", -1);
    REQUIRE(npy);
    REQUIRE(csv);
    REQUIRE(h5);
    REQUIRE(fresh);
    REQUIRE(test::all_ranks(W().rank() != 0 || (read_bytes(p) == before && !fs::exists(file("never.npy")))));
    REQUIRE(holds_values(ember::io::load_npy<double, 2>(p, {.split = 1})));
    REQUIRE(holds_values(ember::io::load_csv<double>(c)));
    REQUIRE(no_temp_files());
  }
  // Without the fault the same saves go through.
  ember::io::save_npy(other, p);
  auto z = ember::io::load_npy<double, 2>(p, {.split = 0});
  REQUIRE(ember::sum(z * z) == 0.0);
}

// ---------------------------------------------------------------------------
// NumPy interop

TEST_CASE("numpy writes, ember reads; ember writes, numpy reads", "[io][npy][numpy]") {
  if (!have_numpy()) {
    WARN("python3-numpy not installed: NumPy interop not checked here");
    return;
  }
  const std::string d = tmp();
  // Every dtype, both byte orders, both memory orders, all three format versions.
  const std::string py = R"PY(
import numpy as np, sys
d = sys.argv[1]
base = np.arange(60).reshape(3, 4, 5)
arrs = {'f8': base * 0.1, 'f4': (base * 0.1).astype(np.float32), 'i4': (base - 30).astype(np.int32),
        'i8': base.astype(np.int64) * 10**12, 'b1': base % 3 == 0,
        'c16': base * 0.1 + 1j * ((base - 7) * 0.25), 'c8': (base * 0.1 + 1j * ((base - 7) * 0.25)).astype(np.complex64),
        'i1': (base - 30).astype(np.int8), 'u1': (base * 4).astype(np.uint8), 'u8': base.astype(np.uint64) * 2**58}
for k, a in arrs.items():
    np.save(f'{d}/np_{k}_le.npy', a)
    np.save(f'{d}/np_{k}_be.npy', a.astype(a.dtype.newbyteorder('>')))
    np.save(f'{d}/np_{k}_fo.npy', np.asfortranarray(a))
    for v in [(2, 0), (3, 0)]:
        with open(f'{d}/np_{k}_v{v[0]}.npy', 'wb') as f:
            np.lib.format.write_array(f, a, version=v)
)PY";
  if (W().rank() == 0) {
    std::ofstream(d + "/w.py") << py;
  }
  REQUIRE(run_on_root(python() + " " + d + "/w.py " + d));
  auto check = [&](auto tag, auto f, const std::string& key) {
    using T = decltype(tag);
    for (const char* var : {"le", "be", "fo", "v2", "v3"})
      for (auto s : splits(3)) {
        const std::string p = d + "/np_" + key + "_" + var + ".npy";
        INFO(p << " split " << ember::detail::axis_str(s));
        auto a = ember::io::load_npy<T, 3>(p, {.split = s});
        auto g = test::gathered(a);
        bool ok = g.size() == 60;
        for (std::size_t i = 0; ok && i < g.size(); ++i) {
          const T want = f(std::int64_t(i));
          ok = std::memcmp(&g[i], &want, sizeof(T)) == 0;
        }
        REQUIRE(test::all_ranks(ok));
        // ember writes it back from this split; NumPy checks below.
        ember::io::save_npy(a, d + "/em_" + key + "_" + var + "_" + ember::detail::axis_str(s) + ".npy");
      }
  };
  check(double{}, [](std::int64_t i) { return double(i) * 0.1; }, "f8");
  check(float{}, [](std::int64_t i) { return float(double(i) * 0.1); }, "f4");
  check(std::int32_t{}, [](std::int64_t i) { return std::int32_t(i - 30); }, "i4");
  check(std::int64_t{}, [](std::int64_t i) { return i * 1000000000000LL; }, "i8");
  check(bool{}, [](std::int64_t i) { return i % 3 == 0; }, "b1");
  check(ember::complex128{}, [](std::int64_t i) { return ember::complex128(double(i) * 0.1, double(i - 7) * 0.25); }, "c16");
  check(ember::complex64{}, [](std::int64_t i) { return ember::complex64(float(double(i) * 0.1), float(double(i - 7) * 0.25)); },
        "c8");
  check(std::int8_t{}, [](std::int64_t i) { return std::int8_t(i - 30); }, "i1");
  check(std::uint8_t{}, [](std::int64_t i) { return std::uint8_t(i * 4); }, "u1");
  check(std::uint64_t{}, [](std::int64_t i) { return std::uint64_t(i) << 58; }, "u8");
  const std::string verify = R"PY(
import numpy as np, sys, glob
d = sys.argv[1]
n = 0
for p in glob.glob(f'{d}/em_*.npy'):
    key = p.split('/em_')[1].split('_')[0]
    want = np.load(f'{d}/np_{key}_le.npy')
    got = np.load(p)
    assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous, p
    assert got.dtype.byteorder in '<|=', p
    assert got.tobytes() == want.tobytes(), p
    n += 1
assert n == 10 * 5 * 4, n
)PY";
  if (W().rank() == 0) std::ofstream(d + "/v.py") << verify;
  REQUIRE(run_on_root(python() + " " + d + "/v.py " + d));
}

// ---------------------------------------------------------------------------
// CSV

TEMPLATE_TEST_CASE("csv round trip: every dtype and split, bit-exact", "[io][csv]", bool, std::int8_t, std::int32_t, std::int64_t, std::uint8_t, std::uint64_t,
                   float, double) {
  using T = TestType;
  for (std::array<std::int64_t, 2> shape : {std::array<std::int64_t, 2>{0, 0}, {1, 3}, {7, 3}, {13, 1}, {2, 6}}) {
    for (auto s_save : splits(2)) {
      auto a = make<T>(shape, s_save);
      const std::string p = file("rt.csv");
      ember::io::save_csv(a, p, {.sep = ';', .header = "a;b;c"});
      for (auto s_load : splits(2)) {
        INFO("shape " << ember::detail::shape_str(shape) << " saved " << ember::detail::axis_str(s_save) << " loaded "
                      << ember::detail::axis_str(s_load));
        auto b = ember::io::load_csv<T>(p, {.split = s_load, .sep = ';', .header = true});
        if (shape[0] > 0) REQUIRE(b.shape() == shape);
        else REQUIRE(b.numel() == 0);
        REQUIRE(balanced_as(b, s_load));
        REQUIRE(holds_values(b));
      }
    }
  }
}

TEST_CASE("csv: lines straddling every rank boundary, long lines, blanks, comments, CRLF", "[io][csv]") {
  const int P = W().size();
  // Rows i = 0..n-1 with values (i, -i*3, i*i) written with padding that varies,
  // so line lengths differ; search for a padding seed where every byte-range
  // boundary falls inside a line (not right after a '\n').
  auto text_for = [](int n, int seed, bool crlf) {
    std::string t = "# a comment line\n";
    for (int i = 0; i < n; ++i) {
      t += std::string(std::size_t((i * seed) % 5), ' ') + std::to_string(i) + " ,-" + std::to_string(i * 3) + ",  +" +
           std::to_string(i * i) + (crlf ? "\r\n" : "\n");
      if (i % 4 == 3) t += "\n";  // a blank line
    }
    return t;
  };
  auto straddles = [&](const std::string& t) {
    const std::int64_t S = std::int64_t(t.size());
    for (int r = 1; r < P; ++r) {
      const std::int64_t lo = r * (S / P) + std::min<std::int64_t>(r, S % P);
      if (lo <= 0 || lo >= S || t[std::size_t(lo - 1)] == '\n') return false;
    }
    return true;
  };
  for (bool crlf : {false, true}) {
    const int n = 23;
    std::string t;
    for (int seed = 1; seed < 200; ++seed) {
      t = text_for(n, seed, crlf);
      if (straddles(t)) break;
    }
    REQUIRE(straddles(t));
    write_bytes(file("straddle.csv"), t);
    for (auto s : splits(2)) {
      auto a = ember::io::load_csv<std::int64_t>(file("straddle.csv"), {.split = s});
      REQUIRE(a.shape() == (std::array<std::int64_t, 2>{n, 3}));
      auto g = test::gathered(a);
      bool ok = true;
      for (int i = 0; i < n; ++i)
        ok = ok && g[std::size_t(3 * i)] == i && g[std::size_t(3 * i + 1)] == -3 * i && g[std::size_t(3 * i + 2)] == i * i;
      REQUIRE(test::all_ranks(ok));
    }
  }
  // One line longer than every rank's byte range (ranks owning no line at all),
  // whitespace separation, no final newline.
  std::string longline;
  for (int i = 0; i < 300; ++i) longline += std::to_string(i) + "   ";
  write_bytes(file("long.csv"), "\n" + longline + "\n" + longline);
  auto b = ember::io::load_csv<float>(file("long.csv"), {.split = 0, .sep = ' '});
  REQUIRE(b.shape() == (std::array<std::int64_t, 2>{2, 300}));
  auto g = test::gathered(b);
  bool ok = true;
  for (int i = 0; i < 600; ++i) ok = ok && g[std::size_t(i)] == float(i % 300);
  REQUIRE(test::all_ranks(ok));
}

TEST_CASE("csv: bad fields and ragged rows raise on every rank with the global line number", "[io][csv][errors]") {
  std::string t;
  for (int i = 1; i <= 40; ++i) t += std::to_string(i) + "," + std::to_string(i) + ".5\n";
  std::string bad = t;
  bad.replace(bad.find("37,37.5"), 7, "37,3x.5");  // line 37: near the end, on the last rank
  write_bytes(file("bad.csv"), bad);
  REQUIRE(throws_everywhere([&] { ember::io::load_csv<double>(file("bad.csv")); },
                            {file("bad.csv"), "line 37", "column 2", "3x.5"}));
  REQUIRE(throws_everywhere([&] { ember::io::load_csv<std::int32_t>(file("bad.csv")); }, {"line 1", "1.5", "int32"}));
  std::string ragged = t;
  ragged.replace(ragged.find("\n30,"), 4, "\n30,1,");
  write_bytes(file("ragged.csv"), ragged);
  REQUIRE(throws_everywhere([&] { ember::io::load_csv<double>(file("ragged.csv")); }, {file("ragged.csv"), "fields"}));
  REQUIRE(throws_everywhere([&] { ember::io::load_csv<double>(file("nope.csv")); }, {file("nope.csv"), "cannot open"}));
  REQUIRE(throws_everywhere([&] { ember::io::load_csv<double>(file("bad.csv"), {.split = 2}); }, {"axis"}));
  // the same file without the bad line loads
  write_bytes(file("ok.csv"), t);
  auto a = ember::io::load_csv<double>(file("ok.csv"), {.split = 1});
  REQUIRE(a.shape() == (std::array<std::int64_t, 2>{40, 2}));
  REQUIRE(ember::sum(a) == 820.0 + 820.0 + 20.0);
}

// ---------------------------------------------------------------------------
// HDF5

TEMPLATE_TEST_CASE("hdf5 round trip: every dtype and split; errors", "[io][hdf5]", bool, std::int8_t, std::int16_t,
                   std::int32_t, std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, float, double,
                   ember::complex64, ember::complex128) {
  using T = TestType;
  if (!ember::io::hdf5_available()) {
    REQUIRE(throws_everywhere([] { ember::io::load_hdf5<T, 1>("x.h5", "d"); }, {"without parallel HDF5"}));
    return;
  }
  const std::string p = file("rt.h5");
  for (std::array<std::int64_t, 3> shape : {std::array<std::int64_t, 3>{5, 3, 2}, {1, 4, 3}, {3, 0, 2}}) {
    for (auto s_save : splits(3)) {
      auto a = make<T>(shape, s_save);
      ember::io::save_hdf5(a, p, "/group/sub/data");
      for (auto s_load : splits(3)) {
        auto b = ember::io::load_hdf5<T, 3>(p, "/group/sub/data", {.split = s_load});
        REQUIRE(b.shape() == shape);
        REQUIRE(balanced_as(b, s_load));
        REQUIRE(holds_values(b));
      }
    }
  }
  REQUIRE(throws_everywhere([&] { ember::io::load_hdf5<T, 3>(p, "/nope"); }, {p, "/nope"}));
  REQUIRE(throws_everywhere([&] { ember::io::load_hdf5<T, 2>(p, "/group/sub/data"); }, {p, "3-dimensional"}));
  if constexpr (!std::is_same_v<T, double>)
    REQUIRE(throws_everywhere([&] { ember::io::load_hdf5<double, 3>(p, "/group/sub/data"); }, {p, "float64"}));
  write_bytes(file("not.h5"), "this is not hdf5");
  REQUIRE(throws_everywhere([&] { ember::io::load_hdf5<T, 3>(file("not.h5"), "/d"); }, {file("not.h5")}));
  REQUIRE(throws_everywhere([&] { ember::io::load_hdf5<T, 3>(file("none.h5"), "/d"); }, {file("none.h5")}));
  REQUIRE(no_temp_files());
}
