// SPDX-License-Identifier: MIT
// The compressed pipeline as a fit: documents → operator → Y₀ → ENN → LAW → models.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "fit/fit_k.hpp"
#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/distmat/eig.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/anchors/finder.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/eval/row_metrics.hpp"
#include "jsmf/fit/stages.hpp"
#include "jsmf/fit/fit.hpp"
#include "jsmf/fit/checkpoints.hpp"
#include "jsmf/io/compressed_checkpoint.hpp"
#include "jsmf/lowrank/doc_operator.hpp"
#include "jsmf/lowrank/enn.hpp"
#include "jsmf/lowrank/factor_metrics.hpp"
#include "jsmf/lowrank/law.hpp"
#include "jsmf/lowrank/matrix_operator.hpp"
#include "jsmf/model/topic_rows.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/recover/recover.hpp"

namespace jsmf::fit {
namespace {


// What a checkpoint must share with the run that resumes it: everything that changes the
// arithmetic — the settings, and the source by its counts (`source`: the documents', or a
// co-occurrence file's with a hash of C) and a hash of every word's document frequency
// (integers: the same bits at any rank count), so that another corpus with the same counts,
// or the same one under another vocabulary order, is told apart.
std::vector<std::pair<std::string, std::string>> checkpoint_settings(const lowrank::CoocOperator& C,
                                                                     const std::vector<std::int64_t>& doc_freq,
                                                                     const SourceSettings& source,
                                                                     const CompressedOptions& o, int K) {
    std::uint64_t local = 0;
    const Index begin = C.rows().begin(C.comm().rank());
    for (std::size_t i = 0; i < doc_freq.size(); ++i) {  // Σ over words of a mix of (word, df)
        std::uint64_t z = static_cast<std::uint64_t>(begin + static_cast<Index>(i)) * 0x9e3779b97f4a7c15ULL ^
                          static_cast<std::uint64_t>(doc_freq[i]) * 0xc2b2ae3d27d4eb4fULL;
        z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ULL;
        local += z ^ (z >> 29);
    }
    std::vector<std::int64_t> all = mpi::gather_concat(C.comm(), std::vector<std::int64_t>{static_cast<std::int64_t>(local)}, 0);
    std::uint64_t total = 0;
    for (const std::int64_t v : all) total += static_cast<std::uint64_t>(v);
    std::int64_t shared = static_cast<std::int64_t>(total);
    mpi::broadcast(C.comm(), shared, 0);
    std::vector<std::pair<std::string, std::string>> settings{{"estimator", name_of(C.estimator())}};
    settings.insert(settings.end(), source.begin(), source.end());
    settings.insert(settings.end(), {
            {"doc_freq_hash", fmt::format("{:016x}", static_cast<std::uint64_t>(shared))},
            {"seed", std::to_string(o.seed)},
            {"eig_tolerance", fmt::format("{:.17g}", o.eig_tolerance)},
            {"range_tolerance", fmt::format("{:.17g}", o.stop_when_settled ? std::max(o.eig_tolerance, o.range_tolerance)
                                                                            : o.eig_tolerance)},
            {"enn_iterations", std::to_string(enn_most_iterations(o, K))},
            {"enn_stop", o.stop_when_settled ? "settled" : "iterations"},
            {"enn_forcing", fmt::format("{:.17g}", o.stop_when_settled ? lowrank::kEnnForcing : 0.0)},
            {"enn_loosest_tolerance", fmt::format("{:.17g}", lowrank::EnnOptions{}.loosest_tolerance)},
            {"checked_rows", std::to_string(o.checked_rows)},
            {"enn_relaxation", fmt::format("{:.17g}", enn_relaxation_of(o, K))},
            {"enn_look_every", std::to_string(enn_look_every(o, K))},
            {"sketch_rank", std::to_string(o.sketch_rank)},
            {"enn_oversampling", std::to_string(lowrank::kEnnOversampling)}});
    return settings;
}

/// One K's checkpoints, agreed by every rank: the root's clock decides, and any rank's
/// stop signal (SIGUSR1, SIGTERM) stops every rank; one all-reduce, asked by every rank
/// after every round of the range finder and every ENN iteration. Holds the state a
/// resume starts from, and the settings a checkpoint must share with its resume.
class CompressedCheckpoints {
public:
    CompressedCheckpoints(const lowrank::CoocOperator& C, const std::vector<std::int64_t>& doc_freq,
                          const SourceSettings& source, int K, const FitOptions& options, const Report& report)
        : C_(C), K_(K), checkpoints_(C.comm(), options.checkpoint.path, options.checkpoint.seconds, report),
          settings_(checkpoint_settings(C, doc_freq, source, options.compressed, K)) {}

