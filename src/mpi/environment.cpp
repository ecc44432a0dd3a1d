// SPDX-License-Identifier: MIT
// MPI start-up and shutdown.
#include "jsmf/mpi/environment.hpp"

#include <mpi.h>

#include <cstdlib>

#include "jsmf/mpi/comm.hpp"

namespace jsmf::mpi {

Environment::Environment(int& argc, char**& argv) {
    int provided = 0;
    JSMF_MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    JSMF_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

std::optional<int> launcher_rank() {
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
        const char* value = std::getenv(name);
        if (!value || !*value) continue;
        char* end = nullptr;
        const long rank = std::strtol(value, &end, 10);
        if (*end == '\0' && rank >= 0) return static_cast<int>(rank);
    }
    return std::nullopt;
}

Environment::~Environment() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

}  // namespace jsmf::mpi
