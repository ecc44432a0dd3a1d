// SPDX-License-Identifier: MIT
// The vocabulary: one word per line, line i names word id i (1-based in the file).
#pragma once

#include <string>
#include <vector>

#include "jsmf/core/types.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::corpus {

/// Local. Reads a vocabulary file (UCI vocab.X.txt: one word per line, CRLF tolerated,
/// a trailing newline optional). Throws InputError on a word given twice (file:line of
/// the first repeat, naming the word's first line; reported before any other error), on
/// an empty word (file:line), or when `expected_size` >= 0 and the number of words differs
/// from it. Reads from pipes and FIFOs too.
std::vector<std::string> read_vocab(const std::string& path, Index expected_size = -1);

/// Collective on `comm`. Rank 0 reads and checks the file (one message on failure),
/// then broadcasts it (Boost.Serialization). Memory: the vocabulary on every rank.
std::vector<std::string> load_vocab(const mpi::Comm& comm, const std::string& path, Index expected_size);

/// Local. Reads an anchor-word file (fit --anchor-words): one vocabulary word per line,
/// surrounding blanks trimmed, blank lines and lines starting with '#' skipped. Returns
/// the words' 0-based ids in file order. Throws InputError (file:line) for a word not in
/// `vocab` or listed twice, and when fewer than 2 words are given.
std::vector<Index> read_anchor_words(const std::string& path, const std::vector<std::string>& vocab);

/// Local. Writes one word per line.
void write_vocab(const std::string& path, const std::vector<std::string>& words);

}  // namespace jsmf::corpus
