// SPDX-License-Identifier: MIT
// What `jsmf report`'s page draws, computed here so that tests check the numbers without a
// browser (the page only draws them): the topic map (Jensen–Shannon distances between B's
// columns, placed by classical MDS as LDAvis does), the terms a relevance slider can show
// (Sievert & Shirley 2014), the correlation heat map's order (a seriation). B comes by rows,
// each rank its block of words, so that no rank holds N × K.
#pragma once

#include <Eigen/Core>

#include <string>
#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::report {

/// Local. λ·log p(w|k) + (1 − λ)·log(p(w|k) / p(w)): LDAvis's relevance of word w to topic
/// k; λ = 1 ranks by p(w|k), λ = 0 by the lift p(w|k) / p(w).
double relevance(double p_wk, double p_w, double lambda);

/// Local. The ids (0 … n − 1) of the `top` words most relevant at `lambda`, most relevant
/// first (ties by id); words with p(w|k) <= 0 or p(w) <= 0 are never ranked.
std::vector<Index> rank_by_relevance(const Eigen::Ref<const Eigen::VectorXd>& p_wk,
                                     const Eigen::Ref<const Eigen::VectorXd>& p_w, double lambda, int top);

/// Local. The words that are among the `top` most relevant at some λ of the slider's grid
/// 0, 1/steps, …, 1, in increasing id: the union of rank_by_relevance over the grid. Only
/// words that fewer than `top` others beat in both p(w|k) and the lift can be among them
/// (such a word loses to all of those at every λ), so the grid is searched over those alone.
std::vector<Index> relevant_words(const Eigen::Ref<const Eigen::VectorXd>& p_wk,
                                  const Eigen::Ref<const Eigen::VectorXd>& p_w, int top, int steps);

/// One topic's terms for the page: the words the slider can show, with p(w|k) and p(w).
struct TopicTerms {
    std::vector<Index> words;  ///< word ids, increasing
    std::vector<double> p_wk;  ///< p(w | k), the same order
    std::vector<double> p_w;   ///< p(w), the same order
};

/// Collective. Each topic's relevant_words over all N words, on the root (empty elsewhere),
/// from each rank's block of B's rows (B_rows: its rows × K, starting at word first_row)
/// and of p(w) (p_w_rows, the same rows). Exact: a word among the top at some λ over all
/// words is among the top of its own rank's block at that λ, so the root ranks the union
/// of the ranks' sets again. Sends at most K × |set| × 24 bytes per rank.
std::vector<TopicTerms> relevant_terms(const mpi::Comm& comm, const Eigen::MatrixXd& B_rows,
                                       const Eigen::VectorXd& p_w_rows, Index first_row, int top, int steps);

/// Local. The partial Jensen–Shannon divergences of B's columns over a block of its rows
/// (K × K): ½ Σ_w [p log(2p/(p+q)) + q log(2q/(p+q))] over the block's words, p = B(w, k),
/// q = B(w, l) (entries <= 0 count as 0). Cost Σ_w nnz(w)² over the block: a word where only
/// one of the two topics is positive adds p·log 2, which column sums account for at once.
Eigen::MatrixXd js_divergence_terms(const Eigen::Ref<const Eigen::MatrixXd>& B_rows);

/// Collective. The Jensen–Shannon divergences (natural log, in [0, log 2]) between B's
/// columns, summed over every rank's rows, on every rank. One allreduce of K × K.
Eigen::MatrixXd js_divergences(const mpi::Comm& comm, const Eigen::MatrixXd& B_rows);

/// Local. Classical (Torgerson) MDS: K points in `dims` dimensions whose distances
/// approximate D's (K × K, symmetric): the top eigenvectors of −½ J D∘D J scaled by √λ
/// (λ < 0 taken as 0). Each axis's sign is fixed so that its largest-magnitude coordinate
/// is positive, so the same D gives the same picture on any machine.
Eigen::MatrixXd classical_mds(const Eigen::MatrixXd& D, int dims = 2);

/// Local. The K × K Pearson correlations of the topic proportions (model::correlation_matrix)
/// ordered for a heat map: topics in the order of the Fiedler vector of the similarity
/// (1 + ρ)/2's Laplacian (spectral seriation, Atkins et al. 1998), so that correlated topics
/// sit together; a topic whose variance is not positive comes last. Returns the order.
std::vector<int> spectral_order(const Eigen::MatrixXd& correlation);

/// Local. The pairs the page lists: the `positive` most and the `negative` least correlated
/// of model::topic_correlations (all of them when there are no more than both together).
std::vector<model::TopicPair> strongest_pairs(const Eigen::MatrixXd& A, int positive, int negative);

/// Local. The order of a hierarchy's first level for the heat map: grouped by supertopic of
/// the level above (model::subtopics), the supertopics by prevalence, within each by weight.
std::vector<int> hierarchy_order(const model::HierarchyLevel& level, int topics);

/// Local. The `n` documents (rows of θ, D × K) of largest θ(d, k), largest first (ties by
/// row); documents with θ(d, k) = 0 never (a row of zeros had no usable word).
std::vector<Index> representative_documents(const Eigen::MatrixXd& theta, int k, int n);

/// Local. L × K: each label's mean θ over its documents (`labels`: one per row of θ, 1-based,
/// at most L), the rows of zeros (no usable word) left out; NaN where a label has none.
Eigen::MatrixXd label_prevalence(const Eigen::MatrixXd& theta, const std::vector<std::int64_t>& labels, int L);

/// One line of a sweep's metric-versus-K charts: the runs that share every setting but K.
struct SweepSeries {
    std::string label;                         ///< the settings that vary over the sweep ("rectify=ap, solver=admm")
    std::vector<int> topics;                   ///< K of each run, increasing
    std::vector<std::vector<double>> mean;     ///< [quantity][run]: the metric's mean (NaN: not measured)
    std::vector<std::vector<double>> std;      ///< [quantity][run]: its standard deviation (NaN: none)
};
struct SweepView {
    std::vector<std::string> quantities;       ///< metrics with a value in some run, then run_seconds
    std::vector<SweepSeries> series;
};

/// Local. The charts of a sweep's table (jsmf sweep's CSV: header and rows): its runs grouped
/// by the settings that differ between them (every column but K, the file, the metrics and
/// what a run measured), each group's runs ordered by K. `metrics`: the metric names
/// (eval::metric_names()); their columns hold the mean, "<name>_std" the deviation.
/// InputError for a table without a topics column.
SweepView sweep_view(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                     const std::vector<std::string>& metrics);

}  // namespace jsmf::report
