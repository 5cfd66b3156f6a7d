// Prints ember's result dtypes for every pair of its dtypes, as the lines
// tests/promotion_numpy.sh compares with NumPy 2's rules (np.result_type, and
// NEP 50's weak Python scalars): "<op> <a> <b> <result>".
#include <cstdio>
#include <string_view>

#include <ember.hpp>

namespace {

template <class... T>
struct types {};
using all = types<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t,
                  std::uint64_t, float, double, ember::complex64, ember::complex128>;

template <class T>
const char* name() {
  return ember::dtype_name<T>().data();
}
template <class R>
void line(const char* op, const char* a, const char* b) {
  std::printf("%s %s %s %s\n", op, a, b, name<R>());
}

template <class A, class B>
void pair() {
  namespace op = ember::op;
  line<op::add::result<A, B>>("add", name<A>(), name<B>());
  line<op::div::result<A, B>>("true_divide", name<A>(), name<B>());
  constexpr bool real = !ember::is_complex_v<A> && !ember::is_complex_v<B>;  // (NumPy defines these for real numbers)
  if constexpr (real) line<op::remainder::result<A, B>>("remainder", name<A>(), name<B>());
  line<op::power::result<A, B>>("power", name<A>(), name<B>());
  if constexpr (real) line<typename op::arctan2::template result<A, B>>("arctan2", name<A>(), name<B>());
  if constexpr (std::is_integral_v<op::promote_t<A, B>>) {  // (int64 with uint64 is float64: no bit operations)
    line<op::bitwise_and::result<A, B>>("bitwise_and", name<A>(), name<B>());
    line<op::left_shift::result<A, B>>("left_shift", name<A>(), name<B>());
  }
}
template <class A, class... B>
void row(types<B...>) {
  (pair<A, B>(), ...);
  // an array of A with a Python scalar (weak: NEP 50)
  namespace op = ember::op;
  line<op::promote_t<op::weak_scalar_t<bool, A>, A>>("add", name<A>(), "pybool");
  line<op::promote_t<op::weak_scalar_t<std::int64_t, A>, A>>("add", name<A>(), "pyint");
  line<op::promote_t<op::weak_scalar_t<double, A>, A>>("add", name<A>(), "pyfloat");
  line<op::promote_t<op::weak_scalar_t<ember::complex128, A>, A>>("add", name<A>(), "pycomplex");
  line<op::sqrt::result<A>>("sqrt", name<A>(), "-");
  line<op::abs::result<A>>("absolute", name<A>(), "-");
  if constexpr (!ember::is_complex_v<A>) line<op::floor::result<A>>("floor", name<A>(), "-");
  line<op::sum_t<A>>("sum", name<A>(), "-");
  line<op::mean_t<op::sum_t<A>>>("mean", name<A>(), "-");
  line<op::square::result<A>>("square", name<A>(), "-");
}
template <class... A>
void table(types<A...> t) {
  (row<A>(t), ...);
}

}  // namespace

int main() {
  table(all{});
  return 0;
}
