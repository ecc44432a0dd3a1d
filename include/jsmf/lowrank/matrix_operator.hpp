// SPDX-License-Identifier: MIT
// C given by its rows (a co-occurrence file's, jsmf cooc's): the compressed pipeline on a C
// that was formed once, without its dense rectification.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <vector>

#include "jsmf/lowrank/cooc_operator.hpp"

namespace jsmf::lowrank {

/// C's rows [rows().begin(r), rows().end(r)) on rank r, row-major. A product puts X on every
/// rank (distmat::gather_rows: an all-reduce of the N × p block, each rank's rows in place,
/// the rest zero; 8 N p bytes handed to MPI a rank) and multiplies it by the rank's rows
/// (2 N²p/P flops, DGEMM). Per-rank memory: 8 N²/P for the
/// rows (a third of the dense pipeline's working set, which rectifies C with two more
/// copies), 8 N p for a product's gathered X. At any rank count each entry is one row of C
/// times a column of X, equal to rounding (BLAS blocks the sum by the product's shape).
class MatrixOperator final : public CoocOperator {
public:
    using RowBlock = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

    /// `rows_of_C`: this rank's rows of C (rows.rows(rank) × N, N = rows.size());
    /// `doc_freq`: this rank's words' document frequencies; `estimator`: how C was made.
    /// Local (no communication); `comm` must outlive the operator. Throws InvalidArgument
    /// when a shape disagrees with `rows`.
    MatrixOperator(const mpi::Comm& comm, distmat::RowPartition rows, RowBlock rows_of_C,
                   std::vector<std::int64_t> doc_freq, cooc::Estimator estimator);

    const mpi::Comm& comm() const override { return *comm_; }
    const distmat::RowPartition& rows() const override { return rows_; }
    cooc::Estimator estimator() const override { return estimator_; }

    Eigen::MatrixXd apply(const Eigen::MatrixXd& X) const override;
    Eigen::VectorXd cooc_diagonal() const override;
    Eigen::VectorXd row_sums() const override;
    std::vector<std::int64_t> doc_freq() const override { return doc_freq_; }

    /// This rank's rows of C.
    const RowBlock& local_rows() const { return C_; }

private:
    const mpi::Comm* comm_ = nullptr;
    distmat::RowPartition rows_;
    RowBlock C_;
    std::vector<std::int64_t> doc_freq_;
    cooc::Estimator estimator_ = cooc::Estimator::unbiased;
};

}  // namespace jsmf::lowrank
