// SPDX-License-Identifier: MIT
// The K largest algebraic eigenpairs of a symmetric DistMatrix: Chebyshev-filtered subspace iteration.
#include "jsmf/distmat/eig.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <random>

#include "distmat/detail/scalapack_api.hpp"
#include "jsmf/distmat/blas.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::distmat {

Eigen::MatrixXd random_block(Index rows, Index cols, Seed seed) {
    std::mt19937_64 engine(seed);  // same seed everywhere: replicated exactly
    std::normal_distribution<double> normal(0.0, 1.0);
    Eigen::MatrixXd X(rows, cols);
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) X(i, j) = normal(engine);
    return X;
}

Eigen::MatrixXd orthonormalize(const Eigen::MatrixXd& X) {
    Eigen::MatrixXd Q = Eigen::MatrixXd::Zero(X.rows(), X.cols());
    if (X.size() > 0) {
        const LocalQR qr = thin_qr(X);
        Q.leftCols(qr.Q.cols()) = qr.Q;
    }
    return Q;
}

namespace {

// Where the solver's n × p blocks live. Replicated: every rank holds the whole block, the
// same bits (kept so by adopting the root's copy after each orthonormalization).
struct Replicated {
    const mpi::Comm& comm;
    Index n;
    Index local_rows() const { return n; }
    Eigen::MatrixXd random(Index cols, Seed seed) const { return random_block(n, cols, seed); }
    Eigen::MatrixXd orthonormalize(const Eigen::MatrixXd& X) const { return distmat::orthonormalize(X); }
    template <class A, class B>
    auto inner(const A& a, const B& b) const { return (a.transpose() * b).eval(); }
    template <class A, class B>
    double dot(const A& a, const B& b) const { return a.dot(b); }
    template <class A>
    double norm(const A& a) const { return a.norm(); }
    Eigen::VectorXd column_norms(const Eigen::MatrixXd& A) const { return A.colwise().norm().transpose(); }
    void share(double* data, std::size_t count) const { mpi::adopt_root_copy(comm, data, count); }
    void reduce(double*, std::size_t) const {}  // every rank holds every row
};

// Distributed by rows (RowPartition): each rank holds its rows; inner products are sums
// over ranks (the root's, broadcast), so every decision still sees the same numbers.
struct ByRows {
    const mpi::Comm& comm;
    const RowPartition& rows;
    Index n;
    Index local_rows() const { return rows.rows(comm.rank()); }
    Eigen::MatrixXd random(Index cols, Seed seed) const {
        return random_rows(rows.begin(comm.rank()), local_rows(), cols, seed);
    }
    Eigen::MatrixXd orthonormalize(const Eigen::MatrixXd& X) const { return orthonormal_columns(comm, X); }
    Eigen::MatrixXd inner(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) const {
        Eigen::MatrixXd h = transpose_times(a, b);
        sum_on_all_ranks(comm, h.data(), static_cast<std::size_t>(h.size()));
        return h;
    }
    template <class A, class B>
    auto inner(const A& a, const B& b) const {
        auto h = (a.transpose() * b).eval();
        sum_on_all_ranks(comm, h.data(), static_cast<std::size_t>(h.size()));
        return h;
    }
    template <class A, class B>
    double dot(const A& a, const B& b) const {
        double d = a.dot(b);
        sum_on_all_ranks(comm, &d, 1);
        return d;
    }
    template <class A>
    double norm(const A& a) const {
        double squares = a.squaredNorm();
        sum_on_all_ranks(comm, &squares, 1);
        return std::sqrt(squares);
    }
    Eigen::VectorXd column_norms(const Eigen::MatrixXd& A) const { return distmat::column_norms(comm, A); }
    void share(double*, std::size_t) const {}  // each rank's rows are its own
    void reduce(double* data, std::size_t count) const { sum_on_all_ranks(comm, data, count); }
};

// Z ← Z − U (Uᵀ Z) for the first k columns U of a local block (leading dimension ldu) and
// `cols` columns Z (leading dimension ldz), by BLAS. Collective in ByRows (one k × cols
// reduction), even where this rank has no rows.
template <class Space>
void subtract_projection(const Space& space, const double* U, Index ldu, Index k, double* Z, Index ldz, Index cols) {
    const Index m = space.local_rows();
    if (k == 0 || cols == 0) return;
    Eigen::MatrixXd h = Eigen::MatrixXd::Zero(k, cols);
    if (m > 0)
        gemm('T', 'N', static_cast<int>(k), static_cast<int>(cols), static_cast<int>(m), 1.0, U,
             static_cast<int>(ldu), Z, static_cast<int>(ldz), 0.0, h.data(), static_cast<int>(k));
    space.reduce(h.data(), static_cast<std::size_t>(h.size()));
    if (m > 0)
        gemm('N', 'N', static_cast<int>(m), static_cast<int>(cols), static_cast<int>(k), -1.0, U,
             static_cast<int>(ldu), h.data(), static_cast<int>(k), 1.0, Z, static_cast<int>(ldz));
}

template <class Space>
void subtract_projection(const Space& space, const Eigen::MatrixXd& U, Eigen::MatrixXd& Z) {
    subtract_projection(space, U.data(), U.rows(), U.cols(), Z.data(), Z.rows(), Z.cols());
}

// Rayleigh–Ritz on span(X) (X orthonormal, W = C X): X ← X S, W ← W S, θ descending.
// The p × p eigenproblem is solved everywhere but the root's S and θ are kept, so the
// Ritz values every later decision depends on are the same on every rank. Collective.
template <class Space>
Eigen::VectorXd rayleigh_ritz(Eigen::MatrixXd& X, Eigen::MatrixXd& W, const Space& space) {
    Eigen::MatrixXd H = space.inner(X, W);
    H = 0.5 * (H + H.transpose()).eval();  // symmetric up to rounding; make it exactly so
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> small(H);
    // Eigen sorts ascending; we want the largest algebraic first.
    Eigen::MatrixXd S = small.eigenvectors().rowwise().reverse();
    Eigen::VectorXd theta = small.eigenvalues().reverse();
    mpi::adopt_root_copy(space.comm, S.data(), static_cast<std::size_t>(S.size()));
    mpi::adopt_root_copy(space.comm, theta.data(), static_cast<std::size_t>(theta.size()));
    X = times(X, S);
    W = times(W, S);
    // Replicated, X came out of every rank's own orthonormalization: the root's copy keeps
    // the block (and so U Λ₊ Uᵀ, assembled from it rank by rank) the same everywhere. N·p
    // doubles per round, against the filter's (degree + 1) allreduces of N·p.
    space.share(X.data(), static_cast<std::size_t>(X.size()));
    return theta;
}

// Y = p_m(C) X with the scaled Chebyshev recurrence of Zhou & Saad (2007, Alg. 3.2),
// damps [a, b], grows (λ − c)/e outside it; a0 > b (the top of the spectrum) scales.
// CX = C·X is known (the last Rayleigh–Ritz's W): the first of the m products is free.
Eigen::MatrixXd chebyshev_filter(const SymmetricOperator& op, Eigen::MatrixXd X, const Eigen::MatrixXd& CX, int degree,
                                 double a, double b, double a0, int& products) {
    const double e = (b - a) / 2, c = (b + a) / 2;
    double sigma = e / (a0 - c);
    const double tau = 2 / sigma;
    Eigen::MatrixXd Y = (CX - c * X) * (sigma / e);
    for (int i = 2; i <= degree; ++i) {
        const double sigma_new = 1 / (tau - sigma);
        Eigen::MatrixXd Y_new = (op(Y) - c * Y) * (2 * sigma_new / e) - (sigma * sigma_new) * X;
        ++products;
        X = std::move(Y);
        Y = std::move(Y_new);
        sigma = sigma_new;
    }
    return Y;
}

// How many leading pairs (of the first K) have residuals at most `tolerance`: the pairs
// the next filter leaves alone.
Index leading_converged(const Eigen::VectorXd& residuals, int K, double tolerance) {
    Index k = 0;
    while (k < K && residuals(k) <= tolerance) ++k;
    return k;
}

// log T_d(γ) for γ >= 1 (0 inside [−1, 1], where |T_d| <= 1), without overflow.
double log_chebyshev(int d, double gamma) {
    if (!(gamma > 1)) return 0.0;
    const double x = d * std::acosh(gamma);
    return x + std::log1p(std::exp(-2 * x)) - std::log(2.0);
}

// The largest degree, at most options.chebyshev_degree, at which the filter grows the
// block's top unlocked pair (θ_top) at most 10⁴ times more than the K-th (or 1, whatever
// the ratio: a plain product): the rounding left of the top pair in the other columns
// grows by that ratio against what they carry, so past ~10¹⁶ it swamps them, and the
// cap keeps it near 10⁻¹², so other rank counts' rounding does not move the result. Co-occurrence spectra have an outlier λ₁
// 10³–10⁵ times the bulk; with a tight damped interval a degree-8 filter grows it 10³⁰
// times more than λ_K (measured: the tail residuals of a K = 100 compression stalled at
// 10⁻⁶ of λ₁, and the results drifted between rank counts). Once the outlier is locked
// the cap no longer binds.
int pollution_free_degree(const EigOptions& options, double theta_top, double theta_K, double a, double b) {
    const double e = (b - a) / 2, c = (b + a) / 2;
    if (!(e > 0)) return options.chebyshev_degree;
    const double top = (theta_top - c) / e, kth = (theta_K - c) / e;
    int degree = 1;
    while (degree < options.chebyshev_degree &&
           log_chebyshev(degree + 1, top) - log_chebyshev(degree + 1, kth) <= std::log(1e4))
        ++degree;
    return degree;
}

int filter_degree(const EigOptions& options, double residual, double theta_K, double a, double b) {
    // The filter grows an eigenvector at λ by |T_d(γ)|, γ = (λ − c)/e, against at most 1 in
    // [a, b]: the K-th pair's residual falls by about T_d(γ_K) = cosh(d·acosh γ_K). Take the
    // least degree that reaches the tolerance by that estimate (a check follows), at most
    // options.chebyshev_degree: near convergence (a warm block, as in AP) one or two
    // products do what a full-degree round would overdo. Inputs are the root's.
    const double e = (b - a) / 2, c = (b + a) / 2;
    const double gamma = e > 0 ? (theta_K - c) / e : 0.0;
    if (!(gamma > 1) || !(residual > 0) || !(options.tolerance > 0)) return options.chebyshev_degree;
    // Aimed at a tenth of the tolerance: aimed at the tolerance itself, an accurate
    // estimate lands the residual just below it, where the rounding of another rank
    // count decides whether one more round runs (measured: models of 1 and 3 ranks then
    // differ by 10⁻⁷ instead of 10⁻¹⁰).
    const double reduction = residual / (0.1 * options.tolerance);
    if (reduction <= 1) return 1;
    const double needed = std::acosh(reduction) / std::acosh(gamma);
    if (!std::isfinite(needed)) return options.chebyshev_degree;
    return std::clamp(static_cast<int>(std::ceil(needed)), 1, options.chebyshev_degree);
}
}  // namespace

