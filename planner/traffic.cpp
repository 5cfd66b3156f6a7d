#include "traffic.hpp"

#include "../runtime/exchange.hpp"
#include "../sorting/selection.hpp"

#include <algorithm>
#include <climits>
#include <map>

namespace ember::planner {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a == 0 ? 0 : (a + b - 1) / b; }

std::int64_t max_msg() { return std::min<std::int64_t>(config().max_message_bytes, INT_MAX); }
std::int64_t chunk(bool both_contiguous) {
  return std::max<std::int64_t>(1, both_contiguous ? max_msg() : std::min(max_msg(), config().staging_bytes));
}

std::int64_t prod(const index_vec& s, int from, int to) {
  std::int64_t p = 1;
  for (int d = from; d < to; ++d) p *= s[d];
  return p;
}

struct accumulator {
  traffic_summary s;
  bool keep;
  void add(int rank, traffic t) {
    s.max_rank.bytes = std::max(s.max_rank.bytes, t.bytes);
    s.max_rank.messages = std::max(s.max_rank.messages, t.messages);
    s.total += t;
    if (keep) s.per_rank[std::size_t(rank)] = t;
  }
};

// Every rank's traffic starts at zero (kept per rank when asked).
accumulator rank_accumulator(int P, bool per_rank) {
  accumulator acc{{}, per_rank};
  if (per_rank) acc.s.per_rank.assign(std::size_t(P), {});
  return acc;
}

}  // namespace

traffic_summary allgather_traffic(const std::vector<std::int64_t>& units_of, std::int64_t unit, bool per_rank) {
  const int P = int(units_of.size());
  accumulator acc{{}, per_rank};
  if (per_rank) acc.s.per_rank.assign(std::size_t(P), {});
  const std::int64_t step = std::max<std::int64_t>(1, max_msg() / unit);
  std::int64_t mx = 0;
  for (auto u : units_of) mx = std::max(mx, u);
  const std::int64_t rounds = ceil_div(mx, step);
  for (int r = 0; r < P; ++r) acc.add(r, {units_of[r] * unit * (P - 1), rounds * (P - 1)});
  return acc.s;
}

traffic_summary distribution_traffic(const distribution& src, const layout& dst, std::int64_t elem, bool per_rank) {
  const int P = dst.nranks();
  if (P > 1024)
    throw value_error("ember::planner: planning a view read backwards along the split axis for " + std::to_string(P) +
                      " ranks (more than 1024) is not supported yet");
  accumulator acc{{}, per_rank};
  if (per_rank) acc.s.per_rank.assign(std::size_t(P), {});
  const auto t = predict_exchange(src, dst, std::size_t(elem));
  for (int r = 0; r < P; ++r) acc.add(r, t[std::size_t(r)]);
  return acc.s;
}

traffic_summary allreduce_traffic(std::int64_t bytes, std::int64_t elem, int P, bool per_rank) {
  accumulator acc{{}, per_rank};
  if (per_rank) acc.s.per_rank.assign(std::size_t(P), {});
  // chunked exactly as communicator::allreduce chunks, each chunk by the model
  const std::int64_t step = std::max<std::int64_t>(1, max_msg() / elem) * elem;
  traffic t;
  for (std::int64_t off = 0; off < bytes; off += step) t += model::allreduce(std::min(step, bytes - off), P);
  for (int r = 0; r < P; ++r) acc.add(r, t);
  return acc.s;
}

