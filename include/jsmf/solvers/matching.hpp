// SPDX-License-Identifier: MIT
// Topic matching: the optimal one-to-one assignment between learned and reference topics.
#pragma once

#include <Eigen/Core>

#include <vector>

namespace jsmf::solvers {

/// Local. The Hungarian method (Kuhn–Munkres with potentials, O(n³)) on a square cost
/// matrix: returns `column` with column[k] the column assigned to row k, minimizing
/// Σ_k cost(k, column[k]). Throws InputError for a non-square or non-finite matrix.
std::vector<int> optimal_assignment(const Eigen::MatrixXd& cost);

/// Local. The L1 distances between the columns of `learned` and of `reference` (both
/// N × K): cost(k, l) = ‖learned_k − reference_l‖₁, the usual cost for matching topics.
Eigen::MatrixXd l1_column_distances(const Eigen::MatrixXd& learned, const Eigen::MatrixXd& reference);

}  // namespace jsmf::solvers
