// Eigen's Tensor module, as every ember header includes it. GCC 12 warns
// "ignoring attributes on template argument __m128d" (-Wignored-attributes)
// hundreds of times inside Eigen's TensorExecutor wherever a program's
// expressions instantiate it (one example printed 400); the state of the pragma
// at Eigen's own lines is what counts, so it is silenced here for Eigen only.
// (A precompiled header loses this: pch/meson.build repeats it as a flag.)
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#endif
#include <Eigen/Core>
#include <unsupported/Eigen/CXX11/Tensor>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
