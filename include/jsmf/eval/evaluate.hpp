// SPDX-License-Identifier: MIT
// Every metric of a model at once: the set jsmf fit, eval and sweep store and print.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/eval/metrics.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::eval {

/// One metric: a mean and a sample standard deviation over its per-topic or per-word
/// values, or a single number (per empty, std NaN, no values).
struct Metric {
    std::string name;
    std::string per;  ///< "topic", "word" or "" (a single number)
    double mean = 0;
    double std = 0;
    Eigen::VectorXd values;
};

/// The metrics of one model, in a fixed order (the order of metric_names()), one entry per
/// name: adding a metric that is there replaces it.
struct MetricSet {
    std::vector<Metric> metrics;
    void add(const std::string& name, const std::string& per, const Eigen::VectorXd& values);
    void add_number(const std::string& name, double value);
    void put(Metric metric);
    /// nullptr when absent.
    const Metric* find(const std::string& name) const;
};

/// One metric jsmf can report: its name (in the files, the CSV, the printout), what it
/// averages over, what it is, and what it needs beyond a model and its C. The one place a
/// metric is named: the model file's writer and reader, `jsmf show`, the sweep's CSV and
/// the file's schema (`jsmf show --schema`) all go through metric_table(), so a new
/// metric is one line there (and its computation).
struct MetricInfo {
    const char* name;
    const char* per;      ///< "topic" or "word" (a mean and std of K or N values), "" (one number)
    const char* meaning;
    const char* needs;    ///< "" (the model, C), "corpus" (the documents that built C), "labels" (document labels)
};
/// Every metric, in report order (the CSV's columns): recovery, recovery_original,
/// approximation, approximation_offdiag, approximation_original,
/// approximation_offdiag_original, legality, validity, validity_original, dominancy,
/// entropy, sparsity, specificity, specificity_original, dissimilarity,
/// dissimilarity_soft, coherence, npmi, basis_rank, basis_rank_soft, basis_quality,
/// basis_quality_soft, simcount, clustacc, clustacc_theta.
const std::vector<MetricInfo>& metric_table();
/// Local. The table's entry for `name`; nullptr when there is none.
const MetricInfo* find_metric(const std::string& name);
/// The names of metric_table(), in its order.
const std::vector<std::string>& metric_names();
/// Local. True for the metrics that are a single number (no standard deviation).
bool is_single_number(const std::string& name);

/// A learned model as the metrics see it, whole (on the rank that computes them).
struct ModelView {
    const Eigen::MatrixXd& B;        ///< N × K
    const Eigen::MatrixXd& B_breve;  ///< K × N
    const Eigen::MatrixXd& A;        ///< K × K
    const Eigen::VectorXd& p;        ///< N, p(x = i) of the C that Bayes' rule used
    const std::vector<Index>& anchors;
};

/// Collective on `comm`. Replaces every rank's set by `root`'s: the metrics computed where
/// the model's N × K arrays are (the dense pipeline's root).
void broadcast(const mpi::Comm& comm, MetricSet& set, int root);

/// Local. The metrics of B, B̆, A and p alone (legality, validity, dominancy, entropy,
/// sparsity, specificity, both dissimilarities, the four basis metrics, simcount).
MetricSet model_metrics(const ModelView& m);

/// Collective on C.grid(). Adds recovery<suffix>, approximation<suffix> and
/// approximation_offdiag<suffix> measured against C (see dist_metrics.hpp); with a
/// suffix (another C than the one Bayes' rule used) also validity<suffix> and
/// specificity<suffix> with that C's row sums, as the authors' first evaluation line.
void add_matrix_metrics(MetricSet& set, const distmat::DistMatrix& C, const ModelView& m, const std::string& suffix);

/// Local. Adds coherence and npmi from the document counts of coherence_pairs(top), `top`
/// the top words (top_words(B)): `d2` in that order, `d1` per word, over `documents` documents.
void add_coherence(MetricSet& set, const Eigen::MatrixXi& top, const std::vector<std::int64_t>& d1,
                   const std::vector<std::int64_t>& d2, std::int64_t documents);

/// Local. Sorts `set` into metric_names() order.
void sort_metrics(MetricSet& set);

}  // namespace jsmf::eval
