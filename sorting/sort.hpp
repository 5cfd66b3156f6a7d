// Sorting: NumPy's sort and argsort, along any axis of any split.
//
//   auto s = ember::sort(x);                       // 1-D split: a sample sort, balanced result
//   auto i = ember::argsort(x, -1, {.stable = true});   // global int64 indices
//   auto d = ember::sort(a, 1, {.descending = true});   // along a local axis: no communication
//
// Along a local axis each rank sorts its lines. A 1-D array split over the ranks
// is sorted by the sample sort of sorting/sample_sort.hpp: the result is
// balanced and argsort's indices are global. An N-D array sorted along its split
// axis is first resplit along another axis (one all-to-all), so the sorted axis
// is local; the result stays split along that axis (its split() says which).
// NaN sorts last, as in NumPy (`descending` is the ascending order reversed, so
// NaN comes first there). argsort is stable always (ties in index order), so
// `.stable` changes nothing for it; for sort it picks std::stable_sort locally.
//
// Sorting evaluates now (the result's layout depends on the data's split, and
// the sample sort's traffic on the data): it is not a plan step yet.
#pragma once

#include <cstdint>

#include "../dsl/eval.hpp"
#include "../dsl/shift.hpp"
#include "../shape/shape.hpp"
#include "sample_sort.hpp"

namespace ember {

namespace detail {

// The frame sort, argsort, partition and argpartition share: an N-D array
// along its split axis is resplit along another axis first (the axis made
// local); the result (values, or with WithIndex the int64 indices) is laid out
// as the input, balanced for a split vector; `vector_fn(l, comm, in, out,
// index_out)` reorders a split vector, `local_fn(lshape, axis, in, out,
// index_out)` the lines of each block.
template <bool WithIndex, class T, int N, class VectorFn, class LocalFn>
std::conditional_t<WithIndex, dndarray<std::int64_t, N>, dndarray<T, N>> reordered_along(const dndarray<T, N>& x, int axis,
                                                                                        const char* what, VectorFn vector_fn,
                                                                                        LocalFn local_fn) {
  require_host(x.device(), what);
  const int ax = normalized_axis(axis, N, what + 7);  // (the name without "ember::")
  const communicator& c = x.comm();
  const layout& l = x.layout();
  const bool along_split = l.split() && *l.split() == ax && c.size() > 1;
  if constexpr (N > 1) {
    if (along_split)
      return reordered_along<WithIndex>(ember::resplit(x, ax == 0 ? 1 : 0), ax, what, vector_fn, local_fn);  // the axis made local
  }
  const layout out_l = along_split ? layout::balanced(l.shape(), 0, c.size()) : l;
  dndarray<T, N> v(out_l, c);
  dndarray<std::int64_t, N> idx;
  std::int64_t* ip = nullptr;
  if constexpr (WithIndex) {
    idx = dndarray<std::int64_t, N>(out_l, c);
    ip = idx.ldata();
  }
  if (along_split) vector_fn(l, c, x.ldata(), v.ldata(), ip);
  else local_fn(l.lshape(c.rank()), ax, x.ldata(), v.ldata(), ip);
  if constexpr (WithIndex) return idx;
  else return v;
}

template <bool WithIndex, class T, int N>
auto sort_array(const dndarray<T, N>& x, int axis, const sort_options& o, const char* what) {
  return reordered_along<WithIndex>(
      x, axis, what, [&](const layout& l, const communicator& c, const T* in, T* out, std::int64_t* ip) { sort_vector<T>(l, c, in, out, ip, o); },
      [&](const index_vec& ls, int ax, const T* in, T* out, std::int64_t* ip) { sort_local<T>(ls, ax, in, out, ip, o); });
}

template <bool WithIndex, array_like A>
auto sort_impl(A&& a, int axis, const sort_options& o, const char* what) {
  using T = typename expr::node_t<A>::value_type;
  constexpr int N = expr::node_t<A>::ndim;
  static_assert(N >= 1, "ember::sort: needs an array of at least one axis");
  const dndarray<T, N> x = ember::eval(std::forward<A>(a));
  return sort_array<WithIndex>(x, axis, o, what);
}

}  // namespace detail

// np.sort(a, axis=-1): a new array, sorted along `axis`. Options:
// {.stable = false, .descending = false}.
template <array_like A>
auto sort(A&& a, int axis = -1, const sort_options& o = {}) {
  return detail::sort_impl<false>(std::forward<A>(a), axis, o, "ember::sort");
}

// np.argsort(a, axis=-1): int64 indices along `axis` that sort it (global
// indices for a split vector), ties in index order.
template <array_like A>
auto argsort(A&& a, int axis = -1, const sort_options& o = {}) {
  return detail::sort_impl<true>(std::forward<A>(a), axis, o, "ember::argsort");
}

}  // namespace ember
