// SPDX-License-Identifier: MIT
#include "jsmf/fit/model_report.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

#include "jsmf/core/error.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/io/csv_file.hpp"
#include "jsmf/io/theta_file.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/prepare/prepare.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::fit {

namespace {

/// The part of one K's view that needs B: each rank's rows, then the root's.
void view_topics(const mpi::Comm& comm, const std::string& path, const Eigen::VectorXd& p_w, const ViewOptions& options,
                 TopicsView& view) {
    const io::BByRows B = io::read_B_by_rows(comm, path, view.topics, p_w.size());
    const Index first = B.rows.begin(comm.rank());
    view.terms = report::relevant_terms(comm, B.B, p_w.segment(first, B.B.rows()), first, options.terms, options.steps);
    view.divergence = report::js_divergences(comm, B.B);
}

/// Each representative document's most frequent words, from the corpus (root only).
void add_document_words(const std::string& docword, const std::vector<std::string>& vocab, int shown, TopicsView& view) {
    std::set<Index> wanted;
    for (const auto& rows : view.documents) wanted.insert(rows.begin(), rows.end());
    const auto counts = corpus::read_documents(docword, wanted);
    for (const auto& rows : view.documents) {
        std::vector<std::string> words;
        for (const Index d : rows) {
            std::vector<std::pair<Index, std::int64_t>> doc;
            if (const auto at = counts.find(d); at != counts.end()) doc = at->second;
            std::sort(doc.begin(), doc.end(), [](const auto& a, const auto& b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
            std::string text;
            for (std::size_t i = 0; i < doc.size() && static_cast<int>(i) < shown; ++i) {
                if (doc[i].first >= static_cast<Index>(vocab.size()))
                    throw InputError(docword, "word id " + std::to_string(doc[i].first + 1) + " is beyond its vocabulary's " +
                                                  std::to_string(vocab.size()) + " words");
                text += (text.empty() ? "" : " ") + vocab[static_cast<std::size_t>(doc[i].first)];
            }
            words.push_back(std::move(text));
        }
        view.document_words.push_back(std::move(words));
    }
}

/// The θ file's part of the view of its K (root only).
void view_documents(const io::ThetaFile& theta, const io::ModelFile& file, const ViewOptions& options, TopicsView& view) {
    const io::CorpusDocuments& corpus = file.documents;
    view.document_names = !theta.doc_ids.empty() ? theta.doc_ids : corpus.ids;
    for (int k = 0; k < view.topics; ++k) {
        std::vector<Index> rows = report::representative_documents(theta.theta, k, options.documents);
        std::vector<double> values;
        for (const Index d : rows) values.push_back(theta.theta(d, k));
        view.documents.push_back(std::move(rows));
        view.document_theta.push_back(std::move(values));
    }
    if (!corpus.labels.empty()) {
        view.label_names = corpus.label_names;
        view.label_prevalence =
            report::label_prevalence(theta.theta, corpus.labels, static_cast<int>(corpus.label_names.size()));
    }
}

}  // namespace

ModelView view_model(const mpi::Comm& comm, const std::string& path, const ViewOptions& options) {
    ModelView out;
    std::vector<std::int64_t> topics;
    std::int64_t words = 0;
    io::ThetaFile theta;
    std::string docword;                     // the corpus of θ, for its documents' words
    std::vector<std::string> corpus_vocab;
    mpi::check_on_root(comm, "setup", [&] {
        if (options.terms < 1 || options.steps < 1) throw InputError("report: the terms and the slider's steps must be at least 1");
        out.file = io::read_model_file(path, io::ModelParts::without_topic_words);
        if (out.file.models.empty()) throw InputError(path, "holds no model");
        if (out.file.unigram.size() != static_cast<Index>(out.file.vocab.size()))
            throw InputError(path, "/stats/unigram does not have a value per word");
        for (const auto& m : out.file.models) topics.push_back(m.num_topics);
        words = static_cast<std::int64_t>(out.file.vocab.size());
        if (options.theta.empty()) return;
        if (options.documents < 0) throw InputError("report: the representative documents must be at least 0");
        theta = io::read_theta_file(options.theta);
        docword = options.corpus;
        std::string vocab_path = options.vocab;
        if (!options.prepared.empty()) {
            const prepare::PreparedCorpus prepared = prepare::find_prepared(options.prepared, options.prepared_name);
            docword = prepared.docword;
            vocab_path = prepared.vocab;
        }
        if (!docword.empty()) corpus_vocab = corpus::read_vocab(vocab_path);
        if (std::find(topics.begin(), topics.end(), theta.theta.cols()) == topics.end())
            throw InputError(options.theta, "θ of K = " + std::to_string(theta.theta.cols()) + ", but " + path +
                                                " holds no model of that K");
        // θ's rows are paired with the model's documents (their ids, their labels) by position:
        // the same documents in the same order, checked by ids where both files have them.
        const auto& ids = out.file.documents.ids;
        if (!ids.empty() && static_cast<Index>(ids.size()) != theta.theta.rows())
            throw InputError(options.theta, "θ of " + std::to_string(theta.theta.rows()) + " documents, but the model was fit on " +
                                                std::to_string(ids.size()) + " (its /corpus): not the same corpus");
        if (!ids.empty() && !theta.doc_ids.empty())
            for (std::size_t d = 0; d < ids.size(); ++d)
                if (ids[d] != theta.doc_ids[d])
                    throw InputError(options.theta, "document " + std::to_string(d + 1) + " is '" + theta.doc_ids[d] +
                                                        "' in θ but '" + ids[d] + "' in " + path +
                                                        "'s /corpus: not the same documents in the same order");
    });
    std::int64_t models = static_cast<std::int64_t>(topics.size());
    mpi::broadcast(comm, models, 0);
    mpi::broadcast(comm, words, 0);
    topics.resize(static_cast<std::size_t>(models));
    mpi::broadcast(comm, topics.data(), topics.size(), 0);
    Eigen::VectorXd p_w = comm.is_root() ? out.file.unigram : Eigen::VectorXd(words);
    mpi::broadcast(comm, p_w.data(), static_cast<std::size_t>(words), 0);
    out.steps = options.steps;
    for (std::size_t i = 0; i < topics.size(); ++i) {
        TopicsView view;
        view.topics = static_cast<int>(topics[i]);
        view_topics(comm, path, p_w, options, view);
        mpi::check_on_root(comm, "report", [&] {  // the root's part, agreed: no rank waits on a failure
            // The map from the root's divergences alone (every rank summed the same K × K).
            view.map = report::classical_mds(view.divergence.cwiseSqrt(), 2);
            const model::Model& m = out.file.models[i];
            view.prevalence = model::topic_prevalence(m.A);
            view.correlation = model::correlation_matrix(m.A);
            const bool grouped = i == 0 && !out.file.hierarchy.empty();  // the hierarchy stands on the first K
            view.order = grouped ? report::hierarchy_order(out.file.hierarchy.front(), view.topics)
                                 : report::spectral_order(view.correlation);
            view.order_method = grouped ? "hierarchy" : "spectral";
            if (theta.theta.cols() == view.topics) {
                view_documents(theta, out.file, options, view);
                if (!docword.empty()) add_document_words(docword, corpus_vocab, options.document_words, view);
            }
        });
        out.views.push_back(std::move(view));
    }
    return out;
}

report::SweepView view_sweep(const std::string& path) {
    const io::CsvTable table = io::read_csv_file(path);
    try {
        return report::sweep_view(table.header, table.rows, eval::metric_names());
    } catch (const InputError& e) {
        throw InputError(path, e.what());
    }
}

}  // namespace jsmf::fit
