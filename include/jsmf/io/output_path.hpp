// SPDX-License-Identifier: MIT
// What an output may be, checked before any work: a regular file or nothing (a file), a
// directory or nothing (a folder), in a place this process can create files.
#pragma once

#include <string>
#include <vector>

namespace jsmf::io {

/// Local. InputError naming `path` unless jsmf can write it as its outputs are written
/// (a sibling "<path>.partial" created, then renamed over `path`): `path` must be absent or
/// a regular file (a link to one counts; a device, FIFO, socket or directory does not:
/// renaming over it would replace it), its "<path>.partial" absent or a regular file, and
/// a file must be creatable beside it (tried: a root process passes every permission
/// check, and /proc or a read-only mount refuse only the real thing). It must not be one
/// of `inputs` either (the same file under any name; empty names skipped).
void check_output_file(const std::string& path, const std::vector<std::string>& inputs = {});

/// Local. InputError naming `dir` unless it is a directory or absent (it is created then),
/// and each of `files` (names inside it) passes check_output_file.
void check_output_folder(const std::string& dir, const std::vector<std::string>& files = {});

/// Local. Creates the folder `dir` and its missing parents unless it exists; returns the
/// outermost folder this call created (empty: none), so that a failed command removes
/// what it made, and never a folder that was there before. InputError naming `dir`.
std::string create_output_folder(const std::string& dir);

/// Local. Removes `dir` and its parents up to `outermost` (create_output_folder's answer;
/// empty: nothing), each only while it is empty.
void remove_created_folder(const std::string& dir, const std::string& outermost);

/// Local. Writes `text` to "<path>.partial" and renames it over `path`: the file is complete
/// or absent, also when a stop signal ends the process. InputError naming `path`.
void write_text_file(const std::string& path, const std::string& text);
}  // namespace jsmf::io
