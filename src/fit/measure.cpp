// SPDX-License-Identifier: MIT
// Evaluation: the metrics of each model, from the distributed C and one pass over the corpus.
#include "jsmf/fit/measure.hpp"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>

#include <fmt/core.h>

#include "jsmf/core/memory.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/eval/clustering.hpp"
#include "jsmf/eval/codoc.hpp"
#include "jsmf/eval/dist_metrics.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/eval/metrics.hpp"
#include "jsmf/infer/infer.hpp"
#include "jsmf/model/topic_rows.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::fit {
namespace {

/// The topics of `top` (K × n) with a top word in none of the counted documents (d1 = 0):
/// their NPMI divides by zero, and so does their coherence unless that word is the last
/// (the authors' formula and gensim's give +inf; a last word's pairs add ln(ε / d1), a
/// penalty for a word the documents do not have, not a measure).
std::vector<Index> topics_with_an_unseen_word(const Eigen::MatrixXi& top, const std::vector<std::int64_t>& d1) {
    std::vector<Index> topics;
    for (Eigen::Index k = 0; k < top.rows(); ++k)
        for (Eigen::Index j = 0; j < top.cols(); ++j)
            if (d1[static_cast<std::size_t>(top(k, j))] == 0) {
                topics.push_back(k);
                break;
            }
    return topics;
}

/// Marks `topics` of the per-topic metric `name` not measured (NaN) and summarizes the rest.
void leave_out_topics(eval::MetricSet& set, const std::string& name, const std::vector<Index>& topics) {
    const eval::Metric* found = set.find(name);
    if (!found || topics.empty()) return;
    eval::Metric metric = *found;
    for (const Index k : topics) metric.values(k) = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> measured;  // the others (a NaN among them still makes the mean NaN)
    for (Index k = 0; k < metric.values.size(); ++k)
        if (std::find(topics.begin(), topics.end(), k) == topics.end()) measured.push_back(metric.values(k));
    const eval::Summary s =
        eval::summarize(Eigen::Map<const Eigen::VectorXd>(measured.data(), static_cast<Index>(measured.size())));
    metric.mean = s.mean;
    metric.std = s.std;
    set.put(std::move(metric));
}

}  // namespace

CountingCorpus counting_corpus(const mpi::Comm& world, const std::vector<std::string>& files,
                               const cooc::CoocOptions& filter, const std::string& cooc_file,
                               const io::CoocFileInfo& info) {
    if (!cooc_file.empty()) return counting_corpus_of_file(world, cooc_file, files, info.stats.doc_freq, filter);
    CountingCorpus corpus;
    corpus.files = files;
    corpus.filter = filter;
    corpus.doc_freq = info.stats.doc_freq;
    return corpus;
}

CountingCorpus counting_corpus_of_file(const mpi::Comm& world, const std::string& cooc_path,
                                       const std::vector<std::string>& files,
                                       const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>& doc_freq,
                                       const cooc::CoocOptions& fallback) {
    CountingCorpus corpus;
    corpus.files = files;
    corpus.doc_freq = doc_freq;
    corpus.filter = fallback;
    std::int64_t filter[3] = {corpus.filter.min_tokens, corpus.filter.min_distinct,
                              corpus.filter.estimator == cooc::Estimator::tfidf ? 1 : 0};
    mpi::check_on_root(world, "setup", [&] {
        for (const auto& [name, value] : io::read_root_options(cooc_path, {"min_tokens", "min_distinct", "estimator"})) {
            if (name == "estimator") {  // how C weighted the documents: ClustAcc's NNLS does the same
                if (!value.empty()) filter[2] = value == "tfidf" ? 1 : 0;
                continue;
            }
            try {
                filter[name == "min_tokens" ? 0 : 1] = std::stoll(value);
            } catch (const std::exception&) {
                throw InputError(cooc_path, "attribute " + name + " is not an integer: '" + value + "'");
            }
        }
    });
    mpi::broadcast(world, filter, 3, 0);
    corpus.filter.min_tokens = filter[0];
    corpus.filter.min_distinct = filter[1];
    corpus.filter.estimator = filter[2] == 1 ? cooc::Estimator::tfidf : cooc::Estimator::unbiased;
    return corpus;
}

