// SPDX-License-Identifier: MIT
// AP, DR and DP on the distributed C equal one-process dense transcriptions written plainly
// here (the authors' rectifyC_AP.m / rectifyC_DR.m, and Dykstra's method), at any rank count
// and block size; their outputs are rank-K PSD, nonnegative and sum to 1; resume is exact;
// ranks whose local arithmetic differs still agree on every decision.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>

#include <cmath>
#include <random>
#include <string>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/mpi/agree.hpp"
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

// The three projections, as the authors write them (nearestPSD, nearestJS, nearestNN).
Eigen::MatrixXd dense_psd(const Eigen::MatrixXd& C, int K) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> full(C);
    const Eigen::MatrixXd U = full.eigenvectors().rightCols(K);
    return U * full.eigenvalues().tail(K).cwiseMax(0.0).asDiagonal() * U.transpose();
}
Eigen::MatrixXd dense_js(const Eigen::MatrixXd& C) {
    const double N = static_cast<double>(C.rows());
    return (C.array() + (1.0 - C.sum()) / (N * N)).matrix();
}
Eigen::MatrixXd dense_nn(const Eigen::MatrixXd& C) { return C.cwiseMax(0.0); }

// rectifyC_DR.m: the two-set operators (C + R_B(R_A(C)))/2 with R = 2·proj − I, cycled.
Eigen::MatrixXd dense_dr(Eigen::MatrixXd C, int K, int iterations) {
    auto psd = [&](const Eigen::MatrixXd& X) { return dense_psd(X, K); };
    auto two_set = [](const Eigen::MatrixXd& X, auto&& proj_a, auto&& proj_b) {
        const Eigen::MatrixXd R_a = 2 * proj_a(X) - X;
        const Eigen::MatrixXd R_b = 2 * proj_b(R_a) - R_a;
        return Eigen::MatrixXd((X + R_b) / 2);
    };
    for (int t = 0; t < iterations; ++t) {
        const Eigen::MatrixXd C1 = two_set(C, psd, dense_js);
        const Eigen::MatrixXd C2 = two_set(C1, dense_js, dense_nn);
        C = two_set(C2, dense_nn, psd);
    }
    return C / C.sum();
}

// Dykstra's cyclic projection onto PSD-rank-K, joint-stochastic, non-negative.
Eigen::MatrixXd dense_dp(Eigen::MatrixXd C, int K, int iterations) {
    const Index N = C.rows();
    Eigen::MatrixXd I_psd = Eigen::MatrixXd::Zero(N, N), I_js = I_psd, I_nn = I_psd;
    for (int t = 0; t < iterations; ++t) {
        Eigen::MatrixXd Y = dense_psd(C + I_psd, K);
        I_psd = C + I_psd - Y;
        C = Y;
        Y = dense_js(C + I_js);
        I_js = C + I_js - Y;
        C = Y;
        Y = dense_nn(C + I_nn);
        I_nn = C + I_nn - Y;
        C = Y;
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
    cooc::CoocResult build(const std::shared_ptr<const distmat::Grid>& grid, int block) const {
        return test::build_cooc(grid, all, N, block);
    }
};

ProjectionOptions options_for(int K, int iterations, Rectifier method = Rectifier::ap) {
    ProjectionOptions options;
    options.method = method;
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
            auto built = f.build(distmat::Grid::create(world, pr, pc), block);
            const Eigen::MatrixXd expected = dense_ap(distmat::gather_all(built.C), f.K, 5);
            const ProjectionResult result = alternating_projection(built.C, options_for(f.K, 5));
            const Eigen::MatrixXd C = distmat::gather_all(built.C);
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
    auto built = f.build(distmat::Grid::most_square(world), 4);
    const Eigen::MatrixXd expected = dense_ap(distmat::gather_all(built.C), f.K, 3);
    ProjectionOptions options = options_for(f.K, 3);
    options.eig.method = distmat::EigMethod::direct;
    alternating_projection(built.C, options);
    const Eigen::MatrixXd C = distmat::gather_all(built.C);
    EXPECT_LE((C - expected).cwiseAbs().maxCoeff(), 1e-9 * expected.cwiseAbs().maxCoeff());
}

TEST(Ap, OutputIsRankKPsdNonnegativeAndSumsToOne) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    auto built = f.build(distmat::Grid::most_square(world), 8);
    ProjectionOptions options;
    options.num_topics = f.K;
    options.max_iterations = 60;
    const ProjectionResult result = alternating_projection(built.C, options);
    EXPECT_NEAR(distmat::sum(built.C), 1.0, 1e-12);
    EXPECT_GE(distmat::min_entry(built.C), 0.0);
    const Eigen::MatrixXd C = distmat::gather_all(built.C);
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
    auto built = f.build(distmat::Grid::most_square(world), 8);
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
    const auto grid = distmat::Grid::most_square(world);
    auto straight = f.build(grid, 8);
    alternating_projection(straight.C, options_for(f.K, 6));
    // Interrupted after 3 iterations: keep C (un-normalized, as a checkpoint does) and the state.
    auto first = f.build(grid, 8);
    Eigen::MatrixXd saved_C;
    ProjectionState saved;
    alternating_projection(first.C, options_for(f.K, 6), [&](const ProjectionState& state, const IterateView& C) {
        if (state.iterations_done == 3) {
            saved_C = distmat::gather_all(C.matrix());
            saved = state;
        }
    });
    ASSERT_EQ(saved.iterations_done, 3);
    auto resumed = f.build(grid, 8);
    test::fill(resumed.C, saved_C);
    const ProjectionResult result = alternating_projection(resumed.C, options_for(f.K, 6), {}, &saved);
    EXPECT_EQ(result.state.iterations_done, 6);
    EXPECT_EQ(result.state.trace.size(), 6u);
    // Same inputs, same ranks, same operations: the same bits.
    EXPECT_EQ(distmat::gather_all(resumed.C), distmat::gather_all(straight.C));
}


