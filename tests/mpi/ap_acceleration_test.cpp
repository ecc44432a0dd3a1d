// SPDX-License-Identifier: MIT
// The fast AP (inexact eigensolves tied to the AP change, the fused product, Anderson
// acceleration on the rank-K factor) reaches the fixed point of long plain AP on planted
// corpora, at every rank count; its safeguard is exercised; resume is exact for every
// variant; the exact mode still equals a dense transcription of the authors' AP.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cstdio>
#include <string>

#include "jsmf/anchors/pivoted_qr.hpp"
#include "jsmf/cooc/cooc.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/solvers/matching.hpp"
#include "jsmf/recover/recover.hpp"
#include "jsmf/rectify/projection.hpp"
#include "jsmf/synth/synth.hpp"
#include "test_support.hpp"

namespace jsmf::rectify {
namespace {

// A planted corpus whose AP crawls: short documents (noisy C) and correlated topics.
struct Planted {
    int N = 120, K = 5, block = 16;
    corpus::Shard docs;
    explicit Planted(std::uint64_t seed = 33, int words = 120, int num_docs = 1500, double doc_length = 12,
                     int block_size = 16)
        : N(words), block(block_size) {
        synth::SynthOptions o;
        o.num_docs = num_docs;
        o.num_words = N;
        o.num_topics = K;
        o.mean_doc_length = doc_length;
        o.seed = seed;
        docs = synth::generate(o).docs;
    }
    cooc::CoocResult build(const std::shared_ptr<const distmat::Grid>& grid) const {
        return test::build_cooc(grid, docs, N, block);
    }
};

ProjectionOptions plain(int K, int iterations, double tolerance) {
    ProjectionOptions o;
    o.num_topics = K;
    o.max_iterations = iterations;
    o.tolerance = tolerance;
    o.eig.tolerance = 1e-12;
    return o;
}

// The fast AP's arithmetic: inexact solves, over-relaxation, and (snap) Anderson once the
// change is below 1e-6, as `jsmf fit --converge` runs it.
ProjectionOptions fast(int K, int iterations, double tolerance, bool snap) {
    ProjectionOptions o = plain(K, iterations, tolerance);
    o.eig_tolerance_factor = 0.1;
    o.relaxation = 1.9;
    if (snap) {
        o.anderson = AndersonOptions{5, 1e-10, 1.0};
        o.anderson_below = 1e-6;
    }
    return o;
}

struct Topics {
    std::vector<Index> anchors;
    Eigen::MatrixXd B;
};

Topics topics_of(const distmat::DistMatrix& C, int K) {
    const Eigen::VectorXd p = distmat::row_sums(C);
    Topics t;
    t.anchors = anchors::find_anchors(C, p, K).anchors;
    t.B = recover::recover_topics(C, p, t.anchors, {}).B;
    return t;
}

double max_topic_l1(const Eigen::MatrixXd& B, const Eigen::MatrixXd& reference) {
    const Eigen::MatrixXd cost = solvers::l1_column_distances(B, reference);
    const std::vector<int> match = solvers::optimal_assignment(cost);
    double worst = 0;
    for (std::size_t k = 0; k < match.size(); ++k) worst = std::max(worst, cost(static_cast<Index>(k), match[k]));
    return worst;
}

int count_steps(const ProjectionState& state, int kind) {
    return static_cast<int>(std::count_if(state.trace.begin(), state.trace.end(),
                                          [&](const ProjectionIteration& it) { return it.accelerated == kind; }));
}

// Over-relaxation with inexact solves follows plain AP's path: 1,000 of its iterations
// land where 2,000 plain ones do (measured: 3.6e-4 L1 per topic at most on this corpus,
// where plain AP itself still moves 5.7e-3 between 2,000 and 4,000 iterations).
TEST(FastAp, OverRelaxedInexactApFollowsPlainApAtEveryGrid) {
    const auto world = mpi::Comm::world();
    const Planted planted;
    auto reference = planted.build(distmat::Grid::most_square(world));
    rectify_by_projection(reference.C, plain(planted.K, 2000, 0));
    const Topics expected = topics_of(reference.C, planted.K);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        auto built = planted.build(distmat::Grid::create(world, pr, pc));
        const ProjectionResult result = rectify_by_projection(built.C, fast(planted.K, 1000, 0, false));
        const std::string where = std::to_string(pr) + "x" + std::to_string(pc);
        EXPECT_EQ(result.state.iterations_done, 1001) << where << ": 1,000 and the closing plain step";
        EXPECT_EQ(result.state.trace.back().accelerated, 0) << where;
        EXPECT_EQ(count_steps(result.state, 2), 995) << where;
        EXPECT_GE(distmat::min_entry(built.C), 0.0) << where << ": the closing plain step restores C >= 0";
        const Topics found = topics_of(built.C, planted.K);
        EXPECT_EQ(found.anchors, expected.anchors) << where;
        EXPECT_LE(max_topic_l1(found.B, expected.B), 2e-3) << where;
    }
}

// Single precision (--precision single): the fast AP with the iterate in float32 lands
// on the double run's anchors, with B within 1e-3 L1 per topic (measured 1.2e-4 to
// 3.1e-4 at 1-4 ranks), C a joint distribution; every solve met the 1e-7 floor.
TEST(FastAp, SinglePrecisionKeepsAnchorsAndTopics) {
    const auto world = mpi::Comm::world();
    const Planted planted;
    auto reference = planted.build(distmat::Grid::most_square(world));
    rectify_by_projection(reference.C, fast(planted.K, 400, 0, false));
    const Topics expected = topics_of(reference.C, planted.K);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        auto built = planted.build(distmat::Grid::create(world, pr, pc));
        ProjectionOptions options = fast(planted.K, 400, 0, false);
        options.single_precision = true;
        const ProjectionResult result = rectify_by_projection(built.C, options);
        const std::string where = std::to_string(pr) + "x" + std::to_string(pc);
        for (const auto& it : result.state.trace) ASSERT_TRUE(it.eig_converged) << where;
        const Eigen::MatrixXd C = distmat::gather_all(built.C);
        EXPECT_GE(C.minCoeff(), 0.0) << where;
        EXPECT_NEAR(C.sum(), 1.0, 1e-12) << where;
        const Topics found = topics_of(built.C, planted.K);
        EXPECT_EQ(found.anchors, expected.anchors) << where;
        const double distance = max_topic_l1(found.B, expected.B);
        if (world.is_root()) std::printf("single vs double at %s: B within %.2e L1 per topic\n", where.c_str(), distance);
        EXPECT_LE(distance, 1e-3) << where;
        EXPECT_GT(distance, 0.0) << where << ": the run was not in single precision";
    }
}

