// SPDX-License-Identifier: MIT
// Google Benchmark: the document operator's gather (csr_gather, src/lowrank) at the shape
// of a NYTimes-sized product on one rank: 100,000 words of Zipfian frequency, ~234
// distinct words a document, a 120-column block (96 MB, far past the caches), with and
// without its software prefetch; next to the machine's memory bandwidth (a triad). And
// the whole local product H (Hᵀ X), its words' pass over the whole Z or by blocks of
// documents (as the operator runs it), at 10⁵ and 10⁶ words (the latter needs ~3.5 GB).
#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <cstdint>
#include <random>
#include <vector>

#include "jsmf/lowrank/enn.hpp"
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

// `docs` documents of 330 tokens as rows, their distinct words (Zipf over `words`, exponent
// 1) as columns.
Csr zipf_documents(Index docs, Index words, std::uint64_t seed) {
    std::vector<double> cdf(static_cast<std::size_t>(words));
    double total = 0;
    for (Index i = 0; i < words; ++i) cdf[static_cast<std::size_t>(i)] = total += 1.0 / static_cast<double>(i + 1);
    for (double& v : cdf) v /= total;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    Csr d;
    for (Index m = 0; m < docs; ++m) {
        std::vector<std::uint32_t> ids;
        for (int t = 0; t < 330; ++t)
            ids.push_back(static_cast<std::uint32_t>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin()));
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        for (const auto w : ids) {
            d.cols.push_back(w);
            d.values.push_back(1e-3 * static_cast<double>(1 + (w % 7)));
        }
        d.offsets.push_back(static_cast<std::int64_t>(d.cols.size()));
    }
    return d;
}

