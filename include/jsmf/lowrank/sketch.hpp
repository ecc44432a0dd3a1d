// SPDX-License-Identifier: MIT
// A model that grows with its corpus without its old documents (fit --update-mode sketch):
// the old C kept as its top-r eigenpairs, and the operator of old and new documents
// together, (γ W_old V Λ Vᵀ + M_new C_new) / (γ W_old + M_new).
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <vector>

#include "jsmf/lowrank/cooc_operator.hpp"

namespace jsmf::lowrank {

/// What a later update needs of the documents already counted: C's top-r algebraic
/// eigenpairs (V Λ Vᵀ, the rank-r part the range finder solves anyway) and, exactly, the
/// vectors the fit reads of C whole: its diagonal, its row sums (the unigram) and the
/// document frequencies. All by rows of the fit's partition (this rank's rows).
/// Size: 8 N (r + 3) bytes, in the model file and spread over the ranks in memory.
/// Why algebraic, not largest in magnitude: Eq. 5's C = H̃H̃ᵀ − diag(d) has negative
/// eigenvalues of at most max d (one document's words), the noise the rectification
/// removes; the positive part is where the topics are (Y₀ is its top K).
struct Sketch {
    Eigen::MatrixXd vectors;              ///< this rank's rows of V (orthonormal columns), N/P × r
    Eigen::VectorXd values;               ///< Λ, descending
    Eigen::VectorXd diagonal;             ///< this rank's rows of C's diagonal
    Eigen::VectorXd unigram;              ///< this rank's rows of C 1
    std::vector<std::int64_t> doc_freq;   ///< this rank's rows (decayed: rounded)
    double weight = 0;                    ///< the documents C averages over, decayed: Σ_batch γ^age M_batch
    std::int64_t num_docs = 0;            ///< every document counted, not decayed
    std::int64_t num_tokens = 0;          ///< their tokens
    Index rank() const { return values.size(); }
    bool empty() const { return values.size() == 0; }
};

/// Collective. The sketch of the operator C from its top eigenpairs (this rank's rows of
/// V; `values` descending) with C's own diagonal, row sums and document frequencies.
Sketch sketch_of(const CoocOperator& C, const Eigen::MatrixXd& V, const Eigen::VectorXd& values, double weight,
                 std::int64_t num_docs, std::int64_t num_tokens);

/// Collective. The top-r eigenpairs of C exactly, for r near N where a block solver's
/// block would be all of C (distmat::eig_block_columns(r) >= N): C's rows from one product
/// with the identity (in panels of at most 256 columns), gathered on every rank (8 N²
/// bytes a rank: small N only), and a dense symmetric eigensolver, the same input on every
/// rank. V's columns are sign-fixed as the range finder's (a nonnegative sum).
void exact_top_eigenpairs(const CoocOperator& C, Index r, Eigen::MatrixXd& V, Eigen::VectorXd& values);

/// C = (γ W V Λ Vᵀ + M C_new) / (γ W + M): the old documents by their sketch (weight W,
/// decay γ), the new exactly by `fresh` (their M documents). Exact on the new documents and
/// rank-r on the old; with r = N it is the C of all documents (to the eigensolver's
/// rounding). The diagonal, the row sums and the document frequencies are exact for both.
/// A product: `fresh`'s, plus an r × p all-reduce (Vᵀ X) and two local N/P × r × p
/// DGEMMs. Only for counts' C (Eq. 5), which is an average over documents: tf-idf's is not.
class SketchOperator final : public CoocOperator {
public:
    /// Local. `fresh` and `old` must outlive the operator, on the same rows; 0 < γ <= 1.
    /// Throws InvalidArgument when the rows disagree.
    SketchOperator(const CoocOperator& fresh, double fresh_docs, const Sketch& old, double decay);

    const mpi::Comm& comm() const override { return fresh_->comm(); }
    const distmat::RowPartition& rows() const override { return fresh_->rows(); }
    cooc::Estimator estimator() const override { return fresh_->estimator(); }

    Eigen::MatrixXd apply(const Eigen::MatrixXd& X) const override;
    Eigen::VectorXd cooc_diagonal() const override;
    Eigen::VectorXd row_sums() const override;
    std::vector<std::int64_t> doc_freq() const override;
    void release_buffers() const override { fresh_->release_buffers(); }

    /// γ W + M: the documents the combined C averages over (a later sketch's weight).
    double weight() const { return old_weight_ + fresh_weight_; }
    /// The old part's share of C, γ W / (γ W + M).
    double old_share() const { return old_weight_ / weight(); }

private:
    const CoocOperator* fresh_;
    const Sketch* old_;
    double decay_, old_weight_, fresh_weight_;
};

}  // namespace jsmf::lowrank
