// SPDX-License-Identifier: MIT
// The distributed anchor finders (Alg. 2, FastAnchorWords, SNPA, XRAY) equal plain
// one-process implementations at any rank count and find planted anchors; Alg. 2 is SPA.
#include <gtest/gtest.h>

#include <Eigen/QR>

#include <algorithm>
#include <random>
#include <set>

#include "jsmf/anchors/fast_anchor.hpp"
#include "jsmf/anchors/finder.hpp"
#include "jsmf/anchors/pivoted_qr.hpp"
#include "jsmf/anchors/snpa_xray.hpp"
#include "jsmf/cooc/cooc.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/rectify/projection.hpp"
#include "jsmf/synth/synth.hpp"
#include "support/brute_force_nnls.hpp"
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
        const cooc::CoocResult built = test::build_cooc(distmat::Grid::create(world, pr, pc), corpus.docs, o.num_words, 8);
        const AnchorResult expected = plain_alg2(distmat::gather_all(built.C), 6);
        const AnchorResult found = find_anchors(built.C, built.stats.unigram, 6);
        EXPECT_EQ(found.anchors, expected.anchors) << pr << "x" << pc;
        EXPECT_LE((found.diag_r - expected.diag_r).cwiseAbs().maxCoeff(), 1e-10 * expected.diag_r(0)) << pr << "x" << pc;
    }
}

// A corpus whose planted anchors are identifiable: ordinary words spread over several
// topics (concentration 1), so the planted anchors are the only words with p(z | w) = 1,
// the unique vertices Alg. 2 looks for. (With very sparse topics, ordinary words that
// occur in one topic only are equally good anchors and the planted ids are not identifiable.)
synth::SynthOptions identifiable_corpus() {
    synth::SynthOptions o;
    o.num_docs = 4000;
    o.num_words = 200;
    o.num_topics = 5;
    o.mean_doc_length = 60;
    o.seed = 3;
    o.word_concentration = 1.0;
    o.anchor_mass = 0.03;
    return o;
}

TEST(Anchors, BothFindersFindThePlantedAnchorsAfterAp) {
    const auto world = mpi::Comm::world();
    const synth::SynthOptions o = identifiable_corpus();
    const synth::SynthCorpus corpus = synth::generate(o);
    cooc::CoocResult built = test::build_cooc(distmat::Grid::most_square(world), corpus.docs, o.num_words, 8);
    rectify::ProjectionOptions ap;
    ap.num_topics = o.num_topics;
    ap.max_iterations = 30;
    rectify::alternating_projection(built.C, ap);
    const Eigen::VectorXd p = distmat::row_sums(built.C);
    std::set<Index> planted;
    for (int k = 0; k < o.num_topics; ++k) planted.insert(corpus.anchors(k, 0));
    const AnchorResult qr = find_anchors(built.C, p, o.num_topics);
    EXPECT_EQ(std::set<Index>(qr.anchors.begin(), qr.anchors.end()), planted) << "Alg. 2";
    const AnchorResult fast = find_anchors_fast(built.C, p, o.num_topics, {100, 1, true});
    EXPECT_EQ(std::set<Index>(fast.anchors.begin(), fast.anchors.end()), planted) << "FastAnchorWords";
}

