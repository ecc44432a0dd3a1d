// SPDX-License-Identifier: MIT
// The checkpoint of a dense fit in progress (one K): a co-occurrence file holding the
// working C of the stage it was made in, with what that stage needs to go on.
#pragma once

#include <optional>
#include <string>

#include "jsmf/core/names.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/recover/recover.hpp"
#include "jsmf/rectify/projection.hpp"

namespace jsmf::fit {

/// cooc: C as counted (rectification starts afresh); rectify: an AP, DR or DP iterate and
/// its state; recover: the rectified C, its trace, and the words of B solved so far.
enum class DenseStage { cooc, rectify, recover };
inline const Names<DenseStage, 3>& names(DenseStage) {
    static const Names<DenseStage, 3> table{"cooc", "rectify", "recover"};
    return table;
}

/// Collective on source.grid(). What a checkpoint must share with the run that resumes
/// it: K, every rectification and model setting, the metrics switch, the grid, block size
/// and threads (the rounding), and the checksum of the C the fit started from (`source`:
/// counted again or read again on resume, it must be the same to the bit).
Entries dense_checkpoint_settings(const FitOptions& options, int K, const distmat::DistMatrix& source);

/// Collective on C.grid(). Writes the checkpoint atomically (io::write_cooc_file, with its
/// checksum): `C` is the stage's working matrix; `trace` the rectification so far (or
/// done), `record` its state (rectify), `recovered` the solves so far (recover).
void write_dense_checkpoint(const std::string& path, DenseStage stage, const distmat::DistMatrix& C,
                            const io::CoocFileInfo& info, const Entries& settings, const model::RectificationTrace& trace,
                            io::CheckpointRecord record, const recover::RecoverCheckpoint* recovered = nullptr);

/// What a resumed dense fit starts from.
struct DenseResume {
    DenseStage stage = DenseStage::cooc;
    std::optional<distmat::DistMatrix> C;    ///< the stage's working matrix
    rectify::ProjectionState projection;      ///< stage rectify
    model::RectificationTrace trace;                 ///< stage recover: the finished rectification
    recover::RecoverCheckpoint recovered;     ///< stage recover
};

/// Collective on `grid`. Reads a checkpoint of write_dense_checkpoint: InputError naming
/// the file (one message, every rank) unless it is one, its checksum holds, and every
/// one of `settings` equals the recorded value (the message names the first that differs).
DenseResume read_dense_checkpoint(const std::string& path, const std::shared_ptr<const distmat::Grid>& grid,
                                  int block_size, int K, Rectifier method, const Entries& settings);

}  // namespace jsmf::fit
