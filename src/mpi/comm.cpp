// SPDX-License-Identifier: MIT
// A move-only communicator handle.
#include "jsmf/mpi/comm.hpp"

#include <cstdlib>
#include <utility>

namespace jsmf::mpi {

Comm::Comm(MPI_Comm raw, Ownership ownership) : raw_(raw), owned_(ownership == Ownership::own) {
    JSMF_MPI_CHECK(MPI_Comm_rank(raw_, &rank_));
    JSMF_MPI_CHECK(MPI_Comm_size(raw_, &size_));
}

Comm::Comm(Comm&& other) noexcept
    : raw_(std::exchange(other.raw_, MPI_COMM_NULL)),
      owned_(std::exchange(other.owned_, false)),
      rank_(other.rank_),
      size_(other.size_) {}

Comm& Comm::operator=(Comm&& other) noexcept {
    if (this != &other) {
        release();
        raw_ = std::exchange(other.raw_, MPI_COMM_NULL);
        owned_ = std::exchange(other.owned_, false);
        rank_ = other.rank_;
        size_ = other.size_;
    }
    return *this;
}

Comm::~Comm() { release(); }

void Comm::release() noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owned_ && raw_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&raw_);
    raw_ = MPI_COMM_NULL;
    owned_ = false;
}

Comm Comm::dup() const {
    MPI_Comm out = MPI_COMM_NULL;
    JSMF_MPI_CHECK(MPI_Comm_dup(raw_, &out));
    JSMF_MPI_CHECK(MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN));
    return Comm(out, Ownership::own);
}

Comm Comm::split(int color, int key) const {
    MPI_Comm out = MPI_COMM_NULL;
    JSMF_MPI_CHECK(MPI_Comm_split(raw_, color, key, &out));
    JSMF_MPI_CHECK(MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN));
    return Comm(out, Ownership::own);
}

Comm Comm::split_shared() const {
    MPI_Comm out = MPI_COMM_NULL;
    JSMF_MPI_CHECK(MPI_Comm_split_type(raw_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &out));
    JSMF_MPI_CHECK(MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN));
    return Comm(out, Ownership::own);
}

void Comm::barrier() const { JSMF_MPI_CHECK(MPI_Barrier(raw_)); }

void abort_all(int exit_code) noexcept {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::abort();  // MPI_Abort does not return; this says so to the compiler
}

void free_info(MPI_Info& info) noexcept {
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
}

}  // namespace jsmf::mpi
