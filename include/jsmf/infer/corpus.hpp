// SPDX-License-Identifier: MIT
// θ for a whole corpus in UCI files under a fitted model: the corpus read in shards (each
// rank its documents), its words mapped to the model's, EM per document, the totals. What
// `jsmf infer` and `jsmf fit --infer` write (io::write_theta_file) is this call's result.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <vector>

#include "jsmf/distmat/rows.hpp"
#include "jsmf/infer/infer.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::infer {

/// The topics θ is inferred under: the vocabulary on rank 0, B by rows (B_rows: a compressed
/// fit's, or a model file's read by each rank, io::read_B_by_rows) or on rank 0 (a dense
/// fit's), the rest on every rank; each rank gets the rows of B its documents' words need
/// from their owners (or rank 0), so with B by rows no rank holds N × K.
struct InferModel {
    std::string file;                  ///< where they come from (named in messages)
    int topics = 0;                    ///< K
    Eigen::MatrixXd B;                 ///< N × K (rank 0), or this rank's rows (B_rows)
    std::vector<std::string> vocab;    ///< N (rank 0)
    /// Where B is kept by rows (a fit's, model::TopicsFound's): every rank's rows, blocks in
    /// rank order (B_rows.size() = N); empty: B is whole on rank 0.
    distmat::RowPartition B_rows;
};

/// The corpus.
struct CorpusInput {
    std::vector<std::string> corpus;   ///< UCI docword files (plain or gzip), their documents in order
    std::string vocab;                 ///< the corpus's vocabulary: words mapped to the model's by name; empty: same ids
    std::string doc_ids;               ///< a file of document ids, one per line (jsmf prepare's docs.X.txt), or empty
};

/// Local (rank 0 calls it). The document ids file (infer --doc-ids, a prepared corpus's
/// docs.X.txt): one id per line, `declared` lines. InputError naming the file otherwise.
std::vector<std::string> read_doc_ids(const std::string& path, std::int64_t declared);

/// This rank's documents, sorted by row, and their results.
struct DocumentRows {
    std::vector<std::int64_t> rows;    ///< global document index: docID − 1 over the files in order
    Eigen::MatrixXd theta;             ///< rows.size() × K; a row of zeros: no usable word
    std::vector<std::int64_t> dominant_topic;  ///< argmax_k θ_k (0-based), -1 without a usable word
    std::vector<std::int64_t> tokens;          ///< usable tokens
    std::vector<std::int64_t> oov_tokens;      ///< tokens of words the model lacks or whose row of B is 0
    std::vector<std::int64_t> iterations;
    std::vector<double> log_likelihood;        ///< Σ_w h_w ln (Bθ)_w (natural log)
};

/// Totals over the corpus (the same on every rank).
struct CorpusSummary {
    std::int64_t documents = 0;        ///< declared by the corpus (D)
    std::int64_t inferred = 0;         ///< with at least one usable token
    std::int64_t empty = 0;            ///< present or not, without a usable token
    std::int64_t tokens = 0;           ///< usable tokens
    std::int64_t oov_tokens = 0;       ///< tokens of words the model does not have (or with B's row 0)
    std::int64_t not_converged = 0;
    double log_likelihood = 0;         ///< Σ over documents in corpus order (natural log)
    double per_word() const { return tokens > 0 ? log_likelihood / static_cast<double>(tokens) : 0.0; }
};

struct CorpusTopics {
    DocumentRows local;                ///< this rank's documents
    std::int64_t model_rows = 0;       ///< rows of B this rank held: its documents' distinct words
    CorpusSummary summary;
    std::vector<std::string> doc_ids;  ///< rank 0: D ids from input.doc_ids (empty without)
};

/// Collective on `world`. Reads the corpus in shards (each rank its documents by byte
/// range), maps its words to the model's (by name through input.vocab; without it the
/// corpus must have the model's N words), infers θ for each document with
/// infer_documents (distmat::threads() threads) on the rows of B its documents' words
/// need, sent by the ranks that hold them (distmat::rows_from_owners, or rows_from_root),
/// and sums the totals; the log-likelihood is
/// summed in corpus order on rank 0, so every result is the same at any rank and thread
/// count. Throws StageFailed on every rank for bad input (another vocabulary without
/// input.vocab, document ids that do not match the corpus, unreadable files).
CorpusTopics infer_corpus(const mpi::Comm& world, const InferModel& model, const CorpusInput& input,
                          const InferOptions& options);

}  // namespace jsmf::infer