// Threads (OMP_NUM_THREADS) split the passes of AP (double and single precision), DR and
// DP and the block products into slabs of rows: the iterate is that of one thread, to
// rounding (the trace's sums are added in another order). 1,200 words: three slabs of
// rows at 1-3 ranks, two at 4 (2 × 2 grid).
TEST(FastAp, ThreadsGiveTheSameIterate) {
    const auto world = mpi::Comm::world();
    const Planted planted(8, 1200, 3000, 40, 32);
    const auto grid = distmat::Grid::most_square(world);
    const int before = distmat::threads();
    distmat::set_threads(3);
    ASSERT_GT(distmat::row_slabs(distmat::local_extent(planted.N, planted.block, grid->my_row(), grid->rows())), 1)
        << "no threads: built without OpenMP?";
    for (const int variant : {0, 1, 2, 3}) {  // AP, AP in single precision, DR, DP
        ProjectionOptions options = variant < 2 ? fast(planted.K, 8, 0, false) : plain(planted.K, 8, 0);
        options.single_precision = variant == 1;
        options.method = variant == 2 ? Rectifier::dr : variant == 3 ? Rectifier::dp : Rectifier::ap;
        Eigen::MatrixXd one_thread;
        for (const int threads : {1, 3}) {
            distmat::set_threads(threads);
            auto built = planted.build(grid);
            rectify_by_projection(built.C, options);
            const Eigen::MatrixXd C = distmat::gather_all(built.C);
            if (threads == 1) {
                one_thread = C;
                continue;
            }
            const double difference = (C - one_thread).cwiseAbs().maxCoeff() / one_thread.cwiseAbs().maxCoeff();
            EXPECT_LE(difference, variant == 1 ? 1e-5 : 1e-10) << "variant " << variant;
        }
    }
    distmat::set_threads(before);
}

// Anderson on the factor (opt-in) reaches a fixed point of AP (change 1e-9, C in all
// three sets to 1e-6) where plain AP creeps (its change is still 1.5e-8 after 4,000
// iterations here) -- but another point of the continuum of fixed points than plain AP's
// path leads to, which is why it is not the default (jsmf rectify --help).
TEST(FastAp, AndersonReachesAFixedPoint) {
    const auto world = mpi::Comm::world();
    const Planted planted;
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        auto built = planted.build(distmat::Grid::create(world, pr, pc));
        ProjectionOptions options = fast(planted.K, 3000, 1e-9, true);
        options.anderson_below = 0;
        options.relaxation = 1;
        const ProjectionResult result = rectify_by_projection(built.C, options);
        const std::string where = std::to_string(pr) + "x" + std::to_string(pc);
        ASSERT_TRUE(result.converged) << where << " change " << result.state.trace.back().change;
        EXPECT_LT(result.state.iterations_done, 1500) << where;
        EXPECT_GT(count_steps(result.state, 1), 0) << where;
        const Eigen::MatrixXd C = distmat::gather_all(built.C);
        EXPECT_NEAR(C.sum(), 1.0, 1e-12) << where;
        EXPECT_GE(C.minCoeff(), 0.0) << where;
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> full(C);
        const Eigen::MatrixXd U = full.eigenvectors().rightCols(planted.K);
        const Eigen::MatrixXd P = U * full.eigenvalues().tail(planted.K).cwiseMax(0.0).asDiagonal() * U.transpose();
        EXPECT_LE((C - P).norm(), 1e-6 * C.norm()) << where << ": not rank-K PSD";
    }
}

