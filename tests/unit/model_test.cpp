// SPDX-License-Identifier: MIT
// model/'s helpers against values computed by hand: the Pearson correlations of the
// topic proportions implied by A, p(z), the order by prevalence, a hierarchy's subtopics.
#include <gtest/gtest.h>

#include <cmath>

#include "jsmf/model/matching.hpp"
#include "jsmf/model/model.hpp"

#include <random>
#include <string>
#include <vector>

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


// Topic ids that stay put (show --compare): a refit whose topics come in another order and
// whose vocabulary is another order of the same words is matched back exactly; one more
// planted topic is exactly one new topic, one fewer exactly one gone; a pair farther apart
// than the threshold is a new topic and a gone one; the distance is total variation.
Eigen::MatrixXd random_topics(Index N, Index K, unsigned seed) {
    std::mt19937 engine(seed);
    std::gamma_distribution<double> gamma(0.3, 1.0);
    Eigen::MatrixXd B(N, K);
    for (Index k = 0; k < K; ++k) {
        for (Index i = 0; i < N; ++i) B(i, k) = gamma(engine) + 1e-12;
        B.col(k) /= B.col(k).sum();
    }
    return B;
}

TEST(TopicMatching, ARefitsPermutedTopicsAndWordsKeepTheirIds) {
    const Index N = 40, K = 6;
    const Eigen::MatrixXd B = random_topics(N, K, 3);
    std::vector<std::string> vocab;
    for (Index i = 0; i < N; ++i) vocab.push_back("w" + std::to_string(i));
    // The new model: words in reverse order, topics in the order 3 5 0 1 4 2.
    const std::vector<int> order{3, 5, 0, 1, 4, 2};
    Eigen::MatrixXd B_new(N, K);
    std::vector<std::string> vocab_new(vocab.rbegin(), vocab.rend());
    for (Index k = 0; k < K; ++k) B_new.col(k) = B.col(order[static_cast<std::size_t>(k)]).reverse();
    const TopicMatching m = match_topics(B, vocab, B_new, vocab_new);
    EXPECT_EQ(m.old_of_new, order);
    for (const double d : m.distance) EXPECT_LT(d, 1e-15);
    EXPECT_TRUE(m.gone.empty());

    // One more topic, on words of its own: exactly one new topic.
    Eigen::MatrixXd grown = Eigen::MatrixXd::Zero(N + 5, K + 1);
    grown.topLeftCorner(N, K) = B_new.colwise().reverse();  // back in the old word order
    grown.bottomRightCorner(5, 1).setConstant(0.2);
    std::vector<std::string> vocab_grown = vocab;
    for (int i = 0; i < 5; ++i) vocab_grown.push_back("fresh" + std::to_string(i));
    const TopicMatching g = match_topics(B, vocab, grown, vocab_grown);
    EXPECT_EQ(std::vector<int>(g.old_of_new.begin(), g.old_of_new.end() - 1), order);
    EXPECT_EQ(g.old_of_new.back(), -1);
    EXPECT_NEAR(g.distance.back(), 1.0, 1e-12);  // disjoint supports: all the mass moved
    EXPECT_TRUE(g.gone.empty());

    // One fewer: exactly one gone, the others kept.
    const TopicMatching s = match_topics(B, vocab, B.leftCols(K - 1), vocab);
    EXPECT_EQ(s.gone, std::vector<int>{static_cast<int>(K - 1)});
    for (Index k = 0; k < K - 1; ++k) EXPECT_EQ(s.old_of_new[static_cast<std::size_t>(k)], k);
}

