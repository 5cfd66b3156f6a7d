// ember::fft: NumPy's numpy.fft over distributed arrays.
//
//   auto F = ember::fft::fft(a);                              // along the last axis, complex result
//   auto R = ember::fft::rfft2(u);                            // real input, last axis halved (n/2 + 1)
//   auto u2 = ember::fft::irfft2(R, {ny, nx});                // back, the lengths given
//   auto X = ember::fft::fftn(a * window, {0, 1, 2}, ember::fft::norm::ortho);
//   auto k = ember::fft::fftfreq(n, 1.0 / n);                 // sample frequencies
//
// Every transform is a node of the expression (nothing runs when it is built)
// and a `local_fft` step of the plan: the planner gives its operand a layout in
// which the transformed axis is local, so along the split axis of an N-D array
// the operand is first moved by a planned resplit to another axis (the
// transpose of a slab decomposition, exact bytes in EXPLAIN) and the result
// stays in that layout, saying so in its split; `ember::eval(e, {.split = k})`
// asks for another one (the move back is planned with the rest). An N-D
// transform is one line transform per axis (the last axis first, as NumPy,
// except that an array's split axis goes last: complex transforms commute),
// so fftn of an array split along one of its axes moves the data once. The
// elementwise work before a transform (`fft(a * window)`) is one fused pass
// into the transform's input; the work after (`abs(fft(a))`) reads its result.
//
// Local transforms are FFTW's (fft/fftw.cpp: one plan per block geometry,
// cached, FFTW_ESTIMATE unless `.measure = true`). Results are complex64 for
// float32 and complex64 input, complex128 otherwise (integers are transformed
// as float64, as NumPy does); irfft and hfft return the real type.
//
// Not yet: a 1-D transform of a vector split along its only axis gathers the
// vector on every rank first (a planned allgather; the result is replicated),
// where a distributed six-step transform would move it twice; a pencil
// decomposition for the arrays that a slab cannot spread over P ranks (fewer
// rows than ranks); the transforms on a GPU (host kernels only).
#pragma once

#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../dsl/eval.hpp"
#include "../dsl/factories.hpp"
#include "../dsl/shift.hpp"
#include "../sorting/line_op.hpp"
#include "transform.hpp"

namespace ember::fft {

// NumPy's norm=: which direction is scaled, by 1/n (ortho: both by 1/sqrt(n)).
enum class norm { backward, ortho, forward };

// The options of a 1-D transform (NumPy's n, axis, norm): `fft(a, {.n = 64, .axis = 0})`.
struct options {
  std::optional<std::int64_t> n = std::nullopt;  // the transform's length: input lines cropped or zero-padded
  int axis = -1;
  fft::norm norm = norm::backward;
  bool measure = false;  // FFTW_MEASURE: slower planning (once per shape), faster transforms
};

// Which of NumPy's 1-D transforms.
enum class which { fft, ifft, rfft, irfft, hfft, ihfft };

namespace detail {

using ember::fft_detail::line_transform;
using ember::fft_detail::transform_kind;

template <class T>
using precision_t = std::conditional_t<std::is_same_v<real_of_t<T>, float>, float, double>;

constexpr std::string_view name_of(which w) {
  switch (w) {
    case which::fft: return "fft";
    case which::ifft: return "ifft";
    case which::rfft: return "rfft";
    case which::irfft: return "irfft";
    case which::hfft: return "hfft";
    case which::ihfft: return "ihfft";
  }
  return "?";
}
constexpr bool real_output(which w) { return w == which::irfft || w == which::hfft; }
constexpr bool real_input(which w) { return w == which::rfft || w == which::ihfft; }
constexpr transform_kind kind_of(which w) {
  return real_input(w) ? transform_kind::r2c : real_output(w) ? transform_kind::c2r : transform_kind::c2c;
}
constexpr const char* norm_name(norm m) { return m == norm::ortho ? "ortho" : m == norm::forward ? "forward" : "backward"; }

// One transform along one axis, as a line operation (sorting/line_op.hpp):
// `length` is the result's length along the axis.
template <which W>
struct transform_op {
  static constexpr std::string_view name = name_of(W);
  static constexpr bool drops_axis = false, with_index = false;
  template <class T>
  using result = std::conditional_t<real_output(W), precision_t<T>, std::complex<precision_t<T>>>;
  std::int64_t length = 0;  // along the axis, out
  std::int64_t n = 0;       // the transform's length (NumPy's n)
  fft::norm norm = norm::backward;
  bool measure = false;

