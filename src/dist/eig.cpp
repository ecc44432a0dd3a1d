// SPDX-License-Identifier: MIT
// The K largest algebraic eigenpairs of a symmetric DistMatrix: Chebyshev-filtered subspace iteration.
#include "jsmf/dist/eig.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <random>

#include "dist/detail/scalapack_api.hpp"
#include "jsmf/dist/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::dist {
namespace {

Eigen::MatrixXd random_block(Index rows, Index cols, Seed seed) {
    std::mt19937_64 engine(seed);  // same seed everywhere: replicated exactly
    std::normal_distribution<double> normal(0.0, 1.0);
    Eigen::MatrixXd X(rows, cols);
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) X(i, j) = normal(engine);
    return X;
}

Eigen::MatrixXd orthonormalize(const Eigen::MatrixXd& X) {
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(X);
    return qr.householderQ() * Eigen::MatrixXd::Identity(X.rows(), X.cols());
}

// Rayleigh–Ritz on span(X) (X orthonormal, W = C X): X ← X S, W ← W S, θ descending.
Eigen::VectorXd rayleigh_ritz(Eigen::MatrixXd& X, Eigen::MatrixXd& W) {
    Eigen::MatrixXd H = X.transpose() * W;
    H = 0.5 * (H + H.transpose()).eval();  // symmetric up to rounding; make it exactly so
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> small(H);
    // Eigen sorts ascending; we want the largest algebraic first.
    Eigen::MatrixXd S = small.eigenvectors().rowwise().reverse();
    Eigen::VectorXd theta = small.eigenvalues().reverse();
    X = (X * S).eval();
    W = (W * S).eval();
    return theta;
}

// Y = p_m(C) X with the scaled Chebyshev recurrence of Zhou & Saad (2007, Alg. 3.2):
// damps [a, b], grows (λ − c)/e outside it; a0 > b (the top of the spectrum) scales.
Eigen::MatrixXd chebyshev_filter(const SymmetricOperator& op, Eigen::MatrixXd X, int degree, double a, double b,
                                 double a0, int& products) {
    const double e = (b - a) / 2, c = (b + a) / 2;
    double sigma = e / (a0 - c);
    const double tau = 2 / sigma;
    Eigen::MatrixXd Y = (op(X) - c * X) * (sigma / e);
    ++products;
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
}  // namespace

Eigen::MatrixXd multiply_block(const DistMatrix& C, const Eigen::MatrixXd& X) {
    JSMF_REQUIRE(X.rows() == C.cols(), "multiply_block: size mismatch");
    const Index p = X.cols();
    // This rank's columns of C meet these rows of X.
    Eigen::MatrixXd X_loc(C.local_cols(), p);
    for (Index jl = 0; jl < C.local_cols(); ++jl) X_loc.row(jl) = X.row(C.global_col(jl));
    Eigen::MatrixXd Y_loc(std::max<Index>(1, C.local_rows()), p);
    if (C.local_rows() > 0 && C.local_cols() > 0 && p > 0) {
        const int m = static_cast<int>(C.local_rows()), n = static_cast<int>(p), k = static_cast<int>(C.local_cols());
        const int lda = static_cast<int>(C.ld()), ldb = static_cast<int>(X_loc.rows()), ldc = static_cast<int>(Y_loc.rows());
        const double one = 1, zero = 0;
        dgemm_("N", "N", &m, &n, &k, &one, C.data(), &lda, X_loc.data(), &ldb, &zero, Y_loc.data(), &ldc);
    } else {
        Y_loc.setZero();
    }
    Eigen::MatrixXd Y = Eigen::MatrixXd::Zero(C.rows(), p);
    for (Index il = 0; il < C.local_rows(); ++il) Y.row(C.global_row(il)) = Y_loc.row(il);
    // TODO(scale): a row-communicator reduce + column allgather would move N·p/P_r per rank.
    mpi::allreduce_inplace(C.grid().borrow_comm(), Y.data(), static_cast<std::size_t>(Y.size()), MPI_SUM);
    return Y;
}

