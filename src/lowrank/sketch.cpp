// SPDX-License-Identifier: MIT
#include "jsmf/lowrank/sketch.hpp"

#include <algorithm>
#include <cmath>

#include "jsmf/core/error.hpp"
#include "jsmf/distmat/blas.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/lowrank/enn.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::lowrank {

Sketch sketch_of(const CoocOperator& C, const Eigen::MatrixXd& V, const Eigen::VectorXd& values, double weight,
                 std::int64_t num_docs, std::int64_t num_tokens) {
    JSMF_REQUIRE(V.rows() == C.rows().rows(C.comm().rank()) && V.cols() == values.size(),
                 "sketch_of: V's shape disagrees with the rows and the eigenvalues");
    Sketch s;
    s.vectors = V;
    s.values = values;
    s.diagonal = C.cooc_diagonal();
    s.unigram = C.row_sums();
    s.doc_freq = C.doc_freq();
    s.weight = weight;
    s.num_docs = num_docs;
    s.num_tokens = num_tokens;
    return s;
}

void exact_top_eigenpairs(const CoocOperator& C, Index r, Eigen::MatrixXd& V, Eigen::VectorXd& values) {
    const Index N = C.num_words(), mine = C.rows().rows(C.comm().rank()), begin = C.rows().begin(C.comm().rank());
    JSMF_REQUIRE(r >= 1 && r <= N, "exact_top_eigenpairs: need 1 <= r <= N");
    // C's rows: C times the identity's columns, a panel at a time (each rank its rows of I).
    Eigen::MatrixXd rows_of_C(mine, N);
    constexpr Index kPanel = 256;
    for (Index first = 0; first < N; first += kPanel) {
        const Index width = std::min(kPanel, N - first);
        Eigen::MatrixXd I = Eigen::MatrixXd::Zero(mine, width);
        for (Index j = 0; j < width; ++j)
            if (first + j >= begin && first + j < begin + mine) I(first + j - begin, j) = 1.0;
        rows_of_C.middleCols(first, width) = C.apply(I);
    }
    // Solved on the root alone and sent to every rank: every rank then holds the same bits
    // (the same solver on other nodes' CPUs could round otherwise, and flip a sign).
    const mpi::Comm& comm = C.comm();
    Eigen::MatrixXd all = distmat::gather_rows_to_root(comm, C.rows(), rows_of_C);
    values.resize(r);
    Eigen::MatrixXd top(N, r);
    mpi::check_on_root(comm, "compress", [&] {
        // symmetric to the last bit (the solver reads the upper triangle), in place
        for (Index j = 0; j < N; ++j)
            for (Index i = 0; i < j; ++i) all(i, j) = 0.5 * (all(i, j) + all(j, i));
        Eigen::VectorXd top_values;
        distmat::top_symmetric_eigenpairs(all, r, top_values, top);
        values = top_values;
        for (Index k = 0; k < r; ++k)
            if (top.col(k).sum() < 0) top.col(k) *= -1;  // fix_signs' convention, on the whole column
    });
    mpi::broadcast(comm, values.data(), static_cast<std::size_t>(r), 0);
    mpi::broadcast(comm, top.data(), static_cast<std::size_t>(top.size()), 0);
    V = top.middleRows(begin, mine);
}

int sketch_eigenpairs(const CoocOperator& C, Index r, double tolerance, Seed seed, const Eigen::MatrixXd* start,
                      Eigen::MatrixXd& V, Eigen::VectorXd& values,
                      const std::function<void(const distmat::EigRound&)>& progress) {
    const Index N = C.num_words(), before = C.products();
    if (distmat::eig_block_columns(static_cast<int>(r)) >= N) {
        exact_top_eigenpairs(C, r, V, values);
        return static_cast<int>(C.products() - before);
    }
    distmat::EigOptions o = default_eig_options(static_cast<int>(r), seed);
    o.tolerance = tolerance;
    if (progress) o.progress = progress;
    Eigen::MatrixXd warm;
    if (start && start->cols() > 0)
        warm = start->leftCols(std::min<Index>(start->cols(), distmat::eig_block_columns(static_cast<int>(r))));
    const distmat::EigResult eig = distmat::top_eigenpairs([&](const Eigen::MatrixXd& X) { return C.apply(X); },
                                                           C.rows(), C.comm(), o, warm.cols() > 0 ? &warm : nullptr);
    V = eig.vectors;
    fix_signs(C.comm(), V);
    values = eig.values;
    return static_cast<int>(C.products() - before);
}

