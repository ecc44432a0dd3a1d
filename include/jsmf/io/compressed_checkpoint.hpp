// SPDX-License-Identifier: MIT
// The checkpoint of a compressed fit in progress (lowrank/): the range finder mid-solve, or
// ENN after some iterations. One HDF5 file, written atomically, rows by global index (so a
// run may resume at another rank count), with a checksum of everything it holds.
#pragma once

#include <Eigen/Core>

#include <string>
#include <utility>
#include <vector>

#include "jsmf/distmat/rows.hpp"
#include "jsmf/core/names.hpp"
#include "jsmf/lowrank/enn.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::io {

/// Where a compressed fit of one K stands. Rows are this rank's of `rows`, in word order.
struct CompressedCheckpoint {
    enum class Phase { compress, enn };
    Phase phase = Phase::compress;
    int num_topics = 0;
    /// The settings the run was made with (name, value): a resume must match every one.
    std::vector<std::pair<std::string, std::string>> settings;
    // phase compress: the solver after `round` rounds (block, product, lower bound)
    int round = 0;
    int products = 0;              ///< operator products so far (the range finder's)
    double lower_bound = 0;
    Eigen::MatrixXd block, product;
    double seconds = 0;            ///< the range finder's seconds so far
    // phase enn: the finished range finder's record, and ENN's state
    Eigen::VectorXd eigenvalues, residuals;
    bool compress_converged = false;
    lowrank::EnnState enn;
    /// phase enn, fit --sketch-rank: the sketch's eigenpairs (this rank's rows of V), which
    /// the range finder solved with Y₀ (none: empty)
    Eigen::MatrixXd sketch_vectors;
    Eigen::VectorXd sketch_values;
};
inline const Names<CompressedCheckpoint::Phase, 2>& names(CompressedCheckpoint::Phase) {
    static const Names<CompressedCheckpoint::Phase, 2> table{"compress", "enn"};
    return table;
}

/// Collective on `comm`. Writes `path` atomically ("<path>.partial", renamed when whole):
/// the row blocks collectively, the rest from rank 0, and a checksum over all of it. On
/// failure nothing is left at `path` (an older checkpoint there stays) and every rank
/// throws StageFailed.
void write_compressed_checkpoint(const mpi::Comm& comm, const distmat::RowPartition& rows, const std::string& path,
                                 const CompressedCheckpoint& checkpoint);

/// Collective on `comm`. Reads a checkpoint written by write_compressed_checkpoint (at any
/// rank count) for this run: InputError naming the file unless it is one, its checksum
/// holds, its K and N are `num_topics` and rows.size(), and each of `settings` equals the
/// recorded value (the message names the first that differs).
CompressedCheckpoint read_compressed_checkpoint(const mpi::Comm& comm, const distmat::RowPartition& rows,
                                                const std::string& path, int num_topics,
                                                const std::vector<std::pair<std::string, std::string>>& settings);

}  // namespace jsmf::io
