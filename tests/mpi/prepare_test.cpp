// SPDX-License-Identifier: MIT
// jsmf prepare at 1, 2, 3 and 4 ranks on hand-made documents: the files written equal
// answers worked out by hand (so they are the same at every rank count), the counts of
// dropped documents are right, and bad input fails on every rank with file:line and
// leaves no output behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "jsmf/prepare/prepare.hpp"
#include "test_support.hpp"

namespace jsmf::prepare {
namespace {

PrepareOptions base_options(const std::string& out, Format format) {
    PrepareOptions o;
    o.source.format = format;
    o.out_dir = out;
    o.name = "t";
    o.curation.min_df = 1;
    o.curation.max_df_fraction = 1;
    o.curation.max_words = 0;
    o.min_doc_tokens = 2;
    o.buffer_mb = 1e-4;  // about 100 bytes: an exchange every few documents
    return o;
}

std::string text_of(const std::string& path) { return test::read_bytes(path); }

/// Rank 0 writes the hand-made corpus:
///   pets/a.txt   "Cats chase the dogs. Dogs chase cats!"        cats 2, chase 2, dogs 2
///   pets/b.txt   "The cat's toy: dogs, dogs and more DOGS."     cat 1, toy 1, dogs 3
///   money/c.txt  "Stocks fall; stocks rise. Café prices rise 5%."  stocks 2, rise 2, café, fall, prices
///   money/d.txt  ""                        (empty)
///   money/e.txt  invalid UTF-8             (skipped)
///   money/f.txt  "Rise!"                   rise 1 (shorter than 2 tokens)
///   .hidden/x.txt                          (not read)
void write_text_tree(const mpi::Comm& world, const std::string& root) {
    if (world.is_root()) {
        namespace fs = std::filesystem;
        for (const char* d : {"pets", "money", ".hidden"}) fs::create_directories(root + "/" + d);
        test::write_text(root + "/pets/a.txt", "Cats chase the dogs. Dogs chase cats!");
        test::write_text(root + "/pets/b.txt", "The cat's toy: dogs, dogs and more DOGS.");
        test::write_text(root + "/money/c.txt", "Stocks fall; stocks rise. Caf\xc3\xa9 prices rise 5%.");
        test::write_text(root + "/money/d.txt", "");
        test::write_text(root + "/money/e.txt", "Bad \xff bytes stocks stocks");
        test::write_text(root + "/money/f.txt", "Rise!");
        test::write_text(root + "/.hidden/x.txt", "stocks stocks stocks");
    }
    MPI_Barrier(world.raw());
}

TEST(Prepare, TextTreeWorkedByHand) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    write_text_tree(world, dir.file("in"));
    PrepareOptions o = base_options(dir.file("out"), Format::text_dir);
    o.source.inputs = {dir.file("in")};
    o.source.label_from_dir = true;
    const PrepareReport r = run_prepare(world, o);
    // D = 4 non-empty documents (a, b, c, f). Scores tf ln(floor(4 / df)): dogs 5 ln 2 = 3.47;
    // cats, chase, stocks 2 ln 4 = 2.77; rise 3 ln 2 = 2.08; café, cat, fall, prices, toy ln 4.
    EXPECT_EQ(r.docs_read, 6);
    EXPECT_EQ(r.docs_invalid_utf8, 1);
    EXPECT_EQ(r.docs_empty, 1);
    EXPECT_EQ(r.docs_short, 1);
    EXPECT_EQ(r.docs_kept, 3);
    EXPECT_EQ(r.tokens_read, 7 + 8 + 7 + 0 + 1);  // before stop words ("5" is no token)
    EXPECT_EQ(r.tokens_kept, 7 + 6 + 5);
    EXPECT_EQ(r.distinct_words, 10);
    EXPECT_EQ(r.vocabulary, 10);
    EXPECT_EQ(r.labels, 2);
    if (world.is_root()) {
        EXPECT_EQ(text_of(vocab_path(o.out_dir, "t")),
                  "dogs\ncats\nchase\nstocks\nrise\ncaf\xc3\xa9\ncat\nfall\nprices\ntoy\n");
        EXPECT_EQ(text_of(docword_path(o.out_dir, "t", false)),
                  "3\n10\n11\n"
                  "1 4 2\n1 5 2\n1 6 1\n1 8 1\n1 9 1\n"  // money/c.txt
                  "2 1 2\n2 2 2\n2 3 2\n"                // pets/a.txt
                  "3 1 3\n3 7 1\n3 10 1\n");             // pets/b.txt
        EXPECT_EQ(text_of(doc_ids_path(o.out_dir, "t")), "money/c.txt\npets/a.txt\npets/b.txt\n");
        EXPECT_EQ(text_of(labels_path(o.out_dir, "t")), "1\n2\n2\n");
        EXPECT_EQ(text_of(label_names_path(o.out_dir, "t")), "money\npets\n");
        const PreparedCorpus found = find_prepared(o.out_dir, "");
        EXPECT_EQ(found.docword, docword_path(o.out_dir, "t", false));
        EXPECT_EQ(found.labels, labels_path(o.out_dir, "t"));
        // no temporary file is left
        for (const auto& entry : std::filesystem::directory_iterator(o.out_dir))
            EXPECT_EQ(entry.path().filename().string().find(".partial"), std::string::npos) << entry.path();
        EXPECT_EQ(std::distance(std::filesystem::directory_iterator(o.out_dir), std::filesystem::directory_iterator()), 6);
    }
}

TEST(Prepare, PruningWorkedByHand) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    write_text_tree(world, dir.file("in"));
    PrepareOptions o = base_options(dir.file("out"), Format::text_dir);
    o.source.inputs = {dir.file("in")};
    // max_df 0.25 of D = 4: words in 2 documents (dogs, rise) go; then the best 4 of
    // cats, chase, stocks (2.77) and café, cat, fall, prices, toy (1.39, ties by bytes).
    o.curation.max_df_fraction = 0.25;
    o.curation.max_words = 4;
    const PrepareReport r = run_prepare(world, o);
    EXPECT_EQ(r.words_passing_df, 8);
    EXPECT_EQ(r.vocabulary, 4);
    EXPECT_EQ(r.labels, 0);
    // c: stocks 2, café 1 -> kept; a: cats 2, chase 2 -> kept; b: nothing left -> short; f: short.
    EXPECT_EQ(r.docs_short, 2);
    EXPECT_EQ(r.docs_kept, 2);
    if (world.is_root()) {
        EXPECT_EQ(text_of(vocab_path(o.out_dir, "t")), "cats\nchase\nstocks\ncaf\xc3\xa9\n");
        EXPECT_EQ(text_of(docword_path(o.out_dir, "t", false)), "2\n4\n4\n1 3 2\n1 4 1\n2 1 2\n2 2 2\n");
        EXPECT_FALSE(std::filesystem::exists(labels_path(o.out_dir, "t")));
    }
    // gzip: the same text
    o.gzip = true;
    run_prepare(world, o);
    if (world.is_root()) {
        gzFile in = gzopen(docword_path(o.out_dir, "t", true).c_str(), "rb");
        ASSERT_NE(in, nullptr);
        std::string text(4096, '\0');
        text.resize(static_cast<std::size_t>(gzread(in, text.data(), static_cast<unsigned>(text.size()))));
        gzclose(in);
        EXPECT_EQ(text, "2\n4\n4\n1 3 2\n1 4 1\n2 1 2\n2 2 2\n");
    }
}

