// SPDX-License-Identifier: MIT
// Rectification by diagonal completion (DC).
#include "jsmf/rectify/dc.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "jsmf/dist/ops.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::rectify {
namespace {
// X (rows indexed by `rows`) placed into an N-row block of zeros.
Eigen::MatrixXd expand(const Eigen::MatrixXd& X, const std::vector<Index>& rows, Index N) {
    Eigen::MatrixXd full = Eigen::MatrixXd::Zero(N, X.cols());
    for (std::size_t r = 0; r < rows.size(); ++r) full.row(rows[r]) = X.row(static_cast<Index>(r));
    return full;
}

Eigen::MatrixXd restrict_rows(const Eigen::MatrixXd& full, const std::vector<Index>& rows) {
    Eigen::MatrixXd X(static_cast<Index>(rows.size()), full.cols());
    for (std::size_t r = 0; r < rows.size(); ++r) X.row(static_cast<Index>(r)) = full.row(rows[r]);
    return X;
}

double median(std::vector<double> values) {
    const std::size_t middle = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
    const double upper = values[middle];
    if (values.size() % 2 == 1) return upper;
    const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle));
    return 0.5 * (lower + upper);
}
}  // namespace

DcResult diagonal_completion(dist::DistMatrix& C, const DcOptions& options, const DcProgress& progress) {
    const mpi::Comm comm = C.grid().borrow_comm();
    const Index N = C.rows();
    const int K = options.num_topics;
    mpi::require_same_on_all_ranks(comm, {N, K, options.permutations, static_cast<std::int64_t>(options.seed)},
                                   "diagonal_completion");
    mpi::run_local_phase(comm, "rectify", [&] {
        if (C.rows() != C.cols()) throw InputError("rectify: C is not square");
        if (K < 2 || 2 * Index{K} >= N)
            throw InputError("DC needs 2 <= K and 2K < N (each half must exceed K), got K = " + std::to_string(K) +
                             ", N = " + std::to_string(N));
        if (options.permutations < 1) throw InputError("--permutations must be at least 1");
    });
    DcResult result;
    result.old_diagonal = dist::diagonal(C);
    Eigen::MatrixXd completions(N, options.permutations);
    std::mt19937_64 engine(options.seed);  // replicated: every rank draws the same permutations
    std::vector<Index> order(static_cast<std::size_t>(N));
    dist::EigOptions eig = options.eig;
    eig.num_eigenpairs = K;
    eig.lower_bound = 0;  // G Gᵀ is positive semidefinite: no Lanczos needed

    for (int t = 0; t < options.permutations; ++t) {
        std::iota(order.begin(), order.end(), Index{0});
        std::shuffle(order.begin(), order.end(), engine);
        const std::vector<Index> first(order.begin(), order.begin() + N / 2), second(order.begin() + N / 2, order.end());
        for (int half = 0; half < 2; ++half) {
            const std::vector<Index>& H = half == 0 ? first : second;
            const std::vector<Index>& O = half == 0 ? second : first;
            // x ↦ G Gᵀ x with G = C[H, O]: Gᵀx = (C x̃)[O] (C symmetric), then G(·) = (C ·̃)[H].
            const dist::SymmetricOperator GGt = [&](const Eigen::MatrixXd& X) {
                const Eigen::MatrixXd GtX = restrict_rows(dist::multiply_block(C, expand(X, H, N)), O);
                return restrict_rows(dist::multiply_block(C, expand(GtX, O, N)), H);
            };
            const dist::EigResult top = dist::top_eigenpairs(GGt, static_cast<Index>(H.size()), comm, eig);
            result.eig_products += 2 * top.block_products;
            const Eigen::MatrixXd& U = top.vectors;                                   // |H| × K
            const Eigen::MatrixXd FU = restrict_rows(dist::multiply_block(C, expand(U, H, N)), H);
            for (std::size_t r = 0; r < H.size(); ++r) {
                const Index j = H[r];
                const Eigen::RowVectorXd u = U.row(static_cast<Index>(r));
                const double uu = u.squaredNorm();
                // u_j · P_j with P = Uᵀ(F − diag F): u_j · (F U)_j − |u_j|² F_jj.
                const double uP = u.dot(FU.row(static_cast<Index>(r))) - uu * result.old_diagonal(j);
                // 1 − |u_j|² = 0 only if e_j lies in span(U); then nothing can be completed.
                completions(j, t) = std::abs(1.0 - uu) > 1e-12 ? uP / (1.0 - uu) : result.old_diagonal(j);
            }
        }
        if (progress) progress(t + 1, options.permutations);
    }
    result.new_diagonal.resize(N);
    for (Index j = 0; j < N; ++j) {
        const Eigen::RowVectorXd row = completions.row(j);
        const double m = median(std::vector<double>(row.data(), row.data() + row.size()));
        result.clipped += m < 0 ? 1 : 0;
        result.new_diagonal(j) = std::max(m, 0.0);
    }
    result.permutations = options.permutations;
    dist::set_diagonal(C, result.new_diagonal);
    const double total = dist::sum(C);
    mpi::check_on_root(comm, "rectify", [&] {
        if (!(total > 0)) throw InputError("rectify: C has no positive mass to normalize");
    });
    dist::scale(C, 1.0 / total);
    return result;
}

}  // namespace jsmf::rectify
