// SPDX-License-Identifier: MIT
// `jsmf report`: one self-contained HTML page per model file. The numbers come from
// fit::view_model (report/ computes them); this file puts them into JSON inside the page
// (src/app/report/page.html, compiled into the binary), which draws them offline.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string>

#include "app/commands.hpp"
#include "app/output.hpp"
#include "app/report_page.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/fit/model_report.hpp"
#include "jsmf/io/output_path.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::app {

CLI::App* add_report_command(CLI::App& app, ReportCommand& c) {
    CLI::App* sub = app.add_subcommand("report", "Write one self-contained interactive HTML page of a model file");
    sub->add_option("file", c.file, "Model file from jsmf fit (optional with --sweep)");
    sub->add_option("--out", c.out, "The HTML page to write")->required();
    sub->add_option("--terms", c.view.terms, "Bars per topic: its most relevant words at each position of the λ slider")
        ->capture_default_str();
    sub->add_option("--theta", c.view.theta,
                    "A θ file (jsmf infer, fit --infer) of one of the file's K: each topic's most representative "
                    "documents and, where the model was fit on a labelled jsmf prepare corpus, its prevalence by label");
    sub->add_option("--documents", c.view.documents, "With --theta: representative documents per topic")->capture_default_str();
    sub->add_option("--corpus", c.view.corpus, "With --theta: the UCI corpus θ was inferred on, for its documents' words");
    sub->add_option("--vocab", c.view.vocab, "With --corpus: its vocabulary");
    sub->add_option("--prepared", c.view.prepared, "With --theta: the jsmf prepare folder θ was inferred on (instead of --corpus)");
    sub->add_option("--name", c.view.prepared_name, "With --prepared: which corpus of the folder");
    sub->add_option("--sweep", c.sweep, "A jsmf sweep CSV (DIR/sweep.csv): each metric against K, a line per setting");
    return sub;
}

