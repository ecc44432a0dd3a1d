// SPDX-License-Identifier: MIT
// Tall blocks distributed by rows: partition, inner products, TSQR, reproducible random rows.
#include "jsmf/distmat/rows.hpp"

#include <algorithm>
#include <numeric>
#include <climits>
#include <cmath>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "distmat/detail/scalapack_api.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/traffic.hpp"
#include "jsmf/distmat/blas.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::distmat {

RowPartition RowPartition::balanced(Index n, int ranks) {
    JSMF_REQUIRE(n >= 0 && ranks >= 1, "RowPartition: bad size");
    RowPartition p;
    p.offsets_.assign(static_cast<std::size_t>(ranks) + 1, 0);
    const Index base = n / ranks, extra = n % ranks;
    for (int r = 0; r < ranks; ++r)
        p.offsets_[static_cast<std::size_t>(r) + 1] = p.offsets_[static_cast<std::size_t>(r)] + base + (r < extra ? 1 : 0);
    return p;
}

ChunkedRows chunk_sizes(Index n, int ranks, Index width, double chunk_bytes) {
    JSMF_REQUIRE(n >= 0 && ranks >= 1 && width >= 0 && chunk_bytes >= 8, "chunk_aligned: bad sizes");
    const Index per_rank = std::max<Index>(1, (n + ranks - 1) / ranks);
    const auto target = std::max<Index>(1, static_cast<Index>(chunk_bytes / (8.0 * std::max<Index>(1, width))));
    const Index chunks = (per_rank + target - 1) / target;  // per rank
    ChunkedRows out;
    out.chunk = (per_rank + chunks - 1) / chunks;            // ≤ target, and chunks × chunk ≥ per_rank
    out.block = chunks * out.chunk;                          // < per_rank + chunks
    return out;
}

ChunkedRows chunk_aligned(Index n, int ranks, Index width, double chunk_bytes) {
    ChunkedRows out = chunk_sizes(n, ranks, width, chunk_bytes);
    std::vector<Index> counts(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r)
        counts[static_cast<std::size_t>(r)] = std::clamp<Index>(n - r * out.block, 0, out.block);
    out.rows = RowPartition::of_counts(counts);
    return out;
}

RowPartition RowPartition::of_counts(const std::vector<Index>& counts) {
    JSMF_REQUIRE(!counts.empty(), "RowPartition: no ranks");
    RowPartition p;
    for (const Index c : counts) {
        JSMF_REQUIRE(c >= 0, "RowPartition: a negative count");
        p.offsets_.push_back(p.offsets_.back() + c);
    }
    return p;
}

RowPartition partition_of_blocks(const mpi::Comm& comm, Index local_rows) {
    const std::vector<std::int64_t> counts = mpi::gather_concat(comm, std::vector<std::int64_t>{local_rows}, 0);
    std::vector<Index> all(static_cast<std::size_t>(comm.size()));
    if (comm.is_root()) all.assign(counts.begin(), counts.end());
    mpi::broadcast(comm, all.data(), all.size(), 0);
    return RowPartition::of_counts(all);
}

int RowPartition::owner(Index row) const {
    const auto it = std::upper_bound(offsets_.begin(), offsets_.end(), row);
    return static_cast<int>(it - offsets_.begin()) - 1;
}

void sum_on_all_ranks(const mpi::Comm& comm, double* data, std::size_t count) {
    if (comm.size() == 1) return;
    std::vector<double> total(comm.is_root() ? count : 0);
    if (!comm.is_root()) count_sent_bytes(static_cast<std::int64_t>(count * sizeof(double)));
    JSMF_MPI_CHECK(MPI_Reduce(data, total.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, 0, comm.raw()));
    if (comm.is_root()) std::copy(total.begin(), total.end(), data);
    mpi::broadcast(comm, data, count, 0);
}

Eigen::MatrixXd inner(const mpi::Comm& comm, const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
    JSMF_REQUIRE(A.rows() == B.rows(), "inner: the blocks have different rows");
    Eigen::MatrixXd H = transpose_times(A, B);
    sum_on_all_ranks(comm, H.data(), static_cast<std::size_t>(H.size()));
    return H;
}

