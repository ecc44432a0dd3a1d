// SPDX-License-Identifier: MIT
// The compressed pipeline at 1–4 ranks: C·X from the documents equals the formed C's; the
// compressed subspace is the dense one; ENN + LAW recover a planted model, the same at
// any rank count and whatever the random start.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/distmat/eig.hpp"
#include "jsmf/distmat/grid.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/core/traffic.hpp"
#include "jsmf/eval/metrics.hpp"
#include "jsmf/eval/truth.hpp"
#include "jsmf/fit/cost.hpp"
#include "jsmf/lowrank/doc_operator.hpp"
#include "jsmf/lowrank/matrix_operator.hpp"
#include "jsmf/lowrank/enn.hpp"
#include "jsmf/lowrank/factor_metrics.hpp"
#include "jsmf/lowrank/law.hpp"
#include "jsmf/lowrank/point_finders.hpp"
#include "jsmf/lowrank/sketch.hpp"
#include "jsmf/anchors/fast_anchor.hpp"
#include "jsmf/anchors/snpa_xray.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/synth/synth.hpp"
#include "mpi/test_support.hpp"

namespace jsmf::lowrank {
namespace {

/// This rank's share of a corpus: documents m with m % P == rank.
corpus::Shard deal(const corpus::Shard& all, const mpi::Comm& comm) {
    corpus::Shard mine;
    for (Index m = 0; m < all.num_docs(); ++m)
        if (m % comm.size() == comm.rank()) mine.append(all.document(m));
    return mine;
}

/// A document of these word counts, keyed by m.
corpus::Document document_of(const std::map<std::uint32_t, std::uint32_t>& counts, Index m) {
    corpus::Document d;
    d.key = {0, m + 1};
    for (const auto& [w, c] : counts) {
        d.words.push_back(w);
        d.counts.push_back(c);
    }
    return d;
}

/// Random documents, some with one token (n < 2), some short (filtered by min_tokens).
corpus::Shard random_corpus(Index docs, Index words, Seed seed) {
    std::mt19937_64 engine(seed);
    std::uniform_int_distribution<Index> length(1, 25), word(0, words - 1);
    corpus::Shard all;
    for (Index m = 0; m < docs; ++m) {
        std::map<std::uint32_t, std::uint32_t> counts;
        const Index n = m % 7 == 0 ? 1 : length(engine);
        for (Index t = 0; t < n; ++t) ++counts[static_cast<std::uint32_t>(word(engine))];
        all.append(document_of(counts, m));
    }
    return all;
}

/// The formed C (jsmf cooc's), replicated.
Eigen::MatrixXd dense_cooc(const mpi::Comm& comm, const corpus::Shard& mine, Index words, const cooc::CoocOptions& o) {
    const auto grid = distmat::Grid::create(comm, 1, comm.size());
    corpus::ShardStream stream(mine);
    const cooc::CoocResult r = cooc::build_cooccurrence(grid, words, stream, o);
    return distmat::gather_all(r.C);
}

TEST(DocumentOperator, EqualsTheFormedC) {
    const mpi::Comm world = mpi::Comm::world();
    const Index N = 57;
    const corpus::Shard all = random_corpus(400, N, 3);
    const corpus::Shard mine = deal(all, world);
    for (const Index min_tokens : {Index{2}, Index{6}})
    for (const cooc::Estimator estimator : {cooc::Estimator::unbiased, cooc::Estimator::tfidf}) {
        cooc::CoocOptions o;
        o.min_tokens = min_tokens;
        o.min_distinct = min_tokens == 2 ? 1 : 3;
        o.estimator = estimator;  // tf-idf: H̃'s columns the documents' tf-idf vectors, no diagonal term
        const Eigen::MatrixXd C = dense_cooc(world, mine, N, o);
        const DocumentOperator op(world, N, mine, o);
        const distmat::RowPartition& rows = op.rows();
        const Eigen::MatrixXd X = distmat::random_rows(0, N, 5, 17);
        const Eigen::MatrixXd CX = distmat::gather_rows(world, rows, op.apply(distmat::local_rows(rows, world.rank(), X)));
        EXPECT_LT((CX - C * X).cwiseAbs().maxCoeff(), 1e-14 * (C * X).cwiseAbs().maxCoeff())
            << "min_tokens " << min_tokens << " " << name_of(estimator);
        if (estimator == cooc::Estimator::tfidf) {
            EXPECT_EQ(op.diagonal().size() > 0 ? op.diagonal().cwiseAbs().maxCoeff() : 0.0, 0.0);
            const Eigen::VectorXd diagonal = distmat::gather_rows(world, rows, op.cooc_diagonal());
            EXPECT_LT((diagonal - C.diagonal()).cwiseAbs().maxCoeff(), 1e-14 * C.diagonal().maxCoeff());
        }
        // Row sums are the unigram, summing to 1; the document frequencies are counts.
        const Eigen::VectorXd p = distmat::gather_rows(world, rows, op.row_sums());
        EXPECT_LT((p - C.rowwise().sum()).cwiseAbs().maxCoeff(), 1e-15);
        EXPECT_NEAR(p.sum(), 1.0, 1e-12);
        EXPECT_GT(op.stats().num_docs_skipped, 0);
        EXPECT_EQ(op.stats().num_docs + op.stats().num_docs_skipped, 400);
    }
}

// C given by its rows (a co-occurrence file's, lowrank::MatrixOperator): its products, its
// diagonal and row sums are the formed C's, on an uneven split that leaves a rank no rows
// (4 ranks, N = 3), and one rank's to rounding; the frequencies are passed through.
TEST(MatrixOperator, AppliesCsRowsAsTheFormedC) {
    const mpi::Comm world = mpi::Comm::world();
    for (const Index N : {Index{57}, Index{3}}) {
        Eigen::MatrixXd C = Eigen::MatrixXd::Random(N, N).cwiseAbs();
        C = (C + C.transpose()).eval() / (2 * C.sum());
        std::vector<Index> counts(static_cast<std::size_t>(world.size()), 0);
        for (Index i = 0; i < N; ++i) ++counts[static_cast<std::size_t>((i * 7) % world.size())];  // uneven
        const distmat::RowPartition rows = distmat::RowPartition::of_counts(counts);
        const Index begin = rows.begin(world.rank()), mine = rows.rows(world.rank());
        std::vector<std::int64_t> df(static_cast<std::size_t>(mine));
        for (Index i = 0; i < mine; ++i) df[static_cast<std::size_t>(i)] = 10 + begin + i;
        const MatrixOperator op(world, rows, C.middleRows(begin, mine), df, cooc::Estimator::unbiased);
        const Eigen::MatrixXd X = distmat::random_rows(0, N, 5, 17);
        const Eigen::MatrixXd CX = distmat::gather_rows(world, rows, op.apply(distmat::local_rows(rows, world.rank(), X)));
        EXPECT_LT((CX - C * X).cwiseAbs().maxCoeff(), 1e-15 * N * (C * X).cwiseAbs().maxCoeff());
        EXPECT_EQ(op.products(), 1);
        EXPECT_EQ(op.column_products(), 5);
        EXPECT_EQ(distmat::gather_rows(world, rows, op.cooc_diagonal()), Eigen::VectorXd(C.diagonal()));
        EXPECT_LT((distmat::gather_rows(world, rows, op.row_sums()) - C.rowwise().sum()).cwiseAbs().maxCoeff(), 1e-15);
        EXPECT_EQ(op.doc_freq(), df);
        // One rank alone: the same rows times the same X (BLAS may block a taller product
        // otherwise: rounding, not bits).
        const mpi::Comm self(MPI_COMM_SELF);
        const MatrixOperator alone(self, distmat::RowPartition::balanced(N, 1), C, std::vector<std::int64_t>(N, 1),
                                   cooc::Estimator::unbiased);
        EXPECT_LT((CX - alone.apply(X)).cwiseAbs().maxCoeff(), 1e-15 * N * (C * X).cwiseAbs().maxCoeff()) << N;
    }
}

// fit --update-mode sketch's operator: the old documents by their sketch, the new exactly.
// With the whole spectrum (r = N, C's exact decomposition) it is the C of all the documents:
// products, diagonal, row sums to rounding, frequencies exactly; with a decay the old C's
// weight is γ W (checked against the formed mixture); with r < N the old part is the
// best rank-r algebraic part: its error is the dropped eigenvalues' (Weyl), not more.
TEST(SketchOperator, IsTheCOfOldAndNewDocuments) {
    const mpi::Comm world = mpi::Comm::world();
    const Index N = 41;
    const corpus::Shard old_docs = random_corpus(300, N, 5), new_docs = random_corpus(200, N, 6);
    corpus::Shard both = old_docs;
    for (Index m = 0; m < new_docs.num_docs(); ++m) both.append(new_docs.document(m));
    const cooc::CoocOptions o;
    const DocumentOperator old_op(world, N, deal(old_docs, world), o), new_op(world, N, deal(new_docs, world), o),
        all_op(world, N, deal(both, world), o);
    const double W = static_cast<double>(old_op.stats().num_docs), M = static_cast<double>(new_op.stats().num_docs);
    ASSERT_EQ(W + M, static_cast<double>(all_op.stats().num_docs));
    const distmat::RowPartition& rows = all_op.rows();
    const Eigen::MatrixXd X = distmat::random_rows(0, N, 4, 9);
    const Eigen::MatrixXd mine = distmat::local_rows(rows, world.rank(), X);
    const auto everywhere = [&](const Eigen::MatrixXd& local) { return distmat::gather_rows(world, rows, local); };
    const Eigen::MatrixXd C_old = dense_cooc(world, deal(old_docs, world), N, o);
    const Eigen::MatrixXd C_new = dense_cooc(world, deal(new_docs, world), N, o);

    Eigen::MatrixXd V;
    Eigen::VectorXd values;
    exact_top_eigenpairs(old_op, N, V, values);
    const Sketch whole = sketch_of(old_op, V, values, W, old_op.stats().num_docs, old_op.stats().num_tokens);
    EXPECT_EQ(whole.rank(), N);
    EXPECT_TRUE(std::is_sorted(values.data(), values.data() + N, std::greater<>()));
    const SketchOperator S(new_op, M, whole, 1.0);
    const Eigen::MatrixXd want = everywhere(all_op.apply(mine));
    EXPECT_LT((everywhere(S.apply(mine)) - want).cwiseAbs().maxCoeff(), 1e-13 * want.cwiseAbs().maxCoeff());
    EXPECT_LT((everywhere(S.cooc_diagonal()) - everywhere(all_op.cooc_diagonal())).cwiseAbs().maxCoeff(), 1e-16);
    EXPECT_LT((everywhere(S.row_sums()) - everywhere(all_op.row_sums())).cwiseAbs().maxCoeff(), 1e-16);
    EXPECT_EQ(S.doc_freq(), all_op.doc_freq());
    EXPECT_DOUBLE_EQ(S.weight(), W + M);

    // A decay: (γ W C_old + M C_new) / (γ W + M), the old frequencies rounded from γ df.
    const double gamma = 0.25;
    const SketchOperator decayed(new_op, M, whole, gamma);
    const Eigen::MatrixXd mixed = (gamma * W * C_old + M * C_new) / (gamma * W + M);
    EXPECT_LT((everywhere(decayed.apply(mine)) - mixed * X).cwiseAbs().maxCoeff(), 1e-13 * (mixed * X).cwiseAbs().maxCoeff());
    EXPECT_NEAR(decayed.old_share(), gamma * W / (gamma * W + M), 1e-15);
    const std::vector<std::int64_t> df = decayed.doc_freq(), df_old = old_op.doc_freq(), df_new = new_op.doc_freq();
    for (std::size_t i = 0; i < df.size(); ++i)
        EXPECT_EQ(df[i], df_new[i] + std::llround(gamma * static_cast<double>(df_old[i])));

    // r < N: the block solver's pairs (the exact decomposition's to its tolerance: an
    // eigenvalue's error is at most its residual, 1e-6 of λ₁, whatever the start), and the
    // operator's error bounded by the dropped part of C_old.
    const Index r = 12;
    Eigen::MatrixXd Vr;
    Eigen::VectorXd vr;
    const Eigen::MatrixXd start = distmat::random_rows(rows.begin(world.rank()), rows.rows(world.rank()), 3, 4);
    EXPECT_GT(sketch_eigenpairs(old_op, r, kSketchTolerance, 1, &start, Vr, vr), 0);
    ASSERT_EQ(vr.size(), r);
    EXPECT_LT((vr - values.head(r)).cwiseAbs().maxCoeff(), kSketchTolerance * values(0));
    EXPECT_LT((Eigen::MatrixXd(everywhere(Vr).transpose() * everywhere(Vr)) - Eigen::MatrixXd::Identity(r, r)).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_GE(everywhere(Vr).colwise().sum().minCoeff(), 0.0);  // signs fixed
    const Sketch cut = sketch_of(old_op, Vr, vr, W, 0, 0);
    const SketchOperator Sr(new_op, M, cut, 1.0);
    const Eigen::MatrixXd Xn = X.colwise().normalized();
    const Eigen::MatrixXd error = everywhere(Sr.apply(distmat::local_rows(rows, world.rank(), Xn))) - dense_cooc(world, deal(both, world), N, o) * Xn;
    const double dropped = std::max(std::abs(values(r)), std::abs(values(N - 1)));  // ‖C_old − V Λ Vᵀ‖₂
    for (Index j = 0; j < Xn.cols(); ++j) EXPECT_LE(error.col(j).norm(), W / (W + M) * dropped * (1 + 1e-9));
    EXPECT_GT(error.norm(), 0.0);  // the cut is not exact
}

// Past one block of documents on every rank (the words' pass runs block by block, each
// word's row of C X summed over the blocks in turn), each block with its own words: the
// documents of a rank's b-th block draw from words [90b, 90b + 120), so consecutive blocks
// share some words and a block's list of words is not V_r. Still the formed C's product.
TEST(DocumentOperator, EqualsTheFormedCOverSeveralBlocksOfDocuments) {
    const mpi::Comm world = mpi::Comm::world();
    const Index P = world.size(), N = 300, docs = 2 * DocumentOperator::kDocBlock * P + 123 * P;
    std::mt19937_64 engine(5);
    std::uniform_int_distribution<Index> length(2, 25), offset(0, 119);
    corpus::Shard all;
    for (Index m = 0; m < docs; ++m) {  // dealt m % P: document m is the (m / P)-th of its rank
        const Index block = (m / P) / DocumentOperator::kDocBlock;
        std::map<std::uint32_t, std::uint32_t> counts;
        for (Index t = 0, n = length(engine); t < n; ++t) ++counts[static_cast<std::uint32_t>(90 * block + offset(engine))];
        all.append(document_of(counts, m));
    }
    const corpus::Shard mine = deal(all, world);
    const cooc::CoocOptions o;
    const Eigen::MatrixXd C = dense_cooc(world, mine, N, o);
    const DocumentOperator op(world, N, mine, o);
    const Eigen::MatrixXd X = distmat::random_rows(0, N, 9, 23);
    const Eigen::MatrixXd CX =
        distmat::gather_rows(world, op.rows(), op.apply(distmat::local_rows(op.rows(), world.rank(), X)));
    // Rounding is relative to the terms' magnitudes, H̃H̃ᵀ|X| + d∘|X| = (C + 2 diag d)|X|
    // (H̃ ≥ 0; d from the corpus here), and a sum of n terms is within n·u of exact: an
    // entry sums its word's documents (at most `most`) and the formed C's product N terms.
    Eigen::VectorXd d = Eigen::VectorXd::Zero(N), docs_of = Eigen::VectorXd::Zero(N);
    double M = 0;
    for (Index m = 0; m < all.num_docs(); ++m) M += cooc::contributes(all.document(m), o) ? 1 : 0;
    for (Index m = 0; m < all.num_docs(); ++m) {
        const corpus::Document doc = all.document(m);
        if (!cooc::contributes(doc, o)) continue;
        const double n = doc.tokens();
        for (std::size_t k = 0; k < doc.words.size(); ++k) {
            d(doc.words[k]) += doc.counts[k] / (n * (n - 1) * M);
            docs_of(doc.words[k]) += 1;
        }
    }
    const double most = docs_of.maxCoeff(), u = std::ldexp(1.0, -53);
    const Eigen::MatrixXd scale = (C + Eigen::MatrixXd(2 * d.asDiagonal())) * X.cwiseAbs();
    EXPECT_LT(((CX - C * X).cwiseAbs().array() / scale.array()).maxCoeff(), (most + N + 30) * u);
    EXPECT_GT((C * X).cwiseAbs().minCoeff(), 0.0);  // every word is used: no entry is trivially 0
    // C_ii = Σ_m H̃_im² − d_i: the same bound against Σ_m H̃_im² + d_i = C_ii + 2 d_i.
    const Eigen::VectorXd diagonal = distmat::gather_rows(world, op.rows(), op.cooc_diagonal());
    EXPECT_LT(((diagonal - C.diagonal()).cwiseAbs().array() / (C.diagonal() + 2 * d).array()).maxCoeff(),
              (most + 30) * u);
}

// Rows go to threads in chunks of 256, each row summed by one thread in a fixed order:
// the same bits at 1 and 3 threads (enough documents and words for several chunks a rank).
TEST(DocumentOperator, SameBitsAtAnyThreadCount) {
    const mpi::Comm world = mpi::Comm::world();
    const Index N = 1500;
    const corpus::Shard mine = deal(random_corpus(6000, N, 11), world);
    const DocumentOperator op(world, N, mine, cooc::CoocOptions{});
    const Eigen::MatrixXd X = distmat::random_rows(op.rows().begin(world.rank()), op.rows().rows(world.rank()), 7, 3);
    const int before = distmat::threads();
    distmat::set_threads(3);
    const Eigen::MatrixXd CX3 = op.apply(X);
    distmat::set_threads(1);
    const Eigen::MatrixXd CX1 = op.apply(X);
    distmat::set_threads(before);
    EXPECT_EQ(CX3, CX1);
    EXPECT_GT(CX1.cwiseAbs().maxCoeff(), 0.0);
}

// A tight exchange budget splits a product into column panels, the same width on every
// rank (the widest rank's buffers decide), the panels balanced; each column's arithmetic
// is the whole block's: the same bits. The buffers one product keeps fit the budget.
TEST(DocumentOperator, ColumnPanelsGiveTheWholeBlocksBits) {
    const mpi::Comm world = mpi::Comm::world();
    const Index N = 1500, p = 23;
    const corpus::Shard mine = deal(random_corpus(6000, N, 11), world);
    const DocumentOperator whole(world, N, mine, cooc::CoocOptions{});
    ASSERT_EQ(whole.panel_columns(p), p);
    const double per_column = whole.buffer_bytes(1);
    const DocumentOperator panels(world, N, mine, cooc::CoocOptions{}, 7.5 * per_column);
    EXPECT_EQ(panels.panel_columns(p), 6);  // ⌈23 / 7.5⌉ = 4 panels: 6, 6, 6, 5
    EXPECT_EQ(panels.panel_columns(7), 7);
    EXPECT_LE(panels.buffer_bytes(p), 7.5 * per_column);
    // Never wider than the budget lets: 2.5 columns' worth takes 7 columns in 4 panels of 2
    // (3, 3, 1 would pass the budget by a fifth).
    const DocumentOperator tight(world, N, mine, cooc::CoocOptions{}, 2.5 * per_column);
    EXPECT_EQ(tight.panel_columns(7), 2);
    EXPECT_LE(tight.buffer_bytes(7), 2.5 * per_column);
    const DocumentOperator columns(world, N, mine, cooc::CoocOptions{}, 1.0);
    EXPECT_EQ(columns.panel_columns(p), 1);  // at least one column a panel
    // The budget is agreed: per_column is the largest rank's, the same everywhere.
    EXPECT_EQ(mpi::allreduce_max(world, per_column), per_column);
    EXPECT_EQ(-mpi::allreduce_max(world, -per_column), per_column);
    const Eigen::MatrixXd X = distmat::random_rows(whole.rows().begin(world.rank()), whole.rows().rows(world.rank()), p, 3);
    const Eigen::MatrixXd expected = whole.apply(X);
    EXPECT_EQ(panels.apply(X), expected);
    EXPECT_EQ(columns.apply(X), expected);
    EXPECT_GT(expected.cwiseAbs().maxCoeff(), 0.0);
    EXPECT_THROW(DocumentOperator(world, N, mine, cooc::CoocOptions{}, -1.0), StageFailed);
    // The default (0): four of the factor's N/P × p blocks, the widest rank's, at least 64 MiB.
    const double widest = static_cast<double>(whole.rows().rows(0));
    EXPECT_EQ(whole.exchange_budget(p), std::max(DocumentOperator::kMinExchangeBytes, 32 * widest * p));
    EXPECT_EQ(whole.exchange_budget(1 << 20), 32 * widest * (1 << 20));
}

// The cost model's bytes per column-product (fit/cost.hpp) are what a product hands to MPI,
// counted (core/traffic.hpp): with every rank's documents using every word (|V_r| = N, each
// rank serving its N/P rows to the P − 1 others) and N a multiple of P, exactly. And its
// exchange buffers are the operator's own: the model's panel is the operator's width.
TEST(CostModel, AProductMovesTheModelsBytes) {
    const mpi::Comm world = mpi::Comm::world();
    const Index N = 1200, K = 5, p = K + 10;  // the model's range-finder block for K = 5
    const corpus::Shard all = random_corpus(8000, N, 4);
    const DocumentOperator op(world, N, deal(all, world), cooc::CoocOptions{});
    ASSERT_EQ(op.stats().max_rank_words, N) << "every rank's documents should use every word";
    const Eigen::MatrixXd X = distmat::random_rows(op.rows().begin(world.rank()), op.rows().rows(world.rank()), p, 8);
    (void)take_stage_sent_bytes();
    (void)op.apply(X);
    const double sent = static_cast<double>(mpi::allreduce_max(world, take_stage_sent_bytes()));
    const double P = world.size(), n = static_cast<double>(N) / P;
    EXPECT_EQ(sent, 8.0 * p * ((P - 1) * n + (static_cast<double>(N) - n)));  // served, and the sums returned
    EXPECT_EQ(static_cast<double>(op.stats().max_served_rows), (P - 1) * n);

    fit::CompressedShape shape;
    shape.words = static_cast<double>(N);
    shape.docs = static_cast<double>(all.num_docs());
    shape.nonzeros = static_cast<double>(all.words.size());
    shape.ranks = world.size();
    shape.topics = static_cast<int>(K);
    shape.local_vocabulary = static_cast<double>(op.stats().max_rank_words);
    shape.served_rows = static_cast<double>(op.stats().max_served_rows);
    shape.range_columns = static_cast<double>(p);  // one product of the block
    const std::vector<fit::StageCost> stages = fit::compressed_stage_costs(shape, 0);
    const auto compress = std::find_if(stages.begin(), stages.end(), [](const fit::StageCost& c) { return c.stage == "compress"; });
    ASSERT_NE(compress, stages.end());
    EXPECT_EQ(compress->sent - 8.0 * p * p, sent);  // less the solver's p × p reduction of the product
    double exchange = -1;
    for (const auto& [name, bytes] : compress->parts)
        if (name.find("exchange") != std::string::npos) exchange = bytes;
    // The model's rows: X's, the rows served to the others and to itself, V_r twice, a block
    // of documents (the model takes D/P documents where the operator keeps those that
    // contribute: at most 4,096 rows apart, per column).
    EXPECT_NEAR(exchange, op.buffer_bytes(p), 8.0 * p * DocumentOperator::kDocBlock);
    EXPECT_GE(exchange, op.buffer_bytes(p));
    // With a budget that splits the block, the model's panel is the operator's (the model
    // given the documents that contribute, which the operator's block of documents holds:
    // then its rows are the operator's but for the ranks' few documents apart).
    const double budget = 4.5 * op.buffer_bytes(1);
    const DocumentOperator split(world, N, deal(all, world), cooc::CoocOptions{}, budget);
    ASSERT_EQ(split.panel_columns(p), 4);  // ⌈15 / 4.5⌉ = 4 panels of 4 (4, 4, 4, 3)
    shape.product_buffer_bytes = budget;
    shape.docs = static_cast<double>(op.stats().num_docs);
    for (const fit::StageCost& c : fit::compressed_stage_costs(shape, 0)) {
        for (const auto& [name, bytes] : c.parts) {
            if (c.stage == "compress" && name.find("exchange") != std::string::npos) {
                EXPECT_NEAR(bytes / split.buffer_bytes(p), 1.0, 0.01) << "the model's panel is not the operator's";
            }
        }
    }
}

// The model's seconds: each stage's work at the rates given, plus its bytes and messages.
// One kind of work at a time (the other rates 0) gives that work's count, so a change of
// the formulas or of what falls with P shows here.
TEST(CostModel, SecondsAreTheWorkAtTheRates) {
    fit::CompressedShape shape;
    shape.words = 50000;
    shape.docs = 20000;
    shape.nonzeros = 4e6;
    shape.topics = 100;
    shape.kept_topics = 100;
    shape.checked_rows = 2000;
    shape.local_vocabulary = 30000;
    shape.served_rows = 10000;
    shape.range_columns = 3000;
    shape.enn_iterations = 20;
    shape.enn_columns = 6000;
    shape.enn_corrections = 1e6;
    shape.enn_corrections_summed = 1.5e7;
    shape.enn_correction_columns = 4e9;
    shape.enn_correction_products = 6e7;
    shape.law_correction_rows = 300;
    shape.law_corrections = 2e6;
    const auto stage = [](const std::vector<fit::StageCost>& stages, const std::string& name) {
        const auto it = std::find_if(stages.begin(), stages.end(), [&](const fit::StageCost& c) { return c.stage == name; });
        EXPECT_NE(it, stages.end()) << name;
        return it == stages.end() ? fit::StageCost{} : *it;
    };
    const fit::RankRates rates;
    // every rate (law_imbalance is a ratio, not a rate)
    const auto each_rate = [](fit::RankRates& r) {
        return std::vector<double*>{&r.read_nonzero, &r.setup_nonzero, &r.product_nonzero, &r.block_entry,
                                    &r.product_row, &r.pair, &r.correction_setup, &r.flop, &r.correction,
                                    &r.correction_pass, &r.solve, &r.probe_row, &r.probe_factor, &r.metric_entry, &r.measure_entry,
                                    &r.write_byte, &r.row_write_byte, &r.clustacc_entry, &r.send_byte, &r.message};
    };
    fit::RankRates doubled = rates;
    for (double* r : each_rate(doubled)) *r *= 2;
    for (const int P : {1, 4}) {
        shape.ranks = P;
        const auto stages = fit::compressed_stage_costs(shape, 0, rates);
        const auto twice = fit::compressed_stage_costs(shape, 0, doubled);
        ASSERT_EQ(stages.size(), 7u);  // read, operator, compress, enn, anchors, metrics, write
        for (std::size_t i = 0; i < stages.size(); ++i) {
            const fit::StageCost& c = stages[i];
            EXPECT_GT(c.compute_seconds, 0) << c.stage;
            EXPECT_NEAR(c.seconds, c.compute_seconds + c.sent * rates.send_byte + c.messages * rates.message,
                        1e-12 * c.seconds)
                << c.stage;
            EXPECT_NEAR(twice[i].seconds, 2 * c.seconds, 1e-12 * c.seconds) << c.stage;
        }
        const double n = std::ceil(shape.words / P);
        // only the document products' nonzeros: the range finder's columns over the rank's nonzeros
        fit::RankRates only{};
        for (double* r : each_rate(only)) *r = 0;
        fit::RankRates nonzeros = only;
        nonzeros.product_nonzero = 1;
        EXPECT_DOUBLE_EQ(stage(fit::compressed_stage_costs(shape, 0, nonzeros), "compress").compute_seconds,
                         shape.range_columns * shape.nonzeros / P);
        // only ENN's check of the pairs: each iteration N/P × l × K
        fit::RankRates pairs = only;
        pairs.pair = 1;
        EXPECT_DOUBLE_EQ(stage(fit::compressed_stage_costs(shape, 0, pairs), "enn").compute_seconds,
                         shape.enn_iterations * n * shape.checked_rows * shape.topics);
        // only F's entries per column: the sum over iterations, divided over the ranks
        fit::RankRates corrections = only;
        corrections.correction = 1;
        EXPECT_DOUBLE_EQ(stage(fit::compressed_stage_costs(shape, 0, corrections), "enn").compute_seconds,
                         shape.enn_correction_columns / P);
        // the measures on B by rows: the rank's N/P × K, each column sorted
        fit::RankRates measures = only;
        measures.measure_entry = 1;
        EXPECT_DOUBLE_EQ(stage(fit::compressed_stage_costs(shape, 0, measures), "metrics").compute_seconds,
                         n * shape.topics * std::log2(std::max(2.0, n)));
        // the metrics' terms on E′: this rank's entries, K each
        fit::RankRates entries = only;
        entries.metric_entry = 1;
        EXPECT_DOUBLE_EQ(stage(fit::compressed_stage_costs(shape, 0, entries), "metrics").compute_seconds,
                         shape.law_corrections / P * shape.topics);
        // the write: each rank's rows of B and B̆ deflated (16 bytes a word a topic), and of Y
        // and its E′ triplets uncompressed, written collectively
        fit::RankRates deflated = only;
        deflated.write_byte = 1;
        EXPECT_DOUBLE_EQ(stage(fit::compressed_stage_costs(shape, 0, deflated), "write").compute_seconds,
                         16 * n * shape.kept_topics);
        fit::RankRates rows_written = only;
        rows_written.row_write_byte = 1;
        EXPECT_DOUBLE_EQ(stage(fit::compressed_stage_costs(shape, 0, rows_written), "write").compute_seconds,
                         8 * n * shape.kept_topics + 24 * shape.law_corrections / P);
        // ClustAcc: the rows of B a rank's documents use and those it serves (V_r + served
        // rows); a hierarchy (here 100 -> 20 -> 5): its levels' words by rows, and one
        // level's row-major copy for the write
        fit::CompressedShape labelled = shape, tree = shape;
        labelled.labels = true;
        tree.level_topics = 25;
        // (a stage of its own after the metrics: their parts, less the probes', and its own)
        const fit::StageCost clustacc = stage(fit::compressed_stage_costs(labelled, 0, rates), "clustacc");
        double rows_asked = -1;
        for (const auto& [name, bytes] : clustacc.parts)
            if (name.find("the rows of B a rank's documents use") == 0) rows_asked = bytes;
        EXPECT_DOUBLE_EQ(rows_asked, 8 * shape.topics * (shape.local_vocabulary + shape.served_rows));
        fit::RankRates clustacc_rate = only;
        clustacc_rate.clustacc_entry = 1;
        EXPECT_DOUBLE_EQ(stage(fit::compressed_stage_costs(labelled, 0, clustacc_rate), "clustacc").compute_seconds,
                         (shape.docs / P + shape.docs) * shape.topics);
        EXPECT_NEAR(stage(fit::compressed_stage_costs(tree, 0, rates), "write").need -
                        stage(fit::compressed_stage_costs(shape, 0, rates), "write").need,
                    8 * n * (25 + shape.topics), 1e-15 * stage(fit::compressed_stage_costs(tree, 0, rates), "write").need * 16);
        // memory: E′'s triplets (24 bytes an entry) held from LAW to the write (with the
        // write's ids, 32), F at its rows in LAW (N/P × |S′|), and the metrics' index by word
        // (12 bytes an entry, 12 more for those in the anchors' rows: K of |S′|)
        const auto stages_at = fit::compressed_stage_costs(shape, 0, rates);
        fit::CompressedShape without = shape;
        without.law_corrections = 0;
        without.law_correction_rows = 0;
        const auto stages_without = fit::compressed_stage_costs(without, 0, rates);
        const double triplets = 24 * shape.law_corrections / P;
        EXPECT_DOUBLE_EQ(stage(stages_at, "anchors").need - stage(stages_without, "anchors").need,
                         triplets + 8 * n * shape.law_correction_rows);
        EXPECT_DOUBLE_EQ(stage(stages_at, "metrics").need - stage(stages_without, "metrics").need,
                         triplets + 12 * shape.law_corrections / P * (1 + shape.topics / shape.law_correction_rows));
        EXPECT_DOUBLE_EQ(stage(stages_at, "write").need - stage(stages_without, "write").need,
                         32 * shape.law_corrections / P);
    }
}

TEST(DocumentOperator, RefusesBadInputOnEveryRank) {
    const mpi::Comm world = mpi::Comm::world();
    corpus::Shard bad = deal(random_corpus(40, 10, 1), world);
    if (world.is_root()) bad.words.front() = 99;  // one rank's document names a word >= N
    EXPECT_THROW(DocumentOperator(world, 10, bad, cooc::CoocOptions{}), StageFailed);
    // tf-idf where every used document has every word: idf = 0, C = 0.
    cooc::CoocOptions tfidf;
    tfidf.estimator = cooc::Estimator::tfidf;
    corpus::Shard same;
    for (Index m = 0; m < 12; ++m) same.append(document_of({{0, 2}, {1, 1}, {2, 3}}, m));
    test::expect_stage_failed(world, [&] { DocumentOperator(world, 3, deal(same, world), tfidf); }, {"tf-idf C is 0"});
}

/// FastAnchorWords' greedy and cleanup on the rows of X (N × d, replicated), textbook form:
/// the farthest row from the origin, then from the first, then from the affine span of
/// those chosen; each anchor then replaced by the row farthest from the others' span.
std::vector<Index> farthest_rows(const Eigen::MatrixXd& X, int K, Index barred) {
    const auto distance2 = [&](Index i, const std::vector<Index>& span) {
        if (span.empty()) return X.row(i).squaredNorm();
        Eigen::MatrixXd D(X.cols(), static_cast<Index>(span.size()) - 1);
        for (std::size_t l = 1; l < span.size(); ++l) D.col(static_cast<Index>(l) - 1) = (X.row(span[l]) - X.row(span[0])).transpose();
        const Eigen::VectorXd r = (X.row(i) - X.row(span[0])).transpose();
        if (D.cols() == 0) return r.squaredNorm();
        const Eigen::VectorXd c = D.colPivHouseholderQr().solve(r);
        return (r - D * c).squaredNorm();
    };
    const auto farthest = [&](const std::vector<Index>& span, const std::vector<Index>& taken) {
        Index best = -1;
        double most = -1;
        for (Index i = 0; i < X.rows(); ++i) {
            if (i == barred || std::find(taken.begin(), taken.end(), i) != taken.end()) continue;
            const double d2 = distance2(i, span);
            if (d2 > most) most = d2, best = i;
        }
        return best;
    };
    std::vector<Index> S;
    for (int k = 0; k < K; ++k) S.push_back(farthest(S, S));
    for (int k = 0; k < K; ++k) {
        std::vector<Index> others;
        for (int l = 0; l < K; ++l)
            if (l != k) others.push_back(S[static_cast<std::size_t>(l)]);
        S[static_cast<std::size_t>(k)] = farthest(others, others);
    }
    return S;
}

// The finders by words (the compressed pipeline's, on K-dimensional points whose Gram is
// C̄C̄ᵀ) choose what the dense finders choose on C̄'s rows: SNPA and XRAY the same words in
// the same order as anchors::find_anchors_snpa and _xray on the formed C = YYᵀ, and
// FastAnchorWords the textbook greedy's on C̄'s N-dimensional rows. Y is random and dense:
// no word is separable, so pivoted QR's anchors are not the answer. Rank 0 holds no word.
TEST(PointFinders, ChooseWhatTheDenseFindersChooseOnTheRows) {
    const mpi::Comm world = mpi::Comm::world();
    const Index N = 90;
    const int K = 6;
    std::mt19937_64 engine(29);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    Eigen::MatrixXd Y(N, K);
    for (Index i = 0; i < N; ++i)
        for (int k = 0; k < K; ++k) Y(i, k) = uniform(engine) * uniform(engine);
    const Eigen::MatrixXd C = Y * Y.transpose();
    const Eigen::VectorXd p = C.rowwise().sum();
    const Eigen::MatrixXd Cbar = p.cwiseInverse().asDiagonal() * C;
    // z_j = R Y_jᵀ / p_j (Y = QR): z_iᵀz_j = Y_i YᵀY Y_jᵀ / (p_i p_j) = (C̄C̄ᵀ)_ij.
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(Y);
    const Eigen::MatrixXd R = qr.matrixQR().topRows(K).triangularView<Eigen::Upper>();
    const Eigen::MatrixXd Z = R * Y.transpose() * p.cwiseInverse().asDiagonal();
    std::vector<Index> counts(static_cast<std::size_t>(world.size()), 0);
    for (Index i = 0; i < N; ++i) ++counts[world.size() > 1 ? 1 + static_cast<std::size_t>(i % (world.size() - 1)) : 0];
    const distmat::RowPartition rows = distmat::RowPartition::of_counts(counts);
    const Eigen::MatrixXd mine = Z.middleCols(rows.begin(world.rank()), rows.rows(world.rank()));
    std::vector<char> allowed(static_cast<std::size_t>(mine.cols()), 1);
    if (rows.rows(world.rank()) > 0 && rows.begin(world.rank()) == rows.begin(1 % world.size())) allowed[0] = 0;
    const Index barred = rows.begin(1 % world.size());  // the first word of the first rank holding words
    anchors::Candidates candidates(static_cast<std::size_t>(N), true);
    candidates[static_cast<std::size_t>(barred)] = false;

    const auto dense = distmat::Grid::most_square(world);
    distmat::DistMatrix D(dense, N, N, 16);
    test::fill(D, C);
    const anchors::AnchorResult snpa = anchors::find_anchors_snpa(D, p, K, candidates);
    const anchors::AnchorResult xray = anchors::find_anchors_xray(D, p, K, candidates);
    const PointAnchors by_words_snpa = find_anchors_on_points(world, rows, mine, allowed, K, anchors::Finder::snpa);
    const PointAnchors by_words_xray = find_anchors_on_points(world, rows, mine, allowed, K, anchors::Finder::xray);
    EXPECT_EQ(by_words_snpa.anchors, snpa.anchors);
    EXPECT_EQ(by_words_xray.anchors, xray.anchors);
    EXPECT_LT((by_words_snpa.diag_r - snpa.diag_r).cwiseAbs().maxCoeff(), 1e-8 * snpa.diag_r.maxCoeff());
    EXPECT_LT((by_words_xray.diag_r - xray.diag_r).cwiseAbs().maxCoeff(), 1e-8 * xray.diag_r.maxCoeff());

    const PointAnchors by_words_fast = find_anchors_on_points(world, rows, mine, allowed, K, anchors::Finder::fastanchor);
    EXPECT_EQ(by_words_fast.anchors, farthest_rows(Cbar, K, barred));
    EXPECT_EQ(std::count(by_words_fast.anchors.begin(), by_words_fast.anchors.end(), barred), 0);
    // Not pivoted QR's answer on this corpus: the finders are not one another.
    EXPECT_NE(by_words_snpa.anchors, by_words_fast.anchors);
}

// A planted corpus small enough for the dense path.
synth::SynthCorpus planted(int K, Seed seed) {
    synth::SynthOptions o;
    o.num_docs = 3000;
    o.num_words = 300;
    o.num_topics = K;
    o.anchor_mass = 0.03;
    o.word_concentration = 1.0;
    o.mean_doc_length = 120;
    o.seed = seed;
    return synth::generate(o);
}

/// The largest principal angle's sine between span(U) and span(V) (orthonormal columns):
/// ‖(I − UUᵀ)V‖₂, accurate for small angles (√(1 − cos²) is not below 1e-8).
double largest_angle_sine(const Eigen::MatrixXd& U, const Eigen::MatrixXd& V) {
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(V - U * (U.transpose() * V));
    return svd.singularValues()(0);
}

TEST(Compress, TheDenseSubspace) {
    const mpi::Comm world = mpi::Comm::world();
    const int K = 5;
    const synth::SynthCorpus truth = planted(K, 11);
    const corpus::Shard mine = deal(truth.docs, world);
    const cooc::CoocOptions o;
    const Eigen::MatrixXd C = dense_cooc(world, mine, 300, o);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> dense(C);
    const Eigen::MatrixXd V = dense.eigenvectors().rightCols(K);  // the K largest algebraic
    const DocumentOperator op(world, 300, mine, o);
    const Compression c = compress(op, K, default_eig_options(K, 1));
    EXPECT_TRUE(c.converged);
    const Eigen::MatrixXd Y = distmat::gather_rows(world, op.rows(), c.Y);
    const Eigen::MatrixXd U = Y * c.eigenvalues.cwiseMax(0).cwiseSqrt().cwiseInverse().asDiagonal();
    // Residuals to 1e-8 |λ₁| and a gap λ_K − λ_{K+1} of this size bound the angle (Davis–Kahan).
    const Eigen::VectorXd lambda = dense.eigenvalues().reverse();
    const double bound = c.residuals.norm() / (lambda(K - 1) - lambda(K));
    EXPECT_LT(largest_angle_sine(U, V), std::max(bound, 1e-10));
    EXPECT_LT(largest_angle_sine(U, V), 1e-5);
    for (int k = 0; k < K; ++k) EXPECT_NEAR(c.eigenvalues(k), lambda(k), 1e-9 * lambda(0));
}

struct CompressedFit {
    EnnResult enn;
    LawResult law;
    Eigen::MatrixXd B;  // gathered
};

CompressedFit fit_compressed(const mpi::Comm& comm, const corpus::Shard& mine, Index N, int K, Seed seed,
                             int iterations, Index checked_rows = 0, double dense_panel_density = EnnOptions{}.dense_panel_density,
                             double screen_below = EnnOptions{}.screen_below) {
    const DocumentOperator op(comm, N, mine, cooc::CoocOptions{});
    const Compression c = compress(op, K, default_eig_options(K, seed));
    EnnOptions e;
    e.iterations = iterations;
    e.checked_rows = checked_rows;
    e.dense_panel_density = dense_panel_density;
    e.screen_below = screen_below;
    e.eig = default_eig_options(K, seed);
    CompressedFit f;
    f.enn = rectify_enn(comm, op.rows(), c.Y, e);
    f.law = factorize_low_rank(comm, op.rows(), f.enn.Y, op.doc_freq(), LawOptions{});
    f.B = distmat::gather_rows(comm, op.rows(), f.law.B);
    return f;
}

double relative(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
    return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

TEST(CompressedFit, RecoversPlantedTopicsAtAnyRankCountAndSeed) {
    const mpi::Comm world = mpi::Comm::world();
    const int K = 5;
    const synth::SynthCorpus truth = planted(K, 11);
    const CompressedFit f = fit_compressed(world, deal(truth.docs, world), 300, K, 1, 150);
    const eval::TruthComparison t =
        eval::compare_to_truth(f.B, f.law.A, f.law.anchors, truth.B, truth.A, truth.anchors);
    EXPECT_EQ(t.anchor_hits, K);
    // The dense path's default fit on this corpus (fit_test): B 0.059, A 0.044.
    EXPECT_LT(t.b_l1, 0.1);
    EXPECT_LT(t.a_l1, 0.1);
    for (Index k = 0; k < K; ++k) EXPECT_NEAR(f.B.col(k).sum(), 1.0, 1e-12);
    // Every pair is checked here (l = N).
    EXPECT_EQ(f.enn.checked_rows, 300);
    EXPECT_EQ(f.enn.unchecked_pairs, 0);

    // The same on one rank, and with another random start.
    const mpi::Comm self(MPI_COMM_SELF);
    const CompressedFit alone = fit_compressed(self, truth.docs, 300, K, 1, 150);
    EXPECT_EQ(f.law.anchors, alone.law.anchors);
    EXPECT_LT(relative(f.B, alone.B), 1e-9);
    EXPECT_LT(relative(f.law.A, alone.law.A), 1e-9);
    const CompressedFit other_seed = fit_compressed(world, deal(truth.docs, world), 300, K, 99, 150);
    EXPECT_EQ(f.law.anchors, other_seed.law.anchors);
    EXPECT_LT(relative(f.B, other_seed.B), 1e-6);
}

// Six planted topics in few, short documents (seeded, the same on every rank).
synth::SynthCorpus noisy_corpus(Index docs, Index words, double mean_doc_length) {
    synth::SynthOptions o;
    o.num_docs = docs;
    o.num_words = words;
    o.num_topics = 6;
    o.mean_doc_length = mean_doc_length;
    o.seed = 5;
    return synth::generate(o);
}

TEST(CompressedFit, EnnCorrectsNegativesAndCountsUncheckedPairs) {
    const mpi::Comm world = mpi::Comm::world();
    // Few short documents: C is noisy and its rank-K part has negative entries.
    const synth::SynthCorpus truth = noisy_corpus(400, 300, 15);
    const CompressedFit f = fit_compressed(world, deal(truth.docs, world), 300, 4, 1, 60, 60);
    EXPECT_EQ(f.enn.checked_rows, 60);
    EXPECT_EQ(f.enn.unchecked_pairs, 240.0 * 240.0);
    ASSERT_EQ(f.enn.trace.size(), 60u);
    EXPECT_GT(f.enn.trace.front().corrections, 0);
    // The negative mass among checked pairs falls at every iteration (measured: 6.6e-3
    // before the first correction, 9.0e-6 after 60), and warm projections are cheap.
    for (std::size_t t = 1; t < f.enn.trace.size(); ++t) {
        EXPECT_LT(f.enn.trace[t].negative_mass, f.enn.trace[t - 1].negative_mass) << "iteration " << t + 1;
        if (t + 1 < f.enn.trace.size()) {  // the last one checks for missed eigenvalues (10 Lanczos products)
            EXPECT_LE(f.enn.trace[t].products, 12) << "iteration " << t + 1;
        }
    }
    EXPECT_LT(f.enn.final_negative_mass, 5e-3 * f.enn.trace.front().negative_mass);
    EXPECT_GT(f.enn.final_negative_entries, 0);
}

// Over-relaxed ENN (EnnOptions::relaxation): the first projection is the plain one (the
// first two iterations see the same E), the middle ones correct by ωE, the last is plain
// again; after as many iterations it leaves less negative mass than plain ENN (measured
// here: 30 iterations at ω = 1.9 leave a quarter of the plain run's, 1.1e-5 against 4.4e-5), it is the same
// model at any rank count, and ω outside (0, 2) is refused on every rank.
TEST(CompressedFit, RelaxedEnnLeavesLessMassAtAnyRankCount) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = noisy_corpus(400, 300, 15);
    const auto run = [&](const mpi::Comm& comm, const corpus::Shard& docs, double omega, int iterations = 30) {
        const DocumentOperator op(comm, 300, docs, cooc::CoocOptions{});
        const Compression c = compress(op, 4, default_eig_options(4, 1));
        EnnOptions e;
        e.iterations = iterations;
        e.checked_rows = 60;
        e.relaxation = omega;
        e.eig = default_eig_options(4, 1);
        EnnResult r = rectify_enn(comm, op.rows(), c.Y, e);
        r.Y = distmat::gather_rows(comm, op.rows(), r.Y);
        return r;
    };
    const EnnResult plain = run(world, deal(truth.docs, world), 1.0);
    const EnnResult relaxed = run(world, deal(truth.docs, world), 1.9);
    ASSERT_EQ(relaxed.trace.size(), 30u);
    EXPECT_EQ(relaxed.trace[0].negative_mass, plain.trace[0].negative_mass);
    EXPECT_EQ(relaxed.trace[1].negative_mass, plain.trace[1].negative_mass);  // after the plain first projection
    EXPECT_NE(relaxed.trace[2].negative_mass, plain.trace[2].negative_mass);  // after the first relaxed one
    EXPECT_LT(relaxed.final_negative_mass, 0.5 * plain.final_negative_mass)
        << "relaxed " << relaxed.final_negative_mass << ", plain " << plain.final_negative_mass;
    // The same factor on one rank (the ranks' sums in another order: rounding).
    const mpi::Comm self(MPI_COMM_SELF);
    const EnnResult alone = run(self, truth.docs, 1.9);
    EXPECT_LT(relative(relaxed.Y * relaxed.Y.transpose(), alone.Y * alone.Y.transpose()), 1e-9);
    for (const double omega : {0.0, 2.0, -1.0}) EXPECT_THROW(run(world, deal(truth.docs, world), omega), StageFailed) << omega;
    // Two iterations are two ends, both plain: ω changes nothing, to the bit.
    EXPECT_EQ(run(world, deal(truth.docs, world), 1.9, 2).Y, run(world, deal(truth.docs, world), 1.0, 2).Y);
}

// F kept as dense panels (GEMMs) or sparse (CSR/CSC) is the same E: the same iterations,
// corrections and factor, with rows outside L (l < N) exercising Fᵀ's masking. N = 2,500
// words: several 1,024-row panels per rank at 1 and 2 ranks (the panels' offsets).
// ENN's Fᵀ X is scattered by each thread into its own range of L's rows (every row summed
// in the rows' order) and F X gathered row by row: the same factor, anchors and B at 1 and
// 3 threads, with sparse panels only (both kernels run) and with some panels dense (their
// CSR rows empty, their Fᵀ X by GEMM).
TEST(CompressedFit, SameBitsAtAnyThreadCount) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = noisy_corpus(600, 2500, 30);
    const int before = distmat::threads();
    for (const double density : {2.0, 0.05}) {  // never dense; dense where 5 % of a panel's pairs are negative
        SCOPED_TRACE("dense panel density " + std::to_string(density));
        distmat::set_threads(3);
        const CompressedFit three = fit_compressed(world, deal(truth.docs, world), 2500, 4, 1, 5, 300, density);
        distmat::set_threads(1);
        const CompressedFit one = fit_compressed(world, deal(truth.docs, world), 2500, 4, 1, 5, 300, density);
        distmat::set_threads(before);
        EXPECT_GT(one.enn.trace.front().corrections, 0);
        double dense = 0;
        for (const auto& it : one.enn.trace) dense = std::max(dense, it.dense_share);
        if (density < 1) EXPECT_GT(mpi::allreduce_max(world, dense), 0.0) << "no dense panel: the mix is not tested";
        else EXPECT_EQ(dense, 0.0);
        EXPECT_EQ(three.enn.Y, one.enn.Y);
        EXPECT_EQ(three.law.anchors, one.law.anchors);
        EXPECT_EQ(three.B, one.B);
    }
}

// Word ids that follow frequency (Zipf, as UCI files and prepare's vocabularies have them):
// ENN deals the rows by its fixed shuffle, so every rank holds about its share of F's
// entries (dealt by id, the ranks of rare words held five times the others' on a
// NYTimes-shaped corpus); the shuffle is the same at any rank count, so is the result.
TEST(CompressedFit, EnnBalancesTheCorrectionsOverRanks) {
    const mpi::Comm world = mpi::Comm::world();
    synth::SynthOptions o;
    o.num_docs = 800;
    o.num_words = 3000;
    o.num_topics = 6;
    o.mean_doc_length = 40;
    o.zipf = 1.0;
    o.word_concentration = 1.0;
    o.seed = 8;
    const synth::SynthCorpus truth = synth::generate(o);
    const CompressedFit f = fit_compressed(world, deal(truth.docs, world), 3000, 6, 1, 4, 400, 2.0);
    ASSERT_EQ(f.enn.trace.size(), 4u);
    for (const EnnIteration& it : f.enn.trace) {
        EXPECT_GT(it.corrections, 10000);
        EXPECT_LT(it.imbalance, world.size() == 1 ? 1.0 + 1e-12 : 1.15);
    }
    const mpi::Comm self(MPI_COMM_SELF);
    const CompressedFit alone = fit_compressed(self, truth.docs, 3000, 6, 1, 4, 400, 2.0);
    // The same corrections up to the pairs within rounding of zero (measured: 2 of 368,674 at 3 ranks).
    for (std::size_t t = 0; t < f.enn.trace.size(); ++t)
        EXPECT_NEAR(static_cast<double>(f.enn.trace[t].corrections), static_cast<double>(alone.enn.trace[t].corrections),
                    1e-4 * static_cast<double>(alone.enn.trace[t].corrections))
            << "iteration " << t + 1;
    const Eigen::MatrixXd Y = distmat::gather_rows(world, distmat::RowPartition::balanced(3000, world.size()), f.enn.Y);
    EXPECT_LT(relative(Y, alone.enn.Y), 1e-9);
}

// ENN's recorded change against ZZᵀ − YYᵀ formed densely, down to changes of 1e-12 (the
// difference of squared norms it replaced cancelled to 0 below ~1e-8), at any rank count.
TEST(CompressedFit, FactorChangeIsAccurateForTinyChanges) {
    const mpi::Comm world = mpi::Comm::world();
    const Index N = 300, K = 7;
    std::mt19937_64 rng(5);
    std::normal_distribution<double> normal;
    const Eigen::MatrixXd Y = Eigen::MatrixXd::NullaryExpr(N, K, [&] { return normal(rng); });
    const Eigen::MatrixXd R = Eigen::MatrixXd::NullaryExpr(N, K, [&] { return normal(rng); });
    const distmat::RowPartition rows = distmat::RowPartition::balanced(N, world.size());
    const auto mine = [&](const Eigen::MatrixXd& A) {
        return Eigen::MatrixXd(A.middleRows(rows.begin(world.rank()), rows.rows(world.rank())));
    };
    for (const double size : {1e-1, 1e-6, 1e-9, 1e-12}) {
        const Eigen::MatrixXd Z = Y + size * R;
        const Eigen::MatrixXd YYt = Y * Y.transpose();
        // (Z − Y)Zᵀ + Y(Z − Y)ᵀ formed: the difference itself, not two near-equal products
        const Eigen::MatrixXd diff = (Z - Y) * Z.transpose() + Y * (Z - Y).transpose();
        const double expected = diff.norm() / YYt.norm();
        EXPECT_NEAR(factor_change(world, mine(Y), mine(Z)), expected, 1e-6 * expected) << "change of size " << size;
    }
    EXPECT_EQ(factor_change(world, mine(Y), mine(Y)), 0.0);
}

// A checkpointed ENN run continued from its state (as a resumed fit does) is the
// uninterrupted run, to the bit: the state holds everything the next iteration reads.
TEST(CompressedFit, EnnResumesExactly) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = noisy_corpus(600, 2500, 30);
    const DocumentOperator op(world, 2500, deal(truth.docs, world), cooc::CoocOptions{});
    const Compression c = compress(op, 4, default_eig_options(4, 1));
    EnnOptions e;
    e.iterations = 9;
    e.checked_rows = 300;
    e.eig = default_eig_options(4, 1);
    e.checkpoint_due = [](int done) { return done % 4 == 0; };
    for (const double omega : {1.9, 1.0}) {  // over-relaxed, then the authors' ENN (the refusal below)
        e.relaxation = omega;
        std::vector<EnnState> states;
        const EnnResult whole = rectify_enn(world, op.rows(), c.Y, e, {}, [&](const EnnState& s) { states.push_back(s); });
        ASSERT_EQ(states.size(), 2u);  // after 4 and 8, not after the last
        EXPECT_EQ(states[0].iterations_done, 4);
        EXPECT_EQ(states[1].iterations_done, 8);
        for (const EnnState& s : states) {
            const EnnResult resumed = rectify_enn(world, op.rows(), Eigen::MatrixXd::Zero(c.Y.rows(), 4), e, {}, {}, &s);
            EXPECT_EQ(resumed.Y, whole.Y) << "from " << s.iterations_done;
            ASSERT_EQ(resumed.trace.size(), whole.trace.size());
            for (std::size_t t = 0; t < whole.trace.size(); ++t) {
                EXPECT_EQ(resumed.trace[t].negative_mass, whole.trace[t].negative_mass) << "iteration " << t + 1;
                EXPECT_EQ(resumed.trace[t].products, whole.trace[t].products) << "iteration " << t + 1;
            }
            EXPECT_EQ(resumed.final_negative_mass, whole.final_negative_mass);
        }
        if (omega != 1.0) continue;
        // A state that does not fit the run is refused on every rank.
        EnnState wrong = states[0];
        wrong.trace.pop_back();
        EXPECT_THROW(rectify_enn(world, op.rows(), c.Y, e, {}, {}, &wrong), StageFailed);
    }
}

/// ENN's corrected operator at a whole factor Y, formed (the definitions of rectify_enn's
/// comment, written out densely): L the l rows of largest norm, F = −min(Y Y_Lᵀ, 0) at
/// columns L, E = max(F, Fᵀ), r = (1 − ‖Yᵀ1‖² − ω·1ᵀE1)/N², YYᵀ + ωE + r·11ᵀ. Also the
/// floor its Gershgorin bound gives, −max row sum of ωE + min(r·N, 0).
struct FormedEnnOperator {
    Eigen::MatrixXd op;
    double r = 0, floor = 0;
};
FormedEnnOperator formed_enn_operator(const Eigen::MatrixXd& Y, Index l, double omega) {
    const Index N = Y.rows();
    const Eigen::VectorXd norms = Y.rowwise().squaredNorm();
    std::vector<Index> order(static_cast<std::size_t>(N));
    std::iota(order.begin(), order.end(), Index{0});
    std::partial_sort(order.begin(), order.begin() + l, order.end(), [&](Index a, Index b) { return norms(a) > norms(b); });
    const Eigen::MatrixXd G = Y * Y.transpose();
    Eigen::MatrixXd F = Eigen::MatrixXd::Zero(N, N);
    for (Index q = 0; q < l; ++q) {
        const Index j = order[static_cast<std::size_t>(q)];
        for (Index i = 0; i < N; ++i) F(i, j) = std::max(-G(i, j), 0.0);
    }
    const Eigen::MatrixXd E = F.cwiseMax(F.transpose());
    FormedEnnOperator out;
    const double NN = static_cast<double>(N) * static_cast<double>(N);
    out.r = (1 - Y.colwise().sum().squaredNorm() - omega * E.sum()) / NN;
    out.op = G + omega * E + Eigen::MatrixXd::Constant(N, N, out.r);
    out.floor = -(omega * E).rowwise().sum().maxCoeff() + std::min(out.r * static_cast<double>(N), 0.0);
    return out;
}

/// The checks of EnnSpectrumFloorBoundsTheCorrectedOperator for one starting factor Y0
/// (whole, N × K) with l checked rows.
void check_enn_spectrum_floor(const mpi::Comm& world, const Eigen::MatrixXd& Y0, Index l) {
    const Index N = Y0.rows(), K = Y0.cols();
    const distmat::RowPartition rows = distmat::RowPartition::balanced(N, world.size());
    const auto mine = [&](const Eigen::MatrixXd& A) {
        return Eigen::MatrixXd(A.middleRows(rows.begin(world.rank()), rows.rows(world.rank())));
    };
    for (const double density : {0.0, 2.0}) {  // every panel of F dense, then every one sparse
        EnnOptions e;
        e.checked_rows = l;
        e.eig = default_eig_options(static_cast<int>(K), 1);
        // Crude Lanczos estimates of λ_min (one step each), as 24 steps were at N = 10⁵ where
        // they do not reach the bottom: the floor is then the tighter bound.
        e.eig.lanczos_steps = 1;
        e.eig.verify_steps = 1;
        e.relaxation = 1.9;
        e.dense_panel_density = density;
        e.iterations = 1;
        const EnnResult first = rectify_enn(world, rows, mine(Y0), e);
        e.iterations = 3;
        e.checkpoint_due = [](int) { return true; };
        std::vector<EnnState> states;
        const EnnResult three = rectify_enn(world, rows, mine(Y0), e, {}, [&](const EnnState& s) { states.push_back(s); });
        ASSERT_EQ(first.trace.size(), 1u);
        ASSERT_EQ(three.trace.size(), 3u);
        ASSERT_EQ(states.size(), 2u);  // after the first and the second
        // The factor after the first iteration, whole: the second (relaxed) iteration's operator's.
        Eigen::MatrixXd Y1 = Eigen::MatrixXd::Zero(N, K);
        Y1.middleRows(rows.begin(world.rank()), rows.rows(world.rank())) = first.Y;
        distmat::sum_on_all_ranks(world, Y1.data(), static_cast<std::size_t>(Y1.size()));
        const struct {
            const Eigen::MatrixXd& Y;
            double omega;
            const EnnIteration& it;
            const EnnState& after;
        } cases[] = {{Y0, 1.0, three.trace[0], states[0]}, {Y1, 1.9, three.trace[1], states[1]}};
        for (const auto& c : cases) {
            const std::string what = "K = " + std::to_string(K) + ", ω = " + std::to_string(c.omega) + ", density " +
                                     std::to_string(density);
            const FormedEnnOperator formed = formed_enn_operator(c.Y, l, c.omega);
            const double lambda_min = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(formed.op).eigenvalues()(0);
            const double scale = formed.op.cwiseAbs().maxCoeff();
            ASSERT_GT(c.it.corrections, 0) << what;
            EXPECT_NEAR(c.it.r, formed.r, 1e-12 * scale) << what;
            EXPECT_NEAR(c.it.spectrum_floor, formed.floor, 1e-12 * std::abs(formed.floor)) << what;
            EXPECT_LT(c.it.spectrum_floor, 0.0) << what;
            EXPECT_LE(c.it.spectrum_floor, lambda_min + 1e-12 * scale) << what;
            EXPECT_GE(c.after.lower_bound, c.it.spectrum_floor) << what;
        }
    }
}

// The floor ENN gives each projection's filter (EnnIteration::spectrum_floor) is the
// Gershgorin bound of the operator formed here, and lies below its smallest eigenvalue: at
// the first iteration (ω = 1) and at a relaxed one (ω = 1.9), with F kept dense and kept
// sparse, at any rank count. And the projection took no estimate below it: the bound it
// carries on (the checkpoint's) is at least that iteration's floor.
TEST(CompressedFit, EnnSpectrumFloorBoundsTheCorrectedOperator) {
    const mpi::Comm world = mpi::Comm::world();
    const Index N = 240, l = 50;
    std::mt19937_64 rng(21);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    // Two factors, each scaled so that 1ᵀYYᵀ1 = 1 as C's factor has (r·11ᵀ then small
    // beside E). K = 5, mostly positive rows with many sign changes: E large (an early
    // iteration). K = 30, positive rows but a few of mixed sign: E small and the top K more
    // than a short Lanczos run resolves (a late iteration at K = 100), where the floor is the
    // tighter bound and the projection must use it.
    Eigen::MatrixXd early = Eigen::MatrixXd::NullaryExpr(N, 5, [&] { return normal(rng) + 0.7; });
    Eigen::MatrixXd late = Eigen::MatrixXd::NullaryExpr(N, 30, [&] { return uniform(rng); });
    // (The mixed rows short, so that E's row sums stay far below λ_K.)
    for (Index i = 0; i < N; i += 24) late.row(i) = Eigen::RowVectorXd::NullaryExpr(30, [&] { return 0.02 * normal(rng); });
    for (Eigen::MatrixXd* Y : {&early, &late}) *Y /= Y->colwise().sum().norm();
    for (const Eigen::MatrixXd& Y0 : {early, late})
        check_enn_spectrum_floor(world, Y0, l);
}

/// ENN with the stopping rule, looks every `look_every` iterations in windows of two, on
/// the noisy corpus's settings (K = 4, l = 300). The look is the caller's.
EnnOptions stopping_enn(int iterations, int look_every) {
    EnnOptions e;
    e.iterations = iterations;
    e.checked_rows = 300;
    e.eig = default_eig_options(4, 1);
    e.stop = EnnStop{};
    e.stop->look_every = look_every;
    e.stop->window = 2;
    e.forcing = kEnnForcing;  // as the fit's default
    return e;
}

// The middle projections' tolerance follows the last change (forcing), bounded both ways;
// the ends, and a projection whose E is empty, are exact.
TEST(EnnStop, ProjectionToleranceFollowsTheChange) {
    EnnOptions o;
    o.forcing = 0.01;
    o.loosest_tolerance = 1e-6;
    const double tight = 1e-11;
    std::vector<EnnIteration> trace(1);
    trace[0].corrections = 10;
    trace[0].change = 1e-6;
    EXPECT_DOUBLE_EQ(projection_tolerance(o, tight, trace, false, 10), 1e-8);
    EXPECT_EQ(projection_tolerance(o, tight, trace, true, 10), tight) << "the first and last projections";
    EXPECT_EQ(projection_tolerance(o, tight, trace, false, 0), tight) << "this operator's E empty: exact";
    trace[0].corrections = 0;
    EXPECT_DOUBLE_EQ(projection_tolerance(o, tight, trace, false, 10), 1e-8) << "the last E's count does not decide";
    trace[0].change = 1e-2;
    EXPECT_EQ(projection_tolerance(o, tight, trace, false, 10), 1e-6) << "at most the loosest";
    trace[0].change = 1e-13;
    EXPECT_EQ(projection_tolerance(o, tight, trace, false, 10), tight) << "at least the tight";
    EXPECT_EQ(projection_tolerance(o, tight, {}, false, 10), tight) << "no trace yet";
    o.loosest_tolerance = 1e-12;
    trace[0].change = 1e-6;
    EXPECT_EQ(projection_tolerance(o, tight, trace, false, 10), tight) << "a loosest below the tight: the tight";
    o.forcing = 0;
    o.loosest_tolerance = 1e-6;
    EXPECT_EQ(projection_tolerance(o, tight, trace, false, 10), tight) << "no forcing: the authors' exact projections";
}

// The stopping rule is a function of the trace: a fixed point (no correction and no move),
// or two windows of looks whose mean figures agree.
TEST(EnnStop, VerdictFromTheTrace) {
    using rectify::StopReason;
    EnnStop stop;
    stop.window = 2;
    stop.tolerance = 0.01;
    const auto iteration = [](Index corrections, double change, double specificity = NAN, double dissimilarity = NAN) {
        EnnIteration it;
        it.corrections = corrections;
        it.change = change;
        it.look_specificity = specificity;
        it.look_dissimilarity = dissimilarity;
        return it;
    };
    EXPECT_EQ(enn_verdict({}, stop), StopReason::none);
    EXPECT_EQ(enn_verdict({iteration(10, 1e-3), iteration(0, 1e-14)}, stop), StopReason::fixed_point);
    EXPECT_EQ(enn_verdict({iteration(0, 1e-6)}, stop), StopReason::none) << "no correction, but the factor still moves";
    EXPECT_EQ(enn_verdict({iteration(1, 1e-14)}, stop), StopReason::none) << "a correction left";
    // Looks of (specificity, dissimilarity): windows of two, compared by their means.
    std::vector<EnnIteration> trace;
    const auto look = [&](double s, double d) {
        trace.push_back(iteration(5, 1e-4));
        trace.push_back(iteration(5, 1e-4, s, d));
        return enn_verdict(trace, stop);
    };
    EXPECT_EQ(look(1.00, 5.0), StopReason::none);
    EXPECT_EQ(look(1.20, 5.0), StopReason::none);
    EXPECT_EQ(look(1.50, 5.0), StopReason::none);
    EXPECT_EQ(look(1.52, 5.0), StopReason::none);  // means 1.10 against 1.51
    EXPECT_EQ(look(1.49, 5.0), StopReason::none);  // 1.35 against 1.505
    EXPECT_EQ(look(1.51, 5.0), StopReason::quality) << "1.51 against 1.50: the jitter of single looks averaged";
    trace.push_back(iteration(5, 1e-4));
    EXPECT_EQ(enn_verdict(trace, stop), StopReason::none) << "only right after a look";
    trace.pop_back();
    EXPECT_EQ(look(1.50, 5.2), StopReason::none) << "dissimilarity moved by 2 %";
    stop.window = 0;
    EXPECT_EQ(enn_verdict(trace, stop), StopReason::none);
    // A rise under a jitter larger than it: the windows' means stay 4 % apart.
    trace.clear();
    stop.window = 2;
    for (const double s : {1.0, 1.2, 1.05, 1.25, 1.1, 1.3}) EXPECT_EQ(look(s, 5.0), StopReason::none);
}

// With the rule, ENN stops one (verified) projection after the looks agree, on the same
// iteration at any rank count; the model is the fixed-count run's of that length, and a
// run resumed from any checkpoint stops at the same place with the same bits.
TEST(CompressedFit, EnnStopsWhereTheLooksAgreeAndResumesThere) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = noisy_corpus(600, 2500, 30);
    const DocumentOperator op(world, 2500, deal(truth.docs, world), cooc::CoocOptions{});
    const Compression c = compress(op, 4, default_eig_options(4, 1));
    // The looks' figures by the look's count (the same on every rank), settling at the 5th.
    const std::vector<double> figures = {1.0, 1.3, 1.6, 1.7, 1.71, 1.7, 1.7, 1.7, 1.7, 1.7};
    int looks = 0;
    EnnOptions e = stopping_enn(40, 3);
    e.look = [&](const Eigen::MatrixXd& Y) {
        EXPECT_EQ(Y.rows(), op.rows().rows(world.rank())) << "this rank's rows";
        const double f = figures[static_cast<std::size_t>(std::min<int>(looks++, 9))];
        return EnnLook{f, 10 * f};
    };
    e.checkpoint_due = [](int) { return true; };
    std::vector<EnnState> states;
    const EnnResult stopped = rectify_enn(world, op.rows(), c.Y, e, {}, [&](const EnnState& s) { states.push_back(s); });
    // Looks after iterations 3, 6, …; windows of two looks' means: the 6th look's (1.6, 1.7)
    // = 1.65 against (1.71, 1.7) = 1.705 are 3 % apart; the 7th's, (1.7, 1.71) against
    // (1.7, 1.7), agree: the verdict after iteration 21, then one more projection.
    EXPECT_EQ(stopped.stop_reason, rectify::StopReason::quality);
    ASSERT_EQ(stopped.trace.size(), 22u);
    EXPECT_EQ(looks, 7);
    EXPECT_EQ(stopped.trace[20].look_specificity, 1.7);
    EXPECT_EQ(stopped.trace[20].look_dissimilarity, 17.0);
    EXPECT_GT(stopped.trace.back().products, stopped.trace[20].products) << "the last projection is checked for missed eigenvalues";
    // The same factor as a fixed count of 22 (the same projections; the last verified).
    EnnOptions fixed = e;
    fixed.stop.reset();
    fixed.iterations = 22;
    fixed.checkpoint_due = {};
    const EnnResult counted = rectify_enn(world, op.rows(), c.Y, fixed);
    EXPECT_EQ(counted.stop_reason, rectify::StopReason::iterations);
    EXPECT_EQ(distmat::gather_rows(world, op.rows(), counted.Y), distmat::gather_rows(world, op.rows(), stopped.Y));
    // Resumed from any checkpoint: the same stop, the same bits.
    ASSERT_EQ(states.size(), 21u);  // after every iteration but the last
    for (const std::size_t at : {std::size_t{4}, std::size_t{20}}) {  // before the looks agree, and right after
        const EnnState& s = states[at];
        looks = s.iterations_done / 3;
        const EnnResult resumed = rectify_enn(world, op.rows(), Eigen::MatrixXd::Zero(c.Y.rows(), 4), e, {}, {}, &s);
        EXPECT_EQ(resumed.stop_reason, rectify::StopReason::quality) << "from " << s.iterations_done;
        EXPECT_EQ(resumed.trace.size(), 22u) << "from " << s.iterations_done;
        EXPECT_EQ(resumed.Y, stopped.Y) << "from " << s.iterations_done;
    }
}

