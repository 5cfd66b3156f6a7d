#include "scan_kernel.hpp"

#include <algorithm>
#include <complex>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

namespace ember {

const char* name(scan_kind k) {
  switch (k) {
    case scan_kind::sum: return "cumsum";
    case scan_kind::prod: return "cumprod";
    case scan_kind::max: return "cummax";
    case scan_kind::min: return "cummin";
  }
  return "?";
}

using namespace scan_detail;

namespace {

bool split_along(const layout& l, int axis) { return l.split() && *l.split() == axis && l.nranks() > 1; }

// Elements of one slice: the global shape without `axis` (the same on every rank
// when `axis` is split).
std::int64_t slice_elems(const layout& l, int axis) {
  std::int64_t n = 1;
  for (int d = 0; d < l.ndim(); ++d)
    if (d != axis) n *= l.shape()[std::size_t(d)];
  return n;
}

// The block as (outer, n, inner): n along the axis, inner contiguous.
struct block_shape {
  std::int64_t outer = 1, n = 0, inner = 1;
};
block_shape shape_of(const layout& l, int axis, int rank) {
  const index_vec ls = l.lshape(rank);
  block_shape b;
  b.n = ls[std::size_t(axis)];
  for (int d = 0; d < axis; ++d) b.outer *= ls[std::size_t(d)];
  for (int d = axis + 1; d < int(ls.size()); ++d) b.inner *= ls[std::size_t(d)];
  return b;
}

// totals[o * inner + j] = f over i of in[(o * n + i) * inner + j] (identity when n == 0)
template <class T, class F>
void totals(const T* in, block_shape b, T id, T* t, F f) {
  if (b.inner == 1) {  // one value per line: four independent chains, not one latency-bound chain
    for (std::int64_t o = 0; o < b.outer; ++o) {
      const T* row = in + o * b.n;
      t[o] = combine_run([row](std::int64_t i) { return row[i]; }, b.n, id, id, f);
    }
    return;
  }
  for (std::int64_t o = 0; o < b.outer; ++o) {
    T* to = t + o * b.inner;
    std::fill_n(to, b.inner, id);
    for (std::int64_t i = 0; i < b.n; ++i) {
      const T* row = in + (o * b.n + i) * b.inner;
      for (std::int64_t j = 0; j < b.inner; ++j) to[j] = f(to[j], row[j]);
    }
  }
}

// out = scan of in along the axis, each line starting from carry (or from its
// first element when carry is null).
template <class T, class F>
void scan_block(const T* in, T* out, block_shape b, const T* carry, F f) {
  if (b.n == 0) return;
  for (std::int64_t o = 0; o < b.outer; ++o) {
    const T* src = in + o * b.n * b.inner;
    T* dst = out + o * b.n * b.inner;
    if (b.inner == 1) {  // along the last axis: one running value
      T acc = carry ? f(carry[o], src[0]) : src[0];
      dst[0] = acc;
      for (std::int64_t i = 1; i < b.n; ++i) dst[i] = acc = f(acc, src[i]);
      continue;
    }
    if (carry)
      for (std::int64_t j = 0; j < b.inner; ++j) dst[j] = f(carry[o * b.inner + j], src[j]);
    else
      std::copy_n(src, b.inner, dst);
    for (std::int64_t i = 1; i < b.n; ++i) {
      const T* prev = dst + (i - 1) * b.inner;
      const T* x = src + i * b.inner;
      T* y = dst + i * b.inner;
      for (std::int64_t j = 0; j < b.inner; ++j) y[j] = f(prev[j], x[j]);
    }
  }
}

// (bool: MPI defines only logical operations on MPI_C_BOOL; + and max are or,
// * and min are and, as in NumPy's bool arithmetic)
template <class T>
reduce_op reduce_of(scan_kind k) {
  if constexpr (std::is_same_v<T, bool>) return k == scan_kind::sum || k == scan_kind::max ? reduce_op::lor : reduce_op::land;
  switch (k) {
    case scan_kind::sum: return reduce_op::sum;
    case scan_kind::prod: return reduce_op::prod;
    case scan_kind::max: return reduce_op::max;
    case scan_kind::min: return reduce_op::min;
  }
  return reduce_op::sum;
}

// carry = the exclusive scan of every rank's totals `t` (s elements), in rank
// order; the identity on rank 0 (MPI leaves rank 0's undefined).
template <class T>
void exscan_totals(scan_kind k, const communicator& comm, const T* t, T* carry, std::int64_t s) {
  std::fill_n(carry, s, identity<T>(k));
  const std::int64_t step = detail::chunk_elems(sizeof(T));
  for (std::int64_t off = 0; off < s; off += step) {
    const std::int64_t c = std::min(step, s - off);
    detail::check_mpi(MPI_Exscan(t + off, carry + off, int(c), detail::mpi_type<T>(), detail::mpi_op_for<T>(reduce_of<T>(k)),
                                 comm.native()),
                      "MPI_Exscan");
    if (comm.rank() + 1 < comm.size()) comm.count({c * std::int64_t(sizeof(T)), 1});
  }
  if (comm.rank() == 0) std::fill_n(carry, s, identity<T>(k));
}

template <class T, class F>
void run(scan_kind k, const layout& l, int axis, const communicator& comm, const T* in, T* out, F f) {
  const int r = comm.rank();
  const block_shape b = shape_of(l, axis, r);
  if (!split_along(l, axis)) return scan_block(in, out, b, static_cast<const T*>(nullptr), f);
  const std::int64_t s = slice_elems(l, axis);
  // (arrays, not std::vector: vector<bool> has no data())
  std::unique_ptr<T[]> t(new T[std::size_t(s)]), carry(new T[std::size_t(s)]);
  totals(in, b, identity<T>(k), t.get(), f);
  exscan_totals(k, comm, t.get(), carry.get(), s);
  scan_block(in, out, b, r == 0 ? nullptr : carry.get(), f);
}

}  // namespace

traffic scan_traffic(const layout& l, int axis, std::int64_t elem, int rank) {
  if (!split_along(l, axis) || rank + 1 >= l.nranks()) return {};
  const std::int64_t s = slice_elems(l, axis), step = detail::chunk_elems(std::size_t(elem));
  traffic t;
  for (std::int64_t off = 0; off < s; off += step) t += {std::min(step, s - off) * elem, 1};
  return t;
}

std::vector<traffic> scan_traffic_all(const layout& l, int axis, std::int64_t elem) {
  std::vector<traffic> out(std::size_t(l.nranks()));
  if (!split_along(l, axis)) return out;
  const traffic t = scan_traffic(l, axis, elem, 0);
  for (int r = 0; r + 1 < l.nranks(); ++r) out[std::size_t(r)] = t;
  return out;
}

namespace {
void check_axis(scan_kind k, const layout& l, int axis) {
  if (axis < 0 || axis >= l.ndim())
    throw axis_error("ember::" + std::string(name(k)) + ": axis " + std::to_string(axis) + " is out of bounds for shape " +
                     detail::shape_str(l.shape()));
}
}  // namespace

template <class T>
void run_scan(scan_kind k, const layout& l, int axis, const communicator& comm, const T* in, T* out) {
  check_axis(k, l, axis);
  with_combine<T>(k, [&](auto f) { run(k, l, axis, comm, in, out, f); });
}

template <class T>
scan_pass<T>::scan_pass(scan_kind k, const layout& l, int axis, int rank) : k_(k), l_(l), axis_(axis) {
  check_axis(k, l, axis);
  const block_shape b = shape_of(l, axis, rank);
  n_ = b.n;
  inner_ = b.inner;
  split_ = split_along(l, axis);
  if (split_) {
    const std::int64_t s = slice_elems(l, axis);
    totals_.reset(new T[std::size_t(s)]);
    carry_.reset(new T[std::size_t(s)]);
    std::fill_n(totals_.get(), s, identity<T>(k));
  }
}

// A chunk never crosses a line (inner == 1) or a row of `inner` elements
// (inner > 1) once split at those boundaries: each run below lies in one.
template <class T>
void scan_pass<T>::add_totals(std::int64_t pos, const T* v, std::int64_t len) {
  with_combine<T>(k_, [&](auto f) {
    while (len > 0) {
      if (inner_ == 1) {  // the line o, elements i.. of it
        const std::int64_t o = pos / n_, run = std::min(len, n_ - pos % n_);
        totals_[std::size_t(o)] =
            combine_run([v](std::int64_t q) { return v[q]; }, run, totals_[std::size_t(o)], identity<T>(k_), f);
        pos += run, v += run, len -= run;
      } else {  // row i of block o, elements j.. of it
        const std::int64_t o = pos / (n_ * inner_), j = pos % inner_, run = std::min(len, inner_ - j);
        T* t = totals_.get() + o * inner_ + j;
        for (std::int64_t q = 0; q < run; ++q) t[q] = f(t[q], v[q]);
        pos += run, v += run, len -= run;
      }
    }
  });
}

template <class T>
void scan_pass<T>::carry(const communicator& comm) {
  if (!split_) return;
  exscan_totals(k_, comm, totals_.get(), carry_.get(), slice_elems(l_, axis_));
  have_carry_ = comm.rank() > 0;
}

template <class T>
void scan_pass<T>::scan_chunk(std::int64_t pos, const T* v, std::int64_t len, T* y) {
  if (!row_) row_.reset(new T[std::size_t(std::max<std::int64_t>(inner_, 1))]);
  with_combine<T>(k_, [&](auto f) {
    const T* c = have_carry_ ? carry_.get() : nullptr;
    T* const prev = row_.get();
    while (len > 0) {
      if (inner_ == 1) {
        const std::int64_t o = pos / n_, i = pos % n_, run = std::min(len, n_ - i);
        T acc = i > 0 ? prev[0] : c ? f(c[o], v[0]) : v[0];
        std::int64_t q = i > 0 ? 0 : 1;
        if (i == 0) y[0] = acc;
        for (; q < run; ++q) y[q] = acc = f(acc, v[q]);
        prev[0] = acc;
        pos += run, v += run, y += run, len -= run;
      } else {
        const std::int64_t o = pos / (n_ * inner_), i = (pos / inner_) % n_, j = pos % inner_,
                           run = std::min(len, inner_ - j);
        T* pr = prev + j;
        if (i > 0)
          for (std::int64_t q = 0; q < run; ++q) y[q] = pr[q] = f(pr[q], v[q]);
        else if (c)
          for (std::int64_t q = 0; q < run; ++q) y[q] = pr[q] = f(c[o * inner_ + j + q], v[q]);
        else
          for (std::int64_t q = 0; q < run; ++q) y[q] = pr[q] = v[q];
        pos += run, v += run, y += run, len -= run;
      }
    }
  });
}

#define EMBER_SCAN(T) \
  template void run_scan<T>(scan_kind, const layout&, int, const communicator&, const T*, T*); \
  template class scan_pass<T>;
EMBER_SCAN(bool)
EMBER_SCAN(float)
EMBER_SCAN(double)
EMBER_SCAN(std::int8_t)
EMBER_SCAN(std::int16_t)
EMBER_SCAN(std::int32_t)
EMBER_SCAN(std::int64_t)
EMBER_SCAN(std::uint8_t)
EMBER_SCAN(std::uint16_t)
EMBER_SCAN(std::uint32_t)
EMBER_SCAN(std::uint64_t)
EMBER_SCAN(std::complex<float>)
EMBER_SCAN(std::complex<double>)
#undef EMBER_SCAN

}  // namespace ember
