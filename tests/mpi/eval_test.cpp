// SPDX-License-Identifier: MIT
// The distributed metrics at 1-4 ranks and every grid shape against plain one-process
// Eigen computations (dense C̄ and B A Bᵀ), and the corpus counts of coherence against a
// brute-force count over the whole corpus.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <random>

#include "jsmf/eval/codoc.hpp"
#include "jsmf/eval/dist_metrics.hpp"
#include "test_support.hpp"

namespace jsmf::eval {
namespace {

constexpr Index kWords = 37;  // with blocks of 4 (and 5 × 3), the last blocks are ragged
constexpr Index kZeroRow = 11;
const std::vector<Index> kAnchors = {3, 17, 29, 0, 36};

struct BlockShape {
    int rows, cols;
};
const std::vector<BlockShape> kBlocks = {{4, 4}, {5, 3}};

// The same draws on every rank (a fixed seed), so every rank holds the same inputs.
Eigen::MatrixXd uniform_matrix(Index rows, Index cols, Seed seed) {
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Eigen::MatrixXd M(rows, cols);
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) M(i, j) = uniform(engine);
    return M;
}

// Symmetric, nonnegative, summing to 1, with row and column `zero` all zero.
Eigen::MatrixXd random_cooccurrence(Index N, Seed seed, Index zero) {
    const Eigen::MatrixXd M = uniform_matrix(N, N, seed);
    Eigen::MatrixXd C = M + M.transpose();
    C.row(zero).setZero();
    C.col(zero).setZero();
    return C / C.sum();
}

Eigen::MatrixXd column_stochastic(Index rows, Index cols, Seed seed) {
    Eigen::MatrixXd M = uniform_matrix(rows, cols, seed);
    for (Index j = 0; j < cols; ++j) M.col(j) /= M.col(j).sum();
    return M;
}

// C̄: rows divided by their sums; rows summing to 0 stay 0.
Eigen::MatrixXd row_normalized(const Eigen::MatrixXd& C) {
    Eigen::MatrixXd Cbar = C;
    for (Index i = 0; i < C.rows(); ++i) {
        const double p = C.row(i).sum();
        if (p > 0) Cbar.row(i) /= p;
    }
    return Cbar;
}

// The authors' recoveryError, densely: ‖(B̆ᵀ C̄_S − C̄)_i‖₂ per word.
Eigen::VectorXd dense_recovery_errors(const Eigen::MatrixXd& C, const std::vector<Index>& anchors,
                                      const Eigen::MatrixXd& B_breve) {
    const Eigen::MatrixXd Cbar = row_normalized(C);
    Eigen::MatrixXd Cbar_S(static_cast<Index>(anchors.size()), C.cols());
    for (std::size_t k = 0; k < anchors.size(); ++k) Cbar_S.row(static_cast<Index>(k)) = Cbar.row(anchors[k]);
    const Eigen::MatrixXd residuals = B_breve.transpose() * Cbar_S - Cbar;
    return residuals.rowwise().norm();
}

distmat::DistMatrix distribute(const std::shared_ptr<const distmat::Grid>& grid, const Eigen::MatrixXd& M, BlockShape block) {
    distmat::DistMatrix A(grid, M.rows(), M.cols(), block.rows, block.cols);
    test::fill(A, M);
    return A;
}

TEST(RecoveryErrors, MatchDenseReference) {
    const auto world = mpi::Comm::world();
    const Eigen::MatrixXd C = random_cooccurrence(kWords, 11, kZeroRow);
    const Index K = static_cast<Index>(kAnchors.size());
    const Eigen::MatrixXd B_breve = column_stochastic(K, kWords, 12);
    const Eigen::VectorXd expected = dense_recovery_errors(C, kAnchors, B_breve);
    ASSERT_GT(expected(kZeroRow), 0.1 * expected.maxCoeff());  // the zero row's residual is Σ_k B̆_ki C̄_{s_k}
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const auto grid = distmat::Grid::create(world, pr, pc);
        for (const BlockShape block : kBlocks) {
            const distmat::DistMatrix D = distribute(grid, C, block);
            const Eigen::VectorXd errors = recovery_errors(D, kAnchors, B_breve);
            ASSERT_EQ(errors.size(), kWords);
            EXPECT_LE((errors - expected).lpNorm<Eigen::Infinity>(), 1e-12 * expected.maxCoeff())
                << "grid " << pr << "x" << pc << ", blocks " << block.rows << "x" << block.cols;
        }
    }
}

