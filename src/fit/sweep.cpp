// SPDX-License-Identifier: MIT
// A sweep: one C (or one read of the corpus), many runs, a model file and a CSV row each.
#include "jsmf/fit/sweep.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "jsmf/core/memory.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/distmat/blas_check.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "fit/fit_k.hpp"
#include "jsmf/fit/fit.hpp"
#include "jsmf/fit/measure.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::fit {

std::string rectifier_name(const SweepPoint& point) { return point.rectify ? name_of(*point.rectify) : "enn"; }

std::vector<SweepPoint> sweep_points(const std::vector<Rectifier>& rectifiers, const std::vector<int>& topics,
                                     const std::vector<recover::Solver>& solvers) {
    std::vector<std::optional<Rectifier>> rows(rectifiers.begin(), rectifiers.end());
    if (rows.empty()) rows.push_back(std::nullopt);
    std::vector<SweepPoint> points;
    for (const auto& r : rows)
        for (const int K : topics)
            for (const auto s : solvers) {
                SweepPoint p{static_cast<int>(points.size()), K, r, s, ""};
                p.file = "runs/K" + std::to_string(K) + "_" + rectifier_name(p) + "_" + name_of(s) + ".h5";
                points.push_back(p);
            }
    return points;
}

namespace {
// The settings given that no point of the dense grid reads: unused by each of its
// rectifiers, or by each of its solvers (the --solver list itself is the sweep's to say).
std::vector<UnusedSetting> unused_by_every_point(const SweepJob& job) {
    std::vector<std::vector<UnusedSetting>> by_rectifier, by_solver;
    std::vector<Rectifier> rectifiers;
    std::vector<recover::Solver> solvers;
    for (const SweepPoint& point : job.points) {
        if (point.rectify && std::find(rectifiers.begin(), rectifiers.end(), *point.rectify) == rectifiers.end())
            rectifiers.push_back(*point.rectify);
        if (std::find(solvers.begin(), solvers.end(), point.solver) == solvers.end()) solvers.push_back(point.solver);
    }
    for (const Rectifier r : rectifiers) {
        RectifyOptions o = job.rectify;
        o.method = r;
        by_rectifier.push_back(unused_settings(job.given, o));
    }
    for (const recover::Solver s : solvers) {
        ModelOptions m = job.model;
        m.solver = s;
        std::vector<UnusedSetting> u = unused_settings(job.given, m);
        u.erase(std::remove_if(u.begin(), u.end(), [](const UnusedSetting& x) { return x.name == "solver"; }), u.end());
        by_solver.push_back(std::move(u));
    }
    // Those of the first list that every list has.
    const auto by_every = [](const std::vector<std::vector<UnusedSetting>>& lists, std::vector<UnusedSetting>& out) {
        if (lists.empty()) return;
        for (const UnusedSetting& setting : lists.front()) {
            const auto has = [&](const std::vector<UnusedSetting>& list) {
                return std::any_of(list.begin(), list.end(), [&](const UnusedSetting& u) { return u.name == setting.name; });
            };
            if (std::all_of(lists.begin() + 1, lists.end(), has)) out.push_back(setting);
        }
    };
    std::vector<UnusedSetting> unused;
    by_every(by_rectifier, unused);
    by_every(by_solver, unused);
    return unused;
}
}  // namespace

void check(const SweepJob& job) {
    const auto count = static_cast<int>(job.points.size());
    if (job.task >= count)
        throw OptionError("{task} " + std::to_string(job.task) + " is outside the grid of " + std::to_string(count) +
                          " points (0.." + std::to_string(count - 1) + ")");
    if (!job.labels.empty() && (job.corpus.files.empty() || !job.metrics))
        throw OptionError("{labels} needs the corpus ({corpus}) and the metrics");
    if (!job.model.anchor_words.empty()) throw OptionError("{anchor_words} fixes K: use jsmf fit");
    if (job.top_words < 1) throw OptionError("{top_words} must be at least 1");
    if (job.compressed.checked_rows < 0) throw OptionError("{checked_rows} must be at least 0");
    if (job.pipeline == Pipeline::dense) {
        refuse_unused(unused_by_every_point(job));
        (void)resolve(job.rectify);  // the method is each point's
    }
    check(job.model);
}

std::string sweep_table_name(int task) {
    return task >= 0 ? "sweep.task" + std::to_string(task) + ".csv" : "sweep.csv";
}

namespace {

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
                                                "recover_A", "square_root", "anchorfree", "finish",  "metrics", "codoc",
                                                "clustacc"};

