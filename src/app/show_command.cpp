// SPDX-License-Identifier: MIT
// `jsmf show`: a model file as plain text: anchors, top words with p(z), correlated topic pairs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "app/commands.hpp"
#include "app/help_texts.hpp"
#include "app/output.hpp"
#include "jsmf/io/schema.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/model/matching.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::app {

CLI::App* add_show_command(CLI::App& app, ShowCommand& c) {
    CLI::App* sub = app.add_subcommand("show", "Print a model file: anchors, top words per topic, correlated topics");
    sub->add_option("file", c.file, "Model file from jsmf fit");
    sub->add_flag("--schema", c.schema, "Print the HDF5 schema of jsmf's files (what each group, dataset and attribute holds)");
    sub->add_option("--top-words", c.top_words, "Words per topic")->capture_default_str();
    sub->add_option("--pairs", c.pairs, "Most correlated topic pairs to list")->capture_default_str();
    sub->add_option("--compare", c.compare,
                    "OLD.h5 NEW.h5: which topics of NEW are which of OLD (a refit, an update, another K): the "
                    "one-to-one matching of B's columns of least total distance (total variation, words aligned by "
                    "name; the Hungarian method); each NEW topic printed with the OLD id it keeps, its distance and "
                    "the top words it gained and lost; then the new and the gone topics")
        ->expected(2);
    sub->add_option("--topics", c.topics, "With --compare: the K compared, in both files (default: each file's first)");
    sub->add_option("--match-distance", c.match_distance,
                    "With --compare: the largest total-variation distance (0 to 1) at which a topic is still the same "
                    "topic; farther, it is a new topic and the old one gone")
        ->capture_default_str();
    return sub;
}

