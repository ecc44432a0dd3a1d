// SPDX-License-Identifier: MIT
// The pipeline as a library call: jsmf::fit::fit at any rank count recovers a planted
// model, equals the same fit on one rank, and refuses bad options on every rank at once.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <hdf5.h>

#include <filesystem>

#include <algorithm>
#include <array>
#include <map>
#include <regex>
#include <set>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "jsmf/core/stop.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/distmat/grid.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/eval/truth.hpp"
#include "jsmf/eval/clustering.hpp"
#include "jsmf/eval/dist_metrics.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/eval/metrics.hpp"
#include "jsmf/fit/evaluate.hpp"
#include "jsmf/fit/fit.hpp"
#include "jsmf/fit/job.hpp"
#include "jsmf/fit/measure.hpp"
#include "jsmf/fit/pipeline_choice.hpp"
#include "jsmf/fit/semi_synthetic.hpp"
#include "jsmf/fit/sweep.hpp"
#include "jsmf/infer/corpus.hpp"
#include "jsmf/lowrank/enn.hpp"
#include "jsmf/model/topic_rows.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/io/schema.hpp"
#include "jsmf/recover/recover.hpp"
#include "jsmf/synth/synth.hpp"
#include "mpi/test_support.hpp"

namespace jsmf::fit {
namespace {

/// A planted corpus written by rank 0 as UCI files every rank reads (fit's own input path).
struct Planted {
    synth::SynthCorpus truth;
    CorpusSource source;
};

// Rank 0: a copy of the HDF5 file `from` at `to` whose 2-D float64 `dataset` has entry
// (row, col) changed by one part in 10¹², as a torn or altered file would be.
void damaged_copy(const mpi::Comm& world, const std::string& from, const std::string& to, const char* dataset,
                  Index row, Index col) {
    if (!world.is_root()) return;
    std::filesystem::copy_file(from, to);
    const hid_t file = H5Fopen(to.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t set = H5Dopen2(file, dataset, H5P_DEFAULT);
    const hid_t space = H5Dget_space(set);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(space, dims, nullptr);
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> M(dims[0], dims[1]);
    H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, M.data());
    M(row, col) *= 1.0 + 1e-12;
    H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, M.data());
    H5Sclose(space);
    H5Dclose(set);
    H5Fclose(file);
}

Planted plant(const mpi::Comm& world, const test::SharedTempDir& dir, int topics, Seed seed, Index num_docs = 3000,
              double mean_doc_length = 120, Index num_words = 300) {
    synth::SynthOptions o;
    o.num_docs = num_docs;
    o.num_words = num_words;
    o.num_topics = topics;
    o.anchor_mass = 0.03;
    o.word_concentration = 1.0;
    o.mean_doc_length = mean_doc_length;
    o.seed = seed;
    Planted p;
    p.truth = synth::generate(o);  // the same on every rank (seeded)
    p.source.files = {dir.file("docword.p.txt")};
    p.source.vocab = dir.file("vocab.p.txt");
    p.source.options.block_size = 16;
    if (world.is_root()) {
        synth::write_uci(p.source.files.front(), p.truth.docs, p.truth.num_docs, o.num_words);
        corpus::write_vocab(p.source.vocab, p.truth.vocab);
    }
    MPI_Barrier(world.raw());
    return p;
}

// The compressed pipeline at K topics, the other options at their defaults.
FitOptions compressed_options(int K) {
    FitOptions o;
    o.topics = {K};
    o.pipeline = Pipeline::compressed;
    return o;
}

std::shared_ptr<const distmat::Grid> square_grid(const mpi::Comm& comm) {
    const auto shape = test::grid_shapes(comm.size());
    const auto& middle = shape[(shape.size() - 1) / 2];
    return distmat::Grid::create(comm, middle.first, middle.second);
}

/// Collective. A compressed record's Y, whole on every rank, from each rank's rows (the
/// fit keeps Y by rows; the ranks' blocks follow each other in rank order).
Eigen::MatrixXd whole_factor(const mpi::Comm& world, const model::CompressedRecord& r) {
    using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const RowMajor mine = r.Y_rows;
    std::vector<double> all =
        mpi::gather_concat(world, std::vector<double>(mine.data(), mine.data() + mine.size()), 0);
    std::int64_t n = static_cast<std::int64_t>(all.size());
    mpi::broadcast(world, n, 0);
    all.resize(static_cast<std::size_t>(n));
    mpi::broadcast(world, all.data(), all.size(), 0);
    const Index K = mpi::allreduce_max(world, static_cast<Index>(r.Y_rows.cols()));
    EXPECT_EQ(static_cast<Index>(all.size()), r.Y_total_rows * K);
    if (K == 0 || static_cast<Index>(all.size()) != r.Y_total_rows * K) return {};
    return Eigen::Map<const RowMajor>(all.data(), r.Y_total_rows, K);
}

/// The model with its word-indexed arrays whole, on every rank: a fit keeps B, B̆ and the
/// unigram on the root (dense) or by rows (compressed), Y and E′'s triplets by rank
/// (FitResult), and the comparisons below run on every rank.
model::Model everywhere(const mpi::Comm& world, model::Model m) {
    model::gather_to_root(world, m);  // a compressed fit's topics are kept by rows
    distmat::broadcast_from_root(world, m.B);
    distmat::broadcast_from_root(world, m.B_breve);
    Eigen::MatrixXd unigram = m.unigram;
    distmat::broadcast_from_root(world, unigram);
    m.unigram = unigram;
    if (m.compressed) {
        model::CompressedRecord& r = *m.compressed;
        r.Y = whole_factor(world, r);
        const auto copy = [&](auto& values) {  // each rank's triplets, in rank order
            values = mpi::gather_concat(world, values, 0);
            std::int64_t n = static_cast<std::int64_t>(values.size());
            mpi::broadcast(world, n, 0);
            values.resize(static_cast<std::size_t>(n));
            mpi::broadcast(world, values.data(), values.size(), 0);
        };
        copy(r.correction_row);
        copy(r.correction_col);
        copy(r.correction_value);
    }
    return m;
}

/// The compressed pipeline's promise: no rank holds the model's N × K arrays (B, B̆, Y)
/// whole: each its rows, in rank order, as the factor's; E′'s triplets stay with the ranks
/// that found them, each rank's at its offset.
void expect_words_by_rows(const mpi::Comm& world, const model::Model& m, Index N) {
    EXPECT_EQ(m.B_total_rows, N);
    EXPECT_EQ(m.B.cols(), m.num_topics);
    EXPECT_EQ(m.B_breve.rows(), m.num_topics);
    EXPECT_EQ(m.B_breve.cols(), m.B.rows());
    EXPECT_EQ(m.unigram.size(), m.B.rows());
    EXPECT_LE(m.B.rows(), (N + world.size() - 1) / world.size());
    EXPECT_EQ(mpi::allreduce_sum(world, static_cast<std::int64_t>(m.B.rows())), N);
    std::vector<std::int64_t> first{static_cast<std::int64_t>(m.B.rows())};
    mpi::exscan_inplace(world, first, MPI_SUM);
    EXPECT_EQ(m.B_first_row, first[0]);
    ASSERT_TRUE(m.compressed.has_value());
    EXPECT_EQ(m.compressed->Y_first_row, m.B_first_row);  // the same words as the factor's rows'
    EXPECT_EQ(m.compressed->Y_rows.rows(), m.B.rows());
    const model::CompressedRecord& r = *m.compressed;
    EXPECT_EQ(r.Y.size(), 0);
    EXPECT_EQ(r.Y_total_rows, N);
    EXPECT_EQ(r.Y_rows.cols(), m.num_topics);
    EXPECT_LE(r.Y_rows.rows(), (N + world.size() - 1) / world.size());
    EXPECT_EQ(mpi::allreduce_sum(world, static_cast<std::int64_t>(r.Y_rows.rows())), N);
    // each rank's first row is the rows of the ranks before it
    const std::vector<std::int64_t> firsts = mpi::gather_concat(world, std::vector<std::int64_t>{r.Y_first_row}, 0);
    const std::vector<std::int64_t> counts = mpi::gather_concat(world, std::vector<std::int64_t>{r.Y_rows.rows()}, 0);
    for (std::size_t i = 1; i < firsts.size(); ++i) EXPECT_EQ(firsts[i], firsts[i - 1] + counts[i - 1]) << i;
    if (world.is_root()) {
        EXPECT_EQ(r.Y_first_row, 0);
    }
    // E′: each rank's triplets where the ranks before it end; all of them, correction_total
    const auto mine = static_cast<std::int64_t>(r.correction_value.size());
    EXPECT_EQ(r.correction_row.size(), r.correction_value.size());
    EXPECT_EQ(r.correction_col.size(), r.correction_value.size());
    EXPECT_EQ(mpi::allreduce_sum(world, mine), r.correction_total);
    const std::vector<std::int64_t> starts = mpi::gather_concat(world, std::vector<std::int64_t>{r.correction_first}, 0);
    const std::vector<std::int64_t> sizes = mpi::gather_concat(world, std::vector<std::int64_t>{mine}, 0);
    for (std::size_t i = 1; i < starts.size(); ++i) EXPECT_EQ(starts[i], starts[i - 1] + sizes[i - 1]) << i;
    if (world.is_root()) {
        EXPECT_EQ(r.correction_first, 0);
    }
    // each rank holds the entries of its own columns (words) only
    for (const std::int64_t j : r.correction_col) {
        EXPECT_GE(j, r.Y_first_row);
        EXPECT_LT(j, r.Y_first_row + r.Y_rows.rows());
    }
}

/// The largest entry of |a − b| relative to the largest of |b|.
double relative(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
    return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

TEST(FitOptions, DefaultsAreTheBinarys) {
    // The default run: stop when the topics' measures settle, capped at 1,000 iterations,
    // over-relaxed AP (ω = 1.9), eigensolves to 0.1 × the last change.
    const RectifyOptions quality = resolve(FitOptions{}.rectify);
    EXPECT_EQ(*quality.stop, rectify::StopRule::quality);
    EXPECT_EQ(*quality.iterations, 1000);
    EXPECT_EQ(*quality.relaxation, 1.9);
    EXPECT_EQ(*quality.eig_tolerance_factor, 0.1);
    EXPECT_FALSE(quality.tolerance.has_value());
    // The papers' plain AP: 150 iterations, ω = 1, exact eigensolves; a tolerance implies it.
    RectifyOptions given;
    given.tolerance = 1e-6;
    const RectifyOptions plain = resolve(given);
    EXPECT_EQ(*plain.stop, rectify::StopRule::iterations);
    EXPECT_EQ(*plain.iterations, 150);
    EXPECT_EQ(*plain.relaxation, 1.0);
    EXPECT_EQ(*plain.eig_tolerance_factor, 0.0);
    EXPECT_EQ(resolve(plain).iterations, plain.iterations);  // idempotent
    // A count given alone is that count of plain iterations, not a cap of the quality rule.
    RectifyOptions counted;
    counted.iterations = 40;
    EXPECT_EQ(*resolve(counted).stop, rectify::StopRule::iterations);
    EXPECT_EQ(*resolve(counted).iterations, 40);
    EXPECT_EQ(*resolve(counted).relaxation, 1.0);
    // The cap has its own name; it belongs to quality and fixed-point only.
    RectifyOptions capped;
    capped.max_iterations = 300;
    EXPECT_EQ(*resolve(capped).stop, rectify::StopRule::quality);
    EXPECT_EQ(*resolve(capped).iterations, 300);
    EXPECT_EQ(*resolve(resolve(capped)).iterations, 300);  // idempotent
    RectifyOptions both = counted;
    both.max_iterations = 300;
    EXPECT_THROW(resolve(both), OptionError);
    // Anchor candidates: words in at least 10 documents.
    EXPECT_EQ(FitOptions{}.model.anchor_min_df, 10);
    // DR and DP are never over-relaxed.
    RectifyOptions dr;
    dr.method = Rectifier::dr;
    EXPECT_EQ(*resolve(dr).relaxation, 1.0);
}

TEST(FitOptions, ErrorsNameOptionsAndRenderAsFlags) {
    RectifyOptions bad;
    bad.method = Rectifier::dr;
    bad.precision = Precision::single;
    try {
        (void)resolve(bad);
        FAIL() << "single precision with DR was accepted";
    } catch (const OptionError& e) {
        EXPECT_STREQ(e.what(), "precision single applies to AP only (rectify ap)");
        EXPECT_EQ(OptionError::render("{precision} single applies to AP only ({rectify} ap)",
                                      [](const std::string& name) { return "--" + name; }),
                  "--precision single applies to AP only (--rectify ap)");
        EXPECT_EQ(OptionError::render("{files} " + OptionError::quote("[0-9]{3}") + " {{", {}), "files [0-9]{3} {");
        // Warnings and notes that are not an OptionError render through the same namer
        // (none here: bare names).
        EXPECT_EQ(render_options("with {rectify} none, or {solver_iterations} " + OptionError::quote("{x}")),
                  "with rectify none, or solver_iterations {x}");
    }
    FitOptions hierarchy;
    hierarchy.hierarchy = {5, 8};
    EXPECT_THROW(check(hierarchy), OptionError);
    FitOptions twice;
    twice.topics = {5, 5};
    EXPECT_THROW(check(twice), OptionError);
    EXPECT_THROW(parse_name<fit::Rectifier>("xx", "rectify"), OptionError);
    for (const auto& name : choices<fit::Rectifier>()) EXPECT_EQ(name_of(parse_name<fit::Rectifier>(name, "rectify")), name);
    for (const auto& name : choices<recover::Solver>()) EXPECT_EQ(name_of(parse_name<recover::Solver>(name, "solver")), name);
    for (const auto& name : choices<fit::Method>()) EXPECT_EQ(name_of(parse_name<fit::Method>(name, "method")), name);
}

// The default fit recovers the planted topics: every planted anchor found, B near the
// truth, and the same anchors and matrices as the same fit on one rank.
TEST(Fit, RecoversPlantedTopicsAndEqualsOneRank) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 11);
    FitOptions options;
    options.topics = {K};
    const FitResult result = fit(p.source, square_grid(world), options);

