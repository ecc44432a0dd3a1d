// SPDX-License-Identifier: MIT
// Simplex projection, the three simplex-constrained least-squares solvers (the active set's
// updated face QR on its own too), and RecoverKL's per-word solver (against a transcription
// of Arora et al.'s loop and a grid search).
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "jsmf/core/error.hpp"
#include "jsmf/solvers/kl.hpp"
#include "jsmf/solvers/scls.hpp"
#include "support/brute_force_nnls.hpp"
#include "support/kl_transcription.hpp"

namespace jsmf::solvers {
namespace {

double objective(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, const Eigen::VectorXd& y) {
    return 0.5 * y.dot(G * y) - f.dot(y);
}

Eigen::VectorXd random_simplex_point(std::mt19937_64& engine, Eigen::Index K) {
    std::exponential_distribution<double> exponential(1.0);
    Eigen::VectorXd z(K);
    for (Eigen::Index k = 0; k < K; ++k) z(k) = exponential(engine);
    return z / z.sum();
}

// U's K columns are probability vectors over 40 "words" (like rows of C-bar at anchors),
// v another one: f = Uᵀv, G = UᵀU.
struct Problem {
    Eigen::MatrixXd U, G;
    Eigen::VectorXd v, f;
};
Problem random_problem(std::mt19937_64& engine, int K) {
    Problem p;
    p.U.resize(40, K);
    for (int k = 0; k < K; ++k) p.U.col(k) = random_simplex_point(engine, 40);
    p.v = p.U * random_simplex_point(engine, K) * 0.7 + 0.3 * random_simplex_point(engine, 40);
    p.G = p.U.transpose() * p.U;
    p.f = p.U.transpose() * p.v;
    return p;
}

TEST(SimplexProjection, KnownCasesAndTheObtuseAngleProperty) {
    EXPECT_TRUE(project_to_simplex(Eigen::Vector3d(0.2, 0.3, 0.5)).isApprox(Eigen::Vector3d(0.2, 0.3, 0.5)));
    EXPECT_TRUE(project_to_simplex(Eigen::Vector2d(2, 0)).isApprox(Eigen::Vector2d(1, 0)));
    EXPECT_TRUE(project_to_simplex(Eigen::Vector3d(0.5, 0.5, 0.5)).isApprox(Eigen::Vector3d::Constant(1.0 / 3)));
    std::mt19937_64 engine(1);
    std::normal_distribution<double> normal(0, 2);
    for (int trial = 0; trial < 200; ++trial) {
        Eigen::VectorXd x(7);
        for (int k = 0; k < 7; ++k) x(k) = normal(engine);
        const Eigen::VectorXd p = project_to_simplex(x);
        EXPECT_NEAR(p.sum(), 1.0, 1e-14);
        EXPECT_GE(p.minCoeff(), 0.0);
        // Π(x) is the projection iff (x − Π(x))ᵀ(z − Π(x)) <= 0 for every z in the simplex.
        for (int k = 0; k < 7; ++k) {
            const Eigen::VectorXd z = Eigen::VectorXd::Unit(7, k);
            EXPECT_LE((x - p).dot(z - p), 1e-12);
        }
    }
}

TEST(ActiveSet, SatisfiesTheKktConditions) {
    std::mt19937_64 engine(2);
    for (int trial = 0; trial < 100; ++trial) {
        const int K = 2 + trial % 9;
        const Problem p = random_problem(engine, K);
        const ThinQr qr = thin_qr(p.U);
        const SclsSolution s = solve_active_set_qr(qr.R, qr.Q.transpose() * p.v);
        ASSERT_TRUE(s.converged);
        ASSERT_NEAR(s.y.sum(), 1.0, 1e-12);
        ASSERT_GE(s.y.minCoeff(), 0.0);
        // KKT for min q over the simplex: the gradient is equal (= −μ) on the support and
        // no smaller off it. Checked here from scratch, not with the solver's multipliers.
        const Eigen::VectorXd g = p.G * s.y - p.f;
        const double scale = p.G.cwiseAbs().maxCoeff();
        double support_value = 0;
        int support = 0;
        for (int k = 0; k < K; ++k)
            if (s.y(k) > 1e-12) support_value += g(k), ++support;
        support_value /= support;
        for (int k = 0; k < K; ++k) {
            if (s.y(k) > 1e-12) EXPECT_NEAR(g(k), support_value, 1e-12 * scale) << "trial " << trial;
            else EXPECT_GE(g(k), support_value - 1e-12 * scale) << "trial " << trial;
        }
        // And no random simplex point does better.
        const double best = objective(p.G, p.f, s.y);
        for (int probe = 0; probe < 50; ++probe)
            EXPECT_GE(objective(p.G, p.f, random_simplex_point(engine, K)), best - 1e-15);
    }
}

// LAW's shape: R square (K = 100, from the QR of a K × K block), free sets of tens of
// columns, so each face's QR is one updated through tens of joins. Checked against KKT
// from scratch and against the Gram variant, an independent solver that is accurate here
// (U well conditioned). FaceQr's removals are checked directly below.
TEST(ActiveSet, AtLawsShapeSatisfiesKktAndAgreesWithTheGramSolver) {
    std::mt19937_64 engine(41);
    std::normal_distribution<double> normal(0, 1);
    const int K = 100;
    int largest_support = 0;
    for (int trial = 0; trial < 20; ++trial) {
        Eigen::MatrixXd U(K, K);
        const Eigen::VectorXd common = random_simplex_point(engine, K);
        for (int k = 0; k < K; ++k) U.col(k) = common + 0.3 * random_simplex_point(engine, K) + 0.05 * Eigen::VectorXd::Unit(K, k);
        Eigen::VectorXd x = Eigen::VectorXd::Zero(K);
        for (int q = 0; q < 40; ++q) x(static_cast<Eigen::Index>(engine() % K)) += std::abs(normal(engine)) - 0.2;
        Eigen::VectorXd noise(K);
        for (int i = 0; i < K; ++i) noise(i) = normal(engine);
        const Eigen::VectorXd v = U * x / std::max(1.0, std::abs(x.sum())) + 0.002 * noise;
        const ThinQr qr = thin_qr(U);
        const SclsSolution s = solve_active_set_qr(qr.R, qr.Q.transpose() * v);
        ASSERT_TRUE(s.converged) << "trial " << trial;
        ASSERT_NEAR(s.y.sum(), 1.0, 1e-12);
        ASSERT_GE(s.y.minCoeff(), 0.0);
        const Eigen::MatrixXd G = U.transpose() * U;
        const Eigen::VectorXd f = U.transpose() * v, g = G * s.y - f;
        const double scale = G.cwiseAbs().maxCoeff();
        double support_value = 0;
        int support = 0;
        for (int k = 0; k < K; ++k)
            if (s.y(k) > 0) support_value += g(k), ++support;
        support_value /= support;
        for (int k = 0; k < K; ++k) {
            if (s.y(k) > 0) EXPECT_NEAR(g(k), support_value, 1e-12 * scale) << "trial " << trial;
            else EXPECT_GE(g(k), support_value - 1e-12 * scale) << "trial " << trial;
        }
        const SclsSolution gram = solve_active_set_gram(G, f);
        ASSERT_TRUE(gram.converged);
        EXPECT_LE((s.y - gram.y).cwiseAbs().maxCoeff(), 1e-9) << "trial " << trial;
        largest_support = std::max(largest_support, support);
    }
    EXPECT_GE(largest_support, 25) << "the cases must grow faces of tens of columns";
}

// FaceQr through joins and removals from anywhere in F (the active set drops the
// coordinates a step blocks at; removals rotate the factor): after every change its solve
// equals the equality-constrained minimizer computed afresh from R's columns F (by the
// KKT system's complete orthogonal decomposition, another method).
TEST(FaceQr, JoinsAndRemovalsKeepTheFaceSolveExact) {
    std::mt19937_64 engine(43);
    std::normal_distribution<double> normal(0, 1);
    for (const int M : {12, 60}) {
        const int K = M == 12 ? 12 : 40;
        Eigen::MatrixXd R(M, K);
        for (Eigen::Index i = 0; i < R.size(); ++i) R.data()[i] = normal(engine);
        Eigen::VectorXd b(M);
        for (int i = 0; i < M; ++i) b(i) = normal(engine);
        detail::FaceQr face(R, b);
        std::vector<Eigen::Index> outside(static_cast<std::size_t>(K));
        for (int k = 0; k < K; ++k) outside[static_cast<std::size_t>(k)] = k;
        std::shuffle(outside.begin(), outside.end(), engine);
        int removals = 0;
        std::size_t widest = 0;
        for (int change = 0; change < 6 * K; ++change) {
            const auto m = face.columns().size();
            const bool join = m == 0 || (!outside.empty() && engine() % 3 != 0);
            if (join) {
                face.join(outside.back());
                outside.pop_back();
            } else {
                const std::size_t position = static_cast<std::size_t>(engine() % m);
                outside.push_back(face.columns()[position]);
                std::shuffle(outside.begin(), outside.end(), engine);
                face.leave(position);
                ++removals;
            }
            const std::vector<Eigen::Index>& F = face.columns();
            widest = std::max(widest, F.size());
            if (F.empty()) continue;
            const auto f = static_cast<Eigen::Index>(F.size());
            Eigen::MatrixXd R_F(M, f);
            for (Eigen::Index a = 0; a < f; ++a) R_F.col(a) = R.col(F[static_cast<std::size_t>(a)]);
            // [R_FᵀR_F 1; 1ᵀ 0][s; −λ] = [R_Fᵀb; 1]
            Eigen::MatrixXd kkt = Eigen::MatrixXd::Zero(f + 1, f + 1);
            kkt.topLeftCorner(f, f) = R_F.transpose() * R_F;
            kkt.col(f).head(f).setOnes();
            kkt.row(f).head(f).setOnes();
            Eigen::VectorXd rhs(f + 1);
            rhs << R_F.transpose() * b, 1.0;
            const Eigen::VectorXd expected = kkt.completeOrthogonalDecomposition().solve(rhs).head(f);
            const Eigen::VectorXd got = face.solve();
            ASSERT_LE((got - expected).cwiseAbs().maxCoeff(), 1e-9 * std::max(1.0, expected.cwiseAbs().maxCoeff()))
                << "M = " << M << ", change " << change << ", |F| = " << f;
        }
        EXPECT_GE(removals, K) << "the sequence must remove from the face";
        // Square R: the last join has one row left below the face (no reflector).
        if (M == K) {
            EXPECT_EQ(widest, static_cast<std::size_t>(K)) << "the face must fill R";
        }
    }
}

TEST(ActiveSet, AnAnchorRowGivesItsUnitVector) {
    std::mt19937_64 engine(3);
    const Problem p = random_problem(engine, 5);
    for (int k = 0; k < 5; ++k) {
        const Eigen::VectorXd f = p.U.transpose() * p.U.col(k);  // v = the anchor's own row
        EXPECT_LE((solve_active_set_gram(p.G, f).y - Eigen::VectorXd::Unit(5, k)).cwiseAbs().maxCoeff(), 1e-10);
        EXPECT_LE((solve_active_set_qr(p.U, p.U.col(k)).y - Eigen::VectorXd::Unit(5, k)).cwiseAbs().maxCoeff(), 1e-10);
    }
}

TEST(IterativeSolvers, AgreeWithTheExactSolutionWithinTheirTolerance) {
    std::mt19937_64 engine(4);
    SclsOptions options;
    options.max_iterations = 5000;  // enough to converge on these small problems
    options.admm_stop = AdmmStop::gap;  // the step rule does not bound the objective
    int expgrad_converged = 0, admm_converged = 0;
    for (int trial = 0; trial < 60; ++trial) {
        const int K = 3 + trial % 6;
        const Problem p = random_problem(engine, K);
        const SclsSolution exact = solve_active_set_qr(p.U, p.v);
        const double best = objective(p.G, p.f, exact.y);
        const SclsSolution expgrad = solve_expgrad(p.G, p.f, options);
        const SclsSolution admm = AdmmDrSolver(p.G, options).solve(p.f);
        for (const auto* s : {&expgrad, &admm}) {
            EXPECT_NEAR(s->y.sum(), 1.0, 1e-12);
            EXPECT_GE(s->y.minCoeff(), 0.0);
            // The gap of ‖Uy − v‖² = 2q(y) + const bounds 2(q(y) − q(y*)): q(y) − q(y*) <= tolerance/2.
            if (s->converged) {
                EXPECT_LE(objective(p.G, p.f, s->y) - best, options.tolerance / 2) << "trial " << trial;
                EXPECT_GE(objective(p.G, p.f, s->y) - best, -1e-14) << "the exact solver was beaten";
            }
        }
        expgrad_converged += expgrad.converged;
        admm_converged += admm.converged;
    }
    EXPECT_EQ(expgrad_converged, 60);
    EXPECT_EQ(admm_converged, 60);
}

// ---- The authors' iterations, transcribed plainly from moontae/JSMF (the reference) ----

/// projectToSimplex.m (Duchi et al.): sort descending, ρ = the last j with
/// u_j > (Σ_{i<=j} u_i − 1)/j, θ = (Σ_{i<=ρ} u_i − 1)/ρ, w = max(v − θ, 0).
Eigen::VectorXd authors_project(const Eigen::VectorXd& v) {
    std::vector<double> u(v.data(), v.data() + v.size());
    std::sort(u.rbegin(), u.rend());
    double cumulative = 0, theta = 0;
    for (std::size_t j = 0; j < u.size(); ++j) {
        cumulative += u[j];
        if (u[j] > (cumulative - 1) / static_cast<double>(j + 1)) theta = (cumulative - 1) / static_cast<double>(j + 1);
    }
    return (v.array() - theta).max(0.0).matrix();
}

struct Transcribed {
    Eigen::VectorXd y;
    int iterations = 0;  // MATLAB's t after the loop: the break's t, or T
    bool converged = false;
};

/// solveSCLS_expGrad.m with y0 = ones(K,1)/K, tolerance 1e-5, eta 50.
Transcribed authors_expgrad(const Eigen::MatrixXd& G, const Eigen::VectorXd& f, int T) {
    Transcribed r;
    r.y = Eigen::VectorXd::Ones(f.size()) / static_cast<double>(f.size());
    Eigen::VectorXd gradients = 2.0 * (G * r.y - f);
    for (int t = 1; t <= T; ++t) {
        r.iterations = t;
        r.y = (r.y.array() * (-50.0 * gradients.array()).exp()).matrix();
        r.y /= r.y.lpNorm<1>();
        gradients = 2.0 * (G * r.y - f);
        const double nu = -gradients.minCoeff();
        const Eigen::VectorXd mu = gradients.array() + nu;
        const double dualityGap = mu.dot(r.y);
        if (dualityGap < 1e-5) {
            r.converged = true;
            break;
        }
    }
    return r;
}

/// recoverB.m's admmDR case (gamma 3, Ginv = inv(gamma*UtU + eye(K)), y0 =
/// projectToSimplex(UtU \ Utv), MATLAB's backslash = Cholesky for SPD) and
/// solveSCLS_admmDR.m (tolerance 1e-5, lambda 1.9).
Transcribed authors_admm(const Eigen::MatrixXd& UtU, const Eigen::VectorXd& Utv, int T) {
    const double gamma = 3, lambda = 1.9;
    const auto K = Utv.size();
    const Eigen::MatrixXd Ginv = (gamma * UtU + Eigen::MatrixXd::Identity(K, K)).inverse();
    const Eigen::VectorXd f = gamma * Utv;
    Transcribed r;
    r.y = authors_project(UtU.llt().solve(Utv));
    Eigen::VectorXd q = r.y;
    for (int t = 1; t <= T; ++t) {
        r.iterations = t;
        const Eigen::VectorXd prev_y = r.y;
        const Eigen::VectorXd p = Ginv * ((2 * r.y - q) + f);
        q = q + lambda * (p - r.y);
        r.y = authors_project(q);
        if ((r.y - prev_y).norm() < 1e-5) {
            r.converged = true;
            break;
        }
    }
    return r;
}

/// An N × K matrix with singular values 1 … 1/condition (log-spaced), random singular
/// vectors: cond(U) = condition exactly up to rounding.
Eigen::MatrixXd conditioned_matrix(std::mt19937_64& engine, Eigen::Index N, Eigen::Index K, double condition) {
    std::normal_distribution<double> normal(0, 1);
    Eigen::MatrixXd X(N, K), Y(K, K);
    for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = normal(engine);
    for (Eigen::Index i = 0; i < Y.size(); ++i) Y.data()[i] = normal(engine);
    const Eigen::MatrixXd W = Eigen::HouseholderQR<Eigen::MatrixXd>(X).householderQ() * Eigen::MatrixXd::Identity(N, K);
    const Eigen::MatrixXd V = Eigen::HouseholderQR<Eigen::MatrixXd>(Y).householderQ();
    Eigen::VectorXd sigma(K);
    for (Eigen::Index k = 0; k < K; ++k)
        sigma(k) = std::pow(condition, -static_cast<double>(k) / static_cast<double>(K - 1));
    return W * sigma.asDiagonal() * V.transpose();
}

/// Probability-vector columns (like rows of C̄ at anchors), made nearly collinear: column k
/// is (1 − δ_k)u₀ + δ_k u_k, δ_k down to `spread`, so cond(U) grows like 1/spread.
Eigen::MatrixXd collinear_simplex_columns(std::mt19937_64& engine, Eigen::Index N, int K, double spread) {
    Eigen::MatrixXd U(N, K);
    const Eigen::VectorXd base = random_simplex_point(engine, N);
    for (int k = 0; k < K; ++k) {
        const double delta = std::pow(spread, static_cast<double>(k + 1) / K);
        U.col(k) = (1 - delta) * base + delta * random_simplex_point(engine, N);
    }
    return U;
}

TEST(ExpGrad, IteratesEqualTheAuthorsIteration) {
    std::mt19937_64 engine(21);
    SclsOptions options;  // the authors' defaults: eta 50, tolerance 1e-5
    for (int trial = 0; trial < 20; ++trial) {
        const Problem p = random_problem(engine, 3 + trial % 8);
        for (const int T : {1, 2, 3, 5, 10, 40}) {
            options.max_iterations = T;
            const SclsSolution s = solve_expgrad(p.G, p.f, options);
            const Transcribed r = authors_expgrad(p.G, p.f, T);
            // The same arithmetic up to jsmf's shift of the exponent by min ∇ (a constant factor
            // that the normalization removes): a few ulps per iteration.
            EXPECT_LE((s.y - r.y).cwiseAbs().maxCoeff(), 1e-12) << "trial " << trial << ", T = " << T;
            EXPECT_EQ(s.iterations, r.iterations) << "trial " << trial << ", T = " << T;
            EXPECT_EQ(s.converged, r.converged) << "trial " << trial << ", T = " << T;
        }
    }
}

TEST(AdmmDr, IteratesEqualTheAuthorsIteration) {
    std::mt19937_64 engine(22);
    SclsOptions options;  // the authors' defaults: step rule, lambda 1.9, gamma 3, 1e-5
    for (int trial = 0; trial < 20; ++trial) {
        const Problem p = random_problem(engine, 3 + trial % 8);
        for (const int T : {1, 2, 3, 5, 10, 40}) {
            options.max_iterations = T;
            const AdmmDrSolver solver(p.G, options);
            ASSERT_FALSE(solver.uses_pseudo_inverse());
            const SclsSolution s = solver.solve(p.f);
            const Transcribed r = authors_admm(p.G, p.f, T);
            EXPECT_LE((s.y - r.y).cwiseAbs().maxCoeff(), 1e-12) << "trial " << trial << ", T = " << T;
            EXPECT_EQ(s.iterations, r.iterations) << "trial " << trial << ", T = " << T;
            EXPECT_EQ(s.converged, r.converged) << "trial " << trial << ", T = " << T;
        }
    }
}

TEST(AdmmDr, ASingularGStartsFromThePseudoInverse) {
    // Two equal columns: G = UᵀU is singular, Cholesky fails, and y⁰ = Π_Δ(G⁺f).
    std::mt19937_64 engine(24);
    Problem p = random_problem(engine, 4);
    p.U.col(3) = p.U.col(2);
    p.G = p.U.transpose() * p.U;
    p.f = p.U.transpose() * p.v;
    SclsOptions options;
    options.admm_stop = AdmmStop::gap;
    options.max_iterations = 20000;
    const AdmmDrSolver solver(p.G, options);
    EXPECT_TRUE(solver.uses_pseudo_inverse());
    const SclsSolution s = solver.solve(p.f);
    EXPECT_TRUE(s.converged);
    EXPECT_NEAR(s.y.sum(), 1.0, 1e-12);
    EXPECT_GE(s.y.minCoeff(), 0.0);
    // The optimum value is unique even if y* is not: compare objectives with the exact solver.
    EXPECT_LE(objective(p.G, p.f, s.y) - objective(p.G, p.f, solve_active_set_gram(p.G, p.f).y), options.tolerance / 2);
}

TEST(IterativeSolvers, ConvergenceCountsEqualTheAuthors) {
    // 200 words on each of two seeded U of probability columns: well-conditioned (spread
    // 1e-1, cond(U) ≈ 28, where ADMM-DR's step rule converges for some words) and
    // ill-conditioned (spread 1e-3, cond(U) ≈ 2.4e3). Measured: expgrad 195 and 65,
    // admm 27 and 0 (this is a check that ours equal the transcription, not of the numbers).
    std::mt19937_64 engine(23);
    const int K = 8;
    const SclsOptions options;  // 500 iterations, 1e-5, the authors' rules
    int expgrad_total = 0, admm_total = 0;
    for (const double spread : {1e-1, 1e-3}) {
        const Eigen::MatrixXd U = collinear_simplex_columns(engine, 60, K, spread);
        const Eigen::MatrixXd G = U.transpose() * U;
        const AdmmDrSolver admm(G, options);
        int expgrad_ours = 0, expgrad_theirs = 0, admm_ours = 0, admm_theirs = 0;
        for (int word = 0; word < 200; ++word) {
            const Eigen::VectorXd v = 0.8 * U * random_simplex_point(engine, K) + 0.2 * random_simplex_point(engine, 60);
            const Eigen::VectorXd f = U.transpose() * v;
            const SclsSolution e = solve_expgrad(G, f, options), a = admm.solve(f);
            const Transcribed te = authors_expgrad(G, f, 500), ta = authors_admm(G, f, 500);
            expgrad_ours += e.converged, expgrad_theirs += te.converged;
            admm_ours += a.converged, admm_theirs += ta.converged;
            EXPECT_EQ(e.iterations, te.iterations) << "spread " << spread << ", word " << word;
            EXPECT_EQ(a.iterations, ta.iterations) << "spread " << spread << ", word " << word;
        }
        const Eigen::VectorXd sigma = Eigen::JacobiSVD<Eigen::MatrixXd>(U).singularValues();
        std::printf("cond(U) = %.3g; converged of 200: expgrad %d (authors %d), admm %d (authors %d)\n",
                    sigma(0) / sigma(K - 1), expgrad_ours, expgrad_theirs, admm_ours, admm_theirs);
        EXPECT_EQ(expgrad_ours, expgrad_theirs);
        EXPECT_EQ(admm_ours, admm_theirs);
        EXPECT_LT(expgrad_theirs, 200) << "some words must reach the cap, or the count says nothing";
        expgrad_total += expgrad_theirs, admm_total += admm_theirs;
    }
    EXPECT_GT(expgrad_total, 0);
    EXPECT_GT(admm_total, 0);
}

// ---- A high-precision oracle for the active set, independent of the solvers ----

__extension__ typedef __float128 Quad;  // 113-bit significand: eps ≈ 1.9e-34

/// The minimizer of ‖Uy − v‖² on the affine hull of the face F (1ᵀy_F = 1, y_i = 0 off F),
/// in quad precision: the KKT system [G_FF 1; 1ᵀ 0][y_F; μ] = [f_F; 1] by Gaussian
/// elimination with partial pivoting. G and f are formed in quad from the doubles U, v
/// (each product of two doubles is exact in quad), so even cond(G) = cond(U)² = 1e12
/// leaves about 1e12 · 1e-34 relative error: far below anything a double solver can see.
std::vector<Quad> face_minimizer_quad(const Eigen::MatrixXd& U, const Eigen::VectorXd& v, const std::vector<int>& F) {
    const std::size_t m = F.size(), n = m + 1;
    std::vector<std::vector<Quad>> A(n, std::vector<Quad>(n + 1, 0));
    for (std::size_t a = 0; a < m; ++a) {
        for (std::size_t c = 0; c < m; ++c)
            for (Eigen::Index i = 0; i < U.rows(); ++i) A[a][c] += Quad(U(i, F[a])) * Quad(U(i, F[c]));
        for (Eigen::Index i = 0; i < U.rows(); ++i) A[a][n] += Quad(U(i, F[a])) * Quad(v(i));
        A[a][m] = A[m][a] = 1;
    }
    A[m][n] = 1;
    for (std::size_t col = 0; col < n; ++col) {
        std::size_t pivot = col;
        for (std::size_t row = col + 1; row < n; ++row) {
            const Quad candidate = A[row][col] < 0 ? -A[row][col] : A[row][col];
            const Quad best = A[pivot][col] < 0 ? -A[pivot][col] : A[pivot][col];
            if (candidate > best) pivot = row;
        }
        std::swap(A[col], A[pivot]);
        for (std::size_t row = col + 1; row < n; ++row) {
            const Quad factor = A[row][col] / A[col][col];
            for (std::size_t c = col; c <= n; ++c) A[row][c] -= factor * A[col][c];
        }
    }
    std::vector<Quad> x(n);
    for (std::size_t row = n; row-- > 0;) {
        Quad sum = A[row][n];
        for (std::size_t c = row + 1; c < n; ++c) sum -= A[row][c] * x[c];
        x[row] = sum / A[row][row];
    }
    x.pop_back();  // μ
    return x;
}

/// The exact minimizer over the simplex by enumeration: it is the minimizer on the affine
/// hull of its own support, which is feasible; every feasible face minimizer lies in the
/// simplex, so the feasible one of least objective is the optimum. 2^K − 1 faces (small K).
Eigen::VectorXd simplex_minimizer_quad(const Eigen::MatrixXd& U, const Eigen::VectorXd& v) {
    const int K = static_cast<int>(U.cols());
    Quad best_objective = -1;
    Eigen::VectorXd best;
    for (int mask = 1; mask < (1 << K); ++mask) {
        std::vector<int> F;
        for (int k = 0; k < K; ++k)
            if (mask & (1 << k)) F.push_back(k);
        const std::vector<Quad> y = face_minimizer_quad(U, v, F);
        if (std::any_of(y.begin(), y.end(), [](Quad x) { return x < 0; })) continue;
        Quad objective = 0;
        for (Eigen::Index i = 0; i < U.rows(); ++i) {
            Quad r = -Quad(v(i));
            for (std::size_t a = 0; a < F.size(); ++a) r += Quad(U(i, F[a])) * y[a];
            objective += r * r;
        }
        if (best_objective < 0 || objective < best_objective) {
            best_objective = objective;
            best = Eigen::VectorXd::Zero(K);
            for (std::size_t a = 0; a < F.size(); ++a) best(F[a]) = static_cast<double>(y[a]);
        }
    }
    return best;
}

TEST(ActiveSet, IllConditionedUMatchesTheQuadPrecisionOptimum) {
    std::mt19937_64 engine(31);
    const int K = 6;
    const double condition = 1e6;
    const Eigen::MatrixXd U = conditioned_matrix(engine, 40, K, condition);
    const ThinQr qr = thin_qr(U);
    const Eigen::MatrixXd G = U.transpose() * U;
    std::normal_distribution<double> normal(0, 1);
    double qr_error = 0, gram_error = 0;
    for (int word = 0; word < 40; ++word) {
        // v = U x + a small residual, x off the simplex in some words (constraints active)
        // and on it in others; the residual keeps the problem a least-squares one.
        Eigen::VectorXd x = random_simplex_point(engine, K);
        if (word % 2) x(word % K) -= 0.3, x((word + 1) % K) += 0.3;
        Eigen::VectorXd noise(40);
        for (Eigen::Index i = 0; i < 40; ++i) noise(i) = normal(engine);
        const Eigen::VectorXd v = U * x + 1e-9 * noise;
        const Eigen::VectorXd exact = simplex_minimizer_quad(U, v);
        const SclsSolution on_qr = solve_active_set_qr(qr.R, qr.Q.transpose() * v);
        const SclsSolution on_gram = solve_active_set_gram(G, U.transpose() * v);
        EXPECT_TRUE(on_qr.converged) << "word " << word;
        qr_error = std::max(qr_error, (on_qr.y - exact).cwiseAbs().maxCoeff());
        gram_error = std::max(gram_error, (on_gram.y - exact).cwiseAbs().maxCoeff());
    }
    std::printf("cond(U) = %.0e: max |y - y*| over 40 words: QR %.2e, Gram (G = U'U) %.2e\n", condition, qr_error,
                gram_error);
    // Bound: least-squares perturbation theory gives a forward error of order
    // eps·(cond(U) + cond(U)²·‖r‖/(‖U‖‖y‖)) for a backward-stable method on U; the residual
    // here (1e-9) makes the second term ≈ 1e-13, so 100·cond(U)·eps (2.2e-8, the factor 100
    // for K, N and the active-set steps) holds the QR solver. The Gram solver works on
    // cond(G) = cond(U)² and does not meet it. Measured (seed 31, 40 words), max |y − y*|:
    //   cond(U) 1e6: QR 1.0e-12, Gram 6.4e-7;   cond(U) 1e7: QR 1.1e-11, Gram 1.5e-5;
    //   cond(U) 1e8: both 0.32 — past 1/sqrt(eps) the multipliers along the weakest direction
    //   (≈ σ_min²·|y|) are below the rounding level of any double gradient, so no double
    //   solver can choose the face; 1e6 is where the QR variant's advantage is testable.
    const double eps = std::numeric_limits<double>::epsilon();
    EXPECT_LT(qr_error, 100 * condition * eps);
    EXPECT_GT(gram_error, 100 * condition * eps) << "the case no longer separates the two variants";
}

TEST(ActiveSet, AnUnderdeterminedROrAMismatchedBIsMisuse) {
    EXPECT_THROW(solve_active_set_qr(Eigen::MatrixXd::Ones(2, 3), Eigen::VectorXd::Ones(2)), InternalError);
    EXPECT_THROW(solve_active_set_qr(Eigen::MatrixXd::Identity(3, 3), Eigen::VectorXd::Ones(2)), InternalError);
}

TEST(ActiveSet, ACappedWordIsNotConverged) {
    std::mt19937_64 engine(32);
    const Problem p = random_problem(engine, 6);
    const ThinQr qr = thin_qr(p.U);
    const Eigen::VectorXd b = qr.Q.transpose() * p.v;
    const SclsSolution free_run = solve_active_set_qr(qr.R, b);
    ASSERT_TRUE(free_run.converged);
    ASSERT_GE(free_run.iterations, 2) << "the case must need more than one solve";
    SclsOptions capped;
    capped.active_set_max_iterations = free_run.iterations - 1;
    const SclsSolution cut = solve_active_set_qr(qr.R, b, capped);
    EXPECT_FALSE(cut.converged);
    EXPECT_EQ(cut.iterations, free_run.iterations - 1);
    capped.active_set_max_iterations = free_run.iterations;
    EXPECT_TRUE(solve_active_set_qr(qr.R, b, capped).converged);
    // The Gram variant reports its cap the same way.
    const SclsSolution gram = solve_active_set_gram(p.G, p.f);
    ASSERT_TRUE(gram.converged);
    capped.active_set_max_iterations = gram.iterations - 1;
    EXPECT_FALSE(solve_active_set_gram(p.G, p.f, capped).converged);
}

// ---- Nonnegative and capped-simplex least squares (SNPA's and XRAY's projections) ----

using test::brute_force_nnls;

Eigen::MatrixXd normal_matrix(std::mt19937_64& engine, Eigen::Index rows, Eigen::Index cols) {
    std::normal_distribution<double> normal(0, 1);
    Eigen::MatrixXd M(rows, cols);
    for (Eigen::Index i = 0; i < M.size(); ++i) M.data()[i] = normal(engine);
    return M;
}

TEST(Nnls, EqualsTheBruteForceOptimumAndSatisfiesKkt) {
    std::mt19937_64 engine(41);
    int with_zeros = 0, all_positive = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const int K = 1 + trial % 6;
        const Eigen::MatrixXd U = normal_matrix(engine, 10, K);
        const Eigen::VectorXd v = normal_matrix(engine, 10, 1);
        const Eigen::MatrixXd G = U.transpose() * U;
        const Eigen::VectorXd f = U.transpose() * v;
        const SclsSolution s = solve_nnls_gram(G, f);
        ASSERT_TRUE(s.converged) << "trial " << trial;
        const Eigen::VectorXd exact = brute_force_nnls(U, v, false);
        EXPECT_LE((s.y - exact).cwiseAbs().maxCoeff(), 1e-10 * std::max(1.0, exact.cwiseAbs().maxCoeff()))
            << "trial " << trial;
        // KKT from scratch: h >= 0, ∇ = Gh − f >= 0, ∇_j = 0 where h_j > 0.
        ASSERT_GE(s.y.minCoeff(), 0.0);
        const Eigen::VectorXd g = G * s.y - f;
        const double scale = 1e-12 * (G.cwiseAbs().maxCoeff() * std::max(1.0, s.y.cwiseAbs().maxCoeff()) + f.cwiseAbs().maxCoeff());
        for (int k = 0; k < K; ++k) {
            if (s.y(k) > 0) EXPECT_LE(std::abs(g(k)), 10 * scale) << "trial " << trial;
            else EXPECT_GE(g(k), -10 * scale) << "trial " << trial;
        }
        EXPECT_LE(s.gap, 40 * scale) << "trial " << trial;
        ((s.y.array() == 0).any() ? with_zeros : all_positive) += 1;
    }
    // Both kinds of optimum occur, or the comparison says little.
    EXPECT_GT(with_zeros, 50);
    EXPECT_GT(all_positive, 20);
}

TEST(CappedSimplex, EqualsTheBruteForceOptimumAndSatisfiesKkt) {
    std::mt19937_64 engine(42);
    int cap_active = 0, cap_inactive = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const int K = 1 + trial % 6;
        // Probability columns (like rows of C̄ at anchors) and a v whose scale makes the cap
        // active in some trials and not in others; every third trial a Gaussian U and v.
        Problem p = random_problem(engine, K);
        p.v *= 0.4 + 0.3 * (trial % 5);
        if (trial % 3 == 2) p.U = normal_matrix(engine, 40, K), p.v = normal_matrix(engine, 40, 1);
        p.G = p.U.transpose() * p.U;
        p.f = p.U.transpose() * p.v;
        const SclsSolution s = solve_capped_simplex_gram(p.G, p.f);
        ASSERT_TRUE(s.converged) << "trial " << trial;
        const Eigen::VectorXd exact = brute_force_nnls(p.U, p.v, true);
        EXPECT_LE((s.y - exact).cwiseAbs().maxCoeff(), 1e-9) << "trial " << trial;
        // KKT from scratch with the cap's multiplier μ >= 0: ∇ + μ1 >= 0, = 0 where h_j > 0,
        // μ(1 − 1ᵀh) = 0.
        ASSERT_GE(s.y.minCoeff(), 0.0);
        ASSERT_LE(s.y.sum(), 1 + 1e-12);
        const Eigen::VectorXd g = p.G * s.y - p.f;
        const double tol = 1e-11 * (p.G.cwiseAbs().maxCoeff() + p.f.cwiseAbs().maxCoeff());
        double mu = 0;
        const bool on_cap = s.y.sum() > 1 - 1e-12;
        if (on_cap) {
            int support = 0;
            for (int k = 0; k < K; ++k)
                if (s.y(k) > 0) mu -= g(k), ++support;
            mu /= support;
            EXPECT_GE(mu, -tol) << "trial " << trial;
        }
        (on_cap ? cap_active : cap_inactive) += 1;
        for (int k = 0; k < K; ++k) {
            if (s.y(k) > 0) EXPECT_LE(std::abs(g(k) + mu), tol) << "trial " << trial;
            else EXPECT_GE(g(k) + mu, -tol) << "trial " << trial;
        }
        EXPECT_LE(s.gap, 10 * tol) << "trial " << trial;
    }
    EXPECT_GT(cap_active, 50);
    EXPECT_GT(cap_inactive, 50);
}

