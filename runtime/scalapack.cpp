#include "scalapack.hpp"

#include "factorization_errors.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

extern "C" {
// BLACS (C interface shipped with Debian's scalapack-openmpi)
int Csys2blacs_handle(MPI_Comm comm);
void Cblacs_gridinit(int* ctxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ctxt);
void Cfree_blacs_system_handle(int handle);
// PBLAS / ScaLAPACK (Fortran interface)
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
               const int* ictxt, const int* lld, int* info);
#define EMBER_PDECL(p, T, q)                                                                                        \
  void p##gemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const T* alpha,       \
                const T* a, const int* ia, const int* ja, const int* da, const T* b, const int* ib, const int* jb, \
                const int* db, const T* beta, T* c, const int* ic, const int* jc, const int* dc);                 \
  void p##geqrf_(const int* m, const int* n, T* a, const int* ia, const int* ja, const int* da, T* tau, T* work,   \
                 const int* lwork, int* info);                                                                     \
  void p##q##_(const int* m, const int* n, const int* k, T* a, const int* ia, const int* ja, const int* da,     \
                 const T* tau, T* work, const int* lwork, int* info);                                              \
  void p##gesv_(const int* n, const int* nrhs, T* a, const int* ia, const int* ja, const int* da, int* ipiv, T* b, \
                const int* ib, const int* jb, const int* db, int* info);                                           \
  void p##potrf_(const char* uplo, const int* n, T* a, const int* ia, const int* ja, const int* da, int* info);    \
  void p##getrf_(const int* m, const int* n, T* a, const int* ia, const int* ja, const int* da, int* ipiv,         \
                 int* info);                                                                                       \
  void p##getri_(const int* n, T* a, const int* ia, const int* ja, const int* da, const int* ipiv, T* work,        \
                 const int* lwork, int* iwork, const int* liwork, int* info);                                      \
  void p##trtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs, const T* a, \
                 const int* ia, const int* ja, const int* da, T* b, const int* ib, const int* jb, const int* db,   \
                 int* info);
// the routines whose real and complex forms differ in their workspaces
#define EMBER_PDECL_REAL(p, T)                                                                                    \
  void p##gesvd_(const char* ju, const char* jvt, const int* m, const int* n, T* a, const int* ia, const int* ja,  \
                 const int* da, T* s, T* u, const int* iu, const int* jux, const int* du, T* vt, const int* ivt,    \
                 const int* jvt2, const int* dvt, T* work, const int* lwork, int* info);                           \
  void p##syevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* ia, const int* ja,             \
                 const int* da, T* w, T* z, const int* iz, const int* jz, const int* dz, T* work,                  \
                 const int* lwork, int* iwork, const int* liwork, int* info);
#define EMBER_PDECL_COMPLEX(p, T, R)                                                                              \
  void p##gesvd_(const char* ju, const char* jvt, const int* m, const int* n, T* a, const int* ia, const int* ja,  \
                 const int* da, R* s, T* u, const int* iu, const int* jux, const int* du, T* vt, const int* ivt,    \
                 const int* jvt2, const int* dvt, T* work, const int* lwork, R* rwork, int* info);                 \
  void p##heevd_(const char* jobz, const char* uplo, const int* n, T* a, const int* ia, const int* ja,             \
                 const int* da, R* w, T* z, const int* iz, const int* jz, const int* dz, T* work,                  \
                 const int* lwork, R* rwork, const int* lrwork, int* iwork, const int* liwork, int* info);
EMBER_PDECL(pd, double, orgqr)
EMBER_PDECL(ps, float, orgqr)
EMBER_PDECL(pz, std::complex<double>, ungqr)
EMBER_PDECL(pc, std::complex<float>, ungqr)
EMBER_PDECL_REAL(pd, double)
EMBER_PDECL_REAL(ps, float)
EMBER_PDECL_COMPLEX(pz, std::complex<double>, double)
EMBER_PDECL_COMPLEX(pc, std::complex<float>, float)
#undef EMBER_PDECL
#undef EMBER_PDECL_REAL
#undef EMBER_PDECL_COMPLEX
}