// With B̆'s anchor columns the unit vectors e_k (as recover_topics sets them), the anchors
// reproduce themselves: their errors vanish while the other words' do not.
TEST(RecoveryErrors, AnchorsWithUnitColumnsHaveNoError) {
    const auto world = mpi::Comm::world();
    const auto grid = distmat::Grid::most_square(world);
    const Eigen::MatrixXd C = random_cooccurrence(kWords, 21, kZeroRow);
    const Index K = static_cast<Index>(kAnchors.size());
    Eigen::MatrixXd B_breve = column_stochastic(K, kWords, 22);
    for (Index k = 0; k < K; ++k) B_breve.col(kAnchors[static_cast<std::size_t>(k)]) = Eigen::VectorXd::Unit(K, k);
    const distmat::DistMatrix D = distribute(grid, C, {4, 4});
    const Eigen::VectorXd errors = recovery_errors(D, kAnchors, B_breve);
    const Eigen::VectorXd expected = dense_recovery_errors(C, kAnchors, B_breve);
    EXPECT_LE((errors - expected).lpNorm<Eigen::Infinity>(), 1e-12 * expected.maxCoeff());
    for (const Index s : kAnchors) EXPECT_LE(errors(s), 1e-15) << "anchor " << s;
    EXPECT_GT(errors(1), 1e-3);
}

TEST(RecoveryErrors, BadInputsFailOnEveryRank) {
    const auto world = mpi::Comm::world();
    const auto grid = distmat::Grid::most_square(world);
    const distmat::DistMatrix D = distribute(grid, random_cooccurrence(kWords, 31, kZeroRow), {4, 4});
    const Eigen::MatrixXd B_breve = column_stochastic(2, kWords, 32);
    test::expect_stage_failed(world, [&] { recovery_errors(D, {0, kWords}, B_breve); }, {"anchor id 37 out of range"});
    test::expect_stage_failed(world, [&] { recovery_errors(D, {0, 1, 2}, B_breve); }, {"B_breve is 2 x 37"});
}

struct DenseApproximation {
    double total, off_diagonal, diagonal;
};

// The authors' approximationError, densely.
DenseApproximation dense_approximation_error(const Eigen::MatrixXd& C, const Eigen::MatrixXd& B,
                                             const Eigen::MatrixXd& A) {
    const Eigen::MatrixXd reconstructed = B * A * B.transpose();
    DenseApproximation e{};
    e.total = (C - reconstructed).norm();
    e.diagonal = (C.diagonal() - reconstructed.diagonal()).norm();
    e.off_diagonal = std::sqrt(e.total * e.total - e.diagonal * e.diagonal);
    return e;
}

TEST(ApproximationError, MatchesDenseReference) {
    const auto world = mpi::Comm::world();
    const Index K = 5;
    const Eigen::MatrixXd C = random_cooccurrence(kWords, 41, kZeroRow);
    const Eigen::MatrixXd B = column_stochastic(kWords, K, 42);
    const Eigen::MatrixXd M = uniform_matrix(K, K, 43);
    const Eigen::MatrixXd A = (M + M.transpose()) / (M + M.transpose()).sum();
    const DenseApproximation expected = dense_approximation_error(C, B, A);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const auto grid = distmat::Grid::create(world, pr, pc);
        for (const BlockShape block : kBlocks) {
            const distmat::DistMatrix D = distribute(grid, C, block);
            const ApproximationError e = approximation_error(D, B, A);
            EXPECT_NEAR(e.total, expected.total, 1e-12 * expected.total) << "grid " << pr << "x" << pc;
            EXPECT_NEAR(e.diagonal, expected.diagonal, 1e-12 * expected.total) << "grid " << pr << "x" << pc;
            EXPECT_NEAR(e.off_diagonal, expected.off_diagonal, 1e-12 * expected.total) << "grid " << pr << "x" << pc;
        }
    }
}

