// HDF5 datasets through parallel HDF5 (collective I/O, one hyperslab per rank).
// HDF5's headers stay inside the library: these wrappers build whether or not
// ember was built with it; without it (meson -Dhdf5=disabled, or no
// libhdf5-openmpi-dev) they throw ember::error and hdf5_available() is false.
#pragma once

#include <string>

#include "common.hpp"

namespace ember::io {

// Loads dataset `dataset` ("/group/name") of `path` with Heat's balanced layout
// along o.split. The dataset's type must be T (h5py's bool enum for bool) and its
// rank N; HDF5 converts byte order. Like Heat's ht.load_hdf5.
template <dtype T, int N>
dndarray<T, N> load_hdf5(const std::string& path, const std::string& dataset, const load_options& o = {}) {
  const communicator& c = ember::detail::comm_of(o.comm);
  dndarray<T, N> out;
  io::load_hdf5(c, path, dataset, dtype_code<T>(), N, o.split, detail::what<T, N>("load_hdf5"),
                detail::allocate_into(out, c));
  return out;
}

// Writes `a` as dataset `dataset` of a new file `path` (Heat's mode 'w': the file
// is replaced, atomically, as save_npy does). Intermediate groups are created.
template <dtype T, int N>
void save_hdf5(const dndarray<T, N>& a, const std::string& path, const std::string& dataset,
               const save_options& o = {}) {
  io::save_hdf5(a.comm(), path, dataset, dtype_code<T>(), a.layout(), a.ldata(), o.sync);
}

}  // namespace ember::io
