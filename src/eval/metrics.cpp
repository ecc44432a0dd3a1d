// SPDX-License-Identifier: MIT
// The papers' local quality metrics. The conventions are those of the authors' evaluation
// code (moontae/JSMF, codes/+evaluation/evaluateClusters.m; function names cited below),
// except where the definitions differ, which is said at the spot.
#include "jsmf/eval/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "jsmf/core/error.hpp"

namespace jsmf::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void require_metric(bool condition, const std::string& what) {
    if (!condition) throw InputError("metrics: " + what);
}

void require_anchors(const Eigen::MatrixXd& B, const std::vector<Index>& anchors) {
    require_metric(static_cast<Eigen::Index>(anchors.size()) == B.cols(), "one anchor per topic (column of B) is needed");
    for (const Index s : anchors) require_metric(s >= 0 && s < B.rows(), "an anchor word id is outside 0 .. N-1");
}

/// Whether word a comes before word b in column `col` sorted in decreasing order. As
/// MATLAB's sort(B, 1, 'descend'), which the authors use: stable (ties keep the lower id
/// first) and NaN first. A strict weak order, so std::sort may use it.
bool ranks_before(const Eigen::Ref<const Eigen::VectorXd>& col, Index a, Index b) {
    return eval::ranks_before(col(a), a, col(b), b);
}

/// 1-based position of word s in column `col` sorted as ranks_before (the authors'
/// find(I(:, k) == S(k)) after sort): 1 + the words that come before it. O(N), no sort.
double rank_in_column(const Eigen::Ref<const Eigen::VectorXd>& col, Index s) {
    Index before = 0;
    for (Index i = 0; i < col.size(); ++i)
        if (i != s && ranks_before(col, i, s)) ++before;
    return static_cast<double>(before + 1);
}

/// KL(p ‖ q) in bits as the authors' divergenceKL: q's entries below machine epsilon are
/// raised to epsilon (no infinite divergence) and q is renormalized to sum 1; p is used as
/// is; a term with p_i = 0 is 0 (the limit of 0·log 0, MATLAB's NaN zeroed).
double kl_bits(const Eigen::VectorXd& p, const Eigen::VectorXd& q) {
    const double eps = std::numeric_limits<double>::epsilon();  // MATLAB's eps
    const Eigen::VectorXd q_smooth = q.cwiseMax(eps);
    const Eigen::VectorXd q_normal = q_smooth / q_smooth.sum();
    double kl = 0;
    for (Eigen::Index i = 0; i < p.size(); ++i)
        if (p(i) != 0) kl += p(i) * std::log2(p(i) / q_normal(i));
    return kl;
}

/// The authors' symmetricKL: the average of the two directions, 0.5·(KL(p‖q) + KL(q‖p)),
/// not their sum.
double symmetric_kl_bits(const Eigen::VectorXd& p, const Eigen::VectorXd& q) {
    return 0.5 * (kl_bits(p, q) + kl_bits(q, p));
}

/// For each entry of `top` (K × n), how many topics have that word among their top n:
/// K × n, from the K n entries sorted (not an N-vector: the top words may come from B by rows).
Eigen::MatrixXi top_membership_counts(const Eigen::MatrixXi& top) {
    std::vector<int> sorted(top.data(), top.data() + top.size());
    std::sort(sorted.begin(), sorted.end());
    Eigen::MatrixXi count(top.rows(), top.cols());
    for (Eigen::Index e = 0; e < top.size(); ++e) {
        const auto [first, last] = std::equal_range(sorted.begin(), sorted.end(), top.data()[e]);
        count.data()[e] = static_cast<int>(last - first);
    }
    return count;
}

}  // namespace

bool ranks_before(double x, Index a, double y, Index b) {
    if (std::isnan(x) != std::isnan(y)) return std::isnan(x);
    if (!std::isnan(x) && x != y) return x > y;
    return a < b;
}

