// SPDX-License-Identifier: MIT
// Step 0: the unbiased word co-occurrence matrix C (Eq. 5, NIPS'15), built distributed.
#pragma once

#include <Eigen/Core>

#include <cstddef>
#include <memory>
#include <string>

#include "jsmf/core/names.hpp"
#include "jsmf/corpus/shard.hpp"
#include "jsmf/distmat/dist_matrix.hpp"

namespace jsmf::cooc {

/// How a rank ships its documents' contributions to the owners of C's blocks.
enum class Exchange {
    /// Each owner (r, c) receives the words of a document that fall in its block rows
    /// and block columns (O(u) per document) and forms the products itself. Default.
    docs,
    /// Every (i, j, h_i h_j / (n(n-1))) pair travels to its owner (O(u²) per document):
    /// the generic distmat::ContributionRouter, kept for comparison.
    pairs,
};
inline const Names<Exchange, 2>& names(Exchange) {
    static const Names<Exchange, 2> table{"docs", "pairs"};
    return table;
}

/// Which second moment of the documents C estimates.
enum class Estimator {
    /// Eq. 5 (NIPS'15): the unbiased estimator of p(w1, w2) from word counts. Default.
    unbiased,
    /// A tf-idf second moment, jsmf's reading of AnchorFree (Fu et al. 2019): §6.1 uses "the
    /// standard tf-idf data as the D matrix" and §2 defines P = E{DDᵀ} (Eq. 2); §6.1 then
    /// estimates the co-occurrences "following the method suggested in [8]" (Arora, Ge,
    /// Moitra 2012), whose exact estimator the paper does not state. jsmf uses the plain
    /// sample second moment: D(v, d) = (h_dv / n_d) · ln(M / df_v)
    /// (relative term frequency times the natural-log inverse document frequency over the M
    /// contributing documents; words in every document get weight 0), and
    /// C = Σ_d D(:, d) D(:, d)ᵀ / Σ_{d,u,v} D(u, d) D(v, d): the sample second moment,
    /// scaled to sum 1. The scale changes neither the anchors nor AnchorFree's C*. There is
    /// no diagonal correction: tf-idf weights are not counts, so Eq. 5's multinomial one
    /// has no analogue.
    tfidf,
};
inline const Names<Estimator, 2>& names(Estimator) {
    static const Names<Estimator, 2> table{"unbiased", "tfidf"};
    return table;
}

struct CoocOptions {
    Estimator estimator = Estimator::unbiased;
    /// Documents with fewer tokens are skipped (and not counted in M). Eq. 5 divides by
    /// n(n-1), so at least 2. The authors' code uses 5.
    Index min_tokens = 2;
    /// Documents with fewer distinct words are skipped. The authors' code uses 3.
    Index min_distinct = 1;
    /// Bound on this rank's send buffers (B); what arrives in one round is bounded the
    /// same way (plus one document per sender). Peak exchange memory is about 4 B:
    /// send buffers, their staging copy during the exchange, what arrived, and its
    /// parsed local indices.
    std::size_t buffer_bytes = std::size_t{32} << 20;
    /// Block size of C's 2D block-cyclic layout (rows and columns).
    int block_size = 64;
    Exchange exchange = Exchange::docs;
};

/// What was counted while building C. Totals are over all ranks and replicated.
struct CoocStats {
    Index num_docs_read = 0;     ///< documents present in the input
    Index num_docs = 0;          ///< M: documents that contributed to C
    Index num_docs_skipped = 0;  ///< too short (min_tokens) or too narrow (min_distinct)
    Index num_tokens_read = 0;
    Index num_tokens = 0;        ///< tokens of the M contributing documents
    Index pair_updates = 0;      ///< Σ_m u_m² entry updates (u_m distinct words)
    Index max_rank_pair_updates = 0;  ///< the busiest rank's share
    Index exchange_rounds = 0;
    Eigen::VectorXd unigram;     ///< p(x = i) = Σ_j C_ij
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> doc_freq;  ///< D1(i) over the M documents
    double sum = 0;              ///< ΣC (postcondition: 1 to 1e-12)
    double min = 0;              ///< min C_ij (postcondition: >= 0)
    double asymmetry = 0;        ///< distmat::asymmetry(C) (postcondition: <= 1e-12)
};

struct CoocResult {
    distmat::DistMatrix C;
    CoocStats stats;
};

/// C = (1/M) Σ_m (h_m h_mᵀ − diag h_m) / (n_m (n_m − 1))   (Eq. 5, NIPS'15; Eq. 2,
/// practical-jsmf), or the tf-idf second moment (options.estimator), over the documents of every rank's `docs` that have at least
/// `min_tokens` tokens and `min_distinct` distinct words.
///
/// Collective on `grid`. Each rank streams its own documents, buffers their
/// contributions per owner, and ships them in rounds (every rank takes part in every
/// round; a rank that finished sends nothing). Each round ends with an agreement, so an
/// input error on one rank stops all ranks at that round and every rank throws
/// StageFailed (stage "cooc"). Postconditions (checked; InternalError if broken):
/// C symmetric, C >= 0, ΣC = 1.
///
/// Per-rank memory: C's local block (N²/p doubles) + about 4 x buffer_bytes + one
/// document + N doubles and N int64 (unigram, D1); independent of the corpus size.
/// Communication per rank: with Exchange::docs about nnz·(1/P_r + 1/P_c)·8 bytes in
/// total, with Exchange::pairs about 16·Σ_m u_m²/p bytes.
CoocResult build_cooccurrence(const std::shared_ptr<const distmat::Grid>& grid, Index num_words,
                              corpus::DocumentStream& docs, const CoocOptions& options);

/// Collective on C.grid(). Sets the statistics of `stats` that are C's own — unigram (its
/// row sums), sum, min and asymmetry — from C (the counts stay): build_cooccurrence's,
/// and those of a C changed since (e.g. rectified).
void measure_matrix(const distmat::DistMatrix& C, CoocStats& stats);

/// Local. True when a document passes the options' filters (and has n >= 2).
bool contributes(const corpus::Document& doc, const CoocOptions& options);

}  // namespace jsmf::cooc
