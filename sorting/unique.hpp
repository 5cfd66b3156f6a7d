// Distinct values and sets: NumPy's unique (with index, inverse, counts), isin,
// searchsorted, intersect1d, union1d, setdiff1d.
//
//   auto u = ember::unique(x);                               // the sorted distinct values, on every rank
//   auto r = ember::unique(x, {.return_counts = true});      // r.values, r.counts (also .index, .inverse)
//   ember::dndarray<bool, 1> m = ember::isin(x, wanted);     // an elementwise node (sorting/lookup.hpp)
//   auto k = ember::searchsorted(sorted, v, {.right = true}); // an elementwise node over v
//
// unique: every rank finds its block's distinct values with their counts and
// first global indices (by hashing while they are few, else by sorting); one allgather of those triples and a merge
// give every rank the same result (a replicated array): the traffic is the
// number of distinct values per rank, not the data. NaN values count as one,
// sorted last (NumPy's equal_nan). The set operations work on the unique
// values of both operands and return replicated sorted arrays. unique and the
// set operations evaluate now, outside the planner: their results' lengths
// depend on the data, which a plan (shapes known before anything runs) cannot
// hold, like a[mask]'s (indexing/indexing.hpp); their operands are planned
// expressions. isin and searchsorted are elementwise nodes of the plan.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "../dsl/eval.hpp"
#include "../shape/shape.hpp"
#include "lookup.hpp"

