// SPDX-License-Identifier: MIT
// C built distributed equals the one-process Eq. 5 reference at any rank count, grid,
// block size, buffer size and exchange; input errors on one rank stop every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/cooc/reference.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/synth/synth.hpp"
#include "test_support.hpp"

namespace jsmf::cooc {
namespace {

// A random corpus with awkward documents: empty, one token, one distinct word repeated,
// and every word of the vocabulary. Same seed => same corpus on every rank.
corpus::Shard random_corpus(int num_docs, int num_words, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    corpus::Shard shard;
    for (int m = 0; m < num_docs; ++m) {
        corpus::Document doc;
        doc.key = {0, m + 1};
        const int kind = static_cast<int>(engine() % 8);
        for (int w = 0; w < num_words; ++w) {
            const bool take = kind == 0 ? false : kind == 1 ? w == m % num_words : kind == 2 ? true : engine() % 4 == 0;
            if (!take) continue;
            doc.words.push_back(static_cast<std::uint32_t>(w));
            doc.counts.push_back(kind == 1 ? 1 + static_cast<std::uint32_t>(engine() % 3) : 1 + static_cast<std::uint32_t>(engine() % 5));
        }
        if (!doc.words.empty()) shard.append(doc);
    }
    return shard;
}

// Sums of at most M terms per entry, added in a different order: the 1e-12
// relative bound is far above the ~M·ε rounding of these small corpora.
constexpr double kRelative = 1e-12;

void expect_matches_reference(const CoocResult& result, const Eigen::MatrixXd& reference, const corpus::Shard& all,
                              const CoocOptions& options, const std::string& what) {
    const Eigen::MatrixXd C = distmat::gather_all(result.C);
    const double scale = reference.cwiseAbs().maxCoeff();
    EXPECT_LE((C - reference).cwiseAbs().maxCoeff(), kRelative * scale) << what;
    EXPECT_LE((result.stats.unigram - reference.rowwise().sum()).cwiseAbs().maxCoeff(), kRelative) << what;
    Index M = 0, skipped = 0, tokens = 0;
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> doc_freq = Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>::Zero(C.rows());
    for (Index m = 0; m < all.num_docs(); ++m) {
        const corpus::Document doc = all.document(m);
        const bool used = doc.tokens() >= options.min_tokens && static_cast<Index>(doc.distinct()) >= options.min_distinct;
        if (!used) {
            ++skipped;
            continue;
        }
        ++M;
        tokens += doc.tokens();
        for (auto w : doc.words) ++doc_freq(w);
    }
    EXPECT_EQ(result.stats.num_docs, M) << what;
    EXPECT_EQ(result.stats.num_docs_skipped, skipped) << what;
    EXPECT_EQ(result.stats.num_tokens, tokens) << what;
    EXPECT_EQ(result.stats.doc_freq, doc_freq) << what;
    EXPECT_NEAR(result.stats.sum, 1.0, 1e-12) << what;
    EXPECT_GE(result.stats.min, 0.0) << what;
}

TEST(Cooc, MatchesSerialReferenceForEveryLayoutAndBuffer) {
    const auto world = mpi::Comm::world();
    const int N = 37;
    const corpus::Shard all = random_corpus(90, N, 2024);
    const corpus::Shard mine = test::share_of(all, world);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const auto grid = distmat::Grid::create(world, pr, pc);
        for (const int block : {1, 5, 64}) {                 // 5 does not divide 37: uneven edge blocks
            for (const std::size_t buffer : {std::size_t{1}, std::size_t{300}, std::size_t{64} << 20}) {
                for (const Exchange exchange : {Exchange::docs, Exchange::pairs}) {
                    CoocOptions options;
                    options.block_size = block;
                    options.buffer_bytes = buffer;
                    options.exchange = exchange;
                    corpus::ShardStream stream(mine);
                    const CoocResult result = build_cooccurrence(grid, N, stream, options);
                    const std::string what = std::to_string(pr) + "x" + std::to_string(pc) + " block " +
                                             std::to_string(block) + " buffer " + std::to_string(buffer) +
                                             (exchange == Exchange::docs ? " docs" : " pairs");
                    expect_matches_reference(result, dense_reference(all, N, options), all, options, what);
                    if (buffer == 1) {
                        EXPECT_GE(result.stats.exchange_rounds, mine.num_docs() / 2) << what;
                    }
                }
            }
        }
    }
}

// The tf-idf second moment written plainly: the dense V × M matrix D of tf-idf weights
// D(v, d) = (h_dv / n_d) ln(M / df_v) over the used documents, then D Dᵀ / Σ D Dᵀ.
Eigen::MatrixXd dense_tfidf(const corpus::Shard& all, Index N, const CoocOptions& options) {
    std::vector<corpus::Document> used;
    for (Index m = 0; m < all.num_docs(); ++m) {
        const corpus::Document doc = all.document(m);
        if (contributes(doc, options)) used.push_back(doc);
    }
    const Index M = static_cast<Index>(used.size());
    Eigen::VectorXd df = Eigen::VectorXd::Zero(N);
    for (const auto& doc : used)
        for (auto w : doc.words) df(w) += 1;
    Eigen::MatrixXd D = Eigen::MatrixXd::Zero(N, M);
    for (Index d = 0; d < M; ++d) {
        const auto& doc = used[static_cast<std::size_t>(d)];
        for (std::size_t a = 0; a < doc.words.size(); ++a) {
            const auto v = doc.words[a];
            D(v, d) = static_cast<double>(doc.counts[a]) / static_cast<double>(doc.tokens()) *
                      std::log(static_cast<double>(M) / df(v));
        }
    }
    const Eigen::MatrixXd P = D * D.transpose();
    return P / P.sum();
}

TEST(Cooc, TfidfSecondMomentMatchesThePlainFormula) {
    const auto world = mpi::Comm::world();
    const int N = 29;
    const corpus::Shard all = random_corpus(80, N, 77);
    const corpus::Shard mine = test::share_of(all, world);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        for (const Exchange exchange : {Exchange::docs, Exchange::pairs}) {
            CoocOptions options;
            options.block_size = 4;
            options.exchange = exchange;
            options.estimator = Estimator::tfidf;
            options.min_tokens = 3;
            corpus::ShardStream stream(mine);
            const CoocResult result = build_cooccurrence(distmat::Grid::create(world, pr, pc), N, stream, options);
            const Eigen::MatrixXd expected = dense_tfidf(all, N, options);
            const Eigen::MatrixXd C = distmat::gather_all(result.C);
            const std::string what = std::to_string(pr) + "x" + std::to_string(pc) + (exchange == Exchange::docs ? " docs" : " pairs");
            EXPECT_LE((C - expected).cwiseAbs().maxCoeff(), 1e-12 * expected.cwiseAbs().maxCoeff()) << what;
            EXPECT_NEAR(result.stats.sum, 1.0, 1e-12) << what;
            // It is not Eq. 5: the diagonal keeps h², and weights differ by idf.
            EXPECT_GT((C - dense_reference(all, N, options)).cwiseAbs().maxCoeff(), 1e-4) << what;
        }
    }
}

