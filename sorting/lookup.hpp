// Elementwise lookups in a sorted table that every rank holds: searchsorted
// into a replicated sorted array, digitize, isin. Each is an elementwise op
// with state (the table, shared by every copy of the expression and its
// kernel's evaluator), so it is a node of the fused kernel like `a * 2`:
//
//   ember::dndarray<std::int64_t, 2> k = ember::digitize(a * 2, {0.0, 0.5, 1.0}) + 1;   // one pass
//   auto m = ember::isin(x, wanted) & (x > 0);                                          // one pass
//   EXPLAIN:  fused_kernel  add(digitize(mul(a0, 2), bins=3), 1)
//
// The table is sorted in NumPy's order (NaN last); a lookup is a binary search
// in it (log2 of its length comparisons per element). Its values are not in the
// plan (the plan does not depend on them): EXPLAIN shows its length, and the
// plan cache keys that and the op's flags. The CUDA kernels do not read host
// tables: an expression holding a lookup runs its kernels on the host.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../dsl/ops.hpp"
#include "sort_common.hpp"

namespace ember::op {

// NumPy's order, NaN last (sorting/sort_common.hpp).
using sorting_detail::less_nan_last;

// A sorted table and its binary search, compared in the type C the table's
// and the operand's dtypes promote to (an int table and float values compare
// as floats, a float32 table and complex128 values as complex128, as NumPy
// does; complex in NumPy's lexicographic order).
template <class E>
struct sorted_table {
  std::shared_ptr<const void> keep;  // owns the values (a vector, or a replicated array's block)
  const E* v = nullptr;
  std::int64_t n = 0;
  sorted_table() = default;
  explicit sorted_table(std::vector<E> values) {
    auto p = std::make_shared<const std::vector<E>>(std::move(values));
    v = p->data();
    n = std::int64_t(p->size());
    keep = std::move(p);
  }
  sorted_table(std::shared_ptr<const void> owner, const E* values, std::int64_t count)
      : keep(std::move(owner)), v(values), n(count) {}
  // The first position whose element is not before x (right: that is after x).
  template <class C>
  std::int64_t position(C x, bool right) const {
    std::int64_t lo = 0, len = n;
    while (len > 0) {  // branch-light lower/upper bound
      const std::int64_t half = len / 2;
      const C m = C(v[lo + half]);
      const bool go = right ? !less_nan_last(x, m) : less_nan_last(m, x);
      lo = go ? lo + half + 1 : lo;
      len = go ? len - half - 1 : half;
    }
    return lo;
  }
};

// np.searchsorted(table, x, side): x's insertion index in the table.
template <class E>
struct searchsorted : sorted_table<E> {
  static constexpr std::string_view name = "searchsorted";
  template <class A>
  using result = std::int64_t;
  bool right = false;
  searchsorted() = default;
  searchsorted(sorted_table<E> t, bool r) : sorted_table<E>(std::move(t)), right(r) {}
  template <class R, class A>
  R apply(A x) const {
    using C = op::promote_t<E, A>;
    return R(this->position(C(x), right));
  }
  std::string text() const { return "table=" + std::to_string(this->n) + (right ? ", side=right" : ""); }
  std::uint64_t key() const { return std::uint64_t(this->n) * 2 + right; }
};

// np.digitize(x, bins, right): the bin index; decreasing bins are kept reversed
// (NumPy: len(bins) - searchsorted(bins[::-1], x, side)).
template <class E>
struct digitize : sorted_table<E> {
  static constexpr std::string_view name = "digitize";
  template <class A>
  using result = std::int64_t;
  bool right = false, decreasing = false;
  digitize() = default;
  digitize(std::vector<E> ascending, bool r, bool dec) : sorted_table<E>(std::move(ascending)), right(r), decreasing(dec) {}
  template <class R, class A>
  R apply(A x) const {
    using C = op::promote_t<E, A>;
    const std::int64_t p = this->position(C(x), !right);  // side = right ? 'left' : 'right'
    return R(decreasing ? this->n - p : p);
  }
  std::string text() const {
    return "bins=" + std::to_string(this->n) + (right ? ", right" : "") + (decreasing ? ", decreasing" : "");
  }
  std::uint64_t key() const { return std::uint64_t(this->n) * 4 + right * 2 + decreasing; }
};

// np.isin(x, test_elements, invert): whether x is in the table (NaN is in
// nothing, as in NumPy).
template <class E>
struct isin : sorted_table<E> {
  static constexpr std::string_view name = "isin";
  template <class A>
  using result = bool;
  bool invert = false;
  isin() = default;
  isin(std::vector<E> t, bool inv) : sorted_table<E>(std::move(t)), invert(inv) {}
  template <class R, class A>
  R apply(A x) const {
    using C = op::promote_t<E, A>;
    const C c = C(x);
    const std::int64_t p = this->position(c, false);
    return R((p < this->n && C(this->v[p]) == c) != invert);
  }
  std::string text() const { return "table=" + std::to_string(this->n) + (invert ? ", invert" : ""); }
  std::uint64_t key() const { return std::uint64_t(this->n) * 2 + invert; }
};

}  // namespace ember::op
