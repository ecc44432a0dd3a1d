// SPDX-License-Identifier: MIT
// The one-process baseline for `jsmf cooc`: read the whole corpus, then Eq. 5 as one
// Eigen sparse product C = (1/M)(H̃ H̃ᵀ − diag(Σ_m h_m / (n_m(n_m − 1)))), H̃ = H diag(1/√(n(n−1))).
// Prints the same machine-readable line as jsmf cooc.
// Usage: cooc_baseline DOCWORD [MIN_TOKENS]
#include <Eigen/SparseCore>

#include <cstdio>
#include <string>
#include <vector>

#include "jsmf/core/memory.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/cooc/cooc.hpp"
#include "jsmf/corpus/uci.hpp"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s DOCWORD [MIN_TOKENS]\n", argv[0]);
        return 2;
    }
    using namespace jsmf;
    cooc::CoocOptions options;
    if (argc > 2) options.min_tokens = std::stoll(argv[2]);
    Stopwatch total;
    const auto file = corpus::inspect_uci_file(argv[1]);
    corpus::UciReader reader({file}, corpus::plan_uci_pieces({file}, 0, 1));
    const corpus::Shard shard = corpus::read_all(reader);
    const Index N = file.header.num_words;

    std::vector<Eigen::Triplet<double>> entries;
    entries.reserve(static_cast<std::size_t>(shard.num_entries()));
    Eigen::VectorXd diagonal = Eigen::VectorXd::Zero(N);
    Index M = 0, tokens = 0, pair_updates = 0;
    for (Index m = 0; m < shard.num_docs(); ++m) {
        const corpus::Document doc = shard.document(m);
        tokens += doc.tokens();
        if (!cooc::contributes(doc, options)) continue;
        const double n = static_cast<double>(doc.tokens());
        const double s = 1.0 / std::sqrt(n * (n - 1));
        for (std::size_t k = 0; k < doc.words.size(); ++k) {
            entries.emplace_back(doc.words[k], M, doc.counts[k] * s);
            diagonal(doc.words[k]) += doc.counts[k] * s * s;
        }
        pair_updates += static_cast<Index>(doc.words.size() * doc.words.size());
        ++M;
    }
    const double read_seconds = total.seconds();
    Stopwatch product;
    Eigen::SparseMatrix<double> H(N, M);
    H.setFromTriplets(entries.begin(), entries.end());
    entries.clear();
    entries.shrink_to_fit();
    Eigen::SparseMatrix<double> C = H * H.transpose();
    C.diagonal() -= diagonal;
    C /= static_cast<double>(M);
    const double product_seconds = product.seconds();
    const double seconds = total.seconds();
    std::printf("baseline-cooc ranks=1 docs=%lld used=%lld words=%lld tokens=%lld pair_updates=%lld "
                "read_seconds=%.6f product_seconds=%.6f build_seconds=%.6f nnz_C=%lld sum=%.15f peak_rss_bytes=%lld\n",
                static_cast<long long>(shard.num_docs()), static_cast<long long>(M), static_cast<long long>(N),
                static_cast<long long>(tokens), static_cast<long long>(pair_updates), read_seconds, product_seconds,
                seconds, static_cast<long long>(C.nonZeros()), C.sum(), static_cast<long long>(peak_rss_bytes()));
    return 0;
}
