// The planner's input: an expression lowered to a small graph (no types, no data),
// plus the layouts of its leaves. Built by the dsl from the static expression tree;
// pure data, so the planner is a function that runs without MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../runtime/device.hpp"
#include "../runtime/layout.hpp"

namespace ember::planner {

// matmul and transpose are operations of their own (never fused): their operands
// are values computed by other groups, their output is read by the next group.
// scan (cumsum, ...) too: its axis is axes[0]; and sort (op "sort" or
// "argsort", index_result for argsort, label the options as EXPLAIN shows them):
// its axis is axes[0]. lines: an operation on every line along axes[0] on its own
// (partition, median and quantile along an axis: op names it, label its
// options), the axis made local; its shape is the operand's, or the operand's
// without the axis. select: order statistics over every axis (median, quantile:
// op names it, label its options), a replicated result of shape () or (q,),
// ranks_selected the order statistics it finds.
enum class node_kind : std::uint8_t { leaf, scalar, elementwise, reduce, matmul, transpose, scan, sort, lines, select };

struct ir_node {
  node_kind kind = node_kind::leaf;
  std::string op;          // "add", "sin", "sum", ... ("leaf", "scalar" for those)
  std::vector<int> args;   // child node ids
  index_vec shape;         // output shape
  int dtype = 0;           // dtype code of the output (dsl/dtype.hpp)
  std::int64_t elem = 8;   // bytes per element of the output
  std::string label;       // leaves: "a0", "a1", ... by storage; scalars: the value; sorts: their options;
                           // elementwise ops with state (lookups): the table as EXPLAIN shows it
  // leaves
  std::optional<layout> lay;  // where the leaf's data is now
  int alias = -1;             // first leaf node id with the same storage (itself when first)
  // A view reading the split axis backwards (a[::-1] of a split array): its
  // elements lie in reverse rank order, which no layout describes. `lay` is then
  // the mirror (rank r holds what rank nranks-1-r really holds) and `source`
  // where the elements are: the planner always moves such a leaf (step
  // `reverse`), priced exactly on `source`, and never reads it in place.
  std::shared_ptr<const distribution> source;
  // reductions
  std::vector<int> axes;      // reduced axes of the argument, sorted
  bool keepdims = false;
  bool index_result = false;  // argmin/argmax: combined across ranks by an allgather of (value, index); argsort
  std::int64_t value_elem = 0;  // argmin/argmax: bytes of the argument's value in each pair
  // select: how many ranks of the sorted data the selection finds (at most)
  std::int64_t ranks_selected = 0;
  // matmul
  bool outer = false;         // outer(a, b): a (m,) as a column times b (n,) as a row
};

// Nodes in pre-order: nodes[0] is the root, a node's arguments follow it.
struct graph {
  std::vector<ir_node> nodes;
  int nranks = 1;
  // Where every leaf's block lives (an expression never mixes devices), and what
  // the evaluating code can do there: run fused kernels on the GPU (the
  // expression was compiled by nvcc), hand device pointers to MPI (a CUDA-aware
  // MPI). What cannot run on the GPU runs on the host, with copy steps around it.
  device_kind device = device_kind::cpu;
  bool device_kernels = false;
  bool device_mpi = false;
};

}  // namespace ember::planner
