// SPDX-License-Identifier: MIT
// `jsmf fit`: corpus (or C) → co-occurrence → rectify → anchors → B, A, α → metrics → one model file.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include <fmt/core.h>

#include "app/commands.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/fit/job.hpp"
#include "jsmf/fit/pipeline_choice.hpp"
#include "jsmf/fit/plan.hpp"
#include "jsmf/mpi/agree.hpp"

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
    add_choice(sub, "--text-format", c.text_format, "With --text: dir, lines, jsonl, mallet, brown, ratings or playlists");
    sub->add_option("--out", c.out,
                    "Output model file (HDF5; a compressed fit's is written by every rank, its factor by row "
                    "blocks: on a filesystem they share)")
        ->required();
    sub->add_option("--update", c.update,
                    "A model (jsmf fit's, one level) to update with more documents, with OLD's vocabulary (--text "
                    "counts the new text in OLD's words; for --prepared, jsmf prepare --vocab with the vocab.X.txt OLD was fit "
                    "with (fit --text writes it into OLD.corpus/); a new "
                    "vocabulary's words are a later step), document filter and estimator (checked), K = OLD's unless "
                    "--topics; each topic keeps the id of the OLD topic it matches (as jsmf show --compare; the "
                    "matching, the new and gone topics, the mode and the history of updates recorded in the file's "
                    "root attributes update_*, updates). How the old documents count: --update-mode");
    add_choice(sub, "--update-mode", c.update_mode,
               "With --update: exact (default) fits the documents given, all of them (the old ones again and the new: "
               "--corpus OLD NEW, or a cooc file of both from jsmf cooc --add; fewer documents than OLD counted are "
               "refused): the fresh fit's model; sketch reads "
               "the new documents only and takes the old ones' C from OLD's sketch (fit OLD with --sketch or --sketch-rank): C = "
               "(γ W V Λ Vᵀ + M C_new) / (γ W + M), exact on the new documents, rank r on the old, the cost the new "
               "documents' (the compressed pipeline; counts' C, not tf-idf); coherence counts the new documents, and a "
               "topic with a top word in none of them is not measured (NaN, left out of the mean)");
    sub->add_option("--decay", c.decay,
                    "With --update-mode sketch: γ in (0, 1], the old documents' weight before the sum (a sliding window "
                    "over a stream: after n updates a batch weighs γ^n); 1: the plain sum")
        ->capture_default_str();
    sub->add_flag("--warm-enn", c.warm_enn,
                  "With --update-mode sketch: start ENN from OLD's rectified factor moved by the new documents, not "
                  "from C's top K as a fresh fit, plain (ω = 1) until its looks at the topics (every 5th iteration) "
                  "settle, at most 150 iterations. The model then depends on the path (ten chained warm updates: 4 % "
                  "lower coherence, 11 % lower specificity than the fresh fit; from C's top K: within 0.1 % and "
                  "0.6 %), and since the default ENN became 75 relaxed iterations it is also slower (KOS, K = 100, "
                  "half the documents added: ENN 23.7 s against 14.1 s). Not with --enn-iterations");
    CLI::Option* sketch = sub->add_flag(
        "--sketch", c.sketch,
        "Keep a sketch of C of the default rank 2K (K: the largest of --topics, or OLD's; at most N) for a later "
        "--update-mode sketch: on KOS (K = 100, ten chained updates) rank 2K ended within 0.1 % of the fresh fit's "
        "coherence and 0.6 % of its specificity, rank K 2.1 % and 3.3 % away");
    sub->add_option("--sketch-rank", c.sketch_rank,
                    "Keep a sketch of C in the model file for a later --update-mode sketch: C's top r >= K eigenpairs "
                    "(solved with the K the fit needs), its diagonal, unigram and document frequencies, 8 N (r + 3) "
                    "bytes (--sketch: r = 2K). 0: none (default; an update keeps its base's rank). The compressed "
                    "pipeline")
        ->excludes(sketch);
    sub->add_option("--match-distance", c.match_distance,
                    "With --update: the largest total-variation distance (0 to 1) at which a topic keeps its id")
        ->capture_default_str();
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
    add_choice(sub, "--solver", c.model.options.solver, kSolverHelp);
    add_model_options(sub, c.model);
    sub->add_option("--top-words", c.top_words, "Words per topic kept in /K<K>/topics")->capture_default_str();
    sub->add_flag("--no-metrics", c.no_metrics,
                  "Skip the evaluation (the papers' metrics in /K<K>/metrics; measuring keeps one more copy of C)");
    sub->add_option("--metric-probes", c.metric_probes,
                    "--pipeline compressed: random probes of the metrics against the original C (recovery_original, "
                    "approximation_original), which are exact on the span of [Y B] (at most 2K directions) and estimated "
                    "beyond it: a word's recovery_original within (1/(2p))^1/2 of its value times the share of its "
                    "square beyond that span (1 standard error; the model's metrics note gives the share over all "
                    "words), the approximation and the mean over words far closer. At least 2")
        ->capture_default_str();
    sub->add_option("--block-size", c.block_size, "Block size of C's block-cyclic layout")->capture_default_str();
    sub->add_option("--grid", c.grid, "Process grid RxC (default: most square)");
    add_choice(sub, "--pipeline", c.pipeline,
                    "dense: form C (N x N) and rectify it (the papers); compressed: never form C — its top-K "
                    "factor from the documents, ENN rectification, low-rank anchor words (Lee et al. 2021); auto: "
                    "dense when an option needs it or N is small (up to 1,000 words; where the two pipelines' measured "
                    "costs cross), compressed when C would not fit in memory or N is larger (the log says which and why)");
    sub->add_option("--enn-iterations", c.enn_iterations,
                    "--pipeline compressed: run exactly this many ENN iterations of exact projections (the authors: "
                    "150). Unset: 75 over-relaxed iterations (--enn-relaxation 1.9), which leave about the negative "
                    "mass of the authors' 150 plain ones, sooner at a fixed point (with --warm-enn: at most 150 plain "
                    "ones, stopping once its looks at the topics settle), the projections between the first and the "
                    "last solved to 0.01 x the last change of the factor (at most 1e-6 of the largest eigenvalue)");
    sub->add_option("--checked-rows", c.checked_rows,
                    "--pipeline compressed: ENN checks the pairs of the l words of largest norm (0: min(N, 10K + 1000))")
        ->capture_default_str();
    sub->add_option("--enn-relaxation", c.enn_relaxation,
                    "--pipeline compressed: ENN's projections between the first and the last correct the negative "
                    "pairs by this multiple of their correction (over-relaxation, in (0, 2); 1: the authors' ENN). "
                    "Unset: 1.9 with the default stop, 1 with --enn-iterations or --warm-enn. On KOS, Brown, SpamAssassin, 20 "
                    "Newsgroups and a planted corpus at K = 10-100, 75 iterations at 1.9 left about the negative mass "
                    "of 150 plain ones in a quarter to a half of their time (jobs/BENCHMARKS.md); it moves the point "
                    "ENN approaches");
    sub->add_option("--product-buffer-mb", c.product_buffer_mb,
                    "--pipeline compressed: per rank, the most a product's row exchange holds at once, in MiB "
                    "(the rows of X a rank's documents use, and the rows it serves to others, twice each); a wider "
                    "product runs in column panels with the same result, a message pair more per panel. 0: four of "
                    "the factor's N/P x p blocks, at least 64 MiB")
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
                  "stages) and the memory each rank will need at its peak against what it has (compressed: each "
                  "stage's memory, bytes sent and predicted seconds); fit nothing. Exit "
                  "code 0 when the fit will fit, 2 when it will not (with the rank count that would)");
    sub->add_option("--plan-ranks", c.plan_ranks,
                    "With --dry-run: plan for this many ranks instead of those running it (a 1,024-rank job planned "
                    "from one process); the memory, and the compressed pipeline's cost model by stage, are that "
                    "rank count's")
        ->capture_default_str();
    sub->add_option("--memory-per-rank", c.memory_per_rank,
                    "Memory each rank may use, e.g. 4G or 512M (default: detected, the node's or its cgroup's "
                    "limit shared by the node's ranks). A fit whose estimate exceeds it is refused before it starts");
    return sub;
}