    /// Collective. Reads the checkpoint to resume from (none: nothing) and says where it stands.
    void resume_from(const std::string& resume, int enn_iterations, const Report& report) {
        if (resume.empty()) return;
        saved_ = io::read_compressed_checkpoint(C_.comm(), C_.rows(), resume, K_, settings_);
        say(report, Level::info,
            saved_->phase == io::CompressedCheckpoint::Phase::compress
                ? fmt::format("resume: from {}: the range finder after {} rounds", resume, saved_->round)
                : fmt::format("resume: from {}: ENN after {} of {} iterations", resume, saved_->enn.iterations_done,
                              enn_iterations));
    }
    /// The range finder's saved state (mid-solve), or null.
    const io::CompressedCheckpoint* range_finder() const {
        return saved_ && saved_->phase == io::CompressedCheckpoint::Phase::compress ? &*saved_ : nullptr;
    }
    /// ENN's saved state with the finished range finder's record, or null.
    const io::CompressedCheckpoint* enn() const {
        return saved_ && saved_->phase == io::CompressedCheckpoint::Phase::enn ? &*saved_ : nullptr;
    }
    /// A checkpoint of this fit at `phase`, its state to be filled in.
    io::CompressedCheckpoint blank(io::CompressedCheckpoint::Phase phase) const {
        io::CompressedCheckpoint c;
        c.phase = phase;
        c.num_topics = K_;
        c.settings = settings_;
        return c;
    }
    /// Collective. Writes `c` (when checkpoints are enabled).
    void write(const io::CompressedCheckpoint& c, const std::string& what) {
        checkpoints_.write([&] { io::write_compressed_checkpoint(C_.comm(), C_.rows(), checkpoints_.path(), c); }, what);
    }
    Checkpoints& agreed() { return checkpoints_; }

private:
    const lowrank::CoocOperator& C_;
    int K_;
    Checkpoints checkpoints_;
    std::vector<std::pair<std::string, std::string>> settings_;
    std::optional<io::CompressedCheckpoint> saved_;
};

/// Local. About the nonzeros of this rank's pieces, from the headers: each piece's share
/// of its file's positions (bytes, or a gzip file's lines), 10 % over (the pieces end at
/// document boundaries).
std::int64_t expected_nonzeros(const std::vector<corpus::UciFile>& files, const std::vector<corpus::UciPiece>& pieces) {
    double expected = 0;
    for (const corpus::UciPiece& piece : pieces) {
        const corpus::UciFile& f = files[static_cast<std::size_t>(piece.file)];
        const double nnz = static_cast<double>(f.header.num_nonzeros);
        const double positions = f.gzipped ? nnz : static_cast<double>(f.size_bytes - f.data_begin);
        const double end = piece.to_end ? positions : static_cast<double>(piece.end);
        const double begin = piece.from_start ? 0.0 : static_cast<double>(piece.begin);
        if (positions > 0) expected += nnz * std::clamp((end - begin) / positions, 0.0, 1.0);
    }
    return static_cast<std::int64_t>(1.1 * expected) + 1024;
}

/// Collective. Y₀: C's top-K eigenpairs from its operator (lowrank::compress), or the
/// finished range finder's record from an ENN checkpoint; a checkpoint when due.
lowrank::Compression compress_stage(const lowrank::CoocOperator& C, int K, const distmat::EigOptions& eig,
                                    const FitOptions& options, CompressedCheckpoints& progress, const Report& report,
                                    SketchPairs* sketch) {
    const CompressedOptions& o = options.compressed;
    lowrank::Compression y0;
    if (const io::CompressedCheckpoint* saved = progress.enn()) {  // the range finder's record only
        y0.eigenvalues = saved->eigenvalues;
        y0.residuals = saved->residuals;
        y0.products = saved->products;
        y0.converged = saved->compress_converged;
        y0.seconds = saved->seconds;
        if (sketch) {
            sketch->V = saved->sketch_vectors;
            sketch->values = saved->sketch_values;
        }
        return y0;
    }
    const io::CompressedCheckpoint* saved = progress.range_finder();
    distmat::EigOptions compress_eig = eig;  // a long solve at scale: say how it goes
    if (o.stop_when_settled) compress_eig.tolerance = std::max(eig.tolerance, o.range_tolerance);
    // C's spectrum has a wide negative bulk (NYTimes shape: −2.6e-7 at the bottom, λ_K = 1.5e-7
    // inside the positive side of the same bulk), which the filter must damp from its lower
    // end up. After 24 Lanczos steps that end was estimated at −4.4e-7 (the lowest Ritz
    // value minus its residual and its gap to the next, both wide while unresolved); 48
    // steps, single-column products, tighten it and the range finder's block rounds
    // converge sooner: 3,216 → 2,774 column-products at the NYTimes shape, K = 100 (102.5 →
    // 89.9 s in one timed pair; 72 steps, timed once, 95.5 s: not better within the noise).
    compress_eig.lanczos_steps = std::max(compress_eig.lanczos_steps, 48);
    Stopwatch compress_clock, since_print;
    const int products_before = saved ? saved->products : 0;
    const double seconds_before = saved ? saved->seconds : 0.0;
    const Index operator_products = C.products();
    compress_eig.progress = [&](const distmat::EigRound& round) {
        if (since_print.seconds() >= options.rectify.progress_seconds) {
            since_print.restart();
            say(report, Level::info,
                fmt::format("compress: K = {}: round {}, {} products, residual {:.1e} of λ₁ (target {:.0e}), {:.1f} s",
                            K, round.round, products_before + C.products() - operator_products, round.residual,
                            compress_eig.tolerance, seconds_before + compress_clock.seconds()));
        }
        if (progress.agreed().due() && progress.agreed().enabled()) {
            io::CompressedCheckpoint c = progress.blank(io::CompressedCheckpoint::Phase::compress);
            c.round = round.round;
            c.products = products_before + static_cast<int>(C.products() - operator_products);
            c.lower_bound = round.lower_bound;
            c.block = *round.block;
            c.product = *round.product;
            c.seconds = seconds_before + compress_clock.seconds();
            progress.write(c, fmt::format("the range finder after {} rounds", round.round));
        }
        progress.agreed().stop_if_requested(fmt::format("in the range finder after {} rounds", round.round));
    };
    // A sketch update starts from the old documents' top eigenvectors (the sketch's V, the
    // best start there is: C changed by the new documents' share); an exact update from the
    // base's topics.
    const Eigen::MatrixXd& range_start = o.old_sketch ? o.old_sketch->vectors : o.range_start;
    if (saved) {
        compress_eig.first_round = saved->round;
        compress_eig.lower_bound = saved->lower_bound;
        y0 = lowrank::compress(C, K, compress_eig, &saved->block, &saved->product);
        y0.products += saved->products;
        y0.seconds += saved->seconds;
    } else if (range_start.cols() > 0) {  // an earlier model's (the same columns on every rank)
        const Index block = distmat::eig_block_columns(K);
        const Eigen::MatrixXd start = range_start.leftCols(std::min<Index>(block, range_start.cols()));
        y0 = lowrank::compress(C, K, compress_eig, &start);
    } else {
        y0 = lowrank::compress(C, K, compress_eig);
    }
    if (sketch) {  // C's top r pairs for the file, to the sketch's own tolerance, from Y₀ (or the old sketch)
        Stopwatch clock;
        const Index before = C.products(), columns_before = C.column_products();
        const Eigen::MatrixXd& start = o.old_sketch ? o.old_sketch->vectors : y0.Y;
        const auto stop = [&](const distmat::EigRound& round) {  // a stop signal: the ranks agree each round
            progress.agreed().stop_if_requested(fmt::format("in the sketch's eigensolve after {} rounds", round.round));
        };
        lowrank::sketch_eigenpairs(C, o.sketch_rank, lowrank::kSketchTolerance, o.seed, &start, sketch->V, sketch->values,
                                   stop);
        say(report, Level::info,
            fmt::format("compress: the sketch's top {} eigenpairs of C ({}) in {:.2f} s, {} products",
                        o.sketch_rank,
                        distmat::eig_block_columns(o.sketch_rank) >= C.num_words()
                            ? std::string("C's exact decomposition: a block solver's block would be all of C")
                            : fmt::format("to {:.0e} of λ₁", lowrank::kSketchTolerance),
                        clock.seconds(), C.products() - before));
        sketch->seconds = clock.seconds();
        sketch->columns = C.column_products() - columns_before;
    }
    return y0;
}

/// LAW's settings, the same for the stopping rule's looks and the final model.
lowrank::LawOptions law_options_of(const FitOptions& options) {
    lowrank::LawOptions law;
    law.scls.max_iterations = options.model.solver_iterations;
    law.scls.tolerance = options.model.solver_tolerance;
    law.scls.admm_stop = options.model.admm_stop;
    law.solver = options.model.solver;
    law.min_anchor_doc_freq = options.model.anchor_min_df;
    law.anchors = options.model.anchor_words;
    law.finder = options.model.finder;
    return law;
}

/// The stopping rule's looks at the topics: the l most frequent words by document
/// frequency (integers: the same words at any rank count), ties to the lower id, and every
/// word's mass (C's row sums: a one-column product, made before the buffers go).
struct LookWords {
    std::vector<Index> words;
    Eigen::VectorXd mass;
};

/// Collective. ENN (lowrank::rectify_enn): a fixed count; settled from Y₀, the relaxed budget
/// (enn_most_iterations); from a warm start, until the model's measures settle (looks at the
/// topics on `looks`); checkpoints between iterations.
lowrank::EnnResult enn_stage(const lowrank::CoocOperator& C, const std::vector<std::int64_t>& doc_freq, int K,
                             const lowrank::Compression& y0, const distmat::EigOptions& eig, const LookWords& looks,
                             const FitOptions& options, CompressedCheckpoints& progress, const Report& report,
                             const SketchPairs* sketch) {
    const mpi::Comm& world = C.comm();
    const CompressedOptions& o = options.compressed;
    lowrank::EnnOptions enn;
    const int most = enn_most_iterations(o, K);
    enn.iterations = most;
    enn.checked_rows = o.checked_rows;
    enn.relaxation = enn_relaxation_of(o, K);
    enn.eig = eig;
    // The settled mode's projections are inexact in the middle (EnnOptions::forcing); a
    // fixed count runs the authors' exact projections.
    if (o.stop_when_settled) enn.forcing = lowrank::kEnnForcing;
    // The range finder's record, ENN's state.
    io::CompressedCheckpoint enn_checkpoint = progress.blank(io::CompressedCheckpoint::Phase::enn);
    enn_checkpoint.products = y0.products;
    enn_checkpoint.seconds = y0.seconds;
    enn_checkpoint.eigenvalues = y0.eigenvalues;
    enn_checkpoint.residuals = y0.residuals;
    enn_checkpoint.compress_converged = y0.converged;
    if (sketch) {  // kept in every ENN checkpoint: a resume does not solve them again
        enn_checkpoint.sketch_vectors = sketch->V;
        enn_checkpoint.sketch_values = sketch->values;
    }
    enn.checkpoint_due = [&](int) { return progress.agreed().due(); };
    const lowrank::EnnCheckpoint enn_hook = [&](const lowrank::EnnState& state) {
        if (progress.agreed().enabled()) {
            enn_checkpoint.enn = state;
            progress.write(enn_checkpoint, fmt::format("ENN after {} iterations", state.iterations_done));
            enn_checkpoint.enn = {};
        }
        progress.agreed().stop_if_requested(
            fmt::format("in ENN after {} of {} iterations", state.iterations_done, most));
    };
    if (progress.agreed().enabled() && !progress.enn()) {  // the range finder done
        enn_checkpoint.enn.Y = y0.Y;
        enn_checkpoint.enn.warm = y0.Y;
        enn_checkpoint.enn.lower_bound = eig.lower_bound;
        progress.write(enn_checkpoint, "the range finder's factor");
        enn_checkpoint.enn = {};
    }
    // The stopping rule's looks at the topics: anchors and B as LAW finds them, B̆ solved
    // only for the l most frequent words, whose mean specificity and dissimilarity settle
    // when the whole model's do (measured: jobs/BENCHMARKS.md, "Where ENN settles"); LAW
    // without most of its small solves (KOS, K = 100: 0.4 s against 0.8 s).
    // With the user's anchor words too, the looks find their own anchors: they measure how
    // the factor settles, and a given word may not be representable by every iterate.
    lowrank::LawOptions law_options = law_options_of(options);
    law_options.anchors.clear();
    law_options.finder = anchors::Finder::qr;  // the looks' own anchors, whatever the model's finder
    // And by the exact active set whatever the model's solver: a look measures how the
    // factor settles, and an iterative solver's own stopping would move its figures.
    law_options.solver = recover::Solver::active_set;
    if (o.stop_when_settled) {
        enn.stop = lowrank::EnnStop{};
        // From Y₀ no looks: the fixed point is the only early stop. The quality rule could
        // end ENN at the earliest after 61 of the 75 iterations (two windows of three looks,
        // one every 10th), and its 7 looks cost more than the 14 iterations could (KOS,
        // K = 100: a look 0.37 s, an iteration 0.13 s; jobs/BENCHMARKS.md, "The settled mode
        // relaxed"). From a warm start (a sketch update's) the model starts settled: look
        // every kWarmLookEvery iterations.
        enn.stop->look_every = enn_look_every(o, K);
        if (enn.stop->look_every == 0) enn.stop->window = 0;
    }
    if (o.stop_when_settled && warm_enn(o, K)) {
        enn.look = [&](const Eigen::MatrixXd& Y) {
            Stopwatch clock;
            const lowrank::EnnLook seen =
                lowrank::look_at_topics(world, C.rows(), Y, doc_freq, law_options, looks.words, looks.mass);
            say(report, Level::info,
                fmt::format("enn: look at the topics: specificity {:.4f}, dissimilarity {:.2f} (on the {} most frequent "
                            "words), {:.2f} s", seen.specificity, seen.dissimilarity, looks.words.size(), clock.seconds()));
            return seen;
        };
    }
    const lowrank::EnnState* resume_enn = progress.enn() ? &progress.enn()->enn : nullptr;
    const int every = o.stop_when_settled ? 10 : std::max(1, most / 10);
    const lowrank::EnnResult r = lowrank::rectify_enn(
        world, C.rows(), y0.Y, enn, [&](int t, const lowrank::EnnIteration& it) {
            if (t % every == 0 || t == most)
                say(report, Level::info,
                    fmt::format("enn: iteration {}/{}: corrected mass {:.3e} in {} entries, r = {:.2e}, change {:.2e}, "
                                "{} products, {:.3f} s ({:.3f} s forming E, {:.0f} % of rank 0's rows dense, largest rank's share of "
                                "F's entries {:.2f}x the mean)",
                                t, most, it.negative_mass, it.corrections, it.r, it.change, it.products,
                                it.seconds, it.check_seconds, 100 * it.dense_share, it.imbalance));
        },
        enn_hook, resume_enn);
    say(report, Level::info,
        fmt::format("enn: {} iterations in {:.2f} s; l = {} checked rows; left among checked pairs: mass {:.2e} in {} "
                    "entries; {:.3g} pairs never checked (both words outside the l){}",
                    r.trace.size(), r.seconds, r.checked_rows, r.final_negative_mass, r.final_negative_entries,
                    r.unchecked_pairs,
                    enn.forcing > 0 ? fmt::format("; the projections between the first and the last solved to {:g} × "
                                                  "the last change, at most {:.0e} of λ₁",
                                                  enn.forcing, enn.loosest_tolerance)
                                    : std::string()));
    if (r.stop_reason != rectify::StopReason::iterations)
        say(report, Level::info,
            fmt::format("enn: stopped after {} of at most {} iterations: {}", r.trace.size(), most,
                        r.stop_reason == rectify::StopReason::fixed_point
                            ? "a fixed point (no negative checked pair left; the factor no longer moves)"
                            : "the model's measures settled (the last looks at the topics agree)"));
    return r;
}

/// Collective. The metrics that compare with C, from Y, E′ and C's operator (C never
/// formed; lowrank::factor_metrics), into m.metrics.
void measure_factor(model::Model& m, const lowrank::CoocOperator& C, const lowrank::EnnResult& r,
                    const lowrank::Correction& correction, int probes) {
    const mpi::Comm& world = C.comm();
    Stopwatch clock;
    const lowrank::FactorMetrics f =
        lowrank::factor_metrics(C, {r.Y, correction, m.unigram, m.B, m.B_breve, m.A, m.anchors}, probes);
    const auto everywhere = [&](const Eigen::VectorXd& local) {
        return Eigen::VectorXd(distmat::gather_rows(world, C.rows(), local).col(0));
    };
    m.metrics.add("recovery", "word", everywhere(f.recovery));
    m.metrics.add_number("approximation", f.approximation);
    m.metrics.add_number("approximation_offdiag", f.approximation_offdiag);
    m.metrics.add("recovery_original", "word", everywhere(f.recovery_original));
    m.metrics.add_number("approximation_original", f.approximation_original);
    m.metrics.add_number("approximation_offdiag_original", f.approximation_offdiag_original);
    // validity and specificity with the original C's row sums (as the dense fit's _original),
    // on B by rows: each rank its words' row sums
    const Eigen::VectorXd p_original = C.row_sums();
    const eval::TopicRows original{m.B, m.B_breve, p_original, m.B_first_row, m.B_total_rows};
    m.metrics.add_number("validity_original", eval::validity_by_rows(world, original, m.A));
    m.metrics.add("specificity_original", "topic", eval::specificity_by_rows(world, m.B, p_original));
    m.metrics_note = fmt::format(
        "compressed pipeline: recovery and approximation are exact against the rectified C = YYᵀ + E′ (never "
        "formed); recovery_original and approximation_original compare with the original C (the documents' or the "
        "file's), exact on the {} directions of [Y B] and estimated beyond them by {} random probes "
        "(approximation_original² within a relative standard error of {:.1e}; a word's recovery_original within "
        "about {:.1f} % of it (one standard error) times the share of its square beyond those directions, {:.0f} % "
        "over all words)",
        f.exact_directions, f.probes, f.approximation_original_relative_error, 100 * std::sqrt(0.5 / f.probes),
        100 * f.recovery_original_probed_share);
    m.times.add("metrics", clock.seconds());
}

/// Collective. What the model file keeps of the factor: Y by rows where ENN left it and
/// E′'s triplets where LAW found them (the file is written by row blocks and the triplets
/// at their offsets: no rank holds N × K of Y, nor all of E′), the range finder's and
/// ENN's records on every rank.
model::CompressedRecord record_of(const mpi::Comm& world, const distmat::RowPartition& rows,
                                  const lowrank::Compression& y0, const lowrank::EnnResult& r,
                                  lowrank::Correction&& correction) {
    model::CompressedRecord record;
    record.Y_rows = r.Y;
    record.Y_first_row = rows.begin(world.rank());
    record.Y_total_rows = rows.size();
    record.eigenvalues = y0.eigenvalues;
    record.residuals = y0.residuals;
    record.products = y0.products;
    record.correction_row = std::move(correction.entry_row);  // moved, not copied: E′ can be large
    record.correction_col = std::move(correction.entry_col);
    record.correction_value = std::move(correction.entry_value);
    std::vector<std::int64_t> first{static_cast<std::int64_t>(record.correction_value.size())};
    record.correction_total = mpi::allreduce_sum(world, first[0]);
    mpi::exscan_inplace(world, first, MPI_SUM);
    record.correction_first = first[0];
    record.checked_rows = r.checked_rows;
    record.final_negative_mass = r.final_negative_mass;
    record.final_negative_entries = r.final_negative_entries;
    record.unchecked_pairs = r.unchecked_pairs;
    record.enn = r.trace;
    return record;
}

/// LAW's topics: B, B̆ and the word masses kept by rows where LAW computed them (no rank
/// holds N × K; the measures and the file's B take them so), A and the counts on every rank.
model::TopicsFound topics_of(const mpi::Comm& world, const distmat::RowPartition& rows, lowrank::LawResult& law,
                             recover::Solver solver) {
    model::TopicsFound out;
    out.B = std::move(law.B);
    out.B_breve = std::move(law.B_breve);
    out.A = law.A;
    out.unigram = std::move(law.word_mass);
    out.B_first_row = rows.begin(world.rank());
    out.B_total_rows = rows.size();
    out.a_method = model::ARecovery::diagonal;
    out.solver = solver;
    out.words_solved = law.words_solved;
    out.words_converged = law.words_converged;
    out.solver_max_iterations = static_cast<int>(law.most_iterations);
    return out;
}

/// LAW's anchors: pivoted QR (or `finder`) among the candidates in at least `min_df` documents, or the
/// user's words (no candidates then, as the dense pipeline's).
model::AnchorsFound anchors_of(const lowrank::LawResult& law, std::int64_t min_df, bool given, anchors::Finder finder) {
    model::AnchorsFound out;
    out.anchors = law.anchors;
    out.diag_r = law.diag_r;
    out.anchor_method = given ? model::AnchorChoice::words : model::recorded(finder);
    out.anchor_min_df = given ? 0 : min_df;
    out.anchor_excluded = given ? 0 : law.below_threshold;
    return out;
}

/// Collective. AnchorFree on ENN's factor. Y is a square root of the rectified P = YYᵀ
/// (scaled to sum 1), and the minimum-determinant criterion is the same for every square
/// root (B̃Q's solution is QᵀM), so the LP or PDS runs on Y by rows where ENN left them:
/// no rank holds N × K but the LP's root (its Clp working set). C* = B̃M by rows, E* from
/// K × K products (E′, LAW's correction of the anchors' rows, is LAW's and has no place
/// here); B, B̆ and the representative words
/// (among the words that occur) by rows, as the dense fit makes them from its C*. The
/// unigram is P's row sums, as the dense fit's is its C's: YYᵀ1 after ENN, and without
/// rectification (no ENN iteration) `documents_unigram`, the documents' C1, as the dense fit
/// with --rectify none. Returns the correction the metrics take: none, on the
/// representative words' rows.
lowrank::Correction anchorfree_of_factor(model::Model& m, const mpi::Comm& world, const distmat::RowPartition& rows,
                                         const Eigen::MatrixXd& Y, const std::vector<std::int64_t>& doc_freq,
                                         const lowrank::Compression& y0, const Eigen::VectorXd& documents_unigram,
                                         const FitOptions& options, const Report& report) {
    const Index N = rows.size(), first = rows.begin(world.rank());
    Stopwatch clock;
    model::AnchorFreeRecord& record = m.anchorfree;
    record.eigenvalues = y0.eigenvalues;
    // P = YYᵀ / 1ᵀYYᵀ1: the rectified C, normalized as the dense fit's.
    Eigen::VectorXd column_sums = Y.colwise().sum().transpose();
    distmat::sum_on_all_ranks(world, column_sums.data(), static_cast<std::size_t>(column_sums.size()));
    const double total = column_sums.squaredNorm();
    mpi::run_local_phase(world, "anchorfree", [&] {
        if (!(total > 0)) throw InputError("anchorfree: the rectified factor's YYᵀ sums to 0");
    });
    // Unrectified (no ENN iteration), Y is Y₀ = V max(Λ, 0)^{1/2}: a C with fewer than K
    // positive eigenvalues among its K largest has no N × K square root (as the dense fit's).
    mpi::run_local_phase(world, "anchorfree", [&] {
        const Eigen::VectorXd& l = y0.eigenvalues;
        const Index K = l.size();
        if (documents_unigram.size() > 0 && K > 0 && !(l(K - 1) > 1e-12 * std::abs(l(0)))) {
            Index positive = 0;
            for (Index k = 0; k < K; ++k) positive += l(k) > 1e-12 * std::abs(l(0)) ? 1 : 0;
            throw InputError(render_options(fmt::format(
                "anchorfree: C has {} positive eigenvalues among its {} largest (λ_{} = {:.3g}), so no N x K square root "
                "B = U Λ^1/2 exists; rectify it (drop {{enn_iterations}} 0) or ask for fewer topics",
                positive, K, K, l(K - 1))));
        }
    });
    const Eigen::MatrixXd root = Y / std::sqrt(total);
    const Eigen::MatrixXd M = anchorfree_m(world, root, first, N, options.model, record);
    m.times.add("anchorfree", clock.seconds());
    clock.restart();
    const anchorfree::AnchorFreeResult r = anchorfree::finish_square_root(world, root, M);
    m.unigram = documents_unigram.size() > 0 ? documents_unigram
                                             : Eigen::VectorXd(root * (column_sums / std::sqrt(total)));  // this rank's words
    std::vector<bool> occurs(doc_freq.size());
    for (std::size_t i = 0; i < doc_freq.size(); ++i) occurs[i] = doc_freq[i] > 0;
    take_anchorfree_topics(m, anchorfree::topics_of(world, r.C, first, r.E, occurs), r, report);
    m.B_first_row = first;
    m.B_total_rows = N;
    if (options.model.alpha && record.a_is_distribution) static_cast<model::AlphaFit&>(m) = fit_alpha(world, m.A);
    else if (options.model.alpha)
        say(report, Level::warning, fmt::format("fit: K = {}: no alpha: A is not a joint distribution", m.num_topics));
    m.times.add("finish", clock.seconds());
    lowrank::Correction none;
    none.rows = m.anchors;
    std::sort(none.rows.begin(), none.rows.end());
    return none;
}

}  // namespace

model::Model fit_k(const lowrank::CoocOperator& C, const std::vector<std::int64_t>& doc_freq, const SourceSettings& source, int K,
                   const FitOptions& options, const Report& report, RunCounts& counts, SketchPairs* sketch) {
    const mpi::Comm& world = C.comm();
    const CompressedOptions& o = options.compressed;
    distmat::EigOptions eig = lowrank::default_eig_options(K, o.seed);
    eig.tolerance = o.eig_tolerance;
    model::Model m;
    m.num_topics = K;
    CompressedCheckpoints progress(C, doc_freq, source, K, options, report);
    const StopScope stoppable;  // signals from here on are requests this fit looks at
    progress.resume_from(options.checkpoint.resume, enn_most_iterations(o, K), report);

    const Index columns_before = C.column_products();
    lowrank::Compression y0 = compress_stage(C, K, eig, options, progress, report, sketch);
    // A warm sketch update's ENN (--warm-enn, the settled mode) starts from the base's
    // rectified factor, moved by the change in C's top K (from an ENN checkpoint, ENN's own
    // state instead); otherwise ENN starts from Y₀ as a fresh fit's, so that with r = N the
    // update is the fresh fit to rounding.
    const bool warm = warm_enn(o, K);
    if (warm && !progress.enn()) {
        Stopwatch clock;
        y0.Y = lowrank::warm_enn_start(world, C.rows(), o.old_factor, y0.Y, *o.old_sketch, o.seed);
        say(report, Level::info,
            fmt::format("enn: starts from the base's rectified factor moved by the change of C's top {} ({:.2f} s)", K,
                        clock.seconds()));
    }
    m.times.add("compress", y0.seconds);
    counts.range_columns = static_cast<double>(C.column_products() - columns_before);
    if (sketch && !progress.enn()) {  // (from an ENN checkpoint, solved before the resume)
        m.times.add("sketch", sketch->seconds);
        counts.range_columns -= static_cast<double>(sketch->columns);
    }
    // C's row sums (a one-column product, made before the buffers go): the looks' masses,
    // AnchorFree's unigram without rectification, and which words may be anchors or
    // representatives: those with a positive row of C, as the dense pipeline's p > 0 (under
    // tf-idf a word in every document has idf 0 and a zero row; its row of Y is rounding).
    const Eigen::VectorXd word_mass = C.row_sums();
    std::vector<std::int64_t> anchor_doc_freq(doc_freq);
    for (std::size_t i = 0; i < anchor_doc_freq.size(); ++i)
        if (!(word_mass(static_cast<Index>(i)) > 0)) anchor_doc_freq[i] = 0;
    LookWords looks;
    if (warm_enn(o, K)) {  // the stopping rule's looks
        const Index N = C.rows().size();
        const Index l = std::min<Index>(N, o.checked_rows > 0 ? o.checked_rows : 10 * Index{K} + 1000);  // as ENN's
        looks.words = lowrank::most_frequent_words(world, C.rows(), doc_freq, l);
        looks.mass = distmat::gather_rows(world, C.rows(), word_mass).col(0);  // N doubles, replicated
    }
    C.release_buffers();  // ENN and LAW apply no product
    say(report, Level::info,
        fmt::format("compress: K = {}: top eigenpairs of C in {:.2f} s, {} products, largest "
                    "residual {:.1e} of λ₁ ({}), λ_K = {:.3e}",
                    K, y0.seconds, y0.products, y0.residuals.maxCoeff() / std::abs(y0.eigenvalues(0)),
                    y0.converged ? "converged" : "NOT converged", y0.eigenvalues(K - 1)));
    if (!y0.converged)
        say(report, Level::warning, "compress: the eigensolver did not reach its tolerance; the factor is inexact");

    const lowrank::EnnResult r = enn_stage(C, anchor_doc_freq, K, y0, eig, looks, options, progress, report, sketch);
    m.times.add("enn", r.seconds);
    counts.enn_iterations = static_cast<double>(r.trace.size());
    for (const auto& iteration : r.trace) {
        counts.enn_columns += static_cast<double>(iteration.columns);
        counts.enn_corrections =
            std::max(counts.enn_corrections, static_cast<double>(iteration.corrections) * iteration.imbalance);
        counts.enn_dense_share = std::max(counts.enn_dense_share, iteration.dense_share);
        const double corrections = static_cast<double>(iteration.corrections) * iteration.imbalance;
        counts.enn_corrections_summed += corrections;
        counts.enn_correction_columns += corrections * static_cast<double>(iteration.columns);
        counts.enn_correction_products += corrections * static_cast<double>(iteration.products);
    }
    m.rectification.method = model::Rectification::enn;
    m.rectification.num_topics = K;
    m.rectification.iterations = static_cast<int>(r.trace.size());
    m.rectification.stop_reason = r.stop_reason;

    if (options.model.method != Method::anchors) {
        m.method = options.model.method;
        const Eigen::VectorXd unigram = r.trace.empty() ? word_mass : Eigen::VectorXd();  // unrectified: C's own
        lowrank::Correction none =
            anchorfree_of_factor(m, world, C.rows(), r.Y, anchor_doc_freq, y0, unigram, options, report);
        if (options.metrics) {
            measure_factor(m, C, r, none, o.metric_probes);
            C.release_buffers();
        }
        m.compressed = record_of(world, C.rows(), y0, r, std::move(none));
        return m;
    }
    lowrank::LawResult law = lowrank::factorize_low_rank(world, C.rows(), r.Y, anchor_doc_freq, law_options_of(options));
    m.times.add("anchors", law.seconds);
    counts.law_correction_rows = static_cast<double>(law.correction.rows.size());
    counts.law_corrections =
        static_cast<double>(mpi::allreduce_max(world, static_cast<std::int64_t>(law.correction.entry_value.size()))) *
        world.size();
    say(report, Level::info,
        fmt::format("law: anchors, B and A in {:.2f} s; {} words barred from anchors; E′ on {} rows; {} of {} words "
                    "converged; ΣA = {:.4f}",
                    law.seconds, law.excluded_candidates, law.correction.rows.size(), law.words_converged,
                    law.words_solved, law.A.sum()));
    static_cast<model::TopicsFound&>(m) = topics_of(world, C.rows(), law, options.model.solver);
    warn_unconverged(m, report);
    if (options.model.recover_a == RecoverA::least_squares) {  // Arora et al.'s A, against YYᵀ + E′
        m.A = lowrank::least_squares_a(world, C.rows(), r.Y, law.correction, m.B);
        m.a_method = model::ARecovery::least_squares;
    }
    static_cast<model::AnchorsFound&>(m) = anchors_of(law, options.model.anchor_min_df, !options.model.anchor_words.empty(),
                                                                 options.model.finder);
    if (options.model.alpha) static_cast<model::AlphaFit&>(m) = fit_alpha(world, m.A);  // RECOVER-ALPHA on A, as the dense fit does
    if (options.metrics) {
        measure_factor(m, C, r, law.correction, o.metric_probes);
        C.release_buffers();
    }
    m.compressed = record_of(world, C.rows(), y0, r, std::move(law.correction));  // law's last use
    return m;
}

void check_compressed(const FitOptions& options) {
    if (options.model.solver == recover::Solver::kl)
        throw OptionError("{pipeline} compressed has each word's row of C-bar only in projection: {solver} kl "
                          "(RecoverKL, on whole rows) needs the dense pipeline");
    if (options.compressed.metric_probes < 2) throw OptionError("{metric_probes} must be at least 2 (their spread is the estimate's error)");
    if (options.compressed.iterations < 0) throw OptionError("{enn_iterations} must be at least 0");
    if (!(options.compressed.eig_tolerance > 0)) throw OptionError("the compressed pipeline's eigensolver tolerance must be positive");
    const std::vector<int>& topics = options.hierarchy.empty() ? options.topics : options.hierarchy;
    if (options.compressed.sketch_rank > 0 && !topics.empty() && options.compressed.sketch_rank < topics.front())
        throw OptionError(fmt::format("{{sketch_rank}} must be at least K = {} (the sketch holds C's top K pairs and "
                                      "more), got {}",
                                      topics.front(), options.compressed.sketch_rank));
}

namespace {

/// The unigram, the document frequencies and their sums in the fit's statistics (every rank).
void take_word_stats(const lowrank::CoocOperator& C, const std::vector<std::int64_t>& doc_freq,
                     cooc::CoocStats& stats) {
    const mpi::Comm& world = C.comm();
    stats.unigram = distmat::gather_rows(world, C.rows(), C.row_sums());
    Eigen::MatrixXd df_local(static_cast<Index>(doc_freq.size()), 1);
    for (std::size_t i = 0; i < doc_freq.size(); ++i) df_local(static_cast<Index>(i), 0) = static_cast<double>(doc_freq[i]);
    const Eigen::MatrixXd df = distmat::gather_rows(world, C.rows(), df_local);
    stats.doc_freq = df.col(0).unaryExpr([](double v) { return static_cast<std::int64_t>(std::llround(v)); });
    stats.sum = stats.unigram.sum();
}

/// Collective on C.comm(). What both sources share once C is an operator: each K's fit
/// (fit_k), the cost model at the first K's counts (from `shape`, the source's sizes), the
/// measures, coherence and ClustAcc over `counting` (none without its files), the hierarchy.
/// The documents C averages over, for its sketch: the weight (decayed), all counted.
struct SketchTotals {
    double weight = 0;
    std::int64_t docs = 0, tokens = 0;
};

void fit_on_operator(const lowrank::CoocOperator& C, const std::vector<std::int64_t>& doc_freq,
                     const SourceSettings& source, CompressedShape shape, double base_bytes,
                     const CountingCorpus& counting, int block_size, const FitOptions& options,
                     const SketchTotals& totals, const Report& report, FitResult& result) {
    // From a file, a corpus that turns out not to be C's costs coherence, not the fit (as the
    // dense fit's); from the documents the corpus is C's own, and a failure a real one.
    const bool coherence_may_fail = shape.cooc_file;
    const mpi::Comm& world = C.comm();
    const Index N = C.num_words();
    const cooc::CoocStats& stats = result.info.stats;
    // The K to fit: a hierarchy's first level is its first K (as the dense fit's).
    const std::vector<int> topics = options.hierarchy.empty() ? options.topics
                                                              : std::vector<int>{options.hierarchy.front()};
    // Too few anchor candidates for a K: said now by every rank (replicated counts), not
    // in LAW after the compression and ENN.
    mpi::run_local_phase(world, "setup", [&] {
        // given: no candidates; AnchorFree has no anchors: its own checks say what fails
        if (!options.model.anchor_words.empty() || options.model.method != Method::anchors) return;
        const anchors::Candidates candidates = anchors::candidates_by_doc_freq(stats.doc_freq, options.model.anchor_min_df);
        for (const int K : topics) anchors::count_candidates(stats.unigram, candidates, K);
    });

    for (const int K : topics) {
        RunCounts counts;
        // The sketch from the first K's range finder (one solve of max(K, r) pairs).
        SketchPairs pairs;
        const bool sketch = options.compressed.sketch_rank > 0 && result.models.empty();
        model::Model m = fit_k(C, doc_freq, source, K, options, report, counts, sketch ? &pairs : nullptr);
        if (sketch) {
            result.sketch = lowrank::sketch_of(C, pairs.V, pairs.values, totals.weight, totals.docs, totals.tokens);
            C.release_buffers();
            say(report, Level::info,
                fmt::format("sketch: C's top {} eigenpairs (λ_r = {:.3e}, {:.2g} of λ₁), its diagonal, unigram and "
                            "document frequencies for a later update without these documents: {} in the file",
                            pairs.values.size(), pairs.values(pairs.values.size() - 1),
                            pairs.values(pairs.values.size() - 1) / pairs.values(0),
                            mib(8.0 * static_cast<double>(C.num_words()) * static_cast<double>(pairs.values.size() + 3))));
        }
        if (m.method != Method::anchors) describe(m, result.info.vocab, report);  // LAW's lines say the rest
        if (result.models.empty()) {  // the model at this run's sizes and counts, the first K's
            shape.topics = K;
            shape.range_columns = counts.range_columns;
            shape.sketch_columns = static_cast<double>(pairs.columns);  // (0: none solved, or solved before a resume)
            shape.enn_columns = counts.enn_columns;
            shape.enn_iterations = counts.enn_iterations;
            shape.enn_corrections = counts.enn_corrections;
            shape.enn_dense_share = counts.enn_dense_share;
            shape.enn_corrections_summed = counts.enn_corrections_summed;
            shape.enn_correction_columns = counts.enn_correction_columns;
            shape.enn_correction_products = counts.enn_correction_products;
            if (!shape.anchorfree) {  // AnchorFree runs no LAW: compressed_shape's K rows, no entries
                shape.law_correction_rows = counts.law_correction_rows;
                shape.law_corrections = counts.law_corrections;
            }
            result.costs = compressed_stage_costs(shape, base_bytes);
            say(report, Level::info,
                fmt::format("cost model: N = {}, D = {}, {}, P = {}, K = {}; {}; range finder "
                            "{} column-products; ENN {} iterations, {} column-products, corrections (× imbalance) at "
                            "most {:.4g}, {:.4g} summed over the iterations, {:.4g} times their columns, {:.4g} times their "
                            "products; dense share {:.3f}; LAW's E′ {} rows, {:.4g} entries (× imbalance)",
                            N, shape.docs,
                            shape.cooc_file ? std::string("C's rows from a file") : fmt::format("nnz = {}", shape.nonzeros),
                            world.size(), K,
                            shape.cooc_file ? std::string("a product all-reduces X")
                                            : fmt::format("|V_r| = {}, served rows {}", shape.local_vocabulary, shape.served_rows),
                            shape.range_columns, shape.enn_iterations, shape.enn_columns,
                            shape.enn_corrections, shape.enn_corrections_summed, shape.enn_correction_columns,
                            shape.enn_correction_products, shape.enn_dense_share, shape.law_correction_rows,
                            shape.law_corrections));
        }
        if (options.metrics) {  // on B by rows, reduced: the same values on every rank
            Stopwatch metrics;
            const eval::MetricSet on_B = eval::model_metrics_by_rows(world, model::rows_view(world, m), m.A, m.anchors);
            for (const auto& metric : on_B.metrics) m.metrics.put(metric);
            eval::sort_metrics(m.metrics);
            say(report, Level::info,
                fmt::format("metrics: K = {}: the measures on B by rows in {:.2f} s", K, metrics.seconds()));
            m.times.add("metrics", metrics.seconds());
        }
        result.models.push_back(std::move(m));
    }
    if (options.metrics) {
        std::vector<model::Model*> models;
        for (auto& m : result.models) models.push_back(&m);
        std::vector<std::string> notes;  // coherence writes its own note first
        for (auto* m : models) notes.push_back(m->metrics_note);
        measure_coherence(world, models, counting, N, report, coherence_may_fail);
        for (std::size_t k = 0; k < models.size(); ++k)
            models[k]->metrics_note += (models[k]->metrics_note.empty() ? "" : "; ") + notes[k];
        if (!options.labels.empty())
            measure_clustering(world, models, counting, options.labels, options.compressed.seed, report);
    }
    // The levels above the first work on its A (K × K) alone: as the dense pipeline's, on
    // a most square grid of the same ranks.
    if (!options.hierarchy.empty()) {
        // The levels' words (B₁ B₂ …, N × K_level) by rows, as the first level's B.
        result.hierarchy = fit_hierarchy(result.models.front(), options.hierarchy, distmat::Grid::most_square(world),
                                         block_size, options.rectify, options.model, report);
    }
}

/// Collective. fit_on_operator on the source's operator C (result.info.stats its own), or,
/// with an old sketch (fit --update-mode sketch), on the old documents' sketch and C
/// together (lowrank::SketchOperator): the statistics then those of all the documents
/// (the unigram and frequencies of the sum, the counts added), coherence and ClustAcc over
/// the documents read (`counting`, with their own frequencies).
void fit_with_sketch(const lowrank::CoocOperator& C, const std::vector<std::int64_t>& doc_freq, SourceSettings source,
                     const CompressedShape& shape, double base_bytes, const CountingCorpus& counting, int block_size,
                     const FitOptions& options, const Report& report, FitResult& result) {
    cooc::CoocStats& stats = result.info.stats;
    const CompressedOptions& o = options.compressed;
    if (!o.old_sketch) {
        mpi::run_local_phase(C.comm(), "setup", [&] {
            check_documents(options, stats.num_docs);
            if (o.sketch_rank > 0 && C.estimator() != cooc::Estimator::unbiased)
                throw InputError("the co-occurrence given holds a tf-idf C: a sketch is kept for an update that sums C "
                                 "over documents, which tf-idf's C is not; drop --sketch-rank");
        });
        const SketchTotals totals{static_cast<double>(stats.num_docs), stats.num_docs, stats.num_tokens};
        fit_on_operator(C, doc_freq, source, shape, base_bytes, counting, block_size, options, totals, report, result);
        return;
    }
    mpi::run_local_phase(C.comm(), "setup", [&] {
        if (C.estimator() != cooc::Estimator::unbiased)
            throw InputError("the co-occurrence given holds a tf-idf C: an update from a sketch sums C over documents, "
                             "which tf-idf's C is not (its idf and scale are the whole corpus's); update it exactly");
    });
    const lowrank::Sketch& old = *o.old_sketch;
    const lowrank::SketchOperator S(C, static_cast<double>(stats.num_docs), old, o.decay);
    const std::vector<std::int64_t> all_doc_freq = S.doc_freq();
    const std::int64_t new_docs = stats.num_docs, new_tokens = stats.num_tokens;
    take_word_stats(S, all_doc_freq, stats);
    stats.num_docs += old.num_docs;  // the model's documents: the sketch's and the new (coherence: the new, read)
    stats.num_docs_read += old.num_docs;
    result.info.num_docs_declared += old.num_docs;
    stats.num_tokens += old.num_tokens;
    stats.num_tokens_read += old.num_tokens;
    say(report, Level::info,
        fmt::format("sketch: the old documents by their rank-{} sketch ({} documents, weight {:.6g}, times the decay "
                    "{:g}) and the {} new ones exactly: the old part's share of C is {:.3f}",
                    old.rank(), old.num_docs, old.weight, o.decay, new_docs, S.old_share()));
    std::uint64_t bits = 0;  // the sketch's eigenvalues, for the checkpoints (its vectors follow from them)
    for (Index k = 0; k < old.values.size(); ++k) {
        std::uint64_t v = 0;
        std::memcpy(&v, &old.values(k), sizeof v);
        bits = (bits ^ v) * 0x100000001b3ULL;
    }
    source.insert(source.end(), {{"sketch_weight", fmt::format("{:.17g}", old.weight)},
                                 {"sketch_documents", std::to_string(old.num_docs)},
                                 {"sketch_values", fmt::format("{:016x}", bits)},
                                 {"decay", fmt::format("{:.17g}", o.decay)}});
    const SketchTotals totals{S.weight(), old.num_docs + new_docs, old.num_tokens + new_tokens};
    CountingCorpus the_new = counting;  // coherence over the documents read: a part of the model's
    the_new.other_documents = old.num_docs;
    fit_on_operator(S, all_doc_freq, source, shape, base_bytes, the_new, block_size, options, totals, report, result);
}

}  // namespace

FitResult fit_compressed(const CorpusSource& corpus, const mpi::Comm& world, const FitOptions& options,
                         const Report& report) {
    mpi::run_local_phase(world, "setup", [&] {
        check(options);
        check_compressed(options);
    });
    // A stop signal while the corpus is read is a request too: the range finder's first
    // round looks at it (checkpoints then, and stops), instead of the default ending.
    const StopScope stoppable;
    FitResult result;
    Stopwatch clock;
    const double base_bytes = static_cast<double>(mpi::allreduce_max(world, current_rss_bytes()));  // before any data
    const std::vector<corpus::UciFile> files = corpus::inspect_uci_files(world, corpus.files);
    const Index N = files.front().header.num_words;
    Index declared_docs = 0, declared_nonzeros = 0;
    for (const auto& f : files) {
        declared_docs += f.header.num_docs;
        declared_nonzeros += f.header.num_nonzeros;
    }
    result.info.vocab = corpus::load_vocab(world, corpus.vocab, N);
    result.info.num_docs_declared = declared_docs;
    mpi::run_local_phase(world, "setup", [&] { check(options, N); });
    if (options.metrics && !options.labels.empty())  // a bad labels file now, not after the work
        check_labels(world, CountingCorpus{corpus.files, corpus.options, {}}, options.labels);

    // The documents, each rank its pieces, held in memory for the products.
    corpus::Shard docs;
    {
        const std::vector<corpus::UciPiece> pieces = corpus::plan_uci_pieces(files, world.rank(), world.size());
        corpus::UciReader reader(files, pieces);
        mpi::run_local_phase(world, "read", [&] { docs = corpus::read_all(reader, expected_nonzeros(files, pieces)); });
        corpus::check_uci_totals(world, reader);
    }
    result.times.add("read", clock.seconds());
    clock.restart();
    const lowrank::DocumentOperator C(world, N, docs, corpus.options, options.compressed.product_buffer_bytes);
    const std::vector<std::int64_t> doc_freq = C.doc_freq();
    take_word_stats(C, doc_freq, result.info.stats);
    const CountingCorpus counting{corpus.files, corpus.options, result.info.stats.doc_freq};  // these documents'
    result.times.add("operator", clock.seconds());
    const lowrank::DocumentStats& s = C.stats();
    const auto& all_topics = options.hierarchy.empty() ? options.topics : options.hierarchy;
    const Index widest_k = *std::max_element(all_topics.begin(), all_topics.end());
    const Index widest_block = distmat::eig_block_columns(static_cast<int>(widest_k));  // the range finder's
    say(report, Level::info,
        fmt::format("compress: {} documents read, M = {} used, {} skipped; {} tokens, {} nonzeros; N = {} words over {} "
                    "ranks; a product moves {} per rank per column (largest local vocabulary {} words) and holds {} "
                    "per rank per column: a block of {} columns runs in panels of {} (--product-buffer-mb)",
                    s.num_docs_read, s.num_docs, s.num_docs_skipped, s.num_tokens, s.num_entries, N, world.size(),
                    mib(static_cast<double>(mpi::allreduce_max(world, C.bytes_per_product(1)))), s.max_rank_words,
                    mib(C.buffer_bytes(1)), widest_block, C.panel_columns(widest_block)));

    cooc::CoocStats& stats = result.info.stats;
    stats.num_docs_read = s.num_docs_read;
    stats.num_docs = s.num_docs;
    stats.num_docs_skipped = s.num_docs_skipped;
    stats.num_tokens = s.num_tokens;
    stats.num_tokens_read = s.num_tokens;  // of the documents kept in memory: the skipped ones are not counted
    CompressedShape shape = compressed_shape(options, static_cast<double>(N), static_cast<double>(declared_docs),
                                             static_cast<double>(declared_nonzeros), world.size());
    shape.local_vocabulary = static_cast<double>(s.max_rank_words);
    shape.served_rows = static_cast<double>(s.max_served_rows);
    const SourceSettings source{{"documents", std::to_string(s.num_docs)},
                                {"tokens", std::to_string(s.num_tokens)},
                                {"nonzeros", std::to_string(s.num_entries)}};
    fit_with_sketch(C, doc_freq, source, shape, base_bytes, counting, corpus.options.block_size, options, report, result);
    return result;
}

FitResult fit_compressed(const std::string& cooc_file, const CorpusSource& corpus, const mpi::Comm& world,
                         const FitOptions& options, const Report& report) {
    mpi::run_local_phase(world, "setup", [&] {
        check(options);
        check_compressed(options);
        if (!options.labels.empty() && corpus.files.empty())
            throw OptionError("{labels} needs the documents ({corpus} beside {cooc}) for ClustAcc");
    });
    const StopScope stoppable;
    FitResult result;
    Stopwatch clock;
    const double base_bytes = static_cast<double>(mpi::allreduce_max(world, current_rss_bytes()));
    io::CoocFileInfo info;
    io::CoocRows read = io::read_cooc_rows(world, cooc_file, info);
    const Index N = read.rows.size();
    mpi::run_local_phase(world, "setup", [&] { check(options, N); });
    if (!info.rectification.empty())
        say(report, Level::warning,
            fmt::format("fit: {} holds an already rectified C ({}); ENN rectifies its factor again", cooc_file,
                        info.rectification));
    // A hash of C's bits, for the checkpoints: another C with the same counts is told apart.
    std::uint64_t local = 0;
    for (Index i = 0; i < read.C.rows(); ++i)
        for (Index j = 0; j < read.C.cols(); ++j) {
            std::uint64_t bits = 0;
            std::memcpy(&bits, &read.C(i, j), sizeof bits);
            std::uint64_t z = (static_cast<std::uint64_t>(read.rows.begin(world.rank()) + i) * 0x9e3779b97f4a7c15ULL +
                               static_cast<std::uint64_t>(j)) ^ bits * 0xc2b2ae3d27d4eb4fULL;
            z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ULL;
            local += z ^ (z >> 29);
        }
    std::uint64_t c_hash = 0;
    for (const std::int64_t v : mpi::gather_concat(world, std::vector<std::int64_t>{static_cast<std::int64_t>(local)}, 0))
        c_hash += static_cast<std::uint64_t>(v);
    std::int64_t shared_hash = static_cast<std::int64_t>(c_hash);
    mpi::broadcast(world, shared_hash, 0);
    result.times.add("read", clock.seconds());
    clock.restart();
    const Index begin = read.rows.begin(world.rank());
    std::vector<std::int64_t> doc_freq(static_cast<std::size_t>(read.C.rows()));
    for (std::size_t i = 0; i < doc_freq.size(); ++i) doc_freq[i] = info.stats.doc_freq(begin + static_cast<Index>(i));
    const lowrank::MatrixOperator C(world, read.rows, std::move(read.C), std::move(doc_freq), read.estimator);
    const std::vector<std::int64_t> own_doc_freq = C.doc_freq();
    result.info.vocab = info.vocab;
    result.info.num_docs_declared = info.num_docs_declared;
    result.info.stats = info.stats;
    take_word_stats(C, own_doc_freq, result.info.stats);  // C's own row sums: the file's unigram to rounding
    result.times.add("operator", clock.seconds());
    say(report, Level::info,
        fmt::format("compress: C read from {}: N = {} words over {} ranks, {} rows a rank at most ({}); a product "
                    "puts N x p on every rank (an all-reduce)",
                    cooc_file, N, world.size(), read.rows.rows(0), mib(8.0 * static_cast<double>(read.rows.rows(0)) * N)));
    CompressedShape shape = compressed_shape(options, static_cast<double>(N), static_cast<double>(info.stats.num_docs),
                                             0.0, world.size());
    shape.cooc_file = true;
    const SourceSettings source{{"cooc_documents", std::to_string(info.stats.num_docs)},
                                {"cooc_tokens", std::to_string(info.stats.num_tokens)},
                                {"cooc_hash", fmt::format("{:016x}", static_cast<std::uint64_t>(shared_hash))}};
    const CountingCorpus counting =
        options.metrics ? counting_corpus_of_file(world, cooc_file, corpus.files, info.stats.doc_freq, corpus.options)
                        : CountingCorpus{};
    if (options.metrics) check_counting_corpus(world, counting, N);
    if (options.metrics && !options.labels.empty())  // a bad labels file now, not after the work
        check_labels(world, counting, options.labels);
    fit_with_sketch(C, own_doc_freq, source, shape, base_bytes, counting, corpus.options.block_size, options, report,
                    result);
    return result;
}

}  // namespace jsmf::fit
