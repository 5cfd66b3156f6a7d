// Tensor contractions with NumPy's spelling:
//
//   ember::dndarray<double, 2> C = ember::einsum("ij,jk->ik", A, B);   // = matmul(A, B)
//   auto D = ember::einsum<"bij,bjk->bik">(X, Y);   // the rank known at compile time: a dndarray<T, 3>
//   double t = ember::einsum("ii", M);              // trace; "ii->i" the diagonal, "ij->ji" a transpose
//   ember::einsum("ij,jk,kl->il", A, B, C, ember::einsum_options{.optimize = ember::einsum_optimize::greedy})
//   ember::einsum_path("ij,jk,kl->il", A, B, C).to_string()   // the order and each step's cost, as NumPy's
//   ember::tensordot(a, b, {{1, 0}, {0, 1}}), ember::tensordot<2>(a, b)
//
// The pairwise order is chosen by contract::plan_einsum (cost: the flops divided
// over the ranks, the copies into each product's order, the smaller operand's
// travel; every order for up to 6 operands, greedy beyond). Each pairwise
// contraction is one ember::matmul — the planner picks its layouts and
// algorithm (local, ring, reduce_scatter, summa; `batched` when labels are kept
// on both sides, so a stack split on its batch axis multiplies without
// communication) — between the operands permuted (a local copy, skipped when
// their axes are already in order; a 2-D operand in the other order is read
// transposed) and reshaped (sharing storage unless the split axis merges with
// another). Labels only one operand has are summed first, a repeated label's
// diagonal is a strided view, and a label of extent 1 broadcasts.
//
// `einsum("...")` with the subscripts as a run-time string returns an
// einsum_result, which converts to the dndarray of the result's rank (checked)
// or, for a 0-d result, to the scalar; `einsum<"...">` knows the rank at
// compile time and returns the dndarray (or scalar) itself.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../dsl/matmul.hpp"
#include "../dsl/reductions.hpp"
#include "../shape/shape.hpp"
#include "einsum_path.hpp"

namespace ember {

// A string literal as a template argument: einsum<"ij,jk->ik">.
template <std::size_t L>
struct fixed_string {
  char s[L]{};
  constexpr fixed_string(const char (&x)[L]) {  // NOLINT: implicit, as a literal
    for (std::size_t i = 0; i < L; ++i) s[i] = x[i];
  }
  constexpr std::string_view view() const { return {s, L - 1}; }
};

namespace contract_detail {

// Every operand and intermediate is held as an 8-D array whose unlabelled axes
// have extent 1: one instantiation of the views, reshapes and sums serves
// every rank.
inline constexpr int R = 8;

template <dtype T>
struct tensor {
  dndarray<T, R> a;
  std::array<char, R> lab{};  // the label of each axis; 0 for an axis of extent 1 that is only padding

