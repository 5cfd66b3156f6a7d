#include "matmul.hpp"

#include <algorithm>
#include <climits>
#include <complex>
#include <cstring>
#include <memory>
#include <string>

#include "device.hpp"
#include "exchange.hpp"
#include "lapack.hpp"
#include "memory.hpp"

namespace ember {

const char* name(matmul_algorithm a) {
  switch (a) {
    case matmul_algorithm::local: return "local";
    case matmul_algorithm::ring_b: return "ring(B)";
    case matmul_algorithm::ring_a: return "ring(A)";
    case matmul_algorithm::reduce_scatter: return "reduce_scatter";
    case matmul_algorithm::allreduce: return "allreduce";
    case matmul_algorithm::summa: return "summa(p?gemm)";
    case matmul_algorithm::batched: return "batched";
  }
  return "?";
}

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a == 0 ? 0 : (a + b - 1) / b; }
std::int64_t max_msg() { return std::max<std::int64_t>(1, std::min<std::int64_t>(config().max_message_bytes, INT_MAX)); }

bool is_split(const layout& l, int axis) { return l.split() && *l.split() == axis; }
// Local extent of a 2-D matrix view along `axis` on `rank`.
std::int64_t local_extent(const layout& l, int axis, int rank) {
  return is_split(l, axis) ? l.extent(rank) : l.shape()[std::size_t(axis)];
}

[[noreturn]] void bad(const matmul_problem& p, const std::string& why) {
  auto lay = [](const layout& l) {
    return detail::shape_str(l.shape()) + (l.split() ? " split " + std::to_string(*l.split()) : " not split");
  };
  throw value_error(std::string("ember::matmul: algorithm ") + name(p.alg) + " cannot multiply A " + lay(p.a) +
                    " by B " + lay(p.b) + " into C " + lay(p.c) + ": " + why);
}

// The per-rank blocks that travel around a ring: element counts by rank.
std::vector<std::int64_t> ring_blocks(const layout& l) {
  const int P = l.nranks();
  std::vector<std::int64_t> v(static_cast<std::size_t>(P));
  for (int q = 0; q < P; ++q) v[std::size_t(q)] = l.local_size(q);
  return v;
}

// Rank r forwards every block but the one of rank r - 1 (the last it receives).
traffic ring_traffic(const std::vector<std::int64_t>& blocks, std::int64_t elem, int rank) {
  const int P = int(blocks.size());
  traffic t;
  for (int q = 0; q < P; ++q) {
    if (P == 1 || q == (rank - 1 + P) % P) continue;
    const std::int64_t b = blocks[std::size_t(q)] * elem;
    t += {b, ceil_div(b, max_msg())};
  }
  return t;
}
std::vector<traffic> ring_traffic_all(const std::vector<std::int64_t>& blocks, std::int64_t elem) {
  const int P = int(blocks.size());
  traffic all;
  for (auto b : blocks) all += {b * elem, ceil_div(b * elem, max_msg())};
  std::vector<traffic> out(static_cast<std::size_t>(P));
  for (int r = 0; r < P && P > 1; ++r) {
    const std::int64_t b = blocks[std::size_t((r - 1 + P) % P)] * elem;
    out[std::size_t(r)] = all - traffic{b, ceil_div(b, max_msg())};
  }
  return out;
}

// Blocks of `n` in size `b` that process `p` of `np` owns (ScaLAPACK cyclic order).
std::int64_t owned_blocks(std::int64_t n, std::int64_t b, int p, int np) {
  const std::int64_t nblk = ceil_div(n, b);
  return nblk > p ? (nblk - p - 1) / np + 1 : 0;
}

// SUMMA inside p?gemm: every A panel is broadcast along its process row, every B
// panel along its process column; a broadcast counts as its root sending to the
// other members (the communicator's model).
traffic pgemm_model(const summa_layouts& L, std::int64_t elem, int rank) {
  traffic t;
  const int pr = L.a.prow(), pc = L.a.pcol();
  if (pc > 1 && L.a.local_rows(rank) > 0 && L.a.local_cols(rank) > 0)
    t += {std::int64_t(pc - 1) * L.a.local_rows(rank) * L.a.local_cols(rank) * elem,
          std::int64_t(pc - 1) * owned_blocks(L.a.cols(), L.a.nb(), L.a.my_col(rank), pc)};
  if (pr > 1 && L.b.local_rows(rank) > 0 && L.b.local_cols(rank) > 0)
    t += {std::int64_t(pr - 1) * L.b.local_rows(rank) * L.b.local_cols(rank) * elem,
          std::int64_t(pr - 1) * owned_blocks(L.b.rows(), L.b.mb(), L.b.my_row(rank), pr)};
  return t;
}

