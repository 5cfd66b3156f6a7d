// NumPy's .npy format (versions 1.0, 2.0, 3.0; little- and big-endian; C or
// Fortran order) read and written with MPI-IO: each rank touches only its slice.
#pragma once

#include <string>

#include "common.hpp"

namespace ember::io {

// Loads `path` as an N-dimensional array of T with Heat's balanced layout along
// o.split. Split 0 (and none) is one contiguous byte range per rank, split k > 0
// a strided MPI-IO file view; both are single collective reads. The file's dtype
// and rank must be T and N exactly (no silent conversion); a big-endian file is
// byte-swapped, a Fortran-order one transposed locally. Throws ember::error
// (type_error, shape_error) on every rank, naming the file and the mismatch.
template <dtype T, int N>
dndarray<T, N> load_npy(const std::string& path, const load_options& o = {}) {
  const communicator& c = ember::detail::comm_of(o.comm);
  dndarray<T, N> out;
  io::load_npy(c, path, dtype_code<T>(), N, o.split, detail::what<T, N>("load_npy"), detail::allocate_into(out, c));
  return out;
}

// What a .npy file holds (dtype, shape, order), read on rank 0 and broadcast:
// for choosing T and N before load_npy.
inline npy_header inspect_npy(const std::string& path, const std::optional<communicator>& comm = std::nullopt) {
  return read_npy_header(ember::detail::comm_of(comm), path);
}

// Saves `a` (any split) as a C-order little-endian .npy file, atomically: rank 0
// writes the header, every rank its slice at its offset, into a temporary file
// that replaces `path` only after every rank succeeded. Collective.
template <dtype T, int N>
void save_npy(const dndarray<T, N>& a, const std::string& path, const save_options& o = {}) {
  io::save_npy(a.comm(), path, dtype_code<T>(), a.layout(), a.ldata(), o.sync);
}

}  // namespace ember::io
