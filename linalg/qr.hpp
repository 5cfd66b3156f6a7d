// ember::linalg::qr: the reduced QR decomposition A = Q R of a distributed matrix.
//
// Two algorithms, chosen from replicated metadata only (every rank picks the same):
//
//  * TSQR (communication-avoiding QR) when A is split along its rows and every rank
//    holds at least as many rows as A has columns (lshape_map()[r][0] >= n for all r;
//    this implies m >= P n). Each rank factors its block with LAPACK, then the n x n
//    R factors are reduced pairwise up a binary tree (level s: rank r, r % 2s == 0,
//    stacks its R over rank r + s's and factors the 2n x n stack again). Rank 0 ends
//    with R and broadcasts it: R is replicated (not split), as in Heat. Q is formed by
//    applying the tree's Householder factors back down the tree, starting from the
//    n x n identity, and then each rank's local factor to its n x n block S_r. Every
//    factor is kept in compact WY form (Q = I - V T V^T, LAPACK's geqrt with one
//    block), so Q_r [S_r; 0] costs one local m_r x n x n matrix product. Q keeps
//    A's split and A's lshape_map. Traffic per rank: one n x n message up (except
//    rank 0), one n x n message down per child, and the broadcast of R; independent
//    of m. Flops per rank: 4 m_r n^2 (QR + the product), plus O(n^3 log P).
//
//  * ScaLAPACK (p?geqrf + p?orgqr) in every other case (split 0 with a rank holding
//    fewer than n rows, e.g. square matrices; split 1; not split). The matrix moves
//    to the block-cyclic layout and back through the exchange engine, and R and Q
//    are moved straight out of the factored block-cyclic storage (no extra copy).
//    Q (m x k) gets A's split axis, balanced; R (k x n) gets A's split axis too
//    (balanced), or is replicated when A is not split.
//
// Either way R is upper triangular with exact zeros below the diagonal and a
// real nonnegative diagonal (the corresponding columns of Q are flipped, or for
// complex A multiplied by the diagonal's phase), so the result is unique for
// full-rank A and independent of the rank count and algorithm. Complex A is
// factored the same way (zgeqrt/cgeqrt in the tree, p?geqrf + p?ungqr in
// ScaLAPACK): Q^H Q = I. Unlike Heat 1.4 (which refuses TSQR for square split-0
// matrices), every split and shape is accepted. Integer and bool dtypes throw
// ember::type_error on every rank before any communication.
#pragma once

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "../runtime/failure.hpp"
#include "../runtime/lapack.hpp"
#include "bridge.hpp"
#include "types.hpp"

