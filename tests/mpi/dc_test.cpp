// SPDX-License-Identifier: MIT
// DC restores the diagonal of a planted low-rank matrix whose diagonal was corrupted.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <cmath>
#include <limits>
#include <random>

#include "jsmf/distmat/ops.hpp"
#include "jsmf/rectify/dc.hpp"
#include "test_support.hpp"

namespace jsmf::rectify {
namespace {

// C = B A Bᵀ with B (N×K) column-stochastic and positive, A (K×K) positive definite with
// positive entries summing to 1: a joint-stochastic rank-K matrix, as the model says.
Eigen::MatrixXd planted(int N, int K, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> uniform(0.1, 1.0);
    Eigen::MatrixXd B(N, K);
    for (int k = 0; k < K; ++k) {
        for (int i = 0; i < N; ++i) B(i, k) = uniform(engine);
        B.col(k) /= B.col(k).sum();
    }
    Eigen::MatrixXd R(K, K);
    for (int k = 0; k < K; ++k)
        for (int l = 0; l < K; ++l) R(k, l) = uniform(engine);
    Eigen::MatrixXd A = R * R.transpose() + K * Eigen::MatrixXd::Identity(K, K);
    A /= A.sum();
    return B * A * B.transpose();
}

void fill(distmat::DistMatrix& C, const Eigen::MatrixXd& M) {
    for (Index jl = 0; jl < C.local_cols(); ++jl)
        for (Index il = 0; il < C.local_rows(); ++il) C.local()(il, jl) = M(C.global_row(il), C.global_col(jl));
}

TEST(Dc, RestoresTheDiagonalOfAPlantedLowRankMatrix) {
    const auto world = mpi::Comm::world();
    const int N = 60, K = 4;
    const Eigen::MatrixXd truth = planted(N, K, 17);
    // The eigensolver stops at residual tol·σ₁² of G Gᵀ, so the K-th singular vector (and
    // with it each completion) is accurate to about tol·(σ₁/σ_K)². Bound the error by 10x
    // that, with the conditioning taken from the planted matrix itself (here ~5e3).
    const double tol = 1e-12;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> spectrum(truth);
    const double kappa = std::pow(spectrum.eigenvalues()(N - 1) / spectrum.eigenvalues()(N - K), 2);
    const double bound = 10 * tol * kappa;
    ASSERT_LT(bound, 1e-6) << "the planted matrix is too ill-conditioned for a meaningful test";
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        for (const double corruption : {0.0, 3.0}) {  // diagonal zeroed, or inflated 3x
            Eigen::MatrixXd corrupted = truth;
            corrupted.diagonal() *= corruption;
            distmat::DistMatrix C(distmat::Grid::create(world, pr, pc), N, N, 7);
            fill(C, corrupted);
            DcOptions options;
            options.num_topics = K;
            options.permutations = 5;
            options.eig.tolerance = tol;
            const DcResult result = diagonal_completion(C, options);
            const std::string what = std::to_string(pr) + "x" + std::to_string(pc) + " corruption " + std::to_string(corruption);
            // Exact rank K: every completion is exact up to the eigensolver's accuracy.
            EXPECT_LE((result.new_diagonal - truth.diagonal()).cwiseAbs().maxCoeff(), bound * truth.diagonal().maxCoeff())
                << what;
            EXPECT_EQ(result.clipped, 0) << what;
            // The restored C sums to 1 already, so normalizing leaves it equal to the truth.
            EXPECT_LE((distmat::gather_all(C) - truth).cwiseAbs().maxCoeff(), bound * truth.maxCoeff()) << what;
            // And the corruption really was large: far beyond the bound.
            EXPECT_GT((result.old_diagonal - truth.diagonal()).cwiseAbs().maxCoeff(), 1e3 * bound * truth.diagonal().maxCoeff());
            EXPECT_NEAR(distmat::sum(C), 1.0, 1e-12) << what;
        }
    }
}

// Q (N×K) with orthonormal columns drawn from a seeded Gaussian.
Eigen::MatrixXd random_orthonormal(int N, int K, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    Eigen::MatrixXd X(N, K);
    for (int k = 0; k < K; ++k)
        for (int i = 0; i < N; ++i) X(i, k) = normal(engine);
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(X);
    return qr.householderQ() * Eigen::MatrixXd::Identity(N, K);
}

TEST(Dc, RecoversTheDiagonalWhenTheKthSingularValueIs1e4BelowTheFirst) {
    const auto world = mpi::Comm::world();
    const int N = 80, K = 4;
    const double kappa = 1e4;
    // C = Q S Qᵀ, S = diag(1, κ^(−1/3), κ^(−2/3), 1/κ): rank K, σ_K = σ_1/κ, and a positive
    // diagonal Σ_k s_k Q_ik². Each block G = C[H, O] inherits about the same spread.
    const Eigen::MatrixXd Q = random_orthonormal(N, K, 29);
    Eigen::VectorXd s(K);
    for (int k = 0; k < K; ++k) s(k) = std::pow(kappa, -double(k) / (K - 1));
    const Eigen::MatrixXd truth = Q * s.asDiagonal() * Q.transpose();
    // The standard of an exact SVD of G (the authors' svd): span(U) to about ε·σ_1/σ_K
    // (Wedin), and a completion moves by about sin∠(U)·‖F‖/(1 − ‖u_j‖²) ≤ sin∠·σ_1/0.5
    // here (‖u_j‖² is near K/|H|). A factor 100 covers the constants and the √N of rounding.
    const double eps = std::numeric_limits<double>::epsilon();
    const double bound = 100 * eps * kappa * s(0);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        Eigen::MatrixXd corrupted = truth;
        corrupted.diagonal().setZero();
        distmat::DistMatrix C(distmat::Grid::create(world, pr, pc), N, N, 7);
        fill(C, corrupted);
        DcOptions options;
        options.num_topics = K;
        options.permutations = 3;
        const DcResult result = diagonal_completion(C, options);
        const double error = (result.new_diagonal - truth.diagonal()).cwiseAbs().maxCoeff();
        EXPECT_LE(error, bound) << pr << "x" << pc << ": max |d − diag C| = " << error << ", bound " << bound;
        EXPECT_EQ(result.clipped, 0);
    }
}

