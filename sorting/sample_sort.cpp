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

// Merges the sorted runs [bounds[i], bounds[i+1]) of v into dest, pairwise,
// out of place (v and a scratch buffer take turns; the last pass writes dest).
template <class E, class Less>
void merge_runs_into(std::vector<E>& v, std::vector<std::int64_t> bounds, Less less, E* dest) {
  if (bounds.size() <= 2) {
    std::copy(v.begin(), v.end(), dest);
    return;
  }
  std::vector<E> scratch;
  E* src = v.data();
  while (bounds.size() > 2) {
    const bool last = bounds.size() == 3;
    if (!last && scratch.empty()) scratch.resize(v.size());
    E* dst = last ? dest : (src == v.data() ? scratch.data() : v.data());
    std::vector<std::int64_t> next{bounds[0]};
    std::size_t i = 0;
    for (; i + 2 < bounds.size(); i += 2) {
      std::merge(src + bounds[i], src + bounds[i + 1], src + bounds[i + 1], src + bounds[i + 2], dst + bounds[i], less);
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
void distribute_sorted(const layout& l, const communicator& comm, std::vector<E>& e, KeyAt key_at,
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
  std::vector<keyed<T>> mine(static_cast<std::size_t>(counts[static_cast<std::size_t>(r)])), samples(static_cast<std::size_t>(total));
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
  std::vector<E> got(static_cast<std::size_t>(ro));
  detail::check_mpi(MPI_Alltoallv(e.data(), sc.data(), sd.data(), et.t, got.data(), rc.data(), rd.data(), et.t,
                                  comm.native()),
                    "MPI_Alltoallv");
  comm.count(sent);
  std::vector<E>().swap(e);  // the input's memory back before the merge
  // to the balanced layout: only what the splitters left unbalanced moves (when
  // nothing does, the merge writes the result in place)
  const index_vec have = comm.allgather(std::int64_t(got.size()));
  const layout from(l.shape(), 0, have), to = layout::balanced(l.shape(), 0, P);
  if (from == to) return merge_runs_into(got, bounds, eless, out);
  std::vector<E> merged(got.size());
  merge_runs_into(got, bounds, eless, merged.data());
  std::vector<E>().swap(got);
  exchange(from, to, r, sizeof(E)).run(comm, merged.data(), out);
}

// Sorts the (value, unique key) pairs `e` (laid out as `l`) into this rank's
// block of the balanced layout: values to `out`, keys to `keys_out`.
template <class T>
void sort_pairs(const layout& l, const communicator& comm, std::vector<keyed<T>>& e, const keyed_order<T>& kord, T* out,
                std::int64_t* keys_out) {
  std::sort(e.begin(), e.end(), kord);  // (the keys are unique: the same order as a stable sort by value)
  std::vector<keyed<T>> res(static_cast<std::size_t>(layout::balanced(l.shape(), 0, comm.size()).local_size(comm.rank())));
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
    std::vector<keyed<T>> e(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) e[static_cast<std::size_t>(i)] = {in[i], off + i};
    return sort_pairs<T>(l, comm, e, kord, out, index_out);
  }
  // values only: equal values are told apart by their position in the
  // concatenated sorted blocks, for the splitters only; the values travel alone
  std::vector<T> e(in, in + n);
  std::sort(e.begin(), e.end(), ord);
  distribute_sorted<T>(l, comm, e, [&](std::int64_t i) { return keyed<T>{e[static_cast<std::size_t>(i)], off + i}; }, kord, ord, out);
}

template <class T>
void sort_local_impl(const index_vec& lshape, int axis, const T* in, T* out, std::int64_t* index_out,
                     const sort_options& o) {
  std::int64_t outer = 1, inner = 1;
  const std::int64_t n = lshape.empty() ? 1 : lshape[static_cast<std::size_t>(axis)];
  for (int d = 0; d < axis; ++d) outer *= lshape[static_cast<std::size_t>(d)];
  for (int d = axis + 1; d < int(lshape.size()); ++d) inner *= lshape[static_cast<std::size_t>(d)];
  const order<T> ord{o.descending};
  std::vector<T> line(static_cast<std::size_t>(n));
  std::vector<std::int64_t> idx(index_out ? static_cast<std::size_t>(n) : 0);
  for (std::int64_t b = 0; b < outer; ++b)
    for (std::int64_t j = 0; j < inner; ++j) {
      const std::int64_t base = b * n * inner + j;
      if (!index_out) {
        if (inner == 1) {
          if (out != in) std::copy_n(in + base, n, out + base);
          if (o.stable) std::stable_sort(out + base, out + base + n, ord);
          else std::sort(out + base, out + base + n, ord);
          continue;
        }
        for (std::int64_t i = 0; i < n; ++i) line[static_cast<std::size_t>(i)] = in[base + i * inner];
        if (o.stable) std::stable_sort(line.begin(), line.end(), ord);
        else std::sort(line.begin(), line.end(), ord);
        for (std::int64_t i = 0; i < n; ++i) out[base + i * inner] = line[static_cast<std::size_t>(i)];
        continue;
      }
      for (std::int64_t i = 0; i < n; ++i) idx[static_cast<std::size_t>(i)] = i;
      // argsort: always stable (ties by index), so every rank agrees
      std::stable_sort(idx.begin(), idx.end(),
                       [&](std::int64_t a, std::int64_t c) { return ord(in[base + a * inner], in[base + c * inner]); });
      for (std::int64_t i = 0; i < n; ++i) line[static_cast<std::size_t>(i)] = in[base + idx[static_cast<std::size_t>(i)] * inner];
      for (std::int64_t i = 0; i < n; ++i) {
        out[base + i * inner] = line[static_cast<std::size_t>(i)];
        index_out[base + i * inner] = idx[static_cast<std::size_t>(i)];
      }
    }
}

template <class T>
void sort_keyed_impl(const communicator& comm, const T* values, const std::int64_t* keys, std::int64_t n, T* out,
                     std::int64_t* keys_out, const sort_options& o) {
  const keyed_order<T> kord{order<T>{o.descending}};
  std::vector<keyed<T>> e(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) e[static_cast<std::size_t>(i)] = {values[i], keys[i]};
  if (comm.size() == 1) {
    std::sort(e.begin(), e.end(), kord);
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
