// SPDX-License-Identifier: MIT
// Reductions and products on a DistMatrix with replicated results.
#include "jsmf/distmat/ops.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <random>

#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace jsmf::distmat {
namespace {
mpi::Comm comm_of(const DistMatrix& A) { return A.grid().borrow_comm(); }

// The global indices of this rank's local rows and columns (no divisions in loops).
std::vector<Index> global_rows(const DistMatrix& A) {
    std::vector<Index> out(static_cast<std::size_t>(A.local_rows()));
    for (Index il = 0; il < A.local_rows(); ++il) out[static_cast<std::size_t>(il)] = A.global_row(il);
    return out;
}
std::vector<Index> global_cols(const DistMatrix& A) {
    std::vector<Index> out(static_cast<std::size_t>(A.local_cols()));
    for (Index jl = 0; jl < A.local_cols(); ++jl) out[static_cast<std::size_t>(jl)] = A.global_col(jl);
    return out;
}

// One pass over the local block, column by column (contiguous), computing the pieces of
// A x (when x_cols is given), Aᵀ x (when x_rows is given) and |A| |x_cols| (when asked)
// that this rank holds; zero elsewhere. The caller reduces what it needs.
struct LocalProducts {
    Eigen::VectorXd Ax, ATx, absAx;
};

LocalProducts local_products(const DistMatrix& A, const Eigen::VectorXd& x_cols, const Eigen::VectorXd& x_rows,
                             bool want_abs) {
    const bool direct = x_cols.size() > 0, transposed = x_rows.size() > 0;
    want_abs = want_abs && direct;
    const auto rows = global_rows(A), cols = global_cols(A);
    const Index m = A.local_rows();
    Eigen::VectorXd Ax_loc = Eigen::VectorXd::Zero(direct ? m : 0), abs_loc = Eigen::VectorXd::Zero(want_abs ? m : 0);
    Eigen::VectorXd xr_loc(transposed ? m : 0);
    for (Index il = 0; transposed && il < m; ++il) xr_loc(il) = x_rows(rows[static_cast<std::size_t>(il)]);
    LocalProducts out;
    out.Ax = Eigen::VectorXd::Zero(direct ? A.rows() : 0);
    out.ATx = Eigen::VectorXd::Zero(transposed ? A.cols() : 0);
    out.absAx = Eigen::VectorXd::Zero(want_abs ? A.rows() : 0);
    for (Index jl = 0; jl < A.local_cols(); ++jl) {
        const double* column = A.data() + jl * A.ld();
        const Index j = cols[static_cast<std::size_t>(jl)];
        if (direct) {
            const double xj = x_cols(j);
            for (Index il = 0; il < m; ++il) Ax_loc[il] += column[il] * xj;
        }
        if (transposed) {
            double dot = 0;
            for (Index il = 0; il < m; ++il) dot += column[il] * xr_loc[il];
            out.ATx(j) = dot;
        }
        if (want_abs) {
            const double abs_xj = std::abs(x_cols(j));
            for (Index il = 0; il < m; ++il) abs_loc[il] += std::abs(column[il]) * abs_xj;
        }
    }
    for (Index il = 0; il < m; ++il) {
        const Index i = rows[static_cast<std::size_t>(il)];
        if (direct) out.Ax(i) = Ax_loc(il);
        if (want_abs) out.absAx(i) = abs_loc(il);
    }
    return out;
}

void reduce(const DistMatrix& A, Eigen::VectorXd& v) {
    mpi::allreduce_inplace(comm_of(A), v.data(), static_cast<std::size_t>(v.size()), MPI_SUM);
}
}  // namespace

double sum(const DistMatrix& A) {
    // Plain sums down each column (vectorized; error <= rows·ε relative), compensated
    // (Kahan) across columns: ΣC = 1 is checked to 1e-12 over N² terms.
    double total = 0, compensation = 0;
    const auto local = A.local();
    for (Index jl = 0; jl < A.local_cols(); ++jl) {
        const double y = local.col(jl).sum() - compensation;
        const double t = total + y;
        compensation = (t - total) - y;
        total = t;
    }
    return mpi::allreduce_sum(comm_of(A), total);
}

double min_entry(const DistMatrix& A) {
    double least = std::numeric_limits<double>::infinity();
    if (A.local_rows() > 0 && A.local_cols() > 0) least = A.local().minCoeff();
    return mpi::allreduce_min(comm_of(A), least);
}