Summary summarize(const Eigen::VectorXd& values) {
    // The authors' mean / std (evaluateClusters.m): a NaN value (a degenerate topic, e.g. an
    // all-zero row of A) makes the summary NaN, so it shows instead of silently dropping out.
    const Index n = values.size();
    if (n == 0) return {kNaN, kNaN};
    Summary s;
    s.mean = values.sum() / static_cast<double>(n);
    if (n < 2) return s;
    s.std = std::sqrt((values.array() - s.mean).square().sum() / static_cast<double>(n - 1));  // MATLAB's std: N − 1
    return s;
}

Eigen::MatrixXi top_words(const Eigen::MatrixXd& B, int n) {
    require_metric(n >= 0, "the number of top words must be non-negative");
    const Index N = B.rows();
    const Index count = std::min<Index>(n, N);  // evaluateClusters.m: M = min(M, N)
    Eigen::MatrixXi top(B.cols(), count);
    std::vector<Index> ids(static_cast<std::size_t>(N));
    for (Eigen::Index k = 0; k < B.cols(); ++k) {
        std::iota(ids.begin(), ids.end(), Index{0});
        const auto col = B.col(k);
        std::partial_sort(ids.begin(), ids.begin() + count, ids.end(),
                          [&](Index a, Index b) { return ranks_before(col, a, b); });
        for (Index j = 0; j < count; ++j) top(k, j) = static_cast<int>(ids[static_cast<std::size_t>(j)]);
    }
    return top;
}

// distributionLegality: ΣA.
double legality(const Eigen::MatrixXd& A) { return A.sum(); }

// marginalValidity: symKL(A·1, p(z)), p(z)_k = mean_i B̆_ki p_i / B_ik.
double validity(const Eigen::MatrixXd& B, const Eigen::MatrixXd& A, const Eigen::MatrixXd& B_breve,
                const Eigen::VectorXd& p) {
    const Index N = B.rows(), K = B.cols();
    require_metric(A.rows() == K && A.cols() == K, "A must be K x K");
    require_metric(B_breve.rows() == K && B_breve.cols() == N, "B_breve must be K x N");
    require_metric(p.size() == N, "p must have N entries");
    Eigen::VectorXd p_z(K);
    for (Index k = 0; k < K; ++k) {
        // The issue skips every word with B_ik = 0. The authors' nanmean skips only the
        // 0/0 ones; B̆_ki p_i / 0 with a non-zero numerator is Inf there and makes p(z)_k
        // Inf. We follow the issue; NaN quotients (nanmean) are skipped as well.
        double sum = 0;
        Index n = 0;
        for (Index i = 0; i < N; ++i) {
            if (B(i, k) == 0) continue;
            const double bayes = B_breve(k, i) * p(i) / B(i, k);
            if (std::isnan(bayes)) continue;
            sum += bayes;
            ++n;
        }
        p_z(k) = n > 0 ? sum / static_cast<double>(n) : kNaN;
    }
    return symmetric_kl_bits(A.rowwise().sum(), p_z);
}

double symmetric_kl(const Eigen::VectorXd& p, const Eigen::VectorXd& q) { return symmetric_kl_bits(p, q); }

// diagonalDominancy; NIPS'15 §4: p(Z₂ = k | Z₁ = k) = A_kk / Σ_l A_kl.
Eigen::VectorXd dominancy(const Eigen::MatrixXd& A) {
    require_metric(A.rows() == A.cols(), "A must be square");
    return A.diagonal().cwiseQuotient(A.rowwise().sum());
}

// normalizedEntropy: H(B̆_{:,i}) / log₂ K, bits, 0·log 0 = 0 (the authors' entropy()).
// K = 1 gives 0/0 = NaN, as in the authors' code.
Eigen::VectorXd entropy(const Eigen::MatrixXd& B_breve) {
    const double max_entropy = std::log2(static_cast<double>(B_breve.rows()));
    Eigen::VectorXd h(B_breve.cols());
    for (Eigen::Index i = 0; i < B_breve.cols(); ++i) {
        double bits = 0;
        for (Eigen::Index k = 0; k < B_breve.rows(); ++k) {
            const double b = B_breve(k, i);
            if (b != 0) bits -= b * std::log2(b);
        }
        h(i) = bits / max_entropy;
    }
    return h;
}

