// SPDX-License-Identifier: MIT
// A learned model against its planted truth, after matching topics by the L1 distance
// of their word distributions (topics are identified only up to a permutation).
#include "jsmf/eval/truth.hpp"

#include <cmath>
#include <string>

#include "jsmf/core/error.hpp"
#include "jsmf/solvers/matching.hpp"

namespace jsmf::eval {
namespace {

void require_truth(bool condition, const std::string& what) {
    if (!condition) throw InputError("truth: " + what);
}

}  // namespace

TruthComparison compare_to_truth(const Eigen::MatrixXd& B, const Eigen::MatrixXd& A, const std::vector<Index>& anchors,
                                 const Eigen::MatrixXd& B_true, const Eigen::MatrixXd& A_true,
                                 const Eigen::MatrixXi& anchors_true) {
    const Eigen::Index K = B.cols();
    require_truth(B_true.rows() == B.rows() && B_true.cols() == K, "B and B_true differ in shape");
    require_truth(A.rows() == K && A.cols() == K, "A must be K x K");
    require_truth(A_true.rows() == K && A_true.cols() == K, "A_true must be K x K");
    require_truth(static_cast<Eigen::Index>(anchors.size()) == K, "one learned anchor per topic is needed");
    require_truth(anchors_true.rows() == K, "anchors_true must have one row per topic");

    TruthComparison result;
    const Eigen::MatrixXd cost = solvers::l1_column_distances(B, B_true);
    result.permutation = solvers::optimal_assignment(cost);
    const auto pi = [&](Eigen::Index k) { return static_cast<Eigen::Index>(result.permutation[static_cast<std::size_t>(k)]); };

    result.topic_l1.resize(K);
    for (Eigen::Index k = 0; k < K; ++k) result.topic_l1(k) = cost(k, pi(k));
    result.b_l1 = K > 0 ? result.topic_l1.mean() : 0.0;

    // (P A* Pᵀ)_kl = A*_{π(k)π(l)}: the planted A in the learned topics' order.
    double l1 = 0, squares = 0;
    for (Eigen::Index k = 0; k < K; ++k)
        for (Eigen::Index l = 0; l < K; ++l) {
            const double difference = A(k, l) - A_true(pi(k), pi(l));
            l1 += std::abs(difference);
            squares += difference * difference;
        }
    result.a_l1 = l1;
    result.a_frobenius = std::sqrt(squares);

    for (Eigen::Index k = 0; k < K; ++k)
        if ((anchors_true.row(pi(k)).array().cast<Index>() == anchors[static_cast<std::size_t>(k)]).any())
            ++result.anchor_hits;
    return result;
}

}  // namespace jsmf::eval