// C = B A Bᵀ exactly: every error is rounding.
TEST(ApproximationError, ExactFactorizationHasNoError) {
    const auto world = mpi::Comm::world();
    const auto grid = distmat::Grid::most_square(world);
    const Index K = 4;
    const Eigen::MatrixXd B = column_stochastic(kWords, K, 51);
    const Eigen::MatrixXd M = uniform_matrix(K, K, 52);
    const Eigen::MatrixXd A = (M + M.transpose()) / (M + M.transpose()).sum();
    const Eigen::MatrixXd C = B * A * B.transpose();
    const ApproximationError e = approximation_error(distribute(grid, C, {4, 4}), B, A);
    EXPECT_LE(e.total, 1e-15 * C.norm());
    // And a perturbed diagonal shows up in the diagonal part only.
    Eigen::MatrixXd perturbed = C;
    perturbed.diagonal().array() += 1e-3;
    const ApproximationError f = approximation_error(distribute(grid, perturbed, {4, 4}), B, A);
    EXPECT_NEAR(f.diagonal, 1e-3 * std::sqrt(static_cast<double>(kWords)), 1e-12);
    EXPECT_LE(f.off_diagonal, 1e-15 * C.norm());
}

// A nonnegative C whose rows of C̄ lie near the triangle of three profiles: the centered
// covariance has two clearly separated leading eigenvalues and a tiny third.
Eigen::MatrixXd triangle_rows(Index N) {
    Eigen::MatrixXd weights = uniform_matrix(N, 3, 61);
    weights.col(0) *= 4.0;  // spread the first component most: λ₁ well above λ₂
    const Eigen::MatrixXd profiles = column_stochastic(N, 3, 62);
    Eigen::MatrixXd C = weights * profiles.transpose() + 1e-4 * uniform_matrix(N, N, 63) / static_cast<double>(N);
    return C / C.sum();
}

// The reference: dense C̄, centered, the covariance's top two eigenvectors, signs fixed
// as documented (each direction's largest-magnitude entry positive), coordinates X_c V.
Eigen::MatrixXd dense_projection(const Eigen::MatrixXd& C, Eigen::VectorXd& eigenvalues) {
    const Eigen::MatrixXd Cbar = row_normalized(C);
    const Eigen::RowVectorXd mean = Cbar.colwise().mean();
    const Eigen::MatrixXd centered = Cbar.rowwise() - mean;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(centered.transpose() * centered);
    eigenvalues = solver.eigenvalues().reverse();
    const Index n = C.cols();
    Eigen::MatrixXd V(n, 2);
    V.col(0) = solver.eigenvectors().col(n - 1);
    V.col(1) = solver.eigenvectors().col(n - 2);
    for (Index c = 0; c < 2; ++c) {
        Index largest = 0;
        for (Index i = 1; i < n; ++i)
            if (std::abs(V(i, c)) > std::abs(V(largest, c))) largest = i;
        if (V(largest, c) < 0) V.col(c) *= -1;
    }
    return centered * V;
}

TEST(ProjectRows2d, MatchesDenseEigenvectors) {
    const auto world = mpi::Comm::world();
    const Eigen::MatrixXd C = triangle_rows(kWords);
    Eigen::VectorXd lambda;
    const Eigen::MatrixXd expected = dense_projection(C, lambda);
    ASSERT_GT(lambda(0), 1.5 * lambda(1));  // the input has the gaps the test relies on
    ASSERT_GT(lambda(1), 1e3 * lambda(2));
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const auto grid = distmat::Grid::create(world, pr, pc);
        for (const BlockShape block : kBlocks) {
            const distmat::DistMatrix D = distribute(grid, C, block);
            const Eigen::MatrixXd coordinates = project_rows_2d(D);
            ASSERT_EQ(coordinates.rows(), kWords);
            ASSERT_EQ(coordinates.cols(), 2);
            EXPECT_LE((coordinates - expected).lpNorm<Eigen::Infinity>(), 1e-8)
                << "grid " << pr << "x" << pc << ", blocks " << block.rows << "x" << block.cols;
            // Replicated: every rank holds the root's coordinates exactly.
            Eigen::MatrixXd root_copy = coordinates;
            mpi::broadcast(world, root_copy.data(), static_cast<std::size_t>(root_copy.size()), 0);
            EXPECT_EQ(coordinates, root_copy);
            // Deterministic for a seed.
            EXPECT_EQ(project_rows_2d(D), coordinates);
        }
    }
}

