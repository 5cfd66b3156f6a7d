#include "partition.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "sample_sort.hpp"
#include "selection.hpp"
#include "sort_common.hpp"

namespace ember {

namespace {

using sorting_detail::buffer;
using sorting_detail::byte_type;
using sorting_detail::order;

template <class T>
bool is_nan(const T& x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}

// A row-major block seen as outer x n x inner: lines of n elements along `axis`,
// `inner` apart.
struct lines {
  std::int64_t outer = 1, n = 1, inner = 1;
};
lines lines_of(const index_vec& lshape, int axis) {
  lines L;
  L.n = lshape.empty() ? 1 : lshape[static_cast<std::size_t>(axis)];
  for (int d = 0; d < axis; ++d) L.outer *= lshape[static_cast<std::size_t>(d)];
  for (int d = axis + 1; d < int(lshape.size()); ++d) L.inner *= lshape[static_cast<std::size_t>(d)];
  return L;
}

// This rank's values without NaN (NaN goes last and is never a pivot): a view
// of `in` when there is none.
template <class T>
struct without_nan {
  std::vector<T> kept;
  const T* data = nullptr;
  std::int64_t n = 0, nans = 0;
  without_nan(const T* in, std::int64_t count) : data(in), n(count) {
    for (std::int64_t i = 0; i < count; ++i) nans += is_nan(in[i]);
    if (nans == 0) return;
    kept.reserve(static_cast<std::size_t>(count - nans));
    for (std::int64_t i = 0; i < count; ++i)
      if (!is_nan(in[i])) kept.push_back(in[i]);
    data = kept.data();
    n = std::int64_t(kept.size());
  }
};

template <class T>
void partition_local_impl(const index_vec& lshape, int axis, const T* in, T* out, std::int64_t* index_out,
                          const std::vector<std::int64_t>& kth) {
  const lines L = lines_of(lshape, axis);
  const order<T> ord{false};
  std::vector<T> line(static_cast<std::size_t>(L.n));
  std::vector<std::int64_t> idx(index_out ? static_cast<std::size_t>(L.n) : 0);
  for (std::int64_t b = 0; b < L.outer; ++b)
    for (std::int64_t j = 0; j < L.inner; ++j) {
      const std::int64_t base = b * L.n * L.inner + j;
      std::int64_t lo = 0;
      if (!index_out) {
        for (std::int64_t i = 0; i < L.n; ++i) line[static_cast<std::size_t>(i)] = in[base + i * L.inner];
        for (std::int64_t k : kth) {  // each kth in turn, in the part after the previous one
          std::nth_element(line.begin() + lo, line.begin() + k, line.end(), ord);
          lo = k + 1;
        }
        for (std::int64_t i = 0; i < L.n; ++i) out[base + i * L.inner] = line[static_cast<std::size_t>(i)];
        continue;
      }
      std::iota(idx.begin(), idx.end(), std::int64_t(0));
      auto by_value = [&](std::int64_t a, std::int64_t c) { return ord(in[base + a * L.inner], in[base + c * L.inner]); };
      for (std::int64_t k : kth) {
        std::nth_element(idx.begin() + lo, idx.begin() + k, idx.end(), by_value);
        lo = k + 1;
      }
      for (std::int64_t i = 0; i < L.n; ++i) {
        out[base + i * L.inner] = in[base + idx[static_cast<std::size_t>(i)] * L.inner];
        index_out[base + i * L.inner] = idx[static_cast<std::size_t>(i)];
      }
    }
}

template <class T>
void partition_vector_impl(const layout& l, const communicator& comm, const T* in, T* out, std::int64_t* index_out,
                           const std::vector<std::int64_t>& kth) {
  if (l.ndim() != 1)
    throw shape_error("ember::partition: partition_vector takes a 1-D layout, got shape " + detail::shape_str(l.shape()));
  const int P = comm.size(), r = comm.rank();
  const std::int64_t n = l.local_size(r);
  if (!(l.split() && P > 1)) return partition_local_impl(index_vec{n}, 0, in, out, index_out, kth);
  const std::int64_t off = l.offset(r);
  // 1. the pivots: the values at the ranks kth among the values that are not
  //    NaN (a kth at or past their count is a NaN position)
  std::vector<T> piv;
  {
    const without_nan<T> v(in, n);
    const std::int64_t m = l.shape()[0] - comm.allreduce(v.nans, reduce_op::sum);
    std::vector<std::int64_t> ks;
    for (std::int64_t k : kth)
      if (k < m) ks.push_back(k);
    if (!ks.empty()) piv = select_ranks<T>(comm, v.data, v.n, ks);
  }
  piv.erase(std::unique(piv.begin(), piv.end()), piv.end());  // (ascending: the ranks are)
  // 2. classes: 2j below pivot j (and above pivot j-1), 2j+1 equal to it, NaN
  //    last. Counted in one pass and scattered in a second; without branches
  //    for a few pivots (random data mispredicted every other comparison: the
  //    two passes cost 38 ns an element, more than the exchange).
  const std::int64_t d = std::int64_t(piv.size()), C = 2 * d + 2;
  std::vector<std::int64_t> cnt(static_cast<std::size_t>(C), 0);
  buffer<T> buf(static_cast<std::size_t>(n));
  buffer<std::int64_t> ibuf(index_out ? static_cast<std::size_t>(n) : 0);
  auto classify = [&](auto class_of) {
    for (std::int64_t i = 0; i < n; ++i) ++cnt[static_cast<std::size_t>(class_of(in[i]))];
    std::vector<std::int64_t> pos(static_cast<std::size_t>(C));
    std::exclusive_scan(cnt.begin(), cnt.end(), pos.begin(), std::int64_t(0));
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t p = pos[static_cast<std::size_t>(class_of(in[i]))]++;
      buf[static_cast<std::size_t>(p)] = in[i];
      if (index_out) ibuf[static_cast<std::size_t>(p)] = off + i;
    }
  };
  if (d <= 8) {
    T pv[8];
    std::copy(piv.begin(), piv.end(), pv);
    classify([&pv, d, C](const T& x) {
      std::int64_t j = 0, eq = 0;  // pivots below x; whether one equals x (they are distinct)
      for (std::int64_t q = 0; q < d; ++q) {
        j += pv[q] < x;
        eq += pv[q] == x;
      }
      return is_nan(x) ? C - 1 : 2 * j + eq;
    });
  } else {
    classify([&](const T& x) -> std::int64_t {
      if (is_nan(x)) return C - 1;
      const std::int64_t j = std::int64_t(std::lower_bound(piv.begin(), piv.end(), x) - piv.begin());
      return j < d && !(x < piv[static_cast<std::size_t>(j)]) ? 2 * j + 1 : 2 * j;
    });
  }
  // where each rank's part of each class starts in the result: classes in
  // order, ranks in order inside a class
  const std::vector<std::int64_t> all = comm.allgather(cnt.data(), C);
  auto at = [&](int q, std::int64_t c) { return static_cast<std::size_t>(std::int64_t(q) * C + c); };
  std::vector<std::int64_t> dest(all.size());
  std::int64_t acc = 0;
  for (std::int64_t c = 0; c < C; ++c)
    for (int q = 0; q < P; ++q) {
      dest[at(q, c)] = acc;
      acc += all[at(q, c)];
    }
  // 3. every element straight to its place in the balanced result
  const layout to = layout::balanced(l.shape(), 0, P);
  auto overlap = [&](std::int64_t a, std::int64_t len, int q) {  // [a, a + len) inside q's block: [lo, hi)
    const std::int64_t lo = std::max(a, to.offset(q)), hi = std::min(a + len, to.offset(q) + to.local_size(q));
    return std::pair{lo, std::max(lo, hi)};
  };
  std::vector<int> sc(static_cast<std::size_t>(P)), sd(static_cast<std::size_t>(P)), rc(static_cast<std::size_t>(P)),
      rd(static_cast<std::size_t>(P));
  std::int64_t so = 0, ro = 0;
  traffic sent;
  const auto per = std::int64_t(sizeof(T) + (index_out ? sizeof(std::int64_t) : 0));
  for (int q = 0; q < P; ++q) {
    std::int64_t s = 0, g = 0;
    for (std::int64_t c = 0; c < C; ++c) {
      const auto [a, b] = overlap(dest[at(r, c)], all[at(r, c)], q);
      const auto [e, f] = overlap(dest[at(q, c)], all[at(q, c)], r);
      s += b - a;
      g += f - e;
    }
    sc[static_cast<std::size_t>(q)] = sorting_detail::mpi_count(s, "ember::partition", "a send");
    rc[static_cast<std::size_t>(q)] = sorting_detail::mpi_count(g, "ember::partition", "a receive");
    sd[static_cast<std::size_t>(q)] = sorting_detail::mpi_count(so, "ember::partition", "a send offset");
    rd[static_cast<std::size_t>(q)] = sorting_detail::mpi_count(ro, "ember::partition", "a receive offset");
    so += s;
    ro += g;
    if (q != r && s > 0) sent += {s * per, index_out ? 2 : 1};
  }
  buffer<T> got(static_cast<std::size_t>(ro));
  buffer<std::int64_t> igot(index_out ? static_cast<std::size_t>(ro) : 0);
  const byte_type et(sizeof(T));
  detail::check_mpi(MPI_Alltoallv(buf.data(), sc.data(), sd.data(), et.t, got.data(), rc.data(), rd.data(), et.t,
                                  comm.native()),
                    "MPI_Alltoallv");
  if (index_out)
    detail::check_mpi(MPI_Alltoallv(ibuf.data(), sc.data(), sd.data(), MPI_INT64_T, igot.data(), rc.data(), rd.data(),
                                    MPI_INT64_T, comm.native()),
                      "MPI_Alltoallv");
  comm.count(sent);
  // what came from rank q is q's classes' pieces inside this block, in class order
  const std::int64_t mine = to.offset(r);
  std::int64_t p = 0;
  for (int q = 0; q < P; ++q)
    for (std::int64_t c = 0; c < C; ++c) {
      const auto [a, b] = overlap(dest[at(q, c)], all[at(q, c)], r);
      std::copy(got.begin() + p, got.begin() + p + (b - a), out + (a - mine));
      if (index_out) std::copy(igot.begin() + p, igot.begin() + p + (b - a), index_out + (a - mine));
      p += b - a;
    }
}

template <class T>
void topk_local_impl(const index_vec& lshape, int axis, const T* in, std::int64_t k, bool largest, T* out,
                     std::int64_t* index_out) {
  const lines L = lines_of(lshape, axis);
  const order<T> ord{largest};
  std::vector<std::int64_t> idx(static_cast<std::size_t>(L.n));
  for (std::int64_t b = 0; b < L.outer; ++b)
    for (std::int64_t j = 0; j < L.inner; ++j) {
      const std::int64_t base = b * L.n * L.inner + j, obase = b * k * L.inner + j;
      std::iota(idx.begin(), idx.end(), std::int64_t(0));
      std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](std::int64_t a, std::int64_t c) {
        const T& x = in[base + a * L.inner];
        const T& y = in[base + c * L.inner];
        if (ord(x, y)) return true;
        if (ord(y, x)) return false;
        return a < c;  // ties in index order
      });
      for (std::int64_t i = 0; i < k; ++i) {
        out[obase + i * L.inner] = in[base + idx[static_cast<std::size_t>(i)] * L.inner];
        index_out[obase + i * L.inner] = idx[static_cast<std::size_t>(i)];
      }
    }
}

