// SPDX-License-Identifier: MIT
// `auto`: which pipeline serves a fit best, and why — the dense one (C formed, the papers'
// method) or the compressed one (C never formed, Lee et al. 2021).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/fit/stages.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::fit {

struct PipelineChoice {
    Pipeline pipeline = Pipeline::dense;  ///< dense or compressed, never automatic
    std::string reason;                   ///< one sentence, option names in braces (render_options)
    std::string warning;                  ///< non-empty when dense was needed but C may not fit
};

/// The settings (library names, as OptionError's braces) that only the dense pipeline
/// reads: the rectifiers', the co-occurrence builder's, the layout of C, the dense
/// solvers' and finders' tuning. A caller that knows which settings its user gave passes
/// them to choose_pipeline, so that `auto` never drops a setting the user asked for.
const std::vector<std::string>& dense_only_settings();

/// The settings only the compressed pipeline reads (ENN's): given, `auto` takes it.
const std::vector<std::string>& compressed_only_settings();
/// Local. OptionError "<who> does not use {x}, {y}: drop them, or <instead>" when `given`
/// holds any of `unused` (settings the chosen pipeline would silently drop).
void refuse_settings(const std::vector<std::string>& given, const std::vector<std::string>& unused,
                     const std::string& who, const std::string& instead);

/// Local. The dense-only settings in which `options` differ from the defaults (library
/// names), for callers that cannot tell which settings a user gave: the rectifier's and
/// the dense solvers' tuning; not C's layout (block size, exchange), which changes no result.
std::vector<std::string> changed_dense_settings(const FitOptions& options);

/// Above this many words `auto` takes the compressed pipeline for K topics (when nothing
/// needs the dense one): where the two pipelines' measured costs cross. Measured on KOS
/// pruned to its most frequent words, 2 ranks (jobs/BENCHMARKS.md, 2026-11-27, with ENN's
/// stopping rule and inexact projections), seconds dense vs compressed: K = 10: 0.45 vs
/// 0.36 at 1,000 words, 2.5 vs 0.84 at 2,000, 12.4 vs 1.2 at 4,000; K = 100: 4.6 vs 3.0 at
/// 1,000, 9.9 vs 7.6 at 2,000, 41.5 vs 12.0 at 4,000, 135 vs 26 at 6,906 (the dense exact
/// mode) — quality (coherence, specificity, dissimilarity) within 4 % either way. The fit
/// of those figures: dense ≈ 2.6 s·(N/2000)^1.85·(K/10)^0.63 (C's passes and eigensolves),
/// compressed ≈ 2e-8 s·N·K·l·(iterations/150), l = min(N, 10K + 1000) (ENN's products;
/// 5.5e-8 before the stopping rule and the inexact projections); both scale alike with the
/// ranks, so their crossing does not move with them. The compressed fit is now the faster
/// at every measured size, so the boundary is its floor, 1,000 words: below, both take
/// a few seconds at most, and the dense fit is the papers' method with every metric.
Index dense_words_at_most(int K, int enn_iterations = 150);

/// Local. The pipeline `options.pipeline` names, or for automatic, in this order:
/// dense when the fit needs C itself (RecoverKL, or any of `given` in
/// dense_only_settings()), with a warning when C's working set would
/// not fit; compressed when any of `given` is in compressed_only_settings() (OptionError
/// when the fit also needs the dense one); compressed when C's dense working set
/// (three N × N doubles over `ranks`) exceeds 70 % of `memory_per_rank` (bytes; ≤ 0:
/// unknown, not considered); dense for N ≤ dense_words_at_most(the largest K); compressed
/// above.
PipelineChoice choose_pipeline(const FitOptions& options, Index num_words, int ranks, std::int64_t memory_per_rank,
                               const std::vector<std::string>& given = {});

/// Collective on `world`. choose_pipeline for a fit of `corpus` on `world`'s ranks: N from
/// the corpus's header, the memory from memory_per_rank. Every rank gets the same choice.
PipelineChoice choose_pipeline(const CorpusSource& corpus, const mpi::Comm& world, const FitOptions& options,
                               std::vector<std::string> given = {});

/// Collective on `comm`. The memory one rank may count on: the smallest, over the nodes,
/// of the node's limit (memory_limit_bytes) shared by its ranks. -1 when unknown.
std::int64_t memory_per_rank(const mpi::Comm& comm);

/// Bytes per rank of C's dense working set: three N × N doubles (C, its rectified copy,
/// the eigensolver's and metrics' blocks) spread over `ranks`.
double dense_bytes_per_rank(Index num_words, int ranks);

}  // namespace jsmf::fit
