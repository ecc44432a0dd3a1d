// SPDX-License-Identifier: MIT
// The sparse × dense-block kernels of the compressed pipeline (the document operator's
// two passes, ENN's correction E): a CSR matrix against a row-major block of p columns.
// Internal to src/lowrank. `out` must not overlap `X` (the loops are written __restrict).
#pragma once

#include <cstdint>

#include "jsmf/core/types.hpp"

namespace jsmf::lowrank::detail {

/// Local. For rows r in [begin, end) of the CSR matrix (offsets, cols, values):
/// out row r += Σ_k values[k] · X row cols[k]. X and out are row-major with p columns.
/// The row of X `ahead` nonzeros on is prefetched (0: none; the default is the best
/// measured here, see row_kernels.cpp). With `out_rows`, row r adds into out row
/// out_rows[r] instead (calls that run at once must write distinct out rows).
void csr_gather(const std::int64_t* offsets, const std::uint32_t* cols, const double* values, Index begin, Index end,
                const double* X, Index p, double* out, std::int64_t ahead = 8, const std::uint32_t* out_rows = nullptr);

}  // namespace jsmf::lowrank::detail