namespace {

/// Topic k's n most probable words under B (N × K).
std::string top_words(const Eigen::MatrixXd& B, const std::vector<std::string>& vocab, int k, int n) {
    std::string text;
    for (const Index i : model::top_word_ids(B, k, n)) text += (text.empty() ? "" : " ") + vocab[static_cast<std::size_t>(i)];
    return text;
}

std::string words_of(const model::Model& m, const std::vector<std::string>& vocab, int k, int n) {
    return top_words(m.B, vocab, k, n);
}

void print_model(const model::Model& m, const io::ModelFile& file, const ShowCommand& c) {
    const int K = m.num_topics;
    const auto& r = m.rectification;
    std::printf("\n== K = %d ==\n", K);
    char last_change[48] = "";
    if (!r.trace.empty()) std::snprintf(last_change, sizeof last_change, ", last change %.1e", r.trace.back().change);
    // Why it stopped: the count ran out, or the stopping rule (quality, fixed-point, tolerance).
    const std::string stopped = r.stop_reason ? " (stopped: " + name_of(*r.stop_reason) + ")" : "";
    if (m.method == model::Method::anchors) {
        std::printf("rectification: %s, %d iterations%s%s; anchors: %s; B: %s, %lld of %lld words converged\n",
                    name_of(r.method).c_str(), r.iterations, stopped.c_str(), last_change, name_of(m.anchor_method).c_str(), model::solver_name(m).c_str(),
                    static_cast<long long>(m.words_converged), static_cast<long long>(m.words_solved));
        if (m.compressed) {
            const model::CompressedRecord& z = *m.compressed;
            std::printf("compressed pipeline: Y %lld x %lld; ENN checked the pairs of l = %lld words, left mass %.2e in "
                        "%lld entries among them, %.3g pairs never checked; E' from %zu entries\n",
                        static_cast<long long>(z.Y.rows()), static_cast<long long>(z.Y.cols()),
                        static_cast<long long>(z.checked_rows), z.final_negative_mass,
                        static_cast<long long>(z.final_negative_entries), z.unchecked_pairs, z.correction_value.size());
        }
    } else {
        const model::AnchorFreeRecord& a = m.anchorfree;
        std::printf("rectification: %s, %d iterations%s%s; %s: %d %s, %s; A %s\n", name_of(r.method).c_str(), r.iterations,
                    stopped.c_str(), last_change, name_of(m.method).c_str(), a.iterations, a.algorithm == model::AnchorFreeAlgorithm::lp ? "sweeps" : "outer iterations",
                    a.converged ? "converged" : "NOT converged",
                    a.a_is_distribution ? "= E*/sum(E*)" : "= E* (has negative entries)");
    }
    const Eigen::VectorXd pz = model::topic_prevalence(m.A);
    std::printf("%5s %7s  %-18s %s\n", "topic", "p(z)", m.method == model::Method::anchors ? "anchor" : "representative", "top words");
    for (const int k : model::largest_first(pz)) {
        const std::string anchor = file.vocab[static_cast<std::size_t>(m.anchors[static_cast<std::size_t>(k)])];
        std::printf("%5d %7.4f  %-18s %s\n", k + 1, pz(k), anchor.c_str(), words_of(m, file.vocab, k, c.top_words).c_str());
    }
    const std::vector<model::TopicPair> pairs = model::topic_correlations(m.A);
    const int shown = std::min<int>(c.pairs, static_cast<int>(pairs.size()));
    if (shown > 0) {
        std::printf("most correlated topic pairs (Pearson correlation of topic proportions, from A):\n");
        for (int n = 0; n < shown; ++n) {
            const model::TopicPair& p = pairs[static_cast<std::size_t>(n)];
            std::printf("  %3d ~ %-3d %+.3f   %s | %s\n", p.k + 1, p.l + 1, p.correlation,
                        words_of(m, file.vocab, p.k, 3).c_str(), words_of(m, file.vocab, p.l, 3).c_str());
        }
    }
    if (m.has_alpha) {
        std::printf("alpha (Dirichlet fit to A): alpha0 = %.4g;", m.alpha.sum());
        for (int k = 0; k < K; ++k) std::printf(" %.3g", m.alpha(k));
        std::printf("\n");
    }
    print_metrics(m);
}

/// Prints topic `k` of level `level` (1 = the first K; 2, … = file.hierarchy[level − 2])
/// and, below it, the topics of the level below that belong to it: topic j below belongs
/// to the k maximizing p(k | j) ∝ B_level(j, k) p(k), shown with its weight p(j | k).
void print_subtree(const io::ModelFile& file, int level, int k, double weight, int depth, const ShowCommand& c) {
    const model::Model& first = file.models.front();
    const Eigen::MatrixXd& words = level == 1 ? first.B : file.hierarchy[static_cast<std::size_t>(level - 2)].B_words;
    std::printf("%*s%s %-3d %6.3f  %s\n", 2 * depth, "", level == 1 ? "topic" : "super", k + 1, weight,
                top_words(words, file.vocab, k, c.top_words).c_str());
    if (level == 1) return;
    for (const auto& [w, j] : model::subtopics(file.hierarchy[static_cast<std::size_t>(level - 2)], k))
        print_subtree(file, level - 1, j, w, depth + 1, c);
}

void print_hierarchy(const io::ModelFile& file, const ShowCommand& c) {
    const int levels = static_cast<int>(file.hierarchy.size()) + 1;
    std::string sizes = std::to_string(file.models.front().num_topics);
    for (const auto& level : file.hierarchy) sizes += " -> " + std::to_string(level.topics);
    std::printf("\n== hierarchy %s: each supertopic (p(super), top words of B1 ... Bl) over its topics "
                "(p(topic | super), top words) ==\n", sizes.c_str());
    const model::HierarchyLevel& top = file.hierarchy.back();
    const Eigen::VectorXd p = top.A.rowwise().sum() / top.A.sum();
    for (const int k : model::largest_first(p)) print_subtree(file, levels, k, p(k), 0, c);
}

const model::Model& model_of(const io::ModelFile& file, const std::string& path, int topics) {
    if (file.models.empty()) throw InputError(path, "holds no model");
    if (topics == 0) return file.models.front();
    for (const auto& m : file.models)
        if (m.num_topics == topics) return m;
    throw InputError(path, "holds no model with K = " + std::to_string(topics));
}

/// The words of `now` (ids into its vocabulary) that `before` (ids into its own) lacks, by name.
std::string words_gained(const std::vector<Index>& now, const std::vector<std::string>& vocab_now,
                         const std::vector<Index>& before, const std::vector<std::string>& vocab_before,
                         const char* sign) {
    std::string text;
    for (const Index i : now) {
        const std::string& word = vocab_now[static_cast<std::size_t>(i)];
        const bool there = std::any_of(before.begin(), before.end(), [&](Index j) {
            return vocab_before[static_cast<std::size_t>(j)] == word;
        });
        if (!there) text += std::string(text.empty() ? "" : " ") + sign + word;
    }
    return text;
}

void print_comparison(const ShowCommand& c) {
    if (!(c.match_distance >= 0 && c.match_distance <= 1)) throw usage_error("--match-distance must lie in [0, 1]");
    const std::string &old_path = c.compare[0], &new_path = c.compare[1];
    const io::ModelFile old_file = io::read_model_file(old_path, io::ModelParts::without_factor);
    const io::ModelFile new_file = io::read_model_file(new_path, io::ModelParts::without_factor);
    const model::Model &before = model_of(old_file, old_path, c.topics), &now = model_of(new_file, new_path, c.topics);
    const model::TopicMatching m =
        model::match_topics(before.B, old_file.vocab, now.B, new_file.vocab, c.match_distance);
    const auto kept = static_cast<int>(std::count_if(m.old_of_new.begin(), m.old_of_new.end(), [](int l) { return l >= 0; }));
    std::printf("jsmf compare %s (K = %d) -> %s (K = %d): %d topics kept, %d new, %zu gone (total-variation distance "
                "of B's columns, words by name; the least total over one-to-one matchings; a topic stays itself "
                "within %.2f)\n",
                old_path.c_str(), before.num_topics, new_path.c_str(), now.num_topics, kept, now.num_topics - kept,
                m.gone.size(), c.match_distance);
    std::printf("%5s %5s %8s  %-60s %s\n", "new", "old", "distance", "top words (new)", "words gained / lost");
    for (int k = 0; k < now.num_topics; ++k) {
        const int l = m.old_of_new[static_cast<std::size_t>(k)];
        const std::vector<Index> top_now = model::top_word_ids(now.B, k, c.top_words);
        std::string moved;
        if (l >= 0) {
            const std::vector<Index> top_before = model::top_word_ids(before.B, l, c.top_words);
            const std::string gained = words_gained(top_now, new_file.vocab, top_before, old_file.vocab, "+");
            const std::string lost = words_gained(top_before, old_file.vocab, top_now, new_file.vocab, "-");
            moved = gained + (gained.empty() || lost.empty() ? "" : " ") + lost;
        }
        std::printf("%5d %5s %8.3f  %-60s %s\n", k + 1, l >= 0 ? std::to_string(l + 1).c_str() : "new",
                    m.distance[static_cast<std::size_t>(k)], words_of(now, new_file.vocab, k, c.top_words).c_str(),
                    l >= 0 ? (moved.empty() ? "(same top words)" : moved.c_str()) : "(new topic)");
    }
    for (const int l : m.gone)
        std::printf("gone: old topic %d: %s\n", l + 1, words_of(before, old_file.vocab, l, c.top_words).c_str());
}

}  // namespace

