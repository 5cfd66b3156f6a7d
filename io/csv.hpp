// 2-D numeric tables as CSV. Rows are split across ranks by byte ranges (no
// rank reads the file): a rank owns the lines that start in its range and reads
// past its end to finish its last one; the rows are then balanced to Heat's
// layout by the exchange engine.
#pragma once

#include <string>

#include "common.hpp"

namespace ember::io {

struct csv_load_options {
  split_axis split = 0;  // 0, 1 or ember::none
  char sep = ',';        // ' ' splits on any run of blanks
  bool header = false;   // skip the first line
  std::optional<communicator> comm = std::nullopt;
};

struct csv_save_options {
  char sep = ',';
  std::string header = "";  // written as the first line when not empty
  bool sync = true;
};

// Blank lines and lines starting with '#' are skipped; every row must have the
// same number of fields; floats are parsed exactly (from_chars). Errors name the
// file, the line and the field, on every rank.
template <dtype T>
dndarray<T, 2> load_csv(const std::string& path, const csv_load_options& o = {}) {
  static_assert(!is_complex_v<T>, "ember::io::load_csv: complex CSV is not supported yet; load the real and imaginary "
                                  "parts as two arrays, or use .npy or HDF5");
  const communicator& c = ember::detail::comm_of(o.comm);
  if (o.split) check_axis(*o.split, 2, "load_csv");
  csv_rows rows = read_csv(c, path, dtype_code<T>(), o.sep, o.header);
  std::int64_t n = 0;
  for (auto r : rows.rows_per_rank) n += r;
  // The rows as read (split 0 with whatever extents the byte ranges gave), then
  // one move by the exchange engine to the requested balanced layout.
  const layout as_read({n, rows.ncols}, 0, rows.rows_per_rank);
  dndarray<T, 2> a(as_read, c);
  if (!rows.data.empty()) std::memcpy(static_cast<void*>(a.ldata()), rows.data.data(), rows.data.size());
  a.move_to(layout::balanced({n, rows.ncols}, o.split, c.size()));
  return a;
}

// Writes `a` in rank order (row blocks of a split-0 array as they are; other
// layouts are first moved to balanced split 0; a replicated array is written by
// every rank's balanced share of rows). Floats in the shortest form that reads
// back bit-identical. Atomic, like save_npy.
template <dtype T>
void save_csv(const dndarray<T, 2>& a, const std::string& path, const csv_save_options& o = {}) {
  static_assert(!is_complex_v<T>, "ember::io::save_csv: complex CSV is not supported yet; save ember::real(a) and "
                                  "ember::imag(a), or use .npy or HDF5");
  const communicator& c = a.comm();
  const std::int64_t cols = a.shape()[1];
  if (!a.split()) {
    const layout share = layout::balanced(a.layout().shape(), 0, c.size());
    write_csv(c, path, dtype_code<T>(), a.ldata() + share.offset(c.rank()) * cols, share.extent(c.rank()), cols, o.sep,
              o.header, o.sync);
  } else if (*a.split() == 0) {
    write_csv(c, path, dtype_code<T>(), a.ldata(), a.lshape()[0], cols, o.sep, o.header, o.sync);
  } else {
    const auto b = a.moved_to(layout::balanced(a.layout().shape(), 0, c.size()));
    write_csv(c, path, dtype_code<T>(), b.ldata(), b.lshape()[0], cols, o.sep, o.header, o.sync);
  }
}

}  // namespace ember::io
