// SPDX-License-Identifier: MIT
// Step 2: anchor words by sparse implicit column-pivoted QR (practical-jsmf Alg. 2).
#pragma once

#include <Eigen/Core>

#include <vector>

#include "jsmf/distmat/dist_matrix.hpp"

namespace jsmf::anchors {

struct AnchorResult {
    std::vector<Index> anchors;  ///< S = (s_1, ..., s_K), word ids in the order chosen
    Eigen::VectorXd diag_r;      ///< r_k = ‖residual of p_{s_k}‖ when chosen (Alg. 2 line 5)
    Index zero_rows = 0;         ///< words whose row of C sums to 0 (never anchors)
    Index excluded = 0;          ///< words that occur but are not candidates (never anchors)
};

/// Which words may be anchors: one flag per word, or empty for every word that occurs.
/// Every finder treats a word that is not a candidate as one left out of its points, as
/// Arora et al. leave them out: it is never chosen. For qr, fastanchor and SNPA nothing
/// else changes (a pick is the farthest candidate; the other points' residuals only rank
/// them); XRAY's first pick of a step, the point farthest from the anchors' cone, is
/// then the farthest candidate. Arora et al.'s FastAnchorWords takes as candidates the words in
/// more than a threshold of documents: a word seen in two documents has a row of C̄
/// made of those documents' few words, far from every other row, so without the
/// threshold every greedy finder picks such words first on an unrectified C.
using Candidates = std::vector<bool>;

/// Per word, the documents (of those used) that contain it.
using DocFreq = Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>;

/// Local. The words in at least `min_documents` documents; every word for min_documents <= 0.
Candidates candidates_by_doc_freq(const DocFreq& doc_freq, std::int64_t min_documents);

/// Local. The number of words that occur (row_sums > 0) and are candidates; throws
/// OptionError naming {anchor_min_df} when fewer than K (called on every rank alike).
Index count_candidates(const Eigen::VectorXd& row_sums, const Candidates& candidates, int K);

/// Alg. 2 of practical-jsmf on P = C̄ᵀ, C̄ = diag(C1)⁻¹ C the row-normalized C, without
/// forming C̄ or modifying C: u_i = ‖C̄_i‖² = ‖C_i‖²/p_i² (p = C1); then K times
/// { n = argmax u (the root decides and broadcasts); q_k = (p_n − Σ_l ⟨q_l, p_n⟩ q_l)/r_k
/// with p_n = C_n/p_n and r_k = √u_n; u ← u − (q_kᵀP)∘(q_kᵀP), where q_kᵀP = (1/p)∘(C q_k) }.
/// Words with p_i = 0 never occurred in a used document: their rows of C̄ are taken as 0
/// (counted in zero_rows), so they are never chosen; nor are words that are not
/// `candidates` (counted in excluded).
/// Collective on C.grid(). Per-rank memory: local(C) + K·N doubles (the q's, replicated).
/// Communication: per step one row broadcast (N doubles) and one matrix-vector product.
AnchorResult find_anchors(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int num_topics,
                          const Candidates& candidates = {});

/// The same QR with the pivots given (user-supplied anchors, `--anchor-words`): the
/// result has anchors = S and the diagR of S taken in that order, so users see how far
/// each given anchor is from the span of the ones before it (r_k ≈ 0: redundant anchor).
/// Given words need not be candidates of any threshold: the user chose them.
/// Throws StageFailed (InputError) on every rank for an id out of range, a repeated id or
/// a word that never occurs. Collective on C.grid(); same cost as find_anchors.
AnchorResult anchors_from_words(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums,
                                const std::vector<Index>& anchors);

}  // namespace jsmf::anchors
