// The planner: chooses a layout for every fused group of an expression with a
// dynamic program over a cost model (alpha per message + beta per byte on the
// busiest rank), inserts the fewest moves, and returns an ordered plan that is
// identical on every rank. Printable like SQL EXPLAIN, exportable as JSON and
// Graphviz DOT. No MPI anywhere in here.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "../runtime/matmul.hpp"
#include "../scan/scan_kernel.hpp"
#include "ir.hpp"
#include "traffic.hpp"

namespace ember::planner {

// Seconds per message and per byte. Defaults measured on the development machine
// by `bench/bench_costmodel` (2 ranks, OpenMPI shared memory: 0.54 us, 6 GB/s);
// on a cluster measure there and set EMBER_ALPHA / EMBER_BETA, or assign to
// cost_model() (identically on every rank: plans must agree).
// gamma: seconds per floating-point operation of a local product (it tells a
// product every rank repeats from one divided over the ranks); mu: seconds per
// byte of extra memory an algorithm allocates (first touch), so that of two
// algorithms moving the same bytes the one holding less wins; memory_limit:
// bytes per rank an algorithm may add (0: no limit; EMBER_MEMORY_LIMIT).
// kappa: seconds per byte a rank writes locally when it copies (every byte of a
// move's destination block, a physical transpose's output), so that a move which
// sends nothing still costs (at one rank every move is such a copy) and loses to
// a plan without it (EMBER_KAPPA; `bench_costmodel` measures it next to alpha and
// beta). pcie_alpha, pcie_beta: seconds per host<->device copy and per byte copied
// (defaults: 10 us, 25 GB/s, a PCIe 4/5 x16 link with pinned buffers;
// EMBER_PCIE_ALPHA / EMBER_PCIE_BETA).
struct cost_params {
  double alpha = 5.4e-7;
  double beta = 1.7e-10;
  double gamma = 1e-10;
  double mu = 5e-11;
  double kappa = 1e-10;
  double memory_limit = 0;
  double pcie_alpha = 1e-5;
  double pcie_beta = 4e-11;
};
cost_params& cost_model();

enum class step_kind {
  realign,       // same split axis, other extents: only rows changing owner move
  resplit,       // another split axis
  allgather,     // to replicated (split none)
  partition,     // replicated to split: each rank keeps its part, nothing is sent
  halo,          // a leaf read by a kernel in another split of its axis: only the rows each rank
                 // lacks travel (to its neighbours' ghost rows); the kernel reads the rest in place
  reverse,       // a leaf read backwards along the split axis (a[::-1]), moved to a layout
  fused_kernel,  // one pass over the local blocks: every elementwise op of a group (and its reduction)
  allreduce,     // combine partial reductions over the split axis
  gather_index,  // argmin/argmax over the split axis: allgather of (value, index) pairs
  matmul,        // a distributed product by the algorithm in `product`
  transpose,     // reverses the axes of the local block: split k becomes split ndim-1-k, nothing is sent
  scan,          // cumsum/cumprod/cummax/cummin along an axis; along the split axis one exclusive scan of a slice
  sample_sort,   // sort/argsort of a split vector across the ranks; the result balanced; traffic data-dependent (a bound)
  local_sort,    // sort/argsort along a local axis: each rank sorts its lines, nothing is sent
  local_select,  // partition, median, quantile along a local axis: each rank selects within its lines, nothing is sent
  local_fft,     // ember::fft's transforms along a local axis: each rank transforms its lines (FFTW), nothing is sent
  distributed_select,  // median, quantile over every axis: rounds of splitter counting over the blocks (a bound)
  distributed_partition,  // partition/argpartition of a split vector: the pivots selected, one all-to-all
                          // places every element; the result balanced (a bound)
  distributed_topk,  // topk of a split vector: the k-th value selected, the candidates sorted across the ranks;
                     // the result balanced (a bound)
  to_host,       // GPU arrays: copies a value's local block from device to host memory (no network traffic)
  to_device,     // and from host to device memory
};
const char* name(step_kind k);
// realign, resplit, allgather, partition, halo: an exchange-engine move from one layout to another
bool is_move(step_kind k);

struct step {
  step_kind kind{};
  int node = -1;    // IR node: the value moved, or the root of the fused group
  int input = -1;   // value read by moves and collectives
  int output = -1;  // value written
  std::vector<std::pair<int, int>> bindings;  // kernels: (IR boundary node, value id)
  // fused kernels: a scan node (cumsum, ...) the kernel computes as it reads it
  // (planner: fuse_scan_consumers), or -1. Its binding's value is never
  // produced; the scan operand's value is bound too, and the step's traffic is
  // the scan's.
  int inline_scan = -1;
  std::optional<layout> from, to;  // moves: source and target; kernels: iteration and output layout
  std::string text;                // kernels: the fused expression; moves: what moves
  std::optional<matmul_problem> product;  // matmul: the algorithm and the matrix views of A, B, C
  std::int64_t memory = 0;         // matmul: extra bytes per rank the algorithm allocates
  traffic_summary traffic;         // predicted, per rank on request
  // `traffic` is an upper bound, not the exact count: the step's messages depend
  // on the data (sample_sort: where the splitters fall). EXPLAIN prints "<=",
  // last_trace() has the measured traffic, EMBER_CHECK_TRAFFIC checks measured <= bound.
  bool bound = false;
  device_kind on = device_kind::cpu;  // where the step runs (GPU plans: kernels there, the rest on the host)
  std::int64_t copy_bytes = 0;     // to_host/to_device: bytes over the host-device link on the busiest rank
  // Bytes the step writes into memory on the busiest rank: the block a kernel,
  // move, transpose, product or allreduce fills (what the cost model's kappa
  // prices for moves and transposes). Halo ghosts arrive by message (traffic)
  // and host-device copies are copy_bytes: 0 here.
  std::int64_t local_bytes = 0;
};

class plan {
 public:
  int nranks = 1;
  std::vector<step> steps;
  std::vector<layout> values;   // layout of every value id
  std::vector<int> value_node;  // IR node that each value holds
  std::vector<int> leaf_value;  // per IR node: value id of the leaf's own data (-1 if not a leaf)
  std::vector<device_kind> value_device;  // where each value's blocks live
  device_kind device = device_kind::cpu;  // where the leaves and the result live
  int result = -1;              // value id of the expression's result
  double cost = 0;              // model cost of the chosen plan (seconds)