// The looks' pieces: most_frequent_words ranks by document frequency, ties to the lower
// id, the same on every rank; LAW with B̆ solved on some words only finds the same anchors
// and, for those words, the same B̆ as the whole solve (each word's solve is its own),
// the others 0.
TEST(CompressedFit, LookSolvesOnlyTheListedWords) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = noisy_corpus(600, 2500, 30);
    const DocumentOperator op(world, 2500, deal(truth.docs, world), cooc::CoocOptions{});
    const std::vector<std::int64_t> freq = op.doc_freq();  // collective: once
    const std::vector<Index> words = most_frequent_words(world, op.rows(), freq, 300);
    Eigen::MatrixXd df_local(static_cast<Index>(freq.size()), 1);
    for (std::size_t i = 0; i < freq.size(); ++i) df_local(static_cast<Index>(i), 0) = static_cast<double>(freq[i]);
    const Eigen::VectorXd df = distmat::gather_rows(world, op.rows(), df_local).col(0);
    std::vector<Index> expected(2500);
    std::iota(expected.begin(), expected.end(), Index{0});
    std::stable_sort(expected.begin(), expected.end(), [&](Index a, Index b) { return df(a) > df(b); });
    expected.resize(300);
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(words, expected);

    const Compression c = compress(op, 4, default_eig_options(4, 1));
    const LawResult whole = factorize_low_rank(world, op.rows(), c.Y, freq, LawOptions{});
    LawOptions some;
    some.solve_only.assign(static_cast<std::size_t>(c.Y.rows()), 0);
    const Index begin = op.rows().begin(world.rank());
    for (const Index w : words)
        if (w >= begin && w < begin + c.Y.rows()) some.solve_only[static_cast<std::size_t>(w - begin)] = 1;
    const LawResult part = factorize_low_rank(world, op.rows(), c.Y, freq, some);
    EXPECT_EQ(part.anchors, whole.anchors);
    const Eigen::MatrixXd Bb_whole = distmat::gather_rows(world, op.rows(), whole.B_breve.transpose());
    const Eigen::MatrixXd Bb_part = distmat::gather_rows(world, op.rows(), part.B_breve.transpose());
    for (Index j = 0; j < 2500; ++j) {
        const bool listed = std::binary_search(words.begin(), words.end(), j) ||
                            std::find(whole.anchors.begin(), whole.anchors.end(), j) != whole.anchors.end();
        if (listed)
            EXPECT_EQ(Bb_part.row(j), Bb_whole.row(j)) << "word " << j;
        else
            EXPECT_EQ(Bb_part.row(j).cwiseAbs().sum(), 0.0) << "word " << j;
    }
    // Without E′'s entries listed (the looks' LAW): the same rows S′, the same B, B̆ and A
    // to the bit, and no triplets where the whole has some (Y here is not rectified).
    LawOptions unlisted;
    unlisted.list_correction = false;
    const LawResult bare = factorize_low_rank(world, op.rows(), c.Y, freq, unlisted);
    EXPECT_GT(mpi::allreduce_sum(world, static_cast<std::int64_t>(whole.correction.entry_value.size())), 0);
    EXPECT_TRUE(bare.correction.entry_row.empty() && bare.correction.entry_col.empty() && bare.correction.entry_value.empty());
    EXPECT_EQ(bare.correction.rows, whole.correction.rows);
    EXPECT_EQ(bare.anchors, whole.anchors);
    EXPECT_EQ(bare.B, whole.B);
    EXPECT_EQ(bare.B_breve, whole.B_breve);
    EXPECT_EQ(bare.A, whole.A);
}

