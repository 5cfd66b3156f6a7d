// Whether this translation unit is built with AddressSanitizer: GCC defines
// __SANITIZE_ADDRESS__, clang answers __has_feature(address_sanitizer) instead.
// The pool (memory.cpp) is off under ASan so that a use after free is caught,
// and the tests relax their timing guards and check for leaks.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define EMBER_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMBER_ADDRESS_SANITIZER 1
#endif
#endif
