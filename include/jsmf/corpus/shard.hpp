// SPDX-License-Identifier: MIT
// Documents as bags of words: one document, a stream of them, and an in-memory shard.
#pragma once

#include <cstdint>
#include <vector>

#include "jsmf/core/types.hpp"

namespace jsmf::corpus {

/// Which document: the index of its input file and its 1-based id within that file.
struct DocKey {
    std::int32_t file = 0;
    std::int64_t id = 0;
};

/// One document h_m: distinct word ids (0-based, strictly increasing) and their counts (> 0).
struct Document {
    DocKey key;
    std::vector<std::uint32_t> words;
    std::vector<std::uint32_t> counts;
    /// n_m = Σ_i h_m(i).
    Index tokens() const;
    std::size_t distinct() const { return words.size(); }
    void clear() { words.clear(); counts.clear(); }
};

/// A local, forward-only source of documents (a rank's share of a corpus). `next`
/// throws InputError on bad input; it never communicates.
class DocumentStream {
public:
    virtual ~DocumentStream() = default;
    /// Fills `doc` with the next document; false at the end.
    virtual bool next(Document& doc) = 0;
};

/// Documents in compressed sparse row form (the shard cache's in-memory twin):
/// document m has entries [doc_offsets[m], doc_offsets[m + 1]).
struct Shard {
    std::vector<std::int64_t> doc_offsets{0};
    std::vector<std::uint32_t> words;
    std::vector<std::uint32_t> counts;
    std::vector<DocKey> keys;

    Index num_docs() const { return static_cast<Index>(keys.size()); }
    Index num_entries() const { return static_cast<Index>(words.size()); }
    void append(const Document& doc);
    Document document(Index m) const;
};

/// Streams the documents of a Shard (which must outlive the stream).
class ShardStream : public DocumentStream {
public:
    explicit ShardStream(const Shard& shard) : shard_(shard) {}
    bool next(Document& doc) override;

private:
    const Shard& shard_;
    Index next_ = 0;
};

/// Local. Reads a stream to its end into memory (tests, small corpora).
/// `expected_nonzeros`: room reserved up front (reserved, untouched memory is not resident;
/// grown by doubling, the arrays' resident peak was ~1.75 times their size, and freed
/// blocks are kept for reuse).
Shard read_all(DocumentStream& stream, std::int64_t expected_nonzeros = 0);

}  // namespace jsmf::corpus
