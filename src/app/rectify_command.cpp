// SPDX-License-Identifier: MIT
// `jsmf rectify`: read C, rectify it (AP, or none for the Baseline), write the result and its trace.
#include <cstdio>

#include "app/commands.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/fit/rectify_file.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::app {

CLI::App* add_rectify_command(CLI::App& app, RectifyCommand& c) {
    CLI::App* sub = app.add_subcommand("rectify", "Rectify C: low rank, PSD, nonnegative, sums to 1 (AP), or not (Baseline)");
    sub->add_option("--in", c.in, "Co-occurrence file from jsmf cooc")->required();
    sub->add_option("--out", c.out, "Output HDF5 file (same schema, with /rectification)")->required();
    sub->add_option("--topics", c.topics, "Number of topics K (the rank of the rectified C)")->required();
    add_rectify_options(sub, c.rectify, "--method");
    sub->add_option("--block-size", c.block_size, "Block size of C's block-cyclic layout")->capture_default_str();
    sub->add_option("--grid", c.grid, "Process grid RxC (default: most square)");
    sub->add_option("--compression", c.compression, "Deflate level of C in the file, 0 (none) to 9")
        ->check(CLI::Range(0, 9))
        ->capture_default_str();
    sub->add_option("--checkpoint", c.checkpoint, "AP, DR, DP: write a resumable checkpoint to this file (atomically)");
    sub->add_option("--checkpoint-every", c.checkpoint_every, "AP, DR, DP: iterations between checkpoints")->capture_default_str();
    sub->add_option("--resume", c.resume,
                    "AP, DR, DP: continue from this checkpoint (same --method and --topics; C is read from it)");
    return sub;
}

int run_rectify(const RectifyCommand& c, const mpi::Comm& world, const std::string& command_line) {
    fit::RectifyFileJob job;
    mpi::run_local_phase(world, "setup", [&] {
        parse_grid_shape(c.grid, world.size(), job.grid_rows, job.grid_cols);
        if (c.block_size < 1) throw usage_error("--block-size must be at least 1");
        job.rectify = to_options(c.rectify);
    });
    job.given = c.given;
    job.grid_given = !c.grid.empty();
    job.in = c.in;
    job.out = c.out;
    job.topics = c.topics;
    job.block_size = c.block_size;
    job.compression = c.compression;
    job.checkpoint = c.checkpoint;
    job.checkpoint_every = c.checkpoint_every;
    job.resume = c.resume;
    job.command_line = command_line;
    const fit::RectifyFileOutcome o = fit::rectify_file(world, job, log_report());
    const fit::RectifyWork& work = o.work;
    log::info("rectify: sum = 1 {:+.1e}, min = {:.1e}; {} iterations in {:.2f} s; total {:.2f} s; peak memory "
              "{} per rank", o.sum - 1, o.min, o.record.iterations, o.rectify_seconds, o.total_seconds, mib(o.peak_bytes));
    log::info("rectify: wrote {}", c.out);
    if (world.is_root()) {
        std::printf("jsmf-rectify ranks=%d words=%lld topics=%d method=%s eigensolver=%s iterations=%d "
                    "rectify_seconds=%.6f seconds_per_iteration=%.6f eig_rounds_per_iteration=%.3f "
                    "eig_products_per_iteration=%.3f gflops_per_rank=%.3f total_seconds=%.6f peak_rss_bytes=%lld\n",
                    world.size(), static_cast<long long>(o.words), c.topics, name_of(o.options.method).c_str(),
                    name_of(o.options.eigensolver).c_str(), o.record.iterations, o.rectify_seconds,
                    o.rectify_seconds / work.iterations, work.eig_rounds / work.iterations,
                    work.eig_products / work.iterations, work.flops / world.size() / o.rectify_seconds / 1e9,
                    o.total_seconds, static_cast<long long>(o.peak_bytes));
        std::fflush(stdout);
    }
    return exit_code::ok;
}

}  // namespace jsmf::app