void measure_model(model::Model& m, const distmat::DistMatrix& C_used, const distmat::DistMatrix* C_original,
                   ProjectionCache& cache) {
    Stopwatch clock;
    const eval::ModelView view{m.B, m.B_breve, m.A, m.unigram, m.anchors};
    for (const auto& metric : eval::model_metrics(view).metrics) m.metrics.put(metric);  // others kept
    eval::add_matrix_metrics(m.metrics, C_used, view, "");
    // Without rectification C_used holds the original's entries: one projection serves both.
    if (cache.used.size() == 0 && m.rectification.method == model::Rectification::none && cache.original.size() > 0)
        cache.used = cache.original;
    if (cache.used.size() == 0) cache.used = eval::project_rows_2d(C_used);
    if (cache.original.size() == 0 && m.rectification.method == model::Rectification::none) cache.original = cache.used;
    m.projection = cache.used;
    if (C_original) {
        eval::add_matrix_metrics(m.metrics, *C_original, view, "_original");
        if (cache.original.size() == 0) cache.original = eval::project_rows_2d(*C_original);
        m.projection_original = cache.original;
    }
    eval::sort_metrics(m.metrics);
    m.times.add("metrics", clock.seconds());
}

void check_counting_corpus(const mpi::Comm& world, const CountingCorpus& corpus, Index num_words) {
    if (corpus.files.empty()) return;
    const std::vector<corpus::UciFile> files = corpus::inspect_uci_files(world, corpus.files);
    mpi::run_local_phase(world, "setup", [&] {
        if (files.front().header.num_words != num_words)
            throw InputError(corpus.files.front(), "declares " + std::to_string(files.front().header.num_words) +
                                                       " words; C has " + std::to_string(num_words) +
                                                       " (coherence counts need the corpus that built C)");
    });
}