// With the fit's looks (LAW's B̆ on the most frequent words only, their specificity and
// dissimilarity: look_at_topics) and the default's inexact middle projections, ENN stops
// after the same iteration at any rank count: the world's run against one rank's, the
// factors within 1e-9.
TEST(CompressedFit, EnnStopsAtTheSameIterationOnOneRank) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = noisy_corpus(600, 2500, 30);
    const auto run = [&](const mpi::Comm& comm, double forcing) {
        const DocumentOperator op(comm, 2500, deal(truth.docs, comm), cooc::CoocOptions{});
        const Compression c = compress(op, 4, default_eig_options(4, 1));
        // The fit's looks: the 300 words of largest document frequency.
        const std::vector<std::int64_t> freq = op.doc_freq();  // collective: once
        const std::vector<Index> words = most_frequent_words(comm, op.rows(), freq, 300);
        const Eigen::VectorXd mass = distmat::gather_rows(comm, op.rows(), op.row_sums()).col(0);
        EnnOptions e = stopping_enn(80, 2);
        e.forcing = forcing;
        e.look = [&](const Eigen::MatrixXd& Y) {
            return look_at_topics(comm, op.rows(), Y, freq, LawOptions{}, words, mass);
        };
        EnnResult r = rectify_enn(comm, op.rows(), c.Y, e);
        r.Y = distmat::gather_rows(comm, op.rows(), r.Y);
        return r;
    };
    const EnnResult here = run(world, kEnnForcing);
    const EnnResult alone = run(mpi::Comm(MPI_COMM_SELF), kEnnForcing);
    EXPECT_EQ(here.stop_reason, rectify::StopReason::quality);
    ASSERT_EQ(here.trace.size(), alone.trace.size());
    EXPECT_LT(here.trace.size(), 80u);
    for (std::size_t t = 0; t < here.trace.size(); ++t)
        if (!std::isnan(here.trace[t].look_specificity)) {
            EXPECT_NEAR(here.trace[t].look_specificity, alone.trace[t].look_specificity, 1e-9) << "look after " << t + 1;
            EXPECT_EQ(here.trace[t].look_dissimilarity, alone.trace[t].look_dissimilarity) << "look after " << t + 1;
        }
    EXPECT_LT(relative(here.Y * here.Y.transpose(), alone.Y * alone.Y.transpose()), 1e-9);
    // The middle projections were inexact: fewer products than the exact ones of the same
    // iterations without forcing.
    const EnnResult exact = run(world, 0.0);
    int inexact_products = 0, exact_products = 0;
    for (std::size_t t = 1; t + 1 < std::min(here.trace.size(), exact.trace.size()); ++t) {
        inexact_products += here.trace[t].products;
        exact_products += exact.trace[t].products;
    }
    EXPECT_LT(inexact_products, exact_products);
}

