// SPDX-License-Identifier: MIT
// Wall-clock stage timers: seconds per named stage, in the order stages ran.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "jsmf/core/memory.hpp"
#include "jsmf/core/traffic.hpp"

namespace jsmf {

/// Local. Wall-clock seconds since construction or the last `restart()`.
class Stopwatch {
public:
    Stopwatch() : start_(std::chrono::steady_clock::now()) {}
    void restart() { start_ = std::chrono::steady_clock::now(); }
    double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    std::chrono::steady_clock::time_point start_;
};

/// Local. Accumulates seconds per stage name, and the peak memory of this process during
/// each (the resident high-water mark since the previous stage of any StageTimes ended:
/// take_stage_peak_rss_bytes) and the bytes it handed to MPI to send in the meantime
/// (take_stage_sent_bytes); a stage timed twice adds its seconds and bytes and keeps the
/// larger peak. Collective reduction to the largest rank's: mpi::take_largest_stage_peaks.
class StageTimes {
public:
    void add(const std::string& stage, double seconds) { add(stage, seconds, take_stage_peak_rss_bytes()); }
    void add(const std::string& stage, double seconds, std::int64_t peak_bytes) {
        const std::int64_t sent = take_stage_sent_bytes();
        for (std::size_t i = 0; i < entries_.size(); ++i) {
            if (entries_[i].first == stage) {
                entries_[i].second += seconds;
                peaks_[i] = std::max(peaks_[i], peak_bytes);
                sent_[i] += sent;
                return;
            }
        }
        entries_.emplace_back(stage, seconds);
        peaks_.push_back(peak_bytes);
        sent_.push_back(sent);
    }
    /// A stage that ran before those timed here (e.g. the rectification before the model's
    /// own stages), first in the order.
    void add_before(const std::string& stage, double seconds, std::int64_t peak_bytes, std::int64_t sent_bytes = 0) {
        entries_.emplace(entries_.begin(), stage, seconds);
        peaks_.insert(peaks_.begin(), peak_bytes);
        sent_.insert(sent_.begin(), sent_bytes);
    }
    const std::vector<std::pair<std::string, double>>& entries() const { return entries_; }
    /// The peak resident bytes of each stage, in the order of entries().
    const std::vector<std::int64_t>& peak_bytes() const { return peaks_; }
    std::vector<std::int64_t>& peak_bytes() { return peaks_; }
    /// The bytes each stage handed to MPI to send (core/traffic.hpp), in the order of entries().
    const std::vector<std::int64_t>& sent_bytes() const { return sent_; }
    std::vector<std::int64_t>& sent_bytes() { return sent_; }
    double total() const {
        double sum = 0;
        for (const auto& entry : entries_) sum += entry.second;
        return sum;
    }

private:
    std::vector<std::pair<std::string, double>> entries_;
    std::vector<std::int64_t> peaks_;
    std::vector<std::int64_t> sent_;
};

}  // namespace jsmf
