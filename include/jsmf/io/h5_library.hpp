// SPDX-License-Identifier: MIT
// HDF5's own start-up and shutdown, kept apart from MPI's.
#pragma once

namespace jsmf::io {

/// Local; once, before MPI is initialized (the jsmf binary: first thing in main). Starts
/// HDF5 while MPI is not yet running and asks it not to register its end at exit: HDF5
/// then never ends itself, neither from MPI_Finalize (where 1.10 closes the files still
/// open) nor from exit(). jsmf closes every file it opens; after a failed collective write
/// (disk full) HDF5 1.10 leaves the file half-closed, and its own end would crash on it
/// (a segfault in MPI_Finalize) or wait for ranks that are not coming.
void start_hdf5_outside_mpi();

}  // namespace jsmf::io
