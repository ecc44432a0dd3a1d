// SPDX-License-Identifier: MIT
// AnchorFree's result by rows: C* and E* of a square root held by rows, and the model's
// B, B̆, A and representative words from them.
#include <Eigen/Cholesky>
#include <Eigen/LU>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::anchorfree {

AnchorFreeResult finish_square_root(const mpi::Comm& comm, const Eigen::MatrixXd& B_local, const Eigen::MatrixXd& M) {
    const Index F = B_local.cols();
    mpi::require_same_on_all_ranks(comm, {F, M.rows(), M.cols()}, "anchorfree finish_square_root");
    AnchorFreeResult out;
    out.M = M;
    mpi::adopt_root_copy(comm, out.M.data(), static_cast<std::size_t>(out.M.size()));
    out.C = B_local * out.M;
    out.min_C = mpi::allreduce_min(comm, std::min(0.0, out.C.size() > 0 ? out.C.minCoeff() : 0.0));
    Eigen::MatrixXd G = B_local.transpose() * B_local;  // B̃ᵀB̃
    distmat::sum_on_all_ranks(comm, G.data(), static_cast<std::size_t>(G.size()));
    const Eigen::MatrixXd GM = G * out.M;
    const Eigen::MatrixXd gram = out.M.transpose() * GM;    // C*ᵀC*
    const Eigen::MatrixXd middle = GM.transpose() * GM;     // C*ᵀ P C* = MᵀG²M
    const Eigen::LDLT<Eigen::MatrixXd> ldlt(gram);
    const Eigen::MatrixXd left = ldlt.solve(middle);
    const Eigen::MatrixXd E = ldlt.solve(left.transpose());
    out.E = (E + E.transpose()) / 2;
    mpi::adopt_root_copy(comm, out.E.data(), static_cast<std::size_t>(out.E.size()));
    const bool finite = mpi::allreduce_min(comm, static_cast<int>(out.C.allFinite())) == 1;
    mpi::run_local_phase(comm, "anchorfree", [&] {
        const Eigen::VectorXd d = ldlt.vectorD().cwiseAbs();
        if (ldlt.info() != Eigen::Success || !(d.minCoeff() > 1e-14 * d.maxCoeff()) || !out.E.allFinite() || !finite)
            throw InputError(render_options("anchorfree: the topics C* = BM are linearly dependent (C*'C* is "
                                            "singular), so E* does not exist; the factorization failed (fewer "
                                            "topics, or {method} anchorfree-lp)"));
    });
    return out;
}

AnchorFreeTopics topics_of(const mpi::Comm& comm, const Eigen::MatrixXd& C_local, Index first_row,
                           const Eigen::MatrixXd& E, const std::vector<bool>& occurs) {
    const Index K = C_local.cols(), n = C_local.rows();
    mpi::require_same_on_all_ranks(comm, {K, E.rows(), E.cols()}, "anchorfree topics_of");
    mpi::run_local_phase(comm, "anchorfree", [&] {
        if (occurs.size() != static_cast<std::size_t>(n)) throw InternalError("anchorfree topics_of: occurs has the wrong size");
    });
    AnchorFreeTopics out;
    // B: C* with its negative residue (at the solver's tolerance) cut, columns summed to 1.
    out.B = C_local.cwiseMax(0.0);
    Eigen::VectorXd sums(K);
    for (Index k = 0; k < K; ++k) sums(k) = out.B.col(k).sum();
    distmat::sum_on_all_ranks(comm, sums.data(), static_cast<std::size_t>(K));
    for (Index k = 0; k < K; ++k)
        if (sums(k) > 0) out.B.col(k) /= sums(k);
    // A: E* as a joint distribution when it is one (nonnegative to rounding).
    const double scale = E.cwiseAbs().maxCoeff();
    out.a_is_distribution = E.minCoeff() >= -1e-9 * scale && E.sum() > 0;
    out.A = out.a_is_distribution ? Eigen::MatrixXd(E.cwiseMax(0.0) / E.cwiseMax(0.0).sum()) : E;
    // B̆ by Bayes' rule with the topic marginals.
    const Eigen::VectorXd marginal = out.A.rowwise().sum().cwiseMax(0.0);
    out.B_breve = Eigen::MatrixXd::Zero(K, n);
    std::int64_t zero_rows = 0;
    for (Index i = 0; i < n; ++i) {
        const Eigen::VectorXd joint = out.B.row(i).transpose().cwiseProduct(marginal);
        const double total = joint.sum();
        if (total > 0) out.B_breve.col(i) = joint / total;
        else ++zero_rows;
    }
    out.zero_rows = mpi::allreduce_sum(comm, zero_rows);
    // Each topic's representative word: greedy in topic order, a word to one topic only.
    std::vector<bool> taken(static_cast<std::size_t>(n), false);
    out.representative_weight.resize(K);
    constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
    for (Index k = 0; k < K; ++k) {
        Index best = -1;
        for (Index i = 0; i < n; ++i)
            if (!taken[static_cast<std::size_t>(i)] && occurs[static_cast<std::size_t>(i)] &&
                (best < 0 || out.B_breve(k, i) > out.B_breve(k, best)))
                best = i;
        const double value =
            mpi::allreduce_max(comm, best >= 0 ? out.B_breve(k, best) : -std::numeric_limits<double>::infinity());
        std::int64_t id = mpi::allreduce_min(comm, best >= 0 && out.B_breve(k, best) == value ? first_row + best : none);
        double weight = value;
        // Fewer occurring words than topics: any id not yet taken (never happens with K < N words used).
        if (id == none) {
            weight = 0;
            std::int64_t fallback = none;
            for (Index i = 0; i < n && fallback == none; ++i)
                if (!taken[static_cast<std::size_t>(i)]) fallback = first_row + i;
            id = mpi::allreduce_min(comm, fallback);
        }
        if (id >= first_row && id < first_row + n) taken[static_cast<std::size_t>(id - first_row)] = true;
        out.representatives.push_back(id);
        out.representative_weight(k) = weight;
    }
    return out;
}

}  // namespace jsmf::anchorfree
