// SPDX-License-Identifier: MIT
// `jsmf prepare`: raw documents -> the UCI bag-of-words files jsmf reads, distributed, with
// the papers' vocabulary curation (NIPS'15 §4, practical-jsmf §5: stop words out, rare words
// pruned by tf-idf, documents shorter than 5 tokens after curation dropped).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "jsmf/core/names.hpp"
#include "jsmf/mpi/comm.hpp"
#include "jsmf/prepare/sources.hpp"
#include "jsmf/prepare/text.hpp"
#include "jsmf/prepare/vocabulary.hpp"

namespace jsmf::prepare {

/// A document with invalid UTF-8: dropped and counted (skip, the default: the rest of a
/// broken file is rarely what its author wrote), read with each bad sequence as U+FFFD,
/// which is no letter and so no token (replace, counted too), or the run stops (fail).
enum class InvalidUtf8 { skip, replace, fail };
inline const Names<InvalidUtf8, 3>& names(InvalidUtf8) {
    static const Names<InvalidUtf8, 3> table{"skip", "replace", "fail"};
    return table;
}

struct PrepareOptions {
    SourceOptions source;
    TokenizerOptions tokenizer;
    bool english_stopwords = true;       ///< text formats: drop jsmf's English stop words
    std::string stopwords_file;          ///< more stop words (text formats)
    CurationOptions curation;
    /// A fixed vocabulary in place of the curation's choice (min_df, max_df, max_words then
    /// unused): these words, in this order, so that new documents count in an existing
    /// model's word ids (fit --update). `vocabulary_file`: one word a line, as vocab.X.txt
    /// (prepare --vocab; rank 0 reads it); `vocabulary`: the words themselves, the same on
    /// every rank (fit --text --update: the base's). At most one of the two.
    std::string vocabulary_file;
    std::vector<std::string> vocabulary;
    std::string vocabulary_source;  ///< where `vocabulary` came from, for messages and the manifest
    std::uint64_t min_doc_tokens = 5;    ///< documents with fewer tokens after curation are dropped
    InvalidUtf8 invalid_utf8 = InvalidUtf8::skip;
    std::string items_file;              ///< ratings, playlists: "id<sep>name" lines naming the items
    std::string out_dir;
    std::string name = "corpus";
    bool gzip = false;
    double buffer_mb = 64;               ///< per rank: word counts buffered before an exchange
};

/// Local. Words quoted and joined for a message: 'a', 'b', 'c'.
inline std::string joined_words(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "'" : ", '") + w + "'";
    return out;
}

/// What a run read, dropped and wrote (summed over the ranks).
struct PrepareReport {
    std::int64_t files = 0;
    std::int64_t bytes = 0;
    std::int64_t docs_read = 0;
    std::int64_t docs_invalid_utf8 = 0;  ///< skipped (InvalidUtf8::skip) or repaired (replace)
    std::int64_t docs_empty = 0;         ///< no token left after tokenization and stop words
    std::int64_t docs_short = 0;         ///< fewer than min_doc_tokens after curation
    std::int64_t docs_kept = 0;
    std::int64_t tokens_read = 0;        ///< tokens (items x repeats) before stop words
    std::int64_t tokens_kept = 0;        ///< in the kept documents, after curation
    std::int64_t distinct_words = 0;     ///< after stop words, before the df filters
    std::int64_t words_passing_df = 0;
    std::int64_t vocabulary = 0;
    std::int64_t entries = 0;            ///< docword lines
    std::int64_t labels = 0;             ///< distinct labels (0: none)
    /// Rank 0, a fixed vocabulary: its words that these token rules never count (stop words,
    /// numbers without keep_numbers, shorter than min_length, not one token), a few of them.
    std::int64_t uncountable_words = 0;
    std::vector<std::string> uncountable_examples;
    std::string first_invalid;           ///< where the first skipped invalid UTF-8 was
    double count_seconds = 0, write_seconds = 0, total_seconds = 0;
    std::int64_t peak_rss_bytes = 0;     ///< the largest rank's
    std::vector<std::string> outputs;    ///< the files written
};

/// Collective on `comm`. Two passes over the input: (1) ranks tokenize their share and
/// count words (DistributedCounts, exchanged whenever a rank's buffer passes buffer_mb);
/// rank 0 chooses the vocabulary (stop words out, min_df, max_df_fraction, the top
/// max_words by the authors' tf-idf) and broadcasts it; (2) ranks read their share again,
/// keep the vocabulary's words, drop documents shorter than min_doc_tokens, and write
/// their documents with MPI-IO at offsets from an exclusive scan, so that the files do not
/// depend on the rank count (gzip: the same text, in one gzip member per rank). Every file
/// is written under a temporary name and renamed only when all ranks succeeded.
/// Throws StageFailed (agreed) on bad input.
PrepareReport run_prepare(const mpi::Comm& comm, const PrepareOptions& options);

/// The file names in `out_dir` for `name`.
std::string docword_path(const std::string& out_dir, const std::string& name, bool gzip);
std::string vocab_path(const std::string& out_dir, const std::string& name);
std::string doc_ids_path(const std::string& out_dir, const std::string& name);
std::string labels_path(const std::string& out_dir, const std::string& name);
std::string label_names_path(const std::string& out_dir, const std::string& name);
std::string manifest_path(const std::string& out_dir, const std::string& name);

/// A prepared folder, as `jsmf fit --prepared` finds it (from its manifest).
struct PreparedCorpus {
    std::string docword, vocab, doc_ids, labels, label_names;  ///< labels empty when none
};
/// Local. Reads DIR/prepare.<name>.json (name empty: the folder's only manifest).
/// Throws InputError when there is none, several, or a file it names is missing.
PreparedCorpus find_prepared(const std::string& dir, const std::string& name);

/// The documents of a prepared corpus, as the model file keeps them (/corpus).
struct PreparedDocuments {
    std::vector<std::string> ids;
    std::vector<std::int64_t> labels;       ///< per document, 1-based; empty when unlabelled
    std::vector<std::string> label_names;
};
/// Local. Reads the corpus's document ids and, when it has labels, its label names and
/// labels (one integer in 1..#names per line, one per id). InputError naming file and line.
PreparedDocuments read_prepared_documents(const PreparedCorpus& corpus);

/// Local. The items file of ratings and playlists (prepare --items): "id<sep>name" lines
/// (::, tab or comma; '#' comments), each name valid UTF-8. InputError naming file and line.
std::map<std::string, std::string> read_item_names(const std::string& path);

}  // namespace jsmf::prepare
