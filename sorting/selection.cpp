#include "selection.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>

namespace ember {

namespace {

// An unsigned key of sizeof(T) bytes whose order is the values' order (floats:
// the sign flipped over the magnitude; -0.0 and 0.0 one key), and back.
template <class T>
using key_t = std::conditional_t<sizeof(T) == 8, std::uint64_t,
                                 std::conditional_t<sizeof(T) == 4, std::uint32_t,
                                                    std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>;
template <class T>
key_t<T> order_key(T x) {
  using K = key_t<T>;
  constexpr K top = K(K(1) << (8 * sizeof(T) - 1));
  if constexpr (std::is_floating_point_v<T>) {
    if (x == T(0)) x = T(0);
    const K b = std::bit_cast<K>(x);
    return (b & top) ? K(~b) : K(b | top);
  } else if constexpr (std::is_signed_v<T>) {
    return K(K(x) ^ top);
  } else {
    return K(x);
  }
}
template <class T>
T from_key(key_t<T> k) {
  using K = key_t<T>;
  constexpr K top = K(K(1) << (8 * sizeof(T) - 1));
  if constexpr (std::is_floating_point_v<T>) return std::bit_cast<T>((k & top) ? K(k & ~top) : K(~k));
  else if constexpr (std::is_signed_v<T>) return T(K(k ^ top));
  else return T(k);
}

template <class T>
struct selector {
  const communicator& comm;
  std::vector<T> cand;  // the candidates once a round has dropped some
  const T* c = nullptr;  // a view of the data until the first round drops some
  std::int64_t m = 0;

  std::vector<T> gather(const T* x, std::int64_t cnt) const {
    const auto sizes = comm.allgather(cnt);
    std::vector<std::int64_t> displs(sizes.size());
    std::int64_t t = 0;
    for (std::size_t q = 0; q < sizes.size(); ++q) {
      displs[q] = t;
      t += sizes[q];
    }
    std::vector<T> all(static_cast<std::size_t>(t));
    comm.allgatherv_bytes(x, cnt, all.data(), sizes, displs, sizeof(T));
    return all;
  }
  template <class Keep>
  void keep(Keep&& pred, std::int64_t expect) {
    std::vector<T> next;
    next.reserve(std::size_t(std::max<std::int64_t>(expect, 0)) + 16);
    for (std::int64_t i = 0; i < m; ++i)
      if (pred(c[i])) next.push_back(c[i]);
    cand.swap(next);
    c = cand.data();
    m = std::int64_t(cand.size());
  }

  // One sampling round; true when it found the value (in `out`).
  bool sample_round(std::int64_t& k, std::int64_t total, T& out) {
    const std::int64_t s = std::min<std::int64_t>(selection::samples_per_rank(comm.size()), m);
    std::vector<T> mine(static_cast<std::size_t>(s));
    for (std::int64_t j = 0; j < s; ++j) mine[static_cast<std::size_t>(j)] = c[(j * m) / s + (m / s) / 2];
    auto samples = gather(mine.data(), s);
    std::sort(samples.begin(), samples.end());
    const std::int64_t ts = std::int64_t(samples.size());
    // the bracket: the wanted rank's place among the samples, +- 2 sqrt(samples)
    // of them; lo and hi are candidates, so every round drops at least them
    const double at = double(k) / double(total) * double(ts);
    const std::int64_t margin = std::int64_t(2 * std::sqrt(double(ts))) + 1;
    const T lo = samples[static_cast<std::size_t>(std::clamp<std::int64_t>(std::int64_t(at) - margin, 0, ts - 1))];
    const T hi = samples[static_cast<std::size_t>(std::clamp<std::int64_t>(std::int64_t(at) + margin, 0, ts - 1))];
    std::int64_t cnt[4] = {0, 0, 0, 0};  // < lo, <= lo, < hi, <= hi
    for (std::int64_t i = 0; i < m; ++i) {
      const T x = c[i];
      cnt[0] += x < lo;
      cnt[1] += !(lo < x);
      cnt[2] += x < hi;
      cnt[3] += !(hi < x);
    }
    comm.allreduce(cnt, 4, reduce_op::sum);
    if (k >= cnt[0] && k < cnt[1]) return out = lo, true;
    if (k >= cnt[2] && k < cnt[3]) return out = hi, true;
    const std::int64_t P64 = comm.size();
    if (k < cnt[0]) {
      keep([&](T x) { return x < lo; }, cnt[0] / P64);
    } else if (k < cnt[2]) {  // strictly between lo and hi
      keep([&](T x) { return lo < x && x < hi; }, (cnt[2] - cnt[1]) / P64);
      k -= cnt[1];
    } else {
      keep([&](T x) { return hi < x; }, (total - cnt[3]) / P64);
      k -= cnt[3];
    }
    return false;
  }

