// SPDX-License-Identifier: MIT
// Routes (i, j, value) contributions to their block-cyclic owners and sums them there.
#pragma once

#include <cstddef>

#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/distmat/exchange.hpp"

namespace jsmf::distmat {

/// Accumulates C(i, j) += value for contributions made on any rank.
///
/// Contributions are buffered per owner (16 bytes each: local row, local column, value)
/// and shipped in rounds. Usage, on every rank of target.grid():
///
///     ContributionRouter router(C, buffer_bytes);
///     for (;;) {
///         while (have_more && !router.full()) router.add(i, j, v);   // local
///         if (router.exchange(!have_more, failed).all_done) break;   // collective
///     }
///
/// Per-rank memory: about 2 x buffer_bytes (send buffers, plus what arrives in a round,
/// which is at most buffer_bytes / p from each rank).
class ContributionRouter {
public:
    /// Local. `buffer_bytes` bounds this rank's send buffers (split evenly over ranks).
    ContributionRouter(DistMatrix& target, std::size_t buffer_bytes);

    /// Local. Buffers C(i, j) += value for its owner. Adds even when full(); callers
    /// check full() to bound memory.
    void add(Index i, Index j, double value);
    /// Local. True when some destination buffer reached its share of buffer_bytes.
    bool full() const { return mailbox_.largest() >= per_destination_bytes_; }

    /// Collective on the target's grid. Ships every buffer, adds what arrived into the
    /// local block, and agrees on (all done, any failed). Every rank calls it the same
    /// number of times; a rank with nothing left passes local_done = true.
    RoundStatus exchange(bool local_done, bool local_failed);

    std::size_t rounds() const { return rounds_; }
    std::size_t contributions_received() const { return received_; }

private:
    DistMatrix& target_;
    ByteMailbox mailbox_;
    std::size_t per_destination_bytes_;
    std::size_t rounds_ = 0;
    std::size_t received_ = 0;
};

}  // namespace jsmf::distmat
