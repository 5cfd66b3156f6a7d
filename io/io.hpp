// ember::io: loading and saving distributed arrays, in parallel. Each rank reads
// and writes only its own slice (MPI-IO, parallel HDF5); saves are atomic (a
// temporary file renamed into place after every rank finished and flushed);
// every error is raised on every rank with the file name and what is wrong.
//
//   auto a = ember::io::load_npy<double, 2>("x.npy", {.split = 0});
//   ember::io::save_npy(a, "y.npy");
//   auto t = ember::io::load_csv<float>("t.csv", {.split = 0, .sep = ';', .header = true});
//   ember::io::save_hdf5(a, "out.h5", "group/data");   // when built with parallel HDF5
#pragma once

#include "npy.hpp"
#include "csv.hpp"
#include "hdf5.hpp"
