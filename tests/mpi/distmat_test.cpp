// SPDX-License-Identifier: MIT
// The distributed-matrix core at 1-4 ranks: grids, index maps, routing, reductions.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "jsmf/core/memory.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/core/traffic.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/distmat/route.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/distmat/blas.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "test_support.hpp"

namespace jsmf::distmat {
namespace {

TEST(Grid, MostSquareShapes) {
    int r = 0, c = 0;
    most_square_shape(1, r, c);
    EXPECT_EQ(std::make_pair(r, c), std::make_pair(1, 1));
    most_square_shape(2, r, c);
    EXPECT_EQ(std::make_pair(r, c), std::make_pair(1, 2));
    most_square_shape(4, r, c);
    EXPECT_EQ(std::make_pair(r, c), std::make_pair(2, 2));
    most_square_shape(6, r, c);
    EXPECT_EQ(std::make_pair(r, c), std::make_pair(2, 3));
    most_square_shape(7, r, c);
    EXPECT_EQ(std::make_pair(r, c), std::make_pair(1, 7));
    const auto world = mpi::Comm::world();
    const auto grid = Grid::most_square(world);
    EXPECT_EQ(grid->rows() * grid->cols(), world.size());
    EXPECT_LE(grid->rows(), grid->cols());
    EXPECT_EQ(grid->rank_of(grid->my_row(), grid->my_col()), world.rank());
}

// A long, thin default grid is said, with the rank counts nearby that lay C out squarer.
TEST(Grid, LongGridsAreWarnedAbout) {
    for (const int p : {1, 2, 3, 4, 6, 8, 9, 12, 16, 24}) EXPECT_EQ(long_grid_warning(p), "") << p;
    EXPECT_NE(long_grid_warning(5).find("5 ranks lay C out on a 1x5 grid"), std::string::npos);
    EXPECT_NE(long_grid_warning(5).find("4 or 6 ranks"), std::string::npos);
    EXPECT_NE(long_grid_warning(7).find("6 or 8 ranks"), std::string::npos);
    EXPECT_NE(long_grid_warning(22).find("2x11"), std::string::npos);  // not only primes
    EXPECT_NE(long_grid_warning(22).find("20 or 24 ranks"), std::string::npos);
}

TEST(Grid, WrongShapeIsAnInputError) {
    const auto world = mpi::Comm::world();
    EXPECT_THROW(Grid::create(world, world.size() + 1, 1), InputError);
}

// 32-bit ScaLAPACK and BLAS index each rank's local array: a matrix whose largest local
// block passes 2^31 - 1 elements is refused on every rank, with the rank count that fits,
// before anything is allocated (100,000^2 on 4 ranks: 2.5e9 elements on process (0, 0)).
TEST(DistMatrix, LocalBlockPast32BitIndexingIsRefusedOnEveryRank) {
    const auto world = mpi::Comm::world();
    const auto grid = Grid::most_square(world);
    test::expect_stage_failed(world, [&] { DistMatrix C(grid, 100000, 100000, 64, 64); },
                              {"100000 x 100000 matrix", "2^31 - 1", "use at least 5 ranks"});
}

// Every global entry is owned by exactly one rank, and the maps invert each other.
TEST(DistMatrix, IndexMapsPartitionTheMatrix) {
    const auto world = mpi::Comm::world();
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const auto grid = Grid::create(world, pr, pc);
        for (const auto& [rows, cols, mb, nb] : std::vector<std::array<int, 4>>{{13, 17, 3, 5}, {1, 1, 1, 1}, {64, 40, 64, 7}, {9, 9, 2, 2}}) {
            DistMatrix A(grid, rows, cols, mb, nb);
            // Fill with the global coordinates; gather; every entry must be there once.
            for (Index jl = 0; jl < A.local_cols(); ++jl)
                for (Index il = 0; il < A.local_rows(); ++il) {
                    const Index i = A.global_row(il), j = A.global_col(jl);
                    ASSERT_TRUE(A.owns(i, j));
                    ASSERT_EQ(A.local_row(i), il);
                    ASSERT_EQ(A.local_col(j), jl);
                    A.local()(il, jl) = static_cast<double>(i * 1000 + j);
                }
            std::int64_t owned = A.local_rows() * A.local_cols();
            owned = mpi::allreduce_sum(world, owned);
            EXPECT_EQ(owned, Index{rows} * cols);
            const Eigen::MatrixXd full = gather_all(A);
            for (int i = 0; i < rows; ++i)
                for (int j = 0; j < cols; ++j) ASSERT_EQ(full(i, j), i * 1000.0 + j) << pr << "x" << pc;
        }
    }
}

// Random (i, j, v) contributions from every rank, routed with tiny and large buffers,
// equal a serial sum of the same contributions.
TEST(ContributionRouter, SumsAtOwnersForAnyBufferSize) {
    const auto world = mpi::Comm::world();
    const int n = 23;
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const auto grid = Grid::create(world, pr, pc);
        for (const std::size_t buffer : {std::size_t{1}, std::size_t{200}, std::size_t{1} << 20}) {
            DistMatrix A(grid, n, n, 4, 3);
            Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(n, n);
            ContributionRouter router(A, buffer);
            std::mt19937_64 engine(42);  // same stream everywhere: each rank keeps its share
            std::uniform_int_distribution<int> index(0, n - 1);
            std::uniform_real_distribution<double> value(-1, 1);
            const int total = 3000;
            int next = 0;
            auto draw = [&](int& i, int& j, double& v) {
                i = index(engine);
                j = index(engine);
                v = value(engine);
                expected(i, j) += v;
                return next++ % world.size() == world.rank();
            };
            for (;;) {
                while (next < total && !router.full()) {
                    int i, j;
                    double v;
                    if (draw(i, j, v)) router.add(i, j, v);
                }
                if (router.exchange(next >= total, false).all_done) break;
            }
            // Sums of up to ~20 terms of size 1 in another order: a few ulps.
            EXPECT_LE((gather_all(A) - expected).cwiseAbs().maxCoeff(), 64 * std::numeric_limits<double>::epsilon())
                << pr << "x" << pc << " buffer " << buffer;
            if (buffer == 1) {
                EXPECT_GT(router.rounds(), 100u);  // the tiny buffer really forced many rounds
            }
        }
    }
}