Eigen::MatrixXd gram(const mpi::Comm& comm, const Eigen::MatrixXd& A) {
    Eigen::MatrixXd G = gram(A);
    sum_on_all_ranks(comm, G.data(), static_cast<std::size_t>(G.size()));
    return G;
}

Eigen::VectorXd column_norms(const mpi::Comm& comm, const Eigen::MatrixXd& A) {
    Eigen::VectorXd squares = A.colwise().squaredNorm().transpose();
    sum_on_all_ranks(comm, squares.data(), static_cast<std::size_t>(squares.size()));
    return squares.cwiseSqrt();
}

Eigen::VectorXd column_sums(const mpi::Comm& comm, const Eigen::MatrixXd& A) {
    Eigen::VectorXd sums = A.colwise().sum().transpose();
    sum_on_all_ranks(comm, sums.data(), static_cast<std::size_t>(sums.size()));
    return sums;
}

TallQR tall_qr(const mpi::Comm& comm, const Eigen::MatrixXd& X) {
    const Index m = X.rows(), p = X.cols();
    const Index k = std::min(m, p);
    // This rank's Householder QR, its factors padded to m × p and p × p with zeros.
    Eigen::MatrixXd Q_local = Eigen::MatrixXd::Zero(m, p);
    Eigen::MatrixXd R_local = Eigen::MatrixXd::Zero(p, p);
    if (k > 0) {
        LocalQR qr = thin_qr(X);
        Q_local.leftCols(k) = qr.Q;
        R_local.topRows(k) = qr.R;
    }
    TallQR result;
    if (comm.size() == 1) {
        result.Q = std::move(Q_local);
        result.R = std::move(R_local);
        return result;
    }
    const int P = comm.size();
    const int count = static_cast<int>(p * p);
    std::vector<double> stacked_blocks(comm.is_root() ? static_cast<std::size_t>(P) * count : 0);
    if (!comm.is_root()) count_sent_bytes(std::int64_t{count} * 8);
    JSMF_MPI_CHECK(MPI_Gather(R_local.data(), count, MPI_DOUBLE, stacked_blocks.data(), count, MPI_DOUBLE, 0, comm.raw()));
    result.R.resize(p, p);
    std::vector<double> q_blocks(comm.is_root() ? static_cast<std::size_t>(P) * count : 0);
    if (comm.is_root()) {
        Eigen::MatrixXd stacked(P * p, p);
        for (int r = 0; r < P; ++r)
            stacked.middleRows(r * p, p) = Eigen::Map<const Eigen::MatrixXd>(stacked_blocks.data() + static_cast<std::size_t>(r) * count, p, p);
        LocalQR qr = thin_qr(std::move(stacked));
        result.R = std::move(qr.R);
        const Eigen::MatrixXd& Q2 = qr.Q;
        for (int r = 0; r < P; ++r)
            Eigen::Map<Eigen::MatrixXd>(q_blocks.data() + static_cast<std::size_t>(r) * count, p, p) = Q2.middleRows(r * p, p);
    }
    Eigen::MatrixXd Q2_local(p, p);
    if (comm.is_root()) count_sent_bytes(std::int64_t{P - 1} * count * 8);
    JSMF_MPI_CHECK(MPI_Scatter(q_blocks.data(), count, MPI_DOUBLE, Q2_local.data(), count, MPI_DOUBLE, 0, comm.raw()));
    mpi::broadcast(comm, result.R.data(), static_cast<std::size_t>(result.R.size()), 0);
    result.Q = times(Q_local, Q2_local);
    return result;
}