TEST(Nnls, AnAnchorGivesItsUnitVectorAndZeroGivesZero) {
    std::mt19937_64 engine(43);
    const Problem p = random_problem(engine, 5);
    for (int k = 0; k < 5; ++k) {
        const Eigen::VectorXd f = p.U.transpose() * p.U.col(k);  // v = an anchor's own row
        EXPECT_LE((solve_nnls_gram(p.G, f).y - Eigen::VectorXd::Unit(5, k)).cwiseAbs().maxCoeff(), 1e-10);
        EXPECT_LE((solve_capped_simplex_gram(p.G, f).y - Eigen::VectorXd::Unit(5, k)).cwiseAbs().maxCoeff(), 1e-10);
    }
    // v with Uᵀv <= 0 (here −U's first column, all of U nonnegative): h = 0 in both problems.
    const Eigen::VectorXd f = -p.U.transpose() * p.U.col(0);
    EXPECT_EQ(solve_nnls_gram(p.G, f).y, Eigen::VectorXd::Zero(5));
    EXPECT_EQ(solve_capped_simplex_gram(p.G, f).y, Eigen::VectorXd::Zero(5));
    EXPECT_EQ(solve_nnls_gram(Eigen::MatrixXd(0, 0), Eigen::VectorXd(0)).y.size(), 0);
}

