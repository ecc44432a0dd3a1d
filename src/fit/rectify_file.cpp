// SPDX-License-Identifier: MIT
// jsmf rectify's composition: read C, rectify it with checkpoints, write it with its trace.
#include "jsmf/fit/rectify_file.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/blas_check.hpp"
#include "jsmf/distmat/grid.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/fit/job.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::fit {
namespace {
/// Collective on `world`. The corpus options of the file C came from (rank 0 reads them).
Entries inherited_cooc_options(const mpi::Comm& world, const std::string& path) {
    std::vector<std::string> names, values;
    mpi::check_on_root(world, "read", [&] {
        for (const auto& [name, value] : io::read_root_options(path, {"corpus", "vocab_file", "min_tokens", "min_distinct"})) {
            names.push_back(name);
            values.push_back(value);
        }
    });
    mpi::broadcast(world, names, 0);
    mpi::broadcast(world, values, 0);
    Entries options;
    for (std::size_t k = 0; k < names.size(); ++k) options.emplace_back(names[k], values[k]);
    return options;
}
}  // namespace

RectifyFileOutcome rectify_file(const mpi::Comm& world, const RectifyFileJob& c, const Report& report) {
    Stopwatch total;
    StageTimes times;
    RectifyFileOutcome outcome;
    RectifyOptions& r = outcome.options;
    mpi::run_local_phase(world, "setup", [&] {
        // A setting the rectifier does not read is a mistake, not a no-op (as fit).
        std::vector<UnusedSetting> unused = unused_settings(c.given, c.rectify);
        if (!is_projection(c.rectify.method)) {
            const auto given = [&](const char* name) { return std::find(c.given.begin(), c.given.end(), name) != c.given.end(); };
            const std::pair<const char*, bool> iterative[] = {
                {"checkpoint", !c.checkpoint.empty()}, {"checkpoint_every", false}, {"resume", !c.resume.empty()}};
            for (const auto& [name, set] : iterative)
                if (set || given(name)) unused.push_back({name, "{rectify} ap, dr or dp (the iterative rectifiers)"});
        }
        refuse_unused(unused);
        r = resolve(c.rectify);
    });
    const auto grid = process_grid(world, c.grid_rows, c.grid_cols);
    if (!c.grid_given)
        if (const std::string warning = distmat::long_grid_warning(world.size()); !warning.empty())
            say(report, Level::warning, warning);
    io::check_output_path(world, c.out, {c.in, c.resume});
    if (const std::string warning = distmat::blas_warning(); !warning.empty()) say(report, Level::warning, warning);

    if (!c.checkpoint.empty()) io::check_output_path(world, c.checkpoint, {c.in});
    mpi::run_local_phase(world, "setup", [&] {
        if (c.checkpoint_every < 1) throw OptionError("{checkpoint_every} must be at least 1");
        if (c.block_size < 1) throw OptionError("{block_size} must be at least 1");
    });
    Stopwatch clock;
    io::CoocFileInfo info;
    // On a resume, C (un-normalized, mid-run) comes from the checkpoint instead of `in`.
    distmat::DistMatrix C = io::read_cooc_file(c.resume.empty() ? c.in : c.resume, grid, c.block_size, info);
    if (c.resume.empty()) io::check_cooc_values(c.in, C, info);  // a checkpoint's iterate need not be a C yet
    rectify::ProjectionState resume_state;
    if (!c.resume.empty()) {
        resume_state = read_resume_state(c.resume, C, c.topics, r.method);
        say(report, Level::info,
            fmt::format("rectify: resuming from {} after {} iterations", c.resume, resume_state.iterations_done));
    }
    times.add("read", clock.seconds());
    const Index N = C.rows();
    Entries options = entries(r);
    options.insert(options.begin(), {{"input", c.in}, {"topics", std::to_string(c.topics)}});
    options.emplace_back("block_size", std::to_string(c.block_size));
    options.emplace_back("compression", std::to_string(c.compression));
    // How C was built (corpus and document filter) travels on: coherence's document counts
    // over the corpus need the filter that built C.
    for (const auto& entry : inherited_cooc_options(world, c.in)) options.push_back(entry);
    if (!c.resume.empty() && world.is_root()) {
        // Settings that change the arithmetic: a resume with others still runs, but its
        // result is no longer an uninterrupted run's, bit for bit. Say so.
        Entries now = options;
        now.emplace_back("grid", std::to_string(grid->rows()) + "x" + std::to_string(grid->cols()));
        now.emplace_back("threads", std::to_string(distmat::threads()));
        try {
            for (const auto& [name, saved, mine] : changed_settings(io::read_root_options(c.resume, resume_settings()), now))
                say(report, Level::warning,
                    fmt::format("rectify: the checkpoint was written with {} = {}, this run has {}: the result will "
                                "differ from an uninterrupted run's",
                                name, saved, mine));
        } catch (const std::exception&) {  // read_checkpoint has already vouched for the file
        }
    }
    mpi::check_on_root(world, "rectify", [&] {
        if (c.topics < 2 || c.topics >= N)
            throw OptionError("{topics} must satisfy 2 <= K < N = " + std::to_string(N) + ", got " +
                              std::to_string(c.topics));
        if (!info.rectification.empty())
            say(report, Level::warning, fmt::format("rectify: {} was already rectified ({})", c.in, info.rectification));
    });
    say(report, Level::info,
        fmt::format("rectify: C is {} x {} on a {}x{} grid, block {}; method {}, K = {}", N, N, grid->rows(),
                    grid->cols(), c.block_size, name_of(r.method), c.topics));

    clock.restart();
    RectifyCheckpoints checkpoints;
    checkpoints.path = c.checkpoint;
    checkpoints.every = c.checkpoint_every;
    checkpoints.provenance = provenance(c.command_line, world, *grid, options);
    outcome.record =
        rectify_checkpointed(C, c.topics, r, info, checkpoints, report, c.resume.empty() ? nullptr : &resume_state);
    times.add("rectify", clock.seconds());

    cooc::measure_matrix(C, info.stats);  // the statistics of the C being written
    mpi::take_largest_stage_peaks(world, times);
    clock.restart();
    io::write_cooc_file(c.out, C, info, provenance(c.command_line, world, *grid, options), times, c.compression,
                        &outcome.record);
    times.add("write", clock.seconds());
    outcome.peak_bytes = static_cast<double>(mpi::allreduce_max(world, peak_rss_bytes()));
    outcome.work = rectify_work(outcome.record, r.method, N, c.topics);
    outcome.words = N;
    outcome.sum = info.stats.sum;
    outcome.min = info.stats.min;
    outcome.rectify_seconds = times.entries()[1].second;
    outcome.total_seconds = total.seconds();
    return outcome;
}

}  // namespace jsmf::fit