namespace {

// Q ← Q R⁻¹ with RᵀR = L Lᵀ the root's Cholesky factor (the same bits on every rank): R⁻¹ =
// L⁻ᵀ formed (p × p), then one TRMM, which runs at twice TRSM's rate on a tall block.
void divide_by_cholesky_factor(const mpi::Comm& comm, const Eigen::LLT<Eigen::MatrixXd>& llt, Eigen::MatrixXd& Q) {
    const Index m = Q.rows(), p = Q.cols();
    Eigen::MatrixXd L = Eigen::MatrixXd::Zero(p, p);
    if (llt.info() == Eigen::Success && llt.rows() == p) L = llt.matrixL();
    mpi::adopt_root_copy(comm, L.data(), static_cast<std::size_t>(L.size()));
    if (m > 0 && p > 0) {
        const Eigen::MatrixXd R_inverse = L.triangularView<Eigen::Lower>().solve(Eigen::MatrixXd::Identity(p, p)).transpose();
        const int mi = static_cast<int>(m), pi = static_cast<int>(p);
        const double one = 1.0;
        dtrmm_("R", "U", "N", "N", &mi, &pi, &one, R_inverse.data(), &pi, Q.data(), &mi);
    }
}

}  // namespace

Eigen::MatrixXd orthonormal_columns(const mpi::Comm& comm, const Eigen::MatrixXd& X, double max_condition,
                                    bool* by_cholesky) {
    const Index p = X.cols();
    if (by_cholesky) *by_cholesky = false;
    Eigen::MatrixXd Q = X;
    bool shifted = false;
    for (int pass = 0; pass < 2; ++pass) {
        const Eigen::MatrixXd G = gram(comm, Q);  // the same bits on every rank
        // Nearly orthonormal already (a warm start, or the first pass's result): one pass
        // leaves ‖QᵀQ − I‖ at rounding (κ² <= 3), so it is the last.
        const bool last = pass == 1 || mpi::root_decides(comm, (G - Eigen::MatrixXd::Identity(p, p)).norm() <= 0.5);
        bool cholesky = true;
        if (!last) {  // κ(X)² = λ_max(G) / λ_min(G): a screen, checked after the pass
            const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> spectrum(G, Eigen::EigenvaluesOnly);
            const double low = p > 0 ? spectrum.eigenvalues()(0) : 1.0, high = p > 0 ? spectrum.eigenvalues()(p - 1) : 1.0;
            cholesky = low > 0 && high <= max_condition * max_condition * low;
        } else {
            // The last pass needs Q nearly orthonormal (κ(Q) <= √3), as a first pass must have
            // left it: it then restores orthogonality to rounding. If the first pass did not
            // (the screen let through a block whose κ the Gram matrix's rounding hid), Householder.
            cholesky = (G - Eigen::MatrixXd::Identity(p, p)).norm() <= 0.5;
        }
        Eigen::LLT<Eigen::MatrixXd> llt;
        if (cholesky) {
            llt.compute(G);
            cholesky = llt.info() == Eigen::Success;
        }
        if (!mpi::root_decides(comm, cholesky)) {
            if (shifted) return tall_qr(comm, X).Q;
            // Too ill-conditioned for CholeskyQR2 (a Chebyshev filter's output, whose top
            // directions it grew 10⁴-fold and more): first one shifted CholeskyQR pass
            // (Fukaya, Kannan, Nakatsukasa, Zhang, Yamamoto, SIAM J. Sci. Comput. 2020),
            // G + sI with s = 11 (N p + p(p + 1)) u ‖X‖², which leaves κ(Q) below about
            // (11 (N p + p(p + 1)) u)^(−1/2) (tested at κ(X) = 1e10), then the two passes
            // again (CholeskyQR3). Householder (tall_qr) was the way here before: its
            // panels are level-2 BLAS on the tall block (dger in dgeqr2), 15 % of ENN's
            // time at the NYTimes shape (perf, rank 0). What the shift cannot take (a
            // zero or dependent column: the next Gram matrix singular) goes to Householder.
            const double rows = static_cast<double>(mpi::allreduce_sum(comm, static_cast<std::int64_t>(Q.rows())));
            const double pp = static_cast<double>(p);
            const double shift = 11.0 * (rows * pp + pp * (pp + 1)) * std::numeric_limits<double>::epsilon() * G.trace();
            Eigen::LLT<Eigen::MatrixXd> shifted_llt(G + shift * Eigen::MatrixXd::Identity(p, p));
            if (!mpi::root_decides(comm, shifted_llt.info() == Eigen::Success && shift > 0 && std::isfinite(shift)))
                return tall_qr(comm, X).Q;
            divide_by_cholesky_factor(comm, shifted_llt, Q);
            shifted = true;
            pass = -1;  // the two passes again, on the shifted pass's Q
            continue;
        }
        divide_by_cholesky_factor(comm, llt, Q);
        if (last) break;
    }
    if (by_cholesky) *by_cholesky = true;
    return Q;
}