TEST(ContributionRouter, AFailedRankStopsEveryRankAtTheNextRound) {
    const auto world = mpi::Comm::world();
    const auto grid = Grid::most_square(world);
    DistMatrix A(grid, 8, 8, 2);
    ContributionRouter router(A, 1);
    const bool i_fail = world.rank() == world.size() - 1;
    int rounds = 0;
    for (;;) {
        ++rounds;
        router.add(0, 0, 1.0);
        const RoundStatus status = router.exchange(false, i_fail && rounds == 3);
        if (status.any_failed) break;
        ASSERT_LT(rounds, 10) << "ranks did not learn of the failure";
    }
    EXPECT_EQ(rounds, 3);
}

TEST(Agree, DifferingCollectiveArgumentsAreCaughtOnEveryRank) {
    const auto world = mpi::Comm::world();
    EXPECT_NO_THROW(mpi::require_same_on_all_ranks(world, {3, 7}, "same"));
    if (world.size() > 1) {
        test::expect_stage_failed(world, [&] { mpi::require_same_on_all_ranks(world, {3, world.rank()}, "differ"); },
                                  {"collective arguments differ across ranks"}, exit_code::internal);
    }
}

TEST(Agree, StagePeaksBecomeTheLargestRanks) {
    const auto world = mpi::Comm::world();
    StageTimes times;
    times.add("cooc", 1.0, 1000 + world.rank());
    times.add("rectify", 2.0, 5000 - world.rank());
    mpi::take_largest_stage_peaks(world, times);
    EXPECT_EQ(times.peak_bytes(), (std::vector<std::int64_t>{1000 + world.size() - 1, 5000}));
    EXPECT_EQ(times.entries()[1].second, 2.0);  // the seconds stay each rank's own
    if (world.size() > 1) {  // ranks that timed different stages: caught, not a hang
        if (world.is_root()) times.add("extra", 1.0, 1);
        test::expect_stage_failed(world, [&] { mpi::take_largest_stage_peaks(world, times); },
                                  {"collective arguments differ across ranks", "the timed stages"}, exit_code::internal);
    }
}