// Elements of C's row block on every rank: what each rank's share of a partial
// product is.
std::vector<std::int64_t> reduce_scatter_counts(const matmul_problem& p) {
  const int P = p.c.nranks();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(P));
  for (int q = 0; q < P; ++q) counts[std::size_t(q)] = p.c.local_size(q);
  return counts;
}

// ---- batched: stacks of matrices, batch axes broadcast ----

// The axis of operand view `x` aligned with C's axis `d` (batch axes align on
// the right), or -1 when `x` has fewer axes.
int aligned_axis(const layout& x, const layout& c, int d) { return d - (c.ndim() - x.ndim()); }

void validate_batched(const matmul_problem& p) {
  const auto &a = p.a, &b = p.b, &c = p.c;
  const int na = a.ndim(), nb = b.ndim(), nc = c.ndim();
  if (na < 2 || nb < 2 || nc != std::max(na, nb)) bad(p, "the views must be (..., m, k), (..., k, n), (..., m, n)");
  if (a.nranks() != b.nranks() || a.nranks() != c.nranks()) bad(p, "the layouts span different rank counts");
  if (p.trans_a || p.trans_b) bad(p, "a batched product reads no transposed operand");
  const auto &sa = a.shape(), &sb = b.shape(), &sc = c.shape();
  if (sa[std::size_t(na - 1)] != sb[std::size_t(nb - 2)] || sc[std::size_t(nc - 2)] != sa[std::size_t(na - 2)] ||
      sc[std::size_t(nc - 1)] != sb[std::size_t(nb - 1)])
    bad(p, "the shapes do not chain");
  for (int d = 0; d < nc - 2; ++d)
    for (const layout* x : {&a, &b}) {
      const int dx = aligned_axis(*x, c, d);
      if (dx >= 0 && x->shape()[std::size_t(dx)] != 1 && x->shape()[std::size_t(dx)] != sc[std::size_t(d)])
        bad(p, "the batch axes do not broadcast to C's");
    }
  // Every operand is replicated or split exactly as C along the axis C is split.
  auto follows = [&](const layout& x, int dx) { return x.split() && *x.split() == dx && x.extents() == c.extents(); };
  if (!c.split()) {
    if (a.split() || b.split()) bad(p, "C is replicated, so the operands must be");
    return;
  }
  const int d = *c.split();
  if (d == nc - 2) {
    if (!follows(a, na - 2) || b.split()) bad(p, "C split along rows needs A split alike and B replicated");
  } else if (d == nc - 1) {
    if (!follows(b, nb - 1) || a.split()) bad(p, "C split along columns needs B split alike and A replicated");
  } else {
    for (const layout* x : {&a, &b}) {
      const int dx = aligned_axis(*x, c, d);
      const bool own = dx >= 0 && x->shape()[std::size_t(dx)] == sc[std::size_t(d)];
      if (x->split() && !(own && follows(*x, dx)))
        bad(p, "C split along batch axis " + std::to_string(d) + " needs each operand split alike there or replicated");
    }
  }
}

