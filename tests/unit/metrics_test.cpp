// SPDX-License-Identifier: MIT
// The local metrics on small hand-made models; every expected value is worked out by hand
// in the comment next to it (base-2 logs for KL and entropy, natural log for coherence).
#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "jsmf/core/error.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/eval/metrics.hpp"

namespace jsmf::eval {
namespace {

constexpr double kTol = 1e-12;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
// log2(3), for the KL values between (1/2, 1/2) and (3/4, 1/4).
const double kLog2Of3 = std::log2(3.0);

Eigen::VectorXd vec(std::initializer_list<double> values) {
    Eigen::VectorXd v(static_cast<Eigen::Index>(values.size()));
    Eigen::Index i = 0;
    for (const double x : values) v(i++) = x;
    return v;
}

// ---- summarize -----------------------------------------------------------------------

TEST(Summarize, SampleStandardDeviationUsesNMinusOne) {
    // {1, 3}: mean 2; Σ(x − 2)² = 1 + 1 = 2; / (N − 1 = 1) → std √2 (population: 1).
    const Summary s = summarize(vec({1, 3}));
    EXPECT_DOUBLE_EQ(s.mean, 2.0);
    EXPECT_NEAR(s.std, std::sqrt(2.0), kTol);
    // {2,4,4,4,5,5,7,9}: mean 40/8 = 5; Σ(x − 5)² = 9+1+1+1+0+0+4+16 = 32; std √(32/7)
    // (the population std of this textbook set is exactly 2).
    const Summary t = summarize(vec({2, 4, 4, 4, 5, 5, 7, 9}));
    EXPECT_DOUBLE_EQ(t.mean, 5.0);
    EXPECT_NEAR(t.std, std::sqrt(32.0 / 7.0), kTol);
}

TEST(Summarize, PropagatesNaNAsTheAuthorsMean) {
    // evaluateClusters.m summarizes with mean/std, not nanmean: one NaN makes both NaN.
    const Summary s = summarize(vec({1, kNaN, 3}));
    EXPECT_TRUE(std::isnan(s.mean));
    EXPECT_TRUE(std::isnan(s.std));
}

TEST(Summarize, OneValueHasZeroStdAndNoValueIsNaN) {
    const Summary one = summarize(vec({5}));
    EXPECT_DOUBLE_EQ(one.mean, 5.0);
    EXPECT_DOUBLE_EQ(one.std, 0.0);
    EXPECT_TRUE(std::isnan(summarize(Eigen::VectorXd()).mean));
}

// ---- top words -----------------------------------------------------------------------

TEST(TopWords, DecreasingWithTiesToTheLowerIdAndClippedToN) {
    Eigen::MatrixXd B(5, 2);
    // col 0: 0.3 at ids 1 and 2 (tie), then 0.2 (id 3), 0.1 at ids 0 and 4 (tie).
    // col 1: 0.4 (id 0), then 0.2 at ids 2, 3, 4 (tie), then 0 (id 1).
    B << 0.1, 0.4,
         0.3, 0.0,
         0.3, 0.2,
         0.2, 0.2,
         0.1, 0.2;
    const Eigen::MatrixXi top3 = top_words(B, 3);
    ASSERT_EQ(top3.rows(), 2);
    ASSERT_EQ(top3.cols(), 3);
    EXPECT_EQ(top3(0, 0), 1);
    EXPECT_EQ(top3(0, 1), 2);
    EXPECT_EQ(top3(0, 2), 3);
    EXPECT_EQ(top3(1, 0), 0);
    EXPECT_EQ(top3(1, 1), 2);
    EXPECT_EQ(top3(1, 2), 3);
    // n = 20 > N = 5: every word, in order 1, 2, 3, 0, 4 and 0, 2, 3, 4, 1.
    const Eigen::MatrixXi all = top_words(B, 20);
    ASSERT_EQ(all.cols(), 5);
    const int expected[2][5] = {{1, 2, 3, 0, 4}, {0, 2, 3, 4, 1}};
    for (int k = 0; k < 2; ++k)
        for (int j = 0; j < 5; ++j) EXPECT_EQ(all(k, j), expected[k][j]) << "topic " << k << " rank " << j;
}

// ---- legality, validity, dominancy ---------------------------------------------------

TEST(Legality, IsTheSumOfA) {
    Eigen::MatrixXd A(2, 2);
    A << 0.2, 0.1,
         0.1, 0.5;
    EXPECT_NEAR(legality(A), 0.9, kTol);  // 0.2 + 0.1 + 0.1 + 0.5
}

// A consistent two-topic model on N = 3 words:
//   B = [0.5 0; 0.5 0.5; 0 0.5], p = (0.25, 0.5, 0.25),
//   B̆ (p(z | x)) columns: word 0 (1, 0), word 1 (0.5, 0.5), word 2 (0, 1).
struct ValidityModel {
    Eigen::MatrixXd B{3, 2}, A{2, 2}, B_breve{2, 3};
    Eigen::VectorXd p = vec({0.25, 0.5, 0.25});
    ValidityModel() {
        B << 0.5, 0.0,
             0.5, 0.5,
             0.0, 0.5;
        B_breve << 1.0, 0.5, 0.0,
                   0.0, 0.5, 1.0;
        // Row sums (0.75, 0.25).
        A << 0.5, 0.25,
             0.0, 0.25;
    }
};

// p(z)_0 = mean over words 0, 1 (B_20 = 0 skipped) of B̆_0i p_i / B_i0
//        = mean(1·0.25/0.5, 0.5·0.5/0.5) = mean(0.5, 0.5) = 0.5; likewise p(z)_1 = 0.5.
// a = A's row sums = (0.75, 0.25). With L = log2 3:
//   KL(a ‖ p(z)) = 0.75·log2(0.75/0.5) + 0.25·log2(0.25/0.5) = 0.75(L − 1) − 0.25 = 0.75L − 1
//   KL(p(z) ‖ a) = 0.5·log2(0.5/0.75) + 0.5·log2(0.5/0.25) = 0.5(1 − L) + 0.5 = 1 − 0.5L
//   symmetric = ½(0.75L − 1 + 1 − 0.5L) = L/8 ≈ 0.19812 bits
// (the sum of the two directions would be L/4; natural log would give ln(3)/8).
TEST(Validity, SymmetricKLInBitsBetweenRowSumsOfAAndBayesPz) {
    const ValidityModel m;
    EXPECT_NEAR(validity(m.B, m.A, m.B_breve, m.p), kLog2Of3 / 8, kTol);
}

TEST(Validity, SkipsWordsWhereBIsZeroEvenWithANonZeroNumerator) {
    // B̆_{1,0} = 0.3 and B̆_{0,2} = 0.3 where B_01 = B_20 = 0: those words are skipped
    // (the rule; the authors' nanmean would keep 0.3·p/0 = Inf), so p(z) is still
    // (0.5, 0.5) and the value still L/8. Counting them as 0 in the mean would give
    // p(z) = (1/3, 1/3) instead.
    ValidityModel m;
    m.B_breve(1, 0) = 0.3;
    m.B_breve(0, 2) = 0.3;
    EXPECT_NEAR(validity(m.B, m.A, m.B_breve, m.p), kLog2Of3 / 8, kTol);
}

TEST(Validity, ShapeMismatchIsAnInputError) {
    const ValidityModel m;
    EXPECT_THROW(validity(m.B, m.A, m.B_breve, vec({0.5, 0.5})), InputError);
    EXPECT_THROW(validity(m.B, m.A, m.B_breve.transpose(), m.p), InputError);
}

TEST(Dominancy, DiagonalOverRowSum) {
    Eigen::MatrixXd A(2, 2);
    A << 0.3, 0.1,
         0.2, 0.2;
    const Eigen::VectorXd d = dominancy(A);
    EXPECT_NEAR(d(0), 0.75, kTol);  // 0.3 / (0.3 + 0.1)
    EXPECT_NEAR(d(1), 0.5, kTol);   // 0.2 / (0.2 + 0.2)
}

// ---- entropy, sparsity, specificity --------------------------------------------------

TEST(Entropy, NormalizedByLog2KWithZeroLogZeroAsZero) {
    Eigen::MatrixXd B_breve(2, 3);
    B_breve << 0.5, 1.0, 0.25,
               0.5, 0.0, 0.75;
    const Eigen::VectorXd h = entropy(B_breve);
    EXPECT_NEAR(h(0), 1.0, kTol);  // −2·0.5·log2 0.5 = 1 bit; / log2 2 = 1
    EXPECT_NEAR(h(1), 0.0, kTol);  // −1·log2 1 − 0·log 0 = 0 (not NaN)
    // −0.25·log2 0.25 − 0.75·log2 0.75 = 0.5 + 0.75·log2(4/3) ≈ 0.811278
    EXPECT_NEAR(h(2), 0.5 + 0.75 * std::log2(4.0 / 3.0), kTol);
    EXPECT_FALSE(std::isnan(h(1)));
}

TEST(Entropy, DividesByLog2OfK) {
    Eigen::MatrixXd B_breve(4, 1);
    B_breve << 0.5, 0.5, 0.0, 0.0;
    EXPECT_NEAR(entropy(B_breve)(0), 0.5, kTol);  // 1 bit / log2 4 = 1 / 2
}

TEST(Sparsity, HoyerMeasure) {
    // N = 4, √N = 2. (1,0,0,0): ℓ1/ℓ2 = 1 → (2 − 1)/1 = 1. Uniform 1/4: ℓ1 = 1, ℓ2 = 1/2,
    // ratio 2 → 0. (1/2,1/2,0,0): ℓ2 = 1/√2, ratio √2 → 2 − √2.
    Eigen::MatrixXd B(4, 3);
    B << 1, 0.25, 0.5,
         0, 0.25, 0.5,
         0, 0.25, 0.0,
         0, 0.25, 0.0;
    const Eigen::VectorXd s = sparsity(B);
    EXPECT_NEAR(s(0), 1.0, kTol);
    EXPECT_NEAR(s(1), 0.0, kTol);
    EXPECT_NEAR(s(2), 2.0 - std::sqrt(2.0), kTol);
}

TEST(Specificity, IsOneBitForHalfTheSupportOfAUniformP) {
    // b = (1/2, 1/2, 0, 0), p uniform 1/4: 2·0.5·log2(0.5/0.25) = 1 bit (ln 2 ≈ 0.693 in nats).
    Eigen::MatrixXd B(4, 1);
    B << 0.5, 0.5, 0.0, 0.0;
    EXPECT_NEAR(specificity(B, vec({0.25, 0.25, 0.25, 0.25}))(0), 1.0, kTol);
    // p is renormalized: counts (1, 1, 1, 1) are the same uniform p, so again 1 bit.
    EXPECT_NEAR(specificity(B, vec({1, 1, 1, 1}))(0), 1.0, kTol);
}

TEST(Specificity, EntriesOfPBelowEpsilonAreRaisedToEpsilonAndPRenormalized) {
    // b = (1/2, 1/4, 1/4, 0), p = (1/2, 1/2, 1e-20, 0). ε = 2⁻⁵² (machine epsilon): p's last
    // two entries become ε, p̃ = (1/2, 1/2, ε, ε)/(1 + 2ε).
    //   KL = 0.5·log2(0.5/0.5) + 0.25·log2(0.25/0.5) + 0.25·log2(0.25/ε) + log2(1 + 2ε)
    //      = 0 − 0.25 + 0.25·(−2 + 52) + ~6e-16 = 12.25 bits
    Eigen::MatrixXd B(4, 1);
    B << 0.5, 0.25, 0.25, 0.0;
    EXPECT_NEAR(specificity(B, vec({0.5, 0.5, 1e-20, 0.0}))(0), 12.25, 1e-12);
}

// ---- dissimilarity, SimCount ---------------------------------------------------------

// N = 5, K = 3. Top 2: topic 0 {0, 1}, topic 1 {1, 2}, topic 2 {4, 3}.
// Top 3 (ties to the lower id): topic 0 {0, 1, 2} (0.1 at ids 2 and 3: id 2),
// topic 1 {1, 2, 0} (0.1 at ids 0, 3, 4: id 0), topic 2 {4, 3, 2}.
Eigen::MatrixXd three_topics() {
    Eigen::MatrixXd B(5, 3);
    B << 0.5, 0.1, 0.0,
         0.3, 0.4, 0.0,
         0.1, 0.3, 0.1,
         0.1, 0.1, 0.4,
         0.0, 0.1, 0.5;
    return B;
}

TEST(DissimilarityHard, CountsTopWordsInNoOtherTopicsTopN) {
    const Eigen::MatrixXd B = three_topics();
    // n = 2: word 1 is shared by topics 0 and 1; the others are unique → (1, 1, 2).
    const Eigen::VectorXd d2 = dissimilarity_hard(B, 2);
    EXPECT_DOUBLE_EQ(d2(0), 1.0);
    EXPECT_DOUBLE_EQ(d2(1), 1.0);
    EXPECT_DOUBLE_EQ(d2(2), 2.0);
    // n = 3: topics 0 and 1 share all three words (0, 1, 2), word 2 is also topic 2's;
    // topic 2 keeps 4 and 3 → (0, 0, 2). (Ties to the higher id would give the tops
    // {0,1,3}, {1,2,4}, {4,3,2} and (1, 0, 0).)
    const Eigen::VectorXd d3 = dissimilarity_hard(B, 3);
    EXPECT_DOUBLE_EQ(d3(0), 0.0);
    EXPECT_DOUBLE_EQ(d3(1), 0.0);
    EXPECT_DOUBLE_EQ(d3(2), 2.0);
}

TEST(SimCount, OverlapsWithEveryOtherTopicAndThePaperTotalIsHalfTheirSum) {
    const Eigen::MatrixXd B = three_topics();
    // n = 3: |T0 ∩ T1| = |{0,1,2}| = 3, |T0 ∩ T2| = |{2}| = 1, |T1 ∩ T2| = |{2}| = 1.
    // Per topic: 3 + 1 = 4, 3 + 1 = 4, 1 + 1 = 2; the paper's total over pairs: 5.
    const Eigen::VectorXd s = simcount(B, 3);
    EXPECT_DOUBLE_EQ(s(0), 4.0);
    EXPECT_DOUBLE_EQ(s(1), 4.0);
    EXPECT_DOUBLE_EQ(s(2), 2.0);
    EXPECT_DOUBLE_EQ(s.sum() / 2, 5.0);
    // n = 2: only word 1, in topics 0 and 1 → (1, 1, 0), total 1.
    const Eigen::VectorXd s2 = simcount(B, 2);
    EXPECT_DOUBLE_EQ(s2(0), 1.0);
    EXPECT_DOUBLE_EQ(s2(1), 1.0);
    EXPECT_DOUBLE_EQ(s2(2), 0.0);
}

// The model's "simcount" is the paper's total over unordered topic pairs, against a brute
// force: sort every column, intersect every pair's top 20 as sets.
TEST(SimCount, TheModelsSimcountIsTheTotalOverTopicPairsByBruteForce) {
    std::mt19937_64 engine(11);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const Eigen::Index N = 60, K = 7;
    Eigen::MatrixXd B(N, K);
    for (Eigen::Index k = 0; k < K; ++k) {
        // Every topic's weights from a few shared "popular" words plus noise: overlaps happen.
        for (Eigen::Index i = 0; i < N; ++i) B(i, k) = uniform(engine) * (i < 25 ? 3.0 : 1.0);
        B.col(k) /= B.col(k).sum();
    }
    std::vector<std::set<Eigen::Index>> top(K);
    for (Eigen::Index k = 0; k < K; ++k) {
        std::vector<Eigen::Index> order(N);
        for (Eigen::Index i = 0; i < N; ++i) order[static_cast<std::size_t>(i)] = i;
        std::sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) { return B(a, k) > B(b, k); });
        top[static_cast<std::size_t>(k)].insert(order.begin(), order.begin() + 20);
    }
    int total = 0;
    std::vector<int> per_topic(K, 0);
    for (Eigen::Index k = 0; k < K; ++k)
        for (Eigen::Index l = 0; l < K; ++l) {
            if (l == k) continue;
            int shared = 0;
            for (const auto w : top[static_cast<std::size_t>(k)]) shared += top[static_cast<std::size_t>(l)].count(w) ? 1 : 0;
            per_topic[static_cast<std::size_t>(k)] += shared;
            if (k < l) total += shared;
        }
    ASSERT_GT(total, 0);
    const Eigen::MatrixXd B_breve = Eigen::MatrixXd::Constant(K, N, 1.0 / K);
    const Eigen::MatrixXd A = Eigen::MatrixXd::Constant(K, K, 1.0 / (K * K));
    const Eigen::VectorXd p = Eigen::VectorXd::Constant(N, 1.0 / N);
    const std::vector<Index> anchors = {0, 1, 2, 3, 4, 5, 6};
    const MetricSet set = model_metrics(ModelView{B, B_breve, A, p, anchors});
    ASSERT_NE(set.find("simcount"), nullptr);
    EXPECT_EQ(set.find("simcount")->per, "");
    EXPECT_DOUBLE_EQ(set.find("simcount")->mean, total);
    ASSERT_NE(set.find("simcount_topic"), nullptr);
    const Eigen::VectorXd s = simcount(B);
    for (Eigen::Index k = 0; k < K; ++k) EXPECT_DOUBLE_EQ(s(k), per_topic[static_cast<std::size_t>(k)]) << k;
}

