// SPDX-License-Identifier: MIT
// report/: what `jsmf report`'s page draws. The relevance order at its ends (λ = 1: p(w|k),
// λ = 0: the lift), the slider's word sets against a brute force over every word, the
// Jensen–Shannon divergences against their definition, classical MDS on planted groups and
// on points it must place exactly, the seriation; the by-rows computations equal to one
// process's at every rank count.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "jsmf/core/error.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/io/csv_file.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/mpi/comm.hpp"
#include "jsmf/report/report.hpp"
#include "test_support.hpp"

using namespace jsmf;

namespace {

/// A column-stochastic N × K matrix with exact zeros (a share `zeros` of the entries), as
/// LAW's active-set B has, and a p(w) of the same words.
Eigen::MatrixXd random_topics(Index N, Index K, double zeros, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(0, 1);
    Eigen::MatrixXd B(N, K);
    for (Index k = 0; k < K; ++k)
        for (Index w = 0; w < N; ++w) B(w, k) = u(gen) < zeros ? 0.0 : std::pow(u(gen), 4.0);
    for (Index k = 0; k < K; ++k) B.col(k) /= B.col(k).sum();
    return B;
}

Eigen::VectorXd corpus_frequencies(const Eigen::MatrixXd& B, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(0.2, 1);
    Eigen::VectorXd weight(B.cols());
    for (Index k = 0; k < B.cols(); ++k) weight(k) = u(gen);
    Eigen::VectorXd p = B * weight;
    for (Index w = 0; w < p.size(); ++w) p(w) = p(w) * u(gen) + 1e-6;  // not the model's own marginal
    return p / p.sum();
}

/// The definition, over every word: ½ Σ p log(2p/(p+q)) + q log(2q/(p+q)), 0 log 0 = 0.
double js_divergence(const Eigen::VectorXd& p, const Eigen::VectorXd& q) {
    double d = 0;
    for (Index w = 0; w < p.size(); ++w) {
        const double m = p(w) + q(w);
        if (p(w) > 0) d += 0.5 * p(w) * std::log(2 * p(w) / m);
        if (q(w) > 0) d += 0.5 * q(w) * std::log(2 * q(w) / m);
    }
    return d;
}

}  // namespace

TEST(Relevance, AtOneIsTheOrderOfPwkAndAtZeroTheLifts) {
    const Eigen::MatrixXd B = random_topics(400, 3, 0.3, 1);
    const Eigen::VectorXd p_w = corpus_frequencies(B, 2);
    for (Index k = 0; k < 3; ++k) {
        std::vector<Index> by_p, by_lift;
        for (Index w = 0; w < 400; ++w)
            if (B(w, k) > 0) by_p.push_back(w);
        by_lift = by_p;
        std::stable_sort(by_p.begin(), by_p.end(), [&](Index a, Index b) { return B(a, k) > B(b, k); });
        std::stable_sort(by_lift.begin(), by_lift.end(),
                         [&](Index a, Index b) { return B(a, k) / p_w(a) > B(b, k) / p_w(b); });
        by_p.resize(25);
        by_lift.resize(25);
        EXPECT_EQ(report::rank_by_relevance(B.col(k), p_w, 1.0, 25), by_p) << "topic " << k;
        EXPECT_EQ(report::rank_by_relevance(B.col(k), p_w, 0.0, 25), by_lift) << "topic " << k;
        // and the formula between
        EXPECT_NEAR(report::relevance(0.02, 0.005, 0.3), 0.3 * std::log(0.02) + 0.7 * std::log(4.0), 1e-14);
    }
    // A word of p(w|k) = 0 is never ranked, however rare.
    Eigen::VectorXd p_wk(3), p(3);
    p_wk << 0.5, 0.0, 0.5;
    p << 0.5, 1e-12, 0.5;
    EXPECT_EQ(report::rank_by_relevance(p_wk, p, 0.0, 3), (std::vector<Index>{0, 2}));
}

