// SPDX-License-Identifier: MIT
// The pipeline as one library call: corpus (or C) → co-occurrence → rectify → anchors →
// B, A, α → metrics, for every K, and a hierarchy above the first. The jsmf binary's
// `fit` is this call plus flags and files; tests drive it directly at any rank count.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jsmf/core/timer.hpp"
#include "jsmf/fit/cost.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/fit/measure.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/fit/report.hpp"
#include "jsmf/fit/stages.hpp"
#include "jsmf/lowrank/sketch.hpp"
#include "jsmf/io/cooc_file.hpp"

namespace jsmf::fit {

/// What a fit returns. The models' word-indexed arrays (B, B̆ and the unigram): the dense
/// pipeline's are whole on rank 0, the writer's; the compressed pipeline keeps them by rows,
/// each rank its words' (TopicsFound::B_first_row / B_total_rows, model/topic_rows.hpp), as
/// its Y and E′'s triplets (CompressedRecord::Y_rows and correction_*), all written by row
/// blocks and offsets, so that no rank holds an N × K array (ClustAcc takes only the rows its
/// documents use; a hierarchy level's B_words is by rows too). The dense pipeline's hierarchy
/// levels' B_words are rank 0's. A, the anchors, the metrics and the records are
/// the same on every rank.
struct FitResult {
    std::vector<model::Model> models;              ///< one per K, in the order of options.topics
    std::vector<model::HierarchyLevel> hierarchy;  ///< levels 2, 3, … (empty without options.hierarchy)
    io::CoocFileInfo info;                  ///< the vocabulary and the statistics of C
    StageTimes times;                       ///< the shared stages (inspect, cooc) when fit built C
    /// The compressed pipeline: its cost model (fit/cost.hpp) at this run's sizes and
    /// counts, the first K's stages; empty for the dense pipeline.
    std::vector<StageCost> costs;
    /// The compressed pipeline with CompressedOptions::sketch_rank: the sketch of C the
    /// model file keeps (this rank's rows); empty otherwise.
    lowrank::Sketch sketch;
};

/// Local. InputError when C counts fewer documents than options.min_documents (an exact
/// update without its old documents).
void check_documents(const FitOptions& options, std::int64_t counted);

/// Local. OptionError unless every K of `options` (or of its hierarchy's first level)
/// satisfies 2 <= K < N = num_words, besides check(options).
void check(const FitOptions& options, Index num_words);

/// Collective on C.grid(). Stages 2–5 on C (its vocabulary and statistics in `info`):
/// for each K, C is rectified (in a copy when the metrics compare with the original, or
/// when more K follow) and factorized; with options.metrics every metric of the papers is
/// measured, coherence over `counting` (no files: coherence not measured, said in each
/// model's metrics_note); then the hierarchy's levels above the first model. Every rank
/// returns the same result, but for a hierarchy level's B_words (rank 0's: FitResult).
/// Per-rank memory: two local(C) with metrics, else one; plus K×N replicated. Throws StageFailed (on every rank) for bad options or data.
FitResult fit(distmat::DistMatrix C, const io::CoocFileInfo& info, const FitOptions& options,
              const CountingCorpus& counting = {}, const Report& report = {});

/// Collective on `grid`. Stages 0–5 from a corpus: C built by build_cooc (its layout's
/// block size from corpus.options), then fit(C, …) with the corpus counted again for
/// coherence when options.metrics. With options.pipeline == compressed: fit_compressed
/// on the grid's communicator.
/// Local. OptionError for what the compressed pipeline cannot do (AnchorFree, RecoverKL,
/// a finder other than pivoted QR) and its settings out of range:
/// fit_compressed's first check, and check(Job)'s where the compressed pipeline is asked for
/// (so a dry run refuses what the run would).
void check_compressed(const FitOptions& options);

/// Collective on `world`. The compressed pipeline (lowrank/), C never formed: the corpus is
/// read once into shards (each rank its pieces), C is applied from the documents
/// (lowrank::DocumentOperator), and per K: Y₀ from its top-K eigenpairs
/// (lowrank::compress), ENN (options.compressed.iterations), LAW. The models carry B, B̆,
/// A, the anchors and p(word) = (YYᵀ + E′)1; rectification.method is enn. Metrics: the
/// model's own (specificity, dissimilarity, …), coherence from a second pass over the
/// corpus, and those that compare with C (lowrank::factor_metrics): exact against YYᵀ + E′,
/// against the documents' C exact on span([Y B]) and estimated beyond it by
/// options.compressed.metric_probes probes. Refuses what it
/// cannot do (check_compressed).
/// Per-rank memory: the rank's documents (≈ 24 bytes per nonzero), O(N/P · (K + l))
/// for Y, the blocks, E and the models (B and B̆ per K, by rows: FitResult).
FitResult fit_compressed(const CorpusSource& corpus, const mpi::Comm& world, const FitOptions& options,
                         const Report& report = {});

/// Collective on `world`. The compressed pipeline on a co-occurrence file's C (jsmf cooc's,
/// checked as io::check_cooc_values does): each rank reads its rows of C
/// (io::read_cooc_rows; 8 N²/P bytes, a third of the dense pipeline's working set) and
/// applies them (lowrank::MatrixOperator: X gathered, one DGEMM), then per K as above.
/// `corpus.files` (may be empty) are the documents that built C, for coherence and
/// ClustAcc (checked against C's N; their filter the file's, as the dense fit's).
FitResult fit_compressed(const std::string& cooc_file, const CorpusSource& corpus, const mpi::Comm& world,
                         const FitOptions& options, const Report& report = {});

FitResult fit(const CorpusSource& corpus, const std::shared_ptr<const distmat::Grid>& grid, const FitOptions& options,
              const Report& report = {});

}  // namespace jsmf::fit
