// SPDX-License-Identifier: MIT
// AnchorFree-LP (Alg. 1): max |det M| s.t. B̃M >= 0, 1ᵀB̃M = 1ᵀ by alternating linear programs,
// solved by COIN-OR Clp on a screened working set of B̃'s rows.
#include <ClpSimplex.hpp>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::anchorfree {

namespace {
constexpr const char* kStage = "anchorfree";

/// The root's linear program min cᵀx s.t. B̃_W x >= 0 (W the working rows), bᵀx = 1, |x_f| <= bound. The box holds the whole feasible set (see
/// anchorfree_lp), so it never changes a solution; it only keeps every relaxation
/// bounded.
class WorkingLp {
public:
    WorkingLp(const Eigen::VectorXd& b, double bound) : F_(static_cast<int>(b.size())) {
        model_.setLogLevel(0);
        std::vector<CoinBigIndex> start(static_cast<std::size_t>(F_) + 1);
        std::vector<int> index(static_cast<std::size_t>(F_), 0);
        std::vector<double> value(b.data(), b.data() + F_);
        for (int f = 0; f <= F_; ++f) start[static_cast<std::size_t>(f)] = f;
        const std::vector<double> lower(static_cast<std::size_t>(F_), -bound), upper(static_cast<std::size_t>(F_), bound),
            objective(static_cast<std::size_t>(F_), 0.0);
        const double one = 1.0;
        model_.loadProblem(F_, 1, start.data(), index.data(), value.data(), lower.data(), upper.data(), objective.data(),
                           &one, &one);
        model_.setPrimalTolerance(1e-11);
        model_.setDualTolerance(1e-11);
        // Unscaled, so that the tolerance means what the screening's check means: an
        // absolute bound on C*'s entries (the rows of B̃ need no scaling: b has norm 1).
        model_.scaling(0);
    }

    /// Adds the rows `rows` of the factor, their values the rows of `values` in that order.
    void add_rows(const Eigen::MatrixXd& values, const std::vector<Index>& rows) {
        for (const Index i : rows) in_set_.insert(i);
        rows_added_ = true;
        const int n = static_cast<int>(rows.size());
        std::vector<CoinBigIndex> starts(static_cast<std::size_t>(n) + 1);
        std::vector<int> columns;
        std::vector<double> elements;
        for (int r = 0; r < n; ++r) {
            starts[static_cast<std::size_t>(r)] = static_cast<CoinBigIndex>(columns.size());
            for (int f = 0; f < F_; ++f) {
                columns.push_back(f);
                elements.push_back(values(r, f));
            }
        }
        starts[static_cast<std::size_t>(n)] = static_cast<CoinBigIndex>(columns.size());
        const std::vector<double> lower(static_cast<std::size_t>(n), 0.0),
            upper(static_cast<std::size_t>(n), COIN_DBL_MAX);
        model_.addRows(n, lower.data(), upper.data(), starts.data(), columns.data(), elements.data());
    }

    Eigen::VectorXd solve(const Eigen::VectorXd& c) {
        model_.chgObjCoefficients(c.data());
        // Warm starts: after an objective change the last basis is still primal feasible
        // (primal simplex), after added rows still dual feasible (dual simplex); 1.46x
        // faster than a fresh initialSolve on KOS, K = 25 (66.7 s against 97.2 s, the same
        // 1,204 solves). They returned wrong vertices only while noise rows (B̃'s rows of
        // words that never occur, scaled up) were in the LP; those are left out now.
        if (solved_once_) {
            if (rows_added_) model_.dual();
            else model_.primal();
            if (model_.status() != 0) model_.initialSolve();  // once more from scratch
        } else {
            model_.initialSolve();
        }
        solved_once_ = true;
        rows_added_ = false;
        if (model_.status() != 0)
            throw InternalError("anchorfree-lp: Clp ended with status " + std::to_string(model_.status()) +
                                " (0 optimal, 1 infeasible, 2 unbounded, 3 limit, 4 errors) on a feasible, bounded LP");
        return Eigen::Map<const Eigen::VectorXd>(model_.primalColumnSolution(), F_);
    }

