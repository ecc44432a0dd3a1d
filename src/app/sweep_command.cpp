// SPDX-License-Identifier: MIT
// `jsmf sweep`: the papers' kind of experiment — K × rectifier × solver — from one C, one
// model file per run and one tidy CSV row per run.
#include <algorithm>
#include <cstdio>

#include "app/commands.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/fit/pipeline_choice.hpp"
#include "jsmf/fit/sweep.hpp"
#include "jsmf/io/output_path.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::app {

CLI::App* add_sweep_command(CLI::App& app, SweepCommand& c) {
    CLI::App* sub = app.add_subcommand(
        "sweep", "Run a grid of fits (topics x rectifiers x solvers) from one co-occurrence matrix, built or read "
                 "once: one model file per run and a CSV with one row per run (options, metrics, seconds)");
    add_cooc_options(sub, c.input, false);
    sub->add_option("--cooc", c.cooc_file,
                    "A co-occurrence file from jsmf cooc (instead of --corpus/--vocab; --corpus may still be given, "
                    "for coherence's document counts)");
    sub->add_option("--out-dir", c.out_dir, "Directory for runs/*.h5 and sweep.csv (created if missing)")
        ->capture_default_str();
    sub->add_option("--topics", c.topics, "Comma-separated K values")->capture_default_str();
    sub->add_option("--rectify", c.rectify_methods, "Comma-separated rectifiers: none (Baseline), dc, ap, dr, dp")
        ->capture_default_str();
    sub->add_option("--solver", c.solvers, "Comma-separated solvers: " + join_choices<recover::Solver>())->capture_default_str();
    add_rectify_options(sub, c.rectify, "");
    add_model_options(sub, c.model);
    sub->add_option("--task", c.task,
                    "Run only grid point I (0-based, in --list order; e.g. $SLURM_ARRAY_TASK_ID); its row goes to "
                    "sweep.task<I>.csv")
        ->check(CLI::NonNegativeNumber);
    sub->add_flag("--list", c.list, "Print the grid points (index, K, rectifier, solver, file) and exit");
    sub->add_flag("--no-metrics", c.no_metrics, "Skip the evaluation");
    sub->add_option("--labels", c.labels,
                    "Document labels (one integer per line, in corpus order; needs the corpus): ClustAcc per run");
    sub->add_option("--top-words", c.top_words, "Words per topic kept in each model file")->capture_default_str();
    sub->add_option("--block-size", c.block_size, "Block size of C's block-cyclic layout")->capture_default_str();
    sub->add_option("--grid", c.grid, "Process grid RxC (default: most square)");
    sub->add_option("--pipeline", c.pipeline,
                    "dense: the grid rectifiers x K x solvers on C (the papers' experiments); compressed: K only, "
                    "each fit by the compressed pipeline (C never formed: ENN, --anchors or --method, the active set), one "
                    "read of the corpus for all K. Not auto, unlike fit: a sweep's grid (and --task's indices) "
                    "must not change with the corpus")
        ->check(CLI::IsMember({name_of(fit::Pipeline::dense), name_of(fit::Pipeline::compressed)}))
        ->capture_default_str();
    sub->add_option("--enn-iterations", c.enn_iterations,
                    "--pipeline compressed: run exactly this many ENN iterations of exact projections (the authors: "
                    "150). Unset: 75, over-relaxed (ω = 1.9, as fit's --enn-relaxation), which leave about the "
                    "negative mass of the authors' 150 plain ones (sooner at a fixed point), the projections between "
                    "the first and the last solved to 0.01 x the last change of the factor (at most 1e-6 of the "
                    "largest eigenvalue)");
    sub->add_option("--checked-rows", c.checked_rows,
                    "--pipeline compressed: ENN checks the pairs of the l words of largest norm (0: min(N, 10K + 1000))")
        ->capture_default_str();
    return sub;
}