    ASSERT_EQ(result.models.size(), 1u);
    const model::Model& m = result.models.front();
    EXPECT_EQ(m.num_topics, K);
    EXPECT_EQ(m.B.rows(), 300);
    EXPECT_EQ(m.rectification.method, model::Rectification::ap);
    EXPECT_EQ(m.rectification.stop_reason.value_or(rectify::StopReason::none), rectify::StopReason::quality);
    EXPECT_TRUE(result.hierarchy.empty());
    EXPECT_EQ(result.info.vocab, p.truth.vocab);
    const eval::TruthComparison t = eval::compare_to_truth(m.B, m.A, m.anchors, p.truth.B, p.truth.A, p.truth.anchors);
    EXPECT_EQ(t.anchor_hits, K);
    // Measured with the binary on this corpus: B 0.059 L1 per topic, A 0.044 (of at most 2
    // each); a wrong topic alone costs about 1.
    EXPECT_LT(t.b_l1, 0.1);    // mean L1 over topics
    EXPECT_LT(t.a_l1, 0.1);    // Σ |A − A*| over the K² entries
    // Every metric of the papers, coherence over the corpus included.
    EXPECT_NE(m.metrics.find("coherence"), nullptr);
    EXPECT_NE(m.metrics.find("recovery"), nullptr);

    // The same fit on one rank (every rank alone on MPI_COMM_SELF).
    const mpi::Comm self(MPI_COMM_SELF);
    const FitResult alone = fit(p.source, distmat::Grid::create(self, 1, 1), options);
    const model::Model& a = alone.models.front();
    EXPECT_EQ(a.rectification.iterations, m.rectification.iterations) << "ENN stops at the same place on one rank";
    EXPECT_EQ(m.anchors, a.anchors);
    EXPECT_EQ(m.rectification.iterations, a.rectification.iterations);
    // The default run solves each eigenproblem only to 0.1 × the last change, so the
    // ranks' rounding moves the iterate a little further than in exact solves: 1e-7 of
    // the scale, as fit_e2e holds the binary to (exact solves: 1e-9, the next test).
    EXPECT_LT(relative(m.B, a.B), 1e-7);
    EXPECT_LT(relative(m.A, a.A), 1e-7);
    ASSERT_NE(m.metrics.find("coherence"), nullptr);
    EXPECT_NEAR(m.metrics.find("coherence")->mean, a.metrics.find("coherence")->mean, 1e-9);
}

// Several K from one C, α, the papers' plain AP, no metrics; then a hierarchy above the
// first level, and AnchorFree on the same C.
TEST(Fit, EveryMethodThroughOneCall) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const Planted p = plant(world, dir, 6, 5);
    const auto grid = square_grid(world);
    std::vector<std::string> lines;
    const Report collect = [&](Level, const std::string& line) { lines.push_back(line); };

    FitOptions several;
    several.topics = {4, 6};
    several.rectify.stop = rectify::StopRule::iterations;
    several.rectify.iterations = 20;
    several.model.alpha = true;
    several.metrics = false;
    const FitResult r = fit(p.source, grid, several, collect);
    ASSERT_EQ(r.models.size(), 2u);
    EXPECT_EQ(r.models[0].num_topics, 4);
    EXPECT_EQ(r.models[1].num_topics, 6);
    for (const model::Model& m : r.models) {
        EXPECT_EQ(m.rectification.iterations, 20);
        EXPECT_EQ(m.rectification.stop_reason.value_or(rectify::StopReason::none), rectify::StopReason::iterations);
        EXPECT_TRUE(m.metrics.metrics.empty());
        EXPECT_TRUE(m.has_alpha);
        // A = D⁻¹ C_SS D⁻¹ (Alg. 4) of a rectified C: symmetric and nonnegative (its sum
        // is 1 only as far as C is exactly B A Bᵀ: not for K = 4 on six planted topics).
        EXPECT_LE((m.A - m.A.transpose()).cwiseAbs().maxCoeff(), 1e-12 * m.A.cwiseAbs().maxCoeff());
        EXPECT_GE(m.A.minCoeff(), 0.0);
        for (Index k = 0; k < m.B.cols(); ++k) EXPECT_NEAR(m.B.col(k).sum(), 1.0, 1e-9);
    }
    // The papers' plain AP (exact eigensolves) gives the same models on one rank to 1e-9.
    const mpi::Comm self(MPI_COMM_SELF);
    const FitResult alone = fit(p.source, distmat::Grid::create(self, 1, 1), several);
    for (std::size_t k = 0; k < r.models.size(); ++k) {
        EXPECT_EQ(r.models[k].anchors, alone.models[k].anchors);
        EXPECT_LT(relative(r.models[k].B, alone.models[k].B), 1e-9);
        EXPECT_LT(relative(r.models[k].A, alone.models[k].A), 1e-9);
        EXPECT_LT(relative(r.models[k].alpha, alone.models[k].alpha), 1e-9);
    }
    // The stages reported what they did (the binary logs these lines), first auto's choice:
    // the plain AP settings asked for are the dense pipeline's.
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines.front().find("fit: the dense pipeline: stop, iterations"), std::string::npos) << lines.front();
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return l.find("cooc:") == 0; }));

    FitOptions tree;
    tree.hierarchy = {6, 3};
    tree.metrics = false;
    const FitResult h = fit(p.source, grid, tree);
    ASSERT_EQ(h.models.size(), 1u);
    EXPECT_EQ(h.models.front().num_topics, 6);
    ASSERT_EQ(h.hierarchy.size(), 1u);
    const model::HierarchyLevel& level = h.hierarchy.front();
    EXPECT_EQ(level.topics, 3);
    EXPECT_EQ(level.B.rows(), 6);
    EXPECT_EQ(level.B_words.rows(), world.is_root() ? 300 : 0);  // the writer's, on the root (FitResult)
    if (world.is_root()) {
        EXPECT_LT((level.B_words - h.models.front().B * level.B).norm(), 1e-12);
    }

    FitOptions lp;
    lp.topics = {6};
    lp.model.method = Method::anchorfree_lp;
    lp.metrics = false;
    const FitResult f = fit(p.source, grid, lp);
    const model::Model& m = f.models.front();
    EXPECT_EQ(m.method, Method::anchorfree_lp);
    EXPECT_EQ(m.anchor_method, model::AnchorChoice::representative);
    EXPECT_TRUE(m.anchorfree.converged);
    // AnchorFree and anchor words find the same planted topics on a separable corpus.
    const eval::TruthComparison t = eval::compare_to_truth(m.B, m.A, m.anchors, p.truth.B, p.truth.A, p.truth.anchors);
    EXPECT_LT(t.b_l1, 0.35);

    // RecoverKL through fit: auto takes the dense pipeline (it needs C's rows), the model
    // says kl, and the planted topics come out as least squares finds them.
    FitOptions kl;
    kl.topics = {6};
    kl.model.solver = recover::Solver::kl;
    kl.metrics = false;
    lines.clear();
    const FitResult by_kl = fit(p.source, grid, kl, collect);
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines.front().find("fit: the dense pipeline: solver kl needs each word's whole row of C-bar"), std::string::npos)
        << lines.front();
    const model::Model& mk = by_kl.models.front();
    EXPECT_EQ(mk.solver, recover::Solver::kl);
    EXPECT_EQ(mk.words_converged, mk.words_solved);
    const eval::TruthComparison tk = eval::compare_to_truth(mk.B, mk.A, mk.anchors, p.truth.B, p.truth.A, p.truth.anchors);
    FitOptions ls = kl;
    ls.model.solver = recover::Solver::active_set;
    ls.pipeline = Pipeline::dense;
    const FitResult by_ls = fit(p.source, grid, ls);
    const model::Model& ml = by_ls.models.front();
    const eval::TruthComparison tl = eval::compare_to_truth(ml.B, ml.A, ml.anchors, p.truth.B, p.truth.A, p.truth.anchors);
    if (world.is_root()) std::printf("planted B, L1 per topic: kl %.4f, active set %.4f\n", tk.b_l1, tl.b_l1);
    EXPECT_EQ(mk.anchors, ml.anchors);
    EXPECT_LT(tk.b_l1, tl.b_l1 + 0.02);
}

// AnchorFree's real-data setting on a labelled corpus shaped like a real one (Zipfian word
// frequencies, correlated topics, long-tailed vocabulary with rare words; the label of a
// document its dominant topic): tf-idf C, no rectification, K = the number of labels. PDS
// must converge within its default limits, to the LP's topics, and fit must measure
// ClustAcc from the labels it is given (PDS's within 0.02 of LP's).
TEST(Fit, AnchorFreePdsConvergesOnALabelledRealShapedCorpusAsTheLpDoes) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    synth::SynthOptions o;
    o.num_docs = 1200;
    o.num_words = 800;
    o.num_topics = 6;
    o.anchor_mass = 0.01;
    o.word_concentration = 0.3;
    o.prior = synth::TopicPrior::logistic_normal;
    o.sigma = 2.0;
    o.correlation = 0.4;
    o.zipf = 1.0;
    o.mean_doc_length = 150;
    o.seed = 21;
    o.monte_carlo_samples = 2000;
    const synth::SynthCorpus truth = synth::generate(o);
    CorpusSource source;
    source.files = {dir.file("docword.z.txt")};
    source.vocab = dir.file("vocab.z.txt");
    source.options.block_size = 32;
    source.options.estimator = cooc::Estimator::tfidf;
    const std::string labels = dir.file("labels.z.txt");
    if (world.is_root()) {
        synth::write_uci(source.files.front(), truth.docs, truth.num_docs, o.num_words);
        corpus::write_vocab(source.vocab, truth.vocab);
        std::ofstream out(labels);
        for (const int label : truth.labels) out << label + 1 << "\n";
    }
    MPI_Barrier(world.raw());
    FitOptions options;
    options.topics = {o.num_topics};
    options.rectify.method = Rectifier::none;
    options.pipeline = Pipeline::dense;
    options.labels = labels;
    const auto grid = square_grid(world);
    options.model.method = Method::anchorfree_lp;
    const model::Model lp = fit(source, grid, options).models.front();
    options.model.method = Method::anchorfree_pds;
    const model::Model pds = fit(source, grid, options).models.front();
    EXPECT_TRUE(lp.anchorfree.converged);
    EXPECT_TRUE(pds.anchorfree.converged) << "PDS stopped after " << pds.anchorfree.iterations << " outer iterations at "
                                          << pds.anchorfree.violation;
    EXPECT_LT(pds.anchorfree.iterations, anchorfree::PdsOptions{}.max_outer);
    EXPECT_LE(pds.anchorfree.violation, anchorfree::PdsOptions{}.tolerance);
    // The same topics: B's columns matched one to one, each within 1e-4 in L1.
    Eigen::MatrixXi lp_words(o.num_topics, 1);
    for (int k = 0; k < o.num_topics; ++k) lp_words(k, 0) = static_cast<int>(lp.anchors[static_cast<std::size_t>(k)]);
    const eval::TruthComparison same = eval::compare_to_truth(pds.B, pds.A, pds.anchors, lp.B, lp.A, lp_words);
    EXPECT_LT(same.topic_l1.maxCoeff(), 1e-4);
    ASSERT_NE(lp.metrics.find("clustacc"), nullptr);
    ASSERT_NE(pds.metrics.find("clustacc"), nullptr);
    const double lp_accuracy = lp.metrics.find("clustacc")->mean, pds_accuracy = pds.metrics.find("clustacc")->mean;
    EXPECT_GT(lp_accuracy, 1.5 / o.num_topics) << "ClustAcc no better than chance";
    EXPECT_NEAR(pds_accuracy, lp_accuracy, 0.02);
    if (world.is_root())
        std::printf("LP %d sweeps, ClustAcc %.3f; PDS %d outer (%d Newton steps), violation %.1e, ClustAcc %.3f; "
                    "B apart by %.1e L1\n",
                    lp.anchorfree.iterations, lp_accuracy, pds.anchorfree.iterations, pds.anchorfree.inner_iterations,
                    pds.anchorfree.violation, pds_accuracy, same.topic_l1.maxCoeff());
    EXPECT_NE(lp.metrics_note.find("tf-idf vector"), std::string::npos) << lp.metrics_note;
}

TEST(Fit, BadOptionsFailOnEveryRank) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const Planted p = plant(world, dir, 4, 2);
    const auto grid = square_grid(world);
    StageTimes times;
    BuiltCooc built = build_cooc(p.source, grid, times);
    FitOptions too_many;
    too_many.topics = {300};
    test::expect_stage_failed(world, [&] { (void)fit(distmat::copy(built.C), built.info, too_many); },
                              {"topics must satisfy 2 <= K < N = 300, got 300"});
    FitOptions relaxed;
    relaxed.rectify.relaxation = 2.5;
    test::expect_stage_failed(world, [&] { (void)fit(distmat::copy(built.C), built.info, relaxed); },
                              {"relaxation must lie in (0, 2)"});
}

// The library's default (auto) picks the pipeline by the corpus: dense on 300 words,
// compressed on 1,200 (above dense_words_at_most(5)); the same model as asking for it.
TEST(Fit, AutoPicksThePipelineByTheVocabulary) {
    const mpi::Comm world = mpi::Comm::world();
    const int K = 5;
    FitOptions options;
    ASSERT_EQ(options.pipeline, Pipeline::automatic);
    options.topics = {K};
    options.metrics = false;
    options.compressed.iterations = 20;
    test::SharedTempDir small_dir(world);
    const Planted small = plant(world, small_dir, K, 3, 1000, 60);
    const FitResult dense = fit(small.source, square_grid(world), options);
    EXPECT_FALSE(dense.models.front().compressed.has_value());
    EXPECT_EQ(dense.models.front().rectification.method, model::Rectification::ap);

    test::SharedTempDir large_dir(world);
    ASSERT_GT(1200, dense_words_at_most(K, options.compressed.iterations));
    const Planted large = plant(world, large_dir, K, 3, 1000, 60, 1200);
    const FitResult picked = fit(large.source, square_grid(world), options);
    const model::Model& m = picked.models.front();
    ASSERT_TRUE(m.compressed.has_value());
    EXPECT_EQ(m.rectification.method, model::Rectification::enn);
    options.pipeline = Pipeline::compressed;
    const FitResult asked = fit(large.source, square_grid(world), options);
    EXPECT_EQ(m.anchors, asked.models.front().anchors);
    EXPECT_EQ(m.B, asked.models.front().B);
}

