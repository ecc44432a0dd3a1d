// SPDX-License-Identifier: MIT
// A co-occurrence file rectified into another, as one library call: C read (or, on a
// resume, the checkpoint's iterate), rectified with checkpoints, measured and written with
// its trace. The jsmf binary's `rectify` turns flags into a RectifyFileJob, calls
// rectify_file() and prints.
#pragma once

#include <string>
#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/fit/report.hpp"
#include "jsmf/fit/stages.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::fit {

struct RectifyFileJob {
    std::string in;                  ///< a co-occurrence file (jsmf cooc)
    std::string out;                 ///< the rectified C, with /rectification
    int topics = 0;                  ///< K, the rank of the rectified C
    RectifyOptions rectify;
    int block_size = 64;
    int grid_rows = 0, grid_cols = 0;  ///< 0: the most square grid
    bool grid_given = false;         ///< a long thin default grid is warned about
    int compression = 1;             ///< deflate level of C in the file
    std::string checkpoint;          ///< AP, DR, DP: a resumable checkpoint, every `checkpoint_every` iterations
    int checkpoint_every = 10;
    std::string resume;              ///< AP, DR, DP: continue from this checkpoint (C is read from it)
    /// The settings given on the command line (RectifyOptions' names, checkpoint,
    /// checkpoint_every, resume): one the rectifier does not read is refused, as fit does.
    std::vector<std::string> given;
    std::string command_line;
};

struct RectifyFileOutcome {
    model::RectificationTrace record;
    RectifyOptions options;          ///< resolved
    Index words = 0;                 ///< N
    double sum = 0, min = 0;         ///< of the rectified C
    RectifyWork work;
    double rectify_seconds = 0, total_seconds = 0;
    double peak_bytes = 0;           ///< the largest rank's
};

/// Collective on `world`. Rectifies job.in into job.out (the corpus options of the file C
/// came from travel on: coherence over the corpus needs the filter that built C). A resume
/// with settings that change the arithmetic is warned about. Errors as one agreed failure;
/// a stop signal ends every rank together (rectify_checkpointed).
RectifyFileOutcome rectify_file(const mpi::Comm& world, const RectifyFileJob& job, const Report& report = {});

}  // namespace jsmf::fit
