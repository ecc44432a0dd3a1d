// SPDX-License-Identifier: MIT
#include "jsmf/lowrank/matrix_operator.hpp"

#include <utility>

#include "jsmf/core/error.hpp"

namespace jsmf::lowrank {

MatrixOperator::MatrixOperator(const mpi::Comm& comm, distmat::RowPartition rows, RowBlock rows_of_C,
                               std::vector<std::int64_t> doc_freq, cooc::Estimator estimator)
    : comm_(&comm), rows_(std::move(rows)), C_(std::move(rows_of_C)), doc_freq_(std::move(doc_freq)),
      estimator_(estimator) {
    JSMF_REQUIRE(rows_.ranks() == comm.size(), "MatrixOperator: the partition is not of this communicator's ranks");
    const Index mine = rows_.rows(comm.rank());
    JSMF_REQUIRE(C_.rows() == mine && C_.cols() == rows_.size(), "MatrixOperator: C's rows have the wrong shape");
    JSMF_REQUIRE(static_cast<Index>(doc_freq_.size()) == mine, "MatrixOperator: the document frequencies have the wrong length");
}

Eigen::MatrixXd MatrixOperator::apply(const Eigen::MatrixXd& X) const {
    JSMF_REQUIRE(X.rows() == rows_.rows(comm_->rank()), "MatrixOperator::apply: X has the wrong rows");
    count_product(X.cols());
    const Eigen::MatrixXd all = distmat::gather_rows(*comm_, rows_, X);  // N × p on every rank
    Eigen::MatrixXd out(C_.rows(), X.cols());
    out.noalias() = C_ * all;
    return out;
}

Eigen::VectorXd MatrixOperator::cooc_diagonal() const {
    const Index begin = rows_.begin(comm_->rank());
    Eigen::VectorXd d(C_.rows());
    for (Index i = 0; i < C_.rows(); ++i) d(i) = C_(i, begin + i);
    return d;
}

Eigen::VectorXd MatrixOperator::row_sums() const { return C_.rowwise().sum(); }

}  // namespace jsmf::lowrank
