// SPDX-License-Identifier: MIT
// The UCI reader on good input, on every kind of bad input, and its sharding rule.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <thread>

#include <sys/stat.h>

#include "jsmf/core/error.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "support/temp_dir.hpp"

namespace jsmf::corpus {
namespace {
using test::TempDir;

// Reads all documents of `paths` as rank `rank` of `num_ranks` would.
Shard read_as_rank(const std::vector<std::string>& paths, int rank, int num_ranks, UciReader** keep = nullptr) {
    std::vector<UciFile> files;
    for (const auto& p : paths) files.push_back(inspect_uci_file(p));
    UciReader reader(files, plan_uci_pieces(files, rank, num_ranks));
    return read_all(reader);
}

Shard read_whole(const std::string& path) { return read_as_rank({path}, 0, 1); }

// Expects an InputError whose message contains every fragment.
template <class Body>
void expect_input_error(Body&& body, const std::vector<std::string>& fragments) {
    try {
        body();
        FAIL() << "expected an InputError containing '" << fragments.front() << "'";
    } catch (const InputError& e) {
        for (const auto& fragment : fragments) EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
            << "message: " << e.what() << "\nmissing: " << fragment;
        EXPECT_EQ(e.exit_code(), exit_code::input);
    }
}

const char* kGood =
    "3\n4\n5\n"
    "1 1 2\n"
    "1 3 1\n"
    "2 2 4\n"
    "3 4 1\n"
    "3 1 1\n";

TEST(UciReader, ReadsDocumentsWithSortedWordsAndCounts) {
    TempDir dir;
    test::write_text(dir.file("d.txt"), kGood);
    const Shard shard = read_whole(dir.file("d.txt"));
    ASSERT_EQ(shard.num_docs(), 3);
    EXPECT_EQ(shard.document(0).words, (std::vector<std::uint32_t>{0, 2}));
    EXPECT_EQ(shard.document(0).counts, (std::vector<std::uint32_t>{2, 1}));
    EXPECT_EQ(shard.document(1).words, (std::vector<std::uint32_t>{1}));
    EXPECT_EQ(shard.document(1).counts, (std::vector<std::uint32_t>{4}));
    // Lines of a document may come in any word order; the reader sorts them.
    EXPECT_EQ(shard.document(2).words, (std::vector<std::uint32_t>{0, 3}));
    EXPECT_EQ(shard.document(2).key.id, 3);
}

TEST(UciReader, GzipCrlfAndBlankLinesReadTheSame) {
    TempDir dir;
    std::string crlf;
    for (const char c : std::string(kGood)) {
        if (c == '\n') crlf += "\r\n";
        else crlf += c;
    }
    test::write_text(dir.file("plain.txt"), kGood);
    test::write_gzip(dir.file("zipped.gz"), std::string(kGood) + "\n\n");
    test::write_text(dir.file("crlf.txt"), crlf);
    const Shard plain = read_whole(dir.file("plain.txt"));
    for (const auto* name : {"zipped.gz", "crlf.txt"}) {
        const Shard other = read_whole(dir.file(name));
        EXPECT_EQ(other.words, plain.words) << name;
        EXPECT_EQ(other.counts, plain.counts) << name;
        EXPECT_EQ(other.doc_offsets, plain.doc_offsets) << name;
    }
}

struct BadCase {
    const char* name;
    std::string text;
    std::vector<std::string> fragments;
};

TEST(UciReader, RejectsEachKindOfBadLineWithFileAndLine) {
    const std::vector<BadCase> cases = {
        {"doc id too large", "2\n4\n2\n1 1 1\n3 2 1\n", {"bad.txt:5:", "docID 3 is outside [1, D = 2]"}},
        {"word id too large", "2\n4\n2\n1 1 1\n1 5 1\n", {"bad.txt:5:", "wordID 5 is outside [1, W = 4]"}},
        {"word id zero", "2\n4\n1\n1 0 1\n", {"bad.txt:4:", "wordID 0"}},
        {"zero count", "2\n4\n2\n1 1 1\n2 2 0\n", {"bad.txt:5:", "count must be positive, found 0"}},
        {"negative count", "2\n4\n1\n1 1 -3\n", {"bad.txt:4:", "count must be positive, found -3"}},
        {"non-numeric", "2\n4\n2\n1 1 1\n2 x 1\n", {"bad.txt:5:", "wordID is not an integer: 'x'"}},
        {"missing field", "2\n4\n2\n1 1 1\n2 2\n", {"bad.txt:5:", "expected 3 fields", "found 2"}},
        {"extra field", "2\n4\n1\n1 1 1 7\n", {"bad.txt:4:", "expected 3 fields", "found 4"}},
        {"duplicate pair", "2\n4\n3\n1 1 1\n1 2 1\n1 1 2\n", {"bad.txt:6:", "duplicate (docID, wordID) pair (1, 1)"}},
        {"not contiguous", "3\n4\n3\n1 1 1\n2 2 1\n1 3 1\n", {"bad.txt:6:", "document 1 appears again"}},
        {"header not a number", "2\nfour\n1\n1 1 1\n", {"bad.txt:2:", "header line 2"}},
        {"header too short", "2\n4\n", {"bad.txt", "ends inside the 3-line header"}},
        {"zero vocabulary", "2\n0\n0\n", {"bad.txt:2:", "at least 1"}},
        {"more documents than jsmf's limit", "8589934593\n4\n1\n1 1 1\n", {"bad.txt:1:", "exceeds jsmf's limit of 2^33"}},
        {"count past 32 bits", "2\n4\n1\n1 1 4294967296\n", {"bad.txt:4:", "count"}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        TempDir dir;
        const std::string path = dir.file("bad.txt");
        test::write_text(path, c.text);
        expect_input_error([&] { read_whole(path); }, c.fragments);
        // The same input gzip-compressed gives the same file:line.
        const std::string zipped = dir.file("bad.txt.gz");
        test::write_gzip(zipped, c.text);
        std::vector<std::string> zipped_fragments = c.fragments;
        zipped_fragments[0].replace(0, 7, "bad.txt.gz");
        expect_input_error([&] { read_whole(zipped); }, zipped_fragments);
    }
}

TEST(UciReader, ReportsTruncatedAndCorruptGzip) {
    TempDir dir;
    std::string text = "400\n50\n4000\n";
    std::mt19937_64 engine(3);
    for (int d = 1; d <= 400; ++d)
        for (int w = 1; w <= 10; ++w) text += std::to_string(d) + " " + std::to_string(w * 5 - int(engine() % 5)) + " 1\n";
    test::write_gzip(dir.file("full.gz"), text);
    const std::string bytes = test::read_bytes(dir.file("full.gz"));
    test::write_text(dir.file("truncated.gz"), bytes.substr(0, bytes.size() * 2 / 3));
    expect_input_error([&] { read_whole(dir.file("truncated.gz")); }, {"truncated.gz", "corrupt or truncated gzip"});
    std::string corrupt = bytes;
    for (std::size_t k = corrupt.size() / 3; k < corrupt.size() / 3 + 64; ++k) corrupt[k] = static_cast<char>(corrupt[k] ^ 0x5a);
    test::write_text(dir.file("corrupt.gz"), corrupt);
    expect_input_error([&] { read_whole(dir.file("corrupt.gz")); }, {"corrupt.gz", "gzip"});
}

TEST(UciReader, MissingFileIsAnInputError) {
    expect_input_error([] { inspect_uci_file("/nonexistent/docword.x.txt"); }, {"/nonexistent/docword.x.txt", "cannot open"});
}

TEST(Vocab, ChecksSizeAndEmptyWords) {
    TempDir dir;
    test::write_text(dir.file("v.txt"), "alpha\nbeta\r\ngamma\n");
    EXPECT_EQ(read_vocab(dir.file("v.txt"), 3), (std::vector<std::string>{"alpha", "beta", "gamma"}));
    expect_input_error([&] { read_vocab(dir.file("v.txt"), 4); }, {"v.txt", "has 3 words", "W = 4"});
    test::write_text(dir.file("hole.txt"), "alpha\n\ngamma\n");
    expect_input_error([&] { read_vocab(dir.file("hole.txt"), 3); }, {"hole.txt:2:", "empty word"});
}

// The first repeat in the file's order is named, with the word's first line: "b" repeats
// on line 4 before "a" does on line 6 (and "b" again on 5); sorted, "a" comes first.
TEST(Vocab, NamesTheFirstRepeatedWord) {
    TempDir dir;
    test::write_text(dir.file("v.txt"), "a\nb\nc\nb\nb\na\n");
    expect_input_error([&] { read_vocab(dir.file("v.txt"), 6); }, {"v.txt:4:", "'b' is already line 2"});
    test::write_text(dir.file("w.txt"), "x\ny\nz\nx\n");
    expect_input_error([&] { read_vocab(dir.file("w.txt"), -1); }, {"w.txt:4:", "'x' is already line 1"});
    // A repeat is named before the other errors, as when each line was checked as it was
    // read: before a count that differs from the header's, and before a later empty word.
    expect_input_error([&] { read_vocab(dir.file("w.txt"), 5); }, {"w.txt:4:", "'x' is already line 1"});
    test::write_text(dir.file("hole.txt"), "a\na\n\nb\n");
    expect_input_error([&] { read_vocab(dir.file("hole.txt"), 3); }, {"hole.txt:2:", "'a' is already line 1"});
    // A header that declares far more words than the file holds costs no memory: refused by count.
    test::write_text(dir.file("ok.txt"), "p\nq\n");
    expect_input_error([&] { read_vocab(dir.file("ok.txt"), Index{1} << 40); }, {"ok.txt", "has 2 words"});
}

// A vocabulary through a pipe (no size to reserve by, no seeking): read as a file is.
TEST(Vocab, ReadsFromAFifo) {
    TempDir dir;
    const std::string fifo = dir.file("v.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] { test::write_text(fifo, "alpha\nbeta\n"); });
    const std::vector<std::string> words = read_vocab(fifo, 2);
    writer.join();
    EXPECT_EQ(words, (std::vector<std::string>{"alpha", "beta"}));
}

// A random corpus in UCI text, with long and one-line documents and empty documents.
std::string random_uci(std::mt19937_64& engine, int num_docs, int num_words, std::map<int, std::map<int, int>>& truth) {
    std::string body;
    int nnz = 0;
    for (int d = 1; d <= num_docs; ++d) {
        const int kind = static_cast<int>(engine() % 10);
        const int distinct = kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? num_words : 1 + static_cast<int>(engine() % 12);
        std::set<int> words;
        while (static_cast<int>(words.size()) < distinct) words.insert(1 + static_cast<int>(engine() % num_words));
        std::vector<int> order(words.begin(), words.end());
        std::shuffle(order.begin(), order.end(), engine);
        for (const int w : order) {
            const int count = 1 + static_cast<int>(engine() % 4);
            truth[d][w] = count;
            body += std::to_string(d) + " " + std::to_string(w) + " " + std::to_string(count) + "\n";
            ++nnz;
        }
    }
    return std::to_string(num_docs) + "\n" + std::to_string(num_words) + "\n" + std::to_string(nnz) + "\n" + body;
}

TEST(UciSharding, EveryDocumentOnExactlyOneRankWhole) {
    TempDir dir;
    std::mt19937_64 engine(11);
    std::map<int, std::map<int, int>> truth;
    const std::string text = random_uci(engine, 97, 30, truth);
    test::write_text(dir.file("c.txt"), text);
    test::write_gzip(dir.file("c.gz"), text);
    for (const auto* name : {"c.txt", "c.gz"}) {
        for (int p = 1; p <= 16; ++p) {  // up to pieces smaller than one document
            std::map<int, std::map<int, int>> seen;
            for (int r = 0; r < p; ++r) {
                const Shard shard = read_as_rank({dir.file(name)}, r, p);
                for (Index m = 0; m < shard.num_docs(); ++m) {
                    const Document doc = shard.document(m);
                    ASSERT_EQ(seen.count(static_cast<int>(doc.key.id)), 0u) << name << " p=" << p << " doc " << doc.key.id;
                    for (std::size_t k = 0; k < doc.words.size(); ++k)
                        seen[static_cast<int>(doc.key.id)][static_cast<int>(doc.words[k]) + 1] = static_cast<int>(doc.counts[k]);
                }
            }
            EXPECT_EQ(seen, truth) << name << " p=" << p;
        }
    }
}

TEST(UciSharding, OneHugeDocumentStaysWhole) {
    TempDir dir;
    std::string text = "1\n500\n500\n";
    for (int w = 1; w <= 500; ++w) text += "1 " + std::to_string(w) + " 1\n";
    test::write_text(dir.file("one.txt"), text);
    for (int p = 1; p <= 4; ++p) {
        Index docs = 0, entries = 0;
        for (int r = 0; r < p; ++r) {
            const Shard shard = read_as_rank({dir.file("one.txt")}, r, p);
            docs += shard.num_docs();
            entries += shard.num_entries();
        }
        EXPECT_EQ(docs, 1) << "p=" << p;
        EXPECT_EQ(entries, 500) << "p=" << p;
    }
}

TEST(UciSharding, SeveralFilesAreDealtOutWhole) {
    TempDir dir;
    std::mt19937_64 engine(5);
    std::vector<std::string> paths;
    Index total_entries = 0;
    for (int f = 0; f < 5; ++f) {
        std::map<int, std::map<int, int>> truth;
        paths.push_back(dir.file("part" + std::to_string(f) + ".txt"));
        test::write_text(paths.back(), random_uci(engine, 10 + 7 * f, 20, truth));
        for (const auto& [d, words] : truth) total_entries += static_cast<Index>(words.size());
    }
    for (int p = 1; p <= 7; ++p) {
        Index entries = 0;
        std::set<std::pair<int, std::int64_t>> keys;
        for (int r = 0; r < p; ++r) {
            const Shard shard = read_as_rank(paths, r, p);
            entries += shard.num_entries();
            for (const auto& key : shard.keys) EXPECT_TRUE(keys.insert({key.file, key.id}).second);
        }
        EXPECT_EQ(entries, total_entries) << "p=" << p;
    }
    // With at least as many files as ranks, each file goes to exactly one rank.
    std::vector<UciFile> files;
    for (const auto& path : paths) files.push_back(inspect_uci_file(path));
    std::vector<int> owners(files.size(), 0);
    for (int r = 0; r < 3; ++r)
        for (const auto& piece : plan_uci_pieces(files, r, 3)) {
            EXPECT_TRUE(piece.from_start && piece.to_end);
            ++owners[static_cast<std::size_t>(piece.file)];
        }
    for (const int count : owners) EXPECT_EQ(count, 1);
}

}  // namespace
}  // namespace jsmf::corpus
