// Factories: zeros ones full empty arange linspace logspace geomspace eye, *_like, and array(...)
// from data that every rank has or from disjoint per-rank blocks.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <optional>
#include <span>
#include <vector>

#include "broadcast.hpp"
#include "dndarray.hpp"

namespace ember {

// Options of every factory, set with designated initializers:
// `ember::zeros<double>({4, 5}, {.split = 0, .comm = c})`.
struct factory_options {
  split_axis split = none;
  std::optional<communicator> comm = std::nullopt;  // default: ember::world()
  // ember::gpu: the local blocks live in the rank's GPU memory (collective check:
  // every rank needs a device, or every rank throws ember::device_error).
  device_kind device = device_kind::cpu;
};

struct array_options {
  split_axis split = none;     // data is global (every rank has it): keep my slice
  split_axis is_split = none;  // data is my block of a global array joined along this axis
  std::optional<communicator> comm = std::nullopt;
  // Only this rank has the data: the others may pass empty data, the shape and
  // values are the root's, broadcast (split none) or scattered (split k) from it
  // (dsl/broadcast.hpp). Not with is_split.
  std::optional<int> root = std::nullopt;
  device_kind device = device_kind::cpu;  // where the new array's blocks live
};

namespace detail {

inline const communicator& comm_of(const std::optional<communicator>& c) { return c ? *c : world(); }

template <std::size_t N>
index_vec to_index_vec(const std::array<std::int64_t, N>& s) {
  return index_vec(s.begin(), s.end());
}

// What a factory passes beyond its shape and options, for the agreement below:
// a hash of its other arguments (a fill value, a seed) and their description.
struct factory_args {
  std::uint64_t hash = 0;
  std::function<std::string()> describe = [] { return std::string(); };
  std::function<void()> validate = [] {};  // extra checks of the arguments (alike on every rank)
};
template <class V>
std::uint64_t bits_of(V v) {
  if constexpr (is_complex_v<V>) return bits_of(v.real()) * 0x9e3779b97f4a7c15ull ^ bits_of(v.imag());
  std::uint64_t b = 0;
  std::memcpy(&b, &v, std::min(sizeof(V), sizeof b));
  return b;
}
// A number in an error message ("(1.5,-2)" for a complex one).
template <class V>
std::string number_text(V v) {
  if constexpr (is_complex_v<V>) return "(" + std::to_string(v.real()) + "," + std::to_string(v.imag()) + ")";
  else return std::to_string(v);
}

// A new array for a factory. One collective opens it (detail::agreed_entry): the
// ranks compare a hash of shape, split, dtype, device and `extra` (another shape,
// split, fill value or seed on one rank would build an inconsistent array), and
// each one's outcome of validating them and allocating its block, so bad input,
// rank-dependent input and one rank out of memory are the same error on every
// rank. Then (for {.device = ember::gpu}) the collective device check. The block
// is on the host when `filled_on_host` (the factory fills it there and
// on_device() uploads it), otherwise on the device.
template <dtype T, std::size_t N>
dndarray<T, int(N)> make(const std::array<std::int64_t, N>& shape, const factory_options& o,
                         bool filled_on_host = true, const factory_args& extra = {}, const char* what = "ember: a factory") {
  const auto& c = comm_of(o.comm);
  arg_hash h;
  h.add(std::uint64_t(dtype_code<T>())).add(std::uint64_t(N)).add(o.split ? std::uint64_t(*o.split) + 1 : 0);
  h.add(std::uint64_t(o.device)).add(extra.hash);
  for (auto e : shape) h.add(std::uint64_t(e));
  const bool on_host = filled_on_host || o.device == device_kind::cpu;
  auto describe = [&] {
    const std::string x = extra.describe();
    return std::string(dtype_name<T>()) + " shape " + shape_str(shape) + ", split " + axis_str(o.split) +
           (o.device == device_kind::gpu ? ", device gpu" : "") + (x.empty() ? "" : ", " + x);
  };
  auto a = agreed_entry(c, {what, "shape, split, dtype and arguments", h.h, describe}, [&] {
    for (std::size_t d = 0; d < N; ++d)
      if (shape[d] < 0)
        throw value_error("ember: negative dimension " + std::to_string(shape[d]) + " on axis " + std::to_string(d) +
                          " in shape " + shape_str(shape));
    if (o.split) check_axis(*o.split, int(N), "factory");
    extra.validate();
    const layout l = layout::balanced(to_index_vec(shape), o.split, c.size());
    return on_host ? dndarray<T, int(N)>(l, c) : dndarray<T, int(N)>();
  });
  if (o.device == device_kind::gpu) require_gpu(c, "ember: a factory with {.device = ember::gpu}");
  if (on_host) return a;
  const layout l = layout::balanced(to_index_vec(shape), o.split, c.size());
  return agreed_entry(c, {what, "shape", 0, describe}, [&] { return dndarray<T, int(N)>(l, c, o.device); });
}

// Calls f(local pointer, count, first global linear index) for each run of the
// local block that is contiguous in the global row-major order.
template <dtype T, int N, class F>
void fill_runs(dndarray<T, N>& a, F&& f) {
  T* p = a.ldata();
  for_each_global_run(a.layout(), a.comm().rank(),
                      [&](std::int64_t lo, std::int64_t g, std::int64_t n) { f(p + lo, n, g); });
}
// Fills each local element with f(global linear index).
template <dtype T, int N, class F>
void fill_by_index(dndarray<T, N>& a, F&& f) {
  fill_runs(a, [&](T* p, std::int64_t n, std::int64_t g) {
    for (std::int64_t i = 0; i < n; ++i) p[i] = f(g + i);
  });
}

template <dtype T, int N>
void fill_value(dndarray<T, N>& a, T v) {
  std::fill_n(a.ldata(), a.lnumel(), v);
}

}  // namespace detail

// ---- constant factories. Shapes are braced lists: zeros<double>({7, 4, 3}). ----
template <dtype T, std::size_t N>
dndarray<T, int(N)> empty(const std::int64_t (&shape)[N], const factory_options& o = {}) {
  return detail::make<T>(std::to_array(shape), o, false);
}
template <dtype T, std::size_t N>
dndarray<T, int(N)> full(const std::array<std::int64_t, N>& shape, T value, const factory_options& o = {});
template <dtype T, std::size_t N>
dndarray<T, int(N)> full(const std::int64_t (&shape)[N], T value, const factory_options& o = {}) {
  return full<T>(std::to_array(shape), value, o);
}
template <dtype T, std::size_t N>
dndarray<T, int(N)> zeros(const std::int64_t (&shape)[N], const factory_options& o = {}) {
  return full<T>(shape, T(0), o);
}
template <dtype T, std::size_t N>
dndarray<T, int(N)> ones(const std::int64_t (&shape)[N], const factory_options& o = {}) {
  return full<T>(shape, T(1), o);
}
// The same from a std::array shape (e.g. another array's shape()).
template <dtype T, std::size_t N>
dndarray<T, int(N)> empty(const std::array<std::int64_t, N>& shape, const factory_options& o = {}) {
  return detail::make<T>(shape, o, false);
}
template <dtype T, std::size_t N>
dndarray<T, int(N)> full(const std::array<std::int64_t, N>& shape, T value, const factory_options& o) {
  auto a = detail::make<T>(shape, o, true,
                           {detail::bits_of(value), [&] { return "fill value " + detail::number_text(value); }}, "ember::full");
  detail::fill_value(a, value);
  return detail::on_device(a, o.device);
}
template <dtype T, std::size_t N>
dndarray<T, int(N)> zeros(const std::array<std::int64_t, N>& shape, const factory_options& o = {}) {
  return full<T>(shape, T(0), o);
}
template <dtype T, std::size_t N>
dndarray<T, int(N)> ones(const std::array<std::int64_t, N>& shape, const factory_options& o = {}) {
  return full<T>(shape, T(1), o);
}

// *_like: same shape, dtype, communicator, device and exact layout (lshape_map)
// as `a`, so the result is aligned with `a` for elementwise work.
// Allocation is agreed across ranks, as in every factory.
namespace detail {
template <dtype T, int N>
dndarray<T, N> alloc_like(const dndarray<T, N>& a, device_kind d, const char* what) {
  const auto& l = a.layout();
  return agreed_entry(a.comm(), {what, "array", l.hash(), [&] { return std::string(dtype_name<T>()) + " " + shape_str(l.shape()); }},
                      [&] { return dndarray<T, N>(l, a.comm(), d); });
}
}  // namespace detail
template <dtype T, int N>
dndarray<T, N> empty_like(const dndarray<T, N>& a) {
  return detail::alloc_like(a, a.device(), "ember::empty_like");
}
template <dtype T, int N>
dndarray<T, N> full_like(const dndarray<T, N>& a, T value) {
  dndarray<T, N> r = detail::alloc_like(a, device_kind::cpu, "ember::full_like");
  detail::fill_value(r, value);
  return detail::on_device(r, a.device());
}
// (a fill value of another type converts to a's dtype, as NumPy's full_like)
template <dtype T, int N, class V>
  requires(std::is_arithmetic_v<V> && !std::is_same_v<V, T>)
dndarray<T, N> full_like(const dndarray<T, N>& a, V value) {
  return full_like(a, T(value));
}
template <dtype T, int N>
dndarray<T, N> zeros_like(const dndarray<T, N>& a) {
  return full_like(a, T(0));
}
template <dtype T, int N>
dndarray<T, N> ones_like(const dndarray<T, N>& a) {
  return full_like(a, T(1));
}

// ---- ranges ----
namespace detail {
struct deduced_dtype {};  // arange's dtype when none is given: from the arguments
template <class T, class... A>
using arange_t = std::conditional_t<!std::is_same_v<T, deduced_dtype>, T,
                                    std::conditional_t<(std::is_floating_point_v<A> || ...), double, std::int64_t>>;
}  // namespace detail

// NumPy's arange: ceil((stop - start) / step) values start, start + step, ...
// Its dtype follows NumPy's rule unless given: any floating argument gives
// float64, integers int64 (arange(0.0, 1.0, 0.1) is ten floats; arange(5) five
// int64). Integer ranges are computed exactly in integers; floating ones as
// NumPy fills them (start + i * delta, delta = (start + step) - start in the
// result type), so the values match NumPy's bit for bit.
template <class T = detail::deduced_dtype, class A, class B, class C = std::int64_t>
  requires(std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && std::is_arithmetic_v<C>)
auto arange(A start_, B stop_, C step_ = 1, const factory_options& o = {}) {
  using R = detail::arange_t<T, A, B, C>;
  static_assert(dtype<R>, "ember::arange: the dtype must be an ember dtype");
  constexpr bool exact = std::is_integral_v<A> && std::is_integral_v<B> && std::is_integral_v<C>;
  const double start = double(start_), stop = double(stop_), step = double(step_);
  double n = step == 0 ? 0 : std::ceil((stop - start) / step);
  if constexpr (exact) {
    // the count in integers: no rounding of (stop - start) / step for wide ranges
    const std::int64_t a = std::int64_t(start_), b = std::int64_t(stop_), s = std::int64_t(step_);
    if (s != 0) {
      const std::int64_t span = s > 0 ? b - a : a - b, st = s > 0 ? s : -s;
      n = span <= 0 ? 0 : double(span / st + (span % st != 0));
    }
  }
  // A count no int64 holds (a tiny step over a wide range) is too big to allocate.
  const std::int64_t count = !(n > 0) ? 0 : n >= 9.2e18 ? std::numeric_limits<std::int64_t>::max() : std::int64_t(n);
  detail::factory_args x{detail::arg_hash().add(detail::bits_of(start)).add(detail::bits_of(stop)).add(detail::bits_of(step)).h,
                         [&] { return "start " + std::to_string(start) + ", stop " + std::to_string(stop) + ", step " + std::to_string(step); },
                         [&] {
                           if (step == 0) throw value_error("ember::arange: step must not be zero");
                           if (std::isnan(n))
                             throw value_error("ember::arange: start " + std::to_string(start) + ", stop " +
                                               std::to_string(stop) + " and step " + std::to_string(step) +
                                               " give no number of values");
                           if (!std::isfinite(n))
                             throw value_error("ember::arange: start " + std::to_string(start) + ", stop " +
                                               std::to_string(stop) + " and step " + std::to_string(step) +
                                               " give infinitely many values (the array is too big)");
                         }};
  auto a = detail::make<R>(std::array<std::int64_t, 1>{count}, o, true, x, "ember::arange");
  if constexpr (exact && std::is_integral_v<R>) {
    const std::int64_t a0 = std::int64_t(start_), s = std::int64_t(step_);
    detail::fill_by_index(a, [&](std::int64_t i) { return R(a0 + i * s); });
  } else if constexpr (std::is_floating_point_v<R>) {
    const R first = R(start), delta = R(start + step) - first;
    detail::fill_by_index(a, [&](std::int64_t i) { return R(first + R(i) * delta); });
  } else {
    detail::fill_by_index(a, [&](std::int64_t i) { return R(start + double(i) * step); });
  }
  return detail::on_device(a, o.device);
}
template <class T = detail::deduced_dtype, class A, class B>
  requires(std::is_arithmetic_v<A> && std::is_arithmetic_v<B>)
auto arange(A start, B stop, const factory_options& o) {
  return arange<T>(start, stop, std::int64_t(1), o);
}
template <class T = detail::deduced_dtype, class B>
  requires std::is_arithmetic_v<B>
auto arange(B stop, const factory_options& o = {}) {
  return arange<T>(B(0), stop, B(1), o);
}

namespace detail {
// Sample i of NumPy's linspace(start, stop, num, endpoint), as NumPy computes it
// (i * step + start, the last sample exactly stop with an endpoint).
struct linear_samples {
  double start, stop;
  std::int64_t num;
  bool endpoint;
  double operator()(std::int64_t i) const {
    if (endpoint && num > 1 && i == num - 1) return stop;
    const std::int64_t div = endpoint ? num - 1 : num;
    const double step = div > 0 ? (stop - start) / double(div) : 0.0;
    return double(i) * step + start;
  }
};
}  // namespace detail

struct linspace_options {
  split_axis split = none;
  std::optional<communicator> comm = std::nullopt;
  bool endpoint = true;
  device_kind device = device_kind::cpu;
};
template <dtype T = double>
dndarray<T, 1> linspace(double start, double stop, std::int64_t num, const linspace_options& o = {}) {
  detail::factory_args x{detail::arg_hash().add(detail::bits_of(start)).add(detail::bits_of(stop)).add(o.endpoint).h,
                         [&] { return "start " + std::to_string(start) + ", stop " + std::to_string(stop); },
                         [&] {
                           if (num < 0)
                             throw value_error("ember::linspace: number of samples " + std::to_string(num) + " is negative");
                         }};
  auto a = detail::make<T>(std::array<std::int64_t, 1>{std::max<std::int64_t>(num, 0)},
                           {.split = o.split, .comm = o.comm, .device = o.device}, true, x, "ember::linspace");
  const detail::linear_samples y{start, stop, num, o.endpoint};
  detail::fill_by_index(a, [&](std::int64_t i) { return T(y(i)); });
  return detail::on_device(a, o.device);
}

// NumPy's logspace: base ** linspace(start, stop, num), computed in float64 (as
// NumPy does) and stored as T; the values match NumPy's bit for bit.
struct logspace_options {
  split_axis split = none;
  std::optional<communicator> comm = std::nullopt;
  bool endpoint = true;
  double base = 10.0;
  device_kind device = device_kind::cpu;
};
template <dtype T = double>
dndarray<T, 1> logspace(double start, double stop, std::int64_t num = 50, const logspace_options& o = {}) {
  detail::factory_args x{detail::arg_hash().add(detail::bits_of(start)).add(detail::bits_of(stop)).add(o.endpoint).add(detail::bits_of(o.base)).h,
                         [&] { return "start " + std::to_string(start) + ", stop " + std::to_string(stop) + ", base " + std::to_string(o.base); },
                         [&] {
                           if (num < 0)
                             throw value_error("ember::logspace: number of samples " + std::to_string(num) + " is negative");
                         }};
  auto a = detail::make<T>(std::array<std::int64_t, 1>{std::max<std::int64_t>(num, 0)},
                           {.split = o.split, .comm = o.comm, .device = o.device}, true, x, "ember::logspace");
  const detail::linear_samples y{start, stop, num, o.endpoint};
  detail::fill_by_index(a, [&](std::int64_t i) { return T(std::pow(o.base, y(i))); });
  return detail::on_device(a, o.device);
}

// NumPy's geomspace: num samples from start to stop, evenly spaced on a log
// scale (10 ** linspace(log10(start), log10(stop))), the endpoints exactly start
// and stop. Both negative: the negated sequence. Zero is NumPy's error; start and
// stop of different signs give NaN inside, as NumPy's log10 of a negative does.
template <dtype T = double>
dndarray<T, 1> geomspace(double start, double stop, std::int64_t num = 50, const linspace_options& o = {}) {
  detail::factory_args x{detail::arg_hash().add(detail::bits_of(start)).add(detail::bits_of(stop)).add(o.endpoint).h,
                         [&] { return "start " + std::to_string(start) + ", stop " + std::to_string(stop); },
                         [&] {
                           if (num < 0)
                             throw value_error("ember::geomspace: number of samples " + std::to_string(num) + " is negative");
                           if (start == 0 || stop == 0)
                             throw value_error("ember::geomspace: a geometric sequence cannot include zero (start " +
                                               std::to_string(start) + ", stop " + std::to_string(stop) + ")");
                         }};
  auto a = detail::make<T>(std::array<std::int64_t, 1>{std::max<std::int64_t>(num, 0)},
                           {.split = o.split, .comm = o.comm, .device = o.device}, true, x, "ember::geomspace");
  const double sign = start < 0 && stop < 0 ? -1.0 : 1.0, s0 = start * sign, s1 = stop * sign;
  const detail::linear_samples y{std::log10(s0), std::log10(s1), num, o.endpoint};
  detail::fill_by_index(a, [&](std::int64_t i) {
    const double v = i == 0 ? s0 : (o.endpoint && num > 1 && i == num - 1) ? s1 : std::pow(10.0, y(i));
    return T(sign * v);
  });
  return detail::on_device(a, o.device);
}

// n x m identity-like matrix with ones on diagonal k.
template <dtype T = double>
dndarray<T, 2> eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt, std::int64_t k = 0,
                   const factory_options& o = {}) {
  const std::int64_t cols = m.value_or(n);
  auto a = detail::make<T>(std::array<std::int64_t, 2>{n, cols}, o, true,
                           {std::uint64_t(k), [&] { return "diagonal " + std::to_string(k); }}, "ember::eye");
  detail::fill_by_index(a, [&](std::int64_t g) { return T(g % std::max<std::int64_t>(cols, 1) - g / std::max<std::int64_t>(cols, 1) == k ? 1 : 0); });
  return detail::on_device(a, o.device);
}
template <dtype T = double>
dndarray<T, 2> eye(std::int64_t n, const factory_options& o) {
  return eye<T>(n, std::nullopt, 0, o);
}