TEST(Cooc, HandComputedCorpusOnMoreRanksThanWords) {
    // The 3-word corpus of tests/unit/cooc_reference_test.cpp, worked by hand there:
    // C = [[1/9,1/9,0],[1/9,0,1/6],[0,1/6,1/3]]. With 4 ranks some own no entry of C.
    const auto world = mpi::Comm::world();
    corpus::Shard all;
    const std::vector<std::pair<std::vector<std::uint32_t>, std::vector<std::uint32_t>>> docs = {
        {{0, 1}, {2, 1}}, {{1, 2}, {1, 1}}, {{2}, {3}}, {{0}, {1}}};
    for (std::size_t m = 0; m < docs.size(); ++m) {
        corpus::Document doc;
        doc.key = {0, static_cast<std::int64_t>(m) + 1};
        doc.words = docs[m].first;
        doc.counts = docs[m].second;
        all.append(doc);
    }
    Eigen::MatrixXd expected(3, 3);
    expected << 1.0 / 9, 1.0 / 9, 0, 1.0 / 9, 0, 1.0 / 6, 0, 1.0 / 6, 1.0 / 3;
    const corpus::Shard mine = test::share_of(all, world);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        for (const int block : {1, 2, 64}) {
            CoocOptions options;
            options.block_size = block;
            corpus::ShardStream stream(mine);
            const CoocResult result = build_cooccurrence(distmat::Grid::create(world, pr, pc), 3, stream, options);
            EXPECT_LE((distmat::gather_all(result.C) - expected).cwiseAbs().maxCoeff(), 4e-16) << pr << "x" << pc;
            EXPECT_EQ(result.stats.num_docs, 3);
            EXPECT_EQ(result.stats.num_docs_skipped, 1);
        }
    }
}

