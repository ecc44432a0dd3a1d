// SPDX-License-Identifier: MIT
// The metrics that touch N × N matrices, from distributed products: the residuals and
// the reconstruction are formed a local panel at a time, never as an N × N matrix.
#include "jsmf/eval/dist_metrics.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "jsmf/distmat/blas.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/distmat/eig.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::eval {
namespace {
constexpr const char* kStage = "eval";
/// Local columns per panel of a formed product (m × 256 doubles at a time).
constexpr Index kPanelWidth = 256;
/// Extra vectors of the subspace iteration of project_rows_2d: its error shrinks like
/// (λ_{2 + extra + 1} / λ_2)^iterations instead of (λ_3 / λ_2)^iterations.
constexpr Index kExtraVectors = 8;

mpi::Comm comm_of(const distmat::DistMatrix& C) { return C.grid().borrow_comm(); }

/// Global index of local index `l` on process `proc` of `procs` (ScaLAPACK's indxl2g),
/// for any process, not only this one.
Index global_index(Index l, int block, int proc, int procs) {
    return ((l / block) * procs + proc) * Index{block} + l % block;
}

/// 1 / p_i, or 0 for rows whose sum is not positive: those rows of C̄ are taken as zero
/// (as recover_topics and the anchor finders do).
Eigen::VectorXd inverse_row_sums(const Eigen::VectorXd& p) {
    Eigen::VectorXd inverse(p.size());
    for (Index i = 0; i < p.size(); ++i) inverse(i) = p(i) > 0 ? 1.0 / p(i) : 0.0;
    return inverse;
}

/// The rows `which` of C, transposed: column k of the result is row which[k] of C
/// (cols × K, replicated). Each rank sends the entries it owns (the requested rows in its
/// process row, at its local columns) in one allgatherv. Collective on C.grid().
/// Memory: 2 × cols × K doubles (the receive buffer and the result).
Eigen::MatrixXd gather_rows_transposed(const distmat::DistMatrix& C, const std::vector<Index>& which) {
    const distmat::Grid& grid = C.grid();
    const mpi::Comm comm = comm_of(C);
    const Index K = static_cast<Index>(which.size());
    // The requested rows owned by each process row, in request order.
    std::vector<std::vector<Index>> rows_of(static_cast<std::size_t>(grid.rows()));
    for (Index k = 0; k < K; ++k) rows_of[static_cast<std::size_t>(C.owner_row(which[static_cast<std::size_t>(k)]))].push_back(k);

    std::vector<int> counts(static_cast<std::size_t>(grid.size()));
    Index total = 0;
    for (int r = 0; r < grid.size(); ++r) {
        const int pr = r / grid.cols(), pc = r % grid.cols();
        const Index count = static_cast<Index>(rows_of[static_cast<std::size_t>(pr)].size()) *
                            distmat::local_extent(C.cols(), C.block_cols(), pc, grid.cols());
        JSMF_REQUIRE(total + count < INT_MAX, "gather_rows_transposed: too many entries for one allgatherv");
        counts[static_cast<std::size_t>(r)] = static_cast<int>(count);
        total += count;
    }

    std::vector<double> mine;
    mine.reserve(static_cast<std::size_t>(counts[static_cast<std::size_t>(grid.rank())]));
    for (const Index k : rows_of[static_cast<std::size_t>(grid.my_row())]) {
        const Index il = C.local_row(which[static_cast<std::size_t>(k)]);
        for (Index jl = 0; jl < C.local_cols(); ++jl) mine.push_back(C.local()(il, jl));
    }
    std::vector<double> all(static_cast<std::size_t>(std::max<Index>(total, 1)));
    mpi::allgather_varying(comm, mine.data(), static_cast<int>(mine.size()), all.data(), counts);

    Eigen::MatrixXd out(C.cols(), K);
    const std::vector<int> displs = mpi::displacements(counts);
    for (int r = 0; r < grid.size(); ++r) {
        const int pr = r / grid.cols(), pc = r % grid.cols();
        const Index width = distmat::local_extent(C.cols(), C.block_cols(), pc, grid.cols());
        const double* piece = all.data() + displs[static_cast<std::size_t>(r)];
        for (const Index k : rows_of[static_cast<std::size_t>(pr)]) {
            for (Index jl = 0; jl < width; ++jl) out(global_index(jl, C.block_cols(), pc, grid.cols()), k) = piece[jl];
            piece += width;
        }
    }
    return out;
}

/// The rows of a replicated matrix at this rank's local rows of C (m × cols(M)).
Eigen::MatrixXd rows_at_local_rows(const distmat::DistMatrix& C, const Eigen::MatrixXd& M) {
    Eigen::MatrixXd out(C.local_rows(), M.cols());
    for (Index il = 0; il < C.local_rows(); ++il) out.row(il) = M.row(C.global_row(il));
    return out;
}

/// visit(j0, panel) for consecutive panels of this rank's local columns j0, ..., j0 + w − 1,
/// panel (m × w) holding the entries (global_row(il), global_col(jl)) of L Rᵀ: `left` has
/// the rows of L at this rank's local rows (m × K), `right` is R itself (cols × K,
/// replicated). One local DGEMM per panel; memory m × kPanelWidth + kPanelWidth × K.
template <class Visit>
void for_each_product_panel(const distmat::DistMatrix& C, const Eigen::MatrixXd& left, const Eigen::MatrixXd& right,
                            Visit&& visit) {
    const Index m = C.local_rows(), n = C.local_cols(), K = left.cols();
    if (m == 0 || n == 0) return;
    const Index width = std::min(kPanelWidth, n);
    Eigen::MatrixXd right_panel(width, K), panel(m, width);
    for (Index j0 = 0; j0 < n; j0 += width) {
        const Index w = std::min(width, n - j0);
        for (Index jj = 0; jj < w; ++jj) right_panel.row(jj) = right.row(C.global_col(j0 + jj));
        if (K > 0) {
            const int mm = static_cast<int>(m), nn = static_cast<int>(w), kk = static_cast<int>(K);
            const int ldl = static_cast<int>(m), ldr = static_cast<int>(width), ldp = static_cast<int>(m);
            const double one = 1, zero = 0;
            distmat::gemm('N', 'T', mm, nn, kk, one, left.data(), ldl, right_panel.data(), ldr, zero, panel.data(), ldp);
        } else {
            panel.setZero();
        }
        visit(j0, panel.leftCols(w));
    }
}

/// Y = Cᵀ X for a replicated rows × q block X; Y replicated (cols × q). One local DGEMM
/// and one allreduce of cols × q doubles. Collective on C.grid().
Eigen::MatrixXd multiply_transposed_block(const distmat::DistMatrix& C, const Eigen::MatrixXd& X) {
    JSMF_REQUIRE(X.rows() == C.rows(), "multiply_transposed_block: size mismatch");
    const Index q = X.cols();
    const Eigen::MatrixXd X_loc = rows_at_local_rows(C, X);
    Eigen::MatrixXd Y_loc = Eigen::MatrixXd::Zero(std::max<Index>(1, C.local_cols()), q);
    if (C.local_rows() > 0 && C.local_cols() > 0 && q > 0) {
        const int m = static_cast<int>(C.local_cols()), n = static_cast<int>(q), k = static_cast<int>(C.local_rows());
        const int lda = static_cast<int>(C.ld()), ldb = static_cast<int>(X_loc.rows()), ldc = static_cast<int>(Y_loc.rows());
        const double one = 1, zero = 0;
        distmat::gemm('T', 'N', m, n, k, one, C.data(), lda, X_loc.data(), ldb, zero, Y_loc.data(), ldc);
    }
    Eigen::MatrixXd Y = Eigen::MatrixXd::Zero(C.cols(), q);
    for (Index jl = 0; jl < C.local_cols(); ++jl) Y.row(C.global_col(jl)) = Y_loc.row(jl);
    mpi::allreduce_inplace(comm_of(C), Y.data(), static_cast<std::size_t>(Y.size()), MPI_SUM);
    return Y;
}

/// Flips each column so that its entry of largest magnitude (the first of ties) is
/// positive: eigenvectors are defined up to sign, and this makes the choice the same
/// whatever the rank count or the rounding that led to the column.
void fix_signs(Eigen::MatrixXd& V) {
    for (Index c = 0; c < V.cols(); ++c) {
        Index largest = 0;
        for (Index i = 1; i < V.rows(); ++i)
            if (std::abs(V(i, c)) > std::abs(V(largest, c))) largest = i;
        if (V(largest, c) < 0) V.col(c) = -V.col(c);
    }
}

/// The centered rows of C̄ and the products with them, from products with C only:
/// X_c = C̄ − 1 μᵀ with C̄ = D⁻¹ C and μ = C̄ᵀ 1 / rows the mean row. Collective on C.grid().
class CenteredRows {
public:
    explicit CenteredRows(const distmat::DistMatrix& C)
        : C_(C), inverse_p_(inverse_row_sums(distmat::row_sums(C))) {
        // μ = C̄ᵀ 1 / rows = Cᵀ (D⁻¹ 1) / rows.
        mean_ = multiply_transposed_block(C, inverse_p_) / static_cast<double>(C.rows());
    }

