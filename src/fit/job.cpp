// SPDX-License-Identifier: MIT
// A fit as a job: input → pipeline → plan → fit → model file (→ θ), composed once.
#include "jsmf/fit/job.hpp"
#include "jsmf/fit/measure.hpp"

#include <fmt/core.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

#include "jsmf/core/memory.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/distmat/blas_check.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/fit/update.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/io/theta_file.hpp"
#include "jsmf/model/topic_rows.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/prepare/prepare.hpp"

namespace jsmf::fit {

std::shared_ptr<const distmat::Grid> process_grid(const mpi::Comm& world, int rows, int cols) {
    return rows > 0 && cols > 0 ? distmat::Grid::create(world, rows, cols) : distmat::Grid::most_square(world);
}

io::Provenance provenance(const std::string& command_line, const mpi::Comm& world, const distmat::Grid& grid,
                          Entries settings) {
    io::Provenance p;
    p.command_line = command_line;
    p.created = io::now_iso8601();
    p.mpi_ranks = world.size();
    p.grid = std::to_string(grid.rows()) + "x" + std::to_string(grid.cols());
    p.options = std::move(settings);
    // Threads per rank split the sums of AP's trace differently (rounding only).
    p.options.emplace_back("threads", std::to_string(distmat::threads()));
    return p;
}

Entries source_entries(const CorpusSource& corpus, const std::string& cooc_file) {
    std::string files;
    for (const auto& path : corpus.files) files += (files.empty() ? "" : ";") + path;
    const std::string block_size = std::to_string(corpus.options.block_size);
    if (!cooc_file.empty()) return {{"cooc", cooc_file}, {"corpus", files}, {"block_size", block_size}};
    return {{"corpus", files},
            {"vocab_file", corpus.vocab},
            {"min_tokens", std::to_string(corpus.options.min_tokens)},
            {"min_distinct", std::to_string(corpus.options.min_distinct)},
            {"block_size", block_size},
            {"buffer_bytes", std::to_string(corpus.options.buffer_bytes)},
            {"exchange", name_of(corpus.options.exchange)},
            {"estimator", name_of(corpus.options.estimator)}};
}

Entries model_entries(const ModelOptions& options, const std::string& anchor_file) {
    Entries all = entries(options);
    for (auto& [name, value] : all)
        if (name == "anchor_words") value = anchor_file;
    return all;
}

distmat::DistMatrix load_cooc(const CorpusSource& corpus, const std::string& cooc_file,
                              const std::shared_ptr<const distmat::Grid>& grid, StageTimes& times,
                              io::CoocFileInfo& info, const Report& report) {
    if (cooc_file.empty()) {
        BuiltCooc built = build_cooc(corpus, grid, times, report);
        info = std::move(built.info);
        return std::move(built.C);
    }
    Stopwatch clock;
    distmat::DistMatrix read = io::read_cooc_file(cooc_file, grid, corpus.options.block_size, info);
    io::check_cooc_values(cooc_file, read, info);
    times.add("read", clock.seconds());
    return read;
}

std::vector<Index> read_anchor_words(const mpi::Comm& world, const std::string& path,
                                     const std::vector<std::string>& vocab) {
    std::vector<std::int64_t> ids;
    mpi::check_on_root(world, "anchors", [&] {
        for (const Index id : corpus::read_anchor_words(path, vocab)) ids.push_back(id);
    });
    std::int64_t count = static_cast<std::int64_t>(ids.size());
    mpi::broadcast(world, count, 0);
    ids.resize(static_cast<std::size_t>(count));
    mpi::broadcast(world, ids.data(), ids.size(), 0);
    return {ids.begin(), ids.end()};
}

InferSummary infer_to_file(const mpi::Comm& world, const infer::InferModel& model, const infer::CorpusInput& input,
                           const infer::InferOptions& options, infer::Prior prior, const std::string& out,
                           const std::string& command_line) {
    Stopwatch clock;
    const infer::CorpusTopics result = infer::infer_corpus(world, model, input, options);
    const infer::CorpusSummary& s = result.summary;
    io::write_theta_file(
        world, out, s.documents, model.topics, result.local,
        {{"model", model.file}, {"prior", name_of(prior)}, {"command_line", command_line},
         {"method", "EM on the mixture weights, B fixed, from the uniform theta"}},
        {{"tolerance", options.tolerance}, {"max_iterations", static_cast<double>(options.max_iterations)},
         {"prior_alpha_below_one", static_cast<double>((options.alpha.array() < 1).count())},
         {"documents", static_cast<double>(s.documents)}, {"inferred", static_cast<double>(s.inferred)},
         {"empty", static_cast<double>(s.empty)}, {"tokens", static_cast<double>(s.tokens)},
         {"oov_tokens", static_cast<double>(s.oov_tokens)}, {"not_converged", static_cast<double>(s.not_converged)},
         {"per_word_log_likelihood", s.per_word()}, {"perplexity", std::exp(-s.per_word())}},
        result.doc_ids, options.alpha);
    InferSummary summary{s, clock.seconds(), distmat::threads()};
    summary.model_rows = mpi::allreduce_max(world, result.model_rows);
    summary.words = model.B_rows.size() > 0 ? model.B_rows.size()  // kept by rows, or the root's
                                             : mpi::allreduce_max(world, static_cast<std::int64_t>(model.B.rows()));
    summary.B_by_rows = model.B_rows.size() > 0;
    summary.peak_bytes = static_cast<double>(mpi::allreduce_max(world, peak_rss_bytes()));
    return summary;
}

infer::InferModel load_infer_model(const mpi::Comm& world, const std::string& path, int topics, infer::Prior prior,
                                   infer::InferOptions& options) {
    infer::InferModel model;
    model.file = path;
    Eigen::VectorXd alpha;
    std::int64_t words = 0;
    mpi::check_on_root(world, "setup", [&] {
        // All but the arrays N × K: B comes by rows (each rank reads its block), the rest is not used.
        io::ModelFile file = io::read_model_file(path, io::ModelParts::without_topic_words);
        const model::Model* chosen = &model::choose_model(file.models, topics, path);
        model.topics = chosen->num_topics;
        model.vocab = file.vocab;
        words = static_cast<std::int64_t>(file.vocab.size());
        if (prior == infer::Prior::alpha) {
            if (!chosen->has_alpha) throw InputError(path, render_options("has no alpha (fit it with jsmf fit {alpha}) for {prior} alpha"));
            alpha = chosen->alpha;
        }
    });
    mpi::broadcast(world, model.topics, 0);
    mpi::broadcast(world, words, 0);
    // The vocabulary stays on the root, B by rows: infer_corpus sends each rank the rows its words need.
    io::BByRows B = io::read_B_by_rows(world, path, model.topics, static_cast<Index>(words));
    model.B = std::move(B.B);
    model.B_rows = std::move(B.rows);
    if (prior == infer::Prior::alpha) {
        alpha.resize(model.topics);
        mpi::broadcast(world, alpha.data(), static_cast<std::size_t>(alpha.size()), 0);
        options.alpha = alpha;
    }
    return model;
}

CoocOutcome write_cooc(const mpi::Comm& world, const CoocJob& job, const Report& report) {
    Stopwatch total;
    StageTimes times;
    const auto grid = process_grid(world, job.grid_rows, job.grid_cols);  // collective (BLACS)
    if (!job.grid_given)
        if (const std::string warning = distmat::long_grid_warning(world.size()); !warning.empty())
            say(report, Level::warning, warning);
    std::vector<std::string> inputs = job.corpus.files;
    inputs.push_back(job.corpus.vocab);
    io::check_output_path(world, job.out, inputs);
    BuiltCooc built = build_cooc(job.corpus, grid, times, report);
    Stopwatch clock;
    Entries settings = source_entries(job.corpus);
    settings.emplace_back("compression", std::to_string(job.compression));
    mpi::take_largest_stage_peaks(world, times);
    io::write_cooc_file(job.out, built.C, built.info, provenance(job.command_line, world, *grid, settings), times,
                        job.compression);
    CoocOutcome outcome;
    outcome.write_seconds = clock.seconds();
    outcome.stats = built.info.stats;
    outcome.words = built.C.rows();
    outcome.build_seconds = built.build_seconds;
    outcome.peak_bytes = static_cast<double>(mpi::allreduce_max(world, peak_rss_bytes()));
    outcome.total_seconds = total.seconds();
    return outcome;
}

InferSummary infer(const mpi::Comm& world, InferJob job) {
    mpi::check_on_root(world, "setup", [&] {
        if (!job.prepared.empty()) {
            if (!job.input.corpus.empty() || !job.input.vocab.empty())
                throw OptionError("{prepared} names the corpus: give no {corpus} or {vocab} with it");
            const prepare::PreparedCorpus p = prepare::find_prepared(job.prepared, job.prepared_name);
            job.input.corpus = {p.docword};
            job.input.vocab = p.vocab;
            job.input.doc_ids = p.doc_ids;
        } else if (job.input.corpus.empty()) {
            throw OptionError("give {corpus} (or {prepared})");
        }
    });
    mpi::broadcast(world, job.input.corpus, 0);
    mpi::broadcast(world, job.input.vocab, 0);
    mpi::broadcast(world, job.input.doc_ids, 0);
    std::vector<std::string> inputs = job.input.corpus;
    for (const std::string& path : {job.input.vocab, job.input.doc_ids, job.model}) inputs.push_back(path);
    io::check_output_path(world, job.out, inputs);
    const infer::InferModel model = load_infer_model(world, job.model, job.topics, job.prior, job.options);
    return infer_to_file(world, model, job.input, job.options, job.prior, job.out, job.command_line);
}

namespace {

/// A prepared folder as the job reads it: its files, and on rank 0 its documents.
struct PreparedInput {
    io::CorpusDocuments documents;  ///< rank 0
    std::string doc_ids;            ///< rank 0: the document ids file
};

/// Collective. --text: prepare's defaults into <out>.corpus/, which the job then reads
/// as a prepared folder.
input::Prepared prepare_text(const mpi::Comm& world, const input::Text& text, const Job& job, const Report& report) {
    io::check_output_path(world, job.out, text.inputs);  // before <out>.corpus/ is written beside it
    prepare::PrepareOptions p;
    p.source.format = text.format;
    p.source.inputs = text.inputs;
    p.out_dir = job.out + ".corpus";
    p.name = "corpus";
    // An update counts the new documents in the base's words (its vocabulary and order).
    if (!job.update_from.empty()) {
        p.vocabulary = read_update_base(world, job.update_from).vocab;
        p.vocabulary_source = job.update_from + "'s vocabulary";
    }
    const prepare::PrepareReport r = prepare::run_prepare(world, p);
    say(report, Level::info,
        fmt::format("fit: prepared {} documents of {} ({} words{}) in {}", r.docs_kept, r.docs_read, r.vocabulary,
                    p.vocabulary.empty() ? std::string()
                                         : fmt::format(": {}'s, {} of them in these documents (prepare's default "
                                                       "tokens: stop words, numbers and short tokens are not counted)",
                                                       job.update_from, r.words_passing_df),
                    p.out_dir));
    if (r.uncountable_words > 0)
        say(report, Level::warning,
            fmt::format("fit: {} of {}'s words are never counted in text prepared with prepare's defaults (stop words, "
                        "numbers, single letters, or not one token), e.g. {}: jsmf prepare the new text with --vocab and "
                        "the base's own token options, then --prepared",
                        r.uncountable_words, job.update_from, prepare::joined_words(r.uncountable_examples)));
    return {p.out_dir, p.name};
}

/// Collective. The folder's docword and vocabulary into job.corpus (every rank), its
/// labels as job.labels unless given, its documents on rank 0.
PreparedInput read_prepared(const mpi::Comm& world, const input::Prepared& folder, Job& job) {
    PreparedInput read;
    mpi::check_on_root(world, "setup", [&] {
        const prepare::PreparedCorpus p = prepare::find_prepared(folder.folder, folder.name);
        prepare::PreparedDocuments documents = prepare::read_prepared_documents(p);
        read.documents = {std::move(documents.ids), std::move(documents.labels), std::move(documents.label_names)};
        read.doc_ids = p.doc_ids;
        if (!p.labels.empty() && job.labels.empty()) job.labels = p.labels;  // ClustAcc with the metrics
        job.corpus.files = {p.docword};
        job.corpus.vocab = p.vocab;
    });
    mpi::broadcast(world, job.corpus.vocab, 0);
    mpi::broadcast(world, job.labels, 0);
    std::string docword = job.corpus.files.empty() ? std::string() : job.corpus.files.front();
    mpi::broadcast(world, docword, 0);
    job.corpus.files = {docword};
    return read;
}

/// Collective on `world`. The document filter and estimator a co-occurrence file records
/// (rank 0 reads them; what an older file lacks is absent).
Entries cooc_file_filter(const mpi::Comm& world, const std::string& path) {
    std::vector<std::string> flat;
    mpi::check_on_root(world, "setup", [&] {
        for (const auto& [name, value] : io::read_root_options(path, {"min_tokens", "min_distinct", "estimator"}))
            flat.insert(flat.end(), {name, value});
    });
    mpi::broadcast(world, flat, 0);
    Entries entries;
    for (std::size_t k = 0; k + 1 < flat.size(); k += 2) entries.emplace_back(flat[k], flat[k + 1]);
    return entries;
}

std::string cooc_file_of(const Job& job) {
    const auto* cooc = std::get_if<input::Cooc>(&job.input);
    return cooc ? cooc->file : std::string();
}

std::string prepared_folder_of(const Job& job) {
    const auto* prepared = std::get_if<input::Prepared>(&job.input);
    return prepared ? prepared->folder : std::string();
}

/// Every file the job reads (an output must be none of them), with the raw text a Text input was prepared from.
std::vector<std::string> inputs_of(const Job& job, const std::vector<std::string>& text_inputs) {
    std::vector<std::string> files = job.corpus.files;
    for (const std::string& path : {job.corpus.vocab, cooc_file_of(job), job.options.checkpoint.resume,
                                    job.anchor_words_file, job.labels, job.update_from})
        files.push_back(path);
    files.insert(files.end(), text_inputs.begin(), text_inputs.end());
    return files;
}

/// Local. The plan as the dry run says it.
void say_plan(const Job& job, const mpi::Comm& world, const distmat::Grid& grid, const MemoryPlan& plan,
              const PipelineChoice& choice, const Report& report) {
    const FitOptions& options = job.options;
    const MemoryEstimate& mine = plan.estimate;
    const bool dense = options.pipeline == Pipeline::dense;
    const bool from_file = !cooc_file_of(job).empty();
    std::string parts;
    for (const auto& [name, bytes] : mine.parts) parts += fmt::format(", {} {}", mib(bytes), name);
    std::string topics;
    for (const int K : options.topics) topics += (topics.empty() ? "" : ",") + std::to_string(K);
    say(report, Level::info,
        fmt::format("plan: the {} pipeline{}", name_of(options.pipeline),
                    choice.reason.empty() ? std::string() : ": " + render_options(choice.reason)));
    say(report, Level::info,
        fmt::format("plan: N = {} words{}; {} ranks{}", plan.num_words,
                    from_file ? std::string(" (C from a file)")
                              : fmt::format(", D = {} documents, NNZ = {}", plan.num_docs, plan.nonzeros),
                    plan.ranks == world.size() ? fmt::format("{}", plan.ranks)
                                               : fmt::format("planned for {} (running on {})", plan.ranks, world.size()),
                    dense && plan.ranks == world.size() ? fmt::format(" on a {}x{} grid, block {}", grid.rows(), grid.cols(),
                                                                      job.corpus.options.block_size)
                          : std::string(", the words in row blocks")));
    say(report, Level::info,
        fmt::format("plan: stages: {}; K = {}",
                    dense ? std::string(from_file ? "read C, " : "inspect, cooc, ") + "rectify (" +
                                name_of(options.rectify.method) + "), anchors, recover B and A" +
                                (options.metrics ? ", metrics" : "") + ", write"
                          : std::string(from_file ? "read C's rows, " : "inspect, read the documents, ") +
                                "compress (top-K eigenpairs), ENN, " +
                                (options.model.method == Method::anchors ? "LAW" : name_of(options.model.method) + " on Y") +
                                (options.metrics ? ", metrics" : "") + ", write",
                    topics));
    say(report, Level::info,
        fmt::format("plan: memory per rank at the peak ({}): {} = {} the process{}", mine.phase, mib(mine.total()),
                    mib(mine.base), parts));
    if (!mine.stages.empty()) {
        std::string table = "plan: the cost model by stage, per rank (the largest rank's; from the headers, with "
                            "typical iteration counts: the fit prints it again at its own; seconds predicted at the "
                            "per-rank rates measured on " + RankRates{}.source + ", not this machine's):";
        double seconds = 0;
        for (const StageCost& c : mine.stages) {
            table += fmt::format("\n  {:<10} needs {:>12}, peak {:>12}, sends {:>12} in {:>8.0f} messages, {:>9.1f} s",
                                 c.stage, mib(c.need), mib(c.peak), mib(c.sent), c.messages, c.seconds);
            seconds += c.seconds;
        }
        table += fmt::format("\n  {:<10} {:>9.1f} s predicted ({:.1f} min)", "total", seconds, seconds / 60);
        say(report, Level::info, table);
    }
    const std::string source =
        plan.available_from == "given" ? render_options("given by {memory_per_rank}") : plan.available_from;
    if (plan.available > 0)
        say(report, Level::info,
            fmt::format("plan: memory available per rank: {} ({}): {}", mib(plan.available), source,
                        plan.fits ? "the fit will fit" : "the fit will NOT fit"));
    else
        say(report, Level::info,
            render_options("plan: memory available per rank: unknown (give {memory_per_rank} to check)"));
}

}  // namespace

void refuse_unless_fits(const mpi::Comm& world, const MemoryPlan& plan, Pipeline pipeline) {
    mpi::check_on_root(world, "plan", [&] {
        if (plan.fits) return;
        const MemoryEstimate& mine = plan.estimate;
        std::string parts;
        for (const auto& [name, bytes] : mine.parts) parts += fmt::format(", {} {}", mib(bytes), name);
        const std::string source =
            plan.available_from == "given" ? render_options("given by {memory_per_rank}") : plan.available_from;
        throw InputError(fmt::format(
            "the fit needs about {} per rank at its peak ({}: {} the process{}), more than the {} each rank has ({}); "
            "{}",
            mib(mine.total()), mine.phase, mib(mine.base), parts, mib(plan.available), source,
            plan.ranks_needed > 0
                ? fmt::format("it fits on {} ranks with as much memory each{}", plan.ranks_needed,
                              pipeline == Pipeline::dense ? render_options(" (or try {pipeline} compressed)")
                                                          : std::string())
                : std::string("no rank count fits it")));
    });
}

namespace {

/// Collective. Each stage's peak becomes the largest rank's; the table of stages and the
/// peak against the plan are said and recorded (peak_rss_bytes, estimated_peak_bytes).
void record_resources(const mpi::Comm& world, Entries& settings, double estimated, StageTimes& shared,
                      std::vector<model::Model>& models, const std::vector<StageCost>& costs, const Report& report) {
    mpi::take_largest_stage_peaks(world, shared);
    for (auto& m : models) mpi::take_largest_stage_peaks(world, m.times);
    const double peak = static_cast<double>(mpi::allreduce_max(world, peak_rss_bytes()));
    std::string table =
        "fit: stages, their seconds, peak memory and bytes handed to MPI to send, per rank (the largest rank's; "
        "the payload of jsmf's own collectives, not ScaLAPACK's)";
    table += costs.empty() ? ":"
                           : "; and the cost model's seconds, peak and bytes at this run's sizes and counts (fit/cost.hpp; "
                             "seconds at the rates of " + RankRates{}.source + "):";
    // The model's figures for a stage of the first K (the model is the first K's).
    const auto model_of = [&](const std::string& stage, bool first_k) -> std::string {
        if (!first_k) return "";
        for (const StageCost& c : costs)
            if (c.stage == stage)
                return fmt::format("   model {:>12} {:>12} sent {:>9.2f} s", mib(c.peak), mib(c.sent), c.seconds);
        return "";
    };
    auto rows = [&](const StageTimes& times, const std::string& prefix, bool first_k) {
        for (std::size_t i = 0; i < times.entries().size(); ++i)
            table += fmt::format("\n  {:<24} {:>10.2f} s {:>12} {:>12} sent{}", prefix + times.entries()[i].first,
                                 times.entries()[i].second, mib(static_cast<double>(times.peak_bytes()[i])),
                                 mib(static_cast<double>(times.sent_bytes()[i])), model_of(times.entries()[i].first, first_k));
    };
    rows(shared, "", true);
    for (std::size_t k = 0; k < models.size(); ++k)
        rows(models[k].times, models.size() > 1 ? fmt::format("K={} ", models[k].num_topics) : "", k == 0);
    // The modelled stages still to come (the write): the model's figures alone.
    for (const StageCost& c : costs) {
        const auto measured = [&](const StageTimes& times) {
            return std::any_of(times.entries().begin(), times.entries().end(),
                               [&](const auto& entry) { return entry.first == c.stage; });
        };
        if (!measured(shared) && (models.empty() || !measured(models.front().times)))
            table += fmt::format("\n  {:<24} {:>10} s {:>8} MiB {:>8} MiB sent{}", c.stage, "-", "-", "-",
                                 model_of(c.stage, true));
    }
    say(report, Level::info, table);
    say(report, Level::info,
        fmt::format("fit: peak memory {} per rank (the largest rank's), estimated {} ({:+.0f} %)", mib(peak),
                    mib(estimated), 100 * (estimated / peak - 1)));
    settings.emplace_back("peak_rss_bytes", fmt::format("{:.0f}", peak));
    settings.emplace_back("estimated_peak_bytes", fmt::format("{:.0f}", estimated));
}

/// Collective. θ of the training corpus under the first model (--infer).
InferSummary infer_training_corpus(const mpi::Comm& world, const Job& job, const model::Model& fitted,
                                   const std::vector<std::string>& vocab, const std::string& doc_ids) {
    infer::InferModel model;
    model.file = job.out;
    model.topics = fitted.num_topics;
    if (model::by_rows(fitted)) {  // the compressed fit's B by rows: each rank's rows go to the ranks that need them
        model.B = fitted.B;
        model.B_rows = model::partition_of(world, fitted);
    } else if (world.is_root()) {  // the root's B: infer_corpus deals its rows
        model.B = fitted.B;
    }
    if (world.is_root()) model.vocab = vocab;
    infer::InferOptions options = job.infer->options;
    if (job.infer->prior == infer::Prior::alpha) {
        options.alpha = fitted.alpha;
        mpi::broadcast(world, options.alpha.data(), static_cast<std::size_t>(options.alpha.size()), 0);
    }
    infer::CorpusInput input;
    input.corpus = job.corpus.files;
    input.doc_ids = doc_ids;
    return infer_to_file(world, model, input, options, job.infer->prior, job.infer->out, job.command_line);
}

/// Local. A hierarchy's levels as its provenance entry: "25,5".
std::string hierarchy_entry(const std::vector<int>& levels) {
    std::string text;
    for (const int K : levels) text += (text.empty() ? "" : ",") + std::to_string(K);
    return text;
}

/// Collective on `world`. The number of words `path` lists (lines neither blank nor a #
/// comment), read on the root; InputError naming the file when it cannot be read.
int count_anchor_words(const mpi::Comm& world, const std::string& path) {
    std::int64_t count = 0;
    mpi::check_on_root(world, "setup", [&] {
        std::ifstream in(path);
        if (!in) throw InputError(path, "cannot open the anchor-word file");
        for (std::string line; std::getline(in, line);) {
            const auto first = line.find_first_not_of(" \t\r");
            if (first != std::string::npos && line[first] != '#') ++count;
        }
    });
    mpi::broadcast(world, count, 0);
    return static_cast<int>(count);
}

/// Collective on `world`. The job's anchor words file (if any) read against `vocab` into
/// job.options.model.anchor_words, and K set to their number (InputError when a given
/// {topics} differs).
void take_anchor_words(const mpi::Comm& world, Job& job, const std::vector<std::string>& vocab) {
    if (job.anchor_words_file.empty()) return;
    FitOptions& options = job.options;
    options.model.anchor_words = read_anchor_words(world, job.anchor_words_file, vocab);
    const int K = static_cast<int>(options.model.anchor_words.size());
    mpi::check_on_root(world, "setup", [&] {
        if (job.topics_given && options.topics.front() != K)
            throw InputError(job.anchor_words_file, "lists " + std::to_string(K) + " anchor words, but " +
                                                        render_options("{topics} is ") +
                                                        std::to_string(options.topics.front()));
    });
    options.topics = {K};
}

/// Collective on grid's ranks. The dense pipeline: C counted or read, the anchor words
/// read against its vocabulary, fit(C, …) with coherence counted over the corpus. Sets
/// `settings` to its provenance entries and result.times to the shared stages' seconds.
FitResult fit_dense(Job& job, const std::shared_ptr<const distmat::Grid>& grid, Entries& settings,
                    const Report& report) {
    const mpi::Comm world = grid->borrow_comm();
    const std::string cooc_file = cooc_file_of(job);
    FitOptions& options = job.options;
    StageTimes times;
    io::CoocFileInfo info;
    // A stop signal while C is counted or read is a request: fit() looks at it first thing.
    std::optional<StopScope> counting_scope(std::in_place);
    distmat::DistMatrix C = load_cooc(job.corpus, cooc_file, grid, times, info, report);
    const Index N = C.rows();
    take_anchor_words(world, job, info.vocab);
    mpi::run_local_phase(world, "setup", [&] {
        check(options, N);
        check_documents(options, info.stats.num_docs);
    });
    if (!info.rectification.empty() && options.rectify.method != Rectifier::none)
        say(report, Level::warning,
            fmt::format("fit: {} holds an already rectified C ({}); it is rectified again", cooc_file,
                        info.rectification));
    const CountingCorpus counting =
        options.metrics ? counting_corpus(world, job.corpus.files, job.corpus.options, cooc_file, info) : CountingCorpus{};
    counting_scope.reset();  // fit() opens its own
    FitResult result = fit(std::move(C), info, options, counting, report);
    result.times = times;

    settings = source_entries(job.corpus, cooc_file);
    if (!options.hierarchy.empty()) settings.emplace_back("hierarchy", hierarchy_entry(options.hierarchy));
    for (const Entries& more : {entries(options.rectify), model_entries(options.model, job.anchor_words_file)})
        settings.insert(settings.end(), more.begin(), more.end());
    settings.emplace_back("metrics", options.metrics ? "yes" : "no");
    if (!cooc_file.empty() && !counting.files.empty()) {  // the filter coherence counted with
        settings.emplace_back("min_tokens", std::to_string(counting.filter.min_tokens));
        settings.emplace_back("min_distinct", std::to_string(counting.filter.min_distinct));
    }
    return result;
}

/// Collective on `world`. The compressed pipeline; sets `settings` to its provenance entries.
FitResult fit_compressed_job(Job& job, const mpi::Comm& world, Entries& settings, const Report& report) {
    const FitOptions& options = job.options;
    const std::string cooc_file = cooc_file_of(job);
    mpi::run_local_phase(world, "setup", [&] {
        if (job.corpus.files.empty() && cooc_file.empty())
            throw OptionError("{pipeline} compressed needs the corpus ({corpus} and {vocab}) or {cooc}");
    });
    if (!job.anchor_words_file.empty()) {  // the words against the vocabulary (the fit reads it again: a few MB)
        if (cooc_file.empty()) {
            const Index N = corpus::inspect_uci_files(world, job.corpus.files).front().header.num_words;
            take_anchor_words(world, job, corpus::load_vocab(world, job.corpus.vocab, N));
        } else {
            io::CoocFileInfo info;
            io::read_cooc_info(world, cooc_file, info);
            take_anchor_words(world, job, info.vocab);
        }
    }
    FitResult result = cooc_file.empty() ? fit_compressed(job.corpus, world, options, report)
                                         : fit_compressed(cooc_file, job.corpus, world, options, report);
    settings = source_entries(job.corpus, cooc_file);
    if (!options.hierarchy.empty()) settings.emplace_back("hierarchy", hierarchy_entry(options.hierarchy));
    const Entries model = model_entries(options.model, job.anchor_words_file);
    settings.insert(settings.end(), model.begin(), model.end());
    settings.emplace_back("pipeline", name_of(options.pipeline));
    // One K where ENN may start warm (an update takes one); else the settings are every K's.
    const int K = options.topics.size() == 1 ? options.topics.front() : 0;
    settings.emplace_back("enn_iterations", std::to_string(enn_most_iterations(options.compressed, K)));
    settings.emplace_back("enn_stop", options.compressed.stop_when_settled ? "settled" : "iterations");
    settings.emplace_back("checked_rows", std::to_string(options.compressed.checked_rows));
    settings.emplace_back("enn_relaxation", fmt::format("{}", enn_relaxation_of(options.compressed, K)));
    settings.emplace_back("metrics", options.metrics ? "yes" : "no");
    if (options.metrics) settings.emplace_back("metric_probes", std::to_string(options.compressed.metric_probes));
    return result;
}

}  // namespace

void check_inference(const infer::InferOptions& options, const std::string& out, const std::string& model) {
    if (!(options.tolerance > 0)) throw OptionError("{infer_tolerance} must be positive");
    if (options.max_iterations < 1) throw OptionError("{infer_iterations} must be at least 1");
    std::error_code ec1, ec2;
    if (std::filesystem::weakly_canonical(out, ec1) == std::filesystem::weakly_canonical(model, ec2))
        throw InputError(out, "is the model file: the θ file needs a path of its own");
}

std::vector<UnusedSetting> unused_settings(const Job& job) {
    std::vector<UnusedSetting> unused = unused_settings(job.given, job.options.rectify);
    const std::vector<UnusedSetting> model = unused_settings(job.given, job.options.model);
    unused.insert(unused.end(), model.begin(), model.end());
    const auto needs = [&](bool used, std::initializer_list<const char*> names, const char* what) {
        for (const char* name : names)
            if (!used && std::find(job.given.begin(), job.given.end(), name) != job.given.end())
                unused.push_back({name, what});
    };
    needs(std::holds_alternative<input::Text>(job.input), {"text_format"}, "{text}");
    needs(job.infer.has_value(), {"infer_iterations", "infer_tolerance", "prior"}, "{infer}");
    needs(!job.update_from.empty(), {"match_distance", "update_mode"}, "{update}");
    needs(job.update_mode == UpdateMode::sketch, {"decay", "warm_enn"}, "{update_mode} sketch");
    needs(!job.options.checkpoint.path.empty(), {"checkpoint_seconds"}, "{checkpoint}");
    needs(job.options.metrics, {"metric_probes"}, "the metrics, which {no_metrics} skips");
    return unused;
}

void check(const Job& job) {
    const FitOptions& o = job.options;
    const bool text = std::holds_alternative<input::Text>(job.input);
    const bool cooc = std::holds_alternative<input::Cooc>(job.input);
    if (job.plan_ranks < 0) throw OptionError("{plan_ranks} must be at least 1 (0: the ranks running the fit)");
    if (job.plan_ranks > 0 && !job.dry_run) throw OptionError("{plan_ranks} plans a dry run: give {dry_run} too");
    if (job.dry_run && text)
        throw OptionError("{dry_run} reads headers: give {corpus}, {prepared} or {cooc} (jsmf prepare the {text} first)");
    if (!job.labels.empty() && !o.metrics)
        throw OptionError("{labels} gives ClustAcc, one of the metrics: drop {no_metrics}, or {labels}");
    if (!job.labels.empty() && cooc && job.corpus.files.empty())
        throw OptionError("{labels} needs the documents ({corpus} beside {cooc}) for ClustAcc");
    if (job.out.empty()) throw OptionError("{out}: no output path given");
    const CheckpointOptions& c = o.checkpoint;
    // check(o) repeats these two; a usage error is said before any file's, as the CLI did.
    if (!(c.seconds >= 0)) throw OptionError("{checkpoint_seconds} must be at least 0");
    if (o.compressed.checked_rows < 0) throw OptionError("{checked_rows} must be at least 0");
    if (!c.resume.empty() && access(c.resume.c_str(), R_OK) != 0)
        throw InputError(c.resume, render_options("{resume}: cannot read the checkpoint"));
    if (!c.path.empty() && (c.path == job.out || (job.infer && c.path == job.infer->out)))
        throw InputError(c.path, render_options("{checkpoint} names an output of the fit"));
    if (!c.resume.empty() && c.resume == job.out) throw InputError(c.resume, render_options("{resume} names the output model ({out})"));
    if (o.pipeline == Pipeline::compressed) {  // a setting it would not use is a mistake
        refuse_settings(job.given, dense_only_settings(), "{pipeline} compressed", "fit with {pipeline} dense");
        check_compressed(o);
    }
    if (o.pipeline == Pipeline::dense)
        refuse_settings(job.given, compressed_only_settings(), "{pipeline} dense", "fit with {pipeline} compressed");
    refuse_unused(unused_settings(job));  // e.g. --pds-mu with --method anchors: a mistake too
    if (job.infer) {
        if (cooc && job.corpus.files.empty())
            throw OptionError("{infer} needs the corpus ({corpus}, {prepared} or {text})");
        if (job.infer->prior == infer::Prior::alpha && !o.model.alpha)
            throw OptionError("{infer} with {prior} alpha needs {alpha}");
        check_inference(job.infer->options, job.infer->out, job.out);
        if (o.topics.size() > 1) throw OptionError("{infer} works with one {topics} value");
    }
    if (job.top_words < 1) throw OptionError("{top_words} must be at least 1");
    if (!job.update_from.empty()) {
        if (!o.hierarchy.empty()) throw OptionError("{update} keeps the ids of one level's topics: give no {hierarchy}");
        if (o.topics.size() > 1) throw OptionError("{update} works with one {topics} value");
        if (job.infer) throw OptionError("{update} renumbers the topics after the fit: infer θ afterwards (jsmf infer)");
        if (!(job.match_distance >= 0 && job.match_distance <= 1))
            throw OptionError("{match_distance} must lie in [0, 1] (a total-variation distance)");
        if (job.update_from == job.out) throw InputError(job.out, render_options("{update} names the output model ({out})"));
        if (job.update_mode == UpdateMode::sketch) {
            if (o.pipeline == Pipeline::dense)
                throw OptionError("{update_mode} sketch adds the new documents' C to the base's sketch as operators: it "
                                  "runs on {pipeline} compressed (the dense pipeline updates exactly, with the old "
                                  "documents or their co-occurrence file: jsmf cooc --add)");
            if (job.corpus.options.estimator != cooc::Estimator::unbiased)
                throw OptionError("{update_mode} sketch sums C over documents: tf-idf's C is not such a sum (its idf "
                                  "and scale are the whole corpus's); update tf-idf models exactly");
        }
    }
    if (job.warm_enn && !o.compressed.stop_when_settled)
        throw OptionError("{warm_enn} starts ENN in the settled mode; {enn_iterations} runs the authors' ENN from C's "
                          "top K: give one of them");
    if (!(job.options.compressed.decay > 0 && job.options.compressed.decay <= 1))
        throw OptionError("{decay} must lie in (0, 1] (the old statistics' weight; 1: the plain sum)");
    if (job.options.compressed.sketch_rank < 0) throw OptionError("{sketch_rank} must be at least 0 (0: no sketch)");
    const bool sketch = job.options.compressed.sketch_rank > 0 || job.sketch_default;
    const std::string sketch_flag = job.sketch_default ? "{sketch}" : "{sketch_rank}";
    if (sketch && job.corpus.options.estimator != cooc::Estimator::unbiased)
        throw OptionError(sketch_flag + " keeps C for {update_mode} sketch, which sums C over documents: tf-idf's C is "
                                        "not such a sum");
    if (sketch && !o.hierarchy.empty())
        throw OptionError(sketch_flag + " keeps C for a later {update}, which takes one level's topics: a model with a "
                                        "{hierarchy} is not updated");
    if (!o.hierarchy.empty() && (job.topics_given || !job.anchor_words_file.empty()))
        throw OptionError("{hierarchy} sets the topics: give no {topics} or {anchor_words} with it");
    if (!job.anchor_words_file.empty() && o.topics.size() > 1)
        throw OptionError("{anchor_words} fixes K: give one {topics} value at most");
    check(o);
}

JobOutcome run(const mpi::Comm& world, Job job, const Report& report) {
    JobOutcome outcome;
    mpi::run_local_phase(world, "setup", [&] { check(job); });
    std::optional<PreparedInput> prepared;
    std::vector<std::string> text_inputs;  // read too, though prepared first
    if (const auto* text = std::get_if<input::Text>(&job.input)) {
        text_inputs = text->inputs;
        job.input = prepare_text(world, *text, job, report);
    }
    if (const auto* folder = std::get_if<input::Prepared>(&job.input)) prepared = read_prepared(world, *folder, job);
    job.options.labels = job.labels;
    Stopwatch total;

    // An update: the base's vocabulary, filter and estimator are the new fit's (checked before
    // any work), and its K the new one's unless given.
    std::optional<UpdateBase> base;
    if (!job.update_from.empty()) {
        base = read_update_base(world, job.update_from);
        const std::string cooc_path = cooc_file_of(job);
        std::vector<std::string> vocab;
        Entries source;
        std::int64_t declared = 0;  // the documents given (before the filter)
        if (cooc_path.empty()) {
            const std::vector<corpus::UciFile> files = corpus::inspect_uci_files(world, job.corpus.files);
            for (const auto& f : files) declared += f.header.num_docs;
            const Index N = files.front().header.num_words;
            vocab = corpus::load_vocab(world, job.corpus.vocab, N);
            source = {{"min_tokens", std::to_string(job.corpus.options.min_tokens)},
                      {"min_distinct", std::to_string(job.corpus.options.min_distinct)},
                      {"estimator", name_of(job.corpus.options.estimator)}};
        } else {
            io::CoocFileInfo info;
            io::read_cooc_info(world, cooc_path, info);
            vocab = info.vocab;
            declared = info.stats.num_docs;
            source = cooc_file_filter(world, cooc_path);
        }
        mpi::run_local_phase(world, "setup", [&] { check_update_source(*base, vocab, source); });
        if (!job.topics_given && job.anchor_words_file.empty()) job.options.topics = {base->topics.front()};
        // An exact update reads the old documents again: fewer documents than the base's
        // means they are missing (the result would be a model of the new ones alone).
        if (job.update_mode == UpdateMode::exact) {
            job.options.min_documents = base->num_docs;  // and once counted (a header's D may overstate)
            mpi::run_local_phase(world, "setup", [&] {
                if (declared < base->num_docs)
                    throw InputError(base->path, render_options(fmt::format(
                        "counted {} documents; the update gives {}: an exact update reads the old documents again "
                        "with the new ({{corpus}} OLD… NEW…); without them, {{update_mode}} sketch",
                        base->num_docs, declared)));
            });
        }
        // A sketch update: the old documents' C from the base's sketch; the new model keeps a
        // sketch of the same rank unless told otherwise.
        if (job.update_mode == UpdateMode::sketch) {
            const auto rows = distmat::RowPartition::balanced(static_cast<Index>(vocab.size()), world.size());
            job.options.compressed.old_sketch = std::make_shared<const lowrank::Sketch>(io::read_sketch(world, base->path, rows));
            const int K = job.options.topics.front();
            const Index r = job.options.compressed.old_sketch->rank();  // the same on every rank
            mpi::run_local_phase(world, "setup", [&] {
                if (r < K)
                    throw InputError(base->path, fmt::format("keeps a sketch of rank {}, below K = {}: the old documents' "
                                                             "top K directions are not all in it (fit the base with "
                                                             "--sketch-rank of at least K, or ask for fewer topics)",
                                                             r, K));
            });
            // --warm-enn: ENN from the base's rectified factor of the new K.
            if (job.warm_enn) {
                mpi::run_local_phase(world, "setup", [&] {
                    if (std::find(base->topics.begin(), base->topics.end(), K) == base->topics.end())
                        throw InputError(base->path, fmt::format("has no model of K = {} to start ENN from: drop "
                                                                 "--warm-enn, or ask for its K",
                                                                 K));
                });
                job.options.compressed.old_factor = io::read_factor_by_rows(world, base->path, K, rows);
            }
            if (job.options.pipeline == Pipeline::automatic) {
                job.options.pipeline = Pipeline::compressed;
                say(report, Level::info, render_options("fit: the compressed pipeline: {update_mode} sketch runs on it"));
            }
        }
        // The base's sketch rank carries over (at least K), so that a chain of updates goes on.
        if (!job.sketch_rank_given && base->sketch_rank > 0 && job.options.pipeline != Pipeline::dense)
            job.options.compressed.sketch_rank = std::max(static_cast<int>(base->sketch_rank), job.options.topics.front());
        // The compressed pipeline's range finder starts from the base's topics: C = BABᵀ for
        // the base's model, so its B spans about the top eigenvectors of the new C.
        if (job.options.pipeline != Pipeline::dense && job.update_mode == UpdateMode::exact) {  // (a sketch update: the sketch's V)
            const int K = job.options.topics.front();
            const int base_K = std::find(base->topics.begin(), base->topics.end(), K) != base->topics.end() ? K : base->topics.front();
            const auto rows = distmat::RowPartition::balanced(static_cast<Index>(vocab.size()), world.size());
            job.options.compressed.range_start = io::read_B_by_rows(world, base->path, base_K, rows).B;
        }
    }

    // K is the number of anchor words, when they are given: known before the pipeline is
    // chosen and the memory planned (the words are checked against the vocabulary later).
    if (!job.anchor_words_file.empty() && !job.topics_given) job.options.topics = {count_anchor_words(world, job.anchor_words_file)};
    outcome.topics = job.options.hierarchy.empty() ? job.options.topics : job.options.hierarchy;
    // Which pipeline: the one asked for, or auto's pick, said with its reason.
    const std::string cooc_file = cooc_file_of(job);
    PipelineChoice& choice = outcome.choice;
    if (!cooc_file.empty()) {  // by C's size, as from the documents
        const Index N = job.options.pipeline == Pipeline::automatic ? io::read_cooc_words(world, cooc_file) : 0;
        const std::int64_t memory = job.options.pipeline == Pipeline::automatic ? memory_per_rank(world) : -1;
        mpi::run_local_phase(world, "setup", [&] { choice = choose_pipeline(job.options, N, world.size(), memory, job.given); });
    } else {
        choice = choose_pipeline(job.corpus, world, job.options, job.given);
    }
    if (job.options.pipeline == Pipeline::automatic)
        say(report, Level::info, "fit: the " + name_of(choice.pipeline) + " pipeline: " + render_options(choice.reason));
    if (!choice.warning.empty()) say(report, Level::warning, "fit: " + render_options(choice.warning));
    if (base && base->sketch_rank > 0 && !job.sketch_rank_given && choice.pipeline == Pipeline::dense)
        say(report, Level::warning,
            render_options("fit: " + base->path + " keeps a sketch of C; the dense pipeline keeps none, so a later "
                           "{update_mode} sketch from this model is refused (fit it with {pipeline} compressed)"));
    job.options.pipeline = choice.pipeline;
    const bool dense = choice.pipeline == Pipeline::dense;

    const auto grid = process_grid(world, job.grid_rows, job.grid_cols);
    if (dense && !job.grid_given)  // the compressed pipeline has no grid
        if (const std::string warning = distmat::long_grid_warning(world.size()); !warning.empty())
            say(report, Level::warning, warning);
    const std::vector<std::string> inputs = inputs_of(job, text_inputs);
    io::check_output_path(world, job.out, inputs);  // a dry run checks them too
    // The labels before any work on either pipeline (each checks them again for its callers).
    if (!job.labels.empty() && job.options.metrics && !job.corpus.files.empty())
        check_labels(world, CountingCorpus{job.corpus.files, job.corpus.options, {}}, job.labels);
    if (job.infer) io::check_output_path(world, job.infer->out, inputs);
    if (job.sketch_default) {  // --sketch: the measured default rank now that K is known, 2 × the largest, at most N
        Index N = 0;
        if (cooc_file.empty()) {
            N = corpus::inspect_uci_files(world, job.corpus.files).front().header.num_words;
        } else {
            io::CoocFileInfo info;
            io::read_cooc_info(world, cooc_file, info);
            N = static_cast<Index>(info.vocab.size());
        }
        const int K = *std::max_element(job.options.topics.begin(), job.options.topics.end());
        job.options.compressed.sketch_rank = static_cast<int>(std::min<Index>(2 * Index{K}, N));
    }
    outcome.plan = plan_memory(world, job.corpus, cooc_file, job.options, job.memory_per_rank, job.plan_ranks);
    if (job.dry_run) {
        say_plan(job, world, *grid, outcome.plan, choice, report);
        return outcome;
    }
    refuse_unless_fits(world, outcome.plan, choice.pipeline);
    if (!job.options.checkpoint.path.empty()) {
        std::vector<std::string> read = job.corpus.files;
        read.push_back(job.corpus.vocab);
        read.push_back(cooc_file);
        io::check_output_path(world, job.options.checkpoint.path, read);
    }
    if (const std::string warning = distmat::blas_warning(); !warning.empty()) say(report, Level::warning, warning);

    Entries settings;
    outcome.result = dense ? fit_dense(job, grid, settings, report) : fit_compressed_job(job, world, settings, report);
    if (const std::string folder = prepared_folder_of(job); !folder.empty()) settings.emplace_back("prepared", folder);
    if (!cooc_file.empty())  // how the file's C counted the documents: a later update checks against it
        for (const auto& entry : cooc_file_filter(world, cooc_file))  // (not a structured binding: a lambda captures it)
            if (std::none_of(settings.begin(), settings.end(), [&](const auto& e) { return e.first == entry.first; }))
                settings.push_back(entry);
    outcome.words = static_cast<long long>(outcome.result.info.vocab.size());

    // The ending both pipelines share: the update's ids, resources, the model file, θ.
    Stopwatch clock;
    std::vector<model::Model>& models = outcome.result.models;
    if (base) {
        Stopwatch matching_clock;
        const model::TopicMatching matching = keep_topic_ids(world, models.front(), *base, job.match_distance);
        const double matching_seconds = matching_clock.seconds();
        const auto kept = std::count_if(matching.old_of_new.begin(), matching.old_of_new.end(), [](int l) { return l >= 0; });
        const cooc::CoocStats& s = outcome.result.info.stats;
        std::string files;
        for (const auto& f : job.corpus.files) files += (files.empty() ? "" : " ") + f;
        const lowrank::Sketch* old = job.options.compressed.old_sketch.get();
        const std::string mode =
            old ? fmt::format("sketch (the {} old documents by a rank-{} sketch{}, {} new documents, {} new tokens read{})",
                              old->num_docs, old->rank(),
                              job.options.compressed.decay < 1 ? fmt::format(", decay {:g}", job.options.compressed.decay) : "",
                              s.num_docs - old->num_docs, s.num_tokens - old->num_tokens,
                              job.warm_enn ? ", ENN warm from the old factor" : "")
                : std::string("exact (all documents read)");
        const std::string what = fmt::format("{} from {}: {} documents, {} tokens, {}, K = {}", io::now_iso8601(),
                                             cooc_file.empty() ? files : cooc_file, s.num_docs, s.num_tokens, mode,
                                             models.front().num_topics);
        const Entries recorded = update_entries(*base, matching, what);
        settings.insert(settings.end(), recorded.begin(), recorded.end());
        settings.emplace_back("update_mode", name_of(job.update_mode));
        if (old) settings.emplace_back("update_decay", fmt::format("{}", job.options.compressed.decay));
        if (old) settings.emplace_back("update_enn_start", job.warm_enn ? "warm" : "cold");
        std::string fresh, gone;
        for (std::size_t k = 0; k < matching.old_of_new.size(); ++k)
            if (matching.old_of_new[k] < 0) fresh += (fresh.empty() ? "" : ", ") + std::to_string(k + 1);
        for (const int l : matching.gone) gone += (gone.empty() ? "" : ", ") + std::to_string(l + 1);
        say(report, Level::info,
            fmt::format("update: {} of {} topics keep their ids from {} (total-variation distance at most {}); new: {}; "
                        "gone: {}; matched in {:.2f} s",
                        kept, matching.old_of_new.size(), base->path, job.match_distance, fresh.empty() ? "none" : fresh,
                        gone.empty() ? "none" : gone, matching_seconds));
    }
    record_resources(world, settings, outcome.plan.estimate.total(), outcome.result.times, models, outcome.result.costs,
                     report);
    io::write_model_file(world, job.out, outcome.result.info, models,
                         provenance(job.command_line, world, *grid, std::move(settings)), outcome.result.times,
                         job.top_words, prepared ? &prepared->documents : nullptr, &outcome.result.hierarchy,
                         &outcome.result.sketch);
    outcome.write_seconds = clock.seconds();
    if (job.infer)
        outcome.infer = infer_training_corpus(world, job, models.front(), outcome.result.info.vocab,
                                              prepared ? prepared->doc_ids : std::string());
    outcome.peak_bytes = static_cast<double>(mpi::allreduce_max(world, peak_rss_bytes()));
    // Each rank's own (the dense pipeline's rank 0 holds the model it writes).
    outcome.peak_bytes_by_rank =
        mpi::gather_concat(world, std::vector<double>{static_cast<double>(peak_rss_bytes())}, 0);
    outcome.total_seconds = total.seconds();
    return outcome;
}

}  // namespace jsmf::fit