// C's local block = the product of the operands' local blocks, batch by batch.
// A batch axis of an operand whose local extent is 1 is broadcast (it is
// global extent 1, or C has one batch there too); validate_batched makes every
// other local extent equal C's.
template <class T>
void run_batched(const matmul_problem& p, int rank, const T* a, const T* b, T* c) {
  const index_vec la = p.a.lshape(rank), lb = p.b.lshape(rank), lc = p.c.lshape(rank);
  const int na = int(la.size()), nb = int(lb.size()), nc = int(lc.size()), batch_axes = nc - 2;
  const std::int64_t m = lc[std::size_t(nc - 2)], n = lc[std::size_t(nc - 1)], k = la[std::size_t(na - 1)];
  std::int64_t batches = 1;
  for (int d = 0; d < batch_axes; ++d) batches *= lc[std::size_t(d)];
  if (batches == 0 || m == 0 || n == 0) return;
  // Matrix strides (in matrices) of each operand along C's batch axes; 0 where broadcast.
  auto strides = [&](const index_vec& lx, int nx) {
    std::vector<std::int64_t> st(std::size_t(std::max(batch_axes, 0)), 0);
    std::int64_t run = 1;
    for (int d = batch_axes - 1; d >= 0; --d) {
      const int dx = d - (nc - nx);
      if (dx < 0) break;
      if (lx[std::size_t(dx)] != 1) st[std::size_t(d)] = run;
      run *= lx[std::size_t(dx)];
    }
    return st;
  };
  const auto st_a = strides(la, na), st_b = strides(lb, nb);
  const bool b_shared = std::all_of(st_b.begin(), st_b.end(), [](std::int64_t s) { return s == 0; });
  std::int64_t a_run = 1;  // A's stride of C's flattened batch when A holds every batch of C's block, in order
  bool a_dense = true;
  for (int d = batch_axes - 1; d >= 0; --d) {
    if (lc[std::size_t(d)] != 1 && st_a[std::size_t(d)] != a_run) a_dense = false;
    a_run *= lc[std::size_t(d)];
  }
  if (b_shared && a_dense) {  // one B for every batch: one product of all A's rows
    local_gemm<T>(batches * m, n, k, a, k, b, n, T(0), c, n);
    return;
  }
  std::vector<std::int64_t> idx(std::size_t(std::max(batch_axes, 0)), 0);
  std::int64_t oa = 0, ob = 0;
  for (std::int64_t t = 0; t < batches; ++t) {
    local_gemm<T>(m, n, k, a + oa * m * k, k, b + ob * k * n, n, T(0), c + t * m * n, n);
    for (int d = batch_axes - 1; d >= 0; --d) {  // the next batch index, odometer order
      const std::size_t du = std::size_t(d);
      oa += st_a[du];
      ob += st_b[du];
      if (++idx[du] < lc[du]) break;
      oa -= st_a[du] * lc[du];
      ob -= st_b[du] * lc[du];
      idx[du] = 0;
    }
  }
}

}  // namespace

void validate(const matmul_problem& p) {
  const auto &a = p.a, &b = p.b, &c = p.c;
  if (p.alg == matmul_algorithm::batched) return validate_batched(p);
  if (a.ndim() != 2 || b.ndim() != 2 || c.ndim() != 2) bad(p, "the views must be 2-D");
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  if (b.shape()[0] != k || c.shape()[0] != m || c.shape()[1] != n) bad(p, "the shapes do not chain");
  if (a.nranks() != b.nranks() || a.nranks() != c.nranks()) bad(p, "the layouts span different rank counts");
  if ((p.trans_a || p.trans_b) && p.alg != matmul_algorithm::local && p.alg != matmul_algorithm::reduce_scatter &&
      p.alg != matmul_algorithm::allreduce)
    bad(p, "only the local, reduce_scatter and allreduce algorithms read a transposed operand in place");
  switch (p.alg) {
    case matmul_algorithm::local: {
      if (a.split() && !is_split(a, 0)) bad(p, "A must be split along rows or replicated");
      if (b.split() && !is_split(b, 1)) bad(p, "B must be split along columns or replicated");
      if (a.split() && b.split()) bad(p, "at most one operand may be split");
      const bool ok = a.split() ? c == a.with_shape(c.shape(), 0)
                                : b.split() ? c == b.with_shape(c.shape(), 1) : !c.split();
      if (!ok) bad(p, "C must follow the split operand's blocks");
      return;
    }
    case matmul_algorithm::ring_b:
      if (!is_split(a, 0) || !b.split()) bad(p, "A must be split along rows and B split");
      if (!(c == a.with_shape(c.shape(), 0))) bad(p, "C must have A's row blocks");
      return;
    case matmul_algorithm::ring_a:
      if (!is_split(b, 1) || !a.split()) bad(p, "B must be split along columns and A split");
      if (!(c == b.with_shape(c.shape(), 1))) bad(p, "C must have B's column blocks");
      return;
    case matmul_algorithm::reduce_scatter:
    case matmul_algorithm::allreduce:
      if (!is_split(a, 1) || !is_split(b, 0) || a.extents() != b.extents())
        bad(p, "A must be split along columns and B along rows over the same ranges");
      if (p.alg == matmul_algorithm::reduce_scatter ? !is_split(c, 0) : bool(c.split()))
        bad(p, p.alg == matmul_algorithm::reduce_scatter ? "C must be split along rows" : "C must be replicated");
      return;
    case matmul_algorithm::summa:
    case matmul_algorithm::batched: return;
  }
}

