// Counter-based random numbers (Philox4x32-10, Salmon et al., SC'11).
//
// Element i of a generated global array depends only on (seed, sequence number of
// the call, i): the same seed gives the same global array at any number of ranks
// and any split, and each rank generates only its own elements, with no
// communication.
#pragma once

#include <cstdint>

namespace ember::rng {

struct stream {
  std::uint64_t seed = 0;
  std::uint64_t call = 0;  // sequence number of the generating call since seeding
};

// Fill out[0..n) with the values of global elements first, first+1, ...
void fill_uniform(double* out, std::int64_t n, const stream& s, std::int64_t first, double lo, double hi);
void fill_uniform(float* out, std::int64_t n, const stream& s, std::int64_t first, float lo, float hi);
void fill_normal(double* out, std::int64_t n, const stream& s, std::int64_t first, double mean, double stddev);
void fill_normal(float* out, std::int64_t n, const stream& s, std::int64_t first, float mean, float stddev);
// Uniform integers in [lo, hi) (hi > lo).
void fill_randint(std::int64_t* out, std::int64_t n, const stream& s, std::int64_t first, std::int64_t lo, std::int64_t hi);
void fill_randint(std::int32_t* out, std::int64_t n, const stream& s, std::int64_t first, std::int64_t lo, std::int64_t hi);

// The raw generator, exposed for tests against the published known-answer vectors.
void philox4x32(const std::uint32_t ctr[4], const std::uint32_t key[2], std::uint32_t out[4]);

}  // namespace ember::rng
