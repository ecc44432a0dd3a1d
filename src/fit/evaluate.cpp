// SPDX-License-Identifier: MIT
// eval's composition: the model file's metrics measured again, against C, the corpus and a truth.
#include "jsmf/fit/evaluate.hpp"

#include <fmt/core.h>

#include <tuple>

#include "jsmf/distmat/ops.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/eval/truth.hpp"
#include "jsmf/fit/job.hpp"
#include "jsmf/fit/measure.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/io/synth_file.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::fit {
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

/// Local. A number option of the model file, or `fallback` (text) when absent;
/// InputError when it is not a number.
double number_option(const io::ModelFile& file, const std::string& name, const std::string& fallback) {
    const std::string text = option_of(file, name, fallback);
    try {
        return std::stod(text);
    } catch (const std::exception&) {
        throw InputError("the model file's option " + name + " is not a number: '" + text + "'");
    }
}

/// Local. The rectification a model records, as options that run it again: as many plain
/// iterations as were run (any stop included), with the run's arithmetic.
RectifyOptions recorded_rectification(const io::ModelFile& file, const model::Model& m) {
    RectifyOptions o;
    // ENN runs on the documents' operator, not on C: there is nothing to replay (a usage
    // error, as before the trace's method was typed).
    if (m.rectification.method == model::Rectification::enn)
        throw OptionError("K = " + std::to_string(m.num_topics) +
                          ": the model was rectified by ENN (the compressed pipeline), which eval cannot run again "
                          "on C: give no {cooc} and no {vocab}");
    o.method = model::dense_rectifier(m.rectification.method);
    o.stop = rectify::StopRule::iterations;
    int iterations = m.rectification.iterations;
    o.tolerance = 0;
    // The arithmetic of the run: files before the fast AP ran plain AP with exact solves.
    o.acceleration = parse_name<Acceleration>(option_of(file, "acceleration", "none"), "acceleration");
    o.anderson_depth = static_cast<int>(integer_option(file, "anderson_depth", o.anderson_depth));
    o.anderson_below = number_option(file, "anderson_below", "0");
    const double relaxation = number_option(file, "relaxation", "1");
    if (relaxation >= 0) o.relaxation = relaxation;  // negative (never written): unset
    const double factor = number_option(file, "eig_tolerance_factor", "0");
    if (factor >= 0) o.eig_tolerance_factor = factor;
    o.eigensolver = parse_name<distmat::EigMethod>(option_of(file, "eigensolver", name_of(o.eigensolver)), "eigensolver");
    o.precision = parse_name<Precision>(option_of(file, "precision", "double"), "precision");
    o.eig_check_steps = static_cast<int>(integer_option(file, "eig_check_steps", o.eig_check_steps));
    o.eig_check_every = static_cast<int>(integer_option(file, "eig_check_every", o.eig_check_every));
    // A run that ended on an over-relaxed step closed with one plain step more (counted in
    // its iterations): replaying one fewer makes the same closing step.
    const auto& trace = m.rectification.trace;
    if (relaxation != 1 && trace.size() >= 2 && trace.back().accelerated == 0 && trace[trace.size() - 2].accelerated == 2)
        --iterations;
    o.iterations = iterations;
    if (o.method == Rectifier::dc) o.permutations = m.rectification.iterations;
    const std::string seed = option_of(file, "seed", "");
    if (!seed.empty()) {
        std::size_t used = 0;
        try {
            if (seed.front() != '-') o.seed = std::stoull(seed, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != seed.size()) throw InputError("the model file's option seed is not a seed: '" + seed + "'");
    }
    return o;
}

/// The stored metrics with `fresh` replacing those it measured again.
void merge_metrics(eval::MetricSet& stored, const eval::MetricSet& fresh) {
    for (const auto& metric : fresh.metrics) stored.put(metric);
    eval::sort_metrics(stored);
}

}  // namespace

