// SPDX-License-Identifier: MIT
// The metrics that touch N × N matrices, from distributed products: nothing N × N is
// ever formed on one rank.
#pragma once

#include <Eigen/Core>

#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/distmat/dist_matrix.hpp"

namespace jsmf::eval {

/// Collective on C.grid(). Recovery error per word (NIPS'15 §4; the authors'
/// recoveryError): e_i = ‖C̄_i − Σ_k B̆_ki C̄_{s_k}‖₂ for all N words, anchors included,
/// with C̄ = C row-normalized by its own row sums (rows whose sum is not positive stay 0,
/// as in recover_topics). B_breve is K × N (replicated), anchors K. Replicated result (N).
/// The residual of each local entry is formed a panel of local columns at a time (one
/// DGEMM of B̆ᵀ at my rows by the anchor rows at the panel's columns).
/// Per-rank memory: 2 × K × N during the gather, then K × N (the anchor rows of C̄), plus
/// K × N/P_r (B̆ᵀ at my rows), a panel of N/P_r × 256, and O(N); communication: one
/// allgather of the K anchor rows (K × N doubles received) and two allreduces of N
/// doubles (the row sums, the squared norms of the residuals). Bad shapes or anchor ids:
/// StageFailed (stage "eval") on every rank.
Eigen::VectorXd recovery_errors(const distmat::DistMatrix& C, const std::vector<Index>& anchors,
                                const Eigen::MatrixXd& B_breve);

struct ApproximationError {
    double total = 0;         ///< ‖C − B A Bᵀ‖_F
    double off_diagonal = 0;  ///< sqrt(total² − diagonal²)
    double diagonal = 0;      ///< ‖diag(C) − diag(B A Bᵀ)‖₂
};
/// Collective on C.grid(). The approximation error of C by B A Bᵀ (B N × K, A K × K,
/// replicated), the local blocks of B A Bᵀ made a panel at a time (one DGEMM of B A at my
/// rows by B at the panel's columns). Replicated result.
/// Per-rank memory: K × N/P_r (B A at my rows), a panel of N/P_r × 256 and 256 × K;
/// communication: one allreduce of 2 doubles. Bad shapes: StageFailed (stage "eval").
ApproximationError approximation_error(const distmat::DistMatrix& C, const Eigen::MatrixXd& B, const Eigen::MatrixXd& A);

/// Collective on C.grid(). The rows of C̄ (C row-normalized) projected on their two
/// leading principal directions (centered; subspace iteration on C̄ᵀC̄ − N μμᵀ with
/// distributed products, seeded). N × 2, replicated. For NIPS'15 Figure 1.
/// The covariance is applied as X_cᵀ(X_c V) with X_c V = D⁻¹(C V) − 1 μᵀV and
/// X_cᵀ Y = Cᵀ(D⁻¹ Y) − μ 1ᵀY, on a block of 2 + 8 vectors with Rayleigh–Ritz each
/// iteration, until the two leading pairs' residuals are below 1e-6 θ₁ or after
/// `iterations` products. Each
/// direction's entry of largest magnitude is made positive, so the result is the same
/// for a seed at every rank count (up to rounding) when λ₁ and λ₂ are separated from
/// each other and from the rest of the spectrum.
/// Per-rank memory: O(N) blocks of 10 columns; communication: 2 allreduces of N × 10
/// doubles per iteration, plus a few (row sums, mean row, Rayleigh–Ritz, the result).
Eigen::MatrixXd project_rows_2d(const distmat::DistMatrix& C, int iterations = 60, Seed seed = 7);

}  // namespace jsmf::eval