// --- count_codocuments ------------------------------------------------------------------

constexpr Index kVocabulary = 10;

corpus::Document make_document(std::int64_t id, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& bag) {
    corpus::Document doc;
    doc.key.id = id;
    for (const auto& [word, count] : bag) {
        doc.words.push_back(word);
        doc.counts.push_back(count);
    }
    return doc;
}

// Words 7, 8 and 9 occur only in documents the filter skips.
corpus::Shard small_corpus() {
    const std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> bags = {
        {{0, 2}, {1, 1}, {2, 1}},
        {{0, 1}, {3, 2}},
        {{7, 1}, {8, 1}},  // 2 tokens: too short
        {{9, 5}},          // 1 distinct word: too narrow
        {{1, 1}, {2, 1}, {3, 1}, {4, 1}},
        {{2, 3}, {4, 1}},
        {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}},
        {{5, 2}, {6, 2}},
        {{7, 1}, {9, 1}},  // too short
        {{1, 1}, {2, 2}, {6, 1}},
        {{3, 1}, {4, 2}, {6, 1}},
        {{0, 3}, {5, 1}, {6, 1}},
        {{0, 1}, {7, 1}},  // too short: 0 and 7 never co-occur in a counted document
    };
    corpus::Shard shard;
    for (std::size_t m = 0; m < bags.size(); ++m) shard.append(make_document(static_cast<std::int64_t>(m) + 1, bags[m]));
    return shard;
}

cooc::CoocOptions codoc_filter() {
    cooc::CoocOptions filter;
    filter.min_tokens = 3;
    filter.min_distinct = 2;
    return filter;
}

// Two topics' pairs: (0, 1) appears in both, (7, 0) never co-occurs in a counted
// document, (8, 7) only in a skipped one.
const std::vector<WordPair> kPairs = {{0, 1}, {0, 2}, {1, 2}, {5, 6}, {6, 0}, {0, 1}, {7, 0}, {8, 7}, {4, 5}, {3, 6}};

// Brute force over the whole corpus with the filter spelled out.
CodocCounts brute_force_counts(const corpus::Shard& all, Index num_words, const std::vector<WordPair>& pairs) {
    CodocCounts out;
    out.d1.assign(static_cast<std::size_t>(num_words), 0);
    out.d2.assign(pairs.size(), 0);
    for (Index m = 0; m < all.num_docs(); ++m) {
        const corpus::Document doc = all.document(m);
        Index tokens = 0;
        for (const auto c : doc.counts) tokens += c;
        if (tokens < 3 || doc.words.size() < 2) continue;
        ++out.num_docs;
        auto has = [&](Index w) { return std::find(doc.words.begin(), doc.words.end(), w) != doc.words.end(); };
        for (Index w = 0; w < num_words; ++w) out.d1[static_cast<std::size_t>(w)] += has(w) ? 1 : 0;
        for (std::size_t p = 0; p < pairs.size(); ++p) out.d2[p] += has(pairs[p].higher) && has(pairs[p].lower) ? 1 : 0;
    }
    return out;
}

