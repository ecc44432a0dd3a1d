// SPDX-License-Identifier: MIT
// The compressed pipeline's view of C: an operator applied to blocks kept by rows, never
// formed. Two kinds: from the documents (DocumentOperator, Eq. 5's C X = H̃(H̃ᵀX) − d∘X)
// and from C's own rows, read from a co-occurrence file (MatrixOperator).
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <vector>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::lowrank {

/// What the range finder, ENN's set-up and the factor metrics ask of C (symmetric, N × N,
/// summing to 1). Blocks are N × p, distributed by rows(); every member marked collective
/// must be called by every rank of comm().
class CoocOperator {
public:
    virtual ~CoocOperator() = default;
    CoocOperator(const CoocOperator&) = delete;
    CoocOperator& operator=(const CoocOperator&) = delete;

    virtual const mpi::Comm& comm() const = 0;
    virtual const distmat::RowPartition& rows() const = 0;
    Index num_words() const { return rows().size(); }
    /// How C weighed the documents (Eq. 5's counts or tf-idf): part of a checkpoint's settings.
    virtual cooc::Estimator estimator() const = 0;

    /// Collective. This rank's rows of C X for this rank's rows X (rows().rows(rank) × p).
    virtual Eigen::MatrixXd apply(const Eigen::MatrixXd& X) const = 0;
    /// Collective. This rank's rows of C's diagonal (exact: the metrics that compare with C
    /// take it apart).
    virtual Eigen::VectorXd cooc_diagonal() const = 0;
    /// Collective. This rank's rows of C 1 = p(word), the unigram.
    virtual Eigen::VectorXd row_sums() const = 0;
    /// Collective. This rank's rows of each word's document frequency over the M documents.
    virtual std::vector<std::int64_t> doc_freq() const = 0;

    /// The products applied so far, and their columns in all.
    Index products() const { return products_; }
    Index column_products() const { return columns_; }
    /// Local. Frees what the products keep between calls, for the phases that apply none.
    virtual void release_buffers() const {}

protected:
    CoocOperator() = default;
    void count_product(Index columns) const {
        ++products_;
        columns_ += columns;
    }

private:
    mutable Index products_ = 0, columns_ = 0;
};

}  // namespace jsmf::lowrank
