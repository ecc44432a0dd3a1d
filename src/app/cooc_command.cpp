// SPDX-License-Identifier: MIT
// `jsmf cooc`: read a UCI corpus in shards, build C (Eq. 5) distributed, write it to HDF5.
#include <algorithm>
#include <cstdio>

#include "app/commands.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/fit/job.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::app {

void parse_grid_shape(const std::string& shape, int num_ranks, int& rows, int& cols) {
    rows = cols = 0;  // the library's most square grid
    if (shape.empty()) return;
    char x = 0, extra = 0;
    if (std::sscanf(shape.c_str(), "%d%c%d%c", &rows, &x, &cols, &extra) != 3 || (x != 'x' && x != 'X') || rows < 1 ||
        cols < 1) {
        throw usage_error("--grid must look like 2x3, got '" + shape + "'");
    }
    if (rows * cols != num_ranks) {
        throw usage_error("--grid " + shape + " needs " + std::to_string(rows * cols) + " ranks, but " +
                         std::to_string(num_ranks) + " are running");
    }
}

CLI::App* add_cooc_command(CLI::App& app, CoocCommand& c) {
    CLI::App* sub = app.add_subcommand("cooc", "Build the word co-occurrence matrix C (Eq. 5) and write it to HDF5");
    add_cooc_options(sub, c.input, false);  // required unless --add (run_cooc checks)
    sub->add_option("--add", c.add,
                    "Instead of a corpus: co-occurrence files (jsmf cooc's) of disjoint document sets, summed into "
                    "the file of their union exactly, C = sum of M_f C_f over sum of M_f (M_f: the documents each "
                    "used), its counts and document frequencies summed. The files must share the vocabulary (the "
                    "same words in the same order), the document filter and the estimator (unbiased: a tf-idf C is "
                    "no sum)")
        ->expected(2, -1);
    sub->add_option("--out", c.out, "Output HDF5 file")->required();
    sub->add_option("--block-size", c.block_size, "Block size of C's block-cyclic layout")->capture_default_str();
    sub->add_option("--grid", c.grid, "Process grid RxC (default: most square)");
    sub->add_option("--compression", c.compression, "Deflate level of C in the file, 0 (none) to 9")
        ->check(CLI::Range(0, 9))
        ->capture_default_str();
    return sub;
}

namespace {
int run_add(const CoocCommand& c, const mpi::Comm& world, const std::string& command_line) {
    fit::AddCoocJob job;
    mpi::run_local_phase(world, "setup", [&] {
        // The corpus's settings say how C is counted; with --add the files were counted already.
        const std::vector<std::string> corpus_settings{"corpus", "vocab", "min_tokens", "min_distinct",
                                                       "estimator", "buffer_mb", "exchange"};
        std::string list;
        for (const auto& name : c.given)
            if (std::find(corpus_settings.begin(), corpus_settings.end(), name) != corpus_settings.end())
                list += (list.empty() ? "--" : ", --") + name;
        std::replace(list.begin(), list.end(), '_', '-');
        if (!list.empty())
            throw usage_error("--add sums files counted already: " + list +
                              " belong to counting a corpus (give them to the jsmf cooc runs that made the files)");
        parse_grid_shape(c.grid, world.size(), job.grid_rows, job.grid_cols);
        if (c.block_size < 1) throw usage_error("--block-size must be at least 1");
    });
    job.inputs = c.add;
    job.out = c.out;
    job.block_size = c.block_size;
    job.compression = c.compression;
    job.command_line = command_line;
    const fit::CoocOutcome o = fit::add_cooc(world, job, log_report());
    log::info("cooc: added {} files in {:.3f} s (write {:.3f} s); peak memory {} per rank (max over ranks)", c.add.size(),
              o.total_seconds, o.write_seconds, mib(o.peak_bytes));
    log::info("cooc: wrote {}", c.out);
    if (world.is_root()) {
        std::printf("jsmf-cooc ranks=%d added=%zu docs=%lld used=%lld skipped=%lld words=%lld tokens=%lld "
                    "total_seconds=%.6f peak_rss_bytes=%lld\n",
                    world.size(), c.add.size(), static_cast<long long>(o.stats.num_docs_read),
                    static_cast<long long>(o.stats.num_docs), static_cast<long long>(o.stats.num_docs_skipped),
                    static_cast<long long>(o.words), static_cast<long long>(o.stats.num_tokens_read), o.total_seconds,
                    static_cast<long long>(o.peak_bytes));
        std::fflush(stdout);
    }
    return exit_code::ok;
}
}  // namespace

int run_cooc(const CoocCommand& c, const mpi::Comm& world, const std::string& command_line) {
    if (!c.add.empty()) return run_add(c, world, command_line);
    mpi::run_local_phase(world, "setup", [&] {
        if (c.input.corpus.empty() || c.input.vocab.empty())
            throw usage_error("give --corpus and --vocab (or --add with co-occurrence files to sum)");
    });
    fit::CoocJob job;
    mpi::run_local_phase(world, "setup", [&] { parse_grid_shape(c.grid, world.size(), job.grid_rows, job.grid_cols); });
    job.grid_given = !c.grid.empty();
    mpi::run_local_phase(world, "setup", [&] { job.corpus = corpus_source(c.input, c.block_size); });
    job.out = c.out;
    job.compression = c.compression;
    job.command_line = command_line;
    const fit::CoocOutcome o = fit::write_cooc(world, job, log_report());
    const auto& s = o.stats;
    log::info("cooc: total {:.3f} s (write {:.3f} s); peak memory {} per rank (max over ranks)", o.total_seconds,
              o.write_seconds, mib(o.peak_bytes));
    log::info("cooc: wrote {}", c.out);
    // One machine-readable line for scripts and benchmarks (stdout, rank 0 only).
    if (world.is_root()) {
        std::printf("jsmf-cooc ranks=%d docs=%lld used=%lld skipped=%lld words=%lld tokens=%lld pair_updates=%lld "
                    "build_seconds=%.6f total_seconds=%.6f peak_rss_bytes=%lld rounds=%lld\n",
                    world.size(), static_cast<long long>(s.num_docs_read), static_cast<long long>(s.num_docs),
                    static_cast<long long>(s.num_docs_skipped), static_cast<long long>(o.words),
                    static_cast<long long>(s.num_tokens_read), static_cast<long long>(s.pair_updates), o.build_seconds,
                    o.total_seconds, static_cast<long long>(o.peak_bytes), static_cast<long long>(s.exchange_rounds));
        std::fflush(stdout);
    }
    return exit_code::ok;
}

}  // namespace jsmf::app
