// SPDX-License-Identifier: MIT
// A model file measured again, as one library call: the metrics B and A alone give;
// coherence (and ClustAcc) over the corpus; the errors against C (read, or built again
// with the model's filter and estimator) and against the C its recorded rectification
// gives when run again; the errors against a planted truth. The jsmf binary's `eval`
// turns flags into an EvalJob, calls evaluate() and prints the metrics.
#pragma once

#include <string>
#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/fit/report.hpp"
#include "jsmf/fit/stages.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::fit {

struct EvalJob {
    std::string model;          ///< the model file (from jsmf fit)
    /// The corpus: files for coherence (and ClustAcc); with the vocabulary, C is built again
    /// from it. Its filter and estimator are the model's where the file records them (an
    /// estimator other than the default that differs from the record is an error).
    CorpusSource corpus;
    std::string cooc_file;      ///< C the model was fitted on (instead of building it)
    std::string truth;          ///< a planted model (jsmf synth's truth file)
    std::string labels;         ///< document labels: ClustAcc
    Seed seed = 1;              ///< ClustAcc's k-means
    std::string out;            ///< where the measured file goes; empty: the model file, replaced atomically
    int grid_rows = 0, grid_cols = 0;  ///< C's process grid (0: the most square)
};

/// Collective on `world`. Measures `job.model`'s models as EvalJob says and writes the
/// file (io::update_model_evaluation); returns the measured models (every rank the same).
/// InputError (one agreed failure) for a corpus, C or truth that is not the model's.
std::vector<model::Model> evaluate(const mpi::Comm& world, const EvalJob& job, const Report& report = {});

}  // namespace jsmf::fit