  std::string labels() const {
    std::string s;
    for (char c : lab)
      if (c) s += c;
    return s;
  }
  std::int64_t extent(char c) const {
    const auto s = a.shape();
    for (int d = 0; d < R; ++d)
      if (lab[std::size_t(d)] == c) return s[std::size_t(d)];
    return 1;
  }
};

inline std::string operand_text(const char* what, int i) { return std::string(what) + ": operand " + std::to_string(i); }

// `labels` in front of the padding: (1, ..., 1, shape...)
template <dtype T, int N>
tensor<T> pad(const dndarray<T, N>& x, const std::string& labels) {
  static_assert(N <= R, "ember::einsum: operands of more than 8 dimensions are not supported");
  std::array<std::int64_t, R> s{};
  s.fill(1);
  const auto xs = x.shape();
  tensor<T> t;
  for (int d = 0; d < N; ++d) {
    s[std::size_t(R - N + d)] = xs[std::size_t(d)];
    t.lab[std::size_t(R - N + d)] = labels[std::size_t(d)];
  }
  t.a = reshape(x, s);
  return t;
}

inline std::array<std::int64_t, R> padded_shape(const std::vector<std::int64_t>& extents) {
  if (extents.size() > std::size_t(R))
    throw shape_error("ember::einsum: an intermediate has " + std::to_string(extents.size()) +
                      " labels, more than the 8 axes einsum holds");
  std::array<std::int64_t, R> s{};
  s.fill(1);
  std::copy(extents.begin(), extents.end(), s.begin() + std::ptrdiff_t(R - int(extents.size())));
  return s;
}

// The axes of t moved so that its padding comes first, then its labelled axes
// in `order` (a permutation of its labels; a repeated label takes its axes in
// turn): one local copy, and the labels of the copy's axes.
template <dtype T>
std::pair<dndarray<T, R>, std::array<char, R>> reordered(const tensor<T>& t, const std::string& order) {
  std::array<int, R> perm{};
  std::array<char, R> lab{};
  std::array<bool, R> taken{};
  int k = 0;
  for (int d = 0; d < R; ++d)
    if (!t.lab[std::size_t(d)]) perm[std::size_t(k++)] = d;
  for (char c : order)
    for (int d = 0; d < R; ++d)
      if (t.lab[std::size_t(d)] == c && !taken[std::size_t(d)]) {
        taken[std::size_t(d)] = true, lab[std::size_t(k)] = c, perm[std::size_t(k++)] = d;
        break;
      }
  return {dndarray<T, R>(transpose(t.a, perm)), lab};
}

// The tensor with its labelled axes in `order`: the same array when they
// already are, else one local copy.
template <dtype T>
tensor<T> permuted(const tensor<T>& t, const std::string& order) {
  if (t.labels() == order) return t;
  tensor<T> r;
  std::tie(r.a, r.lab) = reordered(t, order);
  return r;
}

// The diagonal of a label on two axes: both moved last, merged into one axis of
// n*n elements, and every (n+1)-th read (a strided view, then a copy).
template <dtype T>
tensor<T> diagonal(const tensor<T>& t, char c) {
  std::string others;  // (a third c stays among them: the next round takes it)
  int skipped = 0;
  for (char x : t.labels())
    if (x != c || skipped++ >= 2) others += x;
  const dndarray<T, R> moved = reordered(t, others + c + c).first;
  const auto ms = moved.shape();
  const std::int64_t n = ms[R - 1];
  std::array<std::int64_t, R> merged{};
  merged[0] = 1;
  for (int d = 0; d < R - 2; ++d) merged[std::size_t(d + 1)] = ms[std::size_t(d)];
  merged[R - 1] = n * n;
  const auto flat = reshape(moved, merged);
  tensor<T> r;
  r.a = dndarray<T, R>(flat(all, all, all, all, all, all, all, slice(0, std::nullopt, n + 1)));
  // labels: the padding (one more in front), the others, then c
  const std::string rest = others + c;
  for (std::size_t i = 0; i < rest.size(); ++i) r.lab[std::size_t(R) - rest.size() + i] = rest[i];
  return r;
}

// The labels in `drop` summed out (their axes stay, of extent 1).
template <dtype T>
tensor<T> summed(const tensor<T>& t, const std::string& drop) {
  if (drop.empty()) return t;
  std::vector<int> axes;
  tensor<T> r;
  r.lab = t.lab;
  for (int d = 0; d < R; ++d)
    if (t.lab[std::size_t(d)] && drop.find(t.lab[std::size_t(d)]) != std::string::npos) {
      axes.push_back(d);
      r.lab[std::size_t(d)] = 0;
    }
  auto s = detail::make_reduction<op::sum, R, false>(t.a, axes, true);
  if constexpr (std::is_same_v<typename decltype(s)::value_type, T>) r.a = dndarray<T, R>(s);
  else r.a = dndarray<T, R>(astype<T>(dndarray<typename decltype(s)::value_type, R>(s)));
  return r;
}

// One operand's own work: a label broadcast with extent 1 dropped, repeated
// labels' diagonals, the labels no one else needs summed.
template <dtype T>
tensor<T> prepare(tensor<T> t, const contract::einsum_plan& p, const std::string& keep) {
  for (int d = 0; d < R; ++d)
    if (const char c = t.lab[std::size_t(d)]; c && t.a.shape()[std::size_t(d)] == 1 && p.extent(c) > 1)
      t.lab[std::size_t(d)] = 0;
  for (bool again = true; again;) {
    again = false;
    const std::string l = t.labels();
    for (std::size_t i = 0; i < l.size() && !again; ++i)
      if (l.find(l[i], i + 1) != std::string::npos) t = diagonal(t, l[i]), again = true;
  }
  std::string drop;
  for (char c : t.labels())
    if (keep.find(c) == std::string::npos) drop += c;
  return summed(t, drop);
}

template <dtype T, int M>
dndarray<T, M> as_matrices(const tensor<T>& t, const std::array<std::int64_t, std::size_t(M)>& shape) {
  return reshape(t.a, shape);
}

// One pairwise contraction as one matmul.
template <dtype T>
tensor<T> contract_pair(const tensor<T>& x, const tensor<T>& y, const contract::contraction_step& st) {
  const std::string lx = x.labels(), ly = y.labels();
  std::string m, n;
  for (char c : lx)
    if (ly.find(c) == std::string::npos) m += c;
  for (char c : ly)
    if (lx.find(c) == std::string::npos) n += c;
  const std::string& b = st.batch;
  const std::string& k = st.contracted;
  auto prod = [&](const tensor<T>& t, const std::string& ls) {
    std::int64_t e = 1;
    for (char c : ls) e *= t.extent(c);
    return e;
  };
  const std::int64_t B = prod(x, b), M = prod(x, m), K = prod(x, k), N = prod(y, n);
  std::vector<std::int64_t> out;
  for (char c : b) out.push_back(x.extent(c));
  for (char c : m) out.push_back(x.extent(c));
  for (char c : n) out.push_back(y.extent(c));
  tensor<T> r;
  if (b.empty()) {
    // a 2-D operand whose axes come the other way round is read transposed
    const bool ta = lx != m + k && lx == k + m, tb = ly != k + n && ly == n + k;
    const auto A = ta ? as_matrices<T, 2>(x, {K, M}) : as_matrices<T, 2>(permuted(x, m + k), {M, K});
    const auto Bm = tb ? as_matrices<T, 2>(y, {N, K}) : as_matrices<T, 2>(permuted(y, k + n), {K, N});
    dndarray<T, 2> C;
    if (ta && tb) C = matmul(transpose(A), transpose(Bm));
    else if (ta) C = matmul(transpose(A), Bm);
    else if (tb) C = matmul(A, transpose(Bm));
    else C = matmul(A, Bm);
    r.a = reshape(C, padded_shape(out));
  } else {
    const auto A = as_matrices<T, 3>(permuted(x, b + m + k), {B, M, K});
    const auto Bm = as_matrices<T, 3>(permuted(y, b + k + n), {B, K, N});
    const dndarray<T, 3> C = matmul(A, Bm);
    r.a = reshape(C, padded_shape(out));
  }
  const std::string l = b + m + n;
  for (std::size_t i = 0; i < l.size(); ++i) r.lab[std::size_t(R) - l.size() + i] = l[i];
  return r;
}

template <class... T>
struct promoted;
template <class T>
struct promoted<T> {
  using type = T;
};
template <class T, class U, class... V>
struct promoted<T, U, V...> {
  using type = typename promoted<op::promote_t<T, U>, V...>::type;
};
template <class... Ops>
using result_t = typename promoted<typename expr::node_t<const Ops&>::value_type...>::type;

template <dtype T, class X>
auto as_typed(const X& x) {
  auto a = detail::as_array(x);
  using A = decltype(a);
  if constexpr (std::is_same_v<typename A::value_type, T>) return a;
  else return dndarray<T, A::ndim_v>(astype<T>(a));
}

template <class... Ops>
std::vector<int> ranks_of() {
  return {expr::node_t<const Ops&>::ndim...};
}

// The contraction evaluated: the result's tensor with the output's labels in
// order, and the plan it followed.
template <dtype T, class... Arrays>
std::pair<tensor<T>, contract::einsum_plan> run(std::string_view text, const einsum_options& o, const Arrays&... xs) {
  static_assert(sizeof...(Arrays) >= 1, "ember::einsum: give at least one operand");
  static_assert(!std::is_same_v<T, bool>, "ember::einsum: bool operands are not supported; cast with astype<int>");
  const std::vector<int> ranks{Arrays::ndim_v...};
  const contract::subscripts subs = contract::parse_subscripts(text, ranks);
  std::vector<index_vec> shapes;
  (shapes.push_back(xs.layout().shape()), ...);
  const communicator& c = std::get<0>(std::forward_as_tuple(xs...)).comm();
  (detail::require_host(xs.device(), "ember::einsum"), ...);
  contract::einsum_plan p = contract::plan_einsum(subs, shapes, o, c.size(), std::int64_t(sizeof(T)));
  std::vector<tensor<T>> ts;
  std::size_t i = 0;
  ((ts.push_back(prepare(pad(xs, subs.inputs[i]), p, p.prepared[i])), ++i), ...);
  for (const auto& st : p.steps) {
    tensor<T> r = contract_pair(ts[std::size_t(st.pair.first)], ts[std::size_t(st.pair.second)], st);
    ts.erase(ts.begin() + st.pair.second);
    ts.erase(ts.begin() + st.pair.first);
    ts.push_back(std::move(r));
  }
  return {permuted(ts.at(0), subs.output), std::move(p)};
}

template <dtype T>
index_vec output_shape(const tensor<T>& t, const std::string& output) {
  index_vec s;
  for (char c : output) s.push_back(t.extent(c));
  return s;
}

// The dndarray of rank N (or, N == 0, the scalar on every rank).
template <dtype T, int N>
auto finish(const tensor<T>& t, const std::string& output) {
  if constexpr (N == 0) {
    auto s = ember::sum(t.a);
    return T(s);
  } else {
    std::array<std::int64_t, std::size_t(N)> s{};
    const index_vec e = output_shape(t, output);
    std::copy(e.begin(), e.end(), s.begin());
    return reshape(t.a, s);
  }
}

// The operands and, when the last argument is einsum_options, those.
template <class... Args>
constexpr bool ends_with_options() {
  if constexpr (sizeof...(Args) == 0) return false;
  else return std::is_same_v<std::remove_cvref_t<std::tuple_element_t<sizeof...(Args) - 1, std::tuple<Args...>>>,
                             einsum_options>;
}
template <class F, class... Args>
decltype(auto) with_operands(F&& f, const Args&... args) {
  const auto t = std::forward_as_tuple(args...);
  if constexpr (ends_with_options<Args...>()) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return f(std::get<sizeof...(Args) - 1>(t), std::get<I>(t)...);
    }(std::make_index_sequence<sizeof...(Args) - 1>{});
  } else {
    return f(einsum_options{}, args...);
  }
}

}  // namespace contract_detail

