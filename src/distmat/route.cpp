// SPDX-License-Identifier: MIT
// Routes (i, j, value) contributions to their block-cyclic owners and sums them there.
#include "jsmf/distmat/route.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace jsmf::distmat {
namespace {
// Wire record. The sender computes the owner's local indices, so the owner only adds.
struct Record {
    std::int32_t local_row;
    std::int32_t local_col;
    double value;
};
static_assert(sizeof(Record) == 16, "Record must be packed as 16 bytes");
}  // namespace

ContributionRouter::ContributionRouter(DistMatrix& target, std::size_t buffer_bytes)
    : target_(target),
      mailbox_(target.grid().size()),
      per_destination_bytes_(std::max<std::size_t>(sizeof(Record),
                                                   buffer_bytes / target.grid().size())) {
    mailbox_.reserve(per_destination_bytes_ + sizeof(Record));
}

void ContributionRouter::add(Index i, Index j, double value) {
    JSMF_REQUIRE(i >= 0 && i < target_.rows() && j >= 0 && j < target_.cols(),
                 "contribution index out of range");
    const Record record{static_cast<std::int32_t>(target_.local_row(i)),
                        static_cast<std::int32_t>(target_.local_col(j)), value};
    auto& box = mailbox_.to(target_.owner_rank(i, j));
    const std::size_t at = box.size();
    box.resize(at + sizeof(Record));
    std::memcpy(box.data() + at, &record, sizeof(Record));
}

RoundStatus ContributionRouter::exchange(bool local_done, bool local_failed) {
    const mpi::Comm comm = target_.grid().borrow_comm();
    const std::vector<char> received = mailbox_.exchange(comm);
    double* local = target_.data();
    const Index ld = target_.ld();
    for (std::size_t at = 0; at + sizeof(Record) <= received.size(); at += sizeof(Record)) {
        Record record;
        std::memcpy(&record, received.data() + at, sizeof(Record));
        local[record.local_row + record.local_col * ld] += record.value;
    }
    received_ += received.size() / sizeof(Record);
    ++rounds_;
    return agree_round(comm, local_done, local_failed);
}

}  // namespace jsmf::distmat
