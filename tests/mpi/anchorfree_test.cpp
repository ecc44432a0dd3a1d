// SPDX-License-Identifier: MIT
// AnchorFree-LP and -PDS recover planted topics without anchor words (the paper's synthetic
// tests 1 and 2 at small scale) where the anchor finders cannot, agree with the
// unscreened LP and across rank counts, and stop with one message on a P without a root.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>

#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/anchorfree/synthetic.hpp"
#include "jsmf/anchors/finder.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/recover/recover.hpp"
#include "test_support.hpp"

namespace jsmf::anchorfree {
namespace {

distmat::DistMatrix distribute(const mpi::Comm& world, const Eigen::MatrixXd& P, int pr = 0, int pc = 0) {
    const auto grid = pr > 0 ? distmat::Grid::create(world, pr, pc) : distmat::Grid::most_square(world);
    distmat::DistMatrix D(grid, P.rows(), P.cols(), 16);
    test::fill(D, P);
    return D;
}

SquareRootFactor root_of(const distmat::DistMatrix& P, int F) {
    distmat::EigOptions eig;
    eig.tolerance = 1e-12;
    return square_root_factor(P, F, eig);
}

RecoveryScore run_lp(const distmat::DistMatrix& P, const PlantedFactors& truth, const LpOptions& options = {},
                     LpReport* report = nullptr) {
    const int F = static_cast<int>(truth.C.cols());
    const SquareRootFactor root = root_of(P, F);
    const Eigen::MatrixXd M = anchorfree_lp(P.grid().borrow_comm(), root.B, options, report);
    const AnchorFreeResult r = finish(P, root.B, M);
    return score_recovery(r.C, r.E, truth.C, truth.E);
}

RecoveryScore run_pds(const distmat::DistMatrix& P, const PlantedFactors& truth, PdsReport* report = nullptr) {
    const int F = static_cast<int>(truth.C.cols());
    const SquareRootFactor root = root_of(P, F);
    const Eigen::MatrixXd M = anchorfree_pds(P.grid().borrow_comm(), root.B, PdsOptions{}, report);
    const AnchorFreeResult r = finish(P, root.B, M);
    return score_recovery(r.C, r.E, truth.C, truth.E);
}

// The anchor route the paper compares with: anchors on the row-normalized P (by default
// jsmf's pivoted QR, which is SPA), B by RecoverL2's simplex least squares and Bayes'
// rule, E = D⁻¹ P_SS D⁻¹.
RecoveryScore run_anchor_words(const distmat::DistMatrix& P, const PlantedFactors& truth,
                               anchors::Finder finder = anchors::Finder::qr) {
    const int F = static_cast<int>(truth.C.cols());
    const Eigen::VectorXd p = distmat::row_sums(P);
    const anchors::AnchorResult found = anchors::find_anchors_by(finder, P, p, F, {1000, 1, true});
    const recover::TopicModel model = recover::recover_topics(P, p, found.anchors, recover::RecoverOptions{});
    return score_recovery(model.B, model.A, truth.C, truth.E);
}

TEST(AnchorFree, PaperTest1WithoutAnchorsLpAndPdsRecoverAnchorsDoNot) {
    const auto world = mpi::Comm::world();
    for (const int F : {5, 10}) {
        for (Seed seed = 1; seed <= 2; ++seed) {
            const PlantedFactors truth = paper_synthetic(1000, F, 0, 100 * F + seed);
            const distmat::DistMatrix P = distribute(world, truth.P);
            const RecoveryScore lp = run_lp(P, truth);
            EXPECT_TRUE(lp.success()) << "LP F=" << F << " seed " << seed << ": " << lp.C_error << " " << lp.E_error;
            PdsReport pds_report;
            const RecoveryScore pds = run_pds(P, truth, &pds_report);
            EXPECT_TRUE(pds.success()) << "PDS F=" << F << " seed " << seed << ": " << pds.C_error << " "
                                       << pds.E_error << " outer " << pds_report.outer << " violation "
                                       << pds_report.violation;
            EXPECT_TRUE(pds_report.converged) << "PDS F=" << F << " seed " << seed << " within its default limits";
            for (const auto finder : {anchors::Finder::qr, anchors::Finder::fastanchor, anchors::Finder::snpa,
                                      anchors::Finder::xray}) {
                const RecoveryScore score = run_anchor_words(P, truth, finder);
                const std::string name = name_of(finder);
                if (F >= 10) EXPECT_FALSE(score.success()) << name << " F=" << F << " seed " << seed;
                else EXPECT_TRUE(score.success()) << name << " F=5 (the paper: 100 %) " << score.C_error;
            }
        }
    }
}

TEST(AnchorFree, PaperTest2FifteenAnchoredTopics) {
    const auto world = mpi::Comm::world();
    for (const int F : {10, 20}) {
        const PlantedFactors truth = paper_synthetic(1000, F, 15, 7 * F);
        const distmat::DistMatrix P = distribute(world, truth.P);
        const RecoveryScore lp = run_lp(P, truth);
        EXPECT_TRUE(lp.success()) << "LP F=" << F << ": " << lp.C_error << " " << lp.E_error;
        PdsReport pds_report;
        const RecoveryScore pds = run_pds(P, truth, &pds_report);
        EXPECT_TRUE(pds.success()) << "PDS F=" << F << ": " << pds.C_error << " " << pds.E_error;
        EXPECT_TRUE(pds_report.converged) << "PDS F=" << F << " within its default limits";
        const RecoveryScore anchored = run_anchor_words(P, truth);
        // All topics anchored at F = 10 (the anchor route is exact), 15 of 20 at F = 20.
        EXPECT_EQ(anchored.success(), F <= 15) << "F=" << F << ": " << anchored.C_error << " " << anchored.E_error;
    }
}

TEST(AnchorFree, ScreenedLpEqualsTheFullLpAtEveryLayout) {
    const auto world = mpi::Comm::world();
    const PlantedFactors truth = paper_synthetic(400, 8, 0, 31);
    LpOptions full;
    full.screening = false;
    const distmat::DistMatrix P0 = distribute(world, truth.P);
    const SquareRootFactor root = root_of(P0, 8);
    LpReport full_report, screened_report;
    const Eigen::MatrixXd M_full = anchorfree_lp(world, root.B, full, &full_report);
    const Eigen::MatrixXd M_screened = anchorfree_lp(world, root.B, LpOptions{}, &screened_report);
    EXPECT_TRUE(full_report.converged);
    EXPECT_TRUE(screened_report.converged);
    EXPECT_LT(screened_report.working_rows, 400) << "screening kept every row";
    EXPECT_LE((root.B * M_full - root.B * M_screened).cwiseAbs().maxCoeff(), 1e-9);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const distmat::DistMatrix P = distribute(world, truth.P, pr, pc);
        const RecoveryScore score = run_lp(P, truth);
        EXPECT_TRUE(score.success()) << pr << "x" << pc << ": " << score.C_error;
    }
}

TEST(AnchorFree, PdsRecoversAtEveryLayoutAndItsRowSplitMatchesOneRank) {
    const auto world = mpi::Comm::world();
    const PlantedFactors truth = paper_synthetic(400, 8, 0, 41);
    const distmat::DistMatrix P0 = distribute(world, truth.P);
    const SquareRootFactor root = root_of(P0, 8);
    // The same B̃ on every rank: PDS row-split over all ranks against PDS on one rank alone.
    const Eigen::MatrixXd M_all = anchorfree_pds(world, root.B, PdsOptions{});
    const mpi::Comm self(MPI_COMM_SELF);
    const Eigen::MatrixXd M_one = anchorfree_pds(self, root.B, PdsOptions{});
    EXPECT_LE((root.B * M_all - root.B * M_one).cwiseAbs().maxCoeff(), 1e-9);
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const distmat::DistMatrix P = distribute(world, truth.P, pr, pc);
        PdsReport report;
        const RecoveryScore score = run_pds(P, truth, &report);
        EXPECT_TRUE(report.converged) << pr << "x" << pc;
        EXPECT_TRUE(score.success()) << pr << "x" << pc << ": " << score.C_error << " " << score.E_error;
    }
}

