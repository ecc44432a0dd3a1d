// SPDX-License-Identifier: MIT
// FastAnchorWords: random projection, greedy farthest points, cleanup.
#include "jsmf/anchors/fast_anchor.hpp"

#include <Eigen/QR>

#include <cmath>
#include <random>

#include "jsmf/distmat/eig.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::anchors {
namespace {

}  // namespace

Eigen::MatrixXd random_projection(Index N, int d, Seed seed) {
    std::mt19937_64 engine(seed);
    const double scale = std::sqrt(3.0 / d);
    Eigen::MatrixXd R(N, d);
    for (Index j = 0; j < d; ++j) {
        for (Index i = 0; i < N; ++i) {
            const auto draw = engine() % 6;
            R(i, j) = draw == 0 ? scale : draw == 1 ? -scale : 0.0;
        }
    }
    return R;
}

namespace {

/// The candidate with the largest squared row norm of `residual`, or -1.
Index farthest(const Eigen::MatrixXd& residual, const std::vector<bool>& candidate, double& squared_distance) {
    Index best = -1;
    squared_distance = -1;
    for (Index i = 0; i < residual.rows(); ++i) {
        if (!candidate[static_cast<std::size_t>(i)]) continue;
        const double d2 = residual.row(i).squaredNorm();
        if (d2 > squared_distance) {
            squared_distance = d2;
            best = i;
        }
    }
    return best;
}

/// Y's rows relative to `base`, with their components in span(basis) removed.
Eigen::MatrixXd residual_from_affine_span(const Eigen::MatrixXd& Y, const Eigen::RowVectorXd& base,
                                          const Eigen::MatrixXd& basis) {
    Eigen::MatrixXd residual = Y.rowwise() - base;
    if (basis.cols() > 0) residual -= (residual * basis) * basis.transpose();
    return residual;
}

/// An orthonormal basis of span{Y_s − Y_base : s in others, s != base}.
Eigen::MatrixXd affine_basis(const Eigen::MatrixXd& Y, const std::vector<Index>& others) {
    const Index base = others.front();
    if (others.size() == 1) return Eigen::MatrixXd(Y.cols(), 0);
    Eigen::MatrixXd directions(Y.cols(), static_cast<Index>(others.size()) - 1);
    for (std::size_t l = 1; l < others.size(); ++l)
        directions.col(static_cast<Index>(l) - 1) = (Y.row(others[l]) - Y.row(base)).transpose();
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(directions);
    return qr.householderQ() * Eigen::MatrixXd::Identity(Y.cols(), directions.cols());
}

/// The greedy phase and the cleanup, on the root.
void greedy_farthest_points(const Eigen::MatrixXd& Y, std::vector<bool> candidate, int K, bool cleanup,
                            AnchorResult& result) {
    double d2 = 0;
    const Index first = farthest(Y, candidate, d2);  // farthest from the origin
    result.anchors.push_back(first);
    result.diag_r(0) = std::sqrt(d2);
    candidate[static_cast<std::size_t>(first)] = false;
    Eigen::MatrixXd residual = Y.rowwise() - Y.row(first);
    for (int k = 1; k < K; ++k) {
        const Index next = farthest(residual, candidate, d2);
        result.anchors.push_back(next);
        result.diag_r(k) = std::sqrt(d2);
        candidate[static_cast<std::size_t>(next)] = false;
        if (!(d2 > 0)) continue;  // every candidate is in the span already: nothing to project
        const Eigen::VectorXd q = residual.row(next).transpose() / std::sqrt(d2);
        residual -= (residual * q) * q.transpose();
    }
    if (!cleanup) return;
    for (int k = 0; k < K; ++k) {
        std::vector<Index> others;
        for (int l = 0; l < K; ++l)
            if (l != k) others.push_back(result.anchors[static_cast<std::size_t>(l)]);
        const Eigen::MatrixXd r = residual_from_affine_span(Y, Y.row(others.front()), affine_basis(Y, others));
        candidate[static_cast<std::size_t>(result.anchors[static_cast<std::size_t>(k)])] = true;
        const Index best = farthest(r, candidate, d2);
        candidate[static_cast<std::size_t>(best)] = false;
        result.anchors[static_cast<std::size_t>(k)] = best;
        result.diag_r(k) = std::sqrt(d2);
    }
}

}  // namespace

AnchorResult find_anchors_fast(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int K,
                               const FastAnchorOptions& options, const Candidates& candidates) {
    const mpi::Comm comm = C.grid().borrow_comm();
    const Index N = C.rows();
    const int d = options.projection_dim;
    mpi::require_same_on_all_ranks(comm, {N, K, d, static_cast<std::int64_t>(options.seed), options.cleanup ? 1 : 0},
                                   "find_anchors_fast");
    AnchorResult result;
    mpi::run_local_phase(comm, "anchors", [&] {
        if (C.rows() != C.cols()) throw InputError("anchors: C is not square");
        if (row_sums.size() != N) throw InputError("anchors: the row sums do not match C");
        if (K < 2 || K >= N) throw OptionError("{topics} must satisfy 2 <= K < N = " + std::to_string(N));
        if (d < K) throw OptionError("{projection_dim} must be at least K = " + std::to_string(K));
        count_candidates(row_sums, candidates, K);
    });
    Eigen::VectorXd inverse_p(N);
    std::vector<bool> candidate(static_cast<std::size_t>(N));
    for (Index i = 0; i < N; ++i) {
        const bool occurs = row_sums(i) > 0;
        const bool allowed = candidates.empty() || candidates[static_cast<std::size_t>(i)];
        candidate[static_cast<std::size_t>(i)] = occurs && allowed;
        inverse_p(i) = occurs ? 1.0 / row_sums(i) : 0.0;
        result.zero_rows += occurs ? 0 : 1;
        result.excluded += occurs && !allowed ? 1 : 0;
    }
    // Y = C̄ R = diag(1/p) (C R): the projected rows of C̄, replicated.
    const Eigen::MatrixXd Y = inverse_p.asDiagonal() * distmat::multiply_block(C, random_projection(N, d, options.seed));
    result.diag_r.resize(K);
    std::vector<Index> anchors(static_cast<std::size_t>(K), -1);
    // The root's greedy must not leave the others waiting in the broadcast: agree first.
    mpi::check_on_root(comm, "anchors", [&] {
        greedy_farthest_points(Y, candidate, K, options.cleanup, result);
        anchors = result.anchors;
    });
    mpi::broadcast(comm, anchors.data(), anchors.size(), 0);
    mpi::broadcast(comm, result.diag_r.data(), static_cast<std::size_t>(K), 0);
    result.anchors = anchors;
    return result;
}

}  // namespace jsmf::anchors