// Five iterations of `method` on the distributed C equal the dense transcription at every
// grid shape and two block sizes, with every eigensolve converged.
template <class Dense>
void expect_equals_dense_transcription(Rectifier method, Dense&& dense) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        for (const int block : {3, 16}) {
            auto built = f.build(distmat::Grid::create(world, pr, pc), block);
            const Eigen::MatrixXd expected = dense(distmat::gather_all(built.C), f.K, 5);
            const ProjectionResult result = rectify_by_projection(built.C, options_for(f.K, 5, method));
            const Eigen::MatrixXd C = distmat::gather_all(built.C);
            EXPECT_LE((C - expected).cwiseAbs().maxCoeff(), 1e-9 * expected.cwiseAbs().maxCoeff())
                << pr << "x" << pc << " block " << block;
            ASSERT_EQ(result.state.trace.size(), 5u);
            for (const auto& it : result.state.trace) EXPECT_TRUE(it.eig_converged);
        }
    }
}

TEST(Dr, FiveIterationsMatchTheAuthorsDrForEveryLayout) { expect_equals_dense_transcription(Rectifier::dr, dense_dr); }

TEST(Dp, FiveIterationsMatchDykstraForEveryLayout) { expect_equals_dense_transcription(Rectifier::dp, dense_dp); }

// A planted C₀ = B A Bᵀ (rank K, PSD, non-negative, sums to 1) plus symmetric noise that
// breaks all three (with M Mᵀ positive, but B sparse): the fixed point each method reaches must lie in all three sets.
Eigen::MatrixXd planted_noisy(int N, int K, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> uniform(0, 1);
    Eigen::MatrixXd B(N, K), M(K, K);
    // Each word in one or two topics: C₀ has zero blocks, so the noise makes entries
    // negative and the non-negativity constraint binds, as it does on real corpora.
    for (int j = 0; j < K; ++j)
        for (int i = 0; i < N; ++i) B(i, j) = (i % K == j || uniform(engine) < 0.2) ? uniform(engine) : 0.0;
    for (int j = 0; j < K; ++j)
        for (int i = 0; i < K; ++i) M(i, j) = uniform(engine) + (i == j ? 2.0 : 0.0);
    Eigen::MatrixXd C = B * (M * M.transpose()) * B.transpose();
    C /= C.sum();
    std::normal_distribution<double> normal(0, 0.05 * C.mean());
    Eigen::MatrixXd E(N, N);
    for (int j = 0; j < N; ++j)
        for (int i = 0; i < N; ++i) E(i, j) = normal(engine);
    return C + (E + E.transpose()) / 2;
}

void expect_in_all_three_sets(const Eigen::MatrixXd& C, int K, double tolerance, const std::string& what) {
    EXPECT_NEAR(C.sum(), 1.0, 1e-12) << what;
    EXPECT_GE(C.minCoeff(), -tolerance * C.maxCoeff()) << what;
    EXPECT_LE((C - C.transpose()).cwiseAbs().maxCoeff(), 1e-12 * C.cwiseAbs().maxCoeff()) << what;
    EXPECT_LE((C - dense_psd(C, K)).norm(), tolerance * C.norm()) << what;
}

// Measured (N = 40, K = 3): AP reaches change <= 1e-12 in 112 iterations, DR in 110, DP in
// 1,275; each lands in all three sets to 1e-8.
TEST(Projections, FixedPointsAreJointStochasticNonnegativeAndRankKPsd) {
    const auto world = mpi::Comm::world();
    const int N = 40, K = 3;
    const Eigen::MatrixXd noisy = planted_noisy(N, K, 5);
    ASSERT_GT((noisy - dense_psd(noisy, K)).norm(), 1e-3 * noisy.norm()) << "the noise must break the rank";
    for (const Rectifier method : {Rectifier::ap, Rectifier::dr, Rectifier::dp}) {
        distmat::DistMatrix C(distmat::Grid::most_square(world), N, N, 8);
        test::fill(C, noisy);
        ProjectionOptions options = options_for(K, 2000, method);
        options.tolerance = 1e-12;
        const ProjectionResult result = rectify_by_projection(C, options);
        const std::string what = std::string("method ") + (method == Rectifier::ap ? "ap" : method == Rectifier::dr ? "dr" : "dp");
        EXPECT_TRUE(result.converged) << what << " change " << result.state.trace.back().change;
        expect_in_all_three_sets(distmat::gather_all(C), K, 1e-8, what);
    }
}