    /// X_c V = D⁻¹ (C V) − 1 (μᵀ V): rows × q. One distributed product.
    Eigen::MatrixXd times(const Eigen::MatrixXd& V) const {
        Eigen::MatrixXd Y = inverse_p_.asDiagonal() * distmat::multiply_block(C_, V);
        Y.rowwise() -= mean_.transpose() * V;
        return Y;
    }

    /// X_cᵀ Y = Cᵀ (D⁻¹ Y) − μ (1ᵀ Y): cols × q. One distributed product.
    Eigen::MatrixXd transposed_times(const Eigen::MatrixXd& Y) const {
        Eigen::MatrixXd W = multiply_transposed_block(C_, inverse_p_.asDiagonal() * Y);
        W -= mean_ * Y.colwise().sum();
        return W;
    }

    /// The covariance X_cᵀ X_c = C̄ᵀC̄ − rows · μμᵀ times V, as X_cᵀ (X_c V): no
    /// cancellation between the two terms when the mean row dominates.
    Eigen::MatrixXd covariance_times(const Eigen::MatrixXd& V) const { return transposed_times(times(V)); }

private:
    const distmat::DistMatrix& C_;
    Eigen::VectorXd inverse_p_;
    Eigen::VectorXd mean_;
};

/// The two leading eigenvectors of the covariance, by block subspace iteration from a
/// seeded block with a Rayleigh–Ritz step each iteration; columns by decreasing
/// eigenvalue, signs fixed. At most `iterations` products, fewer once the two leading
/// Ritz pairs have residuals below kDirectionTolerance · θ₁: a picture needs no more (60
/// fixed products on both Cs were 15% of a KOS fit). Collective; the stop and the block
/// are the root's, so every rank runs the same products.
constexpr double kDirectionTolerance = 1e-6;

Eigen::MatrixXd leading_directions(const CenteredRows& X, Index cols, int iterations, Seed seed,
                                   const mpi::Comm& comm) {
    const Index q = std::min(cols, 2 + kExtraVectors);
    Eigen::MatrixXd V = distmat::orthonormalize(distmat::random_block(cols, q, seed));
    mpi::adopt_root_copy(comm, V.data(), static_cast<std::size_t>(V.size()));  // LAPACK's bits may differ by node
    Eigen::MatrixXd S;
    for (int it = 0;; ++it) {
        const Eigen::MatrixXd W = X.covariance_times(V);
        Eigen::MatrixXd H = V.transpose() * W;
        H = 0.5 * (H + H.transpose()).eval();  // symmetric up to rounding; make it exactly so
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> small(H);  // ascending eigenvalues
        S = small.eigenvectors();
        const Eigen::VectorXd theta = small.eigenvalues();
        double residual = 0;
        for (Index k = q - 1; k >= std::max<Index>(0, q - 2); --k)
            residual = std::max(residual, (W * S.col(k) - theta(k) * (V * S.col(k))).norm());
        const double scale = std::max(std::abs(theta(q - 1)), std::numeric_limits<double>::min());
        if (mpi::root_decides(comm, it >= iterations || residual <= kDirectionTolerance * scale)) break;
        V = distmat::orthonormalize(W);
        mpi::adopt_root_copy(comm, V.data(), static_cast<std::size_t>(V.size()));
    }
    Eigen::MatrixXd directions(cols, 2);
    directions.col(0) = V * S.col(q - 1);
    directions.col(1) = V * S.col(q - 2);
    fix_signs(directions);
    return directions;
}

void check_recovery_inputs(const distmat::DistMatrix& C, const std::vector<Index>& anchors, const Eigen::MatrixXd& B_breve) {
    if (C.rows() != C.cols()) throw InputError("recovery error: C is not square");
    if (anchors.empty()) throw InputError("recovery error: no anchors");
    if (B_breve.rows() != static_cast<Index>(anchors.size()) || B_breve.cols() != C.rows())
        throw InputError("recovery error: B_breve is " + std::to_string(B_breve.rows()) + " x " +
                         std::to_string(B_breve.cols()) + ", expected " + std::to_string(anchors.size()) + " x " +
                         std::to_string(C.rows()));
    for (const Index s : anchors)
        if (s < 0 || s >= C.rows()) throw InputError("recovery error: anchor id " + std::to_string(s) + " out of range");
}

void check_approximation_inputs(const distmat::DistMatrix& C, const Eigen::MatrixXd& B, const Eigen::MatrixXd& A) {
    if (C.rows() != C.cols()) throw InputError("approximation error: C is not square");
    if (B.rows() != C.rows()) throw InputError("approximation error: B does not match C");
    if (A.rows() != B.cols() || A.cols() != B.cols()) throw InputError("approximation error: A does not match B");
}
}  // namespace

