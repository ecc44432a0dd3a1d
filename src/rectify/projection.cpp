// SPDX-License-Identifier: MIT
// Rectification by projections: AP (practical-jsmf Alg. 1), cyclic Douglas–Rachford, Dykstra.
#include "jsmf/rectify/projection.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "jsmf/distmat/blas.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::rectify {

ProjectionState::ProjectionState(const ProjectionState& other)
    : iterations_done(other.iterations_done),
      eig(other.eig),
      js_increment(other.js_increment),
      trace(other.trace),
      anderson(other.anderson),
      checks(other.checks),
      checked_B(other.checked_B),
      stop_reason(other.stop_reason) {
    for (const auto& M : other.increments) increments.push_back(distmat::copy(M));
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

    void add(const Totals& other) {
        clipped += other.clipped;
        difference_squared += other.difference_squared;
        norm_squared += other.norm_squared;
        sum += other.sum;
    }
};

// Y += A X (column-major), in A's precision.
template <class T>
void accumulate_gemm(int m, int n, int k, const T* A, int lda, const T* X, int ldx, T* Y, int ldy) {
    distmat::gemm('N', 'N', m, n, k, T{1}, A, lda, X, ldx, T{1}, Y, ldy);
}

// visit(jl, i0, i1, fresh, sums) for each local column jl of `layout` and slab of local
// rows [i0, i1), with fresh[il − i0] the entry (global_row(il), global_col(jl)) of U Λ₊ Uᵀ,
// adding what the trace needs to `sums`: formed panel by panel as a local DGEMM (rows of
// U Λ₊ at my rows times rows of U at my columns), never as an N × N temporary. With
// `block` (N × p, replicated), the pass also returns C · block for the matrix the visits
// leave in `layout`'s storage: each panel is multiplied right after it is written, while
// it is still in cache, so the next eigensolve's first product costs no extra pass over
// C. Threads (OMP_NUM_THREADS) take one slab of rows each, with single-threaded BLAS
// calls; their sums are added in slab order. Collective when `block` is given (one N × p
// allreduce); local otherwise.
template <class Layout, class Visit>
Eigen::MatrixXd for_each_low_rank_column(const Layout& layout, const Eigen::MatrixXd& U,
                                         const Eigen::VectorXd& lambda_plus, Totals& totals, Visit&& visit,
                                         const Eigen::MatrixXd* block = nullptr) {
    using Local = typename Layout::Local;  // the product is formed in the storage's precision
    const Index m = layout.local_rows(), n = layout.local_cols(), K = U.cols();
    const Index p = block ? block->cols() : 0;
    Local product_local = Local::Zero(std::max<Index>(m, 1), p);
    if (m > 0 && n > 0) {
        Eigen::MatrixXd UL(m, K), UC(n, K);
        Local XC(n, p);
        for (Index il = 0; il < m; ++il) UL.row(il) = U.row(layout.global_row(il)).cwiseProduct(lambda_plus.transpose());
        for (Index jl = 0; jl < n; ++jl) UC.row(jl) = U.row(layout.global_col(jl));
        for (Index jl = 0; jl < n && block; ++jl) XC.row(jl) = block->row(layout.global_col(jl)).template cast<typename Layout::Scalar>();
        const int slabs = distmat::row_slabs(m);
        std::vector<Totals> sums(static_cast<std::size_t>(slabs));
#pragma omp parallel for schedule(static, 1) num_threads(slabs)
        for (int slab = 0; slab < slabs; ++slab) {
            const Index i0 = m * slab / slabs, rows = m * (slab + 1) / slabs - i0;
            // 64 columns: the panel (rows × 64 doubles) stays in cache between the write and the product.
            const Index width = 64;
            Eigen::MatrixXd panel(rows, std::min(width, n));
            const double one = 1, zero = 0;
            for (Index j0 = 0; j0 < n; j0 += width) {
                const Index w = std::min(width, n - j0);
                const int mm = static_cast<int>(rows), nn = static_cast<int>(w), kk = static_cast<int>(K);
                const int ldu = static_cast<int>(m), ldc = static_cast<int>(n), ldp = static_cast<int>(rows);
                distmat::gemm('N', 'T', mm, nn, kk, one, UL.data() + i0, ldu, UC.data() + j0, ldc, zero, panel.data(),
                              ldp);
                for (Index jj = 0; jj < w; ++jj)
                    visit(j0 + jj, i0, i0 + rows, panel.data() + jj * rows, sums[static_cast<std::size_t>(slab)]);
                if (p == 0) continue;
                accumulate_gemm(mm, static_cast<int>(p), nn, layout.data() + j0 * layout.ld() + i0,
                                static_cast<int>(layout.ld()), XC.data() + j0, static_cast<int>(n),
                                product_local.data() + i0, static_cast<int>(product_local.rows()));
            }
        }
        for (const Totals& slab : sums) totals.add(slab);
    }
    if (!block) return {};
    Eigen::MatrixXd product = Eigen::MatrixXd::Zero(layout.rows(), p);
    for (Index il = 0; il < m; ++il) product.row(layout.global_row(il)) = product_local.row(il).template cast<double>();
    mpi::allreduce_inplace(layout.grid().borrow_comm(), product.data(), static_cast<std::size_t>(product.size()), MPI_SUM);
    return product;
}