Eigen::MatrixXd warm_enn_start(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& Y_old,
                               const Eigen::MatrixXd& Y0, const Sketch& old, Seed seed) {
    const Index K = Y0.cols();
    JSMF_REQUIRE(Y_old.cols() == K && Y_old.rows() == Y0.rows() && old.rank() >= K && old.vectors.rows() == Y0.rows(),
                 "warm_enn_start: the factors' shapes disagree");
    const Eigen::MatrixXd Y0_old = old.vectors.leftCols(K) * old.values.head(K).cwiseMax(0).cwiseSqrt().asDiagonal();
    const auto apply = [&](const Eigen::MatrixXd& X) {
        Eigen::MatrixXd projected(3 * K, X.cols());  // [Y_oldᵀ X; Y₀ᵀ X; Y₀_oldᵀ X], one all-reduce
        projected.topRows(K).noalias() = Y_old.transpose() * X;
        projected.middleRows(K, K).noalias() = Y0.transpose() * X;
        projected.bottomRows(K).noalias() = Y0_old.transpose() * X;
        distmat::sum_on_all_ranks(comm, projected.data(), static_cast<std::size_t>(projected.size()));
        Eigen::MatrixXd out = Y_old * projected.topRows(K);
        out.noalias() += Y0 * projected.middleRows(K, K);
        out.noalias() -= Y0_old * projected.bottomRows(K);
        return out;
    };
    distmat::EigOptions o = default_eig_options(static_cast<int>(K), seed);
    const distmat::EigResult eig = distmat::top_eigenpairs(apply, rows, comm, o, &Y_old);
    Eigen::MatrixXd V = eig.vectors;
    fix_signs(comm, V);
    return V * eig.values.cwiseMax(0).cwiseSqrt().asDiagonal();
}

SketchOperator::SketchOperator(const CoocOperator& fresh, double fresh_docs, const Sketch& old, double decay)
    : fresh_(&fresh), old_(&old), decay_(decay), old_weight_(decay * old.weight), fresh_weight_(fresh_docs) {
    const Index mine = fresh.rows().rows(fresh.comm().rank());
    JSMF_REQUIRE(old.vectors.rows() == mine && old.vectors.cols() == old.values.size() && old.diagonal.size() == mine &&
                     old.unigram.size() == mine && static_cast<Index>(old.doc_freq.size()) == mine,
                 "SketchOperator: the sketch's rows disagree with the new documents' operator");
    JSMF_REQUIRE(decay > 0 && decay <= 1, "SketchOperator: the decay must lie in (0, 1]");
    JSMF_REQUIRE(old.weight > 0 && fresh_docs >= 0, "SketchOperator: the weights must be positive");
}

Eigen::MatrixXd SketchOperator::apply(const Eigen::MatrixXd& X) const {
    count_product(X.cols());
    const double total = weight();
    Eigen::MatrixXd out = fresh_->apply(X);
    out *= fresh_weight_ / total;
    // Vᵀ X, summed over the ranks' rows (r × p), scaled by Λ and the old share.
    Eigen::MatrixXd projected(old_->vectors.cols(), X.cols());
    projected.noalias() = old_->vectors.transpose() * X;
    distmat::sum_on_all_ranks(comm(), projected.data(), static_cast<std::size_t>(projected.size()));
    projected = (old_->values * (old_weight_ / total)).asDiagonal() * projected;
    out.noalias() += old_->vectors * projected;
    return out;
}

Eigen::VectorXd SketchOperator::cooc_diagonal() const {
    return (fresh_weight_ * fresh_->cooc_diagonal() + old_weight_ * old_->diagonal) / weight();
}

Eigen::VectorXd SketchOperator::row_sums() const {
    return (fresh_weight_ * fresh_->row_sums() + old_weight_ * old_->unigram) / weight();
}

std::vector<std::int64_t> SketchOperator::doc_freq() const {
    std::vector<std::int64_t> df = fresh_->doc_freq();
    for (std::size_t i = 0; i < df.size(); ++i)
        df[i] += decay_ == 1.0 ? old_->doc_freq[i]
                               : static_cast<std::int64_t>(std::llround(decay_ * static_cast<double>(old_->doc_freq[i])));
    return df;
}

}  // namespace jsmf::lowrank
