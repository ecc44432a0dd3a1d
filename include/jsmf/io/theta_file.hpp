// SPDX-License-Identifier: MIT
// The per-document topic proportions of `jsmf infer`, one parallel HDF5 file.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "jsmf/infer/corpus.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::io {

/// This rank's documents (rows of the file, sorted) and their results: infer_corpus's.
using ThetaRows = infer::DocumentRows;

/// Collective on `comm`. Writes "<path>.partial" with every rank's rows in one collective
/// H5Dwrite per dataset (rows no rank has: theta 0, dominant_topic -1, the rest 0), the
/// attributes (the same on every rank), `alpha` (the prior's α as given, when there is
/// one) and, from rank 0, `doc_ids` (empty: none); renames it to `path` when complete. On
/// failure nothing is left and every rank throws StageFailed.
void write_theta_file(const mpi::Comm& comm, const std::string& path, std::int64_t total_rows, int topics,
                      const ThetaRows& local, const std::vector<std::pair<std::string, std::string>>& text_attributes,
                      const std::vector<std::pair<std::string, double>>& number_attributes,
                      const std::vector<std::string>& doc_ids, const Eigen::VectorXd& alpha);

/// What `jsmf report` reads back of a θ file.
struct ThetaFile {
    Eigen::MatrixXd theta;             ///< D × K (rows of zeros: no usable word)
    std::vector<std::string> doc_ids;  ///< D, or empty (a corpus without ids)
    std::string model;                 ///< the model file it was inferred with, as given to infer
};
/// Local. Reads a θ file (jsmf infer, fit --infer); InputError for anything else.
ThetaFile read_theta_file(const std::string& path);

}  // namespace jsmf::io
