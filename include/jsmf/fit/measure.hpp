// SPDX-License-Identifier: MIT
// The evaluation stage of fit, eval and sweep: every metric of the papers for a model.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <vector>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/fit/report.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::fit {

/// The corpus that built C, for coherence's document counts (a second pass over it).
struct CountingCorpus {
    std::vector<std::string> files;  ///< empty: no coherence
    cooc::CoocOptions filter;        ///< the document filter that built C
    /// D1 as counted when C was built; the pass must count the same (same corpus, same filter).
    Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1> doc_freq;
    /// The model's documents that `files` do not hold (an update's old documents, kept as
    /// a sketch only): coherence is then over a part of the model's documents, and a topic
    /// with a top word in none of that part is not measured (NaN, left out of the mean).
    std::int64_t other_documents = 0;
};

/// Collective on `world`. The counting corpus of C: the corpus `files` that built it with
/// `filter` (`cooc_file` empty), or the corpus given beside a co-occurrence file, counted
/// with the filter that file records (no files: no coherence).
CountingCorpus counting_corpus(const mpi::Comm& world, const std::vector<std::string>& files,
                               const cooc::CoocOptions& filter, const std::string& cooc_file,
                               const io::CoocFileInfo& info);

/// Collective on `world`. The counting corpus for a C read from `cooc_path`: its
/// document filter is the one recorded in that file (rank 0 reads it, all receive), or
/// `fallback` where the file records none.
CountingCorpus counting_corpus_of_file(const mpi::Comm& world, const std::string& cooc_path,
                                       const std::vector<std::string>& files,
                                       const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>& doc_freq,
                                       const cooc::CoocOptions& fallback);

/// The 2-D projections of C̄'s rows depend on C alone, not on the model: computed once
/// per C and reused by every model measured on it (empty: not yet computed).
struct ProjectionCache {
    Eigen::MatrixXd used, original;
};

/// Collective on C_used.grid(). The model's own metrics, the recovery and approximation
/// errors against the C the inference used (C_used, rectified) and against the
/// original C (when given: the "_original" metrics), and the 2-D projections of both
/// C̄'s rows (from `cache`, computed there when empty; one for both when the model's
/// rectification is "none", C_used then being a copy of the original). Adds the stage
/// time "metrics".
void measure_model(model::Model& m, const distmat::DistMatrix& C_used, const distmat::DistMatrix* C_original,
                   ProjectionCache& cache);

/// Collective on `world`. One pass over `corpus` counts D1 and the co-document counts of
/// every model's coherence pairs; adds coherence to each model (and the pass's time as
/// stage "codoc"). With no corpus files, records in each model's metrics_note that
/// coherence was not measured. Throws StageFailed when the corpus is not the one that
/// built C (its D1 differs from `corpus.doc_freq`) — unless `keep_going`: then every
/// rank warns, the models' notes say why, and the models are kept without coherence.
/// Returns whether coherence was measured.
bool measure_coherence(const mpi::Comm& world, const std::vector<model::Model*>& models, const CountingCorpus& corpus,
                       Index num_words, const Report& report, bool keep_going = false);

/// Collective on `world`. Checks, before any work, what can be checked of the counting
/// corpus cheaply: its files open and declare N words. Throws StageFailed.
void check_counting_corpus(const mpi::Comm& world, const CountingCorpus& corpus, Index num_words);

/// Collective on `world`. ClustAcc (AnchorFree §6.2): the documents that built C get
/// topic weights by non-negative least squares on each model's B (the paper's estimate)
/// and by jsmf infer's θ, on the rank that reads them; rank 0 gathers each (K × M
/// doubles), clusters them by k-means with the correlation distance into as many clusters
/// as there are distinct labels, and scores the best one-to-one matching against
/// `labels_path` (one integer per document of the corpus, in order, the files
/// concatenated). Adds "clustacc" (NNLS) and "clustacc_theta" (θ) to each model. Throws
/// StageFailed on a bad labels file.
void measure_clustering(const mpi::Comm& world, const std::vector<model::Model*>& models, const CountingCorpus& corpus,
                        const std::string& labels_path, Seed seed, const Report& report);

/// Local (rank 0 calls it). The labels file `path` (eval, fit and sweep --labels): one
/// integer per line, `expected` lines (blank lines only at the end). InputError naming the
/// file and line otherwise.
std::vector<int> read_labels(const std::string& path, Index expected);

/// Collective on `world`. Checks the labels file against the corpus's declared documents
/// before any work (rank 0 reads it). Throws StageFailed.
void check_labels(const mpi::Comm& world, const CountingCorpus& corpus, const std::string& labels_path);

}  // namespace jsmf::fit
