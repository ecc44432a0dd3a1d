// SPDX-License-Identifier: MIT
// The K largest algebraic eigenpairs of a symmetric DistMatrix (truncated eigensolver).
#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <functional>
#include <limits>

#include "jsmf/core/names.hpp"
#include "jsmf/core/types.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::distmat {

/// Which truncated eigensolver: the iterative one (default) or ScaLAPACK's direct one.
enum class EigMethod { subspace, direct };
inline const Names<EigMethod, 2>& names(EigMethod) {
    static const Names<EigMethod, 2> table{"subspace", "direct"};
    return table;
}

/// Where the iterative solver stands after a round (for progress lines on long solves).
struct EigRound {
    int round = 0;                ///< filter + Rayleigh–Ritz rounds done
    int products = 0;             ///< block products so far
    int lanczos_products = 0;     ///< single-vector products so far
    double residual = 0;          ///< max_k<=K ‖C u_k − θ_k u_k‖ / |θ_1| after the round
    /// The block after the round's Rayleigh–Ritz step (Ritz vectors, orthonormal) and its
    /// product C·block, this rank's rows (row-distributed solver) or whole: with
    /// `lower_bound`, what a later solve needs to continue from here (a checkpoint: pass
    /// them as warm_start and warm_product, the bound as options.lower_bound and the round
    /// as options.first_round).
    const Eigen::MatrixXd* block = nullptr;
    const Eigen::MatrixXd* product = nullptr;
    double lower_bound = 0;
};
/// Called on every rank after each round with the same values (the block and product:
/// each rank's own rows). May call collectives only as every rank does.
using EigProgress = std::function<void(const EigRound&)>;

struct EigOptions {
    EigMethod method = EigMethod::subspace;
    int num_eigenpairs = 0;       ///< K; required, 1 <= K < N
    int oversampling = -1;        ///< extra block vectors; -1: max(10, K/5)
    double tolerance = 1e-9;      ///< stop when ‖C u_k − θ_k u_k‖ <= tolerance · |θ_1| for k <= K
    int max_iterations = 300;     ///< filter + Rayleigh–Ritz rounds
    int chebyshev_degree = 8;     ///< filter degree m: m − 1 products (the first reuses C·X) plus the Rayleigh–Ritz one
    int lanczos_steps = 24;       ///< for the lower spectral bound
    /// A known lower bound of λ_min (e.g. from the previous AP iteration); NaN: estimate
    /// it with `lanczos_steps` Lanczos steps.
    double lower_bound = std::numeric_limits<double>::quiet_NaN();
    /// A bound λ_min is known to satisfy (from the operator's structure, e.g. Gershgorin):
    /// no estimate of λ_min, given or computed, is taken below it. −∞: none known. The
    /// same on every rank.
    double spectrum_floor = -std::numeric_limits<double>::infinity();
    /// Lanczos steps of the check, after convergence, that no eigenvalue above θ_K was
    /// missed (on the operator deflated by the K vectors found); 0: no check.
    int verify_steps = 10;
    int max_recoveries = 3;       ///< missed eigenpairs brought back before giving up
    Seed seed = 7;                ///< random start (and extra) vectors
    /// Rounds already done by the solve this one continues (a checkpoint's): the later
    /// rounds' random draws (Lanczos starts) are keyed by the round, so the continuation
    /// draws what the uninterrupted solve would have.
    int first_round = 0;
    EigProgress progress;         ///< optional; subspace method only
};