// A strict safeguard (accept only a halving of the residual) rejects accelerated points:
// each rejection is followed by the plain step from the last accepted point (a plain
// step in the trace), and the iterate stays a valid C. (It also shows why the default
// safeguard is 1: at 0.5 this run stalls near a change of 1.7e-6, cycling
// propose–reject–plain.)
TEST(FastAp, TheSafeguardRejectsAndFallsBackToThePlainStep) {
    const auto world = mpi::Comm::world();
    const Planted planted;
    auto built = planted.build(distmat::Grid::most_square(world));
    ProjectionOptions options = fast(planted.K, 300, 0, true);
    options.anderson_below = 0;
    options.relaxation = 1;
    options.anderson.safeguard = 0.5;
    const ProjectionResult result = rectify_by_projection(built.C, options);
    const auto& trace = result.state.trace;
    EXPECT_GT(count_steps(result.state, -1), 0) << "the safeguard never fired";
    for (std::size_t t = 0; t + 1 < trace.size(); ++t)
        if (trace[t].accelerated == -1) {
            EXPECT_EQ(trace[t + 1].accelerated, 0) << "after the rejection at " << t;
        }
    const Eigen::MatrixXd C = distmat::gather_all(built.C);
    EXPECT_TRUE(C.allFinite());
    EXPECT_GE(C.minCoeff(), 0.0);
    EXPECT_NEAR(C.sum(), 1.0, 1e-12);
}

// Interrupted after 7 iterations (C and a deep copy of the state kept, as a checkpoint
// does) and resumed: the same bits as an uninterrupted run, for the inexact-only and the
// accelerated variants.
TEST(FastAp, ResumedRunsEqualUninterruptedOnes) {
    const auto world = mpi::Comm::world();
    const Planted planted;
    const auto grid = distmat::Grid::most_square(world);
    // inexact solves; + over-relaxation; + Anderson from the start; over-relaxed in single precision
    for (const int variant : {0, 1, 2, 3}) {
        ProjectionOptions options = fast(planted.K, 15, 0, variant == 2);
        options.single_precision = variant == 3;
        if (variant == 0) options.relaxation = 1;
        if (variant == 2) options.anderson_below = 0;
        auto straight = planted.build(grid);
        rectify_by_projection(straight.C, options);
        auto first = planted.build(grid);
        Eigen::MatrixXd saved_C;
        ProjectionState saved;
        rectify_by_projection(first.C, options, [&](const ProjectionState& state, const IterateView& C) {
            if (state.iterations_done == 7) {
                saved_C = distmat::gather_all(C.matrix());
                saved = state;
            }
        });
        ASSERT_EQ(saved.iterations_done, 7);
        auto resumed = planted.build(grid);
        test::fill(resumed.C, saved_C);
        const ProjectionResult result = rectify_by_projection(resumed.C, options, {}, &saved);
        EXPECT_EQ(result.state.iterations_done, variant == 1 || variant == 3 ? 16 : 15)
            << "the closing plain step after relaxed ones";
        EXPECT_EQ(distmat::gather_all(resumed.C), distmat::gather_all(straight.C)) << "variant " << variant;
    }
}

// The papers' mode (exact solves, no acceleration) over 40 iterations equals the authors'
// AP with full dense eigendecompositions, though each solve now starts from the product
// the previous pass formed and filters with the least degree that does.
TEST(FastAp, ExactModeStillEqualsDenseAp) {
    const auto world = mpi::Comm::world();
    const Planted planted;
    auto built = planted.build(distmat::Grid::most_square(world));
    Eigen::MatrixXd C = distmat::gather_all(built.C);
    const double N = static_cast<double>(C.rows());
    for (int t = 0; t < 40; ++t) {
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> full(C);
        const Eigen::MatrixXd U = full.eigenvectors().rightCols(planted.K);
        C = U * full.eigenvalues().tail(planted.K).cwiseMax(0.0).asDiagonal() * U.transpose();
        C.array() += (1.0 - C.sum()) / (N * N);
        C = C.cwiseMax(0.0);
    }
    C /= C.sum();
    rectify_by_projection(built.C, plain(planted.K, 40, 0));
    EXPECT_LE((distmat::gather_all(built.C) - C).cwiseAbs().maxCoeff(), 1e-9 * C.cwiseAbs().maxCoeff());
}

}  // namespace
}  // namespace jsmf::rectify
