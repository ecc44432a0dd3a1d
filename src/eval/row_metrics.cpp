// SPDX-License-Identifier: MIT
// The measures on B by rows: metrics.cpp's definitions, each split into per-word sums,
// counts or maxima and reduced over the ranks (see row_metrics.hpp).
#include "jsmf/eval/row_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "jsmf/core/error.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::eval {
namespace {

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();
constexpr double kEpsilon = std::numeric_limits<double>::epsilon();  // MATLAB's eps, as metrics.cpp

/// The same bits on every rank: the root's sum, broadcast.
void sum_everywhere(const mpi::Comm& comm, Eigen::Ref<Eigen::MatrixXd> values) {
    Eigen::MatrixXd copy = values;  // contiguous
    distmat::sum_on_all_ranks(comm, copy.data(), static_cast<std::size_t>(copy.size()));
    values = copy;
}

/// Every rank's per-word values, concatenated in rank order, on every rank (N doubles).
Eigen::VectorXd per_word_everywhere(const mpi::Comm& comm, const Eigen::VectorXd& local) {
    std::vector<double> all = mpi::gather_concat(comm, std::vector<double>(local.data(), local.data() + local.size()), 0);
    std::int64_t n = static_cast<std::int64_t>(all.size());
    mpi::broadcast(comm, n, 0);
    all.resize(static_cast<std::size_t>(n));
    mpi::broadcast(comm, all.data(), all.size(), 0);
    return Eigen::Map<const Eigen::VectorXd>(all.data(), n);
}

/// The anchors' rows of the whole B (K × K: row k is B(s_k, :)), on every rank: each
/// filled by the rank that holds the word.
Eigen::MatrixXd anchor_rows(const mpi::Comm& comm, const Eigen::MatrixXd& B, Index first,
                            const std::vector<Index>& anchors, Index K) {
    Eigen::MatrixXd rows = Eigen::MatrixXd::Zero(K, K);
    for (Index k = 0; k < K; ++k) {
        const Index s = anchors[static_cast<std::size_t>(k)] - first;
        if (s >= 0 && s < B.rows()) rows.row(k) = B.row(s);
    }
    sum_everywhere(comm, rows);  // one rank adds each row, the others 0: exact
    return rows;
}

/// Local. This rank's rows ordered as column l sorted by ranks_before (global ids).
std::vector<Index> sorted_rows(const Eigen::MatrixXd& B, Index first, Index l) {
    std::vector<Index> order(static_cast<std::size_t>(B.rows()));
    std::iota(order.begin(), order.end(), Index{0});
    std::sort(order.begin(), order.end(),
              [&](Index a, Index b) { return eval::ranks_before(B(a, l), first + a, B(b, l), first + b); });
    return order;
}

/// Local. How many of this rank's rows come before word s (value y) in column l, from
/// `order` (sorted_rows of column l): the order's prefix that does.
double count_before(const Eigen::MatrixXd& B, Index first, Index l, const std::vector<Index>& order, double y, Index s) {
    const auto end = std::partition_point(order.begin(), order.end(),
                                          [&](Index i) { return eval::ranks_before(B(i, l), first + i, y, s); });
    return static_cast<double>(end - order.begin());
}

}  // namespace

TopWords top_words_by_rows(const mpi::Comm& comm, const Eigen::MatrixXd& B, Index first, Index total, int n) {
    mpi::run_local_phase(comm, "metrics", [&] {
        if (n < 0) throw InputError("metrics: the number of top words must be non-negative");
    });
    const Index K = mpi::allreduce_max(comm, static_cast<std::int64_t>(B.cols()));  // a rank without rows may hold 0 × 0
    const Index T = std::min<Index>(n, total);
    const Index mine = std::min<Index>(T, B.rows());  // this rank's candidates per topic
    std::vector<double> values;
    std::vector<std::int64_t> ids;
    values.reserve(static_cast<std::size_t>(mine * K));
    ids.reserve(static_cast<std::size_t>(mine * K));
    std::vector<Index> order(static_cast<std::size_t>(B.rows()));
    for (Index k = 0; k < K && B.rows() > 0; ++k) {
        std::iota(order.begin(), order.end(), Index{0});
        std::partial_sort(order.begin(), order.begin() + mine, order.end(),
                          [&](Index a, Index b) { return eval::ranks_before(B(a, k), first + a, B(b, k), first + b); });
        for (Index j = 0; j < mine; ++j) {
            const Index i = order[static_cast<std::size_t>(j)];
            values.push_back(B(i, k));
            ids.push_back(first + i);
        }
    }
    const std::vector<std::int64_t> counts = mpi::gather_concat(comm, std::vector<std::int64_t>{mine}, 0);
    const std::vector<double> all_values = mpi::gather_concat(comm, values, 0);
    const std::vector<std::int64_t> all_ids = mpi::gather_concat(comm, ids, 0);
    TopWords top;
    top.ids.resize(K, T);
    top.values.resize(K, T);
    if (comm.is_root()) {  // each topic's T best of the ranks' candidates
        std::vector<std::size_t> pool;
        for (Index k = 0; k < K; ++k) {
            pool.clear();
            std::size_t at = 0;
            for (const std::int64_t c : counts) {
                for (std::int64_t j = 0; j < c; ++j) pool.push_back(at + static_cast<std::size_t>(k * c + j));
                at += static_cast<std::size_t>(c * K);
            }
            std::partial_sort(pool.begin(), pool.begin() + T, pool.end(), [&](std::size_t a, std::size_t b) {
                return eval::ranks_before(all_values[a], all_ids[a], all_values[b], all_ids[b]);
            });
            for (Index j = 0; j < T; ++j) {
                top.ids(k, j) = static_cast<int>(all_ids[pool[static_cast<std::size_t>(j)]]);
                top.values(k, j) = all_values[pool[static_cast<std::size_t>(j)]];
            }
        }
    }
    mpi::broadcast(comm, top.ids.data(), static_cast<std::size_t>(top.ids.size()), 0);
    mpi::broadcast(comm, top.values.data(), static_cast<std::size_t>(top.values.size()), 0);
    return top;
}