TEST(Nnls, TheCapIsReportedAndAMismatchIsMisuse) {
    std::mt19937_64 engine(44);
    const Eigen::MatrixXd U = normal_matrix(engine, 10, 6);
    const Eigen::VectorXd v = U * Eigen::VectorXd::Constant(6, 1.0);  // optimum h = 1: six solves at least
    const Eigen::MatrixXd G = U.transpose() * U;
    const SclsSolution free_run = solve_nnls_gram(G, U.transpose() * v);
    ASSERT_TRUE(free_run.converged);
    ASSERT_GE(free_run.iterations, 6);
    SclsOptions capped;
    capped.active_set_max_iterations = free_run.iterations - 1;
    EXPECT_FALSE(solve_nnls_gram(G, U.transpose() * v, capped).converged);
    EXPECT_THROW(solve_nnls_gram(Eigen::MatrixXd::Identity(3, 3), Eigen::VectorXd::Ones(2)), InternalError);
}


// --- RecoverKL ------------------------------------------------------------------------

// Rows of C̄ as RecoverKL meets them: the anchors' rows (U's columns) and the words' rows
// are distributions over 50 words with some entries 0 (a word's support is not all N) and,
// as an unrectified C has, a few slightly negative (clipped away); the words are mixtures
// of the anchors' rows plus noise of their own.
struct KlProblem {
    Eigen::MatrixXd U, V;
};