TEST(DissimilaritySoft, MeanSymmetricKLInBitsOverTheOtherTopics) {
    // b0 = (1/2, 1/2), b1 = (3/4, 1/4), b2 = (1/4, 3/4); L = log2 3.
    //   symKL(b0, b1) = symKL(b0, b2) = L/8 (as in Validity).
    //   KL(b1 ‖ b2) = 0.75·log2 3 + 0.25·log2(1/3) = L/2 = KL(b2 ‖ b1), so symKL = L/2.
    //   topic 0: mean(L/8, L/8) = L/8; topics 1, 2: mean(L/8, L/2) = 5L/16.
    // (The sum of both directions instead of their mean would double every value.)
    Eigen::MatrixXd B(2, 3);
    B << 0.5, 0.75, 0.25,
         0.5, 0.25, 0.75;
    const Eigen::VectorXd d = dissimilarity_soft(B);
    EXPECT_NEAR(d(0), kLog2Of3 / 8, kTol);
    EXPECT_NEAR(d(1), 5 * kLog2Of3 / 16, kTol);
    EXPECT_NEAR(d(2), 5 * kLog2Of3 / 16, kTol);
}

TEST(DissimilaritySoft, ZerosAreSmoothedToEpsilon) {
    // b0 = (1/2, 1/2, 0, 0), b1 uniform 1/4. KL(b0 ‖ b1) = 1 bit. KL(b1 ‖ b̃0) with
    // b̃0 = (1/2, 1/2, ε, ε)/(1 + 2ε), ε = 2⁻⁵²:
    //   2·0.25·log2(0.25/0.5) + 2·0.25·log2(0.25/ε) + log2(1 + 2ε) = −0.5 + 0.5·50 = 24.5
    //   symKL = (1 + 24.5)/2 = 12.75 for both topics.
    Eigen::MatrixXd B(4, 2);
    B << 0.5, 0.25,
         0.5, 0.25,
         0.0, 0.25,
         0.0, 0.25;
    const Eigen::VectorXd d = dissimilarity_soft(B);
    EXPECT_NEAR(d(0), 12.75, 1e-12);
    EXPECT_NEAR(d(1), 12.75, 1e-12);
}