namespace {
std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer: a bijection that scatters bits
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
double unit_open(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
}  // namespace

Eigen::MatrixXd random_rows(Index begin, Index rows, Index cols, Seed seed) {
    Eigen::MatrixXd X(rows, cols);
    const double two_pi = 6.283185307179586;
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) {
            // Box–Muller on two uniforms keyed by (seed, row, column): no stream to share.
            const std::uint64_t key = mix(mix(seed) ^ mix(static_cast<std::uint64_t>(begin + i) * 0x100000001b3ULL + static_cast<std::uint64_t>(j)));
            const double u1 = unit_open(key), u2 = unit_open(mix(key));
            X(i, j) = std::sqrt(-2 * std::log(u1)) * std::cos(two_pi * u2);
        }
    return X;
}

Eigen::MatrixXd gather_rows(const mpi::Comm& comm, const RowPartition& partition, const Eigen::MatrixXd& X) {
    JSMF_REQUIRE(partition.ranks() == comm.size() && X.rows() == partition.rows(comm.rank()),
                 "gather_rows: the block does not match the partition");
    const Index p = X.cols();
    Eigen::MatrixXd whole = Eigen::MatrixXd::Zero(partition.size(), p);
    whole.middleRows(partition.begin(comm.rank()), X.rows()) = X;
    mpi::allreduce_inplace(comm, whole.data(), static_cast<std::size_t>(whole.size()), MPI_SUM);  // one nonzero per entry: exact
    return whole;
}

Eigen::MatrixXd gather_rows_to_root(const mpi::Comm& comm, const RowPartition& partition, const Eigen::MatrixXd& X,
                                    int root) {
    JSMF_REQUIRE(partition.ranks() == comm.size() && X.rows() == partition.rows(comm.rank()),
                 "gather_rows_to_root: the block does not match the partition");
    JSMF_REQUIRE(partition.size() <= INT_MAX, "gather_rows_to_root: more than 2^31 rows");
    const bool here = comm.rank() == root;
    const Index p = X.cols();
    std::vector<int> counts, offsets;
    if (here)
        for (int r = 0; r < comm.size(); ++r) {
            counts.push_back(static_cast<int>(partition.rows(r)));
            offsets.push_back(static_cast<int>(partition.begin(r)));
        }
    Eigen::MatrixXd whole(here ? partition.size() : 0, p);
    if (!here) count_sent_bytes(static_cast<std::int64_t>(X.size()) * 8);
    for (Index j = 0; j < p; ++j)
        JSMF_MPI_CHECK(MPI_Gatherv(X.col(j).data(), static_cast<int>(X.rows()), MPI_DOUBLE,
                                   here ? whole.col(j).data() : nullptr, counts.data(), offsets.data(), MPI_DOUBLE,
                                   root, comm.raw()));
    return whole;
}

