// SPDX-License-Identifier: MIT
// The distributed anchor finder equals a plain one-process Alg. 2 at any rank count, and
// finds the planted anchors of a synthetic corpus.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "jsmf/anchors/pivoted_qr.hpp"
#include "jsmf/cooc/cooc.hpp"
#include "jsmf/dist/ops.hpp"
#include "jsmf/rectify/ap.hpp"
#include "jsmf/synth/synth.hpp"
#include "test_support.hpp"

namespace jsmf::anchors {
namespace {

// Alg. 2 of practical-jsmf, written plainly with an explicit P = C̄ᵀ.
AnchorResult plain_alg2(const Eigen::MatrixXd& C, int K) {
    const Index N = C.rows();
    Eigen::MatrixXd C_bar = C;
    for (Index i = 0; i < N; ++i) {
        const double p = C.row(i).sum();
        C_bar.row(i) = p > 0 ? Eigen::RowVectorXd(C.row(i) / p) : Eigen::RowVectorXd::Zero(N);
    }
    const Eigen::MatrixXd P = C_bar.transpose();
    Eigen::RowVectorXd u = P.colwise().squaredNorm();
    Eigen::MatrixXd Q = Eigen::MatrixXd::Zero(N, K);
    AnchorResult result;
    result.diag_r.resize(K);
    for (int k = 0; k < K; ++k) {
        Index n = 0;
        double best = -1;
        for (Index i = 0; i < N; ++i) {
            if (std::find(result.anchors.begin(), result.anchors.end(), i) == result.anchors.end() && u(i) > best) {
                best = u(i);
                n = i;
            }
        }
        result.anchors.push_back(n);
        result.diag_r(k) = std::sqrt(u(n));
        Eigen::VectorXd q = P.col(n);
        for (int l = 0; l < k; ++l) q -= Q.col(l).dot(P.col(n)) * Q.col(l);
        Q.col(k) = q / result.diag_r(k);
        const Eigen::RowVectorXd qP = Q.col(k).transpose() * P;
        u -= qP.cwiseAbs2();
    }
    return result;
}

TEST(Anchors, EqualAPlainOneProcessAlg2AtAnyLayout) {
    const auto world = mpi::Comm::world();
    synth::SynthOptions o;
    o.num_docs = 600;
    o.num_words = 70;
    o.num_topics = 4;
    o.mean_doc_length = 25;
    const synth::SynthCorpus corpus = synth::generate(o);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const cooc::CoocResult built = test::build_cooc(dist::Grid::create(world, pr, pc), corpus.docs, o.num_words, 8);
        const AnchorResult expected = plain_alg2(dist::gather_all(built.C), 6);
        const AnchorResult found = find_anchors(built.C, built.stats.unigram, 6);
        EXPECT_EQ(found.anchors, expected.anchors) << pr << "x" << pc;
        EXPECT_LE((found.diag_r - expected.diag_r).cwiseAbs().maxCoeff(), 1e-10 * expected.diag_r(0)) << pr << "x" << pc;
    }
}

TEST(Anchors, FindThePlantedAnchorsAfterAp) {
    const auto world = mpi::Comm::world();
    synth::SynthOptions o;
    o.num_docs = 4000;
    o.num_words = 200;
    o.num_topics = 5;
    o.mean_doc_length = 60;
    o.seed = 3;
    // Ordinary words spread over several topics (concentration 1): then the planted
    // anchors are the only words with p(z | w) = 1, the unique vertices Alg. 2 looks for.
    // (With very sparse topics, ordinary words that occur in one topic only are equally
    // good anchors and the planted ids are not identifiable.)
    o.word_concentration = 1.0;
    o.anchor_mass = 0.03;
    const synth::SynthCorpus corpus = synth::generate(o);
    cooc::CoocResult built = test::build_cooc(dist::Grid::most_square(world), corpus.docs, o.num_words, 8);
    rectify::ApOptions ap;
    ap.num_topics = o.num_topics;
    ap.max_iterations = 30;
    rectify::alternating_projection(built.C, ap);
    const AnchorResult found = find_anchors(built.C, dist::row_sums(built.C), o.num_topics);
    std::set<Index> planted, got(found.anchors.begin(), found.anchors.end());
    for (int k = 0; k < o.num_topics; ++k) planted.insert(corpus.anchors(k, 0));
    EXPECT_EQ(got, planted);
}

TEST(Anchors, UnusedWordsAreNeverChosen) {
    const auto world = mpi::Comm::world();
    const auto grid = dist::Grid::most_square(world);
    // Words 0..5 co-occur (random, so no ties); words 6 and 7 never occur.
    std::mt19937_64 engine(5);
    std::uniform_real_distribution<double> uniform(0.1, 1.0);
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(8, 8);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) M(i, j) = uniform(engine);
    M = (M + M.transpose()).eval() / (2 * M.sum());
    dist::DistMatrix C(grid, 8, 8, 3);
    for (Index jl = 0; jl < C.local_cols(); ++jl)
        for (Index il = 0; il < C.local_rows(); ++il) C.local()(il, jl) = M(C.global_row(il), C.global_col(jl));
    const AnchorResult found = find_anchors(C, dist::row_sums(C), 4);
    EXPECT_EQ(found.zero_rows, 2);
    for (const Index s : found.anchors) EXPECT_LT(s, 6);
    EXPECT_EQ(found.anchors, plain_alg2(M, 4).anchors);
}

}  // namespace
}  // namespace jsmf::anchors