TEST(Projections, ResumedDrAndDpEqualUninterruptedRuns) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    const auto grid = distmat::Grid::most_square(world);
    for (const Rectifier method : {Rectifier::dr, Rectifier::dp}) {
        auto straight = f.build(grid, 8);
        rectify_by_projection(straight.C, options_for(f.K, 6, method));
        auto first = f.build(grid, 8);
        Eigen::MatrixXd saved_C;
        ProjectionState saved;
        rectify_by_projection(first.C, options_for(f.K, 6, method),
                              [&](const ProjectionState& state, const IterateView& C) {
                                  if (state.iterations_done == 3) {
                                      saved_C = distmat::gather_all(C.matrix());
                                      saved = state;  // a deep copy, Dykstra's increments too
                                  }
                              });
        ASSERT_EQ(saved.iterations_done, 3);
        auto resumed = f.build(grid, 8);
        test::fill(resumed.C, saved_C);
        const ProjectionResult result = rectify_by_projection(resumed.C, options_for(f.K, 6, method), {}, &saved);
        EXPECT_EQ(result.state.iterations_done, 6);
        EXPECT_EQ(distmat::gather_all(resumed.C), distmat::gather_all(straight.C));
    }
}

// Ranks whose local arithmetic differs must still take every decision together. Rank 1's
// copy of the replicated inputs differs: its tolerance would stop AP after one iteration,
// and its warm start is off by one ulp (and, more bluntly, by a different block).
TEST(Agreement, RanksWithDifferentLocalArithmeticStillAgree) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    auto built = f.build(distmat::Grid::most_square(world), 8);
    ProjectionOptions options = options_for(f.K, 12);
    if (world.rank() == 1) options.tolerance = 0.5;  // every change is below this: rank 1 alone would stop
    const ProjectionResult result = alternating_projection(built.C, options);
    const int iterations = result.state.iterations_done;
    EXPECT_EQ(mpi::allreduce_min(world, iterations), mpi::allreduce_max(world, iterations));
    EXPECT_EQ(iterations, 12);  // the root's tolerance (0) rules

    distmat::EigOptions eig;
    eig.num_eigenpairs = f.K;
    eig.tolerance = 1e-12;
    const distmat::EigResult exact = distmat::top_eigenpairs(built.C, eig);
    for (const bool blunt : {false, true}) {
        Eigen::MatrixXd warm = exact.block;
        if (world.rank() == 1) {
            if (blunt) warm.setRandom();
            else warm(0, 0) = std::nextafter(warm(0, 0), 2.0);
        }
        const distmat::EigResult top = distmat::top_eigenpairs(built.C, eig, &warm);
        const int rounds = top.iterations, products = top.block_products + top.lanczos_products;
        EXPECT_EQ(mpi::allreduce_min(world, rounds), mpi::allreduce_max(world, rounds)) << "blunt " << blunt;
        EXPECT_EQ(mpi::allreduce_min(world, products), mpi::allreduce_max(world, products)) << "blunt " << blunt;
        EXPECT_EQ(mpi::allreduce_min(world, int{top.converged}), mpi::allreduce_max(world, int{top.converged}));
        // The values and vectors every rank returns are the root's.
        Eigen::VectorXd values = top.values;
        mpi::adopt_root_copy(world, values.data(), static_cast<std::size_t>(values.size()));
        EXPECT_EQ(values, top.values);
        Eigen::MatrixXd vectors = top.vectors;
        mpi::adopt_root_copy(world, vectors.data(), static_cast<std::size_t>(vectors.size()));
        EXPECT_EQ(vectors, top.vectors);
    }
}

// An eigensolve that stops at its round limit is recorded, not hidden: a random start
// block with no filter round cannot reach 1e-9, and the iteration says so in its trace.
TEST(Projections, AnEigensolveAtItsRoundLimitIsRecorded) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    auto built = f.build(distmat::Grid::most_square(world), 8);
    ProjectionOptions options = options_for(f.K, 2);
    options.eig.max_iterations = 0;  // the random start block, Rayleigh–Ritz once, no filter round
    const ProjectionResult result = alternating_projection(built.C, options);
    ASSERT_EQ(result.state.trace.size(), 2u);
    EXPECT_FALSE(result.state.trace[0].eig_converged);
    EXPECT_GT(result.state.trace[0].eig_residual, 1e-9);
}

TEST(Ap, BadTopicCountFailsOnEveryRank) {
    const auto world = mpi::Comm::world();
    const Fixture f;
    auto built = f.build(distmat::Grid::most_square(world), 8);
    test::expect_stage_failed(world, [&] { alternating_projection(built.C, options_for(f.N, 1)); }, {"2 <= K < N"});
    test::expect_stage_failed(world, [&] { alternating_projection(built.C, options_for(1, 1)); }, {"2 <= K < N"});
}

}  // namespace
}  // namespace jsmf::rectify
