// SPDX-License-Identifier: MIT
// What every libFuzzer harness shares: the input as a file (jsmf's readers take paths, as
// users give them), MPI and HDF5 started once, and the rule for what counts as a finding.
//
// A reader may refuse its input only with jsmf's own errors (InputError, StageFailed, …):
// they carry the file and line a user needs. Anything else that escapes (std::out_of_range,
// std::bad_alloc, a JSON library's exception) is a finding: the harness lets it through
// and libFuzzer reports it as a crash, as it does ASan's and UBSan's reports.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "jsmf/core/error.hpp"
#include "jsmf/io/h5_library.hpp"
#include "jsmf/mpi/environment.hpp"

namespace jsmf::fuzz {

/// The directory for the inputs: a tmpfs (/dev/shm) when there is one, so a file costs
/// memory, not disk writes; TMPDIR or /tmp otherwise.
inline std::string scratch_dir() {
    if (const char* dir = std::getenv("JSMF_FUZZ_DIR")) return dir;
    if (::access("/dev/shm", W_OK) == 0) return "/dev/shm";
    if (const char* dir = std::getenv("TMPDIR")) return dir;
    return "/tmp";
}

/// A path of this process's own (pid), ending in `suffix`.
inline std::string scratch_path(const std::string& suffix) {
    return scratch_dir() + "/jsmf_fuzz_" + std::to_string(::getpid()) + suffix;
}

/// Writes `size` bytes to `path` (replacing it). Aborts if it cannot: that is the
/// machine's failure, not a finding.
inline void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (!file || (size && std::fwrite(data, 1, size, file) != size) || std::fclose(file) != 0) {
        std::perror(path.c_str());
        std::abort();
    }
}

/// The input's first byte, which picks one of `choices` readers or storages, taken off the
/// front of `data`; -1 for an empty input (nothing to run).
inline int take_choice(const std::uint8_t*& data, std::size_t& size, int choices) {
    if (size < 1) return -1;
    const int choice = data[0] % choices;
    ++data;
    --size;
    return choice;
}

/// HDF5 then MPI (one rank, singleton), once per process, as jsmf's main does; both end
/// at exit.
inline void start_libraries(int* argc, char*** argv) {
    static std::unique_ptr<mpi::Environment> environment;
    io::start_hdf5_outside_mpi();
    environment = std::make_unique<mpi::Environment>(*argc, *argv);
}

/// Runs `read`. A refusal of the input (InputError, or the ranks' agreed StageFailed with
/// the input's exit code 2) is fine; anything else, an InternalError included (jsmf calling
/// its own state impossible), escapes and is a finding.
template <typename Read>
void expect_refusal_or_success(Read&& read) {
    try {
        read();
    } catch (const InputError&) {
    } catch (const StageFailed& e) {
        if (e.exit_code() != exit_code::input) throw;
    }
}

}  // namespace jsmf::fuzz
