// SPDX-License-Identifier: MIT
// The checkpoint of a dense fit in progress (one K): a co-occurrence file holding the
// working C of the stage it was made in, with what that stage needs to go on.
#pragma once

#include <optional>
#include <string>

#include "jsmf/core/names.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/fit/checkpoints.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/fit/stages.hpp"
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

/// One K's checkpoints, stop requests and resume state in a dense fit (fit --checkpoint,
/// --resume; the compressed pipeline's counterpart is fit/compressed.cpp's
/// CompressedCheckpoints, both on Checkpoints). The stages ask it for their hooks, so the
/// stage functions carry no checkpoint code: rectify's hook between iterations, a look
/// after the rectification, the recovery's progress between rounds of solves and a last
/// look after it. Stop signals are requests from construction until that look; the ranks
/// agree on them at every hook (each hook is collective: every rank calls it at the same
/// point).
class DenseCheckpoints {
public:
    /// Collective on C.grid(). With options.checkpoint.resume: reads that checkpoint
    /// (InputError unless it is one of this fit: same K, settings and source C), says
    /// where it stands and, without metrics, releases C (the checkpoint's working matrix
    /// replaces it). Else, when a checkpoint is due already (a stop signal while C was
    /// counted), writes C as counted and stops if asked to.
    DenseCheckpoints(const FitOptions& options, int K, distmat::DistMatrix& C, const io::CoocFileInfo& info,
                     const Report& report);

    /// The resumed working matrix (once; then none).
    std::optional<distmat::DistMatrix> take_matrix();
    /// The finished rectification of a checkpoint made after it, or null.
    const model::RectificationTrace* rectified() const;
    /// An AP, DR or DP run's saved state to continue, or null.
    rectify::ProjectionState* projection();

    /// Between rectification iterations: a checkpoint of the iterate when due, then any
    /// agreed stop.
    ProjectionHook rectify_hook();
    /// Collective. After the rectification: the rectified C when due, then any agreed stop.
    void after_rectify(const distmat::DistMatrix& work, const model::RectificationTrace& trace);
    /// The recovery's rounds: the solves so far when due, then any agreed stop; resumed
    /// from the checkpoint's solves. `work` and `trace` must outlive the recovery.
    recover::RecoverProgress recover_progress(const distmat::DistMatrix& work, const model::RectificationTrace& trace);
    /// Collective, after the first model's recovery only (later calls do nothing). The last
    /// look, for a signal since the last agreement: B's solves saved whole, then the agreed
    /// stop. From then on a signal ends jsmf as usual (its next agreement stops every rank,
    /// exit code 6), and nothing is resumed.
    void after_recover(const model::Model& m, const distmat::DistMatrix& work, const model::RectificationTrace& trace);

private:
    void write(DenseStage stage, const distmat::DistMatrix& M, const model::RectificationTrace& trace,
               io::CheckpointRecord record, const recover::RecoverCheckpoint* recovered, const std::string& what);

    const FitOptions& options_;
    const io::CoocFileInfo& info_;
    int K_;
    Index N_;
    Rectifier method_;
    std::optional<StopScope> stoppable_;
    Checkpoints checkpoints_;
    Entries settings_;
    std::optional<DenseResume> resumed_;
};

}  // namespace jsmf::fit
