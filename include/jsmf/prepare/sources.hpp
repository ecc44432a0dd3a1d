// SPDX-License-Identifier: MIT
// Raw inputs of `jsmf prepare`: which files, which rank reads what, and one document at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jsmf/core/names.hpp"

namespace jsmf::prepare {

/// The input formats.
enum class Format {
    text_dir,   ///< a directory tree of text files, one document per file (id: the relative path)
    lines,      ///< one document per line (id: "<line>", or "<file>:<line>" with several files)
    jsonl,      ///< JSON Lines: one object per line with a text field (optional id and label fields)
    brown,      ///< the Brown corpus's tagged files ("word/tag" tokens; tags stripped), one per file
    ratings,    ///< "user item rating [timestamp]" lines: a user is a document, an item repeated round(2 x rating) times
    playlists,  ///< one playlist per line of item ids: a playlist is a document
    /// MALLET's one-instance-per-line import format (`mallet import-file`): "name label
    /// text", split as MALLET's default --line-regex ^(\S*)[\s,]*(\S*)[\s,]*(.*)$ does
    /// (the name and the label each end at the first blank, commas inside them kept; the
    /// blanks and commas after each are skipped; the rest is the text).
    mallet,
};

inline const Names<Format, 7>& names(Format) {
    static const Names<Format, 7> table{"dir", "lines", "jsonl", "brown", "ratings", "playlists", "mallet"};
    return table;
}
/// One line of MALLET's import format, split as its default regex splits it.
struct MalletLine {
    std::string name, label, text;
};
/// Local. The name, label and text of a MALLET import line.
MalletLine split_mallet_line(const std::string& line);
/// Does the format hold text (tokenized, stop words) rather than item ids?
bool is_text_format(Format format);

struct SourceOptions {
    Format format = Format::text_dir;
    std::vector<std::string> inputs;   ///< files or directories (directories are walked, sorted)
    std::string files_regex;           ///< in directories, take files whose name matches (ECMAScript); empty: all
    bool label_from_dir = false;       ///< dir, brown: the label is the first sub-directory under the input
    std::string labels_file;           ///< "id label" lines (e.g. the Brown corpus's cats.txt)
    std::string text_field = "text";   ///< jsonl
    std::string id_field = "id";       ///< jsonl (optional per record)
    std::string label_field = "label"; ///< jsonl (optional per record)
};

/// One input file, as every rank sees it.
struct InputFile {
    std::string path;
    std::string name;    ///< relative to the input it was found under (the document id of one-file formats)
    std::string label;   ///< label_from_dir: the first directory of `name`
    std::int64_t size = 0;
};

/// Local (rank 0 in practice). Expands the inputs: files as given, directories walked
/// recursively, files sorted by relative name (byte order) under each input; hidden files
/// and directories (".name") skipped. Throws InputError for a missing input, an input
/// that is neither, no files at all, or label_from_dir with a file outside a sub-directory.
std::vector<InputFile> list_input_files(const SourceOptions& options);

/// A contiguous byte range of one file that one rank reads. Line formats: the lines whose
/// group (a line, or a user's consecutive lines for ratings) starts in the range belong
/// to it, with the rule "the first line at or after a range's end, and every following
/// line of its group, belong to the earlier range". One-file formats: whole files.
struct Piece {
    int file = 0;
    std::int64_t begin = 0;
    std::int64_t end = 0;
};

/// Local and deterministic: every rank computes the same plan. The files are laid end to
/// end and cut into `num_ranks` equal byte ranges, so a rank's documents follow the
/// previous rank's in input order (the output does not depend on the rank count). One-file
/// formats: a file goes to the rank whose range holds its first byte.
std::vector<Piece> plan_pieces(const std::vector<InputFile>& files, Format format, int rank, int num_ranks);

/// One raw document.
struct RawDocument {
    std::string id;
    std::string label;
    std::string where;  ///< "file" or "file:line", for messages
    std::string text;   ///< text formats: the document's text (UTF-8 not yet checked)
    std::vector<std::pair<std::string, std::uint32_t>> items;  ///< item formats: item id and repeats
    std::string path;        ///< the file it came from
    std::int64_t offset = 0; ///< the byte where it starts in that file
    std::int64_t invalid_utf8 = -1;  ///< text formats: the file offset of its first invalid UTF-8 byte, or -1
};

/// Local. 1 + the newlines in the first `offset` bytes of a file (for messages: reads the file).
std::int64_t line_number_at(const std::string& path, std::int64_t offset);

/// Local. Reads a rank's pieces in order, one document at a time. Throws InputError with
/// file:line (line numbers are counted from the file's start only when an error needs one).
class RawReader {
public:
    /// `labels`: each document id's label (from SourceOptions::labels_file, read once by
    /// the caller); a document whose id is not there keeps its own label (or none).
    RawReader(const SourceOptions& options, std::vector<InputFile> files, std::vector<Piece> pieces,
              std::map<std::string, std::string> labels = {});
    ~RawReader();
    /// The next document, false at the end. Blank lines (line formats) are no document.
    bool next(RawDocument& doc);
    /// Per input file: the lines of the file this reader owns (line formats), in order, so
    /// that a document's line number is the lines owned by earlier ranks plus its own.
    const std::vector<std::int64_t>& owned_lines() const { return owned_lines_; }
    /// Set the line number of the first line this rank owns in each file (from an
    /// exclusive scan of owned_lines over the ranks), before reading; ids then carry it.
    void set_first_lines(std::vector<std::int64_t> first_lines) { first_lines_ = std::move(first_lines); }

private:
    struct State;
    bool next_line_document(RawDocument& doc);
    bool open_next_piece();
    SourceOptions options_;
    std::vector<InputFile> files_;
    std::vector<Piece> pieces_;
    std::size_t piece_index_ = 0;
    std::unique_ptr<State> state_;
    std::vector<std::int64_t> owned_lines_;
    std::vector<std::int64_t> first_lines_;
    std::map<std::string, std::string> labels_;
};

/// Local. "id label" lines (whitespace-separated; '#' comments): the label of each id.
/// InputError (file:line) on a line without two fields or an id given twice.
std::map<std::string, std::string> read_label_file(const std::string& path);

/// Local. Splits a ratings line "user item rating [timestamp]" (separated by "::", tab,
/// comma, or blanks, whichever the line has first in that order).
std::vector<std::string> split_record(const std::string& line);

}  // namespace jsmf::prepare