TEST(Memory, EachStageHasItsOwnPeak) {
    const std::int64_t mib = 1 << 20;
    take_stage_peak_rss_bytes();  // a new interval starts here
    {
        std::vector<char> big(256 * mib);
        // resident, not just reserved: volatile stores, which no optimizer may drop (clang at
        // -O1 dropped the plain ones, and the allocation with them, in the sanitized build)
        volatile char* pages = big.data();
        for (std::size_t i = 0; i < big.size(); i += 4096) pages[i] = 1;
        const std::int64_t with_big = take_stage_peak_rss_bytes();
        EXPECT_GE(with_big, 256 * mib);
    }
    // The 256 MiB are gone: the stage after the one that freed them (and began with them)
    // has its own peak (the kernel's mark was reset), while the process's peak counts them.
    take_stage_peak_rss_bytes();
    const std::int64_t after = take_stage_peak_rss_bytes();
    EXPECT_LT(after + 200 * mib, peak_rss_bytes());
    EXPECT_GE(peak_rss_bytes(), 256 * mib);
    StageTimes times;
    times.add("small", 0.1);
    EXPECT_LT(times.peak_bytes().front() + 200 * mib, peak_rss_bytes());
}

TEST(Ops, SumsProductsAndSymmetryMatchDense) {
    const auto world = mpi::Comm::world();
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const auto grid = Grid::create(world, pr, pc);
        const int n = 19;
        DistMatrix A(grid, n, n, 3, 4);
        std::mt19937_64 engine(7);
        std::uniform_real_distribution<double> value(0, 1);
        Eigen::MatrixXd dense(n, n);
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) dense(i, j) = value(engine);
        for (Index jl = 0; jl < A.local_cols(); ++jl)
            for (Index il = 0; il < A.local_rows(); ++il) A.local()(il, jl) = dense(A.global_row(il), A.global_col(jl));
        const double eps = std::numeric_limits<double>::epsilon();
        EXPECT_NEAR(sum(A), dense.sum(), n * n * eps);
        EXPECT_EQ(min_entry(A), dense.minCoeff());
        EXPECT_LE((row_sums(A) - dense.rowwise().sum()).cwiseAbs().maxCoeff(), n * eps);
        Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(n, -1, 1);
        EXPECT_LE((multiply(A, x) - dense * x).cwiseAbs().maxCoeff(), n * eps);
        EXPECT_LE((multiply_transposed(A, x) - dense.transpose() * x).cwiseAbs().maxCoeff(), n * eps);
        EXPECT_GT(asymmetry(A), 1e-3);  // a random matrix is far from symmetric
        const Eigen::MatrixXd symmetric = dense + dense.transpose();
        for (Index jl = 0; jl < A.local_cols(); ++jl)
            for (Index il = 0; il < A.local_rows(); ++il) A.local()(il, jl) = symmetric(A.global_row(il), A.global_col(jl));
        EXPECT_LE(asymmetry(A), n * eps);
    }
}

TEST(Ops, DealRowsGivesEachRankItsRowsWhole) {
    // Rank r receives the rows i ≡ r (mod P) of the range, exactly (entries are moved, not
    // summed), for every grid shape, blocks that do not divide the sizes, and ranges that
    // start anywhere, are empty, or are shorter than the rank count.
    const auto world = mpi::Comm::world();
    for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
        const auto grid = Grid::create(world, pr, pc);
        const Index rows = 23, cols = 17;
        DistMatrix A(grid, rows, cols, 3, 4);
        Eigen::MatrixXd dense(rows, cols);
        for (Index j = 0; j < cols; ++j)
            for (Index i = 0; i < rows; ++i) dense(i, j) = static_cast<double>(i * 100 + j) + 0.25;
        for (Index jl = 0; jl < A.local_cols(); ++jl)
            for (Index il = 0; il < A.local_rows(); ++il) A.local()(il, jl) = dense(A.global_row(il), A.global_col(jl));
        for (const auto& [first, count] : std::vector<std::pair<Index, Index>>{{0, 23}, {5, 11}, {22, 1}, {7, 0}, {3, 2}}) {
            const Eigen::MatrixXd mine = deal_rows(A, first, count);
            std::vector<Index> expected;
            for (Index i = first; i < first + count; ++i)
                if (i % world.size() == world.rank()) expected.push_back(i);
            ASSERT_EQ(mine.rows(), cols);
            ASSERT_EQ(mine.cols(), static_cast<Index>(expected.size())) << "first " << first << " count " << count;
            for (std::size_t m = 0; m < expected.size(); ++m)
                EXPECT_EQ(mine.col(static_cast<Index>(m)), dense.row(expected[m]).transpose()) << "row " << expected[m];
        }
    }
}

// A tall block with singular values from 1 down to 1/κ (Householder-exact orthonormal
// factors), split over the ranks by rows.
Eigen::MatrixXd tall_block_with_condition(Index n, Index p, double kappa, Seed seed) {
    const Eigen::MatrixXd U = thin_qr(random_rows(0, n, p, seed)).Q;
    const Eigen::MatrixXd V = thin_qr(random_rows(0, p, p, seed + 1)).Q;
    Eigen::VectorXd sigma(p);
    for (Index k = 0; k < p; ++k) sigma(k) = std::pow(kappa, -static_cast<double>(k) / static_cast<double>(p - 1));
    return U * sigma.asDiagonal() * V.transpose();
}