Eigen::MatrixXd rows_from_root(const mpi::Comm& comm, const Eigen::MatrixXd& X, const std::vector<std::int64_t>& rows,
                               int root) {
    using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    std::int64_t shape[2] = {X.rows(), X.cols()};
    mpi::broadcast(comm, shape, 2, root);
    const Index N = shape[0], p = shape[1];
    mpi::run_local_phase(comm, "rows_from_root", [&] {
        for (const std::int64_t i : rows)
            if (i < 0 || i >= N)
                throw InternalError("rows_from_root: row " + std::to_string(i) + " outside 0.." + std::to_string(N - 1));
    });
    // Point to point in pieces of at most mpi::max_chunk elements (MPI counts are int).
    const auto send = [&](const auto* data, std::size_t count, MPI_Datatype type, int to) {
        count_sent_bytes(static_cast<std::int64_t>(count * sizeof(*data)));
        for (std::size_t at = 0; at < count || at == 0; at += mpi::max_chunk) {
            const int n = static_cast<int>(std::min(mpi::max_chunk, count - at));
            JSMF_MPI_CHECK(MPI_Send(data + at, n, type, to, 0, comm.raw()));
            if (count == 0) break;
        }
    };
    const auto receive = [&](auto* data, std::size_t count, MPI_Datatype type, int from) {
        for (std::size_t at = 0; at < count || at == 0; at += mpi::max_chunk) {
            const int n = static_cast<int>(std::min(mpi::max_chunk, count - at));
            JSMF_MPI_CHECK(MPI_Recv(data + at, n, type, from, 0, comm.raw(), MPI_STATUS_IGNORE));
            if (count == 0) break;
        }
    };
    const auto rows_of = [&](const std::vector<std::int64_t>& ids) {
        RowMajor out(static_cast<Index>(ids.size()), p);
        for (std::size_t k = 0; k < ids.size(); ++k) out.row(static_cast<Index>(k)) = X.row(ids[k]);
        return out;
    };
    if (comm.rank() == root) {
        for (int r = 0; r < comm.size(); ++r) {
            if (r == root) continue;
            std::int64_t n = 0;
            receive(&n, 1, MPI_INT64_T, r);
            std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
            receive(ids.data(), ids.size(), MPI_INT64_T, r);
            const RowMajor block = rows_of(ids);  // checked on rank r above
            send(block.data(), static_cast<std::size_t>(block.size()), MPI_DOUBLE, r);
        }
        return rows_of(rows);
    }
    const std::int64_t n = static_cast<std::int64_t>(rows.size());
    send(&n, 1, MPI_INT64_T, root);
    send(rows.data(), rows.size(), MPI_INT64_T, root);
    RowMajor block(n, p);
    receive(block.data(), static_cast<std::size_t>(block.size()), MPI_DOUBLE, root);
    return block;
}

Eigen::MatrixXd rows_from_owners(const mpi::Comm& comm, const RowPartition& partition, const Eigen::MatrixXd& X,
                                 const std::vector<std::int64_t>& rows) {
    using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Index N = partition.size();
    const Index p = mpi::allreduce_max(comm, static_cast<std::int64_t>(X.cols()));  // a rank without rows may hold 0 × 0
    mpi::run_local_phase(comm, "rows_from_owners", [&] {
        if (partition.ranks() != comm.size())
            throw InternalError("rows_from_owners: a partition of " + std::to_string(partition.ranks()) + " ranks on " +
                                std::to_string(comm.size()));
        if (X.rows() != partition.rows(comm.rank()))
            throw InternalError("rows_from_owners: this rank holds " + std::to_string(X.rows()) + " rows, not its " +
                                std::to_string(partition.rows(comm.rank())));
        for (const std::int64_t i : rows)
            if (i < 0 || i >= N)
                throw InternalError("rows_from_owners: row " + std::to_string(i) + " outside 0.." + std::to_string(N - 1));
    });
    // The ids grouped by owner (owners ascend with the id: a stable sort by id groups them).
    const auto P = static_cast<std::size_t>(comm.size());
    std::vector<std::size_t> order(rows.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rows[a] < rows[b]; });
    std::vector<std::int64_t> asked(rows.size());
    std::vector<int> ask_counts(P, 0);
    for (std::size_t k = 0; k < order.size(); ++k) {
        asked[k] = rows[order[k]];
        ++ask_counts[static_cast<std::size_t>(partition.owner(asked[k]))];
    }
    const std::vector<int> serve_counts = mpi::exchange_counts(comm, ask_counts);
    std::vector<std::int64_t> served(static_cast<std::size_t>(std::accumulate(serve_counts.begin(), serve_counts.end(), 0LL)));
    mpi::exchange(comm, asked.data(), ask_counts, served.data(), serve_counts);
    const Index first = partition.begin(comm.rank());
    RowMajor reply(static_cast<Index>(served.size()), p);
    for (std::size_t k = 0; k < served.size(); ++k) reply.row(static_cast<Index>(k)) = X.row(served[k] - first);
    RowMajor received(static_cast<Index>(asked.size()), p);
    if (p > 0) mpi::exchange_rows(comm, reply.data(), serve_counts, received.data(), ask_counts, p);
    Eigen::MatrixXd out(static_cast<Index>(rows.size()), p);
    for (std::size_t k = 0; k < order.size(); ++k) out.row(static_cast<Index>(order[k])) = received.row(static_cast<Index>(k));
    return out;
}

