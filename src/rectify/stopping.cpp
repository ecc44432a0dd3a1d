// SPDX-License-Identifier: MIT
// Stopping rules for the projection rectifiers, on checks of the iterate's topics.
#include "jsmf/rectify/stopping.hpp"

#include <algorithm>
#include <cmath>

#include "jsmf/solvers/matching.hpp"

namespace jsmf::rectify {

void compare_checks(const TopicCheck& previous, const Eigen::MatrixXd& B_previous, TopicCheck& next,
                    const Eigen::MatrixXd& B_next) {
    next.anchors_changed = 0;
    for (const Index a : next.anchors)
        if (std::find(previous.anchors.begin(), previous.anchors.end(), a) == previous.anchors.end())
            ++next.anchors_changed;
    // Topics keep no fixed order between checks (a new anchor can come earlier): match them.
    const Eigen::MatrixXd cost = solvers::l1_column_distances(B_next, B_previous);
    const std::vector<int> match = solvers::optimal_assignment(cost);
    std::vector<double> moved(match.size());
    for (std::size_t k = 0; k < match.size(); ++k) moved[k] = cost(static_cast<Index>(k), match[k]);
    std::sort(moved.begin(), moved.end());
    const std::size_t n = moved.size();
    next.b_change_max = moved.back();
    next.b_change_median = n % 2 ? moved[n / 2] : 0.5 * (moved[n / 2 - 1] + moved[n / 2]);
}

namespace {
bool relative_within(double a, double b, double tolerance) {
    return std::abs(a - b) <= tolerance * std::max(std::abs(a), std::abs(b));
}
}  // namespace

StopReason stop_verdict(const std::vector<TopicCheck>& checks, const StopSettings& s) {
    const int window = s.rule == StopRule::fixed_point ? s.fixed_point_window : s.window;
    if (s.rule == StopRule::iterations || window < 2 || checks.size() < static_cast<std::size_t>(window))
        return StopReason::none;
    const auto first = checks.end() - window;
    // Every check in the window after its first was compared with its predecessor.
    for (auto c = first + 1; c != checks.end(); ++c)
        if (c->anchors_changed != 0) return StopReason::none;
    if (s.rule == StopRule::fixed_point) {
        // Σ of the moves between checks bounds each topic's move over the whole window.
        double moved = 0;
        for (auto c = first + 1; c != checks.end(); ++c) moved += c->b_change_max;
        return moved <= s.b_tolerance ? StopReason::fixed_point : StopReason::none;
    }
    for (auto c = first + 1; c != checks.end(); ++c) {
        if (!(c->b_change_median <= s.quality_b_tolerance)) return StopReason::none;
        if (!relative_within(c->specificity, first->specificity, s.quality_tolerance) ||
            !relative_within(c->dissimilarity, first->dissimilarity, s.quality_tolerance))
            return StopReason::none;
    }
    return StopReason::quality;
}

}  // namespace jsmf::rectify
