// SPDX-License-Identifier: MIT
// MPI start-up and shutdown.
#include "jsmf/mpi/environment.hpp"

#include <mpi.h>

#include "jsmf/mpi/comm.hpp"

namespace jsmf::mpi {

Environment::Environment(int& argc, char**& argv) {
    int provided = 0;
    JSMF_MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    JSMF_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

Environment::~Environment() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

}  // namespace jsmf::mpi
