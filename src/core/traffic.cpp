// SPDX-License-Identifier: MIT
// The per-process count of bytes handed to MPI to send (core/traffic.hpp).
#include "jsmf/core/traffic.hpp"

#include <atomic>

namespace jsmf {
namespace {
std::atomic<std::int64_t> counted{0};  // atomic: cheap, and safe should a wrapper run on a thread
std::atomic<std::int64_t> counted_at_mark{0};
}  // namespace

void count_sent_bytes(std::int64_t bytes) { counted.fetch_add(bytes, std::memory_order_relaxed); }

std::int64_t sent_bytes() { return counted.load(std::memory_order_relaxed); }

std::int64_t take_stage_sent_bytes() {
    const std::int64_t now = counted.load(std::memory_order_relaxed);
    return now - counted_at_mark.exchange(now, std::memory_order_relaxed);
}

}  // namespace jsmf
