// SPDX-License-Identifier: MIT
// A one-process dense co-occurrence, written plainly from Eq. 5: the tests' oracle.
#pragma once

#include <Eigen/Core>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/corpus/shard.hpp"

namespace jsmf::cooc {

/// Local. C = (1/M) Σ_m (h_m h_mᵀ − diag h_m) / (n_m (n_m − 1)) over the whole corpus in
/// `shard`, with the same document filters as build_cooccurrence. Memory: N² doubles;
/// for tests and small corpora only.
Eigen::MatrixXd dense_reference(const corpus::Shard& shard, Index num_words, const CoocOptions& options);

}  // namespace jsmf::cooc
