// Partial orders of a distributed vector: NumPy's partition/argpartition and
// topk (the k largest or smallest, sorted, with their global indices).
//
// partition of a split vector around the ranks `kth` (sorted, in range):
//   1. the values at those ranks by distributed selection (sorting/selection.hpp:
//      rounds of splitter counting, no sort), NaN counted apart (it goes last);
//   2. every element falls in a class: below the first pivot, equal to it,
//      between it and the next, ..., NaN; each rank orders its block by class
//      (a stable counting pass) and one allgather of the class counts tells
//      every rank where each rank's part of each class goes;
//   3. one MPI_Alltoallv moves every element straight to its place in the
//      balanced result (each rank's classes are contiguous runs of it).
// Within a class elements keep their global order, so the result is
// deterministic (NumPy's own order inside a partition is unspecified).
//
// topk: the k-th value in the wanted order by selection, then every element
// before it and the first ties (by global index) up to k are sorted by
// sort_keyed (value, global index): ties in index order, NaN largest (as in
// sort's descending order).
//
// Runtime only; ember::partition/argpartition/topk (sorting/topk.hpp) call it.
#pragma once

#include <cstdint>
#include <vector>

#include "../runtime/communicator.hpp"
#include "../runtime/layout.hpp"

namespace ember {

// Partitions the vector laid out as `l` (1-D; `in` this rank's block) so that
// the elements at the ranks `kth` (ascending, distinct, each < the length) are
// where a sort puts them, smaller ones before and larger ones after; `out` is
// this rank's block of the balanced layout of l's shape (replicated when l
// is), `index_out` (optional) the global indices the values came from.
// Collective.
template <class T>
void partition_vector(const layout& l, const communicator& comm, const T* in, T* out, std::int64_t* index_out,
                      const std::vector<std::int64_t>& kth);

// The same along `axis` of each line of a block of shape `lshape`, locally
// (std::nth_element: the order inside a partition is unspecified).
template <class T>
void partition_local(const index_vec& lshape, int axis, const T* in, T* out, std::int64_t* index_out,
                     const std::vector<std::int64_t>& kth);

// The `k` largest (or smallest) elements of the vector laid out as `l`, in
// that order (ties by global index, NaN largest), into this rank's block of
// the balanced layout of shape {k}: values to `out`, global indices to
// `index_out`. Collective.
template <class T>
void topk_vector(const layout& l, const communicator& comm, const T* in, std::int64_t k, bool largest, T* out,
                 std::int64_t* index_out);

// The same along `axis` of each line of a block of shape `lshape` (the output
// block has k along `axis`), locally.
template <class T>
void topk_local(const index_vec& lshape, int axis, const T* in, std::int64_t k, bool largest, T* out,
                std::int64_t* index_out);

}  // namespace ember
