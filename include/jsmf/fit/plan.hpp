// SPDX-License-Identifier: MIT
// What a fit will need before it runs: the per-rank memory of each pipeline, from the
// input's header alone, and the rank count at which it fits (jsmf fit --dry-run, and the
// refusal of a run that would not fit).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "jsmf/core/types.hpp"

namespace jsmf::fit {

/// A per-rank peak memory estimate, in bytes: the process before any data (MPI and the
/// libraries, measured) and the parts of the phase that peaks.
struct MemoryEstimate {
    double base = 0;
    std::string phase;                                   ///< which phase peaks
    std::vector<std::pair<std::string, double>> parts;   ///< that phase's data, by name
    double total() const;
};

/// Local. The dense pipeline at `ranks` ranks: the larger of counting C (its local part
/// and the exchange buffer; `nonzeros` of the corpus, 0 for C from a file) and fitting
/// (C's local part, twice with the metrics, which compare with the original; plus the
/// eigensolver's blocks and the model, replicated). `base`: the process before any data.
MemoryEstimate estimate_dense_memory(Index num_words, std::int64_t nonzeros, int ranks, bool metrics,
                                     double buffer_bytes, int max_topics, double base);

/// Local. The compressed pipeline at `ranks` ranks: the rank's documents (24 bytes per
/// nonzero), ENN's screen over the l checked rows (l × N/P doubles) and the gathered
/// N × K model and factors (replicated).
MemoryEstimate estimate_compressed_memory(Index num_words, std::int64_t nonzeros, int ranks, int max_topics,
                                          Index checked_rows, double base);

/// Local. The smallest rank count (up to 2^20) whose estimate fits `memory_per_rank`
/// bytes, each rank having that much; 0 if none does.
int ranks_that_fit(const std::function<MemoryEstimate(int ranks)>& estimate, double memory_per_rank);

/// Local. "4G", "512M", "2.5GiB", "1000000" (bytes) → bytes; InputError otherwise.
double parse_bytes(const std::string& text, const std::string& option);

}  // namespace jsmf::fit