/// One CSV row: the grid point, every option, every metric (mean and std), seconds per stage.
Entries csv_row(const SweepPoint& p, const model::Model& m, const Entries& options, const StageTimes& shared,
                double write_seconds) {
    Entries row = {{"run", std::to_string(p.index)}, {"file", p.file}, {"topics", std::to_string(p.topics)},
                   {"rectify", rectifier_name(p)}, {"solver", name_of(p.solver)}};
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
void write_csv(const std::string& path, const std::vector<Entries>& rows) {
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

/// The job's points to run now (all, or its task's).
std::vector<SweepPoint> selected(const SweepJob& job) {
    std::vector<SweepPoint> chosen;
    for (const auto& p : job.points)
        if (job.task < 0 || p.index == job.task) chosen.push_back(p);
    return chosen;
}

/// Collective. One run's model file and its row (the table rewritten), said.
void write_run(const mpi::Comm& world, const SweepJob& job, const distmat::Grid& grid, const SweepPoint& point,
               const io::CoocFileInfo& info, const model::Model& m, const Entries& settings, const StageTimes& shared,
               const StageTimes& largest, std::vector<Entries>& rows, const Report& report) {
    Stopwatch clock;
    io::write_model_file(world, job.folder + "/" + point.file, info, {m},
                         provenance(job.command_line, world, grid, settings), largest, job.top_words);
    rows.push_back(csv_row(point, m, settings, shared, clock.seconds()));
    const std::string table = job.folder + "/" + sweep_table_name(job.task);
    mpi::check_on_root(world, "write", [&] { write_csv(table, rows); });
    say(report, Level::info,
        fmt::format("sweep: run {} of {} done: {}/{}", point.index + 1, job.points.size(), job.folder, point.file));
}

/// The compressed pipeline: every K of the job from one read of the corpus (or of C's rows
/// from a co-occurrence file) and one operator (fit_compressed), then a model file and a row per K.
int sweep_compressed(const mpi::Comm& world, const SweepJob& job, const distmat::Grid& grid, const Report& report) {
    FitOptions options;
    options.pipeline = Pipeline::compressed;
    options.metrics = job.metrics;
    options.compressed = job.compressed;
    options.model = job.model;
    const std::vector<SweepPoint> group = selected(job);
    options.topics.clear();
    for (const auto& p : group) options.topics.push_back(p.topics);
    mpi::run_local_phase(world, "setup", [&] { check(options); });
    // The documents ClustAcc weighs, filtered as C was: a file's filter and estimator are its own.
    const auto counting_of = [&](const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>& doc_freq) {
        return job.cooc_file.empty() ? CountingCorpus{job.corpus.files, job.corpus.options, doc_freq}
                                     : counting_corpus_of_file(world, job.cooc_file, job.corpus.files, doc_freq,
                                                               job.corpus.options);
    };
    if (!job.labels.empty()) check_labels(world, counting_of({}), job.labels);
    FitResult result = job.cooc_file.empty() ? fit_compressed(job.corpus, world, options, report)
                                             : fit_compressed(job.cooc_file, job.corpus, world, options, report);
    if (!job.labels.empty()) {
        const CountingCorpus counting = counting_of(result.info.stats.doc_freq);
        std::vector<model::Model*> measured;
        for (auto& m : result.models) measured.push_back(&m);
        measure_clustering(world, measured, counting, job.labels, job.rectify.seed, report);
    }
    mpi::take_largest_stage_peaks(world, result.times);  // the files hold the largest rank's peaks
    for (auto& m : result.models) mpi::take_largest_stage_peaks(world, m.times);
    Entries settings = source_entries(job.corpus, job.cooc_file);
    for (const Entries& more : {model_entries(options.model, "")}) settings.insert(settings.end(), more.begin(), more.end());
    settings.emplace_back("pipeline", "compressed");
    settings.emplace_back("enn_iterations", std::to_string(enn_most_iterations(options.compressed, 0)));
    settings.emplace_back("enn_stop", options.compressed.stop_when_settled ? "settled" : "iterations");
    settings.emplace_back("checked_rows", std::to_string(options.compressed.checked_rows));
    settings.emplace_back("enn_relaxation", fmt::format("{}", enn_relaxation_of(options.compressed, 0)));
    settings.emplace_back("metrics", job.metrics ? "yes" : "no");
    if (job.metrics) settings.emplace_back("metric_probes", std::to_string(options.compressed.metric_probes));
    std::vector<Entries> rows;
    for (std::size_t k = 0; k < group.size(); ++k)
        write_run(world, job, grid, group[k], result.info, result.models[k], settings, result.times, result.times,
                  rows, report);
    return static_cast<int>(rows.size());
}

/// The dense pipeline: C once; per (rectifier, K) one rectification in a copy, shared by
/// its solvers; every run measured against the original C.
int sweep_dense(const mpi::Comm& world, const SweepJob& job, const std::shared_ptr<const distmat::Grid>& grid,
                const Report& report) {
    StageTimes shared_times;
    io::CoocFileInfo info;
    const distmat::DistMatrix C = load_cooc(job.corpus, job.cooc_file, grid, shared_times, info, report);
    const Index N = C.rows();
    std::vector<int> topics;
    for (const auto& p : job.points)
        if (std::find(topics.begin(), topics.end(), p.topics) == topics.end()) topics.push_back(p.topics);
    mpi::check_on_root(world, "setup", [&] {
        for (const int K : topics)
            if (K >= N)
                throw OptionError("{topics} must satisfy 2 <= K < N = " + std::to_string(N) + ", got " +
                                  std::to_string(K));
    });
    const CountingCorpus counting =
        job.metrics ? counting_corpus(world, job.corpus.files, job.corpus.options, job.cooc_file, info) : CountingCorpus{};
    check_counting_corpus(world, counting, N);
    if (!job.labels.empty()) check_labels(world, counting, job.labels);
    std::vector<Entries> rows;
    DenseShared shared{info, job.metrics ? &C : nullptr, {}};  // C's projection, shared by every run
    std::vector<Rectifier> rectifiers;
    for (const auto& p : job.points)
        if (p.rectify && std::find(rectifiers.begin(), rectifiers.end(), *p.rectify) == rectifiers.end())
            rectifiers.push_back(*p.rectify);

    for (const Rectifier r : rectifiers) {
        for (const int K : topics) {
            std::vector<SweepPoint> group;
            for (const auto& p : selected(job))
                if (p.rectify == r && p.topics == K) group.push_back(p);
            if (group.empty()) continue;
            RectifyOptions rectify = job.rectify;
            rectify.method = r;
            // Single precision is AP's: the other rectifiers of the sweep run in double.
            if (r != Rectifier::ap) rectify.precision = Precision::double_;
            say(report, Level::info, fmt::format("sweep: K = {}, rectify {} ({} run(s))", K, name_of(r), group.size()));
            std::vector<ModelOptions> solvers;
            for (const auto& p : group) {
                solvers.push_back(job.model);
                solvers.back().solver = p.solver;
            }
            distmat::DistMatrix work = distmat::copy(C);
            std::vector<model::Model> models = fit_k(work, K, rectify, solvers, shared, nullptr, report);
            if (job.metrics) {
                std::vector<model::Model*> measured;
                for (auto& m : models) measured.push_back(&m);
                // ClustAcc reads the same corpus: not when it turned out not to be C's.
                const bool counted = measure_coherence(world, measured, counting, N, report, /*keep_going=*/true);
                if (counted && !job.labels.empty())
                    measure_clustering(world, measured, counting, job.labels, job.rectify.seed, report);
            }
            StageTimes largest = shared_times;  // the files hold the largest rank's peaks
            mpi::take_largest_stage_peaks(world, largest);
            for (auto& m : models) mpi::take_largest_stage_peaks(world, m.times);
            for (std::size_t k = 0; k < group.size(); ++k) {
                ModelOptions model = job.model;
                model.solver = group[k].solver;
                Entries settings = source_entries(job.corpus, job.cooc_file);
                if (!job.cooc_file.empty() && !counting.files.empty()) {
                    settings.emplace_back("min_tokens", std::to_string(counting.filter.min_tokens));
                    settings.emplace_back("min_distinct", std::to_string(counting.filter.min_distinct));
                }
                for (const Entries& more : {entries(rectify), model_entries(model, "")})
                    settings.insert(settings.end(), more.begin(), more.end());
                settings.emplace_back("metrics", job.metrics ? "yes" : "no");
                write_run(world, job, *grid, group[k], info, models[k], settings, shared_times, largest, rows, report);
            }
        }
    }
    return static_cast<int>(rows.size());
}

}  // namespace

SweepOutcome sweep(const mpi::Comm& world, const SweepJob& job, const Report& report) {
    Stopwatch total;
    const auto grid = process_grid(world, job.grid_rows, job.grid_cols);
    if (!job.grid_given)
        if (const std::string warning = distmat::long_grid_warning(world.size()); !warning.empty())
            say(report, Level::warning, warning);
    if (const std::string warning = distmat::blas_warning(); !warning.empty()) say(report, Level::warning, warning);
    SweepOutcome outcome;
    outcome.runs = job.pipeline == Pipeline::compressed ? sweep_compressed(world, job, *grid, report)
                                                        : sweep_dense(world, job, grid, report);
    outcome.table = job.folder + "/" + sweep_table_name(job.task);
    outcome.seconds = total.seconds();
    return outcome;
}

}  // namespace jsmf::fit
