// SPDX-License-Identifier: MIT
// `jsmf rectify`: read C, rectify it (AP, or none for the Baseline), write the result and its trace.
#include <cstdio>

#include "app/commands.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/blas_check.hpp"
#include "jsmf/distmat/grid.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::app {
namespace {
/// Collective on `world`. The corpus options of the file C came from (rank 0 reads them).
Options inherited_cooc_options(const mpi::Comm& world, const std::string& path) {
    std::vector<std::string> names, values;
    mpi::check_on_root(world, "read", [&] {
        for (const auto& [name, value] : io::read_root_options(path, {"corpus", "vocab_file", "min_tokens", "min_distinct"})) {
            names.push_back(name);
            values.push_back(value);
        }
    });
    mpi::broadcast(world, names, 0);
    mpi::broadcast(world, values, 0);
    Options options;
    for (std::size_t k = 0; k < names.size(); ++k) options.emplace_back(names[k], values[k]);
    return options;
}
}  // namespace

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
    Stopwatch total;
    StageTimes times;
    fit::RectifyOptions r;
    int grid_rows = 0, grid_cols = 0;
    mpi::run_local_phase(world, "setup", [&] {
        parse_grid_shape(c.grid, world.size(), grid_rows, grid_cols);
        if (c.block_size < 1) throw usage_error("--block-size must be at least 1");
        r = fit::resolve(to_options(c.rectify));
    });
    const auto grid = distmat::Grid::create(world, grid_rows, grid_cols);
    warn_long_grid(c.grid, world.size());
    io::check_output_path(world, c.out, {c.in, c.resume});
    if (const std::string warning = distmat::blas_warning(); !warning.empty()) log::warn("{}", warning);

    if (!c.checkpoint.empty()) io::check_output_path(world, c.checkpoint, {c.in});
    mpi::run_local_phase(world, "setup", [&] {
        if ((!c.checkpoint.empty() || !c.resume.empty()) && !fit::is_projection(r.method))
            throw usage_error("--checkpoint and --resume apply to --method ap, dr and dp");
        if (c.checkpoint_every < 1) throw usage_error("--checkpoint-every must be at least 1");
    });
    Stopwatch clock;
    io::CoocFileInfo info;
    // On --resume, C (un-normalized, mid-run) comes from the checkpoint instead of --in.
    distmat::DistMatrix C = io::read_cooc_file(c.resume.empty() ? c.in : c.resume, grid, c.block_size, info);
    if (c.resume.empty()) io::check_cooc_values(c.in, C, info);  // a checkpoint's iterate need not be a C yet
    rectify::ProjectionState resume_state;
    if (!c.resume.empty()) {
        resume_state = fit::read_resume_state(c.resume, C, c.topics, r.method);
        log::info("rectify: resuming from {} after {} iterations", c.resume, resume_state.iterations_done);
    }
    times.add("read", clock.seconds());
    const Index N = C.rows();
    Options options = fit::entries(r);
    options.insert(options.begin(), {{"input", c.in}, {"topics", std::to_string(c.topics)}});
    options.emplace_back("block_size", std::to_string(c.block_size));
    options.emplace_back("compression", std::to_string(c.compression));
    // How C was built (corpus and document filter) travels on: coherence's document counts
    // over the corpus need the filter that built C.
    for (const auto& entry : inherited_cooc_options(world, c.in)) options.push_back(entry);
    if (!c.resume.empty() && world.is_root()) {
        // Settings that change the arithmetic: a resume with others still runs, but its
        // result is no longer an uninterrupted run's, bit for bit. Say so.
        Options now = options;
        now.emplace_back("grid", std::to_string(grid->rows()) + "x" + std::to_string(grid->cols()));
        now.emplace_back("threads", std::to_string(distmat::threads()));
        try {
            for (const auto& [name, saved, mine] :
                 fit::changed_settings(io::read_root_options(c.resume, fit::resume_settings()), now))
                log::warn("rectify: the checkpoint was written with {} = {}, this run has {}: the result will differ "
                          "from an uninterrupted run's", name, saved, mine);
        } catch (const std::exception&) {  // read_checkpoint has already vouched for the file
        }
    }
    mpi::check_on_root(world, "rectify", [&] {
        if (c.topics < 2 || c.topics >= N)
            throw usage_error("--topics must satisfy 2 <= K < N = " + std::to_string(N) + ", got " + std::to_string(c.topics));
        if (!info.rectification.empty()) log::warn("rectify: {} was already rectified ({})", c.in, info.rectification);
    });
    log::info("rectify: C is {} x {} on a {}x{} grid, block {}; method {}, K = {}", N, N, grid->rows(), grid->cols(),
              c.block_size, name_of(r.method), c.topics);

    clock.restart();
    fit::RectifyCheckpoints checkpoints;
    checkpoints.path = c.checkpoint;
    checkpoints.every = c.checkpoint_every;
    checkpoints.provenance = fit::provenance(command_line, world, *grid, options);
    const model::RectificationTrace record = fit::rectify_checkpointed(
        C, c.topics, r, info, checkpoints, log_report(), c.resume.empty() ? nullptr : &resume_state);
    times.add("rectify", clock.seconds());

    cooc::measure_matrix(C, info.stats);  // the statistics of the C being written
    mpi::take_largest_stage_peaks(world, times);
    clock.restart();
    io::write_cooc_file(c.out, C, info, fit::provenance(command_line, world, *grid, options), times, c.compression,
                        &record);
    times.add("write", clock.seconds());
    const double peak = static_cast<double>(mpi::allreduce_max(world, peak_rss_bytes()));
    const fit::RectifyWork work = fit::rectify_work(record, r.method, N, c.topics);
    const double rectify_seconds = times.entries()[1].second;
    log::info("rectify: sum = 1 {:+.1e}, min = {:.1e}; {} iterations in {:.2f} s; total {:.2f} s; peak memory "
              "{} per rank", info.stats.sum - 1, info.stats.min, record.iterations, rectify_seconds, total.seconds(),
              mib(peak));
    log::info("rectify: wrote {}", c.out);
    if (world.is_root()) {
        std::printf("jsmf-rectify ranks=%d words=%lld topics=%d method=%s eigensolver=%s iterations=%d "
                    "rectify_seconds=%.6f seconds_per_iteration=%.6f eig_rounds_per_iteration=%.3f "
                    "eig_products_per_iteration=%.3f gflops_per_rank=%.3f total_seconds=%.6f peak_rss_bytes=%lld\n",
                    world.size(), static_cast<long long>(N), c.topics, name_of(r.method).c_str(),
                    name_of(r.eigensolver).c_str(),
                    record.iterations, rectify_seconds, rectify_seconds / work.iterations,
                    work.eig_rounds / work.iterations, work.eig_products / work.iterations,
                    work.flops / world.size() / rectify_seconds / 1e9, total.seconds(), static_cast<long long>(peak));
        std::fflush(stdout);
    }
    return exit_code::ok;
}

}  // namespace jsmf::app
