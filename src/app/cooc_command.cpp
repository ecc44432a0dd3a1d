// SPDX-License-Identifier: MIT
// `jsmf cooc`: read a UCI corpus in shards, build C (Eq. 5) distributed, write it to HDF5.
#include <algorithm>
#include <cstdio>

#include "app/commands.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/dist/grid.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::app {
namespace {
}  // namespace

io::Provenance make_provenance(const std::string& command_line, const mpi::Comm& world, const dist::Grid& grid,
                               std::vector<std::pair<std::string, std::string>> options) {
    io::Provenance provenance;
    provenance.command_line = command_line;
    provenance.created = io::now_iso8601();
    provenance.mpi_ranks = world.size();
    provenance.grid = std::to_string(grid.rows()) + "x" + std::to_string(grid.cols());
    provenance.options = std::move(options);
    return provenance;
}

void parse_grid_shape(const std::string& shape, int num_ranks, int& rows, int& cols) {
    if (shape.empty()) {
        dist::most_square_shape(num_ranks, rows, cols);
        return;
    }
    char x = 0, extra = 0;
    if (std::sscanf(shape.c_str(), "%d%c%d%c", &rows, &x, &cols, &extra) != 3 || (x != 'x' && x != 'X') || rows < 1 ||
        cols < 1) {
        throw InputError("--grid must look like 2x3, got '" + shape + "'");
    }
    if (rows * cols != num_ranks) {
        throw InputError("--grid " + shape + " needs " + std::to_string(rows * cols) + " ranks, but " +
                         std::to_string(num_ranks) + " are running");
    }
}

namespace {
std::string mib(std::int64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
    return text;
}
}  // namespace

CLI::App* add_cooc_command(CLI::App& app, CoocCommand& c) {
    CLI::App* sub = app.add_subcommand("cooc", "Build the word co-occurrence matrix C (Eq. 5) and write it to HDF5");
    sub->add_option("--corpus", c.corpus, "UCI docword file(s), plain or .gz; several files are dealt out to ranks")
        ->required();
    sub->add_option("--vocab", c.vocab, "UCI vocab file (one word per line)")->required();
    sub->add_option("--out", c.out, "Output HDF5 file")->required();
    sub->add_option("--min-tokens", c.options.min_tokens, "Skip documents with fewer tokens (authors' code: 5)")
        ->capture_default_str();
    sub->add_option("--min-distinct", c.options.min_distinct,
                    "Skip documents with fewer distinct words (authors' code: 3)")
        ->capture_default_str();
    sub->add_option("--block-size", c.options.block_size, "Block size of C's block-cyclic layout")->capture_default_str();
    sub->add_option("--buffer-mb", c.buffer_mb, "Per-rank exchange buffer in MiB (bounds memory)")->capture_default_str();
    sub->add_option("--exchange", c.exchange, "docs: ship document fragments (fast); pairs: ship (i,j,v) triplets")
        ->check(CLI::IsMember({"docs", "pairs"}))
        ->capture_default_str();
    sub->add_option("--grid", c.grid, "Process grid RxC (default: most square)");
    sub->add_option("--compression", c.compression, "Deflate level of C in the file, 0 (none) to 9")
        ->check(CLI::Range(0, 9))
        ->capture_default_str();
    return sub;
}

