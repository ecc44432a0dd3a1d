// SPDX-License-Identifier: MIT
// Bounded all-to-all exchange in rounds: the transport under every router.
#pragma once

#include <cstddef>
#include <vector>

#include "jsmf/mpi/comm.hpp"

namespace jsmf::distmat {

/// What the ranks agreed at the end of one exchange round.
struct RoundStatus {
    bool all_done = false;    ///< every rank has nothing more to send
    bool any_failed = false;  ///< some rank hit an error; everyone stops now
};

/// Per-destination send buffers of raw bytes, one per rank of a communicator.
class ByteMailbox {
public:
    explicit ByteMailbox(int num_ranks) : outbox_(static_cast<std::size_t>(num_ranks)) {}
    std::vector<char>& to(int rank) { return outbox_[static_cast<std::size_t>(rank)]; }
    /// Local. Reserves `bytes` in every outbox once, so that filling them never
    /// reallocates (a doubling vector would briefly hold 1.5x its contents).
    void reserve(std::size_t bytes);
    std::size_t largest() const;
    std::size_t total() const;
    bool empty() const { return total() == 0; }

    /// Collective on `comm`. Sends every outbox to its rank (MPI_Alltoallv), clears
    /// them, and returns what this rank received, concatenated in source-rank order.
    /// Each outbox must stay below 1 GiB (MPI int counts). Memory during the call: the
    /// outboxes, one contiguous copy of them, and what arrives.
    std::vector<char> exchange(const mpi::Comm& comm);

private:
    std::vector<std::vector<char>> outbox_;
};

/// Collective on `comm`. One allreduce of (failed, not done): the agreement that ends
/// every exchange round, so a rank that fails mid-stream stops the others at the next
/// round instead of leaving them in a collective.
RoundStatus agree_round(const mpi::Comm& comm, bool local_done, bool local_failed);

}  // namespace jsmf::distmat
