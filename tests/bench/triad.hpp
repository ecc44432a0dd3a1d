// SPDX-License-Identifier: MIT
// The machine's memory bandwidth as the benchmarks report it beside their kernels: a
// STREAM-like triad, a[i] = b[i] + s·c[i] over 3 × 32 MiB, 24 bytes of traffic per element.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace jsmf::bench {

inline void triad_bandwidth(benchmark::State& state) {
    const std::size_t n = std::size_t{4} << 20;
    std::vector<double> a(n, 1.0), b(n, 2.0), c(n, 3.0);
    for (auto _ : state) {
        for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 0.5 * c[i];
        benchmark::DoNotOptimize(a.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * n * 24));
}

}  // namespace jsmf::bench
