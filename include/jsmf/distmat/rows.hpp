// SPDX-License-Identifier: MIT
// Tall blocks distributed by rows: the N × p factors of the compressed pipeline (Y, probe
// blocks), which no rank holds whole when N is large.
#pragma once

#include <Eigen/Core>

#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::distmat {

/// How the rows of N × p blocks are split over the ranks of a communicator: rank r holds
/// the contiguous rows [begin(r), end(r)). Replicated, the same on every rank.
class RowPartition {
public:
    RowPartition() = default;
    /// ⌊N/P⌋ or ⌈N/P⌉ rows per rank, the larger shares first.
    static RowPartition balanced(Index n, int ranks);
    /// Rank r holds counts[r] rows, the ranks' blocks consecutive in rank order.
    static RowPartition of_counts(const std::vector<Index>& counts);

    Index size() const { return offsets_.empty() ? 0 : offsets_.back(); }
    int ranks() const { return static_cast<int>(offsets_.size()) - 1; }
    Index begin(int rank) const { return offsets_[static_cast<std::size_t>(rank)]; }
    Index end(int rank) const { return offsets_[static_cast<std::size_t>(rank) + 1]; }
    Index rows(int rank) const { return end(rank) - begin(rank); }
    /// The rank that holds global row `row` (0 <= row < size()).
    int owner(Index row) const;

private:
    std::vector<Index> offsets_{0};
};

/// Collective. The partition of blocks kept by rows, each rank's `local_rows` consecutive in
/// rank order (a model's B where LAW left it, say).
RowPartition partition_of_blocks(const mpi::Comm& comm, Index local_rows);

/// How N rows `width` float64 wide are written in chunks of about `chunk_bytes` so that no
/// chunk has two writers: every rank's block is a whole number of chunks of `chunk` rows
/// (blocks of ⌈N/P⌉ rows rounded up to whole chunks; the last ranks' blocks may be shorter
/// or empty, and the array's last chunk short). Chunks shrink to a rank's block where that
/// is under chunk_bytes.
struct ChunkedRows {
    RowPartition rows;
    Index chunk = 1;
    Index block = 1;  ///< rows of every block but the last ranks' (rank r's: [min(N, r·block), min(N, (r+1)·block)))
};
ChunkedRows chunk_aligned(Index n, int ranks, Index width, double chunk_bytes = 1 << 20);
/// chunk_aligned's chunk and block alone (no partition made: the cost model's, at any rank count).
ChunkedRows chunk_sizes(Index n, int ranks, Index width, double chunk_bytes = 1 << 20);

/// Collective. Replaces a local array by its sum over the ranks: the root's sum, broadcast,
/// so every rank holds the same bits whatever reduction tree MPI would choose for each.
void sum_on_all_ranks(const mpi::Comm& comm, double* data, std::size_t count);

/// Collective. Aᵀ B over all rows of row-distributed A and B (the same rows on each rank):
/// the root's sum, broadcast, so every rank holds the same bits.
Eigen::MatrixXd inner(const mpi::Comm& comm, const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);

/// Collective. AᵀA over all rows of row-distributed A, by dsyrk (half inner(A, A)'s flops;
/// exactly symmetric), summed as inner's: the same bits on every rank.
Eigen::MatrixXd gram(const mpi::Comm& comm, const Eigen::MatrixXd& A);

/// Collective. The 2-norm of every column of a row-distributed block (the same bits everywhere).
Eigen::VectorXd column_norms(const mpi::Comm& comm, const Eigen::MatrixXd& A);

/// Collective. Σ over all rows of a row-distributed block, per column (the same bits everywhere).
Eigen::VectorXd column_sums(const mpi::Comm& comm, const Eigen::MatrixXd& A);

/// X = Q R with Q (this rank's rows) orthonormal over all rows and R (p × p, upper
/// triangular, replicated).
struct TallQR {
    Eigen::MatrixXd Q;
    Eigen::MatrixXd R;
};

/// Collective. Tall-skinny QR of a row-distributed N × p block (N >= p): each rank's
/// Householder QR of its rows, the root's QR of the stacked R factors, its Q scattered
/// back (TSQR, one level). As stable as Householder on the whole block, whatever the
/// conditioning; ranks with fewer than p rows (or none) take part with zero rows.
/// Communication: P·p² doubles gathered to the root and scattered back, p² broadcast.
TallQR tall_qr(const mpi::Comm& comm, const Eigen::MatrixXd& X);