TEST(DissimilaritySoft, DotProductsGiveThePairsOwnSums) {
    // The pairs' symmetric KL summed word by word (the definition, written out here) against
    // the dot-product form, on columns with zeros and with masses that are not 1.
    const Eigen::Index N = 400, K = 9;
    std::mt19937_64 random(7);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    Eigen::MatrixXd B(N, K);
    for (Eigen::Index k = 0; k < K; ++k)
        for (Eigen::Index i = 0; i < N; ++i) B(i, k) = u(random) < 0.3 ? 0.0 : std::pow(u(random), 4);
    for (Eigen::Index k = 0; k < K - 1; ++k) B.col(k) /= B.col(k).sum();  // the last keeps its own mass
    B.col(1) = B.col(0) * (1 + 1e-9);  // a near-duplicate pair: the terms cancel to ~1e-9 bits
    const double eps = std::numeric_limits<double>::epsilon();
    const auto kl = [&](Eigen::Index p, Eigen::Index q) {
        const double total = B.col(q).cwiseMax(eps).sum();
        double bits = 0;
        for (Eigen::Index i = 0; i < N; ++i)
            if (B(i, p) != 0) bits += B(i, p) * std::log2(B(i, p) / (std::max(B(i, q), eps) / total));
        return bits;
    };
    const Eigen::VectorXd d = dissimilarity_soft(B);
    for (Eigen::Index k = 0; k < K; ++k) {
        double sum = 0;
        for (Eigen::Index l = 0; l < K; ++l)
            if (l != k) sum += 0.5 * (kl(k, l) + kl(l, k));
        const double expected = sum / static_cast<double>(K - 1);
        EXPECT_NEAR(d(k), expected, 1e-12 * expected + 1e-12) << k;
    }
}

