// SPDX-License-Identifier: MIT
// The model file, written atomically: rank 0's arrays by rank 0, those kept by rows by all.
#include "jsmf/io/result_file.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "io/h5.hpp"
#include "io/sections.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/model/topic_rows.hpp"

namespace jsmf::io {
namespace {

std::string group_name(int K) { return "K" + std::to_string(K); }

std::vector<std::int64_t> as_int64(const std::vector<Index>& ids) { return {ids.begin(), ids.end()}; }

/// /K<K>/topics: from B, or (B kept by rows) from `top`, the top words the ranks merged.
void write_topics(hid_t parent, const model::Model& m, const eval::TopWords* top, const std::vector<std::string>& vocab,
                  int top_words, const std::string& path) {
    const int T = static_cast<int>(top ? top->ids.cols() : std::min<Index>(top_words, m.B.rows()));
    std::vector<std::string> words;
    std::vector<std::int64_t> ids;
    std::vector<double> probs;
    for (int k = 0; k < m.num_topics; ++k) {
        if (top) {
            for (int j = 0; j < T; ++j) {
                words.push_back(vocab[static_cast<std::size_t>(top->ids(k, j))]);
                ids.push_back(top->ids(k, j));
                probs.push_back(top->values(k, j));
            }
            continue;
        }
        for (const Index i : model::top_word_ids(m.B, k, T)) {
            words.push_back(vocab[static_cast<std::size_t>(i)]);
            ids.push_back(i);
            probs.push_back(m.B(i, k));
        }
    }
    h5::Handle topics = h5::create_group(parent, "topics", path);
    const std::vector<hsize_t> dims = {static_cast<hsize_t>(m.num_topics), static_cast<hsize_t>(T)};
    h5::write_strings(topics, "top_words", words, dims);
    h5::write_int64s(topics, "top_word_ids", ids.data(), dims);
    h5::write_doubles(topics, "top_word_probs", probs.data(), dims);
}

void write_model(hid_t parent, const model::Model& m, const std::vector<std::string>& vocab, const std::string& path) {
    h5::Handle model = h5::open_or_create_group(parent, "model", path);
    if (!model::by_rows(m)) {  // else written by rows (write_topic_rows)
        h5::write_matrix(model, "B", m.B);
        h5::write_matrix(model, "B_breve", m.B_breve);
        h5::write_doubles(model, "unigram", m.unigram.data(), {static_cast<hsize_t>(m.unigram.size())});
    }
    h5::write_matrix(model, "A", m.A);
    {
        h5::Handle A(h5::check(H5Dopen2(model, "A", H5P_DEFAULT), path, "no A"), H5Dclose);
        h5::write_attribute(A, "method", name_of(m.a_method));
    }
    const std::vector<std::int64_t> anchors = as_int64(m.anchors);
    std::vector<std::string> anchor_words;
    for (const Index s : m.anchors) anchor_words.push_back(vocab[static_cast<std::size_t>(s)]);
    h5::write_int64s(model, "anchors", anchors.data(), {anchors.size()});
    h5::write_strings(model, "anchor_words", anchor_words);
    h5::write_doubles(model, "diag_r", m.diag_r.data(), {static_cast<hsize_t>(m.diag_r.size())});
    if (m.has_alpha) {
        h5::write_doubles(model, "alpha", m.alpha.data(), {static_cast<hsize_t>(m.alpha.size())});
        h5::Handle alpha(h5::check(H5Dopen2(model, "alpha", H5P_DEFAULT), path, "no alpha"), H5Dclose);
        h5::write_attribute(alpha, "alpha0", m.alpha0);
        h5::write_attribute(alpha, "residual", m.alpha_residual);
        h5::write_attribute(alpha, "at_bound", std::int64_t{m.alpha_at_bound ? 1 : 0});
    }
    h5::write_attribute(model, "method", name_of(m.method));
    h5::write_attribute(model, "anchor_method", name_of(m.anchor_method));
    h5::write_attribute(model, "zero_rows", std::int64_t{m.zero_rows});
    h5::write_attribute(model, "anchor_min_df", std::int64_t{m.anchor_min_df});
    h5::write_attribute(model, "anchor_excluded", std::int64_t{m.anchor_excluded});
    h5::write_attribute(model, "solver", model::solver_name(m));
    h5::write_attribute(model, "words_solved", std::int64_t{m.words_solved});
    h5::write_attribute(model, "words_converged", std::int64_t{m.words_converged});
    h5::write_attribute(model, "solver_max_iterations", std::int64_t{m.solver_max_iterations});
    h5::write_attribute(model, "solve_seconds", m.solve_seconds);
}

/// Deflate level of B and B̆ written by rows, as the serial writer's (h5::write_matrix): a
/// third of their raw size on KOS and 20 Newsgroups at K = 100.
constexpr int kTopicCompression = 4;

// Collective. An N × K array kept by rows (`owned`, each rank's block from row `first_row`)
// written as `name`, deflated, in whole chunks per rank: the rows moved to the chunk-aligned
// blocks first where those differ from `owned` (so that each chunk has one writer).
void write_rows_in_chunks(const mpi::Comm& comm, hid_t group, const char* name, const distmat::RowPartition& owned,
                          Index first_row, const Eigen::MatrixXd& X, const std::string& path) {
    const auto N = static_cast<hsize_t>(owned.size()), K = static_cast<hsize_t>(X.cols());
    const distmat::ChunkedRows chunked = distmat::chunk_aligned(owned.size(), comm.size(), static_cast<int>(X.cols()));
    const Index first = chunked.rows.begin(comm.rank()), mine = chunked.rows.rows(comm.rank());
    std::vector<std::int64_t> ids(static_cast<std::size_t>(mine));
    std::iota(ids.begin(), ids.end(), static_cast<std::int64_t>(first));
    const bool moved = mpi::allreduce_max(comm, first != first_row || mine != X.rows() ? 1 : 0) != 0;
    h5::RowMajorMatrix rows;  // HDF5 takes C order
    if (moved) {
        rows = distmat::repartition(comm, owned, X, chunked.rows);
    } else {
        rows = X;
    }
    h5::write_rows_parallel(group, name, N, K, ids, rows.data(), 0.0, path, kTopicCompression,
                            static_cast<hsize_t>(chunked.chunk));
}

/// Collective (parallel file). /K<K>/model/B, B_breve and unigram of topics kept by rows.
/// Each rank writes a block of whole chunks (distmat::chunk_aligned), so that every chunk
/// is deflated by one rank with no part of it sent to another: its words' rows of B and
/// columns of B̆, taken from the ranks LAW left them on (distmat::repartition: the rows
/// the two blocks do not share, where the partitions differ). Memory: this rank's block
/// for the write and one copy of it (B̆ᵀ's, or B's row-major one), one array at a time.
void write_topic_rows(const mpi::Comm& comm, hid_t parent, const model::Model& m, const std::string& path) {
    h5::Handle model = h5::open_or_create_group(parent, "model", path);
    const auto N = static_cast<hsize_t>(m.B_total_rows), K = static_cast<hsize_t>(m.num_topics);
    const distmat::RowPartition owned = model::partition_of(comm, m);
    const distmat::ChunkedRows chunked = distmat::chunk_aligned(owned.size(), comm.size(), m.num_topics);
    const Index first = chunked.rows.begin(comm.rank()), mine = chunked.rows.rows(comm.rank());
    std::vector<std::int64_t> ids(static_cast<std::size_t>(mine));
    std::iota(ids.begin(), ids.end(), static_cast<std::int64_t>(first));
    const bool moved = mpi::allreduce_max(comm, first != m.B_first_row || mine != m.B.rows() ? 1 : 0) != 0;
    write_rows_in_chunks(comm, model, "B", owned, m.B_first_row, m.B, path);
    {
        // B̆ᵀ's rows in column-major order: the bytes of B̆'s columns (K × n) in row-major order
        Eigen::MatrixXd columns;
        if (moved) {
            columns = distmat::repartition(comm, owned, m.B_breve.transpose(), chunked.rows);
        } else {
            columns = m.B_breve.transpose();
        }
        h5::write_columns_parallel(model, "B_breve", K, N, static_cast<hsize_t>(first), static_cast<hsize_t>(mine),
                                   columns.data(), path, kTopicCompression, static_cast<hsize_t>(chunked.chunk));
    }
    Eigen::VectorXd unigram;
    if (moved) {
        unigram = distmat::repartition(comm, owned, m.unigram, chunked.rows);
    } else {
        unigram = m.unigram;
    }
    h5::write_rows_parallel(model, "unigram", N, 0, ids, unigram.data(), 0.0, path);
}

/// /K<K>/anchorfree (AnchorFree methods only).
void write_anchorfree(hid_t parent, const model::AnchorFreeRecord& r, const std::string& path) {
    h5::Handle group = h5::create_group(parent, "anchorfree", path);
    h5::write_matrix(group, "E", r.E);
    h5::write_matrix(group, "M", r.M);
    h5::write_doubles(group, "eigenvalues", r.eigenvalues.data(), {static_cast<hsize_t>(r.eigenvalues.size())});
    h5::write_attribute(group, "algorithm", name_of(r.algorithm));
    h5::write_attribute(group, "iterations", std::int64_t{r.iterations});
    h5::write_attribute(group, "inner_iterations", std::int64_t{r.inner_iterations});
    h5::write_attribute(group, "converged", std::int64_t{r.converged ? 1 : 0});
    h5::write_attribute(group, "working_rows", std::int64_t{r.working_rows});
    h5::write_attribute(group, "violation", r.violation);
    h5::write_attribute(group, "min_C", r.min_C);
    h5::write_attribute(group, "a_is_distribution", std::int64_t{r.a_is_distribution ? 1 : 0});
}

model::AnchorFreeRecord read_anchorfree(hid_t parent, const std::string& path) {
    h5::Handle group(h5::check(H5Gopen2(parent, "anchorfree", H5P_DEFAULT), path, "cannot open anchorfree"), H5Gclose);
    model::AnchorFreeRecord r;
    r.E = h5::read_matrix(group, "E");
    r.M = h5::read_matrix(group, "M");
    r.eigenvalues = h5::read_vector(group, "eigenvalues");
    const std::string algorithm = h5::read_string_attribute(group, "algorithm");
    const std::optional<model::AnchorFreeAlgorithm> known = find_name<model::AnchorFreeAlgorithm>(algorithm);
    if (!known) throw InputError(path, "anchorfree: unknown algorithm '" + algorithm + "'");
    r.algorithm = *known;
    r.iterations = static_cast<int>(h5::read_int_attribute(group, "iterations"));
    r.inner_iterations = static_cast<int>(h5::read_int_attribute(group, "inner_iterations"));
    r.converged = h5::read_int_attribute(group, "converged") != 0;
    r.working_rows = h5::read_int_attribute(group, "working_rows");
    r.violation = h5::read_double_attribute(group, "violation");
    r.min_C = h5::read_double_attribute(group, "min_C");
    r.a_is_distribution = h5::read_int_attribute(group, "a_is_distribution") != 0;
    return r;
}

void delete_if_present(hid_t parent, const std::string& name, const std::string& path) {
    if (h5::exists(parent, name)) h5::check_status(H5Ldelete(parent, name.c_str(), H5P_DEFAULT), path, "cannot replace /" + name);
}

/// /K<K>/metrics, projection and truth (each replaced when present).
void write_evaluation(hid_t group, const model::Model& m, const std::string& path) {
    if (!m.metrics.metrics.empty()) {
        delete_if_present(group, "metrics", path);
        h5::Handle metrics = h5::create_group(group, "metrics", path);
        h5::write_attribute(metrics, "note", m.metrics_note);
        for (const auto& metric : m.metrics.metrics)
            JSMF_REQUIRE(eval::find_metric(metric.name), "the metric " + metric.name + " is not in metric_table()");
        // In the table's order: attribute [mean, std]; per topic or word, the values too.
        for (const eval::MetricInfo& info : eval::metric_table()) {
            const eval::Metric* metric = m.metrics.find(info.name);
            if (!metric) continue;
            h5::write_attribute(metrics, info.name, std::vector<double>{metric->mean, metric->std});
            if (*info.per == '\0') continue;
            h5::write_doubles(metrics, info.name, metric->values.data(), {static_cast<hsize_t>(metric->values.size())});
            h5::Handle values(h5::check(H5Dopen2(metrics, info.name, H5P_DEFAULT), path, "no " + metric->name),
                              H5Dclose);
            h5::write_attribute(values, "per", std::string(info.per));
        }
    }
    if (m.projection.size() > 0 || m.projection_original.size() > 0) {
        delete_if_present(group, "projection", path);
        h5::Handle projection = h5::create_group(group, "projection", path);
        if (m.projection.size() > 0) h5::write_matrix(projection, "rectified", m.projection);
        if (m.projection_original.size() > 0) h5::write_matrix(projection, "original", m.projection_original);
    }
    if (m.has_truth) {
        delete_if_present(group, "truth", path);
        h5::Handle truth = h5::create_group(group, "truth", path);
        const auto& t = m.truth;
        h5::write_attribute(truth, "file", m.truth_file);
        h5::write_attribute(truth, "b_l1", t.b_l1);
        h5::write_attribute(truth, "a_l1", t.a_l1);
        h5::write_attribute(truth, "a_frobenius", t.a_frobenius);
        h5::write_attribute(truth, "anchor_hits", std::int64_t{t.anchor_hits});
        const std::vector<std::int64_t> permutation(t.permutation.begin(), t.permutation.end());
        h5::write_int64s(truth, "permutation", permutation.data(), {permutation.size()});
        h5::write_doubles(truth, "topic_l1", t.topic_l1.data(), {static_cast<hsize_t>(t.topic_l1.size())});
    }
}

void read_evaluation(hid_t group, model::Model& m) {
    if (h5::exists(group, "metrics")) {
        h5::Handle metrics(H5Gopen2(group, "metrics", H5P_DEFAULT), H5Gclose);
        m.metrics_note = h5::read_string_attribute(metrics, "note");
        for (const eval::MetricInfo& info : eval::metric_table()) {
            const std::string name = info.name;
            if (H5Aexists(metrics, info.name) <= 0) continue;
            const std::vector<double> summary = h5::read_doubles_attribute(metrics, name);
            if (summary.size() != 2)
                h5::fail_dataset(group, "metrics", "attribute " + name + " holds " + std::to_string(summary.size()) +
                                                       " numbers, not [mean, std]");
            eval::Metric metric{name, "", summary[0], summary[1], {}};
            if (h5::exists(metrics, name)) {
                metric.values = h5::read_vector(metrics, name);
                h5::Handle values(H5Dopen2(metrics, name.c_str(), H5P_DEFAULT), H5Dclose);
                metric.per = h5::read_string_attribute(values, "per");
            }
            m.metrics.metrics.push_back(std::move(metric));
        }
    }
    if (h5::exists(group, "projection")) {
        h5::Handle projection(H5Gopen2(group, "projection", H5P_DEFAULT), H5Gclose);
        if (h5::exists(projection, "rectified")) m.projection = h5::read_matrix(projection, "rectified");
        if (h5::exists(projection, "original")) m.projection_original = h5::read_matrix(projection, "original");
    }
    if (h5::exists(group, "truth")) {
        h5::Handle truth(H5Gopen2(group, "truth", H5P_DEFAULT), H5Gclose);
        m.has_truth = true;
        m.truth_file = h5::read_string_attribute(truth, "file");
        m.truth.b_l1 = h5::read_double_attribute(truth, "b_l1");
        m.truth.a_l1 = h5::read_double_attribute(truth, "a_l1");
        m.truth.a_frobenius = h5::read_double_attribute(truth, "a_frobenius");
        m.truth.anchor_hits = static_cast<int>(h5::read_int_attribute(truth, "anchor_hits"));
        for (const auto k : h5::read_int64s(truth, "permutation")) m.truth.permutation.push_back(static_cast<int>(k));
        m.truth.topic_l1 = h5::read_vector(truth, "topic_l1");
    }
}

}  // namespace

void write_model_file(const mpi::Comm& comm, const std::string& path, const CoocFileInfo& info,
                      const std::vector<model::Model>& models, const Provenance& provenance, const StageTimes& times,
                      int top_words, const CorpusDocuments* documents, const std::vector<model::HierarchyLevel>* hierarchy,
                      const lowrank::Sketch* sketch) {
    // A compressed fit's Y is by rows (each rank its own): written collectively first. The
    // records are the same on every rank; agreed all the same, as a count of collectives.
    // So are its topics (B, B̆, the unigram), whose top words the ranks merge first.
    int by_rows = 0;
    for (const auto& m : models)
        by_rows |= (m.compressed && m.compressed->Y_total_rows > 0) || model::by_rows(m) ? 1 : 0;
    if (hierarchy)
        for (const auto& level : *hierarchy) by_rows |= level.B_words_total_rows > 0 ? 1 : 0;
    const bool sketched = mpi::allreduce_max(comm, sketch && !sketch->empty() ? 1 : 0) != 0;
    by_rows |= sketched ? 1 : 0;
    by_rows = mpi::allreduce_max(comm, by_rows);
    // The sketch's N-vectors on the root (3 N values), its vectors written by rows.
    Eigen::MatrixXd sketch_words;
    if (sketched) {
        const distmat::RowPartition rows = distmat::partition_of_blocks(comm, sketch->vectors.rows());
        Eigen::MatrixXd local(sketch->vectors.rows(), 3);
        local.col(0) = sketch->diagonal;
        local.col(1) = sketch->unigram;
        for (Index i = 0; i < local.rows(); ++i) local(i, 2) = static_cast<double>(sketch->doc_freq[static_cast<std::size_t>(i)]);
        sketch_words = distmat::gather_rows_to_root(comm, rows, local);
    }
    std::vector<std::optional<eval::TopWords>> tops(models.size());
    for (std::size_t k = 0; k < models.size(); ++k)
        if (model::by_rows(models[k])) tops[k] = model::top_words_everywhere(comm, models[k], top_words);
    const auto rows_of_Y = [&](hid_t file, const std::string& partial) {
        if (sketched) {
            h5::Handle group = h5::open_or_create_group(file, "sketch", partial);
            const distmat::RowPartition rows = distmat::partition_of_blocks(comm, sketch->vectors.rows());
            write_rows_in_chunks(comm, group, "vectors", rows, rows.begin(comm.rank()), sketch->vectors, partial);
        }
        for (const auto& m : models) {
            const bool Y = m.compressed && m.compressed->Y_total_rows > 0;
            if (!Y && !model::by_rows(m)) continue;
            h5::Handle group = h5::open_or_create_group(file, group_name(m.num_topics), partial);
            if (Y) write_compressed_rows(group, *m.compressed, m.num_topics, partial);
            if (model::by_rows(m)) write_topic_rows(comm, group, m, partial);
        }
        // A hierarchy's levels' words, by rows in the first level's blocks (the compressed fit's)
        for (std::size_t l = 0; hierarchy && l < hierarchy->size(); ++l) {
            const model::HierarchyLevel& level = (*hierarchy)[l];
            if (level.B_words_total_rows == 0) continue;
            h5::Handle root = h5::open_or_create_group(file, "hierarchy", partial);
            h5::Handle group = h5::open_or_create_group(root, "level" + std::to_string(l + 2), partial);
            write_rows_in_chunks(comm, group, "B_words", distmat::partition_of_blocks(comm, level.B_words.rows()),
                                 level.B_words_first_row, level.B_words, partial);
        }
    };
    write_on_root_atomically(comm, path, [&](hid_t file, const std::string& partial) {
        if (hierarchy && !hierarchy->empty()) {
            h5::Handle root = h5::open_or_create_group(file, "hierarchy", partial);
            for (std::size_t l = 0; l < hierarchy->size(); ++l) {
                const model::HierarchyLevel& level = (*hierarchy)[l];
                h5::Handle group = h5::open_or_create_group(root, "level" + std::to_string(l + 2), partial);
                h5::write_attribute(group, "topics", std::int64_t{level.topics});
                h5::write_attribute(group, "rectify_method",
                                    level.rectify_method ? name_of(*level.rectify_method) : std::string());
                h5::write_attribute(group, "rectify_iterations", std::int64_t{level.rectify_iterations});
                h5::write_attribute(group, "rectify_converged", std::int64_t{level.rectify_converged ? 1 : 0});
                h5::write_matrix(group, "B", level.B);
                h5::write_matrix(group, "A", level.A);
                if (level.B_words_total_rows == 0) h5::write_matrix(group, "B_words", level.B_words);  // else written by rows
                const std::vector<std::int64_t> anchors(level.anchors.begin(), level.anchors.end());
                h5::write_int64s(group, "anchors", anchors.data(), {anchors.size()});
            }
        }
        if (documents && comm.is_root()) {
            h5::Handle corpus = h5::create_group(file, "corpus", partial);
            h5::write_strings(corpus, "doc_ids", documents->ids);
            if (!documents->labels.empty()) {
                h5::write_int64s(corpus, "labels", documents->labels.data(), {documents->labels.size()});
                h5::write_strings(corpus, "label_names", documents->label_names);
            }
        }
        if (sketched) {
            h5::Handle group = h5::open_or_create_group(file, "sketch", partial);
            const auto n = static_cast<hsize_t>(sketch_words.rows());
            h5::write_doubles(group, "values", sketch->values.data(), {static_cast<hsize_t>(sketch->values.size())});
            const Eigen::VectorXd diagonal = sketch_words.col(0), unigram = sketch_words.col(1);
            h5::write_doubles(group, "diagonal", diagonal.data(), {n});
            h5::write_doubles(group, "unigram", unigram.data(), {n});
            std::vector<std::int64_t> df(n);
            for (hsize_t i = 0; i < n; ++i) df[i] = std::llround(sketch_words(static_cast<Index>(i), 2));
            h5::write_int64s(group, "doc_freq", df.data(), {n});
            h5::write_attribute(group, "rank", static_cast<std::int64_t>(sketch->rank()));
            h5::write_attribute(group, "weight", sketch->weight);
            h5::write_attribute(group, "num_docs", sketch->num_docs);
            h5::write_attribute(group, "num_tokens", sketch->num_tokens);
        }
        write_root_attributes(file, "model", provenance);
        std::string topics;
        for (const auto& m : models) topics += (topics.empty() ? "" : ",") + std::to_string(m.num_topics);
        h5::write_attribute(file, "topics", topics);
        write_vocab_and_stats(file, info, partial);
        write_timings(file, times, partial);
        for (std::size_t k = 0; k < models.size(); ++k) {
            const model::Model& m = models[k];
            h5::Handle group = h5::open_or_create_group(file, group_name(m.num_topics), partial);
            h5::write_attribute(group, "topics", std::int64_t{m.num_topics});
            write_model(group, m, info.vocab, partial);
            if (m.method != model::Method::anchors) write_anchorfree(group, m.anchorfree, partial);
            write_rectification(group, m.rectification, partial);
            if (m.compressed) write_compressed(group, *m.compressed, partial);
            write_topics(group, m, tops[k] ? &*tops[k] : nullptr, info.vocab, top_words, partial);
            write_timings(group, m.times, partial);
            write_evaluation(group, m, partial);
        }
        if (models.size() == 1) {
            const std::string base = "/" + group_name(models.front().num_topics) + "/";
            for (const char* name : {"model", "rectification", "topics"}) h5::link_soft(file, name, base + name, partial);
        }
    }, by_rows ? std::function<void(hid_t, const std::string&)>(rows_of_Y) : nullptr);
}

void update_model_evaluation(const mpi::Comm& comm, const std::string& in, const std::string& out,
                             const std::vector<model::Model>& models) {
    const std::string partial = out + ".partial";
    const PartialOutput removed_on_a_signal(partial);  // complete or absent, even if killed
    try {
        mpi::check_on_root(comm, "write", [&] {
            std::error_code error;
            std::filesystem::copy_file(in, partial, std::filesystem::copy_options::overwrite_existing, error);
            if (error) throw InputError(partial, "cannot copy " + in + ": " + error.message());
            h5::Handle file = h5::open_file_serial(partial, true);
            for (const auto& m : models) {
                h5::Handle group(h5::check(H5Gopen2(file, group_name(m.num_topics).c_str(), H5P_DEFAULT), partial,
                                           "no group " + group_name(m.num_topics)),
                                 H5Gclose);
                write_evaluation(group, m, partial);
            }
            file.close();
            rename_into_place(partial, out);
        });
    } catch (...) {
        if (comm.is_root()) std::remove(partial.c_str());
        throw;
    }
}

namespace {
// Local. Rows [first, first + count) of the N × cols float64 dataset `name`, in panels of
// about 8 MiB: the row-major panel is the only copy beside the rows.
Eigen::MatrixXd read_rows_in_panels(hid_t group, const char* name, Index first, Index count, Index cols) {
    const Index panel = std::max<Index>(1, (Index{8} << 20) / (8 * std::max<Index>(1, cols)));
    Eigen::MatrixXd out(count, cols);
    for (Index at = 0; at < count; at += panel) {
        const Index n = std::min(panel, count - at);
        out.middleRows(at, n) = h5::read_row_block(group, name, static_cast<hsize_t>(first + at), static_cast<hsize_t>(n));
    }
    return out;
}

// B's checks, on its least entry and its column sums (whole or reduced over ranks): its
// columns are distributions over the words, or an empty topic's 0.
void check_B_values(const std::string& path, const std::string& where, double least, const Eigen::VectorXd& sums) {
    if (least < -1e-9)
        throw InputError(path, where + fmt::format("/B has a negative entry ({:.3g}): its columns are "
                                                   "distributions over the words", least));
    for (Index k = 0; k < sums.size(); ++k)
        if (std::abs(sums(k) - 1) > 1e-6 && sums(k) != 0)
            throw InputError(path, where + fmt::format("/B: column {} sums to {:.9g}, not 1: its columns are "
                                                       "distributions over the words", k, sums(k)));
}

// What a model promises: every array finite; B's columns distributions over words
// (non-negative to 1e-9, summing to 1 to 1e-6, or an empty topic's 0), as jsmf writes them.
void check_model_values(const std::string& path, const std::string& where, const model::Model& m) {
    auto finite = [&](const Eigen::MatrixXd& M, const char* name) {
        if (!M.allFinite()) throw InputError(path, where + "/" + name + " holds non-finite entries (NaN or Inf)");
    };
    finite(m.B, "B");
    finite(m.A, "A");
    finite(m.B_breve, "B_breve");
    finite(m.unigram, "unigram");
    check_B_values(path, where, m.B.size() > 0 ? m.B.minCoeff() : 0.0, m.B.colwise().sum().transpose());
}


void check_unique_words(const std::string& path, const std::vector<std::string>& vocab) {
    std::unordered_map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < vocab.size(); ++i) {
        const auto [at, fresh] = seen.emplace(vocab[i], i);
        if (!fresh)
            throw InputError(path, fmt::format("/vocab: the word '{}' is both word {} and word {}", vocab[i], at->second, i));
    }
}
}  // namespace

