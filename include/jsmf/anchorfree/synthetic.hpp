// SPDX-License-Identifier: MIT
// The AnchorFree paper's synthetic tests (§5, Tables 2 and 3): planted C, E and P = CECᵀ.
#pragma once

#include <Eigen/Core>

#include <vector>

#include "jsmf/core/types.hpp"

namespace jsmf::anchorfree {

struct PlantedFactors {
    Eigen::MatrixXd C;   ///< V × F, columns sum to 1
    Eigen::MatrixXd E;   ///< F × F, UUᵀ/F + I
    Eigen::MatrixXd P;   ///< V × V, C E Cᵀ
};

/// Local. AnchorFree §5: C's entries i.i.d. Exp(1), each then zeroed with probability 1/2
/// (i.i.d. Bernoulli), columns scaled to sum 1; E = UUᵀ/F + I with U's entries i.i.d.
/// uniform on [0, 1]; P = CECᵀ. Test 2 (Table 3) has `anchored` > 0: before the columns
/// are scaled, the first min(F, anchored) rows become the canonical vectors e_1, e_2, …
/// (the paper: the top square block is I when F <= 15, else the first 15 rows are
/// canonical vectors), so exactly that many topics have anchor words. Test 1: anchored = 0.
/// Seeded (mt19937_64), the same on every platform.
PlantedFactors paper_synthetic(Index V, int F, int anchored, Seed seed);

struct RecoveryScore {
    double C_error = 0;          ///< ‖C*Π − C‖²_F after the best matching Π
    double E_error = 0;          ///< ‖ΠᵀE*Π − E‖²_F
    std::vector<int> matching;   ///< column k of the truth ↔ column matching[k] of C*
    bool success(double threshold = 1e-8) const { return C_error < threshold && E_error < threshold; }
};

/// Local. The paper's criterion: match C*'s columns to C's by the Hungarian method
/// (cost ‖C*_j − C_k‖²), then both squared Frobenius errors. Non-finite estimates score +inf.
RecoveryScore score_recovery(const Eigen::MatrixXd& C_est, const Eigen::MatrixXd& E_est, const Eigen::MatrixXd& C,
                             const Eigen::MatrixXd& E);

}  // namespace jsmf::anchorfree
