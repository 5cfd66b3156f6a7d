#include "npy_format.hpp"

#include <charconv>
#include <cstring>
#include <limits>

namespace ember::io {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw error("ember::io: '" + path + "' is not a valid .npy file: " + what);
}

// Printable excerpt of untrusted bytes for messages.
std::string excerpt(std::string_view s, std::size_t max = 40) {
  std::string r;
  for (char ch : s.substr(0, max)) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (u >= 32 && u < 127) r += ch;
    else r += '?';
  }
  if (s.size() > max) r += "...";
  return r;
}

constexpr std::int64_t max_bytes = std::int64_t(1) << 62;

// A tiny parser of the Python dict literal NumPy writes (and of the variations
// other writers produce: either quote style, any key order, 'L' suffixes of
// Python 2 integers, trailing commas, any blanks).
struct dict_parser {
  std::string_view s;
  std::size_t i = 0;
  const std::string& path;

  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool peek(char c) {
    ws();
    return i < s.size() && s[i] == c;
  }
  void expect(char c, const char* where) {
    ws();
    if (i >= s.size() || s[i] != c)
      fail(path, std::string("header dict: expected '") + c + "' " + where + " at byte " + std::to_string(i) +
                     " of '" + excerpt(s) + "'");
    ++i;
  }
  std::string str(const char* where) {
    ws();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"'))
      fail(path, std::string("header dict: expected a string ") + where + " in '" + excerpt(s) + "'");
    const char q = s[i++];
    const std::size_t b = i;
    while (i < s.size() && s[i] != q) {
      if (s[i] == '\\') fail(path, "header dict: escapes in strings are not supported");
      ++i;
    }
    if (i >= s.size()) fail(path, "header dict: unterminated string");
    return std::string(s.substr(b, i++ - b));
  }
  bool boolean() {
    ws();
    if (s.substr(i, 4) == "True") {
      i += 4;
      return true;
    }
    if (s.substr(i, 5) == "False") {
      i += 5;
      return false;
    }
    fail(path, "header dict: 'fortran_order' must be True or False in '" + excerpt(s) + "'");
  }
  shape_vec shape() {
    shape_vec r;
    expect('(', "to open 'shape'");
    while (!peek(')')) {
      ws();
      if (i >= s.size() || s[i] < '0' || s[i] > '9')
        fail(path, "header dict: 'shape' must be a tuple of non-negative integers, got '" + excerpt(s.substr(i)) + "'");
      std::int64_t v = 0;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        if (v > (max_bytes - 9) / 10) fail(path, "header dict: a dimension in 'shape' is absurdly large");
        v = v * 10 + (s[i++] - '0');
      }
      if (i < s.size() && (s[i] == 'L' || s[i] == 'l')) ++i;  // Python 2 long
      r.push_back(v);
      if (r.size() > 64) fail(path, "header dict: 'shape' has more than 64 dimensions");
      if (peek(',')) ++i;
      else if (!peek(')')) fail(path, "header dict: expected ',' or ')' in 'shape'");
    }
    ++i;
    return r;
  }
};

void parse_descr(const std::string& d, npy_header& h, const std::string& path) {
  const std::string supported =
      " (ember reads bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, complex64 and "
      "complex128)";
  if (d.size() != 3 && d.size() != 4) fail(path, "unsupported dtype descr '" + excerpt(d) + "'" + supported);
  const char order = d[0], kind = d[1];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    fail(path, "dtype descr '" + excerpt(d) + "' has no byte-order mark");
  int size = 0;
  for (std::size_t i = 2; i < d.size(); ++i) {
    if (d[i] < '0' || d[i] > '9') fail(path, "unsupported dtype descr '" + excerpt(d) + "'" + supported);
    size = size * 10 + (d[i] - '0');
  }
  h.kind = kind;
  h.itemsize = size;
  // '=' is "native" of the writer, which NumPy never writes; like NumPy, read it as this machine's order.
  h.big_endian = order == '>';
  if (h.dtype_code() == 0) fail(path, "unsupported dtype descr '" + excerpt(d) + "'" + supported);
}

}  // namespace

