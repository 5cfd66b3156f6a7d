#include "selection.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace ember {

namespace {

// Candidates kept as a view of the data until the first round drops some.
template <class T>
T select_one(const communicator& comm, const T* data, std::int64_t n, std::int64_t k) {
  const int P = comm.size();
  std::vector<T> cand;
  const T* c = data;
  std::int64_t m = n;
  const std::int64_t small = 1024 * std::int64_t(P);
  auto gather = [&](const T* x, std::int64_t cnt) {
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
  };
  for (;;) {
    const std::int64_t total = comm.allreduce(m, reduce_op::sum);
    if (total <= small) {  // gather what is left and select
      auto all = gather(c, m);
      std::nth_element(all.begin(), all.begin() + k, all.end());
      return all[static_cast<std::size_t>(k)];
    }
    // regular samples, about 4096 in all (at least 64 per rank; fewer where
    // fewer candidates are left): the bracket keeps ~4 sqrt(4096) / 4096 = 6 %
    const std::int64_t s = std::min<std::int64_t>(std::max<std::int64_t>(64, 4096 / P), m);
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
    if (k >= cnt[0] && k < cnt[1]) return lo;
    if (k >= cnt[2] && k < cnt[3]) return hi;
    std::vector<T> next;
    next.reserve(std::size_t(k < cnt[0] ? cnt[0] : k < cnt[2] ? cnt[2] - cnt[1] : total - cnt[3]) / std::size_t(P) + 16);
    if (k < cnt[0]) {
      for (std::int64_t i = 0; i < m; ++i)
        if (c[i] < lo) next.push_back(c[i]);
    } else if (k < cnt[2]) {  // strictly between lo and hi
      for (std::int64_t i = 0; i < m; ++i)
        if (lo < c[i] && c[i] < hi) next.push_back(c[i]);
      k -= cnt[1];
    } else {
      for (std::int64_t i = 0; i < m; ++i)
        if (hi < c[i]) next.push_back(c[i]);
      k -= cnt[3];
    }
    cand.swap(next);
    c = cand.data();
    m = std::int64_t(cand.size());
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
