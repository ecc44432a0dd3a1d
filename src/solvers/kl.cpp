// SPDX-License-Identifier: MIT
// RecoverKL's per-word exponentiated gradient with Arora et al.'s line search, many words in lockstep.
#include "jsmf/solvers/kl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "jsmf/core/error.hpp"
#include "jsmf/distmat/blas.hpp"

namespace jsmf::solvers {

namespace {

constexpr double kFloor = 1e-9;        // added to the anchors' rows (their x += 10**(-9))
constexpr double kArmijo = 1e-4;       // c1
constexpr double kCurvature = 0.9;     // c2
constexpr double kSmallestStep = 1e-6;

/// One word's state between trials.
struct WordState {
    Eigen::VectorXd log_y, y, grad;
    double objective = 0, step = 1, gap = std::numeric_limits<double>::infinity();
    bool decreasing = false, done = false, converged = false;
    int trials = 0;
};

double duality_gap_of(const Eigen::VectorXd& y, const Eigen::VectorXd& grad) {
    return y.dot((grad.array() - grad.minCoeff()).matrix());
}

/// The trial point of exponentiated gradient: log y − η∇, normalized in log space.
void exponentiated_step(const WordState& w, Eigen::VectorXd& log_trial, Eigen::VectorXd& trial) {
    log_trial = w.log_y - w.step * w.grad;
    const double top = log_trial.maxCoeff();
    log_trial.array() -= top + std::log((log_trial.array() - top).exp().sum());
    trial = log_trial.array().exp().matrix();
}

}  // namespace

KlRecovery::KlRecovery(const Eigen::MatrixXd& U) : X_(U.cwiseMax(0.0).cwiseMin(1.0).array() + kFloor) {
    JSMF_REQUIRE(U.cols() >= 1, "KlRecovery: need at least one anchor");
}

double KlRecovery::objective(const Eigen::VectorXd& v_in, const Eigen::VectorXd& y) const {
    JSMF_REQUIRE(v_in.size() == X_.rows() && y.size() == X_.cols(), "KlRecovery::objective: size mismatch");
    Eigen::VectorXd v = v_in.cwiseMax(0.0).cwiseMin(1.0);
    if (v.sum() > 0) v /= v.sum();
    Eigen::VectorXd mass = Eigen::VectorXd::Zero(X_.cols());  // each anchor's mass on the support
    for (Index j = 0; j < v.size(); ++j)
        if (v(j) > 0) mass += X_.row(j).transpose();
    const Eigen::VectorXd weights = y.cwiseQuotient(mass);
    double f = 0;
    for (Index j = 0; j < v.size(); ++j)
        if (v(j) > 0) f += v(j) * (std::log(v(j)) - std::log(X_.row(j).dot(weights)));
    return f;
}

std::vector<SclsSolution> KlRecovery::solve(const Eigen::MatrixXd& V_in, const SclsOptions& options) const {
    const Index N = X_.rows(), K = X_.cols(), b = V_in.cols();
    JSMF_REQUIRE(V_in.rows() == N, "KlRecovery::solve: the rows of C-bar do not match the anchors'");
    Eigen::MatrixXd V = V_in.cwiseMax(0.0).cwiseMin(1.0);
    for (Index c = 0; c < b; ++c)
        if (V.col(c).sum() > 0) V.col(c) /= V.col(c).sum();
    Eigen::MatrixXd log_V = Eigen::MatrixXd::Zero(N, b), support(N, b);
    for (Index c = 0; c < b; ++c)
        for (Index j = 0; j < N; ++j) {
            support(j, c) = V(j, c) > 0 ? 1.0 : 0.0;
            if (V(j, c) > 0) log_V(j, c) = std::log(V(j, c));
        }
    // x̃ = X diag(scale_w) per word w: scale_w = 1 / (each anchor's mass on w's support).
    Eigen::MatrixXd scale = distmat::transpose_times(X_, support);  // K × b
    for (Index c = 0; c < b; ++c)
        if (support.col(c).sum() > 0) scale.col(c) = scale.col(c).cwiseInverse();
        else scale.col(c).setOnes();  // no support: f ≡ 0, any scale will do

    // The products over a set of words (columns `cols`, at the points `points`, K × a).
    auto projections = [&](const std::vector<Index>& cols, const Eigen::MatrixXd& points) {
        Eigen::MatrixXd weights(K, static_cast<Index>(cols.size()));
        for (std::size_t a = 0; a < cols.size(); ++a)
            weights.col(static_cast<Index>(a)) = scale.col(cols[a]).cwiseProduct(points.col(static_cast<Index>(a)));
        return distmat::times(X_, weights);  // N × a: x̃y per word
    };
    // Off the support v_j = 0 and log v_j is stored as 0, so those terms are 0 · (0 − log p_j)
    // = 0 (p_j >= 1e-9 > 0): whole columns go through the vectorized log and quotient.
    auto objective_of = [&](Index col, const Eigen::MatrixXd& P, Index a) {
        return (V.col(col).array() * (log_V.col(col).array() - P.col(a).array().log())).sum();
    };
    auto gradients = [&](const std::vector<Index>& cols, const Eigen::MatrixXd& P, const std::vector<Index>& at) {
        Eigen::MatrixXd ratio(N, static_cast<Index>(cols.size()));
        for (std::size_t a = 0; a < cols.size(); ++a)
            ratio.col(static_cast<Index>(a)) = V.col(cols[a]).array() / P.col(at[a]).array();
        Eigen::MatrixXd G = distmat::transpose_times(X_, ratio);  // K × a
        for (std::size_t a = 0; a < cols.size(); ++a) G.col(static_cast<Index>(a)) = -scale.col(cols[a]).cwiseProduct(G.col(static_cast<Index>(a)));
        return G;
    };

    std::vector<WordState> words(static_cast<std::size_t>(b));
    std::vector<Index> all(static_cast<std::size_t>(b));
    for (Index c = 0; c < b; ++c) all[static_cast<std::size_t>(c)] = c;
    {
        const Eigen::MatrixXd start = Eigen::MatrixXd::Constant(K, b, 1.0 / static_cast<double>(K));
        const Eigen::MatrixXd P = projections(all, start);
        const Eigen::MatrixXd G = gradients(all, P, all);
        for (Index c = 0; c < b; ++c) {
            WordState& w = words[static_cast<std::size_t>(c)];
            w.y = start.col(c);
            w.log_y = w.y.array().log().matrix();
            w.objective = objective_of(c, P, c);
            w.grad = G.col(c);
            w.gap = duality_gap_of(w.y, w.grad);
        }
    }

    std::vector<Index> active = all;
    while (!active.empty()) {
        const Index a = static_cast<Index>(active.size());
        Eigen::MatrixXd log_trials(K, a), trials(K, a);
        for (Index t = 0; t < a; ++t) {
            WordState& w = words[static_cast<std::size_t>(active[static_cast<std::size_t>(t)])];
            Eigen::VectorXd log_trial, trial;
            exponentiated_step(w, log_trial, trial);
            log_trials.col(t) = log_trial;
            trials.col(t) = trial;
            ++w.trials;
        }
        const Eigen::MatrixXd P = projections(active, trials);
        // Armijo first; the accepted trials need their gradients (one product for all).
        std::vector<Index> accepted_cols, accepted_at;
        std::vector<double> accepted_objective, accepted_descent;
        for (Index t = 0; t < a; ++t) {
            const Index col = active[static_cast<std::size_t>(t)];
            WordState& w = words[static_cast<std::size_t>(col)];
            const double f = objective_of(col, P, t);
            if (f < options.tolerance) {  // fits its row to the tolerance: take the trial and stop
                w.y = trials.col(t);
                w.log_y = log_trials.col(t);
                w.objective = f;
                w.done = w.converged = true;
                continue;
            }
            const double descent = w.grad.dot(trials.col(t) - w.y);
            if (!(f <= w.objective + kArmijo * w.step * descent)) {
                w.step /= 2;
                w.decreasing = true;
                if (w.step < kSmallestStep) w.done = true;  // keeps y: no better point found
                continue;
            }
            accepted_cols.push_back(col);
            accepted_at.push_back(t);
            accepted_objective.push_back(f);
            accepted_descent.push_back(descent);
        }
        if (!accepted_cols.empty()) {
            const Eigen::MatrixXd G = gradients(accepted_cols, P, accepted_at);
            for (std::size_t u = 0; u < accepted_cols.size(); ++u) {
                WordState& w = words[static_cast<std::size_t>(accepted_cols[u])];
                const Index t = accepted_at[u];
                const Eigen::VectorXd grad = G.col(static_cast<Index>(u));
                if (!(grad.dot(trials.col(t) - w.y) >= kCurvature * accepted_descent[u]) && !w.decreasing) {
                    w.step = std::min(2 * w.step, 1e300);  // too short a step: take it back, try a longer one
                    continue;
                }
                w.decreasing = false;
                w.y = trials.col(t);
                w.log_y = log_trials.col(t);
                w.objective = accepted_objective[u];
                w.grad = grad;
                w.gap = duality_gap_of(w.y, w.grad);
                if (w.gap < options.tolerance) w.done = w.converged = true;
            }
        }
        std::vector<Index> next;
        for (const Index col : active) {
            WordState& w = words[static_cast<std::size_t>(col)];
            if (!w.done && w.trials >= options.max_iterations) w.done = true;
            if (!w.done) next.push_back(col);
        }
        active.swap(next);
    }

    std::vector<SclsSolution> out(static_cast<std::size_t>(b));
    for (Index c = 0; c < b; ++c) {
        const WordState& w = words[static_cast<std::size_t>(c)];
        SclsSolution& s = out[static_cast<std::size_t>(c)];
        s.y = w.y;
        s.iterations = w.trials;
        s.converged = w.converged;
        s.gap = w.gap;
    }
    return out;
}

}  // namespace jsmf::solvers