// The planted corpus of the test above with three rare words added, each in two
// documents only (3 tokens each there): on the unrectified C their rows of C̄ are those
// two documents' words, far from every other row, so every greedy finder takes them first.
// Arora et al.'s candidate threshold (documents >= 10) keeps them out, and then every
// finder finds the planted anchors.
TEST(Anchors, TheCandidateThresholdKeepsRareWordsOutForEveryFinder) {
    const auto world = mpi::Comm::world();
    const synth::SynthOptions o = identifiable_corpus();
    const synth::SynthCorpus corpus = synth::generate(o);
    const Index rare = 3, N = o.num_words + rare;
    corpus::Shard docs;
    for (Index m = 0; m < corpus.docs.num_docs(); ++m) {
        corpus::Document doc = corpus.docs.document(m);
        for (Index r = 0; r < rare; ++r) {
            if (m == 100 * r + 7 || m == 100 * r + 57) {  // two documents per rare word
                doc.words.push_back(static_cast<std::uint32_t>(o.num_words + r));
                doc.counts.push_back(3);
            }
        }
        docs.append(doc);
    }
    const cooc::CoocResult built = test::build_cooc(distmat::Grid::most_square(world), docs, N, 8);
    for (Index r = 0; r < rare; ++r) ASSERT_EQ(built.stats.doc_freq(o.num_words + r), 2);
    std::set<Index> planted;
    for (int k = 0; k < o.num_topics; ++k) planted.insert(corpus.anchors(k, 0));
    const Candidates candidates = candidates_by_doc_freq(built.stats.doc_freq, 10);
    for (const std::string& name : choices<anchors::Finder>()) {
        const Finder finder = parse_name<anchors::Finder>(name, "finder");
        const AnchorResult with = find_anchors_by(finder, built.C, built.stats.unigram, o.num_topics, {100, 1, true},
                                                  candidates);
        EXPECT_EQ(std::set<Index>(with.anchors.begin(), with.anchors.end()), planted) << name << " with the threshold";
        EXPECT_EQ(with.excluded, rare) << name;
        const AnchorResult without = find_anchors_by(finder, built.C, built.stats.unigram, o.num_topics, {100, 1, true});
        EXPECT_EQ(without.excluded, 0) << name;
        const auto is_rare = [&](Index s) { return s >= o.num_words; };
        EXPECT_TRUE(std::any_of(without.anchors.begin(), without.anchors.end(), is_rare))
            << name << " without the threshold picks no rare word";
    }
    // Fewer candidates than topics: one agreed message naming the option.
    test::expect_stage_failed(
        world,
        [&] {
            find_anchors_by(Finder::snpa, built.C, built.stats.unigram, o.num_topics, {},
                            candidates_by_doc_freq(built.stats.doc_freq, 1000000));
        },
        {"occurring words are in at least anchor_min_df documents, fewer than K = 5"});
}

TEST(Anchors, UnusedWordsAreNeverChosen) {
    const auto world = mpi::Comm::world();
    const auto grid = distmat::Grid::most_square(world);
    // Words 0..5 co-occur (random, so no ties); words 6 and 7 never occur.
    std::mt19937_64 engine(5);
    std::uniform_real_distribution<double> uniform(0.1, 1.0);
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(8, 8);
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) M(i, j) = uniform(engine);
    M = (M + M.transpose()).eval() / (2 * M.sum());
    distmat::DistMatrix C(grid, 8, 8, 3);
    for (Index jl = 0; jl < C.local_cols(); ++jl)
        for (Index il = 0; il < C.local_rows(); ++il) C.local()(il, jl) = M(C.global_row(il), C.global_col(jl));
    const AnchorResult found = find_anchors(C, distmat::row_sums(C), 4);
    EXPECT_EQ(found.zero_rows, 2);
    for (const Index s : found.anchors) EXPECT_LT(s, 6);
    EXPECT_EQ(found.anchors, plain_alg2(M, 4).anchors);
}