KlProblem random_kl_problem(std::mt19937_64& engine, int K, int words) {
    const Eigen::Index N = 50;
    std::uniform_real_distribution<double> unit(0, 1);
    auto row = [&] {
        Eigen::VectorXd r = random_simplex_point(engine, N);
        for (Eigen::Index j = 0; j < N; ++j) {
            const double u = unit(engine);
            if (u < 0.15) r(j) = 0;
            else if (u < 0.2) r(j) = -1e-3 * unit(engine);
        }
        return r;
    };
    KlProblem p;
    p.U.resize(N, K);
    for (int k = 0; k < K; ++k) p.U.col(k) = row();
    p.V.resize(N, words);
    for (int w = 0; w < words; ++w) {
        p.V.col(w) = 0.8 * p.U.cwiseMax(0.0) * random_simplex_point(engine, K) + 0.2 * row();
        for (Eigen::Index j = 0; j < N; ++j)
            if (unit(engine) < 0.1) p.V(j, w) = 0;
    }
    return p;
}

TEST(RecoverKl, EqualsTheTranscriptionOfAroraEtAlsLoopWordForWord) {
    // Every trial, kept or refused, is the same decision as in their loop: the trial counts
    // agree exactly and the mixtures to rounding, though the batch solves 25 words in lockstep.
    std::mt19937_64 engine(7);
    int trials_total = 0, armijo_refusals = 0, curvature_retakes = 0, words_equal = 0, words_compared = 0;
    for (const int K : {2, 3, 5, 8, 12}) {
        const KlProblem p = random_kl_problem(engine, K, 25);
        const KlRecovery kl(p.U);
        for (const int cap : {1, 3, 20, 100000}) {
            SclsOptions options;
            options.tolerance = 1e-7;  // their default epsilon
            options.max_iterations = cap;
            const std::vector<SclsSolution> batch = kl.solve(p.V, options);
            ASSERT_EQ(batch.size(), 25u);
            for (int w = 0; w < 25; ++w) {
                // Their loop on the row as jsmf hands it over, clipped and scaled to sum 1 (a
                // rectified C̄'s rows sum to 1 already; see solvers/kl.hpp).
                const Eigen::VectorXd clipped = p.V.col(w).cwiseMax(0.0).cwiseMin(1.0);
                const test::KlTranscribed theirs = test::arora_kl_solve(clipped / clipped.sum(), p.U.transpose(), 1e-7, cap);
                const SclsSolution& ours = batch[static_cast<std::size_t>(w)];
                EXPECT_NEAR(ours.y.sum(), 1.0, 1e-12);
                EXPECT_GE(ours.y.minCoeff(), 0.0);
                ++words_compared;
                if (ours.iterations == theirs.trials && ours.converged == theirs.converged &&
                    (ours.y - theirs.alpha).cwiseAbs().maxCoeff() < 1e-10) {
                    ++words_equal;
                } else {
                    // A decision taken on a comparison at rounding level (a gap at the
                    // tolerance, an Armijo test at equality) may go the other way under
                    // another summation order; then both must still have stopped by their
                    // rule, at objectives the gap bound (1e-7 each) puts together.
                    EXPECT_EQ(ours.converged, theirs.converged) << "K " << K << " word " << w << " cap " << cap;
                    if (cap == 100000)
                        EXPECT_LT(std::abs(test::arora_kl_objective(clipped / clipped.sum(), p.U.transpose(), ours.y) -
                                           test::arora_kl_objective(clipped / clipped.sum(), p.U.transpose(), theirs.alpha)),
                                  2e-7)
                            << "K " << K << " word " << w;
                    else
                        ADD_FAILURE() << "a capped word left the transcription's path: K " << K << " word " << w << " cap " << cap;
                }
                if (cap == 100000) {
                    EXPECT_TRUE(ours.converged);
                    trials_total += ours.iterations;
                    armijo_refusals += theirs.armijo_refusals;
                    curvature_retakes += theirs.curvature_retakes;
                }
            }
        }
    }
    std::printf("RecoverKL: %d trials in all for 125 words (%d refused by Armijo, %d taken back by the curvature "
                "test); %d of %d solves the transcription's to 1e-10\n",
                trials_total, armijo_refusals, curvature_retakes, words_equal, words_compared);
    EXPECT_GE(words_equal, words_compared * 95 / 100);
    EXPECT_GT(trials_total, 125 * 3);
    // The comparison went through both branches of the line search, many times.
    EXPECT_GT(armijo_refusals, 25);
    EXPECT_GT(curvature_retakes, 25);
}