TEST(Prepare, RatingsWorkedByHand) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    if (world.is_root()) {
        // user 1: 10 x 8, 20 x 5; user 2: 10 x 10 (30: round(0.4) = 0, gone); user 3: 20 x 6, 10 x 2.
        test::write_text(dir.file("r.dat"), "1::10::4::0\n1::20::2.5::0\n2::10::5::0\n2::30::0.2::0\n3::20::3::0\n3::10::1::0\n");
        test::write_text(dir.file("items.dat"), "10::Toy Story (1995)::Animation\n20::Heat (1995)::Action\n");
    }
    MPI_Barrier(world.raw());
    PrepareOptions o = base_options(dir.file("out"), Format::ratings);
    o.source.inputs = {dir.file("r.dat")};
    o.items_file = dir.file("items.dat");
    o.min_doc_tokens = 1;
    const PrepareReport r = run_prepare(world, o);
    EXPECT_EQ(r.docs_kept, 3);
    EXPECT_EQ(r.tokens_read, 8 + 5 + 10 + 6 + 2);
    if (world.is_root()) {
        // Both items score 0 (df > D / 2): ties by id bytes, "10" before "20".
        EXPECT_EQ(text_of(vocab_path(o.out_dir, "t")), "Toy Story (1995)\nHeat (1995)\n");
        EXPECT_EQ(text_of(docword_path(o.out_dir, "t", false)), "3\n2\n5\n1 1 8\n1 2 5\n2 1 10\n3 1 2\n3 2 6\n");
        EXPECT_EQ(text_of(doc_ids_path(o.out_dir, "t")), "1\n2\n3\n");
    }
    // MovieLens CSV with its header line gives the same documents.
    if (world.is_root()) {
        test::write_text(dir.file("r.csv"), "userId,movieId,rating,timestamp\n1,10,4.0,0\n1,20,2.5,0\n2,10,5,0\n2,30,0.2,0\n3,20,3,0\n3,10,1,0\n");
    }
    MPI_Barrier(world.raw());
    o.source.inputs = {dir.file("r.csv")};
    o.name = "csv";
    run_prepare(world, o);
    if (world.is_root()) {
        EXPECT_EQ(text_of(docword_path(o.out_dir, "csv", false)), "3\n2\n5\n1 1 8\n1 2 5\n2 1 10\n3 1 2\n3 2 6\n");
    }
}

