// SPDX-License-Identifier: MIT
// The tests' oracle for nonnegative (and capped-simplex) least squares: enumeration of supports.
#pragma once

#include <Eigen/Core>
#include <Eigen/QR>

#include <vector>

namespace jsmf::test {

/// The exact minimizer of ‖Uh − v‖² over h >= 0 (capped: and 1ᵀh <= 1) by enumeration,
/// from U itself (QR), not from G: the optimum is the minimizer on the affine set of its
/// own support S (h_S free, or with 1ᵀh_S = 1 where the cap is active), and that minimizer
/// is feasible; every feasible candidate is a feasible point. So the feasible candidate of
/// least ‖Uh − v‖² is the optimum. 2^K supports: for small K only.
inline Eigen::VectorXd brute_force_nnls(const Eigen::MatrixXd& U, const Eigen::VectorXd& v, bool capped) {
    const int K = static_cast<int>(U.cols());
    Eigen::VectorXd best = Eigen::VectorXd::Zero(K);  // S = {}: h = 0, always feasible
    double best_value = v.squaredNorm();
    auto consider = [&](const std::vector<int>& S, const Eigen::VectorXd& z) {
        if ((z.array() < 0).any() || (capped && z.sum() > 1)) return;
        Eigen::VectorXd h = Eigen::VectorXd::Zero(K);
        for (std::size_t a = 0; a < S.size(); ++a) h(S[a]) = z(static_cast<Eigen::Index>(a));
        const double value = (U * h - v).squaredNorm();
        if (value < best_value) best_value = value, best = h;
    };
    for (int mask = 1; mask < (1 << K); ++mask) {
        std::vector<int> S;
        for (int k = 0; k < K; ++k)
            if (mask & (1 << k)) S.push_back(k);
        const auto m = static_cast<Eigen::Index>(S.size());
        Eigen::MatrixXd U_S(U.rows(), m);
        for (Eigen::Index a = 0; a < m; ++a) U_S.col(a) = U.col(S[static_cast<std::size_t>(a)]);
        consider(S, U_S.colPivHouseholderQr().solve(v));  // the cap inactive
        if (!capped) continue;
        // The cap active: h_last = 1 − Σ others, least squares in the others on the
        // differences U_a − U_last.
        Eigen::VectorXd z(m);
        z(m - 1) = 1;
        if (m > 1) {
            const Eigen::MatrixXd D = U_S.leftCols(m - 1).colwise() - U_S.col(m - 1);
            z.head(m - 1) = D.colPivHouseholderQr().solve(v - U_S.col(m - 1));
            z(m - 1) = 1 - z.head(m - 1).sum();
        }
        consider(S, z);
    }
    return best;
}

}  // namespace jsmf::test