namespace {

using nlohmann::json;

/// NaN and infinities as JSON null (the page shows "–").
json number(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

json matrix_json(const Eigen::MatrixXd& M) {
    json rows = json::array();
    for (Index i = 0; i < M.rows(); ++i) {
        json row = json::array();
        for (Index j = 0; j < M.cols(); ++j) row.push_back(number(M(i, j)));
        rows.push_back(std::move(row));
    }
    return rows;
}

json vector_json(const Eigen::VectorXd& v) {
    json values = json::array();
    for (Index i = 0; i < v.size(); ++i) values.push_back(number(v(i)));
    return values;
}

json metrics_json(const eval::MetricSet& set) {
    json metrics = json::array();
    for (const auto& info : eval::metric_table()) {
        const eval::Metric* m = set.find(info.name);
        if (m == nullptr) continue;
        metrics.push_back({{"name", m->name},
                           {"per", m->per},
                           {"meaning", info.meaning},
                           {"mean", number(m->mean)},
                           {"std", number(m->std)},
                           {"values", m->per == "topic" ? vector_json(m->values) : json(nullptr)}});
    }
    return metrics;
}

json summary_json(const model::Model& m) {
    const auto& r = m.rectification;
    json s = {{"method", name_of(m.method)},
              {"rectification", name_of(r.method)},
              {"iterations", r.iterations},
              {"stopped", r.stop_reason ? name_of(*r.stop_reason) : std::string()},
              {"anchor_finder", name_of(m.anchor_method)},
              {"solver", model::solver_name(m)},
              {"a_recovery", name_of(m.a_method)},
              {"pipeline", m.compressed ? "compressed" : "dense"}};
    json seconds = json::object();
    for (const auto& [stage, value] : m.times.entries()) seconds[stage] = value;
    s["seconds"] = seconds;
    return s;
}

/// One K's part of the page's data. Word ids index `words` (the vocabulary's entries the
/// page needs: anchors and every topic's terms), which the caller fills.
json topics_json(const model::Model& m, const fit::TopicsView& view, std::set<Index>& words) {
    const int K = view.topics;
    json terms = json::array();
    for (const auto& t : view.terms) {
        words.insert(t.words.begin(), t.words.end());
        terms.push_back({{"w", t.words}, {"p", t.p_wk}});
    }
    words.insert(m.anchors.begin(), m.anchors.end());
    json pairs = json::array();
    for (const model::TopicPair& p : report::strongest_pairs(m.A, 15, 5)) pairs.push_back({p.k, p.l, p.correlation});
    json documents = nullptr, labels = nullptr;
    if (!view.documents.empty()) {
        documents = json::array();
        for (std::size_t k = 0; k < view.documents.size(); ++k) {
            json rows = json::array();
            for (std::size_t i = 0; i < view.documents[k].size(); ++i) {
                const Index d = view.documents[k][i];
                const std::string name = static_cast<std::size_t>(d) < view.document_names.size()
                                             ? view.document_names[static_cast<std::size_t>(d)]
                                             : "document " + std::to_string(d + 1);
                const std::string top = k < view.document_words.size() ? view.document_words[k][i] : std::string();
                rows.push_back({d, name, view.document_theta[k][i], top});
            }
            documents.push_back(std::move(rows));
        }
    }
    if (view.label_prevalence.size() > 0)
        labels = {{"names", view.label_names}, {"prevalence", matrix_json(view.label_prevalence)}};
    return {{"K", K},
            {"documents", documents},
            {"labels", labels},
            {"anchors", m.anchors},
            {"anchor_kind", m.method == model::Method::anchors ? "anchor word" : "representative word"},
            {"prevalence", vector_json(view.prevalence)},
            {"map", matrix_json(view.map)},
            {"terms", terms},
            {"correlation", matrix_json(view.correlation)},
            {"order", view.order},
            {"order_method", view.order_method},
            {"pairs", pairs},
            {"metrics", metrics_json(m.metrics)},
            {"metrics_note", m.metrics_note},
            {"summary", summary_json(m)}};
}

json hierarchy_json(const std::vector<model::HierarchyLevel>& levels) {
    json out = json::array();
    int level_number = 2;
    for (const auto& level : levels) {
        // Each topic of the level below under the topic of this level it belongs to (model::subtopics).
        json children = json::array();
        for (int k = 0; k < level.topics; ++k) {
            json of_k = json::array();
            for (const auto& [weight, j] : model::subtopics(level, k)) of_k.push_back({j, weight});
            children.push_back(std::move(of_k));
        }
        out.push_back({{"level", level_number++},
                       {"topics", level.topics},
                       {"anchors", level.anchors},
                       {"prevalence", vector_json(model::topic_prevalence(level.A))},
                       {"children", children}});
    }
    return out;
}

json sweep_json(const report::SweepView& view) {
    json series = json::array();
    for (const auto& s : view.series) {
        json means = json::array(), stds = json::array();
        for (std::size_t q = 0; q < view.quantities.size(); ++q) {
            json m = json::array(), d = json::array();
            for (std::size_t i = 0; i < s.topics.size(); ++i) {
                m.push_back(number(s.mean[q][i]));
                d.push_back(number(s.std[q][i]));
            }
            means.push_back(std::move(m));
            stds.push_back(std::move(d));
        }
        series.push_back({{"label", s.label}, {"K", s.topics}, {"mean", means}, {"std", stds}});
    }
    return {{"quantities", view.quantities}, {"series", series}};
}

json page_data(const fit::ModelView& view, const report::SweepView* sweep, const ReportCommand& c) {
    const io::ModelFile& f = view.file;
    std::set<Index> words;
    json models = json::array();
    for (std::size_t i = 0; i < view.views.size(); ++i) models.push_back(topics_json(f.models[i], view.views[i], words));
    json vocabulary = json::object();  // id -> [word, p(w)]
    for (const Index w : words)
        vocabulary[std::to_string(w)] = {f.vocab[static_cast<std::size_t>(w)], number(f.unigram(w))};
    json options = json::object();
    for (const auto& [name, value] : f.options) options[name] = value;
    return {{"generator", std::string("jsmf ") + JSMF_VERSION},
            {"sweep", sweep ? sweep_json(*sweep) : json(nullptr)},
            {"sweep_file", c.sweep},
            {"file", c.file},
            {"created", f.created},
            {"command_line", f.command_line},
            {"vocabulary_size", f.vocab.size()},
            {"documents", f.num_docs},
            {"tokens", f.num_tokens},
            {"options", options},
            {"terms_shown", c.view.terms},
            {"lambda_steps", view.steps},
            {"words", vocabulary},
            {"models", models},
            {"hierarchy", hierarchy_json(f.hierarchy)}};
}

/// The page with `data` in its JSON script element. Every "<" is written "\u003c" (the same
/// JSON string: it occurs only inside strings), so that no word, id or path can end the
/// element early or put the HTML parser into a script's escaped states ("<!--", "<script").
std::string page_with(const std::string& data) {
    std::string escaped;
    escaped.reserve(data.size());
    for (const char ch : data) {
        if (ch == '<') escaped += "\\u003c";
        else escaped += ch;
    }
    std::string page = report_page();
    const std::string marker = "@JSMF_REPORT_DATA@";
    const auto at = page.find(marker);
    JSMF_REQUIRE(at != std::string::npos, "report: the page template has no data marker");
    page.replace(at, marker.size(), escaped);
    return page;
}

}  // namespace

int run_report(const ReportCommand& c, const mpi::Comm& world) {
    const Stopwatch timer;
    mpi::check_on_root(world, "setup", [&] {
        if (c.view.terms < 1) throw usage_error("--terms must be at least 1");
        if (c.view.documents < 0) throw usage_error("--documents must be at least 0");
        if (c.file.empty() && c.sweep.empty()) throw usage_error("give a model file, or --sweep CSV, or both");
        if (c.file.empty() && !c.view.theta.empty()) throw usage_error("--theta is a model's: give its model file");
        if ((!c.view.corpus.empty() || !c.view.prepared.empty()) && c.view.theta.empty())
            throw usage_error("--corpus and --prepared name θ's corpus: give --theta");
        if (!c.view.corpus.empty() && !c.view.prepared.empty()) throw usage_error("give either --corpus and --vocab, or --prepared");
        if (c.view.corpus.empty() != c.view.vocab.empty()) throw usage_error("--corpus and --vocab go together");
        if (!c.view.prepared_name.empty() && c.view.prepared.empty()) throw usage_error("--name chooses a corpus of --prepared");
        io::check_output_file(c.out, {c.file, c.view.theta, c.sweep});
    });
    const fit::ModelView view = c.file.empty() ? fit::ModelView{} : fit::view_model(world, c.file, c.view);
    mpi::check_on_root(world, "report", [&] {
        std::optional<report::SweepView> sweep;
        if (!c.sweep.empty()) sweep = fit::view_sweep(c.sweep);
        const std::string page = page_with(
            page_data(view, sweep ? &*sweep : nullptr, c).dump(-1, ' ', false, json::error_handler_t::replace));
        io::write_text_file(c.out, page);
        log::info("report: wrote {} ({:.1f} KiB) in {:.2f} s", c.out, static_cast<double>(page.size()) / 1024,
                  timer.seconds());
    });
    return exit_code::ok;
}

}  // namespace jsmf::app
