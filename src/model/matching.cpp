// SPDX-License-Identifier: MIT
#include "jsmf/model/matching.hpp"

#include <algorithm>
#include <unordered_map>

#include "jsmf/core/error.hpp"
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

    const Index n = std::max(K_old, K_new);
    Eigen::MatrixXd cost = Eigen::MatrixXd::Constant(n, n, threshold);  // padding: "unmatched"
    cost.topLeftCorner(K_new, K_old) = distance;
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

}  // namespace jsmf::model
