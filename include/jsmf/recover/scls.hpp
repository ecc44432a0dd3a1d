// SPDX-License-Identifier: MIT
// Simplex-constrained least squares: min_{y in Δ} ½‖U y − v‖² through G = UᵀU and f = Uᵀv.
#pragma once

#include <Eigen/Core>

namespace jsmf::recover {

/// Local. The Euclidean projection of x onto the simplex {y >= 0, Σy = 1} (sort-based,
/// O(K log K)).
Eigen::VectorXd project_to_simplex(const Eigen::VectorXd& x);

struct SclsOptions {
    int max_iterations = 500;   ///< ExpGrad and ADMM-DR
    double tolerance = 1e-5;    ///< on the duality gap ∇ᵀy − min_k ∇_k (all solvers)
    double eta = 50;            ///< ExpGrad learning rate (the authors' best-known value)
    double lambda = 1.9;        ///< ADMM-DR relaxation (Alg. 3)
    double gamma = 3.0;         ///< ADMM-DR proximal parameter (Alg. 3)
};

struct SclsSolution {
    Eigen::VectorXd y;          ///< on the simplex
    int iterations = 0;
    bool converged = false;     ///< the duality gap reached the tolerance
    double gap = 0;             ///< the final duality gap
};

/// Local. The Frank–Wolfe duality gap of q(y) = ½yᵀGy − fᵀy at simplex point y:
/// ∇q(y)ᵀy − min_k ∇q(y)_k >= q(y) − min_Δ q (zero exactly at the optimum).
double duality_gap(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const Eigen::VectorXd& y);

/// Exponentiated gradient (Arora et al.): y ← y∘exp(−η∇q(y)), normalized; starts uniform.
/// Local; thread-safe (no shared state).
SclsSolution solve_expgrad(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const SclsOptions& options);

/// ADMM by Douglas–Rachford splitting (practical-jsmf Alg. 3), for one G and many f:
/// F = (γG + I)⁻¹ and G's factorization are computed once, at construction.
class AdmmDrSolver {
public:
    AdmmDrSolver(const Eigen::MatrixXd& G, const SclsOptions& options);
    /// Local; thread-safe. Alg. 3 lines 5–12 for one word: y⁰ = Π_Δ(G⁻¹f), q⁰ = y⁰, then
    /// p = F(2y − q + γf), q ← q + λ(p − y), y = Π_Δ(q) until the duality gap is small.
    SclsSolution solve(const Eigen::VectorXd& f) const;

private:
    Eigen::MatrixXd G_, F_, G_pinv_;
    SclsOptions options_;
};

/// The exact solution by a primal active-set method (Nocedal & Wright, Alg. 16.3): the
/// working set holds the coordinates fixed at 0; each step solves the equality-constrained
/// problem on the free set by its KKT system, or drops the constraint with the most
/// negative multiplier. Finite; exact up to rounding. Local; thread-safe.
SclsSolution solve_active_set(const Eigen::MatrixXd& G, const Eigen::VectorXd& f);

}  // namespace jsmf::recover