// P_K(X) = U Λ₊ Uᵀ, given by its factors and its sum Σ_k λ₊_k (1ᵀu_k)².
struct LowRankPsd {
    Eigen::MatrixXd U;
    Eigen::VectorXd lambda_plus;
    double sum = 0;
};

// The K largest algebraic eigenpairs of X from `warm`, which is updated for the next
// solve on a nearby matrix; the solve's figures go into `it`. Collective.
template <class Matrix>
LowRankPsd nearest_psd(const Matrix& X, distmat::EigOptions eig, WarmStart& warm, ProjectionIteration& it) {
    const Index N = X.rows();
    // λ_min moves between iterations: reuse the last estimate widened by 10% (a wrong one
    // is detected and lowered by the eigensolver), or estimate it afresh.
    eig.lower_bound = std::isfinite(warm.lower_bound) ? warm.lower_bound - 0.1 * std::abs(warm.lower_bound) : nan;
    const bool has_product = warm.product.rows() == N && warm.block.rows() == N;
    const distmat::EigResult top = distmat::top_eigenpairs(X, eig, warm.block.rows() == N ? &warm.block : nullptr,
                                                     has_product ? &warm.product : nullptr);
    warm.block = top.block;
    warm.product.resize(0, 0);  // it was the old iterate's
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
    it.passes += top.block_products + top.lanczos_products;
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

// ‖C − U Λ₊ Uᵀ‖_F / ‖C‖_F from the Ritz values alone: ‖C‖² − Σ λ₊² (C's norm from the
// pass that wrote it; NaN before the first).
double distance_from_psd(const std::vector<ProjectionIteration>& trace, const LowRankPsd& P) {
    if (trace.empty() || !(trace.back().norm > 0)) return nan;
    const double norm2 = trace.back().norm * trace.back().norm;
    return std::sqrt(std::max(0.0, norm2 - P.lambda_plus.squaredNorm()) / norm2);
}

// Anderson runs from the iteration after the first whose change was at most
// anderson_below: a function of the trace alone, so a resumed run decides the same.
bool anderson_active(const ProjectionOptions& options, const std::vector<ProjectionIteration>& trace) {
    if (options.anderson.depth <= 0) return false;
    if (options.anderson_below <= 0) return true;
    return std::any_of(trace.begin(), trace.end(),
                       [&](const ProjectionIteration& it) { return it.change <= options.anderson_below; });
}

// AP: C ← max(P_K(C) + (1 − ΣP_K(C))/N², 0)   (Alg. 1 lines 3–7). With acceleration the
// new C is built from the factor Anderson proposes instead of U Λ₊^{1/2}.
// C is the double iterate or, in single precision, the float one.
template <class Matrix>
Totals ap_iteration(Matrix& C, const distmat::EigOptions& eig, const ProjectionOptions& options,
                    ProjectionState& state, ProjectionIteration& it) {
    using Scalar = typename Matrix::Scalar;
    const double N2 = squared(static_cast<double>(C.rows()));
    WarmStart& warm = state.eig[0];
    LowRankPsd P = nearest_psd(C, eig, warm, it);
    it.distance_psd = distance_from_psd(state.trace, P);
    const bool accelerate = anderson_active(options, state.trace);
    const bool relax = !accelerate && options.relaxation != 1 && static_cast<int>(state.trace.size()) >= options.relaxation_start;
    const double omega = relax ? options.relaxation : 1.0;
    it.accelerated = relax ? 2 : 0;
    if (accelerate) {
        // The factor G = U Λ₊^{1/2} is the state; Anderson proposes the next one.
        const Eigen::MatrixXd G = P.U * P.lambda_plus.cwiseSqrt().asDiagonal();
        P.U = state.anderson.next(G);
        it.accelerated = static_cast<int>(state.anderson.last_step());
        P.lambda_plus = Eigen::VectorXd::Ones(P.U.cols());
        P.sum = P.U.colwise().sum().squaredNorm();
    }
    const double shift = (1.0 - P.sum) / N2;
    Totals totals;
    // The pass also forms C_{t+1} · block, the next solve's first product.
    warm.product = for_each_low_rank_column(
        C, P.U, P.lambda_plus, totals,
        [&](Index jl, Index first, Index end, const double* fresh, Totals& sums) {
            Scalar* column = C.data() + jl * C.ld() + first;
            // Four partial sums per total: four independent chains of additions (one chain
            // per total made the latency of an addition the pass's limit).
            constexpr Index lanes = 4;
            double clipped[lanes] = {}, diff2[lanes] = {}, norm2[lanes] = {}, sum[lanes] = {};
            const auto entry = [&](Index il, Index l) {
                const double nor = fresh[il] + shift;          // line 6: NOR projection
                const double nn = nor > 0 ? nor : 0.0;         // line 7: NN projection
                clipped[l] += nn - nor;
                const double old = column[il];
                const auto next = static_cast<Scalar>(omega == 1.0 ? nn : old + omega * (nn - old));
                const double stored = next, d = stored - old;  // the stored value (rounded, in single)
                diff2[l] += d * d;
                norm2[l] += stored * stored;
                sum[l] += stored;
                column[il] = next;
            };
            const Index m = end - first, whole = m - m % lanes;
            for (Index i0 = 0; i0 < whole; i0 += lanes)
                for (Index l = 0; l < lanes; ++l) entry(i0 + l, l);
            for (Index il = whole; il < m; ++il) entry(il, 0);
            for (Index l = 0; l < lanes; ++l) {
                sums.clipped += clipped[l];
                sums.difference_squared += diff2[l];
                sums.norm_squared += norm2[l];
                sums.sum += sum[l];
            }
        },
        &warm.block);
    ++it.eig_products;
    ++it.passes;
    return totals;
}

// DR (rectifyC_DR.m): C ← T_{NN,PSD}(T_{JS,NN}(T_{PSD,JS}(C))), T_{A,B} = (I + R_B R_A)/2.
// `work` holds |C₂| for the second eigensolve and `negative` the signs of C₂.
Totals dr_iteration(distmat::DistMatrix& C, distmat::DistMatrix& work, std::vector<std::uint8_t>& negative,
                    const distmat::EigOptions& eig, ProjectionState& state, ProjectionIteration& it) {
    const double N2 = squared(static_cast<double>(C.rows()));
    const Index m = C.local_rows();
    const double sum_x = distmat::sum(C);
    it.passes += 3;  // the sum, and the writes of |C₂| and of C
    const LowRankPsd P = nearest_psd(C, eig, state.eig[0], it);
    // C₁ = T_{PSD,JS}(X) = P + s₁ with s₁ = (1 − Σ(2P − X))/N², so ΣC₁ = 1 − ΣP + ΣX;
    // C₂ = T_{JS,NN}(C₁) = (C₁ + |C₁ + 2s₂|)/2 with s₂ = (1 − ΣC₁)/N².
    const double s1 = (1.0 - 2.0 * P.sum + sum_x) / N2;
    const double s2 = (1.0 - (1.0 - P.sum + sum_x)) / N2;
    Totals totals;
    for_each_low_rank_column(C, P.U, P.lambda_plus, totals,
                             [&](Index jl, Index first, Index end, const double* fresh, Totals& sums) {
        double* out = work.data() + jl * work.ld();
        std::uint8_t* sign = negative.data() + jl * m;
        for (Index il = first; il < end; ++il) {
            const double c1 = fresh[il - first] + s1;
            const double y = c1 + 2.0 * s2;                // R_JS(C₁), the NN reflection's input
            sums.clipped += y < 0 ? -y : 0.0;
            const double c2 = 0.5 * (c1 + std::abs(y));
            out[il] = std::abs(c2);
            sign[il] = c2 < 0 ? 1 : 0;
        }
    });
    // C₃ = T_{NN,PSD}(C₂) = (C₂ + R_PSD(|C₂|))/2 = P_K(|C₂|) + min(C₂, 0).
    const LowRankPsd Q = nearest_psd(work, eig, state.eig[1], it);
    for_each_low_rank_column(C, Q.U, Q.lambda_plus, totals,
                             [&](Index jl, Index first, Index end, const double* fresh, Totals& sums) {
        double* column = C.data() + jl * C.ld();
        const double* absolute = work.data() + jl * work.ld();
        const std::uint8_t* sign = negative.data() + jl * m;
        for (Index il = first; il < end; ++il) {
            const double c3 = fresh[il - first] - (sign[il] ? absolute[il] : 0.0);
            sums.replace(column[il], c3);
            column[il] = c3;
        }
    });
    return totals;
}

// Dykstra: for S = PSD, JS, NN: Y = proj_S(C + I_S); I_S ← C + I_S − Y; C ← Y.
Totals dp_iteration(distmat::DistMatrix& C, const distmat::EigOptions& eig, ProjectionState& state,
                    ProjectionIteration& it) {
    const double N2 = squared(static_cast<double>(C.rows()));
    distmat::DistMatrix& I_psd = state.increments[0];
    distmat::DistMatrix& I_nn = state.increments[1];
    const Index m = C.local_rows();
    for (Index jl = 0; jl < C.local_cols(); ++jl) {  // I_psd ← Z = C + I_psd, the PSD step's input
        const double* x = C.data() + jl * C.ld();
        double* z = I_psd.data() + jl * I_psd.ld();
        for (Index il = 0; il < m; ++il) z[il] += x[il];
    }
    it.passes += 2;  // Z = C + I_PSD, and the fused write of C and the increments
    const LowRankPsd P = nearest_psd(I_psd, eig, state.eig[0], it);
    // JS step on Y + I_js (a constant shift): Σ(Y + I_js) = ΣP + N² I_js.
    const double js_old = state.js_increment;
    const double s = (1.0 - (P.sum + N2 * js_old)) / N2;
    Totals totals;
    for_each_low_rank_column(C, P.U, P.lambda_plus, totals,
                             [&](Index jl, Index first, Index end, const double* fresh, Totals& sums) {
        double* x = C.data() + jl * C.ld();
        double* z = I_psd.data() + jl * I_psd.ld();
        double* g = I_nn.data() + jl * I_nn.ld();
        for (Index il = first; il < end; ++il) {
            const double f = fresh[il - first];
            z[il] -= f;                                     // I_PSD ← Z − P_K(Z)
            const double y = f + js_old + s;                // J(P_K(Z) + I_JS)
            const double z3 = y + g[il];                    // the NN step's input
            const double next = z3 > 0 ? z3 : 0.0;
            g[il] = z3 - next;                              // I_NN ← Z₃ − max(Z₃, 0)
            sums.clipped += next - z3;
            sums.replace(x[il], next);
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

// The iteration's totals, reduced once, into the trace. Collective.
void record_iteration(const mpi::Comm& comm, const Totals& local, const Stopwatch& clock, ProjectionIteration& it,
                      ProjectionState& state) {
    double totals[4] = {local.clipped, local.difference_squared, local.norm_squared, local.sum};
    mpi::allreduce_inplace(comm, totals, 4, MPI_SUM);
    it.change = totals[2] > 0 ? std::sqrt(totals[1] / totals[2]) : 0.0;
    it.clipped_mass = totals[0];
    it.sum = totals[3];
    it.norm = std::sqrt(totals[2]);
    it.seconds = mpi::allreduce_max(comm, clock.seconds());  // replicated, as the trace must be
    state.trace.push_back(it);
    state.iterations_done = static_cast<int>(state.trace.size());
}

int eigensolves_per_iteration(Rectifier method) { return method == Rectifier::dr ? 2 : 1; }


}  // namespace

const distmat::DistMatrix& IterateView::matrix() const {
    if (!fresh_) distmat::widen_into(*single_, *C_);
    fresh_ = true;
    return *C_;
}

ProjectionResult rectify_by_projection(distmat::DistMatrix& C, const ProjectionOptions& options,
                                       const ProjectionProgress& progress, ProjectionState* resume,
                                       const ProjectionMonitor& monitor, const ProjectionProgress& between) {
    const mpi::Comm comm = C.grid().borrow_comm();
    const Index N = C.rows();
    const int K = options.num_topics;
    mpi::require_same_on_all_ranks(comm, {N, K, options.max_iterations, static_cast<std::int64_t>(options.method),
                                          options.single_precision ? 1 : 0},
                                   "rectify_by_projection");
    const int solves = eigensolves_per_iteration(options.method);
    mpi::run_local_phase(comm, "rectify", [&] {
        if (C.rows() != C.cols()) throw InputError("rectify: C is not square");
        if (K < 2 || K >= N) throw OptionError("{topics} must satisfy 2 <= K < N = " + std::to_string(N) + ", got " + std::to_string(K));
        if (options.max_iterations < 0) throw OptionError("{iterations} must be non-negative");
        if (!is_projection(options.method))
            throw OptionError("{rectify} " + name_of(options.method) + " is not a projection (ap, dr or dp)");
        if (options.single_precision && options.method != Rectifier::ap)
            throw OptionError(std::string("single precision is for {rectify} ap, not ") + name_of(options.method));
        if (!resume || resume->iterations_done == 0) return;
        if (static_cast<int>(resume->eig.size()) != solves)
            throw OptionError(std::string("the checkpoint is not of a {rectify} ") + name_of(options.method) + " run");
        for (const auto& warm : resume->eig)
            if (warm.block.rows() != N) throw InputError("the checkpoint's eigenvectors do not match C");
        if (options.method != Rectifier::dp) return;
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
    state.anderson.configure(options.anderson);
    state.stop_reason = StopReason::none;
    if (options.method == Rectifier::dp && state.increments.empty()) {
        for (int k = 0; k < 2; ++k) {
            state.increments.emplace_back(C.grid_ptr(), N, N, C.block_rows(), C.block_cols());
            state.increments.back().local().setZero();
        }
    }
    // DR's work space: |C₂| for its second eigensolve, and C₂'s signs (one byte each).
    std::optional<distmat::DistMatrix> work;
    std::vector<std::uint8_t> negative;
    if (options.method == Rectifier::dr) {
        work.emplace(C.grid_ptr(), N, N, C.block_rows(), C.block_cols());
        negative.assign(static_cast<std::size_t>(C.local_rows() * C.local_cols()), 0);
    }
    distmat::EigOptions eig = options.eig;
    eig.num_eigenpairs = K;
    // Single precision: the iterate lives in float from the second iteration on; C
    // (double) is brought up to date when a callback looks at it and at the end. The
    // first iteration's solve starts cold, and a cold solve on float products stalls
    // (measured on KOS, K = 100: 300 rounds, residual 6e-4, where double converges in a
    // few): it runs in double, and the warm solves after it in float.
    std::optional<distmat::DistMatrixF> single;
    IterateView view(C);
    const auto go_single = [&] {
        single.emplace(distmat::to_single(C));
        view = IterateView(C, &*single);
    };
    if (options.single_precision && state.iterations_done > 0) go_single();

    for (int t = state.iterations_done; t < options.max_iterations; ++t) {
        Stopwatch clock;
        ProjectionIteration it;
        eig.verify_steps = should_check(options, state.trace, t) ? options.eig.verify_steps : 0;
        // λ_min rises as the iterate nears PSD, and a stale bound widens the filter's
        // interval (more rounds). The check refreshes it; without checks, re-estimate it
        // every 5th iteration (a function of t alone, so resume stays exact).
        if (options.eig.verify_steps <= 0 && t % 5 == 0)
            for (auto& warm : state.eig) warm.lower_bound = nan;
        const double floor = single ? std::max(options.eig.tolerance, options.single_eig_floor) : options.eig.tolerance;
        eig.tolerance = options.eig_tolerance_factor > 0 && !state.trace.empty()
                            ? std::max(floor, options.eig_tolerance_factor * state.trace.back().change)
                            : floor;
        const Totals local = single                              ? ap_iteration(*single, eig, options, state, it)
                             : options.method == Rectifier::ap ? ap_iteration(C, eig, options, state, it)
                             : options.method == Rectifier::dr
                                 ? dr_iteration(C, *work, negative, eig, state, it)
                                 : dp_iteration(C, eig, state, it);
        record_iteration(comm, local, clock, it, state);
        if (options.single_precision && !single) go_single();
        view.changed();
        if (progress) progress(state, view);
        if (mpi::root_decides(comm, options.tolerance > 0 && it.change <= options.tolerance)) {
            result.converged = true;
            state.stop_reason = StopReason::tolerance;
            break;
        }
        if (monitor) {
            double verdict = static_cast<double>(monitor(state, view));
            mpi::adopt_root_copy(comm, &verdict, 1);
            if (static_cast<StopReason>(static_cast<int>(verdict)) != StopReason::none) {
                result.converged = true;
                state.stop_reason = static_cast<StopReason>(static_cast<int>(verdict));
                break;
            }
        }
        // After this iteration's stop decisions, so that a checkpoint holds everything the
        // next iteration reads (the rule's check included) and a resume continues exactly.
        if (between && t + 1 < options.max_iterations) between(state, view);
    }
    if (state.stop_reason == StopReason::none) state.stop_reason = StopReason::iterations;
    if (options.method == Rectifier::ap && !state.trace.empty() && state.trace.back().accelerated == 2) {
        // The last step was over-relaxed, so C may have left the non-negative set: one plain step.
        ProjectionOptions plain = options;
        plain.relaxation = 1;
        plain.anderson.depth = 0;
        Stopwatch clock;
        ProjectionIteration it;
        eig.verify_steps = options.eig.verify_steps;
        const Totals local = single ? ap_iteration(*single, eig, plain, state, it) : ap_iteration(C, eig, plain, state, it);
        record_iteration(comm, local, clock, it, state);
    }
    if (single) distmat::widen_into(*single, C);
    const double total = distmat::sum(C);                                        // Alg. 1 line 9
    mpi::check_on_root(comm, "rectify", [&] {
        if (!(total > 0)) throw InputError("rectify: C has no positive mass left to normalize");
    });
    distmat::scale(C, 1.0 / total);
    return result;
}

ProjectionResult alternating_projection(distmat::DistMatrix& C, ProjectionOptions options,
                                        const ProjectionProgress& progress, ProjectionState* resume) {
    options.method = Rectifier::ap;
    return rectify_by_projection(C, options, progress, resume);
}

}  // namespace jsmf::rectify
