// SPDX-License-Identifier: MIT
// What the LP and PDS share: the row split, log|det M|, and C* = B̃M, E* (Alg. 1 line 7).
#include <Eigen/Cholesky>
#include <Eigen/LU>

#include <cmath>
#include <limits>

#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/distmat/eig.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::anchorfree {

double log_abs_det(const Eigen::MatrixXd& M) {
    const Eigen::PartialPivLU<Eigen::MatrixXd> lu(M);
    double sum = 0;
    for (Index k = 0; k < M.rows(); ++k) {
        const double u = std::abs(lu.matrixLU()(k, k));
        if (!(u > 0)) return -std::numeric_limits<double>::infinity();
        sum += std::log(u);
    }
    return sum;
}

RowShare row_share(Index N, int rank, int ranks) {
    return {N * rank / ranks, N * (rank + 1) / ranks};
}

AnchorFreeResult finish(const distmat::DistMatrix& P, const Eigen::MatrixXd& B, const Eigen::MatrixXd& M) {
    const mpi::Comm comm = P.grid().borrow_comm();
    mpi::require_same_on_all_ranks(comm, {P.rows(), B.rows(), B.cols(), M.rows(), M.cols()}, "anchorfree finish");
    AnchorFreeResult out;
    out.M = M;
    out.C = B * M;
    // Everything after this is decided from C* and E*: every rank takes the root's copies,
    // so no rank's rounding can send it down another branch.
    mpi::adopt_root_copy(comm, out.C.data(), static_cast<std::size_t>(out.C.size()));
    out.min_C = std::min(0.0, out.C.minCoeff());
    const Eigen::MatrixXd PC = distmat::multiply_block(P, out.C);  // the one distributed product
    const Eigen::MatrixXd gram = out.C.transpose() * out.C;
    const Eigen::LDLT<Eigen::MatrixXd> ldlt(gram);
    // (CᵀC)⁻¹ Cᵀ P C (CᵀC)⁻¹: two solves with the Gram matrix, symmetrized against rounding.
    const Eigen::MatrixXd left = ldlt.solve(out.C.transpose() * PC);
    Eigen::MatrixXd E = ldlt.solve(left.transpose());
    out.E = (E + E.transpose()) / 2;
    mpi::adopt_root_copy(comm, out.E.data(), static_cast<std::size_t>(out.E.size()));
    mpi::run_local_phase(comm, "anchorfree", [&] {
        const Eigen::VectorXd d = ldlt.vectorD().cwiseAbs();
        if (ldlt.info() != Eigen::Success || !(d.minCoeff() > 1e-14 * d.maxCoeff()) || !out.E.allFinite() ||
            !out.C.allFinite())
            throw InputError(render_options("anchorfree: the topics C* = BM are linearly dependent (C*'C* is "
                                            "singular), so E* does not exist; the factorization failed (fewer "
                                            "topics, or {method} anchorfree-lp)"));
    });
    return out;
}

}  // namespace jsmf::anchorfree