template <class T>
void topk_vector_impl(const layout& l, const communicator& comm, const T* in, std::int64_t k, bool largest, T* out,
                      std::int64_t* index_out) {
  if (l.ndim() != 1)
    throw shape_error("ember::topk: topk_vector takes a 1-D layout, got shape " + detail::shape_str(l.shape()));
  const int P = comm.size(), r = comm.rank();
  const std::int64_t n = l.local_size(r);
  if (!(l.split() && P > 1)) return topk_local_impl(index_vec{n}, 0, in, k, largest, out, index_out);
  if (k == 0) return;
  const std::int64_t off = l.offset(r);
  // the k-th element in the wanted order (NaN largest): NaN itself, or the
  // value of rank `at` among the others
  T t{};
  bool nan_threshold = false;
  {
    const without_nan<T> v(in, n);
    const std::int64_t nn = comm.allreduce(v.nans, reduce_op::sum), m = l.shape()[0] - nn;
    nan_threshold = largest ? k <= nn : k > m;
    if (!nan_threshold) t = select_ranks<T>(comm, v.data, v.n, {largest ? m - (k - nn) : k - 1})[0];
  }
  const order<T> ord{largest};
  auto before = [&](const T& x) { return nan_threshold ? !largest && !is_nan(x) : ord(x, t); };
  auto tie = [&](const T& x) { return nan_threshold ? is_nan(x) : !ord(x, t) && !ord(t, x); };
  std::int64_t mine[2] = {0, 0};  // before the threshold, equal to it
  for (std::int64_t i = 0; i < n; ++i) {
    mine[0] += before(in[i]);
    mine[1] += tie(in[i]);
  }
  const std::vector<std::int64_t> counts = comm.allgather(mine, 2);
  std::int64_t nb = 0, ties_before = 0;
  for (int q = 0; q < P; ++q) {
    nb += counts[static_cast<std::size_t>(2 * q)];
    if (q < r) ties_before += counts[static_cast<std::size_t>(2 * q + 1)];
  }
  const std::int64_t need = k - nb;  // ties taken, the first by global index
  std::vector<T> cv;
  std::vector<std::int64_t> ck;
  for (std::int64_t i = 0, seen = ties_before; i < n; ++i) {
    const bool take = before(in[i]) || (tie(in[i]) && seen++ < need);
    if (!take) continue;
    cv.push_back(in[i]);
    ck.push_back(off + i);
  }
  sort_keyed<T>(comm, cv.data(), ck.data(), std::int64_t(cv.size()), out, index_out, {.descending = largest});
}

