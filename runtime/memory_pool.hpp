// The pool behind detail::allocate (runtime/memory.hpp): freed blocks of 64 KiB
// and more are kept, as CuPy's and PyTorch's caching allocators keep them, and
// the next request of the same size gets one back. A loop that makes a
// same-sized array per iteration (`Y = ember::resplit(X, 1)`, a fused expression
// into a new array) then touches fresh pages once, not per iteration: with the
// pool, allocations().count counts blocks obtained from the system and
// pool_stats().reused the blocks handed out again.
//
// The pool holds at most memory_pool_limit() bytes per rank (default 1 GiB; 0
// turns it off; nothing to agree on between ranks) and gives everything back
// when an allocation fails, before failing. Under AddressSanitizer it is off by
// default, so that a use after free of a large block is still caught.
#pragma once

#include <cstdint>

namespace ember {

struct pool_stats_t {
  std::int64_t reused = 0;        // blocks handed out again from the pool on this rank
  std::int64_t cached_bytes = 0;  // bytes the pool holds now
};
const pool_stats_t& pool_stats();
std::int64_t& memory_pool_limit();
void release_memory_pool();  // gives every pooled block back to the system

}  // namespace ember
