// SPDX-License-Identifier: MIT
// The model file's schema as a table: every group, dataset and attribute jsmf fit (and
// jsmf eval) may write, with its type, shape and meaning. `jsmf show --schema` prints it,
// and a test walks written files against it (every object in a file is in the table with
// its type and rank, and every unconditional entry is in the file).
#pragma once

#include <string>
#include <vector>

namespace jsmf::io {

/// One object of the file. `path` names it with placeholders for what repeats: <K> (a
/// topic count), <l> (a hierarchy level), <stage>, <option> (each metric by its name); an
/// attribute is "object@name" ("/K<K>/model@method"; the root's: "@format").
struct SchemaEntry {
    std::string path;
    std::string type;     ///< group | float64 | int64 | string | link
    std::string shape;    ///< in N (words), K (topics), T (top words), D (documents), … ; "" for a scalar or a group
    std::string meaning;
    std::string when;     ///< "" when always present; else when it is (e.g. "fit --alpha")
};

/// Local. The model file's schema (format_version 1), the rectification trace's columns
/// (from model::trace_columns() and model::check_columns()) and the metrics (from
/// eval::metric_table()) included.
const std::vector<SchemaEntry>& model_schema();

/// Local. The table as text, one entry per line group, for people (`jsmf show --schema`).
std::string format_schema(const std::vector<SchemaEntry>& schema, int width = 100);

}  // namespace jsmf::io
