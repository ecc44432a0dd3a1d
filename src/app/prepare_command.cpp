// SPDX-License-Identifier: MIT
// `jsmf prepare`: raw text, ratings or playlists -> UCI bag-of-words files, distributed.
#include <cstdio>

#include "app/commands.hpp"
#include "jsmf/core/log.hpp"

namespace jsmf::app {

CLI::App* add_prepare_command(CLI::App& app, PrepareCommand& c) {
    CLI::App* sub = app.add_subcommand(
        "prepare",
        "Turn raw documents (text files, lines, JSON Lines, MALLET's format, the Brown corpus, ratings, playlists) into the UCI "
        "bag-of-words files jsmf reads: docword, vocab, document ids, labels");
    auto& o = c.options;
    sub->add_option("inputs", o.source.inputs, "Input files or directories (directories are walked, files sorted)")
        ->required();
    add_choice(sub, "--format", o.source.format,
                    "dir: one document per file (id: its path under the directory); lines: one document per line; "
                    "jsonl: JSON Lines with a text field; brown: the Brown corpus's word/tag files; ratings: 'user "
                    "item rating [timestamp]' lines (a user is a document, an item repeated round(2 x rating) times); "
                    "playlists: one playlist of item ids per line; mallet: MALLET's import format, 'name label text' "
                    "per line");
    sub->add_option("--out", o.out_dir, "Output directory (created if missing)")->required();
    sub->add_option("--name", o.name, "Corpus name X: docword.X.txt, vocab.X.txt, docs.X.txt, ...")->capture_default_str();
    sub->add_flag("--gzip", o.gzip, "Write docword.X.txt.gz");
    sub->add_option("--files", o.source.files_regex,
                    "In directories, read only files whose name matches this regular expression (ECMAScript), e.g. "
                    "'.*\\.txt' or 'c[a-r][0-9]{2}'");
    sub->add_flag("--label-from-dir", o.source.label_from_dir,
                  "dir, brown: a document's label is its first sub-directory (as in 20 Newsgroups)");
    sub->add_option("--labels", o.source.labels_file, "A file of 'id label' lines (e.g. the Brown corpus's cats.txt)");
    sub->add_option("--text-field", o.source.text_field, "jsonl: the field holding the text")->capture_default_str();
    sub->add_option("--id-field", o.source.id_field, "jsonl: the document id field (optional per record)")->capture_default_str();
    sub->add_option("--label-field", o.source.label_field, "jsonl: the label field (optional per record)")
        ->capture_default_str();
    sub->add_option("--items", o.items_file,
                    "ratings, playlists: a file of 'id<sep>name' lines (separated by ::, tab or comma); the vocabulary "
                    "then holds the names");
    sub->add_option("--stopwords", o.stopwords_file, "More stop words: one per line, '#' comments");
    sub->add_flag("!--no-english-stopwords", o.english_stopwords, "Keep the English stop words jsmf ships");
    sub->add_flag("--keep-numbers", o.tokenizer.keep_numbers, "Keep tokens that are numbers");
    sub->add_option("--min-length", o.tokenizer.min_length, "Shortest token kept, in characters")->capture_default_str();
    CLI::Option* min_df = sub->add_option("--min-df", o.curation.min_df, "Drop words in fewer documents")->capture_default_str();
    CLI::Option* max_df =
        sub->add_option("--max-df", o.curation.max_df_fraction, "Drop words in more than this fraction of the documents")
            ->capture_default_str();
    CLI::Option* max_words = sub->add_option("--max-words", o.curation.max_words,
                                             "Keep the top words by the authors' tf-idf, tf(w) ln(floor(D / df(w))) (0: "
                                             "every word that passes the df filters)")
                                 ->capture_default_str();
    sub->add_option("--vocab", o.vocabulary_file,
                    "Use this vocabulary (one word a line, as vocab.X.txt), in its order, instead of choosing one: the "
                    "documents then count in an existing model's word ids, for jsmf fit --update (words outside it are "
                    "dropped; a new vocabulary's words are a later step). Not with --min-df, --max-df, --max-words")
        ->excludes(min_df)
        ->excludes(max_df)
        ->excludes(max_words);
    sub->add_option("--min-doc-tokens", o.min_doc_tokens, "Drop documents with fewer tokens after curation")
        ->capture_default_str();
    add_choice(sub, "--invalid-utf8", o.invalid_utf8,
                    "skip: drop a document with invalid UTF-8 and count it; replace: read each bad sequence as U+FFFD "
                    "(no token) and count the document; fail: stop at the first, with its file, line and byte");
    sub->add_option("--buffer-mb", o.buffer_mb, "Per rank: word counts buffered before the ranks exchange them")
        ->capture_default_str();
    return sub;
}

int run_prepare(PrepareCommand c, const mpi::Comm& world) {
    const prepare::PrepareReport r = prepare::run_prepare(world, c.options);
    if (!world.is_root()) return exit_code::ok;
    log::info("prepare: read {} files, {:.1f} MB, {} documents, {} tokens in {:.2f} s", r.files, r.bytes / 1e6,
              r.docs_read, r.tokens_read, r.count_seconds);
    if (c.options.vocabulary_file.empty())
        log::info("prepare: {} distinct words after stop words; {} pass --min-df/--max-df; vocabulary {} (top by tf-idf)",
                  r.distinct_words, r.words_passing_df, r.vocabulary);
    else
        log::info("prepare: {} distinct words after stop words; the vocabulary of {}: {} words, {} of them in these "
                  "documents",
                  r.distinct_words, c.options.vocabulary_file, r.vocabulary, r.words_passing_df);
    if (r.uncountable_words > 0)
        log::warn("prepare: {} words of {} are never counted under these token rules (stop words, numbers without "
                  "--keep-numbers, shorter than --min-length, or not one token), e.g. {}",
                  r.uncountable_words, c.options.vocabulary_file, prepare::joined_words(r.uncountable_examples));
    log::info("prepare: kept {} documents ({} tokens, {} entries); dropped {} empty after stop words, {} shorter than "
              "{} tokens; {} with invalid UTF-8 ({}){}",
              r.docs_kept, r.tokens_kept, r.entries, r.docs_empty, r.docs_short, c.options.min_doc_tokens,
              r.docs_invalid_utf8, c.options.invalid_utf8 == prepare::InvalidUtf8::replace ? "read with U+FFFD" : "dropped",
              r.first_invalid.empty() ? "" : " (the first: " + r.first_invalid + ")");
    if (r.labels > 0) log::info("prepare: {} labels", r.labels);
    if (r.labels == 1)  // (fit refuses such labels for ClustAcc before any work)
        log::warn("prepare: every document has the same label: ClustAcc (fit --prepared with the metrics) needs at "
                  "least two (--label-from-dir takes each file's first sub-directory)");
    for (const auto& file : r.outputs) log::info("prepare: wrote {}", file);
    const double seconds = r.total_seconds > 0 ? r.total_seconds : 1e-9;  // both passes and the writes
    std::printf("jsmf-prepare ranks=%d files=%lld bytes=%lld documents_read=%lld documents=%lld words=%lld "
                "tokens_read=%lld tokens=%lld entries=%lld invalid_utf8=%lld empty=%lld short=%lld count_seconds=%.6f "
                "write_seconds=%.6f total_seconds=%.6f mb_per_second_per_rank=%.3f tokens_per_second_per_rank=%.0f "
                "peak_rss_bytes=%lld\n",
                world.size(), static_cast<long long>(r.files), static_cast<long long>(r.bytes),
                static_cast<long long>(r.docs_read), static_cast<long long>(r.docs_kept),
                static_cast<long long>(r.vocabulary), static_cast<long long>(r.tokens_read),
                static_cast<long long>(r.tokens_kept), static_cast<long long>(r.entries),
                static_cast<long long>(r.docs_invalid_utf8), static_cast<long long>(r.docs_empty),
                static_cast<long long>(r.docs_short), r.count_seconds, r.write_seconds, r.total_seconds,
                r.bytes / 1e6 / seconds / world.size(), r.tokens_read / seconds / world.size(),
                static_cast<long long>(r.peak_rss_bytes));
    std::fflush(stdout);
    return exit_code::ok;
}

}  // namespace jsmf::app