// clusterSparsity (Hoyer 2004; practical-jsmf §5.1): (√N − ‖b_k‖₁/‖b_k‖₂) / (√N − 1).
Eigen::VectorXd sparsity(const Eigen::MatrixXd& B) {
    const double root_n = std::sqrt(static_cast<double>(B.rows()));
    Eigen::VectorXd s(B.cols());
    for (Eigen::Index k = 0; k < B.cols(); ++k)
        s(k) = (root_n - B.col(k).lpNorm<1>() / B.col(k).norm()) / (root_n - 1);
    return s;
}

// clusterSpecificity; NIPS'15 §4: KL(p(X | Z = k) ‖ p(X)) in bits (divergenceKL(B, p)).
Eigen::VectorXd specificity(const Eigen::MatrixXd& B, const Eigen::VectorXd& p) {
    require_metric(p.size() == B.rows(), "p must have N entries");
    Eigen::VectorXd s(B.cols());
    for (Eigen::Index k = 0; k < B.cols(); ++k) s(k) = kl_bits(B.col(k), p);
    return s;
}

// clusterDissimilarity_hard; NIPS'15 §4: topic k's top-n words in no other topic's top n.
Eigen::VectorXd dissimilarity_hard(const Eigen::MatrixXd& B, int n) {
    return dissimilarity_hard_of_top(top_words(B, n));
}

Eigen::VectorXd dissimilarity_hard_of_top(const Eigen::MatrixXi& top) {
    // A topic's own top words are distinct, so "in no other top n" is "in exactly one".
    const Eigen::MatrixXi count = top_membership_counts(top);
    Eigen::VectorXd d = Eigen::VectorXd::Zero(top.rows());
    for (Eigen::Index k = 0; k < top.rows(); ++k)
        for (Eigen::Index j = 0; j < top.cols(); ++j)
            if (count(k, j) == 1) d(k) += 1;
    return d;
}

// clusterDissimilarity_symKL: mean_{l ≠ k} 0.5·(KL(b_k‖b_l) + KL(b_l‖b_k)), bits. K = 1:
// the mean of nothing, NaN (as MATLAB's mean([])).
// Every pair from K² dot products (N K² multiply-adds, where the pairs one by one took 2 N K²
// logarithms and 2 K² smoothed copies of a column): with q̃ = max(q, ε) / S_q,
// KL(p ‖ q) = Σ_{p_i ≠ 0} p_i log₂ p_i − Σ_i p_i log₂ max(q_i, ε) + (Σ p) log₂ S_q, the middle
// term entry (k, l) of Bᵀ log₂ max(B, ε) (a zero p_i adds 0 to it, as kl_bits skips it).
// The three terms are entropy-sized (~10 bits) and cancel for near-equal topics: rounding
// ~1e-13 bits absolute where the pairwise sums had less, far below any difference the
// measure is read for. One N-vector at a time beside B (not N × K more).
Eigen::VectorXd dissimilarity_soft(const Eigen::MatrixXd& B) {
    const Eigen::Index K = B.cols();
    const double eps = std::numeric_limits<double>::epsilon();  // MATLAB's eps, as kl_bits
    Eigen::MatrixXd cross(K, K);  // Σ_i B_ik log₂ max(B_il, ε), each a dot product (a fixed order)
    Eigen::VectorXd self(K), mass(K), log_sum(K);
    Eigen::VectorXd logs(B.rows());
    for (Eigen::Index l = 0; l < K; ++l) {
        logs = B.col(l).cwiseMax(eps);
        log_sum(l) = std::log2(logs.sum());
        logs = logs.array().log2().matrix();
        for (Eigen::Index k = 0; k < K; ++k) cross(k, l) = B.col(k).dot(logs);
        double bits = 0;
        for (Eigen::Index i = 0; i < B.rows(); ++i)
            if (B(i, l) != 0) bits += B(i, l) * std::log2(B(i, l));
        self(l) = bits;
        mass(l) = B.col(l).sum();
    }
    const auto kl = [&](Eigen::Index p, Eigen::Index q) { return self(p) - cross(p, q) + mass(p) * log_sum(q); };
    Eigen::VectorXd d(K);
    for (Eigen::Index k = 0; k < K; ++k) {
        double sum = 0;
        for (Eigen::Index l = 0; l < K; ++l)
            if (l != k) sum += 0.5 * (kl(k, l) + kl(l, k));
        d(k) = K > 1 ? sum / static_cast<double>(K - 1) : kNaN;
    }
    return d;
}