std::vector<model::Model> evaluate(const mpi::Comm& world, const EvalJob& job, const Report& report) {
    io::ModelFile file;
    // every rank reads the file but a compressed fit's factor record (B, B̆: N × K each;
    // eval is a one-node job at the sizes where that matters)
    mpi::run_local_phase(world, "setup", [&] { file = io::read_model_file(job.model, io::ModelParts::without_factor); });
    const std::string out = job.out.empty() ? job.model : job.out;
    std::vector<std::string> inputs = job.corpus.files;
    for (const std::string& path : {job.corpus.vocab, job.cooc_file, job.truth, job.labels}) inputs.push_back(path);
    io::check_output_path(world, out, inputs);  // the model may be rewritten in place
    const auto grid = process_grid(world, job.grid_rows, job.grid_cols);
    const auto N = static_cast<Index>(file.vocab.size());

    // What B, B̆, A and p alone tell; and the model's document filter (its own record, else
    // the job's).
    CorpusSource corpus = job.corpus;
    mpi::run_local_phase(world, "eval", [&] {
        for (auto& m : file.models) merge_metrics(m.metrics, eval::model_metrics({m.B, m.B_breve, m.A, m.unigram, m.anchors}));
        corpus.options.min_tokens = integer_option(file, "min_tokens", corpus.options.min_tokens);
        corpus.options.min_distinct = integer_option(file, "min_distinct", corpus.options.min_distinct);
        // C is built again as the model's was: its estimator (Eq. 5 or tf-idf) where recorded.
        // ClustAcc's NNLS then sees each document as C did (tf-idf vectors for a tf-idf C).
        for (const auto& [name, value] : file.options)
            if (name == "estimator" && !value.empty()) {
                const auto recorded = find_name<cooc::Estimator>(value);
                if (!recorded) throw InputError(job.model, "records an unknown estimator '" + value + "'");
                if (*recorded != corpus.options.estimator && corpus.options.estimator != cooc::Estimator::unbiased)
                    throw InputError(job.model, render_options("was fitted with {estimator} " + value + ", not " +
                                                               name_of(corpus.options.estimator)));
                corpus.options.estimator = *recorded;
            }
    });

    // The filter that built C: the C file's record, where it has one.
    if (!job.cooc_file.empty()) {
        const CountingCorpus recorded = counting_corpus_of_file(world, job.cooc_file, {}, file.doc_freq, corpus.options);
        corpus.options.min_tokens = recorded.filter.min_tokens;
        corpus.options.min_distinct = recorded.filter.min_distinct;
    }

    // Coherence first (one cheap pass, checked against the model's D1): a wrong corpus
    // stops eval before the rectifications are run again.
    if (!corpus.files.empty()) {
        const CountingCorpus counting{corpus.files, corpus.options, file.doc_freq};
        std::vector<model::Model*> models;
        for (auto& m : file.models) models.push_back(&m);
        measure_coherence(world, models, counting, N, report);
        if (!job.labels.empty()) measure_clustering(world, models, counting, job.labels, job.seed, report);
    }

    // Against C: from the file, or built again from the corpus with the model's filter.
    const bool build_from_corpus = job.cooc_file.empty() && !corpus.vocab.empty();
    if (!job.cooc_file.empty() || build_from_corpus) {
        StageTimes times;
        io::CoocFileInfo info;
        const distmat::DistMatrix C = load_cooc(corpus, job.cooc_file, grid, times, info, report);
        mpi::check_on_root(world, "setup", [&] {
            if (C.rows() != N)
                throw InputError(job.cooc_file.empty() ? corpus.vocab : job.cooc_file,
                                 "has " + std::to_string(C.rows()) + " words, the model " + std::to_string(N));
            if (info.stats.doc_freq != file.doc_freq)
                throw InputError(job.cooc_file.empty() ? corpus.files.front() : job.cooc_file,
                                 "is not the C the model was fitted on: its document frequencies differ from the "
                                 "model's /stats/doc_freq");
        });
        if (!info.rectification.empty())
            say(report, Level::warning,
                fmt::format("eval: {} holds a rectified C ({}): the \"_original\" metrics are against it", job.cooc_file,
                            info.rectification));
        Eigen::MatrixXd original_projection;
        for (auto& m : file.models) {
            distmat::DistMatrix work = distmat::copy(C);
            RectifyOptions again;
            mpi::run_local_phase(world, "setup", [&] { again = resolve(recorded_rectification(file, m)); });
            if (again.method != Rectifier::none)
                say(report, Level::info,
                    fmt::format("eval: K = {}: running the recorded rectification again ({}, {} iterations) for the "
                                "errors against the C the inference used",
                                m.num_topics, name_of(again.method), *again.iterations));
            // Float sums in another order land elsewhere on AP's continuum of fixed points.
            if (again.precision == Precision::single)
                say(report, Level::warning,
                    fmt::format("eval: K = {}: the model was rectified in single precision, which the same rank count, "
                                "grid and threads reproduce exactly, others only to about 1e-4 (the errors against "
                                "the rectified C are then those of this replay)",
                                m.num_topics));
            rectify(work, m.num_topics, again, report);
            ProjectionCache cache{{}, original_projection};
            measure_model(m, work, &C, cache);
            original_projection = cache.original;
        }
    }

    if (!job.truth.empty()) {  // the models with the planted K; the others are left as they are
        mpi::run_local_phase(world, "truth", [&] {
            const synth::SynthCorpus truth = io::read_synth_truth(job.truth);
            int compared = 0;
            for (auto& m : file.models) {
                if (truth.B.rows() != N)
                    throw InputError(job.truth, "plants topics over " + std::to_string(truth.B.rows()) +
                                                    " words; the model has " + std::to_string(N));
                if (truth.B.cols() != m.num_topics) continue;
                m.truth = eval::compare_to_truth(m.B, m.A, m.anchors, truth.B, truth.A, truth.anchors);
                m.has_truth = true;
                m.truth_file = job.truth;
                ++compared;
            }
            if (compared == 0)
                throw InputError(job.truth, "plants K = " + std::to_string(truth.B.cols()) +
                                                " topics; the model file has no model with that K");
        });
    }
    io::update_model_evaluation(world, job.model, out, file.models);
    return std::move(file.models);
}

}  // namespace jsmf::fit
