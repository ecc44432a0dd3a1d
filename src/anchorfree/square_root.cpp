// SPDX-License-Identifier: MIT
// AnchorFree's square-root factor B̃ = UΛ^{1/2} of P (§4.1).
#include <cmath>

#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::anchorfree {

SquareRootFactor square_root_factor(const distmat::DistMatrix& P, int F, const distmat::EigOptions& eig) {
    const mpi::Comm comm = P.grid().borrow_comm();
    mpi::require_same_on_all_ranks(comm, {P.rows(), P.cols(), F}, "square_root_factor");
    mpi::run_local_phase(comm, "anchorfree", [&] {
        if (P.rows() != P.cols()) throw InputError("anchorfree: P is not square");
        if (F < 2 || F >= P.rows())
            throw OptionError("{topics} must satisfy 2 <= K < N = " + std::to_string(P.rows()) + ", got " + std::to_string(F));
    });
    distmat::EigOptions options = eig;
    options.num_eigenpairs = F;
    const distmat::EigResult r = distmat::top_eigenpairs(P, options);
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
                             render_options("), so no N x K square root B = U Λ^1/2 exists; rectify P ({rectify} ap) "
                                            "or ask for fewer topics"));
        }
    });
    SquareRootFactor out;
    out.eigenvalues = r.values;
    out.B = r.vectors.leftCols(F) * r.values.head(F).cwiseSqrt().asDiagonal();
    out.eig_iterations = r.iterations;
    out.eig_converged = r.converged;
    return out;
}

}  // namespace jsmf::anchorfree
