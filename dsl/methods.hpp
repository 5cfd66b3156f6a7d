// The member spellings of dndarray (a.sum(1), a.T(), a.astype<float>(), ...):
// each is the free function of the same name, so a.sum(1) and ember::sum(a, 1)
// are the same lazy node. Declared in dndarray.hpp, defined here, after every
// free function they forward to (ember.hpp includes this last of the dsl).
#pragma once

#include "../shape/shape.hpp"
#include "matmul.hpp"
#include "reductions.hpp"
#include "ufuncs.hpp"

namespace ember::detail {

template <class Array>
struct array_methods {
#define EMBER_FORWARD(NAME)                           \
  template <class... A>                               \
  static auto NAME(const Array& self, const A&... a) { \
    return ember::NAME(self, a...);                   \
  }
  EMBER_FORWARD(sum)
  EMBER_FORWARD(prod)
  EMBER_FORWARD(min)
  EMBER_FORWARD(max)
  EMBER_FORWARD(mean)
  EMBER_FORWARD(var)
  EMBER_FORWARD(std)
  EMBER_FORWARD(argmin)
  EMBER_FORWARD(argmax)
  EMBER_FORWARD(any)
  EMBER_FORWARD(all)
  EMBER_FORWARD(reshape)
  EMBER_FORWARD(ravel)
  EMBER_FORWARD(flatten)
  EMBER_FORWARD(squeeze)
  EMBER_FORWARD(clip)
  EMBER_FORWARD(round)
  EMBER_FORWARD(conj)
#undef EMBER_FORWARD
  template <dtype U>
  static auto astype(const Array& self) {
    return ember::astype<U>(self);
  }
  static auto T(const Array& self) { return ember::transpose(self); }
  template <class B>
  static auto dot(const Array& self, const B& b) {
    static_assert(expr::node_t<Array>::ndim <= 2 && expr::node_t<B>::ndim <= 2,
                  "a.dot(b): operands must be 1-D or 2-D (for stacks of matrices use ember::matmul)");
    return ember::matmul(self, b);
  }
  template <class V>
  static void fill(const Array& self, const V& v) {
    ember::copyto(self, v);
  }
};

}  // namespace ember::detail
