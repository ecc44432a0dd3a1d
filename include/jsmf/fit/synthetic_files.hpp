// SPDX-License-Identifier: MIT
// A synthetic corpus written as files, as one library call: a planted model's corpus (or a
// semi-synthetic one drawn from a model file) in UCI files with its vocabulary, labels and
// truth, or streamed by every rank into parts of any size. The jsmf binary's `synth`
// turns flags into a SynthJob, calls write_synthetic() and prints.
#pragma once

#include <string>

#include "jsmf/core/types.hpp"
#include "jsmf/fit/report.hpp"
#include "jsmf/mpi/comm.hpp"
#include "jsmf/synth/synth.hpp"

namespace jsmf::fit {

struct SynthJob {
    synth::SynthOptions options;
    std::string folder = ".";        ///< created if missing (and removed again if the run fails)
    std::string name = "synth";      ///< X in docword.X.txt, vocab.X.txt, truth.X.h5, labels.X.txt
    bool gzip = false;               ///< docword.X.txt.gz
    std::string from;                ///< a model file: a semi-synthetic corpus from its B and a prior fitted to its A
    int from_topics = 0;             ///< which K of that file (0: its first)
    bool docs_given = false;         ///< with `from`: options.num_docs replaces the model corpus's M
    bool length_given = false;       ///< with `from`: options.mean_doc_length replaces its tokens per document
    /// Every rank draws its share of the documents (each from its own seeded stream: the
    /// corpus does not depend on the rank count) into docword.X.partNNNN.txt; no rank holds
    /// the corpus. No labels; not with `from` or `gzip`.
    bool stream = false;
    std::string command_line;        ///< recorded in the truth file
};

struct SynthOutcome {
    synth::SynthOptions options;     ///< what was drawn (with `from`: the model's sizes; rank 0's)
    Index nonempty = 0, tokens = 0, nonzeros = 0;  ///< nonzeros: streamed only
    int parts = 0;                   ///< streamed: one part per rank
    std::string docword, vocab, truth, labels;  ///< the files written (rank 0; not streamed)
    double seconds = 0;
};

/// Collective on `world`. Writes the job's files, all or none: under hidden temporary names,
/// renamed into place once every file (every rank's part) is complete. Planted or `from`:
/// rank 0 draws and writes, the others wait for its verdict. InputError or OptionError as
/// one agreed failure, the folder removed again if this run created it.
SynthOutcome write_synthetic(const mpi::Comm& world, const SynthJob& job, const Report& report = {});

}  // namespace jsmf::fit