  void check(const index_vec&, int) const {}  // checked when built (fft/fft.hpp's make)
  std::string text() const {
    return "n=" + std::to_string(n) + (norm == norm::backward ? "" : std::string(", norm=") + norm_name(norm));
  }
  std::uint64_t key() const { return (std::uint64_t(n) * 4 + std::uint64_t(norm)) * 2 + measure; }

  line_transform spec() const {
    line_transform t;
    t.kind = kind_of(W);
    t.n = n;
    t.measure = measure;
    // NumPy: hfft is irfft of the conjugate, ihfft the conjugate of rfft, each
    // with the other direction's scaling
    const bool inverse = W == which::ifft || W == which::irfft || W == which::ihfft;
    t.inverse = W == which::ifft;
    t.conj_input = W == which::hfft;
    t.conj_output = W == which::ihfft;
    const double dn = double(n);
    t.scale = norm == norm::ortho ? 1 / std::sqrt(dn)
              : (norm == norm::backward) == inverse ? 1 / dn
                                                    : 1.0;
    return t;
  }

  // This rank's lines (the axis whole, any length) into the result's: cropped
  // or zero-padded to the transform's input and converted to its type on the
  // way (one copy; none when the operand already is what FFTW reads).
  template <class T>
  void run(const index_vec& ls, int axis, const T* in, result<T>* out) const {
    using R = precision_t<T>;
    using In = std::conditional_t<real_input(W), R, std::complex<R>>;
    const line_transform t = spec();
    const std::int64_t need = t.in_length();
    std::int64_t outer, len, inner;
    ember::detail::line_geometry(ls, axis, outer, len, inner);
    if constexpr (std::is_same_v<T, In>)
      if (len == need) return fft_detail::transform_lines<R>(t, ls, axis, in, out);
    index_vec s = ls;
    s[std::size_t(axis)] = need;
    const auto buf = ember::detail::allocate<In>(outer * need * inner);
    In* b = buf.get();
    const std::int64_t keep = std::min(len, need);
    for (std::int64_t o = 0; o < outer; ++o) {
      const T* src = in + o * len * inner;
      In* dst = b + o * need * inner;
      for (std::int64_t j = 0; j < keep * inner; ++j) dst[j] = In(src[j]);
      for (std::int64_t j = keep * inner; j < need * inner; ++j) dst[j] = In(0);
    }
    fft_detail::transform_lines<R>(t, s, axis, b, out);
  }
};

// The node of transform W along `axis` with NumPy's n (nullopt: the input's
// length; irfft and hfft: 2 (m - 1) for m input values).
template <which W, class A>
auto make(A&& a, std::optional<std::int64_t> n, int axis, norm nm, bool measure) {
  using T = typename expr::node_t<A>::value_type;
  static_assert(expr::node_t<A>::ndim >= 1, "ember::fft: the transforms need an array of at least one axis");
  if constexpr (real_input(W))
    static_assert(!is_complex_v<T>, "ember::fft::rfft and ihfft take real input (NumPy discards the imaginary part; "
                                    "take ember::real(a) first, or use fft)");
  auto x = expr::step_operand(expr::as_node(std::forward<A>(a)));
  const auto dd = x.shape_dims();
  const index_vec shape(dd.begin(), dd.end());
  const int ax = ember::detail::normalized_axis(axis, int(shape.size()), name_of(W).data());
  const std::int64_t m = shape[std::size_t(ax)];
  const std::int64_t len = n ? *n : real_output(W) ? 2 * (m - 1) : m;
  if (len < 1)
    throw value_error("ember::fft::" + std::string(name_of(W)) + ": invalid number of data points (" + std::to_string(len) +
                      ") along axis " + std::to_string(ax) + " of shape " + ember::detail::shape_str(shape) +
                      (n ? "" : " (n not given: the axis' length" + std::string(real_output(W) ? ", 2 (m - 1)" : "") + ")"));
  transform_op<W> op;
  op.n = len;
  op.norm = nm;
  op.measure = measure;
  op.length = kind_of(W) == transform_kind::r2c ? len / 2 + 1 : len;
  return expr::line_node<transform_op<W>, decltype(x)>(std::move(x), ax, std::move(op));
}

template <class V, std::size_t K>
std::array<V, K - 1> drop_last(const std::array<V, K>& v) {
  std::array<V, K - 1> r{};
  for (std::size_t i = 0; i + 1 < K; ++i) r[i] = v[i];
  return r;
}

template <std::size_t K>
std::array<std::int64_t, K> unset_lengths() {
  std::array<std::int64_t, K> s;
  s.fill(-1);
  return s;
}
template <int N>
std::array<int, std::size_t(N)> all_axes() {
  std::array<int, std::size_t(N)> a;
  for (int i = 0; i < N; ++i) a[std::size_t(i)] = i;
  return a;
}
template <class V, std::size_t K>
std::array<V, K> to_array(const V (&v)[K]) {
  std::array<V, K> r;
  for (std::size_t i = 0; i < K; ++i) r[i] = v[i];
  return r;
}

// NumPy's N-D transforms: one 1-D transform per axis, the last axis first (rfftn:
// rfft along the last axis, then fft along the others; irfftn: ifft along all
// but the last, then irfft along it). s[i] < 0: the axis' length.
template <which W, std::size_t I, std::size_t K, class X>
auto along_axes(X&& x, const std::array<std::int64_t, K>& s, const std::array<int, K>& axes, norm nm) {
  if constexpr (I == 0) {
    return std::forward<X>(x);
  } else {
    auto n = s[I - 1] < 0 ? std::nullopt : std::optional<std::int64_t>(s[I - 1]);
    return along_axes<W, I - 1>(make<W>(std::forward<X>(x), n, axes[I - 1], nm, false), s, axes, nm);
  }
}
template <which W, std::size_t I, std::size_t K, class X>
auto along_axes_first(X&& x, const std::array<std::int64_t, K>& s, const std::array<int, K>& axes, norm nm) {
  if constexpr (I == K) {
    return std::forward<X>(x);
  } else {
    auto n = s[I] < 0 ? std::nullopt : std::optional<std::int64_t>(s[I]);
    return along_axes_first<W, I + 1>(make<W>(std::forward<X>(x), n, axes[I], nm, false), s, axes, nm);
  }
}

// The split axis of an array operand (an expression's is the planner's choice).
template <class A>
std::optional<int> operand_split(const A& a) {
  if constexpr (requires { a.split(); }) return a.split();
  else if constexpr (requires { a.a.split(); }) return a.a.split();
  else return std::nullopt;
}
// Complex transforms along different axes commute: among the positions [lo, hi)
// of (s, axes), the ones along the operand's split axis move to where they run
// last (`last_at_front`: along_axes runs the highest position first), so that
// the data moves once, after the local axes are done (with NumPy's fixed order
// an array split along its last axis would move twice).
template <std::size_t K>
void split_axis_last(std::array<std::int64_t, K>& s, std::array<int, K>& axes, std::size_t lo, std::size_t hi, int ndim,
                     std::optional<int> split, bool last_at_front) {
  if (!split) return;
  std::vector<std::pair<std::int64_t, int>> on, off;
  for (std::size_t i = lo; i < hi; ++i) {
    const int ax = axes[i] < 0 ? axes[i] + ndim : axes[i];
    (ax == *split ? on : off).emplace_back(s[i], axes[i]);
  }
  auto& first = last_at_front ? on : off;
  auto& second = last_at_front ? off : on;
  std::size_t i = lo;
  for (auto* part : {&first, &second})
    for (const auto& [n, ax] : *part) s[i] = n, axes[i++] = ax;
}

template <which W, std::size_t K, class A>
auto nd(A&& a, std::array<std::int64_t, K> s, std::array<int, K> axes, norm nm) {
  static_assert(K >= 1, "ember::fft: give at least one axis");
  constexpr int N = expr::node_t<A>::ndim;
  const auto sp = operand_split(a);
  if constexpr (W == which::rfft) split_axis_last(s, axes, 0, K - 1, N, sp, true);
  else if constexpr (W == which::irfft) split_axis_last(s, axes, 0, K - 1, N, sp, false);
  else split_axis_last(s, axes, 0, K, N, sp, true);
  if constexpr (W == which::rfft) {
    auto last = make<which::rfft>(std::forward<A>(a), s[K - 1] < 0 ? std::nullopt : std::optional<std::int64_t>(s[K - 1]),
                                  axes[K - 1], nm, false);
    return along_axes<which::fft, K - 1>(std::move(last), s, axes, nm);
  } else if constexpr (W == which::irfft) {
    auto rest = along_axes_first<which::ifft, 0>(std::forward<A>(a), drop_last(s), drop_last(axes), nm);
    return make<which::irfft>(std::move(rest), s[K - 1] < 0 ? std::nullopt : std::optional<std::int64_t>(s[K - 1]),
                              axes[K - 1], nm, false);
  } else {
    return along_axes<W, K>(std::forward<A>(a), s, axes, nm);
  }
}

}  // namespace detail

// ---- 1-D: NumPy's fft(a, n=None, axis=-1, norm=None) and its kin ----
#define EMBER_FFT_1D(NAME)                                                                                      \
  template <array_like A>                                                                                       \
  auto NAME(A&& a, std::optional<std::int64_t> n = std::nullopt, int axis = -1, fft::norm nm = norm::backward) { \
    return detail::make<which::NAME>(std::forward<A>(a), n, axis, nm, false);                                   \
  }                                                                                                             \
  template <array_like A>                                                                                       \
  auto NAME(A&& a, const options& o) {                                                                          \
    return detail::make<which::NAME>(std::forward<A>(a), o.n, o.axis, o.norm, o.measure);                       \
  }
EMBER_FFT_1D(fft)
EMBER_FFT_1D(ifft)
EMBER_FFT_1D(rfft)
EMBER_FFT_1D(irfft)
EMBER_FFT_1D(hfft)
EMBER_FFT_1D(ihfft)
#undef EMBER_FFT_1D

// ---- N-D: fftn(a, s=None, axes=None, norm=None), fft2 over the last two axes ----
// fftn(a): every axis; fftn(a, {0, 2}): those axes; fftn(a, {64, 64}, {0, 1}):
// with their lengths.
#define EMBER_FFT_ND(NAME, W)                                                                                        \
  template <array_like A>                                                                                            \
  auto NAME(A&& a, fft::norm nm = norm::backward) {                                                                  \
    constexpr int N = expr::node_t<A>::ndim;                                                                         \
    return detail::nd<W>(std::forward<A>(a), detail::unset_lengths<std::size_t(N)>(), detail::all_axes<N>(), nm);    \
  }                                                                                                                  \
  template <array_like A, std::size_t K>                                                                             \
  auto NAME(A&& a, const int (&axes)[K], fft::norm nm = norm::backward) {                                            \
    return detail::nd<W>(std::forward<A>(a), detail::unset_lengths<K>(), detail::to_array(axes), nm);               \
  }                                                                                                                  \
  template <array_like A, std::size_t K>                                                                             \
  auto NAME(A&& a, const std::int64_t (&s)[K], const int (&axes)[K], fft::norm nm = norm::backward) {                \
    return detail::nd<W>(std::forward<A>(a), detail::to_array(s), detail::to_array(axes), nm);                      \
  }
EMBER_FFT_ND(fftn, which::fft)
EMBER_FFT_ND(ifftn, which::ifft)
EMBER_FFT_ND(rfftn, which::rfft)
EMBER_FFT_ND(irfftn, which::irfft)
#undef EMBER_FFT_ND

// fft2(a, s=None, axes=(-2, -1), norm=None): fftn over the last two axes.
#define EMBER_FFT_2D(NAME, ND)                                                                                 \
  template <array_like A>                                                                                      \
  auto NAME(A&& a, fft::norm nm = norm::backward) {                                                            \
    return ND(std::forward<A>(a), {-2, -1}, nm);                                                               \
  }                                                                                                            \
  template <array_like A>                                                                                      \
  auto NAME(A&& a, const std::int64_t (&s)[2], const int (&axes)[2] = {-2, -1}, fft::norm nm = norm::backward) { \
    return ND(std::forward<A>(a), s, axes, nm);                                                                \
  }
EMBER_FFT_2D(fft2, fftn)
EMBER_FFT_2D(ifft2, ifftn)
EMBER_FFT_2D(rfft2, rfftn)
EMBER_FFT_2D(irfft2, irfftn)
#undef EMBER_FFT_2D

// ---- helpers: fftfreq(n, d=1.0), rfftfreq, fftshift, ifftshift ----
// The sample frequencies of an n-point transform with spacing d: [0, 1, ...,
// (n-1)//2, -(n//2), ..., -1] / (d n); a new array (factory options: split,
// communicator; replicated by default).
inline dndarray<double, 1> fftfreq(std::int64_t n, double d = 1.0, const factory_options& o = {}) {
  if (n < 1) throw value_error("ember::fft::fftfreq: n = " + std::to_string(n) + " must be positive");
  auto f = empty<double>({n}, o);
  const std::int64_t off = f.layout().split() ? f.layout().offset(f.comm().rank()) : 0;
  double* p = f.ldata();
  const double scale = 1.0 / (d * double(n));
  for (std::int64_t i = 0; i < f.lnumel(); ++i) {
    const std::int64_t k = off + i;
    p[i] = double(k <= (n - 1) / 2 ? k : k - n) * scale;
  }
  return f;
}
// [0, 1, ..., n//2] / (d n): rfft's frequencies.
inline dndarray<double, 1> rfftfreq(std::int64_t n, double d = 1.0, const factory_options& o = {}) {
  if (n < 1) throw value_error("ember::fft::rfftfreq: n = " + std::to_string(n) + " must be positive");
  auto f = empty<double>({n / 2 + 1}, o);
  const std::int64_t off = f.layout().split() ? f.layout().offset(f.comm().rank()) : 0;
  double* p = f.ldata();
  for (std::int64_t i = 0; i < f.lnumel(); ++i) p[i] = double(off + i) / (d * double(n));
  return f;
}
// The zero frequency moved to the middle (np.fft.fftshift): a roll by n//2
// along each axis (every axis by default); ifftshift rolls back by -(n//2).
template <dtype T, int N>
dndarray<T, N> fftshift(const dndarray<T, N>& x, std::initializer_list<int> axes = {}) {
  dndarray<T, N> r = x;
  auto one = [&](int ax) { r = roll(r, r.shape()[std::size_t(ember::detail::normalized_axis(ax, N, "fftshift"))] / 2, ax); };
  if (axes.size() == 0)
    for (int ax = 0; ax < N; ++ax) one(ax);
  else
    for (int ax : axes) one(ax);
  return r;
}
template <dtype T, int N>
dndarray<T, N> ifftshift(const dndarray<T, N>& x, std::initializer_list<int> axes = {}) {
  dndarray<T, N> r = x;
  auto one = [&](int ax) { r = roll(r, -(r.shape()[std::size_t(ember::detail::normalized_axis(ax, N, "ifftshift"))] / 2), ax); };
  if (axes.size() == 0)
    for (int ax = 0; ax < N; ++ax) one(ax);
  else
    for (int ax : axes) one(ax);
  return r;
}

// FFTW plans cached on this rank (a shape transformed twice plans once).
inline std::int64_t cached_plans() { return fft_detail::cached_plans(); }

}  // namespace ember::fft
