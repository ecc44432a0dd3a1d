// SPDX-License-Identifier: MIT
// Document frequencies for coherence: one pass over each rank's documents, then one sum.
#include "jsmf/eval/codoc.hpp"

#include <algorithm>
#include <string>

#include "jsmf/core/error.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::eval {
namespace {
constexpr const char* kCodocStage = "codoc";

void check_pairs(const std::vector<WordPair>& pairs, Index num_words) {
    if (num_words < 1) throw InputError("codoc: the vocabulary is empty");
    for (const WordPair& pair : pairs) {
        if (pair.higher < 0 || pair.higher >= num_words || pair.lower < 0 || pair.lower >= num_words)
            throw InputError("codoc: word pair (" + std::to_string(pair.higher) + ", " + std::to_string(pair.lower) +
                             ") is outside the vocabulary of " + std::to_string(num_words) + " words");
    }
}

/// Throws InputError for a word id outside the vocabulary (the check of
/// build_cooccurrence, on every document read).
void check_word_ids(const corpus::Document& doc, Index num_words) {
    for (const auto word : doc.words) {
        if (static_cast<Index>(word) >= num_words)
            throw InputError("word id " + std::to_string(word + 1) + " is outside the vocabulary of " +
                             std::to_string(num_words) + " words");
    }
}

/// The requested pairs grouped by their higher-ranked word (compressed rows): the pairs
/// whose `higher` is w are pair_ids[first[w] .. first[w + 1]). Memory: N + 1 + pairs int64.
class PairsByWord {
public:
    PairsByWord(const std::vector<WordPair>& pairs, Index num_words)
        : first_(static_cast<std::size_t>(num_words) + 1, 0), pair_ids_(pairs.size()) {
        for (const WordPair& pair : pairs) ++first_[static_cast<std::size_t>(pair.higher) + 1];
        for (std::size_t w = 0; w + 1 < first_.size(); ++w) first_[w + 1] += first_[w];
        std::vector<std::int64_t> next(first_.begin(), first_.end() - 1);
        for (std::size_t p = 0; p < pairs.size(); ++p)
            pair_ids_[static_cast<std::size_t>(next[static_cast<std::size_t>(pairs[p].higher)]++)] =
                static_cast<std::int64_t>(p);
    }
    const std::int64_t* begin(std::uint32_t word) const { return pair_ids_.data() + first_[word]; }
    const std::int64_t* end(std::uint32_t word) const { return pair_ids_.data() + first_[word + 1]; }

private:
    std::vector<std::int64_t> first_;
    std::vector<std::int64_t> pair_ids_;
};

/// This rank's counts, laid out for one reduction: D1 (N), then D2 (one per pair), then
/// the number of documents counted.
class CodocTally {
public:
    CodocTally(const std::vector<WordPair>& pairs, Index num_words)
        : pairs_(pairs), by_word_(pairs, num_words), num_words_(num_words), present_(static_cast<std::size_t>(num_words), 0),
          counts_(static_cast<std::size_t>(num_words) + pairs.size() + 1, 0) {}

    /// Adds one document that passed the filters (its word ids checked).
    void add(const corpus::Document& doc) {
        for (const auto word : doc.words) present_[word] = 1;
        std::int64_t* d1 = counts_.data();
        std::int64_t* d2 = counts_.data() + num_words_;
        for (const auto word : doc.words) {
            ++d1[word];
            for (const std::int64_t* p = by_word_.begin(word); p != by_word_.end(word); ++p)
                if (present_[static_cast<std::size_t>(pairs_[static_cast<std::size_t>(*p)].lower)]) ++d2[*p];
        }
        for (const auto word : doc.words) present_[word] = 0;
        ++counts_.back();
    }

    std::vector<std::int64_t>& counts() { return counts_; }

private:
    const std::vector<WordPair>& pairs_;
    PairsByWord by_word_;
    Index num_words_;
    std::vector<char> present_;  // the current document's words (all zero between documents)
    std::vector<std::int64_t> counts_;
};

/// Collective on `comm`. Element-wise sums of `data` to rank 0 (`root_only`; the other
/// ranks' `data` is left as it was) or to every rank.
void sum_counts(const mpi::Comm& comm, std::vector<std::int64_t>& data, bool root_only) {
    if (!root_only) {
        mpi::allreduce_inplace(comm, data, MPI_SUM);
        return;
    }
    mpi::sum_to_root(comm, data.data(), data.size(), 0);
}
}  // namespace

CodocCounts count_codocuments(const mpi::Comm& comm, corpus::DocumentStream& docs, Index num_words,
                              const cooc::CoocOptions& filter, const std::vector<WordPair>& pairs, bool root_only) {
    mpi::require_same_on_all_ranks(comm, {num_words, static_cast<std::int64_t>(pairs.size()), filter.min_tokens,
                                          filter.min_distinct, root_only ? 1 : 0},
                                   "count_codocuments");
    mpi::run_local_phase(comm, kCodocStage, [&] { check_pairs(pairs, num_words); });

    CodocTally tally(pairs, num_words);
    // The pass is local (no collectives), so a reading error on one rank is agreed on
    // once it ends and every rank throws StageFailed together.
    mpi::run_local_phase(comm, kCodocStage, [&] {
        corpus::Document doc;
        while (docs.next(doc)) {
            check_word_ids(doc, num_words);
            if (cooc::contributes(doc, filter)) tally.add(doc);
        }
    });
    std::vector<std::int64_t>& counts = tally.counts();
    sum_counts(comm, counts, root_only);

    CodocCounts out;
    if (root_only && !comm.is_root()) return out;  // the sums are on rank 0 only
    const auto d2_begin = counts.begin() + num_words;
    out.d1.assign(counts.begin(), d2_begin);
    out.d2.assign(d2_begin, counts.end() - 1);
    out.num_docs = counts.back();
    return out;
}

}  // namespace jsmf::eval
