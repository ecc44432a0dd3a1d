// SPDX-License-Identifier: MIT
// Google Benchmark: the co-occurrence kernels on one rank, next to the machine's memory
// bandwidth (a STREAM-like triad), so their rates can be read as a fraction of the limit.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <Eigen/SparseCore>
#include <vector>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/distmat/grid.hpp"
#include "jsmf/mpi/comm.hpp"
#include "jsmf/synth/synth.hpp"
#include "triad.hpp"

namespace {
using namespace jsmf;

const synth::SynthCorpus& corpus() {
    static const synth::SynthCorpus c = [] {
        synth::SynthOptions o;
        o.num_docs = 3000;
        o.num_words = 4000;
        o.num_topics = 20;
        o.mean_doc_length = 150;
        o.seed = 1;
        return synth::generate(o);
    }();
    return c;
}

Index pair_updates(const corpus::Shard& docs) {
    Index total = 0;
    for (Index m = 0; m < docs.num_docs(); ++m) {
        const Index u = docs.doc_offsets[static_cast<std::size_t>(m) + 1] - docs.doc_offsets[static_cast<std::size_t>(m)];
        total += u * u;
    }
    return total;
}

void cooc_kernel(benchmark::State& state, cooc::Exchange exchange) {
    const auto& c = corpus();
    const auto world = mpi::Comm::world();
    const auto grid = distmat::Grid::most_square(world);
    cooc::CoocOptions options;
    options.exchange = exchange;
    for (auto _ : state) {
        corpus::ShardStream stream(c.docs);
        auto result = cooc::build_cooccurrence(grid, c.B.rows(), stream, options);
        benchmark::DoNotOptimize(result.C.data());
    }
    state.SetItemsProcessed(state.iterations() * pair_updates(c.docs));
    state.counters["docs/s"] = benchmark::Counter(static_cast<double>(c.docs.num_docs()) * state.iterations(),
                                                  benchmark::Counter::kIsRate);
}

void BM_CoocDocsExchange(benchmark::State& state) { cooc_kernel(state, cooc::Exchange::docs); }
void BM_CoocPairsExchange(benchmark::State& state) { cooc_kernel(state, cooc::Exchange::pairs); }

void BM_EigenSparseHHt(benchmark::State& state) {
    const auto& c = corpus();
    std::vector<Eigen::Triplet<double>> entries;
    for (Index m = 0; m < c.docs.num_docs(); ++m)
        for (auto e = c.docs.doc_offsets[static_cast<std::size_t>(m)]; e < c.docs.doc_offsets[static_cast<std::size_t>(m) + 1]; ++e)
            entries.emplace_back(c.docs.words[static_cast<std::size_t>(e)], m, c.docs.counts[static_cast<std::size_t>(e)]);
    Eigen::SparseMatrix<double> H(c.B.rows(), c.docs.num_docs());
    H.setFromTriplets(entries.begin(), entries.end());
    for (auto _ : state) {
        Eigen::SparseMatrix<double> C = H * H.transpose();
        benchmark::DoNotOptimize(C.valuePtr());
    }
    state.SetItemsProcessed(state.iterations() * pair_updates(c.docs));
}

void BM_TriadBandwidth(benchmark::State& state) { jsmf::bench::triad_bandwidth(state); }

BENCHMARK(BM_TriadBandwidth)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CoocDocsExchange)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CoocPairsExchange)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EigenSparseHHt)->Unit(benchmark::kMillisecond);
}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    MPI_Finalize();
    return 0;
}
