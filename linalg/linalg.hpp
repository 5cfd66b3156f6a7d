// ember::linalg: distributed dense linear algebra over dndarrays. Tall-skinny
// problems use communication-avoiding algorithms (TSQR and what builds on it);
// everything else goes to ScaLAPACK through the exchange engine (bridge.hpp).
#pragma once

#include "types.hpp"
#include "bridge.hpp"
#include "qr.hpp"
#include "svd.hpp"
#include "solvers.hpp"
#include "lu.hpp"
#include "least_squares.hpp"
#include "products.hpp"
#include "hsvd.hpp"
#include "rsvd.hpp"

namespace ember::linalg {
// The factorizations and solvers of arrays, taking an expression too (NumPy
// takes anything array-like): the expression is evaluated once, then factored.
template <expression E>
auto qr(const E& a, const qr_options& o = {}) {
  return qr(ember::eval(a), o);
}
template <expression E>
auto svd(const E& a, const svd_options& o = {}) {
  return svd(ember::eval(a), o);
}
template <expression E>
auto cholesky(const E& a) {
  return cholesky(ember::eval(a));
}
template <expression E>
auto eigh(const E& a) {
  return eigh(ember::eval(a));
}
template <class A, class B>
  requires((expression<A> || expression<B>) && array_like<A> && array_like<B>)
auto solve(const A& a, const B& b) {
  return solve(impl::operand_array(a), impl::operand_array(b));
}
template <expression E>
auto hsvd_rank(const E& a, std::int64_t r, const hsvd_options& o = {}) {
  return hsvd_rank(ember::eval(a), r, o);
}
template <expression E>
auto hsvd_rtol(const E& a, double rtol, const hsvd_options& o = {}) {
  return hsvd_rtol(ember::eval(a), rtol, o);
}
template <expression E>
auto rsvd(const E& a, std::int64_t r, const rsvd_options& o = {}) {
  return rsvd(ember::eval(a), r, o);
}
}  // namespace ember::linalg
