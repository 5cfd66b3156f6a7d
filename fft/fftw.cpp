// fft/transform.hpp's lines by FFTW's guru interface: one plan covers a block's
// every line (the lines along `axis` of an (outer, length, inner) block are two
// "howmany" dimensions), made once per geometry and alignment and run on new
// arrays with fftw_execute_dft and its r2c/c2r twins, which are thread-safe;
// planning is not, so the cache holds a mutex.
#include "transform.hpp"

#include <fftw3.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <vector>

#include "../runtime/error.hpp"

namespace ember::fft_detail {
namespace {

template <class R>
struct fftw;
template <>
struct fftw<double> {
  using plan_t = fftw_plan;
  using cpx = fftw_complex;
  static plan_t dft(const fftw_iodim64* d, const fftw_iodim64* h, void* in, void* out, int sign, unsigned f) {
    return fftw_plan_guru64_dft(1, d, 2, h, static_cast<cpx*>(in), static_cast<cpx*>(out), sign, f);
  }
  static plan_t r2c(const fftw_iodim64* d, const fftw_iodim64* h, void* in, void* out, unsigned f) {
    return fftw_plan_guru64_dft_r2c(1, d, 2, h, static_cast<double*>(in), static_cast<cpx*>(out), f);
  }
  static plan_t c2r(const fftw_iodim64* d, const fftw_iodim64* h, void* in, void* out, unsigned f) {
    return fftw_plan_guru64_dft_c2r(1, d, 2, h, static_cast<cpx*>(in), static_cast<double*>(out), f);
  }
  static void run(transform_kind k, plan_t p, const void* in, void* out) {
    void* i = const_cast<void*>(in);  // FFTW's signatures are not const; c2r's input is our copy
    if (k == transform_kind::c2c) fftw_execute_dft(p, static_cast<cpx*>(i), static_cast<cpx*>(out));
    else if (k == transform_kind::r2c) fftw_execute_dft_r2c(p, static_cast<double*>(i), static_cast<cpx*>(out));
    else fftw_execute_dft_c2r(p, static_cast<cpx*>(i), static_cast<double*>(out));
  }
  static int alignment(const void* p) { return fftw_alignment_of(static_cast<double*>(const_cast<void*>(p))); }
  static void* alloc(std::size_t b) { return fftw_malloc(b); }
  static void release(void* p) { fftw_free(p); }
  static void destroy(plan_t p) { fftw_destroy_plan(p); }
};
template <>
struct fftw<float> {
  using plan_t = fftwf_plan;
  using cpx = fftwf_complex;
  static plan_t dft(const fftw_iodim64* d, const fftw_iodim64* h, void* in, void* out, int sign, unsigned f) {
    return fftwf_plan_guru64_dft(1, d, 2, h, static_cast<cpx*>(in), static_cast<cpx*>(out), sign, f);
  }
  static plan_t r2c(const fftw_iodim64* d, const fftw_iodim64* h, void* in, void* out, unsigned f) {
    return fftwf_plan_guru64_dft_r2c(1, d, 2, h, static_cast<float*>(in), static_cast<cpx*>(out), f);
  }
  static plan_t c2r(const fftw_iodim64* d, const fftw_iodim64* h, void* in, void* out, unsigned f) {
    return fftwf_plan_guru64_dft_c2r(1, d, 2, h, static_cast<cpx*>(in), static_cast<float*>(out), f);
  }
  static void run(transform_kind k, plan_t p, const void* in, void* out) {
    void* i = const_cast<void*>(in);
    if (k == transform_kind::c2c) fftwf_execute_dft(p, static_cast<cpx*>(i), static_cast<cpx*>(out));
    else if (k == transform_kind::r2c) fftwf_execute_dft_r2c(p, static_cast<float*>(i), static_cast<cpx*>(out));
    else fftwf_execute_dft_c2r(p, static_cast<cpx*>(i), static_cast<float*>(out));
  }
  static int alignment(const void* p) { return fftwf_alignment_of(static_cast<float*>(const_cast<void*>(p))); }
  static void* alloc(std::size_t b) { return fftwf_malloc(b); }
  static void release(void* p) { fftwf_free(p); }
  static void destroy(plan_t p) { fftwf_destroy_plan(p); }
};

// What a plan depends on: FFTW's new-array execute needs the same geometry,
// the same alignment (SIMD codelets) and the same in-place-ness.
using plan_key = std::tuple<int, int, bool, std::int64_t, std::int64_t, std::int64_t, int, int, bool>;

template <class R>
struct plan_cache {
  std::mutex m;
  std::map<plan_key, typename fftw<R>::plan_t> plans;
  ~plan_cache() {
    for (auto& [k, p] : plans) fftw<R>::destroy(p);
  }
};
template <class R>
plan_cache<R>& cache() {
  static plan_cache<R> c;
  return c;
}

std::size_t elem_size(transform_kind k, bool output, std::size_t real) {
  const bool complex_values = k == transform_kind::c2c || (k == transform_kind::r2c) == output;
  return complex_values ? 2 * real : real;
}

template <class R>
typename fftw<R>::plan_t plan_for(const line_transform& t, std::int64_t outer, std::int64_t inner, const void* in,
                                  void* out) {
  using F = fftw<R>;
  const std::int64_t li = t.in_length(), lo = t.out_length();
  const plan_key key{int(t.kind), int(sizeof(R)), t.inverse, t.n, outer, inner, F::alignment(in), F::alignment(out),
                     t.measure};
  auto& c = cache<R>();
  std::lock_guard<std::mutex> lock(c.m);
  if (auto it = c.plans.find(key); it != c.plans.end()) return it->second;
  const fftw_iodim64 dim{t.n, inner, inner};
  const fftw_iodim64 many[2] = {{outer, li * inner, lo * inner}, {inner, 1, 1}};
  // FFTW_MEASURE runs transforms while planning: on scratch arrays (aligned
  // as fftw_malloc aligns), never the caller's; its plan then runs on arrays
  // of that alignment only, so misaligned ones get an estimated plan.
  const bool measure = t.measure && F::alignment(in) == 0 && F::alignment(out) == 0;
  const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
  void* pin = const_cast<void*>(in);
  void* pout = out;
  std::unique_ptr<void, void (*)(void*)> si(nullptr, F::release), so(nullptr, F::release);
  if (measure) {
    si.reset(F::alloc(std::size_t(outer * li * inner) * elem_size(t.kind, false, sizeof(R))));
    so.reset(F::alloc(std::size_t(outer * lo * inner) * elem_size(t.kind, true, sizeof(R))));
    pin = si.get();
    pout = so.get();
  }
  typename F::plan_t p = t.kind == transform_kind::c2c ? F::dft(&dim, many, pin, pout, t.inverse ? FFTW_BACKWARD : FFTW_FORWARD, flags)
                         : t.kind == transform_kind::r2c ? F::r2c(&dim, many, pin, pout, flags)
                                                         : F::c2r(&dim, many, pin, pout, flags | FFTW_DESTROY_INPUT);
  if (!p)
    throw error("ember::fft: FFTW could not plan a transform of length " + std::to_string(t.n) + " over " +
                std::to_string(outer) + " x " + std::to_string(inner) + " lines");
  c.plans.emplace(key, p);
  return p;
}

// Lines whose values lie `inner` apart (an axis that is not the last): a few
// columns at a time gathered into contiguous lines, transformed by one plan,
// and scattered back, each block staying in cache. FFTW's own plans for such
// strides ran 2-3x slower than the same transforms of contiguous lines here,
// and by how much depended on what had been planned before.
template <class R>
void strided_lines(const line_transform& t, std::int64_t outer, std::int64_t inner, const void* in, void* out) {
  using C = std::complex<R>;
  const std::int64_t li = t.in_length(), lo = t.out_length();
  const std::size_t ei = elem_size(t.kind, false, sizeof(R)), eo = elem_size(t.kind, true, sizeof(R));
  // columns per block: about 256 KiB of input lines, a multiple of 4
  const std::int64_t width = std::clamp<std::int64_t>((std::int64_t(1) << 18) / (li * std::int64_t(ei)) / 4 * 4, 4, 64);
  const std::int64_t b = std::min(width, inner);
  std::unique_ptr<void, void (*)(void*)> bin(fftw<R>::alloc(std::size_t(b * li) * ei), fftw<R>::release);
  std::unique_ptr<void, void (*)(void*)> bout(fftw<R>::alloc(std::size_t(b * lo) * eo), fftw<R>::release);
  // typed copies (complex or real elements), so that the compiler moves whole values
  auto blocks = [&](auto* in_t, auto* out_t) {
    using I = std::remove_const_t<std::remove_pointer_t<decltype(in_t)>>;
    using O = std::remove_pointer_t<decltype(out_t)>;
    I* bi = static_cast<I*>(bin.get());
    O* bo = static_cast<O*>(bout.get());
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t j0 = 0; j0 < inner; j0 += b) {
        const std::int64_t w = std::min(b, inner - j0);
        for (std::int64_t k = 0; k < li; ++k) {  // gather: line c of the block is column j0 + c
          const I* row = in_t + (o * li + k) * inner + j0;
          for (std::int64_t c = 0; c < w; ++c) bi[c * li + k] = row[c];
        }
        fftw<R>::run(t.kind, plan_for<R>(t, w, 1, bi, bo), bi, bo);
        for (std::int64_t k = 0; k < lo; ++k) {
          O* row = out_t + (o * lo + k) * inner + j0;
          for (std::int64_t c = 0; c < w; ++c) row[c] = bo[c * lo + k];
        }
      }
  };
  if (t.kind == transform_kind::c2c) blocks(static_cast<const C*>(in), static_cast<C*>(out));
  else if (t.kind == transform_kind::r2c) blocks(static_cast<const R*>(in), static_cast<C*>(out));
  else blocks(static_cast<const C*>(in), static_cast<R*>(out));
}

}  // namespace

