// SPDX-License-Identifier: MIT
// SNPA and XRAY anchor finders on C̄ = diag(C1)⁻¹ C, from inner products only.
#include "jsmf/anchors/snpa_xray.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "jsmf/core/error.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/solvers/scls.hpp"

namespace jsmf::anchors {

namespace {

enum class Method { snpa, xray };

/// Local. The first point of rank r's contiguous share: [first(r), first(r + 1)) of N.
Index first_point(Index N, int rank, int ranks) {
    return N * rank / ranks;
}

/// Local. The rank whose share holds point i.
int owner_of_point(Index N, int ranks, Index i) {
    int r = 0;
    while (r + 1 < ranks && first_point(N, r + 1, ranks) <= i) ++r;
    return r;
}

/// Collective on C.grid(). x_jᵀX = (x_jᵀx_i)_i = (1/p)∘(C (C_jᵀ/p_j)) for symmetric C:
/// one row and one matrix-vector product. Replicated.
Eigen::VectorXd inner_products_with(const distmat::DistMatrix& C, const Eigen::VectorXd& inverse_p, Index j) {
    return distmat::multiply(C, distmat::row(C, j) * inverse_p(j)).cwiseProduct(inverse_p);
}

/// Collective on `comm`. The root's argmax of `value` over the candidates (ties: the lowest
/// index), broadcast; -1 if there is no candidate. Only the root reads `value`.
Index root_argmax(const mpi::Comm& comm, const Eigen::VectorXd& value, const std::vector<bool>& candidate) {
    Index best_index = -1;
    if (comm.is_root()) {
        double best = -std::numeric_limits<double>::infinity();
        for (Index i = 0; i < static_cast<Index>(candidate.size()); ++i) {
            if (candidate[static_cast<std::size_t>(i)] && (best_index < 0 || value(i) > best)) {
                best = value(i);
                best_index = i;
            }
        }
    }
    mpi::broadcast(comm, best_index, 0);
    return best_index;
}

/// Collective on `comm`. ‖r_i‖² = ‖x_i‖² − 2h_iᵀf_i + h_iᵀGh_i (clamped at 0) for every
/// point, replicated: this rank solves its points [begin, end) (h_i into H's columns; 0
/// for words that never occur or are in A, whose residual is 0), the others' entries are
/// 0, and one allreduce(SUM) of N doubles fills them in exactly.
Eigen::VectorXd residual_squared_norms(const mpi::Comm& comm, Method method, const Eigen::MatrixXd& F_A,
                                       const std::vector<Index>& A, const Eigen::VectorXd& norms2,
                                       const std::vector<bool>& candidate, Index begin, Index end,
                                       Eigen::MatrixXd& H) {
    const Index N = norms2.size(), k = F_A.rows();
    Eigen::MatrixXd G(k, k);  // X_AᵀX_A from F's columns at A, symmetrized
    for (Index l = 0; l < k; ++l)
        for (Index m = 0; m < k; ++m)
            G(l, m) = 0.5 * (F_A(l, A[static_cast<std::size_t>(m)]) + F_A(m, A[static_cast<std::size_t>(l)]));
    Eigen::VectorXd residual2 = Eigen::VectorXd::Zero(N);
    H.setZero(k, end - begin);
    for (Index i = begin; i < end; ++i) {
        if (!candidate[static_cast<std::size_t>(i)]) continue;
        const Eigen::VectorXd f_i = F_A.col(i);
        const solvers::SclsSolution s = method == Method::snpa ? solvers::solve_capped_simplex_gram(G, f_i)
                                                               : solvers::solve_nnls_gram(G, f_i);
        H.col(i - begin) = s.y;
        residual2(i) = std::max(norms2(i) - 2.0 * s.y.dot(f_i) + s.y.dot(G * s.y), 0.0);
    }
    mpi::allreduce_inplace(comm, residual2.data(), static_cast<std::size_t>(N), MPI_SUM);
    return residual2;
}

AnchorResult snpa_or_xray(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int K, Method method,
                          const Candidates& candidates) {
    const mpi::Comm comm = C.grid().borrow_comm();
    const Index N = C.rows();
    mpi::require_same_on_all_ranks(comm, {N, K, static_cast<std::int64_t>(row_sums.size())},
                                   method == Method::snpa ? "find_anchors_snpa" : "find_anchors_xray");
    mpi::run_local_phase(comm, "anchors", [&] {
        if (C.rows() != C.cols()) throw InputError("anchors: C is not square");
        if (row_sums.size() != N) throw InputError("anchors: the row sums do not match C");
        if (K < 2 || K >= N) throw OptionError("{topics} must satisfy 2 <= K < N = " + std::to_string(N));
        count_candidates(row_sums, candidates, K);
    });
    AnchorResult result;
    // 1/p_i, with 0 for words that never occur (x_i = 0); candidate: occurring, allowed, not chosen.
    Eigen::VectorXd inverse_p(N);
    std::vector<bool> candidate(static_cast<std::size_t>(N));
    for (Index i = 0; i < N; ++i) {
        const bool occurs = row_sums(i) > 0;
        const bool allowed = candidates.empty() || candidates[static_cast<std::size_t>(i)];
        inverse_p(i) = occurs ? 1.0 / row_sums(i) : 0.0;
        candidate[static_cast<std::size_t>(i)] = occurs && allowed;
        result.zero_rows += occurs ? 0 : 1;
        result.excluded += occurs && !allowed ? 1 : 0;
    }
    const Eigen::VectorXd norms2 = distmat::row_squared_norms(C).cwiseProduct(inverse_p.cwiseAbs2());  // ‖x_i‖²
    const Index begin = first_point(N, comm.rank(), comm.size()), end = first_point(N, comm.rank() + 1, comm.size());
    Eigen::MatrixXd F(K, N);  // row l: x_{s_l}ᵀX
    Eigen::MatrixXd H;        // this rank's h_i, column i − begin
    result.diag_r.resize(K);
    for (int k = 0; k < K; ++k) {
        // r_i = x_i while A is empty: no solves, no communication.
        const Eigen::VectorXd residual2 =
            k == 0 ? norms2
                   : residual_squared_norms(comm, method, F.topRows(k), result.anchors, norms2, candidate, begin, end, H);
        Index chosen = -1;
        Eigen::VectorXd new_row;
        if (method == Method::snpa) {
            chosen = root_argmax(comm, residual2, candidate);  // j = argmax ‖r_i‖²
            new_row = inner_products_with(C, inverse_p, chosen);
        } else {
            const Index i = root_argmax(comm, residual2, candidate);  // the point farthest from the cone
            Eigen::VectorXd h_i = Eigen::VectorXd::Zero(k);
            if (k > 0) {
                const int owner = owner_of_point(N, comm.size(), i);
                if (comm.rank() == owner) h_i = H.col(i - begin);
                mpi::broadcast(comm, h_i.data(), static_cast<std::size_t>(k), owner);
            }
            const Eigen::VectorXd x_i_X = inner_products_with(C, inverse_p, i);
            // r_iᵀx_j = x_iᵀx_j − h_iᵀF(:, j), divided by 1ᵀx_j = 1.
            Eigen::VectorXd score = x_i_X;
            if (k > 0) score.noalias() -= F.topRows(k).transpose() * h_i;
            chosen = root_argmax(comm, score, candidate);
            new_row = chosen == i ? x_i_X : inner_products_with(C, inverse_p, chosen);
        }
        result.anchors.push_back(chosen);
        result.diag_r(k) = std::sqrt(residual2(chosen));
        candidate[static_cast<std::size_t>(chosen)] = false;
        F.row(k) = new_row.transpose();
    }
    return result;
}

}  // namespace

AnchorResult find_anchors_snpa(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int num_topics,
                               const Candidates& candidates) {
    return snpa_or_xray(C, row_sums, num_topics, Method::snpa, candidates);
}

AnchorResult find_anchors_xray(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int num_topics,
                               const Candidates& candidates) {
    return snpa_or_xray(C, row_sums, num_topics, Method::xray, candidates);
}

}  // namespace jsmf::anchors
