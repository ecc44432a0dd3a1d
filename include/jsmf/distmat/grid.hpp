// SPDX-License-Identifier: MIT
// A BLACS process grid P_r x P_c over a communicator, as square as possible.
#pragma once

#include <memory>
#include <string>

#include "jsmf/mpi/comm.hpp"

namespace jsmf::distmat {

/// A P_r x P_c process grid in row-major rank order (rank = row * P_c + col) with its
/// BLACS context. Non-copyable and shared by the matrices that live on it
/// (std::shared_ptr<const Grid>), so it outlives them.
class Grid {
public:
    /// Collective on `comm`. The most-square grid: P_r = the largest divisor of p with
    /// P_r <= sqrt(p), P_c = p / P_r (p = 2 gives 1 x 2, p = 4 gives 2 x 2).
    static std::shared_ptr<const Grid> most_square(const mpi::Comm& comm);
    /// Collective on `comm`. An explicit shape; rows * cols must equal comm.size().
    static std::shared_ptr<const Grid> create(const mpi::Comm& comm, int rows, int cols);

    Grid(const Grid&) = delete;
    Grid& operator=(const Grid&) = delete;
    /// Releases the BLACS context. Open MPI frees the grid's communicators locally, so
    /// this does not wait for other ranks.
    ~Grid();

    int rows() const { return rows_; }
    int cols() const { return cols_; }
    int my_row() const { return my_row_; }
    int my_col() const { return my_col_; }
    int rank() const { return rank_; }
    int size() const { return rows_ * cols_; }
    /// The rank (in comm()) of the process at grid position (row, col).
    int rank_of(int row, int col) const { return row * cols_ + col; }
    int context() const { return context_; }
    MPI_Comm comm() const { return comm_; }
    /// A borrowed Comm over the same communicator, for the mpi:: collectives.
    mpi::Comm borrow_comm() const { return mpi::Comm(comm_); }

private:
    Grid(const mpi::Comm& comm, int rows, int cols);
    MPI_Comm comm_ = MPI_COMM_NULL;
    int system_handle_ = -1;
    int context_ = -1;
    int rows_ = 0, cols_ = 0, my_row_ = -1, my_col_ = -1, rank_ = -1;
};

/// Local. The most-square factorization (rows <= cols) of p.
void most_square_shape(int p, int& rows, int& cols);

/// Local. Empty, or a warning when the most square grid of `p` ranks is still long and thin
/// (more than 4 columns per row: a prime p ≥ 5 gives 1 × p): C's row blocks then sit on
/// a single grid row, every block product reduces over all p ranks of it, and the
/// co-occurrence count ships each document's whole word list to every rank it touches
/// (cooc/fragment_router.hpp). Names the nearest rank counts below and above whose
/// grid is at most 2 columns per row, and --grid.
std::string long_grid_warning(int p);

}  // namespace jsmf::distmat
