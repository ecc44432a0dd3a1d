// SPDX-License-Identifier: MIT
// Reading, checking, broadcasting and writing vocabularies.
#include "jsmf/corpus/vocab.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "jsmf/core/error.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::corpus {

namespace {
// A word twice makes names ambiguous (infer maps by name). Names the first repeat in the
// file's order, as a reader that remembered every word would: of each word's lines, the
// second, the earliest of them. Ids sorted by (word, line): 4 bytes a word, where a hash
// map of the words took about 70 bytes a word, the largest part of the read's peak at
// N = 10⁶. Called on the lines read so far before any other error is reported, so that a
// repeat is named first, as when each line was checked as it was read.
void check_each_word_once(const std::string& path, const std::vector<std::string>& words) {
    if (words.size() > std::numeric_limits<std::uint32_t>::max())
        throw InputError(path, "more than 2^32 − 1 words: jsmf's word ids are 32-bit");
    std::vector<std::uint32_t> order(words.size());
    std::iota(order.begin(), order.end(), 0U);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const int c = words[a].compare(words[b]);
        return c < 0 || (c == 0 && a < b);
    });
    std::optional<std::pair<std::uint32_t, std::uint32_t>> repeat;  // (first, second) line index
    for (std::size_t k = 1; k < order.size(); ++k) {
        if (words[order[k]] != words[order[k - 1]]) continue;
        if (k >= 2 && words[order[k - 2]] == words[order[k]]) continue;  // a third line or later
        if (!repeat || order[k] < repeat->second) repeat = std::pair{order[k - 1], order[k]};
    }
    if (repeat)
        throw InputError(path + ":" + std::to_string(repeat->second + 1),
                         "the word '" + words[repeat->second] + "' is already line " + std::to_string(repeat->first + 1) +
                             ": a vocabulary names each word once");
}

// The file's size in bytes, 0 where it has none (a pipe, a FIFO).
Index size_of_file(const std::string& path) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) return 0;
    const auto bytes = std::filesystem::file_size(path, error);
    return error ? 0 : static_cast<Index>(bytes);
}
}  // namespace

std::vector<std::string> read_vocab(const std::string& path, Index expected_size) {
    std::ifstream in(path);
    if (!in) throw InputError(path, std::string("cannot open vocabulary: ") + std::strerror(errno));
    // Room for the words the header declares, up to one a two bytes of the file (a header
    // may declare any W; a pipe's size is unknown): grown by doubling, the array peaked at
    // three times its size.
    std::vector<std::string> words;
    if (const Index most = size_of_file(path) / 2 + 1; expected_size > 0)
        words.reserve(static_cast<std::size_t>(std::min(expected_size, most)));
    std::string line;
    Index line_number = 0;
    while (std::getline(in, line)) {
        ++line_number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) {
            // A blank last line is only a trailing newline; a blank word elsewhere is an error.
            if (in.peek() == std::ifstream::traits_type::eof()) break;
            check_each_word_once(path, words);
            throw InputError(path + ":" + std::to_string(line_number), "empty word in vocabulary");
        }
        words.push_back(line);
    }
    check_each_word_once(path, words);
    if (in.bad()) throw InputError(path, "read error");
    if (expected_size >= 0 && static_cast<Index>(words.size()) != expected_size) {
        throw InputError(path, "vocabulary has " + std::to_string(words.size()) +
                                   " words but the corpus header declares W = " + std::to_string(expected_size));
    }
    return words;
}

std::vector<std::string> load_vocab(const mpi::Comm& comm, const std::string& path, Index expected_size) {
    std::vector<std::string> words;
    mpi::check_on_root(comm, "read", [&] { words = read_vocab(path, expected_size); });
    mpi::broadcast(comm, words, 0);
    return words;
}

std::vector<Index> read_anchor_words(const std::string& path, const std::vector<std::string>& vocab) {
    std::ifstream in(path);
    if (!in) throw InputError(path, std::string("cannot open the anchor-word file: ") + std::strerror(errno));
    std::unordered_map<std::string, Index> id_of;
    for (std::size_t i = 0; i < vocab.size(); ++i) id_of.emplace(vocab[i], static_cast<Index>(i));
    std::vector<Index> ids;
    std::unordered_map<Index, int> line_of;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#') continue;  // blank or comment
        const std::string word = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
        const auto found = id_of.find(word);
        const std::string where = path + ":" + std::to_string(number);
        if (found == id_of.end()) throw InputError(where, "'" + word + "' is not in the vocabulary");
        if (const auto [at, fresh] = line_of.emplace(found->second, number); !fresh)
            throw InputError(where, "'" + word + "' is listed twice (first on line " + std::to_string(at->second) + ")");
        ids.push_back(found->second);
    }
    if (in.bad()) throw InputError(path, "read error");
    if (ids.size() < 2) throw InputError(path, "needs at least 2 anchor words, found " + std::to_string(ids.size()));
    return ids;
}

void write_vocab(const std::string& path, const std::vector<std::string>& words) {
    std::ofstream out(path);
    if (!out) throw InputError(path, std::string("cannot create: ") + std::strerror(errno));
    for (const auto& word : words) out << word << '\n';
    if (!out) throw InputError(path, "write error");
}

}  // namespace jsmf::corpus
