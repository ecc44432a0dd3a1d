// SPDX-License-Identifier: MIT
// Low-rank anchor words: anchors, B and A from the factor Y.
#include "jsmf/lowrank/law.hpp"
#include "jsmf/lowrank/point_finders.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "jsmf/core/error.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/blas.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/eval/metrics.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::lowrank {
namespace {

// A given anchor's squared residual norm at or below this share of its own squared norm
// is rounding: the word is in the span of those before it (relative residual 1e-10).
constexpr double kGivenAnchorResidual = 1e-20;

// The listed rows (ascending global ids) of a row-distributed block, on every rank.
Eigen::MatrixXd listed_rows(const mpi::Comm& comm, const distmat::RowPartition& rows, const std::vector<Index>& listed,
                            const Eigen::MatrixXd& X) {
    Eigen::MatrixXd out = Eigen::MatrixXd::Zero(static_cast<Index>(listed.size()), X.cols());
    const Index begin = rows.begin(comm.rank()), end = rows.end(comm.rank());
    for (std::size_t k = 0; k < listed.size(); ++k)
        if (listed[k] >= begin && listed[k] < end) out.row(static_cast<Index>(k)) = X.row(listed[k] - begin);
    distmat::sum_on_all_ranks(comm, out.data(), static_cast<std::size_t>(out.size()));  // one owner per row: exact
    return out;
}

// Greedy column-pivoted QR (modified Gram–Schmidt with pivoting) on a K × N matrix whose
// columns are spread over the ranks; `allowed` marks candidate columns. Every rank sees
// the largest residual norm, then the lowest word whose norm is within kPivotTie of it:
// every rank picks the same one, and its owner broadcasts the column.
// With `given` (global word ids, K of them), those words are the pivots, in their order
// (the user's anchor words): no search, no candidates; a given word whose residual norm is
// not positive (a zero row, or one that depends on the words before it) is an InputError.
void pivoted_qr(const mpi::Comm& comm, const distmat::RowPartition& rows, Eigen::MatrixXd work,
                const std::vector<char>& allowed, int K, const std::vector<Index>& given, LawResult& out) {
    const Index local = work.cols(), begin = rows.begin(comm.rank());
    std::vector<char> open(allowed);
    Eigen::VectorXd norms = work.colwise().squaredNorm().transpose();
    const Eigen::VectorXd original = norms;
    out.diag_r.resize(K);
    for (int k = 0; k < K; ++k) {
        Index chosen = 0;
        if (given.empty()) {
            double largest = -1.0;
            for (Index j = 0; j < local; ++j)
                if (open[static_cast<std::size_t>(j)]) largest = std::max(largest, norms(j));
            largest = mpi::allreduce_max(comm, largest);
            // Words tied to rounding go to the lowest id (exact as a double below 2^53).
            double word = std::numeric_limits<double>::infinity();
            for (Index j = 0; j < local && largest > 0; ++j)
                if (open[static_cast<std::size_t>(j)] && norms(j) >= (1 - kPivotTie) * largest) {
                    word = static_cast<double>(begin + j);
                    break;
                }
            word = mpi::allreduce_min(comm, word);
            const double value = largest > 0 ? largest : -1.0;
            mpi::run_local_phase(comm, "anchors", [&] {
                if (!(value > 0))
                    throw InputError("only " + std::to_string(k) + " words can be anchors (a positive row sum, enough "
                                     "documents, independent of the anchors before): fewer topics or a lower threshold");
            });
            chosen = static_cast<Index>(word);
        } else {
            chosen = given[static_cast<std::size_t>(k)];
        }
        const int owner = rows.owner(chosen);
        // The chosen column and its own squared norm (not the largest: within the tie they
        // differ), one broadcast from its owner.
        Eigen::VectorXd column(work.rows() + 2);
        if (comm.rank() == owner) {
            column.head(work.rows()) = work.col(chosen - begin);
            column(work.rows()) = norms(chosen - begin);
            column(work.rows() + 1) = original(chosen - begin);
            open[static_cast<std::size_t>(chosen - begin)] = 0;
        }
        mpi::broadcast(comm, column.data(), static_cast<std::size_t>(column.size()), owner);
        // A given word in the span of those before it leaves a residual of rounding only
        // (two words with the same documents have equal columns): refused, relative to its
        // own norm, on every rank alike (the broadcast values).
        if (!given.empty())
            mpi::run_local_phase(comm, "anchors", [&] {
                if (!(column(work.rows()) > kGivenAnchorResidual * column(work.rows() + 1)))
                    throw InputError("anchor word " + std::to_string(k + 1) + " (word id " + std::to_string(chosen) +
                                     ") depends on the anchor words before it: its row of C-bar is in their span");
            });
        column.conservativeResize(work.rows() + 1);
        const double r = std::sqrt(column(work.rows()));
        const Eigen::VectorXd q = column.head(work.rows()) / r;
        out.anchors.push_back(chosen);
        out.diag_r(k) = r;
        const Eigen::RowVectorXd projections = q.transpose() * work;
        work -= q * projections;
        norms = work.colwise().squaredNorm().transpose();
    }
}

// Collective. The user's anchor words: K of them, each a word id in range, given once, and
// occurring (a positive row sum of YYᵀ, in some document: checked by the word's owner).
void check_given_anchors(const mpi::Comm& comm, const distmat::RowPartition& rows, const std::vector<Index>& given,
                         const Eigen::VectorXd& d0, const std::vector<std::int64_t>& doc_freq, Index K) {
    const Index begin = rows.begin(comm.rank()), end = rows.end(comm.rank());
    mpi::run_local_phase(comm, "anchors", [&] {
        if (static_cast<Index>(given.size()) != K)
            throw InputError("LAW: " + std::to_string(given.size()) + " anchor words for K = " + std::to_string(K));
        std::vector<Index> sorted(given);
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t k = 0; k < sorted.size(); ++k) {
            if (sorted[k] < 0 || sorted[k] >= rows.size())
                throw InputError("anchors: word id " + std::to_string(sorted[k]) + " is out of range");
            if (k > 0 && sorted[k] == sorted[k - 1])
                throw InputError("anchors: word id " + std::to_string(sorted[k]) + " is given twice");
        }
        for (const Index s : given) {
            if (s < begin || s >= end) continue;
            if (!(doc_freq[static_cast<std::size_t>(s - begin)] > 0))
                throw InputError("anchors: word id " + std::to_string(s) + " never occurs in the used documents");
            if (!(d0(s - begin) > 0))  // its row of C̄ = diag(d₀)⁻¹YYᵀ is undefined
                throw InputError("anchors: word id " + std::to_string(s) + " is too rare for the rank-K factor: its "
                                 "row of YYᵀ sums to " + std::to_string(d0(s - begin)) +
                                 " (the factor cannot represent it; the dense pipeline can)");
        }
    });
}

}  // namespace

