// SPDX-License-Identifier: MIT
// Simplex-constrained least squares: min_{y in Δ} ‖U y − v‖², on (G = UᵀU, f = Uᵀv) or on U = QR.
#pragma once

#include <Eigen/Core>

#include <cstddef>
#include <vector>

#include "jsmf/core/names.hpp"

namespace jsmf::solvers {

/// Local. The Euclidean projection of x onto the simplex {y >= 0, Σy = 1} (sort-based,
/// O(K log K)).
Eigen::VectorXd project_to_simplex(const Eigen::VectorXd& x);

/// ADMM-DR's stopping rule. `step` is the authors' (solveSCLS_admmDR.m in moontae/JSMF):
/// ‖y_t − y_{t−1}‖₂ < tolerance. `gap`: duality_gap(G, f, y_t) < tolerance.
enum class AdmmStop { step, gap };
inline const Names<AdmmStop, 2>& names(AdmmStop) {
    static const Names<AdmmStop, 2> table{"step", "gap"};
    return table;
}

/// The scale convention is the authors' (moontae/JSMF, solveSCLS_expGrad.m): the objective
/// is ‖Uy − v‖², its gradient 2(Gy − f), and the duality gap is taken on that gradient.
struct SclsOptions {
    int max_iterations = 500;   ///< ExpGrad and ADMM-DR: the authors' T
    /// ExpGrad: on the duality gap (stop when gap < tolerance, strict, as the authors);
    /// ADMM-DR: on ‖y_t − y_{t−1}‖₂ or on the gap, per admm_stop. Not used by the active set.
    double tolerance = 1e-5;
    double eta = 50;            ///< ExpGrad learning rate on 2(Gy − f) (the authors' value)
    double lambda = 1.9;        ///< ADMM-DR relaxation (Alg. 3)
    double gamma = 3.0;         ///< ADMM-DR proximal parameter (Alg. 3)
    AdmmStop admm_stop = AdmmStop::step;
    /// Active set: total limit on its equality-constrained solves; 0 means 30·K, the cap of
    /// Bindel & Dong's solver the authors use (solveSCLS_activeSet.m). A word that reaches it
    /// is reported as not converged.
    int active_set_max_iterations = 0;
};

struct SclsSolution {
    Eigen::VectorXd y;          ///< on the simplex (solve_nnls_gram: y >= 0; capped: y >= 0, Σy <= 1)
    int iterations = 0;         ///< updates done (the authors' t at the stop, or T)
    bool converged = false;     ///< the solver's stopping rule held (active set: KKT to rounding)
    double gap = 0;             ///< the final duality gap (authors' scale, see duality_gap)
};

/// Local. The Frank–Wolfe duality gap of ‖Uy − v‖² at simplex point y, on the authors' scale:
/// with ∇ = 2(Gy − f), gap = ∇ᵀy − min_k ∇_k >= ‖Uy − v‖² − min_Δ ‖Uy − v‖² (0 at the optimum).
double duality_gap(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const Eigen::VectorXd& y);

/// Exponentiated gradient as the authors run it (solveSCLS_expGrad.m): from y = 1/K, each of
/// at most T iterations first updates y ← y∘exp(−η∇), ∇ = 2(Gy − f), normalized, then stops
/// if the gap at the new y is < tolerance. Local; thread-safe (no shared state).
SclsSolution solve_expgrad(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const SclsOptions& options);

/// ADMM by Douglas–Rachford splitting (practical-jsmf Alg. 3; recoverB.m and
/// solveSCLS_admmDR.m), for one G and many f: F = (γG + I)⁻¹ and G's Cholesky factor are
/// computed once, at construction.
class AdmmDrSolver {
public:
    AdmmDrSolver(const Eigen::MatrixXd& G, const SclsOptions& options);
    /// Local; thread-safe. y⁰ = Π_Δ(G⁻¹f), q⁰ = y⁰, then per iteration p = F(2y − q + γf),
    /// q ← q + λ(p − y), y = Π_Δ(q), then the stopping rule (options.admm_stop).
    SclsSolution solve(const Eigen::VectorXd& f) const;
    /// True if G was not positive definite to Cholesky and y⁰ uses the pseudo-inverse G⁺f.
    bool uses_pseudo_inverse() const { return use_pseudo_inverse_; }

private:
    Eigen::MatrixXd G_, F_, G_cholesky_, G_pinv_;
    bool use_pseudo_inverse_ = false;
    SclsOptions options_;
};

/// A thin QR factorization U = QR: Q is M × K with orthonormal columns, R is K × K upper
/// triangular (Householder). Local.
struct ThinQr {
    Eigen::MatrixXd Q, R;
};
ThinQr thin_qr(const Eigen::MatrixXd& U);

namespace detail {
/// The thin QR of R's free columns F (in the order they joined), kept up to date as F
/// changes, for solve_active_set_qr: QᵀR_F = [T; 0] with T upper triangular and Qᵀ the
/// recorded steps applied in order, a Householder reflector per joined column and Givens
/// rotations per removed one; Qᵀb is kept alongside. A join costs O(M) per reflector and
/// O(1) per rotation recorded before it, a removal O(m²), where factoring R_F afresh for
/// every solve costs O(M·m²): with tens of free columns at K = 100 that was most of LAW's
/// time (jobs/BENCHMARKS.md). Past 4K recorded steps a join factors F afresh (the cost and
/// the rounding of a long path stay bounded). Holds a reference to R. Local.
class FaceQr {
public:
    FaceQr(const Eigen::MatrixXd& R, const Eigen::VectorXd& b);
    FaceQr(Eigen::MatrixXd&&, const Eigen::VectorXd&) = delete;  // R must outlive the factor
    const std::vector<Eigen::Index>& columns() const { return F_; }  ///< F, in the order they joined
    void join(Eigen::Index column);                                 ///< F ← F ∪ {column}; not already in F
    void leave(std::size_t position);                               ///< drops F's member at `position`
    /// min ‖R_F s − b‖² s.t. 1ᵀs = 1 (the equality-constrained step of solveSCLS_activeSet.m),
    /// s in F's order: with b₂ = (Qᵀb)₁..ₘ, c = T⁻ᵀ1, l = (1 − cᵀb₂)/cᵀc, s = T⁻¹(b₂ + l c).
    /// Non-finite if R_F is singular.
    Eigen::VectorXd solve() const;

private:
    struct Step {
        Eigen::Index row = 0;
        Eigen::VectorXd v;    // a reflector I − τvvᵀ on rows row.. (v(0) = 1); empty: a rotation
        double tau = 0;
        double c = 1, s = 0;  // a rotation of rows (row, row + 1)
    };
    void refactor();
    static void rotate(const Step& step, double& upper, double& lower);
    static void apply(const Step& step, Eigen::VectorXd& w);