    int rows() const { return model_.numberRows() - 1; }
    bool has_row(Index i) const { return in_set_.count(i) > 0; }

private:
    int F_;
    ClpSimplex model_;
    std::unordered_set<Index> in_set_;
    bool solved_once_ = false, rows_added_ = false;
};

/// Collective. The rows `ids` (global, each held by one rank) of the factor on the root, in
/// the order of `ids` (the root's list; the others' are ignored): the ids broadcast, every
/// rank sends the rows it holds (ascending, as gather_concat keeps rank order).
Eigen::MatrixXd rows_on_root(const mpi::Comm& comm, const Eigen::MatrixXd& B_local, Index first_row,
                             std::vector<Index> ids) {
    const int F = static_cast<int>(B_local.cols());
    std::int64_t count = static_cast<std::int64_t>(ids.size());
    mpi::broadcast(comm, count, 0);
    std::vector<std::int64_t> wanted(ids.begin(), ids.end());
    wanted.resize(static_cast<std::size_t>(count));
    mpi::broadcast(comm, wanted.data(), wanted.size(), 0);
    std::vector<std::int64_t> mine;
    std::vector<double> values;
    std::vector<std::int64_t> sorted = wanted;
    std::sort(sorted.begin(), sorted.end());
    for (const std::int64_t i : sorted) {
        if (i < first_row || i >= first_row + B_local.rows()) continue;
        mine.push_back(i);
        for (int f = 0; f < F; ++f) values.push_back(B_local(i - first_row, f));
    }
    const std::vector<std::int64_t> all_ids = mpi::gather_concat(comm, mine, 0);
    const std::vector<double> all_values = mpi::gather_concat(comm, values, 0);
    Eigen::MatrixXd out(comm.is_root() ? count : 0, F);
    mpi::check_on_root(comm, kStage, [&] {
        std::unordered_map<std::int64_t, std::size_t> where;
        for (std::size_t k = 0; k < all_ids.size(); ++k) where.emplace(all_ids[k], k);
        for (std::int64_t r = 0; r < count; ++r) {
            const auto it = where.find(wanted[static_cast<std::size_t>(r)]);
            if (it == where.end()) throw InternalError("anchorfree-lp: no rank holds row " + std::to_string(wanted[static_cast<std::size_t>(r)]));
            for (int f = 0; f < F; ++f) out(r, f) = all_values[it->second * static_cast<std::size_t>(F) + static_cast<std::size_t>(f)];
        }
    });
    return out;
}

/// Collective. min cᵀx over all N rows of B̃ (c, the LP and W live on the root): the
/// root solves on its working set, every rank checks its own rows, the most violated
/// join, until none is violated. Returns x on the root (others: unspecified).
Eigen::VectorXd solve_screened(const mpi::Comm& comm, WorkingLp* lp, const Eigen::VectorXd& c,
                               const Eigen::MatrixXd& B_local, Index first_row, const LpOptions& options,
                               int batch, LpReport& report, double& lp_seconds) {
    const int F = static_cast<int>(B_local.cols());
    Eigen::VectorXd x(F);
    for (;;) {
        mpi::check_on_root(comm, kStage, [&] {
            Stopwatch clock;
            x = lp->solve(c);
            lp_seconds += clock.seconds();
        });
        ++report.lp_solves;
        if (!options.screening) return x;
        mpi::broadcast(comm, x.data(), static_cast<std::size_t>(F), 0);
        // This rank's most violated rows (entries of C* = B̃x below −feasibility).
        std::vector<std::pair<double, Index>> violated;
        for (Index i = 0; i < B_local.rows(); ++i) {
            const double v = B_local.row(i).dot(x);  // an entry of the column C* = B̃x
            if (v < -options.feasibility) violated.emplace_back(v, first_row + i);
        }
        const std::size_t keep = std::min(violated.size(), static_cast<std::size_t>(batch));
        std::partial_sort(violated.begin(), violated.begin() + static_cast<std::ptrdiff_t>(keep), violated.end());
        violated.resize(keep);
        std::vector<double> values;
        std::vector<std::int64_t> ids;
        for (const auto& [v, i] : violated) {
            values.push_back(v);
            ids.push_back(i);
        }
        const std::vector<double> all_values = mpi::gather_concat(comm, values, 0);
        const std::vector<std::int64_t> all_ids = mpi::gather_concat(comm, ids, 0);
        std::vector<Index> rows;
        bool done = false;
        mpi::check_on_root(comm, kStage, [&] {
            done = all_ids.empty();
            if (!done) {
                std::vector<std::size_t> order(all_ids.size());
                std::iota(order.begin(), order.end(), std::size_t{0});
                std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
                    return all_values[a] != all_values[b] ? all_values[a] < all_values[b] : all_ids[a] < all_ids[b];
                });
                order.resize(std::min(order.size(), static_cast<std::size_t>(batch)));
                for (const std::size_t k : order)
                    if (!lp->has_row(all_ids[k])) rows.push_back(all_ids[k]);
                // Violated rows that are in the set already are met to Clp's own
                // tolerance: nothing is left to add, and the solution stands.
                done = rows.empty();
            }
        });
        if (mpi::root_decides(comm, done)) return x;
        const Eigen::MatrixXd added = rows_on_root(comm, B_local, first_row, rows);
        mpi::check_on_root(comm, kStage, [&] { lp->add_rows(added, rows); });
    }
}

