// Batch kernels of the counter-based generator (internal). The same source,
// runtime/random_kernels.cpp, is compiled for baseline x86-64, for AVX2 and for
// AVX-512, each into its own namespace; random.cpp picks one at run time. Both are
// built without floating-point contraction, so they give bit-identical values:
// the same seed gives the same array on every machine of a heterogeneous cluster.
#pragma once

#include <cstdint>

#include "random.hpp"

namespace ember::rng::kernels {

inline constexpr int batch = 64;  // counters per call; each gives two values

#define EMBER_RNG_DECLARE(ISA)                                                              \
  namespace ISA {                                                                           \
  /* Philox words for counters j0 .. j0+batch-1: wa[l], wb[l] (64 bits each). */            \
  void words(const stream& s, std::uint64_t j0, std::uint64_t* wa, std::uint64_t* wb);      \
  /* 2*batch uniforms in [0, 1) with 53 random bits, element 2l+i from word i of l. */      \
  void uniform53(const stream& s, std::uint64_t j0, double* u);                             \
  /* 2*batch standard normals (Box-Muller on the counter's two words). */                  \
  void normal(const stream& s, std::uint64_t j0, double* z);                                \
  }
EMBER_RNG_DECLARE(base)
EMBER_RNG_DECLARE(avx2)
EMBER_RNG_DECLARE(avx512)
#undef EMBER_RNG_DECLARE

}  // namespace ember::rng::kernels