int run_cooc(const CoocCommand& c, const mpi::Comm& world, const std::string& command_line) {
    Stopwatch total;
    StageTimes times;
    cooc::CoocOptions options = c.options;
    options.exchange = c.exchange == "docs" ? cooc::Exchange::docs : cooc::Exchange::pairs;
    int grid_rows = 0, grid_cols = 0;
    mpi::run_local_phase(world, "setup", [&] {
        if (!(c.buffer_mb > 0)) throw InputError("--buffer-mb must be positive");
        options.buffer_bytes = static_cast<std::size_t>(std::max(1.0, c.buffer_mb * (1 << 20)));
        parse_grid_shape(c.grid, world.size(), grid_rows, grid_cols);
    });
    const auto grid = dist::Grid::create(world, grid_rows, grid_cols);  // collective (BLACS)
    io::check_output_path(world, c.out);

    Stopwatch clock;
    const std::vector<corpus::UciFile> files = corpus::inspect_uci_files(world, c.corpus);
    const Index num_words = files.front().header.num_words;
    Index declared_docs = 0, declared_nnz = 0;
    for (const auto& f : files) {
        declared_docs += f.header.num_docs;
        declared_nnz += f.header.num_nonzeros;
    }
    const std::vector<std::string> vocab = corpus::load_vocab(world, c.vocab, num_words);
    log::info("cooc: {} file(s), D = {}, W = {}, NNZ = {}; {} ranks on a {}x{} grid, block {}", files.size(),
              declared_docs, num_words, declared_nnz, world.size(), grid->rows(), grid->cols(), options.block_size);
    times.add("inspect", clock.seconds());

    clock.restart();
    corpus::UciReader reader(files, corpus::plan_uci_pieces(files, world.rank(), world.size()));
    cooc::CoocResult result = cooc::build_cooccurrence(grid, num_words, reader, options);
    const double accumulate_seconds = clock.seconds();
    corpus::check_uci_totals(world, reader);
    times.add("cooc", clock.seconds());

    const auto& s = result.stats;
    clock.restart();
    std::string corpus_list;
    for (const auto& path : c.corpus) corpus_list += (corpus_list.empty() ? "" : ";") + path;
    const io::Provenance provenance = make_provenance(command_line, world, *grid, {{"corpus", corpus_list},
                          {"vocab_file", c.vocab},
                          {"min_tokens", std::to_string(options.min_tokens)},
                          {"min_distinct", std::to_string(options.min_distinct)},
                          {"block_size", std::to_string(options.block_size)},
                          {"buffer_bytes", std::to_string(options.buffer_bytes)},
                          {"exchange", c.exchange},
                          {"compression", std::to_string(c.compression)}});
    io::CoocFileInfo info;
    info.vocab = vocab;
    info.stats = result.stats;
    info.num_docs_declared = declared_docs;
    io::write_cooc_file(c.out, result.C, info, provenance, times, c.compression);
    times.add("write", clock.seconds());

    const double peak = static_cast<double>(mpi::allreduce_max(world, peak_rss_bytes()));
    const double seconds = total.seconds();
    const double per_rank = accumulate_seconds * world.size();
    log::info("cooc: {} documents read, M = {} used, {} skipped (< {} tokens or < {} distinct words); {} tokens",
              s.num_docs_read, s.num_docs, s.num_docs_skipped, options.min_tokens, options.min_distinct, s.num_tokens);
    log::info("cooc: C is {} x {}; sum = 1 {:+.1e}, min = {:.1e}, asymmetry = {:.1e}", num_words, num_words, s.sum - 1,
              s.min, s.asymmetry);
    log::info("cooc: build {:.3f} s in {} exchange round(s): {:.0f} docs/s/rank, {:.3g} pair-updates/s/rank "
              "(busiest rank {:.3g} updates)",
              accumulate_seconds, s.exchange_rounds, s.num_docs_read / per_rank, s.pair_updates / per_rank,
              static_cast<double>(s.max_rank_pair_updates));
    log::info("cooc: total {:.3f} s (write {:.3f} s); peak memory {} per rank (max over ranks)", seconds,
              times.entries().back().second, mib(static_cast<std::int64_t>(peak)));
    log::info("cooc: wrote {}", c.out);
    // One machine-readable line for scripts and benchmarks (stdout, rank 0 only).
    if (world.is_root()) {
        std::printf("jsmf-cooc ranks=%d docs=%lld used=%lld skipped=%lld words=%lld tokens=%lld pair_updates=%lld "
                    "build_seconds=%.6f total_seconds=%.6f peak_rss_bytes=%lld rounds=%lld\n",
                    world.size(), static_cast<long long>(s.num_docs_read), static_cast<long long>(s.num_docs),
                    static_cast<long long>(s.num_docs_skipped), static_cast<long long>(num_words),
                    static_cast<long long>(s.num_tokens_read), static_cast<long long>(s.pair_updates),
                    accumulate_seconds, seconds, static_cast<long long>(peak),
                    static_cast<long long>(s.exchange_rounds));
        std::fflush(stdout);
    }
    return exit_code::ok;
}

}  // namespace jsmf::app
