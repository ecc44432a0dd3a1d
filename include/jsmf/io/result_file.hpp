// SPDX-License-Identifier: MIT
// The model file (jsmf fit's output): B, A, anchors, α, per K, with everything that made them.
#pragma once

#include <Eigen/Core>

#include <string>
#include <vector>

#include "jsmf/core/timer.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/eval/truth.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/io/provenance.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::io {

/// One fitted model (one K).
/// What an AnchorFree fit (fit --method anchorfree-lp | anchorfree-pds) adds to a model.
struct AnchorFreeRecord {
    std::string algorithm;            ///< "lp" or "pds"
    Eigen::MatrixXd E;                ///< K × K, the raw E* = (C*ᵀC*)⁻¹C*ᵀPC*(C*ᵀC*)⁻¹
    Eigen::MatrixXd M;                ///< K × K, C* = B̃M
    Eigen::VectorXd eigenvalues;      ///< K, those of P that made B̃ = UΛ^{1/2}
    int iterations = 0;               ///< LP: sweeps over the columns; PDS: outer iterations
    int inner_iterations = 0;         ///< LP: Clp solves; PDS: Decrease iterations
    bool converged = false;
    Index working_rows = 0;           ///< LP: rows of B̃ in the screened working set
    double violation = 0;             ///< PDS: final ‖B̃M − Z‖/‖Z‖
    double min_C = 0;                 ///< most negative entry of C* before B took max(C*, 0)
    bool a_is_distribution = false;   ///< E* >= 0 (to rounding), so A = E*/ΣE*; else A = E*
};

struct FittedModel {
    int num_topics = 0;
    /// "anchors" (rectified anchor words) or "anchorfree-lp" / "anchorfree-pds"; then
    /// `anchors` are each topic's representative word (argmax_i p(topic | word i)), not
    /// anchors, and `anchorfree` holds the rest.
    std::string method = "anchors";
    AnchorFreeRecord anchorfree;
    Eigen::MatrixXd B;               ///< N × K, p(word | topic)
    Eigen::MatrixXd B_breve;         ///< K × N, p(topic | word)
    Eigen::MatrixXd A;               ///< K × K, p(topic1, topic2)
    Eigen::VectorXd unigram;         ///< N, p(x = i) = row sums of the rectified C (Bayes' rule used it)
    std::string a_method;            ///< "diagonal" (Alg. 4) or "least_squares" (Arora et al.)
    std::vector<Index> anchors;      ///< K word ids
    Eigen::VectorXd diag_r;          ///< K: the anchor finder's r_k
    std::string anchor_method;       ///< "qr", "fastanchor" or "words" (given by the user)
    Index zero_rows = 0;             ///< words that never occur (B row 0, never anchors)
    std::string solver;              ///< "active-set", "expgrad" or "admm"
    Index words_solved = 0, words_converged = 0;
    int solver_max_iterations = 0;   ///< the most iterations any word used
    double solve_seconds = 0;
    bool has_alpha = false;
    Eigen::VectorXd alpha;           ///< K (when has_alpha)
    double alpha0 = 0, alpha_residual = 0;
    bool alpha_at_bound = false;
    RectificationRecord rectification;
    StageTimes times;                ///< this K's stages (rectify, anchors, recover, …)
    eval::MetricSet metrics;         ///< empty when not measured (--no-metrics)
    std::string metrics_note;        ///< what the metrics were measured with (e.g. no coherence: no corpus)
    /// N × 2: the rows of C̄ on their two principal directions (NIPS'15 Figure 1), of
    /// the rectified and of the original C; empty when not computed.
    Eigen::MatrixXd projection, projection_original;
    bool has_truth = false;          ///< compared with a planted model (jsmf eval --truth)
    eval::TruthComparison truth;
    std::string truth_file;
};

/// Local. The ids of the n most probable words of B's column k, most probable first
/// (ties by word id).
std::vector<Index> top_word_ids(const Eigen::MatrixXd& B, int k, int n);

/// One level above the first of a topic hierarchy (fit --hierarchy): the rectified A of
/// the level below factorized as a co-occurrence matrix of its K_below topics.
struct HierarchyLevel {
    int topics = 0;                 ///< K of this level
    Eigen::MatrixXd B;              ///< K_below × K: p(topic below | topic here)
    Eigen::MatrixXd A;              ///< K × K: p(topic1, topic2) at this level
    std::vector<Index> anchors;     ///< K anchor topics of the level below (0-based)
    Eigen::MatrixXd B_words;        ///< N × K: p(word | topic here) = B₁ B₂ … B_this
    std::string rectify_method;     ///< how the level below's A was rectified
    int rectify_iterations = 0;
    bool rectify_converged = false;
};