double max_abs(const DistMatrix& A) {
    double most = 0;
    if (A.local_rows() > 0 && A.local_cols() > 0) most = A.local().cwiseAbs().maxCoeff();
    return mpi::allreduce_max(comm_of(A), most);
}

Eigen::VectorXd row_sums(const DistMatrix& A) {
    Eigen::VectorXd y = local_products(A, Eigen::VectorXd::Ones(A.cols()), Eigen::VectorXd(), false).Ax;
    reduce(A, y);
    return y;
}

Eigen::VectorXd multiply(const DistMatrix& A, const Eigen::VectorXd& x) {
    JSMF_REQUIRE(x.size() == A.cols(), "multiply: size mismatch");
    Eigen::VectorXd y = local_products(A, x, Eigen::VectorXd(), false).Ax;
    reduce(A, y);
    return y;
}

Eigen::VectorXd multiply_transposed(const DistMatrix& A, const Eigen::VectorXd& x) {
    JSMF_REQUIRE(x.size() == A.rows(), "multiply_transposed: size mismatch");
    Eigen::VectorXd y = local_products(A, Eigen::VectorXd(), x, false).ATx;
    reduce(A, y);
    return y;
}

double asymmetry(const DistMatrix& A, std::uint64_t seed) {
    JSMF_REQUIRE(A.rows() == A.cols(), "asymmetry needs a square matrix");
    std::mt19937_64 engine(seed);  // same seed on every rank: x is replicated exactly
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    Eigen::VectorXd x(A.cols());
    for (Index i = 0; i < x.size(); ++i) x(i) = uniform(engine);
    // One pass: A x, Aᵀ x and the scale |A| |x| of the terms summed (so the measure is relative).
    LocalProducts p = local_products(A, x, x, true);
    Eigen::VectorXd difference = p.Ax - p.ATx;
    reduce(A, difference);
    reduce(A, p.absAx);
    const double denominator = p.absAx.lpNorm<Eigen::Infinity>();
    return denominator > 0 ? difference.lpNorm<Eigen::Infinity>() / denominator : 0.0;
}

Eigen::VectorXd row_squared_norms(const DistMatrix& A) {
    Eigen::VectorXd local_sums = Eigen::VectorXd::Zero(A.local_rows());
    for (Index jl = 0; jl < A.local_cols(); ++jl) local_sums += A.local().col(jl).cwiseAbs2();
    Eigen::VectorXd out = Eigen::VectorXd::Zero(A.rows());
    for (Index il = 0; il < A.local_rows(); ++il) out(A.global_row(il)) = local_sums(il);
    reduce(A, out);  // each row's pieces come from the ranks of one process row
    return out;
}

Eigen::VectorXd row(const DistMatrix& A, Index i) {
    JSMF_REQUIRE(i >= 0 && i < A.rows(), "row: index out of range");
    Eigen::VectorXd out = Eigen::VectorXd::Zero(A.cols());
    if (A.owner_row(i) == A.grid().my_row()) {
        const Index il = A.local_row(i);
        for (Index jl = 0; jl < A.local_cols(); ++jl) out(A.global_col(jl)) = A.local()(il, jl);
    }
    reduce(A, out);  // each entry has exactly one owner
    return out;
}

