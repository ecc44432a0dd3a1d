// SPDX-License-Identifier: MIT
// Small helpers on a fitted model: its top words, its topics' prevalence and correlations, a
// hierarchy's subtopics.
#include "jsmf/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "jsmf/core/error.hpp"
#include "jsmf/eval/metrics.hpp"

namespace jsmf::model {

using rectify::ProjectionIteration;
using rectify::TopicCheck;

const std::vector<Column<ProjectionIteration>>& trace_columns() {
    static const std::vector<Column<ProjectionIteration>> columns = {
        {"change", &ProjectionIteration::change, "‖C_t − C_{t−1}‖_F / ‖C_t‖_F of the iterate", std::nullopt},
        {"clipped_mass", &ProjectionIteration::clipped_mass,
         "mass below 0 where NN is enforced: AP's clipped mass, DR's NN-reflection input, DP's NN-projection input",
         std::nullopt},
        {"sum", &ProjectionIteration::sum, "ΣC of the iterate before the final normalization", std::nullopt},
        {"eig_iterations", &ProjectionIteration::eig_iterations, "eigensolver rounds (over the iteration's solves)",
         std::nullopt},
        {"eig_products", &ProjectionIteration::eig_products, "block products C·X, AP's fused one included",
         std::nullopt},
        {"eig_residual", &ProjectionIteration::eig_residual, "max_k ‖C u_k − θ_k u_k‖ / |θ_1|", std::nullopt},
        {"seconds", &ProjectionIteration::seconds, "wall-clock seconds of the iteration", std::nullopt},
        {"eig_converged", &ProjectionIteration::eig_converged,
         "1 when every eigensolve met its tolerance and passed its check", 1.0},
        {"eig_missed", &ProjectionIteration::eig_missed,
         "eigenvalues above θ_K the check found outside the block and brought back", 0.0},
        {"eig_bound_corrections", &ProjectionIteration::eig_bound_corrections,
         "wrong λ_min bounds detected and lowered", 0.0},
        {"norm", &ProjectionIteration::norm, "‖C_t‖_F of the new iterate", std::nan("")},
        {"distance_psd", &ProjectionIteration::distance_psd,
         "‖C − P_K(C)‖_F / ‖C‖_F of the iteration's input (NaN for the first)", std::nan("")},
        {"passes", &ProjectionIteration::passes, "passes over C's storage (writes and unfused products)", 0.0},
        {"accelerated", &ProjectionIteration::accelerated,
         "AP: 0 plain, 2 over-relaxed, 1 Anderson, −1 Anderson point rejected", 0.0},
    };
    return columns;
}

const std::vector<Column<TopicCheck>>& check_columns() {
    static const std::vector<Column<TopicCheck>> columns = {
        {"iteration", &TopicCheck::iteration, "iterations done when the check ran", std::nullopt},
        {"anchors_changed", &TopicCheck::anchors_changed, "anchors not among the previous check's (−1: first)",
         std::nullopt},
        {"b_change_median", &TopicCheck::b_change_median,
         "L1 move per topic of B since the previous check, topics matched: median", std::nullopt},
        {"b_change_max", &TopicCheck::b_change_max, "the same: max over topics", std::nullopt},
        {"specificity", &TopicCheck::specificity, "mean specificity of the topics (bits)", std::nullopt},
        {"dissimilarity", &TopicCheck::dissimilarity, "mean hard dissimilarity of the top 20 words", std::nullopt},
    };
    return columns;
}

const std::vector<Column<lowrank::EnnIteration>>& enn_columns() {
    using lowrank::EnnIteration;
    static const std::vector<Column<EnnIteration>> columns = {
        {"negative_mass", &EnnIteration::negative_mass,
         "1ᵀE1: the mass E added (ω times it where --enn-relaxation ω relaxes), −Σ of YYᵀ's negative entries among "
         "the checked pairs", std::nullopt},
        {"corrections", &EnnIteration::corrections, "nonzeros of E", std::nullopt},
        {"r", &EnnIteration::r, "r of r·11ᵀ, (1 − ‖Yᵀ1‖² − ω·1ᵀE1)/N² (ω: --enn-relaxation where relaxed, else 1)", std::nullopt},
        {"change", &EnnIteration::change, "‖Y_t Y_tᵀ − Y_{t−1}Y_{t−1}ᵀ‖_F / ‖Y_{t−1}Y_{t−1}ᵀ‖_F", std::nullopt},
        {"products", &EnnIteration::products, "operator products of the projection", std::nullopt},
        {"eig_converged", &EnnIteration::eig_converged, "1 when the projection's eigensolve met its tolerance",
         std::nullopt},
        {"check_seconds", &EnnIteration::check_seconds, "wall-clock seconds finding the l rows and forming E",
         std::nullopt},
        {"seconds", &EnnIteration::seconds, "wall-clock seconds of the iteration", std::nullopt},
        {"look_specificity", &EnnIteration::look_specificity,
         "the stopping rule's look at the topics after the iteration: mean specificity on the most frequent words "
         "(NaN: no look)",
         std::nan("")},
        {"look_dissimilarity", &EnnIteration::look_dissimilarity,
         "the same look: mean hard dissimilarity of the top 20 words (NaN: no look)", std::nan("")},
        {"spectrum_floor", &EnnIteration::spectrum_floor,
         "the corrected operator's lower spectral bound by Gershgorin, −(largest row sum of ωE) + min(r·N, 0): the "
         "projection's filter took no estimate of λ_min below it (NaN: not recorded)",
         std::nan("")},
    };
    return columns;
}

rectify::Rectifier dense_rectifier(Rectification method) {
    if (method == Rectification::enn)
        throw InputError("the model was rectified by ENN, the compressed pipeline's: no dense rectifier runs it");
    return static_cast<rectify::Rectifier>(method);
}

const Model& choose_model(const std::vector<Model>& models, int topics, const std::string& file) {
    for (const auto& m : models)
        if (topics == 0 || m.num_topics == topics) return m;
    throw InputError(file, "holds no model with K = " + std::to_string(topics));
}

std::vector<Index> top_word_ids(const Eigen::MatrixXd& B, int k, int n) {
    std::vector<Index> ids(static_cast<std::size_t>(B.rows()));
    std::iota(ids.begin(), ids.end(), Index{0});
    const auto count = static_cast<std::ptrdiff_t>(std::min<Index>(n, B.rows()));
    std::partial_sort(ids.begin(), ids.begin() + count, ids.end(),  // NaN first: eval::top_words' order
                      [&](Index a, Index b) { return eval::ranks_before(B(a, k), a, B(b, k), b); });
    ids.resize(static_cast<std::size_t>(count));
    return ids;
}

Eigen::MatrixXd correlation_matrix(const Eigen::MatrixXd& A) {
    const Eigen::VectorXd p = A.rowwise().sum();
    const Eigen::VectorXd variance = A.diagonal() - p.cwiseProduct(p);
    Eigen::MatrixXd rho(A.rows(), A.cols());
    for (Index l = 0; l < A.cols(); ++l)
        for (Index k = 0; k < A.rows(); ++k) {
            // √var_k √var_l, not √(var_k var_l): the product of two small variances underflows.
            rho(k, l) = variance(k) > 0 && variance(l) > 0
                            ? (k == l ? 1.0 : (A(k, l) - p(k) * p(l)) / (std::sqrt(variance(k)) * std::sqrt(variance(l))))
                            : std::numeric_limits<double>::quiet_NaN();
        }
    return rho;
}

std::vector<TopicPair> topic_correlations(const Eigen::MatrixXd& A) {
    const Eigen::MatrixXd rho = correlation_matrix(A);
    std::vector<TopicPair> pairs;
    for (int k = 0; k < A.rows(); ++k)
        for (int l = k + 1; l < A.cols(); ++l)
            if (!std::isnan(rho(k, l))) pairs.push_back({k, l, rho(k, l)});
    std::sort(pairs.begin(), pairs.end(),
              [](const TopicPair& a, const TopicPair& b) { return a.correlation > b.correlation; });
    return pairs;
}

Eigen::VectorXd topic_prevalence(const Eigen::MatrixXd& A) {
    const Eigen::VectorXd marginal = A.rowwise().sum().cwiseMax(0.0);
    return marginal.sum() > 0 ? Eigen::VectorXd(marginal / marginal.sum()) : marginal;
}

std::vector<int> largest_first(const Eigen::VectorXd& weight) {
    std::vector<int> order(static_cast<std::size_t>(weight.size()));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weight(a) > weight(b); });
    return order;
}

std::vector<std::pair<double, int>> subtopics(const HierarchyLevel& level, int k) {
    const Eigen::VectorXd p = level.A.rowwise().sum() / level.A.sum();
    std::vector<std::pair<double, int>> children;
    for (Index j = 0; j < level.B.rows(); ++j) {
        Index best = 0;
        (level.B.row(j).transpose().cwiseProduct(p)).maxCoeff(&best);
        if (best == k) children.emplace_back(level.B(j, k), static_cast<int>(j));
    }
    std::sort(children.begin(), children.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    return children;
}

}  // namespace jsmf::model
