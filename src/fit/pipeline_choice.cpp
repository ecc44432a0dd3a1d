// SPDX-License-Identifier: MIT
// `auto`: the dense pipeline where the fit needs it or C is small, else the compressed one.
#include "jsmf/fit/pipeline_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jsmf/core/memory.hpp"
#include "jsmf/anchors/finder.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::fit {

const std::vector<std::string>& dense_only_settings() {
    static const std::vector<std::string> names = {
        // the rectifiers of C
        "rectify", "stop", "converge", "iterations", "max_iterations", "tolerance", "acceleration", "anderson_depth", "anderson_below",
        "relaxation", "eig_tolerance_factor", "precision", "check_every", "eigensolver", "eig_check_steps",
        "eig_check_every", "permutations",
        // building and laying out C
        "exchange", "buffer_mb", "block_size", "grid",
        // the dense finders' tuning (AnchorFree's LP and PDS run on both pipelines)
        "projection_dim"};
    return names;
}

const std::vector<std::string>& compressed_only_settings() {
    static const std::vector<std::string> names = {"enn_iterations", "checked_rows", "enn_relaxation", "product_buffer_mb",
                                                   "sketch_rank", "sketch", "decay", "warm_enn", "metric_probes"};
    return names;
}

std::vector<std::string> changed_dense_settings(const FitOptions& options) {
    std::vector<std::string> changed;
    const Entries mine = entries(options.rectify), defaults = entries(RectifyOptions{});
    for (std::size_t k = 0; k < mine.size() && k < defaults.size(); ++k)
        if (mine[k].second != defaults[k].second && mine[k].first != "seed")
            changed.push_back(mine[k].first == "method" ? "rectify" : mine[k].first);
    const ModelOptions model;
    if (options.model.projection_dim != model.projection_dim) changed.push_back("projection_dim");
    return changed;
}

double dense_bytes_per_rank(Index num_words, int ranks) {
    const double n = static_cast<double>(num_words);
    return 3.0 * 8.0 * n * n / std::max(1, ranks);
}

namespace {
double dense_seconds(double N, double K) { return 2.6 * std::pow(N / 2000, 1.85) * std::pow(K / 10, 0.63); }
double compressed_seconds(double N, double K, double iterations) {
    return 2e-8 * N * K * std::min(N, 10 * K + 1000) * iterations / 150;
}
}  // namespace

Index dense_words_at_most(int K, int enn_iterations) {
    // Up to 1,000 words both fits take a few seconds at most (fixed costs the fit above
    // does not model), and the dense one is the papers' method with every metric: dense.
    // Above, the largest N at which the dense fit is predicted no slower. Past ENN's
    // l = 10K + 1000 checked rows the compressed cost grows linearly in N and the dense one
    // as N^1.85, so they cross at most once there (bisection); below l the compressed cost
    // grows as N² and the two may cross twice (K = 250: dense no slower from 1,850 to 3,900
    // words), so that range is scanned in steps of 1 %.
    const double its = std::max(1, enn_iterations);
    const auto dense_no_slower = [&](Index n) {
        const auto x = static_cast<double>(n);
        return dense_seconds(x, K) <= compressed_seconds(x, K, its);
    };
    const Index floor = std::max<Index>(1000, K + 1), l = std::max(floor, 10 * Index{K} + 1000);
    if (dense_no_slower(l)) {
        Index low = l, high = Index{1} << 40;
        while (high - low > 1) {
            const Index mid = low + (high - low) / 2;
            (dense_no_slower(mid) ? low : high) = mid;
        }
        return low;
    }
    Index best = floor;
    for (double n = static_cast<double>(floor); n < static_cast<double>(l); n *= 1.01)
        if (dense_no_slower(static_cast<Index>(n))) best = static_cast<Index>(n);
    return best;
}