TEST(Cooc, FiltersMatchReference) {
    const auto world = mpi::Comm::world();
    const int N = 29;
    const corpus::Shard all = random_corpus(70, N, 99);
    const corpus::Shard mine = test::share_of(all, world);
    const auto grid = distmat::Grid::most_square(world);
    CoocOptions options;
    options.block_size = 4;
    options.min_tokens = 5;    // the authors' setting
    options.min_distinct = 3;
    corpus::ShardStream stream(mine);
    const CoocResult result = build_cooccurrence(grid, N, stream, options);
    EXPECT_GT(result.stats.num_docs_skipped, 0);
    expect_matches_reference(result, dense_reference(all, N, options), all, options, "min 5 tokens, 3 distinct");
}

TEST(Cooc, ResultDoesNotDependOnRankCount) {
    // The same algorithm on one rank (rank 0 alone, on a communicator of its own) and on
    // all ranks agrees to 1e-12.
    const auto world = mpi::Comm::world();
    const int N = 31;
    const corpus::Shard all = random_corpus(60, N, 5);
    CoocOptions options;
    options.block_size = 3;
    const corpus::Shard mine = test::share_of(all, world);
    corpus::ShardStream mine_stream(mine);
    const Eigen::MatrixXd distributed =
        distmat::gather_all(build_cooccurrence(distmat::Grid::most_square(world), N, mine_stream, options).C);
    const mpi::Comm group = world.split(world.rank() == 0 ? 0 : 1, world.rank());
    if (world.rank() == 0) {
        corpus::ShardStream all_stream(all);
        const Eigen::MatrixXd single =
            distmat::gather_all(build_cooccurrence(distmat::Grid::create(group, 1, 1), N, all_stream, options).C);
        EXPECT_LE((distributed - single).cwiseAbs().maxCoeff(), kRelative * single.cwiseAbs().maxCoeff());
    }
}

TEST(Cooc, WordOutsideVocabularyFailsOnEveryRank) {
    const auto world = mpi::Comm::world();
    const auto grid = distmat::Grid::most_square(world);
    corpus::Shard mine;
    corpus::Document doc;
    doc.words = {1, 2};
    doc.counts = {1, 1};
    mine.append(doc);
    if (world.rank() == world.size() - 1) {
        doc.words = {3, 12};  // vocabulary has 10 words
        mine.append(doc);
    }
    corpus::ShardStream stream(mine);
    test::expect_stage_failed(world, [&] { build_cooccurrence(grid, 10, stream, CoocOptions{}); },
                              {test::rank_tag(world.size() - 1, world.size()), "word id 13 is outside the vocabulary"});
}

TEST(Cooc, BadOptionsAreInputErrors) {
    const auto world = mpi::Comm::world();
    const auto grid = distmat::Grid::most_square(world);
    corpus::Shard empty;
    for (const auto& mutate : std::vector<std::function<void(CoocOptions&)>>{
             [](CoocOptions& o) { o.min_tokens = 1; }, [](CoocOptions& o) { o.block_size = 0; },
             [](CoocOptions& o) { o.min_distinct = 0; }}) {
        CoocOptions options;
        mutate(options);
        corpus::ShardStream stream(empty);
        EXPECT_THROW(build_cooccurrence(grid, 5, stream, options), StageFailed);
    }
    corpus::ShardStream stream(empty);  // no document at all: M = 0 is an input error
    EXPECT_THROW(build_cooccurrence(grid, 5, stream, CoocOptions{}), StageFailed);
}

// ---- through UCI files, read in shards by every rank ----

std::string uci_text(const corpus::Shard& all, int num_words, int declared_nnz_delta = 0) {
    const Index max_id = all.num_docs() > 0 ? all.keys.back().id : 0;  // empty documents leave gaps
    std::string text = std::to_string(max_id + 3) + "\n" + std::to_string(num_words) + "\n" +
                       std::to_string(all.num_entries() + declared_nnz_delta) + "\n";
    for (Index m = 0; m < all.num_docs(); ++m) {
        const auto doc = all.document(m);
        for (std::size_t k = 0; k < doc.words.size(); ++k)
            text += std::to_string(doc.key.id) + " " + std::to_string(doc.words[k] + 1) + " " + std::to_string(doc.counts[k]) + "\n";
    }
    return text;
}

CoocResult build_from_files(const mpi::Comm& world, const std::vector<std::string>& paths, const CoocOptions& options) {
    const auto files = corpus::inspect_uci_files(world, paths);
    corpus::UciReader reader(files, corpus::plan_uci_pieces(files, world.rank(), world.size()));
    const auto grid = distmat::Grid::most_square(world);
    CoocResult result = build_cooccurrence(grid, files.front().header.num_words, reader, options);
    corpus::check_uci_totals(world, reader);
    return result;
}

