// SPDX-License-Identifier: MIT
// Google Benchmark: this machine's DGEMM rate on one core (the limit AP iterations are
// compared against), and the product shape AP actually runs (N×N by N×p).
#include <benchmark/benchmark.h>

#include <vector>

extern "C" void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                       const int*, const double*, const int*, const double*, double*, const int*);
extern "C" void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                       const int*, const float*, const int*, const float*, float*, const int*);

namespace {
void gemm(const int* m, const int* n, const int* k, const double* a, const double* b, double* c) {
    const double one = 1, zero = 0;
    dgemm_("N", "N", m, n, k, &one, a, m, b, k, &zero, c, m);
}
void gemm(const int* m, const int* n, const int* k, const float* a, const float* b, float* c) {
    const float one = 1, zero = 0;
    sgemm_("N", "N", m, n, k, &one, a, m, b, k, &zero, c, m);
}
// GFLOP/s, and GB/s of the m × k operand read once per product (what bounds AP's
// tall-skinny products: compare with BM_StreamRead).
template <class T>
void run(benchmark::State& state, int m, int n, int k) {
    std::vector<T> a(static_cast<std::size_t>(m) * k, T(1)), b(static_cast<std::size_t>(k) * n, T(0.5)),
        c(static_cast<std::size_t>(m) * n);
    for (auto _ : state) {
        gemm(&m, &n, &k, a.data(), b.data(), c.data());
        benchmark::DoNotOptimize(c.data());
    }
    state.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * n * k * state.iterations() / 1e9, benchmark::Counter::kIsRate);
    state.counters["GB/s"] = benchmark::Counter(double(sizeof(T)) * m * k * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
void BM_DgemmSquare(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    run<double>(state, n, n, n);
}
// KOS on one rank: C (6906 × 6906) times a block of p = K + max(10, K/5) vectors.
void BM_DgemmTallSkinny(benchmark::State& state) {
    run<double>(state, 6906, static_cast<int>(state.range(0)), 6906);
}
// The same in single precision (--precision single): half the bytes per pass.
void BM_SgemmTallSkinny(benchmark::State& state) {
    run<float>(state, 6906, static_cast<int>(state.range(0)), 6906);
}
// The machine's read bandwidth on an operand of C's size (a sum over 6906² doubles).
void BM_StreamRead(benchmark::State& state) {
    const std::size_t n = std::size_t{6906} * 6906;
    std::vector<double> a(n, 1.0);
    for (auto _ : state) {
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (std::size_t i = 0; i + 3 < n; i += 4) {
            s0 += a[i];
            s1 += a[i + 1];
            s2 += a[i + 2];
            s3 += a[i + 3];
        }
        benchmark::DoNotOptimize(s0 + s1 + s2 + s3);
    }
    state.counters["GB/s"] = benchmark::Counter(8.0 * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DgemmSquare)->Arg(2000)->Arg(4000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DgemmTallSkinny)->Arg(20)->Arg(60)->Arg(120)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SgemmTallSkinny)->Arg(20)->Arg(60)->Arg(120)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StreamRead)->Unit(benchmark::kMillisecond);
}  // namespace

BENCHMARK_MAIN();
