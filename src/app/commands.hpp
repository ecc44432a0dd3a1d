// SPDX-License-Identifier: MIT
// The subcommands of the jsmf binary: each binds flags to an options struct, then runs.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/dist/grid.hpp"
#include "jsmf/io/provenance.hpp"
#include "jsmf/mpi/comm.hpp"
#include "jsmf/synth/synth.hpp"

namespace jsmf::app {

struct SynthCommand {
    synth::SynthOptions options;
    std::string directory = ".";
    std::string name = "synth";
    bool gzip = false;
    std::string prior = "dirichlet";
};
CLI::App* add_synth_command(CLI::App& app, SynthCommand& command);
/// Collective on `world` (rank 0 generates and writes; the others wait for its verdict).
int run_synth(const SynthCommand& command, const mpi::Comm& world, const std::string& command_line);

struct CoocCommand {
    std::vector<std::string> corpus;
    std::string vocab;
    std::string out;
    cooc::CoocOptions options;
    double buffer_mb = 32;
    std::string exchange = "docs";
    std::string grid;  ///< "RxC"; empty for the most-square grid
    int compression = 1;
};
CLI::App* add_cooc_command(CLI::App& app, CoocCommand& command);
/// Collective on `world`.
int run_cooc(const CoocCommand& command, const mpi::Comm& world, const std::string& command_line);

struct RectifyCommand {
    std::string in;
    std::string out;
    int topics = 0;
    std::string method = "ap";
    int iterations = 150;
    double tolerance = 0;
    int block_size = 64;
    std::string grid;
    int compression = 1;
    double progress_seconds = 5;
    std::string eigensolver = "subspace";
    int permutations = 30;
    Seed seed = 1;
    std::string checkpoint;
    int checkpoint_every = 10;
    std::string resume;
};
CLI::App* add_rectify_command(CLI::App& app, RectifyCommand& command);
/// Collective on `world`.
int run_rectify(const RectifyCommand& command, const mpi::Comm& world, const std::string& command_line);

/// Local. Provenance of a result made now by `world` on `grid`, with these options.
io::Provenance make_provenance(const std::string& command_line, const mpi::Comm& world, const dist::Grid& grid,
                               std::vector<std::pair<std::string, std::string>> options);

/// Local: "RxC" (or empty for the most-square shape) checked against the rank count.
void parse_grid_shape(const std::string& shape, int num_ranks, int& rows, int& cols);

}  // namespace jsmf::app
