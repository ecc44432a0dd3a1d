// SPDX-License-Identifier: MIT
// Which topics of one model are which of another's: topic ids that stay put when a model is
// refit or updated (jsmf show --compare), by the optimal one-to-one matching of B's columns.
#pragma once

#include <Eigen/Core>

#include <string>
#include <vector>

namespace jsmf::model {

/// The default largest distance of a match: a topic that moved more than half of its
/// probability mass to other words is not the same topic.
constexpr double kDefaultMatchDistance = 0.5;

/// How the K_new topics of a model match the K_old of another.
struct TopicMatching {
    /// Per new topic: the old topic it is (0-based), or −1 for a new topic.
    std::vector<int> old_of_new;
    /// Per new topic: the distance to its match; a new topic's to its nearest old topic.
    std::vector<double> distance;
    /// The old topics no new topic is (0-based, ascending).
    std::vector<int> gone;
    double threshold = kDefaultMatchDistance;
};

/// Local. Matches the columns of B_new (N_new × K_new) to those of B_old (N_old × K_old),
/// words aligned by name (a word absent from one vocabulary has probability 0 there), by
/// the total-variation distance ½‖b_new − b_old‖₁ ∈ [0, 1]: the one-to-one assignment of
/// least total distance, each distance capped at `threshold` (the Hungarian method, the
/// smaller side padded with "unmatched" at cost `threshold`: a pair farther apart never
/// takes an id from pairs within it), pairs farther apart than `threshold` then counted as
/// a new topic and a gone one. InvalidArgument for a vocabulary whose size is not B's rows, or a repeated
/// word in one.
TopicMatching match_topics(const Eigen::MatrixXd& B_old, const std::vector<std::string>& vocab_old,
                           const Eigen::MatrixXd& B_new, const std::vector<std::string>& vocab_new,
                           double threshold = kDefaultMatchDistance);

/// Local. match_topics from the distances alone: distance(k, l) between new topic k and old
/// topic l (K_new × K_old, in [0, 1]).
TopicMatching assign_topics(const Eigen::MatrixXd& distance, double threshold = kDefaultMatchDistance);

/// Local. The order that keeps ids: order[k] is the current topic that becomes topic k.
/// A topic matched to old topic l becomes topic l (where l < K_new); the others (new topics,
/// and those whose old id is past K_new) fill the free ids in their current order.
std::vector<int> keeping_order(const TopicMatching& matching);

struct Model;
/// Local. Renumbers m's topics: topic k becomes m's topic order[k] (a permutation of 0..K−1):
/// B's and B̆'s columns and rows, A, the anchors and the finder's r, α, AnchorFree's E* and
/// M, and the per-topic metrics (their means unchanged). B may be this rank's rows (a compressed fit's).
void permute_topics(Model& m, const std::vector<int>& order);

}  // namespace jsmf::model