const Csr& documents() {
    static const Csr c = zipf_documents(17000, kWords, 1);
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


// The whole local product W = H (Hᵀ X) at one rank's share of a NYTimes-shaped corpus
// (150,000 documents, 330 Zipfian tokens each, over 100,000 or 1,000,000 words): the
// documents' pass Z = Hᵀ X (Z is 150,000 × 120, 144 MB), then the words' pass W = H Z.
// Two ways of doing the words' pass: over the whole word-major CSR (every nonzero reads a
// row of Z from memory), or by blocks of documents (Z of one block stays in cache; each
// word present in a block adds that block's share into its row of W). Both sum each W row
// over documents in ascending order: the same bits. The blocks are on huge pages, as the
// operator's are.
const Csr& rank_documents(Index words) {
    static std::map<Index, Csr> made;
    if (const auto it = made.find(words); it == made.end()) made[words] = zipf_documents(150000, words, 2);
    return made[words];
}

// The transpose of documents [first, last) of d: one CSR row per word present, its column
// ids relative to `first` (ascending), and the word of each row.
struct WordBlock {
    Csr rows;
    std::vector<std::uint32_t> word;
};
WordBlock transpose_block(const Csr& d, Index words, Index first, Index last) {
    std::vector<std::int64_t> count(static_cast<std::size_t>(words) + 1, 0);
    for (auto k = d.offsets[static_cast<std::size_t>(first)]; k < d.offsets[static_cast<std::size_t>(last)]; ++k)
        ++count[d.cols[static_cast<std::size_t>(k)] + 1];
    WordBlock b;
    std::vector<std::int64_t> slot(static_cast<std::size_t>(words), -1);
    for (Index w = 0; w < words; ++w)
        if (count[static_cast<std::size_t>(w) + 1] > 0) {
            slot[static_cast<std::size_t>(w)] = b.rows.offsets.back();
            b.rows.offsets.push_back(b.rows.offsets.back() + count[static_cast<std::size_t>(w) + 1]);
            b.word.push_back(static_cast<std::uint32_t>(w));
        }
    b.rows.cols.resize(static_cast<std::size_t>(b.rows.offsets.back()));
    b.rows.values.resize(b.rows.cols.size());
    for (Index m = first; m < last; ++m)
        for (auto k = d.offsets[static_cast<std::size_t>(m)]; k < d.offsets[static_cast<std::size_t>(m) + 1]; ++k) {
            const auto at = static_cast<std::size_t>(slot[d.cols[static_cast<std::size_t>(k)]]++);
            b.rows.cols[at] = static_cast<std::uint32_t>(m - first);
            b.rows.values[at] = d.values[static_cast<std::size_t>(k)];
        }
    return b;
}

// n doubles on 2 MiB pages where the kernel allows it.
struct HugeBlock {
    double* data = nullptr;
    std::size_t size = 0;
    explicit HugeBlock(std::size_t n) : size(n) {
        const std::size_t huge = std::size_t{2} << 20, bytes = (n * sizeof(double) + huge - 1) / huge * huge;
        data = static_cast<double*>(std::aligned_alloc(huge, bytes));
        if (!data) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
        (void)madvise(data, bytes, MADV_HUGEPAGE);
#endif
        std::fill(data, data + n, 0.0);
    }
    ~HugeBlock() { std::free(data); }
    HugeBlock(const HugeBlock&) = delete;
    HugeBlock& operator=(const HugeBlock&) = delete;
};

// Args: documents per block (0: the word-major pass over the whole Z), words.
void BM_DocumentProduct(benchmark::State& state) {
    const Index words = state.range(1);
    const Csr& d = rank_documents(words);
    const Index block = state.range(0) > 0 ? state.range(0) : d.rows();
    std::vector<WordBlock> blocks;
    for (Index m = 0; m < d.rows(); m += block)
        blocks.push_back(transpose_block(d, words, m, std::min(d.rows(), m + block)));
    HugeBlock X(static_cast<std::size_t>(words * kColumns)), W(X.size), Z(static_cast<std::size_t>(block * kColumns));
    for (std::size_t i = 0; i < X.size; ++i) X.data[i] = 1.0 / static_cast<double>(1 + i % 13);
    std::size_t pairs = 0;
    for (const WordBlock& b : blocks) pairs += b.word.size();
    for (auto _ : state) {
        std::fill(W.data, W.data + W.size, 0.0);
        for (std::size_t b = 0; b < blocks.size(); ++b) {
            const Index first = static_cast<Index>(b) * block, last = std::min(d.rows(), first + block);
            std::fill(Z.data, Z.data + Z.size, 0.0);
            jsmf::lowrank::detail::csr_gather(d.offsets.data() + first, d.cols.data(), d.values.data(), 0, last - first,
                                              X.data, kColumns, Z.data);
            const WordBlock& wb = blocks[b];
            jsmf::lowrank::detail::csr_gather(wb.rows.offsets.data(), wb.rows.cols.data(), wb.rows.values.data(), 0,
                                              wb.rows.rows(), Z.data, kColumns, W.data, 8, wb.word.data());
        }
        benchmark::DoNotOptimize(W.data);
    }
    double check = 0;
    for (std::size_t i = 0; i < W.size; ++i) check += W.data[i];
    state.counters["sum"] = check;
    state.counters["word_rows"] = static_cast<double>(pairs);
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(d.cols.size()));  // nonzeros
    state.SetLabel((state.range(0) == 0 ? std::string("words' pass over the whole Z")
                                        : std::to_string(block) + " documents a block") +
                   ", " + std::to_string(words) + " words");
}
BENCHMARK(BM_DocumentProduct)
    ->Args({0, 100000})
    ->Args({4096, 100000})
    ->Args({0, 1000000})
    ->Args({4096, 1000000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

// ENN's correction F (src/lowrank/enn.cpp) at KOS's shape at K = 100 on one of 2 ranks: 3,453
// local rows, l = 2,000 checked columns, p = 105, a given share of the pairs negative (late
// iterations ~2.5 %, early ones ~20 %). Two products: F X_L (a gather from the l × p block,
// which stays in cache; with and without the prefetch) and Fᵀ X as a gather over F's
// transpose, whole (CSC: each column reads its rows of X from wherever they are) or by
// blocks of 512 rows (as ENN keeps it: the block's rows of X stay in cache). And at the
// N = 10⁶ shape's: 500,000 local rows, 3.1 % of the pairs negative (~31 M entries, as
// at that fit's 12th iteration), where X is 420 MB. Args: local rows, negative pairs per
// mille, mode (0 gather, 1 gather without prefetch, 2 transposed gather, 3 by blocks). The
// 10⁶ case holds F, its transpose and the blocked transpose: ~1.2 GB.
void BM_EnnCorrection(benchmark::State& state) {
    const Index rows = state.range(0), l = 2000, p = 105;
    const double density = static_cast<double>(state.range(1)) / 1000.0;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(0, 1);
    Csr F;
    // Each row's columns by geometric gaps (the same law as a draw per pair, far faster at 10⁶ rows).
    const double log_miss = std::log1p(-density);
    for (Index i = 0; i < rows; ++i) {
        for (Index j = static_cast<Index>(std::log(1 - u(rng)) / log_miss); j < l;
             j += 1 + static_cast<Index>(std::log(1 - u(rng)) / log_miss)) {
            F.cols.push_back(static_cast<std::uint32_t>(j));
            F.values.push_back(1e-4 * u(rng));
        }
        F.offsets.push_back(static_cast<std::int64_t>(F.cols.size()));
    }
    Csr Ft;  // the transpose: l rows, columns = local rows ascending
    Ft.offsets.assign(static_cast<std::size_t>(l) + 1, 0);
    for (const auto c : F.cols) ++Ft.offsets[c + 1];
    for (Index j = 0; j < l; ++j) Ft.offsets[static_cast<std::size_t>(j) + 1] += Ft.offsets[static_cast<std::size_t>(j)];
    Ft.cols.resize(F.cols.size());
    Ft.values.resize(F.cols.size());
    {
        std::vector<std::int64_t> at(Ft.offsets.begin(), Ft.offsets.end() - 1);
        for (Index i = 0; i < rows; ++i)
            for (auto k = F.offsets[static_cast<std::size_t>(i)]; k < F.offsets[static_cast<std::size_t>(i) + 1]; ++k) {
                const auto slot = static_cast<std::size_t>(at[F.cols[static_cast<std::size_t>(k)]]++);
                Ft.cols[slot] = static_cast<std::uint32_t>(i);
                Ft.values[slot] = F.values[static_cast<std::size_t>(k)];
            }
    }
    // Fᵀ by blocks of rows (mode 3): per block, its columns' rows ascending; a column's
    // sum continues from block to block, so each is over all rows in ascending order.
    constexpr Index kBlockRows = jsmf::lowrank::kEnnTransposeBlockRows;
    const Index blocks = (rows + kBlockRows - 1) / kBlockRows;
    Csr Fb;
    Fb.offsets.assign(static_cast<std::size_t>(blocks * l) + 1, 0);
    for (Index i = 0; i < rows; ++i)
        for (auto k = F.offsets[static_cast<std::size_t>(i)]; k < F.offsets[static_cast<std::size_t>(i) + 1]; ++k)
            ++Fb.offsets[static_cast<std::size_t>((i / kBlockRows) * l + F.cols[static_cast<std::size_t>(k)]) + 1];
    for (std::size_t s = 1; s < Fb.offsets.size(); ++s) Fb.offsets[s] += Fb.offsets[s - 1];
    Fb.cols.resize(F.cols.size());
    Fb.values.resize(F.cols.size());
    {
        std::vector<std::int64_t> at(Fb.offsets.begin(), Fb.offsets.end() - 1);
        for (Index i = 0; i < rows; ++i)
            for (auto k = F.offsets[static_cast<std::size_t>(i)]; k < F.offsets[static_cast<std::size_t>(i) + 1]; ++k) {
                const auto slot = static_cast<std::size_t>(at[static_cast<std::size_t>((i / kBlockRows) * l + F.cols[static_cast<std::size_t>(k)])]++);
                Fb.cols[slot] = static_cast<std::uint32_t>(i);
                Fb.values[slot] = F.values[static_cast<std::size_t>(k)];
            }
    }
    std::vector<double> X(static_cast<std::size_t>(rows * p)), XL(static_cast<std::size_t>(l * p));
    for (auto& v : X) v = u(rng);
    for (auto& v : XL) v = u(rng);
    std::vector<double> out(static_cast<std::size_t>((state.range(2) >= 2 ? l : rows) * p));
    const int mode = static_cast<int>(state.range(2));
    for (auto _ : state) {
        std::fill(out.begin(), out.end(), 0.0);
        if (mode == 0 || mode == 1)
            jsmf::lowrank::detail::csr_gather(F.offsets.data(), F.cols.data(), F.values.data(), 0, rows, XL.data(), p,
                                              out.data(), mode == 1 ? 0 : 8);
        else if (mode == 2)
            jsmf::lowrank::detail::csr_gather(Ft.offsets.data(), Ft.cols.data(), Ft.values.data(), 0, l, X.data(), p,
                                              out.data());
        else
            for (Index b = 0; b < blocks; ++b)
                jsmf::lowrank::detail::csr_gather(Fb.offsets.data() + b * l, Fb.cols.data(), Fb.values.data(), 0, l,
                                                  X.data(), p, out.data());
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(F.cols.size()));  // nonzeros
    state.SetLabel(std::string(mode == 0 ? "F X_L, gather" : mode == 1 ? "F X_L, gather without prefetch" : mode == 2 ? "F^T X, transposed gather" : "F^T X, by blocks of rows") +
                   ", " + std::to_string(F.cols.size()) + " nonzeros");
}
BENCHMARK(BM_EnnCorrection)
    ->ArgsProduct({{3453}, {25, 200}, {0, 1, 2, 3}})
    ->ArgsProduct({{500000}, {31}, {0, 2, 3}})
    ->Unit(benchmark::kMillisecond);
}  // namespace

BENCHMARK_MAIN();
