// SPDX-License-Identifier: MIT
// FastAnchorWords' greedy, SNPA and XRAY on points held by words (the compressed pipeline's
// rows of C̄, in K dimensions).
#include "jsmf/lowrank/point_finders.hpp"

#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "jsmf/core/error.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/solvers/scls.hpp"

namespace jsmf::lowrank {
namespace {

/// Collective. The open point with the largest `value` (ties: the lowest word id) and that
/// value; -1 when no open point has one above `floor`.
std::pair<Index, double> argmax_open(const mpi::Comm& comm, const distmat::RowPartition& rows,
                                     const Eigen::VectorXd& value, const std::vector<char>& open, double floor) {
    double best = -std::numeric_limits<double>::infinity();
    for (Index j = 0; j < value.size(); ++j)
        if (open[static_cast<std::size_t>(j)]) best = std::max(best, value(j));
    best = mpi::allreduce_max(comm, best);
    double word = std::numeric_limits<double>::infinity();  // exact as a double below 2^53
    if (best > floor)
        for (Index j = 0; j < value.size(); ++j)
            if (open[static_cast<std::size_t>(j)] && value(j) == best) {
                word = static_cast<double>(rows.begin(comm.rank()) + j);
                break;
            }
    word = mpi::allreduce_min(comm, word);
    return {std::isfinite(word) ? static_cast<Index>(word) : Index{-1}, best};
}

/// Collective. Column `word` of the points, broadcast from its owner.
Eigen::VectorXd point_of(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& points,
                         Index word) {
    Eigen::VectorXd z(points.rows());
    const int owner = rows.owner(word);
    if (comm.rank() == owner) z = points.col(word - rows.begin(owner));
    mpi::broadcast(comm, z.data(), static_cast<std::size_t>(z.size()), owner);
    return z;
}

void close(const distmat::RowPartition& rows, const mpi::Comm& comm, std::vector<char>& open, Index word, char to = 0) {
    const Index begin = rows.begin(comm.rank());
    if (word >= begin && word < rows.end(comm.rank())) open[static_cast<std::size_t>(word - begin)] = to;
}

[[noreturn]] void too_few(int found, int K) {
    throw InputError("only " + std::to_string(found) + " of K = " + std::to_string(K) +
                     " anchors found: the other candidate words lie in the span (or hull) of those chosen, or none "
                     "is left (fewer topics or a lower --anchor-min-df)");
}

/// Squared norms of the columns of `points` relative to `base`, less their components in
/// span(basis) (orthonormal columns).
Eigen::VectorXd residual_norms(const Eigen::MatrixXd& points, const Eigen::VectorXd& base, const Eigen::MatrixXd& basis) {
    Eigen::MatrixXd r = points.colwise() - base;
    if (basis.cols() > 0) r -= basis * (basis.transpose() * r);
    return r.colwise().squaredNorm().transpose();
}

PointAnchors farthest_points(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& points,
                             std::vector<char> open, int K) {
    PointAnchors out;
    out.diag_r.resize(K);
    const Index d = points.rows();
    std::vector<Eigen::VectorXd> chosen;
    // Greedy: from the origin, then from the first point's affine span grown one direction a step.
    Eigen::MatrixXd basis(d, 0);
    Eigen::VectorXd base = Eigen::VectorXd::Zero(d);
    for (int k = 0; k < K; ++k) {
        const auto [word, d2] = argmax_open(comm, rows, residual_norms(points, base, basis), open, k == 0 ? 0.0 : -1.0);
        mpi::run_local_phase(comm, "anchors", [&, word = word] { if (word < 0) too_few(k, K); });
        out.anchors.push_back(word);
        out.diag_r(k) = std::sqrt(std::max(d2, 0.0));
        close(rows, comm, open, word);
        const Eigen::VectorXd z = point_of(comm, rows, points, word);
        chosen.push_back(z);
        if (k == 0) {
            base = z;
            continue;
        }
        Eigen::VectorXd q = z - base;
        if (basis.cols() > 0) q -= basis * (basis.transpose() * q);
        const double norm = q.norm();
        if (!(norm > 0)) continue;  // every candidate in the span already: nothing to project
        basis.conservativeResize(d, basis.cols() + 1);
        basis.col(basis.cols() - 1) = q / norm;
    }
    // Cleanup: each anchor in turn replaced by the point farthest from the others' affine span.
    for (int k = 0; k < K; ++k) {
        std::vector<Eigen::VectorXd> others;
        for (int l = 0; l < K; ++l)
            if (l != k) others.push_back(chosen[static_cast<std::size_t>(l)]);
        Eigen::MatrixXd directions(d, static_cast<Index>(others.size()) - 1);
        for (std::size_t l = 1; l < others.size(); ++l)
            directions.col(static_cast<Index>(l) - 1) = others[l] - others.front();
        const Eigen::HouseholderQR<Eigen::MatrixXd> qr(directions);
        const Eigen::MatrixXd span = qr.householderQ() * Eigen::MatrixXd::Identity(d, directions.cols());
        close(rows, comm, open, out.anchors[static_cast<std::size_t>(k)], 1);
        const auto [word, d2] = argmax_open(comm, rows, residual_norms(points, others.front(), span), open, -1.0);
        close(rows, comm, open, word);
        out.anchors[static_cast<std::size_t>(k)] = word;
        out.diag_r(k) = std::sqrt(std::max(d2, 0.0));
        chosen[static_cast<std::size_t>(k)] = point_of(comm, rows, points, word);
    }
    return out;
}

PointAnchors snpa_or_xray(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& points,
                          std::vector<char> open, int K, bool snpa) {
    PointAnchors out;
    out.diag_r.resize(K);
    const Index local = points.cols();
    const Eigen::VectorXd norms2 = points.colwise().squaredNorm().transpose();
    Eigen::MatrixXd anchor_points(points.rows(), 0);  // X_A's points, replicated
    Eigen::MatrixXd F(0, local);                      // X_AᵀX, this rank's columns
    Eigen::MatrixXd H(0, local);                      // h_i
    Eigen::VectorXd residual2 = norms2;
    for (int k = 0; k < K; ++k) {
        if (k > 0) {  // every open point's h_i and ‖r_i‖² against the k anchors
            const Eigen::MatrixXd G = anchor_points.transpose() * anchor_points;
            H.setZero(k, local);
            residual2.setZero();
            for (Index j = 0; j < local; ++j) {
                if (!open[static_cast<std::size_t>(j)]) continue;
                const Eigen::VectorXd f = F.col(j);
                const solvers::SclsSolution s =
                    snpa ? solvers::solve_capped_simplex_gram(G, f) : solvers::solve_nnls_gram(G, f);
                H.col(j) = s.y;
                residual2(j) = std::max(norms2(j) - 2.0 * s.y.dot(f) + s.y.dot(G * s.y), 0.0);
            }
        }
        auto [i, d2] = argmax_open(comm, rows, residual2, open, k == 0 ? 0.0 : -1.0);
        mpi::run_local_phase(comm, "anchors", [&, i = i] { if (i < 0) too_few(k, K); });
        Index word = i;
        Eigen::VectorXd z = point_of(comm, rows, points, i);
        if (!snpa) {  // XRAY-max: j* = argmax r_iᵀx_j (1ᵀx_j = 1 for rows of C̄)
            Eigen::VectorXd h = Eigen::VectorXd::Zero(k);
            const int owner = rows.owner(i);
            if (k > 0 && comm.rank() == owner) h = H.col(i - rows.begin(owner));
            if (k > 0) mpi::broadcast(comm, h.data(), static_cast<std::size_t>(k), owner);
            const Eigen::VectorXd r = z - anchor_points * h;
            const auto [j, score] = argmax_open(comm, rows, (r.transpose() * points).transpose(), open, -1.0);
            (void)score;
            if (j != i) {  // rounding only (the contract): j's point, and its residual from its owner
                word = j;
                z = point_of(comm, rows, points, j);
                const int j_owner = rows.owner(j);
                if (comm.rank() == j_owner) d2 = residual2(j - rows.begin(j_owner));
                mpi::broadcast(comm, d2, j_owner);
            }
        }
        out.anchors.push_back(word);
        out.diag_r(k) = std::sqrt(std::max(d2, 0.0));
        close(rows, comm, open, word);
        anchor_points.conservativeResize(Eigen::NoChange, k + 1);
        anchor_points.col(k) = z;
        F.conservativeResize(k + 1, Eigen::NoChange);
        F.row(k) = z.transpose() * points;
    }
    return out;
}

}  // namespace

PointAnchors find_anchors_on_points(const mpi::Comm& comm, const distmat::RowPartition& rows,
                                    const Eigen::MatrixXd& points, const std::vector<char>& allowed, int K,
                                    anchors::Finder finder) {
    mpi::require_same_on_all_ranks(comm, {rows.size(), points.rows(), K, static_cast<std::int64_t>(finder)},
                                   "find_anchors_on_points");
    mpi::run_local_phase(comm, "anchors", [&] {
        if (points.cols() != rows.rows(comm.rank()) || static_cast<Index>(allowed.size()) != points.cols())
            throw InternalError("find_anchors_on_points: the points do not match the partition");
        if (anchors::is_pivoted_qr(finder)) throw InternalError("find_anchors_on_points: pivoted QR is LAW's own");
    });
    switch (finder) {
        case anchors::Finder::fastanchor: return farthest_points(comm, rows, points, allowed, K);
        case anchors::Finder::snpa: return snpa_or_xray(comm, rows, points, allowed, K, true);
        default: return snpa_or_xray(comm, rows, points, allowed, K, false);
    }
}

}  // namespace jsmf::lowrank
