// SPDX-License-Identifier: MIT
// Document frequencies for coherence: one pass over each rank's documents, then one sum.
#include "jsmf/eval/codoc.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

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

/// The requested pairs, each distinct (higher, lower) once, grouped by their higher word
/// (compressed rows): word w heads the distinct pairs [first[w], first[w + 1]), whose lower
/// words are lower[...] (contiguous, so a document's test of them reads one run). Top-word
/// lists share words (a frequent word heads pairs in many topics: at the NYTimes shape one
/// document tested thousands of requested pairs, most of them repeats), so each distinct
/// pair is tested once per document and its count handed to every request of it.
/// Memory: N + 1 int64, a uint32 per distinct pair and an int64 per requested pair (and
/// pairs × 8 bytes more while sorting).
class DistinctPairs {
public:
    DistinctPairs(const std::vector<WordPair>& pairs, Index num_words)
        : first_(static_cast<std::size_t>(num_words) + 1, 0), distinct_of_(pairs.size()) {
        std::vector<std::size_t> order(pairs.size());
        for (std::size_t p = 0; p < order.size(); ++p) order[p] = p;
        const auto key = [&](std::size_t p) { return std::make_pair(pairs[p].higher, pairs[p].lower); };
        std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return key(x) < key(y); });
        for (std::size_t at = 0; at < order.size(); ++at) {
            const std::size_t p = order[at];
            if (at == 0 || key(order[at - 1]) != key(p)) {
                lower_.push_back(static_cast<std::uint32_t>(pairs[p].lower));
                ++first_[static_cast<std::size_t>(pairs[p].higher) + 1];
            }
            distinct_of_[p] = static_cast<std::int64_t>(lower_.size()) - 1;
        }
        for (std::size_t w = 0; w + 1 < first_.size(); ++w) first_[w + 1] += first_[w];
    }
    std::size_t size() const { return lower_.size(); }
    std::int64_t first(std::uint32_t word) const { return first_[word]; }
    std::int64_t end(std::uint32_t word) const { return first_[word + 1]; }
    std::uint32_t lower(std::int64_t distinct) const { return lower_[static_cast<std::size_t>(distinct)]; }
    std::int64_t distinct_of(std::size_t pair) const { return distinct_of_[pair]; }

private:
    std::vector<std::int64_t> first_;
    std::vector<std::uint32_t> lower_;
    std::vector<std::int64_t> distinct_of_;  // per requested pair: its distinct pair
};

/// This rank's counts, laid out for one reduction: D1 (N), then D2 (one per requested
/// pair), then the number of documents counted.
class CodocTally {
public:
    CodocTally(const std::vector<WordPair>& pairs, Index num_words)
        : pairs_(pairs.size()), distinct_(pairs, num_words), present_(static_cast<std::size_t>(num_words), 0),
          both_(distinct_.size(), 0) {
        d1_.reserve(static_cast<std::size_t>(num_words) + pairs_ + 1);  // room for take_counts: no copy of N there
        d1_.assign(static_cast<std::size_t>(num_words), 0);
    }

    /// Adds one document that passed the filters (its word ids checked).
    void add(const corpus::Document& doc) {
        for (const auto word : doc.words) present_[word] = 1;
        for (const auto word : doc.words) {
            ++d1_[word];
            for (std::int64_t q = distinct_.first(word), end = distinct_.end(word); q < end; ++q)
                both_[static_cast<std::size_t>(q)] += present_[distinct_.lower(q)];
        }
        for (const auto word : doc.words) present_[word] = 0;
        ++num_docs_;
    }

    /// D1, then D2 per requested pair, then the documents counted: the buffer of the
    /// reduction, D1's own storage grown in place (the tally is spent).
    std::vector<std::int64_t> take_counts() {
        std::vector<std::int64_t> out = std::move(d1_);  // its capacity reserved for the rest
        for (std::size_t p = 0; p < pairs_; ++p) out.push_back(both_[static_cast<std::size_t>(distinct_.distinct_of(p))]);
        out.push_back(num_docs_);
        return out;
    }

private:
    std::size_t pairs_;  // requested
    DistinctPairs distinct_;
    std::vector<char> present_;  // the current document's words (all zero between documents)
    std::vector<std::int64_t> d1_, both_;
    std::int64_t num_docs_ = 0;
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
    std::vector<std::int64_t> counts = tally.take_counts();
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