// The metrics that compare with C, for a compressed fit: those against the rectified
// Ĉ = YYᵀ + E′ equal the dense metrics on a formed Ĉ (1e-9); those against the documents'
// C, estimated by probes, lie near the dense metrics on the formed C. On few short
// documents without ENN, so that E′ is not empty and its terms count.
TEST(Fit, CompressedMetricsMatchTheDenseOnes) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 5, 400, 15);
    FitOptions options = compressed_options(K);
    options.compressed.iterations = 0;
    const FitResult result = fit(p.source, square_grid(world), options);
    const model::Model m = everywhere(world, result.models.front());
    const model::CompressedRecord& r = *m.compressed;
    ASSERT_GT(r.correction_value.size(), 0u);
    // Pairs with both words among E′'s rows S′ are a case of their own in the metrics (kept
    // replicated, not by column): this corpus has some.
    const std::set<std::int64_t> rows_of_E(r.correction_row.begin(), r.correction_row.end());
    EXPECT_TRUE(std::any_of(r.correction_col.begin(), r.correction_col.end(),
                            [&](std::int64_t j) { return rows_of_E.count(j) > 0; }));
    const Index N = r.Y.rows();

    const auto grid = square_grid(world);
    distmat::DistMatrix rectified(grid, N, N, 16);
    std::map<std::pair<Index, Index>, double> E;  // max(F, Fᵀ)
    for (std::size_t k = 0; k < r.correction_value.size(); ++k) {
        const Index i = r.correction_row[k], j = r.correction_col[k];
        E[{i, j}] = std::max(E[{i, j}], r.correction_value[k]);
        E[{j, i}] = std::max(E[{j, i}], r.correction_value[k]);
    }
    for (Index jl = 0; jl < rectified.local_cols(); ++jl)
        for (Index il = 0; il < rectified.local_rows(); ++il) {
            const Index i = rectified.global_row(il), j = rectified.global_col(jl);
            const auto e = E.find({i, j});
            rectified.local()(il, jl) = r.Y.row(i).dot(r.Y.row(j)) + (e == E.end() ? 0.0 : e->second);
        }
    const auto value = [&](const char* name) {
        const eval::Metric* metric = m.metrics.find(name);
        EXPECT_NE(metric, nullptr) << name;
        return metric ? metric : m.metrics.find("legality");
    };
    // Recovery squared, to 1e-9 of the squared norms of C̄'s rows (the residual here is
    // near 0, and its square comes as a sum of terms of that size).
    const Eigen::VectorXd recovery = eval::recovery_errors(rectified, m.anchors, m.B_breve);
    Eigen::MatrixXd dense = r.Y * r.Y.transpose();
    for (const auto& [at, v] : E) dense(at.first, at.second) += v;
    const Eigen::VectorXd d = dense.rowwise().sum();
    const double scale = (d.cwiseInverse().asDiagonal() * dense).rowwise().squaredNorm().maxCoeff();
    EXPECT_LT((value("recovery")->values.array().square() - recovery.array().square()).abs().maxCoeff(), 1e-9 * scale);
    const eval::ApproximationError approximation = eval::approximation_error(rectified, m.B, m.A);
    EXPECT_NEAR(value("approximation")->mean, approximation.total, 1e-9 * approximation.total);
    EXPECT_NEAR(value("approximation_offdiag")->mean, approximation.off_diagonal, 1e-9 * approximation.total);

    // Against the formed C: exact on [Y B]'s span (2K directions here), by 256 probes beyond them (the
    // default; here 96 % of the words' squares lie beyond, so a word's standard error is
    // about its bound (1/(2·256))^½ = 4.4 %): approximation within 2 % (its square's
    // standard error here about 0.9 %), recovery's mean over words within 2 % and every
    // word within 7 standard errors; with 16,384 probes all eight times closer, as an
    // unbiased estimate must come. (The split itself is checked to rounding in
    // lowrank_test's FactorMetrics.TheExactDirectionsAreExactAndTheProbesMeasureTheRest.)
    StageTimes times;
    const BuiltCooc built = build_cooc(p.source, grid, times);
    const eval::ApproximationError original = eval::approximation_error(built.C, m.B, m.A);
    const Eigen::VectorXd recovery_original = eval::recovery_errors(built.C, m.anchors, m.B_breve);
    const auto errors = [&](const model::Model& model) {
        const Eigen::VectorXd& estimated = model.metrics.find("recovery_original")->values;
        return std::array<double, 4>{
            std::abs(model.metrics.find("approximation_original")->mean - original.total) / original.total,
            std::abs(model.metrics.find("approximation_offdiag_original")->mean - original.off_diagonal) / original.total,
            std::abs(estimated.mean() - recovery_original.mean()) / recovery_original.mean(),
            ((estimated - recovery_original).array() / recovery_original.array()).abs().maxCoeff()};
    };
    const std::array<double, 4> at_default = errors(m);
    EXPECT_LT(at_default[0], 0.02);
    EXPECT_LT(at_default[1], 0.02);
    EXPECT_LT(at_default[2], 0.02);
    EXPECT_EQ(options.compressed.metric_probes, 256);
    EXPECT_LT(at_default[3], 7 * std::sqrt(0.5 / 256));
    FitOptions many = options;
    many.compressed.metric_probes = 16384;
    const std::array<double, 4> at_many = errors(fit(p.source, grid, many).models.front());  // (metrics only)
    if (world.is_root())
        std::printf("  estimated against C: approximation %.2e / %.2e, recovery mean %.2e, worst word %.2e (256 "
                    "probes); %.2e / %.2e, %.2e, %.2e (16,384)\n",
                    at_default[0], at_default[1], at_default[2], at_default[3], at_many[0], at_many[1], at_many[2],
                    at_many[3]);
    EXPECT_LT(at_many[2], 0.005);
    EXPECT_LT(at_many[3], 0.04);
    EXPECT_NEAR(value("validity_original")->mean,
                eval::validity(m.B, m.A, m.B_breve, distmat::row_sums(built.C)), 1e-12);
    EXPECT_NE(m.metrics_note.find("exact on the 10 directions of [Y B] and estimated beyond them by 256 random probes"),
              std::string::npos)
        << m.metrics_note;
}

// The default (settled) ENN resumed from a checkpoint: over-relaxed, its middle projections
// inexact, no looks: the uninterrupted model bit for bit; a resume asking for the plain
// correction (ω = 1) is refused, naming the setting.
TEST(Fit, CompressedSettledResumesExactly) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 4;
    const Planted p = plant(world, dir, K, 5, 400, 15, 300);  // short documents: negative pairs stay
    FitOptions options = compressed_options(K);
    options.compressed.iterations = 20;  // settled: at most min(20, kSettledIterations)
    options.metrics = false;
    options.checkpoint.path = dir.file("ck.h5");
    options.checkpoint.seconds = 0;
    int copied = 0;
    const Report keep = [&](Level, const std::string& line) {
        if (line.find("checkpoint: ENN after 7 iterations written") != std::string::npos) {
            ++copied;
            if (world.is_root()) std::filesystem::copy_file(options.checkpoint.path, dir.file("ck_enn7.h5"));
        }
    };
    const FitResult whole = fit(p.source, square_grid(world), options, keep);
    MPI_Barrier(world.raw());
    ASSERT_EQ(copied, 1);
    const model::Model w = everywhere(world, whole.models.front());
    ASSERT_EQ(w.compressed->enn.size(), 20u) << "a fixed point: the corpus does not test the relaxed middle";
    for (const lowrank::EnnIteration& it : w.compressed->enn) EXPECT_TRUE(std::isnan(it.look_specificity));
    FitOptions again = options;
    again.checkpoint.path.clear();
    again.checkpoint.resume = dir.file("ck_enn7.h5");
    const model::Model r = everywhere(world, fit(p.source, square_grid(world), again).models.front());
    EXPECT_EQ(r.anchors, w.anchors);
    EXPECT_EQ(r.B, w.B);
    EXPECT_EQ(r.A, w.A);
    EXPECT_EQ(r.compressed->Y, w.compressed->Y);
    FitOptions plain = again;
    plain.compressed.enn_relaxation = 1.0;
    test::expect_stage_failed(world, [&] { (void)fit(p.source, square_grid(world), plain); },
                              {"made with enn_relaxation = 1.8999999999999999, this run has 1"});
}

// A compressed fit killed and resumed from its checkpoint gives the uninterrupted fit's
// model: exactly from an ENN checkpoint (the state is all an iteration reads), to the
// eigensolver's tolerance from one taken mid-solve (the continuation redoes a
// Rayleigh–Ritz step), and at another rank count as the rank counts agree (1e-9). A
// checkpoint made with other settings, or damaged, is refused on every rank.
TEST(Fit, CompressedResumesFromItsCheckpoints) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 5, 600, 30, 1200);
    FitOptions options = compressed_options(K);
    options.compressed.iterations = 12;
    options.compressed.stop_when_settled = false;  // exactly 12 (a fixed point may come earlier)
    options.metrics = false;
    options.checkpoint.path = dir.file("ck.h5");
    options.checkpoint.seconds = 0;
    // Keep copies of the checkpoint at three moments, as a kill would leave it.
    const std::vector<std::pair<std::string, std::string>> moments = {
        {"the range finder after 2 rounds", "ck_round2.h5"},
        {"the range finder's factor", "ck_factor.h5"},
        {"ENN after 5 iterations", "ck_enn5.h5"}};
    int copied = 0;
    const Report keep = [&](Level, const std::string& line) {
        for (const auto& [moment, copy] : moments)
            if (line.find("checkpoint: " + moment + " written") != std::string::npos) {
                ++copied;
                if (world.is_root()) std::filesystem::copy_file(options.checkpoint.path, dir.file(copy));
            }
    };
    const FitResult whole = fit(p.source, square_grid(world), options, keep);
    MPI_Barrier(world.raw());
    ASSERT_EQ(copied, 3);
    const model::Model w = everywhere(world, whole.models.front());
    FitOptions again = options;
    again.checkpoint.path.clear();
    for (const auto& [moment, copy] : moments) {
        again.checkpoint.resume = dir.file(copy);
        const model::Model r = everywhere(world, fit(p.source, square_grid(world), again).models.front());
        EXPECT_EQ(r.anchors, w.anchors) << moment;
        EXPECT_EQ(r.compressed->enn.size(), 12u) << moment;
        if (moment.rfind("ENN", 0) == 0 || moment == "the range finder's factor") {
            EXPECT_EQ(r.B, w.B) << moment;
            EXPECT_EQ(r.A, w.A) << moment;
            EXPECT_EQ(r.compressed->Y, w.compressed->Y) << moment;
        } else {
            EXPECT_LT(relative(r.B, w.B), 1e-9) << moment;
            EXPECT_LT(relative(r.A, w.A), 1e-9) << moment;
        }
        EXPECT_EQ(r.compressed->eigenvalues.size(), K) << moment;
    }
    // At one rank, from the checkpoint the others wrote.
    const mpi::Comm self(MPI_COMM_SELF);
    again.checkpoint.resume = dir.file("ck_enn5.h5");
    const model::Model one = fit(p.source, distmat::Grid::create(self, 1, 1), again).models.front();
    EXPECT_EQ(one.anchors, w.anchors);
    EXPECT_LT(relative(one.B, w.B), 1e-9);
    MPI_Barrier(world.raw());

    // Other settings: refused, naming the setting.
    FitOptions other = again;
    other.compressed.iterations = 13;
    test::expect_stage_failed(world, [&] { (void)fit(p.source, square_grid(world), other); },
                              {"made with enn_iterations = 12, this run has 13"});
    // A damaged row block: the checksum catches it.
    damaged_copy(world, dir.file("ck_enn5.h5"), dir.file("ck_damaged.h5"), "/compressed_checkpoint/Y", 700, 2);
    MPI_Barrier(world.raw());
    again.checkpoint.resume = dir.file("ck_damaged.h5");
    test::expect_stage_failed(world, [&] { (void)fit(p.source, square_grid(world), again); },
                              {"ck_damaged.h5", "checksum does not match"});
}

// A dense fit resumed from its checkpoint of any stage (C as counted, an AP iterate, the
// rectified C, the recovery of B part-way) gives the uninterrupted fit's model bit for bit,
// metrics included. A stop signal seen by one rank in the middle of the recovery ends every
// rank with exit code 5 and a checkpoint that resumes to the same model. A checkpoint of
// other settings, of another C, or damaged, is refused on every rank with one message.
TEST(Fit, DenseResumesFromEveryStage) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 12, 1500, 60, 300);
    FitOptions options;
    options.topics = {K};
    options.pipeline = Pipeline::dense;
    options.rectify.stop = rectify::StopRule::iterations;
    options.rectify.iterations = 8;
    options.checkpoint.path = dir.file("ck.h5");
    options.checkpoint.seconds = 0;
    options.checkpoint.recover_batch = 20;  // words per rank: several rounds over 300 words
    const std::vector<std::pair<std::string, std::string>> moments = {
        {"C as counted", "ck_cooc.h5"},
        {"the rectification after 4 iterations", "ck_ap4.h5"},
        {"the rectified C", "ck_rectified.h5"},
        {"the recovery of B after", "ck_recover.h5"}};
    std::set<std::string> copied;
    const Report keep = [&](Level, const std::string& line) {
        for (const auto& [moment, copy] : moments)
            if (line.find("checkpoint: " + moment) != std::string::npos && line.find(" written to") != std::string::npos &&
                copied.insert(copy).second && world.is_root())
                std::filesystem::copy_file(options.checkpoint.path, dir.file(copy));
    };
    const FitResult whole = fit(p.source, square_grid(world), options, keep);
    MPI_Barrier(world.raw());
    ASSERT_EQ(copied.size(), moments.size());
    const model::Model& w = whole.models.front();
    ASSERT_EQ(w.rectification.iterations, 8);  // the cap, under --stop iterations
    FitOptions again = options;
    again.checkpoint.path.clear();
    const auto expect_same = [&](const model::Model& r, const std::string& from) {
        EXPECT_EQ(r.anchors, w.anchors) << from;
        EXPECT_EQ(r.B, w.B) << from;
        EXPECT_EQ(r.A, w.A) << from;
        EXPECT_EQ(r.words_solved, w.words_solved) << from;
        EXPECT_EQ(r.rectification.iterations, w.rectification.iterations) << from;
        EXPECT_EQ(r.rectification.converged, w.rectification.converged) << from;
        EXPECT_EQ(r.rectification.fallbacks, w.rectification.fallbacks) << from;
        ASSERT_EQ(r.metrics.metrics.size(), w.metrics.metrics.size()) << from;
        for (std::size_t k = 0; k < w.metrics.metrics.size(); ++k)
            EXPECT_EQ(r.metrics.metrics[k].mean, w.metrics.metrics[k].mean) << from << " " << w.metrics.metrics[k].name;
    };
    for (const auto& [moment, copy] : moments) {
        again.checkpoint.resume = dir.file(copy);
        expect_same(fit(p.source, square_grid(world), again).models.front(), moment);
    }

    // SIGUSR1 to the last rank while B is recovered: all stop at the next round, saved.
    install_stop_handlers();
    bool raised = false;
    const Report signal_once = [&](Level, const std::string& line) {
        if (!raised && line.find("checkpoint: the recovery of B after") != std::string::npos) {
            raised = true;
            if (world.rank() == world.size() - 1) std::raise(SIGUSR1);
        }
    };
    FitOptions stopping = options;
    stopping.checkpoint.path = dir.file("ck_stopped.h5");
    test::expect_stage_failed(world, [&] { (void)fit(p.source, square_grid(world), stopping, signal_once); },
                              {"stopped by SIGUSR1 in the recovery of B after", "--resume " + dir.file("ck_stopped.h5")},
                              exit_code::stopped);
    testing::clear_stop_signal();
    again.checkpoint.resume = dir.file("ck_stopped.h5");
    expect_same(fit(p.source, square_grid(world), again).models.front(), "the stopped run's checkpoint");
    // … and while B is recovered in one round (no agreement inside): the last look after
    // the recovery stops with B's solves saved whole.
    raised = false;
    const Report signal_before_recovery = [&](Level, const std::string& line) {
        if (!raised && line.find("checkpoint: the rectified C written") != std::string::npos) {
            raised = true;
            if (world.rank() == world.size() - 1) std::raise(SIGUSR1);
        }
    };
    stopping.checkpoint.recover_batch = 4096;  // one round for 300 words
    stopping.checkpoint.path = dir.file("ck_after.h5");
    test::expect_stage_failed(world, [&] { (void)fit(p.source, square_grid(world), stopping, signal_before_recovery); },
                              {"stopped by SIGUSR1 after the recovery of B"}, exit_code::stopped);
    testing::clear_stop_signal();
    again.checkpoint.resume = dir.file("ck_after.h5");
    expect_same(fit(p.source, square_grid(world), again).models.front(), "the checkpoint after the recovery");

    // Other settings, another C, another kind of file, a damaged C: refused, naming why.
    again.checkpoint.resume = dir.file("ck_ap4.h5");
    FitOptions other = again;
    other.rectify.iterations = 9;
    test::expect_stage_failed(world, [&] { (void)fit(p.source, square_grid(world), other); },
                              {"ck_ap4.h5", "made with iterations = 8, this run has 9"});
    test::SharedTempDir elsewhere(world);  // plant() names its files the same
    const Planted q = plant(world, elsewhere, K, 13, 1500, 60, 300);
    test::expect_stage_failed(world, [&] { (void)fit(q.source, square_grid(world), again); },
                              {"ck_ap4.h5", "made from another C"});
    damaged_copy(world, dir.file("ck_ap4.h5"), dir.file("ck_damaged.h5"), "/cooc/C", 17, 123);
    MPI_Barrier(world.raw());
    again.checkpoint.resume = dir.file("ck_damaged.h5");
    test::expect_stage_failed(world, [&] { (void)fit(p.source, square_grid(world), again); },
                              {"ck_damaged.h5", "checksum does not match"});
}

