// SPDX-License-Identifier: MIT
// Rank-aware logging on top of spdlog: info on rank 0 only, rank-prefixed when asked.
// Only fmt's core is included here (0.2 s of compile time per file where spdlog.h takes
// 3 s, in the ~25 files that log): the lines are formatted here and printed by log.cpp.
#pragma once

#include <fmt/core.h>

#include <string>
#include <utility>

namespace jsmf::log {

/// Local. Tells the logger which rank this process is; call once after MPI starts.
/// Only rank 0's `info`/`warn` lines are printed; all go to stderr so stdout stays
/// free for results.
void set_rank(int rank, int size);
/// Local. Silences `info` (warnings and errors still print), for `--quiet`.
void set_quiet(bool quiet);
bool is_root();
/// Local. Prints one formatted line at info (warning) level; the templates' back end.
void info_line(const std::string& line);
void warn_line(const std::string& line);

template <class... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
    if (is_root()) info_line(fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
    if (is_root()) warn_line(fmt::format(format, std::forward<Args>(args)...));
}
/// Printed by every rank, prefixed "[rank r/p]": for per-rank diagnostics.
void rank(const std::string& message);

}  // namespace jsmf::log
