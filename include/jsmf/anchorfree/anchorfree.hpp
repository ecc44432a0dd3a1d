// SPDX-License-Identifier: MIT
// AnchorFree (Fu, Huang, Sidiropoulos, Shi, Hong, TPAMI 2019): topics without anchor words,
// by the minimum-determinant criterion on the square-root factor of P.
#pragma once

#include <Eigen/Core>

#include <string>
#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/distmat/eig.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::anchorfree {

/// B̃ = U Λ^{1/2} (AnchorFree §4.1): the F principal eigenpairs of P, each eigenvector
/// scaled by the square root of its eigenvalue, so P ≈ B̃B̃ᵀ.
struct SquareRootFactor {
    Eigen::MatrixXd B;             ///< N × F, replicated
    Eigen::VectorXd eigenvalues;   ///< F, descending, all > 0
    int eig_iterations = 0;
    bool eig_converged = false;
};

/// Collective on P.grid(). The F largest algebraic eigenpairs of symmetric P with jsmf's
/// distributed eigensolver (`eig`, whose num_eigenpairs is set to F). Throws StageFailed
/// (InputError) on every rank when λ_F <= 1e-12·λ_1: P then has fewer than F positive
/// eigenvalues and no real N × F square root (rectify P first, or ask for fewer topics).
/// Per-rank memory and communication: those of distmat::top_eigenpairs (about 5·N·(F + p)).
SquareRootFactor square_root_factor(const distmat::DistMatrix& P, int F, const distmat::EigOptions& eig);

/// The contiguous rows [begin, end) of an N-row replicated matrix that rank r of p
/// handles in the row-split steps (constraint checks, PDS's products): N·r/p to N·(r+1)/p.
struct RowShare {
    Index begin = 0, end = 0;
};
RowShare row_share(Index N, int rank, int ranks);

/// Local. log|det M| from an LU factorization (−inf for a singular M): the LP's progress
/// measure and PDS's barrier.
double log_abs_det(const Eigen::MatrixXd& M);

/// AnchorFree-LP (Alg. 1): max |det M| s.t. B̃M >= 0, 1ᵀB̃M = 1ᵀ, by cycling over the
/// columns of M; for column f with a = (M⁻¹)_{f,:}ᵀ (the co-factors divided by det M: a
/// negative det M swaps which LP is the max, harmless because both are solved), the LPs
/// max aᵀx and min aᵀx s.t.
/// B̃x >= 0, 1ᵀB̃x = 1, and the solution with the larger |aᵀx| becomes M(:, f) — the
/// determinant lemma gives det M' = det M · aᵀx, so |det M| never decreases once the
/// columns are feasible. M starts at I (the paper's).
struct LpOptions {
    /// Stop when a whole sweep over the F columns raised log|det M| by at most
    /// tolerance · max(1, |log|det M||) (from the second sweep; the first only makes M
    /// feasible). The paper says "until
    /// convergence"; a relative determinant change of 1e-12 is far below what moves C*.
    double tolerance = 1e-12;
    int max_sweeps = 100;
    /// Constraint screening (cutting planes): each LP is solved by Clp on a working set
    /// of the N rows of B̃; the rows are checked on every rank (its RowShare), and the
    /// `batch` most violated rows join the working set until none is violated by more
    /// than `feasibility` (an absolute bound on C*'s entries, which sum to 1 per column;
    /// Clp works to 1e-11 on its working rows): then the solution is optimal
    /// for all N rows, because the working-set LP is a relaxation whose optimum is
    /// feasible for the whole one. Rows stay in the set for the later LPs. 0: all rows.
    int batch = 0;  ///< 0: 2F + 10
    double feasibility = 1e-10;  ///< rows of the working set count as met at Clp's own tolerance
    bool screening = true;
};