TEST(Anchors, GivenAnchorsGetTheDiagROfTheirOrder) {
    const auto world = mpi::Comm::world();
    const synth::SynthOptions o = small_corpus();
    const synth::SynthCorpus corpus = synth::generate(o);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const cooc::CoocResult built = test::build_cooc(distmat::Grid::create(world, pr, pc), corpus.docs, o.num_words, 8);
        const Eigen::MatrixXd dense = distmat::gather_all(built.C);
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
    const cooc::CoocResult built = test::build_cooc(distmat::Grid::most_square(world), corpus.docs, o.num_words, 8);
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
        const cooc::CoocResult built = test::build_cooc(distmat::Grid::create(world, pr, pc), corpus.docs, o.num_words, 8);
        const Eigen::MatrixXd dense = distmat::gather_all(built.C);
        // K = 9 > the 4 planted topics: the cleanup pass then moves some anchors.
        const std::vector<Index> greedy = plain_fast_anchor(dense, 9, 30, 9, false);
        const std::vector<Index> cleaned = plain_fast_anchor(dense, 9, 30, 9, true);
        ASSERT_NE(greedy, cleaned) << "the data must exercise the cleanup pass";
        EXPECT_EQ(find_anchors_fast(built.C, built.stats.unigram, 9, {30, 9, false}).anchors, greedy) << pr << "x" << pc;
        const AnchorResult found = find_anchors_fast(built.C, built.stats.unigram, 9, {30, 9, true});
        EXPECT_EQ(found.anchors, cleaned) << pr << "x" << pc;
        EXPECT_EQ(found.diag_r.size(), 9);
    }
    const cooc::CoocResult built = test::build_cooc(distmat::Grid::most_square(world), corpus.docs, o.num_words, 8);
    test::expect_stage_failed(world, [&] { find_anchors_fast(built.C, built.stats.unigram, 5, {4, 1, true}); },
                              {"projection_dim must be at least K = 5"});
}

// ---- SNPA, XRAY and SPA written plainly: explicit C̄, explicit residual vectors ----

/// C̄ = diag(C1)⁻¹ C, with zero rows for words that never occur.
Eigen::MatrixXd row_normalized(const Eigen::MatrixXd& C) {
    Eigen::MatrixXd C_bar = Eigen::MatrixXd::Zero(C.rows(), C.cols());
    for (Index i = 0; i < C.rows(); ++i) {
        const double p = C.row(i).sum();
        if (p > 0) C_bar.row(i) = C.row(i) / p;
    }
    return C_bar;
}

/// The residual x − Uh of the exact min_{h >= 0} ‖x − Uh‖ (capped: also 1ᵀh <= 1), by
/// enumeration of the supports of h with a QR of U's columns (test::brute_force_nnls; the
/// method under test works on Gram matrices and an active set instead).
Eigen::VectorXd plain_residual(const Eigen::MatrixXd& U, const Eigen::VectorXd& x, bool capped) {
    return x - U * test::brute_force_nnls(U, x, capped);
}

/// Every point's residual against the anchor rows A of X (rows of R).
Eigen::MatrixXd plain_residuals(const Eigen::MatrixXd& X, const std::vector<Index>& A, bool capped) {
    if (A.empty()) return X;
    Eigen::MatrixXd U(X.cols(), static_cast<Index>(A.size()));
    for (std::size_t l = 0; l < A.size(); ++l) U.col(static_cast<Index>(l)) = X.row(A[l]).transpose();
    Eigen::MatrixXd R(X.rows(), X.cols());
    for (Index i = 0; i < X.rows(); ++i) R.row(i) = plain_residual(U, X.row(i).transpose(), capped).transpose();
    return R;
}

/// argmax of value(i) over occurring words (p_i > 0) not in A; ties: the lowest index.
Index plain_argmax(const Eigen::VectorXd& value, const Eigen::MatrixXd& C, const std::vector<Index>& A) {
    Index best = -1;
    for (Index i = 0; i < value.size(); ++i) {
        if (!(C.row(i).sum() > 0) || std::count(A.begin(), A.end(), i)) continue;
        if (best < 0 || value(i) > value(best)) best = i;
    }
    return best;
}

