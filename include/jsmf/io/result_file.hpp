// SPDX-License-Identifier: MIT
// The model file (jsmf fit's output): B, A, anchors, α, per K, with everything that made them.
#pragma once

#include <Eigen/Core>

#include <string>
#include <vector>

#include "jsmf/core/timer.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/io/provenance.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::io {

/// One fitted model (one K).
struct FittedModel {
    int num_topics = 0;
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
};

/// Local. The ids of the n most probable words of B's column k, most probable first
/// (ties by word id).
std::vector<Index> top_word_ids(const Eigen::MatrixXd& B, int k, int n);

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
///     model            attrs anchor_method, zero_rows, solver, words_solved,
///                      words_converged, solver_max_iterations, solve_seconds
///     rectification/   as in the cooc file
///     topics/top_words K×T strings; topics/top_word_ids K×T int64; topics/top_word_probs K×T
///     timings          attrs: seconds per stage of this K
///   /model, /rectification, /topics: soft links to /K<K>/… when the file holds one K,
///   so DESIGN.md's paths work as written.
/// Collective on `comm`: rank 0 writes "<path>.partial" and renames it when complete;
/// on failure nothing is left and every rank throws StageFailed.
void write_model_file(const mpi::Comm& comm, const std::string& path, const CoocFileInfo& info,
                      const std::vector<FittedModel>& models, const Provenance& provenance, const StageTimes& times,
                      int top_words);

/// What `jsmf show` and tests read back.
struct ModelFile {
    std::vector<std::string> vocab;
    Eigen::VectorXd unigram;
    std::string command_line, created;
    std::vector<FittedModel> models;
};
/// Local. Reads a model file; throws InputError for anything else.
ModelFile read_model_file(const std::string& path);

}  // namespace jsmf::io