struct LpReport {
    int sweeps = 0;
    bool converged = false;
    int lp_solves = 0;             ///< Clp solves (each screening round is one)
    Index working_rows = 0;        ///< the final working set (N without screening)
    std::vector<double> log_det;   ///< log|det M| after each sweep (M of the B̃ scaled to ‖1ᵀB̃‖ = 1)
    double lp_seconds = 0;         ///< in Clp, on the root
};

/// The factor and its report: C* = B̃M and E* = (C*ᵀC*)⁻¹ C*ᵀ P C* (C*ᵀC*)⁻¹.
struct AnchorFreeResult {
    Eigen::MatrixXd M;   ///< F × F
    Eigen::MatrixXd C;   ///< N × F, C* = B̃M: columns sum to 1, >= 0 up to the solver's tolerance
    Eigen::MatrixXd E;   ///< F × F, E* (not normalized; symmetric up to rounding)
    double min_C = 0;    ///< the most negative entry of C* (0 when none): the constraint's residue
};

/// Collective on `comm` (every rank passes the same replicated B̃). The root runs Clp and
/// decides; every rank checks its RowShare of the constraints. Returns M; B̃ is first
/// scaled so that 1ᵀB̃ has unit norm (LPs are scale-free; this fixes Clp's tolerances'
/// meaning), and M is returned for the B̃ given. Per-rank memory: B̃ (N·F), and on the
/// root Clp's working set (at most N·F). Communication per screening round: F doubles
/// broadcast, at most `batch` (id, violation) pairs per rank gathered.
Eigen::MatrixXd anchorfree_lp(const mpi::Comm& comm, const Eigen::MatrixXd& B, const LpOptions& options,
                              LpReport* report = nullptr);

/// Collective on `comm`. The same LP on a factor held by rows: this rank holds rows
/// [first_row, first_row + B_local.rows()) of an N-row B̃, the ranks' blocks contiguous
/// and in rank order (InputError on every rank otherwise). No rank holds N × F but the
/// root's working set (the screened rows; all of them without screening): each rank
/// checks its own rows, and the rows that join the working set (each column's extremes,
/// then at most `batch` a screening round) are sent to the root by the ranks that hold
/// them. Per-rank memory: B_local, and on the root Clp's working set. Communication per
/// screening round: F doubles broadcast, at most `batch` (id, violation) pairs per rank
/// gathered, the chosen ids broadcast and their rows (at most batch · F doubles) gathered.
/// The replicated overload calls this one with each rank's RowShare.
Eigen::MatrixXd anchorfree_lp(const mpi::Comm& comm, const Eigen::MatrixXd& B_local, Index first_row, Index N,
                              const LpOptions& options, LpReport* report = nullptr);

