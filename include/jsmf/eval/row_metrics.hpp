// SPDX-License-Identifier: MIT
// The measures on B (metrics.hpp's) where B is kept by rows: each rank holds a block of
// consecutive words (rows of B and p, columns of B̆) and no rank holds N × K. Each measure
// is a sum, a count or a maximum over words, reduced over the ranks (the root's sum,
// broadcast: the same bits on every rank); the top words are each rank's top n per topic,
// merged. The values equal metrics.hpp's on the whole B: the counted ones (ranks, top
// words) exactly, the summed ones to rounding (another order of the same sums).
//
// Memory per rank: the rank's rows, K × K and K × n (the anchors' rows of B, the top
// words' candidates: n K per rank, gathered on the root), and per-word values (entropy)
// N doubles on every rank (the file keeps them). Traffic: O(K² + n K P) per rank, and N
// doubles for the per-word values.
#pragma once

#include <Eigen/Core>

#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/eval/metrics.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::eval {

/// This rank's share of a model's topics: rows [first, first + B.rows()) of B (N × K), the
/// same words' columns of B̆ (K × N) and entries of p; N in all (every rank the same).
struct TopicRows {
    const Eigen::MatrixXd& B;        ///< rows × K
    const Eigen::MatrixXd& B_breve;  ///< K × rows
    const Eigen::VectorXd& p;        ///< rows
    Index first = 0;
    Index total = 0;                 ///< N
};

/// The top words of every topic with their values: top_words(B, n) of the whole B and
/// B at those words, K × min(n, N) each.
struct TopWords {
    Eigen::MatrixXi ids;
    Eigen::MatrixXd values;
};

/// Collective. top_words(B, n) of the whole B from each rank's rows (`B` rows × K, from
/// global row `first`; N = `total`), with the values, on every rank.
TopWords top_words_by_rows(const mpi::Comm& comm, const Eigen::MatrixXd& B, Index first, Index total,
                           int n = kTopWords);

/// Collective. validity(B, A, B̆, p) of the whole model.
double validity_by_rows(const mpi::Comm& comm, const TopicRows& t, const Eigen::MatrixXd& A);

/// Collective. specificity(B, p) of the whole B.
Eigen::VectorXd specificity_by_rows(const mpi::Comm& comm, const Eigen::MatrixXd& B, const Eigen::VectorXd& p);

/// Collective. model_metrics of the whole model (the same names and values, on every rank).
MetricSet model_metrics_by_rows(const mpi::Comm& comm, const TopicRows& t, const Eigen::MatrixXd& A,
                                const std::vector<Index>& anchors);

}  // namespace jsmf::eval
