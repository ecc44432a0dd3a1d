// SPDX-License-Identifier: MIT
// The pieces of the fast AP that need no MPI: Anderson acceleration on a factor (its
// speed-up, its rotation alignment and its safeguard) and the stopping rules' verdicts.
#include <gtest/gtest.h>

#include <Eigen/QR>

#include <cmath>
#include <random>

#include "jsmf/rectify/anderson.hpp"
#include "jsmf/rectify/stopping.hpp"

namespace jsmf::rectify {
namespace {

Eigen::MatrixXd random_matrix(Index rows, Index cols, unsigned seed) {
    std::mt19937 engine(seed);
    std::normal_distribution<double> normal(0, 1);
    Eigen::MatrixXd M(rows, cols);
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) M(i, j) = normal(engine);
    return M;
}

Eigen::MatrixXd random_rotation(Index K, unsigned seed) {
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(random_matrix(K, K, seed));
    return qr.householderQ();
}

// A slow contraction modulo rotations, x ↦ x* + T(align(x, x*) − x*) (spectral radius
// 0.99), whose outputs come back in an arbitrary rotation, as eigenvectors do.
struct SlowMap {
    Eigen::MatrixXd fixed;
    Eigen::VectorXd rates;
    unsigned calls = 0;
    Eigen::MatrixXd operator()(const Eigen::MatrixXd& x) {
        Eigen::MatrixXd next = fixed + (rates.asDiagonal() * (align_factor(x, fixed) - fixed));
        return next * random_rotation(x.cols(), 100 + calls++);
    }
};

int iterations_to(double tolerance, SlowMap map, int depth, Eigen::MatrixXd x, int limit) {
    FactorAnderson anderson({depth, 1e-12, 1.0});
    const double scale = map.fixed.norm();
    for (int t = 1; t <= limit; ++t) {
        const Eigen::MatrixXd output = map(x);
        x = depth > 0 ? anderson.next(output) : align_factor(output, x);
        // Distance up to rotation: ‖x xᵀ − x* x*ᵀ‖.
        if ((x * x.transpose() - map.fixed * map.fixed.transpose()).norm() <= tolerance * scale * scale) return t;
    }
    return limit + 1;
}

TEST(Anderson, AcceleratesASlowContractionSeenThroughRandomRotations) {
    const Index N = 60, K = 3;
    SlowMap map{random_matrix(N, K, 1), Eigen::VectorXd::LinSpaced(N, 0.5, 0.99), 0};
    const Eigen::MatrixXd start = map.fixed + 0.1 * random_matrix(N, K, 2);
    const int plain = iterations_to(1e-6, map, 0, start, 5000);
    const int accelerated = iterations_to(1e-6, map, 5, start, 5000);
    EXPECT_GT(plain, 500) << "the map must be slow for the comparison to mean anything";
    EXPECT_LT(accelerated, plain / 10) << "plain " << plain << ", Anderson " << accelerated;
}

TEST(Anderson, AlignmentUndoesARotation) {
    const Eigen::MatrixXd G = random_matrix(20, 4, 3);
    const Eigen::MatrixXd rotated = G * random_rotation(4, 4);
    EXPECT_LE((align_factor(rotated, G) - G).norm(), 1e-12 * G.norm());
}

TEST(Anderson, SafeguardRejectsAWorseStepAndFallsBackToThePlainOne) {
    // A map that answers every point far from its input after the history has two entries:
    // the accelerated point's residual is larger than the last accepted one's.
    const Index N = 10, K = 2;
    const Eigen::MatrixXd target = random_matrix(N, K, 5);
    FactorAnderson anderson({5, 1e-12, 1.0});
    Eigen::MatrixXd x = anderson.next(target + random_matrix(N, K, 6));  // first output: taken as is
    EXPECT_EQ(anderson.last_step(), AndersonStep::plain);
    x = anderson.next(0.5 * (x + target));                               // residual 0.5‖x − t‖: accepted
    x = anderson.next(0.5 * (x + target));                               // accepted, proposes a point
    ASSERT_EQ(anderson.last_step(), AndersonStep::accelerated);
    const Eigen::MatrixXd fallback_expected = anderson.matrices()[1];     // the plain step of the last accepted point
    const Eigen::MatrixXd next = anderson.next(x + 100.0 * random_matrix(N, K, 7));  // a terrible answer
    EXPECT_EQ(anderson.last_step(), AndersonStep::rejected);
    EXPECT_EQ(next, fallback_expected);
    // The history starts afresh: one plain step, then proposals again.
    const Eigen::MatrixXd y = anderson.next(0.5 * (next + target));
    EXPECT_EQ(anderson.last_step(), AndersonStep::plain);
    anderson.next(0.5 * (y + target));
    EXPECT_EQ(anderson.last_step(), AndersonStep::accelerated);
}

TEST(Anderson, StateRoundTripsThroughItsCheckpointForm) {
    FactorAnderson a({3, 1e-12, 1.0});
    const Eigen::MatrixXd target = random_matrix(8, 2, 9);
    Eigen::MatrixXd x = a.next(random_matrix(8, 2, 10));
    for (int t = 0; t < 4; ++t) x = a.next(0.7 * x + 0.3 * target);
    FactorAnderson b({3, 1e-12, 1.0});
    b.restore(a.matrices(), a.scalars());
    const Eigen::MatrixXd input = 0.7 * x + 0.3 * target;
    EXPECT_EQ(a.next(input), b.next(input));
    EXPECT_EQ(a.last_step(), b.last_step());
    EXPECT_THROW(b.restore({}, {}), std::exception);
}

TopicCheck check(int iteration, int changed, double median, double max, double specificity, double dissimilarity) {
    TopicCheck c;
    c.iteration = iteration;
    c.anchors_changed = changed;
    c.b_change_median = median;
    c.b_change_max = max;
    c.specificity = specificity;
    c.dissimilarity = dissimilarity;
    return c;
}

TEST(Stopping, FixedPointNeedsNoTopicToMoveAcrossTheWholeWindow) {
    StopSettings s;
    s.rule = StopRule::fixed_point;
    s.fixed_point_window = 4;  // 3 moves
    std::vector<TopicCheck> checks{check(10, -1, NAN, NAN, 1.5, 7), check(20, 0, 1e-4, 2e-4, 1.5, 7),
                                   check(30, 0, 1e-4, 3e-4, 1.5, 7)};
    EXPECT_EQ(stop_verdict(checks, s), StopReason::none) << "three checks are not a window of four";
    checks.push_back(check(40, 0, 2e-4, 6e-4, 1.5, 7));
    EXPECT_EQ(stop_verdict(checks, s), StopReason::none) << "each move is below 1e-3, their sum 1.1e-3 is not";
    checks.push_back(check(50, 0, 1e-4, 1e-4, 1.5, 7));
    EXPECT_EQ(stop_verdict(checks, s), StopReason::fixed_point) << "3e-4 + 6e-4 + 1e-4";
    checks.push_back(check(60, 1, 1e-5, 1e-5, 1.5, 7));
    EXPECT_EQ(stop_verdict(checks, s), StopReason::none) << "an anchor changed";
}

TEST(Stopping, QualityNeedsSettledAnchorsAndMeasures) {
    StopSettings s;  // quality: window 3, measures within 0.5%, B median within 0.02
    std::vector<TopicCheck> checks{check(10, -1, NAN, NAN, 1.50, 7.0), check(20, 0, 0.01, 0.05, 1.52, 7.0),
                                   check(30, 0, 0.01, 0.05, 1.53, 7.0)};
    EXPECT_EQ(stop_verdict(checks, s), StopReason::none) << "specificity moved 2% over the window";
    checks.push_back(check(40, 0, 0.01, 0.05, 1.531, 7.0));
    EXPECT_EQ(stop_verdict(checks, s), StopReason::none) << "specificity moved 0.7% over the window";
    checks.push_back(check(50, 0, 0.01, 0.05, 1.532, 7.0));
    EXPECT_EQ(stop_verdict(checks, s), StopReason::quality);
    checks.push_back(check(60, 0, 0.03, 0.05, 1.532, 7.0));
    EXPECT_EQ(stop_verdict(checks, s), StopReason::none) << "B moved 0.03 (median)";
    s.rule = StopRule::iterations;
    EXPECT_EQ(stop_verdict(checks, s), StopReason::none);
}

TEST(Stopping, ComparisonMatchesTopicsWhateverTheirOrder) {
    Eigen::MatrixXd B(4, 2);
    B << 0.5, 0.0, 0.5, 0.1, 0.0, 0.4, 0.0, 0.5;
    Eigen::MatrixXd swapped = B.rowwise().reverse();
    swapped(0, 1) -= 0.01;  // topic 0, now column 1, moved by 0.02 in L1 after renormalizing
    swapped(1, 1) += 0.01;
    TopicCheck previous, next;
    previous.anchors = {0, 3};
    next.anchors = {3, 0};
    compare_checks(previous, B, next, swapped);
    EXPECT_EQ(next.anchors_changed, 0);
    EXPECT_NEAR(next.b_change_max, 0.02, 1e-12);
    EXPECT_NEAR(next.b_change_median, 0.01, 1e-12);
    next.anchors = {3, 1};
    compare_checks(previous, B, next, swapped);
    EXPECT_EQ(next.anchors_changed, 1);
}

}  // namespace
}  // namespace jsmf::rectify
