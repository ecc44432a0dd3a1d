// SPDX-License-Identifier: MIT
// The metric set: gathers the local, distributed and corpus-count metrics under one name each.
#include "jsmf/eval/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "jsmf/distmat/ops.hpp"
#include "jsmf/eval/dist_metrics.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::eval {

void MetricSet::add(const std::string& name, const std::string& per, const Eigen::VectorXd& values) {
    const Summary s = summarize(values);
    put({name, per, s.mean, s.std, values});
}

void MetricSet::add_number(const std::string& name, double value) {
    put({name, "", value, std::numeric_limits<double>::quiet_NaN(), {}});
}

void MetricSet::put(Metric metric) {
    for (auto& old : metrics) {
        if (old.name == metric.name) {
            old = std::move(metric);
            return;
        }
    }
    metrics.push_back(std::move(metric));
}

const Metric* MetricSet::find(const std::string& name) const {
    for (const auto& metric : metrics)
        if (metric.name == name) return &metric;
    return nullptr;
}

const std::vector<MetricInfo>& metric_table() {
    // The definitions, their sources and which value is better: jsmf eval --help.
    static const std::vector<MetricInfo> table = {
        {"recovery", "word", "‖C̄_i − Σ_k B̆_ki C̄_{s_k}‖₂, C̄ the rectified C row-normalized", ""},
        {"recovery_original", "word", "the same against the original C", ""},
        {"approximation", "", "‖C − B A Bᵀ‖_F against the rectified C", ""},
        {"approximation_offdiag", "", "√(total² − diagonal²) of the same", ""},
        {"approximation_original", "", "‖C − B A Bᵀ‖_F against the original C", ""},
        {"approximation_offdiag_original", "", "√(total² − diagonal²) of the same", ""},
        {"legality", "", "ΣA (≈ 1)", ""},
        {"validity", "", "symmetric KL (bits) between A's row sums and the topic marginals of B, B̆ and p", ""},
        {"validity_original", "", "the same with the original C's row sums as p", ""},
        {"dominancy", "topic", "A_kk / Σ_l A_kl", ""},
        {"entropy", "word", "H(B̆_{:,i}) / log₂ K", ""},
        {"sparsity", "topic", "(√N − ‖b_k‖₁/‖b_k‖₂) / (√N − 1)", ""},
        {"specificity", "topic", "KL(b_k ‖ p) in bits, p the rectified C's row sums", ""},
        {"specificity_original", "topic", "the same with the original C's row sums", ""},
        {"dissimilarity", "topic", "words of topic k's top 20 in no other topic's top 20", ""},
        {"dissimilarity_soft", "topic", "mean symmetric KL (bits) between b_k and the other topics", ""},
        {"coherence", "topic", "Σ over pairs of the top 20 of ln((D2 + 0.01) / D1), over the documents that built C",
         "corpus"},
        {"npmi", "topic",
         "mean over pairs of the top 20 of ln((P12 + 1e-12) / (P1 P2)) / −ln(P12 + 1e-12), P the share of the documents "
         "that built C: gensim's c_npmi, each document one window",
         "corpus"},
        {"basis_rank", "topic", "1-based rank of the anchor s_k in its topic's sorted column", ""},
        {"basis_rank_soft", "topic", "ln max_i B_ik − ln B_{s_k,k}", ""},
        {"basis_quality", "topic", "mean rank of s_k in the other topics' sorted columns", ""},
        {"basis_quality_soft", "topic", "mean of B_{s_k,l}, l ≠ k", ""},
        {"simcount", "", "SimCount as AnchorFree's tables give it: over unordered topic pairs, the top-20 words they share", ""},
        {"simcount_topic", "topic", "Σ_{l≠k} of topic k's top 20 words shared with topic l's (its mean x K / 2 is simcount)",
         ""},
        {"clustacc", "", "clustering accuracy of the documents' topic weights by NNLS on B against their labels",
         "labels"},
        {"clustacc_theta", "", "the same with the documents' θ of jsmf infer", "labels"},
    };
    return table;
}

const MetricInfo* find_metric(const std::string& name) {
    for (const auto& info : metric_table())
        if (name == info.name) return &info;
    return nullptr;
}

