// A serial reference evaluator for ember expressions: it walks the same static
// expression tree over the gathered global data, with plain loops for
// broadcasting and reductions. What it shares with ember is only the scalar
// functor of each op (op::add::apply is a + b); everything ember adds (layouts,
// moves, fusion, partial reductions, collectives) is what it checks.
#pragma once

#include <cmath>
#include <numeric>

#include "common.hpp"

namespace ref {

using ember::index_vec;

template <class T>
struct host {
  index_vec shape;
  std::vector<test::host_t<T>> v;
};

inline index_vec strides(const index_vec& s) { return ember::row_major_strides(s); }
inline std::int64_t numel(const index_vec& s) {
  std::int64_t n = 1;
  for (auto x : s) n *= x;
  return n;
}

// Flat index into a child of shape `cs` for the output multi-index `idx` (shape `os`).
inline std::int64_t child_index(const index_vec& idx, const index_vec& os, const index_vec& cs) {
  const auto st = strides(cs);
  const int R = int(os.size()), n = int(cs.size());
  std::int64_t f = 0;
  for (int d = 0; d < n; ++d) {
    const int od = d + (R - n);
    f += (cs[std::size_t(d)] == 1 ? 0 : idx[std::size_t(od)]) * st[std::size_t(d)];
  }
  return f;
}
inline void unflatten(std::int64_t f, const index_vec& s, index_vec& idx) {
  idx.assign(s.size(), 0);
  for (int d = int(s.size()) - 1; d >= 0; --d) {
    if (s[std::size_t(d)] == 0) return;
    idx[std::size_t(d)] = f % s[std::size_t(d)];
    f /= s[std::size_t(d)];
  }
}

template <class X>
auto eval(const X& x);

template <class Op, class... A, std::size_t... I>
auto eval_elementwise(const ember::expr::elementwise<Op, A...>& x, std::index_sequence<I...>) {
  using R = typename ember::expr::elementwise<Op, A...>::value_type;
  auto kids = std::make_tuple(ref::eval(ember::hana::at_c<I>(x.args))...);
  host<R> out;
  out.shape = x.shape();
  const std::int64_t n = numel(out.shape);
  out.v.resize(std::size_t(n));
  index_vec idx;
  for (std::int64_t f = 0; f < n; ++f) {
    unflatten(f, out.shape, idx);
    out.v[std::size_t(f)] = x.op().template apply<R>(
        typename A::value_type(std::get<I>(kids).v[std::size_t(child_index(idx, out.shape, std::get<I>(kids).shape))])...);
  }
  return out;
}

template <class Op, class A, int RR, bool E>
auto eval_reduction(const ember::expr::reduction<Op, A, RR, E>& x) {
  using V = typename A::value_type;
  using R = typename ember::expr::reduction<Op, A, RR, E>::value_type;
  const auto in = ref::eval(x.arg);
  host<R> out;
  out.shape = x.shape();
  const std::int64_t n = numel(out.shape);
  // kept-axes shape of the output (without keepdims' ones) for indexing
  index_vec kept;
  for (std::size_t d = 0; d < in.shape.size(); ++d)
    if (std::find(x.axes.begin(), x.axes.end(), int(d)) == x.axes.end()) kept.push_back(in.shape[d]);
  const auto kst = strides(kept);
  std::vector<long double> acc(std::size_t(std::max<std::int64_t>(n, 1)));
  std::vector<std::int64_t> arg(std::size_t(std::max<std::int64_t>(n, 1)), -1);
  std::vector<V> best(std::size_t(std::max<std::int64_t>(n, 1)));
  std::vector<bool> logical(std::size_t(std::max<std::int64_t>(n, 1)), std::is_same_v<Op, ember::op::all>);
  if constexpr (std::is_same_v<Op, ember::op::prod>) std::fill(acc.begin(), acc.end(), 1.0L);
  const std::int64_t m = numel(in.shape);
  index_vec idx;
  std::vector<bool> seen(acc.size(), false);
  for (std::int64_t f = 0; f < m; ++f) {
    unflatten(f, in.shape, idx);
    std::int64_t o = 0, k = 0, along = 0;
    for (std::size_t d = 0; d < in.shape.size(); ++d) {
      if (std::find(x.axes.begin(), x.axes.end(), int(d)) == x.axes.end()) o += idx[d] * kst[std::size_t(k++)];
      else along = idx[d];
    }
    const V v = V(in.v[std::size_t(f)]);
    if constexpr (std::is_same_v<Op, ember::op::sum>) acc[std::size_t(o)] += (long double)(v);
    else if constexpr (std::is_same_v<Op, ember::op::prod>) acc[std::size_t(o)] *= (long double)(v);
    else if constexpr (std::is_same_v<Op, ember::op::all>) logical[std::size_t(o)] = logical[std::size_t(o)] && bool(v);
    else if constexpr (std::is_same_v<Op, ember::op::any>) logical[std::size_t(o)] = logical[std::size_t(o)] || bool(v);
    else {
      // min, max, argmin, argmax: first extreme value wins
      const std::int64_t where = x.axes.size() > 1 || in.shape.size() == 1 ? f : along;
      bool better;
      if constexpr (std::is_same_v<Op, ember::op::min> || std::is_same_v<Op, ember::op::argmin>)
        better = v < best[std::size_t(o)] || (v != v && best[std::size_t(o)] == best[std::size_t(o)]);
      else
        better = v > best[std::size_t(o)] || (v != v && best[std::size_t(o)] == best[std::size_t(o)]);
      if (!seen[std::size_t(o)] || better) {
        best[std::size_t(o)] = v;
        arg[std::size_t(o)] = where;
        seen[std::size_t(o)] = true;
      }
    }
  }
  out.v.resize(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<Op, ember::op::sum> || std::is_same_v<Op, ember::op::prod>) out.v[std::size_t(i)] = R(acc[std::size_t(i)]);
    else if constexpr (std::is_same_v<Op, ember::op::all> || std::is_same_v<Op, ember::op::any>) out.v[std::size_t(i)] = logical[std::size_t(i)];
    else if constexpr (ember::op::is_arg_reduction_v<Op>) out.v[std::size_t(i)] = arg[std::size_t(i)];
    else out.v[std::size_t(i)] = best[std::size_t(i)];
  }
  return out;
}