namespace {
// ember's dtype codes (dsl/dtype.hpp) as NumPy's (kind, itemsize): the one table
// dtype_size, npy_header::dtype_code and make_npy_header read.
struct npy_dtype {
  int code;
  char kind;
  int size;
};
constexpr npy_dtype npy_dtypes[] = {{1, 'b', 1},  {2, 'i', 4},  {3, 'i', 8},  {4, 'f', 4},   {5, 'f', 8},
                                    {6, 'c', 8},  {7, 'c', 16}, {8, 'i', 1},  {9, 'i', 2},   {10, 'u', 1},
                                    {11, 'u', 2}, {12, 'u', 4}, {13, 'u', 8}};
const npy_dtype* npy_dtype_of(int code) {
  for (const auto& d : npy_dtypes)
    if (d.code == code) return &d;
  return nullptr;
}
}  // namespace

std::size_t dtype_size(int code) {
  const npy_dtype* d = npy_dtype_of(code);
  return d ? std::size_t(d->size) : 0;
}

int npy_header::dtype_code() const {
  for (const auto& d : npy_dtypes)
    if (d.kind == kind && d.size == itemsize) return d.code;
  return 0;
}

std::string npy_header::descr() const {
  return std::string(1, itemsize == 1 ? '|' : big_endian ? '>' : '<') + kind + std::to_string(itemsize);
}

std::int64_t npy_header::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;  // bounded by parse_npy_header
  return n;
}

