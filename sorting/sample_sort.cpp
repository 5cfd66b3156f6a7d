#include "sample_sort.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "../runtime/exchange.hpp"
#include "sort_common.hpp"

namespace ember {

namespace {

using sorting_detail::buffer;
using sorting_detail::byte_type;
using sorting_detail::order;

int as_int(std::int64_t v, const char* what) { return sorting_detail::mpi_count(v, "ember::sort", what); }

// An element with what makes it unique: its global index (argsort) or its
// position in the concatenation of the locally sorted blocks (sort).
template <class T>
struct keyed {
  T v;
  std::int64_t tie;
};
template <class T>
struct keyed_order {
  order<T> o;
  bool operator()(const keyed<T>& a, const keyed<T>& b) const {
    if (o(a.v, b.v)) return true;
    if (o(b.v, a.v)) return false;
    return a.tie < b.tie;
  }
};

// std::sort(first, last, k), faster (sort_in_order says why): for floating T
// the NaNs are set apart and sorted by key alone, the rest by plain comparisons.
template <class T>
void sort_keyed_range(keyed<T>* first, keyed<T>* last, const keyed_order<T>& k) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool desc = k.o.descending;
    keyed<T>* mid = std::partition(first, last, [desc](const keyed<T>& e) { return (e.v != e.v) == desc; });
    keyed<T>* lo = desc ? mid : first;
    keyed<T>* hi = desc ? last : mid;
    const auto by_tie = [](const keyed<T>& a, const keyed<T>& b) { return a.tie < b.tie; };
    std::sort(desc ? first : mid, desc ? mid : last, by_tie);
    if (desc)
      std::sort(lo, hi, [](const keyed<T>& a, const keyed<T>& b) { return a.v > b.v || (a.v == b.v && a.tie < b.tie); });
    else
      std::sort(lo, hi, [](const keyed<T>& a, const keyed<T>& b) { return a.v < b.v || (a.v == b.v && a.tie < b.tie); });
  } else {
    std::sort(first, last, k);
  }
}

// std::merge(a, a_end, b, b_end, out, less): equal elements from a first.
// For floating values in order<T> (each run's NaNs at its end, or its start
// descending) the NaNs are copied as blocks and the rest merged without
// branches: on random data std::merge's branch mispredicts on every other
// element and the merge cost a quarter of the local sort.
template <class E, class Less>
E* merge_two(const E* a, const E* ae, const E* b, const E* be, E* out, Less less) {
  if constexpr (std::is_floating_point_v<E> && std::is_same_v<Less, order<E>>) {
    const auto nan = [](const E& v) { return v != v; };
    const auto num = [](const E& v) { return v == v; };
    if (less.descending) {  // NaNs first
      const E* an = std::partition_point(a, ae, nan);
      const E* bn = std::partition_point(b, be, nan);
      out = std::copy(b, bn, std::copy(a, an, out));
      a = an;
      b = bn;
      while (a != ae && b != be) {
        const bool tb = *a < *b;  // b's first is greater: it goes first
        *out++ = tb ? *b : *a;
        b += tb;
        a += !tb;
      }
      return std::copy(b, be, std::copy(a, ae, out));
    }
    const E* an = std::partition_point(a, ae, num);
    const E* bn = std::partition_point(b, be, num);
    while (a != an && b != bn) {
      const bool tb = *b < *a;
      *out++ = tb ? *b : *a;
      b += tb;
      a += !tb;
    }
    out = std::copy(b, bn, std::copy(a, an, out));
    return std::copy(bn, be, std::copy(an, ae, out));
  } else {
    return std::merge(a, ae, b, be, out, less);
  }
}

// Merges the sorted runs [bounds[i], bounds[i+1]) of v into dest, pairwise,
// out of place (v and a scratch buffer take turns; the last pass writes dest).
template <class E, class Less>
void merge_runs_into(buffer<E>& v, std::vector<std::int64_t> bounds, Less less, E* dest) {
  if (bounds.size() <= 2) {
    std::copy(v.begin(), v.end(), dest);
    return;
  }
  buffer<E> scratch;
  E* src = v.data();
  while (bounds.size() > 2) {
    const bool last = bounds.size() == 3;
    if (!last && scratch.empty()) scratch.resize(v.size());
    E* dst = last ? dest : (src == v.data() ? scratch.data() : v.data());
    std::vector<std::int64_t> next{bounds[0]};
    std::size_t i = 0;
    for (; i + 2 < bounds.size(); i += 2) {
      merge_two(src + bounds[i], src + bounds[i + 1], src + bounds[i + 1], src + bounds[i + 2], dst + bounds[i], less);
      next.push_back(bounds[i + 2]);
    }
    if (i + 1 < bounds.size()) {  // an odd run left over: carried across
      std::copy(src + bounds[i], src + bounds[i + 1], dst + bounds[i]);
      next.push_back(bounds[i + 1]);
    }
    bounds = std::move(next);
    src = dst;
  }
}

