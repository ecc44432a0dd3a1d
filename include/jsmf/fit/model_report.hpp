// SPDX-License-Identifier: MIT
// `jsmf report`'s numbers: a model file read as `jsmf infer` reads it (B by rows, each rank
// its block of words; the rest on the root) and what report/ computes from it, per K. The
// page (app/) only formats and draws these.
#pragma once

#include <Eigen/Core>

#include <string>
#include <vector>

#include "jsmf/io/result_file.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/mpi/comm.hpp"
#include "jsmf/report/report.hpp"

namespace jsmf::fit {

/// What the page shows of one K beyond the model file's own record.
struct TopicsView {
    int topics = 0;
    Eigen::VectorXd prevalence;           ///< p(z) = A1, normalized (the map's circle areas)
    Eigen::MatrixXd divergence;           ///< K × K Jensen–Shannon divergences of B's columns
    Eigen::MatrixXd map;                  ///< K × 2: classical MDS of √divergence (a metric)
    std::vector<report::TopicTerms> terms;  ///< per topic: the words the relevance slider can show
    Eigen::MatrixXd correlation;          ///< K × K Pearson correlations of the proportions (NaN: undefined)
    std::vector<int> order;               ///< the heat map's order of the topics
    std::string order_method;             ///< "hierarchy" (grouped by supertopic) or "spectral"
    /// With a θ of this K (ViewOptions::theta): per topic its most representative documents
    /// (rows of θ, largest θ(d, k) first) and their θ(d, k); the documents' names (θ's ids,
    /// else the model file's, else empty); and, where the model file's corpus has labels,
    /// each label's mean θ (L × K) and the labels' names.
    std::vector<std::vector<Index>> documents;
    std::vector<std::vector<double>> document_theta;
    std::vector<std::string> document_names;
    /// With the corpus too (ViewOptions::corpus or prepared): per topic, each representative
    /// document's most frequent words (by count, ties by word id), space-separated.
    std::vector<std::vector<std::string>> document_words;
    Eigen::MatrixXd label_prevalence;
    std::vector<std::string> label_names;
};

struct ModelView {
    io::ModelFile file;                   ///< without its N × K arrays (B_words, B, B̆, the factor)
    std::vector<TopicsView> views;        ///< one per model in the file, the same order
    int steps = 0;                        ///< the slider's grid the terms were chosen on (ViewOptions::steps)
};

/// How many terms the page ranks per topic and on what grid of λ.
struct ViewOptions {
    int terms = 30;   ///< the bars' length: the top `terms` by relevance at each λ
    int steps = 100;  ///< the slider's grid: λ = 0, 1/steps, …, 1
    std::string theta;  ///< a θ file (jsmf infer) of one of the file's K: its documents and labels
    int documents = 10;  ///< representative documents per topic
    /// The corpus θ was inferred on, for the documents' words: a UCI file and its vocabulary,
    /// or a prepared folder (and which corpus of it). Empty: ids only.
    std::string corpus, vocab, prepared, prepared_name;
    int document_words = 8;  ///< words shown per representative document
};

/// Collective. The view of every model in `path`, on the root (other ranks: empty). Memory
/// per rank: its N/P rows of one B at a time (N/P × K × 8 bytes) and the vocabulary on the
/// root, with θ (D × K × 8 bytes) there too when given. InputError (every rank throws
/// StageFailed) for a file that is not a model file, a θ of a K the file lacks or of another
/// number of documents than the model's corpus.
ModelView view_model(const mpi::Comm& comm, const std::string& path, const ViewOptions& options);

/// Local. The metric-versus-K charts of a sweep's CSV (jsmf sweep's DIR/sweep.csv).
/// InputError naming the file for anything that is not such a table.
report::SweepView view_sweep(const std::string& path);

}  // namespace jsmf::fit