// ---- coherence -----------------------------------------------------------------------

TEST(Coherence, PairsInTheAuthorsLoopOrder) {
    Eigen::MatrixXi top(2, 3);
    top << 0, 1, 2,
           3, 1, 0;
    const std::vector<WordPair> pairs = coherence_pairs(top);
    // Per topic: (rank 1, rank 2), (rank 1, rank 3), (rank 2, rank 3) as (higher, lower).
    const Index expected[6][2] = {{0, 1}, {0, 2}, {1, 2}, {3, 1}, {3, 0}, {1, 0}};
    ASSERT_EQ(pairs.size(), 6u);  // K·n(n−1)/2 = 2·3·2/2
    for (std::size_t q = 0; q < pairs.size(); ++q) {
        EXPECT_EQ(pairs[q].higher, expected[q][0]) << "pair " << q;
        EXPECT_EQ(pairs[q].lower, expected[q][1]) << "pair " << q;
    }
}

TEST(Coherence, NaturalLogOfSmoothedCoDocumentFrequencyOverTheHigherWordsFrequency) {
    Eigen::MatrixXi top(2, 3);
    top << 0, 1, 2,
           3, 1, 0;
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> d1(4);
    d1 << 10, 5, 4, 2;
    // D2 per pair, in coherence_pairs' order: (0,1) 5, (0,2) 0, (1,2) 2, (3,1) 1, (3,0) 2, (1,0) 5.
    const std::vector<std::int64_t> d2 = {5, 0, 2, 1, 2, 5};
    const Eigen::VectorXd c = coherence(top, d1, d2);
    // topic 0: ln(5.01/D1(0)=10) + ln(0.01/10) + ln(2.01/D1(1)=5) = ln 0.501 + ln 0.001 + ln 0.402
    EXPECT_NEAR(c(0), std::log(0.501) + std::log(0.001) + std::log(0.402), kTol);
    // topic 1: ln(1.01/D1(3)=2) + ln(2.01/2) + ln(5.01/D1(1)=5) = ln 0.505 + ln 1.005 + ln 1.002
    EXPECT_NEAR(c(1), std::log(0.505) + std::log(1.005) + std::log(1.002), kTol);
    EXPECT_THROW(coherence(top, d1, {1, 2, 3}), InputError);
}