struct EigResult {
    Eigen::VectorXd values;       ///< K eigenvalues, descending (largest algebraic first)
    Eigen::MatrixXd vectors;      ///< N × K orthonormal eigenvectors, replicated
    Eigen::VectorXd residuals;    ///< ‖C u_k − θ_k u_k‖ per pair
    Eigen::MatrixXd block;        ///< N × p: the whole final block, the best warm start
    Eigen::MatrixXd product;      ///< N × p: C · block (the last product, rotated with the block)
    double lower_bound = 0;       ///< the estimate of λ_min the filter damped down to (last used)
    /// λ_min estimate from the verification's Lanczos run (NaN without one): a lower
    /// bound for the next solve on a nearby matrix.
    double next_lower_bound = std::numeric_limits<double>::quiet_NaN();
    int iterations = 0;           ///< filter + Rayleigh–Ritz rounds
    int block_products = 0;       ///< C·X products (each N × block)
    int lanczos_products = 0;     ///< C·x products of the Lanczos runs (bound and check)
    int bound_corrections = 0;    ///< times a Ritz value fell below the bound (it was wrong)
    int missed = 0;               ///< eigenvalues above θ_K the check found outside the block
    /// The check ran and detected no miss. It detects: `verify_steps` Lanczos steps resolve
    /// a missed eigenvalue well above θ_K, not one within a hair of it.
    bool verified = false;
    bool converged = false;       ///< a status, not an exception
};

/// Local. The solver's block for K eigenpairs: K + `oversampling`, or K + max(10, K/5)
/// when it is negative (the default), before the cap at N.
inline int eig_block_columns(int K, int oversampling = -1) {
    return K + (oversampling >= 0 ? oversampling : std::max(10, K / 5));
}

/// Collective on C.grid(). The K largest *algebraic* eigenpairs of symmetric C.
///
/// Chebyshev-filtered block subspace iteration (Zhou & Saad): co-occurrence matrices are
/// indefinite, often with negative eigenvalues larger in magnitude than λ_K, so a plain
/// subspace iteration would find the wrong ones. A short Lanczos run bounds λ_min from
/// below; each round applies the degree-m Chebyshev polynomial that damps [λ_min, θ_p]
/// (θ_p the smallest Ritz value of the block) and grows everything above it, then
/// orthonormalizes and does Rayleigh–Ritz on the small p×p problem. Products C·X are
/// local DGEMMs on the block-cyclic pieces plus one N×p allreduce; X (N×p, p = K +
/// oversampling) is replicated and identical on every rank.
///
/// `warm_start` (N × k, any k <= p; e.g. the previous AP iteration's block) seeds the
/// block, which cuts the rounds needed when C changed little. With `warm_product` = C ·
/// warm_start already at hand (warm_start then N × p and orthonormal, as a previous
/// result's block), the first Rayleigh–Ritz uses it and the solve costs no product at all
/// when that already meets the tolerance: AP computes it while it writes C (one pass).
/// The λ_min bound (a Lanczos run unless given) is estimated only when a filter needs it.
///
/// Guarantees. (1) The bound on λ_min is an estimate; a Ritz value below it proves it
/// wrong (Ritz values lie inside the spectrum), and the filter would then amplify what it
/// should damp: the bound is lowered (a fresh Lanczos estimate) and counted in
/// bound_corrections. (2) Small residuals show eigenpairs, not that they are the top K:
/// after convergence, `verify_steps` Lanczos steps on (I − X Xᵀ) C (I − X Xᵀ), X the K
/// vectors found, give a Ritz value θ' <= the largest eigenvalue outside span(X); if
/// θ' > θ_K + ‖R‖_F (R the K residuals), an eigenvalue above θ_K was missed: its Ritz
/// vector joins the block and the iteration goes on (counted in `missed`, at most
/// max_recoveries times; then converged = false). (3) Every decision (converged, the
/// filter's branch, Lanczos' early stop, missed or not) is the root's, broadcast, and
/// the small Rayleigh–Ritz eigenproblems are the root's too, so ranks never disagree on
/// how many collectives follow, whatever their BLAS. With
/// options.method == direct this calls top_eigenpairs_direct (and ignores warm_start).
/// Per-rank memory: local(C) + about 5·N·p doubles. Communication per product: N·p doubles.
EigResult top_eigenpairs(const DistMatrix& C, const EigOptions& options,
                         const Eigen::MatrixXd* warm_start = nullptr, const Eigen::MatrixXd* warm_product = nullptr);