namespace ember::linalg {
namespace impl {

template <class T>
inline constexpr bool lapack_type_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                      std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;

// v / |v| (the sign of a real v, 1 for 0): what a column of Q is multiplied by,
// and R's row divided by, to make R's diagonal real and nonnegative.
template <class T>
T unit_phase(T v) {
  if constexpr (is_complex_v<T>) {
    const auto m = std::abs(v);
    return m == 0 ? T(1) : v / m;
  } else {
    return v < T(0) ? T(-1) : T(1);
  }
}
template <class T>
T conj_of(T v) {
  if constexpr (is_complex_v<T>) return std::conj(v);
  else return v;
}

// LAPACK factors floating-point matrices only. The dtype is a compile-time fact,
// the same on every rank, so every rank throws here before any communication.
template <class T>
void require_lapack_type(const char* fn, const std::array<std::int64_t, 2>& shape) {
  if constexpr (!lapack_type_v<T>)
    throw type_error(std::string("ember::linalg::") + fn + ": the array of shape " + ember::detail::shape_str(shape) +
                     " has dtype " + std::string(dtype_name<T>()) +
                     ", which it cannot factor; it takes float32, float64, complex64 or complex128 (convert with "
                     "ember::astype<double>)");
}

// ScaLAPACK's interface is 32-bit.
inline void require_int_dims(const char* fn, const std::array<std::int64_t, 2>& shape) {
  if (shape[0] > INT_MAX || shape[1] > INT_MAX)
    throw value_error(std::string("ember::linalg::") + fn + ": shape " + ember::detail::shape_str(shape) +
                      " exceeds ScaLAPACK's 32-bit dimensions");
}

// b = a^T: a is rows x cols column-major (lda), b cols x rows column-major (ldb).
// A row-major m x n block is the column-major n x m matrix, so this also turns a
// row-major block into a column-major one and back. Tiled so both sides stream.
template <class T>
void transpose(std::int64_t rows, std::int64_t cols, const T* a, std::int64_t lda, T* b, std::int64_t ldb) {
  constexpr std::int64_t tile = 32;
  for (std::int64_t j0 = 0; j0 < cols; j0 += tile)
    for (std::int64_t i0 = 0; i0 < rows; i0 += tile) {
      const std::int64_t j1 = std::min(cols, j0 + tile), i1 = std::min(rows, i0 + tile);
      for (std::int64_t i = i0; i < i1; ++i)
        for (std::int64_t j = j0; j < j1; ++j) b[j + i * ldb] = a[i + j * lda];
    }
}

// Calls f(global_row, global_col, element&) over this rank's block of a 2-D array.
template <class T, class F>
void for_each_local(const dndarray<T, 2>& a, F&& f) {
  const auto ls = a.lshape();
  const std::int64_t r0 = a.split() == 0 ? a.loffset() : 0, c0 = a.split() == 1 ? a.loffset() : 0;
  T* p = a.ldata();
  for (std::int64_t i = 0; i < ls[0]; ++i)
    for (std::int64_t j = 0; j < ls[1]; ++j) f(r0 + i, c0 + j, p[i * ls[1] + j]);
}

// The block-cyclic layout ember's solvers use: the default grid with square blocks
// (p?gesvd, p?gesv, p?potrf and p?syevd want MB = NB, and U, VT, B and Z blocked
// like A).
inline scalapack::block_cyclic square_block_cyclic(std::int64_t m, std::int64_t n, int nranks) {
  const auto [pr, pc] = scalapack::grid_shape(nranks);
  const std::int64_t nb = std::min(scalapack::default_block(m, pr), scalapack::default_block(n, pc));
  return scalapack::block_cyclic(m, n, pr, pc, nb, nb);
}

// The leading rows x cols submatrix of a block-cyclic matrix, in that matrix's own
// storage. ScaLAPACK leaves R (k x n) and Q (m x k) there; describing them as a
// distribution lets the exchange engine move them out directly. Clipping a block
// only lowers its upper corner, so the pieces' offsets and strides stay valid.
class bc_leading final : public distribution {
 public:
  bc_leading(const scalapack::block_cyclic& full, std::int64_t rows, std::int64_t cols)
      : full_(full), shape_{rows, cols} {}
  const index_vec& shape() const override { return shape_; }
  int nranks() const override { return full_.nranks(); }
  bool replicated() const override { return false; }
  std::vector<piece> pieces(int rank) const override {
    std::vector<piece> out;
    const box_nd clip{{0, 0}, shape_};
    for (auto p : full_.pieces(rank)) {
      p.global = intersect(p.global, clip);
      if (!p.global.empty()) out.push_back(std::move(p));
    }
    return out;
  }
  std::vector<int> owners(const box_nd& b) const override { return full_.owners(b); }
  std::int64_t local_size(int rank) const override { return full_.local_size(rank); }

 private:
  const scalapack::block_cyclic& full_;
  index_vec shape_;
};

// A 2-D distribution read transposed: the same storage seen as the (n, m) matrix
// (boxes and strides swapped). ScaLAPACK returns V^T; ember returns V, and the
// exchange engine transposes on the way.
class transposed_view final : public distribution {
 public:
  explicit transposed_view(const distribution& d) : d_(d), shape_{d.shape()[1], d.shape()[0]} {}
  const index_vec& shape() const override { return shape_; }
  int nranks() const override { return d_.nranks(); }
  bool replicated() const override { return d_.replicated(); }
  std::vector<piece> pieces(int rank) const override {
    auto ps = d_.pieces(rank);
    for (auto& p : ps) {
      std::swap(p.global.lo[0], p.global.lo[1]);
      std::swap(p.global.hi[0], p.global.hi[1]);
      std::swap(p.strides[0], p.strides[1]);
    }
    return ps;
  }
  std::vector<int> owners(const box_nd& b) const override {
    return d_.owners(box_nd{{b.lo[1], b.lo[0]}, {b.hi[1], b.hi[0]}});
  }
  std::int64_t local_size(int rank) const override { return d_.local_size(rank); }