// The range finder continued from a round's block and product (a checkpoint mid-solve)
// reaches the same eigenpairs to its tolerance.
TEST(Compress, ResumesFromARound) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = noisy_corpus(600, 2500, 30);
    const DocumentOperator op(world, 2500, deal(truth.docs, world), cooc::CoocOptions{});
    distmat::EigOptions o = default_eig_options(6, 3);
    Eigen::MatrixXd block, product;
    double bound = 0;
    int round = 0;
    o.progress = [&](const distmat::EigRound& r) {
        if (r.round != 3) return;
        block = *r.block;
        product = *r.product;
        bound = r.lower_bound;
        round = r.round;
    };
    const Compression whole = compress(op, 6, o);
    ASSERT_TRUE(whole.converged);
    ASSERT_EQ(round, 3);
    o.progress = {};
    o.first_round = round;
    o.lower_bound = bound;
    const Compression resumed = compress(op, 6, o, &block, &product);
    EXPECT_TRUE(resumed.converged);
    EXPECT_LT(resumed.products, whole.products);
    const Eigen::MatrixXd a = distmat::gather_rows(world, op.rows(), whole.Y);
    const Eigen::MatrixXd b = distmat::gather_rows(world, op.rows(), resumed.Y);
    EXPECT_LT(relative(b, a), 1e-8);
    for (int k = 0; k < 6; ++k) EXPECT_NEAR(resumed.eigenvalues(k), whole.eigenvalues(k), 1e-10 * whole.eigenvalues(0));
}