// bool is stored as one byte 0 or 1 and orders as uint8
template <class T>
using stored_t = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;
template <class T>
const stored_t<T>* stored(const T* p) {
  return reinterpret_cast<const stored_t<T>*>(p);
}
template <class T>
stored_t<T>* stored(T* p) {
  return reinterpret_cast<stored_t<T>*>(p);
}

}  // namespace

template <class T>
void partition_vector(const layout& l, const communicator& comm, const T* in, T* out, std::int64_t* index_out,
                      const std::vector<std::int64_t>& kth) {
  partition_vector_impl<stored_t<T>>(l, comm, stored(in), stored(out), index_out, kth);
}
template <class T>
void partition_local(const index_vec& lshape, int axis, const T* in, T* out, std::int64_t* index_out,
                     const std::vector<std::int64_t>& kth) {
  partition_local_impl<stored_t<T>>(lshape, axis, stored(in), stored(out), index_out, kth);
}
template <class T>
void topk_vector(const layout& l, const communicator& comm, const T* in, std::int64_t k, bool largest, T* out,
                 std::int64_t* index_out) {
  topk_vector_impl<stored_t<T>>(l, comm, stored(in), k, largest, stored(out), index_out);
}
template <class T>
void topk_local(const index_vec& lshape, int axis, const T* in, std::int64_t k, bool largest, T* out,
                std::int64_t* index_out) {
  topk_local_impl<stored_t<T>>(lshape, axis, stored(in), k, largest, stored(out), index_out);
}

#define EMBER_PARTITION(T)                                                                                          \
  template void partition_vector<T>(const layout&, const communicator&, const T*, T*, std::int64_t*,              \
                                    const std::vector<std::int64_t>&);                                            \
  template void partition_local<T>(const index_vec&, int, const T*, T*, std::int64_t*, const std::vector<std::int64_t>&); \
  template void topk_vector<T>(const layout&, const communicator&, const T*, std::int64_t, bool, T*, std::int64_t*); \
  template void topk_local<T>(const index_vec&, int, const T*, std::int64_t, bool, T*, std::int64_t*);
EMBER_PARTITION(bool)
EMBER_PARTITION(float)
EMBER_PARTITION(double)
EMBER_PARTITION(std::int8_t)
EMBER_PARTITION(std::int16_t)
EMBER_PARTITION(std::int32_t)
EMBER_PARTITION(std::int64_t)
EMBER_PARTITION(std::uint8_t)
EMBER_PARTITION(std::uint16_t)
EMBER_PARTITION(std::uint32_t)
EMBER_PARTITION(std::uint64_t)
#undef EMBER_PARTITION

}  // namespace ember
