// SPDX-License-Identifier: MIT
// The order of the stages: C → (rectify → factorize → measure) per K → coherence → hierarchy.
#include "jsmf/fit/fit.hpp"

#include <fmt/core.h>

#include <optional>

#include "fit/fit_k.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/fit/checkpoints.hpp"
#include "jsmf/fit/pipeline_choice.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::fit {

std::vector<model::Model> fit_k(distmat::DistMatrix& work, int K, const RectifyOptions& rectify_options,
                                const std::vector<ModelOptions>& models, DenseShared& shared,
                                DenseCheckpoints* checkpoints, const Report& report) {
    const ModelOptions& first = models.front();
    const anchors::DocFreq& doc_freq = shared.info.stats.doc_freq;
    // The stopping rule's looks at the topics find the anchors as the fit will: among the
    // candidates by document frequency.
    const anchors::Candidates candidates = first.method == Method::anchors && first.anchor_words.empty()
                                               ? anchors::candidates_by_doc_freq(doc_freq, first.anchor_min_df)
                                               : anchors::Candidates{};
    Stopwatch clock;
    model::RectificationTrace trace;
    if (const model::RectificationTrace* done = checkpoints ? checkpoints->rectified() : nullptr) {
        trace = *done;
    } else {
        trace = rectify(work, K, rectify_options, report, checkpoints ? checkpoints->rectify_hook() : ProjectionHook{},
                        checkpoints ? checkpoints->projection() : nullptr, candidates);
        if (checkpoints) checkpoints->after_rectify(work, trace);
    }
    const double rectify_seconds = clock.seconds();
    const std::int64_t rectify_peak = take_stage_peak_rss_bytes();
    const std::int64_t rectify_sent = take_stage_sent_bytes();
    ProjectionCache cache{{}, shared.original_projection};  // the rectified C's, shared by its models
    std::vector<model::Model> out;
    for (const ModelOptions& options : models) {
        std::optional<recover::RecoverProgress> progress;
        if (checkpoints) progress = checkpoints->recover_progress(work, trace);
        model::Model m =
            factorize(work, K, options, trace, rectify_options.seed, report, progress ? &*progress : nullptr, doc_freq);
        if (checkpoints) checkpoints->after_recover(m, work, trace);
        m.times.add_before("rectify", rectify_seconds, rectify_peak, rectify_sent);
        describe(m, shared.info.vocab, report);
        if (shared.original) measure_model(m, work, shared.original, cache);
        out.push_back(std::move(m));
    }
    shared.original_projection = cache.original;
    return out;
}

void check_documents(const FitOptions& options, std::int64_t counted) {
    if (counted < options.min_documents)
        throw InputError(render_options(fmt::format(
            "the documents given count M = {}, fewer than the {} of the model updated: an exact update reads the old "
            "documents again with the new ({{corpus}} OLD… NEW…); without them, {{update_mode}} sketch",
            counted, options.min_documents)));
}

void check(const FitOptions& options, Index num_words) {
    check(options);
    const std::vector<int>& topics = options.hierarchy.empty() ? options.topics : options.hierarchy;
    const std::string name = options.hierarchy.empty() ? "{topics}" : "{hierarchy}";
    for (const int K : topics)
        if (K >= num_words)
            throw OptionError(name + " must satisfy 2 <= K < N = " + std::to_string(num_words) + ", got " +
                              std::to_string(K));
    if (options.compressed.sketch_rank > num_words)
        throw OptionError("{sketch_rank} must be at most N = " + std::to_string(num_words) + " (C's rank), got " +
                          std::to_string(options.compressed.sketch_rank));
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
    mpi::run_local_phase(world, "setup", [&] {  // AnchorFree has no anchors: its own checks say what fails
        if (model.method == Method::anchors && model.anchor_words.empty()) {
            const anchors::Candidates candidates = anchors::candidates_by_doc_freq(info.stats.doc_freq, model.anchor_min_df);
            for (const int K : topics) anchors::count_candidates(info.stats.unigram, candidates, K);
        }
    });
    check_counting_corpus(world, corpus, N);  // before the work, not after it
    if (measure && !options.labels.empty() && !corpus.files.empty()) check_labels(world, corpus, options.labels);
    FitResult result;
    result.info = info;
    // Checkpoints (one K) and stop signals: the ranks agree between the stages, after every
    // AP, DR or DP iteration and between rounds of the recovery's solves. A stop then
    // writes the stage's checkpoint (with a checkpoint path) and ends every rank together;
    // after the first K's recovery a signal has its default effect.
    DenseCheckpoints checkpoints(options, topics.front(), C, info, report);
    DenseShared shared{info, measure ? &C : nullptr, {}};
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
        std::optional<distmat::DistMatrix> resumed = checkpoints.take_matrix();
        distmat::DistMatrix work = resumed ? std::move(*resumed) : in_place ? std::move(C) : distmat::copy(C);
        std::vector<model::Model> models = fit_k(work, K, options.rectify, {model}, shared, &checkpoints, report);
        result.models.push_back(std::move(models.front()));
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
