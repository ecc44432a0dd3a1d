// SPDX-License-Identifier: MIT
// Recovery and approximation errors of a compressed fit: exact against YYᵀ + E′ (K × K
// Gram matrices plus E′'s few entries), estimated against the documents' C by probes.
#include "jsmf/lowrank/factor_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::lowrank {
namespace {

using Entries = std::vector<std::pair<Index, double>>;  // (index, value): a row of E′ by columns, or a column by anchors

/// E′ = max(F, Fᵀ) as positions: every rank's triplets on every rank, each position once.
std::unordered_map<std::int64_t, double> symmetric_positions(const mpi::Comm& comm, Index N, const Correction& E) {
    const std::vector<std::int64_t> rows = mpi::gather_concat(comm, E.entry_row, 0);
    const std::vector<std::int64_t> cols = mpi::gather_concat(comm, E.entry_col, 0);
    const std::vector<double> values = mpi::gather_concat(comm, E.entry_value, 0);
    std::int64_t count = static_cast<std::int64_t>(values.size());
    mpi::broadcast(comm, count, 0);
    std::vector<std::int64_t> r = rows, c = cols;
    std::vector<double> v = values;
    r.resize(static_cast<std::size_t>(count));
    c.resize(static_cast<std::size_t>(count));
    v.resize(static_cast<std::size_t>(count));
    mpi::broadcast(comm, r.data(), r.size(), 0);
    mpi::broadcast(comm, c.data(), c.size(), 0);
    mpi::broadcast(comm, v.data(), v.size(), 0);
    std::unordered_map<std::int64_t, double> positions;
    positions.reserve(2 * r.size());
    for (std::size_t k = 0; k < r.size(); ++k)
        for (const auto& [i, j] : {std::pair{r[k], c[k]}, std::pair{c[k], r[k]}}) {
            double& slot = positions[i * N + j];
            slot = std::max(slot, v[k]);
        }
    return positions;
}

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

}  // namespace