namespace {

/// Local. The job the flags describe (fit::check(Job) checks it); OptionError naming the
/// flags for what only the flags can get wrong.
fit::Job job_of(FitCommand c, int ranks, const std::string& command_line) {
    fit::Job job;
    if (!c.text.empty()) {
        if (!c.input.corpus.empty() || !c.input.vocab.empty() || !c.cooc_file.empty() || !c.prepared.empty())
            throw usage_error("--text names the corpus: give no --corpus, --vocab, --cooc or --prepared with it");
        if (!c.prepared_name.empty() && c.prepared_name != "corpus")  // the folder --text writes holds "corpus"
            throw InputError("--name picks a corpus of --prepared; --text prepares one named corpus");  // exit 2, as the missing corpus was
        job.input = fit::input::Text{c.text, c.text_format};
    } else if (!c.prepared.empty() || !c.prepared_name.empty()) {
        if (c.prepared.empty()) throw usage_error("--name needs --prepared");
        if (!c.input.corpus.empty() || !c.input.vocab.empty() || !c.cooc_file.empty())
            throw usage_error("--prepared names the corpus: give no --corpus, --vocab or --cooc with it");
        job.input = fit::input::Prepared{c.prepared, c.prepared_name};
    } else {
        check_cooc_source(c.input, c.cooc_file, /*corpus_with_file=*/true);
        if (!c.cooc_file.empty()) job.input = fit::input::Cooc{c.cooc_file};
    }
    parse_grid_shape(c.grid, ranks, job.grid_rows, job.grid_cols);
    job.grid_given = !c.grid.empty();
    if (c.block_size < 1) throw usage_error("--block-size must be at least 1");
    job.corpus = corpus_source(c.input, c.block_size);
    fit::FitOptions& options = job.options;
    options.rectify = fit::resolve(to_options(c.rectify));  // its errors, before any work
    check_model_settings(c.model);
    options.model = c.model.options;
    job.anchor_words_file = c.model.anchor_words;
    options.metrics = !c.no_metrics;
    job.labels = c.labels;
    options.pipeline = c.pipeline;
    // --estimator unbiased is what the compressed pipeline computes: not a dense setting.
    if (c.input.options.estimator == cooc::Estimator::unbiased)
        c.given.erase(std::remove(c.given.begin(), c.given.end(), "estimator"), c.given.end());
    job.given = c.given;
    const auto given = [&](const char* setting) { return std::find(c.given.begin(), c.given.end(), setting) != c.given.end(); };
    options.compressed.iterations = c.enn_iterations;
    // Given, ENN runs exactly that many plain iterations; unset, the settled mode (fit::enn_most_iterations).
    options.compressed.stop_when_settled = !given("enn_iterations");
    options.compressed.checked_rows = c.checked_rows;
    options.compressed.metric_probes = c.metric_probes;
    if (given("enn_relaxation")) options.compressed.enn_relaxation = c.enn_relaxation;
    options.compressed.product_buffer_bytes = c.product_buffer_mb * (1 << 20);
    // --seed also starts the range finder (the result depends on it only to its tolerance); unset, its own default.
    if (given("seed")) options.compressed.seed = c.rectify.options.seed;
    options.checkpoint = {c.checkpoint, c.checkpoint_seconds, c.resume, options.checkpoint.recover_batch};
    if (!c.infer_out.empty())
        job.infer = fit::InferRequest{c.infer_out, c.infer.options, c.infer.prior};
    job.top_words = c.top_words;
    job.update_from = c.update;
    job.match_distance = c.match_distance;
    job.update_mode = c.update_mode;
    options.compressed.decay = c.decay;
    job.warm_enn = c.warm_enn;
    options.compressed.sketch_rank = c.sketch_rank;
    job.sketch_rank_given = given("sketch_rank") || c.sketch;
    job.sketch_default = c.sketch && !given("sketch_rank");
    options.topics = parse_topic_list(c.topics.empty() ? "10" : c.topics);
    job.topics_given = !c.topics.empty();
    if (!c.hierarchy.empty()) {
        options.hierarchy = parse_topic_list(c.hierarchy, "--hierarchy");
        options.topics = {options.hierarchy.front()};
    }
    job.out = c.out;
    if (!c.memory_per_rank.empty()) job.memory_per_rank = fit::parse_bytes(c.memory_per_rank, "--memory-per-rank");
    job.dry_run = c.dry_run;
    job.plan_ranks = c.plan_ranks;
    job.command_line = command_line;
    fit::check(job);
    return job;
}

/// Rank 0: the plan's machine-readable line.
void print_plan(const mpi::Comm& world, const fit::JobOutcome& o) {
    if (!world.is_root()) return;
    // The compressed pipeline's cost model by stage: <stage>_peak_bytes, <stage>_sent_bytes,
    // <stage>_messages, <stage>_compute_seconds and <stage>_seconds (at the default rates).
    std::string stages;
    for (const fit::StageCost& c : o.plan.estimate.stages)
        stages += fmt::format(" {0}_peak_bytes={1:.0f} {0}_sent_bytes={2:.0f} {0}_messages={3:.0f} "
                              "{0}_compute_seconds={4:.3f} {0}_seconds={5:.3f}",
                              c.stage, c.peak, c.sent, c.messages, c.compute_seconds, c.seconds);
    std::printf("jsmf-plan pipeline=%s ranks=%d words=%lld nonzeros=%lld topics=%d estimated_bytes_per_rank=%.0f "
                "available_bytes_per_rank=%.0f fits=%s ranks_needed=%d%s\n",
                name_of(o.choice.pipeline).c_str(), o.plan.ranks, static_cast<long long>(o.plan.num_words),
                static_cast<long long>(o.plan.nonzeros),
                *std::max_element(o.topics.begin(), o.topics.end()), o.plan.estimate.total(),
                o.plan.available, o.plan.fits ? "yes" : "no", o.plan.ranks_needed, stages.c_str());
    std::fflush(stdout);
}

/// Rank 0: one machine-readable line per K: "jsmf-fit ranks=… words=… topics=… method=…
/// pipeline=… rectify=… anchors=… solver=…", the stages' seconds, the counts and the metrics.
void print_fit_lines(const mpi::Comm& world, const fit::Job& job, const fit::JobOutcome& o) {
    if (!world.is_root()) return;
    const bool dense = o.choice.pipeline == fit::Pipeline::dense;
    const std::string rectify = dense ? name_of(job.options.rectify.method) : "enn";
    for (const auto& m : o.result.models) {
        std::printf("jsmf-fit ranks=%d words=%lld topics=%d method=%s pipeline=%s rectify=%s anchors=%s solver=%s",
                    world.size(), o.words, m.num_topics, name_of(m.method).c_str(), name_of(o.choice.pipeline).c_str(),
                    rectify.c_str(), name_of(m.anchor_method).c_str(), model::solver_name(m).c_str());
        for (const auto& [stage, seconds] : o.result.times.entries()) std::printf(" %s_seconds=%.6f", stage.c_str(), seconds);
        for (const auto& [stage, seconds] : m.times.entries()) std::printf(" %s_seconds=%.6f", stage.c_str(), seconds);
        if (dense) std::printf(" solve_seconds=%.6f", m.solve_seconds);
        std::printf(" words_solved=%lld words_converged=%lld write_seconds=%.6f total_seconds=%.6f peak_rss_bytes=%lld",
                    static_cast<long long>(m.words_solved), static_cast<long long>(m.words_converged), o.write_seconds,
                    o.total_seconds, static_cast<long long>(o.peak_bytes));
        std::string by_rank;
        for (const double bytes : o.peak_bytes_by_rank) by_rank += fmt::format("{}{:.0f}", by_rank.empty() ? "" : ",", bytes);
        std::printf(" peak_rss_bytes_by_rank=%s", by_rank.c_str());
        for (const auto& metric : m.metrics.metrics) std::printf(" %s=%.9g", metric.name.c_str(), metric.mean);
        std::printf("\n");
    }
    std::fflush(stdout);
}

}  // namespace

int run_fit(const FitCommand& command, const mpi::Comm& world, const std::string& command_line) {
    fit::Job job;
    mpi::run_local_phase(world, "setup", [&] { job = job_of(command, world.size(), command_line); });
    const fit::JobOutcome outcome = fit::run(world, job, log_report());
    if (job.dry_run) {
        print_plan(world, outcome);
        fit::refuse_unless_fits(world, outcome.plan, outcome.choice.pipeline);
        return exit_code::ok;
    }
    if (outcome.infer) report_infer(world, *outcome.infer, job.infer->out);
    log::info("fit: wrote {} in {:.2f} s; total {:.2f} s; peak memory {} per rank", job.out, outcome.write_seconds,
              outcome.total_seconds, mib(outcome.peak_bytes));
    print_fit_lines(world, job, outcome);
    return exit_code::ok;
}

}  // namespace jsmf::app
