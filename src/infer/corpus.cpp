// SPDX-License-Identifier: MIT
// θ for a corpus in UCI files: shards, the word map, EM per document, totals in corpus order.
#include "jsmf/infer/corpus.hpp"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <unordered_map>

#include "jsmf/core/error.hpp"
#include "jsmf/corpus/shard.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::infer {
namespace {

/// Rank 0: the model row of each corpus word id (-1: not in the model).
std::vector<std::int64_t> word_map(const InferModel& model, const CorpusInput& input, Index corpus_words) {
    const auto N = static_cast<Index>(model.vocab.size());
    std::vector<std::int64_t> map(static_cast<std::size_t>(corpus_words), -1);
    if (input.vocab.empty()) {
        if (corpus_words != N)
            throw InputError(input.corpus.front(),
                             "has " + std::to_string(corpus_words) + " words; the model " + model.file + " has " +
                                 std::to_string(N) + render_options(": give the corpus's {vocab} to map its words by name"));
        for (Index i = 0; i < N; ++i) map[static_cast<std::size_t>(i)] = i;
        return map;
    }
    const std::vector<std::string> words = corpus::read_vocab(input.vocab, corpus_words);
    std::unordered_map<std::string, std::int64_t> row;
    for (Index i = 0; i < N; ++i) row.emplace(model.vocab[static_cast<std::size_t>(i)], i);
    for (std::size_t i = 0; i < words.size(); ++i)
        if (const auto found = row.find(words[i]); found != row.end()) map[i] = found->second;
    return map;
}

/// Reorders every array of `t` by row.
void sort_by_row(DocumentRows& t) {
    std::vector<std::size_t> order(t.rows.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return t.rows[a] < t.rows[b]; });
    DocumentRows sorted;
    sorted.theta.resize(t.theta.rows(), t.theta.cols());
    for (std::size_t i = 0; i < order.size(); ++i) {
        const std::size_t j = order[i];
        sorted.rows.push_back(t.rows[j]);
        sorted.theta.row(static_cast<Index>(i)) = t.theta.row(static_cast<Index>(j));
        sorted.dominant_topic.push_back(t.dominant_topic[j]);
        sorted.tokens.push_back(t.tokens[j]);
        sorted.oov_tokens.push_back(t.oov_tokens[j]);
        sorted.iterations.push_back(t.iterations[j]);
        sorted.log_likelihood.push_back(t.log_likelihood[j]);
    }
    t = std::move(sorted);
}

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "cannot open");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

}  // namespace

std::vector<std::string> read_doc_ids(const std::string& path, std::int64_t declared) {
    std::vector<std::string> ids = read_lines(path);
    if (static_cast<std::int64_t>(ids.size()) != declared)
        throw InputError(path, "has " + std::to_string(ids.size()) + " ids; the corpus declares " +
                                   std::to_string(declared) + " documents");
    return ids;
}

