// SPDX-License-Identifier: MIT
// Synthetic corpora drawn from a planted separable topic model, with the truth kept.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "jsmf/core/names.hpp"
#include "jsmf/core/types.hpp"
#include "jsmf/corpus/shard.hpp"

namespace jsmf::synth {

enum class TopicPrior {
    dirichlet,        ///< w ~ Dirichlet(alpha·1)
    logistic_normal,  ///< w = softmax(η), η ~ N(0, Σ), Σ_kl = σ² ρ^|k−l| (correlated topics)
};
inline const Names<TopicPrior, 2>& names(TopicPrior) {
    static const Names<TopicPrior, 2> table{"dirichlet", "logistic-normal"};
    return table;
}

struct SynthOptions {
    Index num_docs = 2000;
    Index num_words = 500;
    int num_topics = 5;
    int anchors_per_topic = 1;
    /// Probability mass of each anchor word within its topic.
    double anchor_mass = 0.02;
    /// Concentration of the Dirichlet that draws each topic's non-anchor word weights.
    double word_concentration = 0.1;
    TopicPrior prior = TopicPrior::dirichlet;
    double alpha = 0.1;        ///< Dirichlet prior (symmetric)
    double sigma = 1.0;        ///< logistic-normal scale
    double correlation = 0.5;  ///< logistic-normal ρ in Σ_kl = σ² ρ^|k−l|
    /// logistic-normal: with G > 0, Σ_kl = σ² ρ for k ≠ l in the same of G contiguous
    /// groups of topics and 0 across groups (topics of topics: a planted hierarchy)
    int groups = 0;
    double mean_doc_length = 100;  ///< Poisson mean of n_m
    Seed seed = 1;
    /// Samples for the Monte Carlo A of the logistic-normal prior (no closed form).
    Index monte_carlo_samples = 200000;
    /// > 0: Zipfian word frequencies, as in real corpora: each topic's ordinary word
    /// weights are its Dirichlet draw times (i + 1)^-zipf for word i (word 0 the most
    /// frequent), renormalized. 0 (default): the Dirichlet draw alone.
    double zipf = 0;
};

/// A corpus and the model that generated it.
struct SynthCorpus {
    corpus::Shard docs;  ///< document m has key {0, m + 1}; empty documents are absent
    Index num_docs = 0;  ///< D, including documents that came out empty
    std::vector<std::string> vocab;
    Eigen::MatrixXd B;            ///< N×K, column k = p(word | topic k), sums to 1
    Eigen::MatrixXd A;            ///< K×K population E[w wᵀ], sums to 1
    Eigen::MatrixXd A_empirical;  ///< K×K (1/D) Σ_m w_m w_mᵀ of the drawn documents
    Eigen::MatrixXi anchors;      ///< K × anchors_per_topic word ids (0-based)
    /// Per document (all D, empty ones included): its dominant topic argmax_k w_mk, a
    /// class label for ClustAcc.
    std::vector<int> labels;
    /// K × D: document m's topic proportions w_m (all D, empty ones included).
    Eigen::MatrixXd proportions;
};

/// Local. Draws a corpus: B with `anchors_per_topic` anchor words per topic (an anchor
/// has mass only in its own topic; anchor ids are a seeded random choice), topic
/// proportions w_m from the prior, n_m ~ Poisson(mean_doc_length), and n_m tokens with
/// z ~ w_m, x ~ B_z. Same options (seed included) => the same corpus, bit for bit, with
/// the same standard library. Memory: the whole corpus (meant for test/demo sizes).
SynthCorpus generate(const SynthOptions& options);

/// The planted model alone: what generate() draws before the documents (the same B, A,
/// anchors and vocabulary for the same options), and what draws each document's w.
struct PlantedModel {
    Eigen::MatrixXd B;            ///< N×K
    Eigen::MatrixXd A;            ///< K×K population E[w wᵀ]
    Eigen::MatrixXi anchors;      ///< K × anchors_per_topic
    std::vector<std::string> vocab;
    Eigen::VectorXd alpha;        ///< the Dirichlet prior's (dirichlet)
    Eigen::MatrixXd L;            ///< the logistic-normal prior's Cholesky factor (logistic_normal)
};

/// Local. generate()'s model: B, A, anchors, vocabulary. Memory N × K.
PlantedModel plant_model(const SynthOptions& options);

/// What draw_document_range drew.
struct RangeStats {
    Index documents = 0, nonempty = 0, tokens = 0, entries = 0;
    Eigen::MatrixXd w_moment;     ///< K×K Σ_m w_m w_mᵀ over the range (for A_empirical)
};

/// Local. Documents first, …, last − 1 (0-based, of D) from `model`: each from its own
/// random stream, seeded by (options.seed, m), so a document is the same whatever range
/// (rank) draws it; n_m ~ Poisson(mean_doc_length), z ~ w_m, x ~ B_z by inverted
/// cumulative sums. `sink(m, words, counts)` gets each non-empty document (words 0-based,
/// ascending); nothing is kept, so any range fits in memory. Not the documents of
/// generate(), which draws them from one stream in order.
RangeStats draw_document_range(const PlantedModel& model, const SynthOptions& options, Index first, Index last,
                               const std::function<void(Index, const std::vector<std::uint32_t>&,
                                                        const std::vector<std::uint32_t>&)>& sink);

/// A logistic-normal prior: w = softmax(η), η ~ N(mean, L Lᵀ).
struct LogisticNormalPrior {
    Eigen::VectorXd mean;
    Eigen::MatrixXd L;            ///< K × K lower-triangular
    double relative_error = 0;    ///< ‖Â − Ā‖_F / ‖Ā‖_F of the fit, Â on fresh draws
};

/// Local. Fits a logistic-normal prior to A (normalized to Ā = A/ΣA) by moment matching:
/// Adam on ‖Â(μ, L) − Ā‖²_F, Â = (1/S) Σ_s w_s w_sᵀ with w_s = softmax(μ + L z_s) over `samples`
/// fixed standard normal draws (common random numbers: a smooth, seeded objective; the
/// gradient through the softmax is exact). Starts from μ = ln(Ā1), L = I. Cost:
/// O(iterations · samples · K²). Throws InputError for a non-square, non-finite or
/// non-positive A.
LogisticNormalPrior fit_logistic_normal(const Eigen::MatrixXd& A, Seed seed, Index samples = 4000,
                                        int iterations = 400);

/// The topic prior of a semi-synthetic corpus.
struct ModelPrior {
    TopicPrior kind = TopicPrior::dirichlet;
    Eigen::VectorXd alpha;               ///< dirichlet: α (fitted to A by RECOVER-ALPHA)
    LogisticNormalPrior logistic_normal; ///< logistic_normal: fitted by fit_logistic_normal
};

/// Local. A semi-synthetic corpus (the Arora et al. protocol): documents drawn from a
/// learned model's B (columns renormalized) with topic proportions w from `prior`. The
/// truth kept: that B, A = E[w wᵀ] of the prior (closed form for the Dirichlet, Monte
/// Carlo with `monte_carlo_samples` draws for the logistic normal), the learned anchors
/// (K × 1). Throws InputError on bad shapes or values.
SynthCorpus generate_from_model(const Eigen::MatrixXd& B, const ModelPrior& prior, const std::vector<Index>& anchors,
                                std::vector<std::string> vocab, Index num_docs, double mean_doc_length, Seed seed,
                                Index monte_carlo_samples = 200000);

/// Local. Writes one label per line (document 1 first). Throws InputError.
void write_labels(const std::string& path, const std::vector<int>& labels);

/// Local. Writes docs as UCI docword (gzip when `path` ends in ".gz"). Throws InputError.
void write_uci(const std::string& path, const corpus::Shard& docs, Index num_docs, Index num_words);

}  // namespace jsmf::synth
