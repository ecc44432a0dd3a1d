// SPDX-License-Identifier: MIT
#include "jsmf/model/matching.hpp"

#include <algorithm>
#include <unordered_map>

#include "jsmf/core/error.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/solvers/matching.hpp"

namespace jsmf::model {

TopicMatching match_topics(const Eigen::MatrixXd& B_old, const std::vector<std::string>& vocab_old,
                           const Eigen::MatrixXd& B_new, const std::vector<std::string>& vocab_new, double threshold) {
    JSMF_REQUIRE(static_cast<Index>(vocab_old.size()) == B_old.rows() && static_cast<Index>(vocab_new.size()) == B_new.rows(),
                 "match_topics: a vocabulary's size is not its B's rows");
    // The old model's rows in the new vocabulary's order, then the words only the old one has.
    std::unordered_map<std::string, Index> row_of_new;
    for (std::size_t i = 0; i < vocab_new.size(); ++i)
        JSMF_REQUIRE(row_of_new.emplace(vocab_new[i], static_cast<Index>(i)).second, "match_topics: a repeated word");
    const Index K_old = B_old.cols(), K_new = B_new.cols();
    Eigen::MatrixXd distance = Eigen::MatrixXd::Zero(K_new, K_old);  // ½ Σ_w |b_new(w) − b_old(w)|
    std::vector<bool> seen(vocab_new.size(), false);
    std::unordered_map<std::string, bool> old_words;
    for (std::size_t i = 0; i < vocab_old.size(); ++i) {
        JSMF_REQUIRE(old_words.emplace(vocab_old[i], true).second, "match_topics: a repeated word");
        const auto at = row_of_new.find(vocab_old[i]);
        for (Index l = 0; l < K_old; ++l)
            for (Index k = 0; k < K_new; ++k) {
                const double theirs = at == row_of_new.end() ? 0.0 : B_new(at->second, k);
                distance(k, l) += std::abs(theirs - B_old(static_cast<Index>(i), l));
            }
        if (at != row_of_new.end()) seen[static_cast<std::size_t>(at->second)] = true;
    }
    for (std::size_t i = 0; i < vocab_new.size(); ++i)  // the new model's words the old one lacks
        if (!seen[i])
            for (Index k = 0; k < K_new; ++k) distance.row(k).array() += std::abs(B_new(static_cast<Index>(i), k));
    distance *= 0.5;

    return assign_topics(distance, threshold);
}

TopicMatching assign_topics(const Eigen::MatrixXd& distance, double threshold) {
    const Index K_new = distance.rows(), K_old = distance.cols();
    const Index n = std::max(K_old, K_new);
    Eigen::MatrixXd cost = Eigen::MatrixXd::Constant(n, n, threshold);  // padding: "unmatched"
    // A pair farther than the threshold costs what "unmatched" costs: it can never take an id
    // from a pair within it (0.1 and 0.95 would otherwise beat 0.3 and 0.45).
    cost.topLeftCorner(K_new, K_old) = distance.cwiseMin(threshold);
    const std::vector<int> column = solvers::optimal_assignment(cost);

    TopicMatching m;
    m.threshold = threshold;
    std::vector<bool> kept(static_cast<std::size_t>(K_old), false);
    for (Index k = 0; k < K_new; ++k) {
        const int l = column[static_cast<std::size_t>(k)];
        const bool matched = l < K_old && distance(k, l) <= threshold;
        m.old_of_new.push_back(matched ? l : -1);
        m.distance.push_back(matched ? distance(k, l) : (K_old > 0 ? distance.row(k).minCoeff() : 1.0));
        if (matched) kept[static_cast<std::size_t>(l)] = true;
    }
    for (Index l = 0; l < K_old; ++l)
        if (!kept[static_cast<std::size_t>(l)]) m.gone.push_back(static_cast<int>(l));
    return m;
}

std::vector<int> keeping_order(const TopicMatching& matching) {
    const auto K = static_cast<int>(matching.old_of_new.size());
    std::vector<int> order(static_cast<std::size_t>(K), -1);
    std::vector<int> rest;
    for (int k = 0; k < K; ++k) {
        const int l = matching.old_of_new[static_cast<std::size_t>(k)];
        if (l >= 0 && l < K) order[static_cast<std::size_t>(l)] = k;
        else rest.push_back(k);
    }
    auto next = rest.begin();
    for (int& slot : order)
        if (slot < 0) slot = *next++;
    return order;
}

void permute_topics(Model& m, const std::vector<int>& order) {
    const auto K = static_cast<Index>(order.size());
    JSMF_REQUIRE(K == m.num_topics, "permute_topics: the order is not of the model's K");
    std::vector<bool> seen(order.size(), false);
    for (const int k : order) {
        JSMF_REQUIRE(k >= 0 && k < K && !seen[static_cast<std::size_t>(k)], "permute_topics: not a permutation");
        seen[static_cast<std::size_t>(k)] = true;
    }
    const auto at = [&](Index k) { return static_cast<Index>(order[static_cast<std::size_t>(k)]); };
    if (m.B.cols() == K) {
        const Eigen::MatrixXd B = m.B;
        for (Index k = 0; k < K; ++k) m.B.col(k) = B.col(at(k));
    }
    if (m.B_breve.rows() == K) {
        const Eigen::MatrixXd B_breve = m.B_breve;
        for (Index k = 0; k < K; ++k) m.B_breve.row(k) = B_breve.row(at(k));
    }
    const auto both_axes = [&](Eigen::MatrixXd& X) {  // rows and columns are topics
        if (X.rows() != K || X.cols() != K) return;
        const Eigen::MatrixXd copy = X;
        for (Index k = 0; k < K; ++k)
            for (Index l = 0; l < K; ++l) X(k, l) = copy(at(k), at(l));
    };
    both_axes(m.A);
    both_axes(m.anchorfree.E);  // AnchorFree's E* (A = E*/ΣE*) and M (C* = B̃M: its columns are topics)
    if (m.anchorfree.M.cols() == K) {
        const Eigen::MatrixXd M = m.anchorfree.M;
        for (Index k = 0; k < K; ++k) m.anchorfree.M.col(k) = M.col(at(k));
    }
    const auto reorder = [&](auto& v) {
        if (static_cast<Index>(v.size()) != K) return;
        auto copy = v;
        for (Index k = 0; k < K; ++k) v[k] = copy[order[static_cast<std::size_t>(k)]];
    };
    std::vector<Index> anchors = m.anchors;
    if (static_cast<Index>(anchors.size()) == K)
        for (Index k = 0; k < K; ++k) m.anchors[static_cast<std::size_t>(k)] = anchors[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
    reorder(m.diag_r);
    if (m.has_alpha) reorder(m.alpha);
    for (auto& metric : m.metrics.metrics)
        if (metric.per == "topic") reorder(metric.values);
}

}  // namespace jsmf::model
