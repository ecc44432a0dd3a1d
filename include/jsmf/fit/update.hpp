// SPDX-License-Identifier: MIT
// fit --update OLD.h5: a model of more documents whose topics keep the ids of OLD's.
#pragma once

#include <string>
#include <vector>

#include "jsmf/core/names.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/model/matching.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::fit {

/// How an update counts the old documents: read again (exact), or by the base's sketch of
/// its C (lowrank::Sketch), the new documents alone read.
enum class UpdateMode { exact, sketch };
inline const Names<UpdateMode, 2>& names(UpdateMode) {
    static const Names<UpdateMode, 2> table{"exact", "sketch"};
    return table;
}

/// What a model to be updated holds that the update must share, read by rank 0 from its
/// file (without its N × K arrays) and sent to every rank.
struct UpdateBase {
    std::string path;
    std::vector<std::string> vocab;
    std::vector<int> topics;            ///< the K of its models
    Entries settings;                   ///< min_tokens, min_distinct, estimator (as recorded)
    std::string history;                ///< its own updates (root attribute `updates`), if any
    std::int64_t num_docs = 0;          ///< M: the documents its C counted
    Index sketch_rank = 0;              ///< the rank of the sketch it keeps (0: none)
};

/// Collective on `world`. Reads the update's base; InputError (agreed) when `path` is no model file.
UpdateBase read_update_base(const mpi::Comm& world, const std::string& path);

/// Local. InputError naming the base's file unless the new fit reads documents as the base's
/// did: the same vocabulary (the same words in the same order; a new vocabulary's words are a
/// later step) and the same document filter and estimator (`settings`, as the new source
/// records them).
void check_update_source(const UpdateBase& base, const std::vector<std::string>& vocab, const Entries& settings);

/// Collective on `world`. Renumbers the topics of `m` (a fit on the base's documents and more)
/// so that each keeps the id of the base's topic it matches (model::match_topics' total
/// variation of B's columns, here by rows: each rank reads the base's B at the rows of `m` it
/// holds, and the distances are summed over the ranks; the assignment made on rank 0), and
/// returns the matching in the new order: old_of_new[k] is the base's topic that topic k is
/// (−1: new). The base must hold a model with m's K, or with K's of which the first is used.
model::TopicMatching keep_topic_ids(const mpi::Comm& world, model::Model& m, const UpdateBase& base, double threshold);

/// The provenance entries of an update: the base, the matching and the history of updates
/// (the base's, then this one: `what`, e.g. the corpus and its counts).
Entries update_entries(const UpdateBase& base, const model::TopicMatching& matching, const std::string& what);

}  // namespace jsmf::fit
