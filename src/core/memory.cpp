// SPDX-License-Identifier: MIT
// This process's memory use, read from /proc/self/status (getrusage as a fallback).
#include "jsmf/core/memory.hpp"

#include <sys/resource.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fstream>
#include <limits>
#include <string>

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
}  // namespace

std::int64_t peak_rss_bytes() {
    const std::int64_t kib = status_field_kib("VmHWM:");
    if (kib >= 0) return kib * 1024;
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
}

std::int64_t current_rss_bytes() {
    const std::int64_t kib = status_field_kib("VmRSS:");
    return kib >= 0 ? kib * 1024 : peak_rss_bytes();
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