TEST(Relevance, TheSlidersWordsAreTheUnionOverItsGridAsABruteForceFindsIt) {
    for (const unsigned seed : {3u, 4u, 5u}) {
        const Eigen::MatrixXd B = random_topics(3000, 4, 0.5, seed);
        const Eigen::VectorXd p_w = corpus_frequencies(B, seed + 10);
        for (Index k = 0; k < 4; ++k) {
            std::set<Index> brute;
            for (int s = 0; s <= 100; ++s)
                for (const Index w : report::rank_by_relevance(B.col(k), p_w, s / 100.0, 20)) brute.insert(w);
            const std::vector<Index> words = report::relevant_words(B.col(k), p_w, 20, 100);
            EXPECT_EQ(words, std::vector<Index>(brute.begin(), brute.end())) << "seed " << seed << " topic " << k;
            EXPECT_GT(words.size(), 20u);  // the two ends differ: the slider has something to show
        }
    }
}

TEST(Relevance, ByRowsTheRootGetsWhatOneProcessComputes) {
    const mpi::Comm world = mpi::Comm::world();
    const Index N = 2000, K = 5;
    const Eigen::MatrixXd B = random_topics(N, K, 0.4, 7);
    const Eigen::VectorXd p_w = corpus_frequencies(B, 8);
    const distmat::RowPartition rows = distmat::RowPartition::balanced(N, world.size());
    const Index first = rows.begin(world.rank()), n = rows.rows(world.rank());
    const std::vector<report::TopicTerms> terms =
        report::relevant_terms(world, B.middleRows(first, n), p_w.segment(first, n), first, 15, 50);
    if (world.rank() != 0) {
        EXPECT_TRUE(terms.empty());
        return;
    }
    ASSERT_EQ(terms.size(), static_cast<std::size_t>(K));
    for (Index k = 0; k < K; ++k) {
        const report::TopicTerms& t = terms[static_cast<std::size_t>(k)];
        EXPECT_EQ(t.words, report::relevant_words(B.col(k), p_w, 15, 50)) << "topic " << k;
        for (std::size_t i = 0; i < t.words.size(); ++i) {
            EXPECT_EQ(t.p_wk[i], B(t.words[i], k));
            EXPECT_EQ(t.p_w[i], p_w(t.words[i]));
        }
    }
}

TEST(JensenShannon, TheDivergencesByRowsAreTheDefinitions) {
    const mpi::Comm world = mpi::Comm::world();
    const Index N = 1500, K = 6;
    Eigen::MatrixXd B = random_topics(N, K, 0.6, 11);
    B.col(5) = B.col(2);  // two equal topics: divergence 0
    const distmat::RowPartition rows = distmat::RowPartition::balanced(N, world.size());
    const Eigen::MatrixXd D = report::js_divergences(world, B.middleRows(rows.begin(world.rank()), rows.rows(world.rank())));
    for (Index k = 0; k < K; ++k)
        for (Index l = 0; l < K; ++l) {
            const double expected = js_divergence(B.col(k), B.col(l));
            EXPECT_NEAR(D(k, l), expected, 1e-13) << k << "," << l;
            EXPECT_LE(D(k, l), std::log(2.0) + 1e-15);
        }
    EXPECT_LT(D(2, 5), 1e-13);  // 0 but for the rounding of ~600 terms
    // Disjoint supports: log 2, the largest.
    Eigen::MatrixXd disjoint = Eigen::MatrixXd::Zero(4, 2);
    disjoint.col(0) << 0.5, 0.5, 0, 0;
    disjoint.col(1) << 0, 0, 0.25, 0.75;
    EXPECT_NEAR(report::js_divergence_terms(disjoint)(0, 1), std::log(2.0), 1e-15);
}

