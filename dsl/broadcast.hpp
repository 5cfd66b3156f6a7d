// Broadcast for dndarrays, and arrays built from data that only the root has.
//
//   ember::broadcast(a, 0);        // a replicated (split none) array: root's values everywhere
//   auto g = ember::array(v, {.split = ember::none, .root = 0});   // only rank 0's v is read
//   auto s = ember::array(v, {.split = 0, .root = 0});             // scattered: each rank gets its slice
//
// With `.root`, the shape (and dtype) are the root's: the other ranks may pass
// empty data. Replicated results come from one MPI_Bcast path (runtime/
// broadcast.hpp); split results are a scatter by the exchange engine, from a
// layout in which the root holds everything, so each rank receives only its slice.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "../runtime/broadcast.hpp"
#include "../runtime/exchange.hpp"
#include "../runtime/layout.hpp"
#include "dndarray.hpp"
#include "dtype.hpp"

namespace ember {

// Makes the root's values of a replicated array every rank's (in place: every
// handle sharing the storage sees them). A split array holds a different block
// on every rank, so it has no "root's copy": that is a value_error on every rank
// (ember::resplit(a, ember::none) gathers a split array instead).
template <dtype T, int N>
void broadcast(dndarray<T, N>& a, int root = 0) {
  const auto& c = a.comm();
  if (a.split())
    throw value_error("ember::broadcast: the array of shape " + detail::shape_str(a.shape()) +
                      " is split along axis " + std::to_string(*a.split()) +
                      "; only a replicated (split=none) array can take the root's copy (gather a split one with "
                      "ember::resplit(a, ember::none))");
  detail::check_root(c, root, "broadcast");
  if (c.size() == 1) return;
  detail::bcast_elems(a.ldata(), a.lnumel(), root, c);
}

namespace detail {

constexpr int root_record_dims = 32;

// ember::array(..., {.root = r}): only `root`'s data and shape count. `nvalues` is
// the number of values the caller passed (checked against the shape on the root,
// collectively, so a bad call throws on every rank).
template <dtype T, int N>
dndarray<T, N> from_root(const T* data, std::int64_t nvalues, const std::array<std::int64_t, N>& shape,
                         split_axis split, int root, const communicator& c) {
  static_assert(N <= root_record_dims);
  check_root(c, root, "array(root)");
  // Every rank must name the same root: a mismatch would pair up different
  // broadcasts. One allreduce of (root, -root) under max tells.
  std::int64_t rr[2] = {root, -root};
  c.allreduce(rr, 2, reduce_op::max);
  if (rr[0] != -rr[1])
    throw value_error("ember::array(root): ranks name different roots (from " + std::to_string(-rr[1]) + " to " +
                      std::to_string(rr[0]) + ")");
  // The root's facts: dtype, rank of the array, value count, split, shape.
  std::array<std::int64_t, 4 + root_record_dims> rec{};
  rec[0] = dtype_code<T>();
  rec[1] = N;
  rec[2] = nvalues;
  rec[3] = split ? *split : -1;
  for (int d = 0; d < N; ++d) rec[4 + d] = shape[std::size_t(d)];
  std::array<std::int64_t, 4 + root_record_dims> mine = rec;
  c.bcast(rec.data(), std::int64_t(rec.size()), root);
  // Checks on replicated facts (the root's record; every rank's own dtype, N and
  // split agree with it, or the allreduce below makes every rank throw, naming
  // the ranks that differ after one more allgather on that error path only).
  const bool same_kind = mine[0] == rec[0] && mine[1] == rec[1] && mine[3] == rec[3];
  if (c.allreduce(int(same_kind), reduce_op::land) == 0) {
    const std::int64_t kind[3] = {mine[0], mine[1], mine[3]};
    const auto all = c.allgather(kind, 3);
    auto what = [&](const std::int64_t* k) {
      return std::string(dtype_name(int(k[0]))) + " data of " + std::to_string(k[1]) + " dimensions, split " +
             (k[2] < 0 ? std::string("none") : std::to_string(k[2]));
    };
    const std::int64_t rk[3] = {rec[0], rec[1], rec[3]};
    std::string bad;
    bool type_differs = false;
    for (int r = 0; r < c.size(); ++r) {
      const std::int64_t* k = all.data() + 3 * std::size_t(r);
      if (k[0] == rk[0] && k[1] == rk[1] && k[2] == rk[2]) continue;
      type_differs = type_differs || k[0] != rk[0] || k[1] != rk[1];
      bad += (bad.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) + " builds " + what(k);
    }
    const std::string msg = "ember::array(root=" + std::to_string(root) + "): the root passes " + what(rk) + ", but " +
                            bad + " (dtype, rank and split must be the same on every rank)";
    if (type_differs) throw type_error(msg);
    throw value_error(msg);
  }
  std::array<std::int64_t, N> sh;
  std::int64_t n = 1;
  for (int d = 0; d < N; ++d) {
    sh[std::size_t(d)] = rec[4 + std::size_t(d)];
    if (sh[std::size_t(d)] < 0)
      throw value_error("ember::array(root=" + std::to_string(root) + "): negative extent in the root's shape " +
                        shape_str(sh));
  }
  n = checked_numel(sh, "ember::array(root=" + std::to_string(root) + ")");
  if (rec[2] != n)
    throw shape_error("ember::array(root=" + std::to_string(root) + "): the root's " + std::to_string(rec[2]) +
                      " values do not fill its shape " + shape_str(sh));
  if (split) check_axis(*split, N, "array(root)");
  const index_vec gs(sh.begin(), sh.end());
  if (!split) {
    auto a = agreed_array<T, N>(replicated_layout(gs, c.size()), c, "ember::array(root)");
    if (c.rank() == root && n > 0) std::memcpy(a.ldata(), data, std::size_t(n) * sizeof(T));
    if (c.size() > 1) bcast_elems(a.ldata(), n, root, c);
    return a;
  }
  // Scatter: the root holds the whole array as its slab along the split axis.
  index_vec ext(std::size_t(c.size()), 0);
  ext[std::size_t(root)] = gs[std::size_t(*split)];
  const layout on_root(gs, split, ext);
  auto a = agreed_array<T, N>(layout::balanced(gs, split, c.size()), c, "ember::array(root)");
  exchange(on_root, a.layout(), c.rank(), sizeof(T)).run(c, data, a.ldata());
  return a;
}

}  // namespace detail
}  // namespace ember
