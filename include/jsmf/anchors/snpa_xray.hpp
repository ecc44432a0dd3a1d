// SPDX-License-Identifier: MIT
// AnchorFree's baselines (Fu et al., TPAMI 2019, §6.3): SNPA and XRAY on the rows of C̄.
#pragma once

#include <Eigen/Core>

#include "jsmf/anchors/pivoted_qr.hpp"

namespace jsmf::anchors {

// Both finders work on the points x_i = C̄_i (rows of C̄ = diag(C1)⁻¹ C, p = C1) without
// forming C̄: every quantity is an inner product, and with C symmetric
//   x_iᵀx_j = (C Cᵀ)_ij / (p_i p_j),   so   x_jᵀX = (1/p)∘(C (C_jᵀ/p_j))
// is one distmat::row and one distmat::multiply. For the chosen set A (|A| = k) both keep
// F = X_AᵀX (k × N, replicated, one new row per step) and the Gram G = X_AᵀX_A = F(:, A)
// (symmetrized). With h_i the point's coefficients and f_i = F(:, i),
//   ‖r_i‖² = ‖x_i − X_A h_i‖² = ‖x_i‖² − 2h_iᵀf_i + h_iᵀGh_i,   ‖x_i‖² = ‖C_i‖²/p_i²
// (row_squared_norms), clamped at 0 (the difference cancels for points near the hull).
// The per-point problems are split by contiguous word ranges: rank r of P solves the points
// [rN/P, (r+1)N/P); the squared residual norms are then summed over ranks into a replicated
// N-vector (one allreduce of N doubles; each entry has one nonzero term, so the sum is
// exact and the vector identical on every rank), and the root decides each argmax (ties:
// the lowest index) and broadcasts it. Words with p_i = 0 have x_i = 0, are never chosen
// and are counted in zero_rows; words not in `candidates` are never chosen and their
// per-point problems are not solved (counted in excluded). diag_r(k) = ‖r_{s_k}‖, the chosen word's residual norm
// when it was chosen. Throws StageFailed (InputError) on every rank unless 2 <= K < N,
// row_sums has N entries and at least K candidate words occur.

/// SNPA (Gillis 2014, successive nonnegative projection): A = {}; K times
/// { j = argmax ‖r_i‖² over the occurring words not in A; A ← A ∪ {j}; then for every
/// point h_i = argmin_{h >= 0, 1ᵀh <= 1} ‖x_i − X_A h‖² (solvers::solve_capped_simplex_gram
/// on G, f_i) and r_i = x_i − X_A h_i }, from r_i = x_i. Chosen words have r = 0 (h = e_j).
/// Collective on C.grid(). Per-rank memory: local(C) + K·N doubles (F) + K·N/P (this rank's h).
/// Communication per step: one row broadcast and one matrix-vector product (N doubles each),
/// one allreduce of N doubles, one broadcast of the index. Local work per step: N/P
/// capped-simplex problems of size k (NNLS, and the simplex active set where its sum is > 1).
AnchorResult find_anchors_snpa(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int num_topics,
                               const Candidates& candidates = {});

/// XRAY (Kumar, Sindhwani & Kambadur 2013), the "max" selection: with
/// h_i = argmin_{h >= 0} ‖x_i − X_A h‖² (plain NNLS, solvers::solve_nnls_gram; r_i = x_i
/// while A is empty), each step takes the point i = argmax ‖r_i‖ (occurring words not in
/// A) and adds j* = argmax_j r_iᵀx_j / 1ᵀx_j over the occurring words not in A, where
/// 1ᵀx_j = 1 for rows of C̄ and r_iᵀx_j = x_iᵀx_j − h_iᵀF(:, j) (x_iᵀX: one more row and
/// product). j* is never already in A, so excluding A changes nothing but rounding: the
/// KKT conditions of the NNLS say ∇ = X_Aᵀ(X_A h_i − x_i) = −X_Aᵀr_i >= 0, i.e.
/// r_iᵀx_a <= 0 for every a in A, and h_iᵀX_Aᵀr_i = 0 (complementary slackness), so
/// r_iᵀx_i = r_iᵀ(r_i + X_A h_i) = ‖r_i‖² > 0: the maximum is positive and attained
/// outside A (while some residual is nonzero; when all are 0 the rule picks the lowest index).
/// Moreover j* = i in exact arithmetic: for any candidate j, with the same KKT and h_j >= 0,
/// r_iᵀx_j = r_iᵀr_j + (X_Aᵀr_i)ᵀh_j <= r_iᵀr_j <= ‖r_i‖‖r_j‖ <= ‖r_i‖² = r_iᵀx_i, the last
/// step because i has the largest residual (equality throughout needs r_j = r_i, and then
/// the lowest-index rule already made i <= j). So on the rows of C̄ (1ᵀx_j = 1) XRAY-max
/// takes the point farthest from the cone of the anchors, and x_iᵀX serves both as the
/// scores and as F's new row; only rounding can make j* ≠ i, then x_{j*}ᵀX is computed.
/// Collective on C.grid(). Per-rank memory: local(C) + K·N doubles (F) + K·N/P (this rank's h).
/// Communication per step: one allreduce of N doubles, the broadcast of i and of h_i (k
/// doubles, from the rank that solved i), one row and one product (x_iᵀX; a second pair
/// only if j* ≠ i), the broadcast of j*. Local work per step: N/P NNLS problems of size k.
AnchorResult find_anchors_xray(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int num_topics,
                               const Candidates& candidates = {});

}  // namespace jsmf::anchors
