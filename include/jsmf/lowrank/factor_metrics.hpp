// SPDX-License-Identifier: MIT
// The papers' metrics that compare a model with C, for the compressed pipeline: against
// the rectified Ĉ = YYᵀ + E′ exactly (from K × K Gram matrices and E′'s entries), against
// the original C (its operator: the documents', or a file's rows) exactly on span([Y B])
// and estimated beyond it by random probes — never forming either.
#pragma once

#include <Eigen/Core>

#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/lowrank/cooc_operator.hpp"
#include "jsmf/lowrank/law.hpp"

namespace jsmf::lowrank {

/// What the metrics need of a fit: this rank's rows (of the operator's partition) of Y,
/// d = Ĉ1, B and B̆ᵀ; A and the anchors replicated; E′ as LAW left it.
struct FactorModel {
    const Eigen::MatrixXd& Y;         ///< N/P × K, the factor LAW used
    const Correction& correction;     ///< E′ (each rank its triplets)
    const Eigen::VectorXd& word_mass; ///< N/P: d = (YYᵀ + E′)1
    const Eigen::MatrixXd& B;         ///< N/P × K
    const Eigen::MatrixXd& B_breve;   ///< K × N/P
    const Eigen::MatrixXd& A;         ///< K × K
    const std::vector<Index>& anchors;
};

struct FactorMetrics {
    /// Exact, against Ĉ: ‖C̄_i − Σ_k B̆_ki C̄_{s_k}‖₂ per word (this rank's rows), C̄ = Ĉ
    /// row-normalized by d; ‖Ĉ − BABᵀ‖_F and its off-diagonal part.
    Eigen::VectorXd recovery;
    double approximation = 0, approximation_offdiag = 0;
    /// Against the original C (its operator), R = C − BABᵀ and R̃ the recovery residual with
    /// C's row sums: exactly on the span of [Y B] (Q, its rank's orthonormal columns, at most
    /// 2K), estimated beyond it by `probes` Gaussian probes G (N × p, the same at any rank
    /// count) projected off Q: ‖R‖²_F = ‖RQ‖²_F + E ‖R(I − QQᵀ)g‖² (Hutchinson on what Q
    /// leaves), its diagonal part exact (C_ii from the operator); per word likewise.
    Eigen::VectorXd recovery_original;
    double approximation_original = 0, approximation_offdiag_original = 0;
    /// The standard error of approximation_original² over the probes, relative to it (NaN
    /// below 2 probes).
    double approximation_original_relative_error = 0;
    /// The probes' share of Σ_i recovery_original_i² (the rest is exact): a word's
    /// standard error is at most (1/(2p))^½ of its recovery, times its own probed share.
    double recovery_original_probed_share = 1;
    int probes = 0;
    int exact_directions = 0;  ///< Q's columns: [Y B]'s numerical rank
};

/// Local. The metrics' probes per batch at N words: 128 up to N = 250,000, narrower above
/// (32 at N = 10⁶; by N, not N/P, so that the probes are the same at any rank count).
int probe_batch_width(Index num_words);

/// Collective on C.comm(). Per-rank memory: this rank's F entries (16 bytes each, by
/// local word), the |S′| × |S′| block of E′ and the rows of Y, B, B̆ and z at S′
/// (|S′| × K each) replicated, Q (N/P × at most 2K), about five N/P × w blocks of probes (w = 128
/// up to N = 250,000, 32 at N = 10⁶); communication: operator products of 2K + p columns in
/// all, K × p, 2K × p, |S′| × K and |S′|² reductions. Cost O(N/P·K² + nnz(E′)·K
/// + the products). probes = 0: the exact part alone (a lower bound; tests check it).
FactorMetrics factor_metrics(const CoocOperator& C, const FactorModel& model, int probes = 256, Seed seed = 7);

/// Collective on `comm`. Arora et al.'s A on the compressed pipeline (fit --recover-a ls):
/// argmin_A ‖Ĉ − B A Bᵀ‖_F = B⁺ Ĉ B⁺ᵀ, B⁺ = (BᵀB)⁻¹Bᵀ, with the rectified Ĉ = YYᵀ + E′,
/// E′ = max(F, Fᵀ) from LAW's triplets, never formed: BᵀĈB = (BᵀY)(BᵀY)ᵀ + BᵀE′B. `Y`, `B`:
/// this rank's rows of `rows`; `E`: this rank's triplets (LAW's). Replicated K × K, symmetric.
/// Per-rank memory: |S′| × (K + |S′|) replicated; communication: 2K² + K² + |S′|·K + |S′|²
/// doubles in all-reductions.
Eigen::MatrixXd least_squares_a(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& Y,
                                const Correction& E, const Eigen::MatrixXd& B);

}  // namespace jsmf::lowrank