PipelineChoice choose_pipeline(const FitOptions& options, Index num_words, int ranks, std::int64_t memory_per_rank,
                               const std::vector<std::string>& given) {
    if (options.pipeline != Pipeline::automatic) return {options.pipeline, "asked for by {pipeline}", {}};
    const double need = dense_bytes_per_rank(num_words, ranks);
    const bool fits = memory_per_rank <= 0 || need <= 0.7 * static_cast<double>(memory_per_rank);
    const std::string short_of_memory =
        fits ? std::string()
             : fmt::format("C ({} x {} words) would need about {:.1f} GiB per rank of the {:.1f} GiB each rank has",
                           num_words, num_words, need / 1073741824.0, memory_per_rank / 1073741824.0);
    const auto listed = [&](const std::vector<std::string>& names) {
        std::string list;
        int count = 0;
        for (const auto& name : given)
            if (std::find(names.begin(), names.end(), name) != names.end() &&
                list.find("{" + name + "}") == std::string::npos)
                list += (count++ ? ", {" : "{") + name + "}";
        return std::pair{list, count};
    };
    // Not a structured binding: a lambda may capture one only from C++20 on.
    const std::pair<std::string, int> compressed = listed(compressed_only_settings());
    const std::string& compressed_list = compressed.first;
    const int compressed_count = compressed.second;
    const auto dense = [&](const std::string& why) -> PipelineChoice {
        if (compressed_count > 0)
            throw OptionError(compressed_list + " set the compressed pipeline, but " + why +
                              ": give {pipeline} dense without them, or drop what needs the dense one");
        return {Pipeline::dense, why, fits ? std::string() : short_of_memory + ": the dense fit may run out of memory"};
    };
    const ModelOptions& m = options.model;
    if (m.solver == recover::Solver::kl)
        return dense("{solver} kl needs each word's whole row of C-bar, not the factor's projection of it");
    const auto [dense_list, dense_count] = listed(dense_only_settings());
    if (dense_count > 0)
        return dense(dense_list + (dense_count > 1 ? " are settings" : " is a setting") + " of the dense pipeline");
    if (compressed_count > 0)
        return {Pipeline::compressed,
                compressed_list + (compressed_count > 1 ? " are settings" : " is a setting") + " of the compressed pipeline",
                {}};
    if (!fits) return {Pipeline::compressed, short_of_memory, {}};
    const int K = options.topics.empty() ? 10 : *std::max_element(options.topics.begin(), options.topics.end());
    // The cost fit's iterations are the count it was measured with (the settled default then
    // capped at 150), not the relaxed default's 75: the boundary was not measured again (at
    // K = 10 and 100 it is the 1,000-word floor either way).
    const Index boundary = dense_words_at_most(K, options.compressed.iterations);
    if (num_words <= boundary)
        return dense(boundary <= 1000 && num_words <= 1000
                         ? fmt::format("N = {} words: up to 1000 words both fits take about a second, and the dense "
                                       "one is the papers' method",
                                       num_words)
                         : fmt::format("N = {} words: at K = {} the dense fit (the papers' method) is as fast as the "
                                       "compressed one up to about {} words",
                                       num_words, K, boundary));
    return {Pipeline::compressed,
            fmt::format("N = {} words: at K = {} the compressed fit reaches the dense one's quality faster above about "
                        "{} words (give {{pipeline}} dense for the papers' method)",
                        num_words, K, boundary),
            {}};
}

PipelineChoice choose_pipeline(const CorpusSource& corpus, const mpi::Comm& world, const FitOptions& options,
                               std::vector<std::string> given) {
    Index N = 0;
    std::int64_t memory = -1;
    if (options.pipeline == Pipeline::automatic) {
        N = corpus::inspect_uci_files(world, corpus.files).front().header.num_words;
        memory = memory_per_rank(world);
    }
    PipelineChoice choice;  // the same inputs everywhere: every rank decides alike, or fails alike
    mpi::run_local_phase(world, "setup", [&] { choice = choose_pipeline(options, N, world.size(), memory, given); });
    return choice;
}

std::int64_t memory_per_rank(const mpi::Comm& comm) {
    const mpi::Comm node = comm.split_shared();
    const std::int64_t limit = memory_limit_bytes();
    std::int64_t mine = limit > 0 ? limit / node.size() : -1;
    // The smallest over the ranks; one unknown limit makes it unknown everywhere.
    const std::int64_t unknown = mpi::allreduce_max(comm, std::int64_t{mine < 0 ? 1 : 0});
    const std::int64_t smallest = mpi::allreduce_min(comm, mine);
    return unknown ? -1 : smallest;
}

void refuse_settings(const std::vector<std::string>& given, const std::vector<std::string>& unused,
                     const std::string& who, const std::string& instead) {
    std::string list;
    int count = 0;
    for (const auto& name : given)
        if (std::find(unused.begin(), unused.end(), name) != unused.end()) list += (count++ ? ", {" : "{") + name + "}";
    if (count > 0)
        throw OptionError(who + " does not use " + list + (count > 1 ? ": drop them, or " : ": drop it, or ") + instead);
}

}  // namespace jsmf::fit