TEST(Coherence, OnePairWithEpsilonZeroIsMinusLnTwo) {
    // ln((1 + 0)/2) = −ln 2 ≈ −0.693 (base 2 would give −1).
    Eigen::MatrixXi top(1, 2);
    top << 1, 0;
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> d1(2);
    d1 << 7, 2;
    EXPECT_NEAR(coherence(top, d1, {1}, 0.0)(0), -std::log(2.0), kTol);
}

// ---- NPMI ------------------------------------------------------------------------------

// Four documents: {w0 w1}, {w0 w1}, {w1 w2}, {x}. D1 = (2, 3, 1, 1), M = 4; the topic's top
// words w0, w1, w2 give the pairs (w0,w1) 2, (w0,w2) 0, (w1,w2) 1. By hand, with
// npmi(a, b) = ln((P_ab + ε)/(P_a P_b)) / −ln(P_ab + ε), ε = 1e-12:
//   (w0,w1): ln((0.5 + ε)/(0.5·0.75)) / −ln(0.5 + ε)    ≈  0.41503749928
//   (w0,w2): ln(ε/(0.5·0.25)) / −ln ε                  ≈ −0.92474250108
//   (w1,w2): ln((0.25 + ε)/(0.75·0.25)) / −ln(0.25 + ε) ≈  0.20751874964
// mean −0.10072875071939 (gensim ≥ 4.1 counts every document, as here; 4.2's CoherenceModel(coherence='c_npmi', window_size=100,
// topn=3) on these four texts prints −0.10072875071939069).
TEST(Npmi, MeanOverPairsOfNormalizedPmiByDocuments) {
    Eigen::MatrixXi top(1, 3);
    top << 0, 1, 2;
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> d1(4);
    d1 << 2, 3, 1, 1;
    const Eigen::VectorXd v = npmi(top, d1, {2, 0, 1}, 4);
    ASSERT_EQ(v.size(), 1);
    const double e = 1e-12;
    const double by_hand = (std::log((0.5 + e) / 0.375) / -std::log(0.5 + e) + std::log(e / 0.125) / -std::log(e) +
                            std::log((0.25 + e) / 0.1875) / -std::log(0.25 + e)) / 3;
    EXPECT_NEAR(v(0), by_hand, 1e-14);
    EXPECT_NEAR(v(0), -0.10072875071939069, 1e-14);  // gensim's
}

