// SPDX-License-Identifier: MIT
// Per-document topic proportions of a corpus under a fitted model, as `jsmf infer` and
// `jsmf fit --infer` run them: the library's infer_corpus, then one parallel HDF5 file.
#pragma once

#include <string>

#include "jsmf/infer/corpus.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::app {

/// The totals over the ranks and the seconds of the whole stage (reading, EM, writing).
struct InferSummary {
    infer::CorpusSummary totals;
    double seconds = 0;
};

/// Collective on `world`. infer::infer_corpus, then `out` (to "<out>.partial", renamed
/// when complete) with a collective parallel-HDF5 write in corpus order:
///   /theta            D × K float64 (row m: docID m + 1 over the files in order); a row of
///                     zeros marks a document without a usable word (absent, empty, or
///                     only words the model lacks)
///   /dominant_topic   D int64 (0-based; -1 for those)
///   /log_likelihood   D float64, Σ_w h_w ln (Bθ)_w;   /tokens, /oov_tokens, /iterations  D int64
///   /doc_ids          D strings (when the corpus came from jsmf prepare)
///   attrs             model, topics, prior, tolerance, max_iterations, documents, inferred,
///                     empty, tokens, oov_tokens, not_converged, per_word_log_likelihood,
///                     perplexity, command_line
InferSummary run_infer_stage(const mpi::Comm& world, const infer::InferModel& model, const infer::CorpusInput& input,
                             const infer::InferOptions& options, infer::Prior prior,
                             const std::string& out, const std::string& command_line);

/// Local. Logs the summary (rank 0) and prints the machine-readable line.
void report_infer(const mpi::Comm& world, const InferSummary& summary, const std::string& out);

}  // namespace jsmf::app
