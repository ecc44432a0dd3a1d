// SPDX-License-Identifier: MIT
// Every anchor finder behind one call, for fit, sweep and the paper's comparisons.
#pragma once

#include <string>
#include <vector>

#include "jsmf/core/names.hpp"
#include "jsmf/anchors/fast_anchor.hpp"
#include "jsmf/anchors/pivoted_qr.hpp"

namespace jsmf::anchors {

/// qr: jsmf's sparse implicit pivoted QR (practical-jsmf Alg. 2). It is SPA (Gillis &
/// Vavasis 2014) on the same normalization, the rows of C̄: both take the point with the
/// largest residual norm and project every point onto the orthogonal complement of the
/// chosen point's residual; Alg. 2 keeps the complement as Gram–Schmidt vectors q_k and downdates the
/// squared norms instead of forming the residual matrix (anchors_test checks a textbook
/// SPA picks the same words in the same order).
/// spa runs the same code as qr and is recorded by the name it was asked by.
enum class Finder { qr, fastanchor, snpa, xray, spa };

/// Local. Is `finder` jsmf's pivoted QR (qr, or spa by its other name)?
inline bool is_pivoted_qr(Finder finder) { return finder == Finder::qr || finder == Finder::spa; }

/// The finders' names (core/names.hpp).
inline const Names<Finder, 5>& names(Finder) {
    static const Names<Finder, 5> table{"qr", "fastanchor", "snpa", "xray", "spa"};
    return table;
}

/// Collective on C.grid(). The K anchors of C by `finder` (see each finder's contract;
/// `fast` is used by fastanchor only; only `candidates` may be anchors, empty: every word).
AnchorResult find_anchors_by(Finder finder, const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int num_topics,
                             const FastAnchorOptions& fast = {}, const Candidates& candidates = {});

}  // namespace jsmf::anchors
