// SPDX-License-Identifier: MIT
// The planted topics B and correlations A of separable synthetic corpora are recovered
// (cooc -> AP -> anchors -> B, A), better with more documents, by every solver.
#include <gtest/gtest.h>

#include <Eigen/SVD>

#include <algorithm>
#include <limits>
#include <map>

#include "jsmf/anchors/pivoted_qr.hpp"
#include "jsmf/cooc/cooc.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/recover/recover.hpp"
#include "jsmf/rectify/projection.hpp"
#include "jsmf/synth/synth.hpp"
#include "support/kl_transcription.hpp"
#include "test_support.hpp"

namespace jsmf::recover {
namespace {

struct Fit {
    TopicModel model;
    std::vector<Index> anchors;
};

synth::SynthOptions planted(Index docs) {
    synth::SynthOptions o;
    o.num_docs = docs;
    o.num_words = 200;
    o.num_topics = 5;
    o.mean_doc_length = 60;
    o.seed = 3;
    o.word_concentration = 1.0;  // ordinary words shared by topics: anchors identifiable
    o.anchor_mass = 0.03;
    return o;
}

// C of the corpus on the most square grid, rectified by 30 AP iterations (as fit() below).
cooc::CoocResult rectified_cooc(const synth::SynthCorpus& corpus, const synth::SynthOptions& o) {
    cooc::CoocResult built =
        test::build_cooc(distmat::Grid::most_square(mpi::Comm::world()), corpus.docs, o.num_words, 16);
    rectify::ProjectionOptions ap;
    ap.num_topics = o.num_topics;
    ap.max_iterations = 30;
    rectify::alternating_projection(built.C, ap);
    return built;
}

// Progress hooks that save nothing, in rounds of `batch` words a rank (resuming `from`).
RecoverProgress rounds_of(Index batch, const RecoverCheckpoint* from = nullptr) {
    RecoverProgress progress;
    progress.batch = batch;
    progress.resume = from;
    progress.due = [] { return false; };
    progress.save = [](const RecoverCheckpoint&) {};
    return progress;
}

Fit fit(const synth::SynthCorpus& corpus, const synth::SynthOptions& o, Solver solver, double tolerance = 1e-5,
        int max_iterations = 2000) {
    cooc::CoocResult built = rectified_cooc(corpus, o);
    const Eigen::VectorXd p = distmat::row_sums(built.C);
    Fit f;
    f.anchors = anchors::find_anchors(built.C, p, o.num_topics).anchors;
    RecoverOptions options;
    options.solver = solver;
    options.scls.max_iterations = max_iterations;
    options.scls.tolerance = tolerance;
    options.scls.admm_stop = solvers::AdmmStop::gap;  // SolversAgree reasons on the duality gap
    f.model = recover_topics(built.C, p, f.anchors, options);
    return f;
}

// Mean over topics of the L1 distance between recovered and planted columns, matched
// through the anchors (a found anchor is a planted anchor, which names its topic).
double mean_l1(const Fit& f, const synth::SynthCorpus& corpus) {
    std::map<Index, int> topic_of_anchor;
    for (int k = 0; k < corpus.anchors.rows(); ++k) topic_of_anchor[corpus.anchors(k, 0)] = k;
    double total = 0;
    for (std::size_t k = 0; k < f.anchors.size(); ++k) {
        const auto it = topic_of_anchor.find(f.anchors[k]);
        if (it == topic_of_anchor.end()) return 2.0;  // not a planted anchor: worst possible
        total += (f.model.B.col(static_cast<Index>(k)) - corpus.B.col(it->second)).lpNorm<1>();
    }
    return total / static_cast<double>(f.anchors.size());
}

TEST(Recover, PlantedTopicsImproveWithMoreDocuments) {
    const auto small_options = planted(2000), large_options = planted(16000);
    const synth::SynthCorpus small = synth::generate(small_options), large = synth::generate(large_options);
    const Fit small_fit = fit(small, small_options, Solver::active_set);
    const Fit large_fit = fit(large, large_options, Solver::active_set);
    const double small_error = mean_l1(small_fit, small), large_error = mean_l1(large_fit, large);
    if (mpi::Comm::world().is_root())
        std::printf("mean L1(B) error: %.4f at 2000 docs, %.4f at 16000 docs\n", small_error, large_error);
    // Stated bound: with 16000 documents of 60 tokens each topic column is off by less than
    // 0.2 in L1 (a column's L1 ranges over [0, 2]); and 8x the documents must help.
    EXPECT_LT(large_error, 0.2);
    EXPECT_LT(large_error, small_error);
    // Columns are distributions, and the model sums to one.
    for (Index k = 0; k < large_fit.model.B.cols(); ++k) EXPECT_NEAR(large_fit.model.B.col(k).sum(), 1.0, 1e-12);
    EXPECT_GE(large_fit.model.B.minCoeff(), 0.0);
    EXPECT_EQ(large_fit.model.words_converged, large_fit.model.words_solved);
    // A against the empirical second moment of the drawn topic proportions.
    std::map<Index, int> topic_of_anchor;
    for (int k = 0; k < large.anchors.rows(); ++k) topic_of_anchor[large.anchors(k, 0)] = k;
    double a_error = 0;
    for (std::size_t k = 0; k < large_fit.anchors.size(); ++k)
        for (std::size_t l = 0; l < large_fit.anchors.size(); ++l)
            a_error += std::abs(large_fit.model.A(static_cast<Index>(k), static_cast<Index>(l)) -
                                large.A_empirical(topic_of_anchor[large_fit.anchors[k]], topic_of_anchor[large_fit.anchors[l]]));
    if (mpi::Comm::world().is_root()) std::printf("L1(A) error: %.4f (sum of A: %.4f)\n", a_error, large_fit.model.A.sum());
    // Stated bound: A's entries (summing to about 1) are off by less than 0.15 in total.
    EXPECT_LT(a_error, 0.15);
}

TEST(Recover, SolversAgree) {
    const auto o = planted(4000);
    const synth::SynthCorpus corpus = synth::generate(o);
    const Fit exact = fit(corpus, o, Solver::active_set);
    // The duality gap bounds each word's objective, and ‖y − y*‖² <= 2·gap/λ_min(G) by
    // strong convexity; λ_min(G) is small for these probability-vector columns, so at the
    // default 1e-5 solutions may differ noticeably (objective agreement at 1e-5 is unit-
    // tested in scls_test). At a 1e-10 gap the bound is tight enough to compare B itself.
    for (const Solver solver : {Solver::expgrad, Solver::admm}) {
        const Fit other = fit(corpus, o, solver, 1e-10, 100000);
        ASSERT_EQ(other.anchors, exact.anchors);
        EXPECT_EQ(other.model.words_converged, other.model.words_solved);
        for (Index k = 0; k < exact.model.B.cols(); ++k)
            EXPECT_LT((other.model.B.col(k) - exact.model.B.col(k)).lpNorm<1>(), 0.01);
    }
}

TEST(Recover, KlRecoversPlantedTopicsAndEqualsAOneProcessTranscription) {
    // RecoverKL (Arora et al.'s --loss KL) on a planted corpus: the topics are found as well
    // as by least squares, and every word's mixture is the one their loop, transcribed in
    // the test and run on one process over the gathered C, gives: the rows dealt out to the
    // ranks arrive whole, whatever the rank count.
    const auto o = planted(16000);
    const synth::SynthCorpus corpus = synth::generate(o);
    const Fit least_squares = fit(corpus, o, Solver::active_set);
    const Fit by_kl = fit(corpus, o, Solver::kl, 1e-7, 100000);
    ASSERT_EQ(by_kl.anchors, least_squares.anchors);
    EXPECT_EQ(by_kl.model.words_converged, by_kl.model.words_solved);
    EXPECT_GT(by_kl.model.words_solved, 150);
    const double kl_error = mean_l1(by_kl, corpus), ls_error = mean_l1(least_squares, corpus);
    if (mpi::Comm::world().is_root()) std::printf("mean L1(B) error: kl %.4f, active set %.4f\n", kl_error, ls_error);
    EXPECT_LT(kl_error, 0.2);  // the bound PlantedTopicsImproveWithMoreDocuments states for least squares
    EXPECT_LT(kl_error, ls_error + 0.01);  // and about least squares' own error
    for (Index k = 0; k < by_kl.model.B.cols(); ++k) EXPECT_NEAR(by_kl.model.B.col(k).sum(), 1.0, 1e-12);

    // The one-process transcription, on C as the fit rectified it.
    const auto world = mpi::Comm::world();
    cooc::CoocResult built = rectified_cooc(corpus, o);
    const Eigen::MatrixXd C = distmat::gather_all(built.C);
    const Eigen::VectorXd p = C.rowwise().sum();
    const int K = o.num_topics;
    Eigen::MatrixXd anchor_rows(K, C.cols());
    for (int k = 0; k < K; ++k) {
        const Index s = by_kl.anchors[static_cast<std::size_t>(k)];
        anchor_rows.row(k) = C.row(s) / p(s);
    }
    std::vector<test::KlTranscribed> theirs(static_cast<std::size_t>(C.rows()));
    for (Index i = 0; i < C.rows(); ++i)
        if (p(i) > 0) theirs[static_cast<std::size_t>(i)] = test::arora_kl_solve(C.row(i).transpose() / p(i), anchor_rows, 1e-7, 100000);
    auto compare = [&](const Eigen::MatrixXd& B_breve, const char* what) {
        int equal = 0, compared = 0;
        for (Index i = 0; i < C.rows(); ++i) {
            if (std::find(by_kl.anchors.begin(), by_kl.anchors.end(), i) != by_kl.anchors.end() || !(p(i) > 0)) continue;
            const Eigen::VectorXd ours = B_breve.col(i), alpha = theirs[static_cast<std::size_t>(i)].alpha;
            ++compared;
            // The rows of a rectified C̄ sum to 1, so their loop and jsmf's see the same rows;
            // a stopping test at rounding level may end one a step apart (scls_test).
            if ((ours - alpha).cwiseAbs().maxCoeff() < 1e-10) ++equal;
            else EXPECT_LT((ours - alpha).lpNorm<1>(), 1e-3) << what << ": word " << i;
        }
        if (world.is_root())
            std::printf("RecoverKL (%s): %d of %d words as the one-process transcription to 1e-10\n", what, equal, compared);
        EXPECT_GE(equal, compared * 95 / 100) << what;
    };
    compare(by_kl.model.B_breve, "defaults");
    // Batches of 3 words and one row per rank per exchange: many exchanges, many batches
    // (and threads, where there are several), the same mixtures.
    RecoverOptions small;
    small.solver = Solver::kl;
    small.scls.tolerance = 1e-7;
    small.scls.max_iterations = 100000;
    small.kl_batch = 3;
    small.kl_chunk_bytes = 1;
    compare(recover_topics(built.C, p, by_kl.anchors, small).B_breve, "batches of 3, a row at a time");
}

TEST(Recover, KlResumesFromASavedRoundAsIfUninterrupted) {
    // Rounds of 7 words a rank: a save after the second round, then a run resumed from it
    // ends with the uninterrupted run's B̆ (rounds of 7 too, as fit's are always of its
    // recover_batch), bit for bit: the words solved in lockstep are the same.
    const auto o = planted(2000);
    const synth::SynthCorpus corpus = synth::generate(o);
    const auto world = mpi::Comm::world();
    cooc::CoocResult built = test::build_cooc(distmat::Grid::most_square(world), corpus.docs, o.num_words, 16);
    const Eigen::VectorXd p = distmat::row_sums(built.C);
    const std::vector<Index> S = anchors::find_anchors(built.C, p, o.num_topics).anchors;
    RecoverOptions options;
    options.solver = Solver::kl;
    const RecoverProgress uninterrupted = rounds_of(7);
    const TopicModel whole = recover_topics(built.C, p, S, options, &uninterrupted);
    int rounds_seen = 0;
    RecoverCheckpoint saved;
    RecoverProgress progress;
    progress.batch = 7;
    progress.due = [&] { return ++rounds_seen == 2; };
    progress.save = [&](const RecoverCheckpoint& state) { saved = state; };
    const TopicModel first = recover_topics(built.C, p, S, options, &progress);
    EXPECT_EQ(first.B_breve, whole.B_breve);
    ASSERT_EQ(saved.words_done, 2 * 7 * world.size());
    const RecoverProgress resumed = rounds_of(7, &saved);
    const TopicModel again = recover_topics(built.C, p, S, options, &resumed);
    EXPECT_EQ(again.B_breve, whole.B_breve);
    EXPECT_EQ(again.words_solved, whole.words_solved);
    EXPECT_EQ(again.words_converged, whole.words_converged);
}

TEST(Recover, ActiveSetOnQrEqualsAOneProcessSolveAtAnyRankCount) {
    // The distributed path (QR on rank 0, broadcast; b_i from one distributed product with Q)
    // against a one-process solve of every word on the gathered C by the other exact
    // method, the active set on (G, f). Both are exact up to rounding times cond(G) here.
    const auto o = planted(2000);
    const synth::SynthCorpus corpus = synth::generate(o);
    const auto world = mpi::Comm::world();
    cooc::CoocResult built = test::build_cooc(distmat::Grid::most_square(world), corpus.docs, o.num_words, 16);
    const Eigen::VectorXd p = distmat::row_sums(built.C);
    const std::vector<Index> S = anchors::find_anchors(built.C, p, o.num_topics).anchors;
    const TopicModel model = recover_topics(built.C, p, S, RecoverOptions{});
    EXPECT_EQ(model.words_converged, model.words_solved);
    const Eigen::MatrixXd C = distmat::gather_all(built.C);
    const int K = o.num_topics;
    Eigen::MatrixXd U(C.rows(), K);
    for (int k = 0; k < K; ++k) U.col(k) = C.row(S[static_cast<std::size_t>(k)]).transpose() / p(S[static_cast<std::size_t>(k)]);
    const Eigen::MatrixXd G = U.transpose() * U;
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(G);
    const double cond_G = svd.singularValues()(0) / svd.singularValues()(K - 1);
    double worst = 0;
    for (Index i = 0; i < C.rows(); ++i) {
        if (std::find(S.begin(), S.end(), i) != S.end() || !(p(i) > 0)) continue;
        const Eigen::VectorXd f = U.transpose() * C.row(i).transpose() / p(i);
        worst = std::max(worst, (solvers::solve_active_set_gram(G, f).y - model.B_breve.col(i)).cwiseAbs().maxCoeff());
    }
    if (world.is_root()) std::printf("cond(G) = %.3g; max |B_breve - one-process| = %.2e\n", cond_G, worst);
    // Rounding in both solvers, amplified by cond(G) at most: 64·eps·cond(G).
    EXPECT_LT(worst, 64 * std::numeric_limits<double>::epsilon() * cond_G);

    // A word stopped by the cap is reported, through the distributed count too.
    RecoverOptions capped;
    capped.scls.active_set_max_iterations = 1;
    const TopicModel cut = recover_topics(built.C, p, S, capped);
    EXPECT_EQ(cut.words_solved, model.words_solved);
    EXPECT_LT(cut.words_converged, cut.words_solved);
}

TEST(Recover, LeastSquaresAOfAnExactFactorizationIsA) {
    // C = B A Bᵀ exactly, with a full-column-rank B and a symmetric A: the least-squares A
    // must be A itself, for every grid shape and a block size that does not divide N.
    const auto world = mpi::Comm::world();
    const auto o = planted(100);
    const synth::SynthCorpus truth = synth::generate(o);
    const Eigen::MatrixXd dense = truth.B * truth.A * truth.B.transpose();
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        distmat::DistMatrix C(distmat::Grid::create(world, pr, pc), dense.rows(), dense.cols(), 7);
        for (Index jl = 0; jl < C.local_cols(); ++jl)
            for (Index il = 0; il < C.local_rows(); ++il) C.local()(il, jl) = dense(C.global_row(il), C.global_col(jl));
        const Eigen::MatrixXd A = recover_a_least_squares(C, truth.B);
        // Rounding only, amplified by cond(BᵀB): measured about 4e-15 of max|A| at 1–4 ranks.
        EXPECT_LT((A - truth.A).cwiseAbs().maxCoeff(), 1e-12 * truth.A.cwiseAbs().maxCoeff()) << pr << "x" << pc;
        EXPECT_EQ(A, A.transpose());
    }
}

TEST(Recover, LeastSquaresAOnAPlantedCorpusIsClose) {
    const auto o = planted(16000);
    const synth::SynthCorpus corpus = synth::generate(o);
    const auto world = mpi::Comm::world();
    cooc::CoocResult built = test::build_cooc(distmat::Grid::most_square(world), corpus.docs, o.num_words, 16);
    const Eigen::MatrixXd A = recover_a_least_squares(built.C, corpus.B);
    const double error = (A - corpus.A_empirical).cwiseAbs().sum();
    if (world.is_root()) std::printf("least-squares A from the true B: L1 error %.4f\n", error);
    // Stated bound: from the unrectified C of 16000 documents, within 0.05 in total.
    EXPECT_LT(error, 0.05);
}

}  // namespace
}  // namespace jsmf::recover
