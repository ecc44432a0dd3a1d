// SPDX-License-Identifier: MIT
// Google Benchmark: the document operator's gather (csr_gather, src/lowrank) at the shape
// of a NYTimes-sized product on one rank: 100,000 words of Zipfian frequency, ~234
// distinct words a document, a 120-column block (96 MB, far past the caches), with and
// without its software prefetch; next to the machine's memory bandwidth (a triad).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "row_kernels.hpp"
#include "triad.hpp"

namespace {
using jsmf::Index;

struct Csr {
    std::vector<std::int64_t> offsets{0};
    std::vector<std::uint32_t> cols;
    std::vector<double> values;
    Index rows() const { return static_cast<Index>(offsets.size()) - 1; }
};

constexpr Index kWords = 100000, kColumns = 120;

// Documents as rows, their distinct words (Zipf, exponent 1) as columns.
const Csr& documents() {
    static const Csr c = [] {
        std::vector<double> cdf(static_cast<std::size_t>(kWords));
        double total = 0;
        for (Index i = 0; i < kWords; ++i) cdf[static_cast<std::size_t>(i)] = total += 1.0 / static_cast<double>(i + 1);
        for (double& v : cdf) v /= total;
        std::mt19937_64 rng(1);
        std::uniform_real_distribution<double> u(0, 1);
        Csr d;
        for (int m = 0; m < 17000; ++m) {
            std::vector<std::uint32_t> words;
            for (int t = 0; t < 330; ++t)
                words.push_back(static_cast<std::uint32_t>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin()));
            std::sort(words.begin(), words.end());
            words.erase(std::unique(words.begin(), words.end()), words.end());
            for (const auto w : words) {
                d.cols.push_back(w);
                d.values.push_back(1e-3);
            }
            d.offsets.push_back(static_cast<std::int64_t>(d.cols.size()));
        }
        return d;
    }();
    return c;
}

void BM_DocumentGather(benchmark::State& state) {
    const Csr& d = documents();
    const std::vector<double> X(static_cast<std::size_t>(kWords * kColumns), 1.0);
    std::vector<double> Z(static_cast<std::size_t>(d.rows() * kColumns));
    for (auto _ : state) {
        std::fill(Z.begin(), Z.end(), 0.0);
        jsmf::lowrank::detail::csr_gather(d.offsets.data(), d.cols.data(), d.values.data(), 0, d.rows(), X.data(),
                                          kColumns, Z.data(), state.range(0));
        benchmark::DoNotOptimize(Z.data());
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(d.cols.size()));  // nonzeros
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(d.cols.size()) * kColumns * 8);  // rows read
    state.SetLabel(state.range(0) == 0 ? "no prefetch" : "prefetch " + std::to_string(state.range(0)) + " ahead");
}

void BM_TriadBandwidth(benchmark::State& state) { jsmf::bench::triad_bandwidth(state); }

BENCHMARK(BM_TriadBandwidth)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DocumentGather)->Arg(0)->Arg(2)->Arg(8)->Arg(32)->Unit(benchmark::kMillisecond);
}  // namespace

BENCHMARK_MAIN();
