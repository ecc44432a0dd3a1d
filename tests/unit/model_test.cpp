// SPDX-License-Identifier: MIT
// model/'s helpers against values computed by hand: the Pearson correlations of the
// topic proportions implied by A, p(z), the order by prevalence, a hierarchy's subtopics.
#include <gtest/gtest.h>

#include <cmath>

#include "jsmf/model/model.hpp"

namespace jsmf::model {
namespace {

// A 3-topic joint distribution: p = A1 = (0.5, 0.3, 0.2).
Eigen::MatrixXd joint() {
    Eigen::MatrixXd A(3, 3);
    A << 0.30, 0.15, 0.05,  //
        0.15, 0.10, 0.05,   //
        0.05, 0.05, 0.10;
    return A;
}

TEST(Model, TopicCorrelationsAreThePearsonCorrelationsOfTheProportions) {
    const std::vector<TopicPair> pairs = topic_correlations(joint());
    ASSERT_EQ(pairs.size(), 3u);
    // By hand: var = A_kk − p_k² = (0.05, 0.01, 0.06); cov_01 = 0.15 − 0.15 = 0,
    // cov_02 = 0.05 − 0.10 = −0.05, cov_12 = 0.05 − 0.06 = −0.01.
    const double r01 = 0.0, r02 = -0.05 / std::sqrt(0.05 * 0.06), r12 = -0.01 / std::sqrt(0.01 * 0.06);
    EXPECT_EQ(pairs[0].k, 0);
    EXPECT_EQ(pairs[0].l, 1);
    EXPECT_NEAR(pairs[0].correlation, r01, 1e-12);
    EXPECT_EQ(pairs[1].k, 1);  // −0.408 before −0.913: highest first
    EXPECT_EQ(pairs[1].l, 2);
    EXPECT_NEAR(pairs[1].correlation, r12, 1e-12);
    EXPECT_EQ(pairs[2].k, 0);
    EXPECT_EQ(pairs[2].l, 2);
    EXPECT_NEAR(pairs[2].correlation, r02, 1e-12);
}

TEST(Model, APairWithoutVarianceHasNoCorrelation) {
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(2, 2);
    A(0, 0) = 1.0;  // topic 1 never occurs: its variance is 0
    EXPECT_TRUE(topic_correlations(A).empty());
}

TEST(Model, PrevalenceIsARowSumsNormalizedAndClipped) {
    const Eigen::VectorXd p = topic_prevalence(2.0 * joint());  // any scale: normalized
    EXPECT_NEAR(p(0), 0.5, 1e-15);
    EXPECT_NEAR(p(1), 0.3, 1e-15);
    EXPECT_NEAR(p(2), 0.2, 1e-15);
    Eigen::MatrixXd E(2, 2);
    E << 0.6, 0.2, -0.5, 0.1;  // row sums 0.8 and −0.4: the second clipped at 0
    const Eigen::VectorXd q = topic_prevalence(E);
    EXPECT_DOUBLE_EQ(q(0), 1.0);
    EXPECT_DOUBLE_EQ(q(1), 0.0);
    EXPECT_EQ(largest_first(Eigen::Vector3d(0.2, 0.5, 0.2)), (std::vector<int>{1, 0, 2}));  // ties keep their order
}

TEST(Model, SubtopicsGoToTheirMostProbableSupertopic) {
    HierarchyLevel level;
    level.topics = 2;
    level.A = (Eigen::MatrixXd(2, 2) << 0.5, 0.1, 0.1, 0.3).finished();  // p = (0.6, 0.4)
    level.B = (Eigen::MatrixXd(3, 2) << 0.7, 0.1,  // topic 0 below: 0.42 vs 0.04 → super 0
               0.2, 0.3,                          // topic 1: 0.12 vs 0.12 → the first maximum, super 0
               0.1, 0.6)                          // topic 2: 0.06 vs 0.24 → super 1
                  .finished();
    const auto first = subtopics(level, 0);
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[0].second, 0);
    EXPECT_DOUBLE_EQ(first[0].first, 0.7);
    EXPECT_EQ(first[1].second, 1);
    const auto second = subtopics(level, 1);
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].second, 2);
    EXPECT_DOUBLE_EQ(second[0].first, 0.6);
}

}  // namespace
}  // namespace jsmf::model