TEST(CountCodocuments, MatchesBruteForce) {
    const auto world = mpi::Comm::world();
    const corpus::Shard all = small_corpus();
    const CodocCounts expected = brute_force_counts(all, kVocabulary, kPairs);
    // The corpus covers what the test is about.
    ASSERT_EQ(expected.num_docs, 9);
    ASSERT_EQ(expected.d1[7] + expected.d1[8] + expected.d1[9], 0);
    ASSERT_EQ(expected.d2[6], 0);
    ASSERT_EQ(expected.d2[0], 2);
    const corpus::Shard mine = test::share_of(all, world);
    for (const bool root_only : {true, false}) {
        corpus::ShardStream stream(mine);
        const CodocCounts counts = count_codocuments(world, stream, kVocabulary, codoc_filter(), kPairs, root_only);
        if (root_only && !world.is_root()) {
            EXPECT_TRUE(counts.d1.empty());
            EXPECT_TRUE(counts.d2.empty());
            EXPECT_EQ(counts.num_docs, 0);
            continue;
        }
        EXPECT_EQ(counts.d1, expected.d1) << "root_only " << root_only;
        EXPECT_EQ(counts.d2, expected.d2) << "root_only " << root_only;
        EXPECT_EQ(counts.num_docs, expected.num_docs);
        EXPECT_EQ(counts.d2[0], counts.d2[5]);  // the pair both topics share
    }
}

// The D1 of the documents that built C is the doc_freq build_cooccurrence reports.
TEST(CountCodocuments, D1IsTheDocumentFrequencyOfC) {
    const auto world = mpi::Comm::world();
    const auto grid = distmat::Grid::most_square(world);
    const corpus::Shard all = small_corpus();
    const corpus::Shard mine = test::share_of(all, world);
    corpus::ShardStream for_cooc(mine);
    cooc::CoocOptions options = codoc_filter();
    options.block_size = 3;
    const cooc::CoocResult built = cooc::build_cooccurrence(grid, kVocabulary, for_cooc, options);
    corpus::ShardStream for_codoc(mine);
    const CodocCounts counts = count_codocuments(world, for_codoc, kVocabulary, options, {}, false);
    EXPECT_EQ(counts.num_docs, built.stats.num_docs);
    ASSERT_EQ(static_cast<Index>(counts.d1.size()), kVocabulary);
    for (Index w = 0; w < kVocabulary; ++w) EXPECT_EQ(counts.d1[static_cast<std::size_t>(w)], built.stats.doc_freq(w));
    EXPECT_TRUE(counts.d2.empty());
}

// A stream that fails after its first document on one rank only.
class FailingStream : public corpus::DocumentStream {
public:
    FailingStream(const corpus::Shard& shard, bool fail) : inner_(shard), fail_(fail) {}
    bool next(corpus::Document& doc) override {
        if (fail_ && served_ == 1) throw InputError("broken.txt:3", "count must be positive");
        ++served_;
        return inner_.next(doc);
    }

private:
    corpus::ShardStream inner_;
    bool fail_;
    int served_ = 0;
};

TEST(CountCodocuments, ReadingErrorOnOneRankFailsEveryRank) {
    const auto world = mpi::Comm::world();
    const int bad = std::min(1, world.size() - 1);
    const corpus::Shard mine = test::share_of(small_corpus(), world);
    for (const bool root_only : {true, false}) {
        FailingStream stream(mine, world.rank() == bad);
        test::expect_stage_failed(
            world, [&] { count_codocuments(world, stream, kVocabulary, codoc_filter(), kPairs, root_only); },
            {"broken.txt:3: count must be positive", test::rank_tag(bad, world.size()), "stage codoc"});
    }
}

TEST(CountCodocuments, WordsOutsideTheVocabularyFailEveryRank) {
    const auto world = mpi::Comm::world();
    const corpus::Shard mine = test::share_of(small_corpus(), world);
    {  // a document's word id
        corpus::ShardStream stream(mine);
        test::expect_stage_failed(world, [&] { count_codocuments(world, stream, 9, codoc_filter(), {}); },
                                  {"word id 10 is outside the vocabulary of 9 words"});
    }
    {  // a requested pair
        corpus::ShardStream stream(mine);
        test::expect_stage_failed(world, [&] { count_codocuments(world, stream, kVocabulary, codoc_filter(), {{2, 10}}); },
                                  {"word pair (2, 10) is outside the vocabulary"});
    }
}

}  // namespace
}  // namespace jsmf::eval
