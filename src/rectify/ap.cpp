// SPDX-License-Identifier: MIT
// Rectification by alternating projection (practical-jsmf Alg. 1).
#include "jsmf/rectify/ap.hpp"

#include <algorithm>
#include <cmath>

#include "dist/detail/scalapack_api.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/dist/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::rectify {
namespace {

struct ProjectionStats {
    double clipped = 0, difference_squared = 0, norm_squared = 0, sum = 0;
};

// C ← max(U Λ₊ Uᵀ + shift, 0) on this rank's pieces, column panel by column panel
// (Alg. 1 lines 5–7), accumulating the statistics of the trace. Local.
ProjectionStats project_local(dist::DistMatrix& C, const Eigen::MatrixXd& U, const Eigen::VectorXd& lambda_plus,
                              double shift) {
    ProjectionStats stats;
    const Index m = C.local_rows(), n = C.local_cols(), K = U.cols();
    if (m == 0 || n == 0) return stats;
    Eigen::MatrixXd UL(m, K), UC(n, K);  // rows of U Λ₊ at my rows, rows of U at my columns
    for (Index il = 0; il < m; ++il) UL.row(il) = U.row(C.global_row(il)).cwiseProduct(lambda_plus.transpose());
    for (Index jl = 0; jl < n; ++jl) UC.row(jl) = U.row(C.global_col(jl));
    const Index width = 256;
    Eigen::MatrixXd panel(m, std::min(width, n));
    double* local = C.data();
    const Index ld = C.ld();
    for (Index j0 = 0; j0 < n; j0 += width) {
        const Index w = std::min(width, n - j0);
        const int mm = static_cast<int>(m), nn = static_cast<int>(w), kk = static_cast<int>(K);
        const int ldu = static_cast<int>(m), ldc = static_cast<int>(n), ldp = static_cast<int>(m);
        const double one = 1, zero = 0;
        dgemm_("N", "T", &mm, &nn, &kk, &one, UL.data(), &ldu, UC.data() + j0, &ldc, &zero, panel.data(), &ldp);
        for (Index jj = 0; jj < w; ++jj) {
            double* column = local + (j0 + jj) * ld;
            const double* fresh = panel.data() + jj * m;
            for (Index il = 0; il < m; ++il) {
                const double nor = fresh[il] + shift;          // line 6: NOR projection
                const double nn_value = nor > 0 ? nor : 0.0;   // line 7: NN projection
                stats.clipped += nn_value - nor;
                const double d = nn_value - column[il];
                stats.difference_squared += d * d;
                stats.norm_squared += nn_value * nn_value;
                stats.sum += nn_value;
                column[il] = nn_value;
            }
        }
    }
    return stats;
}
}  // namespace

ApResult alternating_projection(dist::DistMatrix& C, const ApOptions& options, const ApProgress& progress,
                                const ApState* resume) {
    const mpi::Comm comm = C.grid().borrow_comm();
    const Index N = C.rows();
    const int K = options.num_topics;
    mpi::require_same_on_all_ranks(comm, {N, K, options.max_iterations}, "alternating_projection");
    mpi::run_local_phase(comm, "rectify", [&] {
        if (C.rows() != C.cols()) throw InputError("rectify: C is not square");
        if (K < 2 || K >= N) throw InputError("--topics must satisfy 2 <= K < N = " + std::to_string(N) + ", got " + std::to_string(K));
        if (options.max_iterations < 0) throw InputError("--iterations must be non-negative");
        if (resume && resume->iterations_done > 0 && resume->vectors.rows() != N)
            throw InputError("the checkpoint's eigenvectors do not match C");
    });
    ApResult result;
    if (resume) result.state = *resume;
    dist::EigOptions eig = options.eig;
    eig.num_eigenpairs = K;

    for (int t = result.state.iterations_done; t < options.max_iterations; ++t) {
        Stopwatch clock;
        const Eigen::MatrixXd* warm = result.state.vectors.rows() == N ? &result.state.vectors : nullptr;
        // λ_min (which the filter must damp down to) moves most in the first iterations:
        // estimate it with Lanczos in the first three and every 5th after, and otherwise
        // reuse the last estimate widened by 10%. Part of the state, so resume is exact.
        const double last = result.state.lower_bound;
        eig.lower_bound = t < 3 || t % 5 == 0 || !std::isfinite(last) ? std::numeric_limits<double>::quiet_NaN()
                                                                        : last - 0.1 * std::abs(last);
        const dist::EigResult top = dist::top_eigenpairs(C, eig, warm);       // line 3
        if (!std::isfinite(eig.lower_bound)) result.state.lower_bound = top.lower_bound;
        const Eigen::VectorXd lambda_plus = top.values.cwiseMax(0.0);        // line 4
        // Σ(U Λ₊ Uᵀ) = Σ_k λ₊_k (1ᵀu_k)²: the NOR shift without forming the matrix.
        const Eigen::VectorXd column_sums = top.vectors.colwise().sum().transpose();
        const double psd_sum = lambda_plus.dot(column_sums.cwiseAbs2());
        const double shift = (1.0 - psd_sum) / (static_cast<double>(N) * static_cast<double>(N));
        ProjectionStats local = project_local(C, top.vectors, lambda_plus, shift);
        double totals[4] = {local.clipped, local.difference_squared, local.norm_squared, local.sum};
        mpi::allreduce_inplace(comm, totals, 4, MPI_SUM);

        ApIteration it;
        it.change = totals[2] > 0 ? std::sqrt(totals[1] / totals[2]) : 0.0;
        it.clipped_mass = totals[0];
        it.sum = totals[3];
        it.eig_iterations = top.iterations;
        it.eig_products = top.block_products;
        it.eig_converged = top.converged;
        it.eig_residual = top.residuals.maxCoeff() / std::max(std::abs(top.values(0)), std::numeric_limits<double>::min());
        it.seconds = mpi::allreduce_max(comm, clock.seconds());  // replicated, as the trace must be
        result.state.trace.push_back(it);
        result.state.vectors = top.vectors;
        result.state.iterations_done = t + 1;
        if (progress) progress(result.state, C);
        if (options.tolerance > 0 && it.change <= options.tolerance) {
            result.converged = true;
            break;
        }
    }
    const double total = dist::sum(C);                                        // line 9
    mpi::check_on_root(comm, "rectify", [&] {
        if (!(total > 0)) throw InputError("rectify: C has no positive mass left to normalize");
    });
    dist::scale(C, 1.0 / total);
    return result;
}

}  // namespace jsmf::rectify