ModelFile read_model_file(const std::string& path, ModelParts parts) {
    h5::Handle file = h5::open_file_serial(path, false);
    h5::require_jsmf_file(file, path, "model", "a jsmf model file (jsmf fit writes them)");
    ModelFile out;
    out.vocab = h5::read_strings(file, "vocab");
    check_unique_words(path, out.vocab);
    out.command_line = h5::read_string_attribute(file, "command_line");
    out.created = h5::read_string_attribute(file, "created");
    out.unigram = h5::read_vector(file, "stats/unigram");
    const std::vector<std::int64_t> doc_freq = h5::read_int64s(file, "stats/doc_freq");
    out.doc_freq = Eigen::Map<const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>>(doc_freq.data(),
                                                                                   static_cast<Index>(doc_freq.size()));
    {
        h5::Handle stats(h5::check(H5Gopen2(file, "stats", H5P_DEFAULT), path, "no /stats"), H5Gclose);
        out.num_docs = h5::read_int_attribute(stats, "num_docs");
        out.num_tokens = h5::read_int_attribute(stats, "num_tokens");
    }
    for (const char* name : {"corpus", "vocab_file", "cooc", "min_tokens", "min_distinct", "method", "iterations",
                             "tolerance", "eigensolver", "eig_check_steps", "eig_check_every", "permutations", "seed",
                             "block_size", "solver", "anchors", "recover_a", "stop", "acceleration", "anderson_depth",
                             "anderson_below", "relaxation", "eig_tolerance_factor", "check_every", "precision", "hierarchy",
                             "estimator", "model_method", "update_of", "update_old_topics", "update_distances",
                             "update_gone", "update_match_distance", "updates"})
        if (H5Aexists(file, name) > 0) out.options.emplace_back(name, h5::read_string_attribute(file, name));
    if (h5::exists(file, "corpus")) {
        h5::Handle corpus(h5::check(H5Gopen2(file, "corpus", H5P_DEFAULT), path, "cannot open /corpus"), H5Gclose);
        out.documents.ids = h5::read_strings(corpus, "doc_ids");
        if (h5::exists(corpus, "labels")) {
            out.documents.labels = h5::read_int64s(corpus, "labels");
            out.documents.label_names = h5::read_strings(corpus, "label_names");
            const auto L = static_cast<std::int64_t>(out.documents.label_names.size());
            if (out.documents.labels.size() != out.documents.ids.size() ||
                std::any_of(out.documents.labels.begin(), out.documents.labels.end(),
                            [&](std::int64_t l) { return l < 1 || l > L; }))
                throw InputError(path, "/corpus: the labels disagree with the documents or the label names");
        }
    }
    const std::string topics = h5::read_string_attribute(file, "topics");
    std::size_t start = 0;
    while (start < topics.size()) {
        const std::size_t comma = std::min(topics.find(',', start), topics.size());
        const std::string field = topics.substr(start, comma - start);
        int K = 0;
        const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), K);
        if (error != std::errc() || end != field.data() + field.size() || K < 1)
            throw InputError(path, "the root attribute topics must list topic counts (\"10,25\"), found '" + topics + "'");
        start = comma + 1;
        h5::Handle group(h5::check(H5Gopen2(file, group_name(K).c_str(), H5P_DEFAULT), path, "no group " + group_name(K)),
                         H5Gclose);
        h5::Handle model(h5::check(H5Gopen2(group, "model", H5P_DEFAULT), path, "no model group"), H5Gclose);
        model::Model m;
        m.num_topics = K;
        const bool topic_words = parts != ModelParts::without_topic_words;
        if (topic_words) {
            m.B = h5::read_matrix(model, "B");
            m.B_breve = h5::read_matrix(model, "B_breve");
        }
        m.A = h5::read_matrix(model, "A");
        {
            h5::Handle A(h5::check(H5Dopen2(model, "A", H5P_DEFAULT), path, "no A"), H5Dclose);
            if (H5Aexists(A, "method") > 0) {  // how A was recovered
                const std::string method = h5::read_string_attribute(A, "method");
                const std::optional<model::ARecovery> known = find_name<model::ARecovery>(method);
                if (!known) throw InputError(path, "/" + group_name(K) + "/model/A: unknown method '" + method + "'");
                m.a_method = *known;
            }
        }
        for (const auto id : h5::read_int64s(model, "anchors")) m.anchors.push_back(id);
        m.unigram = h5::read_vector(model, "unigram");
        m.diag_r = h5::read_vector(model, "diag_r");
        const std::string anchor_method = h5::read_string_attribute(model, "anchor_method");
        const std::optional<model::AnchorChoice> chosen = find_name<model::AnchorChoice>(anchor_method);
        if (!chosen)
            throw InputError(path, "/" + group_name(K) + "/model: unknown anchor_method '" + anchor_method + "'");
        m.anchor_method = *chosen;
        if (H5Aexists(model, "method") > 0) {  // files before AnchorFree have none: anchors
            const std::string method = h5::read_string_attribute(model, "method");
            const std::optional<model::Method> known = find_name<model::Method>(method);
            if (!known) throw InputError(path, "/" + group_name(K) + "/model: unknown method '" + method + "'");
            m.method = *known;
        }
        if (m.method != model::Method::anchors) {
            m.anchorfree = read_anchorfree(group, path);
            if (m.anchorfree.E.rows() != K || m.anchorfree.E.cols() != K || m.anchorfree.M.rows() != K ||
                m.anchorfree.M.cols() != K || m.anchorfree.eigenvalues.size() != K)
                throw InputError(path, "/" + group_name(K) + "/anchorfree: shapes disagree with K");
        }
        if (parts == ModelParts::all && h5::exists(group, "compressed"))
            m.compressed = read_compressed(group, static_cast<Index>(m.B.rows()), K, path);
        if (m.method == model::Method::anchors) {  // AnchorFree's @solver is its method's name
            const std::string solver = h5::read_string_attribute(model, "solver");
            m.solver = find_name<recover::Solver>(solver);
            if (!m.solver) throw InputError(path, "/" + group_name(K) + "/model: unknown solver '" + solver + "'");
        }
        m.words_solved = h5::read_int_attribute(model, "words_solved");
        m.words_converged = h5::read_int_attribute(model, "words_converged");
        m.zero_rows = h5::read_int_attribute(model, "zero_rows");
        // Files written before the threshold existed had none.
        if (H5Aexists(model, "anchor_min_df") > 0) m.anchor_min_df = h5::read_int_attribute(model, "anchor_min_df");
        if (H5Aexists(model, "anchor_excluded") > 0) m.anchor_excluded = h5::read_int_attribute(model, "anchor_excluded");
        m.has_alpha = h5::exists(model, "alpha");
        if (m.has_alpha) {
            m.alpha = h5::read_vector(model, "alpha");
        }
        h5::Handle rect(h5::check(H5Gopen2(group, "rectification", H5P_DEFAULT), path, "no rectification"), H5Gclose);
        m.rectification = read_rectification(rect, path);
        read_evaluation(group, m);
        const auto N = static_cast<Index>(out.vocab.size());
        if (out.doc_freq.size() != N || out.unigram.size() != N)
            throw InputError(path, "/stats: shapes disagree with the vocabulary");
        if ((topic_words && (m.B.rows() != N || m.B.cols() != K || m.B_breve.rows() != K || m.B_breve.cols() != N)) ||
            m.A.rows() != K || m.A.cols() != K || static_cast<int>(m.anchors.size()) != K ||
            m.unigram.size() != N ||
            std::any_of(m.anchors.begin(), m.anchors.end(), [&](Index s) { return s < 0 || s >= N; }))
            throw InputError(path, "/" + group_name(K) + "/model: shapes disagree with K and the vocabulary");
        check_model_values(path, "/" + group_name(K) + "/model", m);
        out.models.push_back(std::move(m));
    }
    if (h5::exists(file, "hierarchy")) {  // (without the topic words: each level but its B_words)
        h5::Handle root(h5::check(H5Gopen2(file, "hierarchy", H5P_DEFAULT), path, "cannot open /hierarchy"), H5Gclose);
        for (int l = 2; h5::exists(root, "level" + std::to_string(l)); ++l) {
            const std::string name = "level" + std::to_string(l);
            h5::Handle group(h5::check(H5Gopen2(root, name.c_str(), H5P_DEFAULT), path, "cannot open /hierarchy/" + name),
                             H5Gclose);
            model::HierarchyLevel level;
            level.topics = static_cast<int>(h5::read_int_attribute(group, "topics"));
            if (H5Aexists(group, "rectify_method") > 0) {
                const std::string method = h5::read_string_attribute(group, "rectify_method");
                level.rectify_method = find_name<model::Rectification>(method);
                if (!level.rectify_method && !method.empty())  // empty: not recorded
                    throw InputError(path, "/hierarchy/" + name + ": unknown rectify_method '" + method + "'");
                level.rectify_iterations = static_cast<int>(h5::read_int_attribute(group, "rectify_iterations"));
                level.rectify_converged = h5::read_int_attribute(group, "rectify_converged") != 0;
            }
            level.B = h5::read_matrix(group, "B");
            level.A = h5::read_matrix(group, "A");
            if (parts != ModelParts::without_topic_words) level.B_words = h5::read_matrix(group, "B_words");
            for (const auto a : h5::read_int64s(group, "anchors")) level.anchors.push_back(a);
            const Index below = out.hierarchy.empty() ? (out.models.empty() ? 0 : out.models.front().num_topics)
                                                      : out.hierarchy.back().topics;
            if (level.topics < 1 || level.B.rows() != below || level.B.cols() != level.topics ||
                level.A.rows() != level.topics || level.A.cols() != level.topics ||
                (parts != ModelParts::without_topic_words &&
                 (level.B_words.rows() != static_cast<Index>(out.vocab.size()) || level.B_words.cols() != level.topics)) ||
                static_cast<int>(level.anchors.size()) != level.topics ||
                std::any_of(level.anchors.begin(), level.anchors.end(), [&](Index a) { return a < 0 || a >= below; }) ||
                !level.B.allFinite() || !level.A.allFinite())
                throw InputError(path, "/hierarchy/" + name + ": shapes or values disagree");
            out.hierarchy.push_back(std::move(level));
        }
    }
    return out;
}