// einsum("...") with run-time subscripts: the result, whose rank is known once
// the subscripts are read. Converts to dndarray<T, N> (N must be that rank) or,
// when 0-d, to T.
template <dtype T>
class einsum_result {
 public:
  einsum_result(contract_detail::tensor<T> t, contract::einsum_plan p)
      : t_(std::move(t)), plan_(std::move(p)), shape_(contract_detail::output_shape(t_, plan_.subs.output)) {}
  int ndim() const { return int(shape_.size()); }
  const index_vec& shape() const { return shape_; }
  const contract::einsum_plan& plan() const { return plan_; }  // the order it followed

  template <int N>
  auto as() const {
    if (N != ndim())
      throw shape_error("ember::einsum: '" + plan_.subs.text() + "' gives a result of " + std::to_string(ndim()) +
                        " dimension" + (ndim() == 1 ? "" : "s") + " (shape " + detail::shape_str(shape_) +
                        "), not " + std::to_string(N));
    return contract_detail::finish<T, N>(t_, plan_.subs.output);
  }
  template <int N>
    requires(N >= 1)
  operator dndarray<T, N>() const {  // NOLINT: implicit, as NumPy's result is the array
    return as<N>();
  }
  operator T() const { return as<0>(); }  // NOLINT: a 0-d result, as numpy's scalar