/// AnchorFree-PDS (Alg. 2): penalty dual splitting on min −log|det M| s.t. B̃M = Z,
/// Mᵀb = 1 (b = B̃ᵀ1), Z >= 0, with the paper's parameters (ρ₀ = 1, c = 0.5, η₀ = 1e-3,
/// μ = 1e-4) in the units below.
///
/// Where jsmf departs from the paper's text, and why. Transcribed literally (Alg. 3's
/// alternation of (22) and one linearized M step (23); η and ε absolute; ρ in P's units),
/// PDS does not converge on real corpora: on the Brown corpus (tf-idf P, K = 15) it ran
/// 100 outer × 500 inner iterations in 51 s to a violation of 1.3e-4 where the LP
/// converges in 0.09 s. Two causes compound:
///  - Alg. 3 is alternating projection between the range of B̃ and Z >= 0: once ρ is
///    small, M moves by about ρ per step, so a Decrease needs ~1/ρ steps.
///  - The dual step never fires: near a solution the violation is ρ‖U*‖, and the
///    multipliers of a vertex solution are large (‖U*‖ ≈ 9e3 on Brown, from the LP's KKT
///    conditions), while the test ‖B̃M − Z‖ <= η_k shrinks η with ρ; PDS degenerates into a
///    pure penalty method with ρ → 0.
/// So: Decrease (which Prop. 2 lets be any method reaching ‖e_k‖ <= ε_k) eliminates Z
/// (its exact minimizer is (22)) and takes damped Newton steps on the remaining smooth
/// function of M, μ being the damping, (23)'s proximal weight; ρ is measured in units of
/// λ_max(B̃ᵀB̃), so that at ρ₀ the penalty's curvature is 1 next to μ; η is relative to
/// ‖Z‖ and shrinks after a dual step only (Prop. 2 still holds: without dual steps ρ → 0
/// drives the violation below any η); ε is relative to ‖M‖ and ‖Z‖. On Brown this converges
/// in ~35 outer and ~200 Newton iterations, to C* within 1e-8 of the LP's.
struct PdsOptions {
    double rho0 = 1;       ///< ρ₀, in units of λ_max(B̃ᵀB̃) (B̃ scaled to ‖1ᵀB̃‖ = 1)
    double c = 0.5;        ///< shrink factor of ρ (after a failed test), η (after a dual step) and ε
    double eta0 = 1e-3;    ///< η₀: the violation ‖B̃M − Z‖/‖Z‖ below which the dual is updated
    double mu = 1e-4;      ///< μ: the proximal (damping) weight of the M step
    double epsilon0 = 1e-3;  ///< ε₀: Decrease's first tolerance on the relative moves of M and Z (the paper gives none)
    double armijo = 1e-4;    ///< σ of the Armijo rule f(M̂ + tD) <= f(M̂) + σ t ⟨∇f, D⟩
    /// Stop when ‖B̃M − Z‖_F <= tolerance · ‖Z‖_F and the outer step moved M by at most
    /// tolerance · ‖M‖_F (a KKT point of (14) to that accuracy: Prop. 2's limit). On the
    /// paper's synthetic P, 1e-7 leaves ‖C* − C‖²_F near 1e-12, far below its 1e-8.
    double tolerance = 1e-7;
    int max_outer = 100;
    /// Newton steps per Decrease at most (Brown: 27 at most).
    int max_inner = 500;
};

struct PdsReport {
    int outer = 0, inner = 0;      ///< Alg. 2 iterations, Decrease's Newton steps in all
    int cg_steps = 0;              ///< conjugate-gradient steps of the Newton systems, in all
    int dual_updates = 0, penalty_shrinks = 0;
    bool converged = false;
    double violation = 0;          ///< final ‖B̃M − Z‖_F / ‖Z‖_F
    double rho = 0;                ///< final ρ, in units of λ_max(B̃ᵀB̃)
    std::vector<double> violations;   ///< ‖B̃M − Z‖/‖Z‖ after each outer iteration
    std::vector<int> inner_counts;    ///< Decrease iterations of each outer iteration
};

/// Collective on `comm` (replicated B̃). Each rank holds Z and U for its RowShare of the
/// rows and forms its part of the gradient, of the Hessian's penalty blocks
/// Σ B̃_nᵀB̃_n (one F × F block per column, over its cut rows) and of the norms: one
/// allreduce of F³ + F² + 1 doubles per Newton step, one double per line-search trial.
/// M (F × F) is replicated; the Newton system (F(F − 1) unknowns) is solved on every
/// rank alike by preconditioned CG (O(F³) per CG step); the updates are the root's
/// decisions (the line search's steps and the stopping rules). M starts at I moved onto
/// Mᵀb = 1 (the paper's M = I, made feasible for the equality constraint). As in
/// anchorfree_lp, B̃ is scaled to ‖b‖ = 1 inside. Per-rank memory: B̃ (N·F, replicated),
/// about 6 · (N/p) · F doubles (this rank's rows of B̃, Z, U, B̃M + ρU and B̃D) and F³.
Eigen::MatrixXd anchorfree_pds(const mpi::Comm& comm, const Eigen::MatrixXd& B, const PdsOptions& options,
                               PdsReport* report = nullptr);