BByRows read_B_by_rows(const mpi::Comm& comm, const std::string& path, int topics, Index words) {
    return read_B_by_rows(comm, path, topics, distmat::RowPartition::balanced(words, comm.size()));
}

BByRows read_B_by_rows(const mpi::Comm& comm, const std::string& path, int topics, const distmat::RowPartition& rows) {
    const Index words = rows.size();
    BByRows out;
    out.rows = rows;
    const std::string where = "/" + group_name(topics) + "/model";
    mpi::run_local_phase(comm, "setup", [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        h5::Handle model(h5::check(H5Gopen2(file, (group_name(topics) + "/model").c_str(), H5P_DEFAULT), path,
                                   "no group " + where),
                         H5Gclose);
        const std::vector<hsize_t> dims = h5::dataset_dims(model, "B");
        if (dims.size() != 2 || dims[0] != static_cast<hsize_t>(words) || dims[1] != static_cast<hsize_t>(topics))
            throw InputError(path, where + ": shapes disagree with K and the vocabulary");
        out.B = read_rows_in_panels(model, "B", out.rows.begin(comm.rank()), out.rows.rows(comm.rank()), topics);
    });
    // read_model_file's checks of B (check_model_values), on values reduced over the ranks:
    // whether any entry is not finite, the column sums, the least entry.
    const bool finite = out.B.allFinite();
    std::vector<double> counted(static_cast<std::size_t>(topics) + 1, 0.0);  // [non-finite, column sums]
    counted[0] = finite ? 0.0 : 1.0;
    for (Index k = 0; k < out.B.cols() && finite; ++k) counted[static_cast<std::size_t>(k) + 1] = out.B.col(k).sum();
    mpi::allreduce_inplace(comm, counted, MPI_SUM);
    const double least = mpi::allreduce_min(comm, finite && out.B.size() > 0 ? out.B.minCoeff() : 0.0);
    mpi::check_on_root(comm, "setup", [&] {
        if (counted[0] > 0) throw InputError(path, where + "/B holds non-finite entries (NaN or Inf)");
        check_B_values(path, where, least, Eigen::Map<const Eigen::VectorXd>(counted.data() + 1, topics));
    });
    return out;
}