std::int64_t npy_header_size(const char* data, std::size_t n, const std::string& path) {
  static const char magic[] = "\x93NUMPY";
  if (n < 10) fail(path, "the file is " + std::to_string(n) + " bytes long, shorter than a .npy preamble (10 bytes)");
  if (std::memcmp(data, magic, 6) != 0) fail(path, "it does not start with the magic string \\x93NUMPY");
  const int major = static_cast<unsigned char>(data[6]), minor = static_cast<unsigned char>(data[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(path, "format version " + std::to_string(major) + "." + std::to_string(minor) +
                   " is not supported (1.0, 2.0 and 3.0 are)");
  const auto byte = [&](std::size_t k) { return std::int64_t(static_cast<unsigned char>(data[k])); };
  if (major == 1) return 10 + (byte(8) | byte(9) << 8);
  if (n < 12) fail(path, "the file ends inside the version 2/3 preamble");
  return 12 + (byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24);
}

npy_header parse_npy_header(const char* data, std::size_t n, const std::string& path) {
  const std::int64_t total = npy_header_size(data, n, path);
  if (std::int64_t(n) < total)
    fail(path, "the header claims " + std::to_string(total) + " bytes but the file has only " + std::to_string(n));
  npy_header h;
  h.version_major = static_cast<unsigned char>(data[6]);
  h.version_minor = 0;
  h.data_offset = total;
  const std::size_t pre = h.version_major == 1 ? 10 : 12;
  std::string_view text(data + pre, std::size_t(total) - pre);
  dict_parser p{text, 0, path};
  p.expect('{', "at the start of the header");
  bool have_descr = false, have_fortran = false, have_shape = false;
  while (!p.peek('}')) {
    const std::string key = p.str("as a key");
    p.expect(':', "after a key");
    if (key == "descr") {
      if (have_descr) fail(path, "header dict: duplicate key 'descr'");
      if (p.peek('[')) fail(path, "structured (record) dtypes are not supported");
      parse_descr(p.str("for 'descr'"), h, path);
      have_descr = true;
    } else if (key == "fortran_order") {
      if (have_fortran) fail(path, "header dict: duplicate key 'fortran_order'");
      h.fortran_order = p.boolean();
      have_fortran = true;
    } else if (key == "shape") {
      if (have_shape) fail(path, "header dict: duplicate key 'shape'");
      h.shape = p.shape();
      have_shape = true;
    } else {
      fail(path, "header dict: unexpected key '" + excerpt(key) + "'");
    }
    if (p.peek(',')) ++p.i;
    else if (!p.peek('}')) fail(path, "header dict: expected ',' or '}' in '" + excerpt(text) + "'");
  }
  ++p.i;
  p.ws();
  if (p.i != text.size()) fail(path, "unexpected bytes after the header dict: '" + excerpt(text.substr(p.i)) + "'");
  if (!have_descr || !have_fortran || !have_shape)
    fail(path, std::string("header dict lacks the key '") + (!have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape") +
                   "'");
  // Bound the data size so every later product fits in int64 (a lying header must
  // give a clean error, not an overflow).
  std::int64_t bytes = h.itemsize;
  for (auto d : h.shape) {
    if (d != 0 && bytes > max_bytes / d) fail(path, "the shape " + detail::shape_str(h.shape) + " is too large");
    bytes *= d;
  }
  return h;
}

std::string make_npy_header(int code, const shape_vec& shape) {
  npy_header h;
  const npy_dtype* d = npy_dtype_of(code);
  if (!d) throw error("ember::io: no .npy dtype for dtype code " + std::to_string(code));
  h.kind = d->kind;
  h.itemsize = d->size;
  std::string dict = "{'descr': '" + h.descr() + "', 'fortran_order': False, 'shape': (";
  for (std::size_t d = 0; d < shape.size(); ++d) {
    dict += std::to_string(shape[d]);
    if (d + 1 < shape.size() || shape.size() == 1) dict += ",";
    if (d + 1 < shape.size()) dict += " ";
  }
  dict += "), }";
  // NumPy pads with blanks and ends with '\n' so the data is 64-byte aligned.
  std::size_t pre = 10;
  if (dict.size() + 1 + pre > 65535) pre = 12;
  const std::size_t unpadded = pre + dict.size() + 1;
  const std::size_t total = (unpadded + 63) / 64 * 64;
  dict.append(total - unpadded, ' ');
  dict += '\n';
  std::string out("\x93NUMPY", 6);
  const std::uint32_t len = std::uint32_t(dict.size());
  out += char(pre == 10 ? 1 : 2);
  out += char(0);
  out += char(len & 0xff);
  out += char((len >> 8) & 0xff);
  if (pre == 12) {
    out += char((len >> 16) & 0xff);
    out += char((len >> 24) & 0xff);
  }
  return out + dict;
}

// ---------------------------------------------------------------------------
// CSV

std::int64_t count_lines(std::string_view text) {
  std::int64_t n = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    ++n;
    const void* nl = std::memchr(text.data() + i, '\n', text.size() - i);
    if (!nl) break;
    i = std::size_t(static_cast<const char*>(nl) - text.data()) + 1;
  }
  return n;
}

namespace {

bool blank(char c) { return c == ' ' || c == '\t'; }

template <class T>
bool parse_field(std::string_view f, T& v) {
  const char* b = f.data();
  const char* e = f.data() + f.size();
  if constexpr (std::is_same_v<T, bool>) {
    if (f == "1" || f == "True" || f == "true") v = true;
    else if (f == "0" || f == "False" || f == "false") v = false;
    else return false;
    return true;
  } else {
    // std::from_chars takes no leading '+'; NumPy (and strtod) do.
    if (b != e && *b == '+' && e - b > 1 && b[1] != '-' && b[1] != '+') ++b;
    auto r = std::from_chars(b, e, v);
    return r.ec == std::errc() && r.ptr == e;
  }
}

template <class T>
std::int64_t parse_rows(std::string_view text, char sep, std::vector<char>& out, std::int64_t& ncols,
                        std::int64_t first_line, const std::string& path, const char* tname) {
  std::int64_t rows = 0, line = first_line;
  std::size_t i = 0;
  while (i < text.size()) {
    const void* nlp = std::memchr(text.data() + i, '\n', text.size() - i);
    const std::size_t end = nlp ? std::size_t(static_cast<const char*>(nlp) - text.data()) : text.size();
    std::string_view ln = text.substr(i, end - i);
    i = end + 1;
    if (!ln.empty() && ln.back() == '\r') ln.remove_suffix(1);
    std::size_t a = 0;
    while (a < ln.size() && blank(ln[a])) ++a;
    if (a == ln.size() || ln[a] == '#') {
      ++line;
      continue;
    }
    std::int64_t col = 0;
    std::size_t pos = sep == ' ' ? a : 0;
    while (true) {
      std::size_t stop;
      if (sep == ' ') {
        stop = pos;
        while (stop < ln.size() && !blank(ln[stop])) ++stop;
      } else {
        stop = ln.find(sep, pos);
        if (stop == std::string_view::npos) stop = ln.size();
      }
      std::string_view f = ln.substr(pos, stop - pos);
      while (!f.empty() && blank(f.front())) f.remove_prefix(1);
      while (!f.empty() && blank(f.back())) f.remove_suffix(1);
      T v{};
      if (!parse_field(f, v))
        throw error("ember::io::load_csv: '" + path + "' line " + std::to_string(line) + ", column " +
                    std::to_string(col + 1) + ": '" + excerpt(f) + "' is not a valid " + tname);
      const std::size_t o = out.size();
      out.resize(o + sizeof(T));
      std::memcpy(out.data() + o, &v, sizeof(T));
      ++col;
      if (sep == ' ') {
        while (stop < ln.size() && blank(ln[stop])) ++stop;
        if (stop >= ln.size()) break;
        pos = stop;
      } else {
        if (stop >= ln.size()) break;
        pos = stop + 1;
      }
    }
    if (ncols < 0) ncols = col;
    else if (col != ncols)
      throw error("ember::io::load_csv: '" + path + "' line " + std::to_string(line) + " has " + std::to_string(col) +
                  " fields, the rows before it have " + std::to_string(ncols));
    ++rows;
    ++line;
  }
  return rows;
}

template <class T>
void format_rows(const T* p, std::int64_t rows, std::int64_t cols, char sep, std::string& out) {
  char buf[64];
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      if (c) out += sep;
      const T v = p[r * cols + c];
      if constexpr (std::is_same_v<T, bool>) {
        out += v ? '1' : '0';
      } else {
        // Shortest representation that reads back to the same value: bit-exact round trips.
        auto res = std::to_chars(buf, buf + sizeof buf, v);
        out.append(buf, res.ptr);
      }
    }
    out += '\n';
  }
}

}  // namespace