/// The documents of a prepared corpus (jsmf prepare), carried into the model file:
/// line m of its docs file is docID m + 1. Rank 0 only.
struct CorpusDocuments {
    std::vector<std::string> ids;
    std::vector<std::int64_t> labels;       ///< per document, 1-based; empty when unlabelled
    std::vector<std::string> label_names;
};

/// Schema (format_version 1):
///   /                  attrs as in the cooc file with kind="model", plus topics ("10,25")
///   /vocab, /stats     as in the cooc file (unigram = row sums of the unrectified C)
///   /timings           attrs: seconds of the shared stages (read/cooc) and total
///   /K<K>/             one group per K, attrs topics
///     model/B          N×K float64, p(word | topic);  model/B_breve K×N, p(topic | word)
///     model/A          K×K float64, p(topic1, topic2); attr method
///     model/unigram    N float64, p(x = i) of the rectified C (used by Bayes' rule)
///     model/anchors    K int64 word ids;  model/anchor_words K strings;  model/diag_r K
///     model/alpha      K float64 (with --alpha; attrs alpha0, residual, at_bound)
///     model            attrs method (anchors | anchorfree-lp | anchorfree-pds), anchor_method,
///                      zero_rows, solver, words_solved, words_converged,
///                      solver_max_iterations, solve_seconds
///     anchorfree/      (AnchorFree methods) E: K×K raw E*; M: K×K (C* = B̃M);
///                      eigenvalues: K; attrs algorithm, iterations, inner_iterations,
///                      converged, working_rows, violation, min_C, a_is_distribution.
///                      Then model/B = max(C*, 0) with columns summed to 1, model/A =
///                      E*/ΣE* when E* >= 0 (else E* itself), model/anchors the
///                      representative words, diag_r their p(topic | word)
///     rectification/   as in the cooc file
///     topics/top_words K×T strings; topics/top_word_ids K×T int64; topics/top_word_probs K×T
///     timings          attrs: seconds per stage of this K
///     metrics/         attrs: one per metric, [mean, std] float64 (std NaN for a single
///                      number: legality, validity, approximation*, clustacc), and note;
///                      datasets: the per-topic (K) or per-word (N) values of each
///                      averaged metric, attr per = "topic" | "word"
///     projection/      original, rectified: N×2 float64, C̄'s rows on two principal axes
///     truth/           (jsmf eval --truth) attrs file, b_l1, a_l1, a_frobenius,
///                      anchor_hits; datasets permutation (K int64, planted topic of
///                      each learned one), topic_l1 (K)
///   /model, /rectification, /topics: soft links to /K<K>/… when the file holds one K,
///   so DESIGN.md's paths work as written.
///   /hierarchy/level<l>/ (fit --hierarchy; l = 2, 3, …) B K_{l-1} × K_l, A K_l × K_l,
///                    anchors K_l int64 (0-based topics of level l − 1), B_words N × K_l;
///                    attrs topics, rectify_method, rectify_iterations, rectify_converged
///   /corpus/         (fit --prepared) doc_ids: D strings, the corpus's document ids in
///                    docID order; labels: D int64 (1-based, into label_names) and
///                    label_names: L strings, when the corpus has labels
/// Collective on `comm`: rank 0 writes "<path>.partial" and renames it when complete;
/// on failure nothing is left and every rank throws StageFailed.
void write_model_file(const mpi::Comm& comm, const std::string& path, const CoocFileInfo& info,
                      const std::vector<FittedModel>& models, const Provenance& provenance, const StageTimes& times,
                      int top_words, const CorpusDocuments* documents = nullptr,
                      const std::vector<HierarchyLevel>* hierarchy = nullptr);

/// Collective on `comm`. Rewrites the evaluation of `models` (their metrics,
/// projection and truth groups, replacing any there) in a copy of the model file `in`,
/// written to "<out>.partial" and renamed to `out` (which may be `in`) when complete; on
/// failure nothing changes and every rank throws StageFailed.
void update_model_evaluation(const mpi::Comm& comm, const std::string& in, const std::string& out,
                             const std::vector<FittedModel>& models);

/// What `jsmf show` and tests read back.
struct ModelFile {
    std::vector<std::string> vocab;
    Eigen::VectorXd unigram;
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> doc_freq;  ///< D1 over the documents that built C
    Index num_docs = 0;                                       ///< M, the documents that built C
    Index num_tokens = 0;                                     ///< their tokens
    std::string command_line, created;
    /// The options that made the file (root attributes: corpus, min_tokens, method, …).
    std::vector<std::pair<std::string, std::string>> options;
    std::vector<FittedModel> models;
    std::vector<HierarchyLevel> hierarchy;  ///< levels 2, 3, … (empty without --hierarchy)
};
/// Local. Reads a model file; throws InputError for anything else.
ModelFile read_model_file(const std::string& path);

}  // namespace jsmf::io