// ---- array(...) from existing data ----
namespace detail {

constexpr int max_dims = 32;

// The layout of per-rank blocks joined along `axis` (Heat's is_split), or, with
// no axis, of blocks that are each a whole copy (every rank's shape the same).
// Every check happens after one allgather of every rank's metadata, so all ranks
// see the same facts and throw the same error. `nvalues`: how many values this
// rank passes (-1: implied by its block's shape), checked for every rank on every
// rank. `caller` names the caller in messages: "array(is_split" becomes
// "ember::array(is_split)" until the ranks are known to agree on the axis, then
// "ember::array(is_split=0)" (a message must be the same on every rank).
template <dtype T, int N>
layout joined_layout(const std::array<std::int64_t, N>& lshape, split_axis axis, const communicator& c,
                     std::int64_t nvalues, const std::string& caller) {
  static_assert(N <= max_dims);
  std::array<std::int64_t, 4 + max_dims> rec{};
  rec[0] = dtype_code<T>();
  rec[1] = N;
  rec[2] = axis ? *axis : -1;
  for (int d = 0; d < N; ++d) rec[4 + d] = lshape[d];
  rec[3] = nvalues;
  const auto all = c.allgather(rec.data(), std::int64_t(rec.size()));
  const std::size_t R = rec.size();
  auto at = [&](int r, std::size_t i) { return all[std::size_t(r) * R + i]; };
  const std::string unagreed = "ember::" + caller + ")";
  for (int r = 0; r < c.size(); ++r) {
    if (at(r, 0) != at(0, 0))
      throw type_error(unagreed + ": rank 0 passes " + std::string(dtype_name(int(at(0, 0)))) + " data but rank " +
                       std::to_string(r) + " passes " + std::string(dtype_name(int(at(r, 0)))));
    if (at(r, 1) != at(0, 1))
      throw shape_error(unagreed + ": rank 0 passes a " + std::to_string(at(0, 1)) + "-dimensional block but rank " +
                        std::to_string(r) + " a " + std::to_string(at(r, 1)) + "-dimensional one");
    if (at(r, 2) != at(0, 2))
      throw axis_error(unagreed + ": rank 0 joins along axis " + axis_str(at(0, 2) < 0 ? none : split_axis(int(at(0, 2)))) +
                       " but rank " + std::to_string(r) + " along axis " +
                       axis_str(at(r, 2) < 0 ? none : split_axis(int(at(r, 2)))));
  }
  const std::string where = caller + "=" + axis_str(axis) + ")", what = "ember::" + where;
  if (axis) check_axis(*axis, N, where.c_str());
  const int k = axis ? *axis : -1;
  index_vec shape(N), extents(c.size());
  for (int d = 0; d < N; ++d) shape[d] = at(0, 4 + d);
  if (axis) shape[std::size_t(k)] = 0;
  for (int r = 0; r < c.size(); ++r) {
    index_vec ls(N);
    for (int d = 0; d < N; ++d) ls[d] = at(r, 4 + std::size_t(d));
    for (int d = 0; d < N; ++d)
      if (ls[d] < 0)
        throw value_error(what + ": block of rank " + std::to_string(r) + " has the negative extent " +
                          std::to_string(ls[d]) + " in shape " + shape_str(ls));
    const std::int64_t n = checked_numel(ls, what + ": block of rank " + std::to_string(r));
    if (at(r, 3) >= 0 && at(r, 3) != n)
      throw shape_error(what + ": rank " + std::to_string(r) + " passes " + std::to_string(at(r, 3)) +
                        " values for its block of shape " + shape_str(ls));
    for (int d = 0; d < N; ++d)
      if (d != k && ls[d] != at(0, 4 + std::size_t(d)))
        throw shape_error(what + ": block of rank " + std::to_string(r) + " has shape " + shape_str(ls) +
                          " but rank 0's has " + shape_str(std::span(all.data() + 4, std::size_t(N))) +
                          (axis ? "; blocks may differ along axis " + std::to_string(k) + " only (they differ on axis " +
                                      std::to_string(d) + ")"
                                : "; unsplit, every rank holds the whole array (they differ on axis " +
                                      std::to_string(d) + ")"));
    if (!axis) continue;
    extents[r] = ls[std::size_t(k)];
    const auto sum = add_checked(shape[std::size_t(k)], ls[std::size_t(k)]);
    if (!sum)
      throw value_error(what + ": the blocks' extents along axis " + std::to_string(k) +
                        " overflow a 64-bit sum at rank " + std::to_string(r));
    shape[std::size_t(k)] = *sum;
  }
  checked_numel(shape, what);
  return axis ? layout(shape, k, extents) : layout::balanced(shape, none, c.size());
}

// Heat's is_split: each rank passes its block; blocks are joined along `axis`
// and copied into a new array.
template <dtype T, int N>
dndarray<T, N> join_blocks(const T* data, const std::array<std::int64_t, N>& lshape, int axis, const communicator& c,
                           std::int64_t nvalues = -1) {
  auto a = agreed_array<T, N>(joined_layout<T, N>(lshape, axis, c, nvalues, "array(is_split"), c,
                              "ember::array(is_split)");
  if (a.lnumel() > 0) std::memcpy(a.ldata(), data, std::size_t(a.lnumel()) * sizeof(T));
  return a;
}

// Every rank has the whole array: keep my slice (the exchange engine copies it
// locally and sends nothing). `a` was allocated for the balanced layout.
template <dtype T, int N>
void keep_slice(const T* data, dndarray<T, N>& a) {
  const auto& c = a.comm();
  exchange(replicated_layout(a.layout().shape(), c.size()), a.layout(), c.rank(), sizeof(T))
      .run(c, data, a.ldata());
}

// `nvalues`: how many values the caller passed when that is not implied by the
// shape (a span); only checked here for data that comes from a root.
template <dtype T, int N>
dndarray<T, N> from_data(const T* data, const std::array<std::int64_t, N>& shape, const array_options& o,
                         std::int64_t nvalues = -1) {
  const auto& c = comm_of(o.comm);
  if (o.split && o.is_split)
    throw value_error("ember::array: give either split (data is global) or is_split (data is this rank's block), "
                      "not both (split=" + axis_str(o.split) + ", is_split=" + axis_str(o.is_split) + ")");
  if (o.root && o.is_split)
    throw value_error("ember::array: root (only that rank has the data) and is_split (every rank has its block) "
                      "exclude each other (root=" + std::to_string(*o.root) + ", is_split=" + axis_str(o.is_split) + ")");
  if (o.device == device_kind::gpu) {
    // the host array, then the upload: the checks below stay as they are
    auto host = o;
    host.device = device_kind::cpu;
    require_gpu(c, "ember::array with {.device = ember::gpu}");
    return on_device(from_data<T, N>(data, shape, host, nvalues), device_kind::gpu);
  }
  // (a count that overflows is -1 here; the checks below name the shape)
  std::int64_t n = 1;
  for (auto s : shape) n = s < 0 || n < 0 ? -1 : mul_checked(n, s).value_or(-1);
  if (o.root) return from_root<T, N>(data, nvalues >= 0 ? nvalues : n, shape, o.split, *o.root, c);
  // Per-rank blocks: every rank's shape and value count are checked after one
  // allgather, so a rank whose block alone is wrong makes every rank throw.
  if (o.is_split) return join_blocks<T, N>(data, shape, *o.is_split, c, nvalues);
  // Global data: every rank passes the same shape, split and values. The one
  // agreement compares shape, split, dtype and value count (EMBER_CHECK_REPLICATED,
  // runtime/communicator.hpp), validates, and allocates this rank's slice.
  arg_hash h;
  h.add(std::uint64_t(dtype_code<T>())).add(std::uint64_t(N)).add(o.split ? std::uint64_t(*o.split) + 1 : 0);
  for (auto s : shape) h.add(std::uint64_t(s));
  h.add(std::uint64_t(nvalues >= 0 ? nvalues : n));
  auto a = agreed_entry(c, {"ember::array", "global data (split: every rank passes the whole array)", h.h, [&] {
                              return std::to_string(nvalues >= 0 ? nvalues : n) + " values of " +
                                     std::string(dtype_name<T>()) + " for shape " + shape_str(shape) + ", split " +
                                     axis_str(o.split);
                            }},
                        [&] {
                          for (int d = 0; d < N; ++d)
                            if (shape[d] < 0) throw value_error("ember::array: negative extent in shape " + shape_str(shape));
                          const std::int64_t count = checked_numel(shape, "ember::array");
                          if (nvalues >= 0 && nvalues != count)
                            throw shape_error("ember::array: " + std::to_string(nvalues) + " values do not fill shape " +
                                              shape_str(shape));
                          if (o.split) check_axis(*o.split, N, "array(split)");
                          return dndarray<T, N>(layout::balanced(index_vec(shape.begin(), shape.end()), o.split, c.size()), c);
                        });
  keep_slice(data, a);
  return a;
}

}  // namespace detail

