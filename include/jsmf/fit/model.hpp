// SPDX-License-Identifier: MIT
// What a fit produces: the model of one K (B, A, anchors, α, the rectification trace, the
// metrics), a hierarchy's levels. Plain values, replicated on every rank; io writes and
// reads them (this header is the only part of fit/ that io includes).
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <vector>

#include "jsmf/core/timer.hpp"
#include "jsmf/core/types.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/eval/truth.hpp"

namespace jsmf::fit {

/// What a rectification did, iteration by iteration: the trace fit records in the model
/// and jsmf rectify in the file of the rectified C (absent for a raw co-occurrence).
struct RectificationTrace {
    std::string method;          ///< "ap", "dr", "dp", "dc" or "none"
    int num_topics = 0;
    int iterations = 0;
    bool converged = false;
    /// DC: completions not made (1 − ‖u_j‖² <= √ε, the old C_jj kept), summed over
    /// permutations and halves; 0 for the other methods. Written, not read back.
    int fallbacks = 0;
    /// Per-iteration trace, one entry per iteration (AP, DR, DP): written as datasets.
    std::vector<double> change, clipped_mass, sum, eig_residual, seconds;
    std::vector<std::int64_t> eig_iterations, eig_products;
    /// 1 when the iteration's eigensolves converged and passed their check; eigenvalues
    /// above θ_K the check found and brought back; wrong λ_min bounds detected.
    std::vector<std::int64_t> eig_converged, eig_missed, eig_bound_corrections;
    /// Per iteration: ‖C_t‖_F, the input's distance from the rank-K PSD set (relative),
    /// passes over C, and AP's acceleration (1 accelerated, −1 rejected, 0 plain).
    std::vector<double> norm, distance_psd;
    std::vector<std::int64_t> passes, accelerated;
    std::string stop_reason;     ///< iterations, tolerance, quality or fixed-point (empty: not recorded)
    /// The stopping rule's checks of the topics, one entry per check.
    std::vector<std::int64_t> check_iteration, check_anchors_changed;
    std::vector<double> check_b_median, check_b_max, check_specificity, check_dissimilarity;
};

/// What an AnchorFree fit (fit --method anchorfree-lp | anchorfree-pds) adds to a model.
struct AnchorFreeRecord {
    std::string algorithm;            ///< "lp" or "pds"
    Eigen::MatrixXd E;                ///< K × K, the raw E* = (C*ᵀC*)⁻¹C*ᵀPC*(C*ᵀC*)⁻¹
    Eigen::MatrixXd M;                ///< K × K, C* = B̃M
    Eigen::VectorXd eigenvalues;      ///< K, those of P that made B̃ = UΛ^{1/2}
    int iterations = 0;               ///< LP: sweeps over the columns; PDS: outer iterations
    int inner_iterations = 0;         ///< LP: Clp solves; PDS: Decrease iterations
    bool converged = false;
    Index working_rows = 0;           ///< LP: rows of B̃ in the screened working set
    double violation = 0;             ///< PDS: final ‖B̃M − Z‖/‖Z‖
    double min_C = 0;                 ///< most negative entry of C* before B took max(C*, 0)
    bool a_is_distribution = false;   ///< E* >= 0 (to rounding), so A = E*/ΣE*; else A = E*
};

/// One fitted model (one K).
struct Model {
    int num_topics = 0;
    /// "anchors" (rectified anchor words) or "anchorfree-lp" / "anchorfree-pds"; then
    /// `anchors` are each topic's representative word (argmax_i p(topic | word i)), not
    /// anchors, and `anchorfree` holds the rest.
    std::string method = "anchors";
    AnchorFreeRecord anchorfree;
    Eigen::MatrixXd B;               ///< N × K, p(word | topic)
    Eigen::MatrixXd B_breve;         ///< K × N, p(topic | word)
    Eigen::MatrixXd A;               ///< K × K, p(topic1, topic2)
    Eigen::VectorXd unigram;         ///< N, p(x = i) = row sums of the rectified C (Bayes' rule used it)
    std::string a_method;            ///< "diagonal" (Alg. 4) or "least_squares" (Arora et al.)
    std::vector<Index> anchors;      ///< K word ids
    Eigen::VectorXd diag_r;          ///< K: the anchor finder's r_k
    std::string anchor_method;       ///< "qr", "fastanchor" or "words" (given by the user)
    Index zero_rows = 0;             ///< words that never occur (B row 0, never anchors)
    std::string solver;              ///< "active-set", "expgrad" or "admm"
    Index words_solved = 0, words_converged = 0;
    int solver_max_iterations = 0;   ///< the most iterations any word used
    double solve_seconds = 0;
    bool has_alpha = false;
    Eigen::VectorXd alpha;           ///< K (when has_alpha)
    double alpha0 = 0, alpha_residual = 0;
    bool alpha_at_bound = false;
    RectificationTrace rectification;
    StageTimes times;                ///< this K's stages (rectify, anchors, recover, …)
    eval::MetricSet metrics;         ///< empty when not measured (--no-metrics)
    std::string metrics_note;        ///< what the metrics were measured with (e.g. no coherence: no corpus)
    /// N × 2: the rows of C̄ on their two principal directions (NIPS'15 Figure 1), of
    /// the rectified and of the original C; empty when not computed.
    Eigen::MatrixXd projection, projection_original;
    bool has_truth = false;          ///< compared with a planted model (jsmf eval --truth)
    eval::TruthComparison truth;
    std::string truth_file;
};

/// Local. The ids of the n most probable words of B's column k, most probable first
/// (ties by word id).
std::vector<Index> top_word_ids(const Eigen::MatrixXd& B, int k, int n);

/// One level above the first of a topic hierarchy (fit --hierarchy): the rectified A of
/// the level below factorized as a co-occurrence matrix of its K_below topics.
struct HierarchyLevel {
    int topics = 0;                 ///< K of this level
    Eigen::MatrixXd B;              ///< K_below × K: p(topic below | topic here)
    Eigen::MatrixXd A;              ///< K × K: p(topic1, topic2) at this level
    std::vector<Index> anchors;     ///< K anchor topics of the level below (0-based)
    Eigen::MatrixXd B_words;        ///< N × K: p(word | topic here) = B₁ B₂ … B_this
    std::string rectify_method;     ///< how the level below's A was rectified
    int rectify_iterations = 0;
    bool rectify_converged = false;
};

}  // namespace jsmf::fit
