// Order statistics of a distributed vector without sorting it: the k-th
// smallest values by a few rounds of splitter counting.
//
// Each round: every rank draws regular samples of its candidates (about 4096 in
// all, at least 64 per rank up to 64 ranks, at least 8 beyond), one allgather
// gives all ranks the same samples, two of them bracket the wanted rank (a
// margin of 2 sqrt(samples) either side), one allreduce counts the candidates
// below and inside the bracket, and every rank keeps the side the wanted rank
// is on. A round shrinks the candidates by about 16x on any data that is not
// ordered against the sampling; when few are left (1024 per rank, at most 2^20
// in all) they are gathered and the value is selected directly.
//
// Regular samples of unsorted candidates promise no shrink, so the sampling
// rounds are capped (sampling_rounds: what a 8x shrink a round needs, plus
// two) and a radix selection finishes what they leave: one byte of the value's
// order-preserving key a round, one allreduce of 256 counts, the candidates
// kept in the wanted byte's bucket; after the last byte every candidate has
// the same value. So the rounds, and the traffic, have a bound the planner
// states (planner: selection_traffic) whatever the data. NaN-free data (the
// callers take NaN out or answer NaN).
//
// Runtime only; ember::median/percentile/quantile (sorting/order_statistics.hpp)
// call it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../runtime/communicator.hpp"

namespace ember {

// The algorithm's constants, shared with the planner's bound.
namespace selection {
inline std::int64_t samples_per_rank(int P) { return std::max<std::int64_t>(P <= 64 ? 64 : 8, 4096 / std::max(P, 1)); }
// candidates gathered once at most this many are left in all
inline std::int64_t gather_below(int P) { return std::min<std::int64_t>(1024 * std::int64_t(P), std::int64_t(1) << 20); }
// sampling rounds before the radix rounds take over, for `total` candidates
inline int sampling_rounds(std::int64_t total, int P) {
  int r = 2;
  for (std::int64_t m = total; m > gather_below(P); m /= 8) ++r;
  return r;
}
}  // namespace selection

// The values of ranks `ks` (0-based, each < the global count) in the sorted
// concatenation of every rank's `n` elements at `data`. Collective; the result
// is the same on every rank.
template <class T>
std::vector<T> select_ranks(const communicator& comm, const T* data, std::int64_t n, const std::vector<std::int64_t>& ks);

}  // namespace ember
