// SPDX-License-Identifier: MIT
// AnchorFree's square-root factor B̃ = UΛ^{1/2} of P, and C*, E* from B̃ and M.
#include <Eigen/Cholesky>

#include <cmath>

#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/dist/ops.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::anchorfree {

SquareRootFactor square_root_factor(const dist::DistMatrix& P, int F, const dist::EigOptions& eig) {
    const mpi::Comm comm = P.grid().borrow_comm();
    mpi::require_same_on_all_ranks(comm, {P.rows(), P.cols(), F}, "square_root_factor");
    mpi::run_local_phase(comm, "anchorfree", [&] {
        if (P.rows() != P.cols()) throw InputError("anchorfree: P is not square");
        if (F < 2 || F >= P.rows())
            throw InputError("--topics must satisfy 2 <= K < N = " + std::to_string(P.rows()) + ", got " + std::to_string(F));
    });
    dist::EigOptions options = eig;
    options.num_eigenpairs = F;
    const dist::EigResult r = dist::top_eigenpairs(P, options);
    // The eigenvalues are the root's (Rayleigh–Ritz on the root, broadcast): every rank
    // takes the same branch.
    mpi::run_local_phase(comm, "anchorfree", [&] {
        // Positive beyond rounding: an eigenvalue below 1e-12·λ_1 is P's null space.
        const double floor = 1e-12 * std::abs(r.values(0));
        if (!(r.values(F - 1) > floor)) {
            int positive = 0;
            for (int k = 0; k < F; ++k) positive += r.values(k) > floor ? 1 : 0;
            throw InputError("anchorfree: P has " + std::to_string(positive) + " positive eigenvalues among its " +
                             std::to_string(F) + " largest (λ_" + std::to_string(F) + " = " +
                             std::to_string(r.values(F - 1)) +
                             "), so no N x K square root B = U Λ^1/2 exists; rectify P (--rectify ap) or ask for "
                             "fewer topics");
        }
    });
    SquareRootFactor out;
    out.eigenvalues = r.values;
    out.B = r.vectors.leftCols(F) * r.values.head(F).cwiseSqrt().asDiagonal();
    out.eig_iterations = r.iterations;
    out.eig_converged = r.converged;
    return out;
}

RowShare row_share(Index N, int rank, int ranks) {
    return {N * rank / ranks, N * (rank + 1) / ranks};
}

AnchorFreeResult finish(const dist::DistMatrix& P, const Eigen::MatrixXd& B, const Eigen::MatrixXd& M) {
    const mpi::Comm comm = P.grid().borrow_comm();
    mpi::require_same_on_all_ranks(comm, {P.rows(), B.rows(), B.cols(), M.rows(), M.cols()}, "anchorfree finish");
    AnchorFreeResult out;
    out.M = M;
    out.C = B * M;
    // Everything after this is decided from C* and E*: every rank takes the root's copies,
    // so no rank's rounding can send it down another branch.
    mpi::adopt_root_copy(comm, out.C.data(), static_cast<std::size_t>(out.C.size()));
    out.min_C = std::min(0.0, out.C.minCoeff());
    const Eigen::MatrixXd PC = dist::multiply_block(P, out.C);  // the one distributed product
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
            throw InputError("anchorfree: the topics C* = BM are linearly dependent (C*'C* is singular), so E* does "
                             "not exist; the factorization failed (fewer topics, or --method anchorfree-lp)");
    });
    return out;
}

}  // namespace jsmf::anchorfree