Eigen::MatrixXd repartition(const mpi::Comm& comm, const RowPartition& from, const Eigen::MatrixXd& X,
                            const RowPartition& to) {
    using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const int me = comm.rank(), P = comm.size();
    const Index p = mpi::allreduce_max(comm, static_cast<std::int64_t>(X.cols()));  // a rank without rows may hold 0 × 0
    mpi::run_local_phase(comm, "repartition", [&] {
        if (from.ranks() != P || to.ranks() != P || from.size() != to.size())
            throw InternalError("repartition: partitions of " + std::to_string(from.size()) + " and " +
                                std::to_string(to.size()) + " rows on " + std::to_string(from.ranks()) + " and " +
                                std::to_string(to.ranks()) + " ranks, on " + std::to_string(P));
        if (X.rows() != from.rows(me) || (X.rows() > 0 && X.cols() != p))
            throw InternalError("repartition: this rank holds " + std::to_string(X.rows()) + " × " +
                                std::to_string(X.cols()) + ", not its " + std::to_string(from.rows(me)) + " rows");
    });
    // Rows [begin, end) shared by a's block of one partition and b's of the other.
    const auto shared = [](const RowPartition& one, int a, const RowPartition& other, int b) {
        return std::pair{std::max(one.begin(a), other.begin(b)), std::min(one.end(a), other.end(b))};
    };
    const auto length = [](std::pair<Index, Index> range) { return std::max<Index>(0, range.second - range.first); };
    std::vector<int> send_rows(static_cast<std::size_t>(P), 0), recv_rows(static_cast<std::size_t>(P), 0);
    for (int q = 0; q < P; ++q) {
        if (q == me) continue;  // copied
        send_rows[static_cast<std::size_t>(q)] = static_cast<int>(length(shared(from, me, to, q)));
        recv_rows[static_cast<std::size_t>(q)] = static_cast<int>(length(shared(to, me, from, q)));
    }
    // Blocks owned by ascending ranks hold ascending rows: the pieces in rank order are in row order.
    RowMajor leaving(std::accumulate(send_rows.begin(), send_rows.end(), Index{0}), p);
    Index at = 0;
    for (int q = 0; q < P; ++q) {
        if (q == me || send_rows[static_cast<std::size_t>(q)] == 0) continue;
        const auto [begin, end] = shared(from, me, to, q);
        leaving.middleRows(at, end - begin) = X.middleRows(begin - from.begin(me), end - begin);
        at += end - begin;
    }
    RowMajor arriving(std::accumulate(recv_rows.begin(), recv_rows.end(), Index{0}), p);
    if (p > 0) mpi::exchange_rows(comm, leaving.data(), send_rows, arriving.data(), recv_rows, p);
    Eigen::MatrixXd out(to.rows(me), p);
    at = 0;
    for (int q = 0; q < P; ++q) {
        const auto [begin, end] = shared(to, me, from, q);
        if (end <= begin) continue;
        if (q == me) {
            out.middleRows(begin - to.begin(me), end - begin) = X.middleRows(begin - from.begin(me), end - begin);
        } else {
            out.middleRows(begin - to.begin(me), end - begin) = arriving.middleRows(at, end - begin);
            at += end - begin;
        }
    }
    return out;
}

void broadcast_from_root(const mpi::Comm& comm, Eigen::MatrixXd& X, int root) {
    std::int64_t shape[2] = {X.rows(), X.cols()};
    mpi::broadcast(comm, shape, 2, root);
    if (comm.rank() != root) X.resize(shape[0], shape[1]);
    mpi::broadcast(comm, X.data(), static_cast<std::size_t>(X.size()), root);
}

Eigen::MatrixXd local_rows(const RowPartition& partition, int rank, const Eigen::MatrixXd& whole) {
    return whole.middleRows(partition.begin(rank), partition.rows(rank));
}

}  // namespace jsmf::distmat
