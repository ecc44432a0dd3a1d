// SPDX-License-Identifier: MIT
// MPI start-up and shutdown: the first object in main.
#pragma once

#include <optional>

namespace jsmf::mpi {

/// Owns MPI_Init_thread (FUNNELED: only the main thread calls MPI) and MPI_Finalize.
/// Sets MPI_ERRORS_RETURN on MPI_COMM_WORLD so that every failed call is seen by
/// JSMF_MPI_CHECK and reported with its call site instead of aborting silently.
class Environment {
public:
    Environment(int& argc, char**& argv);
    ~Environment();
    Environment(const Environment&) = delete;
    Environment& operator=(const Environment&) = delete;
};

/// This process's rank as its launcher gave it, known before MPI starts: Open MPI's
/// OMPI_COMM_WORLD_RANK, PMIx's PMIX_RANK, Hydra's PMI_RANK or srun's SLURM_PROCID, in that
/// order; none for a process started alone (a singleton: rank 0 of 1). What runs before
/// MPI_Init (the command line's parse: a typo refused without MPI's start) prints on rank 0.
std::optional<int> launcher_rank();

}  // namespace jsmf::mpi
