// SPDX-License-Identifier: MIT
// HDF5 started before MPI, and never ended by MPI_Finalize or exit().
#include "jsmf/io/h5_library.hpp"

#include <hdf5.h>

namespace jsmf::io {

void start_hdf5_outside_mpi() {
    H5dont_atexit();  // must come before the library starts
    H5open();         // MPI is not running yet: no MPI_COMM_SELF hook to end HDF5 at MPI_Finalize
}

}  // namespace jsmf::io
