// Distributed linear algebra against serial LAPACK on the gathered matrices:
// the ScaLAPACK bridge (block-cyclic layouts through the exchange engine), QR,
// SVD, truncated SVDs, solvers; errors on every rank.
#include <random>

#include "common.hpp"

namespace {

template <class T>
ember::dndarray<T, 2> random_matrix(std::int64_t m, std::int64_t n, ember::split_axis split, std::uint64_t seed) {
  std::vector<T> g(std::size_t(m * n));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  for (auto& x : g) x = T(nd(rng));
  return ember::array(std::span<const T>(g), std::array<std::int64_t, 2>{m, n}, {.split = split});
}

}  // namespace

TEST_CASE("block-cyclic round trip through the exchange engine", "[linalg][bridge]") {
  const auto& c = ember::world();
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{7, 5}, {130, 70}, {1, 9}, {0, 3}})
    for (ember::split_axis s : {ember::split_axis{0}, ember::split_axis{1}, ember::split_axis{}})
      for (std::int64_t mb : {1, 2, 64}) {
        auto a = random_matrix<double>(m, n, s, 42 + std::uint64_t(m));
        const auto [pr, pc] = ember::scalapack::grid_shape(c.size());
        ember::scalapack::block_cyclic bl(m, n, pr, pc, mb, mb + 1);
        const auto before = c.sent();
        auto bc = ember::linalg::to_block_cyclic(a, bl);
        const auto moved = c.sent() - before;
        const auto predicted = ember::exchange(a.distribution(), bl, c.rank(), sizeof(double)).predicted();
        REQUIRE(test::all_ranks(moved == predicted));
        // every local element is where ScaLAPACK's indexing says it is
        const auto g = test::gathered(a);
        bool ok = true;
        const int myr = bl.my_row(c.rank()), myc = bl.my_col(c.rank());
        for (std::int64_t lj = 0; lj < bc.local_cols(); ++lj)
          for (std::int64_t li = 0; li < bc.local_rows(); ++li) {
            const std::int64_t gi = (li / mb * pr + myr) * mb + li % mb;
            const std::int64_t gj = (lj / (mb + 1) * pc + myc) * (mb + 1) + lj % (mb + 1);
            ok = ok && bc.local()[li + lj * bc.lld()] == g[std::size_t(gi * n + gj)];
          }
        REQUIRE(test::all_ranks(ok));
        for (ember::split_axis t : {ember::split_axis{0}, ember::split_axis{1}, ember::split_axis{}}) {
          auto back = ember::linalg::from_block_cyclic(bc, t);
          REQUIRE(back.split() == t);
          REQUIRE(test::all_ranks(test::bit_equal(test::gathered(back), g)));
        }
      }
  const int before = ember::scalapack::grids_created();
  const auto [pr, pc] = ember::scalapack::grid_shape(c.size());
  (void)ember::scalapack::grid::get(c, pr, pc);
  (void)ember::scalapack::grid::get(c, pr, pc);
  REQUIRE(ember::scalapack::grids_created() == before);  // cached per communicator and shape
}
