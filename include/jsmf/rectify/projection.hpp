// SPDX-License-Identifier: MIT
// Rectification by projections onto the rank-K PSD, joint-stochastic and non-negative sets:
// alternating projection (AP, practical-jsmf Alg. 1), cyclic Douglas–Rachford (DR) and
// Dykstra (DP), the three iterations of the authors' codes/+rectification/.
#pragma once

#include <Eigen/Core>

#include <functional>
#include <limits>
#include <vector>

#include "jsmf/core/names.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/distmat/eig.hpp"
#include "jsmf/rectify/anderson.hpp"
#include "jsmf/rectify/stopping.hpp"

namespace jsmf::rectify {

/// How C is made low-rank, PSD, joint-stochastic and nonnegative (practical-jsmf §3): the
/// projections ap (Alg. 1, alternating projection), dr (cyclic Douglas–Rachford) and dp
/// (Dykstra), which rectify_by_projection runs; dc (diagonal completion, NIPS'15, dc.hpp);
/// none (the Baseline). One enum and one table of names for the flags, the options and the
/// logs (a model's record, model::Rectification, extends it by the compressed pipeline's enn).
enum class Rectifier { ap, dr, dp, dc, none };
inline const Names<Rectifier, 5>& names(Rectifier) {
    static const Names<Rectifier, 5> table{"ap", "dr", "dp", "dc", "none"};
    return table;
}
/// Is `method` one of the projections rectify_by_projection runs (ap, dr, dp)?
inline bool is_projection(Rectifier method) {
    return method == Rectifier::ap || method == Rectifier::dr || method == Rectifier::dp;
}

struct ProjectionOptions {
    Rectifier method = Rectifier::ap;  ///< ap, dr or dp
    int num_topics = 0;          ///< K; required, 2 <= K < N
    int max_iterations = 150;    ///< the papers' experiments run 150
    /// Stop early when ‖C_t − C_{t−1}‖_F / ‖C_t‖_F <= tolerance; 0 runs every iteration,
    /// as the authors' code does.
    double tolerance = 0;
    /// The truncated eigensolver's settings (num_eigenpairs is set to K). Its check for
    /// missed eigenvalues (eig.verify_steps > 0) runs in the first eig_check_every
    /// iterations, then every eig_check_every-th, and in every iteration for eig_check_every
    /// iterations after a miss or an unconverged solve; 1 checks every solve.
    distmat::EigOptions eig;
    int eig_check_every = 10;
    /// Inexact eigensolves: iteration t solves to max(eig.tolerance, eig_tolerance_factor ×
    /// change_{t−1}) relative residual, the accuracy the step needs; 0 keeps eig.tolerance.
    double eig_tolerance_factor = 0;
    /// AP only: over-relaxation C ← C + ω (F(C) − C) with F the AP step, from iteration
    /// `relaxation_start` on (1: plain AP). It follows plain AP's path to the same point,
    /// about twice as fast for ω near 2; the iterate may then leave the non-negative set,
    /// so a run that ends on a relaxed step gets one plain step more.
    double relaxation = 1;
    int relaxation_start = 5;
    /// AP only: Anderson acceleration on the rank-K factor (anderson.depth 0: none), from
    /// the first iteration after one whose change was at most anderson_below (0: from the
    /// start). AP's fixed points form a continuum: Anderson snaps the iterate onto a nearby
    /// one instead of following plain AP's slow drift, so it starts once that drift is small.
    AndersonOptions anderson{0};
    double anderson_below = 0;
    /// AP only: hold the iterate in float32 and do the products in single precision
    /// (each pass over C moves half the bytes). Everything of size N × p or smaller (the
    /// eigensolver's blocks, Rayleigh–Ritz, the factor, the trace's sums) stays in double,
    /// and the result is the float iterate widened back into C. Eigensolves are asked for
    /// no less than single_eig_floor relative residual, what float products can certify.
    /// Per-rank memory: local(C) doubles + local(C) floats.
    bool single_precision = false;
    /// The least relative eigen-residual a single-precision run asks for.
    double single_eig_floor = 1e-7;
};

/// One iteration, as written to /rectification.
struct ProjectionIteration {
    double change = 0;           ///< ‖C_t − C_{t−1}‖_F / ‖C_t‖_F of the iterate
    /// Mass on the wrong side of the non-negativity constraint where it is enforced:
    /// AP Σ max(−C_NOR, 0) (clipped), DR Σ max(−Y, 0) of the NN reflection's input Y,
    /// DP Σ max(−Z, 0) of the NN projection's input Z.
    double clipped_mass = 0;
    double sum = 0;              ///< Σ of the iterate (before the final normalization)
    int eig_iterations = 0;      ///< over the iteration's eigensolves (DR has two)
    int eig_products = 0;        ///< block products C·X, AP's fused one included (Lanczos' not counted)
    /// Passes over C's storage: the iteration's writes (AP's carries the next product) plus
    /// every unfused block product and Lanczos matrix-vector product
    int passes = 0;
    double eig_residual = 0;     ///< max_k ‖C u_k − θ_k u_k‖ / |θ_1|
    bool eig_converged = true;   ///< every eigensolve met its tolerance (and its check)
    int eig_missed = 0;          ///< eigenvalues above θ_K found and brought back by the check
    int eig_bound_corrections = 0;  ///< wrong λ_min bounds detected and lowered
    double seconds = 0;
    double norm = 0;             ///< ‖C_t‖_F of the new iterate
    /// ‖C − P_K(C)‖_F / ‖C‖_F of the iteration's input C: its distance from the rank-K PSD
    /// set (NaN for the first input). Its distance from the joint-stochastic set is
    /// |1 − sum|/N of the previous entry, from the non-negative set 0 (AP, DP).
    double distance_psd = std::numeric_limits<double>::quiet_NaN();
    /// AP: 0 a plain step, 2 an over-relaxed one, 1 an Anderson step, −1 an Anderson point
    /// rejected by the safeguard (the plain step from the last accepted point taken)
    int accelerated = 0;
};

/// What the next eigensolve starts from.
struct WarmStart {
    Eigen::MatrixXd block;       ///< N × p: the previous solve's whole block (empty: cold)
    /// N × p: the current iterate times `block`, formed by AP's pass that wrote the iterate
    /// (empty: none; the eigensolve then forms it)
    Eigen::MatrixXd product;
    double lower_bound = std::numeric_limits<double>::quiet_NaN();  ///< of λ_min; NaN: estimate
};

/// Everything a run needs to continue where it stopped (with the iterate C itself).
/// Copying deep-copies the increments (local).
struct ProjectionState {
    int iterations_done = 0;
    std::vector<WarmStart> eig;  ///< one per eigensolve of an iteration: AP 1, DR 2, DP 1
    /// DP: the increments of the PSD and the NN projections (N × N each, C's layout); the
    /// joint-stochastic one is a constant matrix, kept as the scalar js_increment.
    std::vector<distmat::DistMatrix> increments;
    double js_increment = 0;
    std::vector<ProjectionIteration> trace;
    FactorAnderson anderson;     ///< AP with acceleration: its history
    std::vector<TopicCheck> checks;  ///< the stopping rule's looks at the topics
    Eigen::MatrixXd checked_B;   ///< B of the last check (what the next one is compared with)
    StopReason stop_reason = StopReason::none;

