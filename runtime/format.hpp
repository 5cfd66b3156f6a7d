// NumPy-style text formatting of an array gathered (possibly summarized) on one
// rank. Pure functions, no MPI: the dsl gathers what is shown and calls these.
// The rules follow NumPy's array2string defaults (floatmode "maxprec").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layout.hpp"

namespace ember::format {

// NumPy's defaults (np.get_printoptions()).
struct options {
  int precision = 8;
  std::int64_t threshold = 1000;  // summarize above this many elements
  int edgeitems = 3;
  int linewidth = 75;
};

// The global indices shown along each axis: all of them, or the first and last
// `edgeitems` of every axis longer than 2*edgeitems when the array is summarized.
std::vector<index_vec> shown_indices(const index_vec& shape, const options& opt = {});

// Formats every value with the rules of its dtype; all values of one array share
// precision, notation and padding, so the columns align.
std::vector<std::string> format_floats(const double* v, std::int64_t n, bool is_float32, const options& opt = {});
// Complex numbers as NumPy prints them ("1.+2.j", "-0.5-1.25j"), from the parts.
std::vector<std::string> format_complex(const double* re, const double* im, std::int64_t n, bool is_complex64,
                                        const options& opt = {});
std::vector<std::string> format_ints(const std::int64_t* v, std::int64_t n);
std::vector<std::string> format_uints(const std::uint64_t* v, std::int64_t n);
std::vector<std::string> format_bools(const bool* v, std::int64_t n);

// Nested brackets over the shown cells (row-major over the shown extents), "..."
// on summarized axes, and line wrapping at opt.linewidth. `prefix` is the text
// that precedes the first bracket on its line (continuation lines are indented by
// its width); `suffix` is appended after the last bracket.
std::string layout_text(const std::vector<std::string>& cells, const index_vec& shape,
                        const std::vector<index_vec>& shown, const std::string& prefix, const std::string& suffix,
                        const options& opt = {});

}  // namespace ember::format