// The commands' compositions as library calls: run() writes the model fit() returns (a
// dry run only plans), sweep() one file per grid point with that point's model and a
// table row each, evaluate() the metrics measured again from the file.
TEST(Job, RunSweepAndEvaluateWriteWhatFitReturns) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 11);
    const auto shape = test::grid_shapes(world.size())[(test::grid_shapes(world.size()).size() - 1) / 2];
    FitOptions options;
    options.topics = {K};
    options.pipeline = Pipeline::dense;
    options.rectify.method = Rectifier::none;  // no stopping rule: the sweep's run is fit()'s exactly
    const FitResult direct = fit(p.source, square_grid(world), options);
    const model::Model& d = direct.models.front();

    Job job;
    job.corpus = p.source;
    job.options = options;
    job.grid_rows = shape.first;
    job.grid_cols = shape.second;
    job.out = dir.file("job.h5");
    Job dry = job;
    dry.dry_run = true;
    dry.out = dir.file("dry.h5");
    const JobOutcome planned = run(world, dry);
    EXPECT_EQ(planned.plan.num_words, 300);
    EXPECT_GT(planned.plan.estimate.total(), 0);
    EXPECT_TRUE(planned.result.models.empty());
    EXPECT_FALSE(std::filesystem::exists(dry.out));
    const JobOutcome outcome = run(world, job);
    EXPECT_EQ(outcome.choice.pipeline, Pipeline::dense);
    EXPECT_EQ(outcome.words, 300);
    const io::ModelFile back = io::read_model_file(job.out);
    ASSERT_EQ(back.models.size(), 1u);
    EXPECT_EQ(back.models[0].anchors, d.anchors);
    EXPECT_EQ(relative(back.models[0].B, d.B), 0.0);
    EXPECT_EQ(relative(back.models[0].A, d.A), 0.0);
    EXPECT_EQ(back.models[0].rectification.method, model::Rectification::none);

    SweepJob s;
    s.points = sweep_points({Rectifier::none, Rectifier::dc}, {K, K + 1}, {recover::Solver::active_set});
    ASSERT_EQ(s.points.size(), 4u);
    EXPECT_EQ(s.points[1].file, "runs/K6_none_active-set.h5");
    EXPECT_EQ(s.points[2].file, "runs/K5_dc_active-set.h5");
    s.task = 0;  // one point: its own table
    s.corpus = p.source;
    s.rectify = options.rectify;
    s.model = options.model;
    s.grid_rows = shape.first;
    s.grid_cols = shape.second;
    s.folder = dir.path();
    if (world.is_root()) std::filesystem::create_directory(dir.file("runs"));
    MPI_Barrier(world.raw());
    const SweepOutcome swept = sweep(world, s);
    EXPECT_EQ(swept.runs, 1);
    EXPECT_EQ(swept.table, dir.file("sweep.task0.csv"));
    const io::ModelFile run0 = io::read_model_file(dir.file(s.points[0].file));
    ASSERT_EQ(run0.models.size(), 1u);
    EXPECT_EQ(run0.models[0].anchors, d.anchors);
    EXPECT_EQ(relative(run0.models[0].B, d.B), 0.0);
    EXPECT_FALSE(std::filesystem::exists(dir.file(s.points[1].file)));  // not this task's
    if (world.is_root()) {
        std::ifstream table(swept.table);
        std::string header, row, more;
        std::getline(table, header);
        std::getline(table, row);
        EXPECT_EQ(header.rfind("run,file,topics,rectify,solver,", 0), 0u) << header;
        EXPECT_EQ(row.rfind("0,runs/K5_none_active-set.h5,5,none,active-set,", 0), 0u) << row;
        EXPECT_FALSE(std::getline(table, more));
    }

    EvalJob e;
    e.model = job.out;
    e.corpus = p.source;  // with the vocabulary: C built again, the errors against it measured
    e.out = dir.file("eval.h5");
    e.grid_rows = shape.first;
    e.grid_cols = shape.second;
    const std::vector<model::Model> measured = evaluate(world, e);
    ASSERT_EQ(measured.size(), 1u);
    for (const char* name : {"recovery", "approximation", "coherence", "specificity"}) {
        const eval::Metric* again = measured[0].metrics.find(name);
        const eval::Metric* fitted = d.metrics.find(name);
        ASSERT_NE(again, nullptr) << name;
        ASSERT_NE(fitted, nullptr) << name;
        EXPECT_NEAR(again->mean, fitted->mean, 1e-12 * std::abs(fitted->mean)) << name;
    }
    EXPECT_TRUE(std::filesystem::exists(e.out));
}

// A sweep's run is fit()'s also where the rectification's stopping rule looks at the
// topics: both find those anchors among the same candidates (by document frequency), so
// an AP run stops at the same iteration with the same model. On a sparse planted corpus
// many words are below the threshold, and the looks differ when they are candidates.
TEST(Job, SweepRunIsFitsWithTheQualityRule) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 17, 400, 30, 500);
    FitOptions options;
    options.topics = {K};
    options.pipeline = Pipeline::dense;
    options.rectify.method = Rectifier::ap;
    options.rectify.stop = rectify::StopRule::quality;
    options.rectify.check_every = 1;
    options.model.anchor_min_df = 12;
    const FitResult direct = fit(p.source, square_grid(world), options);
    const model::Model& d = direct.models.front();
    ASSERT_GT(d.anchor_excluded, 0);  // the threshold keeps words out

    SweepJob s;
    s.points = sweep_points({Rectifier::ap}, {K}, {recover::Solver::active_set});
    s.corpus = p.source;
    s.rectify = options.rectify;
    s.model = options.model;
    s.grid_rows = square_grid(world)->rows();  // the layout of fit()'s C: the same rounding
    s.grid_cols = square_grid(world)->cols();
    s.folder = dir.path();
    if (world.is_root()) std::filesystem::create_directory(dir.file("runs"));
    MPI_Barrier(world.raw());
    EXPECT_EQ(sweep(world, s).runs, 1);
    const io::ModelFile run = io::read_model_file(dir.file(s.points[0].file));
    ASSERT_EQ(run.models.size(), 1u);
    const model::Model& m = run.models[0];
    EXPECT_EQ(m.rectification.iterations, d.rectification.iterations);
    EXPECT_EQ(m.rectification.checks.size(), d.rectification.checks.size());
    EXPECT_EQ(m.anchors, d.anchors);
    EXPECT_EQ(relative(m.B, d.B), 0.0);
    EXPECT_EQ(relative(m.A, d.A), 0.0);
}