traffic_summary move_traffic(const layout& src, const layout& dst, std::int64_t elem, bool per_rank) {
  const int P = src.nranks();
  const index_vec& S = src.shape();
  const int n = int(S.size());
  accumulator acc{{}, per_rank};
  if (per_rank) acc.s.per_rank.assign(std::size_t(P), {});
  const std::int64_t numel = prod(S, 0, n);
  if (src == dst || !src.split() || numel == 0) {  // nothing moves (a replicated source serves itself)
    for (int r = 0; r < P; ++r) acc.add(r, {});
    return acc.s;
  }
  const int k = *src.split();
  const auto& e = src.extents();
  const std::int64_t rest_k = numel / S[k];  // elements per unit of extent along k

  if (!dst.split()) {
    // Gather to every rank: the allgather fast path when every slab is one run of
    // the global array, otherwise one message stream per peer.
    bool every_slab_one_run = true;
    for (int r = 0; r < P; ++r) every_slab_one_run = every_slab_one_run && (prod(S, 0, k) == 1 || e[r] == 0 || e[r] == S[k]);
    if (every_slab_one_run) {
      std::vector<std::int64_t> units(static_cast<std::size_t>(P));
      for (int r = 0; r < P; ++r) units[r] = e[r] * rest_k;
      return allgather_traffic(units, elem, per_rank);
    }
    for (int r = 0; r < P; ++r) {
      const std::int64_t b = e[r] * rest_k * elem;
      const std::int64_t per_peer = ceil_div(b, chunk(false));  // the slab is not one run of the result
      acc.add(r, b > 0 ? traffic{b * (P - 1), per_peer * (P - 1)} : traffic{});
    }
    return acc.s;
  }

  const int m = *dst.split();
  const auto& f = dst.extents();
  if (m == k) {
    // Same axis: rank r sends the part of its range that other ranks now own.
    const bool leading_ones = prod(S, 0, k) == 1;
    for (int r = 0; r < P; ++r) {
      traffic t;
      const std::int64_t lo = src.offset(r), hi = lo + e[r];
      if (hi > lo) {
        // first destination rank whose range ends after lo
        int q = 0, a = 0, b = P;
        while (a < b) {
          const int mid = (a + b) / 2;
          if (dst.offset(mid) + f[mid] <= lo) a = mid + 1;
          else b = mid;
        }
        for (q = a; q < P && dst.offset(q) < hi; ++q) {
          if (q == r || f[q] == 0) continue;
          const std::int64_t ov = std::min(hi, dst.offset(q) + f[q]) - std::max(lo, dst.offset(q));
          if (ov <= 0) continue;
          const std::int64_t bytes = ov * rest_k * elem;
          // one run when the dimensions before k are 1, or the piece is a whole block
          const bool sc = leading_ones || ov == e[r], dc = leading_ones || ov == f[q];
          t += {bytes, ceil_div(bytes, chunk(sc && dc))};
        }
      }
      acc.add(r, t);
    }
    return acc.s;
  }

  // Different axes: rank r sends e_r x f_q x rest to every q != r. The amount and
  // the contiguity depend on (e_r, f_q) only, so ranks are grouped by extent.
  const std::int64_t rest_km = numel / (S[k] * S[m]);
  auto contiguous_in = [&](int cut_axis, int own_axis, std::int64_t own_extent) {
    // A box restricted along cut_axis inside a block whose own_axis has extent
    // own_extent is one run iff every dimension before cut_axis has extent 1.
    for (int d = 0; d < cut_axis; ++d)
      if ((d == own_axis ? own_extent : S[d]) != 1) return false;
    return true;
  };
  auto pair_traffic = [&](std::int64_t er, std::int64_t fq) -> traffic {
    const std::int64_t bytes = er * fq * rest_km * elem;
    if (bytes == 0) return {};
    const bool sc = contiguous_in(m, k, er) || fq == S[m];
    const bool dc = contiguous_in(k, m, fq) || er == S[k];
    return {bytes, ceil_div(bytes, chunk(sc && dc))};
  };
  std::map<std::int64_t, std::int64_t> f_count;
  for (int q = 0; q < P; ++q) ++f_count[f[q]];
  std::map<std::int64_t, traffic> by_e;
  for (int r = 0; r < P; ++r) {
    auto it = by_e.find(e[r]);
    if (it == by_e.end()) {
      traffic all;
      for (const auto& [fv, cnt] : f_count) {
        const traffic t = pair_traffic(e[r], fv);
        all += {t.bytes * cnt, t.messages * cnt};
      }
      it = by_e.emplace(e[r], all).first;
    }
    acc.add(r, it->second - pair_traffic(e[r], f[r]));  // not to itself
  }
  return acc.s;
}

traffic_summary sample_sort_traffic(const layout& l, std::int64_t value_elem, bool with_index, bool per_rank) {
  const int P = l.nranks();
  accumulator acc = rank_accumulator(P, per_rank);
  if (!l.split() || P == 1) return acc.s;  // nothing is sent
  // (value, unique key) pairs as sorting/sample_sort.cpp lays them out: the
  // samples always, the data for argsort
  const std::int64_t key = (value_elem + 7) / 8 * 8 + 8;
  const std::int64_t E = with_index ? key : value_elem;
  const auto& e = l.extents();
  const std::int64_t per = 16 * std::int64_t(P);  // samples per rank
  std::int64_t S = 0, n = 0, gmax = 0, nonempty = 0, smax = 0;
  for (int q = 0; q < P; ++q) {
    const std::int64_t s = std::min(per, e[q]);
    S += s;
    n += e[q];
    smax = std::max(smax, s);
    if (e[q] > 0) {
      gmax = std::max(gmax, ceil_div(e[q], s));
      ++nonempty;
    }
  }
  const std::int64_t sample_rounds = ceil_div(smax, std::max<std::int64_t>(1, max_msg() / key));
  const std::int64_t size_rounds = 1;  // one int64 per rank: the sizes of the buckets
  // rank i holds at most (k_i + 1) g_i - 1 of a bucket holding k_i of its samples
  const std::int64_t bucket = std::min(n, gmax * (ceil_div(S, P) + nonempty) - nonempty);
  for (int r = 0; r < P; ++r) {
    traffic t{std::min(per, e[r]) * key * (P - 1), sample_rounds * (P - 1)};  // allgather of the samples
    t += {std::int64_t(P - 1) * 8, P - 1};                                     // all-to-all of the counts
    t += {e[r] * E, std::min<std::int64_t>(P - 1, e[r])};                      // all-to-all of the data (at most the block)
    t += {8 * std::int64_t(P - 1), size_rounds * (P - 1)};                     // allgather of the bucket sizes
    if (bucket > 0) t += {bucket * E, (P - 1) + ceil_div(bucket * E, chunk(true))};  // the rebalance (a realign)
    acc.add(r, t);
  }
  return acc.s;
}