summa_layouts summa_layouts_of(const matmul_problem& p) {
  const std::int64_t m = p.a.shape()[0], k = p.a.shape()[1], n = p.b.shape()[1];
  const int P = p.a.nranks();
  return {scalapack::default_block_cyclic(m, k, P), scalapack::default_block_cyclic(k, n, P),
          scalapack::default_block_cyclic(m, n, P)};
}

traffic matmul_traffic(const matmul_problem& p, int rank) {
  const int P = p.a.nranks();
  switch (p.alg) {
    case matmul_algorithm::local:
    case matmul_algorithm::batched: return {};
    case matmul_algorithm::ring_b: return ring_traffic(ring_blocks(p.b), p.elem, rank);
    case matmul_algorithm::ring_a: return ring_traffic(ring_blocks(p.a), p.elem, rank);
    case matmul_algorithm::reduce_scatter: {
      // the ring: every block but this rank's own leaves it once, chunked
      traffic t;
      const auto counts = reduce_scatter_counts(p);
      for (int q = 0; q < P; ++q)
        if (q != rank) t += {counts[std::size_t(q)] * p.elem, ceil_div(counts[std::size_t(q)] * p.elem, max_msg())};
      return t;
    }
    case matmul_algorithm::allreduce: {
      traffic t;
      const std::int64_t bytes = p.c.local_size(rank) * p.elem;
      const std::int64_t step = detail::chunk_elems(std::size_t(p.elem)) * p.elem;
      for (std::int64_t off = 0; off < bytes; off += step) t += model::allreduce(std::min(step, bytes - off), P);
      return t;
    }
    case matmul_algorithm::summa: {
      const auto L = summa_layouts_of(p);
      const std::size_t e = std::size_t(p.elem);
      return exchange(p.a, L.a, rank, e).predicted() + exchange(p.b, L.b, rank, e).predicted() +
             exchange(L.c, p.c, rank, e).predicted() + pgemm_model(L, p.elem, rank);
    }
  }
  return {};
}

std::vector<traffic> matmul_traffic_all(const matmul_problem& p, bool estimate) {
  const int P = p.a.nranks();
  if (p.alg == matmul_algorithm::ring_b) return ring_traffic_all(ring_blocks(p.b), p.elem);
  if (p.alg == matmul_algorithm::ring_a) return ring_traffic_all(ring_blocks(p.a), p.elem);
  std::vector<traffic> out(static_cast<std::size_t>(P));
  if (p.alg == matmul_algorithm::local || p.alg == matmul_algorithm::batched) return out;
  if (p.alg == matmul_algorithm::reduce_scatter) {
    const auto counts = reduce_scatter_counts(p);
    traffic all;
    for (auto c : counts) all += {c * p.elem, ceil_div(c * p.elem, max_msg())};
    for (int r = 0; r < P; ++r) {
      const std::int64_t mine = counts[std::size_t(r)] * p.elem;
      out[std::size_t(r)] = all - traffic{mine, ceil_div(mine, max_msg())};
    }
    return out;
  }
  if (p.alg == matmul_algorithm::allreduce) {
    const traffic t = matmul_traffic(p, 0);
    for (auto& x : out) x = t;
    return out;
  }
  // summa: the exact conversions intersect every block with every slab, O(blocks)
  // per rank; beyond a budget of blocks the planner's view is the estimate.
  const auto L = summa_layouts_of(p);
  auto blocks = [](const scalapack::block_cyclic& b) {
    return ((b.rows() + b.mb() - 1) / b.mb()) * ((b.cols() + b.nb() - 1) / b.nb());
  };
  const bool exact = !estimate || (P <= 64 && blocks(L.a) + blocks(L.b) + blocks(L.c) <= (1 << 14));
  for (int r = 0; r < P; ++r) out[std::size_t(r)] = exact ? matmul_traffic(p, r) : matmul_traffic_estimate(p, r);
  return out;
}