Eigen::MatrixXd deal_rows(const DistMatrix& A, Index first, Index count) {
    JSMF_REQUIRE(first >= 0 && count >= 0 && first + count <= A.rows(), "deal_rows: range out of bounds");
    const Grid& grid = A.grid();
    const mpi::Comm comm = comm_of(A);
    const int P = comm.size(), me = comm.rank();
    // The rows of [first, first + count) that rank r receives, ascending.
    auto rows_of = [&](int r) {
        std::vector<Index> rows;
        for (Index i = first + ((r - first % P) % P + P) % P; i < first + count; i += P) rows.push_back(i);
        return rows;
    };
    // Send: for each destination, its rows that this rank's grid row owns, each as the
    // local columns' entries, in the order of the rows.
    std::vector<std::int64_t> counts(static_cast<std::size_t>(P), 0);
    for (int r = 0; r < P; ++r)
        for (const Index i : rows_of(r))
            if (A.owner_row(i) == grid.my_row()) counts[static_cast<std::size_t>(r)] += A.local_cols();
    // One MPI count per destination and one displacement per side must fit an int: a
    // caller deals a range in chunks (recover deals ~64 MiB a rank at a time).
    const std::int64_t total_sent = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
    std::vector<double> send;
    mpi::run_local_phase(comm, "deal_rows", [&] {  // agreed: no rank goes on to the exchange alone
        if (total_sent > INT_MAX) throw InternalError("deal_rows: more than INT_MAX entries from one rank: deal the range in parts");
        send.reserve(static_cast<std::size_t>(total_sent));
    });
    const std::vector<int> send_counts(counts.begin(), counts.end());
    for (int r = 0; r < P; ++r)
        for (const Index i : rows_of(r)) {
            if (A.owner_row(i) != grid.my_row()) continue;
            const Index il = A.local_row(i);
            for (Index jl = 0; jl < A.local_cols(); ++jl) send.push_back(A.local()(il, jl));
        }
    const std::vector<int> recv_counts = mpi::exchange_counts(comm, send_counts);
    const long long total_received = std::accumulate(recv_counts.begin(), recv_counts.end(), 0LL);
    std::vector<double> recv;
    mpi::run_local_phase(comm, "deal_rows", [&] {
        if (total_received > INT_MAX) throw InternalError("deal_rows: more than INT_MAX entries to one rank: deal the range in parts");
        recv.resize(static_cast<std::size_t>(total_received));
    });
    mpi::exchange(comm, send.data(), send_counts, recv.data(), recv_counts);
    std::vector<double>().swap(send);  // the peak: what was sent and received, or received and unpacked
    // Unpack: rank s (grid position (sr, sc)) sent my rows that grid row sr owns, each with
    // grid column sc's columns.
    const std::vector<Index> mine = rows_of(me);
    Eigen::MatrixXd out(A.cols(), static_cast<Index>(mine.size()));
    std::size_t at = 0;
    for (int s = 0; s < P; ++s) {
        const int sr = s / grid.cols(), sc = s % grid.cols();
        const Index local_cols = local_extent(A.cols(), A.block_cols(), sc, grid.cols());
        for (std::size_t m = 0; m < mine.size(); ++m) {
            if (A.owner_row(mine[m]) != sr) continue;
            for (Index jl = 0; jl < local_cols; ++jl) {
                const Index j = ((jl / A.block_cols()) * grid.cols() + sc) * Index{A.block_cols()} + jl % A.block_cols();
                out(j, static_cast<Index>(m)) = recv[at++];
            }
        }
    }
    JSMF_REQUIRE(at == recv.size(), "deal_rows: the received entries do not match the rows");
    return out;
}

Eigen::VectorXd diagonal(const DistMatrix& A) {
    JSMF_REQUIRE(A.rows() == A.cols(), "diagonal needs a square matrix");
    Eigen::VectorXd d = Eigen::VectorXd::Zero(A.rows());
    for (Index jl = 0; jl < A.local_cols(); ++jl) {
        const Index j = A.global_col(jl);
        if (A.owner_row(j) == A.grid().my_row()) d(j) = A.local()(A.local_row(j), jl);
    }
    reduce(A, d);  // each entry has exactly one owner
    return d;
}

void set_diagonal(DistMatrix& A, const Eigen::VectorXd& d) {
    JSMF_REQUIRE(A.rows() == A.cols() && d.size() == A.rows(), "set_diagonal: size mismatch");
    for (Index jl = 0; jl < A.local_cols(); ++jl) {
        const Index j = A.global_col(jl);
        if (A.owner_row(j) == A.grid().my_row()) A.local()(A.local_row(j), jl) = d(j);
    }
}

void scale(DistMatrix& A, double alpha) { A.local() *= alpha; }

namespace {
// Threads only when asked for (OMP_NUM_THREADS or set_threads): OpenMP's own default is
// every core the rank may use, which oversubscribes a node of unbound ranks.
int& asked_threads() {
    static int threads = [] {
        const char* given = std::getenv("OMP_NUM_THREADS");
        return given != nullptr ? std::max(1, std::atoi(given)) : 1;
    }();
    return threads;
}
}  // namespace

int row_slabs(Index m) {
#ifdef _OPENMP
    const Index most = std::max<Index>(1, m / 256);
    return static_cast<int>(std::clamp<Index>(asked_threads(), 1, most));
#else
    (void)m;
    return 1;
#endif
}

void set_threads(int threads) {
    asked_threads() = std::max(1, threads);
#ifdef _OPENMP
    omp_set_num_threads(std::max(1, threads));
#endif
}

int threads() { return asked_threads(); }

}  // namespace jsmf::distmat