// The compressed pipeline through the same call: C never formed, the planted topics
// found, the same models on one rank, and what it cannot do yet refused on every rank.
TEST(Fit, CompressedPipelineRecoversPlantedTopics) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 11);
    FitOptions options = compressed_options(K);
    const FitResult result = fit(p.source, square_grid(world), options);
    ASSERT_EQ(result.models.size(), 1u);
    expect_words_by_rows(world, result.models.front(), static_cast<Index>(p.truth.vocab.size()));
    const model::Model m = everywhere(world, result.models.front());
    EXPECT_EQ(m.rectification.method, model::Rectification::enn);
    // ENN's default stop: on this well-separated planted corpus every checked pair is
    // nonnegative after a few iterations, and ENN ends at that fixed point.
    EXPECT_EQ(m.rectification.stop_reason.value_or(rectify::StopReason::none), rectify::StopReason::fixed_point);
    EXPECT_LT(m.rectification.iterations, lowrank::kSettledIterations);
    EXPECT_EQ(result.info.vocab, p.truth.vocab);
    EXPECT_EQ(result.info.stats.num_docs, 3000);
    EXPECT_NEAR(result.info.stats.unigram.sum(), 1.0, 1e-12);
    const eval::TruthComparison t = eval::compare_to_truth(m.B, m.A, m.anchors, p.truth.B, p.truth.A, p.truth.anchors);
    EXPECT_EQ(t.anchor_hits, K);
    EXPECT_LT(t.b_l1, 0.1);  // the dense default on this corpus: 0.059 (the test above)
    EXPECT_LT(t.a_l1, 0.1);
    ASSERT_NE(m.metrics.find("coherence"), nullptr);
    EXPECT_NE(m.metrics.find("specificity"), nullptr);
    // The measures on B, taken by rows and reduced, are those of the whole B (metrics.hpp's)
    for (const eval::Metric& whole : eval::model_metrics({m.B, m.B_breve, m.A, m.unigram, m.anchors}).metrics) {
        const eval::Metric* by_rows = m.metrics.find(whole.name);
        ASSERT_NE(by_rows, nullptr) << whole.name;
        ASSERT_EQ(by_rows->values.size(), whole.values.size()) << whole.name;
        EXPECT_NEAR(by_rows->mean, whole.mean, 1e-12 * std::max(1.0, std::abs(whole.mean))) << whole.name;
        for (Index i = 0; i < whole.values.size(); ++i)
            EXPECT_NEAR(by_rows->values(i), whole.values(i), 1e-12 * std::max(1.0, std::abs(whole.values(i))))
                << whole.name << " " << i;
    }

    // ClustAcc with B kept by rows (each rank the rows its documents use, from their
    // owners; BᵀB summed over the ranks' blocks) against B whole on the root, and against
    // the serial computation on the whole B, documents in the file's order.
    {
        const std::string labels = dir.file("labels.p.txt");
        if (world.is_root()) {
            std::ofstream out(labels);
            for (const int label : p.truth.labels) out << label + 1 << "\n";
        }
        MPI_Barrier(world.raw());
        model::Model rows_model = result.models.front(), root_model = result.models.front();
        ASSERT_TRUE(model::by_rows(rows_model));
        model::gather_to_root(world, root_model);
        ASSERT_FALSE(model::by_rows(root_model));
        const CountingCorpus counting{p.source.files, p.source.options, {}};
        const Report quiet = [](Level, const std::string&) {};
        measure_clustering(world, {&rows_model}, counting, labels, 7, quiet);
        measure_clustering(world, {&root_model}, counting, labels, 7, quiet);
        corpus::Shard all;
        std::vector<int> truth;
        for (Index d = 0; d < p.truth.docs.num_docs(); ++d) {
            const corpus::Document doc = p.truth.docs.document(d);
            if (!cooc::contributes(doc, counting.filter)) continue;
            all.append(doc);
            truth.push_back(p.truth.labels[static_cast<std::size_t>(doc.key.id - 1)]);
        }
        const double serial = eval::clustering_accuracy(
            eval::kmeans_correlation(eval::nnls_document_weights(m.B, all), K, /*restarts=*/10, 7), truth);
        for (const model::Model* measured : {&rows_model, &root_model}) {
            ASSERT_NE(measured->metrics.find("clustacc"), nullptr);
            ASSERT_NE(measured->metrics.find("clustacc_theta"), nullptr);
            // (by rows at P > 1, BᵀB is summed in another order: the same clustering unless a
            // document sits on a k-means boundary to 1e-16; at one rank the same bits)
            EXPECT_EQ(measured->metrics.find("clustacc")->mean, serial) << (measured == &rows_model ? "by rows" : "root");
        }
        EXPECT_EQ(rows_model.metrics.find("clustacc_theta")->mean, root_model.metrics.find("clustacc_theta")->mean);
        EXPECT_GT(serial, 0.6) << "the planted dominant topics are found";
    }

    const mpi::Comm self(MPI_COMM_SELF);
    const FitResult alone = fit(p.source, distmat::Grid::create(self, 1, 1), options);
    const model::Model& a = alone.models.front();
    EXPECT_EQ(a.rectification.iterations, m.rectification.iterations) << "ENN stops at the same place on one rank";
    EXPECT_EQ(m.anchors, a.anchors);
    EXPECT_LT(relative(m.B, a.B), 1e-9);
    EXPECT_LT(relative(m.A, a.A), 1e-9);

    // What the model records of the fit: Y and E′ give back the word masses LAW used,
    // d = (YYᵀ + E′)1 with E′ = max(F, Fᵀ) (recomputed here from the triplets alone).
    // On few short documents without ENN (0 iterations) the rank-K part of C has
    // negatives in the anchors' rows, so E′ is not empty there; after ENN on the planted
    // corpus it is.
    ASSERT_TRUE(m.compressed.has_value());
    const model::CompressedRecord& rec = *m.compressed;
    const Index N = static_cast<Index>(p.truth.vocab.size());
    ASSERT_EQ(rec.Y.rows(), N);
    ASSERT_EQ(rec.Y.cols(), K);
    EXPECT_EQ(static_cast<int>(rec.enn.size()), m.rectification.iterations);
    EXPECT_EQ(rec.enn.back().corrections, 0);
    EXPECT_EQ(rec.checked_rows, N);  // l = min(N, 10K + 1000) = N here
    for (Index k = 0; k < K; ++k) EXPECT_GT(rec.eigenvalues(k), 0.0);
    test::SharedTempDir noisy_dir(world);
    const Planted noisy = plant(world, noisy_dir, K, 5, 400, 15);
    FitOptions raw = options;
    raw.compressed.iterations = 0;
    raw.metrics = false;
    const FitResult raw_result = fit(noisy.source, square_grid(world), raw);
    expect_words_by_rows(world, raw_result.models.front(), static_cast<Index>(noisy.truth.vocab.size()));
    const model::Model unrectified = everywhere(world, raw_result.models.front());
    for (const model::Model* model : {&m, &unrectified}) {
        const model::CompressedRecord& r = *model->compressed;
        std::map<std::pair<Index, Index>, double> E;  // max(F, Fᵀ)
        for (std::size_t k = 0; k < r.correction_value.size(); ++k) {
            const Index i = r.correction_row[k], j = r.correction_col[k];
            E[{i, j}] = std::max(E[{i, j}], r.correction_value[k]);
            E[{j, i}] = std::max(E[{j, i}], r.correction_value[k]);
        }
        Eigen::VectorXd d = r.Y * (r.Y.transpose() * Eigen::VectorXd::Ones(N));
        for (const auto& [at, v] : E) d(at.first) += v;
        EXPECT_LT((d - model->unigram).cwiseAbs().maxCoeff(), 1e-12 * model->unigram.cwiseAbs().maxCoeff());
    }
    EXPECT_GT(unrectified.compressed->correction_value.size(), 0u);
    EXPECT_TRUE(unrectified.compressed->enn.empty());

    // Written and read back whole.
    io::Provenance provenance;
    provenance.command_line = "fit_test";
    provenance.created = io::now_iso8601();
    provenance.mpi_ranks = world.size();
    provenance.grid = "test";
    io::write_model_file(world, dir.file("compressed.h5"), result.info, result.models, provenance, result.times, 10);
    if (world.is_root()) {
        const io::ModelFile back = io::read_model_file(dir.file("compressed.h5"));
        ASSERT_EQ(back.models.size(), 1u);
        ASSERT_TRUE(back.models.front().compressed.has_value());
        const model::CompressedRecord& b = *back.models.front().compressed;
        EXPECT_EQ(b.Y, rec.Y);
        EXPECT_EQ(b.correction_row, rec.correction_row);
        EXPECT_EQ(b.correction_value, rec.correction_value);
        EXPECT_EQ(b.eigenvalues, rec.eigenvalues);
        // B, B̆ and the unigram, written by rows (deflated), read back whole: the same bits
        const model::Model& read = back.models.front();
        EXPECT_FALSE(model::by_rows(read));
        EXPECT_EQ(read.B, m.B);
        EXPECT_EQ(read.B_breve, m.B_breve);
        EXPECT_EQ(read.unigram, m.unigram);
        EXPECT_EQ(read.anchors, m.anchors);
    }
    {  // as `jsmf infer` reads it: B by rows (each rank its block of a balanced partition), the rest on rank 0
        ASSERT_EQ(m.B.rows(), N);
        const io::BByRows rows = io::read_B_by_rows(world, dir.file("compressed.h5"), K, N);
        EXPECT_EQ(rows.rows.size(), N);
        EXPECT_EQ(rows.rows.ranks(), world.size());
        EXPECT_EQ(rows.B, m.B.middleRows(rows.rows.begin(world.rank()), rows.rows.rows(world.rank())));
        EXPECT_THROW((void)io::read_B_by_rows(world, dir.file("compressed.h5"), K, N + 1), StageFailed);  // not N × K
        EXPECT_THROW((void)io::read_B_by_rows(world, dir.file("compressed.h5"), K + 1, N), StageFailed);  // no such K
        // A negative entry in the last rank's rows: found by the reduction, refused on every rank, said once.
        if (world.is_root()) {
            std::filesystem::copy_file(dir.file("compressed.h5"), dir.file("negative.h5"));
            const hid_t file = H5Fopen(dir.file("negative.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
            const hid_t set = H5Dopen2(file, "/K5/model/B", H5P_DEFAULT);
            const hid_t space = H5Dget_space(set);
            const hsize_t at[2] = {static_cast<hsize_t>(N - 1), 1};
            EXPECT_GE(H5Sselect_elements(space, H5S_SELECT_SET, 1, at), 0);
            const hsize_t one = 1;
            const hid_t memory = H5Screate_simple(1, &one, nullptr);
            const double negative = -0.25;
            EXPECT_GE(H5Dwrite(set, H5T_NATIVE_DOUBLE, memory, space, H5P_DEFAULT, &negative), 0);
            H5Sclose(memory), H5Sclose(space), H5Dclose(set), H5Fclose(file);
        }
        world.barrier();
        try {
            (void)io::read_B_by_rows(world, dir.file("negative.h5"), K, N);
            ADD_FAILURE() << "a negative entry read";
        } catch (const StageFailed& e) {
            const std::size_t said = e.messages().size();
            EXPECT_EQ(said, world.is_root() ? 1u : 0u);  // rank 0's message alone
            if (said > 0) {
                EXPECT_NE(e.messages().front().find("/K5/model/B has a negative entry (-0.25)"), std::string::npos)
                    << e.messages().front();
            }
        }
        // A torn file (B's first chunk overwritten): the rank that reads it fails, every rank
        // stops, and the one message names the file and the dataset.
        if (world.is_root()) {
            std::filesystem::copy_file(dir.file("compressed.h5"), dir.file("torn.h5"));
            const hid_t file = H5Fopen(dir.file("torn.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
            const hid_t set = H5Dopen2(file, "/K5/model/B", H5P_DEFAULT);
            const hid_t space = H5Dget_space(set);
            haddr_t address = 0;
            hsize_t bytes = 0;
            EXPECT_GE(H5Dget_chunk_info(set, space, 0, nullptr, nullptr, &address, &bytes), 0);
            EXPECT_GT(bytes, 0u);
            H5Sclose(space), H5Dclose(set), H5Fclose(file);
            std::fstream torn(dir.file("torn.h5"), std::ios::in | std::ios::out | std::ios::binary);
            torn.seekp(static_cast<std::streamoff>(address));
            const std::string garbage(static_cast<std::size_t>(bytes), '\x5a');
            torn.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
        }
        world.barrier();
        try {
            (void)io::read_B_by_rows(world, dir.file("torn.h5"), K, N);
            ADD_FAILURE() << "a torn chunk read";
        } catch (const StageFailed& e) {
            const std::size_t said = e.messages().size();
            EXPECT_EQ(said, world.is_root() ? 1u : 0u);
            if (said > 0) {
                const std::string& message = e.messages().front();
                EXPECT_NE(message.find(dir.file("torn.h5")), std::string::npos) << message;
                EXPECT_NE(message.find("/K5/model/B cannot be read (rows 0 to"), std::string::npos) << message;
            }
        }
        if (world.is_root()) {
            const io::ModelFile header = io::read_model_file(dir.file("compressed.h5"), io::ModelParts::without_topic_words);
            ASSERT_EQ(header.models.size(), 1u);
            EXPECT_EQ(header.models.front().B.size(), 0);
            EXPECT_EQ(header.models.front().B_breve.size(), 0);
            EXPECT_FALSE(header.models.front().compressed.has_value());
            EXPECT_EQ(header.models.front().A, m.A);
            EXPECT_EQ(header.vocab.size(), static_cast<std::size_t>(N));
        }
    }
    if (world.is_root()) {  // the file's top words: those of the whole B, merged from the ranks' rows
        const hid_t file = H5Fopen(dir.file("compressed.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        std::vector<std::int64_t> ids(static_cast<std::size_t>(K * 10));
        std::vector<double> probs(ids.size());
        const hid_t id_set = H5Dopen2(file, "/K5/topics/top_word_ids", H5P_DEFAULT);
        const hid_t prob_set = H5Dopen2(file, "/K5/topics/top_word_probs", H5P_DEFAULT);
        EXPECT_GE(H5Dread(id_set, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids.data()), 0);
        EXPECT_GE(H5Dread(prob_set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, probs.data()), 0);
        const hid_t b_set = H5Dopen2(file, "/K5/model/B", H5P_DEFAULT);
        const hid_t dcpl = H5Dget_create_plist(b_set);
        EXPECT_EQ(H5Pget_layout(dcpl), H5D_CHUNKED);  // deflated, in chunks
        EXPECT_GT(H5Pget_nfilters(dcpl), 0);
        hsize_t chunk[2] = {0, 0};  // aligned to the blocks the ranks wrote
        EXPECT_EQ(H5Pget_chunk(dcpl, 2, chunk), 2);
        EXPECT_EQ(chunk[0], static_cast<hsize_t>(distmat::chunk_aligned(N, world.size(), K).chunk));
        EXPECT_EQ(chunk[1], static_cast<hsize_t>(K));
        H5Pclose(dcpl);
        for (const hid_t set : {id_set, prob_set, b_set}) H5Dclose(set);
        H5Fclose(file);
        for (int k = 0; k < K; ++k) {
            const std::vector<Index> top = model::top_word_ids(m.B, k, 10);
            for (int j = 0; j < 10; ++j) {
                EXPECT_EQ(ids[static_cast<std::size_t>(k * 10 + j)], top[static_cast<std::size_t>(j)]) << k << " " << j;
                EXPECT_EQ(probs[static_cast<std::size_t>(k * 10 + j)], m.B(top[static_cast<std::size_t>(j)], k));
            }
        }
    }
    // E′'s triplets, written by every rank at its offset, read back whole in rank order.
    io::write_model_file(world, dir.file("raw.h5"), raw_result.info, raw_result.models, provenance, raw_result.times, 10);
    if (world.is_root()) {
        const io::ModelFile raw_back = io::read_model_file(dir.file("raw.h5"));
        const model::CompressedRecord& b = *raw_back.models.front().compressed;
        const model::CompressedRecord& u = *unrectified.compressed;
        EXPECT_EQ(b.correction_row, u.correction_row);
        EXPECT_EQ(b.correction_col, u.correction_col);
        EXPECT_EQ(b.correction_value, u.correction_value);
        EXPECT_EQ(static_cast<std::int64_t>(b.correction_value.size()), u.correction_total);
        EXPECT_EQ(b.Y, u.Y);
    }
    if (world.is_root()) {
        const io::ModelFile back = io::read_model_file(dir.file("compressed.h5"));
        const model::CompressedRecord& b = *back.models.front().compressed;
        ASSERT_EQ(b.enn.size(), rec.enn.size());
        EXPECT_EQ(b.enn.back().corrections, rec.enn.back().corrections);
        EXPECT_EQ(b.enn.back().negative_mass, rec.enn.back().negative_mass);
        EXPECT_EQ(b.unchecked_pairs, rec.unchecked_pairs);
        EXPECT_EQ(back.models.front().method, model::Method::anchors);
        EXPECT_EQ(back.models.front().solver, recover::Solver::active_set);
        // A method or a solver this jsmf does not know is refused, naming the file, not taken
        // for the default.
        auto set_attribute = [&](const char* name, const std::string& value) {
            const hid_t file = H5Fopen(dir.file("compressed.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
            const std::string group = "K" + std::to_string(back.models.front().num_topics) + "/model";
            const hid_t model_group = H5Gopen2(file, group.c_str(), H5P_DEFAULT);
            EXPECT_GE(model_group, 0);  // (no ASSERT: the other ranks wait for this one below)
            H5Adelete(model_group, name);
            const hid_t type = H5Tcopy(H5T_C_S1);
            H5Tset_size(type, value.size());
            const hid_t space = H5Screate(H5S_SCALAR);
            const hid_t attribute = H5Acreate2(model_group, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
            H5Awrite(attribute, type, value.c_str());
            H5Aclose(attribute), H5Sclose(space), H5Tclose(type), H5Gclose(model_group), H5Fclose(file);
        };
        auto expect_refused = [&](const std::string& message) {
            try {
                (void)io::read_model_file(dir.file("compressed.h5"));
                ADD_FAILURE() << "read despite " << message;
            } catch (const InputError& e) {
                EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
                EXPECT_NE(std::string(e.what()).find("compressed.h5"), std::string::npos) << e.what();
            }
        };
        set_attribute("method", "bogus");
        expect_refused("unknown method 'bogus'");
        set_attribute("method", "anchors");
        set_attribute("solver", "bogus");
        expect_refused("unknown solver 'bogus'");
    }

    // A hierarchy: its levels above the first work on A alone, as the dense pipeline's, and
    // are the same on one rank.
    FitOptions hierarchy = options;
    hierarchy.hierarchy = {5, 2};
    hierarchy.topics = {5};
    hierarchy.metrics = false;
    const FitResult tree = fit(p.source, square_grid(world), hierarchy);
    ASSERT_EQ(tree.hierarchy.size(), 1u);
    const model::HierarchyLevel& level = tree.hierarchy.front();
    EXPECT_EQ(level.topics, 2);
    EXPECT_EQ(level.B.rows(), 5);
    EXPECT_EQ(level.anchors.size(), 2u);
    // The level's words by rows, in the first level's blocks (no rank holds N × K), written
    // collectively and read back whole: the same bits.
    const model::Model& first = tree.models.front();
    ASSERT_TRUE(model::by_rows(first));
    EXPECT_EQ(level.B_words_total_rows, first.B_total_rows);
    EXPECT_EQ(level.B_words_first_row, first.B_first_row);
    ASSERT_EQ(level.B_words.rows(), first.B.rows());
    ASSERT_EQ(level.B_words.cols(), 2);
    EXPECT_LE((level.B_words - first.B * level.B).cwiseAbs().maxCoeff(), 1e-15);
    const Eigen::MatrixXd words =
        distmat::gather_rows(world, distmat::partition_of_blocks(world, level.B_words.rows()), level.B_words);
    ASSERT_EQ(words.rows(), static_cast<Index>(p.truth.vocab.size()));
    for (Index c = 0; c < 2; ++c) EXPECT_NEAR(words.col(c).sum(), 1.0, 1e-9);
    {
        io::write_model_file(world, dir.file("tree.h5"), tree.info, tree.models, provenance, tree.times, 10, nullptr,
                             &tree.hierarchy);
        if (world.is_root()) {
            const io::ModelFile back = io::read_model_file(dir.file("tree.h5"));
            ASSERT_EQ(back.hierarchy.size(), 1u);
            EXPECT_EQ(back.hierarchy.front().B_words, words);
            EXPECT_EQ(back.hierarchy.front().B, level.B);
            EXPECT_EQ(back.hierarchy.front().B_words_total_rows, 0);  // read whole
        }
    }
    for (Index c = 0; c < 2; ++c) EXPECT_NEAR(level.B.col(c).sum(), 1.0, 1e-9);
    // The level's A is rectified by the default AP (inexact eigensolves): the dense fit's
    // tolerance across rank counts for it, 1e-7 (the first test), on an A that itself
    // differs by rounding (the 1e-9 above). Measured: 2.8e-9 at 3 ranks.
    const model::HierarchyLevel one = fit(p.source, distmat::Grid::create(self, 1, 1), hierarchy).hierarchy.front();
    EXPECT_EQ(one.anchors, level.anchors);
    EXPECT_LT(relative(level.B, one.B), 1e-7);
    EXPECT_LT(relative(level.A, one.A), 1e-7);
    EXPECT_LT(relative(words, one.B_words), 1e-7);
}

// The user's anchor words on the compressed pipeline: LAW takes them as its pivots (in
// their order, no candidate threshold), so the planted anchors give the planted topics, the
// same on one rank, and the record says "words"; words it cannot take are refused on every
// rank, naming the word.
// AnchorFree on the compressed pipeline: the LP and PDS on ENN's factor Y by rows (no rank
// holds N × K), C* and E* from K × K products. On a planted corpus it recovers the planted
// topics as the dense pipeline's AnchorFree does, PDS reaches the LP's topics, and the
// model is the same at any rank count (1 rank alone against all).
TEST(Fit, CompressedPipelineRunsAnchorFree) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 13);
    const Index N = static_cast<Index>(p.truth.vocab.size());
    FitOptions options = compressed_options(K);
    options.model.method = Method::anchorfree_lp;
    const FitResult result = fit(p.source, square_grid(world), options);
    expect_words_by_rows(world, result.models.front(), N);
    const model::Model m = everywhere(world, result.models.front());
    EXPECT_EQ(m.method, Method::anchorfree_lp);
    EXPECT_EQ(m.rectification.method, model::Rectification::enn);
    EXPECT_EQ(m.anchor_method, model::AnchorChoice::representative);
    EXPECT_TRUE(m.anchorfree.converged);
    EXPECT_TRUE(m.anchorfree.a_is_distribution);
    EXPECT_NEAR(m.A.sum(), 1.0, 1e-12);
    for (Index k = 0; k < K; ++k) EXPECT_NEAR(m.B.col(k).sum(), 1.0, 1e-12) << k;
    EXPECT_GE(m.B.minCoeff(), 0.0);
    EXPECT_EQ(m.compressed->correction_total, 0);  // P = YYᵀ: no E′
    // The metrics against YYᵀ and the documents' C, with the representative words as anchors.
    ASSERT_NE(m.metrics.find("recovery"), nullptr);
    ASSERT_NE(m.metrics.find("approximation_original"), nullptr);
    EXPECT_TRUE(std::isfinite(m.metrics.find("approximation_original")->mean));
    ASSERT_NE(m.metrics.find("coherence"), nullptr);

    // The planted topics, as the dense pipeline's AnchorFree finds them.
    FitOptions dense = options;
    dense.pipeline = Pipeline::dense;
    dense.metrics = false;
    const model::Model d = everywhere(world, fit(p.source, square_grid(world), dense).models.front());
    const eval::TruthComparison tc = eval::compare_to_truth(m.B, m.A, m.anchors, p.truth.B, p.truth.A, p.truth.anchors);
    const eval::TruthComparison td = eval::compare_to_truth(d.B, d.A, d.anchors, p.truth.B, p.truth.A, p.truth.anchors);
    if (world.is_root())
        std::printf("AnchorFree-LP, planted B L1 per topic: compressed %.4f, dense %.4f; A L1 %.4f, %.4f\n", tc.b_l1,
                    td.b_l1, tc.a_l1, td.a_l1);
    // Both 0.073 (B) and 0.155 (A) at 1 and 3 ranks: ENN's rectification moves neither.
    EXPECT_LT(tc.b_l1, 0.1);
    EXPECT_LT(tc.b_l1, td.b_l1 + 0.01);
    EXPECT_LT(tc.a_l1, td.a_l1 + 0.01);

    // The same model on one rank alone.
    options.metrics = false;
    const mpi::Comm self(MPI_COMM_SELF);
    const model::Model alone = fit(p.source, distmat::Grid::create(self, 1, 1), options).models.front();
    EXPECT_EQ(alone.anchors, m.anchors);
    EXPECT_LT(relative(m.B, alone.B), 1e-7);
    EXPECT_LT(relative(m.A, alone.A), 1e-7);

    // PDS: the LP's topics (its stopping tolerance, 1e-7 of ‖Z‖).
    options.model.method = Method::anchorfree_pds;
    const model::Model pds = everywhere(world, fit(p.source, square_grid(world), options).models.front());
    EXPECT_EQ(pds.method, Method::anchorfree_pds);
    EXPECT_TRUE(pds.anchorfree.converged);
    Eigen::MatrixXi lp_words(K, 1);
    for (int k = 0; k < K; ++k) lp_words(k, 0) = static_cast<int>(m.anchors[static_cast<std::size_t>(k)]);
    const eval::TruthComparison same = eval::compare_to_truth(pds.B, pds.A, pds.anchors, m.B, m.A, lp_words);
    EXPECT_LT(same.topic_l1.maxCoeff(), 1e-4);
    EXPECT_EQ(same.anchor_hits, K);
}

// The other anchor finders on the compressed pipeline (on the rows of C̄ as the factor gives
// them, in K dimensions): on a separable planted corpus each finds the planted anchors, as
// pivoted QR and the dense pipeline's finders do, the same at 1 rank and at all; the file
// names the finder. And the tf-idf estimator (AnchorFree's P) on the compressed pipeline:
// with AnchorFree and no rectification, the dense pipeline's topics.
TEST(Fit, CompressedPipelineFindsAnchorsWithEveryFinderAndTakesTfIdf) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 14);
    const mpi::Comm self(MPI_COMM_SELF);
    std::vector<Index> planted(static_cast<std::size_t>(K));
    for (int k = 0; k < K; ++k) planted[static_cast<std::size_t>(k)] = p.truth.anchors(k, 0);
    std::sort(planted.begin(), planted.end());
    for (const auto finder : {anchors::Finder::fastanchor, anchors::Finder::snpa, anchors::Finder::xray}) {
        FitOptions options = compressed_options(K);
        options.metrics = false;
        options.model.finder = finder;
        const model::Model m = everywhere(world, fit(p.source, square_grid(world), options).models.front());
        EXPECT_EQ(m.anchor_method, model::recorded(finder));
        std::vector<Index> found = m.anchors;
        std::sort(found.begin(), found.end());
        EXPECT_EQ(found, planted) << name_of(finder);
        const eval::TruthComparison t = eval::compare_to_truth(m.B, m.A, m.anchors, p.truth.B, p.truth.A, p.truth.anchors);
        EXPECT_LT(t.b_l1, 0.1) << name_of(finder);
        const model::Model alone = fit(p.source, distmat::Grid::create(self, 1, 1), options).models.front();
        EXPECT_EQ(alone.anchors, m.anchors) << name_of(finder);
        EXPECT_LT(relative(m.B, alone.B), 1e-9) << name_of(finder);
    }

    // tf-idf, AnchorFree-LP, no rectification (--enn-iterations 0): the dense pipeline's
    // AnchorFree on the formed tf-idf C with --rectify none.
    CorpusSource tfidf = p.source;
    tfidf.options.estimator = cooc::Estimator::tfidf;
    FitOptions compressed = compressed_options(K);
    compressed.metrics = false;
    compressed.model.method = Method::anchorfree_lp;
    compressed.compressed.iterations = 0;
    compressed.compressed.stop_when_settled = false;
    FitOptions dense = compressed;
    dense.pipeline = Pipeline::dense;
    dense.rectify.method = Rectifier::none;
    const model::Model c = everywhere(world, fit(tfidf, square_grid(world), compressed).models.front());
    const model::Model d = everywhere(world, fit(tfidf, square_grid(world), dense).models.front());
    Eigen::MatrixXi dense_words(K, 1);
    for (int k = 0; k < K; ++k) dense_words(k, 0) = static_cast<int>(d.anchors[static_cast<std::size_t>(k)]);
    const eval::TruthComparison same = eval::compare_to_truth(c.B, c.A, c.anchors, d.B, d.A, dense_words);
    if (world.is_root()) std::printf("tf-idf AnchorFree-LP, compressed against dense: B L1 per topic at most %.2e\n", same.topic_l1.maxCoeff());
    // The same C's top-K square root (to the range finder's 1e-11 against the dense
    // eigensolver's 1e-10) and the same LP: the same topics to far below the planted noise.
    EXPECT_LT(same.topic_l1.maxCoeff(), 1e-6);
    EXPECT_EQ(same.anchor_hits, K);
    // Unrectified, the unigram (specificity's) is the documents' C1 on both, not YYᵀ1.
    EXPECT_LT((c.unigram - d.unigram).cwiseAbs().maxCoeff(), 1e-12 * d.unigram.maxCoeff());
}

TEST(Fit, CompressedPipelineTakesGivenAnchorWords) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 11);
    FitOptions options = compressed_options(K);
    options.metrics = false;
    for (int k = K - 1; k >= 0; --k) options.model.anchor_words.push_back(p.truth.anchors(k, 0));  // not ascending
    const FitResult result = fit(p.source, square_grid(world), options);
    const model::Model m = everywhere(world, result.models.front());
    EXPECT_EQ(m.anchors, options.model.anchor_words);
    EXPECT_EQ(m.anchor_method, model::AnchorChoice::words);
    EXPECT_EQ(m.anchor_min_df, 0);
    const eval::TruthComparison t = eval::compare_to_truth(m.B, m.A, m.anchors, p.truth.B, p.truth.A, p.truth.anchors);
    EXPECT_EQ(t.anchor_hits, K);
    EXPECT_LT(t.b_l1, 0.1);  // the bounds of the found anchors' fit (the test above)
    EXPECT_LT(t.a_l1, 0.1);
    const mpi::Comm self(MPI_COMM_SELF);
    const model::Model alone = fit(p.source, distmat::Grid::create(self, 1, 1), options).models.front();
    EXPECT_EQ(alone.anchors, m.anchors);
    EXPECT_LT(relative(m.B, alone.B), 1e-9);
    EXPECT_LT(relative(m.A, alone.A), 1e-9);

    FitOptions twice = options;
    twice.model.anchor_words.back() = twice.model.anchor_words.front();
    test::expect_stage_failed(world, [&] { (void)fit(p.source, square_grid(world), twice); },
                              {"word id " + std::to_string(twice.model.anchor_words.front()) + " is given twice"});
    FitOptions outside = options;
    outside.model.anchor_words.back() = 300;
    test::expect_stage_failed(world, [&] { (void)fit(p.source, square_grid(world), outside); },
                              {"word id 300 is out of range"});
}

// A co-occurrence file on the compressed pipeline: each rank reads its rows of C
// (io::read_cooc_rows) and applies them (lowrank::MatrixOperator). The same C as the
// documents' operator applies, to rounding, so the same model as the fit from the documents
// (anchors equal; B and A within 1e-7 of their largest entries), the planted topics, the
// same model at one rank and at all; coherence needs the corpus, as the dense fit's does.
// A damaged C is refused as the dense pipeline refuses it.
TEST(Fit, CompressedPipelineTakesACoocFile) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 17);
    CoocJob cooc;
    cooc.corpus = p.source;
    cooc.out = dir.file("C.h5");
    (void)write_cooc(world, cooc, Report{});
    FitOptions options = compressed_options(K);
    options.compressed.iterations = 40;  // exactly 40: no stopping rule between the two fits
    options.compressed.stop_when_settled = false;
    const FitResult from_file = fit_compressed(cooc.out, CorpusSource{}, world, options);
    const FitResult from_docs = fit_compressed(p.source, world, options);
    const model::Model f = everywhere(world, from_file.models.front());
    const model::Model d = everywhere(world, from_docs.models.front());
    EXPECT_EQ(f.rectification.method, model::Rectification::enn);
    EXPECT_EQ(f.anchors, d.anchors);
    if (world.is_root())
        std::printf("cooc file against documents: B %.3g, A %.3g relative\n", relative(f.B, d.B), relative(f.A, d.A));
    EXPECT_LT(relative(f.B, d.B), 1e-7);
    EXPECT_LT(relative(f.A, d.A), 1e-7);
    EXPECT_LT((f.unigram - d.unigram).lpNorm<Eigen::Infinity>(), 1e-12);
    const eval::TruthComparison t = eval::compare_to_truth(f.B, f.A, f.anchors, p.truth.B, p.truth.A, p.truth.anchors);
    EXPECT_EQ(t.anchor_hits, K);
    EXPECT_LT(t.b_l1, 0.1);
    // The metrics that compare with C, from C's rows; coherence not without the corpus.
    ASSERT_NE(f.metrics.find("approximation_original"), nullptr);
    EXPECT_NEAR(f.metrics.find("approximation_original")->mean, d.metrics.find("approximation_original")->mean,
                1e-6 * d.metrics.find("approximation_original")->mean);  // the same probes of the same C
    EXPECT_EQ(f.metrics.find("coherence"), nullptr);
    EXPECT_NE(f.metrics_note.find("coherence not measured"), std::string::npos) << f.metrics_note;
    // With the corpus: coherence, the documents' fit's.
    options.metrics = true;
    const model::Model fc = everywhere(world, fit_compressed(cooc.out, p.source, world, options).models.front());
    ASSERT_NE(fc.metrics.find("coherence"), nullptr);
    EXPECT_NEAR(fc.metrics.find("coherence")->mean, d.metrics.find("coherence")->mean,
                1e-9 * std::abs(d.metrics.find("coherence")->mean));

    options.metrics = false;
    const mpi::Comm self(MPI_COMM_SELF);
    const model::Model alone = fit_compressed(cooc.out, CorpusSource{}, self, options).models.front();
    EXPECT_EQ(alone.anchors, f.anchors);
    EXPECT_LT(relative(f.B, alone.B), 1e-7);
    EXPECT_LT(relative(f.A, alone.A), 1e-7);

    // C made asymmetric in one row (its sum kept): refused by rows as the dense read refuses it.
    if (world.is_root()) {
        std::filesystem::copy_file(cooc.out, dir.file("bad.h5"));
        const hid_t file = H5Fopen(dir.file("bad.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        const hid_t set = H5Dopen2(file, "cooc/C", H5P_DEFAULT);
        Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> C(300, 300);
        H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, C.data());
        const double delta = 0.5 * std::min(C(7, 1), C(7, 2));
        C(7, 1) += delta;
        C(7, 2) -= delta;
        H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, C.data());
        H5Dclose(set);
        H5Fclose(file);
    }
    MPI_Barrier(world.raw());
    test::expect_stage_failed(world, [&] { (void)fit_compressed(dir.file("bad.h5"), CorpusSource{}, world, options); },
                              {"is not symmetric"});
}

