// SPDX-License-Identifier: MIT
// jsmf report's per-rank work on its block of B's rows (report/): the Jensen–Shannon terms
// (Σ_w nnz(w)² pairs) and the slider's words of every topic (a sort of the rows per topic,
// then 101 rankings of the few that survive the dominance test). B is drawn as LAW's is:
// each row positive in a share of the topics (15 % by default: KOS's K = 100 model has 14.7
// of 100 per word), p(w) a Zipf-like corpus frequency.
// Usage: report_bench [--benchmark_filter=…]; the arguments are the rows (a rank's share:
// 500,000 = N = 10⁶ on 2 ranks) and K.
#include <benchmark/benchmark.h>

#include <Eigen/Core>

#include <random>

#include "jsmf/report/report.hpp"

namespace {

struct Topics {
    Eigen::MatrixXd B;
    Eigen::VectorXd p_w;
};

Topics draw(jsmf::Index rows, jsmf::Index K, double positive = 0.15) {
    std::mt19937_64 gen(1);
    std::uniform_real_distribution<double> u(0, 1);
    Topics t{Eigen::MatrixXd::Zero(rows, K), Eigen::VectorXd(rows)};
    for (jsmf::Index w = 0; w < rows; ++w) {
        const double zipf = 1.0 / static_cast<double>(w + 10);
        t.p_w(w) = zipf;
        for (jsmf::Index k = 0; k < K; ++k)
            if (u(gen) < positive) t.B(w, k) = zipf * u(gen);
    }
    for (jsmf::Index k = 0; k < K; ++k) t.B.col(k) /= t.B.col(k).sum();
    t.p_w /= t.p_w.sum();
    return t;
}

void BM_JsDivergenceTerms(benchmark::State& state) {
    const Topics t = draw(state.range(0), state.range(1));
    for (auto _ : state) benchmark::DoNotOptimize(jsmf::report::js_divergence_terms(t.B));
    state.counters["rows/s"] = benchmark::Counter(static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_RelevantWordsEveryTopic(benchmark::State& state) {
    const Topics t = draw(state.range(0), state.range(1));
    std::size_t kept = 0;
    for (auto _ : state) {
        kept = 0;
        for (jsmf::Index k = 0; k < t.B.cols(); ++k) kept += jsmf::report::relevant_words(t.B.col(k), t.p_w, 30, 100).size();
    }
    state.counters["words per topic"] = static_cast<double>(kept) / static_cast<double>(t.B.cols());
}

}  // namespace

BENCHMARK(BM_JsDivergenceTerms)->Args({100000, 100})->Args({500000, 200})->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_RelevantWordsEveryTopic)->Args({100000, 100})->Args({500000, 200})->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_MAIN();
