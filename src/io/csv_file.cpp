// SPDX-License-Identifier: MIT
#include "jsmf/io/csv_file.hpp"

#include <fstream>
#include <sstream>

#include "jsmf/core/error.hpp"

namespace jsmf::io {

CsvTable read_csv_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "cannot open");
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    CsvTable table;
    std::vector<std::string> record;
    std::string field;
    bool quoted = false, any = false;
    long line = 1, record_line = 1;
    const auto end_record = [&] {
        record.push_back(field);
        field.clear();
        if (table.header.empty()) {
            table.header = record;
        } else if (record.size() != table.header.size()) {
            throw InputError(path + ":" + std::to_string(record_line),
                             "a row of " + std::to_string(record.size()) + " fields, the header has " +
                                 std::to_string(table.header.size()));
        } else {
            table.rows.push_back(record);
        }
        record.clear();
        any = false;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                if (c == '\n') ++line;
                field += c;
            }
            continue;
        }
        if (c == '"' && field.empty()) {
            quoted = any = true;
        } else if (c == ',') {
            record.push_back(field);
            field.clear();
            any = true;
        } else if (c == '\n') {
            if (any || !field.empty() || !record.empty()) end_record();
            record_line = ++line;
        } else if (c != '\r') {
            field += c;
            any = true;
        }
    }
    if (quoted) throw InputError(path + ":" + std::to_string(record_line), "a quoted field is never closed");
    if (any || !field.empty() || !record.empty()) end_record();
    if (table.header.empty()) throw InputError(path, "is empty: no header");
    return table;
}

}  // namespace jsmf::io