namespace {
// The local product in C's precision: X is rounded to it; the sums come back in double.
void local_gemm(int m, int n, int k, const double* A, int lda, const Eigen::MatrixXd& X, Eigen::MatrixXd& Y) {
    const double one = 1, zero = 0;
    const int ldb = static_cast<int>(X.rows()), ldc = static_cast<int>(Y.rows());
    dgemm_("N", "N", &m, &n, &k, &one, A, &lda, X.data(), &ldb, &zero, Y.data(), &ldc);
}
void local_gemm(int m, int n, int k, const float* A, int lda, const Eigen::MatrixXd& X, Eigen::MatrixXd& Y) {
    const Eigen::MatrixXf Xf = X.cast<float>();
    Eigen::MatrixXf Yf(Y.rows(), Y.cols());
    const float one = 1, zero = 0;
    const int ldb = static_cast<int>(Xf.rows()), ldc = static_cast<int>(Yf.rows());
    sgemm_("N", "N", &m, &n, &k, &one, A, &lda, Xf.data(), &ldb, &zero, Yf.data(), &ldc);
    Y = Yf.cast<double>();
}

template <class T>
Eigen::MatrixXd multiply_any(const BasicDistMatrix<T>& C, const Eigen::MatrixXd& X) {
    JSMF_REQUIRE(X.rows() == C.cols(), "multiply_block: size mismatch");
    const Index p = X.cols();
    // This rank's columns of C meet these rows of X.
    Eigen::MatrixXd X_loc(C.local_cols(), p);
    for (Index jl = 0; jl < C.local_cols(); ++jl) X_loc.row(jl) = X.row(C.global_col(jl));
    Eigen::MatrixXd Y_loc = Eigen::MatrixXd::Zero(std::max<Index>(1, C.local_rows()), p);
    if (C.local_rows() > 0 && C.local_cols() > 0 && p > 0) {
        // One slab of rows per thread, each a single-threaded GEMM (see row_slabs).
        const Index m = C.local_rows();
        const int slabs = row_slabs(m);
        if (slabs == 1) {
            local_gemm(static_cast<int>(m), static_cast<int>(p), static_cast<int>(C.local_cols()), C.data(),
                       static_cast<int>(C.ld()), X_loc, Y_loc);
        } else {
#pragma omp parallel for schedule(static, 1) num_threads(slabs)
            for (int slab = 0; slab < slabs; ++slab) {
                const Index i0 = m * slab / slabs, rows = m * (slab + 1) / slabs - i0;
                Eigen::MatrixXd part(rows, p);
                local_gemm(static_cast<int>(rows), static_cast<int>(p), static_cast<int>(C.local_cols()),
                           C.data() + i0, static_cast<int>(C.ld()), X_loc, part);
                Y_loc.middleRows(i0, rows) = part;
            }
        }
    }
    Eigen::MatrixXd Y = Eigen::MatrixXd::Zero(C.rows(), p);
    for (Index il = 0; il < C.local_rows(); ++il) Y.row(C.global_row(il)) = Y_loc.row(il);
    // TODO(scale): a row-communicator reduce + column allgather would move N·p/P_r per rank.
    mpi::allreduce_inplace(C.grid().borrow_comm(), Y.data(), static_cast<std::size_t>(Y.size()), MPI_SUM);
    return Y;
}
}  // namespace

