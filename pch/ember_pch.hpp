// The precompiled header of ember's own tests, examples and benchmarks
// (pch/meson.build): every one of them includes <ember.hpp>, whose parse
// (Eigen, Boost.Hana, range-v3, the standard library) is most of a small
// program's compile time. Not installed; a user's build can precompile
// <ember.hpp> the same way (meson: cpp_pch).
#include <ember.hpp>
