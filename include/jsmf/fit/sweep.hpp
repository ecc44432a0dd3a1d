// SPDX-License-Identifier: MIT
// The papers' kind of experiment as one library call: K × rectifier × solver from one C
// (or, on the compressed pipeline, K from one read of the corpus), one model file per
// run and one tidy CSV row per run. The jsmf binary's `sweep` turns flags into a
// SweepJob, makes the folder and calls sweep().
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jsmf/fit/job.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/fit/report.hpp"
#include "jsmf/fit/stages.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::fit {

/// One run of a sweep.
struct SweepPoint {
    int index = 0;                     ///< its place in the grid (a SLURM array task's id)
    int topics = 0;
    std::optional<Rectifier> rectify;  ///< unset: the compressed pipeline's ENN
    recover::Solver solver = recover::Solver::active_set;
    std::string file;                  ///< runs/K<K>_<rectifier>_<solver>.h5, relative to the folder
};
/// The rectifier's name in files and tables ("enn" for the compressed pipeline's).
std::string rectifier_name(const SweepPoint& point);
/// Local. The grid: every rectifier × K × solver, in that order (no rectifiers: the
/// compressed pipeline's ENN, K × solvers).
std::vector<SweepPoint> sweep_points(const std::vector<Rectifier>& rectifiers, const std::vector<int>& topics,
                                     const std::vector<recover::Solver>& solvers);

struct SweepJob {
    std::vector<SweepPoint> points;  ///< the whole grid
    int task = -1;                   ///< run only this point (its row goes to sweep.task<I>.csv); -1: all
    Pipeline pipeline = Pipeline::dense;  ///< dense or compressed (never automatic: the grid must not move)
    CorpusSource corpus;             ///< the documents (and coherence's), with their reading options
    std::string cooc_file;           ///< dense: C from this file instead of the corpus
    RectifyOptions rectify;          ///< every setting but the method, which is each point's
    ModelOptions model;              ///< every setting but the solver, which is each point's
    CompressedOptions compressed;
    bool metrics = true;
    std::string labels;              ///< document labels: ClustAcc per run
    int top_words = 20;
    std::string folder;              ///< holds runs/ and the table; made by the caller
    int grid_rows = 0, grid_cols = 0;  ///< the dense pipeline's process grid
    bool grid_given = false;
    /// The settings given on the command line (fit's names): on the dense pipeline, one that
    /// no point's rectifier or solver reads is refused (--permutations with --rectify none,ap).
    std::vector<std::string> given;
    std::string command_line;
};

/// Local. Checks what can be checked of `job` before any work: its task inside the grid,
/// labels with the documents and the metrics, the compressed pipeline from documents,
/// the model's and rectification's options (the method each point's, the solver too).
/// OptionError (options in braces) or InputError.
void check(const SweepJob& job);

/// The table's name in the folder: sweep.csv, or sweep.task<I>.csv for one task.
std::string sweep_table_name(int task);

struct SweepOutcome {
    int runs = 0;
    std::string table;   ///< its path
    double seconds = 0;
};

/// Collective on `world`. The job's points (or its task's): C built or read once (dense;
/// each (rectifier, K) rectified once in a copy, shared by its solvers, every run measured
/// against the original C), or the corpus read once for every K (compressed). After each
/// run its model file, and the table rewritten whole (complete rows only). Said through
/// `report`. Per-rank memory: as fit's, plus one more local(C) for the rectified copy.
SweepOutcome sweep(const mpi::Comm& world, const SweepJob& job, const Report& report = {});

}  // namespace jsmf::fit
