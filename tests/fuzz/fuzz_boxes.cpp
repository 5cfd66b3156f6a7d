// libFuzzer target over box tilings and the exchange engine's intersections
// (runtime/boxes.cpp, runtime/layout.cpp, runtime/exchange.cpp). The input bytes
// are decoded into a global shape (1-3-D, extents 0..16, 0..8, 0..6), a rank
// count (1-9), an element size (1-16 bytes), message/staging limits (small ones
// force chunking mid-element) and two tilings of the shape: recursive random cuts
// (some boxes empty, empty boxes sometimes moved anywhere), sometimes a 2-D
// pinwheel (no sequence of cuts makes one), shuffled over the ranks; now and then
// a split `layout` in place of one of them. Every check is against a brute-force
// reference over all elements, and a violation is a TRAP():
//   - check_box_tilings accepts both tilings, shifted to any origin, and returns
//     the global box; box_distribution accepts them; each covers every element of
//     the global array exactly once;
//   - for every rank r, exchange(src, dst, r, elem): a send to s (never to r
//     itself: self-copies are no message) for exactly the pairs whose elements
//     change owner, with bytes = elem x (elements owned by r in src and by s in
//     dst); s has the identical transfer (segments, bytes, contiguity, chunk
//     size) as a receive from r, so the MPI messages match; contiguity and chunk
//     size follow the engine's rule, recomputed from the elements' local offsets;
//     predicted() and predict_exchange() equal the sums over sends; received
//     bytes and the staging bound agree;
//   - every segment maps sender offsets and receiver offsets to the same global
//     elements, and the receives plus the self-copies write every element of
//     every destination buffer exactly once;
//   - moving data as run() does, without MPI (copy_segment for the self part, raw
//     bytes or pack_transfer / unpack_transfer chunk by chunk for the rest), gives
//     every destination buffer exactly the global array's elements.
// Invalid input must throw ember::error, never crash, never be accepted (the
// brute-force reference decides): mutated tilings (grown, shrunk, moved,
// duplicated, swapped boxes, negative extents, a rank too many or too few,
// boxes of another dimension), box distributions whose boxes leave the shape,
// exchanges between distributions of other rank counts or shapes, and boxes with
// extreme coordinates (up to INT64_MIN / INT64_MAX: element counts that do not fit
// in 64 bits). No MPI function is ever called. Built and run by tests/fuzz/run.sh,
// seeded with pseudo-random bytes and tests/fuzz/boxes_seeds/ (the inputs of the
// bugs this target found). FUZZ_BOXES_VERBOSE=1 prints what an input decodes to.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <vector>

#include "runtime/boxes.hpp"
#include "runtime/exchange.hpp"

// Names the violated check (line) before trapping, so a finding explains itself.
#define TRAP() (std::fprintf(stderr, "fuzz_boxes: invariant violated at line %d\n", __LINE__), __builtin_trap())