 private:
  const distribution& d_;
  index_vec shape_;
};

// ---- point-to-point for the TSQR tree: messages of at most max_message_bytes,
// sent through the communicator so its traffic counters see every byte ----
inline constexpr int tsqr_tag = 0x7471;

inline std::int64_t message_chunk() {
  return std::max<std::int64_t>(1, std::min<std::int64_t>(config().max_message_bytes, INT_MAX));
}
template <class T>
void send(const communicator& comm, const T* p, std::int64_t n, int peer) {
  std::vector<MPI_Request> reqs;
  const std::int64_t bytes = n * std::int64_t(sizeof(T)), c = message_chunk();
  const char* b = reinterpret_cast<const char*>(p);
  for (std::int64_t off = 0; off < bytes; off += c) {
    reqs.emplace_back();
    comm.isend_bytes(b + off, std::min(c, bytes - off), peer, tsqr_tag, &reqs.back());
  }
  communicator::wait_all(reqs);
}
template <class T>
void recv(const communicator& comm, T* p, std::int64_t n, int peer) {
  std::vector<MPI_Request> reqs;
  const std::int64_t bytes = n * std::int64_t(sizeof(T)), c = message_chunk();
  char* b = reinterpret_cast<char*>(p);
  for (std::int64_t off = 0; off < bytes; off += c) {
    reqs.emplace_back();
    comm.irecv_bytes(b + off, std::min(c, bytes - off), peer, tsqr_tag, &reqs.back());
  }
  communicator::wait_all(reqs);
}

// The TSQR binary tree over `nranks` ranks: at level s (1, 2, 4, ...) rank r with
// r % 2s == s sends its R to its parent r - s and leaves the up-sweep; rank r with
// r % 2s == 0 receives from r + s when that rank exists.
inline int tsqr_parent(int rank) { return rank == 0 ? -1 : rank - (rank & -rank); }
inline std::vector<int> tsqr_children(int rank, int nranks) {
  std::vector<int> c;
  for (int s = 1; s < nranks && (rank % (2 * s)) == 0; s *= 2)
    if (rank + s < nranks) c.push_back(rank + s);
  return c;
}

// One Householder QR in compact WY form: a rows x n matrix (rows >= n) factored
// by LAPACK's geqrt with a single block, so Q = I - V T V^H with V unit lower
// trapezoidal (stored below R's diagonal) and T n x n upper triangular (V^T for
// real T: every 'C' below is the transpose there).
template <class T>
struct wy_factor {
  std::int64_t rows = 0, n = 0;
  std::vector<T> v;  // the factored matrix, column-major rows x n (ld rows)
  std::vector<T> t;  // T, column-major n x n