TEST(TopicMatching, DistanceIsTotalVariationAndTheThresholdSplitsPairs) {
    const std::vector<std::string> vocab{"a", "b", "c"};
    Eigen::MatrixXd B_old(3, 2), B_new(3, 2);
    B_old << 0.7, 0.0,  //
        0.3, 0.2,       //
        0.0, 0.8;
    B_new << 0.6, 0.0,  //
        0.4, 0.9,       //
        0.0, 0.1;
    const TopicMatching m = match_topics(B_old, vocab, B_new, vocab);
    EXPECT_EQ(m.old_of_new, (std::vector<int>{0, -1}));  // ½(0.1 + 0.1) = 0.1 kept; ½(0.7 + 0.7) = 0.7 > 0.5
    EXPECT_NEAR(m.distance[0], 0.1, 1e-15);
    EXPECT_NEAR(m.distance[1], 0.7, 1e-15);  // its nearest old topic
    EXPECT_EQ(m.gone, std::vector<int>{1});
    const TopicMatching loose = match_topics(B_old, vocab, B_new, vocab, 0.8);
    EXPECT_EQ(loose.old_of_new, (std::vector<int>{0, 1}));
    EXPECT_TRUE(loose.gone.empty());
    // A pair past the threshold never takes an id from one within it: uncapped, a -> y and
    // b -> x (0.45 + 0.3 < 0.1 + 0.95) would cost topic a its match x at 0.1.
    Eigen::MatrixXd d(2, 2);
    d << 0.1, 0.45,  // a: to x, to y
        0.3, 0.95;   // b: to x, to y
    const TopicMatching capped = assign_topics(d, 0.5);
    EXPECT_EQ(capped.old_of_new, (std::vector<int>{0, -1}));
    EXPECT_EQ(capped.gone, std::vector<int>{1});
}


// The ids kept: a topic matched to old id l becomes topic l; the new ones fill the rest in
// order. Renumbering moves B's and B-breve's topics, A's rows and columns, the anchors, the
// finder's r, alpha and the per-topic metrics together.
TEST(TopicMatching, KeepingOrderAndPermutationMoveEveryTopicPart) {
    TopicMatching matching;
    matching.old_of_new = {1, -1, 0, 7};  // topic 3 matched an old id past K: a free id
    EXPECT_EQ(keeping_order(matching), (std::vector<int>{2, 0, 1, 3}));

    Model m;
    m.num_topics = 3;
    m.B = Eigen::MatrixXd::Random(5, 3);
    m.B_breve = m.B.transpose();
    m.A = Eigen::MatrixXd::Random(3, 3);
    m.anchors = {10, 11, 12};
    m.diag_r = Eigen::Vector3d(1, 2, 3);
    m.has_alpha = true;
    m.alpha = Eigen::Vector3d(0.1, 0.2, 0.3);
    m.metrics.add("specificity", "topic", Eigen::Vector3d(5, 6, 7));
    m.anchorfree.E = Eigen::MatrixXd::Random(3, 3);
    m.anchorfree.M = Eigen::MatrixXd::Random(3, 3);
    const Model before = m;
    const std::vector<int> order{2, 0, 1};
    permute_topics(m, order);
    for (int k = 0; k < 3; ++k) {
        const int was = order[static_cast<std::size_t>(k)];
        EXPECT_EQ(m.B.col(k), before.B.col(was));
        EXPECT_EQ(m.B_breve.row(k), before.B_breve.row(was));
        EXPECT_EQ(m.anchors[static_cast<std::size_t>(k)], before.anchors[static_cast<std::size_t>(was)]);
        EXPECT_EQ(m.diag_r(k), before.diag_r(was));
        EXPECT_EQ(m.alpha(k), before.alpha(was));
        EXPECT_EQ(m.metrics.find("specificity")->values(k), 5.0 + was);
        EXPECT_EQ(m.anchorfree.M.col(k), before.anchorfree.M.col(was));  // C* = B̃M: its columns are topics
        for (int l = 0; l < 3; ++l) {
            EXPECT_EQ(m.A(k, l), before.A(was, order[static_cast<std::size_t>(l)]));
            EXPECT_EQ(m.anchorfree.E(k, l), before.anchorfree.E(was, order[static_cast<std::size_t>(l)]));
        }
    }
    EXPECT_EQ(m.metrics.find("specificity")->mean, before.metrics.find("specificity")->mean);
}

}  // namespace
}  // namespace jsmf::model
