// SPDX-License-Identifier: MIT
#include "jsmf/fit/update.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "jsmf/core/error.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/model/topic_rows.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::fit {
namespace {

const std::vector<std::string>& shared_settings() {
    static const std::vector<std::string> names{"min_tokens", "min_distinct", "estimator"};
    return names;
}

std::vector<std::string> flatten(const Entries& entries) {
    std::vector<std::string> flat;
    for (const auto& [name, value] : entries) flat.insert(flat.end(), {name, value});
    return flat;
}

Entries unflatten(const std::vector<std::string>& flat) {
    Entries entries;
    for (std::size_t k = 0; k + 1 < flat.size(); k += 2) entries.emplace_back(flat[k], flat[k + 1]);
    return entries;
}

std::string joined(const std::vector<int>& values) {
    std::string text;
    for (const int v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
    return text;
}

}  // namespace

UpdateBase read_update_base(const mpi::Comm& world, const std::string& path) {
    UpdateBase base;
    base.path = path;
    std::vector<std::string> settings;
    mpi::check_on_root(world, "setup", [&] {
        const io::ModelFile file = io::read_model_file(path, io::ModelParts::without_topic_words);
        if (file.models.empty()) throw InputError(path, "holds no model to update");
        for (const auto& [key, value] : file.options)  // (its levels are not read here: the attribute says)
            if (key == "hierarchy" && !value.empty())
                throw InputError(path, "holds a hierarchy: an update keeps the ids of one level's topics, fit it anew");
        base.vocab = file.vocab;
        base.num_docs = static_cast<std::int64_t>(file.num_docs);
        base.sketch_rank = io::sketch_rank_of(path);
        for (const auto& m : file.models) base.topics.push_back(m.num_topics);
        Entries kept;
        for (const auto& name : shared_settings())
            for (const auto& [key, value] : file.options)
                if (key == name) kept.emplace_back(key, value);
        for (const auto& [key, value] : file.options)
            if (key == "updates") base.history = value;
        settings = flatten(kept);
    });
    mpi::broadcast(world, base.vocab, 0);
    mpi::broadcast(world, settings, 0);
    mpi::broadcast(world, base.history, 0);
    mpi::broadcast(world, base.num_docs, 0);
    std::int64_t sketch_rank = static_cast<std::int64_t>(base.sketch_rank);
    mpi::broadcast(world, sketch_rank, 0);
    base.sketch_rank = static_cast<Index>(sketch_rank);
    std::int64_t count = static_cast<std::int64_t>(base.topics.size());
    mpi::broadcast(world, count, 0);
    base.topics.resize(static_cast<std::size_t>(count));
    mpi::broadcast(world, base.topics.data(), base.topics.size(), 0);
    base.settings = unflatten(settings);
    return base;
}

void check_update_source(const UpdateBase& base, const std::vector<std::string>& vocab, const Entries& settings) {
    if (vocab.size() != base.vocab.size())
        throw InputError(base.path, fmt::format("has {} words, the corpus to update it with {}: an update keeps the "
                                                "vocabulary (a new vocabulary's words are a later step)",
                                                base.vocab.size(), vocab.size()));
    const auto differ = std::mismatch(vocab.begin(), vocab.end(), base.vocab.begin());
    if (differ.first != vocab.end())
        throw InputError(base.path, fmt::format("has word {} '{}' where the corpus to update it with has '{}': an "
                                                "update keeps the vocabulary and its order",
                                                differ.first - vocab.begin() + 1, *differ.second, *differ.first));
    for (const auto& [name, value] : base.settings)
        for (const auto& [key, mine] : settings)
            if (key == name && mine != value)
                throw InputError(base.path, "was fit with " + name + " = " + value + ", the update with " + mine +
                                                ": a model of documents filtered or weighed otherwise is another "
                                                "model, not an update");
}

model::TopicMatching keep_topic_ids(const mpi::Comm& world, model::Model& m, const UpdateBase& base, double threshold) {
    const int K = m.num_topics;
    const int base_K = std::find(base.topics.begin(), base.topics.end(), K) != base.topics.end() ? K : base.topics.front();
    // The base's B at the rows of m this rank holds (the dense fit's: all on rank 0).
    const eval::TopicRows mine = model::rows_view(world, m);
    const distmat::RowPartition rows = distmat::partition_of_blocks(world, mine.B.rows());
    const io::BByRows old = io::read_B_by_rows(world, base.path, base_K, rows);
    Eigen::MatrixXd distance = Eigen::MatrixXd::Zero(K, base_K);  // Σ over this rank's words of |b_new − b_old|
    if (mine.B.rows() > 0)  // a dense fit's other ranks hold no rows (and no columns)
        for (Index k = 0; k < K; ++k)
            for (Index l = 0; l < base_K; ++l) distance(k, l) = (mine.B.col(k) - old.B.col(l)).cwiseAbs().sum();
    distmat::sum_on_all_ranks(world, distance.data(), static_cast<std::size_t>(distance.size()));
    distance *= 0.5;
    model::TopicMatching matching;
    std::vector<int> order;
    if (world.is_root()) {
        matching = model::assign_topics(distance, threshold);
        order = model::keeping_order(matching);
    }
    order.resize(static_cast<std::size_t>(K));
    mpi::broadcast(world, order.data(), order.size(), 0);
    // Every rank the same matching: from the same distances, the root's assignment.
    if (!world.is_root()) matching = model::assign_topics(distance, threshold);
    model::permute_topics(m, order);
    model::TopicMatching ordered = matching;
    for (int k = 0; k < K; ++k) {
        ordered.old_of_new[static_cast<std::size_t>(k)] = matching.old_of_new[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
        ordered.distance[static_cast<std::size_t>(k)] = matching.distance[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
    }
    return ordered;
}

Entries update_entries(const UpdateBase& base, const model::TopicMatching& matching, const std::string& what) {
    std::string distances;
    for (const double d : matching.distance) distances += fmt::format("{}{:.4f}", distances.empty() ? "" : ",", d);
    return {{"update_of", base.path},
            {"update_old_topics", joined(matching.old_of_new)},
            {"update_distances", distances},
            {"update_gone", joined(matching.gone)},
            {"update_match_distance", fmt::format("{}", matching.threshold)},
            {"updates", base.history + (base.history.empty() ? "" : "; ") + what}};
}

}  // namespace jsmf::fit
