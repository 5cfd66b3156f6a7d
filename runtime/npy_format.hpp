// Pure (MPI-free) parsers and formatters of ember's file formats: the .npy header
// and CSV rows. They never touch MPI or the file system, so the libFuzzer target
// (tests/fuzz) links them alone, and they are identical on every rank by
// construction: a header parsed on rank 0 and broadcast, or text parsed where it
// lies, gives the same answer everywhere.
//
// Every error is an ember::error naming the file and what is wrong; nothing here
// may crash or read out of bounds on any input (that is what the fuzzer checks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"

namespace ember::io {

using shape_vec = std::vector<std::int64_t>;

// What a .npy header says. NumPy's format: magic "\x93NUMPY", version byte pair,
// a 2-byte (1.0) or 4-byte (2.0, 3.0) little-endian header length, then a Python
// dict literal {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }.
struct npy_header {
  int version_major = 1;
  int version_minor = 0;
  char kind = 'f';          // 'b' bool, 'i' signed integer, 'f' IEEE float
  int itemsize = 8;         // bytes per element
  bool big_endian = false;  // '>' in descr (data is byte-swapped on read)
  bool fortran_order = false;
  shape_vec shape;
  std::int64_t data_offset = 0;  // bytes before the first element

  // ember's dtype code (dsl/dtype.hpp: 1 bool, 2 int32, 3 int64, 4 float32, 5 float64).
  int dtype_code() const;
  std::string descr() const;  // "<f8", "|b1", ">i4", ...
  std::int64_t numel() const;
  std::int64_t data_bytes() const { return numel() * itemsize; }
};

// The longest prefix needed to know the header's total size (magic, version, length).
inline constexpr std::size_t npy_prefix_bytes = 12;
// From the first `n` bytes (at least 10; 12 for versions 2 and 3): the total header
// size, i.e. the offset of the data. Throws ember::error (naming `path`) when the
// bytes are not a supported .npy prefix.
std::int64_t npy_header_size(const char* data, std::size_t n, const std::string& path);
// Parses a complete header (`n` >= npy_header_size). Only the dtypes ember holds
// are accepted; the product of the shape must fit in 2^62 bytes.
npy_header parse_npy_header(const char* data, std::size_t n, const std::string& path);
// The header NumPy itself writes for C-order little-endian data of `dtype_code`
// and `shape`: version 1.0 unless the dict needs 2.0, padded so the data starts
// at a multiple of 64 bytes.
std::string make_npy_header(int dtype_code, const shape_vec& shape);

// ---- CSV ----
// Number of line starts in `text` (a final line without '\n' counts).
std::int64_t count_lines(std::string_view text);
// Parses whole lines of `text` into values of `dtype_code`, appended to `out` as raw
// element bytes. `sep` separates fields (' ' means any run of blanks). Blank lines
// and lines whose first non-blank character is '#' are skipped. Every row must have
// `ncols` fields; a negative `ncols` is set from the first row. `first_line` is the
// 1-based line number of `text`'s first line in the file, for messages. Returns the
// number of rows. Throws ember::error naming `path`, the line and the field.
std::int64_t parse_csv_rows(std::string_view text, char sep, int dtype_code, std::vector<char>& out,
                            std::int64_t& ncols, std::int64_t first_line, const std::string& path);
// Appends `rows` x `cols` row-major elements of `dtype_code` as CSV text: floats in
// the shortest form that reads back to the same bits, bools as 0/1.
void format_csv_rows(const void* data, int dtype_code, std::int64_t rows, std::int64_t cols, char sep,
                     std::string& out);

std::size_t dtype_size(int dtype_code);

}  // namespace ember::io
