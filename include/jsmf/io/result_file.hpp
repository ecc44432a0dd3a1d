// SPDX-License-Identifier: MIT
// The model file (jsmf fit's output): B, A, anchors, α, per K, with everything that made them.
#pragma once

#include <Eigen/Core>

#include <string>
#include <vector>

#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/eval/truth.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/io/provenance.hpp"
#include "jsmf/lowrank/sketch.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::io {

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
///   so the short paths (/model/B, …) work too.
///   /hierarchy/level<l>/ (fit --hierarchy; l = 2, 3, …) B K_{l-1} × K_l, A K_l × K_l,
///                    anchors K_l int64 (0-based topics of level l − 1), B_words N × K_l;
///                    attrs topics, rectify_method, rectify_iterations, rectify_converged
///   /corpus/         (fit --prepared) doc_ids: D strings, the corpus's document ids in
///                    docID order; labels: D int64 (1-based, into label_names) and
///                    label_names: L strings, when the corpus has labels
///   /sketch/         (fit --sketch-rank r) C's sketch for an update without its documents
///                    (lowrank::Sketch): vectors N × r, values r (descending), diagonal N,
///                    unigram N, doc_freq N int64; attrs rank, weight (the documents C
///                    averages over, decayed), num_docs, num_tokens (all counted)
/// Collective on `comm`: rank 0 writes "<path>.partial" and renames it when complete (the
/// arrays kept by rows, a compressed fit's Y, E′, B, B̆, unigram, hierarchy levels'
/// B_words and the sketch's vectors, first written into it by every rank collectively);
/// on failure nothing is left and every rank throws StageFailed. `sketch`: every rank's
/// rows (of a balanced partition), or null / empty on every rank.
void write_model_file(const mpi::Comm& comm, const std::string& path, const CoocFileInfo& info,
                      const std::vector<model::Model>& models, const Provenance& provenance, const StageTimes& times,
                      int top_words, const CorpusDocuments* documents = nullptr,
                      const std::vector<model::HierarchyLevel>* hierarchy = nullptr,
                      const lowrank::Sketch* sketch = nullptr);

/// Collective on `comm`. A compressed fit's rectified factor Y (/K<topics>/compressed/Y),
/// this rank's rows of `rows`, in panels of about 8 MiB; empty on every rank when the file
/// holds none (a dense fit's); InputError (agreed) when it is not N × K or not finite.
Eigen::MatrixXd read_factor_by_rows(const mpi::Comm& comm, const std::string& path, int topics,
                                    const distmat::RowPartition& rows);

/// Local. The rank of the sketch a model file keeps (0: none); InputError when it is not a
/// jsmf file.
Index sketch_rank_of(const std::string& path);

/// Collective on `comm`. The sketch a model file keeps, this rank's rows of `rows` (V read
/// in panels of about 8 MiB): InputError (agreed) naming the file when it holds none
/// ("fit it with --sketch-rank"), when its shapes disagree with rows.size() words, or when
/// a value is not finite, a weight not positive or a frequency negative.
lowrank::Sketch read_sketch(const mpi::Comm& comm, const std::string& path, const distmat::RowPartition& rows);

/// Collective on `comm`. Rewrites the evaluation of `models` (their metrics,
/// projection and truth groups, replacing any there) in a copy of the model file `in`,
/// written to "<out>.partial" and renamed to `out` (which may be `in`) when complete; on
/// failure nothing changes and every rank throws StageFailed.
void update_model_evaluation(const mpi::Comm& comm, const std::string& in, const std::string& out,
                             const std::vector<model::Model>& models);

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
    std::vector<model::Model> models;
    std::vector<model::HierarchyLevel> hierarchy;  ///< levels 2, 3, … (empty without --hierarchy)
    CorpusDocuments documents;                     ///< /corpus (a fit from jsmf prepare's corpus; else empty)
};
/// What read_model_file reads: all of it, or all but a compressed fit's factor record (Y,
/// N × K, and E′'s triplets: 370 MB on 20 Newsgroups at K = 100 after one ENN iteration),
/// which infer, eval and synth --from do not use (Model::compressed is then empty); or all
/// but every array with a row per word and a column per topic (the factor, B, B̆ and the
/// hierarchy's B_words: what `jsmf infer` and `jsmf report` read on rank 0, B coming by rows
/// from read_B_by_rows).
enum class ModelParts { all, without_factor, without_topic_words };

/// Local. Reads a model file; throws InputError for anything else.
ModelFile read_model_file(const std::string& path, ModelParts parts = ModelParts::all);

/// B of one K, kept by rows: this rank's block of a balanced partition of the N words.
struct BByRows {
    Eigen::MatrixXd B;              ///< rows.rows(rank) × K
    distmat::RowPartition rows;     ///< the same on every rank
};

/// Collective on `comm`. Each rank reads its block of rows of /K<topics>/model/B, which
/// must be `words` × `topics`, so that no rank reads or holds N × K; and checks what
/// read_model_file checks of B (finite, non-negative to 1e-9, each column summing to 1 to
/// 1e-6 or 0), with the same messages, on values reduced over the ranks. On failure every
/// rank throws StageFailed (one message, from the rank that found it or from rank 0).
BByRows read_B_by_rows(const mpi::Comm& comm, const std::string& path, int topics, Index words);
/// The same, each rank its rows of `rows` (any contiguous blocks in rank order, e.g. another
/// model's rows as it holds them).
BByRows read_B_by_rows(const mpi::Comm& comm, const std::string& path, int topics, const distmat::RowPartition& rows);

}  // namespace jsmf::io
