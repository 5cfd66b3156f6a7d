// nvmath-python's distributed reshape example (shared/seeds/nvmath-distributed-
// utilities.txt), in C++: a 4x4 matrix distributed column-wise is redistributed
// row-wise with ember::reshape_boxes. At 2 ranks it prints exactly the seed's
// output:
//
//   [0] B:
//   [[0. 0. 1. 1.]
//    [0. 0. 1. 1.]]
//   [1] B:
//   [[0. 0. 1. 1.]
//    [0. 0. 1. 1.]]
//
// At other rank counts the columns and rows are split as evenly as possible
// (Heat's balanced split: 4 over 3 ranks is 2, 1, 1), rank r's columns hold the
// value r (rank 0 zeros, rank 1 ones, as in the seed). The example checks its
// result and exits 1 when it is wrong.
//
//   mpirun -n 2 build/examples/box_reshape
#include <cstdio>
#include <string>
#include <vector>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const int rank = ember::par::rank(), P = ember::par::size();

  // The global dimensions of the matrix are 4x4; rank r owns columns
  // [c0, c0 + cols[r]) of every row on input and rows [r0, r0 + rows[r]) on output.
  const auto cols = ember::layout::balanced_extents(4, P);
  const auto rows = ember::layout::balanced_extents(4, P);
  std::int64_t c0 = 0, r0 = 0;
  for (int r = 0; r < rank; ++r) {
    c0 += cols[std::size_t(r)];
    r0 += rows[std::size_t(r)];
  }
  const ember::box<2> input_box{{0, c0}, {4, c0 + cols[std::size_t(rank)]}};
  const ember::box<2> output_box{{r0, 0}, {r0 + rows[std::size_t(rank)], 4}};

  // Initialize the local block of the matrix on each process (row-major, 4 x cols).
  std::vector<double> A(std::size_t(input_box.volume()), double(rank));

  // Distributed reshape returns a new operand with its own buffer.
  const std::vector<double> B = ember::reshape_boxes(A, input_box, output_box);

  // print(f"[{rank}] B:\n{B}"), NumPy's formatting, in rank order on the root
  // (str(), not repr(): cells separated by spaces, rows by a newline and a space)
  const auto cells = ember::format::format_floats(B.data(), std::int64_t(B.size()), false);
  std::string text = "[" + std::to_string(rank) + "] B:\n[";
  for (std::int64_t i = 0; i < rows[std::size_t(rank)]; ++i) {
    text += i ? "\n [" : "[";
    for (std::size_t j = 0; j < 4; ++j) text += (j ? " " : "") + cells[std::size_t(i) * 4 + j];
    text += "]";
  }
  text += "]\n";
  const auto texts = ember::par::gather(text);

  // Check: element (i, j) of the result is the rank that owned column j.
  bool ok = B.size() == std::size_t(rows[std::size_t(rank)] * 4);
  for (std::size_t k = 0; ok && k < B.size(); ++k) {
    std::int64_t j = std::int64_t(k % 4), owner = 0, end = cols[0];
    while (j >= end) end += cols[std::size_t(++owner)];
    ok = B[k] == double(owner);
  }
  ok = ember::world().allreduce(int(ok), ember::reduce_op::land) != 0;

  if (rank == 0) {
    std::string all;
    for (const auto& t : texts) all += t;
    std::fputs(all.c_str(), stdout);
    if (P == 2) {
      const std::string seed = "[0] B:\n[[0. 0. 1. 1.]\n [0. 0. 1. 1.]]\n[1] B:\n[[0. 0. 1. 1.]\n [0. 0. 1. 1.]]\n";
      if (all != seed) {
        std::fprintf(stderr, "box_reshape: the output differs from the seed's\n");
        ok = false;
      }
    }
    if (!ok) std::fprintf(stderr, "box_reshape: WRONG result\n");
  }
  ok = ember::par::bcast(ok);
  return ok ? 0 : 1;
}
