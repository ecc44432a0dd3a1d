// SPDX-License-Identifier: MIT
// A CSV table read back (jsmf sweep's sweep.csv): RFC 4180 fields, quoted where they hold a
// comma, a quote (doubled) or a line break.
#pragma once

#include <string>
#include <vector>

namespace jsmf::io {

struct CsvTable {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;  ///< each as long as the header
};

/// Local. Reads `path`; InputError naming the file and line for a row of another length than
/// the header's or an unclosed quote.
CsvTable read_csv_file(const std::string& path);

}  // namespace jsmf::io