// Steps 2-4 on locally sorted elements `e`: `key_at(i)` is element i's unique
// key (keyed<T>), `kless` orders keys, `eless` elements (the merge). Writes this
// rank's part of the balanced result, in order, to `out`.
template <class T, class E, class KeyAt, class ELess>
void distribute_sorted(const layout& l, const communicator& comm, buffer<E>& e, KeyAt key_at,
                       const keyed_order<T>& kless, ELess eless, E* out) {
  const int P = comm.size(), r = comm.rank();
  const std::int64_t n = std::int64_t(e.size());
  // regular samples, oversampled 16x: every rank knows every block's size, so
  // the sample counts need no message
  const std::int64_t per = 16 * std::int64_t(P);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(P)), displs(static_cast<std::size_t>(P));
  std::int64_t total = 0;
  for (int q = 0; q < P; ++q) {
    counts[static_cast<std::size_t>(q)] = std::min(per, l.local_size(q));
    displs[static_cast<std::size_t>(q)] = total;
    total += counts[static_cast<std::size_t>(q)];
  }
  buffer<keyed<T>> mine(static_cast<std::size_t>(counts[static_cast<std::size_t>(r)])), samples(static_cast<std::size_t>(total));
  for (std::size_t j = 0; j < mine.size(); ++j) mine[j] = key_at((std::int64_t(j) * n) / std::int64_t(mine.size()));
  comm.allgatherv_bytes(mine.data(), std::int64_t(mine.size()), samples.data(), counts, displs, sizeof(keyed<T>));
  std::sort(samples.begin(), samples.end(), kless);
  // P - 1 splitters; rank q receives the keys in [splitter q-1, splitter q)
  std::vector<std::int64_t> scount(static_cast<std::size_t>(P)), rcount(static_cast<std::size_t>(P));
  std::int64_t lo = 0;
  for (int q = 0; q < P; ++q) {
    std::int64_t hi = n;
    if (q + 1 < P) {
      hi = lo;
      if (total > 0) {  // the first position whose key is not below the splitter
        const keyed<T>& s = samples[static_cast<std::size_t>(((q + 1) * total) / P)];
        std::int64_t a = lo, b = n;
        while (a < b) {
          const std::int64_t mid = a + (b - a) / 2;
          if (kless(key_at(mid), s)) a = mid + 1;
          else b = mid;
        }
        hi = a;
      }
    }
    scount[static_cast<std::size_t>(q)] = hi - lo;
    lo = hi;
  }
  byte_type et(sizeof(E));
  detail::check_mpi(MPI_Alltoall(scount.data(), 1, MPI_INT64_T, rcount.data(), 1, MPI_INT64_T, comm.native()), "MPI_Alltoall");
  comm.count({std::int64_t(P - 1) * 8, P - 1});
  std::vector<int> sc(static_cast<std::size_t>(P)), sd(static_cast<std::size_t>(P)), rc(static_cast<std::size_t>(P)), rd(static_cast<std::size_t>(P));
  std::int64_t so = 0, ro = 0;
  traffic sent;
  std::vector<std::int64_t> bounds{0};
  for (int q = 0; q < P; ++q) {
    sc[static_cast<std::size_t>(q)] = as_int(scount[static_cast<std::size_t>(q)], "a send");
    rc[static_cast<std::size_t>(q)] = as_int(rcount[static_cast<std::size_t>(q)], "a receive");
    sd[static_cast<std::size_t>(q)] = as_int(so, "a send offset");
    rd[static_cast<std::size_t>(q)] = as_int(ro, "a receive offset");
    so += scount[static_cast<std::size_t>(q)];
    ro += rcount[static_cast<std::size_t>(q)];
    bounds.push_back(ro);
    if (q != r && scount[static_cast<std::size_t>(q)] > 0) sent += {scount[static_cast<std::size_t>(q)] * std::int64_t(sizeof(E)), 1};
  }
  buffer<E> got(static_cast<std::size_t>(ro));
  detail::check_mpi(MPI_Alltoallv(e.data(), sc.data(), sd.data(), et.t, got.data(), rc.data(), rd.data(), et.t,
                                  comm.native()),
                    "MPI_Alltoallv");
  comm.count(sent);
  buffer<E>().swap(e);  // the input's memory back before the merge
  // to the balanced layout: only what the splitters left unbalanced moves (when
  // nothing does, the merge writes the result in place)
  const index_vec have = comm.allgather(std::int64_t(got.size()));
  const layout from(l.shape(), 0, have), to = layout::balanced(l.shape(), 0, P);
  if (from == to) return merge_runs_into(got, bounds, eless, out);
  buffer<E> merged(got.size());
  merge_runs_into(got, bounds, eless, merged.data());
  buffer<E>().swap(got);
  exchange(from, to, r, sizeof(E)).run(comm, merged.data(), out);
}

