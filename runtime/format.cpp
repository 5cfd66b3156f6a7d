#include "format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>

namespace ember::format {

std::vector<index_vec> shown_indices(const index_vec& shape, const options& opt) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  const bool summarize = n > opt.threshold;
  std::vector<index_vec> out(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (summarize && shape[d] > 2 * opt.edgeitems) {
      for (int i = 0; i < opt.edgeitems; ++i) out[d].push_back(i);
      for (int i = opt.edgeitems; i > 0; --i) out[d].push_back(shape[d] - i);
    } else {
      for (std::int64_t i = 0; i < shape[d]; ++i) out[d].push_back(i);
    }
  }
  return out;
}

namespace {

template <class F>
std::string to_str(F x, std::chars_format fmt, int precision = -1) {
  char buf[128];
  auto r = precision < 0 ? std::to_chars(buf, buf + sizeof buf, x, fmt) : std::to_chars(buf, buf + sizeof buf, x, fmt, precision);
  return std::string(buf, r.ptr);
}

// Shortest round-trip digits of x, but no more than `precision` fractional digits
// (NumPy's dragon4 with unique=True): returns integer part, fraction, exponent.
template <class F>
void digits(F x, bool scientific, int precision, std::string& ip, std::string& fp, std::string& ex) {
  auto fmt = scientific ? std::chars_format::scientific : std::chars_format::fixed;
  std::string s = to_str(x, fmt);
  auto split = [&](const std::string& t) {
    std::string m = t;
    ex.clear();
    if (auto e = m.find('e'); e != std::string::npos) {
      ex = m.substr(e + 1);
      m = m.substr(0, e);
    }
    auto dot = m.find('.');
    ip = m.substr(0, dot);
    fp = dot == std::string::npos ? "" : m.substr(dot + 1);
  };
  split(s);
  if (int(fp.size()) > precision) {
    split(to_str(x, fmt, precision));
    while (!fp.empty() && fp.back() == '0') fp.pop_back();
  }
}

// sign_plus: NumPy's sign='+' (the imaginary parts of complex numbers): every
// value carries its sign, and infinities and NaN leave room for one.
template <class F>
std::vector<std::string> floats_impl(const double* v, std::int64_t n, const options& opt, bool sign_plus = false) {
  std::vector<double> finite;
  bool neg_inf = false, nonfinite = false;
  for (std::int64_t i = 0; i < n; ++i) {
    if (std::isfinite(v[i])) finite.push_back(v[i]);
    else {
      nonfinite = true;
      if (std::isinf(v[i]) && v[i] < 0) neg_inf = true;
    }
  }
  bool exp_format = false;
  double mx = 0, mn = INFINITY;
  for (double x : finite)
    if (x != 0) {
      mx = std::max(mx, std::fabs(x));
      mn = std::min(mn, std::fabs(x));
    }
  if (mx > 0 && (mx >= 1e8 || mn < 1e-4 || mx / mn > 1e3)) exp_format = true;

  std::size_t pad_left = 0, pad_right = 0, prec = 0, exp_size = 0;
  std::string ip, fp, ex;
  const auto with_sign = [&](std::string& int_part, double x) {
    if (sign_plus && !std::signbit(x)) int_part.insert(0, 1, '+');
  };
  for (double x : finite) {
    digits(F(x), exp_format, opt.precision, ip, fp, ex);
    with_sign(ip, x);
    pad_left = std::max(pad_left, ip.size());
    pad_right = std::max(pad_right, fp.size());
    if (exp_format) exp_size = std::max(exp_size, ex.size() - 1);
  }
  prec = pad_right;
  if (exp_format) pad_right = exp_size + 2 + prec;
  if (nonfinite) {
    const std::size_t off = pad_right + 1;
    const std::size_t inflen = 3 + (neg_inf || sign_plus ? 1 : 0);
    if (3 > off) pad_left = std::max(pad_left, 3 - off);
    if (inflen > off) pad_left = std::max(pad_left, inflen - off);
  }
  std::vector<std::string> out;
  out.reserve(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = v[i];
    std::string s;
    if (!std::isfinite(x)) {
      std::string r = std::isnan(x) ? "nan" : (x < 0 ? "-inf" : "inf");
      if (sign_plus && r[0] != '-') r.insert(0, 1, '+');
      const std::size_t w = pad_left + pad_right + 1;
      s = std::string(w > r.size() ? w - r.size() : 0, ' ') + r;
    } else if (exp_format) {
      // All mantissas get the same number of digits (zero padded), exponents at
      // least two digits, as NumPy does.
      std::string m = to_str(F(x), std::chars_format::scientific, int(prec));
      auto e = m.find('e');
      std::string mant = m.substr(0, e), e_str = m.substr(e + 1);
      auto dot = mant.find('.');
      std::string mip = mant.substr(0, dot), mfp = dot == std::string::npos ? "" : mant.substr(dot + 1);
      with_sign(mip, x);
      char sign = e_str[0];
      std::string ed = e_str.substr(1);
      while (ed.size() < std::max<std::size_t>(exp_size, 2)) ed = "0" + ed;
      s = std::string(pad_left > mip.size() ? pad_left - mip.size() : 0, ' ') + mip + "." + mfp + "e" + sign + ed;
    } else {
      digits(F(x), false, opt.precision, ip, fp, ex);
      with_sign(ip, x);
      s = std::string(pad_left > ip.size() ? pad_left - ip.size() : 0, ' ') + ip + "." + fp +
          std::string(pad_right - fp.size(), ' ');
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> right_align(std::vector<std::string> cells) {
  std::size_t w = 0;
  for (auto& c : cells) w = std::max(w, c.size());
  for (auto& c : cells) c.insert(0, w - c.size(), ' ');
  return cells;
}

}  // namespace

std::vector<std::string> format_floats(const double* v, std::int64_t n, bool is_float32, const options& opt) {
  return is_float32 ? floats_impl<float>(v, n, opt) : floats_impl<double>(v, n, opt);
}

std::vector<std::string> format_complex(const double* re, const double* im, std::int64_t n, bool is_complex64,
                                        const options& opt) {
  // NumPy's ComplexFloatingFormat: the real parts formatted together, the
  // imaginary parts together with their signs, and the 'j' before the padding.
  auto r = is_complex64 ? floats_impl<float>(re, n, opt) : floats_impl<double>(re, n, opt);
  auto i = is_complex64 ? floats_impl<float>(im, n, opt, true) : floats_impl<double>(im, n, opt, true);
  for (std::size_t k = 0; k < r.size(); ++k) {
    const std::size_t end = i[k].find_last_not_of(' ') + 1;
    r[k] += i[k].substr(0, end) + "j" + i[k].substr(end);
  }
  return r;
}

std::vector<std::string> format_ints(const std::int64_t* v, std::int64_t n) {
  std::vector<std::string> c;
  c.reserve(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) c.push_back(std::to_string(v[i]));
  return right_align(std::move(c));
}

std::vector<std::string> format_uints(const std::uint64_t* v, std::int64_t n) {
  std::vector<std::string> c;
  c.reserve(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) c.push_back(std::to_string(v[i]));
  return right_align(std::move(c));
}

std::vector<std::string> format_bools(const bool* v, std::int64_t n) {
  std::vector<std::string> c;
  c.reserve(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) c.push_back(v[i] ? " True" : "False");
  return c;
}

std::string layout_text(const std::vector<std::string>& cells, const index_vec& shape,
                        const std::vector<index_vec>& shown, const std::string& prefix, const std::string& suffix,
                        const options& opt) {
  const int nd = int(shape.size());
  index_vec m(nd);
  for (int d = 0; d < nd; ++d) m[d] = std::int64_t(shown[d].size());
  const index_vec strides = row_major_strides(m);
  const std::string sep = ", ";
  // NumPy skips over the prefix and the first "[" on continuation lines.
  const std::string next_line_prefix(prefix.size() + 1, ' ');
  // As NumPy's repr: one column is kept for the "," or ")" after the brackets.
  const int line_width = opt.linewidth - 1;

  auto extend = [&](std::string& s, std::string& line, const std::string& word, int width,
                    const std::string& hang) {
    bool wrap = int(line.size() + word.size()) > width;
    if (line.size() <= hang.size()) wrap = false;  // wrapping would not help
    if (wrap) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      s += line + "\n";
      line = hang;
    }
    line += word;
  };

  // NumPy's _formatArray: recursion over axes with a hanging indent.
  std::function<std::string(int, std::int64_t, const std::string&, int)> rec =
      [&](int axis, std::int64_t base, const std::string& hang, int width) -> std::string {
    if (axis == nd) return cells[std::size_t(base)];
    const std::string next_hang = hang + " ";
    const int next_width = width - 1;
    const std::int64_t len = m[axis];
    const bool summary = m[axis] < shape[axis];
    const std::int64_t lead = summary ? len / 2 : 0, trail = summary ? len - lead : len;
    std::string s;
    if (nd - axis == 1) {
      const int elem_width = width - 1;
      std::string line = hang;
      for (std::int64_t i = 0; i < lead; ++i) {
        extend(s, line, rec(axis + 1, base + i * strides[axis], next_hang, next_width), elem_width, hang);
        line += sep;
      }
      if (summary) {
        extend(s, line, "...", elem_width, hang);
        line += sep;
      }
      for (std::int64_t i = trail; i > 1; --i) {
        extend(s, line, rec(axis + 1, base + (len - i) * strides[axis], next_hang, next_width), elem_width, hang);
        line += sep;
      }
      if (len > 0) extend(s, line, rec(axis + 1, base + (len - 1) * strides[axis], next_hang, next_width), elem_width, hang);
      s += line;
    } else {
      const std::string line_sep = "," + std::string(std::size_t(nd - axis - 1), '\n');
      for (std::int64_t i = 0; i < lead; ++i)
        s += hang + rec(axis + 1, base + i * strides[axis], next_hang, next_width) + line_sep;
      if (summary) s += hang + "..." + line_sep;
      for (std::int64_t i = trail; i > 1; --i)
        s += hang + rec(axis + 1, base + (len - i) * strides[axis], next_hang, next_width) + line_sep;
      if (len > 0) s += hang + rec(axis + 1, base + (len - 1) * strides[axis], next_hang, next_width);
    }
    return "[" + s.substr(std::min(hang.size(), s.size())) + "]";
  };
  return prefix + rec(0, 0, next_line_prefix, line_width) + suffix;
}

}  // namespace ember::format