TEST(CompressedFit, DenseAndSparseCorrectionsAgree) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = noisy_corpus(600, 2500, 30);
    const CompressedFit dense = fit_compressed(world, deal(truth.docs, world), 2500, 4, 1, 10, 300, 0.0);
    const CompressedFit sparse = fit_compressed(world, deal(truth.docs, world), 2500, 4, 1, 10, 300, 2.0);
    ASSERT_EQ(dense.enn.trace.size(), sparse.enn.trace.size());
    for (std::size_t t = 0; t < dense.enn.trace.size(); ++t) {
        EXPECT_EQ(dense.enn.trace[t].corrections, sparse.enn.trace[t].corrections) << "iteration " << t + 1;
        // The first E comes from the same Y₀ by the same loop: equal. Later ones from
        // factors that differ by the products' rounding (GEMM against sparse sums).
        if (t == 0)
            EXPECT_EQ(dense.enn.trace[t].negative_mass, sparse.enn.trace[t].negative_mass);
        else
            EXPECT_NEAR(dense.enn.trace[t].negative_mass, sparse.enn.trace[t].negative_mass,
                        1e-9 * sparse.enn.trace[t].negative_mass);
        EXPECT_EQ(dense.enn.trace[t].dense_share, 1.0);
        EXPECT_EQ(sparse.enn.trace[t].dense_share, 0.0);
    }
    EXPECT_GT(sparse.enn.trace.front().corrections, 0);
    EXPECT_EQ(dense.law.anchors, sparse.law.anchors);
    EXPECT_LT(relative(dense.B, sparse.B), 1e-9);
    EXPECT_LT(relative(dense.law.A, sparse.law.A), 1e-9);
}