 private:
  contract_detail::tensor<T> t_;
  contract::einsum_plan plan_;
  index_vec shape_;
};

template <class... Args>
auto einsum(std::string_view subscripts, const Args&... args) {
  return contract_detail::with_operands(
      [&](const einsum_options& o, const auto&... ops) {
        using T = contract_detail::result_t<decltype(ops)...>;
        auto [t, p] = contract_detail::run<T>(subscripts, o, contract_detail::as_typed<T>(ops)...);
        return einsum_result<T>(std::move(t), std::move(p));
      },
      args...);
}

template <fixed_string S, class... Args>
auto einsum(const Args&... args) {
  return contract_detail::with_operands(
      [&](const einsum_options& o, const auto&... ops) {
        using T = contract_detail::result_t<decltype(ops)...>;
        constexpr int ranks[] = {expr::node_t<decltype(ops)>::ndim...};
        constexpr int N = contract::output_rank(S.view(), ranks, int(sizeof...(ops)));
        static_assert(N >= 0,
                      "ember::einsum<\"...\">: the subscripts do not match the operands' ranks or are malformed "
                      "(the run-time einsum(\"...\", ...) says why)");
        auto [t, p] = contract_detail::run<T>(S.view(), o, contract_detail::as_typed<T>(ops)...);
        return contract_detail::finish<T, N>(t, p.subs.output);
      },
      args...);
}

// The order einsum would follow, nothing computed (numpy.einsum_path): its
// path(), steps (subscripts, flops, predicted cost) and to_string().
template <class... Args>
contract::einsum_plan einsum_path(std::string_view subscripts, const Args&... args) {
  return contract_detail::with_operands(
      [&](const einsum_options& o, const auto&... ops) {
        using T = contract_detail::result_t<decltype(ops)...>;
        const std::vector<int> ranks{expr::node_t<decltype(ops)>::ndim...};
        std::vector<index_vec> shapes{index_vec(detail::shape_vec(ops))...};
        const int P = std::get<0>(std::forward_as_tuple(ops...)).comm().size();
        return contract::plan_einsum(contract::parse_subscripts(subscripts, ranks), shapes, o, P,
                                     std::int64_t(sizeof(T)));
      },
      args...);
}