// A user's lines anywhere (MovieLens' u.data is in time order, not by user), in two files:
// the same corpus as the input grouped by user in order of each user's first line, with
// each user's items in input order, at every rank count.
TEST(Prepare, RatingsOfScatteredUsersAreGathered) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    if (world.is_root()) {
        std::mt19937 random(11);
        std::vector<std::pair<int, int>> lines;  // (user, item), in input order
        for (int k = 0; k < 400; ++k) lines.emplace_back(1 + static_cast<int>(random() % 37), 1 + static_cast<int>(random() % 23));
        std::vector<int> users;  // in order of first appearance
        for (const auto& [user, item] : lines)
            if (std::find(users.begin(), users.end(), user) == users.end()) users.push_back(user);
        std::string scattered_a, scattered_b, grouped;
        for (std::size_t k = 0; k < lines.size(); ++k) {
            const std::string line = std::to_string(lines[k].first) + "\t" + std::to_string(lines[k].second) + "\t" +
                                     std::to_string(1 + k % 5) + "\t88125" + std::to_string(k) + "\n";
            (k < 250 ? scattered_a : scattered_b) += line;
        }
        for (const int user : users)
            for (std::size_t k = 0; k < lines.size(); ++k)
                if (lines[k].first == user)
                    grouped += std::to_string(user) + "\t" + std::to_string(lines[k].second) + "\t" +
                               std::to_string(1 + k % 5) + "\t88125" + std::to_string(k) + "\n";
        test::write_text(dir.file("a.data"), scattered_a);
        test::write_text(dir.file("b.data"), scattered_b);
        test::write_text(dir.file("grouped.data"), grouped);
    }
    MPI_Barrier(world.raw());
    PrepareOptions o = base_options(dir.file("out"), Format::ratings);
    o.min_doc_tokens = 1;
    o.curation.min_df = 1;
    o.source.inputs = {dir.file("a.data"), dir.file("b.data")};
    o.name = "scattered";
    const PrepareReport scattered = run_prepare(world, o);
    o.source.inputs = {dir.file("grouped.data")};
    o.name = "grouped";
    const PrepareReport grouped = run_prepare(world, o);
    EXPECT_EQ(scattered.docs_kept, 37);
    EXPECT_EQ(scattered.docs_kept, grouped.docs_kept);
    EXPECT_EQ(scattered.tokens_read, grouped.tokens_read);
    if (world.is_root()) {
        EXPECT_EQ(text_of(docword_path(o.out_dir, "scattered", false)), text_of(docword_path(o.out_dir, "grouped", false)));
        EXPECT_EQ(text_of(doc_ids_path(o.out_dir, "scattered")), text_of(doc_ids_path(o.out_dir, "grouped")));
        EXPECT_EQ(text_of(vocab_path(o.out_dir, "scattered")), text_of(vocab_path(o.out_dir, "grouped")));
    }
}

