// SPDX-License-Identifier: MIT
// Reductions and products on a DistMatrix with replicated results.
#include "jsmf/dist/ops.hpp"

#include <cmath>
#include <limits>
#include <random>

#include "jsmf/mpi/collectives.hpp"

namespace jsmf::dist {
namespace {
mpi::Comm comm_of(const DistMatrix& A) { return A.grid().borrow_comm(); }

// y_partial[global rows] += A_loc x[global cols]; reduced over all ranks.
Eigen::VectorXd local_product(const DistMatrix& A, const Eigen::VectorXd& x, bool transposed) {
    const Index out_size = transposed ? A.cols() : A.rows();
    Eigen::VectorXd y = Eigen::VectorXd::Zero(out_size);
    const auto local = A.local();
    for (Index jl = 0; jl < A.local_cols(); ++jl) {
        const Index j = A.global_col(jl);
        for (Index il = 0; il < A.local_rows(); ++il) {
            const Index i = A.global_row(il);
            if (transposed) y(j) += local(il, jl) * x(i);
            else y(i) += local(il, jl) * x(j);
        }
    }
    mpi::allreduce_inplace(comm_of(A), y.data(), static_cast<std::size_t>(y.size()), MPI_SUM);
    return y;
}
}  // namespace

double sum(const DistMatrix& A) {
    double total = 0, compensation = 0;  // Kahan: ΣC = 1 is checked to 1e-12 over N² terms
    const auto local = A.local();
    for (Index jl = 0; jl < A.local_cols(); ++jl) {
        for (Index il = 0; il < A.local_rows(); ++il) {
            const double y = local(il, jl) - compensation;
            const double t = total + y;
            compensation = (t - total) - y;
            total = t;
        }
    }
    return mpi::allreduce_sum(comm_of(A), total);
}

double min_entry(const DistMatrix& A) {
    double least = std::numeric_limits<double>::infinity();
    if (A.local_rows() > 0 && A.local_cols() > 0) least = A.local().minCoeff();
    return mpi::allreduce_min(comm_of(A), least);
}

double max_abs(const DistMatrix& A) {
    double most = 0;
    if (A.local_rows() > 0 && A.local_cols() > 0) most = A.local().cwiseAbs().maxCoeff();
    return mpi::allreduce_max(comm_of(A), most);
}

Eigen::VectorXd row_sums(const DistMatrix& A) {
    return local_product(A, Eigen::VectorXd::Ones(A.cols()), false);
}

Eigen::VectorXd multiply(const DistMatrix& A, const Eigen::VectorXd& x) {
    JSMF_REQUIRE(x.size() == A.cols(), "multiply: size mismatch");
    return local_product(A, x, false);
}

Eigen::VectorXd multiply_transposed(const DistMatrix& A, const Eigen::VectorXd& x) {
    JSMF_REQUIRE(x.size() == A.rows(), "multiply_transposed: size mismatch");
    return local_product(A, x, true);
}

double asymmetry(const DistMatrix& A, std::uint64_t seed) {
    JSMF_REQUIRE(A.rows() == A.cols(), "asymmetry needs a square matrix");
    std::mt19937_64 engine(seed);  // same seed on every rank: x is replicated exactly
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    Eigen::VectorXd x(A.cols());
    for (Index i = 0; i < x.size(); ++i) x(i) = uniform(engine);
    const Eigen::VectorXd difference = multiply(A, x) - multiply_transposed(A, x);
    // Scale: the size of the terms that were summed (|A| |x|), so the measure is relative.
    Eigen::VectorXd abs_x = x.cwiseAbs();
    Eigen::VectorXd scale_vec = Eigen::VectorXd::Zero(A.rows());
    const auto local = A.local();
    for (Index jl = 0; jl < A.local_cols(); ++jl) {
        const Index j = A.global_col(jl);
        for (Index il = 0; il < A.local_rows(); ++il)
            scale_vec(A.global_row(il)) += std::abs(local(il, jl)) * abs_x(j);
    }
    mpi::allreduce_inplace(comm_of(A), scale_vec.data(), static_cast<std::size_t>(scale_vec.size()),
                           MPI_SUM);
    const double denominator = scale_vec.lpNorm<Eigen::Infinity>();
    return denominator > 0 ? difference.lpNorm<Eigen::Infinity>() / denominator : 0.0;
}

void scale(DistMatrix& A, double alpha) { A.local() *= alpha; }

}  // namespace jsmf::dist