/// Collective. An orthonormal basis of the columns of a row-distributed N × p block (N >= p;
/// a rank-deficient block goes to the fallback): by CholeskyQR2 — two passes of
/// Q ← Q R⁻¹ with G = QᵀQ = RᵀR, each one Gram (dsyrk), one p × p reduction and a TRMM by
/// the formed R⁻¹ (twice TRSM's rate on a tall block; its error, ~κ(R)·u, is the Gram's
/// order) — when the Gram matrix shows κ(X) <= max_condition and the first pass leaves
/// ‖QᵀQ − I‖_F <= 0.5; else one shifted CholeskyQR pass first (G + sI, Fukaya et al. 2020)
/// and the two passes again (CholeskyQR3: a Chebyshev filter's output, κ far above 1e6);
/// else (a zero or dependent column) the Q of tall_qr (Householder). A block nearly orthonormal
/// already (‖XᵀX − I‖_F <= 0.5, so κ² <= 3, as a warm start is) takes one pass: it leaves
/// ‖QᵀQ − I‖ at rounding, as the second pass does. The check after the first pass is what
/// makes it safe: the textbook bound (Yamamoto et al. 2015, 8κ√(mnu + n(n+1)u) <= 1) is
/// ~5e3 at 50,000 × 120, the screen only keeps hopeless blocks off the fast path.
/// Warm-started solves (ENN's: the previous block, orthonormal already) and low-degree
/// filters take the fast path; Householder's panel updates are several times slower on tall
/// blocks (measured: 50,000 × 120, LAPACK 0.38 s, CholeskyQR2 ~0.1 s). `by_cholesky`, if
/// given, says whether a CholeskyQR way (2 or 3) made Q (the same on every rank).
Eigen::MatrixXd orthonormal_columns(const mpi::Comm& comm, const Eigen::MatrixXd& X, double max_condition = 1e6,
                                    bool* by_cholesky = nullptr);

/// Local. Rows [begin, begin + rows) of an n × cols block of standard normal entries that
/// depend only on (seed, row, column): the same block at any rank count.
Eigen::MatrixXd random_rows(Index begin, Index rows, Index cols, Seed seed);

/// Collective. The whole block on every rank (tests, small N, output of small factors).
Eigen::MatrixXd gather_rows(const mpi::Comm& comm, const RowPartition& partition, const Eigen::MatrixXd& X);

/// Collective. The whole block on `root` only (the other ranks get a 0 × p block): each
/// column gathered in turn (MPI_Gatherv of the ranks' row blocks), so no rank holds more
/// than its own rows and, on the root, the whole block once (at N = 10⁶, K = 100: 0.8 GB on
/// the root, none elsewhere; a hierarchy's first level goes to rank 0 this way).
Eigen::MatrixXd gather_rows_to_root(const mpi::Comm& comm, const RowPartition& partition, const Eigen::MatrixXd& X,
                                    int root = 0);

/// Collective. The rows `rows` (each rank its own list, ids in 0..N−1 of root's N × p X;
/// the other ranks' X is not read) of root's X, on each rank (rows.size() × p): the root
/// serves one rank at a time (its ids received, its rows sent), so that it holds X and one
/// rank's rows, and every other rank its own rows only, never N × p. An id outside X's rows
/// is an InternalError on its rank, found before any rows move (agreed: no rank waits).
Eigen::MatrixXd rows_from_root(const mpi::Comm& comm, const Eigen::MatrixXd& X, const std::vector<std::int64_t>& rows,
                               int root = 0);

/// Collective. The rows `rows` (each rank its own list, ids in 0..N−1) of a row-distributed
/// X (each rank its block of `partition`, rows × p), on each rank (rows.size() × p, in the
/// list's order): the ids to their owners and the rows back, two personalized exchanges.
/// Memory: a rank's own rows, the rows it asks for and those it serves. An id outside
/// 0..N−1 is an InternalError on its rank, found before any rows move (agreed).
Eigen::MatrixXd rows_from_owners(const mpi::Comm& comm, const RowPartition& partition, const Eigen::MatrixXd& X,
                                 const std::vector<std::int64_t>& rows);

/// Collective. X's rows, held by `from`, as `to` holds them (both partitions of the same N
/// rows on comm's ranks): the rows each rank's two blocks do not share move in one
/// personalized exchange; the rest is copied. Memory: the block returned and the rows
/// that leave and arrive (row-major).
Eigen::MatrixXd repartition(const mpi::Comm& comm, const RowPartition& from, const Eigen::MatrixXd& X,
                            const RowPartition& to);

/// Collective. `root`'s X, its shape too, into every rank's X (whatever the others held;
/// the root's is left as it is, not copied).
void broadcast_from_root(const mpi::Comm& comm, Eigen::MatrixXd& X, int root = 0);

/// Local. This rank's rows of a replicated block.
Eigen::MatrixXd local_rows(const RowPartition& partition, int rank, const Eigen::MatrixXd& whole);

}  // namespace jsmf::distmat