TEST(AnchorFree, TheDeterminantGrowsEverySweepAndTheColumnsAreFeasible) {
    const auto world = mpi::Comm::world();
    const PlantedFactors truth = paper_synthetic(300, 6, 0, 5);
    const distmat::DistMatrix P = distribute(world, truth.P);
    const SquareRootFactor root = root_of(P, 6);
    LpReport report;
    const Eigen::MatrixXd M = anchorfree_lp(world, root.B, LpOptions{}, &report);
    ASSERT_GE(report.log_det.size(), 2u);
    for (std::size_t s = 1; s < report.log_det.size(); ++s) EXPECT_GE(report.log_det[s], report.log_det[s - 1] - 1e-10 * std::abs(report.log_det[s - 1]));
    const AnchorFreeResult r = finish(P, root.B, M);
    EXPECT_GE(r.min_C, -1e-10);
    EXPECT_LE((r.C.colwise().sum().array() - 1).abs().maxCoeff(), 1e-9);
    // det C*ᵀC* is maximal at the truth: M's determinant equals the truth's own M.
    const Eigen::MatrixXd M_truth = root.B.colPivHouseholderQr().solve(truth.C);
    EXPECT_NEAR(std::abs(M.determinant()), std::abs(M_truth.determinant()), 1e-8 * std::abs(M_truth.determinant()));
}

