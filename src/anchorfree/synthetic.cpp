// SPDX-License-Identifier: MIT
// The AnchorFree paper's synthetic tests and their success criterion.
#include "jsmf/anchorfree/synthetic.hpp"

#include <limits>
#include <random>

#include "jsmf/core/error.hpp"
#include "jsmf/solvers/matching.hpp"

namespace jsmf::anchorfree {

PlantedFactors paper_synthetic(Index V, int F, int anchored, Seed seed) {
    if (F < 2 || V <= F) throw InputError("paper_synthetic: needs 2 <= F < V");
    std::mt19937_64 engine(seed);
    std::exponential_distribution<double> exponential(1.0);
    std::bernoulli_distribution zeroed(0.5);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    PlantedFactors out;
    out.C.resize(V, F);
    for (Index j = 0; j < F; ++j)
        for (Index i = 0; i < V; ++i) {
            const double value = exponential(engine);
            out.C(i, j) = zeroed(engine) ? 0.0 : value;
        }
    const int rows = std::min(F, anchored);
    for (int r = 0; r < rows; ++r) {
        out.C.row(r).setZero();
        out.C(r, r) = 1.0;
    }
    for (Index j = 0; j < F; ++j) {
        const double sum = out.C.col(j).sum();
        if (!(sum > 0)) throw InputError("paper_synthetic: an all-zero column (V too small)");
        out.C.col(j) /= sum;
    }
    Eigen::MatrixXd U(F, F);
    for (Index j = 0; j < F; ++j)
        for (Index i = 0; i < F; ++i) U(i, j) = uniform(engine);
    out.E = U * U.transpose() / F + Eigen::MatrixXd::Identity(F, F);
    out.P = out.C * out.E * out.C.transpose();
    return out;
}

RecoveryScore score_recovery(const Eigen::MatrixXd& C_est, const Eigen::MatrixXd& E_est, const Eigen::MatrixXd& C,
                             const Eigen::MatrixXd& E) {
    RecoveryScore score;
    const Index F = C.cols();
    if (C_est.rows() != C.rows() || C_est.cols() != F || E_est.rows() != F || E_est.cols() != F ||
        !C_est.allFinite() || !E_est.allFinite()) {
        score.C_error = score.E_error = std::numeric_limits<double>::infinity();
        return score;
    }
    Eigen::MatrixXd cost(F, F);  // truth k against estimate j
    for (Index k = 0; k < F; ++k)
        for (Index j = 0; j < F; ++j) cost(k, j) = (C_est.col(j) - C.col(k)).squaredNorm();
    score.matching = solvers::optimal_assignment(cost);
    for (Index k = 0; k < F; ++k) {
        const int j = score.matching[static_cast<std::size_t>(k)];
        score.C_error += cost(k, j);
        for (Index l = 0; l < F; ++l) {
            const double d = E_est(j, score.matching[static_cast<std::size_t>(l)]) - E(k, l);
            score.E_error += d * d;
        }
    }
    return score;
}

}  // namespace jsmf::anchorfree
