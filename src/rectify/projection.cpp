// SPDX-License-Identifier: MIT
// Rectification by projections: AP (practical-jsmf Alg. 1), cyclic Douglas–Rachford, Dykstra.
#include "jsmf/rectify/projection.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "dist/detail/scalapack_api.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/dist/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::rectify {

ProjectionState::ProjectionState(const ProjectionState& other)
    : iterations_done(other.iterations_done),
      eig(other.eig),
      js_increment(other.js_increment),
      trace(other.trace) {
    for (const auto& M : other.increments) increments.push_back(dist::copy(M));
}

ProjectionState& ProjectionState::operator=(const ProjectionState& other) {
    if (this != &other) *this = ProjectionState(other);
    return *this;
}

namespace {
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Sums over this rank's entries, allreduced once per iteration for the trace.
struct Totals {
    double clipped = 0, difference_squared = 0, norm_squared = 0, sum = 0;

    // One entry of the new iterate replaces `old`.
    void replace(double old, double fresh) {
        const double d = fresh - old;
        difference_squared += d * d;
        norm_squared += fresh * fresh;
        sum += fresh;
    }
};

// visit(jl, fresh) for each local column jl of `layout`, with fresh[il] the entry
// (global_row(il), global_col(jl)) of U Λ₊ Uᵀ: formed panel by panel as a local DGEMM
// (rows of U Λ₊ at my rows times rows of U at my columns), never as an N × N temporary.
template <class Visit>
void for_each_low_rank_column(const dist::DistMatrix& layout, const Eigen::MatrixXd& U,
                              const Eigen::VectorXd& lambda_plus, Visit&& visit) {
    const Index m = layout.local_rows(), n = layout.local_cols(), K = U.cols();
    if (m == 0 || n == 0) return;
    Eigen::MatrixXd UL(m, K), UC(n, K);
    for (Index il = 0; il < m; ++il) UL.row(il) = U.row(layout.global_row(il)).cwiseProduct(lambda_plus.transpose());
    for (Index jl = 0; jl < n; ++jl) UC.row(jl) = U.row(layout.global_col(jl));
    const Index width = 256;
    Eigen::MatrixXd panel(m, std::min(width, n));
    for (Index j0 = 0; j0 < n; j0 += width) {
        const Index w = std::min(width, n - j0);
        const int mm = static_cast<int>(m), nn = static_cast<int>(w), kk = static_cast<int>(K);
        const int ldu = static_cast<int>(m), ldc = static_cast<int>(n), ldp = static_cast<int>(m);
        const double one = 1, zero = 0;
        dgemm_("N", "T", &mm, &nn, &kk, &one, UL.data(), &ldu, UC.data() + j0, &ldc, &zero, panel.data(), &ldp);
        for (Index jj = 0; jj < w; ++jj) visit(j0 + jj, panel.data() + jj * m);
    }
}

// P_K(X) = U Λ₊ Uᵀ, given by its factors and its sum Σ_k λ₊_k (1ᵀu_k)².
struct LowRankPsd {
    Eigen::MatrixXd U;
    Eigen::VectorXd lambda_plus;
    double sum = 0;
};

// The K largest algebraic eigenpairs of X from `warm`, which is updated for the next
// solve on a nearby matrix; the solve's figures go into `it`. Collective.
LowRankPsd nearest_psd(const dist::DistMatrix& X, dist::EigOptions eig, WarmStart& warm, ProjectionIteration& it) {
    const Index N = X.rows();
    // λ_min moves between iterations: reuse the last estimate widened by 10% (a wrong one
    // is detected and lowered by the eigensolver), or estimate it afresh.
    eig.lower_bound = std::isfinite(warm.lower_bound) ? warm.lower_bound - 0.1 * std::abs(warm.lower_bound) : nan;
    const dist::EigResult top = dist::top_eigenpairs(X, eig, warm.block.rows() == N ? &warm.block : nullptr);
    warm.block = top.block;
    // Keep an estimate, not the widened bound (widening it again every iteration would
    // compound): the check's fresh one, else the solve's own when it estimated or corrected
    // it, else the last. After an unconverged solve, trust nothing: estimate afresh.
    const bool solve_estimated = !std::isfinite(warm.lower_bound) || top.bound_corrections > 0;
    warm.lower_bound = !top.converged                       ? nan
                       : std::isfinite(top.next_lower_bound) ? top.next_lower_bound
                       : solve_estimated                     ? top.lower_bound
                                                             : warm.lower_bound;
    it.eig_iterations += top.iterations;
    it.eig_products += top.block_products;
    it.eig_residual = std::max(it.eig_residual, top.residuals.maxCoeff() /
                                                    std::max(std::abs(top.values(0)), std::numeric_limits<double>::min()));
    it.eig_converged = it.eig_converged && top.converged;
    it.eig_missed += top.missed;
    it.eig_bound_corrections += top.bound_corrections;
    LowRankPsd P;
    P.lambda_plus = top.values.cwiseMax(0.0);
    P.sum = P.lambda_plus.dot(top.vectors.colwise().sum().transpose().cwiseAbs2());
    P.U = top.vectors;
    return P;
}

double squared(double x) { return x * x; }

// AP: C ← max(P_K(C) + (1 − ΣP_K(C))/N², 0)   (Alg. 1 lines 3–7).
Totals ap_iteration(dist::DistMatrix& C, const dist::EigOptions& eig, ProjectionState& state, ProjectionIteration& it) {
    const double N2 = squared(static_cast<double>(C.rows()));
    const LowRankPsd P = nearest_psd(C, eig, state.eig[0], it);
    const double shift = (1.0 - P.sum) / N2;
    Totals totals;
    for_each_low_rank_column(C, P.U, P.lambda_plus, [&](Index jl, const double* fresh) {
        double* column = C.data() + jl * C.ld();
        for (Index il = 0; il < C.local_rows(); ++il) {
            const double nor = fresh[il] + shift;          // line 6: NOR projection
            const double nn = nor > 0 ? nor : 0.0;         // line 7: NN projection
            totals.clipped += nn - nor;
            totals.replace(column[il], nn);
            column[il] = nn;
        }
    });
    return totals;
}

// DR (rectifyC_DR.m): C ← T_{NN,PSD}(T_{JS,NN}(T_{PSD,JS}(C))), T_{A,B} = (I + R_B R_A)/2.
// `work` holds |C₂| for the second eigensolve and `negative` the signs of C₂.
Totals dr_iteration(dist::DistMatrix& C, dist::DistMatrix& work, std::vector<std::uint8_t>& negative,
                    const dist::EigOptions& eig, ProjectionState& state, ProjectionIteration& it) {
    const double N2 = squared(static_cast<double>(C.rows()));
    const Index m = C.local_rows();
    const double sum_x = dist::sum(C);
    const LowRankPsd P = nearest_psd(C, eig, state.eig[0], it);
    // C₁ = T_{PSD,JS}(X) = P + s₁ with s₁ = (1 − Σ(2P − X))/N², so ΣC₁ = 1 − ΣP + ΣX;
    // C₂ = T_{JS,NN}(C₁) = (C₁ + |C₁ + 2s₂|)/2 with s₂ = (1 − ΣC₁)/N².
    const double s1 = (1.0 - 2.0 * P.sum + sum_x) / N2;
    const double s2 = (1.0 - (1.0 - P.sum + sum_x)) / N2;
    Totals totals;
    for_each_low_rank_column(C, P.U, P.lambda_plus, [&](Index jl, const double* fresh) {
        double* out = work.data() + jl * work.ld();
        std::uint8_t* sign = negative.data() + jl * m;
        for (Index il = 0; il < m; ++il) {
            const double c1 = fresh[il] + s1;
            const double y = c1 + 2.0 * s2;                // R_JS(C₁), the NN reflection's input
            totals.clipped += y < 0 ? -y : 0.0;
            const double c2 = 0.5 * (c1 + std::abs(y));
            out[il] = std::abs(c2);
            sign[il] = c2 < 0 ? 1 : 0;
        }
    });
    // C₃ = T_{NN,PSD}(C₂) = (C₂ + R_PSD(|C₂|))/2 = P_K(|C₂|) + min(C₂, 0).
    const LowRankPsd Q = nearest_psd(work, eig, state.eig[1], it);
    for_each_low_rank_column(C, Q.U, Q.lambda_plus, [&](Index jl, const double* fresh) {
        double* column = C.data() + jl * C.ld();
        const double* absolute = work.data() + jl * work.ld();
        const std::uint8_t* sign = negative.data() + jl * m;
        for (Index il = 0; il < m; ++il) {
            const double c3 = fresh[il] - (sign[il] ? absolute[il] : 0.0);
            totals.replace(column[il], c3);
            column[il] = c3;
        }
    });
    return totals;
}

// Dykstra: for S = PSD, JS, NN: Y = proj_S(C + I_S); I_S ← C + I_S − Y; C ← Y.
Totals dp_iteration(dist::DistMatrix& C, const dist::EigOptions& eig, ProjectionState& state,
                    ProjectionIteration& it) {
    const double N2 = squared(static_cast<double>(C.rows()));
    dist::DistMatrix& I_psd = state.increments[0];
    dist::DistMatrix& I_nn = state.increments[1];
    const Index m = C.local_rows();
    for (Index jl = 0; jl < C.local_cols(); ++jl) {  // I_psd ← Z = C + I_psd, the PSD step's input
        const double* x = C.data() + jl * C.ld();
        double* z = I_psd.data() + jl * I_psd.ld();
        for (Index il = 0; il < m; ++il) z[il] += x[il];
    }
    const LowRankPsd P = nearest_psd(I_psd, eig, state.eig[0], it);
    // JS step on Y + I_js (a constant shift): Σ(Y + I_js) = ΣP + N² I_js.
    const double js_old = state.js_increment;
    const double s = (1.0 - (P.sum + N2 * js_old)) / N2;
    Totals totals;
    for_each_low_rank_column(C, P.U, P.lambda_plus, [&](Index jl, const double* fresh) {
        double* x = C.data() + jl * C.ld();
        double* z = I_psd.data() + jl * I_psd.ld();
        double* g = I_nn.data() + jl * I_nn.ld();
        for (Index il = 0; il < m; ++il) {
            z[il] -= fresh[il];                             // I_PSD ← Z − P_K(Z)
            const double y = fresh[il] + js_old + s;        // J(P_K(Z) + I_JS)
            const double z3 = y + g[il];                    // the NN step's input
            const double next = z3 > 0 ? z3 : 0.0;
            g[il] = z3 - next;                              // I_NN ← Z₃ − max(Z₃, 0)
            totals.clipped += next - z3;
            totals.replace(x[il], next);
            x[il] = next;
        }
    });
    state.js_increment = -s;                                // I_JS ← (Y + I_JS) − J(Y + I_JS)
    return totals;
}

// The eigensolver's missed-eigenvalue check costs verify_steps matrix-vector products.
// A miss needs an eigenvalue to rise from below the warm block's bottom θ_p to above θ_K
// in one iteration; after the first iterations C moves too little for that. So: every
// iteration at first, then every check_every-th, and every iteration again for a while
// after any miss (decided from the trace alone, so resume stays exact).
bool should_check(const ProjectionOptions& options, const std::vector<ProjectionIteration>& trace, int t) {
    const int every = std::max(1, options.eig_check_every);
    if (t < every || t % every == 0) return true;
    for (std::size_t k = trace.size() > static_cast<std::size_t>(every) ? trace.size() - every : 0; k < trace.size(); ++k)
        if (trace[k].eig_missed > 0 || !trace[k].eig_converged) return true;
    return false;
}

int eigensolves_per_iteration(Projection method) { return method == Projection::dr ? 2 : 1; }

const char* name_of(Projection method) {
    return method == Projection::ap ? "ap" : method == Projection::dr ? "dr" : "dp";
}

}  // namespace

