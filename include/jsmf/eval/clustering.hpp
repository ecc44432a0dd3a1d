// SPDX-License-Identifier: MIT
// ClustAcc (AnchorFree §6.2): documents' topic weights, k-means with the correlation
// distance, and accuracy under the best one-to-one matching of clusters to labels.
#pragma once

#include <Eigen/Core>

#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/corpus/shard.hpp"

namespace jsmf::eval {

/// Local. Document m's topic weights by non-negative least squares on B, as the paper
/// estimates them (D ≈ C W, W by NNLS with the mined topics C): w_m = argmin_{w ≥ 0}
/// ‖B w − d_m‖₂, then normalized to sum 1 (all-zero w stays zero). d_m is the document as
/// the co-occurrence matrix saw it: its word proportions h_m / n_m (h_m the word counts),
/// or with `word_weights` (N) its tf-idf vector (h_m / n_m) ∘ word_weights (the idf
/// ln(M / df) of a tf-idf C: the paper's D is tf-idf data). Only the direction of d_m
/// matters after the normalization. Returns K × (documents of `docs`).
Eigen::MatrixXd nnls_document_weights(const Eigen::MatrixXd& B, const corpus::Shard& docs,
                                      const Eigen::VectorXd& word_weights = Eigen::VectorXd());

/// Local. The same, from the Gram matrix G = BᵀB (K × K) of the whole B and only the rows
/// of B the documents use: `docs`' word ids index `B_rows` (and `word_weights`, when given)
/// rather than B. With G and the rows of the whole B, the same bits as the form above; a
/// row-distributed B gives G as the sum of the ranks' blocks' Grams (topic_rows.hpp).
Eigen::MatrixXd nnls_document_weights(const Eigen::MatrixXd& G, const Eigen::MatrixXd& B_rows,
                                      const corpus::Shard& docs, const Eigen::VectorXd& word_weights);

/// Local. k-means with the correlation distance 1 − corr(x, c) on the columns of X
/// (points), k clusters, `restarts` seeded k-means++ starts, the best (least total
/// distance) kept; returns the cluster (0 .. k−1) of every column. As MATLAB's
/// kmeans(..., 'Distance', 'correlation'): a centroid is the mean of its members after
/// centering and scaling them, an emptied cluster takes the point farthest from its
/// centroid. A constant column (no correlation defined) is at distance 1 from every
/// centroid. Throws InputError unless 1 ≤ k ≤ points and restarts ≥ 1.
std::vector<int> kmeans_correlation(const Eigen::MatrixXd& X, int k, int restarts, Seed seed);

/// Local. Fraction of points whose cluster maps to their label under the one-to-one
/// cluster → label map that maximizes it (Hungarian). Labels and clusters are 0-based;
/// the numbers of clusters and labels may differ (unmatched ones count as wrong). NaN for
/// no points; InputError for different lengths or a negative id.
double clustering_accuracy(const std::vector<int>& clusters, const std::vector<int>& labels);

}  // namespace jsmf::eval
