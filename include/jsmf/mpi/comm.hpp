// SPDX-License-Identifier: MIT
// A move-only communicator handle and the checked-call macro.
#pragma once

#include <mpi.h>

#include "jsmf/core/error.hpp"

/// Every MPI call goes through this, in release builds too: a failure throws MpiError
/// naming the call, its return code, file and line (SLATE's slate_mpi_call).
#define JSMF_MPI_CHECK(call)                                                \
    do {                                                                    \
        const int jsmf_mpi_rc_ = (call);                                    \
        if (jsmf_mpi_rc_ != MPI_SUCCESS)                                    \
            throw ::jsmf::MpiError(#call, jsmf_mpi_rc_, __FILE__, __LINE__); \
    } while (false)

namespace jsmf::mpi {

enum class Ownership { borrow, own };

/// A communicator handle. Move-only: duplicating is collective, so it is spelled
/// `dup()`, never hidden in a copy. Frees its MPI_Comm only when it owns it; owning
/// Comms live in main's scope, never inside stages.
class Comm {
public:
    explicit Comm(MPI_Comm raw, Ownership ownership = Ownership::borrow);
    Comm(Comm&& other) noexcept;
    Comm& operator=(Comm&& other) noexcept;
    Comm(const Comm&) = delete;
    Comm& operator=(const Comm&) = delete;
    ~Comm();

    static Comm world() { return Comm(MPI_COMM_WORLD); }
    int rank() const { return rank_; }
    int size() const { return size_; }
    bool is_root() const { return rank_ == 0; }
    MPI_Comm raw() const { return raw_; }

    /// Collective on *this.
    Comm dup() const;
    /// Collective on *this.
    Comm split(int color, int key) const;
    /// Collective on *this. The ranks that share this one's node (MPI_COMM_TYPE_SHARED).
    Comm split_shared() const;
    /// Collective on *this.
    void barrier() const;

private:
    void release() noexcept;
    MPI_Comm raw_ = MPI_COMM_NULL;
    bool owned_ = false;
    int rank_ = -1;
    int size_ = 0;
};

/// Local. Ends every rank of MPI_COMM_WORLD with `exit_code`: the last resort where the
/// ranks cannot agree on a failure (a rank stuck in a collective, an exception past the
/// stages' agreement).
[[noreturn]] void abort_all(int exit_code) noexcept;

/// Local. Frees an MPI_Info handed out by a library (HDF5's file access properties);
/// MPI_INFO_NULL is left alone.
void free_info(MPI_Info& info) noexcept;

}  // namespace jsmf::mpi