// The float screen of the checked pairs' signs finds every negative pair DGEMM finds:
// the same number of corrections in every iteration, the same mass and model to rounding.
// The screen is forced on in every iteration and panel (its density thresholds would
// send these noisy corpora, with many negative pairs, to DGEMM).
TEST(CompressedFit, FloatScreenFindsEveryNegativePair) {
    const mpi::Comm world = mpi::Comm::world();
    for (const double length : {30.0, 300.0}) {
        const synth::SynthCorpus truth = noisy_corpus(600, 2500, length);
        const auto mine = deal(truth.docs, world);
        // Sparse F (density threshold 2) at 30 tokens a document, dense F (0) at 300.
        const double density = length < 100 ? 2.0 : 0.0;
        const CompressedFit screened = fit_compressed(world, mine, 2500, 6, 1, 12, 300, density, 1.0);  // always
        const CompressedFit full = fit_compressed(world, mine, 2500, 6, 1, 12, 300, density, 0.0);      // never
        ASSERT_EQ(screened.enn.trace.size(), full.enn.trace.size());
        for (std::size_t t = 0; t < full.enn.trace.size(); ++t) {
            EXPECT_EQ(screened.enn.trace[t].corrections, full.enn.trace[t].corrections) << "iteration " << t + 1;
            EXPECT_NEAR(screened.enn.trace[t].negative_mass, full.enn.trace[t].negative_mass,
                        1e-9 * full.enn.trace[t].negative_mass);
        }
        EXPECT_GT(full.enn.trace.back().corrections, 0);
        EXPECT_EQ(screened.enn.final_negative_entries, full.enn.final_negative_entries);
        EXPECT_EQ(screened.law.anchors, full.law.anchors);
        EXPECT_LT(relative(screened.B, full.B), 1e-9);
        EXPECT_LT(relative(screened.law.A, full.law.A), 1e-9);
    }
}