// ExpGrad and ADMM-DR on the compressed pipeline solve LAW's per-word problems (G = P_SᵀP_S,
// f = P_SᵀP_j): tightened to a 1e-10 gap they give the active set's B (the exact solution of
// the same problems; the bound recover_test's SolversAgree states for the dense pipeline),
// the same anchors (LAW's pivots do not depend on the solver), and the same model at any
// rank count; the file says which solver. RecoverKL is refused, naming why.
TEST(Fit, CompressedPipelineSolvesWithExpGradAndAdmm) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 12);
    FitOptions options = compressed_options(K);
    options.compressed.iterations = 10;
    options.compressed.stop_when_settled = false;
    const model::Model exact = everywhere(world, fit(p.source, square_grid(world), options).models.front());
    EXPECT_EQ(exact.solver, recover::Solver::active_set);
    const mpi::Comm self(MPI_COMM_SELF);
    for (const recover::Solver solver : {recover::Solver::expgrad, recover::Solver::admm}) {
        FitOptions o = options;
        o.model.solver = solver;
        o.model.solver_tolerance = 1e-10;
        o.model.solver_iterations = 100000;
        const model::Model m = everywhere(world, fit(p.source, square_grid(world), o).models.front());
        EXPECT_EQ(m.solver, solver);
        ASSERT_EQ(m.anchors, exact.anchors);
        EXPECT_EQ(m.words_converged, m.words_solved);
        double largest = 0;
        for (Index k = 0; k < K; ++k) largest = std::max(largest, (m.B.col(k) - exact.B.col(k)).lpNorm<1>());
        EXPECT_LT(largest, 0.01) << name_of(solver);
        EXPECT_GT(largest, 0.0) << name_of(solver) << ": not the active set's bits";  // another solver ran
        const model::Model alone = fit(p.source, distmat::Grid::create(self, 1, 1), o).models.front();
        EXPECT_EQ(alone.anchors, m.anchors);
        EXPECT_LT(relative(m.B, alone.B), 1e-9) << name_of(solver);
    }
    FitOptions kl = options;
    kl.model.solver = recover::Solver::kl;
    test::expect_stage_failed(world, [&] { (void)fit(p.source, square_grid(world), kl); }, {"solver kl", "dense pipeline"});
}

