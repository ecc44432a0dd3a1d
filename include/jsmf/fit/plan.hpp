// SPDX-License-Identifier: MIT
// What a fit will need before it runs: the per-rank memory of each pipeline, from the
// input's headers alone, and the rank count at which it fits (jsmf fit --dry-run, and the
// refusal of a run that would not fit).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/fit/cost.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/fit/stages.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::fit {

/// A per-rank peak memory estimate, in bytes: the process before any data (MPI and the
/// libraries, measured) and the parts of the phase that peaks.
struct MemoryEstimate {
    double base = 0;
    std::string phase;                                   ///< which phase peaks
    std::vector<std::pair<std::string, double>> parts;   ///< that phase's data, by name
    std::vector<StageCost> stages;                       ///< the compressed pipeline's cost model, by stage
    double total() const;
};

/// Local. The dense pipeline at `ranks` ranks: the larger of counting C (its local part
/// and the exchange buffer; `nonzeros` of the corpus, 0 for C from a file) and fitting:
/// C's local part, the rectifier's N × N work (DR: one more and a byte per entry; DP: its
/// two increments; single precision: a float copy), the original C when the metrics
/// compare with it (or several K rectify copies), and the eigensolver's blocks and the
/// model, replicated. `base`: the process before any data.
MemoryEstimate estimate_dense_memory(Index num_words, std::int64_t nonzeros, int ranks, const FitOptions& options,
                                     double buffer_bytes, double base);

/// Local. The compressed pipeline at `ranks` ranks: its cost model by stage from the
/// headers (fit/cost.hpp; the largest rank, ⌈N/P⌉ words), the phase the stage that needs
/// the most. `cooc_file`: C's rows read from a co-occurrence file instead of the documents.
MemoryEstimate estimate_compressed_memory(Index num_words, Index num_docs, std::int64_t nonzeros, int ranks,
                                          const FitOptions& options, double base, bool cooc_file);

/// Local. The smallest rank count (up to 2^20) whose estimate fits 98 % of `memory_per_rank`
/// bytes (2 % spare: the measured base grows with the ranks), each rank having that much; 0 if none does.
int ranks_that_fit(const std::function<MemoryEstimate(int ranks)>& estimate, double memory_per_rank);

/// What a fit will need and whether it fits, from the headers.
struct MemoryPlan {
    Index num_words = 0, num_docs = 0;  ///< num_docs: 0 for C from a file
    std::int64_t nonzeros = 0;
    int ranks = 0;                      ///< the rank count planned for
    MemoryEstimate estimate;            ///< at that rank count
    double available = -1;              ///< bytes per rank; ≤ 0: unknown
    std::string available_from;         ///< "given" or "detected: …"
    bool fits = true;                   ///< true when the memory is unknown
    int ranks_needed = 0;               ///< the smallest rank count that fits (0: unknown or none)
};

/// Collective on `world`. The plan of a fit of `corpus` (its files' headers), or of the
/// co-occurrence file `cooc_file` when not empty, by options.pipeline (dense or
/// compressed), against `memory_per_rank` bytes (≤ 0: memory_per_rank(world), detected),
/// at `ranks` ranks (≤ 0: world's). The same on every rank.
MemoryPlan plan_memory(const mpi::Comm& world, const CorpusSource& corpus, const std::string& cooc_file,
                       const FitOptions& options, double memory_per_rank, int ranks = 0);

/// Local. "4G", "512M", "2.5GiB", "1000000" (bytes) → bytes; InputError otherwise.
double parse_bytes(const std::string& text, const std::string& option);

}  // namespace jsmf::fit