    const Eigen::MatrixXd& R_;
    Eigen::VectorXd b_;
    Eigen::MatrixXd T_;  // K × K; its top-left m × m is T
    Eigen::VectorXd qb_;
    std::vector<Eigen::Index> F_;
    std::vector<Step> steps_;
};
}  // namespace detail

/// The exact solution of min_{y ∈ Δ} ‖R y − b‖² by a primal active set working on R, never
/// on RᵀR (so errors grow with cond(R), not cond(R)²). With U = QR and b = Qᵀv this is
/// min ‖Uy − v‖² (they differ by the constant ‖v‖² − ‖b‖²); the authors do the same
/// (solveSCLS_activeSet.m, by Bindel & Dong). R may be any M × K matrix (U itself, too).
/// Lawson–Hanson-like: from the best vertex, the free set grows by the coordinate with the
/// most negative multiplier and shrinks at blocking constraints; each step solves the
/// equality-constrained problem on the free set by a QR of R's free columns, updated as
/// the set changes (detail::FaceQr). Converged means no multiplier is below the rounding
/// level of the authors' tolerance; reaching options.active_set_max_iterations solves means
/// not converged. Local; thread-safe.
SclsSolution solve_active_set_qr(const Eigen::MatrixXd& R, const Eigen::VectorXd& b, const SclsOptions& options = {});

/// The same problem on (G, f) (Nocedal & Wright, Alg. 16.3, KKT systems in G): errors grow
/// with cond(G) = cond(U)², which is why recover uses solve_active_set_qr; kept as the
/// comparison. Same cap and convergence report. Local; thread-safe.
SclsSolution solve_active_set_gram(const Eigen::MatrixXd& G, const Eigen::VectorXd& f,
                                   const SclsOptions& options = {});

/// Nonnegative least squares on (G, f): min ½hᵀGh − fᵀh s.t. h >= 0, i.e. min_{h>=0} ‖Uh − v‖²
/// for G = UᵀU positive definite and f = Uᵀv (XRAY's and SNPA's projections). Lawson–Hanson
/// active set: from h = 0, the passive set P grows by the coordinate with the largest
/// w_j = (f − Gh)_j > rounding level (the most negative multiplier of h_j >= 0); each inner
/// step solves G_PP z_P = f_P (LDLT) and, if some z_j <= 0, moves from h toward z until the
/// first coordinate reaches 0 and drops it. An entering coordinate whose first solve is not
/// positive is rounding: it is left out (Lawson & Hanson's guard against cycling). Converged
/// means KKT to rounding: h >= 0, ∇ = Gh − f >= −tol everywhere and |∇_j| <= tol on h_j > 0;
/// options.active_set_max_iterations caps the solves (0: 30·K) and reports not converged.
/// The feasible set is unbounded, so there is no Frank–Wolfe gap: gap holds the KKT
/// residual max(‖min(∇, 0)‖∞, |∇ᵀh|) on the authors' scale, ∇ = 2(Gh − f) (0 at the optimum).
/// Local; thread-safe. K = 0 gives the empty h.
SclsSolution solve_nnls_gram(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const SclsOptions& options = {});

/// The capped simplex: min ½hᵀGh − fᵀh s.t. h >= 0, Σh <= 1 (SNPA's projection onto
/// conv{0, U's columns}), G positive definite. First the NNLS solution h⁰ (solve_nnls_gram);
/// if Σh⁰ <= 1 it is feasible and optimal. Otherwise the cap is active at the optimum h*:
/// if Σh* < 1, h* would be a local, hence (convexity) the global, minimizer over h >= 0,
/// which is unique (G positive definite) and is h⁰ with Σh⁰ > 1 — a contradiction; so h*
/// solves the simplex problem Σh = 1, by solve_active_set_gram. converged and iterations
/// are those of the solver(s) run (iterations summed); gap is the Frank–Wolfe gap over the
/// capped simplex (vertices 0 and e_k) on the authors' scale: ∇ᵀh − min(0, min_k ∇_k) with
/// ∇ = 2(Gh − f), an upper bound of ‖Uh − v‖² − min. Local; thread-safe.
SclsSolution solve_capped_simplex_gram(const Eigen::MatrixXd& G, const Eigen::VectorXd& f,
                                       const SclsOptions& options = {});

}  // namespace jsmf::solvers