namespace ember::scalapack {

std::int64_t numroc(std::int64_t n, std::int64_t nb, int iproc, int nprocs) {
  const std::int64_t nblocks = n / nb;
  std::int64_t r = (nblocks / nprocs) * nb;
  const std::int64_t extra = nblocks % nprocs;
  if (iproc < extra) r += nb;
  else if (iproc == extra) r += n % nb;
  return r;
}

std::pair<int, int> grid_shape(int nranks) {
  int pr = int(std::sqrt(double(nranks)));
  while (pr > 1 && nranks % pr != 0) --pr;
  return {std::max(pr, 1), nranks / std::max(pr, 1)};
}

block_cyclic::block_cyclic(std::int64_t m, std::int64_t n, int prow, int pcol, std::int64_t mb, std::int64_t nb)
    : shape_{m, n}, prow_(prow), pcol_(pcol), mb_(mb), nb_(nb) {
  if (m < 0 || n < 0 || prow < 1 || pcol < 1 || mb < 1 || nb < 1)
    throw value_error("ember::scalapack::block_cyclic: invalid " + std::to_string(m) + " x " + std::to_string(n) +
                      " matrix on a " + std::to_string(prow) + " x " + std::to_string(pcol) + " grid with " +
                      std::to_string(mb) + " x " + std::to_string(nb) + " blocks");
}

namespace {
// The global index ranges [lo, hi) of the blocks process `p` of `np` holds along a
// dimension of `n` in blocks of `b`, merged where consecutive, with their local
// starting index.
struct span {
  std::int64_t lo, hi, local;
};
std::vector<span> spans(std::int64_t n, std::int64_t b, int p, int np) {
  std::vector<span> out;
  std::int64_t local = 0;
  for (std::int64_t g = std::int64_t(p) * b; g < n; g += std::int64_t(np) * b) {
    const std::int64_t hi = std::min(n, g + b);
    if (!out.empty() && out.back().hi == g) out.back().hi = hi;  // np == 1: one run
    else out.push_back({g, hi, local});
    local += hi - g;
  }
  return out;
}
}  // namespace

std::vector<piece> block_cyclic::pieces(int rank) const {
  std::vector<piece> out;
  if (rank < 0 || rank >= nranks()) return out;
  const auto rs = spans(shape_[0], mb_, my_row(rank), prow_);
  const auto cs = spans(shape_[1], nb_, my_col(rank), pcol_);
  const std::int64_t ld = lld(rank);
  out.reserve(rs.size() * cs.size());
  for (const auto& c : cs)
    for (const auto& r : rs) out.push_back(piece{box_nd{{r.lo, c.lo}, {r.hi, c.hi}}, r.local + c.local * ld, {1, ld}});
  return out;
}

std::vector<int> block_cyclic::owners(const box_nd& b) const {
  std::vector<int> out;
  if (b.empty()) return out;
  // process rows / columns touched by the box
  auto touched = [](std::int64_t lo, std::int64_t hi, std::int64_t blk, int np) {
    std::vector<int> v;
    const std::int64_t first = lo / blk, last = (hi - 1) / blk;
    if (last - first + 1 >= np) {
      for (int p = 0; p < np; ++p) v.push_back(p);
    } else {
      for (std::int64_t k = first; k <= last; ++k) v.push_back(int(k % np));
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    return v;
  };
  for (int pr : touched(b.lo[0], b.hi[0], mb_, prow_))
    for (int pc : touched(b.lo[1], b.hi[1], nb_, pcol_)) out.push_back(pr * pcol_ + pc);
  std::sort(out.begin(), out.end());
  return out;
}

std::int64_t default_block(std::int64_t n, int nprocs) {
  std::int64_t b = 64;
  while (b > 1 && (n + b - 1) / b < nprocs) b /= 2;
  return std::max<std::int64_t>(b, 1);
}

block_cyclic default_block_cyclic(std::int64_t m, std::int64_t n, int nranks) {
  const auto [pr, pc] = grid_shape(nranks);
  return block_cyclic(m, n, pr, pc, default_block(m, pr), default_block(n, pc));
}

namespace {
std::mutex grid_mutex;
int grids_made = 0;
// Contexts per communicator state; released when the communicator's state dies
// would need a hook there, so they live for the process (a handful per program).
std::map<std::tuple<MPI_Comm, int, int>, std::unique_ptr<grid>>& grid_cache() {
  static std::map<std::tuple<MPI_Comm, int, int>, std::unique_ptr<grid>> m;
  return m;
}
}  // namespace

const grid& grid::get(const communicator& comm, int prow, int pcol) {
  if (prow < 1 || pcol < 1 || prow * pcol != comm.size())
    throw value_error("ember::scalapack: a " + std::to_string(prow) + " x " + std::to_string(pcol) +
                      " process grid does not match a communicator of " + std::to_string(comm.size()) + " ranks");
  std::lock_guard<std::mutex> lock(grid_mutex);
  auto key = std::make_tuple(comm.native(), prow, pcol);
  auto& cache = grid_cache();
  auto it = cache.find(key);
  if (it != cache.end()) return *it->second;
  int ctxt = Csys2blacs_handle(comm.native());
  Cblacs_gridinit(&ctxt, "Row", prow, pcol);
  int np, nq, r, c;
  Cblacs_gridinfo(ctxt, &np, &nq, &r, &c);
  if (np != prow || nq != pcol || r * pcol + c != comm.rank())
    throw communication_error("ember::scalapack: BLACS grid " + std::to_string(prow) + " x " + std::to_string(pcol) +
                              " came out as " + std::to_string(np) + " x " + std::to_string(nq) + " on rank " +
                              std::to_string(comm.rank()));
  ++grids_made;
  auto g = std::make_unique<grid>(ctxt, prow, pcol, r, c);
  const grid& ref = *g;
  cache.emplace(key, std::move(g));
  return ref;
}

int grids_created() { return grids_made; }

descriptor describe(const block_cyclic& l, const grid& g, int rank) {
  if (l.prow() != g.prow() || l.pcol() != g.pcol())
    throw value_error("ember::scalapack: a layout for a " + std::to_string(l.prow()) + " x " + std::to_string(l.pcol()) +
                      " grid described on a " + std::to_string(g.prow()) + " x " + std::to_string(g.pcol()) + " grid");
  descriptor d{};
  const int m = int(l.rows()), n = int(l.cols()), mb = int(l.mb()), nb = int(l.nb()), zero = 0, ctxt = g.context();
  const int lld = int(l.lld(rank));
  int info = 0;
  descinit_(d.d, &m, &n, &mb, &nb, &zero, &zero, &ctxt, &lld, &info);
  if (info != 0) throw value_error("ember::scalapack: descinit failed with info " + std::to_string(info));
  return d;
}

namespace {
void check_info(int info, const char* routine) { detail::check_info(info, std::string("ember::scalapack: ") + routine); }
constexpr int one = 1;
using detail::work_size;
// Workspace p?syevd's internal p?ormtr (NB^2 + NB (Np + Nq)) and p?lasrt
// (Np (NB + Nq)) need beyond the query's answer, for A's local Np x Nq block.
int syevd_extra(const descriptor& da) {
  int nprow, npcol, myrow, mycol;
  Cblacs_gridinfo(da.d[1], &nprow, &npcol, &myrow, &mycol);
  const std::int64_t nb = std::max(da.d[4], da.d[5]);
  const std::int64_t np = numroc(da.d[2], da.d[4], myrow, nprow), nq = numroc(da.d[3], da.d[5], mycol, npcol);
  return int(2 * (nb + np) * (nb + nq) + da.d[2]);
}
}  // namespace

#define EMBER_IMPL(p, T, q)                                                                                        \
  template <>                                                                                                     \
  void pgemm<T>(char ta, char tb, int m, int n, int k, T alpha, const T* a, const descriptor& da, const T* b,     \
                const descriptor& db, T beta, T* c, const descriptor& dc) {                                       \
    p##gemm_(&ta, &tb, &m, &n, &k, &alpha, a, &one, &one, da.d, b, &one, &one, db.d, &beta, c, &one, &one, dc.d); \
  }                                                                                                               \
  template <>                                                                                                     \
  void pgeqrf<T>(int m, int n, T* a, const descriptor& da, T* tau) {                                              \
    int info = 0, lw = -1;                                                                                        \
    T q{};                                                                                                        \
    p##geqrf_(&m, &n, a, &one, &one, da.d, tau, &q, &lw, &info);                                                  \
    check_info(info, #p "geqrf (workspace query)");                                                               \
    lw = work_size(q);                                                                                            \
    std::vector<T> w(static_cast<std::size_t>(lw));                                                                            \
    p##geqrf_(&m, &n, a, &one, &one, da.d, tau, w.data(), &lw, &info);                                            \
    check_info(info, #p "geqrf");                                                                                 \
  }                                                                                                               \
  template <>                                                                                                     \
  void porgqr<T>(int m, int n, int k, T* a, const descriptor& da, const T* tau) {                                 \
    int info = 0, lw = -1;                                                                                        \
    T q{};                                                                                                        \
    p##q##_(&m, &n, &k, a, &one, &one, da.d, tau, &q, &lw, &info);                                              \
    check_info(info, #p #q " (workspace query)");                                                               \
    lw = work_size(q);                                                                                            \
    std::vector<T> w(static_cast<std::size_t>(lw));                                                                            \
    p##q##_(&m, &n, &k, a, &one, &one, da.d, tau, w.data(), &lw, &info);                                        \
    check_info(info, #p #q "");                                                                                 \
  }                                                                                                               \
  template <>                                                                                                     \
  void pgesv<T>(int n, int nrhs, T* a, const descriptor& da, T* b, const descriptor& db) {                        \
    int info = 0;                                                                                                 \
    std::vector<int> ipiv(std::size_t(da.d[8] + da.d[4]));                                                        \
    p##gesv_(&n, &nrhs, a, &one, &one, da.d, ipiv.data(), b, &one, &one, db.d, &info);                            \
    if (info > 0)                                                                                                 \
      detail::throw_singular(info);                                             \
    check_info(info, #p "gesv");                                                                                  \
  }                                                                                                               \
  template <>                                                                                                     \
  void ppotrf<T>(char uplo, int n, T* a, const descriptor& da) {                                                  \
    int info = 0;                                                                                                 \
    p##potrf_(&uplo, &n, a, &one, &one, da.d, &info);                                                             \
    if (info > 0)                                                                                                 \
      detail::throw_not_positive_definite(info);                                                              \
    check_info(info, #p "potrf");                                                                                 \
  }                                                                                                               \
  template <>                                                                                                     \
  int pgetrf<T>(int m, int n, T* a, const descriptor& da, std::vector<int>& ipiv) {                               \
    int info = 0;                                                                                                 \
    ipiv.assign(std::size_t(da.d[8] + da.d[4]), 0);                                                               \
    p##getrf_(&m, &n, a, &one, &one, da.d, ipiv.data(), &info);                                                   \
    if (info < 0) check_info(info, #p "getrf");                                                                   \
    return info;                                                                                                  \
  }                                                                                                               \
  template <>                                                                                                     \
  void pgetri<T>(int n, T* a, const descriptor& da, std::vector<int>& ipiv) {                                     \
    int info = 0, lw = -1, liw = -1, iq = 0;                                                                      \
    T q{};                                                                                                        \
    p##getri_(&n, a, &one, &one, da.d, ipiv.data(), &q, &lw, &iq, &liw, &info);                                   \
    check_info(info, #p "getri (workspace query)");                                                               \
    /* the query's integer workspace can come out short on non-square grids: add a column's worth */             \
    lw = work_size(q);                                                                                            \
    liw = std::max(iq, 1) + da.d[8] + 2 * da.d[4];                                                                \
    std::vector<T> wk(static_cast<std::size_t>(lw));                                                              \
    std::vector<int> iw(static_cast<std::size_t>(liw));                                                           \
    p##getri_(&n, a, &one, &one, da.d, ipiv.data(), wk.data(), &lw, iw.data(), &liw, &info);                      \
    if (info > 0)                                                                                                 \
      throw value_error("ember::linalg::inv: the matrix is singular (U(" + std::to_string(info) + ", " +           \
                        std::to_string(info) + ") is exactly zero)");                                            \
    check_info(info, #p "getri");                                                                                 \
  }                                                                                                               \
  template <>                                                                                                     \
  void ptrtrs<T>(char uplo, char trans, char diag, int n, int nrhs, const T* a, const descriptor& da, T* b,       \
                 const descriptor& db) {                                                                          \
    int info = 0;                                                                                                 \
    p##trtrs_(&uplo, &trans, &diag, &n, &nrhs, a, &one, &one, da.d, b, &one, &one, db.d, &info);                  \
    if (info > 0)                                                                                                 \
      throw value_error("ember::linalg::solve_triangular: the matrix is singular (A(" + std::to_string(info) +    \
                        ", " + std::to_string(info) + ") is exactly zero)");                                     \
    check_info(info, #p "trtrs");                                                                                 \
  }
#define EMBER_IMPL_REAL(p, T)                                                                                     \
  template <>                                                                                                     \
  void pgesvd<T>(char ju, char jvt, int m, int n, T* a, const descriptor& da, T* s, T* u, const descriptor& du,   \
                 T* vt, const descriptor& dvt) {                                                                  \
    int info = 0, lw = -1;                                                                                        \
    T q{};                                                                                                        \
    p##gesvd_(&ju, &jvt, &m, &n, a, &one, &one, da.d, s, u, &one, &one, du.d, vt, &one, &one, dvt.d, &q, &lw,     \
              &info);                                                                                             \
    check_info(info, #p "gesvd (workspace query)");                                                               \
    lw = work_size(q);                                                                                            \
    std::vector<T> w(static_cast<std::size_t>(lw));                                                                            \
    p##gesvd_(&ju, &jvt, &m, &n, a, &one, &one, da.d, s, u, &one, &one, du.d, vt, &one, &one, dvt.d, w.data(),    \
              &lw, &info);                                                                                        \
    check_info(info, #p "gesvd");                                                                                 \
  }                                                                                                               \
  template <>                                                                                                     \
  void psyevd<T>(char jobz, char uplo, int n, T* a, const descriptor& da, T* w, T* z, const descriptor& dz) {    \
    int info = 0, lw = -1, liw = -1, iq = 0;                                                                      \
    T q{};                                                                                                        \
    p##syevd_(&jobz, &uplo, &n, a, &one, &one, da.d, w, z, &one, &one, dz.d, &q, &lw, &iq, &liw, &info);          \
    check_info(info, #p "syevd (workspace query)");                                                               \
    /* p?syevd's query undercounts what its p?ormtr and p?stedc/p?lasrt steps check     */                      \
    /* for when the blocks are large next to N (Reference-ScaLAPACK issue #74): add it.  */                      \
    lw = work_size(q) + syevd_extra(da);                                                                          \
    liw = std::max(iq, 1);                                                                                        \
    std::vector<T> wk(static_cast<std::size_t>(lw));                                                                           \
    std::vector<int> iw(static_cast<std::size_t>(liw));                                                                        \
    p##syevd_(&jobz, &uplo, &n, a, &one, &one, da.d, w, z, &one, &one, dz.d, wk.data(), &lw, iw.data(), &liw,     \
              &info);                                                                                             \
    check_info(info, #p "syevd");                                                                                 \
  }
#define EMBER_IMPL_COMPLEX(p, T, R)                                                                               \
  template <>                                                                                                     \
  void pgesvd<T>(char ju, char jvt, int m, int n, T* a, const descriptor& da, R* s, T* u, const descriptor& du,   \
                 T* vt, const descriptor& dvt) {                                                                  \
    int info = 0, lw = -1;                                                                                        \
    T q{};                                                                                                        \
    /* p?gesvd's real workspace: 1 + 4 max(M, N) (its bidiagonal SVD runs on every process) */                   \
    std::vector<R> rw(std::size_t(1 + 4 * std::max(m, n)));                                                       \
    p##gesvd_(&ju, &jvt, &m, &n, a, &one, &one, da.d, s, u, &one, &one, du.d, vt, &one, &one, dvt.d, &q, &lw,     \
              rw.data(), &info);                                                                                  \
    check_info(info, #p "gesvd (workspace query)");                                                               \
    lw = work_size(q);                                                                                            \
    rw.resize(std::max(rw.size(), std::size_t(work_size(rw[0]))));                                                \
    std::vector<T> w(static_cast<std::size_t>(lw));                                                               \
    p##gesvd_(&ju, &jvt, &m, &n, a, &one, &one, da.d, s, u, &one, &one, du.d, vt, &one, &one, dvt.d, w.data(),    \
              &lw, rw.data(), &info);                                                                             \
    check_info(info, #p "gesvd");                                                                                 \
  }                                                                                                               \
  template <>                                                                                                     \
  void psyevd<T>(char jobz, char uplo, int n, T* a, const descriptor& da, R* w, T* z, const descriptor& dz) {    \
    int info = 0, lw = -1, lrw = -1, liw = -1, iq = 0;                                                            \
    T q{};                                                                                                        \
    R rq{};                                                                                                       \
    p##heevd_(&jobz, &uplo, &n, a, &one, &one, da.d, w, z, &one, &one, dz.d, &q, &lw, &rq, &lrw, &iq, &liw,       \
              &info);                                                                                             \
    check_info(info, #p "heevd (workspace query)");                                                               \
    /* as p?syevd's: the query undercounts what p?unmtr and the real p?stedc/p?lasrt */                          \
    /* steps check for when the blocks are large next to N; add the same margin      */                          \
    lw = work_size(q) + syevd_extra(da);                                                                          \
    lrw = work_size(rq) + syevd_extra(da);                                                                        \
    liw = std::max(iq, 1);                                                                                        \
    std::vector<T> wk(static_cast<std::size_t>(lw));                                                              \
    std::vector<R> rw(static_cast<std::size_t>(lrw));                                                             \
    std::vector<int> iw(static_cast<std::size_t>(liw));                                                           \
    p##heevd_(&jobz, &uplo, &n, a, &one, &one, da.d, w, z, &one, &one, dz.d, wk.data(), &lw, rw.data(), &lrw,     \
              iw.data(), &liw, &info);                                                                            \
    check_info(info, #p "heevd");                                                                                 \
  }
EMBER_IMPL(pd, double, orgqr)
EMBER_IMPL(ps, float, orgqr)
EMBER_IMPL(pz, std::complex<double>, ungqr)
EMBER_IMPL(pc, std::complex<float>, ungqr)
EMBER_IMPL_REAL(pd, double)
EMBER_IMPL_REAL(ps, float)
EMBER_IMPL_COMPLEX(pz, std::complex<double>, double)
EMBER_IMPL_COMPLEX(pc, std::complex<float>, float)
#undef EMBER_IMPL
#undef EMBER_IMPL_REAL
#undef EMBER_IMPL_COMPLEX

}  // namespace ember::scalapack