// From a row-major Eigen tensor (or map): global data, or this rank's block.
template <dtype T, int N>
dndarray<T, N> array(const Eigen::Tensor<T, N, Eigen::RowMajor>& t, const array_options& o = {}) {
  std::array<std::int64_t, N> s;
  for (int d = 0; d < N; ++d) s[d] = t.dimension(d);
  return detail::from_data<T, N>(t.data(), s, o);
}
template <dtype T, int N>
dndarray<T, N> array(const Eigen::TensorMap<Eigen::Tensor<T, N, Eigen::RowMajor>>& t, const array_options& o = {}) {
  std::array<std::int64_t, N> s;
  for (int d = 0; d < N; ++d) s[d] = t.dimension(d);
  return detail::from_data<T, N>(t.data(), s, o);
}
// From row-major data and its shape.
template <dtype T, std::size_t N>
dndarray<T, int(N)> array(std::span<const T> data, const std::array<std::int64_t, N>& shape,
                          const array_options& o = {}) {
  // The value count is checked in from_data: on the root's data (root), for
  // every rank on every rank (is_split), or locally for global data.
  return detail::from_data<T, int(N)>(data.data(), shape, o, std::int64_t(data.size()));
}
// (Options are required here so that array(vector, {.split = 0}) stays unambiguous.)
template <dtype T, std::size_t N>
dndarray<T, int(N)> array(const std::vector<T>& data, const std::int64_t (&shape)[N], const array_options& o) {
  return array(std::span<const T>(data), std::to_array(shape), o);
}
// A 1-D array from a vector.
template <dtype T>
dndarray<T, 1> array(const std::vector<T>& data, const array_options& o = {}) {
  return array(std::span<const T>(data), std::array<std::int64_t, 1>{std::int64_t(data.size())}, o);
}

