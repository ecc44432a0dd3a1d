// SPDX-License-Identifier: MIT
// Google Benchmark: this machine's DGEMM rate on one core (the limit AP iterations are
// compared against), and the product shape AP actually runs (N×N by N×p).
#include <benchmark/benchmark.h>

#include <vector>

extern "C" void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                       const int*, const double*, const int*, const double*, double*, const int*);

namespace {
void run(benchmark::State& state, int m, int n, int k) {
    std::vector<double> a(static_cast<std::size_t>(m) * k, 1.0), b(static_cast<std::size_t>(k) * n, 0.5),
        c(static_cast<std::size_t>(m) * n);
    const double one = 1, zero = 0;
    for (auto _ : state) {
        dgemm_("N", "N", &m, &n, &k, &one, a.data(), &m, b.data(), &k, &zero, c.data(), &m);
        benchmark::DoNotOptimize(c.data());
    }
    state.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * n * k * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
void BM_DgemmSquare(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    run(state, n, n, n);
}
// KOS on one rank: C (6906 × 6906) times a block of p = K + max(10, K/5) vectors.
void BM_DgemmTallSkinny(benchmark::State& state) {
    run(state, 6906, static_cast<int>(state.range(0)), 6906);
}
BENCHMARK(BM_DgemmSquare)->Arg(2000)->Arg(4000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DgemmTallSkinny)->Arg(20)->Arg(60)->Arg(120)->Unit(benchmark::kMillisecond);
}  // namespace

BENCHMARK_MAIN();
