// Parallel HDF5 (collective I/O over MPI-IO, hyperslab selections). Compiled
// with EMBER_HAVE_HDF5 when meson found parallel HDF5 (option -Dhdf5); without it
// the entry points throw, so the library and its users build either way.
#include "checked.hpp"
#include "file.hpp"

#ifdef EMBER_HAVE_HDF5
#include <hdf5.h>

#include <cstdlib>
#include <filesystem>
#include <fcntl.h>
#include <unistd.h>
#endif

namespace ember::io {

#ifndef EMBER_HAVE_HDF5

bool hdf5_available() { return false; }

void load_hdf5(const communicator&, const std::string& path, const std::string&, int, int, std::optional<int>,
               const std::string& what, const alloc_fn&) {
  throw error(what + ": cannot read '" + path + "': ember was built without parallel HDF5 (meson option -Dhdf5=enabled, "
              "Debian package libhdf5-openmpi-dev)");
}
void save_hdf5(const communicator&, const std::string& path, const std::string&, int, const layout&, const void*,
               bool) {
  throw error("ember::io::save_hdf5: cannot write '" + path +
              "': ember was built without parallel HDF5 (meson option -Dhdf5=enabled, Debian package libhdf5-openmpi-dev)");
}

#else

#ifndef H5_HAVE_PARALLEL
#error "ember: the HDF5 found is not a parallel (MPI) build; use libhdf5-openmpi-dev"
#endif

namespace {

std::string dname(int code) {
  static const char* n[] = {"unknown", "bool",  "int32", "int64",  "float32", "float64", "complex64",
                            "complex128", "int8", "int16", "uint8", "uint16",  "uint32",  "uint64"};
  return n[(code >= 1 && code <= 13) ? code : 0];
}

// HDF5 prints its error stack on failure; ember reports errors itself. Silenced
// for the scope of one ember call, then restored.
struct quiet_hdf5 {
  H5E_auto2_t fn = nullptr;
  void* data = nullptr;
  quiet_hdf5() {
    H5Eget_auto2(H5E_DEFAULT, &fn, &data);
    if (!std::getenv("EMBER_HDF5_ERRORS")) H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // for debugging
  }
  ~quiet_hdf5() { H5Eset_auto2(H5E_DEFAULT, fn, data); }
};

// Closes an HDF5 handle at scope exit.
struct h5 {
  hid_t id = -1;
  herr_t (*close)(hid_t) = nullptr;
  h5(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  ~h5() {
    if (id >= 0) close(id);
  }
  h5(const h5&) = delete;
  h5& operator=(const h5&) = delete;
  operator hid_t() const { return id; }
  bool ok() const { return id >= 0; }
};

// h5py's bool: an enum over int8 with FALSE = 0 and TRUE = 1.
hid_t bool_type() {
  hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
  signed char v = 0;
  H5Tenum_insert(t, "FALSE", &v);
  v = 1;
  H5Tenum_insert(t, "TRUE", &v);
  return t;
}

// h5py's complex numbers: a compound of two floats named "r" and "i".
hid_t complex_type(hid_t part, std::size_t part_size) {
  hid_t t = H5Tcreate(H5T_COMPOUND, 2 * part_size);
  H5Tinsert(t, "r", 0, part);
  H5Tinsert(t, "i", part_size, part);
  return t;
}

// The type in the file: little-endian standard types (h5py's choice).
hid_t file_type(int code) {
  switch (code) {
    case 1: return bool_type();
    case 2: return H5Tcopy(H5T_STD_I32LE);
    case 3: return H5Tcopy(H5T_STD_I64LE);
    case 4: return H5Tcopy(H5T_IEEE_F32LE);
    case 5: return H5Tcopy(H5T_IEEE_F64LE);
    case 6: return complex_type(H5T_IEEE_F32LE, 4);
    case 7: return complex_type(H5T_IEEE_F64LE, 8);
    case 8: return H5Tcopy(H5T_STD_I8LE);
    case 9: return H5Tcopy(H5T_STD_I16LE);
    case 10: return H5Tcopy(H5T_STD_U8LE);
    case 11: return H5Tcopy(H5T_STD_U16LE);
    case 12: return H5Tcopy(H5T_STD_U32LE);
    case 13: return H5Tcopy(H5T_STD_U64LE);
  }
  return -1;
}

hid_t mem_type(int code) {
  switch (code) {
    case 6: return complex_type(H5T_NATIVE_FLOAT, 4);
    case 7: return complex_type(H5T_NATIVE_DOUBLE, 8);
    case 8: return H5Tcopy(H5T_NATIVE_INT8);
    case 9: return H5Tcopy(H5T_NATIVE_INT16);
    case 10: return H5Tcopy(H5T_NATIVE_UINT8);
    case 11: return H5Tcopy(H5T_NATIVE_UINT16);
    case 12: return H5Tcopy(H5T_NATIVE_UINT32);
    case 13: return H5Tcopy(H5T_NATIVE_UINT64);
    case 1: return bool_type();
    case 2: return H5Tcopy(H5T_NATIVE_INT32);
    case 3: return H5Tcopy(H5T_NATIVE_INT64);
    case 4: return H5Tcopy(H5T_NATIVE_FLOAT);
    case 5: return H5Tcopy(H5T_NATIVE_DOUBLE);
  }
  return -1;
}

// ember dtype code of a dataset's type, 0 if ember holds none like it.
int code_of(hid_t t, std::string& desc) {
  const H5T_class_t cls = H5Tget_class(t);
  const std::size_t size = H5Tget_size(t);
  switch (cls) {
    case H5T_FLOAT:
      desc = "float" + std::to_string(size * 8);
      return size == 4 ? 4 : size == 8 ? 5 : 0;
    case H5T_INTEGER: {
      const bool sgn = H5Tget_sign(t) == H5T_SGN_2;
      desc = std::string(sgn ? "int" : "uint") + std::to_string(size * 8);
      if (sgn) return size == 1 ? 8 : size == 2 ? 9 : size == 4 ? 2 : size == 8 ? 3 : 0;
      return size == 1 ? 10 : size == 2 ? 11 : size == 4 ? 12 : size == 8 ? 13 : 0;
    }
    case H5T_ENUM:
      desc = "enum of " + std::to_string(size) + " byte(s)";
      return size == 1 ? 1 : 0;  // h5py's bool
    case H5T_COMPOUND: {  // h5py's complex: two floats of one size
      desc = "compound of " + std::to_string(H5Tget_nmembers(t)) + " members";
      if (H5Tget_nmembers(t) != 2) return 0;
      h5 r(H5Tget_member_type(t, 0), H5Tclose), i(H5Tget_member_type(t, 1), H5Tclose);
      if (H5Tget_class(r) != H5T_FLOAT || H5Tget_class(i) != H5T_FLOAT || H5Tget_size(r) != H5Tget_size(i) ||
          H5Tget_member_offset(t, 1) != H5Tget_size(r))
        return 0;
      desc = "complex" + std::to_string(size * 8);
      return size == 8 ? 6 : size == 16 ? 7 : 0;
    }
    default:
      desc = "HDF5 type class " + std::to_string(int(cls));
      return 0;
  }
}

h5 open_fapl(const communicator& c) {
  h5 fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_fapl_mpio(fapl, c.native(), MPI_INFO_NULL);
  return h5(H5Pcopy(fapl), H5Pclose);
}

// The hyperslab of `rank`'s block of `l` in `space` (none when empty).
void select_block(hid_t space, const layout& l, int rank) {
  const box_nd b = l.box_of(rank);
  if (b.volume() == 0) {
    H5Sselect_none(space);
    return;
  }
  std::vector<hsize_t> start(b.lo.begin(), b.lo.end()), count(std::size_t(b.ndim()));
  for (int d = 0; d < b.ndim(); ++d) count[std::size_t(d)] = hsize_t(b.extent(d));
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
}

// Memory space of this rank's local block (a 1-element space with nothing
// selected when it is empty: every rank still takes part in the collective call).
hid_t mem_space(const layout& l, int rank) {
  const index_vec ls = l.lshape(rank);
  std::int64_t n = 1;
  for (auto e : ls) n *= e;
  if (n == 0) {
    hsize_t one = 1;
    hid_t s = H5Screate_simple(1, &one, nullptr);
    H5Sselect_none(s);
    return s;
  }
  std::vector<hsize_t> d(ls.begin(), ls.end());
  return H5Screate_simple(int(d.size()), d.data(), nullptr);
}

}  // namespace

bool hdf5_available() { return true; }

void load_hdf5(const communicator& c, const std::string& path, const std::string& dataset, int code, int ndim,
               std::optional<int> split, const std::string& what, const alloc_fn& alloc) {
  quiet_hdf5 q;
  detail::same_arguments(c, what, {"file '" + path + "'", "dataset '" + dataset + "'",
                                   "split " + ember::detail::axis_str(split)});
  const std::string where = "dataset '" + dataset + "' of '" + path + "'";
  std::string err;
  // Every rank opens the file and reads the same metadata (HDF5's parallel
  // metadata reads), so the checks below agree; `agree` makes sure of it.
  if (!std::filesystem::exists(path)) err = what + ": cannot open '" + path + "': no such file";
  detail::agree(c, err);
  h5 fapl = open_fapl(c);
  h5 file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose);
  if (!file.ok()) err = what + ": cannot open '" + path + "' as an HDF5 file";
  detail::agree(c, err);
  h5 dset(H5Dopen2(file, dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.ok()) err = what + ": there is no " + where;
  detail::agree(c, err);
  h5 ftype(H5Dget_type(dset), H5Tclose);
  h5 fspace(H5Dget_space(dset), H5Sclose);
  std::string desc;
  const int fcode = code_of(ftype, desc);
  const int nd = H5Sget_simple_extent_ndims(fspace);
  std::vector<hsize_t> dims(std::size_t(std::max(nd, 0)));
  if (nd > 0) H5Sget_simple_extent_dims(fspace, dims.data(), nullptr);
  const index_vec shape(dims.begin(), dims.end());
  if (fcode != code)
    throw type_error(what + ": " + where + " holds " + (fcode ? dname(fcode) : desc) + " data of shape " +
                     ember::detail::shape_str(shape) + ", not " + dname(code));
  if (nd != ndim)
    throw shape_error(what + ": " + where + " is a " + std::to_string(nd) + "-dimensional array of shape " +
                      ember::detail::shape_str(shape) + ", not a " + std::to_string(ndim) + "-dimensional one");
  if (split) check_axis(*split, ndim, "load_hdf5");
  const layout l = layout::balanced(shape, split, c.size());
  void* dst = detail::agreed_alloc(c, alloc, l);
  h5 mtype(mem_type(code), H5Tclose);
  h5 mspace(mem_space(l, c.rank()), H5Sclose);
  select_block(fspace, l, c.rank());
  h5 dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  // An empty dataset has no storage (and HDF5 1.10 fails a collective read of
  // it); the decision is the same on every rank.
  if (l.numel() > 0 && H5Dread(dset, mtype, mspace, fspace, dxpl, dst) < 0) err = what + ": reading " + where + " failed";
  detail::agree(c, err);
}

void save_hdf5(const communicator& c, const std::string& path, const std::string& dataset, int code,
               const layout& l, const void* src, bool sync) {
  quiet_hdf5 q;
  const std::string what = "ember::io::save_hdf5";
  detail::same_arguments(c, what, {"file '" + path + "'", "dataset '" + dataset + "'",
                                   dname(code) + " array of shape " + ember::detail::shape_str(l.shape()),
                                   "split " + ember::detail::axis_str(l.split()), sync ? "sync" : "no sync"});
  const std::int64_t data_bytes = ember::detail::checked_bytes(l.shape(), std::int64_t(dtype_size(code)), what);
  atomic_target t(c, path, what);
  std::string err;
  std::int64_t data_end = -1;  // where the dataset's data ends in the file
  {
    h5 fapl = open_fapl(c);
    h5 file(H5Fcreate(t.temp_path().c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl), H5Fclose);
    if (!file.ok()) err = "cannot create '" + t.temp_path() + "'";
    detail::agree(c, err.empty() ? err : what + ": " + err);
    // The data plus room for HDF5's metadata: a full disk fails here, before any write.
    t.reserve(data_bytes + (64 << 10));
    std::vector<hsize_t> dims(l.shape().begin(), l.shape().end());
    h5 fspace(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
    h5 ftype(file_type(code), H5Tclose);
    // Intermediate groups of "a/b/data" are created as h5py does.
    h5 lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(lcpl, 1);
    h5 dset(H5Dcreate2(file, dataset.c_str(), ftype, fspace, lcpl, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
    if (!dset.ok()) err = "cannot create dataset '" + dataset + "'";
    detail::agree(c, err.empty() ? err : what + ": " + err);
    if (detail::fault_here(c, "save:before_data")) err = "injected fault at save:before_data";
    // A replicated array: each rank writes its balanced share of axis 0.
    const layout wl = l.split() ? l : layout::balanced(l.shape(), 0, c.size());
    const char* p = static_cast<const char*>(src);
    if (!l.split()) {
      std::int64_t row = std::int64_t(dtype_size(code));
      for (int d = 1; d < l.ndim(); ++d) row *= l.shape()[std::size_t(d)];
      p += wl.offset(c.rank()) * row;
    }
    h5 mtype(mem_type(code), H5Tclose);
    h5 mspace(mem_space(wl, c.rank()), H5Sclose);
    select_block(fspace, wl, c.rank());
    if (!err.empty()) {  // a failed rank still takes part, writing nothing
      H5Sselect_none(fspace);
      H5Sselect_none(mspace);
    }
    h5 dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    // No data, no storage: HDF5 1.10 fails a collective write to an empty dataset.
    if (l.numel() > 0 && H5Dwrite(dset, mtype, mspace, fspace, dxpl, p) < 0 && err.empty())
      err = "writing dataset '" + dataset + "' failed";
    if (err.empty() && detail::fault_here(c, "save:after_data")) err = "injected fault at save:after_data";
    if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0 && err.empty()) err = "flushing '" + t.temp_path() + "' failed";
    // Contiguous storage is allocated at creation in parallel HDF5: its offset
    // plus its size is the least the file must hold (checked in commit).
    const haddr_t at = l.numel() > 0 ? H5Dget_offset(dset) : HADDR_UNDEF;
    if (at != HADDR_UNDEF) data_end = std::int64_t(at) + data_bytes;
    // Closing writes the remaining metadata: its result counts too.
    H5Dclose(dset.id);
    dset.id = -1;
    if (H5Fclose(file.id) < 0 && err.empty()) err = "closing '" + t.temp_path() + "' failed";
    file.id = -1;
  }  // every other handle closed (collectively) here
  if (sync && c.rank() == 0 && err.empty()) {
    // HDF5's MPI-IO driver does not fsync on close; the protocol promises data on disk before the rename.
    const int fd = ::open(t.temp_path().c_str(), O_RDONLY);
    if (fd < 0 || ::fsync(fd) != 0) err = "syncing '" + t.temp_path() + "' failed";
    if (fd >= 0) ::close(fd);
  }
  t.commit(err, sync, -1, data_end);
}

#endif

}  // namespace ember::io
