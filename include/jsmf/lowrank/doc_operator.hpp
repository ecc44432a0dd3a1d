// SPDX-License-Identifier: MIT
// The compressed pipeline, step 0: C as an operator from the documents, never formed
// (Lee, Cho, Dong, Mimno & Bindel, ICML 2021, §3; the authors' randEig_Bows.m).
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <vector>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/lowrank/cooc_operator.hpp"
#include "jsmf/corpus/shard.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::lowrank {

/// What was counted while setting the operator up; totals over all ranks, replicated.
struct DocumentStats {
    Index num_docs_read = 0;      ///< documents present on the ranks
    Index num_docs = 0;           ///< M: documents that contribute (cooc::contributes)
    Index num_docs_skipped = 0;
    Index num_tokens = 0;         ///< tokens of the M documents
    Index num_entries = 0;        ///< nonzeros (document, word) of the M documents
    Index max_rank_words = 0;     ///< the largest local vocabulary: rows a rank fetches per product
    Index exchanged_rows = 0;     ///< Σ over ranks of the rows fetched from other ranks per product
    Index max_served_rows = 0;    ///< the most rows a rank sends to the other ranks' fetches per column
};

/// C = (1/M) Σ_m (h_m h_mᵀ − diag h_m) / (n_m (n_m − 1)) = H̃H̃ᵀ − diag(d), Eq. 5 (the same C
/// `jsmf cooc` forms), with H̃'s column m = h_m / √(n_m (n_m − 1) M) and
/// d = Σ_m h_m / (n_m (n_m − 1) M). C X = H̃ (H̃ᵀ X) − d ∘ X costs O(nnz · p) and never
/// O(N²). With the tf-idf estimator (AnchorFree's P, as `jsmf cooc --estimator tfidf`
/// forms it): H̃'s column m = D(:, m)/√S, D(v, m) = (h_mv/n_m)·ln(M/df_v), S = Σ_m (1ᵀD(:, m))²
/// (C sums to 1), and d = 0 (no diagonal correction: tf-idf weights are not counts).
///
/// Layout. Documents stay on the rank that read them. N × p blocks are distributed by rows
/// (`rows()`, contiguous, balanced). A product fetches, for each rank, the rows of X of the
/// words its documents use (its local vocabulary V_r) from their owners, computes
/// W_r = H̃_r (H̃_rᵀ X_{V_r}) locally, and sends W_r's rows back to be summed by their owners:
/// two personalized all-to-all exchanges whose pattern is fixed at construction.
/// Bytes per product per rank: 2 · 8 · p · (|V_r| rows sent and received, less the rows it
/// owns itself); in total 16 · p · Σ_r |V_r \ own_r|. Per-rank memory: the local documents
/// twice (document-major, and word-major by blocks of documents: 12 bytes per nonzero
/// each, and 12 per word present in a block), |V_r| · p doubles twice during a product,
/// 4,096 · p for one block of documents, and N/P · p for X and C X. No rank ever holds an
/// N × p block.
///
/// Column panels. |V_r| does not fall like 1/P (a rank's documents use most of the
/// frequent words at any P), nor do the rows a rank serves (each of its N/P rows, to up to
/// P − 1 ranks): at N = 10⁶, p = 120 the exchange's blocks take ~3 GB per rank at 2 ranks
/// and ~2 GB at 8, so that the ranks together held 2.7 times more at 8. So a product runs in
/// panels of columns, as wide as the exchange budget lets (the same width on every rank:
/// the widest rank's rows decide): memory (2 |V_r| + 2 served + N/P + 4,096) · 8 · width
/// per rank, the same bytes sent, and a message pair more per panel. By default the budget
/// is four of the factor's N/P × p blocks (at least 64 MiB), so that it falls like 1/P
/// with the rest: NYTimes-shaped (N = 10⁵, 2 ranks, p = 120) three panels of 40 columns,
/// measured no slower than one (row_kernel cost per nonzero-column: 18 columns +7 %, 60
/// columns −16 %, noise ±15 %). Each column's arithmetic is the same whatever the width:
/// the same bits.
class DocumentOperator final : public CoocOperator {
public:
    /// The default budget: 0, four of the factor's blocks (at least kMinExchangeBytes).
    static constexpr double kDefaultExchangeBytes = 0;
    static constexpr double kMinExchangeBytes = 64.0 * 1024 * 1024;

    /// Collective. From this rank's documents (`comm` must outlive the operator) (word ids 0-based, < num_words), those that
    /// pass `options`' filters (min_tokens, at least 2, and min_distinct), by
    /// `options.estimator` (Eq. 5 or tf-idf). Throws StageFailed on every rank if a rank's
    /// documents are invalid or no document contributes. `exchange_bytes` bounds a
    /// product's buffers per rank (column panels; at least one column each); 0: the
    /// default, 4 · 8 · ⌈N/P⌉ · p bytes for a product of p columns, at least 64 MiB.
    DocumentOperator(const mpi::Comm& comm, Index num_words, const corpus::Shard& docs,
                     const cooc::CoocOptions& options, double exchange_bytes = kDefaultExchangeBytes);

