// SPDX-License-Identifier: MIT
// Per-document topic proportions with the topics fixed: θ_m = argmax Σ_w h_mw log (B θ)_w on the simplex.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <vector>

#include "jsmf/core/names.hpp"
#include "jsmf/core/types.hpp"
#include "jsmf/corpus/shard.hpp"

namespace jsmf::infer {

/// θ's prior: none (θ maximizes the likelihood) or the model's Dirichlet α (MAP; α from
/// fit --alpha), as jsmf infer --prior and fit --infer take it.
enum class Prior { none, alpha };
inline const Names<Prior, 2>& names(Prior) {
    static const Names<Prior, 2> table{"none", "alpha"};
    return table;
}

struct InferOptions {
    /// Stop when no θ_k moved by more than this in an iteration (max norm).
    double tolerance = 1e-6;
    int max_iterations = 1000;
    /// A Dirichlet prior on θ (e.g. the α that RECOVER-ALPHA fits to A): empty for none.
    /// With it, θ maximizes Σ_w h_w log (Bθ)_w + Σ_k (α_k − 1) log θ_k where every α_k ≥ 1
    /// (MAP); α_k < 1 count as 1 (the MAP does not exist below: the objective is
    /// unbounded at the simplex's faces); the θ file records the α used.
    Eigen::VectorXd alpha;
};

/// One document's result.
struct DocumentTopics {
    Eigen::VectorXd theta;     ///< K proportions, sum 1; all 0 when the document has no usable word
    double log_likelihood = 0; ///< Σ_w h_w log (B θ)_w over its usable words (natural log)
    std::int64_t tokens = 0;   ///< usable tokens (words of the model with B_w ≠ 0)
    int iterations = 0;
    bool converged = false;
};

/// Local. EM on the mixture weights (the topics fixed): with p_w = Σ_k B_wk θ_k,
///   θ_k ← (θ_k Σ_w h_w B_wk / p_w + α_k − 1) / (n + Σ_k (α_k − 1)),
/// which never decreases the objective (the EM bound; with α the MAP-EM for α_k ≥ 1).
/// Starts from the uniform θ. `words` are row ids of B (0-based), `counts` their h_w;
/// words whose row of B is all zero are skipped (they cannot be explained). When
/// `objective` is given, it receives the objective after every iteration.
DocumentTopics infer_document(const Eigen::MatrixXd& B, const std::vector<std::uint32_t>& words,
                              const std::vector<std::uint32_t>& counts, const InferOptions& options,
                              std::vector<double>* objective = nullptr);

/// Local. Every document of `docs` (word ids already the model's rows), in parallel over
/// distmat::threads() OpenMP threads (each document on one thread: the results do not
/// depend on the thread count).
std::vector<DocumentTopics> infer_documents(const Eigen::MatrixXd& B, const corpus::Shard& docs,
                                            const InferOptions& options);

/// Local. infer_document's objective at θ: Σ_w h_w log (Bθ)_w over the usable words, plus
/// Σ_k (α_k − 1) log θ_k over the α_k > 1.
double objective_at(const Eigen::MatrixXd& B, const std::vector<std::uint32_t>& words,
                    const std::vector<std::uint32_t>& counts, const Eigen::VectorXd& theta,
                    const Eigen::VectorXd& alpha);

}  // namespace jsmf::infer
