// SPDX-License-Identifier: MIT
// This process's memory use, read from /proc/self/status (getrusage as a fallback).
#include "jsmf/core/memory.hpp"

#include <sys/resource.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace jsmf {
namespace {
std::int64_t status_field_kib(const std::string& key) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.compare(0, key.size(), key) == 0) return std::stoll(line.substr(key.size()));
    }
    return -1;
}

// The kernel's high-water mark since it was last reset.
std::int64_t high_water_mark_bytes() {
    const std::int64_t kib = status_field_kib("VmHWM:");
    if (kib >= 0) return kib * 1024;
    rusage usage{};  // never reset: the process's peak
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
}

// The largest mark before the last reset (the kernel forgets it).
std::atomic<std::int64_t> peak_before_reset{0};
}  // namespace

std::int64_t peak_rss_bytes() { return std::max(peak_before_reset.load(), high_water_mark_bytes()); }

std::int64_t take_stage_peak_rss_bytes() {
    const std::int64_t peak = high_water_mark_bytes();
    if (peak > peak_before_reset.load()) peak_before_reset.store(peak);
    std::ofstream("/proc/self/clear_refs") << "5";  // 5: reset the peak RSS to the current RSS
    return peak;
}

std::int64_t current_rss_bytes() {
    const std::int64_t kib = status_field_kib("VmRSS:");
    return kib >= 0 ? kib * 1024 : peak_rss_bytes();
}

std::int64_t memory_limit_bytes() {
    std::int64_t limit = -1;
    auto take = [&](std::int64_t bytes) {
        if (bytes > 0 && (limit < 0 || bytes < limit)) limit = bytes;
    };
    {
        std::ifstream meminfo("/proc/meminfo");
        std::string key;
        std::int64_t kib = 0;
        while (meminfo >> key >> kib) {
            if (key == "MemTotal:") {
                take(kib * 1024);
                break;
            }
            meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
        }
    }
    // The control group's limit: v2's memory.max or v1's memory.limit_in_bytes, of this
    // process's group (/proc/self/cgroup) and of every group above it up to the root, as
    // SLURM sets --mem on the job's and step's groups while the task sits in a leaf below
    // them. "max" (no limit) and v1's huge sentinel change nothing.
    std::vector<std::string> files = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    {
        std::ifstream groups("/proc/self/cgroup");
        for (std::string line; std::getline(groups, line);) {
            const auto first = line.find(':'), second = line.find(':', first + 1);
            if (first == std::string::npos || second == std::string::npos) continue;
            const std::string controllers = line.substr(first + 1, second - first - 1);
            std::string path = line.substr(second + 1);
            const bool v2 = controllers.empty(), v1 = controllers.find("memory") != std::string::npos;
            if (!v1 && !v2) continue;
            for (;;) {  // this group, then each parent
                files.push_back(v2 ? "/sys/fs/cgroup" + path + "/memory.max"
                                   : "/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes");
                const auto slash = path.find_last_of('/');
                if (path.empty() || path == "/" || slash == std::string::npos) break;
                path = path.substr(0, slash);
            }
        }
    }
    for (const std::string& path : files) {
        std::ifstream in(path);
        std::int64_t bytes = 0;
        if (in >> bytes) take(bytes);
    }
    return limit;
}

void keep_freed_memory() {
#if defined(__GLIBC__)
    // Every block from the heap rather than its own mmap (glibc caps the mmap threshold at
    // 32 MiB, below a block at scale), so freed ones are reused, and the heap's top not
    // trimmed back until 2 GiB lie free there.
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

}  // namespace jsmf
