// SPDX-License-Identifier: MIT
// The model file's schema table, and its text for people.
#include "jsmf/io/schema.hpp"

#include <sstream>

#include "jsmf/eval/evaluate.hpp"
#include "jsmf/model/model.hpp"

namespace jsmf::io {
namespace {

/// The trace's columns under `group` (from the trace tables themselves).
template <class Row>
void add_columns(std::vector<SchemaEntry>& schema, const std::string& group,
                 const std::vector<model::Column<Row>>& columns, const std::string& per, const std::string& when) {
    for (const auto& column : columns)
        schema.push_back({group + "/" + column.name, model::is_integer(column) ? "int64" : "float64", per, column.meaning,
                          when});
}

/// /K<K>/metrics: each metric's [mean, std] and values (from the metric table itself).
void add_metrics(std::vector<SchemaEntry>& schema) {
    for (const eval::MetricInfo& metric : eval::metric_table()) {
        const std::string name = metric.name, per = metric.per, needs = metric.needs;
        const std::string when = needs == "labels"   ? "jsmf eval --labels"
                                 : needs == "corpus" ? "unless fit --no-metrics; with the corpus"
                                                     : "unless fit --no-metrics";
        schema.push_back({"/K<K>/metrics@" + name, "float64", "2",
                          (per.empty() ? "[value, NaN]: " : "[mean, std] over the " + per + "s: ") + metric.meaning,
                          when});
        if (per.empty()) continue;
        schema.push_back({"/K<K>/metrics/" + name, "float64", per == "topic" ? "K" : "N", name + " of each " + per,
                          when});
        schema.push_back({"/K<K>/metrics/" + name + "@per", "string", "", "\"" + per + "\"", when});
    }
}

std::vector<SchemaEntry> make_model_schema() {
    const std::string projection_rule = "fit --rectify ap|dr|dp";
    std::vector<SchemaEntry> s = {
        {"@format", "string", "", "\"jsmf\"", ""},
        {"@kind", "string", "", "\"model\"", ""},
        {"@format_version", "int64", "", "1", ""},
        {"@jsmf_version", "string", "", "the jsmf that wrote the file", ""},
        {"@command_line", "string", "", "the command that made the file", ""},
        {"@created", "string", "", "ISO 8601 UTC", ""},
        {"@mpi_ranks", "int64", "", "ranks of the run", ""},
        {"@grid", "string", "", "the process grid, RxC", ""},
        {"@topics", "string", "", "the K of the file, \"10\" or \"10,25,50\"", ""},
        {"@<option>", "string", "", "every option of the run (corpus, min_tokens, method, stop, solver, threads, …)",
         ""},
        {"/vocab", "string", "N", "the words, word id i at i (0-based)", ""},
        {"/stats", "group", "", "the counts of the unrectified C", ""},
        {"/stats/unigram", "float64", "N", "p(x = i) = Σ_j C_ij of the unrectified C", ""},
        {"/stats/doc_freq", "int64", "N", "documents (of the M used) that contain word i", ""},
        {"/stats@num_docs", "int64", "", "M, the documents that built C", ""},
        {"/stats@num_docs_read", "int64", "", "documents read", ""},
        {"/stats@num_docs_skipped", "int64", "", "documents below --min-tokens or --min-distinct", ""},
        {"/stats@num_docs_declared", "int64", "", "documents the corpus headers declare", ""},
        {"/stats@num_tokens", "int64", "", "tokens of the used documents", ""},
        {"/stats@num_tokens_read", "int64", "", "tokens read", ""},
        {"/stats@pair_updates", "int64", "", "(i, j) contributions accumulated", ""},
        {"/stats@sum", "float64", "", "ΣC (1 up to rounding)", ""},
        {"/stats@min", "float64", "", "the smallest entry of C", ""},
        {"/stats@asymmetry", "float64", "", "max |C − Cᵀ| (0 up to rounding)", ""},
        {"/timings", "group", "", "seconds of the shared stages", ""},
        {"/timings@<stage>", "float64", "", "seconds of the stage (inspect, cooc or read)", ""},
        {"/timings/peak_rss_bytes", "group", "", "the stages' peak memory", ""},
        {"/timings/peak_rss_bytes@<stage>", "int64", "", "peak resident bytes during the stage, the largest rank's", ""},
        {"/hierarchy", "group", "", "topics of topics above the first K", "fit --hierarchy"},
        {"/hierarchy/level<l>", "group", "", "level l = 2, 3, …", "fit --hierarchy"},
        {"/hierarchy/level<l>@topics", "int64", "", "K_l", "fit --hierarchy"},
        {"/hierarchy/level<l>@rectify_method", "string", "", "how the level below's A was rectified", "fit --hierarchy"},
        {"/hierarchy/level<l>@rectify_iterations", "int64", "", "its iterations", "fit --hierarchy"},
        {"/hierarchy/level<l>@rectify_converged", "int64", "", "1 when it met its tolerance", "fit --hierarchy"},
        {"/hierarchy/level<l>/B", "float64", "K_{l-1} x K_l", "p(topic below | topic here)", "fit --hierarchy"},
        {"/hierarchy/level<l>/A", "float64", "K_l x K_l", "p(topic1, topic2) at this level", "fit --hierarchy"},
        {"/hierarchy/level<l>/anchors", "int64", "K_l", "the anchor topics of the level below (0-based)",
         "fit --hierarchy"},
        {"/hierarchy/level<l>/B_words", "float64", "N x K_l", "p(word | topic here) = B_1 B_2 … B_l", "fit --hierarchy"},
        {"/corpus", "group", "", "the documents of a prepared corpus", "fit --prepared"},
        {"/corpus/doc_ids", "string", "D", "document ids, docID m at m − 1", "fit --prepared"},
        {"/corpus/labels", "int64", "D", "each document's label, 1-based into label_names", "fit --prepared, labelled"},
        {"/corpus/label_names", "string", "L", "the label names", "fit --prepared, labelled"},
        {"/K<K>", "group", "", "the model with K topics (one group per K)", ""},
        {"/K<K>@topics", "int64", "", "K", ""},
        {"/K<K>/model", "group", "", "the topics", ""},
        {"/K<K>/model/B", "float64", "N x K", "p(word | topic); columns sum to 1", ""},
        {"/K<K>/model/B_breve", "float64", "K x N", "p(topic | word): the per-word solutions (anchor s_k: e_k)", ""},
        {"/K<K>/model/A", "float64", "K x K", "p(topic1, topic2)", ""},
        {"/K<K>/model/A@method", "string", "", "diagonal (Alg. 4) | least_squares (Arora et al.) | anchorfree", ""},
        {"/K<K>/model/unigram", "float64", "N", "p(x = i): row sums of the rectified C (what Bayes' rule used)", ""},
        {"/K<K>/model/anchors", "int64", "K", "anchor word ids (0-based; AnchorFree: representative words)", ""},
        {"/K<K>/model/anchor_words", "string", "K", "the anchor words", ""},
        {"/K<K>/model/diag_r", "float64", "K",
         "each anchor's residual norm when chosen (AnchorFree: its p(topic | word))", ""},
        {"/K<K>/model/alpha", "float64", "K", "a Dirichlet α fitted to A (Alg. 4)", "fit --alpha"},
        {"/K<K>/model/alpha@alpha0", "float64", "", "Σα", "fit --alpha"},
        {"/K<K>/model/alpha@residual", "float64", "", "the fit's residual", "fit --alpha"},
        {"/K<K>/model/alpha@at_bound", "int64", "", "1 when α0 was clamped (A not Dirichlet-like)", "fit --alpha"},
        {"/K<K>/model@method", "string", "", "anchors | anchorfree-lp | anchorfree-pds", ""},
        {"/K<K>/model@anchor_method", "string", "", "qr, spa, fastanchor, snpa, xray, words; AnchorFree: representative",
         ""},
        {"/K<K>/model@zero_rows", "int64", "", "words that never occur (B row 0, never anchors)", ""},
        {"/K<K>/model@anchor_min_df", "int64", "",
         "the anchor-candidate threshold: only words in at least this many documents could be anchors (0: any)", ""},
        {"/K<K>/model@anchor_excluded", "int64", "", "occurring words the threshold kept from being anchors", ""},
        {"/K<K>/model@solver", "string", "", "active-set | expgrad | admm | kl (AnchorFree: its method)", ""},
        {"/K<K>/model@words_solved", "int64", "", "per-word solves of B", ""},
        {"/K<K>/model@words_converged", "int64", "", "those that met their tolerance", ""},
        {"/K<K>/model@solver_max_iterations", "int64", "", "the most iterations any word used", ""},
        {"/K<K>/model@solve_seconds", "float64", "", "seconds of the solves (the slowest rank)", ""},
        {"/K<K>/anchorfree", "group", "", "what AnchorFree adds", "fit --method anchorfree-*"},
        {"/K<K>/anchorfree/E", "float64", "K x K", "the raw E* = (C*ᵀC*)⁻¹C*ᵀPC*(C*ᵀC*)⁻¹",
         "fit --method anchorfree-*"},
        {"/K<K>/anchorfree/M", "float64", "K x K", "C* = B̃M", "fit --method anchorfree-*"},
        {"/K<K>/anchorfree/eigenvalues", "float64", "K", "those of the C factored, B̃ = UΛ^{1/2}",
         "fit --method anchorfree-*"},
        {"/K<K>/anchorfree@algorithm", "string", "", "lp | pds", "fit --method anchorfree-*"},
        {"/K<K>/anchorfree@iterations", "int64", "", "LP: sweeps; PDS: outer iterations", "fit --method anchorfree-*"},
        {"/K<K>/anchorfree@inner_iterations", "int64", "", "LP: Clp solves; PDS: inner iterations",
         "fit --method anchorfree-*"},
        {"/K<K>/anchorfree@converged", "int64", "", "1 when the stopping rule was met", "fit --method anchorfree-*"},
        {"/K<K>/anchorfree@working_rows", "int64", "", "LP: rows in the screened working set",
         "fit --method anchorfree-*"},
        {"/K<K>/anchorfree@violation", "float64", "", "PDS: ‖B̃M − Z‖/‖Z‖", "fit --method anchorfree-*"},
        {"/K<K>/anchorfree@min_C", "float64", "", "the most negative entry of C* before B = max(C*, 0)",
         "fit --method anchorfree-*"},
        {"/K<K>/anchorfree@a_is_distribution", "int64", "", "1: A = E*/ΣE*; 0: A = E* (negative entries)",
         "fit --method anchorfree-*"},
        {"/sketch", "group", "", "C's sketch for a later fit --update-mode sketch (lowrank::Sketch)", "fit --sketch or --sketch-rank"},
        {"/sketch/vectors", "float64", "N x r", "C's top r algebraic eigenvectors (residual 1e-6 of λ₁; signs: nonnegative sums)",
         "fit --sketch-rank"},
        {"/sketch/values", "float64", "r", "their eigenvalues, descending", "fit --sketch-rank"},
        {"/sketch/diagonal", "float64", "N", "C's diagonal, exact", "fit --sketch-rank"},
        {"/sketch/unigram", "float64", "N", "C's row sums, exact", "fit --sketch-rank"},
        {"/sketch/doc_freq", "int64", "N", "the documents that contain word i (decayed: rounded)", "fit --sketch-rank"},
        {"/sketch@rank", "int64", "", "r", "fit --sketch-rank"},
        {"/sketch@weight", "float64", "", "the documents C averages over, decayed (Σ γ^age M_batch)", "fit --sketch-rank"},
        {"/sketch@num_docs", "int64", "", "every document counted, over all updates", "fit --sketch-rank"},
        {"/sketch@num_tokens", "int64", "", "their tokens", "fit --sketch-rank"},
        {"/K<K>/compressed", "group", "", "what the compressed pipeline adds: C was taken as YYᵀ + E′",
         "fit --pipeline compressed"},
        {"/K<K>/compressed/Y", "float64", "N x K", "the ENN-rectified factor LAW started from (not normalized)",
         "fit --pipeline compressed"},
        {"/K<K>/compressed/eigenvalues", "float64", "K", "the top eigenvalues of C from the documents (Y₀ = V Λ^½)",
         "fit --pipeline compressed"},
        {"/K<K>/compressed/residuals", "float64", "K", "their ‖C v − λ v‖", "fit --pipeline compressed"},
        {"/K<K>/compressed/correction_row", "int64", "entries",
         "E′ = max(F, Fᵀ) by F's triplets: the row (an anchor, or a word whose row of YYᵀ sums below 0)",
         "fit --pipeline compressed"},
        {"/K<K>/compressed/correction_col", "int64", "entries", "the column (word id)", "fit --pipeline compressed"},
        {"/K<K>/compressed/correction_value", "float64", "entries", "−y_row·y_col (> 0)", "fit --pipeline compressed"},
        {"/K<K>/compressed@products", "int64", "", "operator products of the compression", "fit --pipeline compressed"},
        {"/K<K>/compressed@checked_rows", "int64", "", "ENN's l: pairs with a word among the l rows of largest norm are checked",
         "fit --pipeline compressed"},
        {"/K<K>/compressed@final_negative_mass", "float64", "", "YYᵀ's negative mass left among checked pairs",
         "fit --pipeline compressed"},
        {"/K<K>/compressed@final_negative_entries", "int64", "", "and its entries", "fit --pipeline compressed"},
        {"/K<K>/compressed@unchecked_pairs", "float64", "", "pairs never checked, (N − l)²", "fit --pipeline compressed"},
        {"/K<K>/compressed/enn", "group", "", "ENN's iterations, one entry each", "fit --pipeline compressed"},
        {"/K<K>/rectification", "group", "", "how C was rectified for this K; its columns hold one entry per iteration (none for dc and none)", ""},
        {"/K<K>/rectification@method", "string", "", "ap | dr | dp | dc | none | enn (the compressed pipeline: its trace is /K<K>/compressed/enn)", ""},
        {"/K<K>/rectification@topics", "int64", "", "K", ""},
        {"/K<K>/rectification@iterations", "int64", "", "iterations (DC: permutations)", ""},
        {"/K<K>/rectification@converged", "int64", "", "1 when its tolerance was met", ""},
        {"/K<K>/rectification@fallbacks", "int64", "", "DC: completions that kept the old C_jj", ""},
        {"/K<K>/rectification@stop_reason", "string", "", "iterations | tolerance | quality | fixed-point",
         projection_rule + ", fit --pipeline compressed (ENN: iterations | quality | fixed-point)"},
    };
    add_columns(s, "/K<K>/compressed/enn", model::enn_columns(), "iterations", "fit --pipeline compressed");
    add_columns(s, "/K<K>/rectification", model::trace_columns(), "iterations", "");  // empty for dc and none
    s.push_back({"/K<K>/rectification/checks", "group", "", "the stopping rule's looks at the topics",
                 "fit --stop quality|fixed-point"});
    add_columns(s, "/K<K>/rectification/checks", model::check_columns(), "checks", "fit --stop quality|fixed-point");
    const std::vector<SchemaEntry> rest = {
        {"/K<K>/topics", "group", "", "the top words of each topic", ""},
        {"/K<K>/topics/top_words", "string", "K x T", "topic k's T most probable words (fit --top-words)", ""},
        {"/K<K>/topics/top_word_ids", "int64", "K x T", "their ids", ""},
        {"/K<K>/topics/top_word_probs", "float64", "K x T", "their p(word | topic)", ""},
        {"/K<K>/timings", "group", "", "seconds of this K's stages", ""},
        {"/K<K>/timings@<stage>", "float64", "", "rectify, anchors, recover_B, recover_A, metrics, codoc, …", ""},
        {"/K<K>/timings/peak_rss_bytes", "group", "", "this K's stages' peak memory", ""},
        {"/K<K>/timings/peak_rss_bytes@<stage>", "int64", "", "peak resident bytes during the stage, the largest rank's", ""},
        {"/K<K>/metrics", "group", "", "the papers' metrics (jsmf eval --help lists them)", "unless fit --no-metrics"},
        {"/K<K>/metrics@note", "string", "", "what was measured with what (e.g. coherence's documents)",
         "unless fit --no-metrics"},
    };
    s.insert(s.end(), rest.begin(), rest.end());
    add_metrics(s);
    const std::vector<SchemaEntry> after_metrics = {
        {"/K<K>/projection", "group", "", "C̄'s rows on their two principal axes (NIPS'15 Fig. 1)",
         "unless fit --no-metrics"},
        {"/K<K>/projection/rectified", "float64", "N x 2", "of the rectified C", "unless fit --no-metrics"},
        {"/K<K>/projection/original", "float64", "N x 2", "of the original C", "unless fit --no-metrics"},
        {"/K<K>/truth", "group", "", "against a planted model", "jsmf eval --truth"},
        {"/K<K>/truth@file", "string", "", "the truth file", "jsmf eval --truth"},
        {"/K<K>/truth@b_l1", "float64", "", "mean L1 error of B per topic (topics matched)", "jsmf eval --truth"},
        {"/K<K>/truth@a_l1", "float64", "", "Σ|A − A*| (matched)", "jsmf eval --truth"},
        {"/K<K>/truth@a_frobenius", "float64", "", "‖A − PA*Pᵀ‖_F", "jsmf eval --truth"},
        {"/K<K>/truth@anchor_hits", "int64", "", "anchors that are a planted anchor of their topic", "jsmf eval --truth"},
        {"/K<K>/truth/permutation", "int64", "K", "the planted topic matched to each learned one", "jsmf eval --truth"},
        {"/K<K>/truth/topic_l1", "float64", "K", "L1 error per learned topic", "jsmf eval --truth"},
        {"/model", "link", "", "→ /K<K>/model", "one K"},
        {"/rectification", "link", "", "→ /K<K>/rectification", "one K"},
        {"/topics", "link", "", "→ /K<K>/topics", "one K"},
    };
    s.insert(s.end(), after_metrics.begin(), after_metrics.end());
    return s;
}

/// `head`, then `text` broken into lines of at most `width` characters, the continuation
/// lines indented by `indent` + 1 spaces.
std::string wrap(const std::string& head, const std::string& text, std::size_t indent, std::size_t width) {
    std::string out = head;
    std::size_t column = head.size();
    std::istringstream words(text);
    for (std::string word; words >> word;) {
        if (column + 1 + word.size() > width && column > indent) {
            out += "\n" + std::string(indent, ' ');
            column = indent;
        }
        out += ' ' + word;
        column += 1 + word.size();
    }
    return out + "\n";
}

}  // namespace

const std::vector<SchemaEntry>& model_schema() {
    static const std::vector<SchemaEntry> schema = make_model_schema();
    return schema;
}

std::string format_schema(const std::vector<SchemaEntry>& schema, int width) {
    std::string out;
    for (const auto& e : schema) {
        std::string kind = e.type;
        if (!e.shape.empty()) kind += " [" + e.shape + "]";
        std::string text = kind + ": " + e.meaning;
        if (!e.when.empty()) text += " (" + e.when + ")";
        out += wrap(e.path, text, 7, static_cast<std::size_t>(width));
    }
    return out;
}

}  // namespace jsmf::io
