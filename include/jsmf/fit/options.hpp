// SPDX-License-Identifier: MIT
// What a fit does, as typed options with the defaults the jsmf binary gives its users
// (one place for them: the binary turns flags into these structs and nothing more).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/anchors/finder.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/names.hpp"
#include "jsmf/core/types.hpp"
#include "jsmf/distmat/eig.hpp"
#include "jsmf/lowrank/sketch.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/recover/recover.hpp"
#include "jsmf/rectify/projection.hpp"
#include "jsmf/rectify/stopping.hpp"

namespace jsmf::fit {

/// How C is rectified (rectify/projection.hpp): ap, dr, dp, dc or none.
using rectify::Rectifier;
/// AP's acceleration on the rank-K factor.
enum class Acceleration { none, anderson };
/// AP's arithmetic: double reproduces the papers; single halves the memory traffic.
enum class Precision { double_, single };
/// How to fit (model/model.hpp: the model records it).
using model::Method;
/// diagonal: A = D⁻¹ C_SS D⁻¹ (Alg. 4); least_squares: min ‖C − B A Bᵀ‖ (Arora et al.).
enum class RecoverA { diagonal, least_squares };

/// Each enum's names (core/names.hpp: name_of, parse_name, choices): the files', the
/// logs', the help's and the binary's flags' one spelling.
inline const Names<Acceleration, 2>& names(Acceleration) {
    static const Names<Acceleration, 2> table{"none", "anderson"};
    return table;
}
inline const Names<Precision, 2>& names(Precision) {
    static const Names<Precision, 2> table{"double", "single"};
    return table;
}
inline const Names<RecoverA, 2>& names(RecoverA) {
    static const Names<RecoverA, 2> table{"diagonal", "ls"};
    return table;
}

/// Stage 2. Unset optionals are decided by resolve() from the stop rule: the default
/// (quality) stops once the topics' measures settle, capped at `max_iterations` (1,000),
/// with ω = 1.9 and eigensolves to 0.1 × the last change; `iterations` is the papers' plain
/// AP: 150 iterations (or until `tolerance`), ω = 1, exact eigensolves. A count of
/// iterations given without a stop rule is that count (stop iterations): a cap is
/// max_iterations.
struct RectifyOptions {
    Rectifier method = Rectifier::ap;
    /// Unset: iterations when a tolerance or a count of iterations is given, else quality.
    std::optional<rectify::StopRule> stop;
    /// Resolved: the iterations the run may take, the count of stop iterations (unset: 150)
    /// or the cap of the others (max_iterations, unset: 1000).
    std::optional<int> iterations;
    std::optional<int> max_iterations;   ///< the cap of stop quality and fixed-point (not with iterations)
    std::optional<double> tolerance;     ///< relative change to stop at (iterations only); unset acts as 0
    std::optional<double> relaxation;    ///< AP's over-relaxation ω; unset: 1.9 (quality, fixed point) or 1
    Acceleration acceleration = Acceleration::none;
    int anderson_depth = 5;
    double anderson_below = 1e-6;        ///< Anderson starts after the change falls to this
    std::optional<double> eig_tolerance_factor;  ///< unset: 0.1 (quality, fixed point) or 0 (exact)
    int check_every = 10;                ///< iterations between the stopping rule's looks at the topics
    Precision precision = Precision::double_;
    distmat::EigMethod eigensolver = distmat::EigMethod::subspace;
    int eig_check_steps = 10;            ///< Lanczos steps of the missed-eigenvalue check (0: off)
    int eig_check_every = 10;            ///< AP, DR, DP: run it every this many iterations
    int permutations = 30;               ///< DC's random permutations T
    Seed seed = 1;                       ///< DC's permutations and FastAnchorWords' projection
    double progress_seconds = 5;         ///< at most one progress report per this many seconds
};
/// Local. The options with every unset value decided (idempotent); OptionError for
/// contradictions and values out of range.
RectifyOptions resolve(const RectifyOptions& options);
using rectify::is_projection;

/// Stages 3–4: anchors, B, A (and α) on the rectified C, or AnchorFree.
struct ModelOptions {
    Method method = Method::anchors;
    anchors::Finder finder = anchors::Finder::qr;
    int projection_dim = 1000;           ///< FastAnchorWords' random projection dimension
    /// Anchor candidates (every finder, both pipelines): only words in at least this many
    /// of the used documents may be anchors (Arora et al.'s threshold; 0: every word).
    /// A word in a handful of documents has a row of C̄ far from all others, which every
    /// greedy finder picks first on an unrectified C; 10 keeps them out while leaving a
    /// curated vocabulary (the papers' N most informative words) untouched in practice.
    std::int64_t anchor_min_df = 10;
    /// Anchor words given by id (K = their number); empty: found by `finder`.
    std::vector<Index> anchor_words;
    recover::Solver solver = recover::Solver::active_set;
    int solver_iterations = 500;
    double solver_tolerance = 1e-5;
    solvers::AdmmStop admm_stop = solvers::AdmmStop::step;
    RecoverA recover_a = RecoverA::diagonal;
    bool alpha = false;                  ///< also fit a Dirichlet α to A (Alg. 4)
    anchorfree::LpOptions lp;
    anchorfree::PdsOptions pds;
};
/// Local. OptionError for values out of range and options that exclude each other.
void check(const ModelOptions& options);

/// Local. Of the `given` settings (option names, as {names} in messages: "pds_mu",
/// "finder", …), each that the rectifier or the model as configured would not read: a
/// method's tuning without that method (--pds-mu without {method} anchorfree-pds, DC's
/// {permutations} with AP, an iterative solver's {solver_iterations} with the active set,
/// AP's stopping rules with {rectify} none or dc, …), with the setting it belongs to.
/// Silently ignoring one is how a mistyped method goes unnoticed; the fit refuses them
/// (check(Job)). Settings that apply to every fit are never listed.
struct UnusedSetting {
    std::string name;   ///< the given setting
    std::string needs;  ///< what would read it, e.g. "{method} anchorfree-pds"
};
std::vector<UnusedSetting> unused_settings(const std::vector<std::string>& given, const RectifyOptions& rectify);
std::vector<UnusedSetting> unused_settings(const std::vector<std::string>& given, const ModelOptions& model);
/// Local. OptionError naming every unused setting and what it needs, if any.
void refuse_unused(const std::vector<UnusedSetting>& unused);

/// Which pipeline fits: the papers' (C formed, N × N, distributed) or the compressed one
/// (Lee et al., ICML 2021: C only as an operator from the documents, rectified in its
/// rank-K factor by ENN, anchors and topics by LAW; memory O(N·K) per rank, not O(N²)).
/// automatic (`auto`, the default) picks one of the two per fit: choose_pipeline.
enum class Pipeline { dense, compressed, automatic };
inline const Names<Pipeline, 3>& names(Pipeline) {
    static const Names<Pipeline, 3> table{"dense", "compressed", "auto"};
    return table;
}

/// The compressed pipeline's settings (lowrank/).
struct CompressedOptions {
    int iterations = 150;                ///< ENN iterations (the authors' runs: 150): exactly these, or a cap (enn_most_iterations)
    /// The default ("settled") mode: from Y₀, lowrank::kSettledIterations over-relaxed
    /// iterations with inexact middle projections, sooner at a fixed point; from a warm start,
    /// until its looks at the topics settle (lowrank::EnnStop). False (--enn-iterations
    /// given): exactly `iterations` plain, exact ones, as the authors.
    bool stop_when_settled = true;
    Index checked_rows = 0;              ///< ENN's l; 0: min(N, 10K + 1000)
    /// ENN's over-relaxation ω (lowrank::EnnOptions::relaxation); unset: the mode's
    /// (enn_relaxation_of). 1: the authors'.
    std::optional<double> enn_relaxation;
    /// The most a product's exchange buffers take per rank, in bytes (lowrank::DocumentOperator:
    /// wider products run in column panels, with the same bits); 0: four of the factor's
    /// N/P × p blocks, at least 64 MiB (falls like 1/P).
    double product_buffer_bytes = 0;
    /// Relative residual of the eigensolves (lowrank::default_eig_options): all of them with
    /// a fixed ENN count; in the settled mode the range finder takes range_tolerance and
    /// ENN's middle projections a looser one (lowrank::EnnOptions::forcing).
    double eig_tolerance = 1e-11;
    /// The range finder's relative residual in the settled mode (at least eig_tolerance; a
    /// fixed count solves to eig_tolerance, as before). Its start is seeded rows, the same at
    /// any rank count, so a looser solve still lands in the same place: KOS, K = 100, 1e-8
    /// took 98 products instead of 122, B within 1e-7 (L1 per topic) of the 1e-11 model's;
    /// 1e-6 took 74, moved a near-tied anchor and left models of 1–3 ranks 2.6e-10 apart
    /// instead of 1e-13 (its locked pairs stop at a hundredth of the tolerance).
    double range_tolerance = 1e-8;
    /// The eigensolver's random start: the result depends on it only to the solves'
    /// tolerance (the settled mode's range finder: 1e-8 of λ₁).
    Seed seed = 1;
    /// Random probes of the metrics that compare with the documents' C (recovery_original,
    /// approximation_original; lowrank::factor_metrics), beyond the span of [Y B] (at most
    /// 2K directions) they measure exactly: per word at most ±(2/p)^½/2 of the recovery
    /// (1σ), times the share of its square beyond that span (of all words' squares: KOS,
    /// K = 100, 70 %; the NYTimes shape 75 %); the mean over words and the approximation far
    /// closer. 256 probes and the 2K exact columns (456 columns of products at K = 100, where
    /// 1,024 bare probes took 1,024) measure a word about 1.4 times less closely than those
    /// 1,024 (KOS: 3.1 % against 2.2 %) and the approximation far more closely (its square's
    /// standard error on KOS 1.0e-3 against 1.9e-2; at the NYTimes shape 3.5e-9 against 4.3e-2).
    int metric_probes = 256;
    /// The range finder's start (this rank's rows of N × k, k ≤ its block; the rows the
    /// operator gives the rank, RowPartition::balanced): an earlier model's B, whose columns
    /// span about C's top eigenvectors when C changed little (fit --update). Empty: the
    /// seeded random start. The result is the same to the solver's tolerance either way.
    Eigen::MatrixXd range_start;
    /// The rank r >= K of the sketch of C the model file keeps (lowrank::Sketch: C's top-r
    /// eigenpairs, its diagonal, unigram and document frequencies) for a later update
    /// without the documents (fit --update-mode sketch). 0: none. The range finder solves
    /// max(K, r) pairs for the first K (one solve); at r near N, C's exact decomposition.
    int sketch_rank = 0;
    /// fit --update-mode sketch: the old documents' sketch (from the model updated; this
    /// rank's rows of RowPartition::balanced), added to the new documents' C with its weight
    /// times `decay` (lowrank::SketchOperator). Null: a fit of the documents alone.
    std::shared_ptr<const lowrank::Sketch> old_sketch;
    double decay = 1.0;  ///< γ in (0, 1]: the old statistics' weight before the sum
    /// With old_sketch, in the settled mode (fit --warm-enn): the base's rectified factor
    /// (ENN's Y, this rank's rows, of this K). ENN then starts from it moved by what the new
    /// documents changed in C's top K (lowrank::warm_enn_start) and looks at the topics every
    /// lowrank::kWarmLookEvery iterations instead of redoing the base's iterations from Y₀.
    /// Faster, but biased: the rectified factor ENN reaches depends on its start, and a
    /// chain of warm updates carries each start's path forward (KOS, K = 100, 10 batches:
    /// coherence 4 % and specificity 11 % below the fresh fit's, where ENN from Y₀ on the
    /// same sketches ends within 0.1 % and 0.6 %; jobs/BENCHMARKS.md). Empty: ENN from Y₀.
    Eigen::MatrixXd old_factor;
};

/// Whether ENN of this K starts warm: a sketch update asked to (old_factor), in the settled
/// mode, with its base's factor of this K.
bool warm_enn(const CompressedOptions& o, int K);
/// ENN's iterations for K: settled from Y₀, at most min(o.iterations,
/// lowrank::kSettledIterations); a fixed count exactly o.iterations, and a warm start (its
/// looks may stop it) at most o.iterations, as measured for it.
int enn_most_iterations(const CompressedOptions& o, int K);
/// ENN's over-relaxation ω for K: the one given, or lowrank::kSettledRelaxation settled
/// from Y₀, or 1 (the authors' ENN) for a fixed count and a warm start.
double enn_relaxation_of(const CompressedOptions& o, int K);
/// The iterations between a settled ENN's looks at the topics: lowrank::kWarmLookEvery from a
/// warm start, 0 (none) from Y₀ or for a fixed count.
int enn_look_every(const CompressedOptions& o, int K);

/// Checkpoints of a fit in progress, for one K. The long stages' state is written to
/// `path` atomically every `seconds` (0: at every chance) and when a stop signal arrives
/// (core/stop.hpp): the compressed pipeline's range finder and ENN; the dense pipeline's
/// C once counted, its rectification, and the word-by-word recovery of B.
struct CheckpointOptions {
    std::string path;      ///< empty: none
    double seconds = 300;
    /// Continue from this checkpoint (the same input and settings; the compressed
    /// pipeline's at any rank count, the dense pipeline's on the same grid).
    std::string resume;
    /// The dense pipeline's recovery of B agrees on checkpoints and stops after every
    /// `recover_batch` words per rank (each word one small solve).
    Index recover_batch = 4096;
};

/// A whole fit from C: one model per K, optionally a hierarchy above the first, and the
/// papers' metrics.
struct FitOptions {
    std::vector<int> topics = {10};      ///< one model per K (one C)
    /// Topics of topics: {K₁, K₂, …} decreasing; K₁ replaces `topics` (practical-jsmf §4).
    std::vector<int> hierarchy;
    RectifyOptions rectify;
    ModelOptions model;
    bool metrics = true;                 ///< measure every metric of the papers (keeps a copy of C)
    /// The documents' labels (one integer per line, one line per document of the corpus,
    /// in its order; jsmf prepare's labels file): with the metrics, ClustAcc of every model
    /// (fit::measure_clustering). Empty: none.
    std::string labels;
    Pipeline pipeline = Pipeline::automatic;
    CompressedOptions compressed;
    /// An exact update (fit --update): C must count at least this many documents, the
    /// base's M (the old documents read again with the new); 0: no bound.
    std::int64_t min_documents = 0;
    CheckpointOptions checkpoint;
};
/// Local. OptionError for bad topic lists, hierarchies and combinations (K against N is
/// checked by fit(), which knows N).
void check(const FitOptions& options);

/// The options as (name, value) pairs, as the model file records them (root attributes).
using Entries = std::vector<std::pair<std::string, std::string>>;
Entries entries(const RectifyOptions& options);  ///< resolved first
Entries entries(const ModelOptions& options);

}  // namespace jsmf::fit