/// SNPA (Gillis 2014): j = argmax ‖r_i‖², then every r_i = x_i − X_A h_i with h_i the
/// capped-simplex projection.
AnchorResult plain_snpa(const Eigen::MatrixXd& C, int K) {
    const Eigen::MatrixXd X = row_normalized(C);
    AnchorResult result;
    result.diag_r.resize(K);
    Eigen::MatrixXd R = X;
    for (int k = 0; k < K; ++k) {
        const Index j = plain_argmax(R.rowwise().squaredNorm(), C, result.anchors);
        result.diag_r(k) = R.row(j).norm();
        result.anchors.push_back(j);
        R = plain_residuals(X, result.anchors, true);
    }
    return result;
}

/// XRAY, "max" selection (Kumar et al. 2013): i = argmax ‖r_i‖, j* = argmax r_iᵀx_j / 1ᵀx_j,
/// residuals from plain NNLS.
AnchorResult plain_xray(const Eigen::MatrixXd& C, int K) {
    const Eigen::MatrixXd X = row_normalized(C);
    AnchorResult result;
    result.diag_r.resize(K);
    for (int k = 0; k < K; ++k) {
        const Eigen::MatrixXd R = plain_residuals(X, result.anchors, false);
        const Index i = plain_argmax(R.rowwise().norm(), C, result.anchors);
        Eigen::VectorXd score = X * R.row(i).transpose();
        for (Index j = 0; j < X.rows(); ++j)
            if (X.row(j).sum() > 0) score(j) /= X.row(j).sum();
        const Index j = plain_argmax(score, C, result.anchors);
        result.diag_r(k) = R.row(j).norm();
        result.anchors.push_back(j);
    }
    return result;
}

/// Textbook SPA (Gillis & Vavasis 2014) on the rows of C̄: R = X; K times j = argmax ‖R_j‖
/// over all rows (ties: the lowest index), R ← R(I − uuᵀ/‖u‖²) with u = R_jᵀ.
std::vector<Index> plain_spa(const Eigen::MatrixXd& C, int K) {
    Eigen::MatrixXd R = row_normalized(C);
    std::vector<Index> S;
    for (int k = 0; k < K; ++k) {
        Index j = 0;
        const Eigen::VectorXd norms = R.rowwise().squaredNorm();
        for (Index i = 1; i < R.rows(); ++i)
            if (norms(i) > norms(j)) j = i;
        S.push_back(j);
        const Eigen::VectorXd u = R.row(j).transpose();
        R -= (R * u) * u.transpose() / u.squaredNorm();
    }
    return S;
}

void expect_same_result(const AnchorResult& found, const AnchorResult& expected, const std::string& what) {
    EXPECT_EQ(found.anchors, expected.anchors) << what;
    ASSERT_EQ(found.diag_r.size(), expected.diag_r.size()) << what;
    for (Index k = 0; k < expected.diag_r.size(); ++k)
        EXPECT_LE(std::abs(found.diag_r(k) - expected.diag_r(k)), 1e-8 * expected.diag_r(k)) << what << ", k = " << k;
}