// Sorts the (value, unique key) pairs `e` (laid out as `l`) into this rank's
// block of the balanced layout: values to `out`, keys to `keys_out`.
template <class T>
void sort_pairs(const layout& l, const communicator& comm, buffer<keyed<T>>& e, const keyed_order<T>& kord, T* out,
                std::int64_t* keys_out) {
  sort_keyed_range(e.data(), e.data() + e.size(), kord);  // (the keys are unique: the same order as a stable sort by value)
  buffer<keyed<T>> res(static_cast<std::size_t>(layout::balanced(l.shape(), 0, comm.size()).local_size(comm.rank())));
  distribute_sorted<T>(l, comm, e, [&](std::int64_t i) { return e[static_cast<std::size_t>(i)]; }, kord, kord, res.data());
  for (std::size_t i = 0; i < res.size(); ++i) {
    out[i] = res[i].v;
    keys_out[i] = res[i].tie;
  }
}

template <class T>
void sort_local_impl(const index_vec& lshape, int axis, const T* in, T* out, std::int64_t* index_out,
                     const sort_options& o);

template <class T>
void sort_vector_impl(const layout& l, const communicator& comm, const T* in, T* out, std::int64_t* index_out,
                      const sort_options& o) {
  if (l.ndim() != 1) throw shape_error("ember::sort: sort_vector takes a 1-D layout, got shape " + detail::shape_str(l.shape()));
  const int r = comm.rank();
  const std::int64_t n = l.local_size(r);
  const order<T> ord{o.descending};
  const bool distributed = l.split() && comm.size() > 1;
  if (!distributed) {
    const index_vec shape{n};
    return sort_local_impl(shape, 0, in, out, index_out, o);
  }
  const std::int64_t off = l.offset(r);
  const keyed_order<T> kord{ord};
  if (index_out) {
    // (value, global index): stable on every rank, and unique
    buffer<keyed<T>> e(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) e[static_cast<std::size_t>(i)] = {in[i], off + i};
    return sort_pairs<T>(l, comm, e, kord, out, index_out);
  }
  // values only: equal values are told apart by their position in the
  // concatenated sorted blocks, for the splitters only; the values travel alone
  buffer<T> e(in, in + n);
  sorting_detail::sort_in_order(e.data(), e.data() + n, o.descending, false);
  distribute_sorted<T>(l, comm, e, [&](std::int64_t i) { return keyed<T>{e[static_cast<std::size_t>(i)], off + i}; }, kord, ord, out);
}

template <class T>
void sort_local_impl(const index_vec& lshape, int axis, const T* in, T* out, std::int64_t* index_out,
                     const sort_options& o) {
  std::int64_t outer = 1, inner = 1;
  const std::int64_t n = lshape.empty() ? 1 : lshape[static_cast<std::size_t>(axis)];
  for (int d = 0; d < axis; ++d) outer *= lshape[static_cast<std::size_t>(d)];
  for (int d = axis + 1; d < int(lshape.size()); ++d) inner *= lshape[static_cast<std::size_t>(d)];
  const keyed_order<T> kord{order<T>{o.descending}};
  std::vector<T> line(index_out ? 0 : static_cast<std::size_t>(n));
  buffer<keyed<T>> pairs(index_out ? static_cast<std::size_t>(n) : 0);
  for (std::int64_t b = 0; b < outer; ++b)
    for (std::int64_t j = 0; j < inner; ++j) {
      const std::int64_t base = b * n * inner + j;
      if (!index_out) {
        if (inner == 1) {
          if (out != in) std::copy_n(in + base, n, out + base);
          sorting_detail::sort_in_order(out + base, out + base + n, o.descending, o.stable);
          continue;
        }
        for (std::int64_t i = 0; i < n; ++i) line[static_cast<std::size_t>(i)] = in[base + i * inner];
        sorting_detail::sort_in_order(line.data(), line.data() + n, o.descending, o.stable);
        for (std::int64_t i = 0; i < n; ++i) out[base + i * inner] = line[static_cast<std::size_t>(i)];
        continue;
      }
      // argsort: always stable (ties by index), so every rank agrees; the
      // (value, index) pairs sort contiguously, not through the indices
      for (std::int64_t i = 0; i < n; ++i) pairs[static_cast<std::size_t>(i)] = {in[base + i * inner], i};
      sort_keyed_range(pairs.data(), pairs.data() + n, kord);
      for (std::int64_t i = 0; i < n; ++i) {
        out[base + i * inner] = pairs[static_cast<std::size_t>(i)].v;
        index_out[base + i * inner] = pairs[static_cast<std::size_t>(i)].tie;
      }
    }
}