Eigen::VectorXd recovery_errors(const distmat::DistMatrix& C, const std::vector<Index>& anchors,
                                const Eigen::MatrixXd& B_breve) {
    const mpi::Comm comm = comm_of(C);
    mpi::require_same_on_all_ranks(comm, {C.rows(), C.cols(), static_cast<std::int64_t>(anchors.size()),
                                          B_breve.rows(), B_breve.cols()},
                                   "recovery_errors");
    mpi::run_local_phase(comm, kStage, [&] { check_recovery_inputs(C, anchors, B_breve); });
    const Index K = static_cast<Index>(anchors.size());
    const Eigen::VectorXd inverse_p = inverse_row_sums(distmat::row_sums(C));

    // C̄_{S,:}ᵀ (N × K): the anchor rows, normalized by their own sums.
    Eigen::MatrixXd anchor_rows = gather_rows_transposed(C, anchors);
    for (Index k = 0; k < K; ++k) anchor_rows.col(k) *= inverse_p(anchors[static_cast<std::size_t>(k)]);

    // Residual r_ij = C̄_ij − Σ_k B̆_ki C̄_{s_k j} on this rank's entries, a panel at a time;
    // each row's squared norm is summed over the ranks of its process row.
    Eigen::MatrixXd B_breve_rows(C.local_rows(), K);  // B̆ᵀ at my rows
    for (Index il = 0; il < C.local_rows(); ++il) B_breve_rows.row(il) = B_breve.col(C.global_row(il)).transpose();
    const Eigen::VectorXd inverse_p_rows = rows_at_local_rows(C, inverse_p);
    Eigen::VectorXd local_squares = Eigen::VectorXd::Zero(C.local_rows());
    for_each_product_panel(C, B_breve_rows, anchor_rows, [&](Index j0, auto panel) {
        panel = inverse_p_rows.asDiagonal() * C.local().middleCols(j0, panel.cols()) - panel;
        local_squares += panel.rowwise().squaredNorm();
    });
    Eigen::VectorXd squares = Eigen::VectorXd::Zero(C.rows());
    for (Index il = 0; il < C.local_rows(); ++il) squares(C.global_row(il)) = local_squares(il);
    mpi::allreduce_inplace(comm, squares.data(), static_cast<std::size_t>(squares.size()), MPI_SUM);
    return squares.cwiseSqrt();
}