    const mpi::Comm& comm() const override { return *comm_; }
    const distmat::RowPartition& rows() const override { return rows_; }
    const DocumentStats& stats() const { return stats_; }
    cooc::Estimator estimator() const override { return estimator_; }

    /// Collective. This rank's rows of C X for this rank's rows X (rows().rows(rank) × p).
    Eigen::MatrixXd apply(const Eigen::MatrixXd& X) const override;

    /// This rank's rows of d (the diagonal correction).
    const Eigen::VectorXd& diagonal() const { return diagonal_; }

    /// Collective. This rank's rows of C's diagonal, C_ii = Σ_m H̃_im² − d_i (exact, from
    /// the documents: the metrics that compare with C take its diagonal apart).
    Eigen::VectorXd cooc_diagonal() const override;

    /// Collective. This rank's rows of C 1 = p(word), the unigram (Σ = 1).
    Eigen::VectorXd row_sums() const override;

    /// Collective. This rank's rows of the document frequency over the M documents.
    std::vector<std::int64_t> doc_freq() const override;

    /// Bytes this rank sends (and about as many receives) per product of p columns.
    std::int64_t bytes_per_product(Index p) const;

    /// The budget of a product of p columns, in bytes: the one given, or the default's.
    double exchange_budget(Index p) const;
    /// The columns of one panel of a product of p columns (p when the whole block fits the
    /// exchange budget); the same on every rank.
    Index panel_columns(Index p) const;

    /// The largest rank's buffers during a product of p columns, in bytes (one panel's).
    double buffer_bytes(Index p) const { return 8.0 * static_cast<double>(buffer_rows_) * static_cast<double>(panel_columns(p)); }

    /// The words' pass of a product runs by blocks of this many local documents (their rows
    /// of H̃ᵀX, ~4 MB at p = 120, stay in cache while the block's words are summed).
    static constexpr Index kDocBlock = 4096;

    /// Local. Frees the buffers the products keep between calls (V_r × p twice, a block of
    /// documents × p, the exchanged rows × p twice, N/P × p): for the phases that apply no
    /// product. The next product allocates them again.
    void release_buffers() const override;

private:
    using RowBlock = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using RowView = Eigen::Map<RowBlock>;
    // A grow-only buffer of doubles: products of p = 1 (Lanczos) and of whole blocks
    // alternate, and a fresh allocation costs page faults and zeroing each time.
    struct Buffer {
        std::vector<double> values;
        RowView view(Index rows, Index cols);
    };
    void transpose_by_blocks(Index V);  // fills word_rows_ .. word_values_ from the document-major CSR
    void scale_by_idf(double M);        // tf-idf: doc_values_ (term frequencies) times idf, over √S
    void apply_panel(const Eigen::MatrixXd& X, Index first, Index width, Eigen::MatrixXd& out) const;
    RowView fetch_rows(const RowView& X) const;  // X's rows of V_r (in xv_), from this rank's rows of X
    void return_rows(const RowView& W_vocab, RowView& out) const;  // out += what the ranks return

    const mpi::Comm* comm_ = nullptr;
    distmat::RowPartition rows_;
    DocumentStats stats_;
    cooc::Estimator estimator_ = cooc::Estimator::unbiased;
    std::vector<std::uint32_t> vocab_;           // V_r: sorted global word ids of the local documents
    // The local documents, scaled: document-major (CSR over documents, columns index V_r)...
    std::vector<std::int64_t> doc_offsets_{0};
    std::vector<std::uint32_t> doc_words_;
    std::vector<double> doc_values_;
    // ... and word-major by blocks of kDocBlock documents: block b's rows are
    // word_rows_[b] .. word_rows_[b + 1] − 1, one per word of V_r present in the block
    // (ascending), its columns the block's documents (ascending, relative to the block's
    // first), word_of_row_ its index in V_r.
    std::vector<std::int64_t> word_rows_{0};
    std::vector<std::uint32_t> word_of_row_;
    std::vector<std::int64_t> word_offsets_{0};
    std::vector<std::uint32_t> word_docs_;
    std::vector<double> word_values_;
    std::vector<std::int64_t> local_doc_freq_;   // per V_r entry
    Eigen::VectorXd diagonal_;                   // this rank's rows of d
    // The exchange: to each rank, the counts of V_r rows it owns (send side of a fetch)
    // and the rows of mine it asks for (receive side), fixed at construction.
    std::vector<int> fetch_counts_, serve_counts_;
    std::vector<Index> serve_rows_;              // local row indices I send, grouped by rank
    double exchange_bytes_ = kDefaultExchangeBytes;
    Index buffer_rows_ = 0;                      // a product's buffer rows per column, the largest rank's
    mutable Buffer own_, send_, xv_, z_, w_, back_;
};

}  // namespace jsmf::lowrank