TEST(Prepare, PlaylistsWorkedByHand) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    if (world.is_root()) test::write_text(dir.file("p.txt"), "# songs\n1 2 3\n\n2,2 4\n5\n");
    MPI_Barrier(world.raw());
    PrepareOptions o = base_options(dir.file("out"), Format::playlists);
    o.source.inputs = {dir.file("p.txt")};
    o.min_doc_tokens = 1;
    const PrepareReport r = run_prepare(world, o);
    EXPECT_EQ(r.docs_kept, 3);
    if (world.is_root()) {
        // D = 3: items 1, 3, 4, 5 score ln 3; item 2 (df 2) scores 0.
        EXPECT_EQ(text_of(vocab_path(o.out_dir, "t")), "1\n3\n4\n5\n2\n");
        EXPECT_EQ(text_of(docword_path(o.out_dir, "t", false)), "3\n5\n6\n1 1 1\n1 2 1\n1 5 1\n2 3 1\n2 5 2\n3 4 1\n");
        EXPECT_EQ(text_of(doc_ids_path(o.out_dir, "t")), "2\n4\n5\n");  // line numbers
    }
}

TEST(Prepare, JsonLinesAndLines) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    if (world.is_root()) {
        test::write_text(dir.file("d.jsonl"),
                         "{\"text\": \"Cats like cats\", \"id\": \"d1\", \"label\": \"pets\"}\n"
                         "\n"
                         "{\"text\": \"Dogs chase cats\", \"id\": 7, \"label\": \"pets\"}\n"
                         "{\"text\": \"Stocks fall stocks\", \"id\": \"d3\", \"label\": \"money\"}\n");
        test::write_text(dir.file("d.txt"), "Cats like cats\r\n\r\nDogs chase cats\nStocks fall stocks");
    }
    MPI_Barrier(world.raw());
    PrepareOptions o = base_options(dir.file("out"), Format::jsonl);
    o.source.inputs = {dir.file("d.jsonl")};
    run_prepare(world, o);
    // D = 3: stocks 2 ln 3; chase, dogs, fall, like ln 3; cats 3 ln(floor(3 / 2)) = 0.
    const std::string docword = "3\n6\n7\n1 5 1\n1 6 2\n2 2 1\n2 3 1\n2 6 1\n3 1 2\n3 4 1\n";
    if (world.is_root()) {
        EXPECT_EQ(text_of(vocab_path(o.out_dir, "t")), "stocks\nchase\ndogs\nfall\nlike\ncats\n");
        EXPECT_EQ(text_of(doc_ids_path(o.out_dir, "t")), "d1\n7\nd3\n");
        EXPECT_EQ(text_of(labels_path(o.out_dir, "t")), "2\n2\n1\n");
    }
    if (world.is_root()) {
        EXPECT_EQ(text_of(docword_path(o.out_dir, "t", false)), docword);
    }
    o.source.format = Format::lines;
    o.source.inputs = {dir.file("d.txt")};
    o.name = "lines";
    run_prepare(world, o);
    if (world.is_root()) {
        EXPECT_EQ(text_of(vocab_path(o.out_dir, "lines")), "stocks\nchase\ndogs\nfall\nlike\ncats\n");
        EXPECT_EQ(text_of(doc_ids_path(o.out_dir, "lines")), "1\n3\n4\n");
        EXPECT_EQ(text_of(docword_path(o.out_dir, "lines", false)), text_of(docword_path(o.out_dir, "t", false)));
    }
}

