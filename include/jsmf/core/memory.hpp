// SPDX-License-Identifier: MIT
// This process's memory use, for per-rank peak reports.
#pragma once

#include <cstdint>

namespace jsmf {

/// Local. Peak resident set size of this process so far, in bytes (VmHWM).
std::int64_t peak_rss_bytes();
/// Local. Current resident set size of this process, in bytes (VmRSS).
std::int64_t current_rss_bytes();

}  // namespace jsmf