Eigen::MatrixXd multiply_block(const DistMatrix& C, const Eigen::MatrixXd& X) { return multiply_any(C, X); }

Eigen::MatrixXd multiply_block(const DistMatrixF& C, const Eigen::MatrixXd& X) { return multiply_any(C, X); }

namespace {
// What a short Lanczos run says about the ends of a symmetric operator's spectrum.
struct LanczosEnds {
    double lowest = 0, highest = 0;             // the extreme Ritz values
    double next_lowest = 0;                     // the second lowest Ritz value (= highest with one step)
    double lowest_residual = 0, highest_residual = 0;  // β_m |s_m| of each (Kaniel–Paige)
    Eigen::VectorXd highest_vector;             // the Ritz vector of `highest`
    int products = 0;
    // A lower bound of λ_min: the lowest Ritz value minus its residual bound, widened in
    // case Lanczos has not reached the very bottom yet by the gap to the next Ritz value
    // (wide where the bottom is unresolved, narrow where it has converged). Not by a share
    // of the whole spread: co-occurrence spectra have an outlier λ₁ 10³–10⁵ times the
    // bulk, and a bound that far below λ_min stretches the filter's damped interval until
    // each round gains a few percent (measured: a K = 100 compression of a 100,000-word
    // corpus needed 300+ products instead of ~60). A bound a little above λ_min only
    // grows the bottom eigenvectors a little, and a Ritz value below it is caught.
    double lower_bound() const {
        const double widen = next_lowest > lowest ? next_lowest - lowest : 0.01 * (highest - lowest);
        return lowest - lowest_residual - widen;
    }
};

// `steps` Lanczos steps with full reorthogonalization on op, or, with `deflate` (n × k,
// orthonormal), on (I − D Dᵀ) op (I − D Dᵀ) restricted to span(D)⊥. Collective through
// op; the early stop and the results are the root's (broadcast).
template <class Space>
LanczosEnds lanczos_ends(const SymmetricOperator& op, const Space& space, int steps, Seed seed,
                         const Eigen::MatrixXd* deflate = nullptr) {
    const Index n = space.n;
    const mpi::Comm& comm = space.comm;
    const Index room = n - (deflate ? deflate->cols() : 0);
    steps = static_cast<int>(std::max<Index>(1, std::min<Index>(steps, room)));
    auto project_out = [&](Eigen::VectorXd& v) {
        if (deflate)
            for (int pass = 0; pass < 2; ++pass)
                subtract_projection(space, deflate->data(), deflate->rows(), deflate->cols(), v.data(), v.rows(), 1);
    };
    Eigen::MatrixXd V(space.local_rows(), steps + 1);
    Eigen::VectorXd start = space.random(1, seed ^ 0x5bd1e995ULL).col(0);
    project_out(start);
    V.col(0) = start / space.norm(start);
    Eigen::VectorXd alpha(steps), beta(steps);
    LanczosEnds ends;
    int done = 0;
    for (int j = 0; j < steps; ++j) {
        Eigen::VectorXd w = op(V.col(j));
        ++ends.products;
        project_out(w);
        alpha(j) = space.dot(w, V.col(j));
        // Full reorthogonalization (twice): steps is small, and it keeps T honest.
        for (int pass = 0; pass < 2; ++pass) subtract_projection(space, V.data(), V.rows(), j + 1, w.data(), w.rows(), 1);
        project_out(w);
        beta(j) = space.norm(w);
        done = j + 1;
        if (mpi::root_decides(comm, beta(j) <= 1e-14 * std::abs(alpha(j)) || j + 1 == steps)) break;
        V.col(j + 1) = w / beta(j);
    }
    Eigen::MatrixXd T = Eigen::MatrixXd::Zero(done, done);
    for (int j = 0; j < done; ++j) {
        T(j, j) = alpha(j);
        if (j + 1 < done) T(j, j + 1) = T(j + 1, j) = beta(j);
    }
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> tridiagonal(T);
    const Eigen::VectorXd& s_low = tridiagonal.eigenvectors().col(0);
    const Eigen::VectorXd& s_high = tridiagonal.eigenvectors().col(done - 1);
    double scalars[5] = {tridiagonal.eigenvalues()(0), tridiagonal.eigenvalues()(done - 1),
                         std::abs(beta(done - 1) * s_low(done - 1)), std::abs(beta(done - 1) * s_high(done - 1)),
                         tridiagonal.eigenvalues()(std::min(1, done - 1))};
    mpi::adopt_root_copy(comm, scalars, 5);
    ends.lowest = scalars[0];
    ends.highest = scalars[1];
    ends.lowest_residual = scalars[2];
    ends.highest_residual = scalars[3];
    ends.next_lowest = scalars[4];
    ends.highest_vector = V.leftCols(done) * s_high;
    space.share(ends.highest_vector.data(), static_cast<std::size_t>(ends.highest_vector.size()));
    return ends;
}

double lowest_bound(const SymmetricOperator& op, Index n, int steps, Seed seed, const mpi::Comm& comm) {
    return lanczos_ends(op, Replicated{comm, n}, steps, seed).lower_bound();
}
}  // namespace

