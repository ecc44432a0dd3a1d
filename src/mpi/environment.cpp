// SPDX-License-Identifier: MIT
// MPI start-up and shutdown.
#include "jsmf/mpi/environment.hpp"

#include <mpi.h>

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>

#include "jsmf/mpi/comm.hpp"

namespace jsmf::mpi {

Environment::Environment(int& argc, char**& argv) {
    int provided = 0;
    JSMF_MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    JSMF_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

std::optional<int> launcher_rank() {
    // SLURM_PROCID only within an srun step: a batch script's own shell has it too (0), and a
    // jsmf started there alone is a singleton.
    const bool in_srun_step = std::getenv("SLURM_STEP_ID") != nullptr;
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
        const char* value = std::getenv(name);
        if (!value || !*value || (!in_srun_step && std::string(name) == "SLURM_PROCID")) continue;
        char* end = nullptr;
        errno = 0;
        const long rank = std::strtol(value, &end, 10);
        if (*end == '\0' && errno == 0 && rank >= 0 && rank <= std::numeric_limits<int>::max())
            return static_cast<int>(rank);
    }
    return std::nullopt;
}

Environment::~Environment() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

}  // namespace jsmf::mpi