int run_show(const ShowCommand& c, const mpi::Comm& world) {
    mpi::check_on_root(world, "show", [&] {
        if (c.schema) {  // the prose, with the model file's table where it says @MODEL_SCHEMA@
            std::string text = help_text("schema");
            const std::string marker = "@MODEL_SCHEMA@\n";
            if (const auto at = text.find(marker); at != std::string::npos)
                text.replace(at, marker.size(), io::format_schema(io::model_schema()));
            std::fputs(text.c_str(), stdout);
            std::fflush(stdout);
            return;
        }
        if (!c.compare.empty()) {
            if (!c.file.empty()) throw usage_error("--compare names both model files: give no other file");
            if (c.top_words < 1) throw usage_error("--top-words must be >= 1");
            print_comparison(c);
            std::fflush(stdout);
            return;
        }
        if (c.topics != 0) throw usage_error("--topics chooses the K that --compare compares: give --compare");
        if (c.file.empty()) throw usage_error("give a model file (or --schema, or --compare OLD NEW)");
        if (c.top_words < 1 || c.pairs < 0) throw usage_error("--top-words must be >= 1 and --pairs >= 0");
        const io::ModelFile file = io::read_model_file(c.file);
        std::printf("jsmf model %s: %zu words, created %s\n  by: %s\n", c.file.c_str(), file.vocab.size(),
                    file.created.c_str(), file.command_line.c_str());
        for (const auto& [name, value] : file.options)  // fit --update's record
            if (name == "updates") std::printf("  updates: %s\n", value.c_str());
        for (const auto& [name, value] : file.options)
            if (name == "update_old_topics")
                std::printf("  topic ids kept from the update's base (0-based old id per topic, -1: new): %s\n", value.c_str());
        if (const Index r = io::sketch_rank_of(c.file); r > 0)
            std::printf("  a sketch of C for fit --update-mode sketch: rank %lld of N = %zu\n", static_cast<long long>(r),
                        file.vocab.size());
        for (const auto& m : file.models) print_model(m, file, c);
        if (!file.hierarchy.empty()) print_hierarchy(file, c);
        std::fflush(stdout);
    });
    return exit_code::ok;
}

}  // namespace jsmf::app