// Options of ember::wrap.
struct wrap_options {
  split_axis split = none;  // blocks joined along this axis; none: every rank holds a whole copy
  std::optional<communicator> comm = std::nullopt;  // default: ember::world()
};

// Embedding: an array over memory the host code owns, without a copy. Each rank
// passes its row-major local block and its shape; the blocks are joined along
// `split` (one allgather of the shapes: blocks that do not tile raise the same
// error on every rank). The memory must outlive every handle to the array and
// every expression reading it; writes through ember are writes into it.
template <dtype T, std::size_t N>
dndarray<T, int(N)> wrap(T* data, const std::array<std::int64_t, N>& local_shape, const wrap_options& o = {}) {
  const auto& c = detail::comm_of(o.comm);
  constexpr int M = int(N);
  layout lay = detail::joined_layout<T, M>(local_shape, o.split, c, -1, "wrap(split");
  const std::string what = "ember::wrap(split=" + detail::axis_str(o.split) + ")";
  // (rank + 1 of the last rank passing no memory for a non-empty block)
  const std::int64_t null_at = lay.local_size(c.rank()) > 0 && data == nullptr ? c.rank() + 1 : 0;
  if (const auto bad = c.allreduce(null_at, reduce_op::max); bad > 0)
    throw value_error(what + ": rank " + std::to_string(bad - 1) + " passes a null pointer for a non-empty block");
  std::shared_ptr<T[]> view(data, [](T*) {});  // not owned: the host code frees it
  return dndarray<T, M>(std::move(lay), c, std::move(view));
}
template <dtype T, std::size_t N>
dndarray<T, int(N)> wrap(T* data, const std::int64_t (&local_shape)[N], const wrap_options& o = {}) {
  return wrap<T, N>(data, std::to_array(local_shape), o);
}

}  // namespace ember