  wy_factor(std::vector<T> a, std::int64_t rows_, std::int64_t n_)
      : rows(rows_), n(n_), v(std::move(a)), t(static_cast<std::size_t>(n_ * n_), T(0)) {
    lapack::geqrt<T>(rows, n, n, v.data(), rows, t.data(), n);
    for (std::int64_t j = 0; j < n; ++j)  // geqrt leaves T's lower part undefined
      for (std::int64_t i = j + 1; i < n; ++i) t[std::size_t(i + j * n)] = T(0);
  }
  // R, column-major n x n.
  std::vector<T> r() const {
    std::vector<T> out(std::size_t(n * n), T(0));
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i <= j; ++i) out[std::size_t(i + j * n)] = v[std::size_t(i + j * rows)];
    return out;
  }
  // Q [S; 0] for an n x n S (column-major). The zero block makes this cheap:
  // Q [S; 0] = [S; 0] - V W with W = T V1^H S (V1 the top n x n of V), so the
  // whole cost is one rows x n x n product instead of applying n reflectors to a
  // rows x n matrix (LAPACK's ormqr, twice the flops). The top n rows, S - V1 W,
  // are returned column-major; the other rows - n go to `bottom`, column-major
  // (ld ldb) or, with `transposed`, as their transpose (n x (rows - n), ld ldb).
  std::vector<T> apply(const std::vector<T>& s, T* bottom, std::int64_t ldb, bool transposed) const {
    const std::int64_t nn = n * n;
    std::vector<T> v1(static_cast<std::size_t>(nn), T(0)), x(static_cast<std::size_t>(nn)), w(static_cast<std::size_t>(nn));
    for (std::int64_t j = 0; j < n; ++j) {
      v1[std::size_t(j + j * n)] = T(1);
      for (std::int64_t i = j + 1; i < n; ++i) v1[std::size_t(i + j * n)] = v[std::size_t(i + j * rows)];
    }
    lapack::gemm<T>('C', 'N', n, n, n, T(1), v1.data(), n, s.data(), n, T(0), x.data(), n);   // V1^H S
    lapack::gemm<T>('N', 'N', n, n, n, T(1), t.data(), n, x.data(), n, T(0), w.data(), n);   // T V1^H S
    std::vector<T> top(s);
    lapack::gemm<T>(false, false, n, n, n, T(-1), v1.data(), n, w.data(), n, T(1), top.data(), n);
    const T* v2 = v.data() + n;  // rows n.. of V, ld rows
    // (the transpose of -V2 W is -W^T V2^T: plain transposes, the storage order)
    if (transposed) lapack::gemm<T>(true, true, n, rows - n, n, T(-1), w.data(), n, v2, rows, T(0), bottom, ldb);
    else lapack::gemm<T>(false, false, rows - n, n, n, T(-1), v2, rows, w.data(), n, T(0), bottom, ldb);
    return top;
  }
};

// The reduction tree of TSQR: every rank brings the n x n R of its local block,
// the R factors are stacked pairwise and factored again up a binary tree, and
// the root (rank 0) holds the R of the whole matrix. The tree's factors are kept,
// so Q (or Q times a small matrix) can be formed afterwards: down() gives each
// rank the n x n matrix its local Q factor must be multiplied by. Used with a
// LAPACK local factor (tsqr below) and with a cuSOLVER one (qr_tsqr_device).
template <class T>
class tsqr_tree {
 public:
  // `r_local`: this rank's R, column-major n x n, upper triangular.
  tsqr_tree(const communicator& comm, std::vector<T> r_local, std::int64_t n)
      : comm_(comm), n_(n), r_(std::move(r_local)) {
    const std::int64_t nn = n_ * n_;
    for (int child : tsqr_children(comm_.rank(), comm_.size())) {
      std::vector<T> theirs(static_cast<std::size_t>(nn));
      recv(comm_, theirs.data(), nn, child);
      // [R_mine; R_child] as a 2n x n column-major stack, factored again.
      std::vector<T> stack(static_cast<std::size_t>(2 * nn));
      for (std::int64_t j = 0; j < n_; ++j) {
        std::copy_n(&r_[std::size_t(j * n_)], n_, &stack[std::size_t(j * 2 * n_)]);
        std::copy_n(&theirs[std::size_t(j * n_)], n_, &stack[std::size_t(j * 2 * n_ + n_)]);
      }
      nodes_.push_back({child, wy_factor<T>(std::move(stack), 2 * n_, n_)});
      r_ = nodes_.back().f.r();
    }
    if (const int p = tsqr_parent(comm_.rank()); p >= 0) send(comm_, r_.data(), nn, p);
  }

  // The n x n R factor, column-major, upper triangular: valid on rank 0 only.
  std::vector<T>& r() { return r_; }

  // Collective. For the n x n matrix S given (column-major) on rank 0 and ignored
  // elsewhere: this rank's S_local (column-major n x n) such that this rank's rows
  // of Q S are Q_local [S_local; 0], Q_local the local factor's Q.
  std::vector<T> down(std::vector<T> s) const {
    const std::int64_t nn = n_ * n_;
    if (const int p = tsqr_parent(comm_.rank()); p >= 0) {
      s.assign(std::size_t(nn), T(0));
      recv(comm_, s.data(), nn, p);
    }
    // Down the tree, last-formed node first: [S_mine; S_child] = Q_node [S; 0].
    std::vector<T> theirs(static_cast<std::size_t>(nn));
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
      s = it->f.apply(s, theirs.data(), n_, false);
      send(comm_, theirs.data(), nn, it->child);
    }
    return s;
  }

