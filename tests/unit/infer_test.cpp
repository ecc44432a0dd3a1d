// SPDX-License-Identifier: MIT
// jsmf infer's EM on the mixture weights: cases solved by hand, the objective never
// decreasing, documents without usable words, and planted proportions recovered better
// as documents get longer.
#include <gtest/gtest.h>

#include <random>

#include "jsmf/infer/infer.hpp"
#include "jsmf/synth/synth.hpp"

namespace jsmf::infer {
namespace {

using Ids = std::vector<std::uint32_t>;

TEST(Infer, SeparatedTopicsByHand) {
    // Word 0 only in topic 0, word 1 only in topic 1, word 2 in neither (B row 0).
    Eigen::MatrixXd B(3, 2);
    B << 1, 0, 0, 1, 0, 0;
    InferOptions options;
    options.tolerance = 1e-12;
    options.max_iterations = 100000;
    const DocumentTopics r = infer_document(B, Ids{0, 1, 2}, Ids{3, 1, 5}, options);
    EXPECT_NEAR(r.theta(0), 0.75, 1e-9);  // the MLE is the word shares
    EXPECT_NEAR(r.theta(1), 0.25, 1e-9);
    EXPECT_EQ(r.tokens, 4);  // word 2 cannot be explained: not counted
    EXPECT_NEAR(r.log_likelihood, 3 * std::log(0.75) + std::log(0.25), 1e-9);
    EXPECT_TRUE(r.converged);
    // MAP under Dirichlet(3, 1): θ ∝ h + α − 1 = (5, 1).
    options.alpha = Eigen::Vector2d(3, 1);
    const DocumentTopics map = infer_document(B, Ids{0, 1}, Ids{3, 1}, options);
    EXPECT_NEAR(map.theta(0), 5.0 / 6, 1e-9);
    EXPECT_NEAR(map.theta(1), 1.0 / 6, 1e-9);
    // α_k below 1 count as 1 (no MAP exists below): the MLE again.
    options.alpha = Eigen::Vector2d(0.5, 0.1);
    EXPECT_NEAR(infer_document(B, Ids{0, 1}, Ids{3, 1}, options).theta(0), 0.75, 1e-9);
}

TEST(Infer, MixedTopicsByHand) {
    // B = [[0.5, 0], [0.5, 0.5], [0, 0.5]]; a document "w0 w1": θ0 = 1 maximizes
    // ln(0.5 θ0) + ln(0.5): the optimum is at the simplex's corner.
    Eigen::MatrixXd B(3, 2);
    B << 0.5, 0, 0.5, 0.5, 0, 0.5;
    InferOptions options;
    options.tolerance = 1e-10;
    options.max_iterations = 100000;
    const DocumentTopics r = infer_document(B, Ids{0, 1}, Ids{1, 1}, options);
    EXPECT_GT(r.theta(0), 1 - 1e-6);
    // "w0 w2 w2": ln(0.5 θ0) + 2 ln(0.5 θ1) peaks at θ0 = 1/3.
    EXPECT_NEAR(infer_document(B, Ids{0, 2}, Ids{1, 2}, options).theta(0), 1.0 / 3, 1e-7);
}

TEST(Infer, ObjectiveNeverDecreases) {
    std::mt19937_64 engine(5);
    std::uniform_real_distribution<double> u(0, 1);
    const Index N = 60, K = 6;
    Eigen::MatrixXd B(N, K);
    for (Index i = 0; i < N; ++i)
        for (Index k = 0; k < K; ++k) B(i, k) = u(engine) < 0.4 ? 0.0 : u(engine);
    B = B.array().rowwise() / B.colwise().sum().array();
    for (int trial = 0; trial < 20; ++trial) {
        Ids words, counts;
        for (std::uint32_t i = 0; i < N; ++i)
            if (u(engine) < 0.3) {
                words.push_back(i);
                counts.push_back(1 + static_cast<std::uint32_t>(5 * u(engine)));
            }
        InferOptions options;
        options.tolerance = 1e-12;
        options.max_iterations = 300;
        if (trial % 2) options.alpha = Eigen::VectorXd::Constant(K, 1.0 + trial / 10.0);
        // the objective at the uniform start, then after every iteration
        std::vector<double> objective{
            objective_at(B, words, counts, Eigen::VectorXd::Constant(K, 1.0 / K), options.alpha)};
        const DocumentTopics r = infer_document(B, words, counts, options, &objective);
        ASSERT_GT(objective.size(), 2u);
        EXPECT_NEAR(objective.back(), objective_at(B, words, counts, r.theta, options.alpha),
                    1e-9 * std::abs(objective.back()));
        for (std::size_t t = 1; t < objective.size(); ++t)
            EXPECT_GE(objective[t], objective[t - 1] - 1e-12 * std::abs(objective[t - 1])) << "trial " << trial << " t " << t;
        EXPECT_NEAR(r.theta.sum(), 1.0, 1e-12);
        EXPECT_GE(r.theta.minCoeff(), 0.0);
    }
}

TEST(Infer, NoUsableWordGivesTheZeroMarker) {
    Eigen::MatrixXd B(3, 2);
    B << 1, 0, 0, 1, 0, 0;
    for (const auto& [words, counts] : {std::pair<Ids, Ids>{{}, {}}, std::pair<Ids, Ids>{{2}, {7}}}) {
        const DocumentTopics r = infer_document(B, words, counts, InferOptions{});
        EXPECT_EQ(r.tokens, 0);
        EXPECT_EQ(r.theta.cwiseAbs().sum(), 0.0);
        EXPECT_EQ(r.log_likelihood, 0.0);
        EXPECT_FALSE(std::isnan(r.theta.sum()));
    }
}

TEST(Infer, PlantedProportionsCloserForLongerDocuments) {
    std::vector<double> errors;
    for (const double length : {30.0, 150.0, 750.0}) {
        synth::SynthOptions o;
        o.num_docs = 300;
        o.num_words = 400;
        o.num_topics = 5;
        o.alpha = 0.3;
        o.word_concentration = 0.1;
        o.mean_doc_length = length;
        o.seed = 11;
        const synth::SynthCorpus corpus = synth::generate(o);
        const std::vector<DocumentTopics> theta = infer_documents(corpus.B, corpus.docs, InferOptions{});
        double total = 0;
        for (Index m = 0; m < corpus.docs.num_docs(); ++m) {
            const Index d = corpus.docs.keys[static_cast<std::size_t>(m)].id - 1;
            total += (theta[static_cast<std::size_t>(m)].theta - corpus.proportions.col(d)).cwiseAbs().sum();
        }
        errors.push_back(total / static_cast<double>(corpus.docs.num_docs()));
        std::printf("mean doc length %.0f: mean L1 error of theta %.4f\n", length, errors.back());
    }
    EXPECT_LT(errors[1], 0.8 * errors[0]);
    EXPECT_LT(errors[2], 0.8 * errors[1]);
    EXPECT_LT(errors[2], 0.1);
}

}  // namespace
}  // namespace jsmf::infer