TEST(RecoverKl, ReachesTheMinimumAGridSearchFinds) {
    // K = 2 and 3: the simplex is small enough to search on a fine grid, with the objective
    // written out here (clip, mask, +1e-9, renormalize over the mask, KL).
    std::mt19937_64 engine(11);
    for (const int K : {2, 3}) {
        const KlProblem p = random_kl_problem(engine, K, 6);
        // The word's clipped, normalized v and the anchors' rows renormalized over its
        // support depend on the word only: made once per word, not per grid point (a
        // million points under the sanitizers).
        const Eigen::MatrixXd X = p.U.cwiseMax(0.0).cwiseMin(1.0).array() + 1e-9;
        struct Word {
            Eigen::VectorXd v, mass;
        };
        auto word = [&](const Eigen::VectorXd& v_in) {
            Word w{v_in.cwiseMax(0.0).cwiseMin(1.0), Eigen::VectorXd::Zero(K)};
            w.v /= w.v.sum();
            for (Eigen::Index j = 0; j < w.v.size(); ++j)
                if (w.v(j) > 0) w.mass += X.row(j).transpose();
            return w;
        };
        auto objective = [&](const Word& w, const Eigen::VectorXd& y) {
            double total = 0;
            for (Eigen::Index j = 0; j < w.v.size(); ++j) {
                if (!(w.v(j) > 0)) continue;
                double mixture = 0;  // X.row(j) · (y ./ mass), in plain loops: no temporaries
                for (Eigen::Index k = 0; k < K; ++k) mixture += X(j, k) * (y(k) / w.mass(k));
                total += w.v(j) * std::log(w.v(j) / mixture);
            }
            return total;
        };
        auto f = [&](const Eigen::VectorXd& v_in, const Eigen::VectorXd& y) { return objective(word(v_in), y); };
        const KlRecovery kl(p.U);
        SclsOptions options;
        options.tolerance = 1e-7;  // the gap: f(y) − min f <= 1e-7
        options.max_iterations = 100000;
        const std::vector<SclsSolution> solved = kl.solve(p.V, options);
        const int steps = K == 2 ? 100000 : 1000;
        for (int w = 0; w < 6; ++w) {
            double best = std::numeric_limits<double>::infinity();
            const Word this_word = word(p.V.col(w));
            Eigen::VectorXd y(K);
            for (int a = 0; a <= steps; ++a)
                for (int b = 0; b <= (K == 2 ? 0 : steps - a); ++b) {
                    y(0) = static_cast<double>(a) / steps;
                    if (K == 2) y(1) = 1 - y(0);
                    else y(1) = static_cast<double>(b) / steps, y(2) = 1 - y(0) - y(1);
                    best = std::min(best, objective(this_word, y));
                }
            const SclsSolution& s = solved[static_cast<std::size_t>(w)];
            EXPECT_TRUE(s.converged);
            EXPECT_NEAR(kl.objective(p.V.col(w), s.y), f(p.V.col(w), s.y), 1e-13);
            // No grid point is better than the solver's point by more than its gap bound,
            // and the grid (spacing 1e-5 and 1e-3) comes near it.
            EXPECT_LE(f(p.V.col(w), s.y), best + 1e-7) << "K " << K << " word " << w;
            EXPECT_GE(f(p.V.col(w), s.y), best - 1e-4) << "K " << K << " word " << w;
        }
    }
}

