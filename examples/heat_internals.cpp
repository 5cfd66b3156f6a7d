// The seed tutorial "A look behind the curtain" (Heat's DNDarray internals), step
// by step, in ember. Run on 4 ranks to see the tutorial's numbers:
//
//   mpirun -n 4 --oversubscribe build/examples/heat_internals
#include <iostream>
#include <sstream>

#include <ember.hpp>

namespace {
const ember::communicator& w() { return ember::world(); }

// Prints one line per rank, in rank order, like ipyparallel's [stdout:r].
void per_rank(const std::string& text) {
  for (int r = 0; r < w().size(); ++r) {
    if (r == w().rank()) std::cout << "[stdout:" << r << "] " << text << '\n' << std::flush;
    w().barrier();
  }
}
void say(const std::string& text) {
  if (w().rank() == 0) std::cout << text << '\n' << std::flush;
  w().barrier();
}
template <class Map>
std::string map_text(const Map& m) {
  std::ostringstream os;
  os << "lshape_map:\n";
  for (const auto& row : m) os << "  " << ember::detail::shape_str(row) << '\n';
  return os.str();
}
}  // namespace

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const int P = w().size();

  say("# a = ht.random.randn(7, 4, 3, split=0)");
  auto a = ember::random::randn<float>({7, 4, 3}, {.split = 0});
  per_rank("a is distributed over " + std::to_string(P) + " processes");
  per_rank("a is a distributed " + std::to_string(a.ndim()) + "-dimensional array with global shape " +
           ember::detail::shape_str(a.shape()));
  per_rank("Rank " + std::to_string(w().rank()) + " holds a slice of DNDarray 'a' with local shape " +
           ember::detail::shape_str(a.lshape()));
  say("\n# Distribution map");
  say(map_text(a.lshape_map()));

  say("# redistribute_: target_map[:, a.split] = [1, 2, 2, 2]");
  auto target = a.lshape_map();
  if (P == 4) {
    const std::int64_t e[4] = {1, 2, 2, 2};
    for (int r = 0; r < 4; ++r) target[r][0] = e[r];
  } else if (P > 1) {  // same idea: rank 0 keeps one row, the rest share the others
    auto rest = ember::layout::balanced_extents(6, P - 1);
    target[0][0] = 1;
    for (int r = 1; r < P; ++r) target[r][0] = rest[r - 1];
  }
  a.redistribute_(target);
  say(map_text(a.lshape_map()));
  say("# local arrays after redistribution");
  {
    std::ostringstream os;
    os << "larray of shape " << ember::detail::shape_str(a.lshape()) << ":\n" << a.larray();
    per_rank(os.str());
  }

  say("\n# resplit_(axis=1)");
  a.resplit_(1);
  say(map_text(a.lshape_map()));

  say("# resplit_(axis=None): each process now holds a copy of the entire array");
  a.resplit_(ember::none);
  ember::print(a);

  say("\n# a = ht.array(a, split=0): split again, no communication");
  Eigen::Tensor<float, 3, Eigen::RowMajor> whole = a.larray();
  a = ember::array(whole, {.split = 0});
  say(map_text(a.lshape_map()));

  say("# Making disjoint data into a global DNDarray: ht.array(local_array, is_split=0)");
  Eigen::Tensor<double, 2, Eigen::RowMajor> local(3, 4);
  local.setRandom();
  auto a0 = ember::array(local, {.is_split = 0});
  per_rank("a_0.shape = " + ember::detail::shape_str(a0.shape()));

  say("\n# Exercise: A 10x4 split=0; B = resplit to 1; C = redistribute to [1, 3, 3, 3]");
  auto A = ember::random::randn<double>({10, 4}, {.split = 0});
  auto B = A.copy();
  B.resplit_(1);
  auto tm = A.lshape_map();
  if (P == 4) {
    const std::int64_t e[4] = {1, 3, 3, 3};
    for (int r = 0; r < 4; ++r) tm[r][0] = e[r];
  }
  auto C = A.copy();
  C.redistribute_(tm);
  auto sp = [](const auto& x) { return ember::detail::axis_str(x.split()); };
  per_rank("--- Rank " + std::to_string(w().rank()) + " ---\nA (Original): Split=" + sp(A) +
           ", lshape=" + ember::detail::shape_str(A.lshape()) + "\nB (Resplit A to axis=1): Split=" + sp(B) +
           ", lshape=" + ember::detail::shape_str(B.lshape()) + "\nC (Redistribute A): Split=" + sp(C) +
           ", lshape=" + ember::detail::shape_str(C.lshape()));
  return 0;
}
