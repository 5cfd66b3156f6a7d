// NumPy writes, ember loads split, computes, saves; NumPy checks
// (tests/run_examples_io.sh drives all four steps at 1-4 ranks).
//
//   mpirun -n 4 io_roundtrip in.npy out_dir
//
// Loads the float64 matrix `in.npy` split along rows (each rank reads only its
// rows with MPI-IO), computes
//   scaled.npy  = 2 x - 1                  (elementwise, fused, same split)
//   colsum.npy  = sum over rows            (over the split axis: an allreduce)
//   x.csv       = the matrix as CSV        (rank-ordered, shortest exact floats)
// and saves them, atomically, in parallel. It then reloads x.csv split along
// columns and exits 1 if it differs from the input in any bit.
#include <cstdio>
#include <cstring>
#include <string>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  if (argc < 3) {
    if (ember::world().rank() == 0) std::fprintf(stderr, "usage: io_roundtrip in.npy out_dir\n");
    return 2;
  }
  const std::string in = argv[1], out = argv[2];
  try {
    auto h = ember::io::inspect_npy(in);
    if (ember::world().rank() == 0)
      std::printf("%s: %s, shape %s, %s order\n", in.c_str(), h.descr().c_str(), ember::detail::shape_str(h.shape).c_str(),
                  h.fortran_order ? "Fortran" : "C");
    auto x = ember::io::load_npy<double, 2>(in, {.split = 0});
    ember::dndarray<double, 2> scaled = x * 2.0 - 1.0;
    ember::dndarray<double, 1> colsum = ember::sum(x, 0);
    ember::io::save_npy(scaled, out + "/scaled.npy");
    ember::io::save_npy(colsum, out + "/colsum.npy");
    ember::io::save_csv(x, out + "/x.csv");
    auto back = ember::io::load_csv<double>(out + "/x.csv", {.split = 1});
    auto a = ember::resplit(x, ember::none), b = ember::resplit(back, ember::none);
    const bool same = a.shape() == b.shape() &&
                      std::memcmp(a.ldata(), b.ldata(), std::size_t(a.numel()) * sizeof(double)) == 0;
    if (ember::world().rank() == 0)
      std::printf("saved scaled.npy, colsum.npy, x.csv on %d ranks; CSV round trip %s\n", ember::world().size(),
                  same ? "bit-identical" : "DIFFERS");
    return same ? 0 : 1;
  } catch (const ember::error& e) {
    // Every rank throws the same error; one prints it.
    if (ember::world().rank() == 0) std::fprintf(stderr, "io_roundtrip: %s\n", e.what());
    return 1;
  }
}