template <class R>
void transform_lines(const line_transform& t, const index_vec& shape, int axis, const void* in, void* out) {
  using C = std::complex<R>;
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[std::size_t(d)];
  for (int d = axis + 1; d < int(shape.size()); ++d) inner *= shape[std::size_t(d)];
  const std::int64_t li = t.in_length(), lo = t.out_length();
  if (shape[std::size_t(axis)] != li)
    throw error("ember::fft: internal: lines of " + std::to_string(shape[std::size_t(axis)]) + " values for a transform reading " +
                std::to_string(li));
  const std::int64_t total_out = outer * lo * inner;
  if (total_out == 0) return;
  // c2r overwrites its input: it transforms a copy (conjugated for hfft)
  std::unique_ptr<void, void (*)(void*)> copy(nullptr, fftw<R>::release);
  const void* src = in;
  if (t.kind == transform_kind::c2r) {
    const std::int64_t m = outer * li * inner;
    copy.reset(fftw<R>::alloc(std::size_t(m) * sizeof(C)));
    C* q = static_cast<C*>(copy.get());
    const C* p = static_cast<const C*>(in);
    if (t.conj_input)
      for (std::int64_t i = 0; i < m; ++i) q[i] = std::conj(p[i]);
    else
      std::memcpy(q, p, std::size_t(m) * sizeof(C));
    src = q;
  }
  if (inner == 1 || li * inner * std::int64_t(sizeof(C)) <= (std::int64_t(1) << 18)) {
    fftw<R>::run(t.kind, plan_for<R>(t, outer, inner, src, out), src, out);
  } else {
    strided_lines<R>(t, outer, inner, src, out);
  }
  if (t.scale != 1 || t.conj_output) {
    const R s = R(t.scale);
    if (t.kind == transform_kind::c2r) {
      R* o = static_cast<R*>(out);
      for (std::int64_t i = 0; i < total_out; ++i) o[i] *= s;
    } else {
      C* o = static_cast<C*>(out);
      if (t.conj_output)
        for (std::int64_t i = 0; i < total_out; ++i) o[i] = std::conj(o[i]) * s;
      else
        for (std::int64_t i = 0; i < total_out; ++i) o[i] *= s;
    }
  }
}

template void transform_lines<float>(const line_transform&, const index_vec&, int, const void*, void*);
template void transform_lines<double>(const line_transform&, const index_vec&, int, const void*, void*);

std::int64_t cached_plans() {
  std::int64_t n = 0;
  {
    std::lock_guard<std::mutex> l(cache<double>().m);
    n += std::int64_t(cache<double>().plans.size());
  }
  std::lock_guard<std::mutex> l(cache<float>().m);
  return n + std::int64_t(cache<float>().plans.size());
}

}  // namespace ember::fft_detail