namespace {

using namespace ember;
using tiling = std::vector<box_nd>;

struct reader {
  const std::uint8_t* p;
  std::size_t n, i = 0;
  unsigned byte() { return i < n ? p[i++] : 0u; }
  unsigned pick(unsigned k) { return k ? byte() % k : 0u; }
  std::int64_t pick64(std::int64_t k) { return k > 0 ? std::int64_t(pick(unsigned(k))) : 0; }
};

// ---- brute-force reference -------------------------------------------------

bool nonempty(const box_nd& b) {
  for (std::size_t d = 0; d < b.lo.size(); ++d)
    if (b.hi[d] <= b.lo[d]) return false;
  return true;
}

template <class Fn>
void for_each_point(const box_nd& b, Fn&& fn) {
  if (!nonempty(b)) return;
  index_vec x = b.lo;
  while (true) {
    fn(x);
    std::size_t d = x.size();
    while (true) {
      if (d == 0) return;
      --d;
      if (++x[d] < b.hi[d]) break;
      x[d] = b.lo[d];
    }
  }
}

std::int64_t linear(const index_vec& x, const index_vec& shape) {
  std::int64_t l = 0;
  for (std::size_t d = 0; d < x.size(); ++d) l = l * shape[d] + x[d];
  return l;
}

// Every box has `nd` coordinates on both sides and none ends before it starts.
bool well_formed(const tiling& t, std::size_t nd) {
  for (const auto& b : t) {
    if (b.lo.size() != nd || b.hi.size() != nd) return false;
    for (std::size_t d = 0; d < nd; ++d)
      if (b.hi[d] < b.lo[d]) return false;
  }
  return true;
}

// The bounding box of the non-empty boxes (all zeros when there are none: the
// convention check_box_tilings documents).
box_nd bounding_ref(const tiling& t, std::size_t nd) {
  box_nd g{index_vec(nd, 0), index_vec(nd, 0)};
  bool any = false;
  for (const auto& b : t)
    if (nonempty(b)) {
      for (std::size_t d = 0; d < nd; ++d) {
        g.lo[d] = any ? std::min(g.lo[d], b.lo[d]) : b.lo[d];
        g.hi[d] = any ? std::max(g.hi[d], b.hi[d]) : b.hi[d];
      }
      any = true;
    }
  return g;
}

// The non-empty boxes of a well-formed `t` cover every point of `g` exactly once
// and nothing outside it (small coordinates only: every point is visited).
bool covers_exactly(const tiling& t, const box_nd& g) {
  index_vec ext(g.lo.size());
  std::int64_t n = 1;
  for (std::size_t d = 0; d < ext.size(); ++d) n *= (ext[d] = std::max<std::int64_t>(0, g.hi[d] - g.lo[d]));
  std::vector<int> count(std::size_t(n), 0);
  bool ok = true;
  for (const auto& b : t)
    for_each_point(b, [&](const index_vec& x) {
      index_vec rel(x.size());
      for (std::size_t d = 0; d < x.size(); ++d) {
        rel[d] = x[d] - g.lo[d];
        if (rel[d] < 0 || rel[d] >= ext[d]) ok = false;
      }
      if (ok) ++count[std::size_t(linear(rel, ext))];
    });
  return ok && std::all_of(count.begin(), count.end(), [](int c) { return c == 1; });
}

// What check_box_tilings(in, out) must do: accept exactly when both are tilings
// (one box per rank, the same rank count and dimension >= 1) of the same box.
// Found by this target before check_box_tilings checked counts and dimensions: it
// accepted 2 input boxes with 3 output boxes and read past the end of a box with
// fewer coordinates than the first (a crash for 0 lower and 1 upper bounds); and
// box_distribution checked nothing (boxes outside the shape, holes, overlaps).
bool tilings_valid(const tiling& in, const tiling& out, box_nd& global) {
  if (in.empty() || in.size() != out.size()) return false;
  const std::size_t nd = in[0].lo.size();
  if (nd < 1 || !well_formed(in, nd) || !well_formed(out, nd)) return false;
  global = bounding_ref(in, nd);
  return bounding_ref(out, nd) == global && covers_exactly(in, global) && covers_exactly(out, global);
}

// What box_distribution(shape, boxes) must do: accept exactly a tiling of the
// box [0, shape) (empty boxes may sit anywhere).
bool distribution_valid(const index_vec& shape, const tiling& t) {
  if (t.empty() || shape.empty() || !well_formed(t, shape.size())) return false;
  for (auto s : shape)
    if (s < 0) return false;
  return covers_exactly(t, box_nd{index_vec(shape.size(), 0), shape});
}

bool verbose() {
  static const bool v = std::getenv("FUZZ_BOXES_VERBOSE") != nullptr;
  return v;
}

// ---- decoding ----------------------------------------------------------------

// Recursive random cuts of `b` into `parts` boxes; sometimes a 2-D pinwheel.
void cut(reader& r, const box_nd& b, int parts, tiling& out) {
  if (parts == 1) {
    out.push_back(b);
    return;
  }
  const int nd = b.ndim();
  if (parts >= 5 && nd >= 2 && r.pick(3) == 0) {
    const std::size_t a = r.pick(unsigned(nd)), c = (a + 1 + r.pick(unsigned(nd) - 1)) % std::size_t(nd);
    if (b.hi[a] - b.lo[a] >= 3 && b.hi[c] - b.lo[c] >= 3) {
      const std::int64_t x1 = b.lo[a] + 1 + r.pick64(b.hi[a] - b.lo[a] - 2);
      const std::int64_t x2 = x1 + 1 + r.pick64(b.hi[a] - 1 - x1);
      const std::int64_t y1 = b.lo[c] + 1 + r.pick64(b.hi[c] - b.lo[c] - 2);
      const std::int64_t y2 = y1 + 1 + r.pick64(b.hi[c] - 1 - y1);
      const std::int64_t xs[5][2] = {{b.lo[a], x2}, {x2, b.hi[a]}, {x1, b.hi[a]}, {b.lo[a], x1}, {x1, x2}};
      const std::int64_t ys[5][2] = {{b.lo[c], y1}, {b.lo[c], y2}, {y2, b.hi[c]}, {y1, b.hi[c]}, {y1, y2}};
      int share[5] = {1, 1, 1, 1, 1};
      for (int k = 5; k < parts; ++k) ++share[r.pick(5)];
      for (int k = 0; k < 5; ++k) {
        box_nd s = b;
        s.lo[a] = xs[k][0], s.hi[a] = xs[k][1], s.lo[c] = ys[k][0], s.hi[c] = ys[k][1];
        cut(r, s, share[k], out);
      }
      return;
    }
  }
  const int left = 1 + int(r.pick(unsigned(parts) - 1));
  const std::size_t axis = r.pick(unsigned(nd));
  const std::int64_t at = b.lo[axis] + r.pick64(b.hi[axis] - b.lo[axis] + 1);
  box_nd lb = b, rb = b;
  lb.hi[axis] = at;
  rb.lo[axis] = at;
  cut(r, lb, left, out);
  cut(r, rb, parts - left, out);
}

tiling random_tiling(reader& r, const index_vec& shape, int P) {
  tiling t;
  cut(r, box_nd{index_vec(shape.size(), 0), shape}, P, t);
  for (std::size_t k = t.size(); k > 1; --k) std::swap(t[k - 1], t[r.pick(unsigned(k))]);
  for (auto& b : t)  // an empty box may sit anywhere, even outside the array
    if (!nonempty(b) && r.pick(3) == 0) {
      const std::size_t z = r.pick(unsigned(b.ndim()));
      for (std::size_t d = 0; d < std::size_t(b.ndim()); ++d) {
        b.lo[d] = std::int64_t(r.pick(16)) - 4;
        b.hi[d] = b.lo[d] + (d == z ? 0 : std::int64_t(r.pick(4)));
      }
    }
  return t;
}

tiling shifted(tiling t, const index_vec& origin) {
  for (auto& b : t)
    for (std::size_t d = 0; d < origin.size(); ++d) b.lo[d] += origin[d], b.hi[d] += origin[d];
  return t;
}

// One or two random defects; the reference decides whether the result is still valid.
void mutate(reader& r, tiling& t, const index_vec& shape) {
  const int nd = int(shape.size());
  for (int m = 1 + int(r.pick(2)); m > 0; --m) {
    if (t.empty()) {
      t.push_back(box_nd{index_vec(shape.size(), 0), shape});
      continue;
    }
    const std::size_t k = r.pick(unsigned(t.size())), d = r.pick(unsigned(nd));
    box_nd& b = t[k];
    if (b.lo.size() != std::size_t(nd) || b.hi.size() != std::size_t(nd)) continue;
    switch (r.pick(9)) {
      case 0:  // grow: an overlap, or a box out of bounds
        if (r.pick(2)) b.lo[d] -= 1 + r.pick(2);
        else b.hi[d] += 1 + r.pick(2);
        break;
      case 1:  // shrink: a hole (or a smaller array)
        if (b.hi[d] > b.lo[d]) (r.pick(2) ? b.lo[d] : b.hi[d]) += r.pick(2) ? 1 : -1;
        break;
      case 2:  // a box that ends before it starts
        b.hi[d] = b.lo[d] - 1 - r.pick(3);
        break;
      case 3: {  // moved
        const std::int64_t s = r.pick(2) ? 1 : -1;
        b.lo[d] += s, b.hi[d] += s;
        break;
      }
      case 4:  // a rank too few
        t.erase(t.begin() + std::ptrdiff_t(k));
        break;
      case 5: {  // a rank too many, its box empty or not
        box_nd e = b;
        if (r.pick(2)) e.hi[d] = e.lo[d];
        t.push_back(e);
        break;
      }
      case 6:  // another dimension, on one side or both
        if (r.pick(2)) b.lo.push_back(0);
        else if (b.lo.size() > 0) b.lo.pop_back();
        if (r.pick(2)) b.hi = b.lo;
        break;
      case 7:  // a duplicate
        t[r.pick(unsigned(t.size()))] = b;
        break;
      default:  // two ranks swap boxes: still a valid tiling
        std::swap(b, t[r.pick(unsigned(t.size()))]);
        break;
    }
  }
}

// ---- the exchange checks -------------------------------------------------------

// Per global element (row-major linear index): its owner and offset in the owner's
// buffer, from the distribution's pieces; and the inverse, per rank.
struct ownership {
  std::vector<int> rank;
  std::vector<std::int64_t> local;
  std::vector<std::vector<std::int64_t>> global_at;  // [rank][local offset] -> linear index
};

ownership owners_ref(const distribution& d, const index_vec& shape, std::int64_t n) {
  ownership o;
  o.rank.assign(std::size_t(n), -1);
  o.local.assign(std::size_t(n), -1);
  o.global_at.resize(std::size_t(d.nranks()));
  for (int r = 0; r < d.nranks(); ++r) {
    const std::int64_t ls = d.local_size(r);
    if (ls < 0) TRAP();
    o.global_at[std::size_t(r)].assign(std::size_t(ls), -1);
    for (const auto& p : d.pieces(r))
      for_each_point(p.global, [&](const index_vec& x) {
        std::int64_t off = p.offset;
        for (std::size_t k = 0; k < x.size(); ++k) {
          if (x[k] < 0 || x[k] >= shape[k]) TRAP();  // a piece outside the array
          off += (x[k] - p.global.lo[k]) * p.strides[k];
        }
        const std::int64_t g = linear(x, shape);
        if (o.rank[std::size_t(g)] != -1) TRAP();  // an element held twice
        if (off < 0 || off >= ls || o.global_at[std::size_t(r)][std::size_t(off)] != -1) TRAP();
        o.rank[std::size_t(g)] = r;
        o.local[std::size_t(g)] = off;
        o.global_at[std::size_t(r)][std::size_t(off)] = g;
      });
    for (auto g : o.global_at[std::size_t(r)])
      if (g < 0) TRAP();  // a buffer slot that holds no element
  }
  for (int x : o.rank)
    if (x < 0) TRAP();  // an element nobody holds
  return o;
}

bool same_segment(const exchange_segment& a, const exchange_segment& b) {
  return a.extents == b.extents && a.src_offset == b.src_offset && a.src_strides == b.src_strides &&
         a.dst_offset == b.dst_offset && a.dst_strides == b.dst_strides;
}

// Calls fn(src offset, dst offset) for every element of a segment.
template <class Fn>
void for_each_element(const exchange_segment& s, Fn&& fn) {
  box_nd b{index_vec(s.extents.size(), 0), s.extents};
  if (s.src_strides.size() != s.extents.size() || s.dst_strides.size() != s.extents.size()) TRAP();
  for_each_point(b, [&](const index_vec& i) {
    std::int64_t so = s.src_offset, dof = s.dst_offset;
    for (std::size_t d = 0; d < i.size(); ++d) so += i[d] * s.src_strides[d], dof += i[d] * s.dst_strides[d];
    fn(so, dof);
  });
}

std::uint8_t pattern(std::int64_t g, std::size_t k) {
  std::uint64_t x = std::uint64_t(g) * 0x9e3779b97f4a7c15ull + k * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
  x ^= x >> 31;
  x *= 0xd6e9a8a1e2b2c3d5ull;
  return std::uint8_t(x >> 56);
}

void check_exchange(const distribution& src, const distribution& dst, const index_vec& shape, std::size_t es) {
  const int P = src.nranks();
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  const ownership so = owners_ref(src, shape, n), dso = owners_ref(dst, shape, n);
  const auto e = std::int64_t(es);

  // bytes[r][s], and each pair's offsets at both ends (for contiguity)
  std::vector<std::int64_t> bytes(std::size_t(P * P), 0), smin(bytes.size(), LLONG_MAX), smax(bytes.size(), -1),
      dmin(bytes.size(), LLONG_MAX), dmax(bytes.size(), -1);
  for (std::int64_t g = 0; g < n; ++g) {
    const int r = so.rank[std::size_t(g)], s = dso.rank[std::size_t(g)];
    const std::size_t k = std::size_t(r * P + s);
    bytes[k] += e;
    smin[k] = std::min(smin[k], so.local[std::size_t(g)]), smax[k] = std::max(smax[k], so.local[std::size_t(g)]);
    dmin[k] = std::min(dmin[k], dso.local[std::size_t(g)]), dmax[k] = std::max(dmax[k], dso.local[std::size_t(g)]);
  }
  const std::int64_t max_msg = std::min<std::int64_t>(config().max_message_bytes, INT_MAX);

  std::vector<std::unique_ptr<exchange>> ex;
  for (int r = 0; r < P; ++r) ex.push_back(std::make_unique<exchange>(src, dst, r, es));
  const auto pred = predict_exchange(src, dst, es);
  if (int(pred.size()) != P) TRAP();

  for (int r = 0; r < P; ++r) {
    const exchange& x = *ex[std::size_t(r)];
    if (x.method() != exchange_method::point_to_point) TRAP();
    traffic sum;
    std::vector<char> seen(std::size_t(P), 0);
    std::int64_t sstage = 0, rstage = 0;
    for (const auto& t : x.sends()) {
      if (t.peer < 0 || t.peer >= P || t.peer == r || seen[std::size_t(t.peer)]++) TRAP();
      const std::size_t k = std::size_t(r * P + t.peer);
      if (t.bytes != bytes[k] || t.bytes <= 0) TRAP();
      // the engine's rule: one run on both sides goes in messages of the size
      // limit, anything else through the staging buffer
      const bool sc = smax[k] - smin[k] + 1 == bytes[k] / e, dc = dmax[k] - dmin[k] + 1 == bytes[k] / e;
      if (t.src_contiguous != sc || t.dst_contiguous != dc) TRAP();
      const std::int64_t chunk =
          std::max<std::int64_t>(1, sc && dc ? max_msg : std::min(max_msg, config().staging_bytes));
      if (t.chunk_bytes != chunk || t.messages() != (t.bytes + chunk - 1) / chunk) TRAP();
      sum += {t.bytes, t.messages()};
      if (!t.src_contiguous) sstage = std::max(sstage, std::min(t.chunk_bytes, t.bytes));
      // the receiver's twin
      const auto& rv = ex[std::size_t(t.peer)]->recvs();
      const auto it = std::find_if(rv.begin(), rv.end(), [&](const exchange_transfer& u) { return u.peer == r; });
      if (it == rv.end() || it->bytes != t.bytes || it->src_contiguous != t.src_contiguous ||
          it->dst_contiguous != t.dst_contiguous || it->chunk_bytes != t.chunk_bytes ||
          it->segments.size() != t.segments.size())
        TRAP();
      for (std::size_t i = 0; i < t.segments.size(); ++i)
        if (!same_segment(t.segments[i], it->segments[i])) TRAP();
    }
    for (int s = 0; s < P; ++s)
      if (s != r && bytes[std::size_t(r * P + s)] > 0 && !seen[std::size_t(s)]) TRAP();  // a missing send
    std::fill(seen.begin(), seen.end(), 0);
    std::int64_t got = 0, want = 0;
    for (const auto& t : x.recvs()) {
      if (t.peer < 0 || t.peer >= P || t.peer == r || seen[std::size_t(t.peer)]++) TRAP();
      if (t.bytes != bytes[std::size_t(t.peer * P + r)]) TRAP();
      got += t.bytes;
      if (!t.dst_contiguous) rstage = std::max(rstage, std::min(t.chunk_bytes, t.bytes));
    }
    for (int s = 0; s < P; ++s)
      if (s != r) want += bytes[std::size_t(s * P + r)];
    if (got != want || x.received_bytes() != want) TRAP();
    if (!(x.predicted() == sum) || !(pred[std::size_t(r)] == sum)) TRAP();
    if (x.staging_bytes() < sstage + rstage) TRAP();
  }

  // Geometry: every segment pairs the same global element at both ends, and each
  // destination slot is written exactly once.
  std::vector<std::vector<int>> written(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) written[std::size_t(r)].assign(dso.global_at[std::size_t(r)].size(), 0);
  auto walk = [&](const exchange_segment& seg, int from, int to) {
    const auto& sg = so.global_at[std::size_t(from)];
    const auto& dg = dso.global_at[std::size_t(to)];
    for_each_element(seg, [&](std::int64_t a, std::int64_t b) {
      if (a < 0 || a >= std::int64_t(sg.size()) || b < 0 || b >= std::int64_t(dg.size())) TRAP();
      if (sg[std::size_t(a)] != dg[std::size_t(b)]) TRAP();
      ++written[std::size_t(to)][std::size_t(b)];
    });
  };
  for (int r = 0; r < P; ++r) {
    for (const auto& t : ex[std::size_t(r)]->recvs())
      for (const auto& seg : t.segments) walk(seg, t.peer, r);
    for (const auto& seg : ex[std::size_t(r)]->self_segments()) walk(seg, r, r);
  }
  for (const auto& w : written)
    for (int c : w)
      if (c != 1) TRAP();

  // The data, moved as run() moves it but without MPI.
  std::vector<std::vector<char>> sbuf(static_cast<std::size_t>(P)), dbuf(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) {
    const auto& sg = so.global_at[std::size_t(r)];
    sbuf[std::size_t(r)].resize(sg.size() * es);
    for (std::size_t i = 0; i < sg.size(); ++i)
      for (std::size_t b = 0; b < es; ++b) sbuf[std::size_t(r)][i * es + b] = char(pattern(sg[i], b));
    dbuf[std::size_t(r)].assign(dso.global_at[std::size_t(r)].size() * es, char(0xA5));
  }
  for (int r = 0; r < P; ++r) {
    const exchange& x = *ex[std::size_t(r)];
    for (const auto& seg : x.self_segments())
      copy_segment(seg, sbuf[std::size_t(r)].data(), dbuf[std::size_t(r)].data(), es);
    for (const auto& t : x.sends()) {
      std::vector<char> stream(std::size_t(t.bytes)), packed(std::size_t(t.bytes));
      pack_transfer(t, sbuf[std::size_t(r)].data(), packed.data(), es);
      if (t.src_contiguous) {  // sent in place: the cursor must produce the same bytes
        std::memcpy(stream.data(), sbuf[std::size_t(r)].data() + t.segments[0].src_offset * e, std::size_t(t.bytes));
        if (stream != packed) TRAP();
      } else {
        stream = packed;
      }
      const auto& rv = ex[std::size_t(t.peer)]->recvs();
      const auto& u = *std::find_if(rv.begin(), rv.end(), [&](const exchange_transfer& v) { return v.peer == r; });
      char* d = dbuf[std::size_t(t.peer)].data();
      if (u.dst_contiguous) std::memcpy(d + u.segments[0].dst_offset * e, stream.data(), std::size_t(u.bytes));
      else unpack_transfer(u, stream.data(), d, es);
    }
  }
  for (int r = 0; r < P; ++r) {
    const auto& dg = dso.global_at[std::size_t(r)];
    for (std::size_t i = 0; i < dg.size(); ++i)
      for (std::size_t b = 0; b < es; ++b)
        if (dbuf[std::size_t(r)][i * es + b] != char(pattern(dg[i], b))) TRAP();
  }
}

// A split layout over P ranks with random extents, in place of a box tiling.
std::unique_ptr<distribution> random_layout(reader& r, const index_vec& shape, int P) {
  const int k = int(r.pick(unsigned(shape.size())));
  index_vec ext(std::size_t(P), 0);
  for (std::int64_t i = 0; i < shape[std::size_t(k)]; ++i) ++ext[r.pick(unsigned(P))];
  return std::make_unique<layout>(shape, k, ext);
}

// Found by this target before boxes' volumes were computed without overflow:
// [INT64_MIN, INT64_MAX) passed check_box_tilings as a box of 0 elements (signed
// overflow, undefined behaviour); an empty box with such extents on another axis
// overflowed box_nd::volume().
void extreme(reader& r) {
  static const std::int64_t V[] = {INT64_MIN,   INT64_MIN + 1,        -(std::int64_t(1) << 62),
                                   -(1ll << 31), -1, 0, 1, 2, 3,        1ll << 31,
                                   1ll << 32,    std::int64_t(1) << 62, INT64_MAX - 1, INT64_MAX};
  constexpr unsigned NV = sizeof(V) / sizeof(V[0]);
  const std::size_t nd = 1 + r.pick(3);
  const int P = 1 + int(r.pick(3));
  auto some = [&] {
    tiling t(std::size_t(P), box_nd{index_vec(nd), index_vec(nd)});
    for (auto& b : t)
      for (std::size_t d = 0; d < nd; ++d) {
        b.lo[d] = V[r.pick(NV)];
        b.hi[d] = V[r.pick(NV)];
        if (r.pick(4) && b.hi[d] < b.lo[d]) std::swap(b.lo[d], b.hi[d]);
      }
    return t;
  };
  const tiling in = some();
  const tiling out = r.pick(2) ? in : some();
  auto fits = [&](const box_nd& g) {  // its element count is an int64 (0 when an extent is)
    std::int64_t v = 1, x;
    bool zero = false;
    for (std::size_t d = 0; d < nd; ++d) {
      if (__builtin_sub_overflow(g.hi[d], g.lo[d], &x) || x < 0) return false;
      zero = zero || x == 0;
    }
    for (std::size_t d = 0; d < nd && !zero; ++d)
      if (__builtin_mul_overflow(v, g.hi[d] - g.lo[d], &v)) return false;
    return true;
  };
  try {
    const box_nd g = check_box_tilings(in, out);
    if (!fits(g)) TRAP();  // accepted a global box whose element count overflows
    for (const auto* t : {&in, &out})
      for (const auto& b : *t)
        if (nonempty(b)) {  // (an empty box may have any other extents)
          if (!fits(b)) TRAP();
          for (std::size_t d = 0; d < nd; ++d)
            if (b.lo[d] < g.lo[d] || b.hi[d] > g.hi[d]) TRAP();
        }
  } catch (const ember::error&) {
  } catch (...) {
    TRAP();
  }
  index_vec shape(nd);
  for (auto& s : shape) s = V[r.pick(NV)];
  try {
    box_distribution bd(shape, in);
    if (!fits(box_nd{index_vec(nd, 0), shape})) TRAP();
    for (int q = 0; q < bd.nranks(); ++q) (void)bd.local_size(q);
  } catch (const ember::error&) {
  } catch (...) {
    TRAP();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  reader r{data, size};
  const unsigned mode = r.byte() % 8;
  const unsigned cfg = r.byte();
  config() = runtime_config{};
  if (cfg & 1) config().max_message_bytes = 1 + r.pick(40);
  if (cfg & 2) config().staging_bytes = 1 + r.pick(40);
  static const std::size_t elems[] = {1, 2, 3, 4, 8, 16};
  const std::size_t es = elems[r.pick(6)];
  if (mode == 7) {
    extreme(r);
    return 0;
  }
  const int nd = 1 + int(r.pick(3));
  index_vec shape(static_cast<std::size_t>(nd));
  for (auto& s : shape) s = std::int64_t(r.pick(nd == 1 ? 17 : nd == 2 ? 9 : 7));
  const int P = 1 + int(r.pick(9));
  tiling in = random_tiling(r, shape, P), out = random_tiling(r, shape, P);
  index_vec origin(static_cast<std::size_t>(nd));
  for (auto& o : origin) o = std::int64_t(r.pick(9)) - 4;
  const bool mutated = mode >= 5;
  if (mutated) {
    const unsigned which = r.pick(3);
    if (which != 1) mutate(r, in, shape);
    if (which != 0) mutate(r, out, shape);
  }

  if (verbose()) {  // FUZZ_BOXES_VERBOSE=1: what a finding's input decodes to
    std::fprintf(stderr, "mode %u, elem %zu, limits %lld/%lld, shape %s, origin %s\n", mode, es,
                 (long long)config().max_message_bytes, (long long)config().staging_bytes,
                 detail::shape_str(shape).c_str(), detail::shape_str(origin).c_str());
    for (const auto* t : {&in, &out}) {
      std::fprintf(stderr, "%s:", t == &in ? "in " : "out");
      for (const auto& b : *t)
        std::fprintf(stderr, " %s..%s", detail::shape_str(b.lo).c_str(), detail::shape_str(b.hi).c_str());
      std::fprintf(stderr, "\n");
    }
  }

  // 1. check_box_tilings, at any origin
  box_nd want;
  const bool valid = tilings_valid(in, out, want);
  if (!mutated && !valid) TRAP();  // the decoder makes tilings
  std::int64_t volume = 1;
  for (auto s : shape) volume *= s;
  if (!mutated && !(volume > 0 ? want == box_nd{index_vec(shape.size(), 0), shape} : want.volume() == 0)) TRAP();
  try {
    // shifted only when well formed (malformed boxes must be rejected wherever they are)
    const bool shiftable = well_formed(in, shape.size()) && well_formed(out, shape.size());
    const box_nd got =
        shiftable ? check_box_tilings(shifted(in, origin), shifted(out, origin)) : check_box_tilings(in, out);
    if (!valid) TRAP();  // an invalid tiling accepted
    box_nd w = want;
    if (shiftable && nonempty(want))  // with no element the bounding box is all zeros wherever the boxes are
      for (std::size_t d = 0; d < w.lo.size(); ++d) w.lo[d] += origin[d], w.hi[d] += origin[d];
    if (shiftable && !nonempty(want)) w = bounding_ref(shifted(in, origin), shape.size());
    if (!(got == w)) TRAP();
  } catch (const ember::error&) {
    if (valid) TRAP();  // a valid tiling rejected
  } catch (...) {
    TRAP();
  }

  // 2. box_distribution over [0, shape)
  std::unique_ptr<distribution> src, dst;
  for (int side = 0; side < 2; ++side) {
    const tiling& t = side ? out : in;
    const bool ok = distribution_valid(shape, t);
    if (!mutated && !ok) TRAP();
    try {
      auto d = std::make_unique<box_distribution>(shape, t);
      if (!ok) TRAP();  // boxes that do not tile the shape accepted
      if (d->nranks() != int(t.size())) TRAP();
      (side ? dst : src) = std::move(d);
    } catch (const ember::error&) {
      if (ok) TRAP();
    } catch (...) {
      TRAP();
    }
  }
  if (!src || !dst) return 0;
  if (!mutated && r.pick(4) == 0) (r.pick(2) ? src : dst) = random_layout(r, shape, P);

  // 3. the exchange between them; other rank counts (or shapes) must throw
  if (src->nranks() != dst->nranks()) {
    try {
      exchange x(*src, *dst, 0, es);
      TRAP();
    } catch (const ember::error&) {
    } catch (...) {
      TRAP();
    }
    return 0;
  }
  if (r.pick(8) == 0) {
    index_vec other = shape;  // another shape over as many ranks: rank 0 holds it all
    other[r.pick(unsigned(nd))] += 1;
    tiling t(std::size_t(P), box_nd{index_vec(other.size(), 0), index_vec(other.size(), 0)});
    t[0].hi = other;
    box_distribution d(other, t);
    for (int side = 0; side < 2; ++side)
      try {
        exchange x(side ? d : *src, side ? *dst : d, 0, es);
        TRAP();
      } catch (const ember::error&) {
      } catch (...) {
        TRAP();
      }
  }
  try {
    check_exchange(*src, *dst, shape, es);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_boxes: the exchange threw on valid distributions: %s\n", e.what());
    TRAP();
  }
  return 0;
}