TEST(RecoverKl, AnExactMixtureIsFoundAndAnEmptyRowIsHarmless) {
    // v = x̃ y* (a mixture of the anchors' rows, all positive): KL is 0 at y*, and the solver
    // gets there. A row with no positive entry has f ≡ 0 and keeps the uniform start.
    std::mt19937_64 engine(5);
    const int K = 4;
    Eigen::MatrixXd U(30, K);
    for (int k = 0; k < K; ++k) U.col(k) = random_simplex_point(engine, 30);
    const Eigen::VectorXd truth = (Eigen::VectorXd(K) << 0.5, 0.3, 0.15, 0.05).finished();
    Eigen::MatrixXd V(30, 2);
    V.col(0) = U * truth;
    V.col(1) = -Eigen::VectorXd::Ones(30) * 1e-3;
    const KlRecovery kl(U);
    SclsOptions options;
    options.tolerance = 1e-12;
    options.max_iterations = 100000;
    const std::vector<SclsSolution> s = kl.solve(V, options);
    EXPECT_TRUE(s[0].converged);
    EXPECT_LT(kl.objective(V.col(0), s[0].y), 1e-12);
    EXPECT_LT((s[0].y - truth).lpNorm<1>(), 1e-4);
    EXPECT_TRUE(s[1].converged);
    EXPECT_LT((s[1].y - Eigen::VectorXd::Constant(K, 0.25)).cwiseAbs().maxCoeff(), 1e-15);
}

}  // namespace
}  // namespace jsmf::solvers
