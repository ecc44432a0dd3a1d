// SPDX-License-Identifier: MIT
// Y₀ from the document operator, and ENN rectification of the factor.
#include "jsmf/lowrank/enn.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "jsmf/core/error.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/blas.hpp"
#include "jsmf/distmat/exchange.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "row_kernels.hpp"

namespace jsmf::lowrank {

distmat::EigOptions default_eig_options(int K, Seed seed) {
    distmat::EigOptions o;
    o.num_eigenpairs = K;
    o.tolerance = 1e-11;
    o.seed = seed;
    return o;
}

void fix_signs(const mpi::Comm& comm, Eigen::MatrixXd& V) {
    const Eigen::VectorXd sums = distmat::column_sums(comm, V);
    for (Index k = 0; k < V.cols(); ++k)
        if (sums(k) < 0) V.col(k) *= -1;
}

namespace {
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Y = V max(Λ, 0)^{1/2}, the columns' signs fixed.
Eigen::MatrixXd psd_factor(const mpi::Comm& comm, Eigen::MatrixXd V, const Eigen::VectorXd& values) {
    fix_signs(comm, V);
    return V * values.cwiseMax(0).cwiseSqrt().asDiagonal();
}
}  // namespace

Compression compress(const CoocOperator& C, int K, const distmat::EigOptions& options,
                     const Eigen::MatrixXd* warm_block, const Eigen::MatrixXd* warm_product) {
    Stopwatch clock;
    distmat::EigOptions o = options;
    o.num_eigenpairs = K;
    const Index before = C.products();
    const distmat::EigResult eig = distmat::top_eigenpairs([&](const Eigen::MatrixXd& X) { return C.apply(X); },
                                                           C.rows(), C.comm(), o, warm_block, warm_product);
    Compression out;
    out.Y = psd_factor(C.comm(), eig.vectors, eig.values);
    out.eigenvalues = eig.values;
    out.residuals = eig.residuals;
    out.products = static_cast<int>(C.products() - before);
    out.converged = eig.converged;
    out.seconds = clock.seconds();
    return out;
}

namespace {

// ENN deals the rows over the ranks by a fixed pseudo-random order, not by word id. Word
// ids usually follow frequency (UCI files, prepare's vocabulary), and F's nonzeros do not
// spread evenly over frequency (measured, 30,000-document corpus, N = 100,000, K = 100, 2
// ranks: the rank of the rare words held 4.6 M of F's entries, the other 0.9 M, and waited
// a quarter of every iteration in the reductions). The order depends on N only, so every
// rank count sees the same rows in the same order: the same ties, L in the same order, the
// same random columns in the solver's blocks.
struct RowShuffle {
    std::vector<Index> row_at;    // shuffled position q -> original row
    std::vector<Index> position;  // original row -> shuffled position q
};

RowShuffle shuffle_rows(Index n) {
    RowShuffle s;
    s.row_at.resize(static_cast<std::size_t>(n));
    std::iota(s.row_at.begin(), s.row_at.end(), Index{0});
    std::uint64_t state = 0x243f6a8885a308d3ULL;  // Fisher–Yates driven by splitmix64: portable bits
    for (Index i = n - 1; i > 0; --i) {
        state += 0x9e3779b97f4a7c15ULL;
        std::uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        std::swap(s.row_at[static_cast<std::size_t>(i)], s.row_at[static_cast<std::size_t>(z % static_cast<std::uint64_t>(i + 1))]);
    }
    s.position.resize(static_cast<std::size_t>(n));
    for (Index q = 0; q < n; ++q) s.position[static_cast<std::size_t>(s.row_at[static_cast<std::size_t>(q)])] = q;
    return s;
}

// Collective. The rows of a row-distributed block moved within the same partition: global
// row g goes to row target[g]. In rounds of at most 256 MiB per rank (MPI's int counts),
// as many on every rank (agreed).
Eigen::MatrixXd move_rows(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& X,
                          const std::vector<Index>& target) {
    const Index cols = X.cols(), local = X.rows(), begin = rows.begin(comm.rank());
    const std::size_t record = sizeof(std::int64_t) + static_cast<std::size_t>(cols) * sizeof(double);
    const Index chunk = std::max<Index>(1, static_cast<Index>((std::size_t{256} << 20) / record));
    const std::int64_t rounds = mpi::allreduce_max(comm, static_cast<std::int64_t>((local + chunk - 1) / chunk));
    Eigen::MatrixXd out(rows.rows(comm.rank()), cols);
    const RowMajor Xr = X;
    distmat::ByteMailbox mail(comm.size());
    for (std::int64_t round = 0; round < rounds; ++round) {
        const Index first = std::min(local, round * chunk), last = std::min(local, first + chunk);
        for (Index i = first; i < last; ++i) {
            const std::int64_t t = target[static_cast<std::size_t>(begin + i)];
            std::vector<char>& box = mail.to(rows.owner(t));
            const std::size_t at = box.size();
            box.resize(at + record);
            std::memcpy(box.data() + at, &t, sizeof t);
            std::memcpy(box.data() + at + sizeof t, Xr.data() + i * cols, record - sizeof t);
        }
        const std::vector<char> got = mail.exchange(comm);
        const Index my_begin = rows.begin(comm.rank());
        Eigen::VectorXd row(cols);
        for (std::size_t at = 0; at < got.size(); at += record) {
            std::int64_t t;
            std::memcpy(&t, got.data() + at, sizeof t);
            std::memcpy(row.data(), got.data() + at + sizeof t, record - sizeof t);
            out.row(t - my_begin) = row.transpose();
        }
    }
    return out;
}

// The checked pairs of one ENN iteration: L and F = −min(Y Y_Lᵀ, 0) on this rank's rows,
// kept by panels of rows, each as it is cheapest to apply: a panel where F is dense enough
// stays a dense m × l block (two GEMMs per product run at a large fraction of DGEMM
// peak), a sparser one goes into CSR (its rows also give Fᵀ, by scattering). Early iterations have ~40 % of the
// checked pairs negative, late ones a few percent (measured on KOS), so both occur.
// Fᵀ X's blocks of local rows (kEnnTransposeBlockRows; row_kernel_bench's BM_EnnCorrection
// measures them).
Index transpose_blocks(Index local) { return (local + kEnnTransposeBlockRows - 1) / kEnnTransposeBlockRows; }

struct CheckedPairs {
    std::vector<Index> L;                   // global rows, ascending
    std::vector<Index> position;            // per local row: its index in L, or −1
    // The sparse panels' F by local rows (CSR; columns index L; a dense panel's rows are
    // empty here) ...
    std::vector<std::int64_t> row_offsets{0};
    std::vector<std::uint32_t> row_cols;
    std::vector<double> row_values;
    std::vector<char> outside;              // per local row: not in L (its F row also gives Fᵀ's)
    // ... and the sparse panels' F transposed, over the rows outside L only, by blocks of
    // kEnnTransposeBlockRows local rows (per block, per column j of L, the block's rows
    // ascending: block b's column j is CSR row b·l + j): Fᵀ X as a gather, each of its rows
    // summed over the local rows in ascending order, block after block, as scattering F's
    // rows would (the same bits), 1.4–1.5 times faster (the output row stays in registers;
    // row_kernel_bench's BM_EnnCorrection). By blocks, the gathered rows of X come from a
    // block that stays in cache; whole, each column read its rows of X from memory, every
    // row of X ~60 times per product at N = 10⁶. 12 more bytes per nonzero of those rows,
    // and 8 l bytes of offsets per block (16 l while they are built).
    std::vector<std::int64_t> col_offsets;
    std::vector<std::uint32_t> col_rows;
    std::vector<double> col_values;
    // L's positions by owner: L ascends and each rank's rows are contiguous, so rank r
    // owns positions owned[r] .. owned[r + 1] − 1.
    std::vector<std::int64_t> owned;
    struct DensePanel {
        Index begin = 0;                    // first local row
        Eigen::MatrixXd Ft;                 // Fᵀ: l × m (a row of F is a column), zeros kept
    };
    std::vector<DensePanel> dense;
    double mass = 0;                        // 1ᵀE1, over all ranks
    Index nonzeros = 0;                     // of E, over all ranks
    double imbalance = 1;                   // F's entries: the largest rank's over the mean
};

// The l rows of largest norm over all ranks (ties: the lower row); ascending. Each rank
// offers its own l best, the root picks and broadcasts.
std::vector<Index> largest_rows(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& Y,
                                Index l) {
    const Index begin = rows.begin(comm.rank());
    const Eigen::VectorXd norms = Y.rowwise().squaredNorm();
    std::vector<Index> order(static_cast<std::size_t>(Y.rows()));
    std::iota(order.begin(), order.end(), Index{0});
    const auto better = [&](Index a, Index b) { return norms(a) > norms(b) || (norms(a) == norms(b) && a < b); };
    const Index offer = std::min<Index>(l, Y.rows());
    std::partial_sort(order.begin(), order.begin() + offer, order.end(), better);
    std::vector<double> offered_norms;
    std::vector<std::int64_t> offered_rows;
    for (Index k = 0; k < offer; ++k) {
        offered_norms.push_back(norms(order[static_cast<std::size_t>(k)]));
        offered_rows.push_back(begin + order[static_cast<std::size_t>(k)]);
    }
    const std::vector<double> all_norms = mpi::gather_concat(comm, offered_norms, 0);
    const std::vector<std::int64_t> all_rows = mpi::gather_concat(comm, offered_rows, 0);
    std::vector<std::int64_t> chosen(static_cast<std::size_t>(l));
    if (comm.is_root()) {
        std::vector<std::size_t> idx(all_rows.size());
        std::iota(idx.begin(), idx.end(), std::size_t{0});
        std::partial_sort(idx.begin(), idx.begin() + l, idx.end(), [&](std::size_t a, std::size_t b) {
            return all_norms[a] > all_norms[b] || (all_norms[a] == all_norms[b] && all_rows[a] < all_rows[b]);
        });
        for (Index k = 0; k < l; ++k) chosen[static_cast<std::size_t>(k)] = all_rows[idx[static_cast<std::size_t>(k)]];
        std::sort(chosen.begin(), chosen.end());
    }
    mpi::broadcast(comm, chosen.data(), chosen.size(), 0);
    return {chosen.begin(), chosen.end()};
}

// The listed rows of a row-distributed block, replicated (each filled by its owner).
void add_listed_rows(const distmat::RowPartition& rows, int rank, const std::vector<Index>& listed,
                     const Eigen::MatrixXd& X, Eigen::Ref<Eigen::MatrixXd> out) {
    const Index begin = rows.begin(rank), end = rows.end(rank);
    const auto first = std::lower_bound(listed.begin(), listed.end(), begin);
    for (auto it = first; it != listed.end() && *it < end; ++it) out.row(it - listed.begin()) = X.row(*it - begin);
}

// Local. Rows first .. first + m − 1 of a column-major block, row-major.
RowMajor rows_of(const Eigen::MatrixXd& Y, Index first, Index m) { return Y.middleRows(first, m); }

// Local. y·z for two rows of K doubles, in a fixed order (four running sums, added in
// order). (DGEMM's entry for the same pair may differ by rounding: which of the two
// computes a pair depends on its panel, so on the rank count, as the solver's sums do.)
double dot_fixed(const double* y, const double* z, Index K) {
    double s[4] = {0, 0, 0, 0};
    Index k = 0;
    for (; k + 4 <= K; k += 4)
        for (int q = 0; q < 4; ++q) s[q] += y[k + q] * z[k + q];
    for (; k < K; ++k) s[0] += y[k] * z[k];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

// Local. Appends to `out` the j < n with !(g[j] >= margin) (NaN included), ascending. Most
// cosines are far above the margin: a run of 16 is tested at once (SSE's not-greater-or-
// equal compare, true for NaN as the scalar test is) and read again only when it holds a
// candidate.
void list_below(const float* g, Index n, float margin, std::vector<std::uint32_t>& out) {
    constexpr Index run = 16;
    Index j = 0;
#if defined(__SSE2__)
    const __m128 m = _mm_set1_ps(margin);
    for (; j + run <= n; j += run) {
        const __m128 below = _mm_or_ps(_mm_or_ps(_mm_cmpnge_ps(_mm_loadu_ps(g + j), m), _mm_cmpnge_ps(_mm_loadu_ps(g + j + 4), m)),
                                       _mm_or_ps(_mm_cmpnge_ps(_mm_loadu_ps(g + j + 8), m), _mm_cmpnge_ps(_mm_loadu_ps(g + j + 12), m)));
        if (_mm_movemask_ps(below) != 0)
            for (Index q = j; q < j + run; ++q)
                if (!(g[q] >= margin)) out.push_back(static_cast<std::uint32_t>(q));
    }
#endif
    for (; j < n; ++j)
        if (!(g[j] >= margin)) out.push_back(static_cast<std::uint32_t>(j));
}

// Local. Unit rows (each row over its norm, scaled against underflow; a zero row stays
// zero, so its pairs are all computed again) in single precision, column-major m × K.
Eigen::MatrixXf unit_rows_single(const RowMajor& rows) {
    Eigen::MatrixXf out(rows.rows(), rows.cols());
    for (Index i = 0; i < rows.rows(); ++i) {
        const double norm = rows.row(i).stableNorm();
        if (norm > 0)
            out.row(i) = (rows.row(i) / norm).cast<float>();
        else
            out.row(i).setZero();
    }
    return out;
}

// Local. c's col_* from its sparse rows outside L (a counting sort by block and column;
// rows are visited ascending, so each block's column's rows ascend).
void transpose_outside(CheckedPairs& c, Index l) {
    const Index local = static_cast<Index>(c.outside.size());
    const auto slot_of = [l](Index i, std::uint32_t j) {
        return static_cast<std::size_t>((i / kEnnTransposeBlockRows) * l + static_cast<Index>(j));
    };
    c.col_offsets.assign(static_cast<std::size_t>(transpose_blocks(local) * l) + 1, 0);
    for (Index i = 0; i < local; ++i)
        if (c.outside[static_cast<std::size_t>(i)])
            for (auto k = c.row_offsets[static_cast<std::size_t>(i)]; k < c.row_offsets[static_cast<std::size_t>(i) + 1]; ++k)
                ++c.col_offsets[slot_of(i, c.row_cols[static_cast<std::size_t>(k)]) + 1];
    for (std::size_t s = 1; s < c.col_offsets.size(); ++s) c.col_offsets[s] += c.col_offsets[s - 1];
    c.col_rows.resize(static_cast<std::size_t>(c.col_offsets.back()));
    c.col_values.resize(c.col_rows.size());
    std::vector<std::int64_t> at(c.col_offsets.begin(), c.col_offsets.end() - 1);
    for (Index i = 0; i < local; ++i)
        if (c.outside[static_cast<std::size_t>(i)])
            for (auto k = c.row_offsets[static_cast<std::size_t>(i)]; k < c.row_offsets[static_cast<std::size_t>(i) + 1]; ++k) {
                const auto slot = static_cast<std::size_t>(at[slot_of(i, c.row_cols[static_cast<std::size_t>(k)])]++);
                c.col_rows[slot] = static_cast<std::uint32_t>(i);
                c.col_values[slot] = c.row_values[static_cast<std::size_t>(k)];
            }
}

CheckedPairs check_pairs(const mpi::Comm& comm, const distmat::RowPartition& rows, const Eigen::MatrixXd& Y, Index l,
                         double dense_panel_density, bool screen_in_single, double recompute_share) {
    CheckedPairs c;
    c.L = largest_rows(comm, rows, Y, l);
    const Index K = Y.cols(), local = Y.rows(), begin = rows.begin(comm.rank());
    Eigen::MatrixXd Y_L = Eigen::MatrixXd::Zero(l, K);
    add_listed_rows(rows, comm.rank(), c.L, Y, Y_L);
    distmat::sum_on_all_ranks(comm, Y_L.data(), static_cast<std::size_t>(Y_L.size()));  // one owner per row: exact
    c.owned.assign(static_cast<std::size_t>(comm.size()) + 1, 0);
    for (int r = 0; r < comm.size(); ++r)
        c.owned[static_cast<std::size_t>(r) + 1] = std::lower_bound(c.L.begin(), c.L.end(), rows.end(r)) - c.L.begin();
    c.position.assign(static_cast<std::size_t>(local), -1);
    for (std::size_t j = 0; j < c.L.size(); ++j)
        if (c.L[j] >= begin && c.L[j] < begin + local) c.position[static_cast<std::size_t>(c.L[j] - begin)] = static_cast<Index>(j);

    // F in panels of rows: Gᵀ = Y_L Y_panelᵀ (l × m: a row of G is a contiguous column),
    // keep −min(G, 0). Most pairs are far from negative (late iterations: 0.2 % of them
    // negative on a 10⁵-word corpus), so the sign is screened first on the cosines in
    // single precision (SGEMM, twice DGEMM's rate): a cosine computed in float is within
    // (K + 3)·2⁻²⁴ of the exact one (K products summed, and the rows rounded to float), so a
    // pair whose float cosine is at least that is positive for sure (the margin is twice it:
    // slack for denormals and the norms' rounding); every other pair, and any NaN, is
    // computed again in double, one dot product in a fixed order. A panel where such
    // candidates are many (early iterations: up to ~40 % of pairs negative) is computed
    // whole by DGEMM instead (above `recompute_share` of its pairs). F is the
    // double-precision F either way.
    const Index panel = 1024;
    const float cosine_margin = static_cast<float>(2.0 * static_cast<double>(K + 3) * std::ldexp(1.0, -24));
    const RowMajor Y_L_rows = Y_L;
    const Eigen::MatrixXf Y_L_unit = screen_in_single ? unit_rows_single(Y_L_rows) : Eigen::MatrixXf();
    Eigen::MatrixXd Gt(l, std::min(panel, std::max<Index>(local, 1)));
    Eigen::MatrixXf Gt_single(screen_in_single ? l : 0, screen_in_single ? Gt.cols() : 0);
    std::vector<std::pair<std::uint32_t, double>> found;  // one row's negatives: (j, g)
    std::vector<std::int64_t> candidate_offsets;          // a screened panel's candidates, by row
    std::vector<std::uint32_t> candidate_cols;
    double local_mass = 0;
    Index local_nonzeros = 0, local_entries = 0;
    for (Index i0 = 0; i0 < local; i0 += panel) {
        const Index m = std::min(panel, local - i0);
        bool whole = !screen_in_single;  // G of the whole panel in double (Gt)
        RowMajor panel_rows;
        if (screen_in_single && K > 0 && l > 0) {
            panel_rows = rows_of(Y, i0, m);
            const Eigen::MatrixXf unit = unit_rows_single(panel_rows);
            distmat::gemm('N', 'T', static_cast<int>(l), static_cast<int>(m), static_cast<int>(K), 1.0f, Y_L_unit.data(),
                          static_cast<int>(l), unit.data(), static_cast<int>(m), 0.0f, Gt_single.data(),
                          static_cast<int>(l));
            // The candidates listed in one pass over the cosines; past the share the panel
            // goes to DGEMM whole and the list is dropped.
            const double most = recompute_share * static_cast<double>(m * l);
            candidate_offsets.assign(1, 0);
            candidate_cols.clear();
            for (Index i = 0; i < m && !whole; ++i) {
                list_below(Gt_single.data() + i * l, l, cosine_margin, candidate_cols);
                candidate_offsets.push_back(static_cast<std::int64_t>(candidate_cols.size()));
                whole = static_cast<double>(candidate_cols.size()) > most;
            }
        }
        if (whole && K > 0 && l > 0)
            distmat::gemm('N', 'T', static_cast<int>(l), static_cast<int>(m), static_cast<int>(K), 1.0, Y_L.data(),
                          static_cast<int>(l), Y.data() + i0, static_cast<int>(local), 0.0, Gt.data(), static_cast<int>(l));
        // Row i's negative pairs (j ascending), in double.
        const auto negatives_of = [&](Index i, std::vector<std::pair<std::uint32_t, double>>& out) {
            out.clear();
            if (K == 0 || l == 0) return;
            if (whole) {
                const double* g_row = Gt.data() + i * l;
                for (Index j = 0; j < l; ++j)
                    if (g_row[j] < 0) out.emplace_back(static_cast<std::uint32_t>(j), g_row[j]);
                return;
            }
            const double* y = panel_rows.data() + i * K;
            for (auto k = candidate_offsets[static_cast<std::size_t>(i)]; k < candidate_offsets[static_cast<std::size_t>(i) + 1]; ++k) {
                const std::uint32_t j = candidate_cols[static_cast<std::size_t>(k)];
                if (const double g = dot_fixed(y, Y_L_rows.data() + static_cast<Index>(j) * K, K); g < 0) out.emplace_back(j, g);
            }
        };
        // Counted first: the panel's share of negatives decides how F keeps it.
        Index negative = 0;
        std::vector<std::int64_t> panel_offsets{0};
        std::vector<std::uint32_t> panel_cols;
        std::vector<double> panel_values;
        for (Index i = 0; i < m; ++i) {
            negatives_of(i, found);
            // E = max(F, Fᵀ): a pair outside × inside counts twice (both triangles),
            // inside × inside once (F's own rows in L supply the L × L block).
            const double weight = c.position[static_cast<std::size_t>(i0 + i)] < 0 ? 2.0 : 1.0;
            for (const auto& [j, g] : found) {
                local_mass -= weight * g;
                local_nonzeros += weight > 1 ? 2 : 1;
                panel_cols.push_back(j);
                panel_values.push_back(-g);
            }
            negative += static_cast<Index>(found.size());
            panel_offsets.push_back(static_cast<std::int64_t>(panel_cols.size()));
        }
        local_entries += negative;
        if (static_cast<double>(negative) >= dense_panel_density * static_cast<double>(m * l)) {
            CheckedPairs::DensePanel d{i0, Eigen::MatrixXd::Zero(l, m)};
            for (Index i = 0; i < m; ++i)
                for (auto k = panel_offsets[static_cast<std::size_t>(i)]; k < panel_offsets[static_cast<std::size_t>(i) + 1]; ++k)
                    d.Ft(panel_cols[static_cast<std::size_t>(k)], i) = panel_values[static_cast<std::size_t>(k)];
            c.dense.push_back(std::move(d));
            for (Index i = 0; i < m; ++i) c.row_offsets.push_back(static_cast<std::int64_t>(c.row_cols.size()));
            continue;
        }
        const auto base = static_cast<std::int64_t>(c.row_cols.size());
        c.row_cols.insert(c.row_cols.end(), panel_cols.begin(), panel_cols.end());
        c.row_values.insert(c.row_values.end(), panel_values.begin(), panel_values.end());
        for (Index i = 0; i < m; ++i) c.row_offsets.push_back(base + panel_offsets[static_cast<std::size_t>(i) + 1]);
    }
    c.outside.resize(static_cast<std::size_t>(local));
    for (Index i = 0; i < local; ++i) c.outside[static_cast<std::size_t>(i)] = c.position[static_cast<std::size_t>(i)] < 0;
    transpose_outside(c, l);
    // E's: F's and the mirrors of rows outside L; and F's own entries
    double totals[3] = {local_mass, static_cast<double>(local_nonzeros), static_cast<double>(local_entries)};
    distmat::sum_on_all_ranks(comm, totals, 3);
    c.mass = totals[0];
    c.nonzeros = static_cast<Index>(std::llround(totals[1]));
    const double largest = static_cast<double>(mpi::allreduce_max(comm, static_cast<std::int64_t>(local_entries)));
    c.imbalance = totals[2] > 0 ? largest * comm.size() / totals[2] : 1.0;
    return c;
}

// The correction's entries times ω (EnnOptions::relaxation): F's rows, their mirror by
// columns and the dense panels; c.mass stays E's own.
void relax(CheckedPairs& c, double omega) {
    for (double& v : c.row_values) v *= omega;
    for (double& v : c.col_values) v *= omega;
    for (CheckedPairs::DensePanel& d : c.dense) d.Ft *= omega;
}

// out row r += Σ_k values[k] · X row cols[k] for the CSR's `rows` rows, the threads taking
// blocks of `block` rows (each row summed by one thread, in its nonzeros' order: the same
// bits at any thread count).
void gather_in_blocks(const std::int64_t* offsets, const std::vector<std::uint32_t>& cols,
                      const std::vector<double>& values, Index rows, Index block, const double* X, Index p, double* out) {
#pragma omp parallel for schedule(dynamic) num_threads(distmat::threads())
    for (Index b = 0; b < rows; b += block)
        detail::csr_gather(offsets, cols.data(), values.data(), b, std::min(rows, b + block), X, p, out);
}

// X ↦ (YYᵀ + E + r·11ᵀ) X on this rank's rows. Three collectives: [Y 1]ᵀX summed on
// every rank; X_L gathered from its owners; FᵀX (over the rows outside L) summed to the
// owners of L's rows, the only ones that add it. Dense products by BLAS; F's sparse rows by
// the row kernels: F X_L gathers rows of the small l × p block, Fᵀ X gathers rows of X by
// F's transpose (each sum over the rows in ascending order: the same bits at any thread
// count).
Eigen::MatrixXd apply_corrected(const mpi::Comm& comm, const Eigen::MatrixXd& Y, const CheckedPairs& c, double r,
                                const Eigen::MatrixXd& X) {
    const Index K = Y.cols(), p = X.cols(), local = X.rows();
    const Index l = static_cast<Index>(c.L.size());
    JSMF_REQUIRE(Y.rows() == local && static_cast<Index>(c.position.size()) == local,
                 "ENN: the block does not match the factor's rows");
    Eigen::MatrixXd small = Eigen::MatrixXd::Zero(K + 1, p);
    if (local > 0 && K > 0 && p > 0)
        distmat::gemm('T', 'N', static_cast<int>(K), static_cast<int>(p), static_cast<int>(local), 1.0, Y.data(),
                      static_cast<int>(local), X.data(), static_cast<int>(local), 0.0, small.data(),
                      static_cast<int>(K + 1));
    small.row(K) = X.colwise().sum();
    distmat::sum_on_all_ranks(comm, small.data(), static_cast<std::size_t>(small.size()));
    const RowMajor Xr = X;
    std::vector<std::int64_t> blocks(c.owned.size());  // L's rows by owner, in doubles
    for (std::size_t q = 0; q < blocks.size(); ++q) blocks[q] = c.owned[q] * p;
    RowMajor X_L(l, p);
    for (Index i = 0; i < local; ++i)
        if (const Index j = c.position[static_cast<std::size_t>(i)]; j >= 0) X_L.row(j) = Xr.row(i);
    mpi::allgather_blocks(comm, X_L.data(), blocks);

    RowMajor FtX = RowMajor::Zero(l, p);
    for (Index b = 0; b < transpose_blocks(local); ++b)  // block b's rows of Fᵀ are CSR rows b·l … b·l + l − 1
        gather_in_blocks(c.col_offsets.data() + b * l, c.col_rows, c.col_values, l, 64, Xr.data(), p, FtX.data());
    if (!c.dense.empty()) {
        // Dense panels' Fᵀ X over their rows outside L: X with the rows in L zeroed. In
        // column-major terms a row-major block is its transpose: FtXᵀ += X̃ᵀ F.
        RowMajor outside = Xr;
        for (Index i = 0; i < local; ++i)
            if (c.position[static_cast<std::size_t>(i)] >= 0) outside.row(i).setZero();
        for (const CheckedPairs::DensePanel& d : c.dense)
            distmat::gemm('N', 'T', static_cast<int>(p), static_cast<int>(l), static_cast<int>(d.Ft.cols()), 1.0,
                          outside.data() + d.begin * p, static_cast<int>(p), d.Ft.data(), static_cast<int>(l), 1.0,
                          FtX.data(), static_cast<int>(p));
    }
    const Index first_owned = c.owned[static_cast<std::size_t>(comm.rank())];
    RowMajor mine(c.owned[static_cast<std::size_t>(comm.rank()) + 1] - first_owned, p);
    if (comm.size() == 1)
        mine = std::move(FtX);
    else
        mpi::sum_to_owners(comm, FtX.data(), mine.data(), blocks);

    // The result row-major (the row kernels add whole rows): in column-major terms its
    // transpose, outᵀ = smallᵀ Yᵀ, then r·(Σ X)ᵀ on every row; one transposing copy at the end.
    RowMajor out(local, p);
    if (local > 0 && p > 0) {
        if (K > 0)
            distmat::gemm('T', 'T', static_cast<int>(p), static_cast<int>(local), static_cast<int>(K), 1.0,
                          small.data(), static_cast<int>(K + 1), Y.data(), static_cast<int>(local), 0.0, out.data(),
                          static_cast<int>(p));
        else
            out.setZero();
    }
    out.rowwise() += r * small.row(K);
    for (const CheckedPairs::DensePanel& d : c.dense)  // out_panelᵀ += X_Lᵀ Fᵀ
        distmat::gemm('N', 'N', static_cast<int>(p), static_cast<int>(d.Ft.cols()), static_cast<int>(l), 1.0, X_L.data(),
                      static_cast<int>(p), d.Ft.data(), static_cast<int>(l), 1.0, out.data() + d.begin * p,
                      static_cast<int>(p));
    gather_in_blocks(c.row_offsets.data(), c.row_cols, c.row_values, local, 256, X_L.data(), p, out.data());
    for (Index i = 0; i < local; ++i)
        if (const Index j = c.position[static_cast<std::size_t>(i)]; j >= 0) out.row(i) += mine.row(j - first_owned);
    return Eigen::MatrixXd(out);
}

// A lower bound of the corrected operator's spectrum that holds by construction:
// λ_min(YYᵀ + E + r·11ᵀ) ≥ 0 − ρ(E) + min(r·N, 0). YYᵀ is PSD; E (times ω) is nonnegative
// with a zero diagonal, so its eigenvalues lie in [−ρ(E), ρ(E)] and ρ(E) is at most its
// largest row sum (Gershgorin: E·1 is one product of a single column through E's own
// kernels); r·11ᵀ has the one nonzero eigenvalue r·N. A short Lanczos run only estimates
// λ_min, widened by its gap to the next Ritz value, and on ENN's operator (top K far above
// a cluster near 0) that gap is the top's: measured at the NYTimes shape, an estimate of
// −1.5e-7 where λ_min was −3.9e-9, and a filter damping that whole interval needed two
// rounds per middle projection instead of one.
double corrected_spectrum_floor(const mpi::Comm& comm, const CheckedPairs& c, double r, Index N) {
    const Index local = static_cast<Index>(c.position.size());
    const Eigen::MatrixXd no_factor(local, 0);
    const Eigen::MatrixXd row_sums = apply_corrected(comm, no_factor, c, 0.0, Eigen::MatrixXd::Ones(local, 1));
    const double largest = mpi::allreduce_max(comm, row_sums.size() > 0 ? row_sums.maxCoeff() : 0.0);
    return -largest + std::min(r * static_cast<double>(N), 0.0);
}

}  // namespace

// ‖ZZᵀ − YYᵀ‖_F / ‖YYᵀ‖_F from K × K products only. Not as ‖ZZᵀ‖² + ‖YYᵀ‖² − 2⟨ZZᵀ, YYᵀ⟩:
// that cancels to rounding below a relative change of ~1e-8 (the log showed "change 0"
// for half of a run's late iterations). With D = Z − Y (the columns' signs are fixed, so
// D is small when the factor settles), ZZᵀ − YYᵀ = D Zᵀ + Y Dᵀ, whose squared norm
// tr(DᵀD ZᵀZ) + tr(DᵀD YᵀY) + 2 tr(ZᵀD YᵀD) is a sum of small terms. One Gram matrix of
// [Y D] gives every product: ZᵀZ = YᵀY + YᵀD + DᵀY + DᵀD, ZᵀD = YᵀD + DᵀD.
double factor_change(const mpi::Comm& comm, const Eigen::MatrixXd& Y, const Eigen::MatrixXd& Z) {
    const Index K = Y.cols();
    Eigen::MatrixXd YD(Y.rows(), 2 * K);
    YD << Y, Z - Y;
    const Eigen::MatrixXd G = distmat::gram(comm, YD);
    const Eigen::MatrixXd yy = G.topLeftCorner(K, K), yd = G.topRightCorner(K, K), dd = G.bottomRightCorner(K, K);
    const Eigen::MatrixXd zz = yy + yd + yd.transpose() + dd, zd = yd + dd;
    const double change2 = (dd * zz).trace() + (dd * yy).trace() + 2 * (zd * yd).trace();
    const double base2 = yy.squaredNorm();  // ‖YYᵀ‖_F² = ‖YᵀY‖_F²
    return base2 > 0 ? std::sqrt(std::max(0.0, change2) / base2) : 0.0;
}

double projection_tolerance(const EnnOptions& options, double tight, const std::vector<EnnIteration>& trace,
                            bool end, Index corrections) {
    // Exact where E is empty: the operator YYᵀ + r·11ᵀ is then rank K + 1 with a null
    // space, where the filter's lower bound is rounding (measured: on a planted corpus the
    // first, verified, projection took 131 products on one rank and 267 on two), and an
    // inexact solve's landing point follows its filter: models of 1 and 2 ranks 5e-8
    // apart. With E's negative eigenvalues the bound is E's.
    if (end || corrections == 0 || trace.empty() || !(options.forcing > 0)) return tight;
    return std::max(tight, std::min(options.loosest_tolerance, options.forcing * trace.back().change));
}

rectify::StopReason enn_verdict(const std::vector<EnnIteration>& trace, const EnnStop& stop) {
    if (trace.empty()) return rectify::StopReason::none;
    const EnnIteration& last = trace.back();
    if (last.corrections == 0 && last.change <= stop.fixed_point_change) return rectify::StopReason::fixed_point;
    if (stop.window < 1) return rectify::StopReason::none;
    const auto looked = [](const EnnIteration& it) {
        return std::isfinite(it.look_specificity) && std::isfinite(it.look_dissimilarity);
    };
    // Only right after a look: the verdict is about the model as it was last seen.
    if (!looked(last)) return rectify::StopReason::none;
    std::vector<const EnnIteration*> looks;
    for (const EnnIteration& it : trace)
        if (looked(it)) looks.push_back(&it);
    const std::size_t w = static_cast<std::size_t>(stop.window);
    if (looks.size() < 2 * w) return rectify::StopReason::none;
    // The means of two windows, not single looks: the looks jitter by about a per cent as
    // near-tied anchors trade places (KOS, K = 100). No allowance for a larger jitter: on
    // SpamAssassin at K = 50 the looks jittered by 5–10 % over iterations 10–60 and then
    // rose for 90 more (the written model's specificity +4.6 %, dissimilarity +16 % from
    // iteration 61 to 150; jobs/BENCHMARKS.md).
    const auto mean = [&](std::size_t from, double EnnIteration::*figure) {
        double sum = 0;
        for (std::size_t k = from; k < from + w; ++k) sum += looks[k]->*figure;
        return sum / static_cast<double>(w);
    };
    const std::size_t recent = looks.size() - w, before = looks.size() - 2 * w;
    for (double EnnIteration::*figure : {&EnnIteration::look_specificity, &EnnIteration::look_dissimilarity}) {
        const double a = mean(before, figure), b = mean(recent, figure);
        if (!(std::abs(a - b) <= stop.tolerance * std::max(std::abs(a), std::abs(b)))) return rectify::StopReason::none;
    }
    return rectify::StopReason::quality;
}

EnnResult rectify_enn(const mpi::Comm& comm, const distmat::RowPartition& rows, Eigen::MatrixXd Y,
                      const EnnOptions& options, const EnnProgress& progress, const EnnCheckpoint& checkpoint,
                      const EnnState* resume) {
    Stopwatch total;
    const Index N = rows.size(), K = resume ? resume->Y.cols() : Y.cols();
    const Index l = options.checked_rows > 0 ? std::min(N, options.checked_rows) : std::min(N, 10 * K + 1000);
    const int first = resume ? resume->iterations_done : 0;
    mpi::require_same_on_all_ranks(comm, {N, K, l, options.iterations, first},
                                   "rectify_enn");
    mpi::run_local_phase(comm, "enn", [&] {
        const Index local = rows.rows(comm.rank());
        if (!resume && Y.rows() != local) throw InternalError("rectify_enn: Y does not match the partition");
        if (options.iterations < 0) throw OptionError("{iterations} must be at least 0");
        if (!(options.relaxation > 0 && options.relaxation < 2))
            throw OptionError("{enn_relaxation} must lie in (0, 2)");
        if (resume && (resume->Y.rows() != local || resume->warm.rows() != local || first < 0 ||
                       first > options.iterations || static_cast<int>(resume->trace.size()) != first))
            throw InputError("ENN: the state to resume from does not fit this run (its K, N or iterations)");
    });
    distmat::EigOptions eig = options.eig;
    eig.num_eigenpairs = static_cast<int>(K);
    if (eig.oversampling < 0) eig.oversampling = kEnnOversampling;
    EnnResult result;
    result.checked_rows = l;
    const RowShuffle shuffle = shuffle_rows(N);
    // From here on row q is word shuffle.row_at[q].
    Y = move_rows(comm, rows, resume ? resume->Y : Y, shuffle.position);
    Eigen::MatrixXd warm = resume ? move_rows(comm, rows, resume->warm, shuffle.position) : Y;
    if (resume) {
        eig.lower_bound = resume->lower_bound;
        result.trace = resume->trace;
    }
    const double N2 = static_cast<double>(N) * static_cast<double>(N);
    // The float screen pays while few checked pairs are negative (it then replaces DGEMM
    // by SGEMM and a few dot products); F changes slowly, so the last iteration's E (in
    // the trace, so a resumed run decides the same) says whether it will.
    const auto screen = [&](const std::vector<EnnIteration>& trace) {
        if (!(options.screen_below > 0)) return false;
        if (trace.empty()) return true;
        const double pairs = 2.0 * static_cast<double>(N) * static_cast<double>(l);  // E's entries ≈ 2 × F's
        return static_cast<double>(trace.back().corrections) < options.screen_below * pairs;
    };
    const double recompute_share = 2 * options.screen_below;
    // The last iteration: the count's, or the one after the quality verdict (a projection
    // with the check for missed eigenvalues, so the model it ends on is verified as a
    // fixed count's last is). A resumed run reads the verdict from the trace.
    int last_iteration = options.iterations;
    const auto settle = [&](rectify::StopReason why, int done) {
        result.stop_reason = why;
        last_iteration = std::min(options.iterations, done + 1);
    };
    if (options.stop && first > 0 && first < options.iterations)
        if (const rectify::StopReason why = enn_verdict(result.trace, *options.stop); why == rectify::StopReason::quality)
            settle(why, first);
    for (int t = first; t < last_iteration; ++t) {
        Stopwatch clock;
        EnnIteration it;
        Stopwatch check_clock;
        CheckedPairs c = check_pairs(comm, rows, Y, l, options.dense_panel_density, screen(result.trace), recompute_share);
        it.check_seconds = check_clock.seconds();
        Index dense_rows = 0;
        for (const auto& d : c.dense) dense_rows += d.Ft.cols();
        it.dense_share = Y.rows() > 0 ? static_cast<double>(dense_rows) / static_cast<double>(Y.rows()) : 0.0;
        it.imbalance = c.imbalance;
        const bool end = t == 0 || t + 1 == last_iteration;
        const double omega = end ? 1.0 : options.relaxation;
        if (omega != 1) relax(c, omega);
        const double mass_of_yy = distmat::column_sums(comm, Y).squaredNorm();  // 1ᵀYYᵀ1
        it.r = (1 - mass_of_yy - omega * c.mass) / N2;
        it.negative_mass = c.mass;
        it.corrections = c.nonzeros;
        Index products = 0;
        const distmat::SymmetricOperator op = [&](const Eigen::MatrixXd& X) {
            ++products;
            it.columns += X.cols();
            return apply_corrected(comm, Y, c, it.r, X);
        };
        // The previous spectrum's lower end stands for this one's (the Chebyshev filter
        // only needs a bound below what it damps; a Ritz value below it triggers a fresh
        // Lanczos estimate), and the check for missed eigenvalues runs on the first and
        // the last projection: in between the warm block comes from the previous top K.
        // Estimates of λ_min are never taken below this operator's proven floor.
        distmat::EigOptions step = eig;
        it.spectrum_floor = corrected_spectrum_floor(comm, c, it.r, N);
        step.spectrum_floor = it.spectrum_floor;
        step.verify_steps = end ? eig.verify_steps : 0;
        step.tolerance = projection_tolerance(options, eig.tolerance, result.trace, end, c.nonzeros);
        const distmat::EigResult e = distmat::top_eigenpairs(op, rows, comm, step, &warm);
        c = CheckedPairs{};  // F's memory to the look at the topics (the heap keeps it for reuse)
        eig.lower_bound = std::isfinite(e.next_lower_bound) ? std::min(e.lower_bound, e.next_lower_bound) : e.lower_bound;
        Eigen::MatrixXd next = psd_factor(comm, e.vectors, e.values);
        it.change = factor_change(comm, Y, next);
        it.products = static_cast<int>(products);
        it.eig_converged = e.converged;
        Y = std::move(next);
        warm = e.block;
        const int done = t + 1;
        const bool look = options.stop && options.look && options.stop->look_every > 0 && done % options.stop->look_every == 0 &&
                          done < last_iteration;
        if (look) {
            const EnnLook seen = options.look(move_rows(comm, rows, Y, shuffle.row_at));
            it.look_specificity = seen.specificity;
            it.look_dissimilarity = seen.dissimilarity;
        }
        it.seconds = clock.seconds();
        result.trace.push_back(it);
        if (progress) progress(done, it);
        // The verdict is the trace's (replicated figures): every rank stops after the same iteration.
        if (options.stop && done < last_iteration) {
            const rectify::StopReason why = enn_verdict(result.trace, *options.stop);
            // A fixed point ends without a further verified projection: with no correction
            // the operator is YYᵀ + r·11ᵀ (r at rounding level), whose top K is span(Y).
            if (why == rectify::StopReason::fixed_point) {
                result.stop_reason = why;
                break;
            }
            if (why == rectify::StopReason::quality) settle(why, done);
        }
        if (checkpoint && options.checkpoint_due && done < last_iteration && options.checkpoint_due(done)) {
            EnnState state;
            state.iterations_done = t + 1;
            state.Y = move_rows(comm, rows, Y, shuffle.row_at);
            state.warm = move_rows(comm, rows, warm, shuffle.row_at);
            state.lower_bound = eig.lower_bound;
            state.trace = result.trace;
            checkpoint(state);
        }
    }
    const CheckedPairs last = check_pairs(comm, rows, Y, l, options.dense_panel_density, screen(result.trace), recompute_share);
    result.final_negative_mass = last.mass;
    result.final_negative_entries = last.nonzeros;
    result.unchecked_pairs = static_cast<double>(N - l) * static_cast<double>(N - l);
    result.Y = move_rows(comm, rows, Y, shuffle.row_at);
    result.seconds = total.seconds();
    for (int t = 0; t < first; ++t) result.seconds += result.trace[static_cast<std::size_t>(t)].seconds;  // before the resume
    return result;
}

}  // namespace jsmf::lowrank