double lowest_eigenvalue_bound(const DistMatrix& C, int steps, Seed seed) {
    return lowest_bound([&](const Eigen::MatrixXd& X) { return multiply_block(C, X); }, C.rows(), steps, seed,
                        C.grid().borrow_comm());
}

EigResult top_eigenpairs(const DistMatrix& C, const EigOptions& options, const Eigen::MatrixXd* warm_start,
                         const Eigen::MatrixXd* warm_product) {
    if (options.method == EigMethod::direct) return top_eigenpairs_direct(C, options);
    mpi::run_local_phase(C.grid().borrow_comm(), "eig", [&] {
        if (C.rows() != C.cols()) throw InputError("eigensolver: the matrix is not square");
    });
    return top_eigenpairs([&](const Eigen::MatrixXd& X) { return multiply_block(C, X); }, C.rows(),
                          C.grid().borrow_comm(), options, warm_start, warm_product);
}

EigResult top_eigenpairs(const DistMatrixF& C, const EigOptions& options, const Eigen::MatrixXd* warm_start,
                         const Eigen::MatrixXd* warm_product) {
    mpi::run_local_phase(C.grid().borrow_comm(), "eig", [&] {
        if (C.rows() != C.cols()) throw InputError("eigensolver: the matrix is not square");
        if (options.method == EigMethod::direct)
            throw InputError("the direct eigensolver (PDSYEVR) needs C in double precision, not single");
    });
    return top_eigenpairs([&](const Eigen::MatrixXd& X) { return multiply_block(C, X); }, C.rows(),
                          C.grid().borrow_comm(), options, warm_start, warm_product);
}