bool measure_coherence(const mpi::Comm& world, const std::vector<model::Model*>& models, const CountingCorpus& corpus,
                       Index num_words, const Report& report, bool keep_going) {
    if (keep_going && !corpus.files.empty()) {
        try {
            return measure_coherence(world, models, corpus, num_words, report, false);
        } catch (const StageFailed& e) {  // agreed: every rank is here
            if (e.exit_code() != exit_code::input) throw;  // a bug or MPI, not the input: stop
            const std::string why = e.messages().empty() ? std::string("the corpus pass failed") : e.messages().front();
            say(report, Level::warning, "eval: coherence not measured: " + why);
            for (auto* m : models) m->metrics_note = "coherence not measured: " + why;
            return false;
        }
    }
    if (corpus.files.empty()) {
        for (auto* m : models)
            m->metrics_note = render_options("coherence not measured: it needs the corpus that built C ({corpus})");
        return false;
    }
    Stopwatch clock;
    std::vector<eval::WordPair> pairs;
    std::vector<std::int64_t> first_pair;  // model k's pairs start at first_pair[k]
    std::vector<Eigen::MatrixXi> tops;     // each model's top words, on every rank
    // The pairs of each model's top words (from B by rows, or the root's whole B), on every
    // rank for the corpus pass.
    for (const auto* m : models) {
        tops.push_back(model::top_words_everywhere(world, *m, eval::kTopWords).ids);
        first_pair.push_back(static_cast<std::int64_t>(pairs.size()));
        const auto own = eval::coherence_pairs(tops.back());
        pairs.insert(pairs.end(), own.begin(), own.end());
    }
    first_pair.push_back(static_cast<std::int64_t>(pairs.size()));

    const std::vector<corpus::UciFile> files = corpus::inspect_uci_files(world, corpus.files);
    corpus::UciReader reader(files, corpus::plan_uci_pieces(files, world.rank(), world.size()));
    const eval::CodocCounts counts =
        eval::count_codocuments(world, reader, num_words, corpus.filter, pairs, /*root_only=*/false);
    corpus::check_uci_totals(world, reader);
    mpi::run_local_phase(world, "codoc", [&] {
        if (static_cast<Index>(counts.d1.size()) != corpus.doc_freq.size())
            throw InputError(corpus.files.front(), "the corpus has " + std::to_string(counts.d1.size()) +
                                                       " words, C has " + std::to_string(corpus.doc_freq.size()));
        for (Index i = 0; i < corpus.doc_freq.size(); ++i)
            if (counts.d1[static_cast<std::size_t>(i)] != corpus.doc_freq(i))
                throw InputError(corpus.files.front(),
                                 "is not the corpus that built C, or not with the same document filter: word " +
                                     std::to_string(i + 1) + " is in " + std::to_string(counts.d1[static_cast<std::size_t>(i)]) +
                                     " of its documents but in " + std::to_string(corpus.doc_freq(i)) +
                                     render_options(" of C's (check {corpus}, {min_tokens}, {min_distinct})"));
    });
    const double seconds = clock.seconds();
    const std::int64_t codoc_peak = take_stage_peak_rss_bytes();
    for (std::size_t k = 0; k < models.size(); ++k) {
        auto* m = models[k];
        const std::vector<std::int64_t> d2(counts.d2.begin() + static_cast<std::ptrdiff_t>(first_pair[k]),
                                           counts.d2.begin() + static_cast<std::ptrdiff_t>(first_pair[k + 1]));
        // Over a part of the model's documents (an update's new ones), a topic whose top
        // word is in none of them is not measured there: NaN, and the mean over the others.
        const std::vector<Index> unmeasured =
            corpus.other_documents > 0 ? topics_with_an_unseen_word(tops[k], counts.d1) : std::vector<Index>{};
        mpi::check_on_root(world, "codoc", [&] {
            eval::add_coherence(m->metrics, tops[k], counts.d1, d2, counts.num_docs);
            for (const char* name : {"coherence", "npmi"}) leave_out_topics(m->metrics, name, unmeasured);
            eval::sort_metrics(m->metrics);
        });
        eval::broadcast(world, m->metrics, 0);
        m->metrics_note = corpus.other_documents > 0
                              ? fmt::format("coherence over the {} documents read, not the {} kept as the old model's "
                                            "sketch",
                                            counts.num_docs, corpus.other_documents)
                              : "coherence over the " + std::to_string(counts.num_docs) + " documents that built C";
        if (!unmeasured.empty())  // (not named by id: an update renumbers the topics after this; NaN moves with them)
            m->metrics_note += fmt::format("; {} of {} topics not measured there (a top word is in none of those "
                                           "documents): NaN in their coherence and npmi, left out of the means",
                                           unmeasured.size(), tops[k].rows());
        m->times.add("codoc", seconds, codoc_peak);  // one count for every K: the same peak
    }
    say(report, Level::info, fmt::format("eval: coherence counts of {} word pairs over {} documents in {:.2f} s",
                                    pairs.size(), counts.num_docs, seconds));
    return true;
}

std::vector<int> read_labels(const std::string& path, Index expected) {
    std::ifstream in(path);
    if (!in) throw InputError(path, "cannot open the labels file");
    std::vector<int> labels;
    std::string line;
    Index blank_at = 0;  // the first blank line: only blank lines may follow it
    for (Index number = 1; std::getline(in, line); ++number) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) {
            if (blank_at == 0) blank_at = number;
            continue;
        }
        if (blank_at != 0)
            throw InputError(path + ":" + std::to_string(blank_at), "a blank line among the labels (one per document)");
        std::size_t used = 0;
        int label = 0;
        try {
            label = std::stoi(line, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || line.find_first_not_of(" \t\r", used) != std::string::npos)
            throw InputError(path + ":" + std::to_string(number), "a label must be one integer, got '" + line + "'");
        labels.push_back(label);
    }
    if (static_cast<Index>(labels.size()) != expected)
        throw InputError(path, "has " + std::to_string(labels.size()) + " labels; the corpus declares " +
                                   std::to_string(expected) + " documents (one label per document, in order)");
    return labels;
}

void check_labels(const mpi::Comm& world, const CountingCorpus& corpus, const std::string& labels_path) {
    const std::vector<corpus::UciFile> files = corpus::inspect_uci_files(world, corpus.files);
    Index declared = 0;
    for (const auto& f : files) declared += f.header.num_docs;
    // ClustAcc clusters into as many groups as there are labels: checked here, before any
    // work, not only after the fit (a folder with one subfolder gives one label).
    mpi::check_on_root(world, "setup", [&] {
        std::vector<int> labels = read_labels(labels_path, declared);
        std::sort(labels.begin(), labels.end());
        if (labels.empty() || std::unique(labels.begin(), labels.end()) - labels.begin() < 2)
            throw InputError(labels_path, "gives every document the same label: ClustAcc needs at least two distinct "
                                          "labels (drop the labels, or give the documents' classes)");
    });
}

