// SPDX-License-Identifier: MIT
// The Hungarian method with row and column potentials (shortest augmenting paths).
#include "jsmf/solvers/matching.hpp"

#include <limits>

#include "jsmf/core/error.hpp"

namespace jsmf::solvers {

std::vector<int> optimal_assignment(const Eigen::MatrixXd& cost) {
    if (cost.rows() != cost.cols()) throw InputError("matching: the cost matrix must be square");
    if (!cost.allFinite()) throw InputError("matching: the cost matrix has a non-finite entry");
    const int n = static_cast<int>(cost.rows());
    const double inf = std::numeric_limits<double>::infinity();
    // 1-based arrays: row_of[j] is the row matched to column j (0 = none); u, v potentials.
    std::vector<double> u(n + 1, 0.0), v(n + 1, 0.0);
    std::vector<int> row_of(n + 1, 0), previous(n + 1, 0);
    for (int i = 1; i <= n; ++i) {
        row_of[0] = i;
        int j0 = 0;
        std::vector<double> min_slack(n + 1, inf);
        std::vector<bool> used(n + 1, false);
        do {  // grow the alternating tree until it reaches a free column
            used[j0] = true;
            const int i0 = row_of[j0];
            double delta = inf;
            int j1 = 0;
            for (int j = 1; j <= n; ++j) {
                if (used[j]) continue;
                const double slack = cost(i0 - 1, j - 1) - u[i0] - v[j];
                if (slack < min_slack[j]) {
                    min_slack[j] = slack;
                    previous[j] = j0;
                }
                if (min_slack[j] < delta) {
                    delta = min_slack[j];
                    j1 = j;
                }
            }
            for (int j = 0; j <= n; ++j) {
                if (used[j]) {
                    u[row_of[j]] += delta;
                    v[j] -= delta;
                } else {
                    min_slack[j] -= delta;
                }
            }
            j0 = j1;
        } while (row_of[j0] != 0);
        do {  // augment along the path
            const int j1 = previous[j0];
            row_of[j0] = row_of[j1];
            j0 = j1;
        } while (j0 != 0);
    }
    std::vector<int> column(static_cast<std::size_t>(n));
    for (int j = 1; j <= n; ++j) column[static_cast<std::size_t>(row_of[j] - 1)] = j - 1;
    return column;
}

Eigen::MatrixXd l1_column_distances(const Eigen::MatrixXd& learned, const Eigen::MatrixXd& reference) {
    if (learned.rows() != reference.rows() || learned.cols() != reference.cols())
        throw InputError("matching: the two topic matrices differ in shape");
    Eigen::MatrixXd cost(learned.cols(), reference.cols());
    for (Eigen::Index k = 0; k < learned.cols(); ++k)
        for (Eigen::Index l = 0; l < reference.cols(); ++l) cost(k, l) = (learned.col(k) - reference.col(l)).lpNorm<1>();
    return cost;
}

}  // namespace jsmf::solvers
