// SPDX-License-Identifier: MIT
// Synthetic corpora: reproducible by seed, separable B, A consistent with the documents.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "jsmf/core/error.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/recover/recover.hpp"
#include "jsmf/io/synth_file.hpp"
#include "jsmf/synth/synth.hpp"
#include "support/temp_dir.hpp"

namespace jsmf::synth {
namespace {

SynthOptions small(Seed seed) {
    SynthOptions o;
    o.num_docs = 300;
    o.num_words = 80;
    o.num_topics = 4;
    o.anchors_per_topic = 2;
    o.mean_doc_length = 30;
    o.seed = seed;
    return o;
}

TEST(Synth, SameSeedSameCorpusAndFiles) {
    test::TempDir dir;
    const SynthCorpus a = generate(small(7));
    const SynthCorpus b = generate(small(7));
    EXPECT_EQ(a.docs.words, b.docs.words);
    EXPECT_EQ(a.docs.counts, b.docs.counts);
    EXPECT_EQ(a.B, b.B);
    EXPECT_EQ(a.anchors, b.anchors);
    write_uci(dir.file("a.txt"), a.docs, a.num_docs, 80);
    write_uci(dir.file("b.txt"), b.docs, b.num_docs, 80);
    EXPECT_EQ(test::read_bytes(dir.file("a.txt")), test::read_bytes(dir.file("b.txt")));
    const SynthCorpus c = generate(small(8));
    EXPECT_NE(a.docs.words, c.docs.words);
    EXPECT_NE(a.B, c.B);
}

// The streamed corpus: plant_model is generate()'s model, and a document is the same
// whichever range draws it (so `synth --stream` writes one corpus at any rank count).
TEST(Synth, StreamedDocumentsDoNotDependOnTheSplit) {
    const SynthOptions o = small(5);
    const PlantedModel model = plant_model(o);
    const SynthCorpus whole = generate(o);
    EXPECT_EQ(model.B, whole.B);
    EXPECT_EQ(model.A, whole.A);
    EXPECT_EQ(model.anchors, whole.anchors);
    EXPECT_EQ(model.vocab, whole.vocab);
    using Doc = std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>;
    const auto draw = [&](Index first, Index last, std::map<Index, Doc>& into) {
        return draw_document_range(model, o, first, last,
                                   [&](Index m, const std::vector<std::uint32_t>& words,
                                       const std::vector<std::uint32_t>& counts) {
                                       EXPECT_TRUE(std::is_sorted(words.begin(), words.end()));
                                       EXPECT_TRUE(into.emplace(m, Doc{words, counts}).second);
                                   });
    };
    std::map<Index, Doc> one, three;
    const RangeStats all = draw(0, o.num_docs, one);
    Index tokens = 0;
    for (const auto& [split_first, split_last] : {std::pair<Index, Index>{0, 97}, {97, 98}, {98, o.num_docs}})
        tokens += draw(split_first, split_last, three).tokens;
    EXPECT_EQ(one, three);
    EXPECT_EQ(all.tokens, tokens);
    EXPECT_EQ(all.documents, o.num_docs);
    EXPECT_GT(all.tokens, 20 * o.num_docs);  // Poisson(30) lengths
    // (1/D) Σ w wᵀ near the prior's moment, as generate()'s documents are.
    EXPECT_LT((all.w_moment / static_cast<double>(o.num_docs) - model.A).cwiseAbs().maxCoeff(), 0.02);
    EXPECT_THROW(draw(5, o.num_docs + 1, one), InputError);
}

TEST(Synth, ZipfMakesWordFrequenciesFallWithTheirRank) {
    SynthOptions o = small(2);
    o.num_words = 400;
    o.word_concentration = 1.0;
    const Eigen::VectorXd flat = plant_model(o).B.rowwise().sum();
    o.zipf = 1.0;
    const Eigen::VectorXd zipf = plant_model(o).B.rowwise().sum();
    // Word i's mass over the topics: log-mass against log(i + 1) falls with slope about
    // -1 under zipf = 1, and stays flat without it (anchors left out: their mass is fixed).
    const Eigen::MatrixXi anchors = plant_model(o).anchors;
    const auto slope = [&](const Eigen::VectorXd& mass) {
        double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
        for (Index i = 0; i < mass.size(); ++i) {
            if ((anchors.array() == static_cast<int>(i)).any()) continue;
            const double x = std::log(static_cast<double>(i + 1)), y = std::log(mass(i));
            sx += x, sy += y, sxx += x * x, sxy += x * y, n += 1;
        }
        return (n * sxy - sx * sy) / (n * sxx - sx * sx);
    };
    EXPECT_NEAR(slope(zipf), -1.0, 0.15);
    EXPECT_NEAR(slope(flat), 0.0, 0.15);
    o.zipf = -1;
    EXPECT_THROW(plant_model(o), OptionError);
}

TEST(Synth, BIsColumnStochasticAndSeparable) {
    const SynthCorpus corpus = generate(small(3));
    const double eps = std::numeric_limits<double>::epsilon();
    for (int k = 0; k < 4; ++k) {
        EXPECT_NEAR(corpus.B.col(k).sum(), 1.0, 80 * eps);
        for (int a = 0; a < 2; ++a) {
            const int anchor = corpus.anchors(k, a);
            // An anchor word has mass in its own topic only.
            for (int l = 0; l < 4; ++l) {
                if (l == k) EXPECT_GT(corpus.B(anchor, l), 0.0);
                else EXPECT_EQ(corpus.B(anchor, l), 0.0);
            }
        }
    }
    EXPECT_GE(corpus.B.minCoeff(), 0.0);
}

TEST(Synth, DirichletSecondMomentMatchesTheDocuments) {
    SynthOptions o = small(5);
    o.num_docs = 20000;
    o.mean_doc_length = 2;
    const SynthCorpus corpus = generate(o);
    EXPECT_NEAR(corpus.A.sum(), 1.0, 1e-14);
    // A_empirical is a mean of 20000 draws of w wᵀ (entries in [0, 1]): its standard
    // error is below 0.5/sqrt(20000) = 0.0035; allow 4 standard errors.
    EXPECT_LE((corpus.A - corpus.A_empirical).cwiseAbs().maxCoeff(), 0.014);
}

TEST(Synth, LogisticNormalIsCorrelated) {
    SynthOptions o = small(9);
    o.prior = TopicPrior::logistic_normal;
    o.correlation = 0.9;
    o.num_docs = 5000;
    o.monte_carlo_samples = 20000;
    const SynthCorpus corpus = generate(o);
    EXPECT_NEAR(corpus.A.sum(), 1.0, 1e-12);
    // Σ_kl = ρ^|k−l|: neighbouring topics co-occur more than distant ones.
    EXPECT_GT(corpus.A(0, 1), corpus.A(0, 3));
    EXPECT_LE((corpus.A - corpus.A_empirical).cwiseAbs().maxCoeff(), 0.02);
}

TEST(Synth, WrittenCorpusReadsBackAndTruthRoundTrips) {
    test::TempDir dir;
    const SynthOptions o = small(4);
    const SynthCorpus corpus = generate(o);
    write_uci(dir.file("docword.t.txt.gz"), corpus.docs, corpus.num_docs, o.num_words);
    const auto file = corpus::inspect_uci_file(dir.file("docword.t.txt.gz"));
    EXPECT_TRUE(file.gzipped);
    EXPECT_EQ(file.header.num_docs, o.num_docs);
    EXPECT_EQ(file.header.num_nonzeros, corpus.docs.num_entries());
    corpus::UciReader reader({file}, corpus::plan_uci_pieces({file}, 0, 1));
    const corpus::Shard back = corpus::read_all(reader);
    EXPECT_EQ(back.words, corpus.docs.words);
    EXPECT_EQ(back.counts, corpus.docs.counts);

    io::write_synth_truth(dir.file("truth.h5"), corpus, o, io::Provenance{});
    const SynthCorpus truth = io::read_synth_truth(dir.file("truth.h5"));
    EXPECT_EQ(truth.B, corpus.B);
    EXPECT_EQ(truth.A, corpus.A);
    EXPECT_EQ(truth.anchors, corpus.anchors);
    EXPECT_EQ(truth.vocab, corpus.vocab);
}

// E[w wᵀ] of Dirichlet(α), written out here (not the code under test's helper).
Eigen::MatrixXd dirichlet_moment(const Eigen::VectorXd& alpha) {
    const double a0 = alpha.sum();
    Eigen::MatrixXd A = alpha * alpha.transpose();
    A.diagonal() += alpha;
    return A / (a0 * (a0 + 1));
}

double relative_error(const Eigen::MatrixXd& fitted, const Eigen::MatrixXd& target) {
    return (fitted - target).norm() / target.norm();
}

TEST(LogisticNormalFit, MatchesACorrelatedPriorThatADirichletCannot) {
    // A planted correlated logistic normal (Σ_kl = ρ^|k−l|, ρ = 0.8), its A by Monte Carlo.
    SynthOptions o = small(3);
    o.num_topics = 5;
    o.num_docs = 1;
    o.prior = TopicPrior::logistic_normal;
    o.sigma = 1.0;
    o.correlation = 0.8;
    o.monte_carlo_samples = 100000;
    const Eigen::MatrixXd A = generate(o).A;
    const LogisticNormalPrior fit = fit_logistic_normal(A, 1);
    // Its own A, from draws independent of the fit's (the Monte Carlo noise of A at 1e5
    // draws is about 1%).
    const SynthCorpus semi = generate_from_model(generate(o).B, {TopicPrior::logistic_normal, {}, fit},
                                                 {0, 2, 4, 6, 8}, std::vector<std::string>(80, "w"), 1, 10, 5, 100000);
    const double ln_error = relative_error(semi.A, A);
    const double dirichlet_error = relative_error(dirichlet_moment(recover::recover_alpha(A).alpha), A);
    std::printf("relative error of E[w w']: logistic-normal fit %.4f (fresh draws %.4f), Dirichlet fit %.4f\n",
                fit.relative_error, ln_error, dirichlet_error);
    EXPECT_LT(fit.relative_error, 0.05);
    EXPECT_LT(ln_error, 0.05);
    EXPECT_GT(dirichlet_error, 3 * ln_error) << "the Dirichlet cannot express the correlation";
}

TEST(LogisticNormalFit, RejectsABadA) {
    EXPECT_THROW(fit_logistic_normal(Eigen::MatrixXd::Zero(3, 3), 1), InputError);
    EXPECT_THROW(fit_logistic_normal(Eigen::MatrixXd::Ones(3, 2), 1), InputError);
}

TEST(GenerateFromModel, DirichletTruthIsTheClosedFormMoment) {
    const SynthCorpus planted = generate(small(4));
    const Eigen::VectorXd alpha = Eigen::Vector4d(0.2, 0.5, 0.1, 0.3);
    std::vector<Index> anchors = {planted.anchors(0, 0), planted.anchors(1, 0), planted.anchors(2, 0),
                                  planted.anchors(3, 0)};
    const SynthCorpus semi = generate_from_model(planted.B, {TopicPrior::dirichlet, alpha, {}}, anchors, planted.vocab,
                                                 2000, 40, 9);
    EXPECT_LT((semi.A - dirichlet_moment(alpha)).cwiseAbs().maxCoeff(), 1e-15);
    EXPECT_LT(relative_error(semi.A_empirical, semi.A), 0.1);  // 2000 documents
    EXPECT_EQ(semi.labels.size(), 2000u);
    EXPECT_EQ(semi.anchors(2, 0), anchors[2]);
    EXPECT_LT((semi.B - planted.B).cwiseAbs().maxCoeff(), 1e-15);
}

TEST(Synth, RejectsImpossibleOptions) {
    SynthOptions o = small(1);
    o.num_topics = 1;
    EXPECT_THROW(generate(o), InputError);
    o = small(1);
    o.num_words = 8;  // 4 topics x 2 anchors leave no ordinary word
    EXPECT_THROW(generate(o), InputError);
}

}  // namespace
}  // namespace jsmf::synth