TEST(ClassicalMds, PlacesPointsOfAPlaneExactlyAndPlantedGroupsTogether) {
    // Points of a plane: their distances are reproduced exactly (up to a rotation and signs).
    Eigen::MatrixXd X(6, 2);
    X << 0, 0, 3, 0, 0, 4, 3, 4, -1, 2, 5, -2;
    Eigen::MatrixXd D(6, 6);
    for (Index i = 0; i < 6; ++i)
        for (Index j = 0; j < 6; ++j) D(i, j) = (X.row(i) - X.row(j)).norm();
    const Eigen::MatrixXd Y = report::classical_mds(D, 2);
    for (Index i = 0; i < 6; ++i)
        for (Index j = 0; j < 6; ++j) EXPECT_NEAR((Y.row(i) - Y.row(j)).norm(), D(i, j), 1e-10);
    // The signs are fixed: the largest-magnitude coordinate of each axis is positive.
    for (Index d = 0; d < 2; ++d) {
        Index at = 0;
        Y.col(d).cwiseAbs().maxCoeff(&at);
        EXPECT_GT(Y(at, d), 0);
    }
    // A planted model of three well-separated groups of topics (each group's topics share
    // most of their words): the JS map puts every topic nearer its own group's topics than
    // any other group's.
    const Index N = 900, groups = 3, per = 4;
    std::mt19937 gen(5);
    std::uniform_real_distribution<double> u(0, 1);
    Eigen::MatrixXd B = Eigen::MatrixXd::Zero(N, groups * per);
    for (Index g = 0; g < groups; ++g)
        for (Index t = 0; t < per; ++t) {
            const Index k = g * per + t;
            for (Index w = 0; w < N; ++w) {
                const bool own = w / (N / groups) == g;
                B(w, k) = own ? 1 + u(gen) : (u(gen) < 0.05 ? 0.2 * u(gen) : 0.0);
            }
            B.col(k) /= B.col(k).sum();
        }
    const Eigen::MatrixXd map = report::classical_mds(report::js_divergence_terms(B).cwiseMax(0.0).cwiseSqrt(), 2);
    for (Index k = 0; k < groups * per; ++k) {
        double farthest_own = 0, nearest_other = 1e300;
        for (Index l = 0; l < groups * per; ++l) {
            if (l == k) continue;
            const double d = (map.row(k) - map.row(l)).norm();
            if (l / per == k / per) farthest_own = std::max(farthest_own, d);
            else nearest_other = std::min(nearest_other, d);
        }
        EXPECT_LT(farthest_own, nearest_other) << "topic " << k;
    }
}

TEST(Seriation, CorrelatedTopicsSitTogether) {
    // Two blocks of mutually correlated topics, interleaved in their ids: 0, 2, 4 and 1, 3, 5.
    Eigen::MatrixXd rho = Eigen::MatrixXd::Constant(7, 7, -0.3);
    for (int k = 0; k < 6; ++k)
        for (int l = 0; l < 6; ++l)
            if (k % 2 == l % 2) rho(k, l) = 0.8;
    rho.diagonal().setOnes();
    rho.row(6).setConstant(std::nan(""));  // topic 6: no variance
    rho.col(6).setConstant(std::nan(""));
    const std::vector<int> order = report::spectral_order(rho);
    ASSERT_EQ(order.size(), 7u);
    EXPECT_EQ(order.back(), 6);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)] % 2, order[0] % 2);
    for (int i = 3; i < 6; ++i) EXPECT_NE(order[static_cast<std::size_t>(i)] % 2, order[0] % 2);
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> all(7);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all);
}

TEST(Seriation, TheCorrelationMatrixHoldsShowsPairs) {
    Eigen::MatrixXd A(3, 3);
    A << 0.20, 0.05, 0.05, 0.05, 0.25, 0.02, 0.05, 0.02, 0.31;
    const Eigen::MatrixXd rho = model::correlation_matrix(A);
    for (const model::TopicPair& p : model::topic_correlations(A)) EXPECT_DOUBLE_EQ(rho(p.k, p.l), p.correlation);
    EXPECT_TRUE(rho.isApprox(rho.transpose()));
    EXPECT_EQ(rho.diagonal(), Eigen::VectorXd::Ones(3));
}

TEST(Documents, TheRepresentativeOnesAndThePrevalenceByLabel) {
    Eigen::MatrixXd theta(6, 2);
    theta << 0.9, 0.1,  //
        0.2, 0.8,       //
        0.0, 0.0,       // no usable word: in no list, in no label's mean
        0.9, 0.1,       // ties the first: the lower row first
        0.5, 0.5,       //
        0.0, 1.0;
    EXPECT_EQ(report::representative_documents(theta, 0, 3), (std::vector<Index>{0, 3, 4}));
    EXPECT_EQ(report::representative_documents(theta, 1, 10), (std::vector<Index>{5, 1, 4, 0, 3}));
    const Eigen::MatrixXd P = report::label_prevalence(theta, {1, 2, 2, 1, 2, 2}, 3);
    ASSERT_EQ(P.rows(), 3);
    EXPECT_NEAR(P(0, 0), 0.9, 1e-15);
    EXPECT_NEAR(P(1, 0), (0.2 + 0.5 + 0.0) / 3, 1e-15);  // the row of zeros left out
    EXPECT_NEAR(P(1, 1), (0.8 + 0.5 + 1.0) / 3, 1e-15);
    EXPECT_TRUE(std::isnan(P(2, 0)) && std::isnan(P(2, 1)));  // a label without documents
}

