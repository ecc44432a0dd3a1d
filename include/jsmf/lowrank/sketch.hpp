// SPDX-License-Identifier: MIT
// A model that grows with its corpus without its old documents (fit --update-mode sketch):
// the old C kept as its top-r eigenpairs, and the operator of old and new documents
// together, (γ W_old V Λ Vᵀ + M_new C_new) / (γ W_old + M_new).
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/distmat/eig.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/comm.hpp"
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

/// The sketch's eigensolver tolerance, relative to |λ₁| (the residual of every pair). Looser
/// than Y₀'s 1e-8: the sketch's error is its truncation's, |λ_{r+1}| (KOS, r = 200: a few
/// hundredths of λ₁), and the tail pairs of a block solver converge slowly (KOS, K = 100,
/// r = 200 solved with Y₀ to 1e-8: 100 s more than the fit's 28 s). Measured:
/// jobs/BENCHMARKS.md, "Models that grow with the corpus".
inline constexpr double kSketchTolerance = 1e-6;

/// Collective. C's top-r algebraic eigenpairs for its sketch: the block solver
/// (distmat::top_eigenpairs on C's rows) to `tolerance` · |λ₁|, started from `start` (this
/// rank's rows, at most the block's columns: e.g. Y₀, whose span is the top K; null: seeded
/// random rows) and seeded random columns; or C's exact decomposition where the block would
/// be all of C (exact_top_eigenpairs). V's columns sign-fixed (a nonnegative sum). Returns
/// the products applied. `progress`: called after every round (collective: every rank
/// alike), e.g. to stop on a signal.
int sketch_eigenpairs(const CoocOperator& C, Index r, double tolerance, Seed seed, const Eigen::MatrixXd* start,
                      Eigen::MatrixXd& V, Eigen::VectorXd& values,
                      const std::function<void(const distmat::EigRound&)>& progress = nullptr);

/// Collective. The top-r eigenpairs of C exactly, for r near N where a block solver's
/// block would be all of C (distmat::eig_block_columns(r) >= N): C's rows from one product
/// with the identity (in panels of at most 256 columns), gathered on the root (2 × 8 N² bytes
/// there: small N only), LAPACK's dense symmetric eigensolver there, and the top r pairs sent to
/// every rank (8 N r bytes each). V's columns are sign-fixed as the range finder's (a
/// nonnegative sum).
void exact_top_eigenpairs(const CoocOperator& C, Index r, Eigen::MatrixXd& V, Eigen::VectorXd& values);

/// ENN's looks at the topics, in iterations, when it starts from a warm start: its stop
/// compares two windows of three looks (EnnStop), so at least 6 looks; every 10th
/// iteration from a cold start (60 at least), every 5th from a warm one (30 at least).
/// Measured (KOS, K = 100, 90 % + 10 %, rank-200 sketch; jobs/BENCHMARKS.md): every 2nd
/// stopped after 21 iterations with specificity 2.7 % below the fresh fit's; every 5th
/// after 51, within 1.2 % (coherence within 0.3 %); a cold start ran 131 (slower than
/// the fresh fit's 111, coherence 1.6 % lower).
inline constexpr int kWarmLookEvery = 5;

/// Collective. ENN's start for a sketch update: the base's rectified factor Y_old moved by
/// the change of C's top-K part, the top K of Y_old Y_oldᵀ + Y₀ Y₀ᵀ − Y₀_old Y₀_oldᵀ
/// (Y₀ = V_K Λ_K^½ of the new C, Y₀_old of the old, from its sketch's first K pairs) as
/// V max(Λ, 0)^½, signs fixed. An operator of rank ≤ 3K on rows: each product a 3K × p
/// all-reduce, no product of C. Where the new documents change little, the start is
/// nearly nonnegative and ENN has little left to do. Opt-in (fit --warm-enn): ENN's result
/// depends on its start, and a chain of warm updates drifts from the fresh fit (KOS, K =
/// 100, ten batches: specificity 11 % lower; from Y₀ on the same sketches within 0.6 %).
Eigen::MatrixXd warm_enn_start(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& Y_old,
                               const Eigen::MatrixXd& Y0, const Sketch& old, Seed seed);

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
