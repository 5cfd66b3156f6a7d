// Order statistics of a distributed vector without sorting it: the k-th
// smallest values by a few rounds of splitter counting.
//
// Each round: every rank draws regular samples of its candidates (about 4096 in
// all, at least 64 per rank), one
// allgather gives all ranks the same samples, two of them bracket the wanted
// rank (a margin of a few sample spacings either side), one allreduce counts the
// candidates below and inside the bracket, and every rank keeps the side the
// wanted rank is on. A round shrinks the candidates by about the sample count;
// when at most 1024 per rank remain in total they are gathered and the value
// is selected directly. NaN-free data (the callers take NaN out or answer NaN).
//
// Runtime only; ember::median/percentile/quantile (sorting/order_statistics.hpp)
// call it.
#pragma once

#include <cstdint>
#include <vector>

#include "../runtime/communicator.hpp"

namespace ember {

// The values of ranks `ks` (0-based, each < the global count) in the sorted
// concatenation of every rank's `n` elements at `data`. Collective; the result
// is the same on every rank.
template <class T>
std::vector<T> select_ranks(const communicator& comm, const T* data, std::int64_t n, const std::vector<std::int64_t>& ks);

}  // namespace ember
