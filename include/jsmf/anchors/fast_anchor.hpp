// SPDX-License-Identifier: MIT
// The Arora et al. baseline's anchor finder, FastAnchorWords, for comparisons.
#pragma once

#include "jsmf/anchors/pivoted_qr.hpp"
#include "jsmf/core/types.hpp"

namespace jsmf::anchors {

struct FastAnchorOptions {
    int projection_dim = 1000;  ///< d: rows of C̄ are projected to d dimensions (Arora et al.: 1000)
    Seed seed = 1;              ///< of the projection matrix
    bool cleanup = true;        ///< the second phase: replace each anchor by the farthest point from the others' span
};

/// Local. The N × d projection matrix: sparse random signs (Achlioptas) scaled by √(3/d),
/// column by column from mt19937_64(seed): identical on every rank and every platform.
Eigen::MatrixXd random_projection(Index N, int d, Seed seed);

/// FastAnchorWords (Arora et al. 2013, Alg. 4): project the rows of C̄ = diag(C1)⁻¹ C to
/// d dimensions with a seeded sparse random matrix (Achlioptas: ±√3 with probability
/// 1/6 each, 0 otherwise; from mt19937_64, so the same seed gives the same anchors with
/// any standard library), then greedily take the point farthest from the origin, the one
/// farthest from it, and then K − 2 times the point farthest from the affine span of
/// those chosen (explicit Gram–Schmidt on the projected rows). The cleanup pass replaces
/// each anchor in turn by the point farthest from the span of the other K − 1.
/// diag_r holds each anchor's distance (in the projected space) when it was chosen.
/// Without projection the greedy step is Alg. 2's pivot rule, so `find_anchors` is the
/// unprojected variant. Words that never occur, and words not in `candidates`, are never
/// chosen (Arora et al. restrict the projected rows to their candidates the same way).
/// Collective on C.grid(): one distributed product C·R (N × d), then the root runs the
/// greedy and broadcasts S. Per-rank memory: local(C) + 3·N·d doubles (R, C·R, the
/// residuals on the root). Throws StageFailed for d < K or K outside [2, N).
AnchorResult find_anchors_fast(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int num_topics,
                               const FastAnchorOptions& options, const Candidates& candidates = {});

}  // namespace jsmf::anchors