// CholeskyQR2 where the Gram matrix allows it, shifted CholeskyQR3 where it does not (κ =
// 1e10 here), Householder TSQR where a column is zero: every way an orthonormal basis of the
// same columns, at any rank count. (One CholeskyQR pass at κ = 1e5 leaves QᵀQ off by
// ~κ²u = 1e-6; plain CholeskyQR at κ = 1e10 breaks down or loses orthogonality entirely:
// the 1e-13 bounds catch both.)
TEST(TallBlocks, OrthonormalColumnsWhateverTheConditioning) {
    const auto world = mpi::Comm::world();
    // (n, p, κ, CholeskyQR2 expected): 700 rows, all ranks with more than p; 20 rows, every
    // rank (at 2+ ranks) with fewer than p; 3 rows at 4 ranks: a rank with none.
    struct Case {
        Index n, p;
        double kappa;
        bool cholesky;
    };
    // κ = 1 and 1.03 are nearly orthonormal (‖XᵀX − I‖_F <= 0.5: one pass), κ = 2 is not.
    // κ = 0 stands for a block whose last column is zero (rank p − 1): Householder.
    for (const Case& c : {Case{700, 14, 1.0, true}, Case{700, 14, 1.03, true}, Case{700, 14, 2.0, true},
                          Case{700, 14, 1e5, true}, Case{700, 14, 1e10, true},
                          Case{20, 14, 10.0, true}, Case{3, 2, 10.0, true}, Case{3, 2, 1e10, true},
                          Case{700, 14, 0.0, false}}) {
        const Index n = c.n, p = c.p;
        const double kappa = c.kappa;
        const RowPartition rows = RowPartition::balanced(n, world.size());
        Eigen::MatrixXd whole = tall_block_with_condition(n, p, kappa > 0 ? kappa : 10.0, 5);
        if (kappa == 0) whole.col(p - 1).setZero();
        const Eigen::MatrixXd X = local_rows(rows, world.rank(), whole);
        bool by_cholesky = !c.cholesky;
        const Eigen::MatrixXd Q = orthonormal_columns(world, X, 1e6, &by_cholesky);
        EXPECT_EQ(by_cholesky, c.cholesky) << "n " << n << " kappa " << kappa;
        EXPECT_EQ(Q.rows(), X.rows());
        EXPECT_EQ(Q.cols(), p);
        if (Q.rows() != X.rows() || Q.cols() != p) continue;  // the same on every rank: no collective skipped alone
        EXPECT_LE((inner(world, Q, Q) - Eigen::MatrixXd::Identity(p, p)).norm(), 1e-13) << "n " << n << " kappa " << kappa;
        // X lies in span(Q): X − Q QᵀX is rounding.
        const Eigen::MatrixXd outside = X - Q * inner(world, Q, X);
        EXPECT_LE(std::sqrt(inner(world, outside, outside).trace()), 1e-13 * whole.norm())
            << "n " << n << " kappa " << kappa;
        // The same span as a one-process Householder QR: the projectors agree to the
        // problem's own sensitivity, the weakest direction determined to about κu.
        const Eigen::MatrixXd Q_whole = gather_rows(world, rows, Q);
        const Eigen::MatrixXd H = thin_qr(whole).Q;
        const double u = std::numeric_limits<double>::epsilon();
        if (kappa > 0) {  // (a zero column leaves one direction of Q free)
            EXPECT_LE((Q_whole * Q_whole.transpose() - H * H.transpose()).norm(), std::max(1e-12, 100 * kappa * u))
                << "n " << n << " kappa " << kappa;
        }
    }
}