FactorMetrics factor_metrics(const DocumentOperator& C, const FactorModel& m, int probes, Seed seed) {
    const mpi::Comm& comm = C.comm();
    const distmat::RowPartition& partition = C.rows();
    const Index N = partition.size(), K = m.A.rows(), begin = partition.begin(comm.rank());
    const Index local = partition.rows(comm.rank());
    FactorMetrics out;

    // E′ by rows: this rank's rows and the anchors' rows; Y and B at every column they touch.
    const std::unordered_map<std::int64_t, double> positions = symmetric_positions(comm, N, m.correction);
    std::vector<Entries> local_rows(static_cast<std::size_t>(local));
    std::vector<Entries> anchor_rows(static_cast<std::size_t>(K));
    std::unordered_map<Index, Index> anchor_of;
    for (Index k = 0; k < K; ++k) anchor_of[m.anchors[static_cast<std::size_t>(k)]] = k;
    std::vector<Index> touched;
    for (const auto& [key, value] : positions) {
        const Index i = key / N, j = key % N;
        touched.push_back(j);
        if (i >= begin && i < begin + local) local_rows[static_cast<std::size_t>(i - begin)].emplace_back(j, value);
        if (const auto a = anchor_of.find(i); a != anchor_of.end())
            anchor_rows[static_cast<std::size_t>(a->second)].emplace_back(j, value);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    std::vector<Index> slot(static_cast<std::size_t>(N), -1);  // column j → its row in Y_J, B_J
    for (std::size_t t = 0; t < touched.size(); ++t) slot[static_cast<std::size_t>(touched[t])] = static_cast<Index>(t);
    // Row-major: the loops below read whole rows of these, one per entry of E′.
    using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const RowMajor Y_J = rows_everywhere(comm, partition, m.Y, touched);
    const RowMajor B_J = rows_everywhere(comm, partition, m.B, touched);
    const Eigen::MatrixXd Y_S = rows_everywhere(comm, partition, m.Y, m.anchors);
    const Eigen::VectorXd d_S = rows_everywhere(comm, partition, m.word_mass, m.anchors).col(0);

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
    for (Index il = 0; il < local; ++il) {
        const Eigen::RowVectorXd y_i = m.Y.row(il), ba_i = BA.row(il);  // contiguous for the entries' dots
        for (const auto& [j, v] : local_rows[static_cast<std::size_t>(il)]) {
            const Index t = slot[static_cast<std::size_t>(j)];
            sums[0] += v * (y_i.dot(Y_J.row(t)) - ba_i.dot(B_J.row(t)));
            sums[1] += v * v;
        }
        const auto own = positions.find((begin + il) * N + begin + il);
        const double e_ii = own == positions.end() ? 0.0 : own->second;
        const double diagonal = m.Y.row(il).squaredNorm() + e_ii - BA.row(il).dot(m.B.row(il));
        sums[2] += diagonal * diagonal;
    }
    distmat::sum_on_all_ranks(comm, sums, 3);
    const double total = std::max(0.0, low_rank + 2 * sums[0] + sums[1]);
    out.approximation = std::sqrt(total);
    out.approximation_offdiag = std::sqrt(std::max(0.0, total - sums[2]));

    // Recovery against C̄ = diag(d)⁻¹Ĉ, per word: r_i(j) = y_j·z_i + e′_ij/d_i − Σ_k B̆_ki ẽ_k(j)
    // with z_i = y_i/d_i − Σ_k B̆_ki y_{s_k}/d_{s_k} and ẽ_k = e′_{s_k}/d_{s_k}; its square
    // expands into K × K forms (Gram of Y, Ẽ Y, Ẽ Ẽᵀ) and E′'s entries in row i.
    const Eigen::MatrixXd G_YY = G.topLeftCorner(K, K);
    Eigen::MatrixXd YS_scaled = Y_S;
    for (Index k = 0; k < K; ++k) YS_scaled.row(k) *= inverse(d_S(k));
    // Ẽ by columns: at each column j that E′ touches, the anchors k with ẽ_k(j) ≠ 0 (so a
    // word's row of E′ meets the anchors' rows without a search per anchor, and ẼẼᵀ sums
    // the products within each column: Σ_j (entries in column j)², not K² searches).
    Eigen::MatrixXd EY = Eigen::MatrixXd::Zero(K, K), EE = Eigen::MatrixXd::Zero(K, K);
    std::vector<Entries> anchors_at(touched.size());
    for (Index k = 0; k < K; ++k)
        for (const auto& [j, v] : anchor_rows[static_cast<std::size_t>(k)]) {
            const double scaled = v * inverse(d_S(k));
            const Index t = slot[static_cast<std::size_t>(j)];
            anchors_at[static_cast<std::size_t>(t)].emplace_back(k, scaled);
            EY.row(k) += scaled * Y_J.row(t);
        }
    for (const Entries& column : anchors_at)
        for (const auto& [k, v] : column)
            for (const auto& [l, w] : column) EE(k, l) += v * w;
    out.recovery.resize(local);
    for (Index il = 0; il < local; ++il) {
        const double inv_d = inverse(m.word_mass(il));
        const Eigen::VectorXd b = m.B_breve.col(il);
        const Eigen::VectorXd z = inv_d * m.Y.row(il).transpose() - YS_scaled.transpose() * b;
        double square = z.dot(G_YY * z) - 2 * b.dot(EY * z) + b.dot(EE * b);
        for (const auto& [j, v] : local_rows[static_cast<std::size_t>(il)]) {
            const Index t = slot[static_cast<std::size_t>(j)];
            double anchors_at_j = 0;
            for (const auto& [k, e] : anchors_at[static_cast<std::size_t>(t)]) anchors_at_j += b(k) * e;
            square += 2 * inv_d * v * Y_J.row(t).dot(z) + inv_d * inv_d * v * v - 2 * inv_d * v * anchors_at_j;
        }
        out.recovery(il) = std::sqrt(std::max(0.0, square));
    }

    // Against the documents' C, by p probes G in batches of 128 columns up to N = 250,000
    // words, narrower above (32 at N = 10⁶; by N, not N/P, so that the probes are the same
    // at any rank count): a batch holds about five N/P × width blocks besides the operator's
    // buffers, and at N = 10⁶, 2 ranks, 128 columns took the run past 24 GB (measured).
    // (C − BABᵀ)G for the approximation, the recovery residual R G per word.
    out.probes = probes;
    const Eigen::VectorXd c = C.row_sums();
    Eigen::VectorXd inv_c(local);
    for (Index il = 0; il < local; ++il) inv_c(il) = inverse(c(il));
    const Eigen::VectorXd c_S = rows_everywhere(comm, partition, c, m.anchors).col(0);
    Eigen::ArrayXd per_probe(probes);
    Eigen::VectorXd word_squares = Eigen::VectorXd::Zero(local);
    const int kBatch = N <= 250000 ? 128 : static_cast<int>(std::max<Index>(16, 128 * 250000 / N / 8 * 8));
    for (int first = 0, batch = 0; first < probes; first += kBatch, ++batch) {
        const int width = std::min(kBatch, probes - first);
        const Eigen::MatrixXd probe =
            distmat::random_rows(begin, local, width, seed * 1000003u + static_cast<Seed>(batch));
        const Eigen::MatrixXd CG = C.apply(probe);
        const Eigen::MatrixXd residual = CG - BA * distmat::inner(comm, m.B, probe);
        per_probe.segment(first, width) = distmat::column_norms(comm, residual).array().square();
        Eigen::MatrixXd CG_S = rows_everywhere(comm, partition, CG, m.anchors);
        for (Index k = 0; k < K; ++k) CG_S.row(k) *= inverse(c_S(k));
        word_squares += (inv_c.asDiagonal() * CG - m.B_breve.transpose() * CG_S).rowwise().squaredNorm();
    }
    const double mean = per_probe.mean();
    const double spread = probes > 1 ? std::sqrt((per_probe - mean).square().sum() / (probes - 1)) : 0.0;
    const Eigen::VectorXd c_ii = C.cooc_diagonal();
    double diagonal = 0;
    for (Index il = 0; il < local; ++il) {
        const double e = c_ii(il) - BA.row(il).dot(m.B.row(il));
        diagonal += e * e;
    }
    distmat::sum_on_all_ranks(comm, &diagonal, 1);
    out.approximation_original = std::sqrt(mean);
    out.approximation_offdiag_original = std::sqrt(std::max(0.0, mean - diagonal));
    out.approximation_original_relative_error = mean > 0 ? spread / std::sqrt(probes) / mean : 0.0;
    out.recovery_original = (word_squares / probes).cwiseSqrt();
    return out;
}

}  // namespace jsmf::lowrank