 private:
  struct node {
    int child;
    wy_factor<T> f;  // the factored stack [R_mine; R_child]
  };
  communicator comm_;
  std::int64_t n_;
  std::vector<node> nodes_;
  std::vector<T> r_;
};

// TSQR of a tall-skinny matrix whose rows are split over `comm`: this rank's
// rows x n block (rows >= n), given column-major (ld = rows), is factored locally
// (LAPACK, compact WY) and the R factors are reduced up the tree.
template <class T>
class tsqr {
 public:
  tsqr(const communicator& comm, std::vector<T> local, std::int64_t rows, std::int64_t n)
      : n_(n), local_(std::move(local), rows, n), tree_(comm, local_.r(), n) {}

  // The n x n R factor, column-major, upper triangular: valid on rank 0 only.
  std::vector<T>& r() { return tree_.r(); }

  // Collective. This rank's rows of Q S, for the n x n matrix S given (column-major)
  // on rank 0 and ignored elsewhere, written row-major (ld n) into `out` (rows x n).
  void apply_q(std::vector<T> s, T* out) const {
    const std::int64_t nn = n_ * n_;
    s = tree_.down(std::move(s));
    // This rank's block Q_local [S; 0]: the first n rows come back column-major,
    // the rest is written transposed, i.e. row-major, straight into `out`.
    const auto top = local_.apply(s, out + nn, n_, true);
    transpose(n_, n_, top.data(), n_, out, n_);
  }

 private:
  std::int64_t n_;
  wy_factor<T> local_;
  tsqr_tree<T> tree_;
};

// TSQR applies when A is split along its rows and every rank holds at least n
// rows: every local factor is then a full n x n triangle and the tree is balanced.
template <class T>
bool tsqr_applies(const dndarray<T, 2>& a) {
  if (a.split() != 0) return false;
  const std::int64_t n = a.shape()[1];
  for (const auto& row : a.lshape_map())
    if (row[0] < n) return false;
  return n > 0;
}

// This rank's block of a split-0 array as a column-major matrix for LAPACK.
template <class T>
std::vector<T> column_major_block(const dndarray<T, 2>& a) {
  const auto ls = a.lshape();
  std::vector<T> out(std::size_t(ls[0] * ls[1]));
  transpose(ls[1], ls[0], a.ldata(), ls[1], out.data(), std::max<std::int64_t>(ls[0], 1));
  return out;
}

// R (n x n, replicated, on the host) from the root's R with its rows divided by
// the phases (signs) of its diagonal, so the diagonal is real and nonnegative;
// `d` gets the phases on rank 0 (Q D, with D = diag(d), keeps Q R: D D^H = I;
// tsqr_tree::down reads its S on rank 0 only).
template <class T>
dndarray<T, 2> signed_r(const communicator& comm, const std::vector<T>& rr, std::int64_t n, std::vector<T>& d) {
  dndarray<T, 2> r(replicated_layout({n, n}, comm.size()), comm);
  d.assign(std::size_t(n), T(1));
  if (comm.rank() == 0) {
    for (std::int64_t i = 0; i < n; ++i) d[std::size_t(i)] = unit_phase(rr[std::size_t(i + i * n)]);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        r.ldata()[i * n + j] = j < i    ? T(0)
                               : j == i ? T(std::abs(rr[std::size_t(i + j * n)]))
                                        : conj_of(d[std::size_t(i)]) * rr[std::size_t(i + j * n)];
  }
  comm.bcast(r.ldata(), n * n, 0);
  return r;
}
template <class T>
std::vector<T> diag_matrix(const std::vector<T>& d) {
  const std::int64_t n = std::int64_t(d.size());
  std::vector<T> s(std::size_t(n * n), T(0));
  for (std::int64_t i = 0; i < n; ++i) s[std::size_t(i + i * n)] = d[std::size_t(i)];
  return s;
}

