// SPDX-License-Identifier: MIT
// MPI start-up and shutdown: the first object in main.
#pragma once

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

}  // namespace jsmf::mpi