double validity_by_rows(const mpi::Comm& comm, const TopicRows& t, const Eigen::MatrixXd& A) {
    const Index K = A.rows();
    Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(K, 2);  // Σ of the Bayes-rule quotients, and their count
    for (Index k = 0; k < K; ++k) {
        for (Index i = 0; i < t.B.rows(); ++i) {
            if (t.B(i, k) == 0) continue;  // as validity: words with B_ik = 0 and NaN quotients skipped
            const double bayes = t.B_breve(k, i) * t.p(i) / t.B(i, k);
            if (std::isnan(bayes)) continue;
            sums(k, 0) += bayes;
            sums(k, 1) += 1;
        }
    }
    sum_everywhere(comm, sums);
    Eigen::VectorXd p_z(K);
    for (Index k = 0; k < K; ++k) p_z(k) = sums(k, 1) > 0 ? sums(k, 0) / sums(k, 1) : kNoValue;
    return symmetric_kl(A.rowwise().sum(), p_z);
}

Eigen::VectorXd specificity_by_rows(const mpi::Comm& comm, const Eigen::MatrixXd& B, const Eigen::VectorXd& p) {
    const Index K = mpi::allreduce_max(comm, static_cast<std::int64_t>(B.cols()));
    // KL(b_k ‖ p̃), p̃ = max(p, ε) / Σ max(p, ε): the sum over all words first.
    Eigen::MatrixXd smooth_sum(1, 1);
    smooth_sum(0, 0) = p.cwiseMax(kEpsilon).sum();
    sum_everywhere(comm, smooth_sum);
    Eigen::MatrixXd kl = Eigen::MatrixXd::Zero(K, 1);
    for (Index k = 0; k < K; ++k)
        for (Index i = 0; i < B.rows(); ++i) {
            const double b = B(i, k);
            if (b != 0) kl(k, 0) += b * std::log2(b / (std::max(p(i), kEpsilon) / smooth_sum(0, 0)));
        }
    sum_everywhere(comm, kl);
    return kl.col(0);
}