LawResult factorize_low_rank(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& Y,
                             const std::vector<std::int64_t>& doc_freq, const LawOptions& options) {
    Stopwatch clock;
    const Index K = Y.cols(), local = Y.rows(), begin = rows.begin(comm.rank());
    mpi::require_same_on_all_ranks(comm, {rows.size(), K, options.min_anchor_doc_freq}, "factorize_low_rank");
    mpi::run_local_phase(comm, "anchors", [&] {
        if (options.solver == recover::Solver::kl)
            throw OptionError("LAW: {solver} kl needs each word's whole row of C-bar, which the factor gives only in "
                              "projection (the dense pipeline has it)");
        if (local != rows.rows(comm.rank()) || static_cast<Index>(doc_freq.size()) != local ||
            (!options.solve_only.empty() && static_cast<Index>(options.solve_only.size()) != local))
            throw InternalError("factorize_low_rank: Y, doc_freq or solve_only does not match the partition");
    });
    LawResult out;

    // d₀ = YYᵀ1 and P₀ = R Yᵀ diag(d₀)⁻¹ (Y = QR): P₀ᵀP₀ = diag(d₀)⁻¹ Y YᵀY Yᵀ diag(d₀)⁻¹ = C̄ C̄ᵀ.
    const Eigen::VectorXd d0 = Y * distmat::column_sums(comm, Y);
    const distmat::TallQR qr = distmat::tall_qr(comm, Y);
    std::vector<char> allowed(static_cast<std::size_t>(local), 0);
    std::int64_t excluded[2] = {0, 0};  // barred for any reason; usable but below the threshold
    Eigen::MatrixXd P0 = qr.R * Y.transpose();
    for (Index j = 0; j < local; ++j) {
        const bool usable = d0(j) > 0 && doc_freq[static_cast<std::size_t>(j)] > 0;
        allowed[static_cast<std::size_t>(j)] = usable && doc_freq[static_cast<std::size_t>(j)] >= options.min_anchor_doc_freq;
        if (!allowed[static_cast<std::size_t>(j)]) ++excluded[0];
        if (usable && !allowed[static_cast<std::size_t>(j)]) ++excluded[1];
        if (usable) P0.col(j) /= d0(j);
        else P0.col(j).setZero();
    }
    mpi::allreduce_inplace(comm, excluded, 2, MPI_SUM);
    out.excluded_candidates = excluded[0];
    out.below_threshold = excluded[1];
    if (!options.anchors.empty()) check_given_anchors(comm, rows, options.anchors, d0, doc_freq, K);
    if (options.anchors.empty() && !anchors::is_pivoted_qr(options.finder)) {
        PointAnchors found = find_anchors_on_points(comm, rows, P0, allowed, static_cast<int>(K), options.finder);
        out.anchors = std::move(found.anchors);
        out.diag_r = std::move(found.diag_r);
    } else {
        pivoted_qr(comm, rows, P0, allowed, static_cast<int>(K), options.anchors, out);
    }

    // S′ = S ∪ {j : d₀_j < 0}, and F_js = −min(y_j·y_s, 0) for every local j, s ∈ S′.
    std::vector<std::int64_t> negative;
    for (Index j = 0; j < local; ++j)
        if (d0(j) < 0 && doc_freq[static_cast<std::size_t>(j)] > 0) negative.push_back(begin + j);
    std::vector<std::int64_t> all_negative = mpi::gather_concat(comm, negative, 0);
    std::int64_t count = static_cast<std::int64_t>(all_negative.size());
    mpi::broadcast(comm, count, 0);
    all_negative.resize(static_cast<std::size_t>(count));
    mpi::broadcast(comm, all_negative.data(), all_negative.size(), 0);
    std::vector<Index> S1(out.anchors.begin(), out.anchors.end());
    S1.insert(S1.end(), all_negative.begin(), all_negative.end());
    std::sort(S1.begin(), S1.end());
    S1.erase(std::unique(S1.begin(), S1.end()), S1.end());
    const Index s1 = static_cast<Index>(S1.size());
    const Eigen::MatrixXd Y_S1 = listed_rows(comm, rows, S1, Y), Q_S1 = listed_rows(comm, rows, S1, qr.Q);
    const Eigen::MatrixXd F = (-(Y * Y_S1.transpose())).cwiseMax(0.0);   // local × |S′|
    std::vector<char> in_S1(static_cast<std::size_t>(local), 0);
    for (const Index s : S1)
        if (s >= begin && s < begin + local) in_S1[static_cast<std::size_t>(s - begin)] = 1;

    // d = d₀ + E′1 and Qᵀ E′ on the columns: F's rows outside S′ also add to the S′ columns.
    // Rows 0..K−1: Σ q_i F_is, row K: Σ F_is, over i outside S′: a GEMM per run of rows
    // between S′'s, not a rank-1 update of the K × |S′| block per row (|S′| is the anchors
    // and the words whose d₀ < 0: 944 at 20,000 words, K = 100).
    Eigen::MatrixXd to_S1 = Eigen::MatrixXd::Zero(K + 1, s1);
    for (Index a = 0; a < local;) {
        if (in_S1[static_cast<std::size_t>(a)]) {
            ++a;
            continue;
        }
        Index b = a;
        while (b < local && !in_S1[static_cast<std::size_t>(b)]) ++b;
        if (K > 0 && s1 > 0)
            distmat::gemm('T', 'N', static_cast<int>(K), static_cast<int>(s1), static_cast<int>(b - a), 1.0,
                          qr.Q.data() + a, static_cast<int>(local), F.data() + a, static_cast<int>(local), 1.0,
                          to_S1.data(), static_cast<int>(K + 1));
        to_S1.row(K) += F.middleRows(a, b - a).colwise().sum();
        a = b;
    }
    distmat::sum_on_all_ranks(comm, to_S1.data(), static_cast<std::size_t>(to_S1.size()));
    out.word_mass = d0 + F.rowwise().sum();
    Eigen::MatrixXd P = qr.R * Y.transpose() + Q_S1.transpose() * F.transpose();  // K × local
    for (Index k = 0; k < s1; ++k)
        if (S1[static_cast<std::size_t>(k)] >= begin && S1[static_cast<std::size_t>(k)] < begin + local) {
            const Index j = S1[static_cast<std::size_t>(k)] - begin;
            out.word_mass(j) += to_S1(K, k);
            P.col(j) += to_S1.col(k).head(K);
        }
    std::vector<char> solvable(static_cast<std::size_t>(local), 0);
    for (Index j = 0; j < local; ++j) {
        solvable[static_cast<std::size_t>(j)] = out.word_mass(j) > 0 && doc_freq[static_cast<std::size_t>(j)] > 0;
        if (solvable[static_cast<std::size_t>(j)]) P.col(j) /= out.word_mass(j);
        else P.col(j).setZero();
    }
    out.correction.rows = S1;
    // Reserved to size: E′ can be most of F (20 Newsgroups, K = 100, one ENN iteration: 79 %
    // of |S′| × N), and growing by doubling would hold up to twice its 24 bytes an entry.
    const auto entries = options.list_correction ? static_cast<std::size_t>((F.array() > 0).count()) : 0;
    out.correction.entry_row.reserve(entries);
    out.correction.entry_col.reserve(entries);
    out.correction.entry_value.reserve(entries);
    for (Index j = 0; options.list_correction && j < local; ++j)
        for (Index k = 0; k < s1; ++k)
            if (F(j, k) > 0) {
                out.correction.entry_row.push_back(S1[static_cast<std::size_t>(k)]);
                out.correction.entry_col.push_back(begin + j);
                out.correction.entry_value.push_back(F(j, k));
            }

    // B̆ per word: min over the simplex of ‖P_S b − P_j‖ (active set on P_S = QR).
    Eigen::MatrixXd P_S = listed_rows(comm, rows, std::vector<Index>(out.anchors.begin(), out.anchors.end()) , P.transpose()).transpose();
    Eigen::MatrixXd B_breve = Eigen::MatrixXd::Zero(K, local);
    const bool on_qr = options.solver == recover::Solver::active_set;
    const solvers::ThinQr U = on_qr ? solvers::thin_qr(P_S) : solvers::ThinQr{};
    const Eigen::MatrixXd G = on_qr ? Eigen::MatrixXd() : Eigen::MatrixXd(P_S.transpose() * P_S);
    std::optional<solvers::AdmmDrSolver> admm;
    if (options.solver == recover::Solver::admm) admm.emplace(G, options.scls);
    std::vector<int> anchor_of(static_cast<std::size_t>(local), -1);
    for (Index k = 0; k < K; ++k)
        if (out.anchors[static_cast<std::size_t>(k)] >= begin && out.anchors[static_cast<std::size_t>(k)] < begin + local)
            anchor_of[static_cast<std::size_t>(out.anchors[static_cast<std::size_t>(k)] - begin)] = static_cast<int>(k);
    std::int64_t solved = 0, converged = 0, most_iterations = 0;
#pragma omp parallel for schedule(dynamic, 64) num_threads(distmat::threads()) reduction(+ : solved, converged) \
    reduction(max : most_iterations)
    for (Index j = 0; j < local; ++j) {
        if (const int k = anchor_of[static_cast<std::size_t>(j)]; k >= 0) {
            B_breve(k, j) = 1;
            continue;
        }
        if (!solvable[static_cast<std::size_t>(j)] || (!options.solve_only.empty() && !options.solve_only[static_cast<std::size_t>(j)]))
            continue;
        const solvers::SclsSolution s =
            on_qr ? solvers::solve_active_set_qr(U.R, U.Q.transpose() * P.col(j), options.scls)
                  : options.solver == recover::Solver::expgrad ? solvers::solve_expgrad(G, P_S.transpose() * P.col(j), options.scls)
                                                               : admm->solve(P_S.transpose() * P.col(j));
        B_breve.col(j) = s.y;
        most_iterations = std::max<std::int64_t>(most_iterations, s.iterations);
        ++solved;
        if (s.converged) ++converged;
    }
    out.words_solved = mpi::allreduce_sum(comm, solved);
    out.words_converged = mpi::allreduce_sum(comm, converged);
    out.most_iterations = mpi::allreduce_max(comm, most_iterations);

    // Bayes' rule: B_jk = B̆_kj d_j / Σ_j B̆_kj d_j.
    const Eigen::VectorXd mass = out.word_mass.cwiseMax(0.0);
    Eigen::VectorXd totals = B_breve * mass;
    distmat::sum_on_all_ranks(comm, totals.data(), static_cast<std::size_t>(totals.size()));
    out.B = (B_breve.transpose().array().colwise() * mass.array()).rowwise() / totals.transpose().array();
    out.B_breve = std::move(B_breve);

    // A = D⁻¹ (Y_S Y_Sᵀ + E′_SS) D⁻¹ = D⁻¹ max(Y_S Y_Sᵀ, 0) D⁻¹ with D = diag(B_S).
    const std::vector<Index> S(out.anchors.begin(), out.anchors.end());
    std::vector<Index> sorted_S = S;
    std::sort(sorted_S.begin(), sorted_S.end());
    const Eigen::MatrixXd Y_sorted = listed_rows(comm, rows, sorted_S, Y), B_sorted = listed_rows(comm, rows, sorted_S, out.B);
    Eigen::MatrixXd Y_S(K, K);
    Eigen::VectorXd b_S(K);
    for (Index k = 0; k < K; ++k) {
        const auto at = std::lower_bound(sorted_S.begin(), sorted_S.end(), S[static_cast<std::size_t>(k)]) - sorted_S.begin();
        Y_S.row(k) = Y_sorted.row(at);
        b_S(k) = B_sorted(at, k);
    }
    const Eigen::MatrixXd C_SS = (Y_S * Y_S.transpose()).cwiseMax(0.0);
    out.A = b_S.cwiseInverse().asDiagonal() * C_SS * b_S.cwiseInverse().asDiagonal();
    out.seconds = clock.seconds();
    return out;
}

