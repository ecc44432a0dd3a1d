// SPDX-License-Identifier: MIT
// Simplex projection and the three simplex-constrained least-squares solvers.
#include <gtest/gtest.h>

#include <random>

#include "jsmf/recover/scls.hpp"

namespace jsmf::recover {
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
        const SclsSolution s = solve_active_set(p.G, p.f);
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

TEST(ActiveSet, AnAnchorRowGivesItsUnitVector) {
    std::mt19937_64 engine(3);
    const Problem p = random_problem(engine, 5);
    for (int k = 0; k < 5; ++k) {
        const Eigen::VectorXd f = p.U.transpose() * p.U.col(k);  // v = the anchor's own row
        EXPECT_LE((solve_active_set(p.G, f).y - Eigen::VectorXd::Unit(5, k)).cwiseAbs().maxCoeff(), 1e-10);
    }
}

TEST(IterativeSolvers, AgreeWithTheExactSolutionWithinTheirTolerance) {
    std::mt19937_64 engine(4);
    SclsOptions options;
    options.max_iterations = 5000;  // enough to converge on these small problems
    int expgrad_converged = 0, admm_converged = 0;
    for (int trial = 0; trial < 60; ++trial) {
        const int K = 3 + trial % 6;
        const Problem p = random_problem(engine, K);
        const SclsSolution exact = solve_active_set(p.G, p.f);
        const double best = objective(p.G, p.f, exact.y);
        const SclsSolution expgrad = solve_expgrad(p.G, p.f, options);
        const SclsSolution admm = AdmmDrSolver(p.G, options).solve(p.f);
        for (const auto* s : {&expgrad, &admm}) {
            EXPECT_NEAR(s->y.sum(), 1.0, 1e-12);
            EXPECT_GE(s->y.minCoeff(), 0.0);
            // The gap bounds the suboptimality: q(y) − q(y*) <= gap <= tolerance.
            if (s->converged) {
                EXPECT_LE(objective(p.G, p.f, s->y) - best, options.tolerance) << "trial " << trial;
                EXPECT_GE(objective(p.G, p.f, s->y) - best, -1e-14) << "the exact solver was beaten";
            }
        }
        expgrad_converged += expgrad.converged;
        admm_converged += admm.converged;
    }
    EXPECT_EQ(expgrad_converged, 60);
    EXPECT_EQ(admm_converged, 60);
}

}  // namespace
}  // namespace jsmf::recover