Eigen::MatrixXd read_factor_by_rows(const mpi::Comm& comm, const std::string& path, int topics,
                                    const distmat::RowPartition& rows) {
    const std::string where = "/" + group_name(topics) + "/compressed";
    std::int64_t present = 0;
    mpi::check_on_root(comm, "setup", [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        present = h5::exists(file, (where + "/Y").c_str()) ? 1 : 0;
    });
    mpi::broadcast(comm, present, 0);
    if (present == 0) return {};
    Eigen::MatrixXd Y;
    mpi::run_local_phase(comm, "setup", [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        h5::Handle group(h5::check(H5Gopen2(file, where.c_str(), H5P_DEFAULT), path, "no group " + where), H5Gclose);
        const std::vector<hsize_t> dims = h5::dataset_dims(group, "Y");
        if (dims.size() != 2 || dims[0] != static_cast<hsize_t>(rows.size()) || dims[1] != static_cast<hsize_t>(topics))
            throw InputError(path, where + "/Y: shapes disagree with K and the vocabulary");
        Y = read_rows_in_panels(group, "Y", rows.begin(comm.rank()), rows.rows(comm.rank()), topics);
        if (!Y.allFinite()) throw InputError(path, where + "/Y holds non-finite entries");
    });
    return Y;
}

Index sketch_rank_of(const std::string& path) {
    h5::Handle file = h5::open_file_serial(path, false);
    if (!h5::exists(file, "sketch")) return 0;
    h5::Handle group(h5::check(H5Gopen2(file, "sketch", H5P_DEFAULT), path, "cannot open /sketch"), H5Gclose);
    return static_cast<Index>(h5::read_int_attribute(group, "rank"));
}