namespace {
template <class Space>
EigResult solve(const SymmetricOperator& op, const Space& space, const EigOptions& options,
                const Eigen::MatrixXd* warm_start, const Eigen::MatrixXd* warm_product) {
    const Index n = space.n, local = space.local_rows();
    const mpi::Comm& comm = space.comm;
    const int K = options.num_eigenpairs;
    // The options decide how many collectives run: they must be the same everywhere.
    mpi::require_same_on_all_ranks(comm, {n, K, options.oversampling, options.max_iterations, options.chebyshev_degree,
                                          options.lanczos_steps, options.verify_steps, options.max_recoveries,
                                          static_cast<std::int64_t>(options.seed), warm_start ? 1 : 0,
                                          warm_product ? 1 : 0, options.first_round},
                                   "top_eigenpairs");
    mpi::run_local_phase(comm, "eig", [&] {
        if (K < 1 || K >= n) throw InputError("eigensolver: need 1 <= K < N, got K = " + std::to_string(K));
        if (options.chebyshev_degree < 1) throw InputError("eigensolver: Chebyshev degree must be at least 1");
        if (warm_start && warm_start->rows() != local) throw InputError("eigensolver: warm start has the wrong height");
    });
    const Index p = std::min<Index>(n, eig_block_columns(K, options.oversampling));
    mpi::run_local_phase(comm, "eig", [&] {
        if (warm_product && (!warm_start || warm_start->cols() != p || warm_product->rows() != local ||
                             warm_product->cols() != p))
            throw InternalError("eigensolver: a warm product needs the whole N x p warm block");
    });

    EigResult result;
    Eigen::MatrixXd X, W;
    if (warm_product) {  // the caller's orthonormal block and its product: no product here
        X = *warm_start;
        W = *warm_product;
    } else {
        if (warm_start && warm_start->cols() >= p) {  // nothing random left to draw
            X = warm_start->leftCols(p);
        } else {
            X = space.random(p, options.seed);
            if (warm_start) X.leftCols(warm_start->cols()) = *warm_start;
        }
        X = space.orthonormalize(X);
        W = op(X);
        result.block_products = 1;
    }
    Eigen::VectorXd theta = rayleigh_ritz(X, W, space);
    auto fresh_bound = [&](Seed seed) {
        const LanczosEnds ends = lanczos_ends(op, space, options.lanczos_steps, seed);
        result.lanczos_products += ends.products;
        return std::max(ends.lower_bound(), options.spectrum_floor);
    };
    // Estimated when a filter first needs it: a warm solve that converges at once never does.
    result.lower_bound = std::isfinite(options.lower_bound) ? std::max(options.lower_bound, options.spectrum_floor)
                                                            : options.lower_bound;

    auto residual_norms = [&] {
        return space.column_norms(W - X * theta.asDiagonal());
    };
    auto scale = [&] { return std::max(std::abs(theta(0)), std::numeric_limits<double>::min()); };
    Eigen::VectorXd residuals = residual_norms();
    int recoveries = 0;
    // Each pass checks first, so the last round's result is checked (and verified) too.
    for (int it = options.first_round;; ++it) {
        if (mpi::root_decides(comm, residuals.head(K).maxCoeff() <= options.tolerance * scale())) {
            if (options.verify_steps <= 0) {
                result.converged = true;
                break;
            }
            // Small residuals show eigenpairs, not the top K: look outside span(X_K).
            const Eigen::MatrixXd found = X.leftCols(K);
            const LanczosEnds outside =
                lanczos_ends(op, space, options.verify_steps, options.seed + 1 + static_cast<Seed>(it), &found);
            result.lanczos_products += outside.products;
            result.next_lower_bound = std::max(outside.lower_bound(), options.spectrum_floor);  // a restriction's λ_min is no lower
            const double slack = residuals.head(K).norm() + 1e-12 * scale();
            if (!mpi::root_decides(comm, outside.highest > theta(K - 1) + slack)) {
                result.verified = true;
                result.converged = true;
                break;
            }
            ++result.missed;
            if (++recoveries > options.max_recoveries || it >= options.max_iterations) break;
            // Bring the missed direction into the block in place of its last vector.
            X.col(p - 1) = outside.highest_vector;
            X = space.orthonormalize(X);
            W = op(X);
            ++result.block_products;
            theta = rayleigh_ritz(X, W, space);
            residuals = residual_norms();
            result.iterations = it + 1;
            continue;
        }
        if (it >= options.max_iterations) break;  // the round limit: not converged
        if (!std::isfinite(result.lower_bound)) result.lower_bound = fresh_bound(options.seed);
        // Ritz values lie inside the spectrum: one below the bound (by more than rounding,
        // which leaves a PSD operator's null space at ±ε‖C‖) proves it wrong, and the
        // filter would amplify what it should damp. Lower it before filtering.
        const double rounding = 1e-10 * std::max(std::abs(theta(0)), std::abs(result.lower_bound));
        // A margin below θ_p scaled by the wanted end of the block (θ_K down to the bound),
        // not by θ₁ − θ_p: with an outlier λ₁ that would stretch the interval again.
        const auto margin = [&] {
            return 1e-3 * std::max(theta(K - 1) - std::min(result.lower_bound, theta(p - 1)), 0.0);
        };
        if (mpi::root_decides(comm, theta(p - 1) < result.lower_bound - rounding)) {
            ++result.bound_corrections;
            result.lower_bound = fresh_bound(options.seed + 1000 + static_cast<Seed>(it));
            result.lower_bound = std::min(result.lower_bound, theta(p - 1) - margin());
        }
        // Damp [λ_min, θ_p], keeping the bound below everything the block has seen, and the
        // interval from collapsing when the bound is within a hair of θ_p.
        const double a = std::min(result.lower_bound, theta(p - 1) - margin());
        const double b = theta(p - 1);
        bool multiplied = false;  // W = C X already (a locked round multiplies only its unlocked columns)
        if (mpi::root_decides(comm, !(b > a) || !(theta(0) > b))) {
            // Degenerate block (e.g. all Ritz values equal): one plain product instead.
            X = space.orthonormalize(W);
        } else {
            // Lock the leading pairs that have converged: they leave the filter, which runs
            // on the rest with C deflated by them, (I − UUᵀ) C. Locked at a hundredth of the
            // tolerance, not at it: a locked pair stays where it is, and the results must
            // agree across rank counts to ~10× the tolerance. Fewer columns also make the
            // products cheaper.
            double locked_value =
                static_cast<double>(leading_converged(residuals, K, 0.01 * options.tolerance * scale()));
            mpi::adopt_root_copy(comm, &locked_value, 1);
            const Index locked = static_cast<Index>(locked_value), q = p - locked;
            // The degree sets how many collective products follow: the root's counts.
            double degree_value = std::min(
                filter_degree(options, residuals.head(K).maxCoeff() / scale(), theta(K - 1), a, b),
                pollution_free_degree(options, theta(locked), theta(K - 1), a, b));
            mpi::adopt_root_copy(comm, &degree_value, 1);
            const int degree = static_cast<int>(degree_value);
            if (locked == 0) {
                X = space.orthonormalize(chebyshev_filter(op, X, W, degree, a, b, theta(0), result.block_products));
            } else {
                const Eigen::MatrixXd U = X.leftCols(locked);
                const SymmetricOperator deflated = [&](const Eigen::MatrixXd& Z) {
                    Eigen::MatrixXd CZ = op(Z);
                    subtract_projection(space, U, CZ);
                    return CZ;
                };
                Eigen::MatrixXd CX = W.rightCols(q);
                subtract_projection(space, U, CX);
                Eigen::MatrixXd Z = chebyshev_filter(deflated, X.rightCols(q), CX, degree, a, b, theta(locked),
                                                     result.block_products);
                for (int pass = 0; pass < 2; ++pass) subtract_projection(space, U, Z);
                X.rightCols(q) = space.orthonormalize(Z);
                // U is unchanged, and so is its product, W's leading columns.
                W.rightCols(q) = op(X.rightCols(q));
                multiplied = true;
            }
        }
        if (!multiplied) W = op(X);
        ++result.block_products;
        theta = rayleigh_ritz(X, W, space);
        residuals = residual_norms();
        result.iterations = it + 1;
        if (options.progress)
            options.progress({result.iterations, result.block_products, result.lanczos_products,
                              residuals.head(K).maxCoeff() / scale(), &X, &W, result.lower_bound});
    }
    result.values = theta.head(K);
    result.vectors = X.leftCols(K);
    result.block = std::move(X);
    result.product = std::move(W);
    result.residuals = residuals.head(K);
    return result;
}
}  // namespace

