// SPDX-License-Identifier: MIT
// The block-cyclic distributed matrix.
#include "jsmf/distmat/dist_matrix.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "distmat/detail/scalapack_api.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::distmat {

Index local_extent(Index n, int block, int proc, int procs) {
    // numroc with source process 0, written out so that it works past INT_MAX too.
    const Index full_blocks = n / block;
    Index extent = (full_blocks / procs) * block;
    const Index extra_blocks = full_blocks % procs;
    if (proc < extra_blocks) extent += block;
    else if (proc == extra_blocks) extent += n % block;
    return extent;
}

template <class T>
BasicDistMatrix<T>::BasicDistMatrix(std::shared_ptr<const Grid> grid, Index rows, Index cols, int block_rows,
                                    int block_cols)
    : grid_(std::move(grid)), rows_(rows), cols_(cols), block_rows_(block_rows),
      block_cols_(block_cols) {
    JSMF_REQUIRE(grid_ != nullptr, "DistMatrix needs a grid");
    if (rows < 0 || cols < 0) throw InputError("matrix dimensions must be non-negative");
    if (block_rows < 1 || block_cols < 1) throw InputError("block size must be at least 1");
    if (rows > INT_MAX || cols > INT_MAX) {
        throw InputError("matrix dimension " + std::to_string(std::max(rows, cols)) +
                         " exceeds ScaLAPACK's 32-bit index limit");
    }
    // ScaLAPACK and BLAS index a rank's local array with 32-bit integers (LP64): the largest
    // one, process (0, 0)'s, must hold fewer than 2^31 elements. The verdict is replicated
    // (every rank of the grid computes it from the same shape), so every rank throws
    // together, with one message from rank 0, before anything is allocated.
    const Index largest = local_extent(rows_, block_rows_, 0, grid_->rows()) *
                          local_extent(cols_, block_cols_, 0, grid_->cols());
    if (largest > INT_MAX) {
        // The fewest ranks whose most square grid passes (the blocks' rounding included).
        long long ranks_needed = grid_->rows() * grid_->cols();
        for (int p = static_cast<int>(ranks_needed) + 1; p < (1 << 24); ++p) {
            int r = 0, c = 0;
            most_square_shape(p, r, c);
            if (local_extent(rows_, block_rows_, 0, r) * local_extent(cols_, block_cols_, 0, c) <= INT_MAX) {
                ranks_needed = p;
                break;
            }
        }
        const mpi::Comm comm = grid_->borrow_comm();
        const std::string what =
            "a " + std::to_string(rows_) + " x " + std::to_string(cols_) + " matrix on a " +
            std::to_string(grid_->rows()) + " x " + std::to_string(grid_->cols()) + " grid gives a rank " +
            std::to_string(largest) + " elements, more than the 2^31 - 1 that 32-bit ScaLAPACK and BLAS can index: " +
            "use at least " + std::to_string(ranks_needed) +
            " ranks (or the compressed pipeline, which never forms C)";
        throw StageFailed("setup", comm.is_root() ? std::vector<std::string>{format_error(what, 0, comm.size(), "setup")}
                                                  : std::vector<std::string>{},
                          exit_code::input);
    }
    local_rows_ = local_extent(rows_, block_rows_, grid_->my_row(), grid_->rows());
    local_cols_ = local_extent(cols_, block_cols_, grid_->my_col(), grid_->cols());
    ld_ = std::max<Index>(1, local_rows_);
    local_.assign(static_cast<std::size_t>(ld_ * local_cols_), T(0));

    const int m = static_cast<int>(rows_), n = static_cast<int>(cols_);
    const int zero = 0, ctxt = grid_->context(), lld = static_cast<int>(ld_);
    int info = 0;
    descinit_(desc_.data(), &m, &n, &block_rows_, &block_cols_, &zero, &zero, &ctxt, &lld, &info);
    JSMF_REQUIRE(info == 0, "descinit failed with info " + std::to_string(info));
    // Our index maps must agree with ScaLAPACK's own numroc.
    const int nprow = grid_->rows(), myrow = grid_->my_row();
    JSMF_REQUIRE(numroc_(&m, &block_rows_, &myrow, &zero, &nprow) == local_rows_,
                 "local_extent disagrees with numroc");
}

template <class T>
void BasicDistMatrix<T>::fill(T value) {
    std::fill(local_.begin(), local_.end(), value);
}

template class BasicDistMatrix<double>;
template class BasicDistMatrix<float>;

DistMatrixF to_single(const DistMatrix& A) {
    DistMatrixF out(A.grid_ptr(), A.rows(), A.cols(), A.block_rows(), A.block_cols());
    out.local() = A.local().cast<float>();
    return out;
}

void widen_into(const DistMatrixF& from, DistMatrix& into) {
    JSMF_REQUIRE(from.rows() == into.rows() && from.cols() == into.cols() && from.block_rows() == into.block_rows() &&
                     from.block_cols() == into.block_cols() && &from.grid() == &into.grid(),
                 "widen_into: the layouts differ");
    into.local() = from.local().cast<double>();
}

DistMatrix copy(const DistMatrix& A) {
    DistMatrix out(A.grid_ptr(), A.rows(), A.cols(), A.block_rows(), A.block_cols());
    out.local() = A.local();
    return out;
}

Eigen::MatrixXd gather_all(const DistMatrix& A) {
    const Grid& grid = A.grid();
    const mpi::Comm comm = grid.borrow_comm();
    // Pack the local piece densely (without the leading-dimension padding).
    std::vector<double> mine(static_cast<std::size_t>(A.local_rows() * A.local_cols()));
    Eigen::Map<Eigen::MatrixXd>(mine.data(), A.local_rows(), A.local_cols()) = A.local();
    JSMF_REQUIRE(A.rows() * A.cols() < INT_MAX, "gather_all is for small matrices only");
    std::vector<int> counts(comm.size());
    for (int r = 0; r < comm.size(); ++r) {
        const int pr = r / grid.cols(), pc = r % grid.cols();
        counts[r] = static_cast<int>(local_extent(A.rows(), A.block_rows(), pr, grid.rows()) *
                                     local_extent(A.cols(), A.block_cols(), pc, grid.cols()));
    }
    const std::vector<int> displs = mpi::displacements(counts);
    std::vector<double> all(static_cast<std::size_t>(displs.back() + counts.back()));
    mpi::allgather_varying(comm, mine.data(), static_cast<int>(mine.size()), all.data(), counts);
    Eigen::MatrixXd out(A.rows(), A.cols());
    for (int r = 0; r < comm.size(); ++r) {
        const int pr = r / grid.cols(), pc = r % grid.cols();
        const Index lr = local_extent(A.rows(), A.block_rows(), pr, grid.rows());
        const Index lc = local_extent(A.cols(), A.block_cols(), pc, grid.cols());
        const double* piece = all.data() + displs[r];
        for (Index jl = 0; jl < lc; ++jl) {
            const Index j = ((jl / A.block_cols()) * grid.cols() + pc) * A.block_cols() +
                            jl % A.block_cols();
            for (Index il = 0; il < lr; ++il) {
                const Index i = ((il / A.block_rows()) * grid.rows() + pr) * A.block_rows() +
                                il % A.block_rows();
                out(i, j) = piece[il + jl * lr];
            }
        }
    }
    return out;
}

}  // namespace jsmf::distmat
