// SPDX-License-Identifier: MIT
// Rectification by diagonal completion (DC): the authors' method (NIPS'15 §4).
#pragma once

#include <Eigen/Core>

#include <functional>

#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/distmat/eig.hpp"

namespace jsmf::rectify {

struct DcOptions {
    int num_topics = 0;       ///< K; required, and each half must exceed it: 2K < N
    int permutations = 30;    ///< T
    Seed seed = 1;            ///< the permutations
    distmat::EigOptions eig;     ///< for the top-K left singular vectors of each G
};

struct DcResult {
    Eigen::VectorXd old_diagonal;   ///< diag(C) before
    Eigen::VectorXd new_diagonal;   ///< the median completion (negative medians clipped to 0)
    int permutations = 0;
    int eig_products = 0;           ///< block products C·X in the G Gᵀ eigensolver, all permutations
    int svd_products = 0;           ///< block products C·X (K columns) refining U and V, all permutations
    double max_svd_residual = 0;    ///< max over permutations of max_k ‖Gᵀu_k − σ_k v_k‖ / σ_1
    int unconverged = 0;            ///< permutations whose refinement stopped above its tolerance
    int clipped = 0;                ///< medians that were negative
    /// Completions not made, summed over permutations and both halves: entries where
    /// 1 − ‖u_j‖² <= √ε (e_j nearly in span U, so G says nothing about C_jj) and the old
    /// C_jj was kept as that permutation's value.
    int fallbacks = 0;
};

/// Called on every rank after each permutation (the app prints progress from rank 0).
using DcProgress = std::function<void(int done, int total)>;

/// Diagonal completion, in place on C. For T seeded random permutations, split the
/// permuted indices into halves; for each half H (the other O) with diagonal block
/// F = C[H, H] and off-diagonal block G = C[H, O], let U = the top-K left singular
/// vectors of G, P = Uᵀ(F − diag F), and complete
///   d_j = (u_j · P_j) / (1 − u_j · u_j)   (u_j row j of U, P_j column j of P),
/// which holds exactly when the columns of F lie in span(U), as for a rank-K C; entries
/// with 1 − u_j · u_j <= √ε keep the old C_jj (counted in `fallbacks`). Each completion
/// is stored under its own word j. Then diag(C) ← the element-wise median of the T
/// completions (clipped at 0: C_ii is a probability), and C ← C / ΣC.
/// U is computed to the standard of a dense SVD of G (the authors' svd): eigenvectors of
/// G Gᵀ as a start, then SVD refinement steps on G until max_k ‖Gᵀu_k − σ_k v_k‖ <=
/// 16·ε·√N·σ_1, so sin∠(U) ≲ that/(σ_K − σ_{K+1}) without squaring σ_1/σ_K. With C
/// symmetric, the other half's vectors are G's right singular vectors V: one solve per
/// permutation.
/// Collective on C.grid(). G and Gᵀ are applied as masked block products with C, so no
/// submatrix is formed. Per-rank memory: local(C) + N·T doubles + the eigensolver's.
DcResult diagonal_completion(distmat::DistMatrix& C, const DcOptions& options, const DcProgress& progress = {});

}  // namespace jsmf::rectify