/// Collective on `comm`. The same on a factor held by rows, as anchorfree_lp's by-rows
/// overload (each rank its contiguous block, in rank order); per-rank memory about
/// 6 · B_local.rows() · F doubles and F³. The replicated overload calls this one with each
/// rank's RowShare.
Eigen::MatrixXd anchorfree_pds(const mpi::Comm& comm, const Eigen::MatrixXd& B_local, Index first_row, Index N,
                               const PdsOptions& options, PdsReport* report = nullptr);

/// Collective on `comm`. Checks that each rank's [first_row, first_row + local_rows) are
/// contiguous blocks of 0..N−1 in rank order; InputError on every rank naming `who` if not.
void require_row_blocks(const mpi::Comm& comm, Index first_row, Index local_rows, Index N, const std::string& who);

/// Collective on P.grid(). C* = B̃M and E* = (C*ᵀC*)⁻¹ C*ᵀ (P C*) (C*ᵀC*)⁻¹ (Alg. 1 line 7),
/// P C* by one distributed product (distmat::multiply_block, N·F doubles reduced). C* and E*
/// are the root's copies on every rank. Throws StageFailed (InputError) on every rank when
/// C*ᵀC* is singular (dependent topics: no E*).
AnchorFreeResult finish(const distmat::DistMatrix& P, const Eigen::MatrixXd& B, const Eigen::MatrixXd& M);

/// Collective on `comm`. finish for P = B̃B̃ᵀ itself, B̃ held by rows (anchorfree_lp's
/// by-rows layout; the compressed pipeline, whose rectified factor Y is B̃): C* = B̃M by
/// rows (this rank's), and E* = (C*ᵀC*)⁻¹ C*ᵀ P C* (C*ᵀC*)⁻¹ from K × K products only
/// (C*ᵀC* = MᵀGM and C*ᵀPC* = MᵀG²M, G = B̃ᵀB̃; E* = M⁻¹M⁻ᵀ in exact arithmetic). C (the
/// result's) holds this rank's rows; M and E* are the root's on every rank. Communication:
/// one reduction of F² doubles, one of a double. Throws StageFailed (InputError) on every
/// rank when C*ᵀC* is singular, as finish.
AnchorFreeResult finish_square_root(const mpi::Comm& comm, const Eigen::MatrixXd& B_local, const Eigen::MatrixXd& M);

/// What a model keeps of AnchorFree's C* and E*, by rows: B, B̆, A and each topic's
/// representative word.
struct AnchorFreeTopics {
    Eigen::MatrixXd B;        ///< this rank's rows: C* cut at 0 (its residue at the solver's tolerance), columns summed to 1 over all rows
    Eigen::MatrixXd B_breve;  ///< K × this rank's rows: p(z | w) by Bayes' rule with A's topic marginals (0 where B's row is)
    Eigen::MatrixXd A;        ///< E*/ΣE* when E* is a joint distribution (no entry below −1e-9 of its largest), else E* itself
    bool a_is_distribution = false;
    /// Topic by topic, in order, the occurring word with the largest B̆ not taken by an
    /// earlier topic (ties: the lowest id); B̆ there.
    std::vector<Index> representatives;
    Eigen::VectorXd representative_weight;
    Index zero_rows = 0;      ///< words, over all ranks, whose B̆ is 0 (B's row 0 under the marginals)
};

/// Collective on `comm`. The topics of C* (this rank's rows, starting at global row
/// `first_row`) and E*; `occurs`: this rank's words that may represent a topic (they
/// occur). Communication: K doubles reduced, and two reductions of a double and an id per
/// topic for the representatives. With a one-rank communicator on replicated C*, the
/// dense fit's topics.
AnchorFreeTopics topics_of(const mpi::Comm& comm, const Eigen::MatrixXd& C_local, Index first_row,
                           const Eigen::MatrixXd& E, const std::vector<bool>& occurs);

}  // namespace jsmf::anchorfree
