// SPDX-License-Identifier: MIT
// A file written with MPI-IO by every rank of a communicator, closed by its destructor.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "jsmf/mpi/comm.hpp"

namespace jsmf::mpi {

/// An MPI-IO file handle, open on every rank of the communicator it was opened on.
/// Move-only; closing is collective, so the handle is closed by `close()` or by the
/// destructor, which every rank of the open must reach.
class File {
public:
    /// Collective on `comm`. Opens `path` for writing on every rank (created if missing,
    /// not truncated: see set_size). A failed open on any rank is agreed: every rank throws
    /// StageFailed (`stage`, exit code input) with "PATH: cannot create the file
    /// (MPI_File_open)" from each failing rank. Ranks whose own open succeeded then keep
    /// their handle open: closing it is collective over every rank of the open, and
    /// calling it on some would hang.
    static File open_for_writing(const Comm& comm, const std::string& path, const std::string& stage);

    File(File&& other) noexcept;
    File& operator=(File&&) = delete;  // would hide a collective close
    File(const File&) = delete;
    File& operator=(const File&) = delete;
    /// Collective on the communicator of the open, like close(), but ignores a failure.
    ~File();

    /// Collective on the communicator of the open. Truncates or extends the file to `bytes`.
    void set_size(std::int64_t bytes);
    /// Local. Writes `bytes` bytes of `data` at byte `offset` (independent I/O), in calls of
    /// at most max_chunk bytes.
    void write_at(std::int64_t offset, const void* data, std::size_t bytes);
    /// Collective on the communicator of the open. Closes the file; throws MpiError.
    void close();

private:
    explicit File(MPI_File handle) : handle_(handle) {}
    MPI_File handle_ = MPI_FILE_NULL;
};

}  // namespace jsmf::mpi