template <class T>
qr_result<T> qr_tsqr(const dndarray<T, 2>& a, const qr_options& o) {
  const auto& comm = a.comm();
  const std::int64_t n = a.shape()[1];
  tsqr<T> f(comm, column_major_block(a), a.lshape()[0], n);
  std::vector<T> d;
  auto r = signed_r(comm, f.r(), n, d);  // every rank holds the same R
  if (o.mode == qr_mode::r) return {dndarray<T, 2>{}, r};
  dndarray<T, 2> q(a.layout(), comm);
  f.apply_q(diag_matrix(d), q.ldata());
  return {q, r};
}

// TSQR of a GPU array: the local factor on the GPU (cuSOLVER geqrf, then orgqr
// for the explicit local Q), the n x n tree on the host (each rank sends and
// receives R factors only), and this rank's block of Q as ONE cuBLAS product
// Q_local S_local written row-major into Q's device block. The block crosses the
// host-device link only as R (n x n down) and S_local (n x n up).
template <class T>
qr_result<T> qr_tsqr_device_steps(const dndarray<T, 2>& a, const qr_options& o) {
  auto& g = ember::detail::gpu_or_throw("ember::linalg::qr");
  const auto& comm = a.comm();
  const std::int64_t n = a.shape()[1], rows = a.lshape()[0];
  const int code = dtype_code<T>();
  const std::size_t es = sizeof(T);
  // column-major rows x n (ld rows) = the row-major block transposed
  auto cm = g.allocate(std::size_t(rows * n) * es);
  g.transpose_row_major(code, rows, n, a.lstorage(), cm.get());
  auto tau = g.allocate(std::size_t(n) * es);
  g.geqrf(code, rows, n, cm.get(), rows, tau.get());
  std::vector<T> r_local(std::size_t(n * n));
  g.copy_matrix(es, n, n, cm.get(), rows, r_local.data(), n);
  for (std::int64_t j = 0; j < n; ++j)  // below the diagonal: reflectors, not R
    for (std::int64_t i = j + 1; i < n; ++i) r_local[std::size_t(i + j * n)] = T(0);
  tsqr_tree<T> tree(comm, std::move(r_local), n);
  std::vector<T> d;
  auto r = signed_r(comm, tree.r(), n, d);
  if (o.mode == qr_mode::r) return {dndarray<T, 2>{}, r.to(device_kind::gpu)};
  g.orgqr(code, rows, n, n, cm.get(), rows, tau.get());
  const auto sl = tree.down(diag_matrix(d));
  auto sd = g.allocate(std::size_t(n * n) * es);
  g.copy(sd.get(), sl.data(), std::size_t(n * n) * es);
  dndarray<T, 2> q(a.layout(), comm, device_kind::gpu);
  // Q's row-major block is column-major n x rows: (Q_local S_local)^T = S_local^T Q_local^T
  g.gemm(code, true, true, n, rows, n, 1.0, sd.get(), n, cm.get(), rows, 0.0, q.lstorage(), n);
  g.synchronize();
  return {q, r.to(device_kind::gpu)};
}

template <class T>
qr_result<T> qr_tsqr_device(const dndarray<T, 2>& a, const qr_options& o) {
  // A CUDA error or an exhausted pool on one rank would leave the others in the
  // tree's messages: the local-failure policy (runtime/failure.hpp) aborts the job
  // with a message instead (one rank: the exception is rethrown).
  qr_result<T> out;
  failure::operation_scope scope;
  const int ordinal = failure::begin_operation(1);
  failure::guarded_step(a.comm(), ordinal, {"qr", 1, 1, "tsqr with GPU local factors", ""},
                        [&] { out = qr_tsqr_device_steps(a, o); });
  return out;
}

