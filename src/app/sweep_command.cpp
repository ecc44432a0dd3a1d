// SPDX-License-Identifier: MIT
// `jsmf sweep`: the papers' kind of experiment — K × rectifier × solver — from one C, one
// model file per run and one tidy CSV row per run.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "app/commands.hpp"
#include "app/output.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/fit/fit.hpp"
#include "jsmf/fit/measure.hpp"
#include "jsmf/fit/pipeline_choice.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/distmat/blas_check.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/io/output_path.hpp"
#include "jsmf/io/result_file.hpp"
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
                    "each fit by the compressed pipeline (C never formed: ENN, anchors by QR, the active set), one "
                    "read of the corpus for all K. Not auto, unlike fit: a sweep's grid (and --task's indices) "
                    "must not change with the corpus")
        ->check(CLI::IsMember({name_of(fit::Pipeline::dense), name_of(fit::Pipeline::compressed)}))
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
    return sub;
}

namespace {

const std::vector<std::string> kRectifiers = {"none", "dc", "ap", "dr", "dp"};

struct GridPoint {
    int index = 0;
    int topics = 0;
    std::string rectify, solver;
    std::string file;  ///< runs/K<K>_<rectify>_<solver>.h5, relative to the out dir
};

std::vector<GridPoint> grid_points(const std::vector<std::string>& rectifiers, const std::vector<int>& topics,
                                   const std::vector<std::string>& solvers) {
    std::vector<GridPoint> points;
    for (const auto& r : rectifiers)
        for (const int K : topics)
            for (const auto& s : solvers)
                points.push_back({static_cast<int>(points.size()), K, r, s,
                                  "runs/K" + std::to_string(K) + "_" + r + "_" + s + ".h5"});
    return points;
}

/// The table's name in the out folder: sweep.csv, or sweep.task<I>.csv for one --task.
std::string csv_name(const SweepCommand& c) {
    return c.task >= 0 ? "sweep.task" + std::to_string(c.task) + ".csv" : "sweep.csv";
}

std::string csv_field(const std::string& value) {
    if (value.find_first_of(",\"\n") == std::string::npos) return value;
    std::string quoted = "\"";
    for (const char ch : value) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return quoted + "\"";
}

std::string number(double value) {
    if (std::isnan(value)) return "";
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", value);
    return text;
}

const std::vector<std::string> kStageColumns = {"rectify", "enn",        "compress", "anchors", "recover_B",
                                                "recover_A", "square_root", "anchorfree", "finish",  "metrics", "codoc"};

/// One CSV row: the grid point, every option, every metric (mean and std), seconds per stage.
Options csv_row(const GridPoint& p, const model::Model& m, const Options& options, const StageTimes& shared,
                double write_seconds) {
    Options row = {{"run", std::to_string(p.index)}, {"file", p.file}, {"topics", std::to_string(p.topics)},
                   {"rectify", p.rectify}, {"solver", p.solver}};
    for (const auto& [name, value] : options)
        if (name != "method" && name != "solver") row.emplace_back(name, value);
    row.emplace_back("rectify_iterations_run", std::to_string(m.rectification.iterations));
    row.emplace_back("rectify_converged", m.rectification.converged ? "yes" : "no");
    row.emplace_back("words_solved", std::to_string(m.words_solved));
    row.emplace_back("words_converged", std::to_string(m.words_converged));
    for (const auto& name : eval::metric_names()) {
        const eval::Metric* metric = m.metrics.find(name);
        row.emplace_back(name, metric ? number(metric->mean) : "");
        if (!eval::is_single_number(name)) row.emplace_back(name + "_std", metric ? number(metric->std) : "");
    }
    double run_seconds = write_seconds;
    for (const auto& [stage, seconds] : shared.entries()) row.emplace_back(stage + "_seconds", number(seconds));
    for (const auto& stage : kStageColumns) {
        double seconds = 0;
        for (const auto& [name, value] : m.times.entries())
            if (name == stage) seconds += value;
        if (stage != "codoc") run_seconds += seconds;  // codoc: one pass shared by a rectifier's solvers
        row.emplace_back(stage + "_seconds", number(seconds));
    }
    row.emplace_back("write_seconds", number(write_seconds));
    row.emplace_back("run_seconds", number(run_seconds));
    return row;
}

/// Rank 0: the CSV so far, written whole to "<path>.partial" and renamed (complete rows only).
void write_csv(const std::string& path, const std::vector<Options>& rows) {
    const std::string partial = path + ".partial";
    const PartialOutput removed_on_a_signal(partial);  // complete or absent, even if killed
    {
        std::ofstream out(partial);
        if (!out) throw InputError(partial, "cannot write the sweep table");
        for (std::size_t k = 0; k < rows.front().size(); ++k)
            out << (k ? "," : "") << csv_field(rows.front()[k].first);
        out << '\n';
        for (const auto& row : rows) {
            for (std::size_t k = 0; k < row.size(); ++k) out << (k ? "," : "") << csv_field(row[k].second);
            out << '\n';
        }
        if (!out.flush()) throw InputError(partial, "cannot write the sweep table");
    }
    if (std::rename(partial.c_str(), path.c_str()) != 0) throw InputError(path, "cannot rename the sweep table into place");
}

/// sweep --pipeline compressed: every K of the grid (or --task's) from one read of the
/// corpus and one operator (fit_compressed), then a model file and a row per K.
int sweep_compressed(const SweepCommand& c, const mpi::Comm& world, const distmat::Grid& grid,
                     const std::vector<GridPoint>& points, const std::string& command_line, const Stopwatch& total) {
    fit::FitOptions options;
    options.pipeline = fit::Pipeline::compressed;
    options.metrics = !c.no_metrics;
    options.compressed.iterations = c.enn_iterations;
    // Given, ENN runs exactly that many iterations; unset, at most that many, stopping once settled.
    options.compressed.stop_when_settled = std::find(c.given.begin(), c.given.end(), "enn_iterations") == c.given.end();
    options.compressed.checked_rows = c.checked_rows;
    std::vector<GridPoint> group;
    options.topics.clear();
    for (const auto& p : points)
        if (c.task < 0 || p.index == c.task) {
            group.push_back(p);
            options.topics.push_back(p.topics);
        }
    fit::CorpusSource source;
    mpi::run_local_phase(world, "setup", [&] {
        options.model = to_options(c.model, {});
        fit::check(options);
        source = corpus_source(c.input, c.block_size);
    });
    if (!c.labels.empty()) fit::check_labels(world, fit::CountingCorpus{source.files, source.options, {}}, c.labels);
    const fit::Report report = log_report();
    fit::FitResult result = fit::fit_compressed(source, world, options, report);
    if (!c.labels.empty()) {
        const fit::CountingCorpus counting{source.files, source.options, result.info.stats.doc_freq};
        std::vector<model::Model*> measured;
        for (auto& m : result.models) measured.push_back(&m);
        fit::measure_clustering(world, measured, counting, c.labels, c.rectify.seed, report);
    }
    const std::string csv = c.out_dir + "/" + csv_name(c);
    std::vector<Options> rows;
    mpi::take_largest_stage_peaks(world, result.times);  // the files hold the largest rank's peaks
    for (auto& m : result.models) mpi::take_largest_stage_peaks(world, m.times);
    for (std::size_t k = 0; k < group.size(); ++k) {
        Options provenance = source_provenance(c.input, "", c.block_size);
        for (const Options& more : {model_provenance(options.model, c.model.anchor_words)})
            provenance.insert(provenance.end(), more.begin(), more.end());
        provenance.emplace_back("pipeline", "compressed");
        provenance.emplace_back("enn_iterations", std::to_string(options.compressed.iterations));
        provenance.emplace_back("enn_stop", options.compressed.stop_when_settled ? "settled" : "iterations");
        provenance.emplace_back("checked_rows", std::to_string(options.compressed.checked_rows));
        provenance.emplace_back("metrics", c.no_metrics ? "no" : "yes");
        Stopwatch clock;
        io::write_model_file(world, c.out_dir + "/" + group[k].file, result.info, {result.models[k]},
                             make_provenance(command_line, world, grid, provenance), result.times, c.top_words);
        rows.push_back(csv_row(group[k], result.models[k], provenance, result.times, clock.seconds()));
        mpi::check_on_root(world, "write", [&] { write_csv(csv, rows); });
        log::info("sweep: run {} of {} done: {}/{}", group[k].index + 1, points.size(), c.out_dir, group[k].file);
    }
    log::info("sweep: {} run(s) in {:.1f} s; table {}", rows.size(), total.seconds(), csv);
    return exit_code::ok;
}

}  // namespace