/// Collective. Each column's largest and smallest entries' rows (ties: the lowest id),
/// sorted and distinct: the LP's first working set, a start that touches every direction.
std::vector<Index> extreme_rows(const mpi::Comm& comm, const Eigen::MatrixXd& B_local, Index first_row) {
    const int F = static_cast<int>(B_local.cols());
    std::vector<double> high(static_cast<std::size_t>(F), -std::numeric_limits<double>::infinity()),
        low(static_cast<std::size_t>(F), std::numeric_limits<double>::infinity());
    for (int f = 0; f < F; ++f)
        if (B_local.rows() > 0) {
            high[static_cast<std::size_t>(f)] = B_local.col(f).maxCoeff();
            low[static_cast<std::size_t>(f)] = B_local.col(f).minCoeff();
        }
    mpi::allreduce_inplace(comm, high, MPI_MAX);
    mpi::allreduce_inplace(comm, low, MPI_MIN);
    constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
    std::vector<std::int64_t> at(2 * static_cast<std::size_t>(F), none);  // the lowest id attaining each
    for (int f = 0; f < F; ++f)
        for (Index i = 0; i < B_local.rows(); ++i) {
            const double v = B_local(i, f);
            std::int64_t& hi = at[2 * static_cast<std::size_t>(f)];
            std::int64_t& lo = at[2 * static_cast<std::size_t>(f) + 1];
            if (v == high[static_cast<std::size_t>(f)] && hi == none) hi = first_row + i;
            if (v == low[static_cast<std::size_t>(f)] && lo == none) lo = first_row + i;
        }
    mpi::allreduce_inplace(comm, at, MPI_MIN);
    std::vector<Index> start(at.begin(), at.end());
    std::sort(start.begin(), start.end());
    start.erase(std::unique(start.begin(), start.end()), start.end());
    return start;
}

}  // namespace

void require_row_blocks(const mpi::Comm& comm, Index first_row, Index local_rows, Index N, const std::string& who) {
    std::vector<std::int64_t> before{static_cast<std::int64_t>(local_rows)};
    mpi::exscan_inplace(comm, before, MPI_SUM);
    if (comm.rank() == 0) before[0] = 0;  // MPI_Exscan leaves rank 0's undefined
    const std::int64_t total = mpi::allreduce_sum(comm, static_cast<std::int64_t>(local_rows));
    const bool ok = mpi::allreduce_min(comm, static_cast<int>(before[0] == first_row && local_rows >= 0)) == 1;
    mpi::run_local_phase(comm, kStage, [&] {
        if (!ok || total != N)
            throw InputError(who + ": the ranks' rows are not contiguous blocks of the " + std::to_string(N) +
                             " rows in rank order");
    });
}

Eigen::MatrixXd anchorfree_lp(const mpi::Comm& comm, const Eigen::MatrixXd& B, const LpOptions& options,
                              LpReport* report_out) {
    const RowShare share = row_share(B.rows(), comm.rank(), comm.size());
    return anchorfree_lp(comm, B.middleRows(share.begin, share.end - share.begin), share.begin, B.rows(), options,
                         report_out);
}

