// SPDX-License-Identifier: MIT
#include "jsmf/prepare/text.hpp"

#include <unicode/brkiter.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <fstream>

#include "jsmf/core/error.hpp"

namespace jsmf::prepare {

std::int64_t first_invalid_utf8(std::string_view text) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
    const auto length = static_cast<std::int64_t>(text.size());
    std::int64_t i = 0;
    while (i < length) {
        const std::int64_t start = i;
        UChar32 c = 0;
        U8_NEXT(bytes, i, length, c);
        if (c < 0) return start;
    }
    return -1;
}

std::string replace_invalid_utf8(std::string_view text) {
    std::string out;
    icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<std::int32_t>(text.size()))).toUTF8String(out);
    return out;
}

namespace {

const icu::Normalizer2& nfkc_casefold() {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* normalizer = icu::Normalizer2::getNFKCCasefoldInstance(status);
    if (U_FAILURE(status) || normalizer == nullptr)
        throw InternalError(std::string("ICU: no NFKC_Casefold normalizer: ") + u_errorName(status));
    return *normalizer;
}

icu::UnicodeString fold(std::string_view text) {
    UErrorCode status = U_ZERO_ERROR;
    icu::UnicodeString folded = nfkc_casefold().normalize(
        icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<std::int32_t>(text.size()))), status);
    if (U_FAILURE(status)) throw InternalError(std::string("ICU: normalization failed: ") + u_errorName(status));
    // One apostrophe: "don’t" and "don't" are the same word.
    folded.findAndReplace(icu::UnicodeString(static_cast<UChar32>(0x2019)), icu::UnicodeString(u'\''));
    return folded;
}

bool has_letter(const icu::UnicodeString& text, std::int32_t start, std::int32_t end) {
    for (std::int32_t i = start; i < end;) {
        const UChar32 c = text.char32At(i);
        if (u_isalpha(c)) return true;
        i += U16_LENGTH(c);
    }
    return false;
}

/// ICU's rule status says letters, kana, ideographs or a number; a "number" segment that
/// holds a letter ("mp3", "x2": UAX #29 ends them in a digit) is a word too.
bool is_word(const icu::UnicodeString& text, std::int32_t start, std::int32_t end, std::int32_t status,
             bool keep_numbers) {
    if (status >= UBRK_WORD_LETTER && status < UBRK_WORD_IDEO_LIMIT) return true;
    if (status >= UBRK_WORD_NUMBER && status < UBRK_WORD_NUMBER_LIMIT) return keep_numbers || has_letter(text, start, end);
    return false;
}

}  // namespace

struct Tokenizer::Impl {
    TokenizerOptions options;
    std::unique_ptr<icu::BreakIterator> words;
    icu::UnicodeString text;  // the break iterator refers to it
};

Tokenizer::Tokenizer(TokenizerOptions options) : impl_(std::make_unique<Impl>()) {
    impl_->options = options;
    UErrorCode status = U_ZERO_ERROR;
    impl_->words.reset(icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
    if (U_FAILURE(status) || !impl_->words)
        throw InternalError(std::string("ICU: no word break iterator: ") + u_errorName(status));
    (void)nfkc_casefold();  // fail here, not on the first document
}

Tokenizer::~Tokenizer() = default;

void Tokenizer::tokenize(std::string_view text, std::vector<std::string>& tokens) {
    Impl& s = *impl_;
    s.text = fold(text);
    s.words->setText(s.text);
    std::int32_t start = s.words->first();
    std::string token;
    for (std::int32_t end = s.words->next(); end != icu::BreakIterator::DONE; start = end, end = s.words->next()) {
        if (!is_word(s.text, start, end, s.words->getRuleStatus(), s.options.keep_numbers)) continue;
        std::int32_t length = end - start;
        if (s.options.strip_possessive && length > 2 && s.text[end - 1] == u's' && s.text[end - 2] == u'\'')
            length -= 2;
        if (s.text.countChar32(start, length) < s.options.min_length) continue;
        token.clear();
        s.text.tempSubString(start, length).toUTF8String(token);
        tokens.push_back(token);
    }
}

const std::vector<std::string>& english_stopwords() {
    // Function words of English: what carries grammar, not topic. Contractions appear as
    // UAX #29 keeps them (one token, ASCII apostrophe after folding); those in 's lose it to
    // the possessive rule ("it's" -> "it", "let's" -> "let"), so their stems are listed.
    static const std::vector<std::string> words = {
        "a", "about", "above", "after", "again", "against", "all", "almost", "along", "already", "also",
        "although", "always", "am", "among", "an", "and", "another", "any", "anyone", "anything", "are",
        "aren't", "around", "as", "at", "be", "became", "because", "become", "been", "before", "being",
        "below", "between", "both", "but", "by", "can", "can't", "cannot", "could", "couldn't", "did",
        "didn't", "do", "does", "doesn't", "doing", "don't", "done", "down", "during", "each", "either",
        "else", "enough", "etc", "even", "ever", "every", "few", "for", "from", "further", "get", "gets",
        "got", "had", "hadn't", "has", "hasn't", "have", "haven't", "having", "he", "he'd", "he'll",
        "her", "here", "hers", "herself", "him", "himself", "his", "how", "however", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't", "it", "its", "itself", "just", "let", "may", "me", "might", "mine", "more", "most", "much", "must",
        "mustn't", "my", "myself", "neither", "never", "no", "nor", "not", "now", "of", "off", "often",
        "on", "once", "one", "only", "onto", "or", "other", "others", "otherwise", "ought", "our", "ours",
        "ourselves", "out", "over", "own", "per", "perhaps", "rather", "same", "shall", "shan't", "she",
        "she'd", "she'll", "should", "shouldn't", "since", "so", "some", "such", "than", "that",
        "the", "their", "theirs", "them", "themselves", "then", "there", "therefore",
        "these", "they", "they'd", "they'll", "they're", "they've", "this", "those", "though", "through",
        "thus", "to", "too", "toward", "towards", "under", "until", "up", "upon", "us", "very", "via",
        "was", "wasn't", "we", "we'd", "we'll", "we're", "we've", "were", "weren't", "what", "whatever", "when", "whenever", "where", "whereas", "whether", "which",
        "while", "who", "whom", "whose", "why", "will", "with", "within", "without",
        "won't", "would", "wouldn't", "yet", "you", "you'd", "you'll", "you're", "you've", "your",
        "yours", "yourself", "yourselves"};
    return words;
}

std::vector<std::string> read_stopwords(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "cannot open the stop-word file");
    std::vector<std::string> words;
    std::string line;
    for (std::int64_t number = 1; std::getline(in, line); ++number) {
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
        std::size_t begin = 0;
        while (begin < line.size() && (line[begin] == ' ' || line[begin] == '\t')) ++begin;
        if (begin == line.size()) continue;
        const std::string_view word(line.data() + begin, line.size() - begin);
        if (const std::int64_t bad = first_invalid_utf8(word); bad >= 0)
            throw InputError(path + ":" + std::to_string(number),
                             "invalid UTF-8 at byte " + std::to_string(bad + static_cast<std::int64_t>(begin)) +
                                 " of the line");
        std::string folded;
        fold(word).toUTF8String(folded);
        words.push_back(folded);
    }
    return words;
}

}  // namespace jsmf::prepare
