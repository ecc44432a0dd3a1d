// SPDX-License-Identifier: MIT
// Simplex-constrained least squares solvers: ExpGrad, ADMM-DR (Alg. 3), exact active sets (QR and Gram);
// nonnegative and capped-simplex least squares for SNPA and XRAY.
#include "jsmf/solvers/scls.hpp"

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "jsmf/core/error.hpp"

namespace jsmf::solvers {

Eigen::VectorXd project_to_simplex(const Eigen::VectorXd& x) {
    // Sort descending, find the largest ρ with u_ρ − (Σ_{j<=ρ} u_j − 1)/ρ > 0, shift by θ.
    std::vector<double> u(x.data(), x.data() + x.size());
    std::sort(u.begin(), u.end(), std::greater<double>());
    double running = 0, theta = 0;
    for (std::size_t j = 0; j < u.size(); ++j) {
        running += u[j];
        const double candidate = (running - 1.0) / static_cast<double>(j + 1);
        if (u[j] - candidate > 0) theta = candidate;
    }
    return (x.array() - theta).cwiseMax(0.0).matrix();
}

double duality_gap(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const Eigen::VectorXd& y) {
    const Eigen::VectorXd gradient = 2.0 * (G * y - f);  // ∇‖Uy − v‖², the authors' scale
    return gradient.dot(y) - gradient.minCoeff();
}

SclsSolution solve_expgrad(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const SclsOptions& options) {
    const auto K = f.size();
    SclsSolution s;
    s.y = Eigen::VectorXd::Constant(K, 1.0 / static_cast<double>(K));
    // solveSCLS_expGrad.m: the gradient of ‖Uy − v‖² is 2(Gy − f); η = 50 applies to it.
    Eigen::VectorXd gradient = 2.0 * (G * s.y - f);
    s.gap = gradient.dot(s.y) - gradient.minCoeff();
    // The authors update first and check after (strict <), so y⁰ is never tested.
    for (int t = 1; t <= options.max_iterations; ++t) {
        // Shifting the exponent by min ∇ multiplies every entry by one constant, which the
        // normalization removes: the authors' iterate, without overflow for large η∇.
        const Eigen::ArrayXd factor = (-options.eta * (gradient.array() - gradient.minCoeff())).exp();
        s.y = (s.y.array() * factor).matrix();
        s.y /= s.y.sum();  // = norm(y, 1), y >= 0
        gradient = 2.0 * (G * s.y - f);
        s.gap = gradient.dot(s.y) - gradient.minCoeff();  // = mu'*y with mu = ∇ − min ∇
        s.iterations = t;
        if (s.gap < options.tolerance) {
            s.converged = true;
            break;
        }
    }
    return s;
}

AdmmDrSolver::AdmmDrSolver(const Eigen::MatrixXd& G, const SclsOptions& options)
    : G_(G), options_(options) {
    const auto K = G.rows();
    F_ = (options.gamma * G + Eigen::MatrixXd::Identity(K, K)).inverse();  // recoverB.m: Ginv
    // recoverB.m starts from projectToSimplex(UtU \ Utv); MATLAB's backslash solves a
    // symmetric positive-definite G by Cholesky, and so do we. Only if Cholesky fails
    // (G singular or indefinite by rounding) is there no G⁻¹f: then the pseudo-inverse.
    const Eigen::LLT<Eigen::MatrixXd> cholesky(G);
    use_pseudo_inverse_ = cholesky.info() != Eigen::Success;
    if (use_pseudo_inverse_) G_pinv_ = G.completeOrthogonalDecomposition().pseudoInverse();
    else G_cholesky_ = cholesky.matrixLLT();
}

SclsSolution AdmmDrSolver::solve(const Eigen::VectorXd& f) const {
    SclsSolution s;
    const Eigen::VectorXd f_gamma = options_.gamma * f;  // recoverB.m passes gamma*Utv
    if (use_pseudo_inverse_) {
        s.y = project_to_simplex(G_pinv_ * f);
    } else {
        const auto L = G_cholesky_.triangularView<Eigen::Lower>();
        s.y = project_to_simplex(L.transpose().solve(L.solve(f)));
    }
    Eigen::VectorXd q = s.y;
    // solveSCLS_admmDR.m: update first, then the stopping rule (strict <).
    for (int t = 1; t <= options_.max_iterations; ++t) {
        const Eigen::VectorXd previous = s.y;
        const Eigen::VectorXd p = F_ * (2 * s.y - q + f_gamma);  // prox(2y − q)
        q += options_.lambda * (p - s.y);
        s.y = project_to_simplex(q);
        s.iterations = t;
        const double stop_value =
            options_.admm_stop == AdmmStop::step ? (s.y - previous).norm() : duality_gap(G_, f, s.y);
        if (stop_value < options_.tolerance) {
            s.converged = true;
            break;
        }
    }
    s.gap = duality_gap(G_, f, s.y);
    return s;
}

ThinQr thin_qr(const Eigen::MatrixXd& U) {
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(U);
    const auto K = U.cols();
    ThinQr factors;
    factors.Q = qr.householderQ() * Eigen::MatrixXd::Identity(U.rows(), K);
    factors.R = qr.matrixQR().topRows(K).triangularView<Eigen::Upper>();
    return factors;
}

namespace detail {

FaceQr::FaceQr(const Eigen::MatrixXd& R, const Eigen::VectorXd& b) : R_(R), b_(b), T_(R.cols(), R.cols()), qb_(b) {
    JSMF_REQUIRE(b.size() == R.rows() && R.rows() >= R.cols(), "FaceQr: R must be M x K with M >= K, b of length M");
}

void FaceQr::refactor() {
    const std::vector<Eigen::Index> F = std::move(F_);
    F_.clear();
    steps_.clear();
    qb_ = b_;
    T_.setZero();
    for (const Eigen::Index column : F) join(column);
}

void FaceQr::join(Eigen::Index column) {
    JSMF_REQUIRE(column >= 0 && column < R_.cols() && std::find(F_.begin(), F_.end(), column) == F_.end(),
                 "FaceQr: no such column, or it is already free");
    // Each join applies every step recorded since the last factorization, and rounding
    // accumulates with them: past 4K steps (a long path of joins and removals), factor the
    // free columns afresh.
    if (static_cast<Eigen::Index>(steps_.size()) > 4 * R_.cols()) refactor();
    const Eigen::Index M = R_.rows(), m = static_cast<Eigen::Index>(F_.size());
    Eigen::VectorXd w = R_.col(column);
    for (const Step& step : steps_) apply(step, w);
    if (M - m > 1) {  // a reflector on rows m.. zeroes w below row m
        Step step;
        step.row = m;
        double beta = 0;
        Eigen::VectorXd tail = w.tail(M - m);
        tail.makeHouseholderInPlace(step.tau, beta);
        step.v.resize(M - m);
        step.v(0) = 1;
        step.v.tail(M - m - 1) = tail.tail(M - m - 1);
        w(m) = beta;
        w.tail(M - m - 1).setZero();
        if (step.tau != 0) {  // τ = 0: w had nothing below row m, the reflector is I
            apply(step, qb_);
            steps_.push_back(std::move(step));
        }
    }
    T_.col(m).head(m + 1) = w.head(m + 1);
    F_.push_back(column);
}

void FaceQr::leave(std::size_t position) {
    const Eigen::Index m = static_cast<Eigen::Index>(F_.size()), a = static_cast<Eigen::Index>(position);
    JSMF_REQUIRE(a < m, "FaceQr: no such position");
    for (Eigen::Index k = a; k + 1 < m; ++k) T_.col(k).head(k + 2) = T_.col(k + 1).head(k + 2);
    T_.col(m - 1).setZero();
    F_.erase(F_.begin() + static_cast<std::ptrdiff_t>(position));
    for (Eigen::Index k = a; k + 1 < m; ++k) {
        const double x = T_(k, k), y = T_(k + 1, k), r = std::hypot(x, y);
        if (y == 0 || !(r > 0)) continue;
        Step step;
        step.row = k;
        step.c = x / r;
        step.s = y / r;
        for (Eigen::Index j = k; j + 1 < m; ++j) rotate(step, T_(k, j), T_(k + 1, j));
        T_(k + 1, k) = 0;
        apply(step, qb_);
        steps_.push_back(std::move(step));
    }
}

Eigen::VectorXd FaceQr::solve() const {
    const Eigen::Index m = static_cast<Eigen::Index>(F_.size());
    const auto T = T_.topLeftCorner(m, m).triangularView<Eigen::Upper>();
    const Eigen::VectorXd b2 = qb_.head(m);
    const Eigen::VectorXd c = T.transpose().solve(Eigen::VectorXd::Ones(m));
    const double l = (1.0 - c.dot(b2)) / c.squaredNorm();
    return T.solve(b2 + l * c);
}

void FaceQr::rotate(const Step& step, double& upper, double& lower) {
    const double u = upper, l = lower;
    upper = step.c * u + step.s * l;
    lower = step.c * l - step.s * u;
}

void FaceQr::apply(const Step& step, Eigen::VectorXd& w) {
    if (step.v.size() == 0) {
        rotate(step, w(step.row), w(step.row + 1));
        return;
    }
    auto segment = w.segment(step.row, step.v.size());
    segment -= (step.tau * step.v.dot(segment)) * step.v;
}

}  // namespace detail

namespace {

int active_set_limit(const SclsOptions& options, Eigen::Index K) {
    // solveSCLS_activeSet.m (Bindel & Dong) caps the inner iterations at 30n.
    return options.active_set_max_iterations > 0 ? options.active_set_max_iterations : 30 * static_cast<int>(K);
}

std::vector<Eigen::Index> members(const std::vector<bool>& in_set) {
    std::vector<Eigen::Index> F;
    for (std::size_t i = 0; i < in_set.size(); ++i)
        if (in_set[i]) F.push_back(static_cast<Eigen::Index>(i));
    return F;
}

/// ‖R‖₁ and ‖R‖_∞, for the multipliers' rounding level (once per solve: R does not change).
struct Norms {
    double one = 0, inf = 0;
    explicit Norms(const Eigen::MatrixXd& R)
        : one(R.cwiseAbs().colwise().sum().maxCoeff()), inf(R.cwiseAbs().rowwise().sum().maxCoeff()) {}
};

/// The coordinate (not in F, not excluded) with the most negative multiplier
/// λ_i = ∇_i − ∇ᵀy, ∇ = 2Rᵀ(Ry − b), if one is below −tol; else −1. y is zero outside
/// `free_columns` (the solver's invariant: a coordinate that leaves F is set to 0), so Ry
/// is summed over them alone.
Eigen::Index entering_coordinate(const Eigen::MatrixXd& R, const Norms& norms, const Eigen::VectorXd& b,
                                 const Eigen::VectorXd& y, const std::vector<Eigen::Index>& free_columns,
                                 const std::vector<bool>& in_F, const std::vector<bool>& excluded) {
    Eigen::VectorXd residual = -b;  // R y − b over y's support, the free columns
    for (const Eigen::Index k : free_columns) residual += y(k) * R.col(k);
    const Eigen::VectorXd gradient = 2.0 * (R.transpose() * residual);
    const double mu = gradient.dot(y);
    // Rounding level of the multipliers, from solveSCLS_activeSet.m (Bindel & Dong):
    // 2n·eps·‖R‖₁(2‖R‖_∞‖y‖_∞ + ‖b‖_∞), doubled for our 2× gradient.
    const double tol = 2.0 * 2.0 * static_cast<double>(y.size()) * std::numeric_limits<double>::epsilon() * norms.one *
                       (2.0 * norms.inf * y.cwiseAbs().maxCoeff() + b.cwiseAbs().maxCoeff());
    Eigen::Index best = -1;
    double most_negative = -tol;
    for (Eigen::Index i = 0; i < y.size(); ++i) {
        if (in_F[static_cast<std::size_t>(i)] || excluded[static_cast<std::size_t>(i)]) continue;
        if (gradient(i) - mu < most_negative) {
            most_negative = gradient(i) - mu;
            best = i;
        }
    }
    return best;
}

}  // namespace

SclsSolution solve_active_set_qr(const Eigen::MatrixXd& R, const Eigen::VectorXd& b, const SclsOptions& options) {
    const Eigen::Index K = R.cols();
    JSMF_REQUIRE(K >= 1 && R.rows() >= K && b.size() == R.rows(),
                 "solve_active_set_qr: R must be M x K with M >= K >= 1, and b of length M");
    const int limit = active_set_limit(options, K);
    SclsSolution s;
    // Start at the best vertex: e_j minimizing ‖R e_j − b‖² = ‖r_j‖² − 2 r_jᵀb (+ const).
    Eigen::Index start = 0;
    (R.colwise().squaredNorm().transpose() - 2.0 * R.transpose() * b).minCoeff(&start);
    s.y = Eigen::VectorXd::Unit(K, start);
    std::vector<bool> in_F(static_cast<std::size_t>(K), false), excluded(in_F);
    in_F[static_cast<std::size_t>(start)] = true;
    detail::FaceQr face(R, b);
    face.join(start);
    bool failed = false;  // the cap was reached or a face was singular
    const Norms norms(R);
    // Invariant at the top: y minimizes ‖Ry − b‖² on its face F with y_F > 0.
    while (!failed) {
        const Eigen::Index entering = entering_coordinate(R, norms, b, s.y, face.columns(), in_F, excluded);
        if (entering < 0) {
            s.converged = true;  // every multiplier is >= −(rounding level): KKT holds
            break;
        }
        in_F[static_cast<std::size_t>(entering)] = true;
        face.join(entering);
        for (bool first = true;; first = false) {
            if (s.iterations >= limit) {
                failed = true;
                break;
            }
            ++s.iterations;
            const std::vector<Eigen::Index>& F = face.columns();
            const Eigen::VectorXd z = face.solve();
            if (!z.allFinite()) {
                failed = true;
                break;
            }
            if ((z.array() > 0).all()) {  // interior of the face: the new iterate
                s.y.setZero();
                for (std::size_t a = 0; a < F.size(); ++a) s.y(F[a]) = z(static_cast<Eigen::Index>(a));
                std::fill(excluded.begin(), excluded.end(), false);
                break;
            }
            const auto entering_at = static_cast<std::size_t>(std::find(F.begin(), F.end(), entering) - F.begin());
            if (first && !(z(static_cast<Eigen::Index>(entering_at)) > 0)) {
                // Exactly, a negative multiplier makes the entering coordinate positive; if it
                // is not, the multiplier was rounding: leave it out (Lawson & Hanson's guard).
                in_F[static_cast<std::size_t>(entering)] = false;
                excluded[static_cast<std::size_t>(entering)] = true;
                face.leave(entering_at);
                break;
            }
            // Move toward z until the first coordinate reaches 0; drop it (and any other at 0).
            // The blocking one is set to 0, not left to y + α(z − y): rounding can leave it a
            // hair above 0, and the same face would be solved again until the cap.
            double alpha = 1;
            std::size_t blocking = F.size();
            for (std::size_t a = 0; a < F.size(); ++a) {
                const double y_i = s.y(F[a]), z_i = z(static_cast<Eigen::Index>(a));
                if (z_i > 0) continue;
                if (const double reach = y_i / (y_i - z_i); blocking == F.size() || reach < alpha) {
                    alpha = std::min(1.0, reach);
                    blocking = a;
                }
            }
            std::vector<std::size_t> leaving;
            for (std::size_t a = 0; a < F.size(); ++a) {
                double& y_i = s.y(F[a]);
                y_i += alpha * (z(static_cast<Eigen::Index>(a)) - y_i);
                if (a == blocking || !(y_i > 0)) {
                    y_i = 0;
                    in_F[static_cast<std::size_t>(F[a])] = false;
                    leaving.push_back(a);
                }
            }
            for (auto it = leaving.rbegin(); it != leaving.rend(); ++it) face.leave(*it);  // later positions first
        }
    }
    s.y = s.y.cwiseMax(0.0);
    s.y /= s.y.sum();
    const Eigen::VectorXd gradient = 2.0 * (R.transpose() * (R * s.y - b));
    s.gap = gradient.dot(s.y) - gradient.minCoeff();
    return s;
}

SclsSolution solve_active_set_gram(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const SclsOptions& options) {
    const Eigen::Index K = f.size();
    const int limit = active_set_limit(options, K);
    SclsSolution s;
    // Start at the best vertex: e_j minimizing ½G_jj − f_j.
    Eigen::Index start = 0;
    (0.5 * G.diagonal() - f).minCoeff(&start);
    s.y = Eigen::VectorXd::Zero(K);
    s.y(start) = 1;
    std::vector<bool> free_set(static_cast<std::size_t>(K), false);
    free_set[static_cast<std::size_t>(start)] = true;
    const double scale = std::max({G.cwiseAbs().maxCoeff(), f.cwiseAbs().maxCoeff(), 1e-300});
    const double tiny = 1e-13 * scale;
    for (s.iterations = 0; s.iterations < limit; ++s.iterations) {
        const std::vector<Eigen::Index> F = members(free_set);
        const Eigen::Index m = static_cast<Eigen::Index>(F.size());
        // KKT of min ½y_FᵀG_FF y_F − f_Fᵀy_F s.t. 1ᵀy_F = 1:  [G_FF 1; 1ᵀ 0][y; μ] = [f_F; 1].
        Eigen::MatrixXd kkt = Eigen::MatrixXd::Zero(m + 1, m + 1);
        Eigen::VectorXd rhs(m + 1);
        for (Eigen::Index a = 0; a < m; ++a) {
            for (Eigen::Index c = 0; c < m; ++c) kkt(a, c) = G(F[static_cast<std::size_t>(a)], F[static_cast<std::size_t>(c)]);
            kkt(a, m) = kkt(m, a) = 1;
            rhs(a) = f(F[static_cast<std::size_t>(a)]);
        }
        rhs(m) = 1;
        const Eigen::VectorXd solution = kkt.completeOrthogonalDecomposition().solve(rhs);
        Eigen::VectorXd d = Eigen::VectorXd::Zero(K);
        for (Eigen::Index a = 0; a < m; ++a) d(F[static_cast<std::size_t>(a)]) = solution(a) - s.y(F[static_cast<std::size_t>(a)]);
        if (d.cwiseAbs().maxCoeff() <= 1e-15) {
            // Stationary on the free set: check the multipliers of the zero bounds,
            // λ_i = ∇_i + μ with μ = −∇ on the free set (Lagrangian ½yᵀGy − fᵀy + μ(1ᵀy − 1) − λᵀy).
            const Eigen::VectorXd gradient = G * s.y - f;
            double mu = 0;
            for (const auto i : F) mu -= gradient(i);
            mu /= static_cast<double>(m);
            Eigen::Index worst = -1;
            double most_negative = -tiny;
            for (Eigen::Index i = 0; i < K; ++i) {
                if (free_set[static_cast<std::size_t>(i)]) continue;
                const double lambda_i = gradient(i) + mu;
                if (lambda_i < most_negative) {
                    most_negative = lambda_i;
                    worst = i;
                }
            }
            if (worst < 0) {
                s.converged = true;  // KKT holds: optimal
                break;
            }
            free_set[static_cast<std::size_t>(worst)] = true;
            continue;
        }
        // Step toward the subproblem's solution until a free coordinate hits 0.
        double alpha = 1;
        Eigen::Index blocking = -1;
        for (const auto i : F) {
            if (d(i) < 0) {
                const double limit_i = -s.y(i) / d(i);
                if (limit_i < alpha) {
                    alpha = limit_i;
                    blocking = i;
                }
            }
        }
        s.y += alpha * d;
        if (blocking >= 0) {
            s.y(blocking) = 0;
            free_set[static_cast<std::size_t>(blocking)] = false;
        }
    }
    s.y = s.y.cwiseMax(0.0);
    s.y /= s.y.sum();
    s.gap = duality_gap(G, f, s.y);
    return s;
}

namespace {

/// The minimizer of ½zᵀGz − fᵀz with z_i = 0 off P: G_PP z_P = f_P by LDLT (G_PP is
/// symmetric positive definite). Non-finite if G_PP is singular to rounding.
Eigen::VectorXd solve_on_passive_set(const Eigen::MatrixXd& G, const Eigen::VectorXd& f,
                                     const std::vector<Eigen::Index>& P) {
    const auto m = static_cast<Eigen::Index>(P.size());
    Eigen::MatrixXd G_PP(m, m);
    Eigen::VectorXd f_P(m);
    for (Eigen::Index a = 0; a < m; ++a) {
        for (Eigen::Index c = 0; c < m; ++c) G_PP(a, c) = G(P[static_cast<std::size_t>(a)], P[static_cast<std::size_t>(c)]);
        f_P(a) = f(P[static_cast<std::size_t>(a)]);
    }
    const Eigen::VectorXd z_P = G_PP.ldlt().solve(f_P);
    Eigen::VectorXd z = Eigen::VectorXd::Zero(f.size());
    for (Eigen::Index a = 0; a < m; ++a) z(P[static_cast<std::size_t>(a)]) = z_P(a);
    return z;
}

/// The rounding level of w = f − Gh: 10·K·eps·(K·max|G|·‖h‖∞ + ‖f‖∞).
double nnls_rounding_level(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const Eigen::VectorXd& h) {
    const auto K = static_cast<double>(f.size());
    return 10.0 * K * std::numeric_limits<double>::epsilon() *
           (K * G.cwiseAbs().maxCoeff() * h.cwiseAbs().maxCoeff() + f.cwiseAbs().maxCoeff());
}

}  // namespace

SclsSolution solve_nnls_gram(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const SclsOptions& options) {
    const Eigen::Index K = f.size();
    JSMF_REQUIRE(G.rows() == K && G.cols() == K, "solve_nnls_gram: G must be K x K for f of length K");
    SclsSolution s;
    s.y = Eigen::VectorXd::Zero(K);
    if (K == 0) {
        s.converged = true;
        return s;
    }
    const int limit = active_set_limit(options, K);
    std::vector<bool> passive(static_cast<std::size_t>(K), false), excluded(passive);
    bool failed = false;  // the cap was reached or a passive set was singular
    // Invariant at the top: y minimizes the objective on its passive set P with y_P > 0.
    while (!failed) {
        // w = −∇ = f − Gy: the multiplier of y_j >= 0 is −w_j, so the most negative one is max w.
        const Eigen::VectorXd w = f - G * s.y;
        Eigen::Index entering = -1;
        double largest = nnls_rounding_level(G, f, s.y);
        for (Eigen::Index j = 0; j < K; ++j) {
            if (passive[static_cast<std::size_t>(j)] || excluded[static_cast<std::size_t>(j)]) continue;
            if (w(j) > largest) {
                largest = w(j);
                entering = j;
            }
        }
        if (entering < 0) {
            s.converged = true;  // every multiplier is >= −(rounding level): KKT holds
            break;
        }
        passive[static_cast<std::size_t>(entering)] = true;
        for (bool first = true;; first = false) {
            if (s.iterations >= limit) {
                failed = true;
                break;
            }
            ++s.iterations;
            const std::vector<Eigen::Index> P = members(passive);
            const Eigen::VectorXd z = solve_on_passive_set(G, f, P);
            if (!z.allFinite()) {
                failed = true;
                break;
            }
            if (std::all_of(P.begin(), P.end(), [&](Eigen::Index i) { return z(i) > 0; })) {
                s.y = z;  // interior of the passive face: the new iterate
                std::fill(excluded.begin(), excluded.end(), false);
                break;
            }
            if (first && !(z(entering) > 0)) {
                // Exactly, w_entering > 0 makes the entering coordinate positive; if it is not,
                // w_entering was rounding: leave it out (Lawson & Hanson's guard).
                passive[static_cast<std::size_t>(entering)] = false;
                excluded[static_cast<std::size_t>(entering)] = true;
                break;
            }
            // Move toward z until the first coordinate reaches 0; drop it (and any other at 0).
            double alpha = 1;
            Eigen::Index blocking = -1;
            for (const auto i : P) {
                if (z(i) <= 0) {
                    const double limit_i = s.y(i) / (s.y(i) - z(i));
                    if (blocking < 0 || limit_i < alpha) {
                        alpha = limit_i;
                        blocking = i;
                    }
                }
            }
            s.y += alpha * (z - s.y);
            s.y(blocking) = 0;
            for (const auto i : P) {
                if (i == blocking || s.y(i) <= 0) {
                    s.y(i) = 0;
                    passive[static_cast<std::size_t>(i)] = false;
                }
            }
        }
    }
    s.y = s.y.cwiseMax(0.0);
    const Eigen::VectorXd gradient = 2.0 * (G * s.y - f);
    s.gap = std::max(std::max(-gradient.minCoeff(), 0.0), std::abs(gradient.dot(s.y)));
    return s;
}

SclsSolution solve_capped_simplex_gram(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const SclsOptions& options) {
    SclsSolution s = solve_nnls_gram(G, f, options);
    if (s.y.sum() > 1) {  // the cap is active at the optimum (see the header)
        const SclsSolution on_simplex = solve_active_set_gram(G, f, options);
        s.y = on_simplex.y;
        s.iterations += on_simplex.iterations;
        s.converged = s.converged && on_simplex.converged;
    }
    if (f.size() > 0) {
        const Eigen::VectorXd gradient = 2.0 * (G * s.y - f);
        s.gap = gradient.dot(s.y) - std::min(0.0, gradient.minCoeff());
    }
    return s;
}

}  // namespace jsmf::solvers
