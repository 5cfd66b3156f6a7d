// ember::linalg on LU factors and triangular systems, as numpy.linalg:
//
//   auto Ai = ember::linalg::inv(A);                  // p?getrf + p?getri
//   double d = ember::linalg::det(A);                  // sign * exp(logabsdet), as NumPy computes it
//   auto [sign, logabsdet] = ember::linalg::slogdet(A);
//   auto X = ember::linalg::solve_triangular(U, B);    // p?trtrs: U X = B ({.lower, .trans, .unit_diagonal})
//   auto P = ember::linalg::matrix_power(A, 5);        // repeated squaring (NumPy's order of products)
//
// A and B may be arrays or expressions (evaluated once). Integer and bool
// matrices are factored in float64 (NumPy's rule); matrix_power of an integer
// matrix stays integer for n >= 0. det of a singular matrix is 0 and slogdet
// gives (0, -inf), as NumPy; inv and solve_triangular of one throw value_error
// on every rank. Layouts: inv(A) and matrix_power(A, n) have A's split
// (balanced); solve_triangular's X has B's shape and split, as solve's.
//
// det and slogdet read the diagonal of U and the pivots where ScaLAPACK leaves
// them: one allreduce of n + 1 numbers (every rank contributes the entries it
// owns), then the same sequential loop as NumPy's on every rank, so every rank
// returns the same bits.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "../dsl/matmul.hpp"
#include "../indexing/indexing.hpp"
#include "../shape/shape.hpp"
#include "solvers.hpp"