void measure_clustering(const mpi::Comm& world, const std::vector<model::Model*>& models, const CountingCorpus& corpus,
                        const std::string& labels_path, Seed seed, const Report& report) {
    Stopwatch clock;
    Stopwatch stage;  // each K's ClustAcc its own stage (the shard's pass and the labels' read: the first K's)
    const std::vector<corpus::UciFile> files = corpus::inspect_uci_files(world, corpus.files);
    std::vector<Index> file_offset;  // global document index of each file's first document
    Index declared = 0;
    for (const auto& f : files) {
        file_offset.push_back(declared);
        declared += f.header.num_docs;
    }
    // This rank's documents that built C, with their global indices.
    corpus::Shard shard;
    std::vector<std::int64_t> doc_index;
    corpus::UciReader reader(files, corpus::plan_uci_pieces(files, world.rank(), world.size()));
    mpi::run_local_phase(world, "clustacc", [&] {
        corpus::Document doc;
        while (reader.next(doc)) {
            if (!cooc::contributes(doc, corpus.filter)) continue;
            shard.append(doc);
            doc_index.push_back(file_offset[static_cast<std::size_t>(doc.key.file)] + doc.key.id - 1);
        }
    });
    corpus::check_uci_totals(world, reader);
    const auto total = mpi::allreduce_sum(world, static_cast<std::int64_t>(doc_index.size()));
    const std::int64_t largest = std::int64_t{1} << 31;
    mpi::run_local_phase(world, "clustacc", [&] {  // every rank sees the same total
        for (const auto* m : models)
            if (total * m->num_topics >= largest)
                throw InputError("clustacc gathers K x M = " + std::to_string(total * m->num_topics) +
                                 " document weights on rank 0; more than 2^31 is not supported");
    });
    const std::vector<std::int64_t> all_index = mpi::gather_concat(world, doc_index, 0);
    // The NNLS sees each document as C saw it: word proportions, or (a tf-idf C) the
    // tf-idf vector, idf = ln(M / df) over the M documents used (cooc's weights).
    const bool tfidf = corpus.filter.estimator == cooc::Estimator::tfidf && corpus.doc_freq.size() > 0;
    Eigen::VectorXd idf;
    if (tfidf) {
        idf = Eigen::VectorXd::Zero(corpus.doc_freq.size());
        for (Index i = 0; i < idf.size(); ++i)
            if (corpus.doc_freq(i) > 0) idf(i) = std::log(static_cast<double>(total) / static_cast<double>(corpus.doc_freq(i)));
    }
    std::vector<int> labels;
    mpi::check_on_root(world, "clustacc", [&] { labels = read_labels(labels_path, declared); });
    // Collective: ClustAcc of document weights (K × this rank's documents): gathered to
    // rank 0, k-means with the correlation distance, best one-to-one matching with the labels.
    auto accuracy_of = [&](const Eigen::MatrixXd& local, int K) {
        const std::vector<double> flat(local.data(), local.data() + local.size());
        const std::vector<double> all = mpi::gather_concat(world, flat, 0);
        double accuracy = 0;
        mpi::check_on_root(world, "clustacc", [&] {
            const Eigen::Map<const Eigen::MatrixXd> W(all.data(), K, static_cast<Index>(all_index.size()));
            std::vector<int> truth;  // labels renumbered 0 .. L−1 in order of appearance
            std::vector<int> seen;
            for (const auto index : all_index) {
                const int label = labels[static_cast<std::size_t>(index)];
                auto found = std::find(seen.begin(), seen.end(), label);
                if (found == seen.end()) found = seen.insert(seen.end(), label);
                truth.push_back(static_cast<int>(found - seen.begin()));
            }
            if (seen.size() < 2) throw InputError(labels_path, "needs at least two distinct labels");
            const std::vector<int> clusters = eval::kmeans_correlation(W, static_cast<int>(seen.size()), /*restarts=*/10, seed);
            accuracy = eval::clustering_accuracy(clusters, truth);
        });
        mpi::broadcast(world, accuracy, 0);
        return accuracy;
    };
    // The rows of B this rank's documents use, and the shard's words renumbered to them
    // (the same values in the same order: the same bits as with the whole B, as infer).
    std::vector<std::int64_t> needed(shard.words.begin(), shard.words.end());
    std::sort(needed.begin(), needed.end());
    needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
    for (auto& w : shard.words)
        w = static_cast<std::uint32_t>(std::lower_bound(needed.begin(), needed.end(), std::int64_t{w}) - needed.begin());
    mpi::run_local_phase(world, "clustacc", [&] {
        if (tfidf && !needed.empty() && needed.back() >= idf.size())
            throw InputError(corpus.files.front(), "a word id past the " + std::to_string(idf.size()) +
                                                       " words of C's document frequencies");
    });
    Eigen::VectorXd idf_needed;
    if (tfidf) {
        idf_needed.resize(static_cast<Index>(needed.size()));
        for (std::size_t j = 0; j < needed.size(); ++j) idf_needed(static_cast<Index>(j)) = idf(needed[j]);
    }
    for (auto* m : models) {
        // Each rank takes the rows its documents use from the ranks that hold them (kept by
        // rows, the compressed fit's) or from the root, and BᵀB (K × K) is the sum of the
        // ranks' blocks' Grams, or the root's: no rank holds N × K that does not already.
        const bool rows = model::by_rows(*m);
        const Eigen::MatrixXd B_rows = rows ? distmat::rows_from_owners(world, model::partition_of(world, *m), m->B, needed)
                                            : distmat::rows_from_root(world, m->B, needed);
        Eigen::MatrixXd G = Eigen::MatrixXd::Zero(m->num_topics, m->num_topics);
        if (rows) {
            // Eigen's product, as the whole-B form's (the same bits at one rank), summed on the root
            if (m->B.rows() > 0) G = m->B.transpose() * m->B;
            distmat::sum_on_all_ranks(world, G.data(), static_cast<std::size_t>(G.size()));
        } else {
            if (world.is_root()) G = m->B.transpose() * m->B;
            mpi::broadcast(world, G.data(), static_cast<std::size_t>(G.size()), 0);
        }
        // The paper's document weights: NNLS of each document's word distribution on B.
        Eigen::MatrixXd local;
        mpi::run_local_phase(world, "clustacc", [&] { local = eval::nnls_document_weights(G, B_rows, shard, idf_needed); });
        m->metrics.add_number("clustacc", accuracy_of(local, m->num_topics));
        // jsmf infer's θ (maximum likelihood with B fixed); a document without a usable
        // word has θ = 0, which k-means (correlation) sees as a constant vector.
        mpi::run_local_phase(world, "clustacc", [&] {
            const std::vector<infer::DocumentTopics> theta = infer::infer_documents(B_rows, shard, infer::InferOptions{});
            local.resize(m->num_topics, static_cast<Index>(theta.size()));
            for (std::size_t d = 0; d < theta.size(); ++d) local.col(static_cast<Index>(d)) = theta[d].theta;
        });
        m->metrics.add_number("clustacc_theta", accuracy_of(local, m->num_topics));
        // Its own stage in the log and the file (seconds and peak memory): at N = 10^5, K = 100
        // it took more than half of a 155 s fit, unreported.
        m->times.add("clustacc", stage.seconds(), take_stage_peak_rss_bytes());
        stage.restart();
        eval::sort_metrics(m->metrics);
        m->metrics_note += (m->metrics_note.empty() ? "" : "; ") +
                           std::string("clustacc: document weights by NNLS on B of each document's ") +
                           (tfidf ? "tf-idf vector (as C was built)" : "word proportions") +
                           ", clustacc_theta: by jsmf infer's θ; k-means (correlation) vs " +
                           labels_path;
    }
    say(report, Level::info, fmt::format("eval: clustacc over {} documents in {:.2f} s", all_index.size(), clock.seconds()));
}

}  // namespace jsmf::fit