namespace {

/// Rank 0, after a failure: the folders this sweep created, each while empty (runs/ first).
void remove_created_folders(const std::string& folder, const std::string& made_out, const std::string& made_runs) {
    io::remove_created_folder(folder + "/runs", made_runs);
    io::remove_created_folder(folder, made_out);
}

/// Local. The sweep the flags describe, checked as far as flags can be.
fit::SweepJob job_of(const SweepCommand& c, int ranks, const std::string& command_line) {
    fit::SweepJob job;
    parse_grid_shape(c.grid, ranks, job.grid_rows, job.grid_cols);
    job.grid_given = !c.grid.empty();
    const std::vector<int> topics = parse_topic_list(c.topics);
    std::vector<fit::Rectifier> rectifiers;  // none: the compressed pipeline's ENN
    std::vector<recover::Solver> solvers;
    job.pipeline = parse_name<fit::Pipeline>(c.pipeline, "pipeline");
    if (job.pipeline == fit::Pipeline::compressed) {  // K is the only axis; a dense setting would be dropped
        // What it does anyway (--solver active-set, --recover-a diagonal) may be said.
        std::vector<std::string> given = c.given;
        const auto said_as_done = [&](const std::string& name) {
            return (name == "solver" && c.solvers == "active-set") ||
                   (name == "recover_a" && c.model.options.recover_a == fit::RecoverA::diagonal);
        };
        given.erase(std::remove_if(given.begin(), given.end(), said_as_done), given.end());
        std::vector<std::string> unused = fit::dense_only_settings();
        // (and the active set it solves with reads no solver setting; --method, --anchors,
        // --estimator and AnchorFree's settings apply to every run, as fit's)
        for (const char* name : {"solver", "recover_a", "anchor_words", "admm_stop", "solver_iterations", "solver_tolerance"})
            unused.push_back(name);
        fit::refuse_settings(given, unused, "sweep {pipeline} compressed sweeps K only and", "sweep with {pipeline} dense");
        solvers = {recover::Solver::active_set};
        job.rectify.seed = c.rectify.options.seed;  // ClustAcc's k-means
    } else {
        fit::refuse_settings(c.given, fit::compressed_only_settings(), "sweep {pipeline} dense",
                        "sweep with {pipeline} compressed");
        for (const auto& name : parse_name_list(c.rectify_methods, "--rectify", choices<fit::Rectifier>()))
            rectifiers.push_back(parse_name<fit::Rectifier>(name, "rectify"));
        for (const auto& name : parse_name_list(c.solvers, "--solver", choices<recover::Solver>()))
            solvers.push_back(parse_name<recover::Solver>(name, "solver"));
        job.rectify = to_options(c.rectify);  // the method is each run's, and resolve() decides the rest for it
    }
    if (!c.model.anchor_words.empty()) throw usage_error("--anchor-words fixes K: use jsmf fit");
    check_model_settings(c.model);
    job.model = c.model.options;
    if (job.model.method != fit::Method::anchors && solvers.size() > 1) {  // AnchorFree has no B solver to sweep
        log::info("sweep: --method {} has no B solver: the --solver list is not swept", name_of(job.model.method));
        solvers.resize(1);
    }
    if (c.block_size < 1) throw usage_error("--block-size must be at least 1");
    job.corpus = corpus_source(c.input, c.block_size);
    job.points = fit::sweep_points(rectifiers, topics, solvers);
    if (!c.list) check_cooc_source(c.input, c.cooc_file, /*corpus_with_file=*/true);
    job.task = c.task;
    if (!c.list) job.cooc_file = c.cooc_file;  // --list prints the grid, whatever the source
    job.compressed.iterations = c.enn_iterations;
    // Given, ENN runs exactly that many plain iterations; unset, the settled mode (fit::enn_most_iterations).
    job.compressed.stop_when_settled = std::find(c.given.begin(), c.given.end(), "enn_iterations") == c.given.end();
    job.compressed.checked_rows = c.checked_rows;
    job.metrics = !c.no_metrics;
    job.labels = c.labels;
    job.top_words = c.top_words;
    job.folder = c.out_dir;
    job.command_line = command_line;
    job.given = c.given;
    fit::check(job);
    return job;
}

}  // namespace

int run_sweep(const SweepCommand& c, const mpi::Comm& world, const std::string& command_line) {
    Stopwatch total;
    fit::SweepJob job;
    mpi::run_local_phase(world, "setup", [&] { job = job_of(c, world.size(), command_line); });
    if (c.list) {
        if (world.is_root()) {
            for (const auto& p : job.points)
                std::printf("%d K=%d rectify=%s solver=%s %s/%s\n", p.index, p.topics, fit::rectifier_name(p).c_str(),
                            name_of(p.solver).c_str(), c.out_dir.c_str(), p.file.c_str());
            std::fflush(stdout);
        }
        return exit_code::ok;
    }
    // The folders go again if the sweep fails before a run was written (never one that was there).
    std::string made_out, made_runs;  // rank 0
    mpi::check_on_root(world, "setup", [&] {
        io::check_output_folder(c.out_dir, {fit::sweep_table_name(c.task)});
        made_out = io::create_output_folder(c.out_dir);
        made_runs = io::create_output_folder(c.out_dir + "/runs");
        std::vector<std::string> files;
        for (const auto& p : job.points) files.push_back(p.file.substr(p.file.find('/') + 1));
        try {
            io::check_output_folder(c.out_dir + "/runs", files);
        } catch (...) {
            remove_created_folders(c.out_dir, made_out, made_runs);
            throw;
        }
    });
    try {
        const fit::SweepOutcome outcome = fit::sweep(world, job, log_report());
        log::info("sweep: {} run(s) in {:.1f} s; table {}", outcome.runs, total.seconds(), outcome.table);
        return exit_code::ok;
    } catch (...) {
        if (world.is_root()) remove_created_folders(c.out_dir, made_out, made_runs);
        throw;
    }
}

}  // namespace jsmf::app
