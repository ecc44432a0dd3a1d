// SPDX-License-Identifier: MIT
// Rectification by alternating projection (AP): practical-jsmf Alg. 1, NIPS'15 section 3.
#pragma once

#include <Eigen/Core>

#include <functional>
#include <limits>
#include <vector>

#include "jsmf/dist/dist_matrix.hpp"
#include "jsmf/dist/eig.hpp"

namespace jsmf::rectify {

struct ApOptions {
    int num_topics = 0;          ///< K; required, 2 <= K < N
    int max_iterations = 150;    ///< the papers' experiments run 150
    /// Stop early when ‖C_t − C_{t−1}‖_F / ‖C_t‖_F <= tolerance; 0 runs every iteration,
    /// as the authors' code does.
    double tolerance = 0;
    /// The truncated eigensolver's settings (num_eigenpairs is set to K).
    dist::EigOptions eig;
};

/// One AP iteration, as written to /rectification.
struct ApIteration {
    double change = 0;           ///< ‖C_t − C_{t−1}‖_F / ‖C_t‖_F
    double clipped_mass = 0;     ///< Σ max(−C_NOR, 0): mass removed by the NN projection
    double sum = 0;              ///< ΣC after the NN projection (before the final normalization)
    int eig_iterations = 0;
    int eig_products = 0;
    double eig_residual = 0;     ///< max_k ‖C u_k − θ_k u_k‖ / |θ_1|
    bool eig_converged = true;   ///< the eigensolver met its tolerance
    double seconds = 0;
};

/// State that lets a run continue where it stopped (with C itself).
struct ApState {
    int iterations_done = 0;
    Eigen::MatrixXd vectors;     ///< the last U (N × K), the next eigensolve's warm start
    double lower_bound = std::numeric_limits<double>::quiet_NaN();  ///< last λ_min estimate
    std::vector<ApIteration> trace;
};

struct ApResult {
    ApState state;
    bool converged = false;      ///< the tolerance was met (always false when it is 0)
};

/// Called on every rank after each iteration (the app prints from rank 0), and may ask
/// for a checkpoint. Must not call collectives unless every rank does the same.
using ApProgress = std::function<void(const ApState& state, const dist::DistMatrix& C)>;

/// Alternating projection, in place on C (practical-jsmf Alg. 1):
///   repeat { (U, Λ_K) = K largest algebraic eigenpairs of C; Λ₊ = max(Λ_K, 0);
///            C ← U Λ₊ Uᵀ; C ← C + (1 − ΣC)/N²; C ← max(C, 0) }   then C ← C/ΣC.
/// Collective on C.grid(). U Λ₊ Uᵀ is formed panel by panel as a local DGEMM into C's
/// block-cyclic storage, fused with the NOR shift (ΣU Λ₊ Uᵀ = Σ_k λ₊_k (1ᵀu_k)², from U
/// alone), the NN clamp and the trace's statistics: no N×N temporary besides C.
/// `resume` continues a run from its state (C must be the matching checkpointed C).
/// Per-rank memory: local(C) + the eigensolver's ~5·N·p doubles + local_rows·256 doubles.
ApResult alternating_projection(dist::DistMatrix& C, const ApOptions& options, const ApProgress& progress = {},
                                const ApState* resume = nullptr);

}  // namespace jsmf::rectify