// The by-rows LP and PDS (the compressed pipeline's: each rank its own rows of B̃, none
// holding N × F) on an uneven split give the replicated one-rank solution; finish_square_root
// gives finish's C* and E* for P = B̃B̃ᵀ; topics_of by rows gives the one-rank topics;
// a layout whose blocks are not contiguous in rank order is refused on every rank.
TEST(AnchorFree, ByRowsEqualsOneRankOnAnUnevenSplit) {
    const auto world = mpi::Comm::world();
    const mpi::Comm self(MPI_COMM_SELF);
    const PlantedFactors truth = paper_synthetic(400, 8, 0, 53);
    const SquareRootFactor root = root_of(distribute(world, truth.P), 8);
    const Index N = root.B.rows();
    // Rank r of P holds a block of size proportional to r + 1 (rank 0 the smallest).
    const int P = world.size(), r = world.rank();
    const auto cut = [&](int k) { return N * (k * (k + 1) / 2) / (P * (P + 1) / 2); };
    const Index first = cut(r), rows = cut(r + 1) - first;
    const Eigen::MatrixXd mine = root.B.middleRows(first, rows);

    const Eigen::MatrixXd M_one = anchorfree_lp(self, root.B, LpOptions{});
    const Eigen::MatrixXd M_rows = anchorfree_lp(world, mine, first, N, LpOptions{});
    EXPECT_LE((root.B * M_rows - root.B * M_one).cwiseAbs().maxCoeff(), 1e-9);
    const Eigen::MatrixXd M_pds_one = anchorfree_pds(self, root.B, PdsOptions{});
    const Eigen::MatrixXd M_pds_rows = anchorfree_pds(world, mine, first, N, PdsOptions{});
    EXPECT_LE((root.B * M_pds_rows - root.B * M_pds_one).cwiseAbs().maxCoeff(), 1e-9);

    // finish for P = B̃B̃ᵀ formed (one distributed product) against K × K products by rows.
    const distmat::DistMatrix BBt = distribute(world, root.B * root.B.transpose());
    const AnchorFreeResult whole = finish(BBt, root.B, M_one);
    const AnchorFreeResult by_rows = finish_square_root(world, mine, M_one);
    EXPECT_LE((by_rows.C - whole.C.middleRows(first, rows)).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LE((by_rows.E - whole.E).cwiseAbs().maxCoeff(), 1e-9 * whole.E.cwiseAbs().maxCoeff());
    // E* = M⁻¹M⁻ᵀ when P is B̃B̃ᵀ itself.
    const Eigen::MatrixXd inverse = M_one.inverse();
    EXPECT_LE((by_rows.E - inverse * inverse.transpose()).cwiseAbs().maxCoeff(), 1e-8 * whole.E.cwiseAbs().maxCoeff());
    EXPECT_NEAR(by_rows.min_C, whole.min_C, 1e-12);

    // The model's topics: by rows against one rank on the whole C*.
    std::vector<bool> occurs(static_cast<std::size_t>(N), true);
    occurs[3] = false;  // a word that never occurs never represents a topic
    const AnchorFreeTopics one = topics_of(self, whole.C, 0, whole.E, occurs);
    const AnchorFreeTopics rows_topics = topics_of(
        world, by_rows.C, first, by_rows.E,
        std::vector<bool>(occurs.begin() + first, occurs.begin() + first + rows));
    EXPECT_EQ(rows_topics.representatives, one.representatives);
    EXPECT_EQ(std::count(one.representatives.begin(), one.representatives.end(), Index{3}), 0);
    EXPECT_LE((rows_topics.B - one.B.middleRows(first, rows)).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LE((rows_topics.B_breve - one.B_breve.middleCols(first, rows)).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LE((rows_topics.A - one.A).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_EQ(rows_topics.a_is_distribution, one.a_is_distribution);
    EXPECT_LE((rows_topics.representative_weight - one.representative_weight).cwiseAbs().maxCoeff(), 1e-12);
    // Each topic's representative is its planted anchor-free topic's best word: distinct.
    std::vector<Index> sorted = one.representatives;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end());

    if (P > 1) {  // rank order broken: the last rank's block claims to start at 0
        const Index bad_first = r == P - 1 ? 0 : first;
        test::expect_stage_failed(world, [&] { (void)anchorfree_lp(world, mine, bad_first, N, LpOptions{}); },
                                  {"not contiguous blocks"});
    }
}

TEST(AnchorFree, PWithTooFewPositiveEigenvaluesHasNoSquareRootAndStopsEveryRank) {
    const auto world = mpi::Comm::world();
    Eigen::MatrixXd Q = Eigen::MatrixXd::Zero(30, 30);
    Q.topLeftCorner(2, 2) << 0.5, 0.1, 0.1, 0.3;  // rank 2: two positive eigenvalues
    const distmat::DistMatrix P = distribute(world, Q);
    test::expect_stage_failed(world, [&] { root_of(P, 4); }, {"positive eigenvalues", "rectify"});
}

}  // namespace
}  // namespace jsmf::anchorfree