// LAPACK's selected top pairs: a planted spectrum (with a negative part, a repeated value and
// a gap) comes back descending, the vectors orthonormal, each pair's residual at rounding,
// and r = n the whole matrix again.
TEST(LocalEigen, TopPairsOfAPlantedSpectrum) {
    const Index n = 60;
    const Eigen::MatrixXd Q = thin_qr(random_rows(0, n, n, 21)).Q;
    Eigen::VectorXd lambda(n);
    for (Index k = 0; k < n; ++k) lambda(k) = 3.0 - 0.1 * static_cast<double>(k);  // 3 … −2.9
    lambda(1) = lambda(2);                                                           // a repeated pair
    const Eigen::MatrixXd A = Q * lambda.asDiagonal() * Q.transpose();
    for (const Index r : {Index{1}, Index{7}, n}) {
        Eigen::MatrixXd work = A, V;
        Eigen::VectorXd values;
        top_symmetric_eigenpairs(work, r, values, V);
        ASSERT_EQ(values.size(), r);
        ASSERT_EQ(V.rows(), n);
        ASSERT_EQ(V.cols(), r);
        for (Index k = 0; k < r; ++k) EXPECT_NEAR(values(k), lambda(k), 1e-13) << r << " " << k;
        EXPECT_LT((V.transpose() * V - Eigen::MatrixXd::Identity(r, r)).cwiseAbs().maxCoeff(), 1e-13);
        EXPECT_LT((A * V - V * values.asDiagonal()).cwiseAbs().maxCoeff(), 1e-13 * 3);
        if (r == n) {
            EXPECT_LT((V * values.asDiagonal() * V.transpose() - A).cwiseAbs().maxCoeff(), 1e-13 * 3);
        }
    }
}

// A tall block gathered on one rank: that rank gets the whole block bit for bit, the others
// a 0 × p block (the model's N × K arrays, held by the writer only); with fewer rows than
// ranks some blocks are empty. broadcast_from_root gives the root's matrix, shape and
// all, to every rank, whatever the others held, and leaves the root's as it was.
TEST(Rows, GatheredOnOneRankAndCopiedFromTheRoot) {
    const mpi::Comm world = mpi::Comm::world();
    for (const Index n : {Index{1}, Index{2}, Index{301}}) {
        const RowPartition rows = RowPartition::balanced(n, world.size());
        const Eigen::MatrixXd whole = random_rows(0, n, 3, 7);
        const Eigen::MatrixXd mine = local_rows(rows, world.rank(), whole);
        const int root = world.size() - 1;
        const Eigen::MatrixXd gathered = gather_rows_to_root(world, rows, mine, root);
        if (world.rank() == root) {
            EXPECT_EQ(gathered, whole) << "n " << n;
        } else {
            EXPECT_EQ(gathered.rows(), 0) << "n " << n;
            EXPECT_EQ(gathered.cols(), 3) << "n " << n;
        }
        Eigen::MatrixXd held = world.rank() == root ? gathered : Eigen::MatrixXd::Constant(2, 5, -1.0);
        broadcast_from_root(world, held, root);
        EXPECT_EQ(held, whole) << "n " << n;
    }
}

// Each rank's listed rows of the root's block (infer's rows of B): any order, repeats, an
// empty list on rank 1, the last rank as the root; ids outside the block stop every rank.
TEST(Rows, ListedRowsFromTheRoot) {
    const mpi::Comm world = mpi::Comm::world();
    const int me = world.rank(), root = world.size() - 1;
    const Index n = 37;
    const Eigen::MatrixXd whole = random_rows(0, n, 4, 11);
    const Eigen::MatrixXd held = me == root ? whole : Eigen::MatrixXd();  // the others hold nothing
    std::vector<std::int64_t> ids;
    if (me != 1)
        for (Index k = 0; k < 2 * n; k += 3 + me) ids.push_back((k * 7 + me) % n);
    if (!ids.empty()) ids.push_back(ids.front());  // a repeat
    const Eigen::MatrixXd got = rows_from_root(world, held, ids, root);
    EXPECT_EQ(got.rows(), static_cast<Index>(ids.size()));  // (no ASSERT: a collective follows)
    EXPECT_EQ(got.cols(), 4);
    if (got.rows() == static_cast<Index>(ids.size()) && got.cols() == 4) {
        for (std::size_t k = 0; k < ids.size(); ++k) EXPECT_EQ(got.row(static_cast<Index>(k)), whole.row(ids[k])) << k;
    }
    std::vector<std::int64_t> bad{0};
    if (me == 0) bad.push_back(n);
    test::expect_stage_failed(world, [&] { (void)rows_from_root(world, held, bad, root); }, {"outside 0..36"},
                              exit_code::internal);
}

