// SPDX-License-Identifier: MIT
// The distributed anchor finder equals a plain one-process Alg. 2 at any rank count, and
// finds the planted anchors of a synthetic corpus.
#include <gtest/gtest.h>

#include <Eigen/QR>

#include <algorithm>
#include <random>
#include <set>

#include "jsmf/anchors/fast_anchor.hpp"
#include "jsmf/anchors/pivoted_qr.hpp"
#include "jsmf/cooc/cooc.hpp"
#include "jsmf/dist/ops.hpp"
#include "jsmf/rectify/projection.hpp"
#include "jsmf/synth/synth.hpp"
#include "test_support.hpp"

namespace jsmf::anchors {
namespace {

// Alg. 2 of practical-jsmf, written plainly with an explicit P = C̄ᵀ; with `fixed`, the
// pivots are those words in that order.
AnchorResult plain_alg2(const Eigen::MatrixXd& C, int K, const std::vector<Index>& fixed = {}) {
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
        Index n = fixed.empty() ? 0 : fixed[static_cast<std::size_t>(k)];
        double best = -1;
        for (Index i = 0; i < N && fixed.empty(); ++i) {
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

// A small corpus for comparisons with the plain implementations.
synth::SynthOptions small_corpus() {
    synth::SynthOptions o;
    o.num_docs = 600;
    o.num_words = 70;
    o.num_topics = 4;
    o.mean_doc_length = 25;
    return o;
}

TEST(Anchors, EqualAPlainOneProcessAlg2AtAnyLayout) {
    const auto world = mpi::Comm::world();
    const synth::SynthOptions o = small_corpus();
    const synth::SynthCorpus corpus = synth::generate(o);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const cooc::CoocResult built = test::build_cooc(dist::Grid::create(world, pr, pc), corpus.docs, o.num_words, 8);
        const AnchorResult expected = plain_alg2(dist::gather_all(built.C), 6);
        const AnchorResult found = find_anchors(built.C, built.stats.unigram, 6);
        EXPECT_EQ(found.anchors, expected.anchors) << pr << "x" << pc;
        EXPECT_LE((found.diag_r - expected.diag_r).cwiseAbs().maxCoeff(), 1e-10 * expected.diag_r(0)) << pr << "x" << pc;
    }
}

TEST(Anchors, BothFindersFindThePlantedAnchorsAfterAp) {
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
    rectify::ProjectionOptions ap;
    ap.num_topics = o.num_topics;
    ap.max_iterations = 30;
    rectify::alternating_projection(built.C, ap);
    const Eigen::VectorXd p = dist::row_sums(built.C);
    std::set<Index> planted;
    for (int k = 0; k < o.num_topics; ++k) planted.insert(corpus.anchors(k, 0));
    const AnchorResult qr = find_anchors(built.C, p, o.num_topics);
    EXPECT_EQ(std::set<Index>(qr.anchors.begin(), qr.anchors.end()), planted) << "Alg. 2";
    const AnchorResult fast = find_anchors_fast(built.C, p, o.num_topics, {100, 1, true});
    EXPECT_EQ(std::set<Index>(fast.anchors.begin(), fast.anchors.end()), planted) << "FastAnchorWords";
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

TEST(Anchors, GivenAnchorsGetTheDiagROfTheirOrder) {
    const auto world = mpi::Comm::world();
    const synth::SynthOptions o = small_corpus();
    const synth::SynthCorpus corpus = synth::generate(o);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const cooc::CoocResult built = test::build_cooc(dist::Grid::create(world, pr, pc), corpus.docs, o.num_words, 8);
        const Eigen::MatrixXd dense = dist::gather_all(built.C);
        std::vector<Index> given;  // five words that occur, in an order of our choosing
        for (const Index i : {12, 3, 40, 7, 66, 21, 50, 33, 1, 60})
            if (built.stats.unigram(i) > 0 && given.size() < 5) given.push_back(i);
        ASSERT_EQ(given.size(), 5u);
        const AnchorResult expected = plain_alg2(dense, 5, given);
        const AnchorResult found = anchors_from_words(built.C, built.stats.unigram, given);
        EXPECT_EQ(found.anchors, given);
        EXPECT_LE((found.diag_r - expected.diag_r).cwiseAbs().maxCoeff(), 1e-10 * expected.diag_r(0)) << pr << "x" << pc;
        // Alg. 2's own anchors, given back, reproduce its diagR exactly.
        const AnchorResult own = find_anchors(built.C, built.stats.unigram, 5);
        EXPECT_EQ(anchors_from_words(built.C, built.stats.unigram, own.anchors).diag_r, own.diag_r);
    }
    const cooc::CoocResult built = test::build_cooc(dist::Grid::most_square(world), corpus.docs, o.num_words, 8);
    test::expect_stage_failed(world, [&] { anchors_from_words(built.C, built.stats.unigram, {1, 2, 1}); },
                              {"word id 1 is given twice"});
    test::expect_stage_failed(world, [&] { anchors_from_words(built.C, built.stats.unigram, {1, 70}); },
                              {"word id 70 is out of range"});
    Eigen::VectorXd p = built.stats.unigram;
    p(5) = 0;
    test::expect_stage_failed(world, [&] { anchors_from_words(built.C, p, {5, 6}); }, {"word id 5 never occurs"});
    if (world.size() > 1) {  // ranks that were given different anchors stop together
        const std::vector<Index> mine = world.is_root() ? std::vector<Index>{1, 2} : std::vector<Index>{2, 1};
        test::expect_stage_failed(world, [&] { anchors_from_words(built.C, built.stats.unigram, mine); },
                                  {"collective arguments differ across ranks"}, exit_code::internal);
    }
}

// FastAnchorWords written plainly: explicit C̄, explicit projection, and each distance
// to an affine span as a least-squares residual (not the Gram–Schmidt updates under test).
std::vector<Index> plain_fast_anchor(const Eigen::MatrixXd& C, int K, int d, Seed seed, bool cleanup) {
    const Index N = C.rows();
    Eigen::MatrixXd C_bar = Eigen::MatrixXd::Zero(N, N);
    std::vector<bool> candidate(static_cast<std::size_t>(N));
    for (Index i = 0; i < N; ++i) {
        const double p = C.row(i).sum();
        candidate[static_cast<std::size_t>(i)] = p > 0;
        if (p > 0) C_bar.row(i) = C.row(i) / p;
    }
    const Eigen::MatrixXd Y = C_bar * random_projection(N, d, seed);
    auto distance = [&](Index i, const std::vector<Index>& span) {  // from the affine span of Y_span
        if (span.empty()) return Y.row(i).norm();
        Eigen::MatrixXd D(d, static_cast<Index>(span.size()) - 1);
        for (std::size_t l = 1; l < span.size(); ++l) D.col(static_cast<Index>(l) - 1) = (Y.row(span[l]) - Y.row(span[0])).transpose();
        const Eigen::VectorXd r = (Y.row(i) - Y.row(span[0])).transpose();
        if (D.cols() == 0) return r.norm();
        return (r - D * D.colPivHouseholderQr().solve(r)).norm();
    };
    auto farthest = [&](const std::vector<Index>& span, const std::vector<Index>& excluded) {
        Index best = -1;
        double best_distance = -1;
        for (Index i = 0; i < N; ++i) {
            if (!candidate[static_cast<std::size_t>(i)] || std::count(excluded.begin(), excluded.end(), i)) continue;
            const double dist = distance(i, span);
            if (dist > best_distance) {
                best_distance = dist;
                best = i;
            }
        }
        return best;
    };
    std::vector<Index> S;
    for (int k = 0; k < K; ++k) S.push_back(farthest(S, S));
    for (int k = 0; k < K && cleanup; ++k) {
        std::vector<Index> others = S;
        others.erase(others.begin() + k);
        S[static_cast<std::size_t>(k)] = farthest(others, others);
    }
    return S;
}

TEST(Anchors, FastAnchorWordsEqualsAPlainImplementationAtAnyLayout) {
    const auto world = mpi::Comm::world();
    const synth::SynthOptions o = small_corpus();
    const synth::SynthCorpus corpus = synth::generate(o);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const cooc::CoocResult built = test::build_cooc(dist::Grid::create(world, pr, pc), corpus.docs, o.num_words, 8);
        const Eigen::MatrixXd dense = dist::gather_all(built.C);
        // K = 9 > the 4 planted topics: the cleanup pass then moves some anchors.
        const std::vector<Index> greedy = plain_fast_anchor(dense, 9, 30, 9, false);
        const std::vector<Index> cleaned = plain_fast_anchor(dense, 9, 30, 9, true);
        ASSERT_NE(greedy, cleaned) << "the data must exercise the cleanup pass";
        EXPECT_EQ(find_anchors_fast(built.C, built.stats.unigram, 9, {30, 9, false}).anchors, greedy) << pr << "x" << pc;
        const AnchorResult found = find_anchors_fast(built.C, built.stats.unigram, 9, {30, 9, true});
        EXPECT_EQ(found.anchors, cleaned) << pr << "x" << pc;
        EXPECT_EQ(found.diag_r.size(), 9);
    }
    const cooc::CoocResult built = test::build_cooc(dist::Grid::most_square(world), corpus.docs, o.num_words, 8);
    test::expect_stage_failed(world, [&] { find_anchors_fast(built.C, built.stats.unigram, 5, {4, 1, true}); },
                              {"--projection-dim must be at least K = 5"});
}

}  // namespace
}  // namespace jsmf::anchors