TEST(Sweep, RunsGroupedByTheSettingsThatTellThemApartOrderedByK) {
    // relaxation follows rectify: it would only repeat it; seed is the same everywhere.
    const std::vector<std::string> header{"run", "file", "topics", "rectify", "relaxation", "seed", "coherence",
                                          "coherence_std", "npmi", "run_seconds"};
    const std::vector<std::vector<std::string>> rows{{"0", "a.h5", "10", "ap", "1.5", "7", "-300", "12", "", "2.0"},
                                                     {"1", "b.h5", "5", "ap", "1.5", "7", "-250", "10", "", "1.0"},
                                                     {"2", "c.h5", "5", "none", "1", "7", "-260", "", "", "0.5"}};
    const report::SweepView v = report::sweep_view(header, rows, {"coherence", "npmi", "specificity"});
    EXPECT_EQ(v.quantities, (std::vector<std::string>{"coherence", "run_seconds"}));  // npmi never measured
    ASSERT_EQ(v.series.size(), 2u);
    EXPECT_EQ(v.series[0].label, "rectify=ap");
    EXPECT_EQ(v.series[0].topics, (std::vector<int>{5, 10}));
    EXPECT_EQ(v.series[0].mean[0], (std::vector<double>{-250, -300}));
    EXPECT_EQ(v.series[0].std[0], (std::vector<double>{10, 12}));
    EXPECT_EQ(v.series[0].mean[1], (std::vector<double>{1.0, 2.0}));
    EXPECT_EQ(v.series[1].label, "rectify=none");
    EXPECT_TRUE(std::isnan(v.series[1].std[0][0]));
    // Without a topics column, or with a K that is not one: refused.
    EXPECT_THROW(report::sweep_view({"run", "coherence"}, {{"0", "1"}}, {"coherence"}), InputError);
    EXPECT_THROW(report::sweep_view({"topics"}, {{"x"}}, {}), InputError);
}

TEST(Sweep, TheCsvReaderTakesQuotedFieldsAndRefusesRaggedRows) {
    const test::TempDir dir;  // its own: the copies of this test under another kernel run beside it
    const std::string path = dir.file("table.csv");
    std::ofstream(path) << "a,b,c\r\n1,\"x, \"\"y\"\"\",3\n4,,\"two\nlines\"\n";
    const io::CsvTable t = io::read_csv_file(path);
    EXPECT_EQ(t.header, (std::vector<std::string>{"a", "b", "c"}));
    ASSERT_EQ(t.rows.size(), 2u);
    EXPECT_EQ(t.rows[0], (std::vector<std::string>{"1", "x, \"y\"", "3"}));
    EXPECT_EQ(t.rows[1], (std::vector<std::string>{"4", "", "two\nlines"}));
    std::ofstream(path) << "a,b\n1,2\n3\n";
    try {
        io::read_csv_file(path);
        ADD_FAILURE() << "a ragged row was read";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(path + ":3: a row of 1 fields, the header has 2"), std::string::npos) << e.what();
    }
    std::remove(path.c_str());
}

TEST(Pairs, TheMostPositiveAndTheMostNegativeOfShowsList) {
    std::mt19937 gen(3);
    std::uniform_real_distribution<double> u(0, 1);
    Eigen::MatrixXd A(8, 8);
    for (Index k = 0; k < 8; ++k)
        for (Index l = 0; l <= k; ++l) A(k, l) = A(l, k) = u(gen) + (k == l ? 2.0 : 0.0);
    A /= A.sum();
    const std::vector<model::TopicPair> all = model::topic_correlations(A), shown = report::strongest_pairs(A, 15, 5);
    ASSERT_EQ(all.size(), 28u);
    ASSERT_EQ(shown.size(), 20u);
    for (std::size_t i = 0; i < 20; ++i) {
        const model::TopicPair& want = i < 15 ? all[i] : all[all.size() - 20 + i];
        EXPECT_EQ(shown[i].k, want.k);
        EXPECT_EQ(shown[i].l, want.l);
    }
    EXPECT_EQ(report::strongest_pairs(A, 20, 10).size(), 28u);  // fewer than asked: all
}