// Two words with the same row of the factor (as two rare words with the same documents
// and counts have) tie in LAW's pivoted QR; which of them is larger is rounding, and that
// differs between rank counts, thread counts and kernels. The lower word is the anchor:
// here a lower word gets the first anchor's row, nudged so that its P₀ column is shorter
// by 1e-10 … 1e-9 (a rule that took the larger would keep the first anchor), and the pivot
// is normalized by its own column's norm, not the largest's (2e-10 apart at least).
TEST(CompressedFit, TiedAnchorsGoToTheLowerWord) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = planted(5, 11);
    const corpus::Shard mine = deal(truth.docs, world);
    const CompressedFit f = fit_compressed(world, mine, 300, 5, 1, 20);
    const DocumentOperator op(world, 300, mine, cooc::CoocOptions{});
    const Index s = f.law.anchors.front();
    Index w = 0;
    while (std::find(f.law.anchors.begin(), f.law.anchors.end(), w) != f.law.anchors.end()) ++w;
    ASSERT_LT(w, s) << "the first anchor is the lowest candidate: no lower word to tie it with";
    Eigen::MatrixXd Y = distmat::gather_rows(world, op.rows(), f.enn.Y);
    // P₀'s column j has norm ‖R y_j‖ / d₀_j = ‖Y y_j‖ / (y_j · Yᵀ1) (Y = QR).
    const auto p0_norm = [&Y](Index j) { return (Y * Y.row(j).transpose()).norm() / Y.row(j).dot(Y.colwise().sum()); };
    Eigen::RowVectorXd nudge = Eigen::RowVectorXd::Zero(Y.cols());
    nudge(0) = 1e-11 * Y.row(s).norm();
    Y.row(w) = Y.row(s) + nudge;
    if (p0_norm(w) > p0_norm(s)) nudge = -nudge;
    // The gap is linear in the nudge: scale it to put the squared norms ~5e-10 apart.
    Y.row(w) = Y.row(s) + nudge;
    nudge *= 2.5e-10 / (1 - p0_norm(w) / p0_norm(s));
    Y.row(w) = Y.row(s) + nudge;
    const double gap = 1 - p0_norm(w) / p0_norm(s);  // of the norms: half that of the squares
    ASSERT_GT(gap, 1e-10);
    ASSERT_LT(gap, 0.5 * kPivotTie);
    const LawResult tied = factorize_low_rank(world, op.rows(), distmat::local_rows(op.rows(), world.rank(), Y),
                                              op.doc_freq(), LawOptions{});
    EXPECT_EQ(tied.anchors.front(), w) << "word " << s << " was chosen over the lower, tied word " << w;
    EXPECT_NEAR(tied.diag_r(0), p0_norm(w), 1e-12 * p0_norm(w)) << "not the chosen column's norm";
    EXPECT_EQ(std::count(tied.anchors.begin(), tied.anchors.end(), s), 0);
    EXPECT_EQ(std::vector<Index>(tied.anchors.begin() + 1, tied.anchors.end()),
              std::vector<Index>(f.law.anchors.begin() + 1, f.law.anchors.end()));
}

