// SPDX-License-Identifier: MIT
// K×K pieces of the model: RECOVER-ALPHA and the Hungarian topic matching.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "jsmf/solvers/matching.hpp"
#include "jsmf/recover/recover.hpp"

namespace jsmf {
namespace {

/// E[w wᵀ] of w ~ Dir(α): (ααᵀ + diag(α)) / (α₀(α₀ + 1)).
Eigen::MatrixXd dirichlet_second_moment(const Eigen::VectorXd& alpha) {
    const double a0 = alpha.sum();
    Eigen::MatrixXd M = alpha * alpha.transpose();
    M.diagonal() += alpha;
    return M / (a0 * (a0 + 1));
}

/// The paper's objective Σ_k ((α₀a_k + 1)/(α₀+1) − Ā_kk)² + Σ_{k≠l} (α₀a_l/(α₀+1) − Ā_kl)²,
/// written out as in the text (not through the t-parameterization under test).
double paper_objective(const Eigen::MatrixXd& A, double alpha0) {
    const Eigen::VectorXd a = A.rowwise().sum() / A.sum();
    const Eigen::MatrixXd A_bar = A.rowwise().sum().cwiseInverse().asDiagonal() * A;
    double f = 0;
    for (Eigen::Index k = 0; k < A.rows(); ++k)
        for (Eigen::Index l = 0; l < A.cols(); ++l) {
            const double model = (alpha0 * a(l) + (k == l ? 1.0 : 0.0)) / (alpha0 + 1);
            f += (model - A_bar(k, l)) * (model - A_bar(k, l));
        }
    return f;
}

TEST(RecoverAlpha, ExactDirichletMomentsGiveAlphaBack) {
    const Eigen::VectorXd alpha = (Eigen::VectorXd(5) << 0.1, 0.3, 0.5, 0.2, 0.05).finished();
    const recover::AlphaResult r = recover::recover_alpha(dirichlet_second_moment(alpha));
    EXPECT_FALSE(r.at_bound);
    EXPECT_NEAR(r.alpha0, alpha.sum(), 1e-12);
    EXPECT_LT((r.alpha - alpha).norm(), 1e-12);
    EXPECT_LT(r.residual, 1e-12);
    // A scaled A (the recovered one need not sum to 1) gives the same α.
    const recover::AlphaResult scaled = recover::recover_alpha(3.0 * dirichlet_second_moment(alpha));
    EXPECT_LT((scaled.alpha - alpha).norm(), 1e-12);
}

TEST(RecoverAlpha, NoisyAMinimizesThePapersObjective) {
    const Eigen::VectorXd alpha = (Eigen::VectorXd(6) << 0.4, 0.2, 0.7, 0.1, 0.3, 0.3).finished();
    std::mt19937_64 engine(7);
    std::uniform_real_distribution<double> noise(0.8, 1.2);
    Eigen::MatrixXd A = dirichlet_second_moment(alpha);
    for (Eigen::Index k = 0; k < A.rows(); ++k)
        for (Eigen::Index l = 0; l <= k; ++l) A(k, l) = A(l, k) = A(k, l) * noise(engine);
    const recover::AlphaResult r = recover::recover_alpha(A);
    ASSERT_FALSE(r.at_bound);
    const double best = paper_objective(A, r.alpha0);
    for (const double factor : {0.9, 0.99, 0.999, 1.001, 1.01, 1.1, 2.0, 0.5})
        EXPECT_LT(best, paper_objective(A, r.alpha0 * factor)) << "alpha0 * " << factor;
    EXPECT_NEAR(best, r.residual * r.residual, 1e-14);
}

TEST(RecoverAlpha, AntiDirichletAIsClampedAndSaysSo) {
    // Diagonal smaller than the off-diagonal: no α₀ > 0 fits; the fit wants t <= 0.
    Eigen::MatrixXd A = Eigen::MatrixXd::Constant(4, 4, 0.08);
    A.diagonal().setConstant(0.02);
    const recover::AlphaResult r = recover::recover_alpha(A);
    EXPECT_TRUE(r.at_bound);
    EXPECT_TRUE(std::isfinite(r.alpha0));
    EXPECT_THROW(recover::recover_alpha(Eigen::MatrixXd::Zero(3, 3)), InputError);
}

double assignment_cost(const Eigen::MatrixXd& cost, const std::vector<int>& column) {
    double total = 0;
    for (std::size_t k = 0; k < column.size(); ++k) total += cost(static_cast<Eigen::Index>(k), column[k]);
    return total;
}

TEST(Matching, HungarianEqualsBruteForce) {
    std::mt19937_64 engine(11);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int n = 1; n <= 7; ++n) {
        for (int trial = 0; trial < 20; ++trial) {
            Eigen::MatrixXd cost(n, n);
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j) cost(i, j) = trial % 2 ? uniform(engine) : std::floor(4 * uniform(engine));
            std::vector<int> permutation(static_cast<std::size_t>(n));
            std::iota(permutation.begin(), permutation.end(), 0);
            double best = std::numeric_limits<double>::infinity();
            do best = std::min(best, assignment_cost(cost, permutation));
            while (std::next_permutation(permutation.begin(), permutation.end()));
            const std::vector<int> found = solvers::optimal_assignment(cost);
            std::vector<int> sorted = found;
            std::sort(sorted.begin(), sorted.end());
            for (int k = 0; k < n; ++k) ASSERT_EQ(sorted[static_cast<std::size_t>(k)], k) << "not a permutation";
            EXPECT_NEAR(assignment_cost(cost, found), best, 1e-12) << "n = " << n << ", trial " << trial;
        }
    }
}

TEST(Matching, PermutedTopicsAreMatchedBack) {
    std::mt19937_64 engine(5);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Eigen::MatrixXd B(50, 6);
    for (Eigen::Index i = 0; i < B.size(); ++i) B.data()[i] = uniform(engine);
    const std::vector<int> shuffle = {3, 0, 5, 1, 4, 2};
    Eigen::MatrixXd learned(50, 6);
    for (int k = 0; k < 6; ++k) learned.col(k) = B.col(shuffle[static_cast<std::size_t>(k)]);
    EXPECT_EQ(solvers::optimal_assignment(solvers::l1_column_distances(learned, B)), shuffle);
    EXPECT_THROW(solvers::optimal_assignment(Eigen::MatrixXd::Zero(2, 3)), InputError);
}

}  // namespace
}  // namespace jsmf