// clusterCoherence's loop order: for each topic, for each lower-ranked word (rank 2 .. n),
// every higher-ranked word before it.
std::vector<WordPair> coherence_pairs(const Eigen::MatrixXi& top) {
    std::vector<WordPair> pairs;
    const Eigen::Index n = top.cols();
    pairs.reserve(static_cast<std::size_t>(top.rows() * n * std::max<Eigen::Index>(n - 1, 0) / 2));
    for (Eigen::Index k = 0; k < top.rows(); ++k)
        for (Eigen::Index i = 1; i < n; ++i)
            for (Eigen::Index j = 0; j < i; ++j) pairs.push_back({top(k, j), top(k, i)});
    return pairs;
}

// clusterCoherence; NIPS'15 §4, AnchorFree §6.2 (Mimno et al. 2011): natural log, the
// denominator the higher-ranked word's document frequency.
Eigen::VectorXd coherence(const Eigen::MatrixXi& top, const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>& d1,
                          const std::vector<std::int64_t>& d2, double epsilon) {
    const std::vector<WordPair> pairs = coherence_pairs(top);
    require_metric(d2.size() == pairs.size(), "d2 must hold one count per coherence pair");
    for (Eigen::Index k = 0; k < top.rows(); ++k)
        for (Eigen::Index j = 0; j < top.cols(); ++j)
            require_metric(top(k, j) >= 0 && top(k, j) < d1.size(), "a top word id is outside d1");
    const Eigen::Index pairs_per_topic = top.rows() > 0 ? static_cast<Eigen::Index>(pairs.size()) / top.rows() : 0;
    Eigen::VectorXd c = Eigen::VectorXd::Zero(top.rows());
    for (std::size_t q = 0; q < pairs.size(); ++q) {
        const double joint = static_cast<double>(d2[q]) + epsilon;
        const double single = static_cast<double>(d1(pairs[q].higher));
        c(static_cast<Eigen::Index>(q) / pairs_per_topic) += std::log(joint / single);
    }
    return c;
}

// gensim's log_ratio_measure(normalize=True), aggregated by arithmetic_mean.
Eigen::VectorXd npmi(const Eigen::MatrixXi& top, const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>& d1,
                     const std::vector<std::int64_t>& d2, std::int64_t documents, double epsilon) {
    const std::vector<WordPair> pairs = coherence_pairs(top);
    require_metric(d2.size() == pairs.size(), "d2 must hold one count per coherence pair");
    require_metric(documents >= 1, "NPMI needs at least one document");
    for (Eigen::Index k = 0; k < top.rows(); ++k)
        for (Eigen::Index j = 0; j < top.cols(); ++j)
            require_metric(top(k, j) >= 0 && top(k, j) < d1.size(), "a top word id is outside d1");
    const Eigen::Index pairs_per_topic = top.rows() > 0 ? static_cast<Eigen::Index>(pairs.size()) / top.rows() : 0;
    const double M = static_cast<double>(documents);
    Eigen::VectorXd sums = Eigen::VectorXd::Zero(top.rows());
    for (std::size_t q = 0; q < pairs.size(); ++q) {
        const double joint = static_cast<double>(d2[q]) / M + epsilon;
        const double p_higher = static_cast<double>(d1(pairs[q].higher)) / M;
        const double p_lower = static_cast<double>(d1(pairs[q].lower)) / M;
        sums(static_cast<Eigen::Index>(q) / pairs_per_topic) += std::log(joint / (p_higher * p_lower)) / -std::log(joint);
    }
    // A topic with fewer than two top words has no pair: NaN, as a mean over nothing.
    return pairs_per_topic > 0 ? Eigen::VectorXd(sums / static_cast<double>(pairs_per_topic))
                               : Eigen::VectorXd::Constant(top.rows(), std::numeric_limits<double>::quiet_NaN());
}

