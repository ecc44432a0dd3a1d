// SPDX-License-Identifier: MIT
// Bounded all-to-all exchange in rounds.
#include "jsmf/distmat/exchange.hpp"

#include <algorithm>
#include <climits>

#include "jsmf/mpi/collectives.hpp"

namespace jsmf::distmat {

std::size_t ByteMailbox::largest() const {
    std::size_t most = 0;
    for (const auto& box : outbox_) most = std::max(most, box.size());
    return most;
}

void ByteMailbox::reserve(std::size_t bytes) {
    for (auto& box : outbox_) box.reserve(bytes);
}

std::size_t ByteMailbox::total() const {
    std::size_t sum = 0;
    for (const auto& box : outbox_) sum += box.size();
    return sum;
}

std::vector<char> ByteMailbox::exchange(const mpi::Comm& comm) {
    const int p = comm.size();
    JSMF_REQUIRE(static_cast<int>(outbox_.size()) == p, "mailbox size differs from the communicator");
    std::vector<int> send_counts(p);
    std::size_t send_total = 0;
    for (int r = 0; r < p; ++r) {
        JSMF_REQUIRE(outbox_[r].size() < (std::size_t{1} << 30), "exchange buffer exceeds 1 GiB");
        send_counts[r] = static_cast<int>(outbox_[r].size());
        send_total += outbox_[r].size();
    }
    const std::vector<int> recv_counts = mpi::exchange_counts(comm, send_counts);
    std::vector<char> send(send_total);
    std::size_t sent = 0, recv_total = 0;
    for (int r = 0; r < p; ++r) {
        std::copy(outbox_[r].begin(), outbox_[r].end(), send.begin() + static_cast<std::ptrdiff_t>(sent));
        sent += outbox_[r].size();
        outbox_[r].clear();
        JSMF_REQUIRE(recv_total + recv_counts[r] < static_cast<std::size_t>(INT_MAX),
                     "received more than 2 GiB in one exchange round");
        recv_total += static_cast<std::size_t>(recv_counts[r]);
    }
    std::vector<char> received(recv_total);
    mpi::exchange(comm, send.data(), send_counts, received.data(), recv_counts);
    return received;  // `send` is freed here: the staging copy never outlives the call
}

RoundStatus agree_round(const mpi::Comm& comm, bool local_done, bool local_failed) {
    int flags[2] = {local_failed ? 1 : 0, local_done ? 0 : 1};
    mpi::allreduce_inplace(comm, flags, 2, MPI_MAX);
    RoundStatus status;
    status.any_failed = flags[0] != 0;
    status.all_done = flags[1] == 0;
    return status;
}

}  // namespace jsmf::distmat
