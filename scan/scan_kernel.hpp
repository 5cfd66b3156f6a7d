// Scans along one axis of a distributed array: cumulative sums, products, maxima
// and minima (NumPy's cumsum, cumprod, maximum.accumulate, minimum.accumulate).
//
// Along an axis that is not split, a scan is local: each rank scans its block.
// Along the split axis, each rank first combines its block along the axis into
// one slice (its totals: a read-only pass), one exclusive scan of those slices
// across the ranks (MPI_Exscan) gives every rank the carry of the ranks before
// it, and one pass scans the block starting from that carry. The slice is the
// block without the scanned axis, so the traffic is tiny next to the data.
//
// Runtime only (no dsl types): the planner prices it with scan_traffic, the dsl's
// executor runs it with run_scan.
#pragma once

#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "../runtime/communicator.hpp"
#include "../runtime/error.hpp"
#include "../runtime/layout.hpp"

namespace ember {

enum class scan_kind : std::uint8_t { sum, prod, max, min };
const char* name(scan_kind k);  // "cumsum", "cumprod", "cummax", "cummin"

// The combining functions and their identities. In the header because a fused
// scan (the dsl computing its operand as it scans, dsl/executor.hpp) inlines
// them into one loop: computing the operand into a buffer in one loop and
// scanning it in the next leaves the operand's memory stalls and the scan's
// chain of dependent additions one after the other instead of overlapped.
namespace scan_detail {

template <class T>
constexpr bool is_cplx = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

template <class T>
inline T identity(scan_kind k) {
  switch (k) {
    case scan_kind::sum: return T(0);
    case scan_kind::prod: return T(1);
    case scan_kind::max:
      if constexpr (is_cplx<T>) return T(0);
      else if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
      else return std::numeric_limits<T>::lowest();
    case scan_kind::min:
      if constexpr (is_cplx<T>) return T(0);
      else if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
      else return std::numeric_limits<T>::max();
  }
  return T(0);
}

// The combining functions, NaN-propagating for max and min (NumPy's maximum).
// Signed integers wrap on overflow as in NumPy: the arithmetic is done unsigned
// (signed overflow is undefined in C++).
template <class T, bool = std::is_integral_v<T> && std::is_signed_v<T>>
struct wrap {
  using type = T;
};
template <class T>
struct wrap<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using wrap_t = typename wrap<T>::type;
template <class T>
struct sum_f {
  T operator()(T a, T b) const { return T(wrap_t<T>(a) + wrap_t<T>(b)); }
};
template <class T>
struct prod_f {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && sizeof(T) < sizeof(int)) return T(int(a) * int(b));  // (no overflow in int)
    else return T(wrap_t<T>(a) * wrap_t<T>(b));
  }
};
template <class T>
struct max_f {
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a >= b || a != a) ? a : b;
    else return a >= b ? a : b;
  }
};
template <class T>
struct min_f {
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a <= b || a != a) ? a : b;
    else return a <= b ? a : b;
  }
};


// Calls f(combining function) for kind k; complex numbers have sums and products only.
template <class T, class G>
inline void with_combine(scan_kind k, G&& g) {
  switch (k) {
    case scan_kind::sum: return g(sum_f<T>{});
    case scan_kind::prod: return g(prod_f<T>{});
    case scan_kind::max:
    case scan_kind::min:
      if constexpr (is_cplx<T>) {
        throw type_error(std::string("ember::") + name(k) + ": complex numbers have no order here");
      } else {
        if (k == scan_kind::max) return g(max_f<T>{});
        return g(min_f<T>{});
      }
  }
}

// f over at(0), ..., at(n - 1) in four independent chains (not one chain of
// dependent operations), the first starting from `first`, the others from `id`.
template <class T, class At, class F>
inline T combine_run(At&& at, std::int64_t n, T first, T id, F f) {
  T a0 = first, a1 = id, a2 = id, a3 = id;
  std::int64_t q = 0;
  for (; q + 4 <= n; q += 4) {
    a0 = f(a0, at(q));
    a1 = f(a1, at(q + 1));
    a2 = f(a2, at(q + 2));
    a3 = f(a3, at(q + 3));
  }
  for (; q < n; ++q) a0 = f(a0, at(q));
  return f(f(a0, a1), f(a2, a3));
}

}  // namespace scan_detail

// What scanning a block laid out as `l` along `axis` sends from `rank`: nothing
// unless `axis` is the split axis of more than one rank; then the exclusive scan
// of one slice (l's shape without `axis`), counted as MPI's linear Exscan sends
// it: every rank but the last passes one slice to the next (chunked like every
// collective above the message limit).
traffic scan_traffic(const layout& l, int axis, std::int64_t elem, int rank);
std::vector<traffic> scan_traffic_all(const layout& l, int axis, std::int64_t elem);

// out = the scan of `in` (this rank's block of `l`) along `axis`; in == out is
// allowed. Collective over `comm` when `axis` is split (every rank calls it).
// Max and min propagate NaN as NumPy's maximum and minimum do.
// T: every arithmetic dtype, and complex64/complex128 for sum and prod.
template <class T>
void run_scan(scan_kind k, const layout& l, int axis, const communicator& comm, const T* in, T* out);

// The same scan for an operand that is computed as it is read (a fused
// expression, `cumsum(x * w)`): the dsl's kernel hands this rank's block of the
// operand over in chunks, in row-major order, and no temporary of the operand
// is written. When needs_carry() (the axis is split over more than one rank)
// the chunks come twice: first to add_totals, then carry() (collective: every
// rank calls it), then to scan; otherwise only to scan. `pos` is a chunk's flat
// row-major position in the block.
template <class T>
class scan_pass {
 public:
  scan_pass(scan_kind k, const layout& l, int axis, int rank);
  bool needs_carry() const { return split_; }
  void add_totals(std::int64_t pos, const T* v, std::int64_t len);
  void carry(const communicator& comm);
  // The scan of a chunk into y[0, len) (into the output block: y = out + pos;
  // or a buffer of its own, for a kernel that consumes the scan as it is made).
  // The previous row (or the line's running value) is kept here, so chunks must
  // come in order.
  void scan_chunk(std::int64_t pos, const T* v, std::int64_t len, T* y);
  // Along the last axis (one line per row of the block) a fused scan runs its
  // own loop with these: each line's total (combine into it, then carry()), and
  // the carry each line starts from (null: from its first element).
  bool along_last_axis() const { return axis_ == l_.ndim() - 1; }
  T* line_totals() { return totals_.get(); }
  const T* line_carry() const { return have_carry_ ? carry_.get() : nullptr; }

 private:
  scan_kind k_;
  const layout& l_;
  int axis_;
  std::int64_t n_ = 0, inner_ = 1;  // the block's extent along the axis, and the elements after it
  bool split_ = false;
  bool have_carry_ = false;  // false on rank 0 and when not split: lines start from their first element
  std::unique_ptr<T[]> totals_, carry_;  // (arrays: vector<bool> has no data())
  std::unique_ptr<T[]> row_;              // scan_chunk: the last scanned row (inner elements; one for inner == 1)
};

}  // namespace ember