// Arora et al.'s least-squares A on the compressed pipeline: B⁺ Ĉ B⁺ᵀ against the rectified
// Ĉ = YYᵀ + E′ formed here from the model's own record (Y and E′'s triplets), by dense
// algebra; the same at any rank count; α and the metrics use it.
TEST(Fit, CompressedPipelineFitsALeastSquaresA) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 5;
    const Planted p = plant(world, dir, K, 11, 400, 15);  // few short documents: E′ not empty
    FitOptions options = compressed_options(K);
    options.compressed.iterations = 0;
    options.compressed.stop_when_settled = false;
    options.model.recover_a = RecoverA::least_squares;
    const model::Model m = everywhere(world, fit(p.source, square_grid(world), options).models.front());
    EXPECT_EQ(m.a_method, model::ARecovery::least_squares);
    const model::CompressedRecord& r = *m.compressed;
    ASSERT_GT(r.correction_value.size(), 0u);
    const Index N = r.Y.rows();
    Eigen::MatrixXd C = r.Y * r.Y.transpose();
    Eigen::MatrixXd E = Eigen::MatrixXd::Zero(N, N);
    for (std::size_t k = 0; k < r.correction_value.size(); ++k) {
        const Index i = r.correction_row[k], j = r.correction_col[k];
        E(i, j) = std::max(E(i, j), r.correction_value[k]);
        E(j, i) = std::max(E(j, i), r.correction_value[k]);
    }
    C += E;
    const Eigen::MatrixXd pinv = m.B.completeOrthogonalDecomposition().pseudoInverse();  // B⁺, by another route
    EXPECT_LT(relative(m.A, pinv * C * pinv.transpose()), 1e-10);
    EXPECT_GT(relative(m.A, pinv * (C - E) * pinv.transpose()), 1e-6);  // E′ counts: without it A is another matrix
    const mpi::Comm self(MPI_COMM_SELF);
    const model::Model alone = fit(p.source, distmat::Grid::create(self, 1, 1), options).models.front();
    EXPECT_LT(relative(m.A, alone.A), 1e-9);
}

/// What a file holds, as the schema names it: path (placeholders for what repeats; each
/// metric by its name, as the metric table puts it in the schema) →
/// (type, rank), read with the plain HDF5 C API.
class FileWalk {
public:
    explicit FileWalk(const std::string& path) {
        const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        EXPECT_GE(file, 0) << path;
        const hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
        attributes(root, "/", "");
        H5Gclose(root);
        H5Lvisit(file, H5_INDEX_NAME, H5_ITER_NATIVE, &FileWalk::visit, this);
        H5Fclose(file);
    }
    std::map<std::string, std::pair<std::string, int>> found;

private:
    static std::string placeholders(std::string path) {
        path = std::regex_replace(path, std::regex("^/K[0-9]+"), "/K<K>");
        path = std::regex_replace(path, std::regex("/level[0-9]+"), "/level<l>");
        return path;
    }
    static std::string type_of(hid_t type) {
        switch (H5Tget_class(type)) {
            case H5T_FLOAT: return H5Tget_size(type) == 8 ? "float64" : "float?";
            case H5T_INTEGER: return H5Tget_size(type) == 8 ? "int64" : "int?";
            case H5T_STRING: return "string";
            default: return "other";
        }
    }
    void attributes(hid_t object, const std::string& path, const std::string& parent) {
        const int count = H5Aget_num_attrs(object);
        for (int k = 0; k < count; ++k) {
            const hid_t attribute = H5Aopen_idx(object, static_cast<unsigned>(k));
            char name[256];
            H5Aget_name(attribute, sizeof name, name);
            std::string key = std::string(name);
            if (parent == "/timings" || parent == "/K<K>/timings" || parent == "/timings/peak_rss_bytes" ||
                parent == "/K<K>/timings/peak_rss_bytes")
                key = "<stage>";
            if (parent.empty() && !is_fixed_root_attribute(key)) key = "<option>";
            const hid_t type = H5Aget_type(attribute), space = H5Aget_space(attribute);
            found[(parent == "/" || parent.empty() ? "" : parent) + "@" + key] = {type_of(type),
                                                                                  H5Sget_simple_extent_ndims(space)};
            H5Tclose(type);
            H5Sclose(space);
            H5Aclose(attribute);
        }
        (void)path;
    }
    static bool is_fixed_root_attribute(const std::string& name) {
        for (const auto& e : io::model_schema())
            if (e.path == "@" + name) return true;
        return false;
    }
    static herr_t visit(hid_t group, const char* name, const H5L_info_t* info, void* data) {
        auto* self = static_cast<FileWalk*>(data);
        const std::string path = placeholders("/" + std::string(name));
        if (info->type == H5L_TYPE_SOFT) {
            self->found[path] = {"link", 0};
            return 0;
        }
        const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
        H5O_info_t object_info;
        H5Oget_info(object, &object_info);
        if (object_info.type == H5O_TYPE_GROUP) {
            self->found[path] = {"group", 0};
        } else {
            const hid_t type = H5Dget_type(object), space = H5Dget_space(object);
            self->found[path] = {type_of(type), H5Sget_simple_extent_ndims(space)};
            H5Tclose(type);
            H5Sclose(space);
        }
        self->attributes(object, path, path);
        H5Oclose(object);
        return 0;
    }
};

/// The rank a schema shape means: "" scalar (0), "N" or "K or N" (1), "N x K" (2).
int rank_of(const io::SchemaEntry& e) {
    if (e.shape.empty()) return 0;
    int rank = 1;
    for (std::size_t at = e.shape.find(" x "); at != std::string::npos; at = e.shape.find(" x ", at + 1)) ++rank;
    return rank;
}

/// Every object of the file is in the schema with its type and rank; every entry of the
/// schema that is always there, or there under one of `conditions`, is in the file.
void expect_conforms(const std::string& path, const std::set<std::string>& conditions) {
    const FileWalk walk(path);
    std::map<std::string, const io::SchemaEntry*> by_path;
    for (const auto& e : io::model_schema()) by_path[e.path] = &e;
    for (const auto& [object, type_rank] : walk.found) {
        const auto entry = by_path.find(object);
        if (entry == by_path.end()) {
            ADD_FAILURE() << path << ": " << object << " is not in the schema";
            continue;
        }
        EXPECT_EQ(type_rank.first, entry->second->type) << object;
        if (type_rank.first != "group" && type_rank.first != "link") {
            EXPECT_EQ(type_rank.second, rank_of(*entry->second)) << object;
        }
    }
    for (const auto& e : io::model_schema())
        if (e.when.empty() || conditions.count(e.when) > 0) {
            EXPECT_EQ(walk.found.count(e.path), 1u) << path << ": no " << e.path;
        }
}

// The schema table that `jsmf show --schema` prints is what fit writes, object for object.
TEST(Schema, ModelFilesHoldWhatTheTableSays) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const Planted p = plant(world, dir, 6, 9);
    const auto grid = square_grid(world);
    io::Provenance provenance;
    provenance.command_line = "fit_test";
    provenance.created = io::now_iso8601();
    provenance.mpi_ranks = world.size();
    provenance.grid = "test";
    provenance.options = {{"corpus", p.source.files.front()}, {"threads", "1"}};

    FitOptions tree;  // the default quality stop (its checks), α, metrics, a hierarchy
    tree.hierarchy = {6, 3};
    tree.model.alpha = true;
    FitResult r = fit(p.source, grid, tree);
    model::Model& m = r.models.front();
    m.truth = eval::compare_to_truth(m.B, m.A, m.anchors, p.truth.B, p.truth.A, p.truth.anchors);
    m.has_truth = true;
    m.truth_file = "truth.h5";
    io::CorpusDocuments documents;
    for (Index d = 0; d < p.truth.num_docs; ++d) {
        documents.ids.push_back("doc" + std::to_string(d + 1));
        documents.labels.push_back(1 + d % 2);
    }
    documents.label_names = {"even", "odd"};
    io::write_model_file(world, dir.file("tree.h5"), r.info, r.models, provenance, r.times, 10, &documents, &r.hierarchy);

    FitOptions two;  // AnchorFree, two K, no metrics, the papers' plain AP
    two.topics = {4, 6};
    two.model.method = Method::anchorfree_lp;
    two.metrics = false;
    two.rectify.stop = rectify::StopRule::iterations;
    two.rectify.iterations = 10;
    const FitResult f = fit(p.source, grid, two);
    io::write_model_file(world, dir.file("two.h5"), f.info, f.models, provenance, f.times, 10);

    if (world.is_root()) {
        expect_conforms(dir.file("tree.h5"), {"fit --hierarchy", "fit --prepared", "fit --prepared, labelled",
                                              "fit --alpha", "unless fit --no-metrics",
                                              "unless fit --no-metrics; with the corpus", "jsmf eval --truth", "one K",
                                              "fit --rectify ap|dr|dp", "fit --stop quality|fixed-point"});
        expect_conforms(dir.file("two.h5"), {"fit --method anchorfree-*", "fit --rectify ap|dr|dp"});
    }

    FitOptions compressed;  // the compressed pipeline (its metrics lack those that need C)
    compressed.topics = {6};
    compressed.pipeline = Pipeline::compressed;
    compressed.compressed.iterations = 5;
    compressed.metrics = false;
    const FitResult c = fit(p.source, grid, compressed);
    io::write_model_file(world, dir.file("compressed.h5"), c.info, c.models, provenance, c.times, 10);
    if (world.is_root()) expect_conforms(dir.file("compressed.h5"), {"fit --pipeline compressed", "one K"});
}

// The metric table names every metric once: the names, single numbers, the schema's
// entries, and the metrics a fit measures.
TEST(MetricTable, DrivesTheNamesAndTheSchema) {
    const auto& table = eval::metric_table();
    ASSERT_EQ(eval::metric_names().size(), table.size());
    std::map<std::string, const io::SchemaEntry*> schema;
    for (const auto& e : io::model_schema()) schema[e.path] = &e;
    for (std::size_t k = 0; k < table.size(); ++k) {
        const std::string name = table[k].name, per = table[k].per;
        EXPECT_EQ(eval::metric_names()[k], name);
        EXPECT_EQ(eval::find_metric(name), &table[k]);
        EXPECT_EQ(eval::is_single_number(name), per.empty()) << name;
        EXPECT_TRUE(per.empty() || per == "topic" || per == "word") << name;
        ASSERT_EQ(schema.count("/K<K>/metrics@" + name), 1u) << name;
        EXPECT_EQ(schema["/K<K>/metrics@" + name]->shape, "2");
        EXPECT_EQ(schema.count("/K<K>/metrics/" + name), per.empty() ? 0u : 1u) << name;
        if (!per.empty()) {
            EXPECT_EQ(schema["/K<K>/metrics/" + name]->shape, per == "topic" ? "K" : "N") << name;
        }
    }
    EXPECT_EQ(eval::find_metric("no_such_metric"), nullptr);
    EXPECT_FALSE(eval::is_single_number("no_such_metric"));
}

/// Local. Every rank's `local` on rank 0, in rank order (empty elsewhere).
template <class T>
std::vector<T> on_root(const mpi::Comm& comm, const std::vector<T>& local) {
    return mpi::gather_concat(comm, local, 0);
}

