// The local half of ember::fft: every line along one axis of a rank's
// row-major block transformed by FFTW (fft/fftw.cpp), with NumPy's n (input
// lines cropped or zero-padded), its norm as a scale, and hfft/ihfft's
// conjugates. No MPI and no expression here: fft/fft.hpp makes a transform a
// node of the expression and a `local_fft` step of the plan, whose operand the
// planner gives a layout in which the axis is local (a planned resplit when it
// is split along it).
//
// FFTW plans are made once per (kind, precision, length, strides, batch,
// alignment, in place) and reused with FFTW's new-array execute: a loop
// transforming same-shaped blocks plans once. FFTW_ESTIMATE by default (planning
// costs microseconds and reads nothing); FFTW_MEASURE when asked
// (`.measure = true`: FFTW times candidate algorithms on scratch arrays the
// first time a shape is seen, seconds for large ones, and its plan is faster).
#pragma once

#include <cstdint>
#include <string>

#include "../runtime/layout.hpp"

namespace ember::fft_detail {

enum class transform_kind : std::uint8_t {
  c2c,  // complex -> complex, n values each way
  r2c,  // real n -> complex n/2 + 1 (rfft)
  c2r,  // complex n/2 + 1 -> real n (irfft)
};

struct line_transform {
  transform_kind kind = transform_kind::c2c;
  bool inverse = false;    // c2c: FFTW's backward sign (+1 in the exponent)
  std::int64_t n = 0;      // the transform length: complex n (c2c), real n (r2c, c2r)
  double scale = 1;        // multiplies every output value (NumPy's norm)
  bool conj_input = false;   // hfft: c2r of the conjugate
  bool conj_output = false;  // ihfft: the conjugate of r2c
  bool measure = false;      // FFTW_MEASURE instead of FFTW_ESTIMATE

  // values per line read (complex for c2c and c2r) and written
  std::int64_t in_length() const { return kind == transform_kind::c2r ? n / 2 + 1 : n; }
  std::int64_t out_length() const { return kind == transform_kind::r2c ? n / 2 + 1 : n; }
};

// Transforms every line along `axis` of a row-major block of shape `shape`
// whose axis has the transform's in_length(): `in` holds complex<R> values
// (c2c, c2r) or R values (r2c), `out` (shape with out_length() along the axis)
// complex<R> (c2c, r2c) or R (c2r). R is float or double. `in` is not written
// (c2r transforms a copy: FFTW's c2r overwrites its input).
template <class R>
void transform_lines(const line_transform& t, const index_vec& shape, int axis, const void* in, void* out);

// FFTW plans held (for tests and the bench: a shape seen twice plans once).
std::int64_t cached_plans();

}  // namespace ember::fft_detail