std::int64_t parse_csv_rows(std::string_view text, char sep, int code, std::vector<char>& out, std::int64_t& ncols,
                            std::int64_t first_line, const std::string& path) {
  switch (code) {
    case 1: return parse_rows<bool>(text, sep, out, ncols, first_line, path, "bool (0, 1, True, False)");
    case 2: return parse_rows<std::int32_t>(text, sep, out, ncols, first_line, path, "int32");
    case 3: return parse_rows<std::int64_t>(text, sep, out, ncols, first_line, path, "int64");
    case 4: return parse_rows<float>(text, sep, out, ncols, first_line, path, "float32");
    case 5: return parse_rows<double>(text, sep, out, ncols, first_line, path, "float64");
    case 8: return parse_rows<std::int8_t>(text, sep, out, ncols, first_line, path, "int8");
    case 9: return parse_rows<std::int16_t>(text, sep, out, ncols, first_line, path, "int16");
    case 10: return parse_rows<std::uint8_t>(text, sep, out, ncols, first_line, path, "uint8");
    case 11: return parse_rows<std::uint16_t>(text, sep, out, ncols, first_line, path, "uint16");
    case 12: return parse_rows<std::uint32_t>(text, sep, out, ncols, first_line, path, "uint32");
    case 13: return parse_rows<std::uint64_t>(text, sep, out, ncols, first_line, path, "uint64");
    case 6: case 7: throw type_error("ember::io::load_csv: '" + path + "': complex CSV is not supported yet (store the real and imaginary parts as two arrays, or use .npy or HDF5)");
  }
  throw error("ember::io::load_csv: unknown dtype code " + std::to_string(code));
}

void format_csv_rows(const void* data, int code, std::int64_t rows, std::int64_t cols, char sep, std::string& out) {
  switch (code) {
    case 1: return format_rows(static_cast<const bool*>(data), rows, cols, sep, out);
    case 2: return format_rows(static_cast<const std::int32_t*>(data), rows, cols, sep, out);
    case 3: return format_rows(static_cast<const std::int64_t*>(data), rows, cols, sep, out);
    case 4: return format_rows(static_cast<const float*>(data), rows, cols, sep, out);
    case 5: return format_rows(static_cast<const double*>(data), rows, cols, sep, out);
    case 8: return format_rows(static_cast<const std::int8_t*>(data), rows, cols, sep, out);
    case 9: return format_rows(static_cast<const std::int16_t*>(data), rows, cols, sep, out);
    case 10: return format_rows(static_cast<const std::uint8_t*>(data), rows, cols, sep, out);
    case 11: return format_rows(static_cast<const std::uint16_t*>(data), rows, cols, sep, out);
    case 12: return format_rows(static_cast<const std::uint32_t*>(data), rows, cols, sep, out);
    case 13: return format_rows(static_cast<const std::uint64_t*>(data), rows, cols, sep, out);
    case 6: case 7: throw type_error("ember::io::save_csv: complex CSV is not supported yet (save ember::real(a) and ember::imag(a), or use .npy or HDF5)");
  }
  throw error("ember::io::save_csv: unknown dtype code " + std::to_string(code));
}

}  // namespace ember::io