// MALLET's import lines: the same three documents as JsonLinesAndLines, so the same
// counts; the name is the id, the label the label, split as MALLET's default regex
// ^(\S*)[\s,]*(\S*)[\s,]*(.*)$ (blanks and commas between the fields, a comma inside the
// name or the label kept; the expected splits are what that regex gives in Python's re).
TEST(Prepare, MalletImportLines) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    if (world.is_root())
        test::write_text(dir.file("d.txt"),
                         "d1 pets Cats like cats\n"
                         "\n"
                         "7\tpets ,  Dogs chase cats\r\n"
                         "d3 money Stocks fall stocks\n");
    MPI_Barrier(world.raw());
    PrepareOptions o = base_options(dir.file("out"), Format::mallet);
    o.source.inputs = {dir.file("d.txt")};
    run_prepare(world, o);
    if (world.is_root()) {
        EXPECT_EQ(text_of(vocab_path(o.out_dir, "t")), "stocks\nchase\ndogs\nfall\nlike\ncats\n");
        EXPECT_EQ(text_of(docword_path(o.out_dir, "t", false)), "3\n6\n7\n1 5 1\n1 6 2\n2 2 1\n2 3 1\n2 6 1\n3 1 2\n3 4 1\n");
        EXPECT_EQ(text_of(doc_ids_path(o.out_dir, "t")), "d1\n7\nd3\n");
        EXPECT_EQ(text_of(labels_path(o.out_dir, "t")), "2\n2\n1\n");
    }
    const auto split = [](const std::string& line) {
        const MalletLine m = split_mallet_line(line);
        return m.name + "|" + m.label + "|" + m.text;
    };
    EXPECT_EQ(split("a,b c, d e"), "a,b|c,|d e");  // \S* takes the commas; [\s,]* eats the blank
    EXPECT_EQ(split("only"), "only||");
    EXPECT_EQ(split("n  l"), "n|l|");
    EXPECT_EQ(split("n l   text, with commas  "), "n|l|text, with commas  ");
}

TEST(Prepare, InvalidUtf8Replaced) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    if (world.is_root()) {
        test::write_text(dir.file("d.txt"), "cats dogs\nbad\xff\xfe cats cats\n");
        test::write_text(dir.file("d.jsonl"), "{\"text\": \"cats dogs\"}\n{\"text\": \"bad\xff\xfe cats cats\"}\n");
        // MALLET: the bad bytes in the name too, which must reach the ids file as U+FFFD.
        test::write_text(dir.file("d.mallet"), "one x cats dogs\ntw\xffo x bad\xff\xfe cats cats\n");
    }
    MPI_Barrier(world.raw());
    for (const Format format : {Format::lines, Format::jsonl, Format::mallet}) {
        PrepareOptions o = base_options(dir.file("out"), format);
        o.source.inputs = {dir.file(format == Format::lines ? "d.txt" : format == Format::jsonl ? "d.jsonl" : "d.mallet")};
        o.invalid_utf8 = InvalidUtf8::replace;
        // "bad\ufffd\ufffd" is "bad" and a non-letter: tokens bad, cats, cats.
        const PrepareReport r = run_prepare(world, o);
        EXPECT_EQ(r.docs_invalid_utf8, 1);
        EXPECT_EQ(r.docs_kept, 2);
        EXPECT_EQ(r.tokens_read, 2 + 3);
        if (format == Format::mallet && world.is_root()) {
            EXPECT_EQ(text_of(doc_ids_path(o.out_dir, "t")), "one\ntw\xef\xbf\xbdo\n");  // "tw", U+FFFD, "o"
        }
        o.invalid_utf8 = InvalidUtf8::skip;
        o.min_doc_tokens = 1;
        const PrepareReport skipped = run_prepare(world, o);
        EXPECT_EQ(skipped.docs_invalid_utf8, 1);
        EXPECT_EQ(skipped.docs_kept, 1);
        EXPECT_EQ(skipped.tokens_read, 2);
    }
}