TEST(Npmi, BoundsAndItsInputErrors) {
    Eigen::MatrixXi top(2, 2);
    top << 0, 1,
           2, 3;
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> d1(4);
    d1 << 5, 5, 3, 4;
    // Topic 0's two words in the same five of ten documents: 1 (to ~1e-11, the ε);
    // topic 1's never together: −1 + ln(P_a P_b)/ln ε, just above −1.
    const Eigen::VectorXd v = npmi(top, d1, {5, 0}, 10);
    EXPECT_NEAR(v(0), 1.0, 1e-10);
    EXPECT_GT(v(1), -1.0);
    EXPECT_NEAR(v(1), -1.0 + std::log(0.3 * 0.4) / std::log(1e-12), 1e-12);
    EXPECT_THROW(npmi(top, d1, {5}, 10), InputError);         // one count per pair
    EXPECT_THROW(npmi(top, d1, {5, 0}, 0), InputError);       // no documents
}

// ---- basis rank and quality ----------------------------------------------------------

// N = 4, K = 3, anchors (2, 3, 0). Sorted columns (ties to the lower id):
//   col 0: 0 (0.4), 1 (0.3), 2 (0.3), 3 (0)        col 1: 3 (0.5), 1 (0.2), 2 (0.2), 0 (0.1)
//   col 2: 0, 1, 2, 3 (all 0.25)
struct BasisModel {
    Eigen::MatrixXd B{4, 3};
    std::vector<Index> anchors{2, 3, 0};
    BasisModel() {
        B << 0.4, 0.1, 0.25,
             0.3, 0.2, 0.25,
             0.3, 0.2, 0.25,
             0.0, 0.5, 0.25;
    }
};

