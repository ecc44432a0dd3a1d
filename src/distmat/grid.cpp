// SPDX-License-Identifier: MIT
// A BLACS process grid.
#include "jsmf/distmat/grid.hpp"

#include <string>

#include "distmat/detail/scalapack_api.hpp"

namespace jsmf::distmat {

void most_square_shape(int p, int& rows, int& cols) {
    JSMF_REQUIRE(p >= 1, "grid needs at least one process");
    rows = 1;
    for (int r = 1; r * r <= p; ++r) {
        if (p % r == 0) rows = r;
    }
    cols = p / rows;
}

std::string long_grid_warning(int p) {
    int rows = 0, cols = 0;
    most_square_shape(p, rows, cols);
    if (cols <= 4 * rows) return {};
    const auto squarish = [](int q) {
        int r = 0, c = 0;
        most_square_shape(q, r, c);
        return c <= 2 * r;
    };
    int below = p - 1, above = p + 1;
    while (below > 1 && !squarish(below)) --below;
    while (!squarish(above)) ++above;
    return std::to_string(p) + " ranks lay C out on a " + std::to_string(rows) + "x" + std::to_string(cols) +
           " grid (no squarer shape): every block product reduces over a whole grid row of " + std::to_string(cols) +
           " ranks, and the co-occurrence count sends each rank the whole word list of every document it "
           "touches (one grid row holds all of C's rows); " + std::to_string(below) + " or " +
           std::to_string(above) + " ranks give a squarer grid (or choose one with --grid)";
}

std::shared_ptr<const Grid> Grid::most_square(const mpi::Comm& comm) {
    int rows = 0, cols = 0;
    most_square_shape(comm.size(), rows, cols);
    return create(comm, rows, cols);
}

std::shared_ptr<const Grid> Grid::create(const mpi::Comm& comm, int rows, int cols) {
    if (rows < 1 || cols < 1 || rows * cols != comm.size()) {
        throw InputError("process grid " + std::to_string(rows) + "x" + std::to_string(cols) +
                         " does not match the " + std::to_string(comm.size()) + " MPI ranks");
    }
    return std::shared_ptr<const Grid>(new Grid(comm, rows, cols));
}

Grid::Grid(const mpi::Comm& comm, int rows, int cols)
    : comm_(comm.raw()), rows_(rows), cols_(cols), rank_(comm.rank()) {
    system_handle_ = Csys2blacs_handle(comm_);
    context_ = system_handle_;
    Cblacs_gridinit(&context_, "Row", rows_, cols_);
    int nprow = 0, npcol = 0;
    Cblacs_gridinfo(context_, &nprow, &npcol, &my_row_, &my_col_);
    JSMF_REQUIRE(nprow == rows_ && npcol == cols_, "BLACS grid shape differs from the request");
    // Our routing assumes row-major rank order; BLACS promises it for "Row".
    JSMF_REQUIRE(rank_of(my_row_, my_col_) == rank_, "BLACS grid is not in row-major rank order");
}

Grid::~Grid() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (context_ >= 0) Cblacs_gridexit(context_);
    if (system_handle_ >= 0) Cfree_blacs_system_handle(system_handle_);
}

}  // namespace jsmf::distmat
