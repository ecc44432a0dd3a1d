// SPDX-License-Identifier: MIT
// `jsmf fit`: corpus (or C) → co-occurrence → rectify → anchors → B, A, α → metrics → one model file.
#include <algorithm>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <unistd.h>

#include "app/commands.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/fit/fit.hpp"
#include "jsmf/fit/pipeline_choice.hpp"
#include "jsmf/fit/plan.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "app/model_stage.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/distmat/blas_check.hpp"
#include "jsmf/distmat/grid.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::app {

CLI::App* add_fit_command(CLI::App& app, FitCommand& c) {
    CLI::App* sub = app.add_subcommand(
        "fit", "Learn topics B, topic correlations A (and alpha) from a corpus or a co-occurrence file");
    add_cooc_options(sub, c.input, false);
    sub->add_option("--cooc", c.cooc_file,
                    "A co-occurrence file from jsmf cooc (instead of --corpus/--vocab; --corpus may still be given, "
                    "for coherence's document counts)");
    sub->add_option("--prepared", c.prepared,
                    "A folder written by jsmf prepare (instead of --corpus/--vocab): its document ids and labels go "
                    "into the model file (/corpus); with labels, the metrics include ClustAcc");
    sub->add_option("--name", c.prepared_name, "With --prepared: which corpus of the folder (its --name)");
    sub->add_option("--labels", c.labels,
                    "Document labels (one integer per line, in corpus order): the metrics include ClustAcc (the "
                    "documents' NNLS topic weights clustered by k-means, matched to the labels). Default: a "
                    "--prepared corpus's labels");
    sub->add_option("--text", c.text,
                    "Raw input (files or directories): jsmf prepare with its defaults writes <out>.corpus/, then the "
                    "fit reads it as --prepared (for prepare's other options, run it yourself)");
    sub->add_option("--text-format", c.text_format, "With --text: dir, lines, jsonl, mallet, brown, ratings or playlists")
        ->check(CLI::IsMember(choices<prepare::Format>()))
        ->capture_default_str();
    sub->add_option("--out", c.out, "Output model file (HDF5)")->required();
    sub->add_option("--infer", c.infer_out,
                    "Also infer each training document's topic proportions θ under the model (one K) into this "
                    "HDF5 file, as jsmf infer does");
    add_infer_options(sub, c.infer);
    sub->add_option("--topics", c.topics,
                    "Number(s) of topics K, e.g. 10 or 10,25,50 (one C, one model per K; default 10, or the "
                    "number of --anchor-words)");
    sub->add_option("--hierarchy", c.hierarchy,
                    "Topics of topics, e.g. 25,5: K = 25 topics, then their rectified A factorized as the next "
                    "level's co-occurrence matrix with 5 topics (and so on, K decreasing); /hierarchy in the model, "
                    "jsmf show prints the tree");
    add_rectify_options(sub, c.rectify, "--rectify");
    sub->add_option("--solver", c.model.solver, kSolverHelp)->check(CLI::IsMember(choices<recover::Solver>()))->capture_default_str();
    add_model_options(sub, c.model);
    sub->add_option("--top-words", c.top_words, "Words per topic kept in /K<K>/topics")->capture_default_str();
    sub->add_flag("--no-metrics", c.no_metrics,
                  "Skip the evaluation (the papers' metrics in /K<K>/metrics; measuring keeps one more copy of C)");
    sub->add_option("--block-size", c.block_size, "Block size of C's block-cyclic layout")->capture_default_str();
    sub->add_option("--grid", c.grid, "Process grid RxC (default: most square)");
    sub->add_option("--pipeline", c.pipeline,
                    "dense: form C (N x N) and rectify it (the papers); compressed: never form C — its top-K "
                    "factor from the documents, ENN rectification, low-rank anchor words (Lee et al. 2021); auto: "
                    "dense when an option needs it or N is small (up to 1,000 words; where the two pipelines' measured "
                    "costs cross), compressed when C would not fit in memory or N is larger (the log says which and why)")
        ->check(CLI::IsMember(choices<fit::Pipeline>()))
        ->capture_default_str();
    sub->add_option("--enn-iterations", c.enn_iterations,
                    "--pipeline compressed: run exactly this many ENN iterations of exact projections (the authors: "
                    "150). Unset: at most 150, stopping once the model's measures have settled (looks at the topics "
                    "every 10 iterations) or ENN reaches a fixed point, the projections between the first and the "
                    "last solved to 0.01 x the last change of the factor (at most 1e-6 of the largest eigenvalue)")
        ->capture_default_str();
    sub->add_option("--checked-rows", c.checked_rows,
                    "--pipeline compressed: ENN checks the pairs of the l words of largest norm (0: min(N, 10K + 1000))")
        ->capture_default_str();
    sub->add_option("--checkpoint", c.checkpoint,
                    "Write a resumable checkpoint to this file (atomically, replacing the previous one; kept after "
                    "the fit), every --checkpoint-seconds and when SIGUSR1 or SIGTERM asks to stop (exit code 5). "
                    "Compressed pipeline: the range finder and ENN; dense: C once counted, the AP/DR/DP "
                    "iterations, the recovery of B word by word. One --topics value");
    sub->add_option("--checkpoint-seconds", c.checkpoint_seconds,
                    "Seconds between checkpoints (0: at every chance: each round, iteration or batch of words)")
        ->capture_default_str();
    sub->add_option("--resume", c.resume,
                    "Continue from this checkpoint: the same input and settings (checked; a mismatch is an error). "
                    "Compressed: any number of ranks, ENN continues exactly, a range finder stopped mid-solve to "
                    "its tolerance; dense: the same grid and threads, the uninterrupted run's model bit for bit");
    sub->add_flag("--dry-run", c.dry_run,
                  "Read only the headers (corpus, vocabulary or --cooc file), print the plan (pipeline, grid, "
                  "stages) and the memory each rank will need at its peak against what it has; fit nothing. Exit "
                  "code 0 when the fit will fit, 2 when it will not (with the rank count that would)");
    sub->add_option("--memory-per-rank", c.memory_per_rank,
                    "Memory each rank may use, e.g. 4G or 512M (default: detected, the node's or its cgroup's "
                    "limit shared by the node's ranks). A fit whose estimate exceeds it is refused before it starts");
    return sub;
}