TEST(BasisRank, HardIsTheOneBasedRankWithTiesToTheLowerId) {
    const BasisModel m;
    const Eigen::VectorXd r = basis_rank_hard(m.B, m.anchors);
    EXPECT_DOUBLE_EQ(r(0), 3.0);  // word 2 after 0 and its tie 1
    EXPECT_DOUBLE_EQ(r(1), 1.0);  // word 3 leads column 1
    EXPECT_DOUBLE_EQ(r(2), 1.0);  // word 0 first among four ties
}

TEST(BasisRank, SoftIsTheNaturalLogRatioOfTheTopEntryToTheAnchors) {
    const BasisModel m;
    const Eigen::VectorXd r = basis_rank_soft(m.B, m.anchors);
    EXPECT_NEAR(r(0), std::log(0.4 / 0.3), kTol);  // ln 0.4 − ln 0.3 ≈ 0.2877
    EXPECT_NEAR(r(1), 0.0, kTol);                  // ln 0.5 − ln 0.5
    EXPECT_NEAR(r(2), 0.0, kTol);                  // ln 0.25 − ln 0.25
}

TEST(BasisQuality, HardIsTheMeanRankInTheOtherColumns) {
    const BasisModel m;
    const Eigen::VectorXd q = basis_quality_hard(m.B, m.anchors);
    EXPECT_DOUBLE_EQ(q(0), 3.0);  // word 2: rank 3 in col 1, rank 3 in col 2
    EXPECT_DOUBLE_EQ(q(1), 4.0);  // word 3: rank 4 in col 0, rank 4 in col 2
    EXPECT_DOUBLE_EQ(q(2), 2.5);  // word 0: rank 1 in col 0, rank 4 in col 1
}

