// Options and helpers shared by ember::io's formats.
#pragma once

#include <optional>
#include <string>

#include "../dsl/dndarray.hpp"
#include "../dsl/factories.hpp"
#include "../runtime/file.hpp"

namespace ember::io {

// Like Heat's ht.load(..., split=...): the result has Heat's balanced layout
// along `split` (ember::none: every rank holds the whole array).
struct load_options {
  split_axis split = none;
  std::optional<communicator> comm = std::nullopt;  // default: ember::world()
};

struct save_options {
  // MPI_File_sync before the rename, so a crash right after the save cannot
  // leave a renamed but empty file. Off trades that guarantee for speed.
  bool sync = true;
};

namespace detail {
template <dtype T, int N>
std::string what(const char* fn) {
  return std::string("ember::io::") + fn + "<" + std::string(dtype_name<T>()) + ", " + std::to_string(N) + ">";
}
// The allocation callback of the runtime loaders: creates `out` with the layout
// the loader computed (identical on every rank) and hands back its buffer.
template <dtype T, int N>
alloc_fn allocate_into(dndarray<T, N>& out, const communicator& c) {
  return [&out, &c](const layout& l) -> void* {
    out = dndarray<T, N>(l, c);
    return out.ldata();
  };
}
}  // namespace detail

}  // namespace ember::io
