// SPDX-License-Identifier: MIT
// The co-occurrence file (jsmf cooc's output, later stages' input).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/io/provenance.hpp"

namespace jsmf::io {

/// A projection rectifier's (AP, DR, DP) resume state, with the iterate C of the file
/// and its /rectification trace.
struct CheckpointRecord {
    int iterations_done = 0;
    std::vector<double> lower_bounds;      ///< per eigensolve of an iteration: the last λ_min estimate (NaN: none)
    std::vector<Eigen::MatrixXd> blocks;   ///< per eigensolve: N × p, the next solve's warm start
    double js_increment = 0;               ///< DP: the joint-stochastic increment
    /// DP: the N × N increments to write, by name (written collectively); reading them
    /// back is read_checkpoint_matrix's job.
    std::vector<std::pair<std::string, const distmat::DistMatrix*>> increments;
    /// Further replicated state, by name (/checkpoint/state/<name>): AP's pending product,
    /// its acceleration history, the last check's B and anchors.
    std::vector<std::pair<std::string, Eigen::MatrixXd>> state;
    /// read_checkpoint: the checksum stored in the file (verify_checkpoint compares).
    std::string checksum;
};

/// Everything a co-occurrence file holds besides C.
struct CoocFileInfo {
    std::vector<std::string> vocab;
    cooc::CoocStats stats;       ///< unigram, doc_freq and the counts (sum/min/asymmetry of C)
    Index num_docs_declared = 0;
    std::string rectification;   ///< the method, or empty for a raw C (read only)
};

/// Schema (format_version 1):
///   /                 attrs format="jsmf", kind="cooc", format_version, jsmf_version,
///                     command_line, created, mpi_ranks, grid, and every option;
///                     rectification="ap"|"dc"|"none" when C was rectified
///   /vocab            N strings (UTF-8, variable length)
///   /cooc/C           N×N float64, row-major, chunked along the blocks, shuffle+deflate
///   /stats/unigram    N float64, p(x = i) = Σ_j C_ij (of the C in this file)
///   /stats/doc_freq   N int64, documents (of the M used) that contain word i
///   /stats            attrs num_docs (M), num_docs_read, num_docs_skipped,
///                     num_docs_declared, num_tokens, num_tokens_read, pair_updates,
///                     sum, min, asymmetry
///   /rectification    (rectified files) attrs method, topics, iterations, converged,
///                     fallbacks (DC: completions not made; 0 otherwise);
///                     datasets change, clipped_mass, sum, eig_iterations,
///                     eig_products, eig_residual, seconds (one entry per iteration)
///   /checkpoint       (checkpoints) attrs iterations_done, eigensolves (S), js_increment;
///                     datasets lower_bounds (S), vectors_0 .. vectors_{S−1} (N×p each),
///                     and for DP increment_psd, increment_nn (N×N, like C): with the
///                     un-normalized iterate C and the trace so far, everything
///                     `jsmf rectify --resume` needs; attr checksum (checkpoint_checksum)
///   /timings          attrs: seconds per stage
///
/// Collective on C.grid(). C is written collectively with parallel HDF5; rank 0 then
/// adds the rest. Everything goes to "<path>.partial", renamed to `path` only when
/// complete; on failure the partial file is removed and every rank throws StageFailed.
/// `compression`: deflate level of /cooc/C, 0 (none) to 9.
void write_cooc_file(const std::string& path, const distmat::DistMatrix& C, const CoocFileInfo& info,
                     const Provenance& provenance, const StageTimes& times, int compression = 1,
                     const model::RectificationTrace* rectification = nullptr, const CheckpointRecord* checkpoint = nullptr);

/// Collective on C.grid(). A checksum (64 bits, hex) of what a checkpoint holds: C, DP's
/// increments, the warm blocks, bounds and replicated state. Independent of the layout
/// (every entry is mixed with its global index), so a run on another grid can verify it.
/// Against torn or altered files, not against an adversary.
std::string checkpoint_checksum(const distmat::DistMatrix& C, const CheckpointRecord& checkpoint);

/// Collective on C.grid(). InputError naming `path` (on every rank) unless the checksum of
/// C and `checkpoint` (as read back, DP's increments pointed at) is the one stored.
void verify_checkpoint(const std::string& path, const distmat::DistMatrix& C, const CheckpointRecord& checkpoint);

/// Collective on `comm`. Reads /rectification and /checkpoint of a checkpoint file
/// (rank 0 reads, everyone receives). Throws StageFailed when `path` is not one, or one
/// without a checksum (an older jsmf's).
void read_checkpoint(const mpi::Comm& comm, const std::string& path, model::RectificationTrace& rectification,
                     CheckpointRecord& checkpoint);

/// Local (rank 0 calls it). The string attributes `names` of the file's root that exist,
/// as (name, value) pairs: e.g. the options a checkpoint was written with.
std::vector<std::pair<std::string, std::string>> read_root_options(const std::string& path,
                                                                   const std::vector<std::string>& names);

/// Collective on `grid`. Reads the N × N dataset /checkpoint/<name> of a checkpoint
/// (e.g. Dykstra's increment_psd) into a new DistMatrix. Throws StageFailed if absent.
distmat::DistMatrix read_checkpoint_matrix(const std::string& path, const std::string& name,
                                        const std::shared_ptr<const distmat::Grid>& grid, int block_size);

/// Collective on C.grid(). InputError (agreed, one message naming `path` and /cooc/C) unless
/// C is what a jsmf co-occurrence file promises: finite, not all zero, summing to 1 (to
/// 1e-6), non-negative (to 1e-9 of its largest entry; when `info` says it was rectified, a
/// negative entry is only warned about) and symmetric (to 1e-9, relative).
/// For a C a user hands in (fit, sweep and eval --cooc, rectify --in); not for a
/// checkpoint's iterate, which need not be any of these (its checksum vouches for it).
void check_cooc_values(const std::string& path, const distmat::DistMatrix& C, const CoocFileInfo& info);

/// Collective on `grid`. Reads /cooc/C into a new DistMatrix with the given block size,
/// and the rest of the file into `info` (replicated). Throws StageFailed on a bad file.
distmat::DistMatrix read_cooc_file(const std::string& path, const std::shared_ptr<const distmat::Grid>& grid,
                                int block_size, CoocFileInfo& info);

/// Collective on `comm`. Everything of a co-occurrence file but C (rank 0 reads, every rank
/// receives: the vocabulary, the statistics, the rectification); returns N. StageFailed on
/// a bad file.
Index read_cooc_info(const mpi::Comm& comm, const std::string& path, CoocFileInfo& info);

/// This rank's rows of a co-occurrence file's C, as the compressed pipeline takes it.
struct CoocRows {
    distmat::RowPartition rows;  ///< balanced over the ranks
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> C;  ///< rows.rows(rank) × N
    cooc::Estimator estimator = cooc::Estimator::unbiased;  ///< the file's estimator attribute
};

/// Collective on `comm`. Reads this rank's rows of /cooc/C (each rank its own, in panels of
/// about 64 MiB) and the rest of the file into `info` (replicated), and checks C as
/// check_cooc_values does, by rows (the symmetry by the same one-probe test: Cᵀx summed
/// from each rank's rows). StageFailed, agreed, on a bad file or C.
CoocRows read_cooc_rows(const mpi::Comm& comm, const std::string& path, CoocFileInfo& info);

/// Local. Whether the co-occurrence file `path` is a checkpoint (holds /checkpoint: its C is
/// an iterate, not a co-occurrence matrix of documents). StageFailed if it cannot be opened.
bool is_checkpoint_file(const std::string& path);

/// Collective on `comm`. N of the co-occurrence file `path` (the rows of /cooc/C), read
/// from its header alone (rank 0 reads, every rank gets it). StageFailed on a bad file.
Index read_cooc_words(const mpi::Comm& comm, const std::string& path);

/// Collective on `comm`. Fails early (before hours of work), with one message, if `path`
/// cannot be written as jsmf writes outputs (io::check_output_file: absent or a regular
/// file, never a device, FIFO or directory; creatable beside it) or is one of `inputs`
/// (the same file, under any name), which writing would destroy.
void check_output_path(const mpi::Comm& comm, const std::string& path, const std::vector<std::string>& inputs = {});

}  // namespace jsmf::io
