// SPDX-License-Identifier: MIT
// ClustAcc's three steps on hand-made data: NNLS weights, correlation k-means, accuracy.
#include <gtest/gtest.h>

#include <Eigen/Core>

#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "jsmf/core/error.hpp"
#include "jsmf/corpus/shard.hpp"
#include "jsmf/eval/clustering.hpp"

namespace jsmf::eval {
namespace {

constexpr double kTol = 1e-12;

corpus::Document document(std::vector<std::uint32_t> words, std::vector<std::uint32_t> counts) {
    corpus::Document doc;
    doc.words = std::move(words);
    doc.counts = std::move(counts);
    return doc;
}

// N = 4, K = 3, linearly independent topics: b0 = (½,½,0,0), b1 = (0,0,½,½), b2 = (½,0,½,0).
// G = BᵀB = [½ 0 ¼; 0 ½ ¼; ¼ ¼ ½].
Eigen::MatrixXd three_topics() {
    Eigen::MatrixXd B(4, 3);
    B << 0.5, 0.0, 0.5,
         0.5, 0.0, 0.0,
         0.0, 0.5, 0.5,
         0.0, 0.5, 0.0;
    return B;
}

// N × K topics (columns summing to 1) of products of two uniform draws: skewed, as real topics.
Eigen::MatrixXd random_topics(Eigen::Index N, Eigen::Index K, std::mt19937_64& engine) {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Eigen::MatrixXd B(N, K);
    for (Eigen::Index k = 0; k < K; ++k) {
        for (Eigen::Index i = 0; i < N; ++i) B(i, k) = uniform(engine) * uniform(engine);
        B.col(k) /= B.col(k).sum();
    }
    return B;
}

TEST(NnlsDocumentWeights, RecoversAnExactlyRepresentableDocument) {
    // ½b0 + ¼b1 + ¼b2 = (¼ + ⅛, ¼, ⅛ + ⅛, ⅛) = (3, 2, 2, 1)/8: counts (3, 2, 2, 1), n = 8.
    corpus::Shard docs;
    docs.append(document({0, 1, 2, 3}, {3, 2, 2, 1}));
    const Eigen::MatrixXd W = nnls_document_weights(three_topics(), docs);
    ASSERT_EQ(W.rows(), 3);
    ASSERT_EQ(W.cols(), 1);
    EXPECT_NEAR(W(0, 0), 0.5, 1e-10);
    EXPECT_NEAR(W(1, 0), 0.25, 1e-10);
    EXPECT_NEAR(W(2, 0), 0.25, 1e-10);
}

// With word weights (a tf-idf C's idf), the NNLS fits the document's tf-idf vector
// (h/n)∘idf: against a brute force over every support of w (the least squares on each
// subset of topics, kept when non-negative, the best residual wins), normalized to sum 1.
TEST(NnlsDocumentWeights, WithWordWeightsFitsTheTfIdfVectorByBruteForce) {
    std::mt19937_64 engine(3);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const Eigen::Index N = 12, K = 3;
    const Eigen::MatrixXd B = random_topics(N, K, engine);
    Eigen::VectorXd idf(N);
    for (Eigen::Index i = 0; i < N; ++i) idf(i) = std::log(100.0 / (1.0 + 90.0 * uniform(engine)));
    corpus::Shard docs;
    docs.append(document({0, 2, 3, 7, 9, 11}, {4, 1, 2, 5, 1, 3}));
    docs.append(document({1, 4, 5, 6}, {2, 2, 1, 6}));
    const Eigen::MatrixXd W = nnls_document_weights(B, docs, idf);
    const Eigen::MatrixXd plain = nnls_document_weights(B, docs);
    for (Eigen::Index m = 0; m < docs.num_docs(); ++m) {
        const corpus::Document doc = docs.document(m);
        Eigen::VectorXd d = Eigen::VectorXd::Zero(N);
        double n = 0;
        for (std::size_t e = 0; e < doc.words.size(); ++e) n += doc.counts[e];
        for (std::size_t e = 0; e < doc.words.size(); ++e) d(doc.words[e]) = doc.counts[e] / n * idf(doc.words[e]);
        double best = std::numeric_limits<double>::infinity();
        Eigen::VectorXd best_w = Eigen::VectorXd::Zero(K);
        for (int support = 1; support < (1 << K); ++support) {
            std::vector<Eigen::Index> cols;
            for (Eigen::Index k = 0; k < K; ++k)
                if (support & (1 << k)) cols.push_back(k);
            Eigen::MatrixXd Bs(N, static_cast<Eigen::Index>(cols.size()));
            for (std::size_t c = 0; c < cols.size(); ++c) Bs.col(static_cast<Eigen::Index>(c)) = B.col(cols[c]);
            const Eigen::VectorXd ws = Bs.colPivHouseholderQr().solve(d);
            if (ws.minCoeff() < 0) continue;
            const double residual = (Bs * ws - d).norm();
            if (residual < best) {
                best = residual;
                best_w.setZero();
                for (std::size_t c = 0; c < cols.size(); ++c) best_w(cols[c]) = ws(static_cast<Eigen::Index>(c));
            }
        }
        best_w /= best_w.sum();
        for (Eigen::Index k = 0; k < K; ++k) EXPECT_NEAR(W(k, m), best_w(k), 1e-9) << "document " << m << " topic " << k;
        EXPECT_GT((W.col(m) - plain.col(m)).norm(), 1e-3) << "the weights changed nothing for document " << m;
    }
    EXPECT_THROW(nnls_document_weights(B, docs, Eigen::VectorXd::Ones(N - 1)), InputError);
}

// From BᵀB and only the rows the documents use (their words renumbered to those rows), as
// a rank computes them with B kept by rows: the same bits as from the whole B; a Gram of
// the wrong shape is refused.
TEST(NnlsDocumentWeights, FromTheGramAndTheUsedRowsEqualsTheWholeB) {
    std::mt19937_64 engine(5);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const Eigen::Index N = 20, K = 4;
    const Eigen::MatrixXd B = random_topics(N, K, engine);
    Eigen::VectorXd idf(N);
    for (Eigen::Index i = 0; i < N; ++i) idf(i) = 0.5 + uniform(engine);
    corpus::Shard docs;
    docs.append(document({17, 2, 9, 5}, {1, 4, 2, 2}));
    docs.append(document({9, 13, 2}, {3, 1, 5}));
    docs.append(document({}, {}));  // empty: no weights
    const std::vector<std::uint32_t> used = {2, 5, 9, 13, 17};
    corpus::Shard renumbered = docs;
    for (auto& w : renumbered.words)
        w = static_cast<std::uint32_t>(std::lower_bound(used.begin(), used.end(), w) - used.begin());
    Eigen::MatrixXd rows(static_cast<Eigen::Index>(used.size()), K);
    Eigen::VectorXd idf_rows(static_cast<Eigen::Index>(used.size()));
    for (std::size_t j = 0; j < used.size(); ++j) {
        rows.row(static_cast<Eigen::Index>(j)) = B.row(used[j]);
        idf_rows(static_cast<Eigen::Index>(j)) = idf(used[j]);
    }
    const Eigen::MatrixXd G = B.transpose() * B;
    for (const bool weighted : {false, true}) {
        const Eigen::MatrixXd whole = weighted ? nnls_document_weights(B, docs, idf) : nnls_document_weights(B, docs);
        const Eigen::MatrixXd part = nnls_document_weights(G, rows, renumbered, weighted ? idf_rows : Eigen::VectorXd());
        ASSERT_EQ(part.rows(), K);
        ASSERT_EQ(part.cols(), 3);
        EXPECT_TRUE(part == whole) << "weighted " << weighted << ": max difference " << (part - whole).cwiseAbs().maxCoeff();
        EXPECT_GT(part.col(0).sum(), 0.99);
        EXPECT_EQ(part.col(2).sum(), 0.0);
    }
    // the rows alone do not give BᵀB: a Gram from them changes the weights
    const Eigen::MatrixXd wrong = nnls_document_weights(rows.transpose() * rows, rows, renumbered, Eigen::VectorXd());
    EXPECT_GT((wrong - nnls_document_weights(B, docs)).cwiseAbs().maxCoeff(), 1e-6);
    EXPECT_THROW(nnls_document_weights(Eigen::MatrixXd::Identity(K - 1, K - 1), rows, renumbered, Eigen::VectorXd()), InputError);
}

TEST(NnlsDocumentWeights, IsNonNegativeLeastSquaresNotClippedLeastSquares) {
    // v = word 1 alone (3 copies, n = 3: v = (0, 1, 0, 0)), f = Bᵀv = (½, 0, 0).
    // Unconstrained: G x = f gives x2 = −1, x0 = 1.5, x1 = 0.5; clipped and normalized that
    // would be (0.75, 0.25, 0). NNLS: on support {0}, x0 = f0/G00 = 1, and the multipliers
    // f − Gx = (0, 0, −¼) ≤ 0 confirm it: (1, 0, 0).
    // An empty document keeps zero weights.
    corpus::Shard docs;
    docs.append(document({1}, {3}));
    docs.append(document({}, {}));
    const Eigen::MatrixXd W = nnls_document_weights(three_topics(), docs);
    EXPECT_NEAR(W(0, 0), 1.0, 1e-10);
    EXPECT_NEAR(W(1, 0), 0.0, 1e-10);
    EXPECT_NEAR(W(2, 0), 0.0, 1e-10);
    EXPECT_TRUE(W.col(1).isZero(0));
}

TEST(NnlsDocumentWeights, DropsATopicThatLeastSquaresWouldMakeNegative) {
    // b0 = (½,0,0,½), b1 = (¾,0,0,¼), b2 = (0,0,¼,¾); counts (1,1,0,3), v = (1,1,0,3)/5
    // (word 1 is in no topic). Unconstrained: (8/5)b0 − (4/5)b1 = (1/5,0,0,3/5) fits all
    // but word 1, x = (8/5, −4/5, 0). Lawson–Hanson enters b2 (f2 = 9/20), b1, b0, then
    // must drop b1. NNLS on support {0, 2}: G = [½ 3/8; 3/8 5/8], f = (2/5, 9/20),
    // det = 5/16 − 9/64 = 11/64: w0 = (5/8·2/5 − 3/8·9/20)·64/11 = 26/55,
    // w2 = (½·9/20 − 3/8·2/5)·64/11 = 24/55; b1's multiplier
    // f1 − G10 w0 − G12 w2 = 3/10 − ½·26/55 − 3/16·24/55 = −1/55 < 0, so optimal.
    // Normalized: (26, 0, 24)/50.
    Eigen::MatrixXd B(4, 3);
    B << 0.5, 0.75, 0.0,
         0.0, 0.0, 0.0,
         0.0, 0.0, 0.25,
         0.5, 0.25, 0.75;
    corpus::Shard docs;
    docs.append(document({0, 1, 3}, {1, 1, 3}));
    const Eigen::MatrixXd W = nnls_document_weights(B, docs);
    EXPECT_NEAR(W(0, 0), 0.52, 1e-10);
    EXPECT_NEAR(W(1, 0), 0.0, 1e-10);
    EXPECT_NEAR(W(2, 0), 0.48, 1e-10);
}

TEST(NnlsDocumentWeights, AWordOutsideBIsAnInputError) {
    corpus::Shard docs;
    docs.append(document({4}, {1}));
    EXPECT_THROW(nnls_document_weights(three_topics(), docs), InputError);
}

TEST(KmeansCorrelation, ScaledAndShiftedCopiesClusterTogether) {
    // Group A rises, group B falls; magnitudes differ by 10× within each group, so a
    // Euclidean k-means would put (10,20,30) and (30,20,10) together instead.
    Eigen::MatrixXd X(3, 6);
    X << 1, 10, 0, 3, 30, 5,
         2, 20, 1, 2, 20, 4,
         3, 30, 2, 1, 10, 3;
    const std::vector<int> c = kmeans_correlation(X, 2, 5, 1);
    ASSERT_EQ(c.size(), 6u);
    EXPECT_EQ(c[0], c[1]);
    EXPECT_EQ(c[0], c[2]);
    EXPECT_EQ(c[3], c[4]);
    EXPECT_EQ(c[3], c[5]);
    EXPECT_NE(c[0], c[3]);
    EXPECT_EQ(kmeans_correlation(X, 2, 5, 1), c);  // seeded: the same clustering again
}

TEST(KmeansCorrelation, ThreeWellSeparatedGroups) {
    // Each group peaks at a different coordinate (patterns correlate at −1/3).
    Eigen::MatrixXd X(4, 9);
    X << 4, 8, 4.5, 1, 2, 1.0, 1, 3, 1.1,
         1, 2, 1.0, 4, 9, 5.0, 1, 3, 1.0,
         1, 2, 1.2, 1, 2, 1.0, 4, 12, 5.0,
         1, 2, 1.0, 1, 2, 1.3, 1, 3, 1.0;
    for (const Seed seed : {1u, 2u, 3u}) {
        const std::vector<int> c = kmeans_correlation(X, 3, 10, seed);
        for (int g = 0; g < 3; ++g) {
            EXPECT_EQ(c[3 * g], c[3 * g + 1]) << "seed " << seed;
            EXPECT_EQ(c[3 * g], c[3 * g + 2]) << "seed " << seed;
        }
        EXPECT_NE(c[0], c[3]);
        EXPECT_NE(c[0], c[6]);
        EXPECT_NE(c[3], c[6]);
    }
}

TEST(KmeansCorrelation, BadArgumentsAreInputErrors) {
    const Eigen::MatrixXd X = Eigen::MatrixXd::Random(3, 2);
    EXPECT_THROW(kmeans_correlation(X, 3, 1, 1), InputError);  // k > points
    EXPECT_THROW(kmeans_correlation(X, 0, 1, 1), InputError);
    EXPECT_THROW(kmeans_correlation(X, 1, 0, 1), InputError);
    EXPECT_EQ(kmeans_correlation(X, 1, 1, 1), (std::vector<int>{0, 0}));
}

TEST(ClusteringAccuracy, APermutedLabelingIsPerfect) {
    // Clusters 2, 0, 1 are labels 0, 1, 2 renamed.
    EXPECT_NEAR(clustering_accuracy({2, 2, 0, 0, 1, 1}, {0, 0, 1, 1, 2, 2}), 1.0, kTol);
}

TEST(ClusteringAccuracy, BestOneToOneMatch) {
    // Counts: cluster 1 = {label 0: 2, label 1: 1}, cluster 0 = {label 1: 3}.
    // Best: 1 → 0 (2 right), 0 → 1 (3 right): 5/6.
    EXPECT_NEAR(clustering_accuracy({1, 1, 1, 0, 0, 0}, {0, 0, 1, 1, 1, 1}), 5.0 / 6, kTol);
}

TEST(ClusteringAccuracy, MoreClustersThanLabelsLeavesAClusterWrong) {
    // Cluster 0 = {label 0: 2}, cluster 1 = {label 0: 1}, cluster 2 = {label 1: 3}.
    // One-to-one: 0 → 0, 2 → 1, cluster 1 unmatched: (2 + 3)/6 = 5/6 (many-to-one: 1).
    EXPECT_NEAR(clustering_accuracy({0, 0, 1, 2, 2, 2}, {0, 0, 0, 1, 1, 1}), 5.0 / 6, kTol);
}

TEST(ClusteringAccuracy, MoreLabelsThanClusters) {
    // Cluster 0 = {label 0: 1, label 1: 1}, cluster 1 = {label 2: 2}: (1 + 2)/4 = 3/4.
    EXPECT_NEAR(clustering_accuracy({0, 0, 1, 1}, {0, 1, 2, 2}), 0.75, kTol);
}

TEST(ClusteringAccuracy, EqualsABruteForceBestMatching) {
    // Random clusterings of 40 points, 2..5 clusters and labels: the Hungarian matching's
    // accuracy equals the best over every one-to-one map (all permutations).
    std::mt19937 engine(9);
    for (int trial = 0; trial < 60; ++trial) {
        const int k = 2 + trial % 4, labels = 2 + (trial / 4) % 4;
        std::uniform_int_distribution<int> cluster(0, k - 1), label(0, labels - 1);
        std::vector<int> c(40), l(40);
        for (int i = 0; i < 40; ++i) {
            c[static_cast<std::size_t>(i)] = cluster(engine);
            l[static_cast<std::size_t>(i)] = (engine() % 3 == 0) ? label(engine) : c[static_cast<std::size_t>(i)] % labels;
        }
        // Brute force: map clusters onto a permutation of max(k, labels) slots (slots
        // beyond the labels mean "unmatched").
        const int slots = std::max(k, labels);
        std::vector<int> perm(static_cast<std::size_t>(slots));
        std::iota(perm.begin(), perm.end(), 0);
        int best = 0;
        do {
            int right = 0;
            for (int i = 0; i < 40; ++i)
                right += perm[static_cast<std::size_t>(c[static_cast<std::size_t>(i)])] == l[static_cast<std::size_t>(i)];
            best = std::max(best, right);
        } while (std::next_permutation(perm.begin(), perm.end()));
        EXPECT_NEAR(clustering_accuracy(c, l), best / 40.0, kTol) << "trial " << trial;
    }
}

TEST(ClusteringAccuracy, BadInputs) {
    EXPECT_THROW(clustering_accuracy({0, 1}, {0}), InputError);
    EXPECT_THROW(clustering_accuracy({0, -1}, {0, 0}), InputError);
    EXPECT_TRUE(std::isnan(clustering_accuracy({}, {})));
}

}  // namespace
}  // namespace jsmf::eval