// Rows of a row-distributed block from their owners, in the asked order, repeats and
// unsorted ids included; one rank holds no rows (at 3 and 4 ranks) and one asks for none.
TEST(Rows, ListedRowsFromTheirOwners) {
    const mpi::Comm world = mpi::Comm::world();
    const int me = world.rank(), P = world.size();
    const Index n = 37;
    const Eigen::MatrixXd whole = random_rows(0, n, 4, 13);
    std::vector<Index> counts(static_cast<std::size_t>(P));
    for (int r = 0; r < P; ++r) counts[static_cast<std::size_t>(r)] = (P >= 3 && r == 1) ? 0 : n / P + (r == 0 ? n % P + n / P : 0);
    counts.back() += n - std::accumulate(counts.begin(), counts.end(), Index{0});
    const RowPartition partition = RowPartition::of_counts(counts);
    ASSERT_EQ(partition.size(), n);
    const Eigen::MatrixXd mine = whole.middleRows(partition.begin(me), partition.rows(me));
    std::vector<std::int64_t> ids;
    if (me != P - 1)
        for (Index k = 0; k < 2 * n; k += 2 + me) ids.push_back((k * 11 + 5 * me) % n);
    if (!ids.empty()) ids.push_back(ids.front());  // a repeat
    const Eigen::MatrixXd got = rows_from_owners(world, partition, mine, ids);
    EXPECT_EQ(got.rows(), static_cast<Index>(ids.size()));  // (no ASSERT: a collective follows)
    EXPECT_EQ(got.cols(), 4);
    if (got.rows() == static_cast<Index>(ids.size()) && got.cols() == 4) {
        for (std::size_t k = 0; k < ids.size(); ++k) EXPECT_EQ(got.row(static_cast<Index>(k)), whole.row(ids[k])) << k;
    }
    std::vector<std::int64_t> bad{0};
    if (me == 0) bad.push_back(-1);
    test::expect_stage_failed(world, [&] { (void)rows_from_owners(world, partition, mine, bad); }, {"outside 0..36"},
                              exit_code::internal);
}

// The traffic counter (core/traffic.hpp) takes each wrapper's payload: an all-reduce its
// buffer, a broadcast the root's, a gather the other ranks' own parts, an exchange what goes
// to the other ranks (not the rank's own block), a gather on one rank the others' rows; and
// a stage's bytes are those since the previous mark.
TEST(Traffic, CountsThePayloadOfEachCollective) {
    const mpi::Comm world = mpi::Comm::world();
    const int P = world.size(), me = world.rank();
    std::int64_t before = sent_bytes();
    const auto sent = [&] {
        const std::int64_t now = sent_bytes(), delta = now - before;
        before = now;
        return delta;
    };
    std::vector<double> ten(10, 1.0);
    mpi::allreduce_inplace(world, ten, MPI_SUM);
    EXPECT_EQ(sent(), 80);
    mpi::broadcast(world, ten.data(), ten.size(), 0);
    EXPECT_EQ(sent(), world.is_root() ? 80 : 0);
    (void)mpi::gather_concat(world, std::vector<std::int64_t>(static_cast<std::size_t>(me + 1), 7), 0);
    EXPECT_EQ(sent(), world.is_root() ? 0 : 8 * (me + 1));  // (its counts' all-gather, 8 bytes, is not counted)
    std::vector<int> send_counts(static_cast<std::size_t>(P), 2);
    send_counts[static_cast<std::size_t>(me)] = 5;  // its own block stays
    const std::vector<int> recv_counts = mpi::exchange_counts(world, send_counts);
    std::vector<double> out(static_cast<std::size_t>(std::accumulate(recv_counts.begin(), recv_counts.end(), 0)));
    const std::vector<double> outgoing(static_cast<std::size_t>(2 * (P - 1) + 5), 1.0);
    (void)sent();
    mpi::exchange(world, outgoing.data(), send_counts, out.data(), recv_counts);
    EXPECT_EQ(sent(), 16 * (P - 1));
    const RowPartition rows = RowPartition::balanced(30, P);
    (void)gather_rows_to_root(world, rows, Eigen::MatrixXd::Ones(rows.rows(me), 3));
    EXPECT_EQ(sent(), world.is_root() ? 0 : rows.rows(me) * 3 * 8);
    // A stage's bytes: those since the previous mark.
    (void)take_stage_sent_bytes();
    mpi::allreduce_inplace(world, ten, MPI_SUM);
    EXPECT_EQ(take_stage_sent_bytes(), 80);
    EXPECT_EQ(take_stage_sent_bytes(), 0);
}