namespace {
double lowest_bound(const SymmetricOperator& op, Index n, int steps, Seed seed) {
    steps = static_cast<int>(std::min<Index>(steps, n));
    Eigen::MatrixXd V(n, steps + 1);
    V.col(0) = random_block(n, 1, seed ^ 0x5bd1e995ULL).col(0).normalized();
    Eigen::VectorXd alpha(steps), beta(steps);
    int done = 0;
    for (int j = 0; j < steps; ++j) {
        Eigen::VectorXd w = op(V.col(j));
        alpha(j) = w.dot(V.col(j));
        // Full reorthogonalization (twice): steps is small, and it keeps T honest.
        for (int pass = 0; pass < 2; ++pass) w -= V.leftCols(j + 1) * (V.leftCols(j + 1).transpose() * w);
        beta(j) = w.norm();
        done = j + 1;
        if (beta(j) <= 1e-14 * std::abs(alpha(j)) || j + 1 == steps) break;
        V.col(j + 1) = w / beta(j);
    }
    Eigen::MatrixXd T = Eigen::MatrixXd::Zero(done, done);
    for (int j = 0; j < done; ++j) {
        T(j, j) = alpha(j);
        if (j + 1 < done) T(j, j + 1) = T(j + 1, j) = beta(j);
    }
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> tridiagonal(T);
    const double theta_min = tridiagonal.eigenvalues()(0);
    const double theta_max = tridiagonal.eigenvalues()(done - 1);
    // Some eigenvalue lies within β_m |s_m| of θ_min (Kaniel–Paige); widen by 1% of the
    // spread in case Lanczos has not reached the very bottom yet.
    const double residual = std::abs(beta(done - 1) * tridiagonal.eigenvectors()(done - 1, 0));
    return theta_min - residual - 0.01 * (theta_max - theta_min);
}
}  // namespace

double lowest_eigenvalue_bound(const DistMatrix& C, int steps, Seed seed) {
    return lowest_bound([&](const Eigen::MatrixXd& X) { return multiply_block(C, X); }, C.rows(), steps, seed);
}

EigResult top_eigenpairs(const DistMatrix& C, const EigOptions& options, const Eigen::MatrixXd* warm_start) {
    if (options.method == EigMethod::direct) return top_eigenpairs_direct(C, options);
    mpi::run_local_phase(C.grid().borrow_comm(), "eig", [&] {
        if (C.rows() != C.cols()) throw InputError("eigensolver: the matrix is not square");
    });
    return top_eigenpairs([&](const Eigen::MatrixXd& X) { return multiply_block(C, X); }, C.rows(),
                          C.grid().borrow_comm(), options, warm_start);
}

EigResult top_eigenpairs(const SymmetricOperator& op, Index n, const mpi::Comm& comm, const EigOptions& options,
                         const Eigen::MatrixXd* warm_start) {
    const int K = options.num_eigenpairs;
    mpi::run_local_phase(comm, "eig", [&] {
        if (K < 1 || K >= n) throw InputError("eigensolver: need 1 <= K < N, got K = " + std::to_string(K));
        if (options.chebyshev_degree < 1) throw InputError("eigensolver: Chebyshev degree must be at least 1");
        if (warm_start && warm_start->rows() != n) throw InputError("eigensolver: warm start has the wrong height");
    });
    const int extra = options.oversampling >= 0 ? options.oversampling : std::max(10, K / 5);
    const Index p = std::min<Index>(n, K + extra);

    EigResult result;
    Eigen::MatrixXd X = random_block(n, p, options.seed);
    if (warm_start) {
        const Index k = std::min<Index>(warm_start->cols(), p);
        X.leftCols(k) = warm_start->leftCols(k);
    }
    X = orthonormalize(X);
    Eigen::MatrixXd W = op(X);
    result.block_products = 1;
    Eigen::VectorXd theta = rayleigh_ritz(X, W);
    result.lower_bound = std::isfinite(options.lower_bound) ? options.lower_bound
                                                            : lowest_bound(op, n, options.lanczos_steps, options.seed);

    auto residual_norms = [&] {
        return ((W - X * theta.asDiagonal()).colwise().norm()).transpose().eval();
    };
    Eigen::VectorXd residuals = residual_norms();
    for (int it = 0; it < options.max_iterations; ++it) {
        const double scale = std::max(std::abs(theta(0)), std::numeric_limits<double>::min());
        if (residuals.head(K).maxCoeff() <= options.tolerance * scale) {
            result.converged = true;
            break;
        }
        // Damp [λ_min, θ_p]; keep the bound below everything the block has seen.
        const double a = std::min(result.lower_bound, theta(p - 1) - 1e-3 * (theta(0) - theta(p - 1)));
        const double b = theta(p - 1);
        if (!(b > a) || !(theta(0) > b)) {
            // Degenerate block (e.g. all Ritz values equal): one plain product instead.
            X = orthonormalize(W);
        } else {
            X = orthonormalize(chebyshev_filter(op, X, options.chebyshev_degree, a, b, theta(0), result.block_products));
        }
        W = op(X);
        ++result.block_products;
        theta = rayleigh_ritz(X, W);
        residuals = residual_norms();
        result.iterations = it + 1;
    }
    if (!result.converged) {
        const double scale = std::max(std::abs(theta(0)), std::numeric_limits<double>::min());
        result.converged = residuals.head(K).maxCoeff() <= options.tolerance * scale;
    }
    result.values = theta.head(K);
    result.vectors = X.leftCols(K);
    result.residuals = residuals.head(K);
    return result;
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
    result.converged = result.residuals.maxCoeff() <= std::max(options.tolerance, 1e-10) * scale;
    return result;
}

}  // namespace jsmf::dist
