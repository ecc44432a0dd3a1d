// SPDX-License-Identifier: MIT
// The oracle for RecoverKL: Arora et al.'s KLSolveExpGrad (anchor-word-recovery,
// fastRecover.py) transcribed line by line for one word, in the test's own words.
#pragma once

#include <Eigen/Core>

#include <cmath>
#include <limits>
#include <vector>

namespace jsmf::test {

struct KlTranscribed {
    Eigen::VectorXd alpha;   // the word's topic mixture
    int trials = 0;          // their `it` − 1: every step tried, kept or not
    bool converged = false;  // left by `new_obj < eps` or `gap < eps`
    int armijo_refusals = 0, curvature_retakes = 0;  // the line search's two branches taken
};

/// y: the word's row of C̄ (N); x: the anchors' rows of C̄ (K × N). eps: their epsilon;
/// cap: a trial limit their loop does not have (it is never reached where the caller
/// compares trial counts). Where their loop breaks at stepsize < 1e-6 it returns the
/// refused alpha; this returns the kept one, as jsmf does (the one difference, said in
/// solvers/kl.hpp).
inline KlTranscribed arora_kl_solve(const Eigen::VectorXd& y_in, const Eigen::MatrixXd& x_in, double eps, int cap) {
    const double c1 = 1e-4, c2 = 0.9;
    // y = clip(y, 0, 1); x = clip(x, 0, 1); mask = nonzero(y); y = y[mask]; x = x[:, mask]
    std::vector<Eigen::Index> mask;
    for (Eigen::Index j = 0; j < y_in.size(); ++j)
        if (std::min(std::max(y_in(j), 0.0), 1.0) != 0) mask.push_back(j);
    const Eigen::Index K = x_in.rows(), n = static_cast<Eigen::Index>(mask.size());
    Eigen::VectorXd y(n);
    Eigen::MatrixXd x(K, n);
    for (Eigen::Index m = 0; m < n; ++m) {
        y(m) = std::min(std::max(y_in(mask[static_cast<std::size_t>(m)]), 0.0), 1.0);
        for (Eigen::Index k = 0; k < K; ++k) x(k, m) = std::min(std::max(x_in(k, mask[static_cast<std::size_t>(m)]), 0.0), 1.0);
    }
    // x += 10**(-9); x /= x.sum(axis=1)[:, newaxis]
    x.array() += 1e-9;
    for (Eigen::Index k = 0; k < K; ++k) x.row(k) /= x.row(k).sum();
    auto kl = [&](const Eigen::VectorXd& proj) {
        double f = 0;
        for (Eigen::Index m = 0; m < n; ++m) f += y(m) * (std::log(y(m)) - std::log(proj(m)));
        return f;
    };
    Eigen::VectorXd alpha = Eigen::VectorXd::Constant(K, 1.0 / static_cast<double>(K));
    Eigen::VectorXd log_alpha = alpha.array().log();
    Eigen::VectorXd proj = x.transpose() * alpha;
    double new_obj = kl(proj);
    Eigen::VectorXd grad = -(x * y.cwiseQuotient(proj));
    double stepsize = 1;
    bool decreasing = false;
    KlTranscribed r;
    while (r.trials < cap) {
        const double eta = stepsize, old_obj = new_obj;
        const Eigen::VectorXd old_alpha = alpha, old_log_alpha = log_alpha, old_proj = proj;
        ++r.trials;
        log_alpha -= eta * grad;
        const double top = log_alpha.maxCoeff();  // logsum_exp
        log_alpha.array() -= top + std::log((log_alpha.array() - top).exp().sum());
        alpha = log_alpha.array().exp();
        proj = x.transpose() * alpha;
        new_obj = kl(proj);
        if (new_obj < eps) {
            r.converged = true;
            break;
        }
        const double grad_dot_delta = grad.dot(alpha - old_alpha);
        if (!(new_obj <= old_obj + c1 * stepsize * grad_dot_delta)) {
            ++r.armijo_refusals;
            stepsize /= 2.0;
            alpha = old_alpha;  // (their code breaks before this line; see above)
            log_alpha = old_log_alpha;
            proj = old_proj;
            new_obj = old_obj;
            if (stepsize < 1e-6) break;
            decreasing = true;
            continue;
        }
        const Eigen::VectorXd old_grad = grad;
        grad = -(x * y.cwiseQuotient(proj));
        if (!(grad.dot(alpha - old_alpha) >= c2 * grad_dot_delta) && !decreasing) {
            ++r.curvature_retakes;
            stepsize *= 2.0;
            alpha = old_alpha;
            log_alpha = old_log_alpha;
            grad = old_grad;
            proj = old_proj;
            new_obj = old_obj;
            continue;
        }
        decreasing = false;
        const double gap = alpha.dot((grad.array() - grad.minCoeff()).matrix());
        if (gap < eps) {
            r.converged = true;
            break;
        }
    }
    r.alpha = alpha;
    return r;
}

/// Their KL(y, log_y, proj) at a given alpha, with their clipping, mask, +1e-9 and
/// renormalization (y as given: the caller scales it as it hands it to the loop).
inline double arora_kl_objective(const Eigen::VectorXd& y_in, const Eigen::MatrixXd& x_in, const Eigen::VectorXd& alpha) {
    const Eigen::Index K = x_in.rows();
    Eigen::VectorXd mass = Eigen::VectorXd::Zero(K);
    for (Eigen::Index j = 0; j < y_in.size(); ++j)
        if (std::min(std::max(y_in(j), 0.0), 1.0) != 0)
            for (Eigen::Index k = 0; k < K; ++k) mass(k) += std::min(std::max(x_in(k, j), 0.0), 1.0) + 1e-9;
    double f = 0;
    for (Eigen::Index j = 0; j < y_in.size(); ++j) {
        const double y = std::min(std::max(y_in(j), 0.0), 1.0);
        if (y == 0) continue;
        double proj = 0;
        for (Eigen::Index k = 0; k < K; ++k) proj += alpha(k) * (std::min(std::max(x_in(k, j), 0.0), 1.0) + 1e-9) / mass(k);
        f += y * (std::log(y) - std::log(proj));
    }
    return f;
}

}  // namespace jsmf::test
