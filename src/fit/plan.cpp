// SPDX-License-Identifier: MIT
#include "jsmf/fit/plan.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "jsmf/core/error.hpp"

namespace jsmf::fit {

double MemoryEstimate::total() const {
    double sum = base;
    for (const auto& [name, bytes] : parts) sum += bytes;
    return sum;
}

namespace {
// What the libraries take once at work, beyond the process at its start: BLAS's per-thread
// buffers, HDF5's caches, MPI's shared-memory segments (measured: N = 300 fits peak 28–40 MiB
// above the process at start, 1–4 ranks).
constexpr double kLibrariesAtWork = 32.0 * (1 << 20);
}  // namespace

MemoryEstimate estimate_dense_memory(Index num_words, std::int64_t nonzeros, int ranks, bool metrics,
                                     double buffer_bytes, int max_topics, double base) {
    const double N = static_cast<double>(num_words), P = std::max(1, ranks), K = std::max(1, max_topics);
    const double local_C = 8 * N * N / P;
    const double p = K + std::max(10.0, K / 5);
    // The eigensolver's blocks (three N × p) and the model (B, B̆, the anchors' rows, p),
    // replicated on every rank.
    const double replicated = 8 * N * (3 * p + 4 * K);
    MemoryEstimate counting, fitting;
    counting.base = fitting.base = base;
    counting.phase = "counting C";
    // The exchange buffer fills up to its size on large corpora; on small ones to about
    // 16 bytes per nonzero (the documents' fragments in flight).
    const double buffer = std::min(buffer_bytes, 16.0 * static_cast<double>(nonzeros));
    counting.parts = {{"libraries at work", kLibrariesAtWork}, {"C (local part)", local_C}, {"exchange buffer", buffer}};
    fitting.phase = "rectifying and factorizing C";
    fitting.parts = {{"libraries at work", kLibrariesAtWork}, {"C (local part)", local_C}};
    if (metrics) fitting.parts.emplace_back("the original C, for the metrics", local_C);
    fitting.parts.emplace_back("blocks and model (replicated)", replicated);
    return counting.total() >= fitting.total() ? counting : fitting;
}

MemoryEstimate estimate_compressed_memory(Index num_words, std::int64_t nonzeros, int ranks, int max_topics,
                                          Index checked_rows, double base) {
    const double N = static_cast<double>(num_words), P = std::max(1, ranks), K = std::max(1, max_topics);
    const double l = checked_rows > 0 ? std::min<double>(N, static_cast<double>(checked_rows))
                                      : std::min(N, 10 * K + 1000);
    MemoryEstimate e;
    e.base = base;
    e.phase = "ENN";
    e.parts = {{"libraries at work", kLibrariesAtWork},
               {"documents (local part)", 24.0 * static_cast<double>(nonzeros) / P},
               {"ENN's screen of the checked rows", 8 * l * N / P},
               {"model and factors (replicated)", 48 * N * K}};
    return e;
}

int ranks_that_fit(const std::function<MemoryEstimate(int ranks)>& estimate, double memory_per_rank) {
    if (!(memory_per_rank > 0)) return 0;
    int low = 1, high = 1 << 20;
    if (estimate(high).total() > memory_per_rank) return 0;
    while (low < high) {  // the estimate falls with the ranks
        const int mid = low + (high - low) / 2;
        if (estimate(mid).total() <= memory_per_rank) high = mid;
        else low = mid + 1;
    }
    return low;
}

double parse_bytes(const std::string& text, const std::string& option) {
    const char* begin = text.c_str();
    char* end = nullptr;
    const double value = std::strtod(begin, &end);
    std::string unit(end);
    unit.erase(std::remove_if(unit.begin(), unit.end(), [](unsigned char c) { return std::isspace(c); }), unit.end());
    for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();
    if (unit.size() == 2 && unit.back() == 'I') unit.pop_back();  // GiB = G: powers of 1024 either way
    double scale = 0;
    if (unit.empty()) scale = 1;
    else if (unit == "K") scale = 1024.0;
    else if (unit == "M") scale = 1024.0 * 1024;
    else if (unit == "G") scale = 1024.0 * 1024 * 1024;
    else if (unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
    if (end == begin || scale == 0 || !(value > 0))
        throw InputError(option + ": '" + text + "' is not a memory size (e.g. 4G, 512M, or bytes)");
    return value * scale;
}

}  // namespace jsmf::fit