// basisRank_hard: 1-based rank of s_k in column k sorted in decreasing order.
Eigen::VectorXd basis_rank_hard(const Eigen::MatrixXd& B, const std::vector<Index>& anchors) {
    require_anchors(B, anchors);
    Eigen::VectorXd r(B.cols());
    for (Eigen::Index k = 0; k < B.cols(); ++k) r(k) = rank_in_column(B.col(k), anchors[static_cast<std::size_t>(k)]);
    return r;
}

// basisRank_soft: log(max_i B_ik) − log(B_{s_k,k}), natural log as the authors' log().
Eigen::VectorXd basis_rank_soft(const Eigen::MatrixXd& B, const std::vector<Index>& anchors) {
    require_anchors(B, anchors);
    Eigen::VectorXd r(B.cols());
    for (Eigen::Index k = 0; k < B.cols(); ++k)
        r(k) = std::log(B.col(k).maxCoeff()) - std::log(B(anchors[static_cast<std::size_t>(k)], k));
    return r;
}

// basisQuality_hard: mean over l ≠ k of the 1-based rank of s_k in column l (NaN for K = 1).
Eigen::VectorXd basis_quality_hard(const Eigen::MatrixXd& B, const std::vector<Index>& anchors) {
    require_anchors(B, anchors);
    const Eigen::Index K = B.cols();
    Eigen::VectorXd q(K);
    for (Eigen::Index k = 0; k < K; ++k) {
        double sum = 0;
        for (Eigen::Index l = 0; l < K; ++l)
            if (l != k) sum += rank_in_column(B.col(l), anchors[static_cast<std::size_t>(k)]);
        q(k) = K > 1 ? sum / static_cast<double>(K - 1) : kNaN;
    }
    return q;
}

// basisQuality_soft: mean over l ≠ k of B_{s_k,l} (NaN for K = 1).
Eigen::VectorXd basis_quality_soft(const Eigen::MatrixXd& B, const std::vector<Index>& anchors) {
    require_anchors(B, anchors);
    const Eigen::Index K = B.cols();
    Eigen::VectorXd q(K);
    for (Eigen::Index k = 0; k < K; ++k) {
        const Index s = anchors[static_cast<std::size_t>(k)];
        double sum = 0;
        for (Eigen::Index l = 0; l < K; ++l)
            if (l != k) sum += B(s, l);
        q(k) = K > 1 ? sum / static_cast<double>(K - 1) : kNaN;
    }
    return q;
}

// AnchorFree §6.2 (after Arora et al. 2013): Σ_{l ≠ k} |top_n(k) ∩ top_n(l)| =
// Σ over topic k's top words w of (the number of topics with w in their top n) − 1.
Eigen::VectorXd simcount(const Eigen::MatrixXd& B, int n) {
    return simcount_of_top(top_words(B, n));
}

Eigen::VectorXd simcount_of_top(const Eigen::MatrixXi& top) {
    const Eigen::MatrixXi count = top_membership_counts(top);
    Eigen::VectorXd s = Eigen::VectorXd::Zero(top.rows());
    for (Eigen::Index k = 0; k < top.rows(); ++k)
        for (Eigen::Index j = 0; j < top.cols(); ++j) s(k) += count(k, j) - 1;
    return s;
}

}  // namespace jsmf::eval
