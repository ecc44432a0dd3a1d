// SPDX-License-Identifier: MIT
// The order of the stages: C → (rectify → factorize → measure) per K → coherence → hierarchy.
#include "jsmf/fit/fit.hpp"

#include <fmt/core.h>

#include <optional>

#include "fit/dense_checkpoint.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/fit/checkpoints.hpp"
#include "jsmf/fit/pipeline_choice.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::fit {

void check(const FitOptions& options, Index num_words) {
    check(options);
    const std::vector<int>& topics = options.hierarchy.empty() ? options.topics : options.hierarchy;
    const std::string name = options.hierarchy.empty() ? "{topics}" : "{hierarchy}";
    for (const int K : topics)
        if (K >= num_words)
            throw OptionError(name + " must satisfy 2 <= K < N = " + std::to_string(num_words) + ", got " +
                              std::to_string(K));
}

FitResult fit(distmat::DistMatrix C, const io::CoocFileInfo& info, const FitOptions& options,
              const CountingCorpus& counting, const Report& report) {
    const mpi::Comm world = C.grid().borrow_comm();
    const Index N = C.rows();
    mpi::run_local_phase(world, "setup", [&] {
        check(options, N);
        if (static_cast<Index>(info.vocab.size()) != N || info.stats.unigram.size() != N ||
            info.stats.doc_freq.size() != N)
            throw InputError("fit: C is " + std::to_string(N) + " x " + std::to_string(N) + " but its vocabulary has " +
                             std::to_string(info.vocab.size()) + " words and its statistics " +
                             std::to_string(info.stats.unigram.size()));
    });
    const std::vector<int> topics = options.hierarchy.empty() ? options.topics
                                                              : std::vector<int>{options.hierarchy.front()};
    Index never = 0;
    for (Index i = 0; i < info.stats.unigram.size(); ++i) never += info.stats.unigram(i) > 0 ? 0 : 1;
    if (never > 0)
        say(report, Level::warning,
            render_options(fmt::format("fit: {} of {} words never occur in the used documents (rows of C that are 0: "
                                       "with {{rectify}} none they get B row 0 and are never anchors)",
                                       never, N)));

    // Stages 2–5 per K. The metrics compare with the original C, so then every K works on
    // a copy; without them, the last K rectifies C in place.
    const std::shared_ptr<const distmat::Grid> grid = C.grid_ptr();  // C may be moved into the last K's work
    const int block_size = C.block_rows();
    const bool measure = options.metrics;
    const CountingCorpus none;
    const CountingCorpus& corpus = measure ? counting : none;
    const ModelOptions& model = options.model;
    // Anchor candidates by document frequency (the finders' and the quality rule's): too
    // few for a K is said now, by every rank, not after the rectification.
    const bool thresholded = model.method == Method::anchors && model.anchor_words.empty();
    const anchors::Candidates candidates = thresholded ? anchors::candidates_by_doc_freq(info.stats.doc_freq, model.anchor_min_df)
                                                       : anchors::Candidates{};
    mpi::run_local_phase(world, "setup", [&] {  // AnchorFree has no anchors: its own checks say what fails
        if (thresholded)
            for (const int K : topics) anchors::count_candidates(info.stats.unigram, candidates, K);
    });
    check_counting_corpus(world, corpus, N);  // before the work, not after it
    if (measure && !options.labels.empty() && !corpus.files.empty()) check_labels(world, corpus, options.labels);
    ProjectionCache original_projection;  // the original C's, shared by every K
    FitResult result;
    result.info = info;
    // Checkpoints (one K) and stop signals: the ranks agree between the stages, after every
    // AP, DR or DP iteration and between rounds of the recovery's solves. A stop then
    // writes the stage's checkpoint (with a checkpoint path) and ends every rank together;
    // after the recovery a signal has its default effect.
    Checkpoints checkpoints(world, options.checkpoint.path, options.checkpoint.seconds, report);
    std::optional<StopScope> stoppable(std::in_place);
    const bool resuming = !options.checkpoint.resume.empty();
    Entries settings;
    std::optional<DenseResume> resumed;
    if (checkpoints.enabled() || resuming) settings = dense_checkpoint_settings(options, topics.front(), C);
    if (resuming && !measure) distmat::DistMatrix released = std::move(C);  // the checkpoint's C replaces it
    if (resuming) {
        resumed = read_dense_checkpoint(options.checkpoint.resume, grid, block_size, topics.front(),
                                        resolve(options.rectify).method, settings);
        say(report, Level::info,
            fmt::format("resume: from {}: {}", options.checkpoint.resume,
                        resumed->stage == DenseStage::cooc      ? std::string("C as counted")
                        : resumed->stage == DenseStage::rectify ? fmt::format("the rectification after {} iterations",
                                                                              resumed->projection.iterations_done)
                                                                : fmt::format("the recovery of B after {} of {} words",
                                                                              resumed->recovered.words_done, N)));
    } else if (checkpoints.due()) {  // a stop while C was counted, or a long count
        checkpoints.write(
            [&] {
                model::RectificationTrace not_begun;
                not_begun.method = model::recorded(resolve(options.rectify).method);
                not_begun.num_topics = topics.front();
                write_dense_checkpoint(checkpoints.path(), DenseStage::cooc, C, info, settings, not_begun, {});
            },
            "C as counted");
        checkpoints.stop_if_requested("after the co-occurrence counts");
    }
    for (std::size_t k = 0; k < topics.size(); ++k) {
        const int K = topics[k];
        if (model.method == Method::anchors)
            say(report, Level::info,
                fmt::format("fit: K = {} ({} of {}): rectify {}, anchors {}, solver {}", K, k + 1, topics.size(),
                            name_of(options.rectify.method),
                            model.anchor_words.empty() ? name_of(model.finder) : "words",
                            name_of(model.solver)));
        else
            say(report, Level::info,
                fmt::format("fit: K = {} ({} of {}): rectify {}, {}", K, k + 1, topics.size(),
                            name_of(options.rectify.method), name_of(model.method)));
        const bool in_place = !measure && k + 1 == topics.size();
        distmat::DistMatrix work = resumed ? std::move(*resumed->C) : in_place ? std::move(C) : distmat::copy(C);
        const auto write_stage = [&](DenseStage stage, const distmat::DistMatrix& M, const model::RectificationTrace& trace,
                                     io::CheckpointRecord record, const recover::RecoverCheckpoint* recovered,
                                     const std::string& what) {
            checkpoints.write(
                [&] {
                    write_dense_checkpoint(checkpoints.path(), stage, M, info, settings, trace, std::move(record),
                                           recovered);
                },
                what);
        };
        Stopwatch clock;
        model::RectificationTrace trace;
        if (resumed && resumed->stage == DenseStage::recover) {
            trace = resumed->trace;
        } else {
            const Rectifier method = resolve(options.rectify).method;
            const int cap = *resolve(options.rectify).iterations;
            const ProjectionHook hook = [&](const rectify::ProjectionState& state, const rectify::IterateView& current) {
                if (!checkpoints.due()) return;
                write_stage(DenseStage::rectify, current.matrix(), trace_of(method, K, state), checkpoint_of(state),
                            nullptr, fmt::format("the rectification after {} iterations", state.iterations_done));
                checkpoints.stop_if_requested(
                    fmt::format("in the rectification after {} of at most {} iterations", state.iterations_done, cap));
            };
            rectify::ProjectionState* from =
                resumed && resumed->stage == DenseStage::rectify ? &resumed->projection : nullptr;
            trace = rectify(work, K, options.rectify, report, hook, from, candidates);
            if (checkpoints.due()) {
                write_stage(DenseStage::recover, work, trace, {}, nullptr, "the rectified C");
                checkpoints.stop_if_requested("after the rectification");
            }
        }
        const double rectify_seconds = clock.seconds();
        const std::int64_t rectify_peak = take_stage_peak_rss_bytes();
        recover::RecoverProgress progress;
        progress.batch = options.checkpoint.recover_batch;
        progress.due = [&] { return checkpoints.due(); };
        progress.save = [&](const recover::RecoverCheckpoint& state) {
            write_stage(DenseStage::recover, work, trace, {}, &state,
                        fmt::format("the recovery of B after {} of {} words", state.words_done, N));
            checkpoints.stop_if_requested(fmt::format("in the recovery of B after {} of {} words", state.words_done, N));
        };
        if (resumed && resumed->stage == DenseStage::recover) progress.resume = &resumed->recovered;
        model::Model m = factorize(work, K, model, trace, options.rectify.seed, report, &progress, info.stats.doc_freq);
        // The last look: a signal since the last agreement (the recovery's last round, A,
        // AnchorFree) stops here, with B's solves saved whole.
        if (stoppable && checkpoints.due()) {
            if (model.method == Method::anchors) {
                recover::RecoverCheckpoint all;
                all.words_done = N;
                all.anchors = m.anchors;
                all.B_breve = m.B_breve;
                all.solved = m.words_solved;
                all.converged = m.words_converged;
                all.max_iterations = m.solver_max_iterations;
                write_stage(DenseStage::recover, work, trace, {}, &all, "the recovery of B, done");
            }
            checkpoints.stop_if_requested("after the recovery of B");
        }
        stoppable.reset();  // from here on a signal ends jsmf as usual
        resumed.reset();
        m.times.add_before("rectify", rectify_seconds, rectify_peak);
        describe(m, info.vocab, report);
        if (measure) {
            ProjectionCache cache{{}, original_projection.original};
            measure_model(m, work, &C, cache);
            original_projection.original = cache.original;
        }
        result.models.push_back(std::move(m));
    }
    if (measure) {
        std::vector<model::Model*> measured;
        for (auto& m : result.models) measured.push_back(&m);
        measure_coherence(world, measured, corpus, N, report, /*keep_going=*/true);
        if (!options.labels.empty() && !corpus.files.empty())
            measure_clustering(world, measured, corpus, options.labels, options.rectify.seed, report);
    }
    if (!options.hierarchy.empty())
        result.hierarchy = fit_hierarchy(result.models.front(), options.hierarchy, grid, block_size,
                                         options.rectify, model, report);
    return result;
}

