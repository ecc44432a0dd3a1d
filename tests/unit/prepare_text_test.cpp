// SPDX-License-Identifier: MIT
// jsmf prepare's local parts, against hand-worked answers: tokens (ICU segmentation and
// folding), UTF-8 checks, the authors' tf-idf and its pruning, record splitting, the
// byte-range plan.
#include <gtest/gtest.h>

#include <cmath>

#include "jsmf/core/error.hpp"
#include "jsmf/prepare/sources.hpp"
#include "jsmf/prepare/text.hpp"
#include "jsmf/prepare/vocabulary.hpp"
#include "support/temp_dir.hpp"

namespace jsmf::prepare {
namespace {

using Tokens = std::vector<std::string>;

Tokens tokens_of(const std::string& text, TokenizerOptions options = {}) {
    Tokenizer tokenizer(options);
    Tokens out;
    tokenizer.tokenize(text, out);
    return out;
}

TEST(Tokenizer, PunctuationNumbersPossessivesAndShortTokens) {
    EXPECT_EQ(tokens_of("The County's grand-jury said: 1964 was 3.5% worse! (a I x ok)"),
              (Tokens{"the", "county", "grand", "jury", "said", "was", "worse", "ok"}));
    TokenizerOptions numbers;
    numbers.keep_numbers = true;
    EXPECT_EQ(tokens_of("In 1964, 3.5% more", numbers), (Tokens{"in", "1964", "3.5", "more"}));
    EXPECT_EQ(tokens_of("mp3 x2 don't don\u2019t"), (Tokens{"mp3", "x2", "don't", "don't"}));
    TokenizerOptions one;
    one.min_length = 1;
    EXPECT_EQ(tokens_of("a I x", one), (Tokens{"a", "i", "x"}));
    EXPECT_TRUE(tokens_of("  ... --- !!! 42  ").empty());
    EXPECT_TRUE(tokens_of("").empty());
}

TEST(Tokenizer, UnicodeFoldingAccentsAndScripts) {
    // Composed and decomposed é are one word; ß folds to ss; Greek capitals and the final
    // sigma fold to σ; the ﬁ ligature and full-width letters are compatibility forms.
    EXPECT_EQ(tokens_of("Café CAFÉ cafe\u0301 naïve Straße ΣΟΦΌΣ σοφός Москва ﬁle Ｆｕｌｌ"),
              (Tokens{"café", "café", "café", "naïve", "strasse", "σοφόσ", "σοφόσ", "москва", "file", "full"}));
    // Chinese has no spaces: ICU's dictionary cuts it into words (one-character words go
    // with the default min_length 2).
    EXPECT_EQ(tokens_of("我喜欢北京的天气"), (Tokens{"喜欢", "北京", "天气"}));
}

TEST(Utf8, FirstInvalidByte) {
    EXPECT_EQ(first_invalid_utf8("plain ascii"), -1);
    EXPECT_EQ(first_invalid_utf8("café Москва 北京"), -1);
    EXPECT_EQ(first_invalid_utf8("abc\xff"), 3);
    EXPECT_EQ(first_invalid_utf8("ab\xc3"), 2);            // truncated sequence
    EXPECT_EQ(first_invalid_utf8("x\xc0\xaf"), 1);         // overlong '/'
    EXPECT_EQ(first_invalid_utf8("ok \xed\xa0\x80 ok"), 3);  // a UTF-16 surrogate
    EXPECT_EQ(first_invalid_utf8(std::string("a\0b", 3)), -1);
}

TEST(Stopwords, ListAndFile) {
    const auto& english = english_stopwords();
    for (const char* word : {"the", "and", "of", "don't", "themselves", "let", "it"})
        EXPECT_NE(std::find(english.begin(), english.end(), word), english.end()) << word;
    // every listed word survives the tokenizer as itself (else it could never match)
    for (const auto& word : english) EXPECT_EQ(tokens_of(word, TokenizerOptions{false, 1, true}), (Tokens{word})) << word;
    for (const char* word : {"church", "state", "music"})
        EXPECT_EQ(std::find(english.begin(), english.end(), word), english.end()) << word;
    test::TempDir dir;
    test::write_text(dir.file("stop.txt"), "# mine\nFoo\n\n  BAR  # trailing\nStraße\r\n");
    EXPECT_EQ(read_stopwords(dir.file("stop.txt")), (Tokens{"foo", "bar", "strasse"}));
    test::write_text(dir.file("bad.txt"), "ok\nbad\xff\n");
    try {
        read_stopwords(dir.file("bad.txt"));
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("bad.txt:2"), std::string::npos) << e.what();
    }
}

TEST(TfIdf, TheAuthorsFormula) {
    EXPECT_DOUBLE_EQ(tfidf_score(10, 2, 10), 10 * std::log(5.0));
    EXPECT_DOUBLE_EQ(tfidf_score(7, 3, 10), 7 * std::log(3.0));  // floor(10 / 3) = 3
    EXPECT_EQ(tfidf_score(50, 6, 10), 0.0);                      // in more than half of the documents
    EXPECT_EQ(tfidf_score(5, 0, 10), 0.0);
}

TEST(TfIdf, PruningWorkedByHand) {
    // D = 10. a: 10 ln 5 = 16.1; d: 4 ln 5 = 6.44; e: 6 ln 3 = 6.59; b (df 1 < min_df 2)
    // and c (df 6 > 0.5 D) are out. The best two: a, then e (not d).
    CountTable table{{"a", {10, 2}}, {"b", {3, 1}}, {"c", {20, 6}}, {"d", {4, 2}}, {"e", {6, 3}}};
    CurationOptions options;
    options.min_df = 2;
    options.max_df_fraction = 0.5;
    options.max_words = 2;
    auto best = best_candidates(table, 10, options);
    ASSERT_EQ(best.size(), 2u);
    EXPECT_EQ(best[0].word, "a");
    EXPECT_EQ(best[1].word, "e");
    options.max_words = 0;
    best = best_candidates(table, 10, options);
    ASSERT_EQ(best.size(), 3u);
    EXPECT_EQ(best[2].word, "d");
    // Ties: by the word's bytes.
    CountTable ties{{"zeta", {2, 1}}, {"alpha", {2, 1}}, {"café", {2, 1}}, {"cat", {2, 1}}};
    options.min_df = 1;
    options.max_df_fraction = 1;
    best = best_candidates(ties, 4, options);
    ASSERT_EQ(best.size(), 4u);
    EXPECT_EQ((Tokens{best[0].word, best[1].word, best[2].word, best[3].word}), (Tokens{"alpha", "café", "cat", "zeta"}));
}

TEST(Records, Separators) {
    EXPECT_EQ(split_record("1::10::4.5::978300760"), (Tokens{"1", "10", "4.5", "978300760"}));
    EXPECT_EQ(split_record("1\t10\t4"), (Tokens{"1", "10", "4"}));
    EXPECT_EQ(split_record("1, 10 ,4,99"), (Tokens{"1", "10", "4", "99"}));
    EXPECT_EQ(split_record("  1 10   4 "), (Tokens{"1", "10", "4"}));
}

TEST(Plan, EveryByteAndEveryFileOnce) {
    const std::vector<InputFile> files = {{"f0", "f0", "", 10}, {"f1", "f1", "", 0}, {"f2", "f2", "", 25}, {"f3", "f3", "", 5}};
    for (int p = 1; p <= 7; ++p) {
        std::vector<std::int64_t> covered(40, 0);
        std::vector<int> owners(files.size(), 0);
        int last_file = -1;
        std::int64_t last_end = 0;
        for (int r = 0; r < p; ++r) {
            for (const Piece& piece : plan_pieces(files, Format::lines, r, p)) {
                ASSERT_LT(piece.begin, piece.end);
                // pieces come in input order: a rank continues where the previous stopped
                if (piece.file == last_file) {
                    EXPECT_EQ(piece.begin, last_end);
                }
                EXPECT_GE(piece.file, last_file);
                last_file = piece.file;
                last_end = piece.end;
                std::int64_t offset = 0;
                for (int f = 0; f < piece.file; ++f) offset += files[static_cast<std::size_t>(f)].size;
                for (std::int64_t b = piece.begin; b < piece.end; ++b) covered[static_cast<std::size_t>(offset + b)]++;
            }
            for (const Piece& piece : plan_pieces(files, Format::text_dir, r, p)) {
                owners[static_cast<std::size_t>(piece.file)]++;
                EXPECT_EQ(piece.end, files[static_cast<std::size_t>(piece.file)].size);
            }
        }
        for (const auto c : covered) EXPECT_EQ(c, 1) << "p = " << p;
        for (const auto o : owners) EXPECT_EQ(o, 1) << "p = " << p;
    }
    // Empty files only: all on rank 0.
    const std::vector<InputFile> empty = {{"a", "a", "", 0}, {"b", "b", "", 0}};
    EXPECT_EQ(plan_pieces(empty, Format::text_dir, 0, 3).size(), 2u);
    EXPECT_TRUE(plan_pieces(empty, Format::text_dir, 2, 3).empty());
}

TEST(Labels, FileAndErrors) {
    test::TempDir dir;
    test::write_text(dir.file("cats.txt"), "ca01 news\n# c\n\ncb02 editorial\n");
    const auto labels = read_label_file(dir.file("cats.txt"));
    EXPECT_EQ(labels.size(), 2u);
    EXPECT_EQ(labels.at("cb02"), "editorial");
    test::write_text(dir.file("twice.txt"), "a x\nb y\na z\n");
    EXPECT_THROW(read_label_file(dir.file("twice.txt")), InputError);
    test::write_text(dir.file("one.txt"), "a x\nb\n");
    try {
        read_label_file(dir.file("one.txt"));
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("one.txt:2"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace jsmf::prepare
