// SPDX-License-Identifier: MIT
// Recovery and approximation errors of a compressed fit: exact against YYᵀ + E′ (K × K
// Gram matrices plus E′'s few entries); against the documents' C exact on span([Y B]) and
// estimated beyond it by probes.
#include "jsmf/lowrank/factor_metrics.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <utility>

#include "jsmf/core/error.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::lowrank {
namespace {

/// Per local word, its entries (index, value) in one array (CSR): a word's F entries by
/// index in S′, or its ẽ by anchor. 12 bytes an entry and 8 a word, where a vector per
/// word took 16 an entry plus its growth's slack and 24 a word (20 Newsgroups, K = 100,
/// one ENN iteration: 7.7 M entries a rank, ~150 MiB more; measured).
struct WordEntries {
    std::vector<std::int64_t> offsets;  // local + 1
    std::vector<std::int32_t> index;
    std::vector<double> value;

    /// Empty rows for `words` words (then count() each entry, allocate(), fill).
    void start(Index words) { offsets.assign(static_cast<std::size_t>(words) + 1, 0); }
    void count(Index word) { ++offsets[static_cast<std::size_t>(word) + 1]; }
    /// After the counts: the rows' offsets, and `fill` its next free slot per word.
    void allocate(std::vector<std::int64_t>& fill) {
        for (std::size_t w = 1; w < offsets.size(); ++w) offsets[w] += offsets[w - 1];
        index.resize(static_cast<std::size_t>(offsets.back()));
        value.resize(index.size());
        fill.assign(offsets.begin(), offsets.end() - 1);
    }
    template <class Visit>
    void for_each(Index word, Visit&& visit) const {
        for (auto t = offsets[static_cast<std::size_t>(word)]; t < offsets[static_cast<std::size_t>(word) + 1]; ++t)
            visit(Index{index[static_cast<std::size_t>(t)]}, value[static_cast<std::size_t>(t)]);
    }
};

/// The rows `which` (global ids) of a row-distributed block, on every rank.
Eigen::MatrixXd rows_everywhere(const mpi::Comm& comm, const distmat::RowPartition& partition,
                                const Eigen::MatrixXd& X, const std::vector<Index>& which) {
    Eigen::MatrixXd out = Eigen::MatrixXd::Zero(static_cast<Index>(which.size()), X.cols());
    const Index begin = partition.begin(comm.rank()), end = partition.end(comm.rank());
    for (std::size_t k = 0; k < which.size(); ++k)
        if (which[k] >= begin && which[k] < end) out.row(static_cast<Index>(k)) = X.row(which[k] - begin);
    distmat::sum_on_all_ranks(comm, out.data(), static_cast<std::size_t>(out.size()));
    return out;
}

double inverse(double x) { return x > 0 ? 1.0 / x : 0.0; }

/// An orthonormal basis (this rank's rows) of the span of a row-distributed block W, from
/// its Gram matrix WᵀW (the same bits on every rank): W T, T from WᵀW's eigenpairs above
/// 1e-12 of the largest (singular values above 1e-6 of the largest; the root's count and
/// T, adopted by every rank), then distmat::orthonormal_columns (CholeskyQR2 on a block
/// whose κ the scaling left near 1, with its checks and fallbacks), which leaves QᵀQ = I to
/// rounding. Not W's Householder Q: [Y B] can be rank
/// deficient (lowrank_test's planted fit after 3 ENN iterations: rank 2K − 1, its last
/// singular value 1e-16 of the first), and Householder completes a deficient block with a
/// direction that rounding picks, another at each rank count; here such directions are
/// dropped, and the span kept is the same at any rank count to rounding.
Eigen::MatrixXd span_basis(const mpi::Comm& comm, const Eigen::MatrixXd& W, const Eigen::MatrixXd& gram) {
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(gram);
    const Eigen::VectorXd& values = eig.eigenvalues();  // ascending
    const double largest = values.size() > 0 ? values(values.size() - 1) : 0.0;
    std::int64_t first = 0;
    while (first < values.size() && !(values(first) > 1e-12 * largest)) ++first;
    mpi::broadcast(comm, first, 0);  // the root's count: it sets every collective below
    const Index kept = values.size() - first;
    Eigen::MatrixXd T = eig.eigenvectors().rightCols(kept) * values.tail(kept).cwiseSqrt().cwiseInverse().asDiagonal();
    mpi::adopt_root_copy(comm, T.data(), static_cast<std::size_t>(T.size()));
    if (kept == 0) return Eigen::MatrixXd(W.rows(), 0);
    return distmat::orthonormal_columns(comm, W * T);
}

}  // namespace

