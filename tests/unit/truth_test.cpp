// SPDX-License-Identifier: MIT
// A learned model against a planted one: a permuted copy, then a perturbed one.
#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <vector>

#include "jsmf/core/error.hpp"
#include "jsmf/eval/truth.hpp"

namespace jsmf::eval {
namespace {

// Planted N = 4, K = 3, anchors 0, 2, 3 (and a second anchor, word 1, for topic 0).
// A* has distinct entries so that P A* Pᵀ's convention matters.
struct Planted {
    Eigen::MatrixXd B{4, 3}, A{3, 3};
    Eigen::MatrixXi anchors{3, 2};
    Planted() {
        B << 0.6, 0.0, 0.0,
             0.4, 0.5, 0.2,
             0.0, 0.5, 0.0,
             0.0, 0.0, 0.8;
        A << 0.10, 0.02, 0.03,
             0.02, 0.30, 0.05,
             0.03, 0.05, 0.40;
        anchors << 0, 1,
                   2, 2,
                   3, 3;
    }
};

// Learned topic k is planted topic π(k), π = (2, 0, 1) (a 3-cycle, so π ≠ π⁻¹):
// B_k = B*_{π(k)}, A_kl = A*_{π(k)π(l)}, s_k = the planted anchor of π(k).
struct Learned {
    Eigen::MatrixXd B{4, 3}, A{3, 3};
    std::vector<Index> anchors;
    explicit Learned(const Planted& t) {
        const int pi[3] = {2, 0, 1};
        for (int k = 0; k < 3; ++k) {
            B.col(k) = t.B.col(pi[k]);
            for (int l = 0; l < 3; ++l) A(k, l) = t.A(pi[k], pi[l]);
        }
        anchors = {3, 0, 2};
    }
};

TEST(CompareToTruth, APermutedCopyHasNoErrorAndEveryAnchor) {
    const Planted t;
    const Learned m(t);
    const TruthComparison r = compare_to_truth(m.B, m.A, m.anchors, t.B, t.A, t.anchors);
    EXPECT_EQ(r.permutation, (std::vector<int>{2, 0, 1}));
    EXPECT_DOUBLE_EQ(r.topic_l1.lpNorm<Eigen::Infinity>(), 0.0);
    EXPECT_DOUBLE_EQ(r.b_l1, 0.0);
    EXPECT_DOUBLE_EQ(r.a_l1, 0.0);
    EXPECT_DOUBLE_EQ(r.a_frobenius, 0.0);
    EXPECT_EQ(r.anchor_hits, 3);
}

TEST(CompareToTruth, APerturbedCopyHasTheHandComputedErrors) {
    const Planted t;
    Learned m(t);
    // Learned topic 0 (planted 2, (0, 0.2, 0, 0.8)) becomes (0.05, 0.15, 0, 0.8):
    // L1 to planted 2 = 0.05 + 0.05 = 0.1; to planted 0: 0.55 + 0.25 + 0 + 0.8 = 1.6; to
    // planted 1: 0.05 + 0.35 + 0.5 + 0.8 = 1.7, so the matching is unchanged.
    m.B.col(0) << 0.05, 0.15, 0.0, 0.8;
    // A: +0.01 at (0,1) and (1,0), −0.02 at (2,2): L1 = 0.04, F = √(1e-4 + 1e-4 + 4e-4) = √6e-4.
    m.A(0, 1) += 0.01;
    m.A(1, 0) += 0.01;
    m.A(2, 2) -= 0.02;
    // Learned topic 1 (planted 0, anchors {0, 1}) picks word 1: still a hit; learned topic 2
    // (planted 1, anchor 2) picks word 3: a miss. Hits: 2.
    m.anchors = {3, 1, 3};
    const TruthComparison r = compare_to_truth(m.B, m.A, m.anchors, t.B, t.A, t.anchors);
    EXPECT_EQ(r.permutation, (std::vector<int>{2, 0, 1}));
    EXPECT_NEAR(r.topic_l1(0), 0.1, 1e-12);
    EXPECT_NEAR(r.topic_l1(1), 0.0, 1e-12);
    EXPECT_NEAR(r.topic_l1(2), 0.0, 1e-12);
    EXPECT_NEAR(r.b_l1, 0.1 / 3, 1e-12);
    EXPECT_NEAR(r.a_l1, 0.04, 1e-12);
    EXPECT_NEAR(r.a_frobenius, std::sqrt(6e-4), 1e-12);
    EXPECT_EQ(r.anchor_hits, 2);
}

TEST(CompareToTruth, ShapeMismatchIsAnInputError) {
    const Planted t;
    const Learned m(t);
    EXPECT_THROW(compare_to_truth(m.B.leftCols(2), m.A, m.anchors, t.B, t.A, t.anchors), InputError);
    EXPECT_THROW(compare_to_truth(m.B, m.A, {3, 0}, t.B, t.A, t.anchors), InputError);
    EXPECT_THROW(compare_to_truth(m.B, m.A, m.anchors, t.B, t.A.topLeftCorner(2, 2), t.anchors), InputError);
}

}  // namespace
}  // namespace jsmf::eval
