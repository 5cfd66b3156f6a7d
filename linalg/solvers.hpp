// ember::linalg solvers and norms: solve (p?gesv), cholesky (p?potrf), eigh
// (p?syevd, p?heevd for complex), norm (local sums + one allreduce, or the SVD
// for the 2-norm). Every solver takes float32, float64, complex64 and complex128
// matrices (ScaLAPACK's s/d/c/z routines).
//
// Every check (square A, matching B, dtype, order of a norm) uses replicated
// metadata only, so every rank throws the same ember::error before any
// communication. A numerical failure (singular A, A not positive definite) that
// ScaLAPACK reports on some ranks is agreed on with one allreduce, and every rank
// throws the same message.
//
// Layouts of the results:
//  * solve(A, B): X has B's shape and B's split axis (balanced).
//  * cholesky(A): L has A's split axis (balanced).
//  * eigh(A): eigenvalues replicated (ascending, like numpy.linalg.eigh),
//    eigenvectors (columns) with A's split axis (balanced).
//  * norm: a scalar, the same on every rank.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "../dsl/reductions.hpp"
#include "../dsl/ufuncs.hpp"
#include "svd.hpp"

namespace ember::linalg {

template <class T>
struct eigh_result {
  dndarray<real_of_t<T>, 1> eigenvalues;  // ascending, replicated; real (float64 for complex128)
  dndarray<T, 2> eigenvectors;            // column j belongs to eigenvalues[j]
};

namespace impl {

inline void require_square(const char* fn, const std::array<std::int64_t, 2>& s) {
  if (s[0] != s[1])
    throw shape_error(std::string("ember::linalg::") + fn + ": needs a square matrix, got shape " +
                      ember::detail::shape_str(s));
}

template <class T, int N, class U, int M>
void require_same_comm(const char* fn, const dndarray<T, N>& a, const dndarray<U, M>& b) {
  if (!a.comm().congruent(b.comm()))
    throw value_error(std::string("ember::linalg::") + fn + ": the operands of shapes " +
                      ember::detail::shape_str(a.shape()) + " and " + ember::detail::shape_str(b.shape()) +
                      " live on different communicators");
}

// Runs a ScaLAPACK call whose failure may surface on some ranks only, then agrees:
// if any rank failed, every rank throws the lowest failing rank's message.
template <class F>
void agree(const communicator& comm, F&& f) {
  std::string msg;
  try {
    f();
  } catch (const error& e) {
    msg = e.what();
    if (msg.empty()) msg = "ember::linalg: a ScaLAPACK call failed";
  }
  const int P = comm.size();
  const int first = comm.allreduce(msg.empty() ? P : comm.rank(), reduce_op::min);
  if (first == P) return;
  std::int64_t len = std::int64_t(msg.size());
  comm.bcast(&len, 1, first);
  msg.resize(std::size_t(len));
  comm.bcast(msg.data(), len, first);
  throw value_error(msg + (P > 1 ? " (reported by rank " + std::to_string(first) + ")" : ""));
}

// The block-cyclic layout ember uses for the right-hand sides of an n x n system:
// A's grid and row blocks.
inline scalapack::block_cyclic rhs_layout(const scalapack::block_cyclic& a, std::int64_t k) {
  return scalapack::block_cyclic(a.rows(), k, a.prow(), a.pcol(), a.mb(), a.nb());
}

template <class T, int N>
dndarray<double, N> to_double(const dndarray<T, N>& a) {
  static_assert(!is_complex_v<T>, "ember::linalg: complex matrices are factored in their own dtype");
  dndarray<double, N> r(a.layout(), a.comm());
  for (std::int64_t i = 0; i < a.lnumel(); ++i) r.ldata()[i] = double(a.ldata()[i]);
  return r;
}

}  // namespace impl

namespace impl {
// A square system A X = B solved by `f(ab, bb, n, k)` on A and B in the
// block-cyclic layout (B overwritten by X): solve's and solve_triangular's shared
// checks and moves. X has B's shape and split (balanced).
template <class T, int N, class F>
dndarray<T, N> solve_system(const char* fn, const dndarray<T, 2>& a, const dndarray<T, N>& b, F&& f) {
  static_assert(N == 1 || N == 2, "ember::linalg: B must be a vector (1-D) or a matrix (2-D)");
  require_lapack_type<T>(fn, a.shape());
  require_square(fn, a.shape());
  const std::int64_t n = a.shape()[0];  // (not a structured binding: clang 14 cannot capture one)
  if (b.shape()[0] != n)
    throw shape_error(std::string("ember::linalg::") + fn + ": A of shape " + ember::detail::shape_str(a.shape()) +
                      " and B of shape " + ember::detail::shape_str(b.shape()) + ": B needs " + std::to_string(n) +
                      " rows");
  require_same_comm(fn, a, b);
  require_same_device(fn, a, b);
  if (a.device() == device_kind::gpu)
    return on(solve_system(fn, a.to(device_kind::cpu), b.to(device_kind::cpu), std::forward<F>(f)), device_kind::gpu);
  if constexpr (lapack_type_v<T>) {
    require_int_dims(fn, a.shape());
    const auto& comm = a.comm();
    const int P = comm.size(), me = comm.rank();
    const std::int64_t k = N == 2 ? b.shape()[N - 1] : 1;
    // B's storage seen as an n x k matrix (a vector is n x 1, the same bytes).
    const layout b2 = N == 2 ? layout(b.layout())
                             : (b.split() ? b.layout().with_shape({n, 1}, 0) : replicated_layout({n, 1}, P));
    dndarray<T, N> x(layout::balanced(b.layout().shape(), b.split(), P), comm);
    const layout x2 = N == 2 ? layout(x.layout())
                             : (x.split() ? x.layout().with_shape({n, 1}, 0) : replicated_layout({n, 1}, P));
    if (n == 0 || k == 0) return x;
    auto ab = to_block_cyclic(a, square_block_cyclic(n, n, P));
    auto bb = make_block_cyclic<T>(rhs_layout(ab.lay, k), comm);
    exchange(b2, bb.lay, me, sizeof(T)).run(comm, b.ldata(), bb.local());
    agree(comm, [&] { f(ab, bb, int(n), int(k)); });
    exchange(bb.lay, x2, me, sizeof(T)).run(comm, bb.local(), x.ldata());
    return x;
  } else {
    return {};
  }
}
}  // namespace impl

// Solves A X = B for X: A n x n, B n x k or a vector of n. LU with partial
// pivoting (p?gesv). X has B's shape and split. Throws shape_error (naming both
// shapes) for a non-square A or a B without n rows, value_error for a singular A.
template <class T, int N>
dndarray<T, N> solve(const dndarray<T, 2>& a, const dndarray<T, N>& b) {
  return impl::solve_system("solve", a, b, [](const auto& ab, auto& bb, int n, int k) {
    scalapack::pgesv<T>(n, k, ab.local(), ab.desc, bb.local(), bb.desc);
  });
}

// The lower Cholesky factor L of a symmetric (complex: Hermitian) positive
// definite A (A = L L^T, L L^H for complex; only A's lower triangle is read, as
// numpy). L has A's split; its strictly upper
// triangle is zero. Throws value_error on every rank when A is not positive definite.
template <class T>
dndarray<T, 2> cholesky(const dndarray<T, 2>& a) {
  if (a.device() == device_kind::gpu) return impl::on(cholesky(a.to(device_kind::cpu)), device_kind::gpu);
  impl::require_lapack_type<T>("cholesky", a.shape());
  impl::require_square("cholesky", a.shape());
  if constexpr (impl::lapack_type_v<T>) {
    impl::require_int_dims("cholesky", a.shape());
    const auto& comm = a.comm();
    const std::int64_t n = a.shape()[0];
    dndarray<T, 2> l(layout::balanced({n, n}, a.split(), comm.size()), comm);
    if (n == 0) return l;
    auto ab = to_block_cyclic(a, impl::square_block_cyclic(n, n, comm.size()));
    impl::agree(comm, [&] { scalapack::ppotrf<T>('L', int(n), ab.local(), ab.desc); });
    exchange(ab.lay, l.layout(), comm.rank(), sizeof(T)).run(comm, ab.local(), l.ldata());
    impl::for_each_local(l, [](std::int64_t i, std::int64_t j, T& v) {
      if (j > i) v = T(0);  // p?potrf leaves A's upper triangle there
    });
    return l;
  } else {
    return {};
  }
}

// Eigenvalues (ascending, replicated, real) and eigenvectors of a symmetric A
// (complex: Hermitian), from its lower triangle (numpy's default UPLO='L'), by
// divide and conquer (p?syevd; p?heevd). The diagonal's imaginary parts are not
// read, as LAPACK's zheevd.
template <class T>
eigh_result<T> eigh(const dndarray<T, 2>& a) {
  if (a.device() == device_kind::gpu) {
    auto r = eigh(a.to(device_kind::cpu));
    return {impl::on(r.eigenvalues, device_kind::gpu), impl::on(r.eigenvectors, device_kind::gpu)};
  }
  impl::require_lapack_type<T>("eigh", a.shape());
  impl::require_square("eigh", a.shape());
  if constexpr (impl::lapack_type_v<T>) {
    impl::require_int_dims("eigh", a.shape());
    const auto& comm = a.comm();
    const int P = comm.size();
    const std::int64_t n = a.shape()[0];
    eigh_result<T> r{dndarray<real_of_t<T>, 1>(replicated_layout({n}, P), comm),
                     dndarray<T, 2>(layout::balanced({n, n}, a.split(), P), comm)};
    if (n == 0) return r;
    impl::require_finite(a, "eigh");
    auto ab = to_block_cyclic(a, impl::square_block_cyclic(n, n, P));
    auto zb = make_block_cyclic<T>(ab.lay, comm);
    std::vector<real_of_t<T>> w(static_cast<std::size_t>(n));
    impl::agree(comm, [&] { scalapack::psyevd<T>('V', 'L', int(n), ab.local(), ab.desc, w.data(), zb.local(), zb.desc); });
    comm.bcast(w.data(), n, 0);  // replicated by p?syevd; rank 0's copy makes it bitwise so
    std::copy(w.begin(), w.end(), r.eigenvalues.ldata());
    exchange(zb.lay, r.eigenvectors.layout(), comm.rank(), sizeof(T)).run(comm, zb.local(), r.eigenvectors.ldata());
    return r;
  } else {
    return {};
  }
}

// ---- norms ----
// `ord` follows numpy.linalg.norm. Vectors (1-D): any p (0 counts the nonzeros,
// inf / -inf the largest / smallest magnitude), default 2. Matrices (2-D): the
// default and matrix_norm::fro are Frobenius, matrix_norm::nuc the sum of the
// singular values, ord 1 / -1 the largest / smallest column sum of magnitudes,
// inf / -inf the same over rows, 2 / -2 the largest / smallest singular value.
// Integer and bool arrays are measured in double. The result is the same on every
// rank; local sums are combined with one allreduce (two for p-norms, whose
// scaling by the largest magnitude needs a max first, so nothing overflows).
inline constexpr double inf = std::numeric_limits<double>::infinity();
enum class matrix_norm { fro, nuc };

// (complex: the real type of the parts, as NumPy's norm of complex128 is float64)
template <class T>
using norm_t = std::conditional_t<std::is_floating_point_v<T>, T, std::conditional_t<is_complex_v<T>, real_of_t<T>, double>>;

namespace impl {

// |v| in double precision (complex: the modulus, C's cabs).
template <class T>
double magnitude(T v) {
  if constexpr (is_complex_v<T>) return double(std::abs(v));
  else return std::abs(double(v));
}

// sum(|x|^p)^(1/p) over all elements of `a` (every rank's block), scaled by the
// largest magnitude so neither overflow nor underflow; p > 0 or p < 0.
template <class T, int N>
double pnorm(const dndarray<T, N>& a, double p) {
  const bool dist = a.split().has_value();
  const T* x = a.ldata();
  const std::int64_t len = a.lnumel();
  double scale = 0;
  for (std::int64_t i = 0; i < len; ++i) scale = std::max(scale, magnitude(x[i]));
  if (std::any_of(x, x + len, [](T v) { return std::isnan(magnitude(v)); })) scale = std::numeric_limits<double>::quiet_NaN();
  if (dist) scale = a.comm().allreduce(scale, reduce_op::max);
  if (std::isnan(scale)) return scale;
  if (p > 0 && (scale == 0 || std::isinf(scale))) return scale;
  if (p < 0 && scale == 0) return a.numel() == 0 ? inf : 0.0;  // numpy: sum(|x|^p) = inf -> 0
  double ssq = 0;
  if (p == 2)
    for (std::int64_t i = 0; i < len; ++i) ssq += (magnitude(x[i]) / scale) * (magnitude(x[i]) / scale);
  else if (p == 1)
    for (std::int64_t i = 0; i < len; ++i) ssq += magnitude(x[i]) / scale;
  else
    for (std::int64_t i = 0; i < len; ++i) ssq += std::pow(magnitude(x[i]) / scale, p);
  if (dist) ssq = a.comm().allreduce(ssq, reduce_op::sum);
  return scale * (p == 2 ? std::sqrt(ssq) : p == 1 ? ssq : std::pow(ssq, 1.0 / p));
}

// Largest (want_max) or smallest sum of magnitudes along rows (axis 1, summing
// over columns) or columns (axis 0): partial sums locally, an allreduce when the
// summed axis is split, and an allreduce of the extreme when the kept one is.
template <class T>
double extreme_abs_sum(const dndarray<T, 2>& a, int summed_axis, bool want_max) {
  const auto ls = a.lshape();
  const int kept = 1 - summed_axis;
  std::vector<double> sums(std::size_t(ls[kept]), 0.0);
  const T* x = a.ldata();
  for (std::int64_t i = 0; i < ls[0]; ++i)
    for (std::int64_t j = 0; j < ls[1]; ++j) sums[std::size_t(kept == 0 ? i : j)] += magnitude(x[i * ls[1] + j]);
  if (a.split() == summed_axis) a.comm().allreduce(sums.data(), std::int64_t(sums.size()), reduce_op::sum);
  double e = want_max ? -inf : inf;
  for (double s : sums) e = want_max ? std::max(e, s) : std::min(e, s);
  if (std::any_of(sums.begin(), sums.end(), [](double s) { return std::isnan(s); }))
    e = std::numeric_limits<double>::quiet_NaN();
  if (a.split() == kept) e = a.comm().allreduce(e, want_max ? reduce_op::max : reduce_op::min);
  return std::isinf(e) && a.numel() == 0 ? 0.0 : e;
}

}  // namespace impl

// Vector norm (1-D), numpy's ord: default 2.
template <class T>
norm_t<T> norm(const dndarray<T, 1>& x, double ord = 2) {
  if (x.device() == device_kind::gpu) return norm(x.to(device_kind::cpu), ord);
  const auto& c = x.comm();
  const bool dist = x.split().has_value();
  const T* p = x.ldata();
  const std::int64_t len = x.lnumel();
  if (std::isinf(ord)) {
    if (x.numel() == 0)
      throw value_error("ember::linalg::norm: ord=" + std::string(ord > 0 ? "inf" : "-inf") +
                        " of an empty vector of shape " + ember::detail::shape_str(x.shape()));
    double e = ord > 0 ? -inf : inf;
    bool nan = false;
    for (std::int64_t i = 0; i < len; ++i) {
      const double v = impl::magnitude(p[i]);
      nan = nan || std::isnan(v);
      e = ord > 0 ? std::max(e, v) : std::min(e, v);
    }
    if (nan) e = std::numeric_limits<double>::quiet_NaN();
    if (dist) e = c.allreduce(e, ord > 0 ? reduce_op::max : reduce_op::min);
    return norm_t<T>(e);
  }
  if (ord == 0) {
    double nz = 0;
    for (std::int64_t i = 0; i < len; ++i) nz += p[i] != T(0) ? 1 : 0;
    if (dist) nz = c.allreduce(nz, reduce_op::sum);
    return norm_t<T>(nz);
  }
  if (std::isnan(ord)) throw value_error("ember::linalg::norm: ord is NaN");
  return norm_t<T>(impl::pnorm(x, ord));
}

// Frobenius norm of a matrix (numpy's default for 2-D).
template <class T>
norm_t<T> norm(const dndarray<T, 2>& a) {
  if (a.device() == device_kind::gpu) return norm(a.to(device_kind::cpu));
  return norm_t<T>(impl::pnorm(a, 2.0));
}

template <class T>
norm_t<T> norm(const dndarray<T, 2>& a, matrix_norm ord) {
  if (a.device() == device_kind::gpu) return norm(a.to(device_kind::cpu), ord);
  if (ord == matrix_norm::fro) return norm(a);
  if constexpr (!impl::lapack_type_v<T>) {
    return norm(impl::to_double(a), ord);
  } else {
    const auto s = svd(a, {.compute_uv = false}).S;
    norm_t<T> sum = 0;
    for (std::int64_t i = 0; i < s.numel(); ++i) sum += s.ldata()[i];
    return sum;
  }
}

// Matrix norm of order 1, -1, 2, -2, inf or -inf (numpy's numbers for matrices).
template <class T>
norm_t<T> norm(const dndarray<T, 2>& a, double ord) {
  if (a.device() == device_kind::gpu) return norm(a.to(device_kind::cpu), ord);
  if (ord == 1 || ord == -1) return norm_t<T>(impl::extreme_abs_sum(a, 0, ord > 0));
  if (std::isinf(ord)) return norm_t<T>(impl::extreme_abs_sum(a, 1, ord > 0));
  if (ord == 2 || ord == -2) {
    if constexpr (!impl::lapack_type_v<T>) {
      return norm(impl::to_double(a), ord);
    } else {
      const auto s = svd(a, {.compute_uv = false}).S;
      if (s.numel() == 0) return norm_t<T>(0);
      return ord > 0 ? s.ldata()[0] : s.ldata()[s.numel() - 1];
    }
  }
  throw value_error("ember::linalg::norm: invalid order " + std::to_string(ord) + " for the matrix of shape " +
                    ember::detail::shape_str(a.shape()) +
                    " (1, -1, 2, -2, inf, -inf, matrix_norm::fro or matrix_norm::nuc)");
}

// Vector norms along one axis of an array or expression (NumPy's
// norm(x, ord, axis)): one fused reduction over |x|, planned like
// ember::sum(x, axis): ord 2 the square root of the sum of squares, 1 the sum,
// inf / -inf the largest / smallest magnitude, 0 the count of non-zeros, any
// other p sum(|x|^p)^(1/p). Integers and bool are normed in float64, as NumPy.
template <array_like A>
auto norm(const A& a, double ord, int axis) {
  using T = typename expr::node_t<A>::value_type;
  constexpr int N = expr::node_t<A>::ndim;
  static_assert(N >= 2, "ember::linalg::norm(a, ord, axis): a 1-D operand has one axis: use norm(x, ord)");
  using F = norm_t<T>;
  // |z| of complex numbers in their own precision; other dtypes cast first
  // (abs of int8 -128 would wrap)
  auto x = [&] {
    if constexpr (is_complex_v<T>) return ember::abs(a);
    else return ember::abs(ember::astype<F>(a));
  }();
  if (std::isnan(ord)) throw value_error("ember::linalg::norm: ord is NaN");
  if (ord == 2) return dndarray<F, N - 1>(ember::sqrt(ember::sum(x * x, axis)));
  if (ord == 1) return dndarray<F, N - 1>(ember::sum(x, axis));
  if (ord == std::numeric_limits<double>::infinity()) return dndarray<F, N - 1>(ember::max(x, axis));
  if (ord == -std::numeric_limits<double>::infinity()) return dndarray<F, N - 1>(ember::min(x, axis));
  if (ord == 0) return dndarray<F, N - 1>(ember::astype<F>(ember::sum(x != F(0), axis)));
  return dndarray<F, N - 1>(ember::pow(ember::sum(ember::pow(x, F(ord)), axis), F(1.0 / ord)));
}

// Norms are of vectors and matrices: any other rank is a compile-time error.
template <class T, int N>
norm_t<T> norm(const dndarray<T, N>&, double = 2) {
  static_assert(N == 1 || N == 2, "ember::linalg::norm: needs a 1-D (vector) or 2-D (matrix) array");
  return {};
}

// The factorizations need matrices: other ranks are compile-time errors.
template <class T, int N>
dndarray<T, 2> cholesky(const dndarray<T, N>&) {
  static_assert(N == 2, "ember::linalg::cholesky: needs a 2-D array (a square matrix)");
  return {};
}
template <class T, int N>
eigh_result<T> eigh(const dndarray<T, N>&) {
  static_assert(N == 2, "ember::linalg::eigh: needs a 2-D array (a square symmetric matrix)");
  return {};
}

}  // namespace ember::linalg