// Blocks of uneven sizes, rank 1's empty: each rank's own block reaches every rank, and the
// sum over ranks of every block reaches its owner (small integers and halves: exact sums).
TEST(Collectives, BlocksGatheredAndSummedToTheirOwners) {
    const mpi::Comm world = mpi::Comm::world();
    const int P = world.size(), me = world.rank();
    std::vector<std::int64_t> offsets{0};
    for (int r = 0; r < P; ++r) offsets.push_back(offsets.back() + (r == 1 ? 0 : r + 3));
    const auto total = static_cast<std::size_t>(offsets.back());
    std::vector<double> data(total, -1.0);
    for (auto i = offsets[static_cast<std::size_t>(me)]; i < offsets[static_cast<std::size_t>(me) + 1]; ++i)
        data[static_cast<std::size_t>(i)] = 1000.0 * me + static_cast<double>(i);
    mpi::allgather_blocks(world, data.data(), offsets);
    for (int r = 0; r < P; ++r)
        for (auto i = offsets[static_cast<std::size_t>(r)]; i < offsets[static_cast<std::size_t>(r) + 1]; ++i)
            EXPECT_EQ(data[static_cast<std::size_t>(i)], 1000.0 * r + static_cast<double>(i)) << "element " << i;

    for (std::size_t i = 0; i < total; ++i) data[i] = me + 0.5 * static_cast<double>(i);
    const auto first = offsets[static_cast<std::size_t>(me)], count = offsets[static_cast<std::size_t>(me) + 1] - first;
    std::vector<double> mine(static_cast<std::size_t>(count) + 1, -7.0);  // one guard element past the block
    mpi::sum_to_owners(world, data.data(), mine.data(), offsets);
    for (std::int64_t k = 0; k < count; ++k)
        EXPECT_EQ(mine[static_cast<std::size_t>(k)], P * (P - 1) / 2.0 + P * 0.5 * static_cast<double>(first + k)) << "element " << first + k;
    EXPECT_EQ(mine.back(), -7.0);
}

// Pieces of uneven sizes (one empty) gathered whole on a root, in one call and in rounds
// of a few elements (the path of pieces past an MPI count), each equal to the expected
// concatenation; the other ranks get nothing.
TEST(Collectives, GatherConcatInOneCallAndInRounds) {
    const mpi::Comm world = mpi::Comm::world();
    const int P = world.size(), me = world.rank();
    const auto size_of = [](int r) { return r == 1 ? 0 : 3 * r + 5; };
    std::vector<std::int64_t> local;
    for (int i = 0; i < size_of(me); ++i) local.push_back(1000 * me + i);
    std::vector<std::int64_t> expected;
    for (int r = 0; r < P; ++r)
        for (int i = 0; i < size_of(r); ++i) expected.push_back(1000 * r + i);
    for (const int root : {0, P - 1})
        for (const std::size_t chunk : {mpi::max_chunk, std::size_t{1}, std::size_t{4}, std::size_t{7}}) {
            const std::vector<std::int64_t> all = mpi::gather_concat(world, local, root, chunk);
            if (me == root) EXPECT_EQ(all, expected) << "root " << root << ", chunk " << chunk;
            else EXPECT_TRUE(all.empty());
        }
}

// gram (dsyrk) against the dense AᵀA: exactly symmetric, the same on every rank, within
// rounding of the formed product; with rows on some ranks only (n < P) too.
TEST(TallBlocks, GramIsTheDenseAtA) {
    const mpi::Comm world = mpi::Comm::world();
    for (const Index n : {Index{500}, Index{3}}) {
        const RowPartition rows = RowPartition::balanced(n, world.size());
        const Eigen::MatrixXd whole = random_rows(0, n, 9, 21);
        const Eigen::MatrixXd G = gram(world, local_rows(rows, world.rank(), whole));
        const Eigen::MatrixXd dense = whole.transpose() * whole;
        ASSERT_EQ(G.rows(), 9);
        ASSERT_EQ(G.cols(), 9);
        EXPECT_EQ(G, G.transpose()) << "n " << n;
        EXPECT_LE((G - dense).cwiseAbs().maxCoeff(), 1e-13 * dense.cwiseAbs().maxCoeff()) << "n " << n;
        Eigen::MatrixXd roots = G;
        mpi::broadcast(world, roots.data(), static_cast<std::size_t>(roots.size()), 0);
        EXPECT_EQ(G, roots) << "n " << n;
    }
}