FitResult fit(const CorpusSource& corpus, const std::shared_ptr<const distmat::Grid>& grid, const FitOptions& options,
              const Report& report) {
    // A library caller's settings that differ from the defaults count as given.
    const PipelineChoice choice = choose_pipeline(corpus, grid->borrow_comm(), options, changed_dense_settings(options));
    if (options.pipeline == Pipeline::automatic)
        say(report, Level::info, render_options("fit: the " + name_of(choice.pipeline) + " pipeline: " + choice.reason));
    if (!choice.warning.empty()) say(report, Level::warning, render_options("fit: " + choice.warning));
    if (choice.pipeline == Pipeline::compressed) {
        FitOptions compressed = options;
        compressed.pipeline = Pipeline::compressed;
        return fit_compressed(corpus, grid->borrow_comm(), compressed, report);
    }
    StageTimes times;
    // A stop signal while C is counted is a request: fit() looks at it first thing
    // (checkpoints C, with a checkpoint path, and stops).
    std::optional<StopScope> counting_scope(std::in_place);
    BuiltCooc built = build_cooc(corpus, grid, times, report);
    counting_scope.reset();
    CountingCorpus counting;
    if (options.metrics) counting = CountingCorpus{corpus.files, corpus.options, built.info.stats.doc_freq};
    FitResult result = fit(std::move(built.C), built.info, options, counting, report);
    result.times = times;
    return result;
}

}  // namespace jsmf::fit
