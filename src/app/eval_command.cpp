// SPDX-License-Identifier: MIT
// `jsmf eval`: (re)measures a model file: its metrics, against C and the corpus, and a planted truth.
#include <algorithm>
#include <cstdio>
#include <tuple>

#include "app/commands.hpp"
#include "app/output.hpp"
#include "jsmf/fit/measure.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/eval/truth.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/io/synth_file.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::app {

CLI::App* add_eval_command(CLI::App& app, EvalCommand& c) {
    CLI::App* sub = app.add_subcommand(
        "eval", "Measure a model file: the papers' metrics (from B and A; with --cooc or --corpus also against C and "
                "the documents), and the error against a planted truth (--truth)");
    sub->add_option("model", c.model, "Model file from jsmf fit")->required();
    add_cooc_options(sub, c.input, false);
    sub->add_option("--cooc", c.cooc_file,
                    "The co-occurrence file the model was fitted on (recovery and approximation errors; the "
                    "recorded rectification is run again for the errors against the rectified C)");
    sub->add_option("--labels", c.labels,
                    "Document labels (one integer per line, in corpus order; needs --corpus): ClustAcc");
    sub->add_option("--seed", c.seed, "Seed of ClustAcc's k-means")->capture_default_str();
    sub->add_option("--truth", c.truth, "A planted model (truth.X.h5 from jsmf synth): topic matching and errors");
    sub->add_option("--out", c.out, "Write the measured model here (default: update MODEL in place, atomically)");
    sub->add_option("--block-size", c.block_size, "Block size of C's block-cyclic layout")->capture_default_str();
    sub->add_option("--grid", c.grid, "Process grid RxC (default: most square)");
    return sub;
}