TEST(SnpaXray, EqualPlainOneProcessImplementationsAtAnyLayout) {
    // K = 8 > the 4 planted topics: the later anchors are where SNPA, XRAY and SPA differ
    // (measured: Alg. 2 picks another 8th word, and SNPA's and XRAY's diag_r differ from
    // the 6th on), and SNPA's cap is active for some words.
    const auto world = mpi::Comm::world();
    const synth::SynthOptions o = small_corpus();
    const synth::SynthCorpus corpus = synth::generate(o);
    const int K = 8;
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const cooc::CoocResult built = test::build_cooc(distmat::Grid::create(world, pr, pc), corpus.docs, o.num_words, 8);
        const Eigen::MatrixXd dense = distmat::gather_all(built.C);
        const std::string shape = std::to_string(pr) + "x" + std::to_string(pc);
        const AnchorResult snpa = find_anchors_snpa(built.C, built.stats.unigram, K);
        const AnchorResult expected_snpa = plain_snpa(dense, K);
        expect_same_result(snpa, expected_snpa, "SNPA " + shape);
        const AnchorResult xray = find_anchors_xray(built.C, built.stats.unigram, K);
        const AnchorResult expected_xray = plain_xray(dense, K);
        expect_same_result(xray, expected_xray, "XRAY " + shape);
        const Index unused = (built.stats.unigram.array() <= 0).count();
        ASSERT_GT(unused, 0) << "the corpus must have words that never occur";
        EXPECT_EQ(snpa.zero_rows, unused);
        EXPECT_EQ(xray.zero_rows, unused);
        // The three algorithms are different on this data, so each comparison tells.
        EXPECT_NE(plain_spa(dense, K), expected_snpa.anchors);
        EXPECT_GT((expected_snpa.diag_r - expected_xray.diag_r).cwiseAbs().maxCoeff(), 1e-3 * expected_snpa.diag_r(0));
    }
    // A dense random C (no topic structure, two words that never occur, one in the middle
    // of a rank's range): none of the anchor finders' assumptions hold, only the arithmetic.
    std::mt19937_64 engine(8);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Eigen::MatrixXd M(24, 24);
    for (Index e = 0; e < M.size(); ++e) M.data()[e] = std::pow(uniform(engine), 3);
    M = (M + M.transpose()).eval();
    for (const Index unused : {5, 17}) M.row(unused).setZero(), M.col(unused).setZero();
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const std::string shape = std::to_string(pr) + "x" + std::to_string(pc);
        distmat::DistMatrix C(distmat::Grid::create(world, pr, pc), 24, 24, 3);
        test::fill(C, M);
        const Eigen::VectorXd p = distmat::row_sums(C);
        expect_same_result(find_anchors_snpa(C, p, K), plain_snpa(M, K), "random SNPA " + shape);
        expect_same_result(find_anchors_xray(C, p, K), plain_xray(M, K), "random XRAY " + shape);
    }
}

/// A separable C = B A Bᵀ (N = 40, K = 5): B has the planted anchor rows (one nonzero
/// topic each), ordinary rows with at least two nonzero topics and one all-zero row (a
/// word that never occurs); A is positive definite with positive entries. Then every row
/// of C̄ is a convex combination of the anchor rows, the unique vertices of their hull.
struct Separable {
    Eigen::MatrixXd C;
    std::vector<Index> anchors;
    Index unused = 30;
};
Separable separable_matrix() {
    Separable s;
    const Index N = 40;
    const int K = 5;
    s.anchors = {3, 11, 19, 27, 38};
    std::mt19937_64 engine(77);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Eigen::MatrixXd B = Eigen::MatrixXd::Zero(N, K);
    for (Index i = 0; i < N; ++i) {
        if (i == s.unused) continue;
        const auto planted = std::find(s.anchors.begin(), s.anchors.end(), i);
        if (planted != s.anchors.end()) {
            B(i, planted - s.anchors.begin()) = 0.5 + uniform(engine);
            continue;
        }
        while ((B.row(i).array() > 0).count() < 2)
            for (int k = 0; k < K; ++k) B(i, k) = uniform(engine) < 0.4 ? 0.0 : uniform(engine);
    }
    Eigen::MatrixXd M = Eigen::MatrixXd::Identity(K, K);
    for (Index e = 0; e < M.size(); ++e) M.data()[e] += 0.3 * uniform(engine);
    const Eigen::MatrixXd A = M * M.transpose();
    s.C = B * A * B.transpose();
    s.C /= s.C.sum();
    return s;
}

