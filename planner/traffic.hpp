// Exact traffic of moving an array between two split/replicated layouts, for every
// rank, without building the exchange and without MPI.
//
// The exchange engine (runtime/exchange.hpp) computes the same numbers for one
// rank by intersecting boxes; that is O(P) per rank, O(P^2) for all ranks, too slow
// to plan for 65536 ranks. Here the same rules (peers, bytes, contiguity, chunking,
// the allgather fast path) are evaluated in closed form over classes of ranks with
// equal extents, O(P log P). tests/test_planner.cpp checks rank by rank that both
// agree.
#pragma once

#include <cstdint>
#include <vector>

#include "../runtime/communicator.hpp"
#include "../runtime/layout.hpp"

namespace ember::planner {

struct traffic_summary {
  traffic max_rank;  // the largest bytes and the largest message count over ranks
  traffic total;     // summed over ranks
  std::vector<traffic> per_rank;  // filled when requested
  bool moves() const { return total.bytes > 0 || total.messages > 0; }
};

// Traffic of src -> dst for elements of `elem` bytes under the current
// ember::config() (message and staging limits).
traffic_summary move_traffic(const layout& src, const layout& dst, std::int64_t elem, bool per_rank = false);

// Traffic of moving from any distribution (a reversed view: planner/ir.hpp) to
// `dst`, rank by rank through the exchange engine's own schedule: O(P^2), so
// refused (value_error) above 1024 ranks.
traffic_summary distribution_traffic(const distribution& src, const layout& dst, std::int64_t elem, bool per_rank = false);
// Traffic of an allreduce of `bytes` on every rank (the communicator's model,
// chunked as the communicator chunks).
traffic_summary allreduce_traffic(std::int64_t bytes, std::int64_t elem, int nranks, bool per_rank = false);
// Allgather where rank r contributes bytes_of[r] (chunked as the communicator does).
traffic_summary allgather_traffic(const std::vector<std::int64_t>& units_of, std::int64_t unit, bool per_rank = false);

// Upper bound of a sample sort's traffic (sorting/sample_sort.hpp) of a vector
// laid out as `l` (split; nothing when replicated or at one rank) with elements
// of `value_elem` bytes; `with_index`: argsort, (value, index) pairs travel. Exact
// for the samples, counts and sizes; the all-to-all sends at most the block and
// the rebalance at most the largest bucket regular sampling allows:
// gmax * (ceil(S / P) + P) - P elements, gmax the largest gap between one
// rank's samples, S all samples (a rank's share of a bucket with k of its
// samples is at most (k + 1) gap - 1).
traffic_summary sample_sort_traffic(const layout& l, std::int64_t value_elem, bool with_index, bool per_rank = false);

// Upper bound of the traffic of finding `ranks` order statistics of an array
// laid out as `l` (elements of `value_elem` bytes) by the distributed selection
// of sorting/selection.hpp: the NaN count and the count (exact), then for each
// rank wanted at most selection::sampling_rounds sampling rounds, one radix
// round per byte of the value and the final gather of at most
// selection::gather_below candidates (nothing when `l` is replicated or P = 1).
traffic_summary selection_traffic(const layout& l, std::int64_t value_elem, std::int64_t ranks, bool per_rank = false);
// Upper bound of the traffic of a distributed partition (sorting/partition.hpp)
// of the split vector laid out as `l` around `ranks` kth: the NaN count, the
// pivots' selection, one allgather of the class counts (2 ranks + 2 a rank),
// one all-to-all of the values (with their int64 global indices for
// argpartition) that sends at most each rank's block.
traffic_summary partition_traffic(const layout& l, std::int64_t value_elem, bool with_index, std::int64_t ranks,
                                  bool per_rank = false);
// Upper bound of the traffic of topk (sorting/partition.hpp) of the split
// vector laid out as `l`: the NaN count, the k-th value's selection, one
// allgather of the counts before and at the threshold, then the sort of the
// candidates with their global indices (at most min(k, block) a rank) across
// the ranks, as sample_sort_traffic of argsort over those blocks.
traffic_summary topk_traffic(const layout& l, std::int64_t value_elem, std::int64_t k, bool per_rank = false);

}  // namespace ember::planner
