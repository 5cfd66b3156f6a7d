// Compile-time probe: one translation unit with a 20-node expression that is
// evaluated, reduced, explained and planned (bench/run.sh times compiling it).
#include <ember.hpp>

int main(int argc, char** argv) {
  ember::environment env(argc, argv);
  auto a = ember::random::randn<double>({64, 32}, {.split = 0});
  auto b = ember::random::randn<double>({64, 32}, {.split = 1});
  auto c = ember::random::randn<double>({32}, {.split = 0});
  auto e = ember::sin(a) * 2.0 + b / (1.0 + ember::abs(a)) - ember::sqrt(ember::abs(b)) * c + ember::exp(-a) -
           ember::maximum(a, b);
  ember::dndarray<double, 2> r = e;
  double s = ember::sum(e * e);
  auto p = ember::plan_for(e, 1024);
  return (r.numel() > 0 && s >= 0 && p.nranks == 1024) ? 0 : 1;
}