std::vector<Index> most_frequent_words(const mpi::Comm& comm, const distmat::RowPartition& rows,
                                       const std::vector<std::int64_t>& doc_freq, Index n) {
    Eigen::MatrixXd local(static_cast<Index>(doc_freq.size()), 1);
    for (std::size_t i = 0; i < doc_freq.size(); ++i) local(static_cast<Index>(i), 0) = static_cast<double>(doc_freq[i]);
    const Eigen::VectorXd counts = distmat::gather_rows(comm, rows, local).col(0);  // exact below 2^53
    std::vector<Index> ids(static_cast<std::size_t>(counts.size()));
    std::iota(ids.begin(), ids.end(), Index{0});
    n = std::min<Index>(n, counts.size());
    std::partial_sort(ids.begin(), ids.begin() + n, ids.end(),
                      [&](Index a, Index b) { return counts(a) > counts(b) || (counts(a) == counts(b) && a < b); });
    ids.resize(static_cast<std::size_t>(n));
    std::sort(ids.begin(), ids.end());
    return ids;
}

EnnLook look_at_topics(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& Y,
                       const std::vector<std::int64_t>& doc_freq, LawOptions options, const std::vector<Index>& words,
                       const Eigen::VectorXd& mass) {
    const Index begin = rows.begin(comm.rank()), end = rows.end(comm.rank());
    options.solve_only.assign(static_cast<std::size_t>(Y.rows()), 0);
    options.list_correction = false;  // B and B̆ only: E′'s entries are the write's and the metrics'
    for (const Index w : words)
        if (w >= begin && w < end) options.solve_only[static_cast<std::size_t>(w - begin)] = 1;
    const LawResult law = factorize_low_rank(comm, rows, Y, doc_freq, options);
    Eigen::MatrixXd B = listed_rows(comm, rows, words, law.B);
    Eigen::VectorXd p(static_cast<Index>(words.size()));
    for (std::size_t i = 0; i < words.size(); ++i) p(static_cast<Index>(i)) = std::max(0.0, mass(words[i]));
    for (Index k = 0; k < B.cols(); ++k)
        if (const double s = B.col(k).sum(); s > 0) B.col(k) /= s;
    if (p.sum() > 0) p /= p.sum();
    return {eval::specificity(B, p).mean(), eval::dissimilarity_hard(B).mean()};
}

}  // namespace jsmf::lowrank
