// SPDX-License-Identifier: MIT
// When a projection rectifier (AP, DR, DP) may stop: rules on what the topics of the
// current iterate look like, checked every few iterations.
#pragma once

#include <Eigen/Core>

#include <limits>
#include <string>
#include <vector>

#include "jsmf/core/names.hpp"
#include "jsmf/core/types.hpp"

namespace jsmf::rectify {

/// iterations: run --iterations (or until the change is below --tolerance), the papers'
/// way. quality: stop once the papers' quality measures have settled. fixed_point: stop
/// once the topics have stopped moving.
enum class StopRule { iterations, quality, fixed_point };
inline const Names<StopRule, 3>& names(StopRule) {
    static const Names<StopRule, 3> table{"iterations", "quality", "fixed-point"};
    return table;
}

/// Why a run stopped, as written to /rectification (attribute stop_reason).
enum class StopReason { none, iterations, tolerance, quality, fixed_point };
inline const Names<StopReason, 5>& names(StopReason) {
    static const Names<StopReason, 5> table{"none", "iterations", "tolerance", "quality", "fixed-point"};
    return table;
}

/// One look at the topics of an iterate: its anchors, B (found as the fit would) and the
/// measures the quality rule watches. Replicated.
struct TopicCheck {
    int iteration = 0;                 ///< iterations done when the check ran
    std::vector<Index> anchors;
    int anchors_changed = -1;          ///< anchors not among the previous check's (-1: first check)
    /// L1 distance per topic between this check's B and the previous one's, columns
    /// matched one to one (Hungarian on L1): median and max over topics (NaN: first check)
    double b_change_median = std::numeric_limits<double>::quiet_NaN();
    double b_change_max = std::numeric_limits<double>::quiet_NaN();
    /// The papers' measures of the topics (NIPS'15 §5; practical-jsmf §5): mean
    /// specificity (bits) and mean hard dissimilarity of the top 20 words, on B and the
    /// iterate's row sums
    double specificity = std::numeric_limits<double>::quiet_NaN();
    double dissimilarity = std::numeric_limits<double>::quiet_NaN();
};

struct StopSettings {
    StopRule rule = StopRule::quality;
    /// fixed_point: the last `fixed_point_window` checks have the same anchors and the
    /// moves of B between them (L1, max over topics) sum to at most b_tolerance: no topic
    /// moved more than that across the window. (AP creeps: a short window would stop on
    /// a slow stretch of the path, not at its end.)
    int fixed_point_window = 6;
    /// quality: the window (checks) over which anchors and measures must hold still.
    int window = 3;
    double b_tolerance = 1e-3;
    /// quality: over the last `window` checks, the anchors are the same, the measures
    /// moved by at most quality_tolerance (relative) and B by at most
    /// quality_b_tolerance (L1 per topic, median).
    double quality_tolerance = 0.005;
    double quality_b_tolerance = 0.02;
};

/// Local. The rule's verdict on the checks so far (oldest first): fixed_point, quality or
/// none (go on).
StopReason stop_verdict(const std::vector<TopicCheck>& checks, const StopSettings& settings);

/// Local. Fills `next`'s comparisons (anchors_changed, b_change_*) against `previous`
/// (B_previous its B) given next's B.
void compare_checks(const TopicCheck& previous, const Eigen::MatrixXd& B_previous, TopicCheck& next,
                    const Eigen::MatrixXd& B_next);

}  // namespace jsmf::rectify