traffic_summary selection_traffic(const layout& l, std::int64_t value_elem, std::int64_t ranks, bool per_rank) {
  const int P = l.nranks();
  accumulator acc = rank_accumulator(P, per_rank);
  if (!l.split() || P == 1) return acc.s;  // nothing is sent
  // every round the selection makes, as sorting/selection.cpp makes it
  const std::int64_t N = l.numel();
  const std::int64_t sampling = selection::sampling_rounds(N, P), radix = value_elem;
  const std::int64_t spr = selection::samples_per_rank(P), small = selection::gather_below(P);
  const auto& e = l.extents();
  const std::int64_t rest = l.shape().empty() ? 1 : N / std::max<std::int64_t>(1, l.shape()[std::size_t(*l.split())]);
  const traffic count = model::allreduce(8, P);
  auto times = [](traffic t, std::int64_t k) { return traffic{t.bytes * k, t.messages * k}; };
  for (int r = 0; r < P; ++r) {
    const std::int64_t block = e[std::size_t(r)] * rest;
    traffic one = times(count, sampling + radix + 1);  // the candidates counted at the top of every round
    one += times(model::allgather(8, P) + model::allgather(std::min(spr, block) * value_elem, P) + model::allreduce(32, P),
                 sampling);
    one += times(model::allreduce(256 * 8, P), radix);
    const traffic gather = model::allgather(8, P) + model::allgather(std::min(small, block) * value_elem, P);
    const traffic last = model::allreduce(8, P);  // (or the one value every radix byte chose)
    one += {std::max(gather.bytes, last.bytes), std::max(gather.messages, last.messages)};
    acc.add(r, times(count, 2) + times(one, ranks));  // the NaN count and the count, then each rank wanted
  }
  return acc.s;
}

traffic_summary partition_traffic(const layout& l, std::int64_t value_elem, bool with_index, std::int64_t ranks,
                                  bool per_rank) {
  const int P = l.nranks();
  accumulator acc = rank_accumulator(P, per_rank);
  if (!l.split() || P == 1) return acc.s;  // each rank partitions its copy
  const auto sel = selection_traffic(l, value_elem, ranks, true);
  const std::int64_t E = value_elem + (with_index ? 8 : 0);
  const auto& e = l.extents();
  for (int r = 0; r < P; ++r) {
    traffic t = model::allreduce(8, P) + sel.per_rank[std::size_t(r)];          // the NaN count, the pivots
    t += model::allgather((2 * ranks + 2) * 8, P);                             // the class counts
    t += {e[std::size_t(r)] * E, std::min<std::int64_t>(P - 1, e[std::size_t(r)]) * (with_index ? 2 : 1)};  // values, indices apart
    acc.add(r, t);
  }
  return acc.s;
}

traffic_summary topk_traffic(const layout& l, std::int64_t value_elem, std::int64_t k, bool per_rank) {
  const int P = l.nranks();
  accumulator acc = rank_accumulator(P, per_rank);
  if (!l.split() || P == 1 || k == 0) return acc.s;  // each rank selects in its copy
  const auto sel = selection_traffic(l, value_elem, 1, true);
  const auto& e = l.extents();
  index_vec cand(e.size());
  std::int64_t total = 0;
  for (std::size_t q = 0; q < e.size(); ++q) total += cand[q] = std::min(k, e[q]);
  const auto sorted = sample_sort_traffic(layout({total}, 0, cand), value_elem, true, true);
  for (int r = 0; r < P; ++r) {
    traffic t = model::allreduce(8, P) + sel.per_rank[std::size_t(r)];  // the NaN count, the k-th value
    t += model::allgather(16, P) + model::allgather(8, P);              // the counts; the candidates' counts
    t += sorted.per_rank[std::size_t(r)];
    acc.add(r, t);
  }
  return acc.s;
}

}  // namespace ember::planner