// θ of a corpus (jsmf infer's library call): every rank infers its documents, and together
// they are the one-rank result value for value, totals included; a corpus with another
// vocabulary is mapped by name, or refused without one.
TEST(InferCorpus, EqualsOneRank) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const int K = 4;
    const Planted p = plant(world, dir, K, 8);
    FitOptions options;
    options.topics = {K};
    options.rectify.stop = rectify::StopRule::iterations;
    options.rectify.iterations = 10;
    options.metrics = false;
    const FitResult r = fit(p.source, square_grid(world), options);
    infer::InferModel model{"m.h5", K, r.models.front().B, r.info.vocab, {}};
    infer::CorpusInput input;
    input.corpus = p.source.files;
    // B and the vocabulary on the root only: the other ranks get the rows their words need.
    infer::InferModel rooted = model;
    if (!world.is_root()) {
        rooted.B.resize(0, 0);
        rooted.vocab.clear();
    }
    const infer::CorpusTopics all = infer::infer_corpus(world, rooted, input, {});
    const infer::CorpusTopics alone = infer::infer_corpus(mpi::Comm(MPI_COMM_SELF), model, input, {});
    {  // B by rows (a compressed fit's), the first rank holding most: the rows from their owners, θ the same bits
        std::vector<Index> counts(static_cast<std::size_t>(world.size()), 0);
        const Index N = static_cast<Index>(p.truth.vocab.size());
        for (int q = 0; q < world.size(); ++q) counts[static_cast<std::size_t>(q)] = q == 0 ? N / 2 : 0;
        for (Index i = N / 2; i < N; ++i) ++counts[static_cast<std::size_t>(i % world.size())];
        infer::InferModel by_rows = rooted;
        by_rows.B_rows = distmat::RowPartition::of_counts(counts);
        by_rows.B = model.B.middleRows(by_rows.B_rows.begin(world.rank()), by_rows.B_rows.rows(world.rank()));
        const infer::CorpusTopics from_rows = infer::infer_corpus(world, by_rows, input, {});
        EXPECT_EQ(from_rows.local.rows, all.local.rows);
        EXPECT_EQ(from_rows.local.theta, all.local.theta);
        EXPECT_EQ(from_rows.local.log_likelihood, all.local.log_likelihood);
        EXPECT_EQ(from_rows.model_rows, all.model_rows);
    }
    // Each rank held the rows of its own documents' words, not B: at one rank every word that
    // occurs; over the ranks each of those at least once.
    EXPECT_GT(alone.model_rows, 0);
    EXPECT_LE(alone.model_rows, static_cast<std::int64_t>(p.truth.vocab.size()));
    EXPECT_LE(all.model_rows, alone.model_rows);
    EXPECT_GE(mpi::allreduce_sum(world, all.model_rows), alone.model_rows);

    EXPECT_TRUE(std::is_sorted(all.local.rows.begin(), all.local.rows.end()));
    std::vector<double> theta;  // this rank's rows, row after row
    for (Index m = 0; m < all.local.theta.rows(); ++m)
        for (Index k = 0; k < K; ++k) theta.push_back(all.local.theta(m, k));
    const std::vector<std::int64_t> rows = on_root(world, all.local.rows);
    const std::vector<double> thetas = on_root(world, theta);
    const std::vector<double> log_likelihood = on_root(world, all.local.log_likelihood);
    const std::vector<std::int64_t> dominant = on_root(world, all.local.dominant_topic);
    const std::vector<std::int64_t> oov = on_root(world, all.local.oov_tokens);
    const std::vector<std::int64_t> iterations = on_root(world, all.local.iterations);
    if (world.is_root()) {
        const infer::DocumentRows& one = alone.local;
        EXPECT_EQ(rows, one.rows);  // ranks hold consecutive pieces of the corpus, in rank order
        ASSERT_EQ(thetas.size(), static_cast<std::size_t>(one.theta.size()));
        for (std::size_t m = 0; m < one.rows.size(); ++m)
            for (Index k = 0; k < K; ++k)
                EXPECT_EQ(thetas[m * static_cast<std::size_t>(K) + static_cast<std::size_t>(k)],
                          one.theta(static_cast<Index>(m), k));
        EXPECT_EQ(log_likelihood, one.log_likelihood);
        EXPECT_EQ(dominant, one.dominant_topic);
        EXPECT_EQ(oov, one.oov_tokens);
        EXPECT_EQ(iterations, one.iterations);
    }
    const infer::CorpusSummary& s = all.summary;
    EXPECT_EQ(s.log_likelihood, alone.summary.log_likelihood);  // summed in corpus order: to the bit
    EXPECT_EQ(s.tokens, alone.summary.tokens);
    EXPECT_EQ(s.oov_tokens, alone.summary.oov_tokens);
    EXPECT_EQ(s.not_converged, alone.summary.not_converged);
    EXPECT_EQ(s.documents, p.truth.num_docs);
    EXPECT_EQ(s.inferred + s.empty, s.documents);
    std::int64_t corpus_tokens = 0;
    for (const auto c : p.truth.docs.counts) corpus_tokens += c;
    EXPECT_EQ(s.tokens + s.oov_tokens, corpus_tokens);
    EXPECT_LT(s.per_word(), 0.0);

    // A model of the first 299 words: the corpus's 300 are refused without its vocabulary,
    // and mapped by name with it (the last word then out of the model's vocabulary).
    infer::InferModel fewer{"fewer.h5", K, model.B.topRows(299),
                            std::vector<std::string>(model.vocab.begin(), model.vocab.end() - 1), {}};
    test::expect_stage_failed(world, [&] { (void)infer::infer_corpus(world, fewer, input, {}); },
                              {"has 300 words; the model fewer.h5 has 299: give the corpus's vocab to map its words"});
    input.vocab = p.source.vocab;
    const infer::CorpusTopics mapped = infer::infer_corpus(world, fewer, input, {});
    std::int64_t last_word = 0;
    for (std::size_t i = 0; i < p.truth.docs.words.size(); ++i)
        if (p.truth.docs.words[i] == 299) last_word += p.truth.docs.counts[i];
    EXPECT_GE(mapped.summary.oov_tokens, s.oov_tokens + last_word);
    EXPECT_EQ(mapped.summary.tokens + mapped.summary.oov_tokens, corpus_tokens);
}

// jsmf synth --from's library call: the model chosen from the file, a Dirichlet fitted to
// its A, the corpus drawn from its B with the model corpus's size unless given.
TEST(SemiSynthetic, DrawsFromTheModelFile) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const Planted p = plant(world, dir, 5, 4);
    FitOptions options;
    options.topics = {4, 5};
    options.rectify.stop = rectify::StopRule::iterations;
    options.rectify.iterations = 10;
    options.metrics = false;
    const FitResult r = fit(p.source, square_grid(world), options);
    io::Provenance provenance;
    provenance.created = io::now_iso8601();
    io::write_model_file(world, dir.file("m.h5"), r.info, r.models, provenance, r.times, 10);
    if (!world.is_root()) return;
    std::vector<std::string> lines;
    const Report collect = [&](Level, const std::string& line) { lines.push_back(line); };
    synth::SynthOptions o;
    SemiSyntheticOptions from;
    from.topics = 5;
    const synth::SynthCorpus c = semi_synthetic(dir.file("m.h5"), from, o, collect);
    const model::Model& m = r.models[1];
    EXPECT_EQ(o.num_topics, 5);
    EXPECT_EQ(o.num_words, 300);
    EXPECT_EQ(o.num_docs, r.info.stats.num_docs);  // the model corpus's M
    EXPECT_NEAR(o.mean_doc_length, static_cast<double>(r.info.stats.num_tokens) / r.info.stats.num_docs, 1e-12);
    EXPECT_EQ(c.num_docs, o.num_docs);
    EXPECT_EQ(c.vocab, r.info.vocab);
    for (int k = 0; k < 5; ++k) EXPECT_EQ(c.anchors(k, 0), m.anchors[static_cast<std::size_t>(k)]);
    EXPECT_LT((c.B - m.B).cwiseAbs().maxCoeff(), 1e-8);  // B's columns sum to 1 but for rounding
    // A = E[w wᵀ] of Dir(α), α fitted to the model's A (RECOVER-ALPHA).
    const recover::AlphaResult alpha = recover::recover_alpha(m.A);
    const double a0 = alpha.alpha.sum();
    Eigen::MatrixXd expected = alpha.alpha * alpha.alpha.transpose();
    expected.diagonal() += alpha.alpha;
    expected /= a0 * (a0 + 1);
    EXPECT_LT((c.A - expected).cwiseAbs().maxCoeff(), 1e-12);
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines.front().find("RECOVER-ALPHA"), std::string::npos) << lines.front();

    SemiSyntheticOptions first;  // K = 0: the file's first model; sizes given
    first.num_docs = 50;
    first.mean_doc_length = 30;
    synth::SynthOptions o4;
    o4.prior = synth::TopicPrior::logistic_normal;
    const synth::SynthCorpus c4 = semi_synthetic(dir.file("m.h5"), first, o4);
    EXPECT_EQ(o4.num_topics, 4);
    EXPECT_EQ(c4.num_docs, 50);
    EXPECT_EQ(o4.mean_doc_length, 30.0);

    SemiSyntheticOptions missing;
    missing.topics = 7;
    try {
        (void)semi_synthetic(dir.file("m.h5"), missing, o);
        ADD_FAILURE() << "K = 7 was found";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("holds no model with K = 7"), std::string::npos) << e.what();
    }
    synth::SynthOptions grouped;
    grouped.groups = 2;
    EXPECT_THROW((void)semi_synthetic(dir.file("m.h5"), from, grouped), OptionError);
}

// jsmf rectify --resume's library calls: a checkpoint read back continues the run to the
// bit (same grid), a checkpoint of another K or rectifier is refused on every rank; the
// settings that change the arithmetic are compared; the work of a trace.
TEST(Rectify, ResumesFromACheckpointExactly) {
    const mpi::Comm world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const Planted p = plant(world, dir, 5, 6);
    const auto grid = square_grid(world);
    StageTimes times;
    const BuiltCooc built = build_cooc(p.source, grid, times);
    RectifyOptions o;
    o.stop = rectify::StopRule::quality;  // its check (one, at 5: no verdict yet) travels in the checkpoint
    o.check_every = 5;
    o.iterations = 8;
    distmat::DistMatrix straight = distmat::copy(built.C);
    const model::RectificationTrace full = rectify(straight, 5, o);
    ASSERT_EQ(full.iterations, 9);  // over-relaxed AP ends with one plain step
    ASSERT_EQ(full.checks.size(), 1u);

    io::Provenance provenance;
    provenance.created = io::now_iso8601();
    const ProjectionHook write_checkpoint = [&](const rectify::ProjectionState& state,
                                                const rectify::IterateView& current) {
        if (state.iterations_done != 5 && state.iterations_done != 6) return;
        const io::CheckpointRecord record = checkpoint_of(state);
        const model::RectificationTrace so_far = trace_of(Rectifier::ap, 5, state);
        io::write_cooc_file(dir.file(state.iterations_done == 6 ? "ck.h5" : "ck5.h5"), current.matrix(), built.info,
                            provenance, StageTimes{}, 0, &so_far, &record);
    };
    distmat::DistMatrix first = distmat::copy(built.C);
    (void)rectify(first, 5, o, {}, write_checkpoint);

    io::CoocFileInfo info;
    distmat::DistMatrix resumed = io::read_cooc_file(dir.file("ck.h5"), grid, 16, info);
    test::expect_stage_failed(world, [&] { (void)read_resume_state(dir.file("ck.h5"), resumed, 6, Rectifier::ap); },
                              {"ck.h5: the checkpoint has K = 5, not topics 6"});
    test::expect_stage_failed(world, [&] { (void)read_resume_state(dir.file("ck.h5"), resumed, 5, Rectifier::dr); },
                              {"the checkpoint is of rectify ap, not dr"});
    {  // one entry of the iterate changed by one bit: the checksum tells
        distmat::DistMatrix altered = distmat::copy(resumed);
        if (altered.owns(3, 4)) {
            double& x = altered.local()(altered.local_row(3), altered.local_col(4));
            x = std::nextafter(x, 1.0);
        }
        test::expect_stage_failed(world, [&] { (void)read_resume_state(dir.file("ck.h5"), altered, 5, Rectifier::ap); },
                                  {"the checkpoint's checksum does not match its contents"});
    }
    rectify::ProjectionState state = read_resume_state(dir.file("ck.h5"), resumed, 5, Rectifier::ap);
    EXPECT_EQ(state.iterations_done, 6);
    ASSERT_EQ(state.checks.size(), 1u);
    const model::RectificationTrace rest = rectify(resumed, 5, o, {}, {}, &state);
    EXPECT_EQ(rest.iterations, full.iterations);
    ASSERT_EQ(rest.trace.size(), full.trace.size());
    for (std::size_t t = 0; t < full.trace.size(); ++t) EXPECT_EQ(rest.trace[t].change, full.trace[t].change) << t;
    const double differs = mpi::allreduce_max(world, (resumed.local() - straight.local()).cwiseAbs().maxCoeff());
    EXPECT_EQ(differs, 0.0);
    {  // from iteration 5, where the quality rule checked: the check is in the checkpoint
        io::CoocFileInfo info5;
        distmat::DistMatrix at5 = io::read_cooc_file(dir.file("ck5.h5"), grid, 16, info5);
        rectify::ProjectionState state5 = read_resume_state(dir.file("ck5.h5"), at5, 5, Rectifier::ap);
        ASSERT_EQ(state5.checks.size(), 1u);
        const model::RectificationTrace rest5 = rectify(at5, 5, o, {}, {}, &state5);
        EXPECT_EQ(rest5.checks.size(), full.checks.size());
        ASSERT_EQ(rest5.trace.size(), full.trace.size());
        for (std::size_t t = 0; t < full.trace.size(); ++t) EXPECT_EQ(rest5.trace[t].change, full.trace[t].change) << t;
        EXPECT_EQ(mpi::allreduce_max(world, (at5.local() - straight.local()).cwiseAbs().maxCoeff()), 0.0);
    }

    const std::vector<ChangedSetting> changed =
        changed_settings({{"stop", "quality"}, {"corpus", "a.txt"}, {"grid", "1x2"}, {"precision", "double"}},
                         {{"corpus", "b.txt"}, {"grid", "2x2"}, {"stop", "quality"}});
    ASSERT_EQ(changed.size(), 1u);  // corpus does not change the arithmetic; precision is not in the run's
    EXPECT_EQ(changed[0].name, "grid");
    EXPECT_EQ(changed[0].saved, "1x2");
    EXPECT_EQ(changed[0].now, "2x2");
    EXPECT_NE(std::find(resume_settings().begin(), resume_settings().end(), "threads"), resume_settings().end());

    const RectifyWork ap = rectify_work(full, Rectifier::ap, 300, 5);
    double products = 0;
    for (const auto& it : full.trace) products += it.eig_products;
    EXPECT_EQ(ap.iterations, 9);
    EXPECT_EQ(ap.eig_products, products);
    const double nn = 300.0 * 300.0;
    EXPECT_DOUBLE_EQ(ap.flops, products * 2 * nn * 15 + 9 * 2 * nn * 5);  // p = K + 10
    EXPECT_DOUBLE_EQ(rectify_work(full, Rectifier::dr, 300, 5).flops, products * 2 * nn * 15 + 2 * 9 * 2 * nn * 5);
    EXPECT_EQ(rectify_work(full, Rectifier::dc, 300, 5).flops, 0.0);
}

}  // namespace
}  // namespace jsmf::fit