  traffic max_rank() const;  // summed over steps of the per-step maximum
  std::int64_t copy_bytes() const;  // host<->device bytes on the busiest rank, summed over copy steps
  std::int64_t local_bytes() const;  // summed over steps of step::local_bytes
  traffic total() const;
  std::uint64_t hash() const;
  std::string to_string() const;  // EXPLAIN
  std::string to_json() const;
  std::string to_dot() const;
};
std::ostream& operator<<(std::ostream& os, const plan& p);

// Plans `g` for g.nranks ranks. `target`: a fixed layout for the result
// (assignment into an existing array, eval with a split), or the planner's choice.
// `per_rank`: keep every rank's predicted traffic in the steps.
plan make_plan(const graph& g, const std::optional<layout>& target, bool per_rank = false);
// How many plans this process has made (the dsl caches them: a loop re-evaluating
// one expression plans once).
std::int64_t plans_made();

// The layout an input of shape `s` must have for a group iterating over `iter`
// (NumPy broadcasting: shapes align on the right; a broadcast axis is replicated).
layout needed_layout(const layout& iter, const index_vec& s);
// The result layout of reducing `axes` of an argument laid out as `iter`.
layout reduced_layout(const layout& iter, const index_vec& out_shape, const std::vector<int>& axes, bool keepdims);

}  // namespace ember::planner