TEST(Prepare, BadInputFailsEverywhereWithFileAndLine) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    if (world.is_root()) {
        test::write_text(dir.file("short.dat"), "1::10::4\n1::20::3\n2::10\n3::10::5\n");
        test::write_text(dir.file("nan.dat"), "1::10::4\n1::20::x\n");
        test::write_text(dir.file("huge.dat"), "1::10::4\n1::20::3000000000\n");
        test::write_text(dir.file("overflow.dat"), "1::10::1500000000\n2::10::1\n1::10::1500000000\n");
        test::write_text(dir.file("bad.txt"), "fine words here\nbroken \xc3( words\n");
        test::write_text(dir.file("twice.jsonl"), "{\"text\": \"alpha beta\", \"id\": \"x\"}\n{\"text\": \"gamma delta\", \"id\": \"x\"}\n");
        test::write_text(dir.file("nojson.jsonl"), "{\"text\": \"a b\"}\n{\"txt\": \"c d\"}\n");
        test::write_text(dir.file("header.dat"), "1,10,x\n2,10,4\n");  // not a CSV header: user 1 is a number
        test::write_text(dir.file("newline.jsonl"), "{\"text\": \"alpha beta\", \"label\": \"a\\nb\"}\n");
        test::write_text(dir.file("half.jsonl"),
                         "{\"text\": \"alpha beta\", \"label\": \"x\"}\n{\"text\": \"gamma delta\", \"id\": \"two\"}\n");
        std::filesystem::create_directories(dir.file("a"));
        std::filesystem::create_directories(dir.file("b"));
        test::write_text(dir.file("a/x.txt"), "alpha beta\n");
        test::write_text(dir.file("b/x.txt"), "gamma delta\n");
    }
    MPI_Barrier(world.raw());
    const std::string out = dir.file("out");
    auto fails = [&](Format format, const std::vector<std::string>& input, const std::vector<std::string>& fragments,
                     InvalidUtf8 policy = InvalidUtf8::skip) {
        PrepareOptions o = base_options(out, format);
        o.source.inputs = input;
        o.invalid_utf8 = policy;
        test::expect_stage_failed(world, [&] { run_prepare(world, o); }, fragments);
        // Each rank removes its own parts as its exception unwinds: look once all have.
        MPI_Barrier(world.raw());
        if (world.is_root()) {
            EXPECT_FALSE(std::filesystem::exists(docword_path(out, "t", false))) << input.front();
        }
        if (world.is_root() && std::filesystem::exists(out))
            for (const auto& entry : std::filesystem::directory_iterator(out)) ADD_FAILURE() << "left behind: " << entry.path();
    };
    fails(Format::ratings, {dir.file("short.dat")}, {"short.dat:3", "found 2 fields"});
    fails(Format::ratings, {dir.file("nan.dat")}, {"nan.dat:2", "'x' is not a number"});
    fails(Format::ratings, {dir.file("huge.dat")}, {"huge.dat:2", "exceeds jsmf's limit of 2^31"});
    fails(Format::ratings, {dir.file("huge.dat"), dir.file("nan.dat"), dir.file("huge.dat")},
          {"huge.dat", "is the same file as", "given twice among the inputs"});
    // A user's two lines apart, each within 32 bits, together past them.
    fails(Format::ratings, {dir.file("overflow.dat")}, {"overflow.dat", "document '1' holds '10' more than 2^32 - 1 times"});
    fails(Format::ratings, {dir.file("header.dat")}, {"header.dat:1", "'x' is not a number"});
    fails(Format::lines, {dir.file("bad.txt")}, {"bad.txt:2", "invalid UTF-8 at byte 23"}, InvalidUtf8::fail);
    fails(Format::jsonl, {dir.file("twice.jsonl")}, {"twice.jsonl:2", "document id 'x' again", "twice.jsonl:1"});
    fails(Format::jsonl, {dir.file("nojson.jsonl")}, {"nojson.jsonl:2", "no string field 'text'"});
    fails(Format::jsonl, {dir.file("newline.jsonl")}, {"newline.jsonl:1", "a label may not contain a line break"});
    fails(Format::jsonl, {dir.file("half.jsonl")}, {"1 of 2 kept documents have no label, e.g. 'two'"});
    fails(Format::lines, {dir.file("a/x.txt"), dir.file("b/x.txt")}, {"document id 'x.txt:1' again", "b/x.txt:1"});
    fails(Format::lines, {dir.file("missing.txt")}, {"missing.txt", "no such file"});
}

}  // namespace
}  // namespace jsmf::prepare