const std::vector<std::string>& metric_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& info : metric_table()) out.emplace_back(info.name);
        return out;
    }();
    return names;
}

bool is_single_number(const std::string& name) {
    const MetricInfo* info = find_metric(name);
    return info && *info->per == '\0';
}

MetricSet model_metrics(const ModelView& m) {
    MetricSet set;
    set.add_number("legality", legality(m.A));
    set.add_number("validity", validity(m.B, m.A, m.B_breve, m.p));
    set.add("dominancy", "topic", dominancy(m.A));
    set.add("entropy", "word", entropy(m.B_breve));
    set.add("sparsity", "topic", sparsity(m.B));
    set.add("specificity", "topic", specificity(m.B, m.p));
    set.add("dissimilarity", "topic", dissimilarity_hard(m.B));
    set.add("dissimilarity_soft", "topic", dissimilarity_soft(m.B));
    set.add("basis_rank", "topic", basis_rank_hard(m.B, m.anchors));
    set.add("basis_rank_soft", "topic", basis_rank_soft(m.B, m.anchors));
    set.add("basis_quality", "topic", basis_quality_hard(m.B, m.anchors));
    set.add("basis_quality_soft", "topic", basis_quality_soft(m.B, m.anchors));
    const Eigen::VectorXd shared = simcount(m.B);
    set.add_number("simcount", shared.sum() / 2);  // each pair counted by both its topics
    set.add("simcount_topic", "topic", shared);
    return set;
}

void add_matrix_metrics(MetricSet& set, const distmat::DistMatrix& C, const ModelView& m, const std::string& suffix) {
    set.add("recovery" + suffix, "word", recovery_errors(C, m.anchors, m.B_breve));
    if (!suffix.empty()) {
        // The authors evaluate every metric twice, with the original C's row sums and with
        // the rectified C's (EXP_factorizeC.m); validity and specificity are the ones that
        // use them (the unsuffixed ones use m.p, the rectified C's).
        const Eigen::VectorXd p = distmat::row_sums(C);
        set.add_number("validity" + suffix, validity(m.B, m.A, m.B_breve, p));
        set.add("specificity" + suffix, "topic", specificity(m.B, p));
    }
    const ApproximationError error = approximation_error(C, m.B, m.A);
    set.add_number("approximation" + suffix, error.total);
    set.add_number("approximation_offdiag" + suffix, error.off_diagonal);
}

void broadcast(const mpi::Comm& comm, MetricSet& set, int root) {
    std::int64_t count = static_cast<std::int64_t>(set.metrics.size());
    mpi::broadcast(comm, count, root);
    set.metrics.resize(static_cast<std::size_t>(count));
    for (Metric& metric : set.metrics) {
        mpi::broadcast(comm, metric.name, root);
        mpi::broadcast(comm, metric.per, root);
        double numbers[2] = {metric.mean, metric.std};
        mpi::broadcast(comm, numbers, 2, root);
        metric.mean = numbers[0];
        metric.std = numbers[1];
        std::int64_t size = metric.values.size();
        mpi::broadcast(comm, size, root);
        metric.values.resize(size);
        mpi::broadcast(comm, metric.values.data(), static_cast<std::size_t>(size), root);
    }
}

void add_coherence(MetricSet& set, const Eigen::MatrixXi& top, const std::vector<std::int64_t>& d1,
                   const std::vector<std::int64_t>& d2, std::int64_t documents) {
    const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> d1_vector =
        Eigen::Map<const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>>(d1.data(), static_cast<Index>(d1.size()));
    set.add("coherence", "topic", coherence(top, d1_vector, d2));
    set.add("npmi", "topic", npmi(top, d1_vector, d2, documents));
}

void sort_metrics(MetricSet& set) {
    const auto& names = metric_names();
    const auto position = [&](const Metric& metric) {
        return std::find(names.begin(), names.end(), metric.name) - names.begin();
    };
    std::stable_sort(set.metrics.begin(), set.metrics.end(),
                     [&](const Metric& a, const Metric& b) { return position(a) < position(b); });
}

}  // namespace jsmf::eval
