// SPDX-License-Identifier: MIT
// Per-document topic proportions of a corpus under a fitted model, as `jsmf infer` and
// `jsmf fit --infer` run them: shards, threads, one parallel HDF5 file.
#pragma once

#include <Eigen/Core>

#include <string>
#include <vector>

#include "jsmf/infer/infer.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::app {

/// What the model contributes (replicated on every rank).
struct InferModel {
    std::string file;
    int topics = 0;
    Eigen::MatrixXd B;                 ///< N × K
    std::vector<std::string> vocab;    ///< N
};

struct InferInput {
    std::vector<std::string> corpus;   ///< UCI docword files
    std::string vocab;                 ///< the corpus's vocabulary: words mapped to the model's by name; empty: same ids
    std::string doc_ids;               ///< a docs.X.txt of jsmf prepare (rank 0 reads it), or empty
};

/// Totals over the ranks.
struct InferSummary {
    std::int64_t documents = 0;        ///< declared by the corpus (rows of theta)
    std::int64_t inferred = 0;         ///< with at least one usable token
    std::int64_t empty = 0;            ///< present or not, without a usable token
    std::int64_t tokens = 0;           ///< usable tokens
    std::int64_t oov_tokens = 0;       ///< tokens of words the model does not have (or with B's row 0)
    std::int64_t not_converged = 0;
    double log_likelihood = 0;         ///< Σ over documents (natural log)
    double per_word() const { return tokens > 0 ? log_likelihood / static_cast<double>(tokens) : 0.0; }
    double seconds = 0;
};

/// Collective on `world`. Reads the corpus in shards (each rank its documents), maps its
/// words to the model's, infers θ for each document with distmat::threads() threads, and
/// writes `out` (to "<out>.partial", renamed when complete) with a collective parallel-HDF5
/// write in corpus order:
///   /theta            D × K float64 (row m: docID m + 1 over the files in order); a row of
///                     zeros marks a document without a usable word (absent, empty, or
///                     only words the model lacks)
///   /dominant_topic   D int64 (0-based; -1 for those)
///   /log_likelihood   D float64, Σ_w h_w ln (Bθ)_w;   /tokens, /oov_tokens, /iterations  D int64
///   /doc_ids          D strings (when the corpus came from jsmf prepare)
///   attrs             model, topics, prior, tolerance, max_iterations, documents, inferred,
///                     empty, tokens, oov_tokens, not_converged, per_word_log_likelihood,
///                     perplexity, command_line
InferSummary run_infer_stage(const mpi::Comm& world, const InferModel& model, const InferInput& input,
                             const infer::InferOptions& options, const std::string& prior_name,
                             const std::string& out, const std::string& command_line);

/// Local. Logs the summary (rank 0) and prints the machine-readable line.
void report_infer(const mpi::Comm& world, const InferSummary& summary, const std::string& out);

}  // namespace jsmf::app