TEST(CoocFromFiles, PlainGzipAndSplitFilesMatchReference) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int N = 41;
    const corpus::Shard all = random_corpus(150, N, 77);
    const std::string text = uci_text(all, N);
    if (world.is_root()) {
        test::write_text(dir.file("c.txt"), text);
        test::write_gzip(dir.file("c.txt.gz"), text);
        // The same corpus as 3 files (docs 1-50, 51-100, 101-150 of the shard).
        for (int f = 0; f < 3; ++f) {
            corpus::Shard part;
            for (Index m = f * 50; m < std::min<Index>((f + 1) * 50, all.num_docs()); ++m) part.append(all.document(m));
            test::write_text(dir.file("part" + std::to_string(f) + ".txt"), uci_text(part, N));
        }
    }
    world.barrier();
    CoocOptions options;
    options.block_size = 6;
    options.buffer_bytes = 512;
    const Eigen::MatrixXd reference = dense_reference(all, N, options);
    for (const auto& paths : std::vector<std::vector<std::string>>{
             {dir.file("c.txt")}, {dir.file("c.txt.gz")}, {dir.file("part0.txt"), dir.file("part1.txt"), dir.file("part2.txt")}}) {
        const CoocResult result = build_from_files(world, paths, options);
        expect_matches_reference(result, reference, all, options, paths.front());
    }
}

TEST(CoocFromFiles, BadLineInTheLastRanksShareStopsEveryRankWithOneMessage) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int N = 20;
    const corpus::Shard all = random_corpus(80, N, 3);
    std::string text = uci_text(all, N);
    // Corrupt the very last line: it is always in the last rank's share.
    text.pop_back();
    text = text.substr(0, text.rfind('\n') + 1) + std::to_string(all.keys.back().id) + " 7 -1\n";
    const std::size_t line_number = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    if (world.is_root()) {
        test::write_text(dir.file("bad.txt"), text);
        test::write_gzip(dir.file("bad.txt.gz"), text);
    }
    world.barrier();
    for (const auto* name : {"bad.txt", "bad.txt.gz"}) {
        test::expect_stage_failed(world, [&] { build_from_files(world, {dir.file(name)}, CoocOptions{}); },
                                  {std::string(name) + ":" + std::to_string(line_number) + ": count must be positive",
                                   test::rank_tag(world.size() - 1, world.size())});
    }
}

TEST(CoocFromFiles, HeaderCountMismatchIsReportedOnce) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const corpus::Shard all = random_corpus(30, 12, 8);
    if (world.is_root()) test::write_text(dir.file("nnz.txt"), uci_text(all, 12, +2));
    world.barrier();
    test::expect_stage_failed(world, [&] { build_from_files(world, {dir.file("nnz.txt")}, CoocOptions{}); },
                              {"header says NNZ = " + std::to_string(all.num_entries() + 2)});
}

TEST(CoocFromFiles, DocumentSplitAcrossTheFileIsRejected) {
    // Document 1's lines at the start and again at the end: at 1 rank the reader sees it
    // come back; at several ranks the cross-rank check does.
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    std::string body;
    int nnz = 0;
    for (int d = 1; d <= 40; ++d)
        for (int w = 1; w <= 5; ++w, ++nnz) body += std::to_string(d) + " " + std::to_string(w + d % 3) + " 1\n";
    body += "1 9 1\n";
    ++nnz;
    if (world.is_root()) test::write_text(dir.file("split.txt"), "40\n10\n" + std::to_string(nnz) + "\n" + body);
    world.barrier();
    test::expect_stage_failed(world, [&] { build_from_files(world, {dir.file("split.txt")}, CoocOptions{}); },
                              {"document 1 appears"});
}

TEST(CoocFromFiles, SynthCorpusSumsToOne) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    synth::SynthOptions o;
    o.num_docs = 400;
    o.num_words = 60;
    o.num_topics = 3;
    o.mean_doc_length = 20;
    const synth::SynthCorpus corpus = synth::generate(o);
    if (world.is_root()) synth::write_uci(dir.file("s.txt.gz"), corpus.docs, corpus.num_docs, o.num_words);
    world.barrier();
    CoocOptions options;
    options.block_size = 7;
    const CoocResult result = build_from_files(world, {dir.file("s.txt.gz")}, options);
    expect_matches_reference(result, dense_reference(corpus.docs, o.num_words, options), corpus.docs, options, "synth");
}

}  // namespace
}  // namespace jsmf::cooc