CorpusTopics infer_corpus(const mpi::Comm& world, const InferModel& model, const CorpusInput& input,
                          const InferOptions& options) {
    const int K = model.topics;
    const std::vector<corpus::UciFile> files = corpus::inspect_uci_files(world, input.corpus);
    std::vector<std::int64_t> file_offset;
    std::int64_t declared = 0;
    for (const auto& f : files) {
        file_offset.push_back(declared);
        declared += f.header.num_docs;
    }
    const Index W = files.front().header.num_words;
    std::vector<std::int64_t> map(static_cast<std::size_t>(W), -1);
    CorpusTopics out;
    mpi::check_on_root(world, "infer", [&] {
        const Index rows = model.B_rows.size() > 0 ? model.B_rows.size() : model.B.rows();
        JSMF_REQUIRE(static_cast<Index>(model.vocab.size()) == rows && (model.B.cols() == K || model.B.rows() == 0),
                     "the model's vocabulary, B and K disagree");
        map = word_map(model, input, W);
        if (!input.doc_ids.empty()) {
            out.doc_ids = read_doc_ids(input.doc_ids, declared);
        }
    });
    mpi::broadcast(world, map.data(), map.size(), 0);

    // This rank's documents, with the model's word ids.
    corpus::Shard shard;
    DocumentRows& local = out.local;
    corpus::UciReader reader(files, corpus::plan_uci_pieces(files, world.rank(), world.size()));
    mpi::run_local_phase(world, "infer", [&] {
        corpus::Document doc, mapped;
        while (reader.next(doc)) {
            mapped.clear();
            mapped.key = doc.key;
            std::int64_t oov = 0;
            for (std::size_t i = 0; i < doc.words.size(); ++i) {
                const std::int64_t row = map[doc.words[i]];
                if (row < 0) {
                    oov += doc.counts[i];
                } else {
                    mapped.words.push_back(static_cast<std::uint32_t>(row));
                    mapped.counts.push_back(doc.counts[i]);
                }
            }
            shard.append(mapped);
            local.rows.push_back(file_offset[static_cast<std::size_t>(doc.key.file)] + doc.key.id - 1);
            local.oov_tokens.push_back(oov);
        }
    });
    corpus::check_uci_totals(world, reader);
    // The rows of B this rank's words need, from their owners (or rank 0); the shard's words renumbered to them
    // (the same values in the same order: θ is the same bits as with the whole B).
    std::vector<std::int64_t> needed(shard.words.begin(), shard.words.end());
    std::sort(needed.begin(), needed.end());
    needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
    const Eigen::MatrixXd B_rows = model.B_rows.size() > 0 ? distmat::rows_from_owners(world, model.B_rows, model.B, needed)
                                                           : distmat::rows_from_root(world, model.B, needed);
    out.model_rows = static_cast<std::int64_t>(needed.size());
    for (auto& w : shard.words)
        w = static_cast<std::uint32_t>(std::lower_bound(needed.begin(), needed.end(), std::int64_t{w}) - needed.begin());
    std::vector<DocumentTopics> results;
    mpi::run_local_phase(world, "infer", [&] { results = infer_documents(B_rows, shard, options); });

    // Results in row order (the reader yields each file's documents in docID order, files in order).
    CorpusSummary& summary = out.summary;
    summary.documents = declared;
    const auto n = results.size();
    local.theta.resize(static_cast<Index>(n), K);
    for (std::size_t m = 0; m < n; ++m) {
        const DocumentTopics& r = results[m];
        local.theta.row(static_cast<Index>(m)) = r.theta.transpose();
        Index dominant = -1;
        if (r.tokens > 0) r.theta.maxCoeff(&dominant);
        local.dominant_topic.push_back(dominant);
        local.log_likelihood.push_back(r.log_likelihood);
        local.tokens.push_back(r.tokens);
        local.iterations.push_back(r.iterations);
        summary.inferred += r.tokens > 0 ? 1 : 0;
        summary.tokens += r.tokens;
        summary.not_converged += (r.tokens > 0 && !r.converged) ? 1 : 0;
        // words the model has whose row of B is 0 cannot be explained: they count as out of vocabulary
        std::int64_t present = 0;
        for (auto k = shard.doc_offsets[m]; k < shard.doc_offsets[m + 1]; ++k)
            present += shard.counts[static_cast<std::size_t>(k)];
        local.oov_tokens[m] += present - r.tokens;
        summary.oov_tokens += local.oov_tokens[m];
    }
    std::vector<std::int64_t> counts = {summary.inferred, summary.tokens, summary.not_converged, summary.oov_tokens};
    mpi::allreduce_inplace(world, counts, MPI_SUM);
    summary.inferred = counts[0];
    summary.tokens = counts[1];
    summary.not_converged = counts[2];
    summary.oov_tokens = counts[3];
    summary.empty = summary.documents - summary.inferred;
    sort_by_row(local);  // documents may come in any docID order within a file
    // The corpus's log-likelihood summed in corpus order on rank 0 (a sum by ranks would
    // round differently at another rank count): D doubles.
    {
        const std::vector<std::int64_t> rows = mpi::gather_concat(world, local.rows, 0);
        const std::vector<double> values = mpi::gather_concat(world, local.log_likelihood, 0);
        if (world.is_root()) {
            std::vector<std::size_t> order(rows.size());
            std::iota(order.begin(), order.end(), std::size_t{0});
            std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rows[a] < rows[b]; });
            for (const std::size_t i : order) summary.log_likelihood += values[i];
        }
        mpi::broadcast(world, summary.log_likelihood, 0);
    }
    return out;
}

}  // namespace jsmf::infer