// The blocks B and B̆ are written by: every block whole chunks of at most ~1 MiB, all rows
// written, none more than a chunk's worth of rows per chunk above the balanced share.
TEST(TallBlocks, ChunkAlignedBlocksHoldWholeChunks) {
    struct Case {
        Index n;
        int ranks;
        Index width;
    };
    for (const Case& c : {Case{6906, 3, 100}, Case{6906, 4, 100}, Case{1000000, 1024, 100}, Case{1000000, 8, 100},
                          Case{1000000, 8, 10}, Case{100000, 2, 500}, Case{5, 4, 3}, Case{3, 8, 2}, Case{0, 2, 4},
                          Case{7, 1, 0}}) {
        const ChunkedRows chunked = chunk_aligned(c.n, c.ranks, c.width);
        const RowPartition& rows = chunked.rows;
        ASSERT_EQ(rows.ranks(), c.ranks);
        EXPECT_EQ(rows.size(), c.n);
        EXPECT_GE(chunked.chunk, 1);
        const Index row_bytes = 8 * std::max<Index>(1, c.width);  // a chunk is at most 1 MiB, or one row
        EXPECT_LE(chunked.chunk * row_bytes, std::max<Index>(Index{1} << 20, row_bytes)) << c.n << " " << c.ranks;
        const Index share = std::max<Index>(1, (c.n + c.ranks - 1) / c.ranks);
        const Index chunks = (share + chunked.chunk - 1) / chunked.chunk;
        for (int r = 0; r < c.ranks; ++r) {
            if (rows.rows(r) > 0) {  // (an empty block may start anywhere)
                EXPECT_EQ(rows.begin(r) % chunked.chunk, 0) << c.n << " " << c.ranks << " rank " << r;
            }
            // whole chunks, except the array's last
            if (rows.end(r) < c.n) {
                EXPECT_EQ(rows.rows(r) % chunked.chunk, 0) << c.n << " " << c.ranks << " rank " << r;
            }
            EXPECT_LT(rows.rows(r), share + chunks) << c.n << " " << c.ranks << " rank " << r;
        }
    }
    // 1 MiB of 100-wide rows is 1,310 rows: 6,906 words at 3 ranks, 2,302 each, in chunks of 1,151
    const ChunkedRows kos = chunk_aligned(6906, 3, 100);
    EXPECT_EQ(kos.chunk, 1151);
    EXPECT_EQ(kos.rows.rows(0), 2302);
    EXPECT_EQ(kos.rows.rows(2), 2302);
}

// Rows moved from one partition to another: each rank's new block is the whole array's
// rows there, whatever the two partitions (empty blocks, one rank holding all, the
// blocks B is written by).
TEST(TallBlocks, RepartitionMovesRowsToTheirNewBlocks) {
    const auto world = mpi::Comm::world();
    const int P = world.size();
    const Index N = 37;
    const Eigen::MatrixXd whole = tall_block_with_condition(N, 3, 10.0, 17);
    std::vector<Index> first_takes_all(static_cast<std::size_t>(P), 0), last_takes_all = first_takes_all, uneven;
    first_takes_all.front() = N;
    last_takes_all.back() = N;
    Index left = N;
    for (int r = 0; r < P; ++r) {  // 1, 0, 2, 0, 3, … and the rest to the last rank
        const Index c = r + 1 == P ? left : std::min<Index>(left, r % 2 == 0 ? r / 2 + 1 : 0);
        uneven.push_back(c);
        left -= c;
    }
    const std::vector<RowPartition> partitions = {RowPartition::balanced(N, P), RowPartition::of_counts(first_takes_all),
                                                  RowPartition::of_counts(last_takes_all), RowPartition::of_counts(uneven),
                                                  chunk_aligned(N, P, 3, 8 * 3 * 4).rows};
    for (std::size_t a = 0; a < partitions.size(); ++a)
        for (std::size_t b = 0; b < partitions.size(); ++b) {
            const RowPartition& from = partitions[a];
            const RowPartition& to = partitions[b];
            const Eigen::MatrixXd moved = repartition(world, from, local_rows(from, world.rank(), whole), to);
            EXPECT_EQ(moved, local_rows(to, world.rank(), whole)) << a << " to " << b;
        }
    // a vector (one column), as the unigram
    const Eigen::VectorXd v = whole.col(0);
    const Eigen::MatrixXd moved = repartition(world, partitions[0], local_rows(partitions[0], world.rank(), v), partitions[3]);
    EXPECT_EQ(moved, local_rows(partitions[3], world.rank(), v));
    // a block that does not match the partition: refused on every rank
    EXPECT_THROW((void)repartition(world, partitions[0], Eigen::MatrixXd::Zero(N + 1, 3), partitions[1]), StageFailed);
}

}  // namespace
}  // namespace jsmf::distmat
