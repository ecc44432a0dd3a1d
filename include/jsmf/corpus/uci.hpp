// SPDX-License-Identifier: MIT
// The UCI bag-of-words format (docword.X.txt[.gz]), read by every rank for its own share.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "jsmf/corpus/shard.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::corpus {

/// UCI "Bag of Words" docword file, format as documented by UCI:
///   line 1: D    (number of documents)
///   line 2: W    (number of words in the vocabulary)
///   line 3: NNZ  (number of "docID wordID count" lines that follow)
///   then NNZ lines "docID wordID count", 1-based ids, count > 0,
///   each document's lines contiguous (UCI files are sorted by docID).
/// Example (2 docs, vocab {a, b, c}; doc 1 = "a a b", doc 2 = "c"):
///   2 / 3 / 3 / "1 1 2" / "1 2 1" / "2 3 1"
/// jsmf's rules: blank lines and CRLF endings are tolerated; a (docID, wordID) pair
/// that appears twice is rejected (it usually means two files were concatenated
/// badly; summing would silently double-count); documents with no lines simply do not
/// occur. Plain or gzip (detected by magic bytes, a .gz name is not required).
/// The most documents one file may declare (D): every rank keeps a bit per docID up to the
/// largest it read, per file (the overlap check), at most 1 GiB at this limit.
inline constexpr std::int64_t max_documents = std::int64_t{1} << 33;

struct UciHeader {
    Index num_docs = 0;
    Index num_words = 0;
    Index num_nonzeros = 0;
};

/// What every rank knows of each input file before reading its share.
struct UciFile {
    std::string path;
    UciHeader header;
    bool gzipped = false;
    std::int64_t data_begin = 0;  ///< byte offset of the first data line (plain files)
    std::int64_t size_bytes = 0;  ///< file size (plain) or compressed size (gzip)
};

/// Local. Opens `path` and reads its three header lines. Throws InputError.
UciFile inspect_uci_file(const std::string& path);

/// A rank's share of one file: nominal positions [begin, end) that the reader aligns to
/// document boundaries. Positions are byte offsets for plain files and 0-based data
/// line indices for gzip files; `to_end` means "through the end of the file".
struct UciPiece {
    int file = 0;
    std::int64_t begin = 0;
    std::int64_t end = 0;
    bool from_start = false;
    bool to_end = false;
};

/// Local and deterministic (every rank computes every rank's plan identically).
/// With at least as many files as ranks, whole files are dealt out, largest first, to
/// the least-loaded rank. Otherwise every file is cut into `num_ranks` equal position
/// ranges. A document never straddles two ranks: the boundary rule is "the first line
/// at or after the nominal position, and every following line of that same document,
/// belong to the earlier piece".
std::vector<UciPiece> plan_uci_pieces(const std::vector<UciFile>& files, int rank, int num_ranks);

/// Streams this rank's documents from its pieces, validating every line: field count,
/// integers, docID in [1, D], wordID in [1, W], count in [1, 2^32), no duplicate word in a
/// document, documents contiguous. Memory: one document plus a bit per docID up to the
/// largest read, per file.
class UciReader : public DocumentStream {
public:
    UciReader(std::vector<UciFile> files, std::vector<UciPiece> pieces);
    ~UciReader() override;
    bool next(Document& doc) override;

    const std::vector<UciFile>& files() const { return files_; }
    /// Data lines this rank read, per file (for the NNZ check).
    const std::vector<std::int64_t>& lines_per_file() const { return lines_per_file_; }
    /// Documents this rank read, per file, as a D-bit map (for the overlap check).
    const std::vector<std::vector<std::uint64_t>>& doc_bitmaps() const { return doc_bitmaps_; }

private:
    struct State;
    bool open_next_piece();
    std::vector<UciFile> files_;
    std::vector<UciPiece> pieces_;
    std::size_t piece_index_ = 0;
    std::unique_ptr<State> state_;
    std::vector<std::int64_t> lines_per_file_;
    std::vector<std::vector<std::uint64_t>> doc_bitmaps_;
};

/// Collective on `comm`. Opens every file's header on every rank (local phase, agreed),
/// and checks that all files share one vocabulary size W. Throws StageFailed.
std::vector<UciFile> inspect_uci_files(const mpi::Comm& comm, const std::vector<std::string>& paths);

/// Collective on `comm`, after every rank has read its pieces to the end. Checks what
/// no single rank can see: the data lines of each file add up to its NNZ header, and
/// no document appears in two places (on two ranks). Throws StageFailed.
void check_uci_totals(const mpi::Comm& comm, const UciReader& reader);

/// Local. The word counts (0-based word ids, counts) of the documents `wanted` (0-based:
/// docID − 1) of one UCI file, plain or gzip, in one pass; the others are skipped unparsed
/// beyond their document id. InputError naming file:line for a malformed line.
std::map<Index, std::vector<std::pair<Index, std::int64_t>>> read_documents(const std::string& path,
                                                                            const std::set<Index>& wanted);

}  // namespace jsmf::corpus
