// SPDX-License-Identifier: MIT
// Each word's topic mixture by KL divergence instead of least squares: Arora et al.'s
// RecoverKL (ICML 2013), many words at a time.
#pragma once

#include <Eigen/Core>

#include <vector>

#include "jsmf/solvers/scls.hpp"

namespace jsmf::solvers {

/// RecoverKL's per-word problem as Arora et al.'s code states it (anchor-word-recovery,
/// fastRecover.py, KLSolveExpGrad, their `--loss KL`). For a word with row v = C̄_{i,:} of the
/// row-normalized co-occurrences and the anchors' rows U = C̄_{S,:}ᵀ (N × K):
///   - v ← clip(v, 0, 1), scaled to sum 1, and only its support M = {j : v_j > 0} counts;
///   - X = clip(U, 0, 1) + 1e-9, each anchor's column renormalized over M: x̃_k = X_{M,k} / Σ_{j∈M} X_jk;
///   - minimize f(y) = Σ_{j∈M} v_j log(v_j / (x̃ y)_j) over the simplex, ∇f = −x̃ᵀ(v ⊘ x̃y).
/// Exponentiated gradient from y = 1/K with step η = 1: y⁺ ∝ y ∘ exp(−η∇). A trial is
/// refused if it fails Armijo's f(y⁺) <= f(y) + c₁η∇ᵀ(y⁺ − y) (c₁ = 1e-4): η halves and
/// the next trial starts from y again (below η = 1e-6 the word stops there). An accepted
/// trial whose new gradient fails the curvature test ∇⁺ᵀ(y⁺ − y) >= c₂∇ᵀ(y⁺ − y) (c₂ = 0.9)
/// is taken back and η doubles, unless η was halved since the last accepted step. The
/// word stops when f(y) < tolerance or the duality gap yᵀ(∇ − min_k ∇_k) < tolerance
/// (converged), or after max_iterations trials (not converged). Two deliberate differences:
/// where their code stops at η < 1e-6 it returns the refused trial, this returns y, the
/// better point; and v is scaled to sum 1 after the clipping, so that f >= 0 (x̃y sums to 1
/// over M: Gibbs' inequality) and f < tolerance means a fit. A row of a nonnegative
/// rectified C̄ sums to 1 already, and there the iterates are theirs. An unrectified row
/// does not: clipping its negative entries leaves s > 1, and their tests then run on
/// f and gaps s times larger; cutting entries above 1 can leave s < 1, where f may go
/// negative (their KL() raises and the word falls back to the uniform mixture). The scale
/// does not move the minimizer: f's part that depends on y scales with s, and Armijo's and
/// the curvature test's decisions with it. The trial cap is jsmf's too (theirs has none).
/// The words are independent: solve() runs a batch of them in lockstep so that each trial
/// is two matrix products over the batch (x̃y for every word, x̃ᵀ(v ⊘ x̃y) for the accepted
/// ones) instead of 2b matrix–vector products; each word's iterates are its own, as if
/// solved alone (to rounding).
class KlRecovery {
public:
    /// U: the anchors' rows of C̄, as columns (N × K), the same for every word.
    explicit KlRecovery(const Eigen::MatrixXd& U);

    /// Local; thread-safe. V's columns are the words' rows of C̄ (N × b); the result's y are
    /// their mixtures (on the simplex), `gap` the last duality gap, `iterations` the trials.
    /// Uses options.max_iterations and options.tolerance.
    std::vector<SclsSolution> solve(const Eigen::MatrixXd& V, const SclsOptions& options) const;

    /// Local. f(y) for one word's row v (the objective above, with its clipping and mask).
    double objective(const Eigen::VectorXd& v, const Eigen::VectorXd& y) const;

    Eigen::Index words() const { return X_.rows(); }
    Eigen::Index topics() const { return X_.cols(); }

private:
    Eigen::MatrixXd X_;  ///< clip(U, 0, 1) + 1e-9, N × K
};

}  // namespace jsmf::solvers