traffic matmul_traffic_estimate(const matmul_problem& p, int rank) {
  if (p.alg != matmul_algorithm::summa) return matmul_traffic(p, rank);
  // Conversions to and from block-cyclic move nearly every element of a block
  // ((P-1)/P of it) to about as many peers as the block touches.
  const auto L = summa_layouts_of(p);
  const int P = p.a.nranks();
  auto conv = [&](const distribution& d, std::int64_t peers) {
    const std::int64_t b = d.local_size(rank) * p.elem;
    return traffic{b - b / P, b > 0 ? std::min<std::int64_t>(P - 1, peers) : 0};
  };
  const std::int64_t peers = std::int64_t(L.c.prow()) * L.c.pcol();
  return conv(p.a, peers) + conv(p.b, peers) + conv(L.c, peers) + pgemm_model(L, p.elem, rank);
}

double matmul_flops(const matmul_problem& p) {
  const int P = p.a.nranks();
  if (p.alg == matmul_algorithm::batched) {  // C's largest block times 2k
    std::int64_t mx = 0;
    for (int q = 0; q < P; ++q) mx = std::max(mx, p.c.local_size(q));
    return 2 * double(mx) * double(p.a.shape().back());
  }
  const double m = double(p.a.shape()[0]), k = double(p.a.shape()[1]), n = double(p.b.shape()[1]);
  auto max_ext = [&](const layout& l, int axis) {
    std::int64_t mx = 0;
    if (!is_split(l, axis)) return double(l.shape()[std::size_t(axis)]);
    for (auto e : l.extents()) mx = std::max(mx, e);
    return double(mx);
  };
  switch (p.alg) {
    case matmul_algorithm::local: return 2 * max_ext(p.a, 0) * k * max_ext(p.b, 1);
    case matmul_algorithm::ring_b: return 2 * max_ext(p.a, 0) * k * n;
    case matmul_algorithm::ring_a: return 2 * m * k * max_ext(p.b, 1);
    case matmul_algorithm::reduce_scatter:
    case matmul_algorithm::allreduce: return 2 * m * max_ext(p.a, 1) * n;
    case matmul_algorithm::summa: return 2 * m * n * k / P;
    case matmul_algorithm::batched: break;  // above
  }
  return 0;
}

