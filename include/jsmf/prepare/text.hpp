// SPDX-License-Identifier: MIT
// Text to tokens: UTF-8 validation, Unicode word segmentation and case folding (ICU), stop words.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace jsmf::prepare {

/// Local. The byte offset of the first ill-formed UTF-8 sequence in `text` (ICU's
/// decoder, U8_NEXT), or -1 when `text` is well-formed UTF-8.
std::int64_t first_invalid_utf8(std::string_view text);

/// Local. `text` with each ill-formed UTF-8 sequence replaced by U+FFFD (ICU's decoder).
std::string replace_invalid_utf8(std::string_view text);

/// What counts as a token.
struct TokenizerOptions {
    bool keep_numbers = false;  ///< keep segments ICU classes as numbers ("1964", "3.5")
    int min_length = 2;         ///< shortest token kept, in code points after folding
    bool strip_possessive = true;  ///< "county's" -> "county"
};

/// Local. Splits UTF-8 text into lower-case word tokens:
///  1. the whole text is normalized with Unicode's NFKC_Casefold (compatibility forms
///     unified, e.g. the "ﬁ" ligature -> "fi", full-width letters -> ASCII, then full case
///     folding: "Straße" -> "strasse", "ΣΟΦΌΣ" -> "σοφόσ"; accents are kept: "café");
///  2. ICU's word break iterator (Unicode UAX #29, with dictionaries for Chinese, Japanese,
///     Thai) cuts it into segments; a segment is a token when ICU classes it as a word of
///     letters, kana or ideographs, or a number holding a letter ("mp3"), and pure numbers
///     with keep_numbers; punctuation, spaces
///     and symbols never are ("don't" and "e-mail"'s halves are what UAX #29 says);
///  3. a trailing possessive "'s" or "’s" is dropped; tokens shorter than min_length
///     code points are dropped.
/// Ill-formed UTF-8 is read as U+FFFD (no letter, so never in a token); see
/// first_invalid_utf8 to find it first. Not thread-safe: one per thread.
class Tokenizer {
public:
    explicit Tokenizer(TokenizerOptions options = {});
    ~Tokenizer();
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;
    /// Appends the tokens of `text` to `tokens`.
    void tokenize(std::string_view text, std::vector<std::string>& tokens);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Local. jsmf's English stop-word list (common function words: articles, pronouns,
/// auxiliaries, prepositions, conjunctions, and their contracted forms), already folded.
const std::vector<std::string>& english_stopwords();

/// Local. Reads a stop-word file: one word per line, '#' starts a comment, blank lines
/// skipped; each word is folded like a token. Throws InputError (file:line) on invalid UTF-8.
std::vector<std::string> read_stopwords(const std::string& path);

}  // namespace jsmf::prepare
