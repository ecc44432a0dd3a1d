// SPDX-License-Identifier: MIT
// Anderson acceleration of AP on its rank-K factor (N × K objects, never N × N ones).
#pragma once

#include <Eigen/Core>

#include <vector>

namespace jsmf::rectify {

struct AndersonOptions {
    int depth = 5;                  ///< differences kept (m); 0 turns acceleration off
    double regularization = 1e-10;  ///< Tikhonov weight, relative to the trace of ΔFᵀΔF
    /// An accelerated point is kept when its residual is at most safeguard × the residual
    /// of the last accepted point; otherwise the plain step from that point is taken and
    /// the history cleared.
    double safeguard = 1.0;
};

/// What the last call did with the point it was given.
enum class AndersonStep { plain = 0, accelerated = 1, rejected = -1 };

/// Type-II Anderson acceleration (Walker & Ni 2011) of the fixed-point map of AP on its
/// factor. After its first iteration AP's iterate is C = max(G Gᵀ + s(G), 0) with
/// G = U Λ₊^{1/2} (N × K) and s(G) = (1 − ‖Gᵀ1‖²)/N², so AP is a map G ↦ Φ(G) (build C,
/// take its top-K eigenpairs). G is defined up to an orthogonal K × K rotation, so each
/// output is first rotated onto its input (orthogonal Procrustes) to make the sequence
/// continuous; Anderson then extrapolates from the last `depth` residuals f = Φ(G) − G.
///
/// Safeguard: the residual of an accelerated point is known only after AP has evaluated
/// it (one iteration). When it exceeds safeguard × the last accepted point's residual,
/// the point is rejected: the next input is the plain step Φ(G) of the last accepted
/// point, and the history starts afresh. So the worst case costs one extra iteration per
/// rejection, and the accepted residuals never grow.
///
/// Local, deterministic: every rank holds the same factors and computes the same result
/// (the callers keep them replicated). Memory: (2·depth + 4) · N · K doubles.
class FactorAnderson {
public:
    explicit FactorAnderson(AndersonOptions options = {}) : options_(options) {}
    /// Sets the options (kept across restore()).
    void configure(AndersonOptions options) { options_ = options; }

    /// Given the map's output for the current input (the eigen-factor of the C built from
    /// it; for the first call, of the input C), returns the next input factor.
    Eigen::MatrixXd next(const Eigen::MatrixXd& output);

    AndersonStep last_step() const { return last_step_; }
    /// ‖f‖_F of the current input (aligned output − input); 0 before the second call
    double last_residual() const { return last_residual_; }

    /// The state, for checkpoints: its matrices in a fixed order, and its scalars.
    std::vector<Eigen::MatrixXd> matrices() const;
    std::vector<double> scalars() const;
    /// Restores what matrices() and scalars() gave (throws InputError when they do not fit).
    void restore(const std::vector<Eigen::MatrixXd>& matrices, const std::vector<double>& scalars);

private:
    AndersonOptions options_;
    Eigen::MatrixXd input_;              ///< the point the last output was evaluated at (empty: none yet)
    Eigen::MatrixXd fallback_;           ///< the plain step from the last accepted point
    std::vector<Eigen::MatrixXd> outputs_, residuals_;  ///< aligned outputs g_i and f_i = g_i − x_i
    double accepted_residual_ = 0;
    double last_residual_ = 0;
    bool proposal_ = false;              ///< input_ is an accelerated point awaiting its verdict
    AndersonStep last_step_ = AndersonStep::plain;
};

/// Local. `output` rotated by the orthogonal Q that minimizes ‖output·Q − target‖_F
/// (Q = U Vᵀ from the SVD of outputᵀ·target).
Eigen::MatrixXd align_factor(const Eigen::MatrixXd& output, const Eigen::MatrixXd& target);

}  // namespace jsmf::rectify