std::int64_t matmul_workspace(const matmul_problem& p) {
  auto max_block = [](const layout& l) {
    std::int64_t mx = 0;
    for (int q = 0; q < l.nranks(); ++q) mx = std::max(mx, l.local_size(q));
    return mx;
  };
  switch (p.alg) {
    case matmul_algorithm::local:
    case matmul_algorithm::batched: return 0;
    case matmul_algorithm::ring_b: return 2 * max_block(p.b) * p.elem;
    case matmul_algorithm::ring_a: return 2 * max_block(p.a) * p.elem;
    case matmul_algorithm::reduce_scatter: return 3 * max_block(p.c) * p.elem;  // the ring's three block buffers
    case matmul_algorithm::allreduce: return 0;
    case matmul_algorithm::summa: {
      const auto L = summa_layouts_of(p);
      std::int64_t w = 0;
      for (const distribution* d : {static_cast<const distribution*>(&L.a), static_cast<const distribution*>(&L.b), static_cast<const distribution*>(&L.c)}) {
        std::int64_t mx = 0;
        for (int q = 0; q < d->nranks(); ++q) mx = std::max(mx, d->local_size(q));
        w += mx;
      }
      return w * p.elem;
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------
// The element types BLAS multiplies (the others take the plain loop).
template <class T>
constexpr bool blas_type = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                           std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

template <class T>
void local_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda,
                const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (blas_type<T>) {
    if (k == 0) {
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
      return;
    }
    // A row-major buffer is the column-major matrix of its transpose.
    if (n == 1) {  // c[i * ldc] = sum_l A(i, l) B(l, 0): A is a[i * lda + l], or a[l * lda + i] stored transposed
      lapack::gemv<T>(!ta, ta ? m : k, ta ? k : m, T(1), a, lda, b, tb ? 1 : ldb, beta, c, ldc);
      return;
    }
    if (m == 1) {  // c[j] = sum_l A(0, l) B(l, j)
      lapack::gemv<T>(tb, tb ? k : n, tb ? n : k, T(1), b, ldb, a, ta ? lda : 1, beta, c, 1);
      return;
    }
    // row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T
    lapack::gemm<T>(tb, ta, n, m, k, T(1), b, ldb, a, lda, beta, c, ldc);
  } else {
    for (std::int64_t i = 0; i < m; ++i) {
      T* ci = c + i * ldc;
      for (std::int64_t j = 0; j < n; ++j) ci[j] = beta == T(0) ? T(0) : beta * ci[j];
      for (std::int64_t l = 0; l < k; ++l) {
        const T x = ta ? a[l * lda + i] : a[i * lda + l];
        if (tb)
          for (std::int64_t j = 0; j < n; ++j) ci[j] += x * b[j * ldb + l];
        else
          for (std::int64_t j = 0; j < n; ++j) ci[j] += x * b[l * ldb + j];
      }
    }
  }
}

template <class T>
void local_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda, const T* b,
                std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  local_gemm<T>(false, false, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

namespace {

constexpr int ring_tag = 0x454d;  // "EM"

// Posts `bytes` of `buf` to or from `peer` in messages of at most max_msg().
void post_chunked(const communicator& comm, const void* buf, std::int64_t bytes, int peer, bool send,
                  std::vector<MPI_Request>& reqs) {
  const std::int64_t chunk = max_msg();
  char* p = static_cast<char*>(const_cast<void*>(buf));
  for (std::int64_t off = 0; off < bytes; off += chunk) {
    reqs.emplace_back();
    if (send) comm.isend_bytes(p + off, std::min(chunk, bytes - off), peer, ring_tag, &reqs.back());
    else comm.irecv_bytes(p + off, std::min(chunk, bytes - off), peer, ring_tag, &reqs.back());
  }
}

// Passes every rank's block once around the ring (to rank - 1, from rank + 1),
// calling compute(q, block of rank q) for q = rank, rank + 1, ...; the next block
// is in flight while the current one is multiplied. Two buffers of the largest
// block: no rank ever holds a whole operand.
template <class T, class F>
void ring(const communicator& comm, const std::vector<std::int64_t>& blocks, const T* own, F&& compute) {
  const int P = comm.size(), r = comm.rank();
  std::int64_t mx = 0;
  for (auto b : blocks) mx = std::max(mx, b);
  std::shared_ptr<T[]> buf[2];
  if (P > 1)
    for (auto& b : buf) b = detail::allocate<T>(std::max<std::int64_t>(mx, 1));
  const T* cur = own;
  for (int s = 0; s < P; ++s) {
    const int q = (r + s) % P;
    std::vector<MPI_Request> reqs;
    if (s + 1 < P) {
      const int left = (r - 1 + P) % P, right = (r + 1) % P;
      const int nq = (r + s + 1) % P;
      post_chunked(comm, buf[s % 2].get(), blocks[std::size_t(nq)] * std::int64_t(sizeof(T)), right, false, reqs);
      post_chunked(comm, cur, blocks[std::size_t(q)] * std::int64_t(sizeof(T)), left, true, reqs);
    }
    compute(q, cur);
    communicator::wait_all(reqs);
    if (s + 1 < P) cur = buf[s % 2].get();
  }
}

// A split 1 x B split 0 -> C split 0: each rank's partial product over its k
// range, summed into C's row blocks by a ring reduce-scatter that overlaps the
// products with the messages. Step s sends the partial sum of block r-s-1 to the
// right while this rank multiplies its rows of block r-s-2, then adds what the
// left neighbour sent for that block; its own block r is multiplied last, into
// C, during the last message. No rank holds more than three row blocks (MPI's
// reduce-scatter on one m x n buffer was 5-10x slower here at 32 MiB).
template <class T>
void ring_reduce_scatter(const matmul_problem& p, const communicator& comm, const T* a, const T* b, T* c) {
  const int P = comm.size(), r = comm.rank();
  const std::int64_t m = p.a.shape()[0], n = p.b.shape()[1], kr = p.a.extent(r);
  const std::int64_t lda = p.trans_a ? m : kr, ldb = p.trans_b ? kr : n;
  // this rank's partial product of C's row block q, into out (rows x n)
  auto partial = [&](int q, T* out) {
    const std::int64_t off = p.c.offset(q), rows = p.c.extent(q);
    local_gemm<T>(p.trans_a, p.trans_b, rows, n, kr, p.trans_a ? a + off : a + off * lda, lda, b, ldb, T(0), out, n);
  };
  if (P == 1) {
    partial(0, c);
    return;
  }
  std::int64_t mx = 0;
  for (int q = 0; q < P; ++q) mx = std::max(mx, p.c.extent(q) * n);
  std::shared_ptr<T[]> buf[3];
  for (auto& x : buf) x = detail::allocate<T>(std::max<std::int64_t>(mx, 1));
  T *send = buf[0].get(), *next = buf[1].get(), *recv = buf[2].get();
  const int left = (r - 1 + P) % P, right = (r + 1) % P;
  auto block = [&](int s) { return ((r - s - 1) % P + P) % P; };  // what step s sends
  partial(block(0), send);
  for (int s = 0; s + 1 < P; ++s) {
    const int qs = block(s), qr = block(s + 1);  // sent now; received now, sent next (the own block last)
    std::vector<MPI_Request> reqs;
    post_chunked(comm, recv, p.c.extent(qr) * n * std::int64_t(sizeof(T)), left, false, reqs);
    post_chunked(comm, send, p.c.extent(qs) * n * std::int64_t(sizeof(T)), right, true, reqs);
    T* acc = qr == r ? c : next;
    partial(qr, acc);
    communicator::wait_all(reqs);
    const std::int64_t cnt = p.c.extent(qr) * n;
    for (std::int64_t i = 0; i < cnt; ++i) acc[i] += recv[i];
    std::swap(send, next);
  }
}

}  // namespace

template <class T>
void run_matmul(const matmul_problem& p, const communicator& comm, const T* a, const T* b, T* c) {
  validate(p);
  const int r = comm.rank();
  if (p.alg == matmul_algorithm::batched) return run_batched<T>(p, r, a, b, c);
  const std::int64_t m = p.a.shape()[0], k = p.a.shape()[1], n = p.b.shape()[1];
  switch (p.alg) {
    case matmul_algorithm::local: {
      const std::int64_t mr = local_extent(p.a, 0, r), nc = local_extent(p.b, 1, r);
      local_gemm<T>(p.trans_a, p.trans_b, mr, nc, k, a, p.trans_a ? mr : k, b, p.trans_b ? k : nc, T(0), c, nc);
      return;
    }
    case matmul_algorithm::ring_b: {
      const std::int64_t mr = p.a.extent(r);
      if (is_split(p.b, 0)) {
        bool first = true;
        ring<T>(comm, ring_blocks(p.b), b, [&](int q, const T* blk) {
          const std::int64_t kq = p.b.extent(q);
          if (kq == 0) return;
          local_gemm<T>(mr, n, kq, a + p.b.offset(q), k, blk, n, first ? T(0) : T(1), c, n);
          first = false;
        });
        if (first) std::fill_n(c, mr * n, T(0));
      } else {
        ring<T>(comm, ring_blocks(p.b), b, [&](int q, const T* blk) {
          const std::int64_t nq = p.b.extent(q);
          local_gemm<T>(mr, nq, k, a, k, blk, nq, T(0), c + p.b.offset(q), n);
        });
      }
      return;
    }
    case matmul_algorithm::ring_a: {
      const std::int64_t nc = p.b.extent(r);
      if (is_split(p.a, 0)) {
        ring<T>(comm, ring_blocks(p.a), a, [&](int q, const T* blk) {
          local_gemm<T>(p.a.extent(q), nc, k, blk, k, b, nc, T(0), c + p.a.offset(q) * nc, nc);
        });
      } else {
        bool first = true;
        ring<T>(comm, ring_blocks(p.a), a, [&](int q, const T* blk) {
          const std::int64_t kq = p.a.extent(q);
          if (kq == 0) return;
          local_gemm<T>(m, nc, kq, blk, kq, b + p.a.offset(q) * nc, nc, first ? T(0) : T(1), c, nc);
          first = false;
        });
        if (first) std::fill_n(c, m * nc, T(0));
      }
      return;
    }
    case matmul_algorithm::reduce_scatter: {
      ring_reduce_scatter<T>(p, comm, a, b, c);
      return;
    }
    case matmul_algorithm::allreduce: {
      const std::int64_t kr = p.a.extent(r);
      local_gemm<T>(p.trans_a, p.trans_b, m, n, kr, a, p.trans_a ? m : kr, b, p.trans_b ? kr : n, T(0), c, n);
      comm.allreduce(c, m * n, reduce_op::sum);
      return;
    }
    case matmul_algorithm::summa: {
      if constexpr (blas_type<T>) {
        const auto L = summa_layouts_of(p);
        const auto& g = scalapack::grid::get(comm, L.c.prow(), L.c.pcol());
        auto A = detail::allocate<T>(std::max<std::int64_t>(L.a.local_size(r), 1));
        auto B = detail::allocate<T>(std::max<std::int64_t>(L.b.local_size(r), 1));
        auto C = detail::allocate<T>(std::max<std::int64_t>(L.c.local_size(r), 1));
        exchange(p.a, L.a, r, sizeof(T)).run(comm, a, A.get());
        exchange(p.b, L.b, r, sizeof(T)).run(comm, b, B.get());
        if (k == 0) {
          std::fill_n(C.get(), L.c.local_size(r), T(0));
        } else if (m > 0 && n > 0) {
          scalapack::pgemm<T>('N', 'N', int(m), int(n), int(k), T(1), A.get(), scalapack::describe(L.a, g, r), B.get(),
                              scalapack::describe(L.b, g, r), T(0), C.get(), scalapack::describe(L.c, g, r));
          comm.count(pgemm_model(L, p.elem, r));
        }
        exchange(L.c, p.c, r, sizeof(T)).run(comm, C.get(), c);
      } else {
        throw type_error("ember::matmul: the ScaLAPACK algorithm takes floating or complex operands");
      }
      return;
    }
    case matmul_algorithm::batched: return;  // above
  }
}

bool runs_on_device(const matmul_problem& p, int dtype_code) {
  // float32 = 4, float64 = 5 (dsl/dtype.hpp's codes)
  return p.alg == matmul_algorithm::local && (dtype_code == 4 || dtype_code == 5);
}

void run_matmul_device(const matmul_problem& p, int rank, int dtype_code, const void* a, const void* b, void* c) {
  validate(p);
  if (!runs_on_device(p, dtype_code))
    throw value_error(std::string("ember::matmul: the ") + name(p.alg) +
                      " algorithm (or this dtype) has no GPU implementation; the planner runs it on the host");
  const std::int64_t k = p.a.shape()[1];
  const std::int64_t mr = local_extent(p.a, 0, rank), nc = local_extent(p.b, 1, rank);
  if (mr == 0 || nc == 0) return;
  auto& g = detail::gpu_or_throw("ember::matmul");
  if (k == 0) {
    g.zero(c, std::size_t(mr * nc) * std::size_t(p.elem));
    return;
  }
  g.gemm_row_major(dtype_code, p.trans_a, p.trans_b, mr, nc, k, 1.0, a, p.trans_a ? mr : k, b, p.trans_b ? k : nc, 0.0,
                   c, nc);
}

#define EMBER_MATMUL(T)                                                                                       \
  template void run_matmul<T>(const matmul_problem&, const communicator&, const T*, const T*, T*);            \
  template void local_gemm<T>(std::int64_t, std::int64_t, std::int64_t, const T*, std::int64_t, const T*,    \
                              std::int64_t, T, T*, std::int64_t);                                            \
  template void local_gemm<T>(bool, bool, std::int64_t, std::int64_t, std::int64_t, const T*, std::int64_t,  \
                              const T*, std::int64_t, T, T*, std::int64_t);
EMBER_MATMUL(float)
EMBER_MATMUL(double)
EMBER_MATMUL(std::int32_t)
EMBER_MATMUL(std::int64_t)
EMBER_MATMUL(std::int8_t)
EMBER_MATMUL(std::int16_t)
EMBER_MATMUL(std::uint8_t)
EMBER_MATMUL(std::uint16_t)
EMBER_MATMUL(std::uint32_t)
EMBER_MATMUL(std::uint64_t)
EMBER_MATMUL(std::complex<float>)
EMBER_MATMUL(std::complex<double>)
#undef EMBER_MATMUL

}  // namespace ember