namespace contract_detail {
template <int Na, int Nb, std::size_t K>
std::string tensordot_subscripts(const std::array<int, K>& ax, const std::array<int, K>& bx, const index_vec& sa,
                                 const index_vec& sb) {
  static_assert(Na + Nb <= 52, "ember::tensordot: too many axes");
  const char* letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string la(static_cast<std::size_t>(Na), char(0)), lb(static_cast<std::size_t>(Nb), char(0)), out;
  int next = 0;
  for (std::size_t i = 0; i < K; ++i) {
    const int a = detail::normalized_axis(ax[i], Na, "tensordot"), b = detail::normalized_axis(bx[i], Nb, "tensordot");
    if (la[std::size_t(a)] || lb[std::size_t(b)])
      throw value_error("ember::tensordot: axis " + std::to_string(la[std::size_t(a)] ? a : b) + " of " +
                        (la[std::size_t(a)] ? "a" : "b") + " is named twice");
    if (sa[std::size_t(a)] != sb[std::size_t(b)])
      throw shape_error("ember::tensordot: shape-mismatch for sum: axis " + std::to_string(a) + " of a (shape " +
                        detail::shape_str(sa) + ") has " + std::to_string(sa[std::size_t(a)]) + " elements, axis " +
                        std::to_string(b) + " of b (shape " + detail::shape_str(sb) + ") " +
                        std::to_string(sb[std::size_t(b)]));
    la[std::size_t(a)] = lb[std::size_t(b)] = letters[next++];
  }
  for (auto& c : la)
    if (!c) out += c = letters[next++];
  for (auto& c : lb)
    if (!c) out += c = letters[next++];
  return la + "," + lb + "->" + out;
}
}  // namespace contract_detail

// numpy.tensordot(a, b, axes=([a axes], [b axes])): the sum over those pairs of
// axes; the result has a's other axes, then b's.
template <class A, class B, std::size_t K>
  requires(array_like<A> && array_like<B>)
auto tensordot(const A& a, const B& b, const int (&axes)[2][K]) {
  using T = contract_detail::result_t<A, B>;
  const auto x = contract_detail::as_typed<T>(a);
  const auto y = contract_detail::as_typed<T>(b);
  constexpr int Na = decltype(x)::ndim_v, Nb = decltype(y)::ndim_v, N = Na + Nb - 2 * int(K);
  static_assert(int(K) <= Na && int(K) <= Nb, "ember::tensordot: more axes summed than an operand has");
  std::array<int, K> ax{}, bx{};
  std::copy(axes[0], axes[0] + K, ax.begin());
  std::copy(axes[1], axes[1] + K, bx.begin());
  const std::string s = contract_detail::tensordot_subscripts<Na, Nb, K>(ax, bx, x.layout().shape(), y.layout().shape());
  auto [t, p] = contract_detail::run<T>(s, einsum_options{}, x, y);
  return contract_detail::finish<T, N>(t, p.subs.output);
}
// numpy.tensordot(a, b, axes=K): a's last K axes with b's first K.
template <int K = 2, class A, class B>
  requires(array_like<A> && array_like<B>)
auto tensordot(const A& a, const B& b) {
  constexpr int Na = expr::node_t<const A&>::ndim;
  static_assert(K >= 0 && K <= Na && K <= expr::node_t<const B&>::ndim,
                "ember::tensordot<K>: more axes summed than an operand has");
  int axes[2][K == 0 ? 1 : K] = {};
  if constexpr (K == 0) {
    using T = contract_detail::result_t<A, B>;
    const auto x = contract_detail::as_typed<T>(a);
    const auto y = contract_detail::as_typed<T>(b);
    const std::string s = contract_detail::tensordot_subscripts<Na, expr::node_t<const B&>::ndim, 0>(
        {}, {}, x.layout().shape(), y.layout().shape());
    auto [t, p] = contract_detail::run<T>(s, einsum_options{}, x, y);
    return contract_detail::finish<T, Na + expr::node_t<const B&>::ndim>(t, p.subs.output);
  } else {
    for (int i = 0; i < K; ++i) axes[0][i] = Na - K + i, axes[1][i] = i;
    return tensordot(a, b, axes);
  }
}

}  // namespace ember
