// SPDX-License-Identifier: MIT
// The metrics that touch N × N matrices, from distributed products: nothing N × N is
// ever formed on one rank.
#pragma once

#include <Eigen/Core>

#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/dist/dist_matrix.hpp"

namespace jsmf::eval {

/// Collective on C.grid(). Recovery error per word (NIPS'15 §4; the authors'
/// recoveryError): e_i = ‖C̄_i − Σ_k B̆_ki C̄_{s_k}‖₂ for all N words, anchors included,
/// with C̄ = C row-normalized by its own row sums (rows summing to 0 stay 0).
/// B_breve is K × N (replicated), anchors K. Replicated result (N).
/// Per-rank memory: K × N (the anchor rows of C̄) + O(N); communication: one allgather
/// of the K anchor rows and one allreduce of N doubles.
Eigen::VectorXd recovery_errors(const dist::DistMatrix& C, const std::vector<Index>& anchors,
                                const Eigen::MatrixXd& B_breve);

struct ApproximationError {
    double total = 0;         ///< ‖C − B A Bᵀ‖_F
    double off_diagonal = 0;  ///< sqrt(total² − diagonal²)
    double diagonal = 0;      ///< ‖diag(C) − diag(B A Bᵀ)‖₂
};
/// Collective on C.grid(). The approximation error of C by B A Bᵀ (B N × K, A K × K,
/// replicated), the local blocks of B A Bᵀ made a panel at a time. Replicated result.
ApproximationError approximation_error(const dist::DistMatrix& C, const Eigen::MatrixXd& B, const Eigen::MatrixXd& A);

/// Collective on C.grid(). The rows of C̄ (C row-normalized) projected on their two
/// leading principal directions (centered; subspace iteration on C̄ᵀC̄ − N μμᵀ with
/// distributed products, seeded). N × 2, replicated. For NIPS'15 Figure 1.
Eigen::MatrixXd project_rows_2d(const dist::DistMatrix& C, int iterations = 60, Seed seed = 7);

}  // namespace jsmf::eval
