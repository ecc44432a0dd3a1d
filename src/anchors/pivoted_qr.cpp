// SPDX-License-Identifier: MIT
// Anchor words by sparse implicit column-pivoted QR (practical-jsmf Alg. 2).
#include "jsmf/anchors/pivoted_qr.hpp"

#include <cmath>

#include "jsmf/distmat/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::anchors {

namespace {
/// Alg. 2; `fixed` (when not null) replaces the argmax of line 4 by the given pivots.
AnchorResult pivoted_qr(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int K,
                        const std::vector<Index>* fixed, const Candidates& candidates) {
    const mpi::Comm comm = C.grid().borrow_comm();
    const Index N = C.rows();
    // The given pivots must be the same everywhere (a weighted sum suffices to catch a mix-up).
    std::int64_t fixed_checksum = 0;
    if (fixed)
        for (std::size_t k = 0; k < fixed->size(); ++k) fixed_checksum += static_cast<std::int64_t>(k + 1) * ((*fixed)[k] + 1);
    mpi::require_same_on_all_ranks(comm, {N, K, static_cast<std::int64_t>(row_sums.size()), fixed_checksum},
                                   "find_anchors");
    mpi::run_local_phase(comm, "anchors", [&] {
        if (C.rows() != C.cols()) throw InputError("anchors: C is not square");
        if (row_sums.size() != N) throw InputError("anchors: the row sums do not match C");
        if (K < 2 || K >= N) throw OptionError("{topics} must satisfy 2 <= K < N = " + std::to_string(N));
        if (!fixed) {
            count_candidates(row_sums, candidates, K);
            return;
        }
        std::vector<bool> seen(static_cast<std::size_t>(N), false);
        for (const Index s : *fixed) {
            if (s < 0 || s >= N) throw InputError("anchors: word id " + std::to_string(s) + " is out of range");
            if (seen[static_cast<std::size_t>(s)])
                throw InputError("anchors: word id " + std::to_string(s) + " is given twice");
            if (!(row_sums(s) > 0))
                throw InputError("anchors: word id " + std::to_string(s) + " never occurs in the used documents");
            seen[static_cast<std::size_t>(s)] = true;
        }
    });
    AnchorResult result;
    // 1/p_i, with 0 for words that never occur (their rows of C̄ are taken as zero).
    Eigen::VectorXd inverse_p(N);
    // Words that may not be pivots: they never occur, or they are not candidates.
    std::vector<bool> chosen(static_cast<std::size_t>(N), false);
    for (Index i = 0; i < N; ++i) {
        const bool occurs = row_sums(i) > 0;
        const bool candidate = fixed || candidates.empty() || candidates[static_cast<std::size_t>(i)];
        inverse_p(i) = occurs ? 1.0 / row_sums(i) : 0.0;
        result.zero_rows += occurs ? 0 : 1;
        result.excluded += occurs && !candidate ? 1 : 0;
        chosen[static_cast<std::size_t>(i)] = !occurs || !candidate;
    }
    Eigen::VectorXd u = distmat::row_squared_norms(C).cwiseProduct(inverse_p.cwiseAbs2());   // line 2
    Eigen::MatrixXd Q(N, K);
    result.diag_r.resize(K);
    for (int k = 0; k < K; ++k) {
        Index n = fixed ? (*fixed)[static_cast<std::size_t>(k)] : -1;
        if (comm.is_root() && !fixed) {                                                              // line 4
            double best = -1;
            for (Index i = 0; i < N; ++i) {
                if (!chosen[static_cast<std::size_t>(i)] && u(i) > best) {
                    best = u(i);
                    n = i;
                }
            }
        }
        mpi::broadcast(comm, n, 0);  // the root decides, every rank follows
        chosen[static_cast<std::size_t>(n)] = true;
        result.anchors.push_back(n);
        const double r = std::sqrt(std::max(u(n), 0.0));                                   // line 5
        result.diag_r(k) = r;
        const Eigen::VectorXd p_n = distmat::row(C, n) * inverse_p(n);                        // column n of P = C̄ᵀ
        Eigen::VectorXd q = p_n;
        for (int l = 0; l < k; ++l) q -= Q.col(l).dot(p_n) * Q.col(l);                     // line 6
        q /= r > 0 ? r : 1.0;
        Q.col(k) = q;
        const Eigen::VectorXd qP = distmat::multiply(C, q).cwiseProduct(inverse_p);          // q_kᵀP = (C̄ q_k)ᵀ
        u -= qP.cwiseAbs2();                                                               // line 7
    }
    return result;
}
}  // namespace

AnchorResult find_anchors(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int K,
                          const Candidates& candidates) {
    return pivoted_qr(C, row_sums, K, nullptr, candidates);
}

AnchorResult anchors_from_words(const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums,
                                const std::vector<Index>& anchors) {
    return pivoted_qr(C, row_sums, static_cast<int>(anchors.size()), &anchors, {});
}

}  // namespace jsmf::anchors
