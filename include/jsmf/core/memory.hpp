// SPDX-License-Identifier: MIT
// This process's memory use, for per-rank peak reports.
#pragma once

#include <cstdint>

namespace jsmf {

/// Local. Peak resident set size of this process so far, in bytes (VmHWM, and the marks
/// take_stage_peak_rss_bytes reset).
std::int64_t peak_rss_bytes();
/// Local. The peak resident set size since the previous call (or the process's start), in
/// bytes, and a new interval begins: the kernel's high-water mark is reset to the current
/// size (/proc/self/clear_refs, Linux 4.0 and later). Where it cannot be reset, the peak so
/// far. peak_rss_bytes() still answers for the whole process.
std::int64_t take_stage_peak_rss_bytes();
/// Local. Current resident set size of this process, in bytes (VmRSS).
std::int64_t current_rss_bytes();

/// Local. The memory this process's node lets it use, in bytes: the smaller of the
/// machine's (MemTotal) and its control group's limit (cgroup v2 memory.max, or v1's
/// memory.limit_in_bytes; SLURM's --mem lands there). -1 when neither can be read.
std::int64_t memory_limit_bytes();

/// Local; once, at the start of a process. Keeps the memory of freed large blocks for the
/// next allocation instead of returning it to the system: the iterative solvers allocate
/// and free N × p blocks at every operator product, and with glibc's defaults each one
/// comes back as fresh pages, a page fault per 4 KiB (KOS, K = 100, 2 ranks: the
/// compression took 12.7 s, 2.6 s with freed blocks kept). The peak is unchanged; the
/// resident size may stay near it until exit. A no-op without glibc.
void keep_freed_memory();

}  // namespace jsmf