TEST(Dc, CountsTheWordsItCannotComplete) {
    const auto world = mpi::Comm::world();
    const int N = 40, K = 4, j = 11;
    const double L = 1e5;
    // C = Σ_k s_k x_k x_kᵀ with x_1 = L e_j + z (‖z‖ = 1) and x_2..x_K random unit vectors.
    // In whichever half word j lands, the span of that half's singular vectors is the span
    // of the restricted x_k, which holds L e_j + z[half]: e_j is within ‖z‖/L of it, so
    // 1 − ‖u_j‖² <= 1/L² = 1e-10 for every halving, far below the √ε ≈ 1.5e-8 threshold
    // (U is accurate to about ε·σ_1/σ_K ≈ 1e-10 here). Every other word has ‖u_i‖² near
    // K/|H|. So exactly one fallback per permutation: word j.
    Eigen::MatrixXd X = random_orthonormal(N, K, 31);
    X.col(0) *= 1.0 / X.col(0).norm();
    X(j, 0) += L;
    const Eigen::Vector4d s(1.0, 0.5, 0.3, 0.2);
    const Eigen::MatrixXd M = X * s.asDiagonal() * X.transpose();
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        distmat::DistMatrix C(distmat::Grid::create(world, pr, pc), N, N, 5);
        fill(C, M);
        DcOptions options;
        options.num_topics = K;
        options.permutations = 3;
        const DcResult result = diagonal_completion(C, options);
        EXPECT_EQ(result.fallbacks, options.permutations) << pr << "x" << pc;
        // All T values of word j were its old diagonal, so the median is exactly that.
        EXPECT_EQ(result.new_diagonal(j), result.old_diagonal(j)) << pr << "x" << pc;
    }
}

TEST(Dc, TooManyTopicsFailOnEveryRank) {
    const auto world = mpi::Comm::world();
    distmat::DistMatrix C(distmat::Grid::most_square(world), 10, 10, 4);
    DcOptions options;
    options.num_topics = 5;  // halves of 5 cannot hold 5 singular vectors plus a completion
    test::expect_stage_failed(world, [&] { diagonal_completion(C, options); }, {"2K < N"});
}

}  // namespace
}  // namespace jsmf::rectify
