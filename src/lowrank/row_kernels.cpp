// SPDX-License-Identifier: MIT
// Row kernels, compiled for several instruction sets and picked at run time: jsmf builds
// for the baseline x86-64 (clusters build on one node and run on others), where these
// loops get 2-wide SSE2; AVX2 runs them 2.5 times faster (measured on this machine's
// EPYC: 57 → 23 ns per nonzero at p = 120). Dense products go to BLAS, which dispatches
// by itself.
#include "row_kernels.hpp"

#include <algorithm>
#include <cstddef>  // __GLIBC__ comes with any libc header
#include <limits>

// (target_clones needs GNU ifuncs: glibc on x86-64. The file is compiled with
// -ffp-contract=off, so no clone fuses a·x + z into an FMA: the same bits on every CPU.)
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define JSMF_ROW_KERNEL __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define JSMF_ROW_KERNEL
#endif

namespace jsmf::lowrank::detail {

// The gather reads a row of X per nonzero at a random place: at N = 10⁵, p = 120 the
// block is ~100 MB and the row (~1 KB) comes from memory. The hardware prefetcher follows
// a row once inside it but cannot guess the next one, so each row costs a memory latency;
// the column ids are known ahead, so the rows `ahead` nonzeros on are requested now.
// Measured on this machine's EPYC (35 M nonzeros, Zipf word ids, p = 120, one process and
// two at once): 96 → 43 ns a nonzero at 8 ahead (1: 67, 4: 46, 16: 45; row_kernel_bench
// measures it). Prefetches change no arithmetic: the same bits.
JSMF_ROW_KERNEL
void csr_gather(const std::int64_t* offsets, const std::uint32_t* cols, const double* values, Index begin, Index end,
                const double* X, Index p, double* out, std::int64_t ahead, const std::uint32_t* out_rows) {
    const std::int64_t last = offsets[end];
    const Index row_bytes = p * static_cast<Index>(sizeof(double));
    for (Index r = begin; r < end; ++r) {
        double* __restrict z = out + (out_rows ? static_cast<Index>(out_rows[r]) : r) * p;
        for (std::int64_t k = offsets[r]; k < offsets[r + 1]; ++k) {
            if (ahead > 0 && k + ahead < last) {
                const char* next = reinterpret_cast<const char*>(X + static_cast<Index>(cols[k + ahead]) * p);
                for (Index b = 0; b < row_bytes; b += 64) __builtin_prefetch(next + b);
            }
            const double a = values[k];
            const double* __restrict x = X + static_cast<Index>(cols[k]) * p;
            for (Index j = 0; j < p; ++j) z[j] += a * x[j];
        }
    }
}

JSMF_ROW_KERNEL
void csr_scatter(const std::int64_t* offsets, const std::uint32_t* cols, const double* values, Index begin, Index end,
                 const char* keep, const double* X, Index p, double* out, std::uint32_t col_begin,
                 std::uint32_t col_end) {
    const bool all_cols = col_begin == 0 && col_end == std::numeric_limits<std::uint32_t>::max();
    for (Index r = begin; r < end; ++r) {
        if (keep && !keep[r]) continue;
        const double* __restrict x = X + r * p;
        std::int64_t first = offsets[r], last = offsets[r + 1];
        if (!all_cols) {  // the row's columns ascend: its share is one run
            first = std::lower_bound(cols + first, cols + last, col_begin) - cols;
            last = std::lower_bound(cols + first, cols + last, col_end) - cols;
        }
        for (std::int64_t k = first; k < last; ++k) {
            const double a = values[k];
            double* __restrict z = out + static_cast<Index>(cols[k]) * p;
            for (Index j = 0; j < p; ++j) z[j] += a * x[j];
        }
    }
}

}  // namespace jsmf::lowrank::detail
