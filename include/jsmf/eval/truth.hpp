// SPDX-License-Identifier: MIT
// Planted truth: a learned model against the model that generated its corpus.
#pragma once

#include <Eigen/Core>

#include <vector>

#include "jsmf/core/types.hpp"

namespace jsmf::eval {

struct TruthComparison {
    /// permutation[k]: the planted topic matched to learned topic k (Hungarian on the
    /// L1 distances between columns of B).
    std::vector<int> permutation;
    Eigen::VectorXd topic_l1;   ///< K: ‖b_k − b*_{π(k)}‖₁ per learned topic
    double b_l1 = 0;            ///< mean of topic_l1
    double a_l1 = 0;            ///< Σ_kl |A_kl − A*_{π(k)π(l)}|
    double a_frobenius = 0;     ///< ‖A − P A* Pᵀ‖_F
    int anchor_hits = 0;        ///< learned anchors s_k that are a planted anchor of topic π(k)
};

/// Local. Matches learned topics (B N×K, A K×K, anchors K) to planted ones (B_true,
/// A_true, anchors_true K × a) and measures the errors. Throws InputError on shape
/// mismatch.
TruthComparison compare_to_truth(const Eigen::MatrixXd& B, const Eigen::MatrixXd& A, const std::vector<Index>& anchors,
                                 const Eigen::MatrixXd& B_true, const Eigen::MatrixXd& A_true,
                                 const Eigen::MatrixXi& anchors_true);

}  // namespace jsmf::eval