Eigen::MatrixXd anchorfree_lp(const mpi::Comm& comm, const Eigen::MatrixXd& B_local, Index first_row, Index N,
                              const LpOptions& options, LpReport* report_out) {
    const int F = static_cast<int>(B_local.cols());
    mpi::require_same_on_all_ranks(comm, {N, F, options.max_sweeps, options.batch, options.screening ? 1 : 0},
                                   "anchorfree_lp");
    require_row_blocks(comm, first_row, B_local.rows(), N, "anchorfree-lp");
    const bool finite = mpi::allreduce_min(comm, static_cast<int>(B_local.allFinite())) == 1;
    mpi::run_local_phase(comm, kStage, [&] {
        if (F < 2 || F >= N) throw InputError("anchorfree-lp: needs 2 <= K < N");
        if (options.max_sweeps < 1) throw InputError("anchorfree-lp: max_sweeps must be at least 1");
        if (!finite) throw InputError("anchorfree-lp: the square-root factor is not finite");
    });
    LpReport report;
    const int batch = options.batch > 0 ? options.batch : 2 * F + 10;
    // Scale so that b = B̃ᵀ1 has unit norm (M then scales back by the same factor).
    Eigen::VectorXd column_sums = B_local.colwise().sum().transpose();
    distmat::sum_on_all_ranks(comm, column_sums.data(), static_cast<std::size_t>(F));
    const double scale = column_sums.norm();
    mpi::run_local_phase(comm, kStage, [&] {
        if (!(scale > 0)) throw InputError("anchorfree-lp: 1ᵀB̃ = 0 (P sums to 0?)");
    });
    const Eigen::VectorXd b = column_sums / scale;
    Eigen::MatrixXd B_rows = B_local / scale;
    // Every feasible x has ‖B̃x‖₂ <= ‖B̃x‖₁ = 1ᵀB̃x = 1 (B̃x >= 0), so ‖x‖₂ <= 1/σ_min(B̃):
    // the box |x_f| <= 1/σ_min holds the feasible set.
    Eigen::MatrixXd gram_matrix = B_rows.transpose() * B_rows;
    distmat::sum_on_all_ranks(comm, gram_matrix.data(), static_cast<std::size_t>(gram_matrix.size()));
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> gram(gram_matrix, Eigen::EigenvaluesOnly);
    const double sigma_min = std::sqrt(std::max(gram.eigenvalues()(0), 0.0));
    mpi::run_local_phase(comm, kStage, [&] {
        if (!(sigma_min > 0)) throw InputError("anchorfree-lp: the square-root factor is rank deficient");
    });
    const double bound = 1.0 / sigma_min * (1 + 1e-6);
    // Rows of B̃ that are rounding noise (the eigenvectors' entries for words whose row of P
    // is 0, e.g. words that never occur) constrain nothing real: they are left out. They
    // must not be scaled up either: as unit rows they would be random constraints.
    const Eigen::VectorXd norms = B_rows.rowwise().norm();
    const double noise =
        1e-10 * mpi::allreduce_max(comm, norms.size() > 0 ? norms.maxCoeff() : 0.0);
    for (Index i = 0; i < B_rows.rows(); ++i)
        if (!(norms(i) > noise)) B_rows.row(i).setZero();

    std::vector<Index> start;
    if (options.screening) {
        start = extreme_rows(comm, B_rows, first_row);
    } else {
        std::vector<std::int64_t> mine;
        for (Index i = 0; i < B_rows.rows(); ++i)
            if (norms(i) > noise) mine.push_back(first_row + i);
        const std::vector<std::int64_t> all = mpi::gather_concat(comm, mine, 0);
        start.assign(all.begin(), all.end());
    }
    const Eigen::MatrixXd start_rows = rows_on_root(comm, B_rows, first_row, start);
    std::unique_ptr<WorkingLp> lp;
    double lp_seconds = 0;
    mpi::check_on_root(comm, kStage, [&] {
        lp = std::make_unique<WorkingLp>(b, bound);
        lp->add_rows(start_rows, start);
    });
    Eigen::MatrixXd M = Eigen::MatrixXd::Identity(F, F);  // the root's; broadcast at the end
    double previous = -std::numeric_limits<double>::infinity();
    for (int sweep = 1; sweep <= options.max_sweeps; ++sweep) {
        for (int f = 0; f < F; ++f) {
            Eigen::VectorXd a = Eigen::VectorXd::Zero(F);
            if (comm.is_root()) a = M.inverse().row(f).transpose();  // co-factors / det M
            const Eigen::VectorXd x_max = solve_screened(comm, lp.get(), -a, B_rows, first_row, options, batch, report, lp_seconds);
            const Eigen::VectorXd x_min = solve_screened(comm, lp.get(), a, B_rows, first_row, options, batch, report, lp_seconds);
            if (comm.is_root()) {
                // det M' = det M · aᵀx; the current column has aᵀm_f = 1. Once M is feasible
                // (after the first sweep) the LPs cannot do worse than the current column,
                // so a smaller |aᵀx| is a solver failure: the column is kept.
                const Eigen::VectorXd& best = std::abs(a.dot(x_max)) >= std::abs(a.dot(x_min)) ? x_max : x_min;
                if (sweep == 1 || std::abs(a.dot(best)) >= 1) M.col(f) = best;
            }
        }
        report.sweeps = sweep;
        double log_det = 0;
        bool stop = false;
        if (comm.is_root()) {
            log_det = log_abs_det(M);
            report.log_det.push_back(log_det);
            stop = sweep >= 2 && log_det - previous <= options.tolerance * std::max(1.0, std::abs(log_det));
            previous = log_det;
        }
        if (mpi::root_decides(comm, stop)) {
            report.converged = true;
            break;
        }
    }
    mpi::broadcast(comm, M.data(), static_cast<std::size_t>(M.size()), 0);
    if (comm.is_root()) report.working_rows = lp->rows();
    std::int64_t rows = report.working_rows;
    mpi::broadcast(comm, rows, 0);
    report.working_rows = rows;
    report.lp_seconds = lp_seconds;
    mpi::broadcast(comm, report.lp_seconds, 0);
    std::int64_t log_count = static_cast<std::int64_t>(report.log_det.size());
    mpi::broadcast(comm, log_count, 0);
    report.log_det.resize(static_cast<std::size_t>(log_count));
    mpi::broadcast(comm, report.log_det.data(), report.log_det.size(), 0);
    if (report_out) *report_out = report;
    return M / scale;
}

}  // namespace jsmf::anchorfree