ApproximationError approximation_error(const distmat::DistMatrix& C, const Eigen::MatrixXd& B, const Eigen::MatrixXd& A) {
    const mpi::Comm comm = comm_of(C);
    mpi::require_same_on_all_ranks(comm, {C.rows(), C.cols(), B.rows(), B.cols(), A.rows(), A.cols()},
                                   "approximation_error");
    mpi::run_local_phase(comm, kStage, [&] { check_approximation_inputs(C, B, A); });

    // (B A) at my rows times B at my columns gives my entries of B A Bᵀ.
    const Eigen::MatrixXd BA_rows = rows_at_local_rows(C, B) * A;
    double sums[2] = {0, 0};  // Σ (C − BABᵀ)² off the diagonal, on it
    for_each_product_panel(C, BA_rows, B, [&](Index j0, auto panel) {
        panel = C.local().middleCols(j0, panel.cols()) - panel;
        for (Index jj = 0; jj < panel.cols(); ++jj) {  // take the diagonal entries out
            const Index j = C.global_col(j0 + jj);
            if (C.owner_row(j) != C.grid().my_row()) continue;
            double& entry = panel(C.local_row(j), jj);
            sums[1] += entry * entry;
            entry = 0;
        }
        sums[0] += panel.squaredNorm();
    });
    mpi::allreduce_inplace(comm, sums, 2, MPI_SUM);
    ApproximationError error;
    // total² = off-diagonal² + diagonal², so off_diagonal = sqrt(total² − diagonal²) as
    // the authors define it, without the cancellation of the subtraction.
    error.off_diagonal = std::sqrt(sums[0]);
    error.diagonal = std::sqrt(sums[1]);
    error.total = std::sqrt(sums[0] + sums[1]);
    return error;
}

Eigen::MatrixXd project_rows_2d(const distmat::DistMatrix& C, int iterations, Seed seed) {
    const mpi::Comm comm = comm_of(C);
    mpi::require_same_on_all_ranks(comm, {C.rows(), C.cols(), iterations, static_cast<std::int64_t>(seed)},
                                   "project_rows_2d");
    mpi::run_local_phase(comm, kStage, [&] {
        if (C.rows() < 1 || C.cols() < 2) throw InputError("project_rows_2d: C needs at least 2 columns");
        if (iterations < 0) throw InputError("project_rows_2d: negative iteration count");
    });
    const CenteredRows X(C);
    const Eigen::MatrixXd directions = leading_directions(X, C.cols(), iterations, seed, comm);
    Eigen::MatrixXd coordinates = X.times(directions);
    // Replicated bit for bit, whatever each rank's rounding did.
    mpi::adopt_root_copy(comm, coordinates.data(), static_cast<std::size_t>(coordinates.size()));
    return coordinates;
}

}  // namespace jsmf::eval