template <class T>
void sort_keyed_impl(const communicator& comm, const T* values, const std::int64_t* keys, std::int64_t n, T* out,
                     std::int64_t* keys_out, const sort_options& o) {
  const keyed_order<T> kord{order<T>{o.descending}};
  buffer<keyed<T>> e(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) e[static_cast<std::size_t>(i)] = {values[i], keys[i]};
  if (comm.size() == 1) {
    sort_keyed_range(e.data(), e.data() + e.size(), kord);
    for (std::size_t i = 0; i < e.size(); ++i) {
      out[i] = e[i].v;
      keys_out[i] = e[i].tie;
    }
    return;
  }
  const index_vec counts = comm.allgather(n);
  std::int64_t total = 0;
  for (auto c : counts) total += c;
  sort_pairs<T>(layout(index_vec{total}, 0, counts), comm, e, kord, out, keys_out);
}

}  // namespace

// (bool is stored as one byte 0 or 1 and sorts as uint8: vector<bool> packs bits)
template <class T>
void sort_vector(const layout& l, const communicator& comm, const T* in, T* out, std::int64_t* index_out,
                 const sort_options& o) {
  if constexpr (std::is_same_v<T, bool>)
    sort_vector_impl<std::uint8_t>(l, comm, reinterpret_cast<const std::uint8_t*>(in),
                                   reinterpret_cast<std::uint8_t*>(out), index_out, o);
  else
    sort_vector_impl<T>(l, comm, in, out, index_out, o);
}
template <class T>
void sort_local(const index_vec& lshape, int axis, const T* in, T* out, std::int64_t* index_out,
                const sort_options& o) {
  if constexpr (std::is_same_v<T, bool>)
    sort_local_impl<std::uint8_t>(lshape, axis, reinterpret_cast<const std::uint8_t*>(in),
                                  reinterpret_cast<std::uint8_t*>(out), index_out, o);
  else
    sort_local_impl<T>(lshape, axis, in, out, index_out, o);
}

template <class T>
void sort_keyed(const communicator& comm, const T* values, const std::int64_t* keys, std::int64_t n, T* out,
                std::int64_t* keys_out, const sort_options& o) {
  if constexpr (std::is_same_v<T, bool>)
    sort_keyed_impl<std::uint8_t>(comm, reinterpret_cast<const std::uint8_t*>(values), keys, n,
                                  reinterpret_cast<std::uint8_t*>(out), keys_out, o);
  else
    sort_keyed_impl<T>(comm, values, keys, n, out, keys_out, o);
}

#define EMBER_SORT(T)                                                                                              \
  template void sort_vector<T>(const layout&, const communicator&, const T*, T*, std::int64_t*, const sort_options&); \
  template void sort_local<T>(const index_vec&, int, const T*, T*, std::int64_t*, const sort_options&);         \
  template void sort_keyed<T>(const communicator&, const T*, const std::int64_t*, std::int64_t, T*, std::int64_t*, \
                              const sort_options&);
EMBER_SORT(bool)
EMBER_SORT(float)
EMBER_SORT(double)
EMBER_SORT(std::complex<float>)
EMBER_SORT(std::complex<double>)
EMBER_SORT(std::int8_t)
EMBER_SORT(std::int16_t)
EMBER_SORT(std::int32_t)
EMBER_SORT(std::int64_t)
EMBER_SORT(std::uint8_t)
EMBER_SORT(std::uint16_t)
EMBER_SORT(std::uint32_t)
EMBER_SORT(std::uint64_t)
#undef EMBER_SORT

}  // namespace ember