ProjectionResult rectify_by_projection(dist::DistMatrix& C, const ProjectionOptions& options,
                                       const ProjectionProgress& progress, ProjectionState* resume) {
    const mpi::Comm comm = C.grid().borrow_comm();
    const Index N = C.rows();
    const int K = options.num_topics;
    mpi::require_same_on_all_ranks(comm, {N, K, options.max_iterations, static_cast<std::int64_t>(options.method)},
                                   "rectify_by_projection");
    const int solves = eigensolves_per_iteration(options.method);
    mpi::run_local_phase(comm, "rectify", [&] {
        if (C.rows() != C.cols()) throw InputError("rectify: C is not square");
        if (K < 2 || K >= N) throw InputError("--topics must satisfy 2 <= K < N = " + std::to_string(N) + ", got " + std::to_string(K));
        if (options.max_iterations < 0) throw InputError("--iterations must be non-negative");
        if (!resume || resume->iterations_done == 0) return;
        if (static_cast<int>(resume->eig.size()) != solves)
            throw InputError(std::string("the checkpoint is not of a --rectify ") + name_of(options.method) + " run");
        for (const auto& warm : resume->eig)
            if (warm.block.rows() != N) throw InputError("the checkpoint's eigenvectors do not match C");
        if (options.method != Projection::dp) return;
        if (resume->increments.size() != 2) throw InputError("the checkpoint lacks Dykstra's increments");
        for (const auto& I : resume->increments)  // dp_iteration walks them with C's local layout
            if (I.rows() != N || I.cols() != N || I.block_rows() != C.block_rows() ||
                I.block_cols() != C.block_cols() || &I.grid() != &C.grid())
                throw InputError("Dykstra's increments do not have C's layout");
    });
    ProjectionResult result;
    if (resume && resume->iterations_done > 0) result.state = std::move(*resume);
    ProjectionState& state = result.state;
    state.eig.resize(static_cast<std::size_t>(solves));
    if (options.method == Projection::dp && state.increments.empty()) {
        for (int k = 0; k < 2; ++k) {
            state.increments.emplace_back(C.grid_ptr(), N, N, C.block_rows(), C.block_cols());
            state.increments.back().local().setZero();
        }
    }
    // DR's work space: |C₂| for its second eigensolve, and C₂'s signs (one byte each).
    std::optional<dist::DistMatrix> work;
    std::vector<std::uint8_t> negative;
    if (options.method == Projection::dr) {
        work.emplace(C.grid_ptr(), N, N, C.block_rows(), C.block_cols());
        negative.assign(static_cast<std::size_t>(C.local_rows() * C.local_cols()), 0);
    }
    dist::EigOptions eig = options.eig;
    eig.num_eigenpairs = K;

    for (int t = state.iterations_done; t < options.max_iterations; ++t) {
        Stopwatch clock;
        ProjectionIteration it;
        eig.verify_steps = should_check(options, state.trace, t) ? options.eig.verify_steps : 0;
        // λ_min rises as the iterate nears PSD, and a stale bound widens the filter's
        // interval (more rounds). The check refreshes it; without checks, re-estimate it
        // every 5th iteration (a function of t alone, so resume stays exact).
        if (options.eig.verify_steps <= 0 && t % 5 == 0)
            for (auto& warm : state.eig) warm.lower_bound = nan;
        const Totals local = options.method == Projection::ap ? ap_iteration(C, eig, state, it)
                             : options.method == Projection::dr
                                 ? dr_iteration(C, *work, negative, eig, state, it)
                                 : dp_iteration(C, eig, state, it);
        double totals[4] = {local.clipped, local.difference_squared, local.norm_squared, local.sum};
        mpi::allreduce_inplace(comm, totals, 4, MPI_SUM);
        it.change = totals[2] > 0 ? std::sqrt(totals[1] / totals[2]) : 0.0;
        it.clipped_mass = totals[0];
        it.sum = totals[3];
        it.seconds = mpi::allreduce_max(comm, clock.seconds());  // replicated, as the trace must be
        state.trace.push_back(it);
        state.iterations_done = t + 1;
        if (progress) progress(state, C);
        if (mpi::root_decides(comm, options.tolerance > 0 && it.change <= options.tolerance)) {
            result.converged = true;
            break;
        }
    }
    const double total = dist::sum(C);                                        // Alg. 1 line 9
    mpi::check_on_root(comm, "rectify", [&] {
        if (!(total > 0)) throw InputError("rectify: C has no positive mass left to normalize");
    });
    dist::scale(C, 1.0 / total);
    return result;
}

ProjectionResult alternating_projection(dist::DistMatrix& C, ProjectionOptions options,
                                        const ProjectionProgress& progress, ProjectionState* resume) {
    options.method = Projection::ap;
    return rectify_by_projection(C, options, progress, resume);
}

}  // namespace jsmf::rectify
