// SPDX-License-Identifier: MIT
// Documents, document streams and in-memory shards.
#include "jsmf/corpus/shard.hpp"

namespace jsmf::corpus {

Index Document::tokens() const {
    Index n = 0;
    for (const auto count : counts) n += count;
    return n;
}

void Shard::append(const Document& doc) {
    words.insert(words.end(), doc.words.begin(), doc.words.end());
    counts.insert(counts.end(), doc.counts.begin(), doc.counts.end());
    doc_offsets.push_back(static_cast<std::int64_t>(words.size()));
    keys.push_back(doc.key);
}

Document Shard::document(Index m) const {
    Document doc;
    doc.key = keys[static_cast<std::size_t>(m)];
    const auto begin = doc_offsets[static_cast<std::size_t>(m)];
    const auto end = doc_offsets[static_cast<std::size_t>(m) + 1];
    doc.words.assign(words.begin() + begin, words.begin() + end);
    doc.counts.assign(counts.begin() + begin, counts.begin() + end);
    return doc;
}

bool ShardStream::next(Document& doc) {
    if (next_ >= shard_.num_docs()) return false;
    doc = shard_.document(next_++);
    return true;
}

Shard read_all(DocumentStream& stream, std::int64_t expected_nonzeros) {
    Shard shard;
    if (expected_nonzeros > 0) {
        shard.words.reserve(static_cast<std::size_t>(expected_nonzeros));
        shard.counts.reserve(static_cast<std::size_t>(expected_nonzeros));
    }
    Document doc;
    while (stream.next(doc)) shard.append(doc);
    return shard;
}

}  // namespace jsmf::corpus