// The phases (signs) of R's diagonal, replicated (R may be split: each rank
// contributes the diagonal entries it holds, one allreduce of k values).
template <class T>
std::vector<T> diagonal_signs(const dndarray<T, 2>& r) {
  const std::int64_t k = std::min(r.shape()[0], r.shape()[1]);
  std::vector<T> d(std::size_t(k), T(0));
  for_each_local(r, [&](std::int64_t i, std::int64_t j, T& v) {
    if (i == j) d[std::size_t(i)] = unit_phase(v);
  });
  if (r.split() && k > 0) r.comm().allreduce(d.data(), k, reduce_op::sum);
  return d;
}

template <class T>
qr_result<T> qr_scalapack(const dndarray<T, 2>& a, const qr_options& o) {
  const auto& comm = a.comm();
  const int P = comm.size(), me = comm.rank();
  const auto [m, n] = a.shape();
  const std::int64_t k = std::min(m, n);
  auto bc = to_block_cyclic(a);
  std::vector<T> tau(std::size_t(std::max<std::int64_t>(bc.local_cols(), 1)));
  scalapack::pgeqrf<T>(int(m), int(n), bc.local(), bc.desc, tau.data());

  dndarray<T, 2> r(layout::balanced({k, n}, a.split(), P), comm);
  exchange(bc_leading(bc.lay, k, n), r.layout(), me, sizeof(T)).run(comm, bc.local(), r.ldata());
  const auto d = diagonal_signs(r);
  for_each_local(r, [&](std::int64_t i, std::int64_t j, T& v) {
    v = j < i ? T(0) : j == i ? T(std::abs(v)) : conj_of(d[std::size_t(i)]) * v;
  });
  if (o.mode == qr_mode::r) return {dndarray<T, 2>{}, r};

  scalapack::porgqr<T>(int(m), int(k), int(k), bc.local(), bc.desc, tau.data());
  dndarray<T, 2> q(layout::balanced({m, k}, a.split(), P), comm);
  exchange(bc_leading(bc.lay, m, k), q.layout(), me, sizeof(T)).run(comm, bc.local(), q.ldata());
  for_each_local(q, [&](std::int64_t, std::int64_t j, T& v) { v *= d[std::size_t(j)]; });
  return {q, r};
}

}  // namespace impl

// Reduced QR: Q (m x k) with orthonormal columns, R (k x n) upper triangular with
// a nonnegative diagonal, k = min(m, n); mode r returns R only (Q a null handle).
// Collective over A's communicator. See the top of this file for the algorithms
// and the layouts of Q and R.
template <class T>
qr_result<T> qr(const dndarray<T, 2>& a, const qr_options& o = {}) {
  impl::require_lapack_type<T>("qr", a.shape());
  if constexpr (impl::lapack_type_v<T>) {
    impl::require_int_dims("qr", a.shape());
    const auto [m, n] = a.shape();
    const int P = a.comm().size();
    if (m == 0 || n == 0) {  // nothing to factor: empty Q (m x 0) and R (0 x n)
      const std::int64_t k = std::min(m, n);
      dndarray<T, 2> q(layout::balanced({m, k}, a.split(), P), a.comm(), a.device());
      dndarray<T, 2> r(layout::balanced({k, n}, a.split(), P), a.comm(), a.device());
      return {o.mode == qr_mode::r ? dndarray<T, 2>{} : q, r};
    }
    if (a.device() == device_kind::gpu) {
      // TSQR with the local factor on the GPU (real dtypes); ScaLAPACK on host copies otherwise
      if constexpr (!is_complex_v<T>)
        if (impl::tsqr_applies(a)) return impl::qr_tsqr_device(a, o);
      auto h = impl::qr_scalapack(a.to(device_kind::cpu), o);
      return {impl::on(h.Q, device_kind::gpu), impl::on(h.R, device_kind::gpu)};
    }
    return impl::tsqr_applies(a) ? impl::qr_tsqr(a, o) : impl::qr_scalapack(a, o);
  } else {
    return {};
  }
}

// QR needs a matrix: any other rank is a compile-time error naming the function.
template <class T, int N>
qr_result<T> qr(const dndarray<T, N>&, const qr_options& = {}) {
  static_assert(N == 2, "ember::linalg::qr: needs a 2-D array (a matrix); this one has N != 2 dimensions");
  return {};
}

}  // namespace ember::linalg