MetricSet model_metrics_by_rows(const mpi::Comm& comm, const TopicRows& t, const Eigen::MatrixXd& A,
                                const std::vector<Index>& anchors) {
    const Index K = A.rows();
    mpi::run_local_phase(comm, "metrics", [&] {
        if (A.cols() != K) throw InputError("metrics: A must be K x K");
        if (static_cast<Index>(anchors.size()) != K) throw InputError("metrics: one anchor per topic (column of B) is needed");
        for (const Index s : anchors)
            if (s < 0 || s >= t.total) throw InputError("metrics: an anchor word id is outside 0 .. N-1");
        const Index rows = t.B.rows();
        if ((rows > 0 && t.B.cols() != K) || t.B_breve.cols() != rows || (rows > 0 && t.B_breve.rows() != K) ||
            t.p.size() != rows)
            throw InternalError("metrics by rows: B, B_breve and p disagree on this rank's words");
    });
    std::vector<std::int64_t> first{static_cast<std::int64_t>(t.B.rows())};
    const std::int64_t words = mpi::allreduce_sum(comm, first[0]);
    mpi::exscan_inplace(comm, first, MPI_SUM);
    mpi::run_local_phase(comm, "metrics", [&] {
        if (first[0] != t.first || words != t.total)
            throw InternalError("metrics by rows: the ranks' words are not consecutive blocks in rank order, "
                                "covering the N words");
    });
    const Index rows = t.B.rows();
    MetricSet set;
    set.add_number("legality", legality(A));
    set.add_number("validity", validity_by_rows(comm, t, A));
    set.add("dominancy", "topic", dominancy(A));
    set.add("entropy", "word",
            per_word_everywhere(comm, rows > 0 ? entropy(t.B_breve) : Eigen::VectorXd()));
    {  // sparsity: ‖b_k‖₁ and ‖b_k‖₂² summed over the words
        Eigen::MatrixXd norms = Eigen::MatrixXd::Zero(K, 2);
        for (Index k = 0; k < K && rows > 0; ++k) {
            norms(k, 0) = t.B.col(k).lpNorm<1>();
            norms(k, 1) = t.B.col(k).squaredNorm();
        }
        sum_everywhere(comm, norms);
        const double root_n = std::sqrt(static_cast<double>(t.total));
        Eigen::VectorXd s(K);
        for (Index k = 0; k < K; ++k) s(k) = (root_n - norms(k, 0) / std::sqrt(norms(k, 1))) / (root_n - 1);
        set.add("sparsity", "topic", s);
    }
    set.add("specificity", "topic", specificity_by_rows(comm, t.B, t.p));
    const TopWords top = top_words_by_rows(comm, t.B, t.first, t.total);
    set.add("dissimilarity", "topic", dissimilarity_hard_of_top(top.ids));
    {  // soft dissimilarity: cross(k, l) = Σ_i B_ik log₂ max(B_il, ε), and per topic Σ max(B_il, ε),
       // Σ B_il log₂ B_il, Σ B_il (dissimilarity_soft's terms)
        Eigen::MatrixXd parts = Eigen::MatrixXd::Zero(K, K + 3);
        if (rows > 0) {
            const Eigen::MatrixXd logs = t.B.cwiseMax(kEpsilon);
            parts.col(K) = logs.colwise().sum().transpose();
            parts.leftCols(K).noalias() = t.B.transpose() * logs.array().log2().matrix();
            for (Index l = 0; l < K; ++l) {
                double bits = 0;
                for (Index i = 0; i < rows; ++i)
                    if (t.B(i, l) != 0) bits += t.B(i, l) * std::log2(t.B(i, l));
                parts(l, K + 1) = bits;
                parts(l, K + 2) = t.B.col(l).sum();
            }
        }
        sum_everywhere(comm, parts);
        const auto kl = [&](Index p, Index q) {
            return parts(p, K + 1) - parts(p, q) + parts(p, K + 2) * std::log2(parts(q, K));
        };
        Eigen::VectorXd d(K);
        for (Index k = 0; k < K; ++k) {
            double sum = 0;
            for (Index l = 0; l < K; ++l)
                if (l != k) sum += 0.5 * (kl(k, l) + kl(l, k));
            d(k) = K > 1 ? sum / static_cast<double>(K - 1) : kNoValue;
        }
        set.add("dissimilarity_soft", "topic", d);
    }
    {  // the basis measures: the anchors' rows, and where each anchor ranks in every column
        const Eigen::MatrixXd at_anchor = anchor_rows(comm, t.B, t.first, anchors, K);
        Eigen::MatrixXd before = Eigen::MatrixXd::Zero(K, K);  // (k, l): words before s_k in column l
        for (Index l = 0; l < K && rows > 0; ++l) {
            const std::vector<Index> order = sorted_rows(t.B, t.first, l);
            for (Index k = 0; k < K; ++k)
                before(k, l) = count_before(t.B, t.first, l, order, at_anchor(k, l), anchors[static_cast<std::size_t>(k)]);
        }
        sum_everywhere(comm, before);
        Eigen::MatrixXd largest(K, 1);
        for (Index k = 0; k < K; ++k)
            largest(k, 0) = rows > 0 ? t.B.col(k).maxCoeff() : -std::numeric_limits<double>::infinity();
        mpi::allreduce_inplace(comm, largest.data(), static_cast<std::size_t>(K), MPI_MAX);
        Eigen::VectorXd rank(K), rank_soft(K), quality(K), quality_soft(K);
        for (Index k = 0; k < K; ++k) {
            rank(k) = before(k, k) + 1;
            rank_soft(k) = std::log(largest(k, 0)) - std::log(at_anchor(k, k));
            double hard = 0, soft = 0;
            for (Index l = 0; l < K; ++l)
                if (l != k) {
                    hard += before(k, l) + 1;
                    soft += at_anchor(k, l);
                }
            quality(k) = K > 1 ? hard / static_cast<double>(K - 1) : kNoValue;
            quality_soft(k) = K > 1 ? soft / static_cast<double>(K - 1) : kNoValue;
        }
        set.add("basis_rank", "topic", rank);
        set.add("basis_rank_soft", "topic", rank_soft);
        set.add("basis_quality", "topic", quality);
        set.add("basis_quality_soft", "topic", quality_soft);
    }
    const Eigen::VectorXd shared = simcount_of_top(top.ids);
    set.add_number("simcount", shared.sum() / 2);  // each pair counted by both its topics
    set.add("simcount_topic", "topic", shared);
    return set;
}

}  // namespace jsmf::eval