// Given anchors: LAW's own anchors given back, in its order, give its model to the bit
// (the same pivots, the same arithmetic); a word whose row of the factor is a multiple of
// an earlier given word's (equal columns of P₀) is refused on every rank, as is a word
// that never occurs.
TEST(CompressedFit, GivenAnchorsArePivotsAndDependentOnesAreRefused) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = planted(5, 11);
    const corpus::Shard mine = deal(truth.docs, world);
    const CompressedFit f = fit_compressed(world, mine, 300, 5, 1, 20);
    const DocumentOperator op(world, 300, mine, cooc::CoocOptions{});
    LawOptions given;
    given.anchors = f.law.anchors;
    const LawResult same = factorize_low_rank(world, op.rows(), f.enn.Y, op.doc_freq(), given);
    EXPECT_EQ(same.anchors, f.law.anchors);
    EXPECT_EQ(same.diag_r, f.law.diag_r);
    EXPECT_EQ(same.A, f.law.A);
    EXPECT_EQ(same.B, f.law.B);

    Eigen::MatrixXd Y = distmat::gather_rows(world, op.rows(), f.enn.Y);
    const Index s = f.law.anchors.front();
    Index w = 0;
    while (std::find(f.law.anchors.begin(), f.law.anchors.end(), w) != f.law.anchors.end()) ++w;
    Y.row(w) = 2.0 * Y.row(s);  // y_w = 2 y_s: P₀'s columns w and s are equal
    LawOptions dependent;
    dependent.anchors = f.law.anchors;
    dependent.anchors.back() = w;
    test::expect_stage_failed(
        world,
        [&] {
            (void)factorize_low_rank(world, op.rows(), distmat::local_rows(op.rows(), world.rank(), Y), op.doc_freq(),
                                     dependent);
        },
        {"(word id " + std::to_string(w) + ") depends on the anchor words before it"});
}

// The metrics against the documents' C split R = C − BABᵀ (and the recovery's residual R̃,
// by word) at Q, an orthonormal basis of [Y B]: the part on Q exact, the rest by probes
// projected off Q. Against C formed densely from the operator: with no probes the estimate
// is ‖RQ‖²_F and ‖r̃_i Q‖² to rounding (a wrong or missing exact part fails here); with
// many, the whole ‖R‖_F and every word's ‖r̃_i‖ within the estimate's own error (a part
// counted twice, or the probes not projected, fails here).
TEST(FactorMetrics, TheExactDirectionsAreExactAndTheProbesMeasureTheRest) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = planted(5, 11);
    const corpus::Shard mine = deal(truth.docs, world);
    const Index N = 300;
    const int K = 5;
    const CompressedFit f = fit_compressed(world, mine, N, K, 1, 3);
    const DocumentOperator op(world, N, mine, cooc::CoocOptions{});
    const distmat::RowPartition& rows = op.rows();
    const Eigen::MatrixXd identity_rows = Eigen::MatrixXd::Identity(N, N).middleRows(rows.begin(world.rank()),
                                                                                      rows.rows(world.rank()));
    const Eigen::MatrixXd C = distmat::gather_rows(world, rows, op.apply(identity_rows));
    const Eigen::MatrixXd Y = distmat::gather_rows(world, rows, f.enn.Y);
    const Eigen::MatrixXd B = distmat::gather_rows(world, rows, f.law.B);
    const Eigen::MatrixXd B_breve = distmat::gather_rows(world, rows, f.law.B_breve.transpose()).transpose();
    const Eigen::MatrixXd R = C - B * f.law.A * B.transpose();
    const Eigen::VectorXd c = C.rowwise().sum();
    Eigen::MatrixXd C_S(K, N);
    for (int k = 0; k < K; ++k) C_S.row(k) = C.row(f.law.anchors[static_cast<std::size_t>(k)]) / c(f.law.anchors[static_cast<std::size_t>(k)]);
    const Eigen::MatrixXd R_tilde = c.cwiseInverse().asDiagonal() * C - B_breve.transpose() * C_S;
    Eigen::MatrixXd YB(N, 2 * K);
    YB << Y, B;
    // Q: [Y B]'s left singular vectors above 1e-6 of the largest. Here [Y B] has rank 2K − 1
    // (its singular values 0.15 … 5.7e-5, then 1.8e-17): a basis completed by rounding
    // would make the split (not the estimate's mean) depend on the rank count.
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(YB, Eigen::ComputeThinU);
    Index rank = 0;
    while (rank < 2 * K && svd.singularValues()(rank) > 1e-6 * svd.singularValues()(0)) ++rank;
    EXPECT_EQ(rank, 2 * K - 1);
    const Eigen::MatrixXd Q = svd.matrixU().leftCols(rank);
    const double exact = (R * Q).squaredNorm();
    const Eigen::VectorXd word_exact = (R_tilde * Q).rowwise().squaredNorm();
    ASSERT_GT(exact, 0.01 * R.squaredNorm());  // the split is not trivial here (1.8 %): both parts count
    ASSERT_LT(exact, 0.95 * R.squaredNorm());

    const FactorModel model{f.enn.Y, f.law.correction, f.law.word_mass, f.law.B, f.law.B_breve, f.law.A, f.law.anchors};
    const auto local = [&](const Eigen::VectorXd& v) {
        return Eigen::VectorXd(v.segment(rows.begin(world.rank()), rows.rows(world.rank())));
    };
    const FactorMetrics none = factor_metrics(op, model, 0);
    EXPECT_EQ(none.exact_directions, rank);
    EXPECT_NEAR(none.approximation_original * none.approximation_original, exact, 1e-9 * exact);
    EXPECT_LT((none.recovery_original.array().square() - local(word_exact).array()).abs().maxCoeff(),
              1e-9 * word_exact.maxCoeff());

    const int probes = 8192;
    const FactorMetrics many = factor_metrics(op, model, probes);
    const double whole = R.squaredNorm();
    const double estimate = many.approximation_original * many.approximation_original;
    // (a part counted twice or left out would move the estimate by the exact part's 1.8 %)
    EXPECT_LT(4 * many.approximation_original_relative_error, exact / whole);
    EXPECT_NEAR(estimate, whole, 4 * many.approximation_original_relative_error * whole);
    // per word: its probed part's standard error is (2/p)^½ of that part (a Gaussian
    // probe's square has variance 2): within 5 of them
    const Eigen::VectorXd word_whole = local(R_tilde.rowwise().squaredNorm());
    const Eigen::VectorXd probed = word_whole - local(word_exact);
    const Eigen::ArrayXd off = (many.recovery_original.array().square() - word_whole.array()).abs();
    EXPECT_TRUE((off <= 5 * std::sqrt(2.0 / probes) * probed.array() + 1e-12 * word_whole.maxCoeff()).all())
        << "worst: " << (off / probed.array().max(1e-300)).maxCoeff() / std::sqrt(2.0 / probes) << " standard errors";
    const double share = mpi::allreduce_sum(world, probed.sum()) / mpi::allreduce_sum(world, word_whole.sum());
    EXPECT_NEAR(many.recovery_original_probed_share, share, 5 * std::sqrt(2.0 / probes) * share);
    // Over all words: the probed sum's standard error is (2/p)^½ ‖MᵀM‖_F, M = R̃(I − QQᵀ)
    // (Gaussian probes), far below each word's; within 5 of it, and the exact part above
    // 5 of it, so that an exact part counted twice, or left out, fails here.
    const Eigen::MatrixXd M = R_tilde - (R_tilde * Q) * Q.transpose();
    const double sum_error = std::sqrt(2.0 / probes) * (M.transpose() * M).norm();
    const double estimated_sum = mpi::allreduce_sum(world, many.recovery_original.squaredNorm());
    EXPECT_NEAR(estimated_sum, R_tilde.squaredNorm(), 5 * sum_error);
    EXPECT_GT(word_exact.sum(), 5 * sum_error);
}

// A broken E′ on one rank only (an entry whose row is outside S′, on the last rank) stops
// every rank with the agreed failure, before any collective that rank would skip: no rank
// waits alone.
TEST(FactorMetrics, ABrokenCorrectionOnOneRankStopsEveryRank) {
    const mpi::Comm world = mpi::Comm::world();
    const synth::SynthCorpus truth = planted(5, 11);
    const corpus::Shard mine = deal(truth.docs, world);
    const CompressedFit f = fit_compressed(world, mine, 300, 5, 1, 3);
    const DocumentOperator op(world, 300, mine, cooc::CoocOptions{});
    Correction broken = f.law.correction;
    if (world.rank() == world.size() - 1) {
        Index outside = 0;  // a row not in S′
        while (std::binary_search(broken.rows.begin(), broken.rows.end(), outside)) ++outside;
        broken.entry_row.push_back(outside);
        broken.entry_col.push_back(op.rows().begin(world.rank()));
        broken.entry_value.push_back(1e-3);
    }
    const FactorModel good{f.enn.Y, f.law.correction, f.law.word_mass, f.law.B, f.law.B_breve, f.law.A, f.law.anchors};
    EXPECT_NO_THROW(factor_metrics(op, good, 8));
    const FactorModel bad{f.enn.Y, broken, f.law.word_mass, f.law.B, f.law.B_breve, f.law.A, f.law.anchors};
    EXPECT_THROW(factor_metrics(op, bad, 8), StageFailed);
}

}  // namespace
}  // namespace jsmf::lowrank