EigResult top_eigenpairs(const SymmetricOperator& op, Index n, const mpi::Comm& comm, const EigOptions& options,
                         const Eigen::MatrixXd* warm_start, const Eigen::MatrixXd* warm_product) {
    return solve(op, Replicated{comm, n}, options, warm_start, warm_product);
}

EigResult top_eigenpairs(const SymmetricOperator& op, const RowPartition& rows, const mpi::Comm& comm,
                         const EigOptions& options, const Eigen::MatrixXd* warm_start,
                         const Eigen::MatrixXd* warm_product) {
    mpi::run_local_phase(comm, "eig", [&] {
        if (rows.ranks() != comm.size()) throw InternalError("eigensolver: the row partition is for another communicator");
    });
    return solve(op, ByRows{comm, rows, rows.size()}, options, warm_start, warm_product);
}

EigResult top_eigenpairs_direct(const DistMatrix& C, const EigOptions& options) {
    const Index n = C.rows();
    const int K = options.num_eigenpairs;
    const mpi::Comm comm = C.grid().borrow_comm();
    mpi::run_local_phase(comm, "eig", [&] {
        if (C.rows() != C.cols()) throw InputError("eigensolver: the matrix is not square");
        if (K < 1 || K >= n) throw InputError("eigensolver: need 1 <= K < N, got K = " + std::to_string(K));
        if (C.block_rows() != C.block_cols()) throw InputError("PDSYEVR needs square blocks");
    });
    const int N = static_cast<int>(n);
    const int wanted = static_cast<int>(std::min<Index>(n, std::max<Index>(K, 2 * Index{C.block_rows()})));
    DistMatrix A = copy(C);  // PDSYEVR destroys its input
    DistMatrix Z(C.grid_ptr(), n, n, C.block_rows());
    Eigen::VectorXd w(n);
    const int one = 1, il = N - wanted + 1, iu = N;
    const double vl = 0, vu = 0;
    int m = 0, nz = 0, info = 0, lwork = -1, liwork = -1;
    double work_query = 0;
    int iwork_query = 0;
    pdsyevr_("V", "I", "U", &N, A.data(), &one, &one, A.desc().data(), &vl, &vu, &il, &iu, &m, &nz, w.data(),
             Z.data(), &one, &one, Z.desc().data(), &work_query, &lwork, &iwork_query, &liwork, &info);
    lwork = static_cast<int>(work_query) + 1;
    liwork = iwork_query + 1;
    std::vector<double> work(static_cast<std::size_t>(lwork));
    std::vector<int> iwork(static_cast<std::size_t>(liwork));
    pdsyevr_("V", "I", "U", &N, A.data(), &one, &one, A.desc().data(), &vl, &vu, &il, &iu, &m, &nz, w.data(),
             Z.data(), &one, &one, Z.desc().data(), work.data(), &lwork, iwork.data(), &liwork, &info);
    mpi::check_on_root(comm, "eig", [&] {
        if (info != 0 || m != wanted)
            throw InternalError("PDSYEVR failed: info = " + std::to_string(info) + ", " + std::to_string(m) + " of " +
                                std::to_string(wanted) + " eigenpairs");
    });
    // The top K are the last K of the m ascending ones: columns m−K .. m−1 of Z.
    EigResult result;
    result.values.resize(K);
    result.vectors = Eigen::MatrixXd::Zero(n, K);
    for (int k = 0; k < K; ++k) {
        const Index column = m - 1 - k;  // descending order
        result.values(k) = w(column);
        if (Z.owner_col(column) != C.grid().my_col()) continue;
        const Index jl = Z.local_col(column);
        for (Index il_ = 0; il_ < Z.local_rows(); ++il_) result.vectors(Z.global_row(il_), k) = Z.local()(il_, jl);
    }
    // Each entry was set by exactly one rank (its owner): a sum assembles them.
    mpi::allreduce_inplace(comm, result.vectors.data(), static_cast<std::size_t>(result.vectors.size()), MPI_SUM);
    const Eigen::MatrixXd W = multiply_block(C, result.vectors);
    result.residuals = (W - result.vectors * result.values.asDiagonal()).colwise().norm().transpose();
    result.block_products = 1;
    result.iterations = 1;
    const double scale = std::max(std::abs(result.values(0)), std::numeric_limits<double>::min());
    result.converged = mpi::root_decides(comm, result.residuals.maxCoeff() <= std::max(options.tolerance, 1e-10) * scale);
    result.block = result.vectors;
    result.product = W;
    return result;
}

}  // namespace jsmf::distmat
