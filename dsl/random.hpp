// ember::random: Heat-compatible random factories on a counter-based generator.
// The same seed gives the same global array for any number of ranks and any split.
#pragma once

#include <cstdint>

#include "../runtime/random.hpp"
#include "factories.hpp"

namespace ember::random {

namespace detail {
// The replicated generator state: the seed and the number of arrays generated
// since seeding. Every rank advances it identically (one step per call).
inline rng::stream& state() {
  static rng::stream s{0x2545F4914F6CDD1Dull, 0};
  return s;
}
inline rng::stream next_stream() {
  auto s = state();
  ++state().call;
  return s;
}
// The generator state and the distribution's parameters, for the factory's
// agreement: a rank seeded differently (or out of step) would build an array
// whose parts come from different streams.
inline ember::detail::factory_args stream_args(double p0, double p1, std::function<void()> validate = [] {}) {
  const rng::stream s = state();
  return {ember::detail::arg_hash().add(s.seed).add(s.call).add(ember::detail::bits_of(p0)).add(ember::detail::bits_of(p1)).h,
          [s, p0, p1] {
            return "seed " + std::to_string(s.seed) + ", array #" + std::to_string(s.call) + " since seeding, parameters (" +
                   std::to_string(p0) + ", " + std::to_string(p1) + ")";
          },
          std::move(validate)};
}
}  // namespace detail

// Resets the generator: after seed(s), the k-th random array is a function of s, k
// and the element's global index only.
inline void seed(std::uint64_t s) { detail::state() = {s, 0}; }
inline rng::stream get_state() { return detail::state(); }
inline void set_state(const rng::stream& s) { detail::state() = s; }

template <class T = double, std::size_t N>
  requires std::is_floating_point_v<T>
dndarray<T, int(N)> normal(double mean, double stddev, const std::array<std::int64_t, N>& shape, const factory_options& o = {}) {
  auto a = ember::detail::make<T>(shape, o, true, detail::stream_args(mean, stddev), "ember::random::normal");  // on the host; on_device() uploads for {.device = gpu}
  const auto s = detail::next_stream();
  ember::detail::fill_runs(a, [&](T* p, std::int64_t n, std::int64_t g) { rng::fill_normal(p, n, s, g, T(mean), T(stddev)); });
  return ember::detail::on_device(a, o.device);
}
template <class T = double, std::size_t N>
  requires std::is_floating_point_v<T>
dndarray<T, int(N)> randn(const std::array<std::int64_t, N>& shape, const factory_options& o = {}) {
  return normal<T>(0.0, 1.0, shape, o);
}
template <class T = double, std::size_t N>
  requires std::is_floating_point_v<T>
dndarray<T, int(N)> uniform(double low, double high, const std::array<std::int64_t, N>& shape, const factory_options& o = {}) {
  auto a = ember::detail::make<T>(shape, o, true, detail::stream_args(low, high), "ember::random::uniform");  // on the host; on_device() uploads for {.device = gpu}
  const auto s = detail::next_stream();
  ember::detail::fill_runs(a, [&](T* p, std::int64_t n, std::int64_t g) { rng::fill_uniform(p, n, s, g, T(low), T(high)); });
  return ember::detail::on_device(a, o.device);
}
// Uniform on [0, 1).
template <class T = double, std::size_t N>
  requires std::is_floating_point_v<T>
dndarray<T, int(N)> rand(const std::array<std::int64_t, N>& shape, const factory_options& o = {}) {
  return uniform<T>(0.0, 1.0, shape, o);
}
// Uniform integers on [low, high).
template <class T = std::int64_t, std::size_t N>
  requires(std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::int32_t>)
dndarray<T, int(N)> randint(std::int64_t low, std::int64_t high, const std::array<std::int64_t, N>& shape,
                            const factory_options& o = {}) {
  auto a = ember::detail::make<T>(shape, o, true, detail::stream_args(double(low), double(high), [&] {
    if (high <= low)
      throw value_error("ember::random::randint: low (" + std::to_string(low) + ") must be below high (" +
                        std::to_string(high) + ")");
  }), "ember::random::randint");  // on the host; on_device() uploads for {.device = gpu}
  const auto s = detail::next_stream();
  ember::detail::fill_runs(a, [&](T* p, std::int64_t n, std::int64_t g) { rng::fill_randint(p, n, s, g, low, high); });
  return ember::detail::on_device(a, o.device);
}

// The same with braced shapes: randn<double>({7, 4, 3}, {.split = 0}).
template <class T = double, std::size_t N>
  requires std::is_floating_point_v<T>
dndarray<T, int(N)> normal(double mean, double stddev, const std::int64_t (&shape)[N], const factory_options& o = {}) {
  return normal<T>(mean, stddev, std::to_array(shape), o);
}
template <class T = double, std::size_t N>
  requires std::is_floating_point_v<T>
dndarray<T, int(N)> randn(const std::int64_t (&shape)[N], const factory_options& o = {}) {
  return normal<T>(0.0, 1.0, std::to_array(shape), o);
}
template <class T = double, std::size_t N>
  requires std::is_floating_point_v<T>
dndarray<T, int(N)> uniform(double low, double high, const std::int64_t (&shape)[N], const factory_options& o = {}) {
  return uniform<T>(low, high, std::to_array(shape), o);
}
template <class T = double, std::size_t N>
  requires std::is_floating_point_v<T>
dndarray<T, int(N)> rand(const std::int64_t (&shape)[N], const factory_options& o = {}) {
  return uniform<T>(0.0, 1.0, std::to_array(shape), o);
}
template <class T = std::int64_t, std::size_t N>
  requires(std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::int32_t>)
dndarray<T, int(N)> randint(std::int64_t low, std::int64_t high, const std::int64_t (&shape)[N],
                            const factory_options& o = {}) {
  return randint<T>(low, high, std::to_array(shape), o);
}

}  // namespace ember::random