namespace {

/// Rank 0: the document ids (and labels) of a prepared corpus, for the model file.
io::CorpusDocuments read_corpus_documents(const prepare::PreparedCorpus& p) {
    prepare::PreparedDocuments read = prepare::read_prepared_documents(p);
    return {std::move(read.ids), std::move(read.labels), std::move(read.label_names)};
}

// --infer: θ of the training documents under the model just written (one K).
void infer_training_corpus(const FitCommand& c, const mpi::Comm& world, const model::Model& fitted,
                           const std::vector<std::string>& vocab, const std::string& doc_ids,
                           const std::string& command_line) {
    infer::InferModel model;
    model.file = c.out;
    model.topics = fitted.num_topics;
    model.B = fitted.B;
    model.vocab = vocab;
    mpi::broadcast(world, model.B.data(), static_cast<std::size_t>(model.B.size()), 0);
    infer::InferOptions infer_options = c.infer.options;
    const infer::Prior prior = parse_name<infer::Prior>(c.infer.prior, "prior");  // CLI11 checked the name
    if (prior == infer::Prior::alpha) {
        infer_options.alpha = fitted.alpha;
        mpi::broadcast(world, infer_options.alpha.data(), static_cast<std::size_t>(infer_options.alpha.size()), 0);
    }
    infer::CorpusInput input;
    input.corpus = c.input.corpus;
    input.doc_ids = doc_ids;
    const InferSummary summary = run_infer_stage(world, model, input, infer_options, prior, c.infer_out, command_line);
    report_infer(world, summary, c.infer_out);
}

// --pipeline compressed: the library's fit_compressed, then the same model file.
/// Collective. fit::plan_memory said (with --dry-run: the whole plan) and enforced: a fit
/// that will not fit is refused (InputError, one message). Returns the estimate.
double plan_fit(const FitCommand& c, const mpi::Comm& world, const distmat::Grid& grid, const fit::FitOptions& options,
                const fit::PipelineChoice& choice) {
    double given = 0;
    mpi::run_local_phase(world, "setup", [&] {
        if (!c.memory_per_rank.empty()) given = fit::parse_bytes(c.memory_per_rank, "--memory-per-rank");
    });
    const fit::MemoryPlan plan =
        fit::plan_memory(world, corpus_source(c.input, c.block_size), c.cooc_file, options, given);
    const fit::MemoryEstimate& mine = plan.estimate;
    const bool dense = options.pipeline == fit::Pipeline::dense;
    const std::string source = plan.available_from == "given" ? "given by --memory-per-rank" : plan.available_from;
    std::string parts;
    for (const auto& [name, bytes] : mine.parts) parts += fmt::format(", {} {}", mib(bytes), name);
    if (c.dry_run) {
        log::info("plan: the {} pipeline{}", name_of(options.pipeline),
                  choice.reason.empty() ? std::string() : ": " + render_options(choice.reason));
        log::info("plan: N = {} words{}; {} ranks{}", plan.num_words,
                  c.cooc_file.empty() ? fmt::format(", D = {} documents, NNZ = {}", plan.num_docs, plan.nonzeros)
                                      : std::string(" (C from a file)"),
                  world.size(),
                  dense ? fmt::format(" on a {}x{} grid, block {}", grid.rows(), grid.cols(), c.block_size)
                        : std::string(", the words in row blocks"));
        std::string topics;
        for (const int K : options.topics) topics += (topics.empty() ? "" : ",") + std::to_string(K);
        log::info("plan: stages: {}; K = {}",
                  dense ? std::string(c.cooc_file.empty() ? "inspect, cooc, " : "read C, ") + "rectify (" +
                              name_of(options.rectify.method) + "), anchors, recover B and A" +
                              (options.metrics ? ", metrics" : "") + ", write"
                        : std::string("inspect, read the documents, compress (top-K eigenpairs), ENN, LAW") +
                              (options.metrics ? ", metrics" : "") + ", write",
                  topics);
        log::info("plan: memory per rank at the peak ({}): {} = {} the process{}", mine.phase, mib(mine.total()),
                  mib(mine.base), parts);
        if (plan.available > 0)
            log::info("plan: memory available per rank: {} ({}): {}", mib(plan.available), source,
                      plan.fits ? "the fit will fit" : "the fit will NOT fit");
        else
            log::info("plan: memory available per rank: unknown (give --memory-per-rank to check)");
        if (world.is_root()) {
            std::printf("jsmf-plan pipeline=%s ranks=%d words=%lld nonzeros=%lld topics=%d estimated_bytes_per_rank=%.0f "
                        "available_bytes_per_rank=%.0f fits=%s ranks_needed=%d\n",
                        name_of(options.pipeline).c_str(), world.size(), static_cast<long long>(plan.num_words),
                        static_cast<long long>(plan.nonzeros),
                        *std::max_element(options.topics.begin(), options.topics.end()), mine.total(), plan.available,
                        plan.fits ? "yes" : "no", plan.ranks_needed);
            std::fflush(stdout);
        }
    }
    mpi::check_on_root(world, "plan", [&] {
        if (plan.fits) return;
        throw InputError(fmt::format(
            "the fit needs about {} per rank at its peak ({}: {} the process{}), more than the {} each rank has ({}); "
            "{}",
            mib(mine.total()), mine.phase, mib(mine.base), parts, mib(plan.available), source,
            plan.ranks_needed > 0 ? fmt::format("it fits on {} ranks with as much memory each{}", plan.ranks_needed,
                                                dense ? " (or try --pipeline compressed)" : "")
                                  : std::string("no rank count fits it")));
    });
    return mine.total();
}

/// Collective. The peak memory so far (max over ranks) and the plan's estimate, said and
/// recorded in the model's root attributes (peak_rss_bytes, estimated_peak_bytes); each
/// stage's peak becomes the largest rank's (stored with its seconds), and the table of
/// stages is said: seconds and peak memory per rank.
void record_resources(const mpi::Comm& world, Options& provenance, double estimated, StageTimes& shared,
                      std::vector<model::Model>& models) {
    mpi::take_largest_stage_peaks(world, shared);
    for (auto& m : models) mpi::take_largest_stage_peaks(world, m.times);
    const double peak = static_cast<double>(mpi::allreduce_max(world, peak_rss_bytes()));
    std::string table = "fit: stages, their seconds and peak memory per rank (the largest rank's):";
    auto rows = [&](const StageTimes& times, const std::string& prefix) {
        for (std::size_t i = 0; i < times.entries().size(); ++i)
            table += fmt::format("\n  {:<24} {:>10.2f} s {:>12}", prefix + times.entries()[i].first,
                                 times.entries()[i].second, mib(static_cast<double>(times.peak_bytes()[i])));
    };
    rows(shared, "");
    for (const auto& m : models) rows(m.times, models.size() > 1 ? fmt::format("K={} ", m.num_topics) : "");
    log::info("{}", table);
    log::info("fit: peak memory {} per rank (the largest rank's), estimated {} ({:+.0f} %)", mib(peak), mib(estimated),
              100 * (estimated / peak - 1));
    provenance.emplace_back("peak_rss_bytes", fmt::format("{:.0f}", peak));
    provenance.emplace_back("estimated_peak_bytes", fmt::format("{:.0f}", estimated));
}

/// What either pipeline's fit ends with (collective): the resources recorded, the model
/// file, the training corpus's θ if asked (--infer), and on rank 0 one machine-readable
/// line per K: "jsmf-fit ranks=… words=… topics=… method=… <pipeline_fields> anchors=…
/// solver=…", the stages' seconds, the counts and the metrics.
struct FitEnding {
    Options provenance;
    double estimated = 0;
    StageTimes times;
    long long words = 0;
    std::string pipeline_fields;   ///< "pipeline=… rectify=…"
    bool solve_seconds = false;    ///< the dense line has solve_seconds before the counts
};

int finish_fit(const FitCommand& c, const mpi::Comm& world, const distmat::Grid& grid, const std::string& command_line,
               FitEnding e, fit::FitResult& result, const io::CorpusDocuments& documents, const std::string& doc_ids,
               const Stopwatch& total) {
    Stopwatch clock;
    std::vector<model::Model>& models = result.models;
    record_resources(world, e.provenance, e.estimated, e.times, models);
    io::write_model_file(world, c.out, result.info, models, make_provenance(command_line, world, grid, e.provenance),
                         e.times, c.top_words, c.prepared.empty() ? nullptr : &documents, &result.hierarchy);
    const double write_seconds = clock.seconds();
    if (!c.infer_out.empty()) infer_training_corpus(c, world, models.front(), result.info.vocab, doc_ids, command_line);
    const double peak = static_cast<double>(mpi::allreduce_max(world, peak_rss_bytes()));
    log::info("fit: wrote {} in {:.2f} s; total {:.2f} s; peak memory {} per rank", c.out, write_seconds,
              total.seconds(), mib(peak));
    if (!world.is_root()) return exit_code::ok;
    for (const auto& m : models) {
        std::printf("jsmf-fit ranks=%d words=%lld topics=%d method=%s %s anchors=%s solver=%s", world.size(), e.words,
                    m.num_topics, name_of(m.method).c_str(), e.pipeline_fields.c_str(), m.anchor_method.c_str(),
                    model::solver_name(m).c_str());
        for (const auto& [stage, seconds] : e.times.entries()) std::printf(" %s_seconds=%.6f", stage.c_str(), seconds);
        for (const auto& [stage, seconds] : m.times.entries()) std::printf(" %s_seconds=%.6f", stage.c_str(), seconds);
        if (e.solve_seconds) std::printf(" solve_seconds=%.6f", m.solve_seconds);
        std::printf(" words_solved=%lld words_converged=%lld write_seconds=%.6f total_seconds=%.6f peak_rss_bytes=%lld",
                    static_cast<long long>(m.words_solved), static_cast<long long>(m.words_converged), write_seconds,
                    total.seconds(), static_cast<long long>(peak));
        for (const auto& metric : m.metrics.metrics) std::printf(" %s=%.9g", metric.name.c_str(), metric.mean);
        std::printf("\n");
    }
    std::fflush(stdout);
    return exit_code::ok;
}

int run_fit_compressed(const FitCommand& c, const mpi::Comm& world, const distmat::Grid& grid,
                       const std::string& command_line, const fit::FitOptions& options,
                       const io::CorpusDocuments& documents, const std::string& doc_ids, double estimated) {
    Stopwatch total;
    fit::CorpusSource source;
    mpi::run_local_phase(world, "setup", [&] {
        if (c.input.corpus.empty()) throw usage_error("--pipeline compressed needs the corpus (--corpus and --vocab)");
        source = corpus_source(c.input, c.block_size);
    });
    fit::FitResult result = fit::fit_compressed(source, world, options, log_report());
    FitEnding e;
    e.provenance = source_provenance(c.input, "", c.block_size);
    for (const Options& more : {model_provenance(options.model, c.model.anchor_words)})
        e.provenance.insert(e.provenance.end(), more.begin(), more.end());
    e.provenance.emplace_back("pipeline", name_of(options.pipeline));
    e.provenance.emplace_back("enn_iterations", std::to_string(options.compressed.iterations));
    e.provenance.emplace_back("enn_stop", options.compressed.stop_when_settled ? "settled" : "iterations");
    e.provenance.emplace_back("checked_rows", std::to_string(options.compressed.checked_rows));
    e.provenance.emplace_back("metrics", options.metrics ? "yes" : "no");
    if (!c.prepared.empty()) e.provenance.emplace_back("prepared", c.prepared);
    e.estimated = estimated;
    e.times = result.times;
    e.words = static_cast<long long>(result.info.vocab.size());
    e.pipeline_fields = "pipeline=compressed rectify=enn";
    return finish_fit(c, world, grid, command_line, std::move(e), result, documents, doc_ids, total);
}

}  // namespace