TEST(SnpaXray, FindThePlantedAnchorsOfASeparableMatrix) {
    const auto world = mpi::Comm::world();
    const Separable sep = separable_matrix();
    const std::set<Index> planted(sep.anchors.begin(), sep.anchors.end());
    const std::vector<Index> spa = plain_spa(sep.C, 5);
    ASSERT_EQ(std::set<Index>(spa.begin(), spa.end()), planted)
        << "the matrix must be separable enough for textbook SPA";
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        distmat::DistMatrix C(distmat::Grid::create(world, pr, pc), sep.C.rows(), sep.C.cols(), 3);
        test::fill(C, sep.C);
        const Eigen::VectorXd p = distmat::row_sums(C);
        const std::string shape = std::to_string(pr) + "x" + std::to_string(pc);
        for (const auto& [name, found] : {std::pair{std::string("SNPA"), find_anchors_snpa(C, p, 5)},
                                          std::pair{std::string("XRAY"), find_anchors_xray(C, p, 5)}}) {
            EXPECT_EQ(std::set<Index>(found.anchors.begin(), found.anchors.end()), planted) << name << " " << shape;
            EXPECT_EQ(found.zero_rows, 1) << name << " " << shape;
        }
        // The plain implementations agree too (they find the same order).
        expect_same_result(find_anchors_snpa(C, p, 5), plain_snpa(sep.C, 5), "SNPA " + shape);
        expect_same_result(find_anchors_xray(C, p, 5), plain_xray(sep.C, 5), "XRAY " + shape);
    }
}

TEST(SnpaXray, Alg2IsSpaOnTheSameNormalization) {
    // jsmf's pivoted QR (find_anchors) picks the anchors textbook SPA picks on the rows of
    // C̄, in the same order: the pivot rule argmax ‖residual‖ and the Gram–Schmidt update
    // are SPA's argmax and projection, written on C's rows without forming C̄.
    const auto world = mpi::Comm::world();
    const synth::SynthOptions o = small_corpus();
    const synth::SynthCorpus corpus = synth::generate(o);
    const Separable sep = separable_matrix();
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const std::string shape = std::to_string(pr) + "x" + std::to_string(pc);
        const cooc::CoocResult built = test::build_cooc(distmat::Grid::create(world, pr, pc), corpus.docs, o.num_words, 8);
        const Eigen::MatrixXd dense = distmat::gather_all(built.C);
        EXPECT_EQ(find_anchors(built.C, built.stats.unigram, 10).anchors, plain_spa(dense, 10)) << "corpus " << shape;
        distmat::DistMatrix C(distmat::Grid::create(world, pr, pc), sep.C.rows(), sep.C.cols(), 3);
        test::fill(C, sep.C);
        EXPECT_EQ(find_anchors(C, distmat::row_sums(C), 5).anchors, plain_spa(sep.C, 5)) << "separable " << shape;
    }
}

TEST(SnpaXray, CheckTheirArgumentsOnEveryRank) {
    const auto world = mpi::Comm::world();
    const synth::SynthOptions o = small_corpus();
    const synth::SynthCorpus corpus = synth::generate(o);
    const cooc::CoocResult built = test::build_cooc(distmat::Grid::most_square(world), corpus.docs, o.num_words, 8);
    using Finder = AnchorResult (*)(const distmat::DistMatrix&, const Eigen::VectorXd&, int, const Candidates&);
    for (const auto finder_with : {Finder{&find_anchors_snpa}, Finder{&find_anchors_xray}}) {
        const auto finder = [&](const distmat::DistMatrix& C, const Eigen::VectorXd& p, int K) {
            return finder_with(C, p, K, {});
        };
        test::expect_stage_failed(world, [&] { finder(built.C, built.stats.unigram, 1); },
                                  {"topics must satisfy 2 <= K < N = 70"});
        test::expect_stage_failed(world, [&] { finder(built.C, built.stats.unigram, 70); },
                                  {"topics must satisfy 2 <= K < N = 70"});
        test::expect_stage_failed(world, [&] { finder(built.C, built.stats.unigram.head(69), 5); },
                                  {"the row sums do not match C"});
        Eigen::VectorXd p = Eigen::VectorXd::Zero(70);
        p.head(3).setOnes();
        test::expect_stage_failed(world, [&] { finder(built.C, p, 4); }, {"only 3 words occur, fewer than K = 4"});
    }
}

}  // namespace
}  // namespace jsmf::anchors
