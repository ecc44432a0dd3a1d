// SPDX-License-Identifier: MIT
// AP on the distributed C equals a one-process dense AP written plainly here, at any rank
// count and block size; its output is rank-K PSD, nonnegative and sums to 1; resume works.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/dist/ops.hpp"
#include "jsmf/rectify/projection.hpp"
#include "jsmf/synth/synth.hpp"
#include "test_support.hpp"

namespace jsmf::rectify {
namespace {

// Alg. 1 of practical-jsmf with a full dense eigendecomposition: the oracle.
Eigen::MatrixXd dense_ap(Eigen::MatrixXd C, int K, int iterations) {
    const double N = static_cast<double>(C.rows());
    for (int t = 0; t < iterations; ++t) {
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> full(C);
        const Eigen::MatrixXd U = full.eigenvectors().rightCols(K);           // K largest algebraic
        const Eigen::VectorXd lambda = full.eigenvalues().tail(K).cwiseMax(0.0);
        C = U * lambda.asDiagonal() * U.transpose();
        C.array() += (1.0 - C.sum()) / (N * N);
        C = C.cwiseMax(0.0);
    }
    return C / C.sum();
}

// C of a synthetic corpus with K planted topics (so λ_K and λ_{K+1} are well apart).
struct Fixture {
    int N = 90, K = 4;
    corpus::Shard all;
    Fixture() {
        synth::SynthOptions o;
        o.num_docs = 800;
        o.num_words = N;
        o.num_topics = K;
        o.mean_doc_length = 30;
        o.seed = 21;
        all = synth::generate(o).docs;
    }
    cooc::CoocResult build(const std::shared_ptr<const dist::Grid>& grid, int block) const {
        return test::build_cooc(grid, all, N, block);
    }
};

ProjectionOptions options_for(int K, int iterations) {
    ProjectionOptions options;
    options.num_topics = K;
    options.max_iterations = iterations;
    options.eig.tolerance = 1e-12;  // so that the truncated solver matches the dense one
    return options;
}

TEST(Ap, FiveIterationsMatchDenseApForEveryLayout) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        for (const int block : {3, 16}) {
            auto built = f.build(dist::Grid::create(world, pr, pc), block);
            const Eigen::MatrixXd expected = dense_ap(dist::gather_all(built.C), f.K, 5);
            const ProjectionResult result = alternating_projection(built.C, options_for(f.K, 5));
            const Eigen::MatrixXd C = dist::gather_all(built.C);
            EXPECT_LE((C - expected).cwiseAbs().maxCoeff(), 1e-9 * expected.cwiseAbs().maxCoeff())
                << pr << "x" << pc << " block " << block;
            EXPECT_EQ(result.state.iterations_done, 5);
            EXPECT_EQ(result.state.trace.size(), 5u);
        }
    }
}

TEST(Ap, DirectEigensolverGivesTheSameAp) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    auto built = f.build(dist::Grid::most_square(world), 4);
    const Eigen::MatrixXd expected = dense_ap(dist::gather_all(built.C), f.K, 3);
    ProjectionOptions options = options_for(f.K, 3);
    options.eig.method = dist::EigMethod::direct;
    alternating_projection(built.C, options);
    const Eigen::MatrixXd C = dist::gather_all(built.C);
    EXPECT_LE((C - expected).cwiseAbs().maxCoeff(), 1e-9 * expected.cwiseAbs().maxCoeff());
}

TEST(Ap, OutputIsRankKPsdNonnegativeAndSumsToOne) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    auto built = f.build(dist::Grid::most_square(world), 8);
    ProjectionOptions options;
    options.num_topics = f.K;
    options.max_iterations = 60;
    const ProjectionResult result = alternating_projection(built.C, options);
    EXPECT_NEAR(dist::sum(built.C), 1.0, 1e-12);
    EXPECT_GE(dist::min_entry(built.C), 0.0);
    const Eigen::MatrixXd C = dist::gather_all(built.C);
    EXPECT_LE((C - C.transpose()).cwiseAbs().maxCoeff(), 1e-12 * C.cwiseAbs().maxCoeff());
    // "All but a tiny fraction" (here: 1%) of C's norm lies in its rank-K PSD part.
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> full(C);
    const Eigen::MatrixXd U = full.eigenvectors().rightCols(f.K);
    const Eigen::MatrixXd psd = U * full.eigenvalues().tail(f.K).cwiseMax(0.0).asDiagonal() * U.transpose();
    EXPECT_LE((C - psd).norm(), 0.01 * C.norm());
    // The trace: AP settles (the last change is far below the first) and the NN step
    // clips less and less.
    const auto& trace = result.state.trace;
    ASSERT_EQ(trace.size(), 60u);
    EXPECT_LT(trace.back().change, 0.01 * trace.front().change);
    EXPECT_LE(trace.back().clipped_mass, trace.front().clipped_mass);
    for (const auto& it : trace) {
        EXPECT_GE(it.clipped_mass, 0.0);
        EXPECT_GT(it.eig_products, 0);
        EXPECT_NEAR(it.sum, 1.0 + it.clipped_mass, 1e-9);  // NOR makes Σ = 1, NN adds the clipped mass
    }
}

TEST(Ap, ToleranceStopsEarly) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    auto built = f.build(dist::Grid::most_square(world), 8);
    ProjectionOptions options;
    options.num_topics = f.K;
    options.max_iterations = 150;
    options.tolerance = 1e-4;
    const ProjectionResult result = alternating_projection(built.C, options);
    EXPECT_TRUE(result.converged);
    EXPECT_LT(result.state.iterations_done, 150);
    EXPECT_LE(result.state.trace.back().change, 1e-4);
}

TEST(Ap, ResumedRunEqualsUninterruptedRun) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    const auto grid = dist::Grid::most_square(world);
    auto straight = f.build(grid, 8);
    alternating_projection(straight.C, options_for(f.K, 6));
    // Interrupted after 3 iterations: keep C (un-normalized, as a checkpoint does) and the state.
    auto first = f.build(grid, 8);
    Eigen::MatrixXd saved_C;
    ProjectionState saved;
    alternating_projection(first.C, options_for(f.K, 6), [&](const ProjectionState& state, const dist::DistMatrix& C) {
        if (state.iterations_done == 3) {
            saved_C = dist::gather_all(C);
            saved = state;
        }
    });
    ASSERT_EQ(saved.iterations_done, 3);
    auto resumed = f.build(grid, 8);
    for (Index jl = 0; jl < resumed.C.local_cols(); ++jl)
        for (Index il = 0; il < resumed.C.local_rows(); ++il)
            resumed.C.local()(il, jl) = saved_C(resumed.C.global_row(il), resumed.C.global_col(jl));
    const ProjectionResult result = alternating_projection(resumed.C, options_for(f.K, 6), {}, &saved);
    EXPECT_EQ(result.state.iterations_done, 6);
    EXPECT_EQ(result.state.trace.size(), 6u);
    // Same inputs, same ranks, same operations: the same bits.
    EXPECT_EQ(dist::gather_all(resumed.C), dist::gather_all(straight.C));
}

TEST(Ap, BadTopicCountFailsOnEveryRank) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    auto built = f.build(dist::Grid::most_square(world), 8);
    test::expect_stage_failed(world, [&] { alternating_projection(built.C, options_for(f.N, 1)); }, {"2 <= K < N"});
    test::expect_stage_failed(world, [&] { alternating_projection(built.C, options_for(1, 1)); }, {"2 <= K < N"});
}

}  // namespace
}  // namespace jsmf::rectify
