// SPDX-License-Identifier: MIT
// A file written with MPI-IO by every rank of a communicator.
#include "jsmf/mpi/file.hpp"

#include <algorithm>
#include <utility>

#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::mpi {

File File::open_for_writing(const Comm& comm, const std::string& path, const std::string& stage) {
    MPI_File handle = MPI_FILE_NULL;
    const int rc = MPI_File_open(comm.raw(), path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &handle);
    if (rc != MPI_SUCCESS && handle != MPI_FILE_NULL) MPI_File_close(&handle);
    // Agreed before any File exists, so that no destructor closes on some ranks only.
    agree_or_throw(comm, stage,
                   rc == MPI_SUCCESS ? std::string()
                                     : format_error(path + ": cannot create the file (MPI_File_open)", comm.rank(),
                                                    comm.size(), stage),
                   exit_code::input);
    return File(handle);
}

File::File(File&& other) noexcept : handle_(std::exchange(other.handle_, MPI_FILE_NULL)) {}

File::~File() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (handle_ != MPI_FILE_NULL && !finalized) MPI_File_close(&handle_);
}

void File::set_size(std::int64_t bytes) { JSMF_MPI_CHECK(MPI_File_set_size(handle_, static_cast<MPI_Offset>(bytes))); }

void File::write_at(std::int64_t offset, const void* data, std::size_t bytes) {
    const char* at = static_cast<const char*>(data);
    for (std::size_t done = 0; done < bytes;) {
        const std::size_t count = std::min(max_chunk, bytes - done);
        MPI_Status status;
        JSMF_MPI_CHECK(MPI_File_write_at(handle_, static_cast<MPI_Offset>(offset) + static_cast<MPI_Offset>(done),
                                         at + done, static_cast<int>(count), MPI_CHAR, &status));
        done += count;
    }
}

void File::close() {
    MPI_File handle = std::exchange(handle_, MPI_FILE_NULL);  // no second close from the destructor
    JSMF_MPI_CHECK(MPI_File_close(&handle));
}

}  // namespace jsmf::mpi