namespace {

std::string option_of(const io::ModelFile& file, const std::string& name, const std::string& fallback) {
    for (const auto& [key, value] : file.options)
        if (key == name && !value.empty()) return value;
    return fallback;
}

/// Local. An integer option of the model file, or `fallback` when absent; InputError
/// when it is not an integer.
long long integer_option(const io::ModelFile& file, const std::string& name, long long fallback) {
    const std::string text = option_of(file, name, "");
    if (text.empty()) return fallback;
    try {
        std::size_t used = 0;
        const long long value = std::stoll(text, &used);
        if (used == text.size()) return value;
    } catch (const std::exception&) {
    }
    throw InputError("the model file's option " + name + " is not an integer: '" + text + "'");
}

/// Local. The rectification a model records, as settings that run it again.
RectifySettings recorded_rectification(const io::ModelFile& file, const model::Model& m) {
    RectifySettings s;
    s.method = m.rectification.method;
    s.iterations = m.rectification.iterations;  // as many as were run (any stop included)
    s.tolerance = 0;
    s.stop = "iterations";
    // The arithmetic of the run: files before the fast AP ran plain AP with exact solves.
    s.acceleration = option_of(file, "acceleration", "none");
    s.anderson_depth = static_cast<int>(integer_option(file, "anderson_depth", s.anderson_depth));
    for (auto& [name, value, fallback] : std::vector<std::tuple<const char*, double*, const char*>>{
             {"anderson_below", &s.anderson_below, "0"}, {"relaxation", &s.relaxation, "1"}}) {
        const std::string text = option_of(file, name, fallback);
        try {
            *value = std::stod(text);
        } catch (const std::exception&) {
            throw InputError(std::string("the model file's option ") + name + " is not a number: '" + text + "'");
        }
    }
    const std::string factor = option_of(file, "eig_tolerance_factor", "0");
    try {
        s.eig_tolerance_factor = std::stod(factor);
    } catch (const std::exception&) {
        throw InputError("the model file's option eig_tolerance_factor is not a number: '" + factor + "'");
    }
    s.eigensolver = option_of(file, "eigensolver", s.eigensolver);
    s.precision = option_of(file, "precision", "double");
    s.eig_check_steps = static_cast<int>(integer_option(file, "eig_check_steps", s.eig_check_steps));
    s.eig_check_every = static_cast<int>(integer_option(file, "eig_check_every", s.eig_check_every));
    // A run that ended on an over-relaxed step closed with one plain step more (counted in
    // its iterations): replaying one fewer makes the same closing step.
    const auto& trace = m.rectification.trace;
    if (s.relaxation != 1 && trace.size() >= 2 && trace.back().accelerated == 0 && trace[trace.size() - 2].accelerated == 2)
        --s.iterations;
    s.permutations = m.rectification.method == "dc" ? m.rectification.iterations : s.permutations;
    const std::string seed = option_of(file, "seed", "");
    if (!seed.empty()) {
        std::size_t used = 0;
        try {
            if (seed.front() != '-') s.seed = std::stoull(seed, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != seed.size()) throw InputError("the model file's option seed is not a seed: '" + seed + "'");
    }
    return s;
}

/// The stored metrics with `fresh` replacing those it measured again.
void merge_metrics(eval::MetricSet& stored, const eval::MetricSet& fresh) {
    for (const auto& metric : fresh.metrics) stored.put(metric);
    eval::sort_metrics(stored);
}

}  // namespace

int run_eval(const EvalCommand& c, const mpi::Comm& world, const std::string& command_line) {
    (void)command_line;
    int grid_rows = 0, grid_cols = 0;
    io::ModelFile file;
    mpi::run_local_phase(world, "setup", [&] {
        parse_grid_shape(c.grid, world.size(), grid_rows, grid_cols);
        if (c.block_size < 1) throw usage_error("--block-size must be at least 1");
        if (!c.input.vocab.empty() && c.input.corpus.empty()) throw usage_error("--vocab needs --corpus");
        if (!c.labels.empty() && c.input.corpus.empty()) throw usage_error("--labels needs --corpus");
        if (!c.cooc_file.empty() && !c.input.vocab.empty())
            throw usage_error("--cooc and --vocab exclude each other (C comes from one of them)");
        file = io::read_model_file(c.model);  // every rank: small arrays, read-only
    });
    const std::string out = c.out.empty() ? c.model : c.out;
    io::check_output_path(world, out, with(input_files(c.input), {c.cooc_file, c.truth, c.labels}));  // the model may be rewritten in place
    const auto grid = distmat::Grid::create(world, grid_rows, grid_cols);
    const auto N = static_cast<Index>(file.vocab.size());

    // What B, B̆, A and p alone tell; and the model's document filter (its own record, else
    // the flags).
    CoocSettings input = c.input;
    mpi::run_local_phase(world, "eval", [&] {
        for (auto& m : file.models) merge_metrics(m.metrics, eval::model_metrics({m.B, m.B_breve, m.A, m.unigram, m.anchors}));
        input.options.min_tokens = integer_option(file, "min_tokens", input.options.min_tokens);
        input.options.min_distinct = integer_option(file, "min_distinct", input.options.min_distinct);
        // C is built again as the model's was: its estimator (Eq. 5 or tf-idf) where recorded.
        for (const auto& [name, value] : file.options)
            if (name == "estimator" && !value.empty()) {
                if (!find_name<cooc::Estimator>(value)) throw InputError(c.model, "records an unknown estimator '" + value + "'");
                if (value != input.estimator && input.estimator != "unbiased")
                    throw InputError(c.model, "was fitted with --estimator " + value + ", not " + input.estimator);
                input.estimator = value;
            }
        // ClustAcc's NNLS sees each document as C did (tf-idf vectors for a tf-idf C).
        input.options.estimator = parse_name<cooc::Estimator>(input.estimator, "estimator");
    });

    // The filter that built C: the --cooc file's record, where it has one.
    if (!c.cooc_file.empty()) {
        const fit::CountingCorpus recorded = fit::counting_corpus_of_file(world, c.cooc_file, {}, file.doc_freq, input.options);
        input.options.min_tokens = recorded.filter.min_tokens;
        input.options.min_distinct = recorded.filter.min_distinct;
    }

    // Coherence first (one cheap pass, checked against the model's D1): a wrong corpus
    // stops eval before the rectifications are run again.
    if (!c.input.corpus.empty()) {
        fit::CountingCorpus corpus;
        corpus.files = c.input.corpus;
        corpus.filter = input.options;
        corpus.doc_freq = file.doc_freq;
        std::vector<model::Model*> models;
        for (auto& m : file.models) models.push_back(&m);
        fit::measure_coherence(world, models, corpus, N, log_report());
        if (!c.labels.empty()) fit::measure_clustering(world, models, corpus, c.labels, c.seed, log_report());
    }

    // Against C: from the file, or built again from the corpus with the model's filter.
    const bool build_from_corpus = c.cooc_file.empty() && !c.input.vocab.empty();
    if (!c.cooc_file.empty() || build_from_corpus) {
        StageTimes times;
        io::CoocFileInfo info;
        fit::CorpusSource source;
        mpi::run_local_phase(world, "setup", [&] { source = corpus_source(input, c.block_size); });
        const distmat::DistMatrix C = fit::load_cooc(source, c.cooc_file, grid, times, info, log_report());
        mpi::check_on_root(world, "setup", [&] {
            if (C.rows() != N) throw InputError(c.cooc_file.empty() ? c.input.vocab : c.cooc_file,
                                                "has " + std::to_string(C.rows()) + " words, the model " + std::to_string(N));
            if (info.stats.doc_freq != file.doc_freq)
                throw InputError(c.cooc_file.empty() ? c.input.corpus.front() : c.cooc_file,
                                 "is not the C the model was fitted on: its document frequencies differ from the "
                                 "model's /stats/doc_freq");
            if (!info.rectification.empty())
                log::warn("eval: {} holds a rectified C ({}): the \"_original\" metrics are against it", c.cooc_file,
                          info.rectification);
        });
        Eigen::MatrixXd original_projection;
        for (auto& m : file.models) {
            distmat::DistMatrix work = distmat::copy(C);
            RectifySettings again;
            mpi::run_local_phase(world, "setup", [&] { again = recorded_rectification(file, m); });
            if (again.method != "none")
                log::info("eval: K = {}: running the recorded rectification again ({}, {} iterations) for the errors "
                          "against the C the inference used", m.num_topics, again.method, again.iterations);
            // Float sums in another order land elsewhere on AP's continuum of fixed points.
            if (again.precision == "single")
                log::warn("eval: K = {}: the model was rectified in single precision, which the same rank count, "
                          "grid and threads reproduce exactly, others only to about 1e-4 (the errors against the "
                          "rectified C are then those of this replay)", m.num_topics);
            fit::RectifyOptions options;
            mpi::run_local_phase(world, "setup", [&] { options = fit::resolve(to_options(again)); });
            fit::rectify(work, m.num_topics, options, log_report());
            fit::ProjectionCache cache{{}, original_projection};
            fit::measure_model(m, work, &C, cache);
            original_projection = cache.original;
        }
    }

    if (!c.truth.empty()) {  // the models with the planted K; the others are left as they are
        synth::SynthCorpus truth;
        mpi::run_local_phase(world, "truth", [&] {
            truth = io::read_synth_truth(c.truth);
            int compared = 0;
            for (auto& m : file.models) {
                if (truth.B.rows() != N)
                    throw InputError(c.truth, "plants topics over " + std::to_string(truth.B.rows()) +
                                                  " words; the model has " + std::to_string(N));
                if (truth.B.cols() != m.num_topics) continue;
                m.truth = eval::compare_to_truth(m.B, m.A, m.anchors, truth.B, truth.A, truth.anchors);
                m.has_truth = true;
                m.truth_file = c.truth;
                ++compared;
            }
            if (compared == 0)
                throw InputError(c.truth, "plants K = " + std::to_string(truth.B.cols()) +
                                              " topics; the model file has no model with that K");
        });
    }

    io::update_model_evaluation(world, c.model, out, file.models);
    if (world.is_root()) {
        for (const auto& m : file.models) {
            std::printf("\n== K = %d ==\n", m.num_topics);
            print_metrics(m);
        }
        std::fflush(stdout);
    }
    log::info("eval: wrote {}", out);
    return exit_code::ok;
}

}  // namespace jsmf::app
