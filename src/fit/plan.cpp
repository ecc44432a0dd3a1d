// SPDX-License-Identifier: MIT
#include "jsmf/fit/plan.hpp"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdlib>

#include "jsmf/distmat/eig.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/fit/pipeline_choice.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::fit {

double MemoryEstimate::total() const {
    double sum = base;
    for (const auto& [name, bytes] : parts) sum += bytes;
    return sum;
}

MemoryEstimate estimate_dense_memory(Index num_words, std::int64_t nonzeros, int ranks, const FitOptions& options,
                                     double buffer_bytes, double base) {
    const double N = static_cast<double>(num_words), P = std::max(1, ranks);
    const auto& topics = options.hierarchy.empty() ? options.topics : options.hierarchy;
    const double K = topics.empty() ? 1 : *std::max_element(topics.begin(), topics.end());
    // the models rank 0 keeps until the file is written: every K's (a hierarchy's first level
    // alone is N × K; the levels above are K × K)
    double kept = 0;
    if (!options.hierarchy.empty()) kept = options.hierarchy.front();
    else for (const int k : options.topics) kept += k;
    const double local_C = 8 * N * N / P;
    const double p = distmat::eig_block_columns(static_cast<int>(K));
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
    const RectifyOptions r = resolve(options.rectify);
    if (r.method == Rectifier::dr) fitting.parts.emplace_back("DR's work matrix and signs", local_C * 9 / 8);
    if (r.method == Rectifier::dp) fitting.parts.emplace_back("DP's two increments", 2 * local_C);
    if (r.precision == Precision::single && is_projection(r.method))
        fitting.parts.emplace_back("the single-precision iterate", local_C / 2);
    if (options.metrics || topics.size() > 1)
        fitting.parts.emplace_back(options.metrics ? "the original C, for the metrics" : "the original C, for the next K",
                                   local_C);
    fitting.parts.emplace_back("blocks and model (replicated)", replicated);
    if (options.model.solver == recover::Solver::kl)
        fitting.parts.emplace_back("RecoverKL's rows (received and unpacked) and batches",
                                   2 * std::min(std::max(recover::kKlChunkBytes, 8 * N * distmat::threads() *
                                                             static_cast<double>(recover::kl_batch_words(num_words))),
                                                8 * N * N / P) +
                                       distmat::threads() * 6 * 8 * N * static_cast<double>(recover::kl_batch_words(num_words)));
    return counting.total() >= fitting.total() ? counting : fitting;
}

MemoryEstimate estimate_compressed_memory(Index num_words, Index num_docs, std::int64_t nonzeros, int ranks,
                                          const FitOptions& options, double base, bool cooc_file) {
    MemoryEstimate e;
    e.base = base;
    CompressedShape shape = compressed_shape(options, static_cast<double>(num_words), static_cast<double>(num_docs),
                                             static_cast<double>(nonzeros), ranks);
    shape.cooc_file = cooc_file;
    e.stages = compressed_stage_costs(shape, base);
    // The stage with the highest resident peak; where that is above what the stage holds
    // (the write's copy on top of the heap the stages before kept), the difference is a part.
    const auto largest = std::max_element(e.stages.begin(), e.stages.end(), [](const StageCost& a, const StageCost& b) {
        return std::max(a.need, a.peak) < std::max(b.need, b.peak);
    });
    e.phase = largest->stage;
    e.parts = largest->parts;
    if (largest->peak > largest->need)
        e.parts.emplace_back("the heap the stages before kept (freed blocks are reused, not returned)",
                             largest->peak - largest->need);
    return e;
}

int ranks_that_fit(const std::function<MemoryEstimate(int ranks)>& estimate, double memory_per_rank_given) {
    // 2 % and 8 MiB to spare: the process's own memory (the estimate's base, measured at
    // this rank count) grows with the ranks (MPI's shared-memory segments and buffers per
    // peer: 29.2 MiB at 1 and 2 ranks, 31.3 MiB at 3 to 8 on one node, measured), so a
    // count that fits only just here could miss when run (2 % alone missed by 4 KB of
    // 100 MiB, suggested from 2 ranks and run at 4).
    const double memory_per_rank = 0.98 * memory_per_rank_given - 8.0 * 1024 * 1024;
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

MemoryPlan plan_memory(const mpi::Comm& world, const CorpusSource& corpus, const std::string& cooc_file,
                       const FitOptions& options, double memory_per_rank_given, int plan_ranks) {
    MemoryPlan plan;
    if (!cooc_file.empty()) {
        plan.num_words = io::read_cooc_words(world, cooc_file);
    } else {
        for (const auto& f : corpus::inspect_uci_files(world, corpus.files)) {
            plan.num_words = f.header.num_words;
            plan.num_docs += f.header.num_docs;
            plan.nonzeros += f.header.num_nonzeros;
        }
    }
    const double base = static_cast<double>(mpi::allreduce_max(world, current_rss_bytes()));
    const bool dense = options.pipeline == Pipeline::dense;
    const double buffer = cooc_file.empty() ? static_cast<double>(corpus.options.buffer_bytes) : 0.0;
    const auto estimate = [&](int ranks) {
        return dense ? estimate_dense_memory(plan.num_words, plan.nonzeros, ranks, options, buffer, base)
                     : estimate_compressed_memory(plan.num_words, plan.num_docs, plan.nonzeros, ranks, options, base,
                                                  !cooc_file.empty());
    };
    plan.ranks = plan_ranks > 0 ? plan_ranks : world.size();
    plan.estimate = estimate(plan.ranks);
    plan.available = memory_per_rank_given;
    plan.available_from = "given";
    if (!(plan.available > 0) && plan.ranks != world.size()) {
        plan.available = -1;  // this node's memory says nothing of the planned job's ranks
    } else if (!(plan.available > 0)) {
        plan.available = static_cast<double>(memory_per_rank(world));
        plan.available_from = "detected: the node's limit shared by its ranks";
    }
    if (plan.available > 0) {
        plan.fits = plan.estimate.total() <= plan.available;
        plan.ranks_needed = ranks_that_fit(estimate, plan.available);
    }
    return plan;
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
    if (end == begin || scale == 0 || !(value > 0) || !std::isfinite(value))
        throw OptionError(OptionError::quote(option + ": '" + text + "' is not a memory size (e.g. 4G, 512M, or bytes)"));
    return value * scale;
}

}  // namespace jsmf::fit