  // One radix round on byte `b` (0: the lowest) of the candidates' keys.
  void radix_round(std::int64_t& k, int b) {
    const int shift = 8 * b;
    std::int64_t h[256] = {};
    for (std::int64_t i = 0; i < m; ++i) ++h[(order_key(c[i]) >> shift) & 255];
    comm.allreduce(h, 256, reduce_op::sum);
    int bucket = 0;
    for (; bucket < 255 && k >= h[bucket]; ++bucket) k -= h[bucket];
    keep([&](T x) { return int((order_key(x) >> shift) & 255) == bucket; }, h[bucket] / std::int64_t(comm.size()));
  }
};

template <class T>
T select_one(const communicator& comm, const T* data, std::int64_t n, std::int64_t k) {
  selector<T> s{comm, {}, data, n};
  const int P = comm.size();
  const std::int64_t small = selection::gather_below(P);
  int sampling = -1;  // the cap, from the first round's count
  int radix = int(sizeof(T));  // bytes left for the radix rounds
  for (;;) {
    const std::int64_t total = comm.allreduce(s.m, reduce_op::sum);
    if (sampling < 0) {
      sampling = selection::sampling_rounds(total, P);
      // EMBER_SELECTION_SAMPLING_ROUNDS lowers the cap (0: the radix rounds
      // alone; the tests run that path so), never raises it past the bound
      if (const char* e = std::getenv("EMBER_SELECTION_SAMPLING_ROUNDS"); e && *e)
        sampling = std::clamp(std::atoi(e), 0, sampling);
    }
    if (total <= small) {  // gather what is left and select
      auto all = s.gather(s.c, s.m);
      std::nth_element(all.begin(), all.begin() + k, all.end());
      return all[static_cast<std::size_t>(k)];
    }
    if (sampling > 0) {
      --sampling;
      T out{};
      if (s.sample_round(k, total, out)) return out;
      continue;
    }
    if (radix == 0) {  // every key's bytes are chosen: the candidates are one value
      auto key = std::uint64_t(s.m > 0 ? order_key(s.c[0]) : 0);
      key = comm.allreduce(key, reduce_op::max);
      return from_key<T>(key_t<T>(key));
    }
    s.radix_round(k, --radix);
  }
}

}  // namespace

template <class T>
std::vector<T> select_ranks(const communicator& comm, const T* data, std::int64_t n, const std::vector<std::int64_t>& ks) {
  // each distinct rank once (a median of an even count, neighbours of a quantile)
  std::vector<std::int64_t> distinct_ks(ks);
  std::sort(distinct_ks.begin(), distinct_ks.end());
  distinct_ks.erase(std::unique(distinct_ks.begin(), distinct_ks.end()), distinct_ks.end());
  std::vector<T> vals;
  for (std::int64_t k : distinct_ks) vals.push_back(select_one(comm, data, n, k));
  std::vector<T> out;
  out.reserve(ks.size());
  for (std::int64_t k : ks)
    out.push_back(vals[std::size_t(std::lower_bound(distinct_ks.begin(), distinct_ks.end(), k) - distinct_ks.begin())]);
  return out;
}

#define EMBER_SELECT(T) \
  template std::vector<T> select_ranks<T>(const communicator&, const T*, std::int64_t, const std::vector<std::int64_t>&);
EMBER_SELECT(float)
EMBER_SELECT(double)
EMBER_SELECT(std::int8_t)
EMBER_SELECT(std::int16_t)
EMBER_SELECT(std::int32_t)
EMBER_SELECT(std::int64_t)
EMBER_SELECT(std::uint8_t)
EMBER_SELECT(std::uint16_t)
EMBER_SELECT(std::uint32_t)
EMBER_SELECT(std::uint64_t)
#undef EMBER_SELECT

}  // namespace ember