TEST(BasisQuality, SoftIsTheMeanProbabilityInTheOtherColumns) {
    const BasisModel m;
    const Eigen::VectorXd q = basis_quality_soft(m.B, m.anchors);
    EXPECT_NEAR(q(0), 0.225, kTol);  // (B(2,1) + B(2,2))/2 = (0.2 + 0.25)/2
    EXPECT_NEAR(q(1), 0.125, kTol);  // (B(3,0) + B(3,2))/2 = (0 + 0.25)/2
    EXPECT_NEAR(q(2), 0.25, kTol);   // (B(0,0) + B(0,1))/2 = (0.4 + 0.1)/2
}

TEST(BasisRank, BadAnchorsAreAnInputError) {
    const BasisModel m;
    EXPECT_THROW(basis_rank_hard(m.B, {2, 3}), InputError);
    EXPECT_THROW(basis_quality_soft(m.B, {2, 3, 4}), InputError);
}

TEST(Summarize, OfAMetricWithADegenerateTopicIsNaN) {
    // Dominancy of A with a zero row: topic 0 gives 0.3/0.4 = 0.75, topic 1 0/0 = NaN;
    // the authors' mean makes the summary NaN (the degenerate topic shows).
    Eigen::MatrixXd A(2, 2);
    A << 0.3, 0.1,
         0.0, 0.0;
    const Eigen::VectorXd values = dominancy(A);
    EXPECT_NEAR(values(0), 0.75, kTol);
    EXPECT_TRUE(std::isnan(values(1)));
    EXPECT_TRUE(std::isnan(summarize(values).mean));
}

}  // namespace
}  // namespace jsmf::eval