/// Collective on C.grid(). The same on C in single precision (subspace method only):
/// products as multiply_block(DistMatrixF), everything else in double.
EigResult top_eigenpairs(const DistMatrixF& C, const EigOptions& options,
                         const Eigen::MatrixXd* warm_start = nullptr, const Eigen::MatrixXd* warm_product = nullptr);

/// A symmetric operator X ↦ A X on replicated n × p blocks. Collective: every rank calls
/// it with the same X and gets the same result.
using SymmetricOperator = std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>;

/// Collective (through `op`, and on `comm` for the argument checks). The same method as
/// above on an operator of dimension n: e.g. G Gᵀ for an off-diagonal block G of C (DC).
EigResult top_eigenpairs(const SymmetricOperator& op, Index n, const mpi::Comm& comm, const EigOptions& options,
                         const Eigen::MatrixXd* warm_start = nullptr, const Eigen::MatrixXd* warm_product = nullptr);

/// Collective on `comm` (and through `op`). The same method on an operator whose n × p
/// blocks are distributed by rows as `rows` says (n = rows.size()): `op` maps this rank's
/// rows of X to its rows of A X, and `warm_start`, `warm_product` and the result's vectors,
/// block and product are this rank's rows too. Orthonormalization is CholeskyQR2 where the
/// block allows it, else a tall-skinny Householder QR (distmat::orthonormal_columns), inner
/// products are sums over ranks; every decision is still the root's. The start block
/// depends only on the seed, not on the rank count.
/// Per-rank memory: about 5·(n/P)·p doubles besides the operator's; communication per
/// round: a few p × p reductions (and the fallback QR's P·p² gather), plus what `op` moves.
EigResult top_eigenpairs(const SymmetricOperator& op, const RowPartition& rows, const mpi::Comm& comm,
                         const EigOptions& options, const Eigen::MatrixXd* warm_start = nullptr,
                         const Eigen::MatrixXd* warm_product = nullptr);

/// Collective on C.grid(). The same K largest algebraic eigenpairs by ScaLAPACK's direct
/// PDSYEVR (RANGE='I'): the fallback and a second oracle. It asks for max(K, 2·block)
/// pairs, because PDSYEVR 2.2.1 silently returns wrong vectors for fewer, and checks
/// the residuals (converged = false when they are not small).
/// Per-rank memory: 3 × local(C) (a copy of C that PDSYEVR destroys, the N×N Z) plus
/// ScaLAPACK's workspace; slow (O(N³)): for tests and small N.
EigResult top_eigenpairs_direct(const DistMatrix& C, const EigOptions& options);

/// Collective on C.grid(). Y = C X for a replicated N × p block X; Y replicated.
Eigen::MatrixXd multiply_block(const DistMatrix& C, const Eigen::MatrixXd& X);

/// Collective on C.grid(). The same for C in single precision: X is rounded to float,
/// the local SGEMM accumulates in float (relative error about √n·2⁻²⁴ per entry), the
/// sums across ranks are in double.
Eigen::MatrixXd multiply_block(const DistMatrixF& C, const Eigen::MatrixXd& X);

/// Collective on C.grid(). A lower estimate of λ_min(C) from `steps` Lanczos steps
/// (smallest Ritz value minus its residual bound, widened by 1% of the spread).
double lowest_eigenvalue_bound(const DistMatrix& C, int steps, Seed seed);

/// Local. A rows × cols block of standard normal entries from `seed`: the same on every
/// rank for the same seed (start blocks of the iterative solvers).
Eigen::MatrixXd random_block(Index rows, Index cols, Seed seed);
/// Local. An orthonormal basis of span(X) (Householder QR), X's shape.
Eigen::MatrixXd orthonormalize(const Eigen::MatrixXd& X);

}  // namespace jsmf::distmat