namespace {
/// Collective. The sweep proper, once its folders exist: C, then every grid point.
int sweep_points(const SweepCommand& c, const mpi::Comm& world, const std::string& command_line,
                 const std::vector<GridPoint>& points, const std::vector<int>& topics,
                 const std::vector<std::string>& rectifiers, int grid_rows, int grid_cols, const Stopwatch& total);

/// Rank 0, after a failure: the folders this sweep created, each while empty (runs/ first).
void remove_created_folders(const SweepCommand& c, const std::string& made_out, const std::string& made_runs) {
    io::remove_created_folder(c.out_dir + "/runs", made_runs);
    io::remove_created_folder(c.out_dir, made_out);
}
}  // namespace

int run_sweep(const SweepCommand& c, const mpi::Comm& world, const std::string& command_line) {
    Stopwatch total;
    std::vector<int> topics;
    std::vector<std::string> rectifiers, solvers;
    int grid_rows = 0, grid_cols = 0;
    mpi::run_local_phase(world, "setup", [&] {
        parse_grid_shape(c.grid, world.size(), grid_rows, grid_cols);
        topics = parse_topic_list(c.topics);
        if (c.pipeline == "compressed") {  // K is the only axis; a dense setting would be dropped
            // What it does anyway (--solver active-set, --anchors qr, ...) may be said.
            std::vector<std::string> given = c.given;
            const auto said_as_done = [&](const std::string& name) {
                return (name == "solver" && c.solvers == "active-set") || (name == "method" && c.model.method == "anchors") ||
                       (name == "finder" && (c.model.anchors == "qr" || c.model.anchors == "spa")) ||
                       (name == "estimator" && c.input.estimator == "unbiased") ||
                       (name == "recover_a" && c.model.recover_a == "diagonal");
            };
            given.erase(std::remove_if(given.begin(), given.end(), said_as_done), given.end());
            std::vector<std::string> unused = fit::dense_only_settings();
            for (const char* name : {"solver", "method", "finder", "recover_a", "anchor_words"}) unused.push_back(name);
            refuse_settings(given, unused, "sweep {pipeline} compressed sweeps K only and", "sweep with {pipeline} dense");
            if (!c.cooc_file.empty() && !c.list)
                throw InputError("sweep --pipeline compressed works from the documents: give --corpus, not --cooc");
            rectifiers = {"enn"};
            solvers = {"active-set"};
        } else {
            refuse_settings(c.given, fit::compressed_only_settings(), "sweep {pipeline} dense",
                            "sweep with {pipeline} compressed");
            rectifiers = parse_name_list(c.rectify_methods, "--rectify", kRectifiers);
            solvers = parse_name_list(c.solvers, "--solver", choices<recover::Solver>());
        }
        check_model_settings(c.model);
        if (!c.model.anchor_words.empty()) throw usage_error("--anchor-words fixes K: use jsmf fit");
        if (c.model.method != "anchors" && solvers.size() > 1) {  // AnchorFree has no B solver to sweep
            log::info("sweep: --method {} has no B solver: the --solver list is not swept", c.model.method);
            solvers.resize(1);
        }
        if (c.block_size < 1) throw usage_error("--block-size must be at least 1");
        (void)corpus_source(c.input, c.block_size);  // --buffer-mb, said here once rather than by every rank later
        if (c.pipeline != "compressed") (void)fit::resolve(to_options(c.rectify));  // its errors, before any work
        if (c.checked_rows < 0) throw usage_error("--checked-rows must be at least 0");
        if (c.top_words < 1) throw usage_error("--top-words must be at least 1");
        const auto count = static_cast<int>(rectifiers.size() * topics.size() * solvers.size());
        if (c.task >= count)
            throw usage_error("--task " + std::to_string(c.task) + " is outside the grid of " + std::to_string(count) +
                             " points (0.." + std::to_string(count - 1) + ")");
        if (!c.list) check_cooc_source(c.input, c.cooc_file, /*corpus_with_file=*/true);
        if (!c.labels.empty() && (c.input.corpus.empty() || c.no_metrics))
            throw usage_error("--labels needs the corpus (--corpus) and the metrics");
    });
    const std::vector<GridPoint> points = grid_points(rectifiers, topics, solvers);
    if (c.list) {
        if (world.is_root()) {
            for (const auto& p : points)
                std::printf("%d K=%d rectify=%s solver=%s %s/%s\n", p.index, p.topics, p.rectify.c_str(),
                            p.solver.c_str(), c.out_dir.c_str(), p.file.c_str());
            std::fflush(stdout);
        }
        return exit_code::ok;
    }
    // The folders go again if the sweep fails before a run was written (never one that was there).
    std::string made_out, made_runs;  // rank 0
    mpi::check_on_root(world, "setup", [&] {
        io::check_output_folder(c.out_dir, {csv_name(c)});
        made_out = io::create_output_folder(c.out_dir);
        made_runs = io::create_output_folder(c.out_dir + "/runs");
        std::vector<std::string> files;
        for (const auto& p : points) files.push_back(p.file.substr(p.file.find('/') + 1));
        try {
            io::check_output_folder(c.out_dir + "/runs", files);
        } catch (...) {
            remove_created_folders(c, made_out, made_runs);
            throw;
        }
    });
    try {
        return sweep_points(c, world, command_line, points, topics, rectifiers, grid_rows, grid_cols, total);
    } catch (...) {
        if (world.is_root()) remove_created_folders(c, made_out, made_runs);
        throw;
    }
}

