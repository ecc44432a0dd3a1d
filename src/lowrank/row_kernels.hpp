// SPDX-License-Identifier: MIT
// The sparse × dense-block kernels of the compressed pipeline (the document operator's
// two passes, ENN's correction E): a CSR matrix against a row-major block of p columns.
// Internal to src/lowrank. `out` must not overlap `X` (the loops are written __restrict).
#pragma once

#include <cstdint>
#include <limits>

#include "jsmf/core/types.hpp"

namespace jsmf::lowrank::detail {

/// Local. For rows r in [begin, end) of the CSR matrix (offsets, cols, values):
/// out row r += Σ_k values[k] · X row cols[k]. X and out are row-major with p columns.
/// The row of X `ahead` nonzeros on is prefetched (0: none; the default is the best
/// measured here, see row_kernels.cpp). With `out_rows`, row r adds into out row
/// out_rows[r] instead (calls that run at once must write distinct out rows).
void csr_gather(const std::int64_t* offsets, const std::uint32_t* cols, const double* values, Index begin, Index end,
                const double* X, Index p, double* out, std::int64_t ahead = 8, const std::uint32_t* out_rows = nullptr);

/// Local. For rows r in [begin, end) of the CSR matrix with keep[r] != 0 (all rows when
/// keep is null): out row cols[k] += values[k] · X row r (the transpose's product, each
/// row of X read once; out takes scattered writes, so it should be small enough to stay
/// in cache). Only the entries with cols[k] in [col_begin, col_end) when these are given
/// (then each row's columns must ascend): calls on disjoint column ranges write disjoint
/// out rows, each summed over r in ascending order, whatever the split.
void csr_scatter(const std::int64_t* offsets, const std::uint32_t* cols, const double* values, Index begin, Index end,
                 const char* keep, const double* X, Index p, double* out, std::uint32_t col_begin = 0,
                 std::uint32_t col_end = std::numeric_limits<std::uint32_t>::max());

}  // namespace jsmf::lowrank::detail
