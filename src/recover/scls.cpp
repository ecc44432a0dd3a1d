// SPDX-License-Identifier: MIT
// Simplex-constrained least squares solvers: ExpGrad, ADMM-DR (Alg. 3), exact active set.
#include "jsmf/recover/scls.hpp"

#include <Eigen/LU>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace jsmf::recover {

Eigen::VectorXd project_to_simplex(const Eigen::VectorXd& x) {
    // Sort descending, find the largest ρ with u_ρ − (Σ_{j<=ρ} u_j − 1)/ρ > 0, shift by θ.
    std::vector<double> u(x.data(), x.data() + x.size());
    std::sort(u.begin(), u.end(), std::greater<double>());
    double running = 0, theta = 0;
    for (std::size_t j = 0; j < u.size(); ++j) {
        running += u[j];
        const double candidate = (running - 1.0) / static_cast<double>(j + 1);
        if (u[j] - candidate > 0) theta = candidate;
    }
    return (x.array() - theta).cwiseMax(0.0).matrix();
}

double duality_gap(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const Eigen::VectorXd& y) {
    const Eigen::VectorXd gradient = G * y - f;
    return gradient.dot(y) - gradient.minCoeff();
}

SclsSolution solve_expgrad(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const SclsOptions& options) {
    const auto K = f.size();
    SclsSolution s;
    s.y = Eigen::VectorXd::Constant(K, 1.0 / static_cast<double>(K));
    for (s.iterations = 0; s.iterations < options.max_iterations; ++s.iterations) {
        const Eigen::VectorXd gradient = G * s.y - f;
        s.gap = gradient.dot(s.y) - gradient.minCoeff();
        if (s.gap <= options.tolerance) {
            s.converged = true;
            return s;
        }
        // Shift by the minimum before exponentiating: the same update, no overflow.
        const Eigen::ArrayXd step = (-options.eta * (gradient.array() - gradient.minCoeff())).exp();
        s.y = (s.y.array() * step).matrix();
        s.y /= s.y.sum();
    }
    s.gap = duality_gap(G, f, s.y);
    s.converged = s.gap <= options.tolerance;
    return s;
}

AdmmDrSolver::AdmmDrSolver(const Eigen::MatrixXd& G, const SclsOptions& options)
    : G_(G), options_(options) {
    const auto K = G.rows();
    F_ = (options.gamma * G + Eigen::MatrixXd::Identity(K, K)).inverse();           // Alg. 3 line 3
    G_pinv_ = G.completeOrthogonalDecomposition().pseudoInverse();                   // for line 6
}

SclsSolution AdmmDrSolver::solve(const Eigen::VectorXd& f) const {
    SclsSolution s;
    const Eigen::VectorXd f_gamma = options_.gamma * f;                              // line 5
    s.y = project_to_simplex(G_pinv_ * f);                                           // line 6
    Eigen::VectorXd q = s.y;                                                         // line 7
    for (s.iterations = 0; s.iterations < options_.max_iterations; ++s.iterations) {
        s.gap = duality_gap(G_, f, s.y);
        if (s.gap <= options_.tolerance) {
            s.converged = true;
            return s;
        }
        const Eigen::VectorXd p = F_ * (2 * s.y - q + f_gamma);                      // line 9
        q += options_.lambda * (p - s.y);                                            // line 10
        s.y = project_to_simplex(q);                                                 // line 11
    }
    s.gap = duality_gap(G_, f, s.y);
    s.converged = s.gap <= options_.tolerance;
    return s;
}

SclsSolution solve_active_set(const Eigen::MatrixXd& G, const Eigen::VectorXd& f) {
    const Eigen::Index K = f.size();
    SclsSolution s;
    // Start at the best vertex: e_j minimizing ½G_jj − f_j.
    Eigen::Index start = 0;
    (0.5 * G.diagonal() - f).minCoeff(&start);
    s.y = Eigen::VectorXd::Zero(K);
    s.y(start) = 1;
    std::vector<bool> free_set(static_cast<std::size_t>(K), false);
    free_set[static_cast<std::size_t>(start)] = true;
    const double scale = std::max({G.cwiseAbs().maxCoeff(), f.cwiseAbs().maxCoeff(), 1e-300});
    const double tiny = 1e-13 * scale;
    for (s.iterations = 0; s.iterations < 50 * static_cast<int>(K) + 100; ++s.iterations) {
        std::vector<Eigen::Index> F;
        for (Eigen::Index i = 0; i < K; ++i)
            if (free_set[static_cast<std::size_t>(i)]) F.push_back(i);
        const Eigen::Index m = static_cast<Eigen::Index>(F.size());
        // KKT of min ½y_FᵀG_FF y_F − f_Fᵀy_F s.t. 1ᵀy_F = 1:  [G_FF 1; 1ᵀ 0][y; μ] = [f_F; 1].
        Eigen::MatrixXd kkt = Eigen::MatrixXd::Zero(m + 1, m + 1);
        Eigen::VectorXd rhs(m + 1);
        for (Eigen::Index a = 0; a < m; ++a) {
            for (Eigen::Index b = 0; b < m; ++b) kkt(a, b) = G(F[a], F[b]);
            kkt(a, m) = kkt(m, a) = 1;
            rhs(a) = f(F[a]);
        }
        rhs(m) = 1;
        const Eigen::VectorXd solution = kkt.completeOrthogonalDecomposition().solve(rhs);
        Eigen::VectorXd d = Eigen::VectorXd::Zero(K);
        for (Eigen::Index a = 0; a < m; ++a) d(F[a]) = solution(a) - s.y(F[a]);
        if (d.cwiseAbs().maxCoeff() <= 1e-15) {
            // Stationary on the free set: check the multipliers of the zero bounds,
            // λ_i = ∇_i + μ with μ = −∇ on the free set (Lagrangian ½yᵀGy − fᵀy + μ(1ᵀy − 1) − λᵀy).
            const Eigen::VectorXd gradient = G * s.y - f;
            double mu = 0;
            for (const auto i : F) mu -= gradient(i);
            mu /= static_cast<double>(m);
            Eigen::Index worst = -1;
            double most_negative = -tiny;
            for (Eigen::Index i = 0; i < K; ++i) {
                if (free_set[static_cast<std::size_t>(i)]) continue;
                const double lambda_i = gradient(i) + mu;
                if (lambda_i < most_negative) {
                    most_negative = lambda_i;
                    worst = i;
                }
            }
            if (worst < 0) break;  // KKT holds: optimal
            free_set[static_cast<std::size_t>(worst)] = true;
            continue;
        }
        // Step toward the subproblem's solution until a free coordinate hits 0.
        double alpha = 1;
        Eigen::Index blocking = -1;
        for (const auto i : F) {
            if (d(i) < 0) {
                const double limit = -s.y(i) / d(i);
                if (limit < alpha) {
                    alpha = limit;
                    blocking = i;
                }
            }
        }
        s.y += alpha * d;
        if (blocking >= 0) {
            s.y(blocking) = 0;
            free_set[static_cast<std::size_t>(blocking)] = false;
        }
    }
    s.y = s.y.cwiseMax(0.0);
    s.y /= s.y.sum();
    s.gap = duality_gap(G, f, s.y);
    s.converged = true;
    return s;
}

}  // namespace jsmf::recover
