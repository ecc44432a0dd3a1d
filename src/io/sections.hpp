// SPDX-License-Identifier: MIT
// Parts shared by jsmf's files (co-occurrence, checkpoint, model): written by one rank.
#pragma once

#include <functional>
#include <string>

#include "io/h5.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::io {

/// format, kind, format_version, jsmf_version, command_line, created, mpi_ranks, grid and
/// every option, as attributes of `file`.
void write_root_attributes(hid_t file, const std::string& kind, const Provenance& provenance);
/// /vocab and /stats (unigram, doc_freq and the counts as attributes).
void write_vocab_and_stats(hid_t file, const CoocFileInfo& info, const std::string& path);
/// A `rectification` group under `parent`: method, topics, iterations, converged, trace.
void write_rectification(hid_t parent, const model::RectificationTrace& record, const std::string& path);
/// A `timings` group under `parent`: one attribute per stage, in seconds.
void write_timings(hid_t parent, const StageTimes& times, const std::string& path);
/// Reads what write_rectification wrote.
model::RectificationTrace read_rectification(hid_t group, const std::string& path);
/// A `compressed` group under `parent` (fit --pipeline compressed): Y, the compression's
/// eigenpairs, E′'s triplets, ENN's trace and what it left.
void write_compressed(hid_t parent, const model::CompressedRecord& record, const std::string& path);
/// Reads what write_compressed wrote; InputError naming `path` when the shapes disagree
/// with N and K.
model::CompressedRecord read_compressed(hid_t parent, Index N, int K, const std::string& path);
/// Collective (a parallel file). The record's Y by row blocks, each rank its Y_rows, into
/// <parent>/compressed/Y, and E′'s triplets each rank's at its correction_first (the group
/// created; write_compressed then adds the rest to it).
void write_compressed_rows(hid_t parent, const model::CompressedRecord& r, int K, const std::string& path);

/// Collective on `comm`. Creates the parallel file `partial`, runs `writes` on it (every
/// rank) and closes it; StageFailed on every rank if any rank failed. The ranks agree on
/// whether a write failed *before* the file is closed: HDF5's close is collective, and
/// after a failed write (disk full) ranks that close while others unwind wait for each
/// other forever (seen at 4 ranks: three in MPI_File_close, one in the metadata flush).
/// A file whose write failed is abandoned, never closed (HDF5 is never ended either:
/// io/h5_library.hpp); the caller removes `partial`.
void write_parallel_file(const mpi::Comm& comm, const std::string& partial, const std::string& stage,
                         const std::function<void(hid_t file)>& writes);

/// Collective on `comm`. Rank 0 creates "<path>.partial", runs `fill` on it and renames
/// it to `path`; the others wait for the verdict. With `by_rows`, every rank first runs it
/// on the partial file opened in parallel (row blocks written collectively), and rank 0's
/// `fill` then adds to that file. On failure the partial file is removed and every rank
/// throws StageFailed: the result is complete or absent.
void write_on_root_atomically(const mpi::Comm& comm, const std::string& path,
                              const std::function<void(hid_t file, const std::string& partial)>& fill,
                              const std::function<void(hid_t file, const std::string& partial)>& by_rows = {});
/// Local. Renames a finished "<path>.partial" into place (throws InputError).
void rename_into_place(const std::string& partial, const std::string& path);

}  // namespace jsmf::io