int probe_batch_width(Index N) {
    return N <= 250000 ? 128 : static_cast<int>(std::max<Index>(16, 128 * 250000 / N / 8 * 8));
}

FactorMetrics factor_metrics(const CoocOperator& C, const FactorModel& m, int probes, Seed seed) {
    const mpi::Comm& comm = C.comm();
    const distmat::RowPartition& partition = C.rows();
    const Index N = partition.size(), K = m.A.rows(), begin = partition.begin(comm.rank());
    const Index local = partition.rows(comm.rank());
    FactorMetrics out;

    // E′ = max(F, Fᵀ): F's triplets (s, j), s among the few correction rows S′, are held by
    // the owner of column j. Each rank keeps its columns' entries outside S′ (a column's F
    // entries are also its row of E′, mirrored); the S′ × S′ block and the rows of Y, B at
    // S′ are replicated (|S′| × K). Nothing N-sized is: at N = 10⁶ every rank holding all
    // of E′'s positions in a hash map, and Y and B at every column E′ touches, ran two ranks
    // past 24 GB (measured).
    const std::vector<Index>& S1 = m.correction.rows;  // ascending
    const Index s1 = static_cast<Index>(S1.size());
    const auto index_in_S1 = [&](Index word) {  // or −1
        const auto at = std::lower_bound(S1.begin(), S1.end(), word);
        return at != S1.end() && *at == word ? static_cast<Index>(at - S1.begin()) : Index{-1};
    };
    std::vector<Index> own_in_S1(static_cast<std::size_t>(local), -1);  // per local word: its index in S′, or −1
    for (Index k = 0; k < s1; ++k)
        if (const Index i = S1[static_cast<std::size_t>(k)]; i >= begin && i < begin + local)
            own_in_S1[static_cast<std::size_t>(i - begin)] = k;
    WordEntries local_F;                                             // (index in S′, F_js) per local j ∉ S′
    Eigen::MatrixXd F_S1 = Eigen::MatrixXd::Zero(s1, s1);            // (index of j, index of s): F_js, j ∈ S′
    std::vector<Index> anchor_at(static_cast<std::size_t>(s1), -1);  // index in S′ → anchor k, or −1
    // The invariants checked on every rank, agreed before the collectives below: a rank
    // whose entries break them stops every rank with one message, none waits alone.
    mpi::run_local_phase(comm, "factor_metrics", [&] {
        const auto& E = m.correction;
        local_F.start(local);
        for (std::size_t t = 0; t < E.entry_value.size(); ++t) {
            const Index j = E.entry_col[t];
            if (index_in_S1(E.entry_row[t]) < 0 || j < begin || j >= begin + local)
                throw InternalError("factor_metrics: a correction entry outside S′ or on another rank");
            if (own_in_S1[static_cast<std::size_t>(j - begin)] < 0) local_F.count(j - begin);
        }
        std::vector<std::int64_t> next;
        local_F.allocate(next);
        for (std::size_t t = 0; t < E.entry_value.size(); ++t) {
            const Index row = index_in_S1(E.entry_row[t]), jl = E.entry_col[t] - begin;
            if (const Index column = own_in_S1[static_cast<std::size_t>(jl)]; column >= 0) {
                F_S1(column, row) = E.entry_value[t];
            } else {
                const auto slot = static_cast<std::size_t>(next[static_cast<std::size_t>(jl)]++);
                local_F.index[slot] = static_cast<std::int32_t>(row);
                local_F.value[slot] = E.entry_value[t];
            }
        }
        for (Index k = 0; k < K; ++k) {
            const Index at = index_in_S1(m.anchors[static_cast<std::size_t>(k)]);
            if (at < 0) throw InternalError("factor_metrics: an anchor outside the correction rows");
            anchor_at[static_cast<std::size_t>(at)] = k;
        }
    });
    distmat::sum_on_all_ranks(comm, F_S1.data(), static_cast<std::size_t>(F_S1.size()));  // one owner each
    const Eigen::MatrixXd E_S1 = F_S1.cwiseMax(F_S1.transpose());
    const Eigen::MatrixXd Y_S1 = rows_everywhere(comm, partition, m.Y, S1);
    const Eigen::MatrixXd B_S1 = rows_everywhere(comm, partition, m.B, S1);
    const Eigen::MatrixXd BA_S1 = B_S1 * m.A;
    const Eigen::VectorXd d_S1 = rows_everywhere(comm, partition, m.word_mass, S1).col(0);
    const Eigen::MatrixXd Y_S = rows_everywhere(comm, partition, m.Y, m.anchors);
    const Eigen::VectorXd d_S = rows_everywhere(comm, partition, m.word_mass, m.anchors).col(0);
    const bool root = comm.is_root();  // the replicated S′ × S′ block is added once
    // The per-entry loops below read one row of these per entry of E′: transposed, a row is
    // a contiguous column (K doubles), not K strided reads |S′| doubles apart (20
    // Newsgroups, K = 100: |S′| = 975, 8 M entries a rank).
    const Eigen::MatrixXd Yt_S1 = Y_S1.transpose(), Bt_S1 = B_S1.transpose(), BAt_S1 = BA_S1.transpose();

    // ‖Ĉ − BABᵀ‖²_F = ‖W‖² + 2⟨W, E′⟩ + ‖E′‖², W = YYᵀ − BABᵀ = [Y B] D [Y B]ᵀ of rank
    // ≤ 2K, D = diag(I, −A): with [Y B] = QR (TSQR), ‖W‖_F = ‖R D Rᵀ‖_F, without the
    // cancellation of ‖YYᵀ‖² − 2⟨YYᵀ, BABᵀ⟩ + ‖BABᵀ‖² when the fit is close (N < 2K: that).
    Eigen::MatrixXd YB(local, 2 * K);
    YB << m.Y, m.B;
    const Eigen::MatrixXd G = distmat::inner(comm, YB, YB);
    Eigen::MatrixXd D = Eigen::MatrixXd::Zero(2 * K, 2 * K);
    D.topLeftCorner(K, K).setIdentity();
    D.bottomRightCorner(K, K) = -m.A;
    double low_rank = 0;
    if (N >= 2 * K) {
        const Eigen::MatrixXd R = distmat::tall_qr(comm, YB).R;
        low_rank = (R * D * R.transpose()).squaredNorm();
    } else {
        const Eigen::MatrixXd DG = D * G;
        low_rank = (DG * DG).trace();
    }
    double sums[3] = {0, 0, 0};  // ⟨W, E′⟩, ‖E′‖², Σ_i (Ĉ − BABᵀ)_ii²
    const Eigen::MatrixXd BA = m.B * m.A;
    for (Index jl = 0; jl < local; ++jl) {  // F_js at (s, j) and (j, s)
        const Eigen::VectorXd y_j = m.Y.row(jl).transpose(), ba_j = BA.row(jl).transpose(), b_j = m.B.row(jl).transpose();
        local_F.for_each(jl, [&](Index k, double v) {
            const double w_js = y_j.dot(Yt_S1.col(k)) - ba_j.dot(Bt_S1.col(k));
            const double w_sj = Yt_S1.col(k).dot(y_j) - BAt_S1.col(k).dot(b_j);
            sums[0] += v * (w_js + w_sj);
            sums[1] += 2 * v * v;
        });
        const Index own = own_in_S1[static_cast<std::size_t>(jl)];
        const double e_jj = own < 0 ? 0.0 : E_S1(own, own);
        const double diagonal = m.Y.row(jl).squaredNorm() + e_jj - BA.row(jl).dot(m.B.row(jl));
        sums[2] += diagonal * diagonal;
    }
    if (root)
        for (Index a = 0; a < s1; ++a)
            for (Index b = 0; b < s1; ++b)
                if (const double v = E_S1(a, b); v > 0) {
                    sums[0] += v * (Yt_S1.col(a).dot(Yt_S1.col(b)) - BAt_S1.col(a).dot(Bt_S1.col(b)));
                    sums[1] += v * v;
                }
    distmat::sum_on_all_ranks(comm, sums, 3);
    const double total = std::max(0.0, low_rank + 2 * sums[0] + sums[1]);
    out.approximation = std::sqrt(total);
    out.approximation_offdiag = std::sqrt(std::max(0.0, total - sums[2]));

    // Recovery against C̄ = diag(d)⁻¹Ĉ, per word: r_i(j) = y_j·z_i + e′_ij/d_i − Σ_k B̆_ki ẽ_k(j)
    // with z_i = y_i/d_i − Σ_k B̆_ki y_{s_k}/d_{s_k} and ẽ_k = e′_{s_k}/d_{s_k}; its square
    // expands into K × K forms (Gram of Y, Ẽ Y, Ẽ Ẽᵀ) and E′'s entries in row i: for a
    // word outside S′ they sit at columns in S′ (replicated), a row in S′ spans the
    // columns of every rank, whose shares are summed.
    const Eigen::MatrixXd G_YY = G.topLeftCorner(K, K);
    Eigen::MatrixXd YS_scaled = Y_S;
    for (Index k = 0; k < K; ++k) YS_scaled.row(k) *= inverse(d_S(k));
    Eigen::MatrixXd tilde_S1 = Eigen::MatrixXd::Zero(K, s1);  // ẽ_k at the columns in S′
    for (Index a = 0; a < s1; ++a)
        if (const Index k = anchor_at[static_cast<std::size_t>(a)]; k >= 0) tilde_S1.row(k) = E_S1.row(a) * inverse(d_S(k));
    // ẼY and ẼẼᵀ: the local columns outside S′, then (once) the columns in S′.
    Eigen::MatrixXd EY = Eigen::MatrixXd::Zero(K, K), EE = Eigen::MatrixXd::Zero(K, K);
    WordEntries tilde;  // ẽ(j) at local j ∉ S′: (anchor k, value)
    tilde.start(local);
    for (Index jl = 0; jl < local; ++jl)
        local_F.for_each(jl, [&](Index a, double) {
            if (anchor_at[static_cast<std::size_t>(a)] >= 0) tilde.count(jl);
        });
    std::vector<std::int64_t> next;
    tilde.allocate(next);
    for (Index jl = 0; jl < local; ++jl) {
        local_F.for_each(jl, [&](Index a, double v) {
            if (const Index k = anchor_at[static_cast<std::size_t>(a)]; k >= 0) {
                const auto slot = static_cast<std::size_t>(next[static_cast<std::size_t>(jl)]++);
                tilde.index[slot] = static_cast<std::int32_t>(k);
                tilde.value[slot] = v * inverse(d_S(k));
            }
        });
        tilde.for_each(jl, [&](Index k, double e) { EY.row(k) += e * m.Y.row(jl); });
        tilde.for_each(jl, [&](Index k, double e) { tilde.for_each(jl, [&](Index l, double f) { EE(k, l) += e * f; }); });
    }
    if (root) {
        EY += tilde_S1 * Y_S1;
        EE += tilde_S1 * tilde_S1.transpose();
    }
    distmat::sum_on_all_ranks(comm, EY.data(), static_cast<std::size_t>(EY.size()));
    distmat::sum_on_all_ranks(comm, EE.data(), static_cast<std::size_t>(EE.size()));
    // z and B̆'s column of the words in S′, everywhere (one owner each).
    Eigen::MatrixXd Z_S1 = Eigen::MatrixXd::Zero(s1, K), Bb_S1 = Eigen::MatrixXd::Zero(s1, K);
    const auto z_of = [&](Index il, const Eigen::VectorXd& b) -> Eigen::VectorXd {
        return inverse(m.word_mass(il)) * m.Y.row(il).transpose() - YS_scaled.transpose() * b;
    };
    for (Index a = 0; a < s1; ++a)
        if (const Index i = S1[static_cast<std::size_t>(a)]; i >= begin && i < begin + local) {
            Bb_S1.row(a) = m.B_breve.col(i - begin).transpose();
            Z_S1.row(a) = z_of(i - begin, m.B_breve.col(i - begin)).transpose();
        }
    distmat::sum_on_all_ranks(comm, Z_S1.data(), static_cast<std::size_t>(Z_S1.size()));
    distmat::sum_on_all_ranks(comm, Bb_S1.data(), static_cast<std::size_t>(Bb_S1.size()));
    // Rows in S′: Σ over their entries of 2 v y_j·z/d + v²/d² − 2 v (B̆ᵀẽ(j))/d.
    Eigen::VectorXd S1_rows = Eigen::VectorXd::Zero(s1);
    const Eigen::MatrixXd Zt_S1 = Z_S1.transpose(), Bbt_S1 = Bb_S1.transpose();  // contiguous per entry, as above
    const auto entry_term = [&](Index a, double v, const Eigen::VectorXd& y_j, double anchors_at_j) {
        const double inv_d = inverse(d_S1(a));
        return 2 * inv_d * v * y_j.dot(Zt_S1.col(a)) + inv_d * inv_d * v * v - 2 * inv_d * v * anchors_at_j;
    };
    for (Index jl = 0; jl < local; ++jl) {
        const Eigen::VectorXd y_j = m.Y.row(jl).transpose();
        local_F.for_each(jl, [&](Index a, double v) {
            double anchors_at_j = 0;
            tilde.for_each(jl, [&](Index k, double e) { anchors_at_j += Bbt_S1(k, a) * e; });
            S1_rows(a) += entry_term(a, v, y_j, anchors_at_j);
        });
    }
    if (root)
        for (Index a = 0; a < s1; ++a)
            for (Index b = 0; b < s1; ++b)
                if (const double v = E_S1(a, b); v > 0)
                    S1_rows(a) += entry_term(a, v, Yt_S1.col(b), Bbt_S1.col(a).dot(tilde_S1.col(b)));
    distmat::sum_on_all_ranks(comm, S1_rows.data(), static_cast<std::size_t>(S1_rows.size()));
    out.recovery.resize(local);
    for (Index il = 0; il < local; ++il) {
        const double inv_d = inverse(m.word_mass(il));
        const Eigen::VectorXd b = m.B_breve.col(il);
        const Eigen::VectorXd z = z_of(il, b);
        double square = z.dot(G_YY * z) - 2 * b.dot(EY * z) + b.dot(EE * b);
        if (const Index own = own_in_S1[static_cast<std::size_t>(il)]; own >= 0) {
            square += S1_rows(own);
        } else {
            local_F.for_each(il, [&](Index a, double v) {  // E′ at (i, s) = F_is
                square += 2 * inv_d * v * Yt_S1.col(a).dot(z) + inv_d * inv_d * v * v -
                          2 * inv_d * v * b.dot(tilde_S1.col(a));
            });
        }
        out.recovery(il) = std::sqrt(std::max(0.0, square));
    }

    // Against the documents' C. R = C − BABᵀ (the approximation) and R̃ = diag(c)⁻¹C − B̆ᵀ
    // diag(c_S)⁻¹C_S (the recovery, by word) are linear in C, so R X and R̃ X come from one
    // product C X. With Q an orthonormal basis of [Y B] (its rank's columns, at most 2K; span_basis),
    //   ‖R‖²_F = ‖R Q‖²_F + ‖R (I − QQᵀ)‖²_F, and per word ‖r̃_i‖² = ‖r̃_i Q‖² + ‖r̃_i (I − QQᵀ)‖²:
    // the first terms exactly, by the 2K products C Q; the second by p Gaussian probes
    // projected off Q (Hutchinson: E ‖M (I − QQᵀ) g‖² = ‖M (I − QQᵀ)‖²_F, Q fixed before the
    // probes are drawn). C's dominant part lies in span(Y) and BABᵀ's in span(B), so what the
    // probes see is C's flat tail, which they measure with little spread (Hutch++'s idea with
    // the fit's own subspace; Meyer et al. 2021). Measured on KOS, K = 100 (a formed C, one
    // draw of 64 probes): a probe's spread 0.45 of ‖R‖² without Q and 0.015 with it (77 %
    // of ‖R‖² in the exact part); in the fit, the standard error 1.9e-2 at 1,024 bare probes
    // and 1.0e-3 at 256 beyond Q; and 30 % of
    // the words' squares (70 % left to the probes); at the NYTimes shape the approximation's
    // standard error fell from 4.3e-2 (1,024 bare probes) to 3.5e-9, nearly all of ‖R‖²
    // lying on Q. A word's own residual beyond Q is one row, whose probe squares have a
    // relative variance of 2 whatever Q is: 256 probes leave it (1/512)^½ = 4.4 % of that
    // part (1,024 bare probes: 2.2 % of the whole), the price of 456 columns for 1,024.
    // Batches of 128 columns up to N = 250,000 words, narrower above (32 at N = 10⁶; by N,
    // not N/P, so that the probes are the same at any rank count): a batch holds about five
    // N/P × width blocks besides the operator's buffers, and at N = 10⁶, 2 ranks, 128
    // columns took the run past 24 GB (measured).
    const Eigen::MatrixXd exact_directions = span_basis(comm, YB, G);
    YB.resize(0, 0);  // (N/P × 2K: not held through the products)
    out.probes = probes;
    out.exact_directions = static_cast<int>(exact_directions.cols());
    const Eigen::VectorXd c = C.row_sums();
    Eigen::VectorXd inv_c(local);
    for (Index il = 0; il < local; ++il) inv_c(il) = inverse(c(il));
    const Eigen::VectorXd c_S = rows_everywhere(comm, partition, c, m.anchors).col(0);
    // Per column of X: ‖R X‖² per column (summed over the ranks) and, per word, ‖(R̃ X)_i‖²
    // summed over the columns.
    const auto residuals = [&](const Eigen::MatrixXd& X, Eigen::VectorXd& word_squares) {
        const Eigen::MatrixXd CX = C.apply(X);
        const Eigen::MatrixXd residual = CX - BA * distmat::inner(comm, m.B, X);
        Eigen::MatrixXd CX_S = rows_everywhere(comm, partition, CX, m.anchors);
        for (Index k = 0; k < K; ++k) CX_S.row(k) *= inverse(c_S(k));
        word_squares += (inv_c.asDiagonal() * CX - m.B_breve.transpose() * CX_S).rowwise().squaredNorm();
        return Eigen::VectorXd(distmat::column_norms(comm, residual).array().square());
    };
    const int kBatch = probe_batch_width(N);
    double exact_squares = 0;
    Eigen::VectorXd word_exact = Eigen::VectorXd::Zero(local);
    for (Index first = 0; first < exact_directions.cols(); first += kBatch) {
        const Index width = std::min<Index>(kBatch, exact_directions.cols() - first);
        exact_squares += residuals(exact_directions.middleCols(first, width), word_exact).sum();
    }
    Eigen::ArrayXd per_probe(probes);
    Eigen::VectorXd word_squares = Eigen::VectorXd::Zero(local);
    for (int first = 0, batch = 0; first < probes; first += kBatch, ++batch) {
        const int width = std::min(kBatch, probes - first);
        Eigen::MatrixXd probe = distmat::random_rows(begin, local, width, seed * 1000003u + static_cast<Seed>(batch));
        if (exact_directions.cols() > 0) probe -= exact_directions * distmat::inner(comm, exact_directions, probe);
        per_probe.segment(first, width) = residuals(probe, word_squares).array();
    }
    const double mean = probes > 0 ? per_probe.mean() : 0.0;
    const double spread = probes > 1 ? std::sqrt((per_probe - mean).square().sum() / (probes - 1)) : 0.0;
    const Eigen::VectorXd c_ii = C.cooc_diagonal();
    double diagonal = 0;
    for (Index il = 0; il < local; ++il) {
        const double e = c_ii(il) - BA.row(il).dot(m.B.row(il));
        diagonal += e * e;
    }
    distmat::sum_on_all_ranks(comm, &diagonal, 1);
    const double original = exact_squares + mean;
    out.approximation_original = std::sqrt(original);
    out.approximation_offdiag_original = std::sqrt(std::max(0.0, original - diagonal));
    // (unknown below 2 probes: NaN, as the note then prints)
    out.approximation_original_relative_error = probes < 2 ? std::numeric_limits<double>::quiet_NaN()
                                                : original > 0 ? spread / std::sqrt(probes) / original : 0.0;
    const Eigen::VectorXd word_total = probes > 0 ? Eigen::VectorXd(word_exact + word_squares / probes) : word_exact;
    out.recovery_original = word_total.cwiseSqrt();
    double shares[2] = {word_total.sum() - word_exact.sum(), word_total.sum()};  // the probes' part, of all words' squares
    distmat::sum_on_all_ranks(comm, shares, 2);
    out.recovery_original_probed_share = shares[1] > 0 ? shares[0] / shares[1] : 1.0;
    return out;
}