template <class Op, class... A>
auto eval_ew(const ember::expr::elementwise<Op, A...>& x) {
  return eval_elementwise(x, std::index_sequence_for<A...>{});
}

template <class X>
auto eval(const X& x) {
  if constexpr (std::is_same_v<X, ember::expr::scalar<typename X::value_type>>) {
    return host<typename X::value_type>{{}, {x.v}};
  } else if constexpr (ember::expr::kind_of<X> == ember::expr::node_class::reduction) {
    return eval_reduction(x);
  } else if constexpr (requires { x.a; }) {
    return host<typename X::value_type>{x.a.layout().shape(), test::gathered(x.a)};
  } else {
    return eval_ew(x);
  }
}

// Compares ember's gathered result with the reference: exact for integers and
// bools, NaN equal to NaN, floats within rtol relative to the array's magnitude.
template <class T>
bool close(const std::vector<test::host_t<T>>& got, const std::vector<test::host_t<T>>& want, double rtol,
           std::string& why) {
  if (got.size() != want.size()) {
    why = "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
    return false;
  }
  double scale = 1;
  for (auto w : want)
    if (std::isfinite(double(w))) scale = std::max(scale, std::abs(double(w)));
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = double(got[i]), w = double(want[i]);
    bool ok;
    if constexpr (std::is_floating_point_v<T>) {
      ok = (std::isnan(g) && std::isnan(w)) || g == w || std::abs(g - w) <= rtol * scale;
    } else {
      ok = got[i] == want[i];
    }
    if (!ok) {
      why = "element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " + std::to_string(w);
      return false;
    }
  }
  return true;
}

}  // namespace ref
