// SPDX-License-Identifier: MIT
// The fit's stages one by one, for callers that compose them differently from fit()
// (jsmf rectify checkpoints the rectification; jsmf sweep factorizes one rectified C with
// several solvers; jsmf eval rectifies again to measure).
#pragma once

#include <Eigen/Core>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/cooc/cooc.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/fit/report.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/recover/recover.hpp"
#include "jsmf/rectify/projection.hpp"

namespace jsmf::fit {

/// A corpus in UCI bag-of-words files and how C is built from it.
struct CorpusSource {
    std::vector<std::string> files;   ///< docword files (plain or .gz), dealt out to ranks
    std::string vocab;                ///< the vocab file
    cooc::CoocOptions options;        ///< block_size is the layout of C
};

/// C and what was counted with it.
struct BuiltCooc {
    distmat::DistMatrix C;
    io::CoocFileInfo info;
    double build_seconds = 0;         ///< the accumulation alone (for throughput figures)
};

/// Collective on `grid`. Stages 0–1: reads the corpus in shards (each rank its pieces) and
/// builds C (Eq. 5, or the tf-idf second moment); adds "inspect" and "cooc" to `times`.
/// Per-rank memory: local(C) + options.buffer_bytes.
BuiltCooc build_cooc(const CorpusSource& corpus, const std::shared_ptr<const distmat::Grid>& grid,
                     StageTimes& times, const Report& report = {});

/// Called between AP, DR or DP iterations, after the stop decisions of the one done and only
/// when another follows (e.g. to write a checkpoint); collective.
using ProjectionHook = std::function<void(const rectify::ProjectionState&, const rectify::IterateView&)>;

/// Collective on C.grid(). Stage 2: rectifies C in place for K topics by options.method
/// (resolved first) and returns its trace. `resume` continues an AP, DR or DP run from a
/// checkpoint's state. The quality and fixed-point rules look at the anchors the fit would
/// find: among `candidates` (anchors::Candidates; empty: every word).
model::RectificationTrace rectify(distmat::DistMatrix& C, int K, const RectifyOptions& options, const Report& report = {},
                           const ProjectionHook& hook = {}, rectify::ProjectionState* resume = nullptr,
                           const anchors::Candidates& candidates = {});

/// Checkpoints of a rectification by AP, DR or DP (jsmf rectify's): the iterate with its
/// state, written atomically to `path` every `every` iterations and at an agreed stop.
struct RectifyCheckpoints {
    std::string path;         ///< empty: none (a stop signal still stops every rank, exit code 6)
    int every = 10;
    io::Provenance provenance;  ///< the file's root attributes
};

/// Collective on C.grid(). rectify() for AP, DR and DP with checkpoints: between iterations
/// the ranks agree on any stop signal (SIGUSR1, SIGTERM; core/stop.hpp, requests while the
/// iterations run); a checkpoint is written every `checkpoints.every` iterations and at a
/// stop, after which every rank throws stopped() together (exit code 5 when saved, else
/// 6). A checkpoint that cannot be written is a warning; the run goes on. `info` is C's
/// vocabulary and statistics, recorded with each checkpoint. Other rectifiers: rectify().
model::RectificationTrace rectify_checkpointed(distmat::DistMatrix& C, int K, const RectifyOptions& options,
                                        const io::CoocFileInfo& info, const RectifyCheckpoints& checkpoints,
                                        const Report& report = {}, rectify::ProjectionState* resume = nullptr);

/// Local. The trace of an AP, DR or DP run so far (for checkpoints).
model::RectificationTrace trace_of(Rectifier method, int K, const rectify::ProjectionState& state);
/// Local. The replicated state a checkpoint needs beyond the warm blocks, by name, and
/// its restoration (with the checks from the saved trace).
std::vector<std::pair<std::string, Eigen::MatrixXd>> projection_state_matrices(const rectify::ProjectionState& state);
void restore_projection_state(rectify::ProjectionState& state, const model::RectificationTrace& saved,
                              const std::vector<std::pair<std::string, Eigen::MatrixXd>>& named);

/// Collective on C.grid(). The state to continue an AP, DR or DP run from the checkpoint
/// file `checkpoint` (io::read_checkpoint; DP's N × N increments read in C's layout),
/// whose iterate C the caller has read. Throws StageFailed on every rank unless the
/// checkpoint continues a run for K topics by `method` and its checksum holds.
rectify::ProjectionState read_resume_state(const std::string& checkpoint, const distmat::DistMatrix& C, int K,
                                           Rectifier method);

/// The settings a resumed rectification must share with its checkpoint to continue it
/// bit for bit, named as the files record them: the options that change the arithmetic
/// (stop, tolerance, eigensolver, …, precision) and the layout's block_size, grid and
/// threads. A resume with others still runs; its result is not an uninterrupted run's.
const std::vector<std::string>& resume_settings();
/// A setting of resume_settings() that a resumed run changes.
struct ChangedSetting {
    std::string name, saved, now;
};
/// Local. The settings of resume_settings() in `saved` (what a checkpoint recorded) whose
/// value in `now` (the resumed run's) differs, in the order of `saved`; a setting absent
/// from either is not compared.
std::vector<ChangedSetting> changed_settings(const Entries& saved, const Entries& now);

/// What the iterations of a rectification cost, from its trace (throughput figures).
struct RectifyWork {
    double iterations = 0;    ///< iterations in the trace (at least 1)
    double eig_rounds = 0;    ///< eigensolver rounds, summed over the iterations
    double eig_products = 0;  ///< block products C·X, summed
    /// DGEMM-type flops: 2·N²·p per product (p = K + max(10, K/5)) and 2·N²·K per
    /// reconstruction U Λ₊ Uᵀ (DR: two per iteration); the Lanczos checks' memory-bound
    /// matrix-vector products are not counted. 0 for DC and none.
    double flops = 0;
};
/// Local. The work of the rectification `trace` of an N × N C for K topics by `method`.
RectifyWork rectify_work(const model::RectificationTrace& trace, Rectifier method, Index N, int K);

/// Local. A checkpoint of an AP, DR or DP run after state.iterations_done iterations:
/// the warm blocks and bounds, DP's increments (pointers into `state`), the replicated
/// state by name; io::write_cooc_file writes it with the iterate and trace_of(state).
io::CheckpointRecord checkpoint_of(const rectify::ProjectionState& state);
/// Local. The state to continue from, rebuilt from a checkpoint's trace and record (DP's
/// N × N increments are read by the caller, collectively, into state.increments).
rectify::ProjectionState resume_state(const model::RectificationTrace& saved, const io::CheckpointRecord& checkpoint);

/// Collective on `comm`. RECOVER-ALPHA (practical-jsmf Alg. 4) on A: α, α₀, the fit's
/// residual; the same on every rank.
model::AlphaFit fit_alpha(const mpi::Comm& comm, const Eigen::MatrixXd& A);

/// Collective on C.grid(). Stages 3–4 on the rectified C: anchors (options.finder, or the
/// given anchor words), B by Bayes' rule after each word's simplex-constrained least
/// squares, A (Alg. 4 or least squares), α; or, with an AnchorFree method, AnchorFree
/// (Fu et al. §4): B̃ = UΛ^{1/2} from the K top eigenpairs, M by the LP or PDS algorithm,
/// C* = B̃M, E*; then B = max(C*, 0) with unit columns, A = E*/ΣE* when E* >= 0 to
/// rounding (else E* itself, with a warning), B̆ by Bayes' rule with the topic marginals,
/// and each topic's representative word argmax_i B̆(k, i) in place of an anchor. `seed`
/// drives FastAnchorWords' projection and the AnchorFree eigensolver's start. Records
/// `trace` and the stage times in the model. `progress`: checkpoints between the
/// word-by-word solves of B (recover::RecoverProgress), and their resume. `doc_freq`
/// (per word, the documents that contain it; C's statistics) applies
/// options.anchor_min_df; empty: every word may be an anchor (a hierarchy's upper levels).
model::Model factorize(const distmat::DistMatrix& C, int K, const ModelOptions& options, const model::RectificationTrace& trace,
                Seed seed, const Report& report = {}, const recover::RecoverProgress* progress = nullptr,
                const anchors::DocFreq& doc_freq = anchors::DocFreq());

/// Collective on `comm`. AnchorFree's M (LP or PDS, by options.method, with its
/// settings) on a square root B̃ held by rows (anchorfree_lp's by-rows layout: rows
/// [first_row, first_row + B_local.rows()) of N), its report into `record`.
Eigen::MatrixXd anchorfree_m(const mpi::Comm& comm, const Eigen::MatrixXd& B_local, Index first_row, Index N,
                             const ModelOptions& options, model::AnchorFreeRecord& record);

/// Local. Moves AnchorFree's topics (anchorfree::topics_of, by rows or replicated) and
/// C*'s record (M, E*, C*'s residue) into `m`: B, B̆, A, the representative words as its
/// anchors; warns when A is E* itself (not a joint distribution).
void take_anchorfree_topics(model::Model& m, anchorfree::AnchorFreeTopics&& topics,
                            const anchorfree::AnchorFreeResult& r, const Report& report);

/// Local. What was found (anchors, the solver's convergence, α), as report lines.
/// Local. The warning, when some words' B̆ stopped before their solver's tolerance (both
/// pipelines; describe says it for the dense one).
void warn_unconverged(const model::Model& m, const Report& report);
void describe(const model::Model& m, const std::vector<std::string>& vocab, const Report& report);

/// Collective on `grid`. Levels 2, 3, … of a hierarchy (practical-jsmf §4: "the rectified
/// A of one level is the co-occurrence matrix of the next") above `first`, with K =
/// levels[1], levels[2], …; each level rectified and factorized as any C (no α). Each
/// level's B_words = first.B B₂ …: by rows, in first's blocks, where first is kept by rows
/// (HierarchyLevel::B_words_first_row); else on rank 0 only (where first.B is whole).
std::vector<model::HierarchyLevel> fit_hierarchy(const model::Model& first, const std::vector<int>& levels,
                                          const std::shared_ptr<const distmat::Grid>& grid, int block_size,
                                          const RectifyOptions& rectify_options, const ModelOptions& model_options,
                                          const Report& report = {});

/// Local. "12.3 MiB".
std::string mib(double bytes);

}  // namespace jsmf::fit