Eigen::MatrixXd least_squares_a(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& Y,
                                const Correction& E, const Eigen::MatrixXd& B) {
    const Index K = B.cols(), begin = rows.begin(comm.rank());
    mpi::run_local_phase(comm, "recover", [&] {
        if (Y.rows() != B.rows() || Y.cols() != K || B.rows() != rows.rows(comm.rank()))
            throw InternalError("least_squares_a: Y or B does not match the partition");
    });
    // BᵀB and BᵀY, K × K each, summed over the ranks' rows.
    Eigen::MatrixXd grams(K, 2 * K);
    grams.leftCols(K) = B.transpose() * B;
    grams.rightCols(K) = B.transpose() * Y;
    distmat::sum_on_all_ranks(comm, grams.data(), static_cast<std::size_t>(grams.size()));
    // BᵀE′B with E′ = max(F, Fᵀ): a triplet (s, j, F_js) whose word j is outside S′ is
    // E′_js = E′_sj = F_js; the S′ × S′ block (both triplets, on their words' owners) is
    // summed into one replicated |S′| × |S′| matrix first, then maxed with its transpose.
    const std::vector<Index>& S = E.rows;
    const auto s1 = static_cast<Index>(S.size());
    const Eigen::MatrixXd B_S = rows_everywhere(comm, rows, B, S);
    const auto position = [&](Index word) {
        const auto at = std::lower_bound(S.begin(), S.end(), word);
        return at != S.end() && *at == word ? static_cast<Index>(at - S.begin()) : Index{-1};
    };
    Eigen::MatrixXd BEB = Eigen::MatrixXd::Zero(K, K), block = Eigen::MatrixXd::Zero(s1, s1);
    for (std::size_t t = 0; t < E.entry_value.size(); ++t) {
        const Index s = position(E.entry_row[t]), j = E.entry_col[t], at_j = position(j);
        const double v = E.entry_value[t];
        if (at_j >= 0) {
            block(s, at_j) = v;
        } else {
            const Eigen::VectorXd outer = v * B_S.row(s).transpose();
            BEB.noalias() += outer * B.row(j - begin);
        }
    }
    BEB += BEB.transpose().eval();  // the mirrored entries E′_sj
    distmat::sum_on_all_ranks(comm, BEB.data(), static_cast<std::size_t>(BEB.size()));
    distmat::sum_on_all_ranks(comm, block.data(), static_cast<std::size_t>(block.size()));  // one owner per entry: exact
    BEB += B_S.transpose() * block.cwiseMax(block.transpose()) * B_S;
    const Eigen::MatrixXd BtY = grams.rightCols(K);
    const Eigen::MatrixXd BtCB = BtY * BtY.transpose() + BEB;
    const Eigen::LDLT<Eigen::MatrixXd> BtB(grams.leftCols(K));
    const Eigen::MatrixXd left = BtB.solve(BtCB);                        // (BᵀB)⁻¹ Bᵀ Ĉ B
    const Eigen::MatrixXd A = BtB.solve(left.transpose()).transpose();  // … (BᵀB)⁻¹
    return 0.5 * (A + A.transpose());                                   // symmetric up to rounding; made exact
}

}  // namespace jsmf::lowrank
