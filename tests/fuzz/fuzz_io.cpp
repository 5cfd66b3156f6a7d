// libFuzzer target over ember's pure file-format parsers: the .npy header parser
// and the CSV row parser (runtime/npy_format.cpp, which needs no MPI). The first
// input byte picks the parser (and, for CSV, the separator and dtype); the rest is
// the file content. Any crash, sanitizer report or exception other than
// ember::error is a bug. Built and run by tests/fuzz/run.sh (clang++-14
// -fsanitize=fuzzer,address,undefined); without libFuzzer, run.sh links
// replay_main.cpp instead and replays the corpus.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/npy_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  const char* p = reinterpret_cast<const char*>(data + 1);
  const std::size_t n = size - 1;
  const std::string path = "fuzz-input";
  try {
    if ((mode & 1) == 0) {
      // .npy: exactly the bytes the loader hands to the parser (at most the
      // prefix, then the whole header).
      const std::int64_t total = ember::io::npy_header_size(p, n, path);
      if (total < 0) __builtin_trap();
      auto h = ember::io::parse_npy_header(p, n, path);
      // Invariants the loader relies on.
      if (h.data_offset != total || h.data_offset > std::int64_t(n)) __builtin_trap();
      if (h.dtype_code() < 1 || h.dtype_code() > 13) __builtin_trap();
      if (h.data_bytes() < 0) __builtin_trap();
      // A header ember writes for this shape parses back to the same shape.
      const std::string w = ember::io::make_npy_header(h.dtype_code(), h.shape);
      auto h2 = ember::io::parse_npy_header(w.data(), w.size(), path);
      if (h2.shape != h.shape || h2.dtype_code() != h.dtype_code() || w.size() % 64 != 0) __builtin_trap();
    } else {
      static const char seps[] = {',', ';', ' ', '\t'};
      const char sep = seps[(mode >> 1) & 3];
      static const int codes[] = {1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13};  // every real dtype (dsl/dtype.hpp)
      const int code = codes[(mode >> 3) % 11];
      std::vector<char> out;
      std::int64_t ncols = -1;
      const std::int64_t rows = ember::io::parse_csv_rows(std::string_view(p, n), sep, code, out, ncols, 1, path);
      if (rows < 0 || (rows > 0 && ncols < 0)) __builtin_trap();
      if (std::int64_t(out.size()) != rows * std::max<std::int64_t>(ncols, 0) * std::int64_t(ember::io::dtype_size(code)))
        __builtin_trap();
      if (rows > ember::io::count_lines(std::string_view(p, n))) __builtin_trap();
      // What ember writes, it reads back bit for bit.
      std::string text;
      ember::io::format_csv_rows(out.data(), code, rows, std::max<std::int64_t>(ncols, 0), sep == ' ' ? ',' : sep, text);
      std::vector<char> back;
      std::int64_t nc2 = -1;
      const std::int64_t r2 = ember::io::parse_csv_rows(text, sep == ' ' ? ',' : sep, code, back, nc2, 1, path);
      if (ncols > 0 && (r2 != rows || back.size() != out.size())) __builtin_trap();
      if (ncols > 0 && code != 4 && code != 5 && std::memcmp(back.data(), out.data(), out.size()) != 0) __builtin_trap();
    }
  } catch (const ember::error&) {
    // the only acceptable failure
  }
  return 0;
}