namespace ember::linalg {

template <class T>
struct slogdet_result {
  T sign;                    // 1 or -1 (complex: a number of modulus 1), 0 for a singular matrix
  real_of_t<T> logabsdet;    // log |det A|, -inf for a singular matrix; real
};

// scipy.linalg.solve_triangular's options and defaults.
struct triangular_options {
  bool lower = false;          // A is upper triangular unless this is set; the other triangle is not read
  bool trans = false;          // solve A^T X = B (scipy's trans='T')
  bool unit_diagonal = false;  // A's diagonal is taken as ones (and not read)
  bool conjugate = false;      // with trans: solve A^H X = B (scipy's trans='C'; the same as trans for real A)
};

namespace impl {

// A matrix operand as the float array ScaLAPACK factors: an array as it is
// (integers and bool converted to float64), an expression evaluated once.
template <class A>
auto float_matrix(const A& a) {
  if constexpr (is_dndarray<A>::value) {
    using T = typename A::value_type;
    if constexpr (lapack_type_v<T>) return a;
    else return to_double(a);
  } else {
    return float_matrix(ember::detail::as_array(a));
  }
}
// The float dtype a matrix operand is factored in.
template <class A>
using float_of = typename decltype(float_matrix(std::declval<const A&>()))::value_type;
template <class A>
auto operand_array(const A& a) {
  return ember::detail::as_array(a);  // an array as it is, an expression or a selection evaluated
}

// A's LU factors (block-cyclic) and this rank's pivots; `singular` is the first
// exactly zero U(i, i) (1-based), the same on every rank, or 0.
template <class T>
struct lu_factors {
  bc_matrix<T> lu;
  std::vector<int> ipiv;
  int singular = 0;
};
template <class T>
lu_factors<T> lu_factor(const dndarray<T, 2>& a) {
  const auto& comm = a.comm();
  const std::int64_t n = a.shape()[0];
  lu_factors<T> f{to_block_cyclic(a, square_block_cyclic(n, n, comm.size())), {}, 0};
  int info = 0;
  agree(comm, [&] { info = scalapack::pgetrf<T>(int(n), int(n), f.lu.local(), f.lu.desc, f.ipiv); });
  // ScaLAPACK's INFO need not agree across process rows: the first zero pivot anywhere
  const int first = comm.allreduce(info > 0 ? info : std::numeric_limits<int>::max(), reduce_op::min);
  f.singular = first == std::numeric_limits<int>::max() ? 0 : first;
  return f;
}

// (sign, log|det|) from the factors, NumPy's loop: the pivots' parity, then the
// diagonal in order.
template <class T>
slogdet_result<T> slogdet_of(const lu_factors<T>& f, std::int64_t n) {
  using R = real_of_t<T>;
  if (f.singular) return {T(0), -std::numeric_limits<R>::infinity()};
  const auto& l = f.lu.lay;
  const auto& comm = f.lu.comm;
  const int r = comm.rank(), myrow = l.my_row(r), mycol = l.my_col(r);
  const std::int64_t mb = l.mb(), nb = l.nb(), pr = l.prow(), pc = l.pcol(), lld = f.lu.lld();
  // the diagonal (each entry from its one owner, zeros elsewhere: the sum is exact)
  // and the number of row swaps (counted by the first process column)
  using W = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;  // holds any T exactly
  std::vector<W> d(std::size_t(n + 1), W(0));
  for (std::int64_t i = 0; i < n; ++i) {
    if (int((i / mb) % pr) != myrow) continue;
    const std::int64_t li = (i / (mb * pr)) * mb + i % mb;
    if (mycol == 0 && f.ipiv[std::size_t(li)] != i + 1) d[std::size_t(n)] += 1.0;
    if (int((i / nb) % pc) == mycol) {
      const std::int64_t lj = (i / (nb * pc)) * nb + i % nb;
      d[std::size_t(i)] = W(f.lu.local()[li + lj * lld]);
    }
  }
  if (comm.size() > 1) comm.allreduce(d.data(), n + 1, reduce_op::sum);
  T sign = (std::int64_t(std::real(d[std::size_t(n)])) % 2) ? T(-1) : T(1);
  R logdet = R(0);
  for (std::int64_t i = 0; i < n; ++i) {
    const T e = T(d[std::size_t(i)]);
    if constexpr (is_complex_v<T>) {  // NumPy's loop: sign *= e / |e|, logdet += log |e|
      const R m = std::abs(e);
      sign *= e / m;
      logdet += std::log(m);
    } else {
      sign = e < T(0) ? -sign : sign;
      logdet += std::log(std::abs(e));
    }
  }
  return {sign, logdet};
}

template <class T>
void require_square_of(const char* fn, const dndarray<T, 2>& a) {
  require_square(fn, a.shape());
  require_int_dims(fn, a.shape());
}

}  // namespace impl

// (sign, log|det A|) of a square matrix (numpy.linalg.slogdet).
template <class A>
  requires array_like<A>
slogdet_result<impl::float_of<A>> slogdet(const A& a_) {
  static_assert(expr::node_t<A>::ndim == 2, "ember::linalg::slogdet: takes a 2-D matrix");
  const auto a = impl::float_matrix(a_);
  using T = typename decltype(a)::value_type;
  impl::require_square_of("slogdet", a);
  if (a.device() == device_kind::gpu) return slogdet(a.to(device_kind::cpu));
  const std::int64_t n = a.shape()[0];
  if (n == 0) return slogdet_result<T>{T(1), real_of_t<T>(0)};
  return impl::slogdet_of(impl::lu_factor(a), n);
}

// The determinant (numpy.linalg.det): sign * exp(logabsdet), as NumPy computes it.
template <class A>
  requires array_like<A>
auto det(const A& a) {
  const auto s = slogdet(a);
  return s.sign * std::exp(s.logabsdet);
}

// The inverse of a square matrix (numpy.linalg.inv), with A's split. A singular
// A is a value_error on every rank.
template <class A>
  requires array_like<A>
dndarray<impl::float_of<A>, 2> inv(const A& a_) {
  static_assert(expr::node_t<A>::ndim == 2, "ember::linalg::inv: takes a 2-D matrix");
  const auto a = impl::float_matrix(a_);
  using T = typename decltype(a)::value_type;
  impl::require_square_of("inv", a);
  if (a.device() == device_kind::gpu) return impl::on(inv(a.to(device_kind::cpu)), device_kind::gpu);
  const auto& comm = a.comm();
  const std::int64_t n = a.shape()[0];
  if (n == 0) return dndarray<T, 2>(layout::balanced({0, 0}, a.split(), comm.size()), comm);
  auto f = impl::lu_factor(a);
  if (f.singular)
    throw value_error("ember::linalg::inv: the matrix of shape " + ember::detail::shape_str(a.shape()) +
                      " is singular (U(" + std::to_string(f.singular) + ", " + std::to_string(f.singular) +
                      ") is exactly zero)");
  impl::agree(comm, [&] { scalapack::pgetri<T>(int(n), f.lu.local(), f.lu.desc, f.ipiv); });
  return from_block_cyclic(f.lu, a.split());
}

// Solves A X = B (or A^T X = B, A^H X = B) for a triangular A
// (scipy.linalg.solve_triangular; default upper). B is n x k or a vector of n; X
// has B's shape and split.
template <class A, class B>
  requires(array_like<A> && array_like<B>)
auto solve_triangular(const A& a_, const B& b_, const triangular_options& o = {}) {
  static_assert(expr::node_t<A>::ndim == 2, "ember::linalg::solve_triangular: A must be a 2-D matrix");
  const auto a = impl::float_matrix(a_);
  using T = typename decltype(a)::value_type;
  const auto b = [&] {
    auto x = impl::operand_array(b_);
    if constexpr (std::is_same_v<typename decltype(x)::value_type, T>) return x;
    else return ember::eval(ember::astype<T>(x));
  }();
  // An exactly zero diagonal entry (p?trtrs does not report it on every grid):
  // one fused pass over the diagonal and one allreduce, before anything moves.
  if (!o.unit_diagonal && a.shape()[0] == a.shape()[1] && a.shape()[0] > 0) {
    const auto d = ember::diagonal(a);
    if (ember::any(d == T(0))) {
      const std::int64_t i = ember::argmax(ember::astype<std::int32_t>(d == T(0)));
      throw value_error("ember::linalg::solve_triangular: the matrix of shape " + ember::detail::shape_str(a.shape()) +
                        " is singular: A[" + std::to_string(i) + ", " + std::to_string(i) + "] is exactly zero");
    }
  }
  return impl::solve_system("solve_triangular", a, b, [&](const auto& ab, auto& bb, int n, int k) {
    const char op = !o.trans ? 'N' : (o.conjugate && is_complex_v<T>) ? 'C' : 'T';
    scalapack::ptrtrs<T>(o.lower ? 'L' : 'U', op, o.unit_diagonal ? 'U' : 'N', n, k, ab.local(),
                         ab.desc, bb.local(), bb.desc);
  });
}

// A to the integer power n (numpy.linalg.matrix_power): the identity for 0, the
// inverse's power for n < 0 (float matrices only), otherwise NumPy's products in
// NumPy's order (squarings, and the product of the powers whose bit is set).
template <class A>
  requires array_like<A>
auto matrix_power(const A& a_, std::int64_t n) {
  static_assert(expr::node_t<A>::ndim == 2, "ember::linalg::matrix_power: takes a 2-D matrix");
  const auto a = impl::operand_array(a_);
  using T = typename decltype(a)::value_type;
  impl::require_square("matrix_power", a.shape());
  if (n == 0)
    return ember::eye<T>(a.shape()[0], {.split = a.split(), .comm = a.comm(), .device = a.device()});
  dndarray<T, 2> base = a;
  if (n < 0) {
    if constexpr (!impl::lapack_type_v<T>) {
      throw type_error("ember::linalg::matrix_power: an " + std::string(dtype_name<T>()) + " matrix of shape " +
                       ember::detail::shape_str(a.shape()) +
                       " cannot be raised to a negative power (NumPy: 'Integers to negative integer powers are not "
                       "allowed'); cast with ember::astype<double> first");
    } else {
      base = inv(a);
    }
    n = -n;
  }
  if (n == 1) return base;
  auto mm = [](const dndarray<T, 2>& x, const dndarray<T, 2>& y) { return dndarray<T, 2>(ember::matmul(x, y)); };
  if (n == 2) return mm(base, base);
  if (n == 3) return mm(mm(base, base), base);
  std::optional<dndarray<T, 2>> z, result;
  while (n > 0) {
    z = z ? mm(*z, *z) : base;
    const bool bit = n % 2;
    n /= 2;
    if (bit) result = result ? mm(*result, *z) : *z;
  }
  return *result;
}

}  // namespace ember::linalg
