// Minimal user program: include ember, make a split array, replicate it, check it.
#include <cstdint>
#include <iostream>

#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  const auto& w = ember::world();

  auto a = ember::arange<std::int64_t>(0, 10, 1, {.split = 0});
  a.resplit_(ember::none);

  bool ok = a.numel() == 10 && a.lnumel() == 10 && !a.split().has_value();
  if (ok) {
    const std::int64_t* d = a.ldata();
    for (std::int64_t i = 0; i < 10; ++i)
      if (d[i] != i) ok = false;
  }
  if (!ok) std::cerr << "rank " << w.rank() << ": unexpected local data after resplit_(none)\n";

  // Every rank must agree before rank 0 reports success.
  const int all_ok = w.allreduce(int(ok), ember::reduce_op::min);
  if (all_ok && w.rank() == 0) std::cout << "consumer ok (" << w.size() << " ranks)" << std::endl;
  return all_ok ? 0 : 1;
}
