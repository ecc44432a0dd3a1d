// SPDX-License-Identifier: MIT
// Wall-clock stage timers: seconds per named stage, in the order stages ran.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

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

/// Local. Accumulates seconds per stage name; a stage timed twice adds up.
class StageTimes {
public:
    void add(const std::string& stage, double seconds) {
        for (auto& entry : entries_) {
            if (entry.first == stage) {
                entry.second += seconds;
                return;
            }
        }
        entries_.emplace_back(stage, seconds);
    }
    const std::vector<std::pair<std::string, double>>& entries() const { return entries_; }
    double total() const {
        double sum = 0;
        for (const auto& entry : entries_) sum += entry.second;
        return sum;
    }

private:
    std::vector<std::pair<std::string, double>> entries_;
};

}  // namespace jsmf