lowrank::Sketch read_sketch(const mpi::Comm& comm, const std::string& path, const distmat::RowPartition& rows) {
    const Index N = rows.size();
    lowrank::Sketch s;
    std::vector<double> scalars(4, 0.0);  // rank, weight, num_docs, num_tokens
    mpi::check_on_root(comm, "setup", [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        if (!h5::exists(file, "sketch"))
            throw InputError(path, "holds no sketch of its C: an update without the old documents needs one (fit the "
                                   "base with --sketch-rank), or update exactly with the old documents and the new");
        h5::Handle group(h5::check(H5Gopen2(file, "sketch", H5P_DEFAULT), path, "cannot open /sketch"), H5Gclose);
        const std::int64_t r = h5::read_int_attribute(group, "rank");
        const std::vector<hsize_t> dims = h5::dataset_dims(group, "vectors");
        if (r < 1 || dims.size() != 2 || dims[0] != static_cast<hsize_t>(N) || dims[1] != static_cast<hsize_t>(r))
            throw InputError(path, "/sketch/vectors is not N x rank (N = " + std::to_string(N) + ", rank " + std::to_string(r) + ")");
        for (const char* name : {"diagonal", "unigram", "doc_freq"})
            if (h5::dataset_dims(group, name) != std::vector<hsize_t>{static_cast<hsize_t>(N)})
                throw InputError(path, std::string("/sketch/") + name + " does not have N = " + std::to_string(N) + " entries");
        const std::vector<double> values = h5::read_doubles(group, "values");
        if (values.size() != static_cast<std::size_t>(r)) throw InputError(path, "/sketch/values does not have rank entries");
        s.values = Eigen::Map<const Eigen::VectorXd>(values.data(), r);
        scalars = {static_cast<double>(r), h5::read_double_attribute(group, "weight"),
                   static_cast<double>(h5::read_int_attribute(group, "num_docs")),
                   static_cast<double>(h5::read_int_attribute(group, "num_tokens"))};
        if (!s.values.allFinite()) throw InputError(path, "/sketch/values holds non-finite entries");
        if (!(scalars[1] > 0) || !std::isfinite(scalars[1]) || scalars[2] < 1 || scalars[3] < 0)
            throw InputError(path, "/sketch's weight or counts are not positive");
    });
    mpi::broadcast(comm, scalars.data(), scalars.size(), 0);
    const auto r = static_cast<Index>(scalars[0]);
    s.values.resize(r);
    mpi::broadcast(comm, s.values.data(), static_cast<std::size_t>(r), 0);
    s.weight = scalars[1];
    s.num_docs = static_cast<std::int64_t>(scalars[2]);
    s.num_tokens = static_cast<std::int64_t>(scalars[3]);
    const Index first = rows.begin(comm.rank()), count = rows.rows(comm.rank());
    mpi::run_local_phase(comm, "setup", [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        h5::Handle group(h5::check(H5Gopen2(file, "sketch", H5P_DEFAULT), path, "cannot open /sketch"), H5Gclose);
        s.vectors = read_rows_in_panels(group, "vectors", first, count, r);
        const std::vector<double> diagonal = h5::read_doubles(group, "diagonal"), unigram = h5::read_doubles(group, "unigram");
        const std::vector<std::int64_t> df = h5::read_int64s(group, "doc_freq");
        s.diagonal = Eigen::Map<const Eigen::VectorXd>(diagonal.data() + first, count);
        s.unigram = Eigen::Map<const Eigen::VectorXd>(unigram.data() + first, count);
        s.doc_freq.assign(df.begin() + first, df.begin() + first + count);
        if (!s.vectors.allFinite() || !s.diagonal.allFinite() || !s.unigram.allFinite())
            throw InputError(path, "/sketch holds non-finite entries");
        if (std::any_of(s.doc_freq.begin(), s.doc_freq.end(), [](std::int64_t v) { return v < 0; }))
            throw InputError(path, "/sketch/doc_freq holds a negative frequency");
    });
    return s;
}

}  // namespace jsmf::io