int run_fit(const FitCommand& command, const mpi::Comm& world, const std::string& command_line) {
    FitCommand c = command;
    mpi::check_on_root(world, "setup", [&] {
        if (c.dry_run && !c.text.empty())
            throw usage_error("--dry-run reads headers: give --corpus, --prepared or --cooc (jsmf prepare the --text first)");
        if (!c.labels.empty() && c.no_metrics)
            throw usage_error("--labels gives ClustAcc, one of the metrics: drop --no-metrics, or --labels");
    });
    io::CorpusDocuments documents;
    std::string prepared_doc_ids;  // rank 0
    if (!c.text.empty()) {
        mpi::check_on_root(world, "setup", [&] {
            if (!c.input.corpus.empty() || !c.input.vocab.empty() || !c.cooc_file.empty() || !c.prepared.empty())
                throw usage_error("--text names the corpus: give no --corpus, --vocab, --cooc or --prepared with it");
            if (c.out.empty()) throw usage_error("--out: no output path given");
        });
        io::check_output_path(world, c.out, c.text);  // before <out>.corpus/ is written beside it
        prepare::PrepareOptions p;
        mpi::run_local_phase(world, "setup", [&] { p.source.format = parse_name<prepare::Format>(c.text_format, "format"); });
        p.source.inputs = c.text;
        p.out_dir = c.out + ".corpus";
        p.name = "corpus";
        const prepare::PrepareReport r = prepare::run_prepare(world, p);
        log::info("fit: prepared {} documents of {} ({} words) in {}", r.docs_kept, r.docs_read, r.vocabulary, p.out_dir);
        c.prepared = p.out_dir;
    }
    if (!c.prepared.empty() || !c.prepared_name.empty()) {
        mpi::check_on_root(world, "setup", [&] {
            if (c.prepared.empty()) throw usage_error("--name needs --prepared");
            if (!c.input.corpus.empty() || !c.input.vocab.empty() || !c.cooc_file.empty())
                throw usage_error("--prepared names the corpus: give no --corpus, --vocab or --cooc with it");
            const prepare::PreparedCorpus p = prepare::find_prepared(c.prepared, c.prepared_name);
            documents = read_corpus_documents(p);
            prepared_doc_ids = p.doc_ids;
            if (!p.labels.empty() && c.labels.empty()) c.labels = p.labels;  // ClustAcc with the metrics
            c.input.corpus = {p.docword};
            c.input.vocab = p.vocab;
        });
        mpi::broadcast(world, c.input.vocab, 0);
        mpi::broadcast(world, c.labels, 0);
        std::string corpus = c.input.corpus.empty() ? std::string() : c.input.corpus.front();
        mpi::broadcast(world, corpus, 0);
        c.input.corpus = {corpus};
    }
    Stopwatch total;
    StageTimes times;
    fit::FitOptions options;
    int grid_rows = 0, grid_cols = 0;
    mpi::run_local_phase(world, "setup", [&] {
        parse_grid_shape(c.grid, world.size(), grid_rows, grid_cols);
        check_cooc_source(c.input, c.cooc_file, /*corpus_with_file=*/true);
        if (c.block_size < 1) throw usage_error("--block-size must be at least 1");
        (void)corpus_source(c.input, c.block_size);  // --buffer-mb, said here once rather than by every rank later
        options.rectify = fit::resolve(to_options(c.rectify));  // its errors, before any work
        check_model_settings(c.model);
        options.model = to_options(c.model, {});
        options.metrics = !c.no_metrics;
        options.labels = c.labels;
        if (!c.labels.empty() && !c.cooc_file.empty() && c.input.corpus.empty())
            throw usage_error("--labels needs the documents (--corpus beside --cooc) for ClustAcc");
        options.pipeline = parse_name<fit::Pipeline>(c.pipeline, "pipeline");
        // --estimator unbiased is what the compressed pipeline computes: not a dense setting.
        if (c.input.estimator == "unbiased")
            c.given.erase(std::remove(c.given.begin(), c.given.end(), "estimator"), c.given.end());
        options.compressed.iterations = c.enn_iterations;
        // Given, ENN runs exactly that many iterations; unset, at most that many, stopping once settled.
        options.compressed.stop_when_settled = std::find(c.given.begin(), c.given.end(), "enn_iterations") == c.given.end();
        options.compressed.checked_rows = c.checked_rows;
        // --seed also starts the range finder (the result depends on it only to its tolerance); unset, its own default.
        if (std::find(c.given.begin(), c.given.end(), "seed") != c.given.end()) options.compressed.seed = c.rectify.seed;
        options.checkpoint.path = c.checkpoint;
        options.checkpoint.seconds = c.checkpoint_seconds;
        options.checkpoint.resume = c.resume;
        if (!(c.checkpoint_seconds >= 0)) throw usage_error("--checkpoint-seconds must be at least 0");
        if (!c.resume.empty() && access(c.resume.c_str(), R_OK) != 0)
            throw InputError(c.resume, "--resume: cannot read the checkpoint");
        if (!c.checkpoint.empty() && (c.checkpoint == c.out || c.checkpoint == c.infer_out))
            throw InputError(c.checkpoint, "--checkpoint names an output of the fit");
        if (!c.resume.empty() && c.resume == c.out) throw InputError(c.resume, "--resume names the output model (--out)");
        if (options.pipeline == fit::Pipeline::compressed && !c.cooc_file.empty())
            throw usage_error("--pipeline compressed works from the documents: give --corpus, --prepared or --text, not --cooc");
        if (c.checked_rows < 0) throw usage_error("--checked-rows must be at least 0");
        if (options.pipeline == fit::Pipeline::compressed)  // a setting it would not use is a mistake
            refuse_settings(c.given, fit::dense_only_settings(), "{pipeline} compressed", "fit with {pipeline} dense");
        if (options.pipeline == fit::Pipeline::dense)
            refuse_settings(c.given, fit::compressed_only_settings(), "{pipeline} dense", "fit with {pipeline} compressed");
        if (!c.infer_out.empty() && c.input.corpus.empty() && c.text.empty() && c.prepared.empty())
            throw usage_error("--infer needs the corpus (--corpus, --prepared or --text)");
        if (!c.infer_out.empty() && parse_name<infer::Prior>(c.infer.prior, "prior") == infer::Prior::alpha && !c.model.alpha)
            throw usage_error("--infer with --prior alpha needs --alpha");
        if (!c.infer_out.empty()) check_infer_settings(c.infer, c.infer_out, c.out);
        if (c.top_words < 1) throw usage_error("--top-words must be at least 1");
        options.topics = parse_topic_list(c.topics.empty() ? "10" : c.topics);
        if (!c.hierarchy.empty()) {
            options.hierarchy = parse_topic_list(c.hierarchy, "--hierarchy");
            if (!c.topics.empty() || !c.model.anchor_words.empty())
                throw usage_error("--hierarchy sets the topics: give no --topics or --anchor-words with it");
            options.topics = {options.hierarchy.front()};
        }
        if (!c.infer_out.empty() && options.topics.size() > 1) throw usage_error("--infer works with one --topics value");
        if (!c.model.anchor_words.empty() && options.topics.size() > 1)
            throw usage_error("--anchor-words fixes K: give one --topics value at most");
        fit::check(options);
    });
    // Which pipeline: the one asked for, or auto's pick, said with its reason.
    fit::PipelineChoice choice;
    if (!c.cooc_file.empty()) {
        std::vector<std::string> given = c.given;
        given.push_back("cooc");
        mpi::run_local_phase(world, "setup", [&] { choice = fit::choose_pipeline(options, 0, world.size(), -1, given); });
    } else {
        choice = fit::choose_pipeline(corpus_source(c.input, c.block_size), world, options, c.given);
    }
    if (options.pipeline == fit::Pipeline::automatic)
        log::info("fit: the {} pipeline: {}", name_of(choice.pipeline), render_options(choice.reason));
    if (!choice.warning.empty()) log::warn("fit: {}", render_options(choice.warning));
    options.pipeline = choice.pipeline;
    const auto grid = distmat::Grid::create(world, grid_rows, grid_cols);
    if (options.pipeline == fit::Pipeline::dense) warn_long_grid(c.grid, world.size());  // the compressed has none
    const std::vector<std::string> inputs =
        with(with(input_files(c.input), {c.cooc_file, c.resume, c.model.anchor_words, c.labels}), c.text);
    io::check_output_path(world, c.out, inputs);  // a dry run checks them too
    if (!c.infer_out.empty()) io::check_output_path(world, c.infer_out, inputs);
    const double estimated = plan_fit(c, world, *grid, options, choice);
    if (c.dry_run) return exit_code::ok;
    if (!c.checkpoint.empty()) io::check_output_path(world, c.checkpoint, with(input_files(c.input), {c.cooc_file}));
    if (const std::string warning = distmat::blas_warning(); !warning.empty()) log::warn("{}", warning);

    if (options.pipeline == fit::Pipeline::compressed)
        return run_fit_compressed(c, world, *grid, command_line, options, documents, prepared_doc_ids, estimated);
    // Stages 0–1: C, from the corpus or from a file.
    io::CoocFileInfo info;
    // A stop signal while C is counted or read is a request: fit() looks at it first thing.
    std::optional<StopScope> counting_scope(std::in_place);
    distmat::DistMatrix C = load_cooc(c.input, c.cooc_file, grid, c.block_size, times, info);
    const Index N = C.rows();
    if (!c.model.anchor_words.empty()) {
        options.model.anchor_words = read_anchor_words(world, c.model.anchor_words, info.vocab);
        const int K = static_cast<int>(options.model.anchor_words.size());
        mpi::check_on_root(world, "setup", [&] {
            if (!c.topics.empty() && options.topics.front() != K)
                throw InputError(c.model.anchor_words, "lists " + std::to_string(K) +
                                                           " anchor words, but --topics is " +
                                                           std::to_string(options.topics.front()));
        });
        options.topics = {K};
    }
    mpi::run_local_phase(world, "setup", [&] { fit::check(options, N); });
    if (!info.rectification.empty() && options.rectify.method != fit::Rectifier::none)
        log::warn("fit: {} holds an already rectified C ({}); it is rectified again", c.cooc_file, info.rectification);

    // Stages 2–5: the library's fit, per K, and the hierarchy.
    const fit::CountingCorpus counting =
        options.metrics ? fit::counting_corpus(world, c.input.corpus, corpus_source(c.input, c.block_size).options, c.cooc_file, info)
                        : fit::CountingCorpus{};
    counting_scope.reset();  // fit() opens its own
    fit::FitResult result = fit::fit(std::move(C), info, options, counting, log_report());
    FitEnding e;
    e.provenance = source_provenance(c.input, c.cooc_file, c.block_size);
    if (!options.hierarchy.empty()) e.provenance.emplace_back("hierarchy", c.hierarchy);
    for (const Options& more : {rectify_provenance(options.rectify), model_provenance(options.model, c.model.anchor_words)})
        e.provenance.insert(e.provenance.end(), more.begin(), more.end());
    e.provenance.emplace_back("metrics", options.metrics ? "yes" : "no");
    if (!c.cooc_file.empty() && !counting.files.empty()) {  // the filter coherence counted with
        e.provenance.emplace_back("min_tokens", std::to_string(counting.filter.min_tokens));
        e.provenance.emplace_back("min_distinct", std::to_string(counting.filter.min_distinct));
    }
    if (!c.prepared.empty()) e.provenance.emplace_back("prepared", c.prepared);
    e.estimated = estimated;
    e.times = times;
    e.words = static_cast<long long>(N);
    e.pipeline_fields = "pipeline=dense rectify=" + c.rectify.method;
    e.solve_seconds = true;
    return finish_fit(c, world, *grid, command_line, std::move(e), result, documents, prepared_doc_ids, total);
}

}  // namespace jsmf::app
