// SPDX-License-Identifier: MIT
// Who made a result file, how, and with which options: the root attributes of every file.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace jsmf::io {

/// HDF5 file format version of jsmf's files; bumped on any incompatible change.
inline constexpr int kFormatVersion = 1;

struct Provenance {
    std::string command_line;
    std::string created;  ///< ISO 8601, UTC
    int mpi_ranks = 1;
    std::string grid;     ///< "P_r x P_c"
    /// Every option used, as (name, value) text pairs; written as root attributes.
    std::vector<std::pair<std::string, std::string>> options;
};

/// Local. The current time as ISO 8601 UTC ("2026-11-21T10:40:00Z").
std::string now_iso8601();

}  // namespace jsmf::io