namespace ember {

struct unique_options {
  bool return_index = false;    // the global (flat, C order) index of each value's first occurrence
  bool return_inverse = false;  // for every element, the index of its value in `values` (the input's shape and layout)
  bool return_counts = false;   // how many times each value occurs
};
template <class T, int N>
struct unique_result {
  dndarray<T, 1> values;
  dndarray<std::int64_t, 1> index, counts;  // filled when asked for
  dndarray<std::int64_t, N> inverse;
};
struct searchsorted_options {
  bool right = false;  // NumPy's side='right': the index after equal values
};
struct isin_options {
  bool invert = false;  // NumPy's invert=True: whether each element is *not* in the test elements
};

namespace detail {

// NaN, or (complex) a NaN in either part: NumPy's unique counts all of these as
// one value (equal_nan), sorted last; intersect1d and setdiff1d, comparing
// with ==, never match one.
template <class T>
bool is_nan_value(const T& v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else if constexpr (is_complex_v<T>) return v.real() != v.real() || v.imag() != v.imag();
  else return false;
}
template <class T>
bool same_value(const T& a, const T& b) {
  return a == b || (is_nan_value(a) && is_nan_value(b));
}
template <class T>
bool before(const T& a, const T& b) {  // NaN last (sorting/lookup.hpp)
  return sorting_detail::less_nan_last(a, b);
}

template <class T>
struct distinct {
  T v;
  std::int64_t count, first;
};

template <class T>
std::vector<distinct<T>> gathered_distinct(const communicator& c, std::vector<distinct<T>> mine, bool distributed) {
  if (!distributed) return mine;
  const auto sizes = c.allgather(std::int64_t(mine.size()));
  std::vector<std::int64_t> displs(sizes.size());
  std::int64_t t = 0;
  for (std::size_t q = 0; q < sizes.size(); ++q) {
    displs[q] = t;
    t += sizes[q];
  }
  std::vector<distinct<T>> all(static_cast<std::size_t>(t));
  c.allgatherv_bytes(mine.data(), std::int64_t(mine.size()), all.data(), sizes, displs, sizeof(distinct<T>));
  // every rank's run is sorted: merge them, then combine equal values
  std::stable_sort(all.begin(), all.end(), [](const distinct<T>& a, const distinct<T>& b) { return before(a.v, b.v); });
  std::vector<distinct<T>> out;
  for (const auto& d : all) {
    if (!out.empty() && same_value(out.back().v, d.v)) {
      out.back().count += d.count;
      // the first index of the value kept (of a NaN that sorts after it, not)
      if (!before(out.back().v, d.v)) out.back().first = std::min(out.back().first, d.first);
    } else {
      out.push_back(d);
    }
  }
  return out;
}

// The global flat (C order) index of local element i of a block of layout l.
struct flat_index {
  index_vec lshape, gshape, offset;  // offset: the block's first index on each axis
  std::int64_t operator()(std::int64_t i) const {
    std::int64_t g = 0, stride = 1;
    for (int d = int(lshape.size()) - 1; d >= 0; --d) {
      const std::int64_t e = lshape[std::size_t(d)];
      const std::int64_t k = e ? i % e : 0;
      i = e ? i / e : 0;
      g += (k + offset[std::size_t(d)]) * stride;
      stride *= gshape[std::size_t(d)];
    }
    return g;
  }
};
inline flat_index flat_index_of(const layout& l, int rank) {
  flat_index f{l.lshape(rank), l.shape(), index_vec(l.shape().size(), 0)};
  if (l.split()) f.offset[std::size_t(*l.split())] = l.offset(rank);
  return f;
}

// The distinct values of p[0, n) in sorted order with their counts and first
// global indices, by one pass over an open-addressing table: O(n) instead of a
// sort's O(n log n), and no copy of the block. It gives up (false, `out` left
// empty) once the values outnumber what stays in cache (2^16 distinct, table
// 3 MiB at most), having cost at most a pass over the prefix it read; the
// caller then sorts. All NaNs are one value; -0.0 and 0.0 are one value (the
// first seen is kept), as equality and NumPy's sort-based unique have them.
template <class T>
bool distinct_by_hashing(const T* p, std::int64_t n, const flat_index& fi, std::vector<distinct<T>>& out) {
  constexpr std::size_t limit = std::size_t(1) << 16;
  std::size_t cap = 1024;  // a power of two, at most half full
  std::vector<distinct<T>> slot(cap);
  std::vector<unsigned char> used(cap, 0);
  std::size_t size = 0;
  // A value's key: equal keys for equal values, one key for every NaN (a
  // complex value's two parts are two words; a NaN in either part is NaN).
  struct key_t {
    std::uint64_t re, im;
    bool operator==(const key_t&) const = default;
  };
  auto bits = [](auto x) {
    const double d = x == 0 ? 0.0 : double(x);  // every float is exactly a double; -0.0 is 0.0
    std::uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
  };
  auto key_of = [&bits](const T& v) -> key_t {
    if (is_nan_value(v)) return {0x7ff8000000000000ull, 0x7ff8000000000000ull};
    if constexpr (is_complex_v<T>) return {bits(v.real()), bits(v.imag())};
    else if constexpr (std::is_floating_point_v<T>) return {bits(v), 0};
    else return {std::uint64_t(v), 0};
  };
  auto home = [](key_t k, std::size_t mask) {
    return std::size_t(((k.re ^ (k.im * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull) >> 40) & mask;
  };
  auto insert = [&](const T& v, key_t k, std::int64_t count, std::int64_t first) -> distinct<T>& {
    std::size_t h = home(k, cap - 1);
    while (used[h] && key_of(slot[h].v) != k) h = (h + 1) & (cap - 1);
    if (!used[h]) {
      used[h] = 1;
      slot[h] = {v, count, first};
      ++size;
    }
    return slot[h];
  };
  for (std::int64_t i = 0; i < n; ++i) {
    const key_t k = key_of(p[i]);
    std::size_t h = home(k, cap - 1);
    while (used[h] && key_of(slot[h].v) != k) h = (h + 1) & (cap - 1);
    if (used[h]) [[likely]] {
      ++slot[h].count;
      // NumPy keeps the first NaN in sorted order (complex NaNs differ)
      if constexpr (is_complex_v<T>)
        if (is_nan_value(p[i]) && before(p[i], slot[h].v)) {
          slot[h].v = p[i];
          slot[h].first = fi(i);  // and its first index (NumPy's return_index)
        }
      continue;
    }
    if (size == limit) return false;
    used[h] = 1;
    slot[h] = {p[i], 1, fi(i)};
    if (++size * 2 > cap) {  // grow: rehash into twice the slots
      std::vector<distinct<T>> old_slot(cap * 2);
      std::vector<unsigned char> old_used(cap * 2, 0);
      old_slot.swap(slot);
      old_used.swap(used);
      cap *= 2;
      size = 0;
      for (std::size_t q = 0; q < old_used.size(); ++q)
        if (old_used[q]) insert(old_slot[q].v, key_of(old_slot[q].v), old_slot[q].count, old_slot[q].first);
    }
  }
  for (std::size_t q = 0; q < cap; ++q)
    if (used[q]) out.push_back(slot[q]);
  std::sort(out.begin(), out.end(), [](const distinct<T>& a, const distinct<T>& b) { return before(a.v, b.v); });
  return true;
}

template <class T>
dndarray<T, 1> replicated_vector(const std::vector<T>& v, const communicator& c) {
  dndarray<T, 1> out(replicated_layout({std::int64_t(v.size())}, c.size()), c);
  std::copy(v.begin(), v.end(), out.ldata());
  return out;
}

template <class T, int N>
unique_result<T, N> unique_of(const dndarray<T, N>& x, const unique_options& o) {
  require_host(x.device(), "ember::unique");
  const communicator& c = x.comm();
  const layout& l = x.layout();
  const std::int64_t n = x.lnumel();
  const T* p = x.ldata();
  const bool distributed = l.split() && c.size() > 1;
  // local: the distinct values with their counts (and first global flat
  // indices) by hashing when there are few of them, else by sorting (with the
  // index only when asked: sorting (value, index) pairs costs twice the values)
  const flat_index fi = flat_index_of(l, c.rank());
  std::vector<distinct<T>> mine;
  if (!distinct_by_hashing(p, n, fi, mine)) {
    auto add = [&](const T& v, std::int64_t first) {
      if (!mine.empty() && same_value(mine.back().v, v)) ++mine.back().count;
      else mine.push_back({v, 1, first});
    };
    if (o.return_index) {
      std::vector<std::pair<T, std::int64_t>> e(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) e[std::size_t(i)] = {p[i], fi(i)};
      std::sort(e.begin(), e.end(), [](const auto& a, const auto& b) {
        return before(a.first, b.first) || (!before(b.first, a.first) && a.second < b.second);
      });
      for (const auto& [v, g] : e) add(v, g);
    } else {
      std::vector<T> e(p, p + n);
      std::sort(e.begin(), e.end(), before<T>);
      for (const T& v : e) add(v, 0);
    }
  }
  const auto all = gathered_distinct(c, std::move(mine), distributed);
  unique_result<T, N> r;
  std::vector<T> vals;
  std::vector<std::int64_t> idx, cnt;
  for (const auto& d : all) {
    vals.push_back(d.v);
    idx.push_back(d.first);
    cnt.push_back(d.count);
  }
  r.values = replicated_vector(vals, c);
  if (o.return_index) r.index = replicated_vector(idx, c);
  if (o.return_counts) r.counts = replicated_vector(cnt, c);
  if (o.return_inverse) {
    r.inverse = dndarray<std::int64_t, N>(l, c);
    std::int64_t* inv = r.inverse.ldata();
    // every NaN is the last value (complex NaNs, which sort apart, too)
    const std::int64_t nan_at = !vals.empty() && is_nan_value(vals.back()) ? std::int64_t(vals.size()) - 1 : -1;
    for (std::int64_t i = 0; i < n; ++i)
      inv[i] = is_nan_value(p[i]) ? nan_at
                                  : std::lower_bound(vals.begin(), vals.end(), p[i], [](const T& a, const T& b) {
                                      return before(a, b);
                                    }) - vals.begin();
  }
  return r;
}

// The unique values of an operand, as a sorted std::vector on every rank, and
// its communicator.
template <class A>
auto unique_values(A&& a) {
  using T = typename expr::node_t<A>::value_type;
  constexpr int N = expr::node_t<A>::ndim;
  const dndarray<T, N> x = ember::eval(std::forward<A>(a));
  const auto u = unique_of(x, {}).values;
  return std::make_pair(std::vector<T>(u.ldata(), u.ldata() + u.lnumel()), x.comm());
}

template <class A, class B, class F>
auto set_operation(A&& a, B&& b, F f) {
  using T = typename expr::node_t<A>::value_type;
  static_assert(std::is_same_v<T, typename expr::node_t<B>::value_type>,
                "ember: set operations take two arrays of one dtype; cast one with ember::astype first");
  auto [u, c] = unique_values(std::forward<A>(a));
  auto w = unique_values(std::forward<B>(b)).first;
  // The NaN (at most one, last: unique's) is set apart: == never matches it in
  // NumPy's intersect1d and setdiff1d, and union1d's unique keeps one.
  auto nan_of = [](std::vector<T>& v) {
    std::optional<T> x;
    if (!v.empty() && is_nan_value(v.back())) {
      x = v.back();
      v.pop_back();
    }
    return x;
  };
  const auto nu = nan_of(u), nw = nan_of(w);
  std::vector<T> r;
  f(u, w, r, nu, nw);
  return replicated_vector(r, c);
}

}  // namespace detail

// np.unique(a): the sorted distinct values of all of a (flattened), on every rank.
template <array_like A>
auto unique(A&& a) {
  using T = typename expr::node_t<A>::value_type;
  static_assert(!std::is_same_v<T, bool>, "ember::unique: cast a bool array with astype<std::uint8_t> first");
  constexpr int N = expr::node_t<A>::ndim;
  return detail::unique_of(dndarray<T, N>(ember::eval(std::forward<A>(a))), {}).values;
}
// np.unique(a, return_index=, return_inverse=, return_counts=).
template <array_like A>
auto unique(A&& a, const unique_options& o) {
  using T = typename expr::node_t<A>::value_type;
  static_assert(!std::is_same_v<T, bool>, "ember::unique: cast a bool array with astype<std::uint8_t> first");
  constexpr int N = expr::node_t<A>::ndim;
  return detail::unique_of(dndarray<T, N>(ember::eval(std::forward<A>(a))), o);
}

// np.isin(element, test_elements, invert=): a bool expression in element's
// shape, an elementwise lookup (sorting/lookup.hpp) that fuses with the rest:
// `isin(x, wanted) & (x > 0)` is one pass. The test elements' distinct values
// are found now (unique: one allgather of each rank's distinct values) and
// held by the node, on every rank.
template <array_like A, array_like B>
auto isin(A&& element, B&& test_elements, const isin_options& o = {}) {
  using E = typename expr::node_t<B>::value_type;
  auto x = expr::as_node(std::forward<A>(element));
  op::isin<E> lookup(detail::unique_values(std::forward<B>(test_elements)).first, o.invert);
  return expr::elementwise<op::isin<E>, decltype(x)>(std::move(lookup), std::move(x));
}

// np.searchsorted(a, v, side=): for each element of v, the index in the
// sorted 1-D `a` where it would be inserted (NaN sorts last); an int64
// expression in v's shape, an elementwise lookup that fuses with v's
// expression and its consumers. `a` is read as a table every rank holds: a
// replicated `a` in place (the node shares its block), a split one gathered now
// (one allgather of a, through the exchange engine), so it must fit on a rank.
template <array_like A, array_like V>
auto searchsorted(A&& a, V&& v, const searchsorted_options& o = {}) {
  using T = typename expr::node_t<A>::value_type;
  static_assert(expr::node_t<A>::ndim == 1, "ember::searchsorted: the sorted array must be 1-D");
  dndarray<T, 1> s = ember::eval(std::forward<A>(a));
  detail::require_host(s.device(), "ember::searchsorted");
  if (s.layout().split() && s.comm().size() > 1) s = ember::resplit(s, none);
  op::sorted_table<T> table(s.lstorage_handle(), s.ldata(), s.lnumel());
  auto x = expr::as_node(std::forward<V>(v));
  return expr::elementwise<op::searchsorted<T>, decltype(x)>(op::searchsorted<T>(std::move(table), o.right), std::move(x));
}

// np.intersect1d, np.union1d, np.setdiff1d: sorted distinct values, on every rank.
template <array_like A, array_like B>
auto intersect1d(A&& a, B&& b) {
  return detail::set_operation(std::forward<A>(a), std::forward<B>(b), [](const auto& u, const auto& w, auto& r, const auto&, const auto&) {
    using T = typename std::remove_cvref_t<decltype(u)>::value_type;
    std::set_intersection(u.begin(), u.end(), w.begin(), w.end(), std::back_inserter(r), detail::before<T>);
  });  // a NaN is in neither's intersection: NaN != NaN
}
template <array_like A, array_like B>
auto union1d(A&& a, B&& b) {
  return detail::set_operation(std::forward<A>(a), std::forward<B>(b), [](const auto& u, const auto& w, auto& r, const auto& nu, const auto& nw) {
    using T = typename std::remove_cvref_t<decltype(u)>::value_type;
    std::set_union(u.begin(), u.end(), w.begin(), w.end(), std::back_inserter(r), detail::before<T>);
    if (nu && nw) r.push_back(detail::before(*nw, *nu) ? *nw : *nu);  // unique's: the first NaN in sorted order
    else if (nu || nw) r.push_back(nu ? *nu : *nw);
  });
}
template <array_like A, array_like B>
auto setdiff1d(A&& a, B&& b) {
  return detail::set_operation(std::forward<A>(a), std::forward<B>(b), [](const auto& u, const auto& w, auto& r, const auto& nu, const auto&) {
    using T = typename std::remove_cvref_t<decltype(u)>::value_type;
    std::set_difference(u.begin(), u.end(), w.begin(), w.end(), std::back_inserter(r), detail::before<T>);
    if (nu) r.push_back(*nu);  // NumPy: a's NaN is not in b (NaN != NaN)
  });
}

}  // namespace ember
