// Distributed sorting of a vector split over the ranks: a sample sort whose
// result is balanced (Heat's block split of the global length), NaN last.
//
//   1. each rank sorts its block (std::sort; argsort: std::stable_sort of
//      (value, global index) pairs, so ties keep their order on every rank);
//   2. each rank draws P - 1 regular samples of its sorted block; one allgather of
//      the samples gives every rank the same P - 1 splitters;
//   3. every element goes to the rank whose splitter range holds it: one
//      MPI_Alltoall of the counts, one MPI_Alltoallv of the data; each rank
//      merges the P sorted runs it received;
//   4. a realign by the exchange engine moves only what the splitters left
//      unbalanced to the balanced layout.
// Keys are made unique by (value, rank, position) (argsort: (value, global
// index)) so that many equal values split evenly too: memory per rank stays at
// about 2 n / P elements plus the P^2 samples, whatever the data.
//
// Runtime only; the dsl's ember::sort/argsort (sorting/sort.hpp) call it.
#pragma once

#include <cstdint>
#include <vector>

#include "../runtime/communicator.hpp"
#include "../runtime/layout.hpp"

namespace ember {

struct sort_options {
  bool stable = false;      // equal keys keep their order (what argsort's indices show)
  bool descending = false;  // the ascending order reversed (NaN first)
};

// Sorts the vector laid out as `l` (1-D, split or replicated; `in` this rank's
// block) into `out`, this rank's block of the balanced layout of l's shape
// (replicated when l is). With `index_out`, also the global indices the sorted
// values came from (argsort). Collective.
template <class T>
void sort_vector(const layout& l, const communicator& comm, const T* in, T* out, std::int64_t* index_out,
                 const sort_options& o);

// Sorts the `n` (value, key) pairs of this rank (`keys` unique over all ranks,
// e.g. global indices) by value, then key, into this rank's block of the
// balanced layout of all ranks' pairs together: values to `out`, keys to
// `keys_out` (topk sorts its candidates so). Collective.
template <class T>
void sort_keyed(const communicator& comm, const T* values, const std::int64_t* keys, std::int64_t n, T* out,
                std::int64_t* keys_out, const sort_options& o);

// Sorts each line along `axis` of a block of shape `lshape` (row-major) locally:
// values into `out`, and with `index_out` the indices along the axis (argsort).
template <class T>
void sort_local(const index_vec& lshape, int axis, const T* in, T* out, std::int64_t* index_out,
                const sort_options& o);

}  // namespace ember
