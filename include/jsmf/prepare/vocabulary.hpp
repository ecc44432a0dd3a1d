// SPDX-License-Identifier: MIT
// Vocabulary curation: word counts split across ranks by hash, and the authors' tf-idf pruning.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "jsmf/mpi/comm.hpp"

namespace jsmf::prepare {

/// A word's total count (tf, over the corpus) and its document frequency (df).
struct WordCount {
    std::uint64_t tf = 0;
    std::uint64_t df = 0;
};
using CountTable = std::unordered_map<std::string, WordCount>;

struct CurationOptions {
    std::uint64_t min_df = 2;       ///< words in fewer documents are dropped
    double max_df_fraction = 1.0;   ///< words in more than this fraction of the documents are dropped
    std::uint64_t max_words = 5000; ///< keep the top words by tf-idf (0: all that pass the df filters)
};

/// Local. The authors' tf-idf (moontae/JSMF, codes/+file/readBows.m): tf(w) ln(floor(D / df(w))),
/// with tf the word's count over the whole corpus and D the documents with at least one
/// token left after stop-word removal. The floor makes every word in more than half of
/// the documents score 0: it is kept only when fewer words than max_words score above 0.
double tfidf_score(std::uint64_t tf, std::uint64_t df, std::uint64_t num_docs);

/// One word that passed the df filters, with its score.
struct Candidate {
    std::string word;
    double score = 0;
    std::uint64_t tf = 0;
    std::uint64_t df = 0;
    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) { ar & word & score & tf & df; }
};

/// Local. The order of the vocabulary: score descending, then the word (bytes) ascending —
/// the authors' stable sort over an alphabetical vocabulary.
bool ranks_before(const Candidate& a, const Candidate& b);

/// Local. The words of `table` that pass the df filters, best `max_words` first (all when 0).
std::vector<Candidate> best_candidates(const CountTable& table, std::uint64_t num_docs, const CurationOptions& options);

/// Collective on `comm`. Words are owned by rank fnv1a(word) mod p; each rank adds its
/// documents' counts to an outgoing buffer and, when the ranks agree to (every rank's
/// buffer, or the input, is done), exchange() sends each word's partial counts to its
/// owner (Boost.MPI all_to_all of serialized tables). Memory per rank: the outgoing buffer
/// (bounded by the caller's flush rule) plus the distinct words it owns (about 1/p of the
/// corpus's distinct words).
class DistributedCounts {
public:
    explicit DistributedCounts(const mpi::Comm& comm);
    /// Local. Adds one document of (item, repeats) pairs (an item may come more than once).
    void add_items(const std::vector<std::pair<std::string, std::uint32_t>>& items);
    /// Bytes the outgoing buffer holds (an estimate: key bytes + 64 per entry).
    std::size_t buffered_bytes() const { return buffered_bytes_; }
    /// Collective. Sends the buffered counts to their owners and clears the buffer.
    void exchange();
    /// The counts of the words this rank owns (complete after the last exchange).
    const CountTable& owned() const { return owned_; }
    /// Local. The owner of `word` among `num_ranks`.
    static int owner(const std::string& word, int num_ranks);

private:
    const mpi::Comm& comm_;
    std::vector<CountTable> outgoing_;  // per owner
    CountTable owned_;
    std::size_t buffered_bytes_ = 0;
    std::unordered_map<std::string, std::uint64_t> scratch_;  // 64-bit: pass 2 refuses a count past 2^32 - 1 with its document
};

/// Collective on `comm`. Every rank's best candidates gathered to rank 0, which keeps the
/// best `max_words` (ranks_before) and broadcasts them: the vocabulary in that order.
std::vector<Candidate> choose_vocabulary(const mpi::Comm& comm, const CountTable& owned, std::uint64_t num_docs,
                                         const CurationOptions& options);

}  // namespace jsmf::prepare