namespace {
int sweep_points(const SweepCommand& c, const mpi::Comm& world, const std::string& command_line,
                 const std::vector<GridPoint>& points, const std::vector<int>& topics,
                 const std::vector<std::string>& rectifiers, int grid_rows, int grid_cols, const Stopwatch& total) {
    const auto grid = distmat::Grid::create(world, grid_rows, grid_cols);
    warn_long_grid(c.grid, world.size());
    if (const std::string warning = distmat::blas_warning(); !warning.empty()) log::warn("{}", warning);
    if (c.pipeline == "compressed") return sweep_compressed(c, world, *grid, points, command_line, total);

    StageTimes shared;
    io::CoocFileInfo info;
    const distmat::DistMatrix C = load_cooc(c.input, c.cooc_file, grid, c.block_size, shared, info);
    const Index N = C.rows();
    mpi::check_on_root(world, "setup", [&] {
        for (const int K : topics)
            if (K >= N) throw usage_error("--topics must satisfy 2 <= K < N = " + std::to_string(N) + ", got " + std::to_string(K));
    });
    const fit::CountingCorpus counting =
        c.no_metrics ? fit::CountingCorpus{} : fit::counting_corpus(world, c.input.corpus, corpus_source(c.input, c.block_size).options, c.cooc_file, info);
    fit::check_counting_corpus(world, counting, N);
    if (!c.labels.empty()) fit::check_labels(world, counting, c.labels);
    const fit::Report report = log_report();
    const std::string csv = c.out_dir + "/" + csv_name(c);
    std::vector<Options> rows;
    Eigen::MatrixXd original_projection;  // C's, shared by every run

    // One rectification per (rectifier, K), shared by its solvers; C itself stays the original.
    for (const auto& r : rectifiers) {
        for (const int K : topics) {
            std::vector<GridPoint> group;
            for (const auto& p : points)
                if (p.rectify == r && p.topics == K && (c.task < 0 || p.index == c.task)) group.push_back(p);
            if (group.empty()) continue;
            fit::RectifyOptions rectify = to_options(c.rectify);
            rectify.method = parse_name<fit::Rectifier>(r, "rectify");
            // --precision single is AP's: the other rectifiers of the sweep run in double.
            if (r != "ap") rectify.precision = fit::Precision::double_;
            log::info("sweep: K = {}, rectify {} ({} run(s))", K, r, group.size());
            distmat::DistMatrix work = distmat::copy(C);
            Stopwatch clock;
            const model::RectificationTrace record = fit::rectify(work, K, rectify, report);
            const double rectify_seconds = clock.seconds();
            const std::int64_t rectify_peak = take_stage_peak_rss_bytes();
            std::vector<model::Model> models;
            fit::ProjectionCache cache{{}, original_projection};  // this rectified C's, shared by its solvers
            for (const auto& p : group) {
                fit::ModelOptions model = to_options(c.model, {});
                model.solver = parse_name<recover::Solver>(p.solver, "solver");
                model::Model m = fit::factorize(work, K, model, record, rectify.seed, report, nullptr,
                                              info.stats.doc_freq);
                m.times.add_before("rectify", rectify_seconds, rectify_peak);
                fit::describe(m, info.vocab, report);
                if (!c.no_metrics) fit::measure_model(m, work, &C, cache);
                models.push_back(std::move(m));
            }
            original_projection = cache.original;
            if (!c.no_metrics) {
                std::vector<model::Model*> measured;
                for (auto& m : models) measured.push_back(&m);
                // ClustAcc reads the same corpus: not when it turned out not to be C's.
                const bool counted = fit::measure_coherence(world, measured, counting, N, report, /*keep_going=*/true);
                if (counted && !c.labels.empty())
                    fit::measure_clustering(world, measured, counting, c.labels, c.rectify.seed, report);
            }
            StageTimes largest = shared;  // the files hold the largest rank's peaks
            mpi::take_largest_stage_peaks(world, largest);
            for (auto& m : models) mpi::take_largest_stage_peaks(world, m.times);
            for (std::size_t k = 0; k < group.size(); ++k) {
                fit::ModelOptions model = to_options(c.model, {});
                model.solver = parse_name<recover::Solver>(group[k].solver, "solver");
                Options options = source_provenance(c.input, c.cooc_file, c.block_size);
                if (!c.cooc_file.empty() && !counting.files.empty()) {
                    options.emplace_back("min_tokens", std::to_string(counting.filter.min_tokens));
                    options.emplace_back("min_distinct", std::to_string(counting.filter.min_distinct));
                }
                for (const Options& more : {rectify_provenance(rectify), model_provenance(model, c.model.anchor_words)})
                    options.insert(options.end(), more.begin(), more.end());
                options.emplace_back("metrics", c.no_metrics ? "no" : "yes");
                clock.restart();
                io::write_model_file(world, c.out_dir + "/" + group[k].file, info, {models[k]},
                                     make_provenance(command_line, world, *grid, options), largest, c.top_words);
                rows.push_back(csv_row(group[k], models[k], options, shared, clock.seconds()));
                mpi::check_on_root(world, "write", [&] { write_csv(csv, rows); });
                log::info("sweep: run {} of {} done: {}/{}", group[k].index + 1, points.size(), c.out_dir,
                          group[k].file);
            }
        }
    }
    log::info("sweep: {} run(s) in {:.1f} s; table {}", rows.size(), total.seconds(), csv);
    return exit_code::ok;
}
}  // namespace

}  // namespace jsmf::app
