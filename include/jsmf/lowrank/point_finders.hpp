// SPDX-License-Identifier: MIT
// The anchor finders other than pivoted QR on the compressed pipeline: FastAnchorWords' greedy,
// SNPA and XRAY on the rows of C̄ as the factor gives them, K-dimensional and by words.
#pragma once

#include <Eigen/Core>

#include <vector>

#include "jsmf/anchors/finder.hpp"
#include "jsmf/core/types.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::lowrank {

/// What a finder chose: the anchors in order, and each one's distance when chosen.
struct PointAnchors {
    std::vector<Index> anchors;
    Eigen::VectorXd diag_r;
};

/// Collective on `comm`. The K anchors among the points z_j (the columns of `points`, K' × this
/// rank's words of `rows`, global id rows.begin(rank) + j), where only `allowed` columns
/// may be chosen. LAW's P₀ = R Yᵀ diag(d₀)⁻¹ has z_iᵀz_j = x_iᵀx_j for the rows x of
/// C̄ = diag(d₀)⁻¹YYᵀ (P₀'s Gram is C̄C̄ᵀ), so the rows' geometry is the points': distances,
/// spans and cones are the same, in K dimensions instead of N.
/// - fastanchor: Arora et al.'s greedy (the point farthest from the origin, then the one
///   farthest from the first, then K − 2 times the point farthest from the affine span of
///   those chosen; then the cleanup pass: each anchor in turn replaced by the point farthest
///   from the affine span of the other K − 1) on the points themselves: the rows already live
///   in K dimensions, so there is nothing for the random projection to save (the dense
///   pipeline projects C̄'s N-dimensional rows to --projection-dim).
/// - snpa, xray: as anchors::find_anchors_snpa and _xray (their contract: SNPA's capped
///   simplex, XRAY's NNLS and "max" rule), with the points' inner products z_iᵀz_j.
/// Ties in every argmax go to the lowest word id (values compared exactly: each point's
/// figures come from its own owner, the same at any rank count only up to rounding).
/// Communication per step: two scalar reductions and one broadcast of a point (K doubles)
/// from its owner; XRAY a second pair. Local work per step: this rank's points (NNLS or
/// capped simplex of size k for SNPA/XRAY). InputError on every rank when fewer than K
/// allowed points have a positive residual.
PointAnchors find_anchors_on_points(const mpi::Comm& comm, const distmat::RowPartition& rows,
                                    const Eigen::MatrixXd& points, const std::vector<char>& allowed, int K,
                                    anchors::Finder finder);

}  // namespace jsmf::lowrank
