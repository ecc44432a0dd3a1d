// SPDX-License-Identifier: MIT
// The order of the stages: C → (rectify → factorize → measure) per K → coherence → hierarchy.
#include "jsmf/fit/fit.hpp"

#include <spdlog/fmt/fmt.h>

#include "jsmf/core/error.hpp"
#include "jsmf/distmat/ops.hpp"
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
    check_counting_corpus(world, corpus, N);  // before the work, not after it
    const ModelOptions& model = options.model;
    ProjectionCache original_projection;  // the original C's, shared by every K
    FitResult result;
    result.info = info;
    for (std::size_t k = 0; k < topics.size(); ++k) {
        const int K = topics[k];
        if (model.method == Method::anchors)
            say(report, Level::info,
                fmt::format("fit: K = {} ({} of {}): rectify {}, anchors {}, solver {}", K, k + 1, topics.size(),
                            to_string(options.rectify.method),
                            model.anchor_words.empty() ? anchors::finder_name(model.finder) : "words",
                            to_string(model.solver)));
        else
            say(report, Level::info,
                fmt::format("fit: K = {} ({} of {}): rectify {}, {}", K, k + 1, topics.size(),
                            to_string(options.rectify.method), to_string(model.method)));
        const bool in_place = !measure && k + 1 == topics.size();
        distmat::DistMatrix work = in_place ? std::move(C) : distmat::copy(C);
        Stopwatch clock;
        const RectificationTrace trace = rectify(work, K, options.rectify, report);
        const double rectify_seconds = clock.seconds();
        Model m = factorize(work, K, model, trace, options.rectify.seed, report);
        m.times.add("rectify", rectify_seconds);
        describe(m, info.vocab, report);
        if (measure) {
            ProjectionCache cache{{}, original_projection.original};
            measure_model(m, work, &C, cache);
            original_projection.original = cache.original;
        }
        result.models.push_back(std::move(m));
    }
    if (measure) {
        std::vector<Model*> measured;
        for (auto& m : result.models) measured.push_back(&m);
        measure_coherence(world, measured, corpus, N, report, /*keep_going=*/true);
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
        say(report, Level::info, render_options("fit: the " + to_string(choice.pipeline) + " pipeline: " + choice.reason));
    if (!choice.warning.empty()) say(report, Level::warning, render_options("fit: " + choice.warning));
    if (choice.pipeline == Pipeline::compressed) {
        FitOptions compressed = options;
        compressed.pipeline = Pipeline::compressed;
        return fit_compressed(corpus, grid->borrow_comm(), compressed, report);
    }
    StageTimes times;
    BuiltCooc built = build_cooc(corpus, grid, times, report);
    CountingCorpus counting;
    if (options.metrics) counting = CountingCorpus{corpus.files, corpus.options, built.info.stats.doc_freq};
    FitResult result = fit(std::move(built.C), built.info, options, counting, report);
    result.times = times;
    return result;
}

}  // namespace jsmf::fit
