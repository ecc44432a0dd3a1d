// SPDX-License-Identifier: MIT
// Steps 3–4: topics B by simplex-constrained least squares and Bayes' rule, and A (Alg. 4).
#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "jsmf/core/names.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/solvers/scls.hpp"

namespace jsmf::recover {

/// B̆'s per-word solver: least squares on the simplex (active set, ExpGrad, ADMM-DR), or
/// KL divergence (Arora et al.'s RecoverKL, solvers/kl.hpp).
enum class Solver { active_set, expgrad, admm, kl };
inline const Names<Solver, 4>& names(Solver) {
    static const Names<Solver, 4> table{"active-set", "expgrad", "admm", "kl"};
    return table;
}

/// RecoverKL's working set in recover_topics: the words' rows of C arrive about
/// kKlChunkBytes per rank at a time (at least a batch per thread; received and unpacked,
/// twice that), and each thread solves kl_batch_words(N) words at a time with six N × batch
/// matrices (the rows as given and clipped, their logs, their supports, the projections,
/// the ratios): ~32 MiB each.
inline constexpr double kKlChunkBytes = 64.0 * (1 << 20);
inline Index kl_batch_words(Index num_words) {
    return std::clamp<Index>((Index{1} << 22) / std::max<Index>(1, num_words), 16, 256);
}

struct RecoverOptions {
    Solver solver = Solver::active_set;   ///< the authors' default, and jsmf's
    solvers::SclsOptions scls;
    /// kl: words per lockstep batch and bytes of rows per rank per exchange; 0: the
    /// defaults above (tests set them small to take many batches and exchanges).
    Index kl_batch = 0;
    double kl_chunk_bytes = 0;
};

struct TopicModel {
    Eigen::MatrixXd B;          ///< N × K, column k = p(word | topic k)
    Eigen::MatrixXd B_breve;    ///< K × N, column i = p(topic | word i) (the SCLS solutions)
    Eigen::MatrixXd A;          ///< K × K, p(topic1, topic2) = D⁻¹ C_SS D⁻¹ (Alg. 4)
    Index words_solved = 0;     ///< non-anchor words with positive frequency
    Index words_converged = 0;  ///< of those, how many met the solver's tolerance
    int max_iterations_used = 0;
    double solve_seconds = 0;   ///< wall time of the SCLS solves (the slowest rank)
};

/// Where the word-by-word solves stand: the words [0, words_done) are solved. Independent
/// of the rank count (a run may resume at another).
struct RecoverCheckpoint {
    Index words_done = 0;
    std::vector<Index> anchors;  ///< the anchors the solves used (a resume must find the same)
    Eigen::MatrixXd B_breve;  ///< K × N: the solved words' columns (anchors' and unsolved words' are 0)
    std::int64_t solved = 0, converged = 0, max_iterations = 0;
};

/// Checkpoints between the solves (fit's signals and resume). The words are solved in
/// rounds of `batch` words per rank; after each round every rank calls `due` (collective,
/// the same answer on every rank); when it says so, every rank calls `save` with the
/// state so far (collective; it may throw on every rank, e.g. for a stop). `resume`
/// continues from a saved state: the result is the uninterrupted run's, bit for bit, at
/// the same grid and threads (for kl, and the same batch: its words are solved in lockstep
/// within a round, and the words beside one another move the rounding).
struct RecoverProgress {
    std::function<bool()> due;
    std::function<void(const RecoverCheckpoint&)> save;
    const RecoverCheckpoint* resume = nullptr;
    Index batch = 4096;
};

/// Recovers B and A from C (rectified), its row sums p = C1, and the anchors S.
/// For every non-anchor word i, min_{y ∈ Δ} ‖U y − v_i‖² with U = C̄_{S,:}ᵀ, v_i = C̄_{i,:}ᵀ
/// depends on the data only through G = UᵀU and f_i = Uᵀv_i = (C̄ U)_i (ExpGrad, ADMM-DR, as
/// the authors), or through R and b_i = Qᵀv_i = (C̄ Q)_i with U = QR (the active set; the QR
/// is computed on rank 0 and broadcast): all right-hand sides come from one distributed
/// product, every rank solves its share of the words, and the solutions are all-gathered.
/// RecoverKL (Solver::kl) minimizes KL(v_i ‖ U y) instead (solvers::KlRecovery), which needs
/// all of v_i: the words' rows of C are dealt to the ranks that solve them (each entry sent
/// once, 64 MiB of rows per rank at a time). Anchor s_k gets e_k; words with p_i = 0 get 0.
/// Then Bayes' rule: B_ik = B̆_ki p_i / Σ_i' B̆_ki' p_i', and A = D⁻¹ C_SS D⁻¹ with
/// D = diag(B_{S,:}). Collective on C.grid(). Per-rank memory: local(C) + 3·N·K doubles
/// (replicated); with kl, + 2 × 64 MiB of rows and 6 × N × kl_batch_words(N) doubles per
/// thread.
TopicModel recover_topics(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, const std::vector<Index>& anchors,
                          const RecoverOptions& options, const RecoverProgress* progress = nullptr);

/// The Arora et al. baseline's A: argmin_A ‖C − B A Bᵀ‖_F = B⁺ C B⁺ᵀ with
/// B⁺ = (BᵀB)⁻¹Bᵀ (B of full column rank). It is not constrained: entries can be
/// negative. C B comes from one distributed product; the rest is K × K.
/// Collective on C.grid(). Per-rank memory: local(C) + 2·N·K doubles.
Eigen::MatrixXd recover_a_least_squares(const distmat::DistMatrix& C, const Eigen::MatrixXd& B);

struct AlphaResult {
    Eigen::VectorXd alpha;   ///< α = α₀ a
    double alpha0 = 0;       ///< Σ_k α_k
    double residual = 0;     ///< ‖Ā − M(α₀)‖_F of the fit (Ā the row-normalized A)
    bool at_bound = false;   ///< the fit wanted α₀ ≤ 0 or α₀ = ∞; α₀ is clamped to [0, 1e12]
};

/// RECOVER-ALPHA (practical-jsmf Alg. 4): fits the row-normalized second moment of
/// Dir(α), M_kl = (α₀ a_l + δ_kl)/(α₀ + 1) with a = A1, to the row-normalized A in the
/// Frobenius norm, over α₀ > 0. With t = 1/(α₀ + 1) the model is M = 1aᵀ + t(I − 1aᵀ),
/// linear in t, so the paper's objective has the closed-form minimizer
/// t* = ⟨Ā − 1aᵀ, I − 1aᵀ⟩ / ‖I − 1aᵀ‖²_F, which is what the paper's gradient iteration
/// converges to (it reports agreement with an exhaustive line search to 1e-3); the
/// exact value needs no step size or stopping rule. Local.
AlphaResult recover_alpha(const Eigen::MatrixXd& A);

}  // namespace jsmf::recover
