// SPDX-License-Identifier: MIT
// The one distributed layout: a dense matrix in ScaLAPACK 2D block-cyclic form.
#pragma once

#include <Eigen/Core>

#include <array>
#include <memory>
#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/distmat/grid.hpp"

namespace jsmf::distmat {

/// ScaLAPACK array descriptor (DTYPE, CTXT, M, N, MB, NB, RSRC, CSRC, LLD).
using Descriptor = std::array<int, 9>;

/// Dense rows x cols matrix in ScaLAPACK 2D block-cyclic layout with block_rows x
/// block_cols tiles, first block on process (0, 0). Owns its local column-major piece
/// (local_rows() x local_cols(), leading dimension ld()); shares the grid, which
/// outlives it. Global element (i, j) lives on grid process (owner_row(i), owner_col(j))
/// at local position (local_row(i), local_col(j)). All indices are 0-based.
/// Per-rank memory: local_rows() * local_cols() scalars, about rows*cols/p.
/// T is double everywhere but in single-precision AP (DistMatrixF), which holds its
/// iterate in float to halve the bytes each pass over C moves.
template <class T>
class BasicDistMatrix {
public:
    using Scalar = T;
    using Local = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    /// Local (no communication). Zero-initialized.
    BasicDistMatrix(std::shared_ptr<const Grid> grid, Index rows, Index cols, int block_rows, int block_cols);
    BasicDistMatrix(std::shared_ptr<const Grid> grid, Index rows, Index cols, int block)
        : BasicDistMatrix(std::move(grid), rows, cols, block, block) {}
    BasicDistMatrix(BasicDistMatrix&&) noexcept = default;
    BasicDistMatrix& operator=(BasicDistMatrix&&) noexcept = default;
    BasicDistMatrix(const BasicDistMatrix&) = delete;
    BasicDistMatrix& operator=(const BasicDistMatrix&) = delete;

    Index rows() const { return rows_; }
    Index cols() const { return cols_; }
    int block_rows() const { return block_rows_; }
    int block_cols() const { return block_cols_; }
    const Grid& grid() const { return *grid_; }
    const std::shared_ptr<const Grid>& grid_ptr() const { return grid_; }
    const Descriptor& desc() const { return desc_; }

    Index local_rows() const { return local_rows_; }
    Index local_cols() const { return local_cols_; }
    Index ld() const { return ld_; }
    T* data() { return local_.data(); }
    const T* data() const { return local_.data(); }
    Eigen::Map<Local, 0, Eigen::OuterStride<>> local() {
        return {local_.data(), local_rows_, local_cols_, Eigen::OuterStride<>(ld_)};
    }
    Eigen::Map<const Local, 0, Eigen::OuterStride<>> local() const {
        return {local_.data(), local_rows_, local_cols_, Eigen::OuterStride<>(ld_)};
    }

    int owner_row(Index i) const { return static_cast<int>((i / block_rows_) % grid_->rows()); }
    int owner_col(Index j) const { return static_cast<int>((j / block_cols_) % grid_->cols()); }
    /// Local row of global row i on its owner (indxg2l).
    Index local_row(Index i) const {
        return (i / (Index{block_rows_} * grid_->rows())) * block_rows_ + i % block_rows_;
    }
    Index local_col(Index j) const {
        return (j / (Index{block_cols_} * grid_->cols())) * block_cols_ + j % block_cols_;
    }
    /// Global row of this rank's local row l (indxl2g).
    Index global_row(Index l) const {
        return ((l / block_rows_) * grid_->rows() + grid_->my_row()) * Index{block_rows_} +
               l % block_rows_;
    }
    Index global_col(Index l) const {
        return ((l / block_cols_) * grid_->cols() + grid_->my_col()) * Index{block_cols_} +
               l % block_cols_;
    }
    bool owns(Index i, Index j) const {
        return owner_row(i) == grid_->my_row() && owner_col(j) == grid_->my_col();
    }
    /// Rank (in grid().comm()) that owns global element (i, j).
    int owner_rank(Index i, Index j) const { return grid_->rank_of(owner_row(i), owner_col(j)); }

    /// Local. Sets every local entry to `value`.
    void fill(T value);

private:
    std::shared_ptr<const Grid> grid_;
    Index rows_ = 0, cols_ = 0;
    int block_rows_ = 0, block_cols_ = 0;
    Index local_rows_ = 0, local_cols_ = 0, ld_ = 1;
    Descriptor desc_{};
    std::vector<T> local_;
};

using DistMatrix = BasicDistMatrix<double>;
using DistMatrixF = BasicDistMatrix<float>;
extern template class BasicDistMatrix<double>;
extern template class BasicDistMatrix<float>;

/// Local. Number of rows (or columns) of an n-long dimension, split in blocks of `block`
/// over `procs` processes, held by process `proc` (numroc).
Index local_extent(Index n, int block, int proc, int procs);

/// Local (no communication). A deep copy: same grid, shape, blocks and entries.
/// Memory: one more local(A).
DistMatrix copy(const DistMatrix& A);

/// Local. A in single precision (each entry rounded to nearest float): same grid, shape
/// and blocks. Memory: local(A) floats.
DistMatrixF to_single(const DistMatrix& A);

/// Local. into ← from widened to double (exact); the two must have the same layout.
void widen_into(const DistMatrixF& from, DistMatrix& into);

/// Collective on A.grid(). The whole matrix on every rank, for tests and small
/// diagnostics only. Memory: rows*cols doubles on every rank.
Eigen::MatrixXd gather_all(const DistMatrix& A);

}  // namespace jsmf::distmat
