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
// Four nonzeros of a row at a time: out's row stays in registers across them instead of
// being loaded and stored once per nonzero (the store-and-reload of z bounded the loop:
// 46 % of its samples on KOS's ENN). Each sum is still z + a₀x₀, then + a₁x₁, … in the
// nonzeros' order, so the bits are those of one nonzero at a time.
JSMF_ROW_KERNEL
void csr_gather(const std::int64_t* offsets, const std::uint32_t* cols, const double* values, Index begin, Index end,
                const double* X, Index p, double* out, std::int64_t ahead, const std::uint32_t* out_rows) {
    const std::int64_t last = offsets[end];
    const Index row_bytes = p * static_cast<Index>(sizeof(double));
    const auto prefetch = [&](std::int64_t k) {
        if (ahead > 0 && k + ahead < last) {
            const char* next = reinterpret_cast<const char*>(X + static_cast<Index>(cols[k + ahead]) * p);
            for (Index b = 0; b < row_bytes; b += 64) __builtin_prefetch(next + b);
        }
    };
    for (Index r = begin; r < end; ++r) {
        double* __restrict z = out + (out_rows ? static_cast<Index>(out_rows[r]) : r) * p;
        std::int64_t k = offsets[r];
        const std::int64_t row_end = offsets[r + 1];
        for (; k + 4 <= row_end; k += 4) {
            for (std::int64_t q = 0; q < 4; ++q) prefetch(k + q);
            const double a0 = values[k], a1 = values[k + 1], a2 = values[k + 2], a3 = values[k + 3];
            const double* __restrict x0 = X + static_cast<Index>(cols[k]) * p;
            const double* __restrict x1 = X + static_cast<Index>(cols[k + 1]) * p;
            const double* __restrict x2 = X + static_cast<Index>(cols[k + 2]) * p;
            const double* __restrict x3 = X + static_cast<Index>(cols[k + 3]) * p;
            for (Index j = 0; j < p; ++j) z[j] = (((z[j] + a0 * x0[j]) + a1 * x1[j]) + a2 * x2[j]) + a3 * x3[j];
        }
        for (; k < row_end; ++k) {
            prefetch(k);
            const double a = values[k];
            const double* __restrict x = X + static_cast<Index>(cols[k]) * p;
            for (Index j = 0; j < p; ++j) z[j] += a * x[j];
        }
    }
}

}  // namespace jsmf::lowrank::detail