    ProjectionState() = default;
    ProjectionState(ProjectionState&&) noexcept = default;
    ProjectionState& operator=(ProjectionState&&) noexcept = default;
    ProjectionState(const ProjectionState& other);
    ProjectionState& operator=(const ProjectionState& other);
};

struct ProjectionResult {
    ProjectionState state;
    bool converged = false;      ///< the tolerance was met (always false when it is 0)
};

/// The current iterate, as the callbacks see it. In double precision it is C itself. In
/// single precision C is brought up to date from the float iterate by the first matrix()
/// call after an iteration (a local pass over C), so a callback that does not look at
/// the matrix (most iterations: no check, no checkpoint due) costs nothing.
class IterateView {
public:
    explicit IterateView(distmat::DistMatrix& C, const distmat::DistMatrixF* single = nullptr)
        : C_(&C), single_(single), fresh_(single == nullptr) {}
    /// Local. The iterate in double precision.
    const distmat::DistMatrix& matrix() const;
    /// Local. The iterate has changed (the next matrix() widens it again).
    void changed() { fresh_ = single_ == nullptr; }

private:
    distmat::DistMatrix* C_;
    const distmat::DistMatrixF* single_;
    mutable bool fresh_;
};

/// Called on every rank after each iteration (the app prints from rank 0), and may write
/// a checkpoint. Must not call collectives unless every rank does the same.
using ProjectionProgress = std::function<void(const ProjectionState& state, const IterateView& C)>;

/// Called on every rank after each iteration (after `progress`): may look at the topics
/// of C (collectively: every rank the same calls), append to state.checks, and return
/// whether the run should stop (the root's answer counts).
using ProjectionMonitor = std::function<StopReason(ProjectionState& state, const IterateView& C)>;

/// Collective on C.grid(). Rectifies C in place by `options.method`; then C ← C / ΣC.
/// With P_K(X) = U max(Λ, 0) Uᵀ from the K largest algebraic eigenpairs of X,
/// J(X) = X + (1 − ΣX)/N² (nearest joint-stochastic) and N(X) = max(X, 0):
///
/// - ap (practical-jsmf Alg. 1; rectifyC_AP.m): C ← N(J(P_K(C))). U Λ₊ Uᵀ is formed
///   panel by panel as a local DGEMM into C's block-cyclic storage, fused with the shift
///   (Σ U Λ₊ Uᵀ = Σ_k λ₊_k (1ᵀu_k)², from U alone), the clamp and the trace's statistics.
///   Per-rank memory: local(C) + the eigensolver's ~5·N·p doubles.
/// - dr (rectifyC_DR.m): with reflections R_S = 2·proj_S − I and the two-set operator
///   T_{A,B} = (I + R_B R_A)/2, C ← T_{NN,PSD}(T_{JS,NN}(T_{PSD,JS}(C))). In closed form
///   T_{PSD,JS}(X) = P_K(X) + (1 − Σ(2P_K(X) − X))/N², T_{JS,NN}(X) = (X + |X + 2s|)/2
///   with s = (1 − ΣX)/N² (R_JS(X) = X + 2s, R_NN(Y) = |Y|), and
///   T_{NN,PSD}(X) = P_K(|X|) + min(X, 0):
///   two eigensolves (of X and of |X|) per iteration. The result is the DR iterate, as
///   the authors' (normalized); it lies in all three sets only at a fixed point, which
///   the trace's change and clipped_mass show. Per-rank memory: 2 × local(C) + one byte per
///   local entry (the signs of C₂).
/// - dp (Dykstra's cyclic projection, Boyle & Dykstra 1986; rectifyC_DP.m): with
///   increments I_PSD, I_JS, I_NN (0 at the start), each iteration does, for S = PSD,
///   JS, NN in turn: Y = proj_S(C + I_S); I_S ← C + I_S − Y; C ← Y. Unlike the authors'
///   code, the PSD step starts from the last iterate C and not from the input C (their
///   `nearestPSD(C − E_PSD, K)` never sees the NN step's output, so it is not
///   Dykstra's method and its iterates need not approach the intersection; see jsmf rectify --help).
///   Per-rank memory: 3 × local(C).
///
/// `resume` continues a run from its state (C must be the matching checkpointed iterate);
/// it is taken (moved from). `between` is called on every rank after an iteration's stop
/// decisions when another iteration follows: the place for checkpoints and stop requests
/// (the state then holds everything the next iteration reads).
ProjectionResult rectify_by_projection(distmat::DistMatrix& C, const ProjectionOptions& options,
                                       const ProjectionProgress& progress = {}, ProjectionState* resume = nullptr,
                                       const ProjectionMonitor& monitor = {}, const ProjectionProgress& between = {});

/// rectify_by_projection with method ap.
ProjectionResult alternating_projection(distmat::DistMatrix& C, ProjectionOptions options,
                                        const ProjectionProgress& progress = {}, ProjectionState* resume = nullptr);

}  // namespace jsmf::rectify
