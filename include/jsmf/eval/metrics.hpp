// SPDX-License-Identifier: MIT
// The papers' quality metrics of a learned model, each a small local function.
//
// Sources: NIPS'15 §4 (Lee, Bindel, Mimno), practical-jsmf §5.1, AnchorFree §6.2, and
// the conventions of the authors' evaluation code (moontae/JSMF,
// codes/+evaluation/evaluateClusters.m), which jsmf follows so numbers compare:
// KL divergences and entropies in base 2, coherence in natural log; every metric is a
// mean and a standard deviation (N − 1 in the denominator) over its per-topic or
// per-word values. Shapes: B is N × K (column k = p(word | topic k)), B_breve is K × N
// (p(topic | word)), A is K × K, p is N (p(x = i), the unigram of the C that Bayes' rule
// used), anchors holds K word ids (0-based).
//
// The N × N metrics (recovery and approximation errors) and the corpus counts of
// coherence are distributed: see dist_metrics.hpp and codoc.hpp.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <vector>

#include "jsmf/core/types.hpp"

namespace jsmf::eval {

/// The papers' number of leading words per topic (dissimilarity, coherence, SimCount).
constexpr int kTopWords = 20;

/// Mean and sample standard deviation (N − 1; 0 for a single value; both NaN when there
/// is no value). As the authors' mean/std, a NaN value makes both NaN.
struct Summary {
    double mean = 0;
    double std = 0;
};
/// Local. Summary of `values` (NaN when any value is NaN).
Summary summarize(const Eigen::VectorXd& values);

/// Local. Column k's word ids in decreasing order of B_ik, the first `n` (ties: lower id
/// first; NaN first, as MATLAB's stable sort(..., 'descend')). K × n (n clipped to N).
/// Throws InputError for n < 0.
Eigen::MatrixXi top_words(const Eigen::MatrixXd& B, int n = kTopWords);

/// Local. Whether word a, of value x in a column, comes before word b, of value y, in the
/// column sorted as top_words: decreasing, NaN first, ties by the lower id (a strict weak
/// order on (value, id), so a column's order is the same whichever rows a rank holds).
bool ranks_before(double x, Index a, double y, Index b);

/// Legality: ΣA (1 for a joint distribution).
double legality(const Eigen::MatrixXd& A);

/// Validity: symmetric KL (base 2) between A's row sums and the Bayes-rule p(z),
/// p(z)_k = mean over words i with B_ik ≠ 0 of B̆_ki p(i) / B_ik. The issue skips every
/// word with B_ik = 0; the authors' marginalValidity (nanmean) skips only the 0/0 ones
/// and lets B̆_ki p(i)/0 = Inf through. Symmetric KL is the authors' symmetricKL:
/// ½(KL(a‖q) + KL(q‖a)), each KL with its second argument's entries below machine
/// epsilon raised to epsilon and renormalized (divergenceKL), 0 log 0 = 0.
double validity(const Eigen::MatrixXd& B, const Eigen::MatrixXd& A, const Eigen::MatrixXd& B_breve,
                const Eigen::VectorXd& p);

/// Local. The authors' symmetricKL in bits, ½(KL(p‖q) + KL(q‖p)), each KL with the epsilon
/// rule of validity (validity is symmetric_kl(A's row sums, the Bayes-rule p(z))).
double symmetric_kl(const Eigen::VectorXd& p, const Eigen::VectorXd& q);

/// Dominancy, per topic: A_kk / Σ_l A_kl.
Eigen::VectorXd dominancy(const Eigen::MatrixXd& A);

/// Entropy, per word: H(B̆_{:,i}) / log₂ K (base 2, 0 log 0 = 0; NaN for K = 1).
Eigen::VectorXd entropy(const Eigen::MatrixXd& B_breve);

/// Sparsity, per topic (Hoyer): (√N − ‖b_k‖₁/‖b_k‖₂) / (√N − 1).
Eigen::VectorXd sparsity(const Eigen::MatrixXd& B);

/// Specificity, per topic: KL(b_k ‖ p) base 2, p's entries below machine epsilon raised
/// to epsilon and p renormalized.
Eigen::VectorXd specificity(const Eigen::MatrixXd& B, const Eigen::VectorXd& p);

/// Hard dissimilarity, per topic: how many of topic k's top-n words are in no other
/// topic's top n.
Eigen::VectorXd dissimilarity_hard(const Eigen::MatrixXd& B, int n = kTopWords);

/// Local. dissimilarity_hard from the top words (top_words(B, n), K × n).
Eigen::VectorXd dissimilarity_hard_of_top(const Eigen::MatrixXi& top);

/// Soft dissimilarity, per topic: the mean over l ≠ k of the symmetric KL (base 2)
/// between b_k and b_l, ½(KL(b_k‖b_l) + KL(b_l‖b_k)) with the epsilon rule of validity
/// (the authors' clusterDissimilarity_symKL). NaN for K = 1.
Eigen::VectorXd dissimilarity_soft(const Eigen::MatrixXd& B);

/// The word pairs coherence needs: for each topic, every (higher-ranked x_j,
/// lower-ranked x_i) pair of its top-n words, K·n(n−1)/2 pairs in topic order and within
/// a topic in the authors' loop order (clusterCoherence): for i = rank 2 .. n, for
/// j = rank 1 .. i−1.
struct WordPair {
    Index higher = 0;  ///< x_j
    Index lower = 0;   ///< x_i
};
std::vector<WordPair> coherence_pairs(const Eigen::MatrixXi& top);

/// Coherence, per topic: Σ over its pairs of log((D2(x_i, x_j) + ε) / D1(x_j)), natural
/// log, ε = 0.01. `d2` holds one count per entry of coherence_pairs(top), in its order;
/// `d1` the document frequency of every word. InputError unless d2 has one count per
/// pair and every top word is an index of d1.
Eigen::VectorXd coherence(const Eigen::MatrixXi& top, const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>& d1,
                          const std::vector<std::int64_t>& d2, double epsilon = 0.01);

/// NPMI coherence (Bouma 2009; Lau et al. 2014), per topic: the mean over its pairs
/// (coherence_pairs) of ln((P(x_i, x_j) + ε) / (P(x_i) P(x_j))) / −ln(P(x_i, x_j) + ε), with
/// P(x) = d1(x) / documents and P(x_i, x_j) = d2 / documents, ε = 1e-12. That is gensim's
/// CoherenceModel(coherence='c_npmi') over the same documents and top-n words when every
/// document is one window (its window_size at least the longest document: a bag of words
/// has no word order to slide over); NPMI is symmetric, so gensim's mean over ordered
/// pairs is this mean over unordered ones. In [−1, 1]: 1 when two words always occur
/// together, 0 when independent, about −1 when they never do. A word in no document
/// makes its pairs +inf, as in gensim. InputError as coherence, and for documents < 1.
Eigen::VectorXd npmi(const Eigen::MatrixXi& top, const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>& d1,
                     const std::vector<std::int64_t>& d2, std::int64_t documents, double epsilon = 1e-12);

/// Basis rank (hard), per topic: the 1-based rank of anchor s_k in topic k's column
/// sorted in decreasing order (ties: lower id first, as top_words). Anchors must be K
/// word ids in 0 .. N−1 (InputError), for all four basis metrics.
Eigen::VectorXd basis_rank_hard(const Eigen::MatrixXd& B, const std::vector<Index>& anchors);
/// Basis rank (soft), per topic: ln(max_i B_ik) − ln(B_{s_k,k}) (natural log, the
/// authors' basisRank_soft).
Eigen::VectorXd basis_rank_soft(const Eigen::MatrixXd& B, const std::vector<Index>& anchors);
/// Basis quality (hard), per topic: the mean over l ≠ k of the 1-based rank of s_k in
/// topic l's sorted column (NaN for K = 1).
Eigen::VectorXd basis_quality_hard(const Eigen::MatrixXd& B, const std::vector<Index>& anchors);
/// Basis quality (soft), per topic: the mean over l ≠ k of B_{s_k,l} (NaN for K = 1).
Eigen::VectorXd basis_quality_soft(const Eigen::MatrixXd& B, const std::vector<Index>& anchors);

/// SimCount (AnchorFree §6.2), per topic k: Σ over l ≠ k of |top_n(k) ∩ top_n(l)|. The
/// paper's SimCount is the total over unordered topic pairs, Σ_k value_k / 2: its whole-
/// data tables report odd totals (Table 14: 13, 65, 1, …), impossible for a sum over
/// ordered pairs, and totals such as 36548 at F = 200 (Table 16), beyond any per-topic
/// value (at most 199·20 = 3980).
Eigen::VectorXd simcount(const Eigen::MatrixXd& B, int n = kTopWords);
/// Local. simcount from the top words (top_words(B, n), K × n).
Eigen::VectorXd simcount_of_top(const Eigen::MatrixXi& top);

}  // namespace jsmf::eval
