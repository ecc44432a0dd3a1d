// SPDX-License-Identifier: MIT
// Rank-aware logging on top of spdlog: info on rank 0 only, rank-prefixed when asked.
#pragma once

#include <spdlog/spdlog.h>

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

template <class... Args>
void info(spdlog::format_string_t<Args...> fmt, Args&&... args) {
    if (is_root()) spdlog::info(fmt, std::forward<Args>(args)...);
}
template <class... Args>
void warn(spdlog::format_string_t<Args...> fmt, Args&&... args) {
    if (is_root()) spdlog::warn(fmt, std::forward<Args>(args)...);
}
/// Printed by every rank, prefixed "[rank r/p]": for per-rank diagnostics.
void rank(const std::string& message);

}  // namespace jsmf::log
