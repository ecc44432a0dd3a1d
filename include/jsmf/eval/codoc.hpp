// SPDX-License-Identifier: MIT
// Document frequencies for coherence: D1(x) and D2(x, y) over the documents that built C.
#pragma once

#include <cstdint>
#include <vector>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/corpus/shard.hpp"
#include "jsmf/eval/metrics.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::eval {

struct CodocCounts {
    std::vector<std::int64_t> d1;  ///< N: documents that contain word i
    std::vector<std::int64_t> d2;  ///< one per pair, in the pairs' order: documents with both
    Index num_docs = 0;            ///< documents counted (those passing the filters)
};

/// Collective on `comm`. One pass over this rank's documents: the documents that pass
/// `filter` (cooc::contributes, the rule that built C) add to D1 of each word and to D2
/// of each requested pair whose two words they both contain. Only the requested pairs
/// are counted, each distinct pair once (the distinct pairs grouped by their higher word;
/// per document, a bitmap of its words, and for each of its words the pairs it heads test
/// their lower word), so memory is O(N + pairs) per rank whatever the corpus: about
/// 2N + 4·pairs int64 at the most and N bytes.
/// Input errors (the stream's, a word id outside the vocabulary, a pair outside it) are
/// agreed on: every rank throws StageFailed, stage "codoc". The counts are summed in one
/// reduction of N + pairs + 1 int64 to rank 0 (`root_only`) or to every rank
/// (allreduce). With `root_only`, the other ranks return empty d1 and d2 and num_docs 0.
CodocCounts count_codocuments(const mpi::Comm& comm, corpus::DocumentStream& docs, Index num_words,
                              const cooc::CoocOptions& filter, const std::vector<WordPair>& pairs,
                              bool root_only = true);

}  // namespace jsmf::eval
