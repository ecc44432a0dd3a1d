// SPDX-License-Identifier: MIT
// Boost.MPI's view of a jsmf communicator, for Boost's serializing collectives.
#pragma once

#include <boost/mpi/communicator.hpp>

#include "jsmf/mpi/comm.hpp"

namespace jsmf::mpi {

/// Local. A Boost.MPI communicator on the same MPI communicator; attached, so Boost
/// never frees it.
inline boost::mpi::communicator boost_comm(const Comm& comm) {
    return boost::mpi::communicator(comm.raw(), boost::mpi::comm_attach);
}

}  // namespace jsmf::mpi
