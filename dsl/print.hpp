// Printing: NumPy-style text of the global array on rank 0, with Heat's footer.
// Collective. A summarized array (over 1000 elements) gathers only the corner
// elements that are shown, never the whole array.
#pragma once

#include <iostream>
#include <sstream>
#include <string>

#include "../runtime/format.hpp"
#include "dndarray.hpp"
#include "eval.hpp"

namespace ember {

namespace detail {

// Gathers the shown sub-array on rank 0 through the exchange engine and returns
// its text there (an empty string elsewhere). Collective.
template <dtype T, int N>
std::string to_text(const dndarray<T, N>& a, std::string_view device);

template <dtype T, int N>
std::string to_text(const dndarray<T, N>& a) {
  // A GPU array prints from a host copy (every rank copies: the device is replicated metadata).
  if (a.device() == device_kind::gpu) return to_text(a.to(device_kind::cpu), "gpu");
  return to_text(a, "cpu");
}

template <dtype T, int N>
std::string to_text(const dndarray<T, N>& a, std::string_view device) {
  const auto& L = a.layout();
  const auto& c = a.comm();
  const auto shown = format::shown_indices(L.shape());
  // Local selection: the shown indices that fall in my block, compressed.
  const int k = L.split().value_or(0);
  const std::int64_t lo = L.split() ? L.offset(c.rank()) : 0;
  const std::int64_t hi = L.split() ? lo + L.extent(c.rank()) : L.shape()[0];
  index_vec cshape(N), extents(c.size(), 0);
  for (int d = 0; d < N; ++d) cshape[d] = std::int64_t(shown[d].size());
  std::vector<index_vec> mine = shown;
  if (L.split()) {
    for (int r = 0; r < c.size(); ++r) {
      const std::int64_t rlo = L.offset(r), rhi = rlo + L.extent(r);
      for (auto i : shown[k]) extents[r] += (i >= rlo && i < rhi) ? 1 : 0;
    }
    mine[k].clear();
    for (auto i : shown[k])
      if (i >= lo && i < hi) mine[k].push_back(i - lo);
  }
  index_vec mshape(N);
  std::int64_t mcount = 1;
  for (int d = 0; d < N; ++d) {
    mshape[d] = std::int64_t(mine[d].size());
    mcount *= mshape[d];
  }
  std::unique_ptr<T[]> sel(new T[std::size_t(std::max<std::int64_t>(mcount, 1))]);
  if (mcount > 0) {
    const auto lstr = row_major_strides(L.lshape(c.rank()));
    const T* p = a.ldata();
    index_vec idx(N, 0);
    for (std::int64_t n = 0; n < mcount; ++n) {
      std::int64_t off = 0;
      for (int d = 0; d < N; ++d) off += mine[d][std::size_t(idx[d])] * lstr[d];
      sel[std::size_t(n)] = p[off];
      for (int d = N - 1; d >= 0; --d) {
        if (++idx[d] < mshape[d]) break;
        idx[d] = 0;
      }
    }
  }
  // Move the compressed pieces to rank 0: a layout whose rank 0 holds everything.
  index_vec to_root(c.size(), 0);
  to_root[0] = cshape[k];
  layout src = L.split() ? layout(cshape, k, extents) : replicated_layout(cshape, c.size());
  layout dst(cshape, k, to_root);
  std::unique_ptr<T[]> gathered(new T[std::size_t(c.rank() == 0 ? std::max<std::int64_t>(dst.local_size(0), 1) : 1)]);
  exchange(src, dst, c.rank(), sizeof(T)).run(c, sel.get(), gathered.get());
  if (c.rank() != 0) return {};

  const std::int64_t total = dst.local_size(0);
  std::vector<std::string> cells;
  if constexpr (std::is_same_v<T, bool>) {
    cells = format::format_bools(gathered.get(), total);
  } else if constexpr (is_complex_v<T>) {
    std::vector<double> re(static_cast<std::size_t>(total)), im(static_cast<std::size_t>(total));
    for (std::int64_t i = 0; i < total; ++i) {
      re[std::size_t(i)] = double(gathered[std::size_t(i)].real());
      im[std::size_t(i)] = double(gathered[std::size_t(i)].imag());
    }
    cells = format::format_complex(re.data(), im.data(), total, std::is_same_v<T, complex64>);
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    cells = format::format_uints(gathered.get(), total);
  } else if constexpr (std::is_integral_v<T>) {
    std::vector<std::int64_t> v(gathered.get(), gathered.get() + total);
    cells = format::format_ints(v.data(), total);
  } else {
    std::vector<double> v(gathered.get(), gathered.get() + total);
    cells = format::format_floats(v.data(), total, std::is_same_v<T, float>);
  }
  const std::string footer = std::string(", dtype=ember.") + std::string(dtype_name<T>()) +
                             ", device=" + std::string(device) + ", split=" + (L.split() ? std::to_string(*L.split()) : "None") + ")";
  bool empty = false;
  for (auto s : L.shape()) empty = empty || s == 0;
  if (empty) return "DNDarray([], shape=" + shape_str(L.shape()) + footer;
  return format::layout_text(cells, L.shape(), shown, "DNDarray(", footer);
}

}  // namespace detail

// Collective: rank 0 writes the global array to `os`, the other ranks nothing.
template <dtype T, int N>
std::ostream& operator<<(std::ostream& os, const dndarray<T, N>& a) {
  auto s = detail::to_text(a);
  if (a.comm().rank() == 0) os << s;
  return os;
}

// Collective: rank 0 prints the global array and a newline to std::cout.
template <dtype T, int N>
void print(const dndarray<T, N>& a) {
  auto s = detail::to_text(a);
  if (a.comm().rank() == 0) std::cout << s << '\n' << std::flush;
}

// Collective: the text every rank would print, returned on every rank (for tests
// and logging). Gathers the shown elements to rank 0 and broadcasts the text.
template <dtype T, int N>
std::string to_string(const dndarray<T, N>& a) {
  auto s = detail::to_text(a);
  std::int64_t n = std::int64_t(s.size());
  a.comm().bcast(&n, 1, 0);
  s.resize(std::size_t(n));
  a.comm().bcast(s.data(), n, 0);
  return s;
}

// Printing an expression evaluates it (an evaluation point), then prints.
template <expression E>
std::ostream& operator<<(std::ostream& os, const E& e) {
  return os << eval<E::ndim>(e);
}
template <expression E>
void print(const E& e) {
  print(eval<E::ndim>(e));
}
template <expression E>
std::string to_string(const E& e) {
  return to_string(eval<E::ndim>(e));
}

}  // namespace ember
