// SPDX-License-Identifier: MIT
// The compressed pipeline, step 3: low-rank anchor words (LAW) — anchors, B and A from
// the factor Y with C ≈ YYᵀ + E′, never forming C (Lee et al., ICML 2021; the authors'
// factorizeY.m).
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <vector>

#include "jsmf/anchors/finder.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/lowrank/enn.hpp"
#include "jsmf/mpi/comm.hpp"
#include "jsmf/recover/recover.hpp"
#include "jsmf/solvers/scls.hpp"

namespace jsmf::lowrank {

/// E′, the correction of YYᵀ's negative entries in the rows of the anchors (and of the
/// words whose row of YYᵀ sums below 0): E′ = max(F, Fᵀ), F_sj = −min(y_s·y_j, 0) for s
/// in `rows` (replicated). F's entries are triplets (row s, column j, value) held by the
/// owner of word j (this rank's columns only); the transposed entries are implied.
struct Correction {
    std::vector<Index> rows;              ///< S ∪ {i : (YYᵀ1)_i < 0}, ascending
    std::vector<std::int64_t> entry_row;  ///< triplets of F, entry_row[k] ∈ rows
    std::vector<std::int64_t> entry_col;
    std::vector<double> entry_value;      ///< > 0
};

/// LAW's pivot choice: words whose residual norm² is within this share of the largest are
/// tied, and the lowest word id among them is the pivot. Words with the same documents and
/// counts (two rare words that occur once, in one document) have equal rows of C, so
/// equal columns of P₀: only rounding, which differs between rank counts, thread counts
/// and kernels, would otherwise choose between them (and with it E′ and B at their rows).
inline constexpr double kPivotTie = 1e-9;

struct LawOptions {
    /// Each word's B̆ column: min over the simplex of ‖P_S b − P_j‖, the dense pipeline's
    /// least squares on the rows of C̄ = D⁻¹(YYᵀ + E′) projected onto span(Y) (P = QᵀC̄ᵀ;
    /// the same problem where E′ is empty). active_set (default): exact, on P_S = QR;
    /// expgrad and admm: the authors' iterative solvers on G = P_SᵀP_S and f = P_SᵀP_j, as
    /// recover gives them U's. kl (RecoverKL) needs each word's whole row of C̄, which the
    /// factor gives only in projection: not here (OptionError).
    recover::Solver solver = recover::Solver::active_set;
    solvers::SclsOptions scls;            ///< the solver's settings (iterations, tolerance, ADMM's rule)
    /// Words with fewer documents (among the M) are never anchors (Arora et al.'s
    /// candidate threshold); 0: every word with a positive row sum may be one.
    std::int64_t min_anchor_doc_freq = 0;
    /// This rank's words whose B̆ is solved (nonzero: solve); the others' stay 0 and B is
    /// normalized over the solved words and the anchors. A cheap look at the topics (ENN's
    /// checks solve a few thousand words, not N). Empty: every word.
    std::vector<char> solve_only;
    /// The anchors, given (the user's anchor words, global ids, K of them, in the order of
    /// the topics): the pivoted QR takes them as its pivots instead of searching, with no
    /// candidate threshold. Empty: LAW finds them.
    std::vector<Index> anchors;
    /// How LAW finds them: qr (= spa, default), its pivoted QR on P₀; fastanchor, snpa, xray
    /// on P₀'s columns, the rows of C̄ in K dimensions (find_anchors_on_points). Not read
    /// with `anchors` given.
    anchors::Finder finder = anchors::Finder::qr;
    /// Whether E′'s entries are listed (LawResult::correction's triplets, 24 bytes an entry:
    /// the model file's E′ and the metrics need them). A look at the topics does not: on real
    /// text they are most of LAW's memory (20 Newsgroups, K = 100, 2 ranks: 296 MiB on the
    /// largest rank, 87 % of its N/P × |S′| pairs). Off: the triplets are left empty.
    bool list_correction = true;
};

struct LawResult {
    std::vector<Index> anchors;           ///< S, in the order the pivoted QR chose them
    Eigen::VectorXd diag_r;               ///< |R_kk| of the pivoted QR, per anchor
    Eigen::MatrixXd B;                    ///< this rank's rows of B (N/P × K)
    Eigen::MatrixXd B_breve;              ///< K × N/P: p(topic | word) of this rank's words
    Eigen::MatrixXd A;                    ///< K × K, D⁻¹(Y_S Y_Sᵀ + E′_SS)D⁻¹, D = diag(B_S) (as the authors)
    Eigen::VectorXd word_mass;            ///< this rank's rows of d = (YYᵀ + E′)1
    Correction correction;
    Index excluded_candidates = 0;        ///< words barred from anchors (row sum <= 0, or rare)
    Index below_threshold = 0;            ///< of those, the words barred only by min_anchor_doc_freq
    Index words_solved = 0, words_converged = 0;
    std::int64_t most_iterations = 0;     ///< the most any word's solve took (the solver's count)
    double seconds = 0;
};

/// Collective. LAW on the row-distributed factor Y (N × K): d₀ = Y(Yᵀ1); Y = QR (TSQR);
/// P₀ = R Yᵀ diag(d₀)⁻¹ (K × N, column j on the owner of word j) stands for C̄ᵀ, and its
/// Gram matrix is that of C̄'s rows, so the anchors are those of the dense pivoted QR on
/// YYᵀ; S = the first K pivots of a column-pivoted QR on P₀ (greedy; ties within kPivotTie
/// go to the lower word), or options.finder's choice on P₀'s columns. Then E′ (Correction), d = d₀ + E′1, P = (R Yᵀ + Qᵀ E′) diag(d)⁻¹,
/// B̆_j = argmin_{b ∈ Δ} ‖P_S b − P_j‖ per word (K-dimensional, over ranks and threads),
/// B by Bayes' rule, A from the anchors' block. Words with d_j <= 0 get B̆_j = 0.
/// `doc_freq` (this rank's rows) is used for options.min_anchor_doc_freq. With
/// options.anchors, S is those words in their order (InputError on every rank for an id out
/// of range, given twice, never occurring, with a row of YYᵀ that does not sum above 0, or
/// in the span of the ones before it to a relative residual of 1e-10).
/// Per-rank memory: Y, Q, P (N/P × K each); communication: 2K scalar all-reductions and K broadcasts of K
/// doubles for the pivots, a P·K² TSQR, and |S′|·K-sized reductions for E′.
LawResult factorize_low_rank(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& Y,
                             const std::vector<std::int64_t>& doc_freq, const LawOptions& options);

/// Collective. The n words of largest document frequency (`doc_freq`: this rank's rows;
/// integers, so every rank count ranks them alike), ties to the lower id; ascending,
/// replicated. ENN's looks at the topics take these words.
std::vector<Index> most_frequent_words(const mpi::Comm& comm, const distmat::RowPartition& rows,
                                       const std::vector<std::int64_t>& doc_freq, Index n);

/// Collective. ENN's look at the topics of the factor Y (this rank's rows): LAW with B̆
/// solved only for `words` (ascending, replicated; options.solve_only is set here), B's
/// rows at those words with each topic renormalized over them, and the words' `mass`
/// (replicated, all N words) renormalized as the background: the topics' mean specificity
/// and mean hard dissimilarity (eval/metrics.hpp). The same on every rank.
EnnLook look_at_topics(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& Y,
                       const std::vector<std::int64_t>& doc_freq, LawOptions options, const std::vector<Index>& words,
                       const Eigen::VectorXd& mass);

}  // namespace jsmf::lowrank
