// SPDX-License-Identifier: MIT
// The UCI bag-of-words reader: document-aligned pieces, line validation, cross-rank checks.
#include "jsmf/corpus/uci.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "corpus/line_source.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::corpus {
namespace {
using detail::Line;
using detail::LineSource;

bool is_blank(std::string_view text) {
    return text.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

// Splits on spaces/tabs into at most `max_fields` + 1 fields (the extra one flags excess).
int split_fields(std::string_view text, std::string_view* fields, int max_fields) {
    int n = 0;
    std::size_t at = 0;
    while (n <= max_fields) {
        at = text.find_first_not_of(" \t", at);
        if (at == std::string_view::npos) break;
        const std::size_t stop = std::min(text.find_first_of(" \t", at), text.size());
        if (n < max_fields) fields[n] = text.substr(at, stop - at);
        ++n;
        at = stop;
    }
    return n;
}

bool parse_integer(std::string_view field, std::int64_t& value) {
    const auto result = std::from_chars(field.data(), field.data() + field.size(), value);
    return result.ec == std::errc() && result.ptr == field.data() + field.size();
}

std::string where(const std::string& path, std::int64_t line_number) {
    return line_number > 0 ? path + ":" + std::to_string(line_number) : path;
}

// The document id of a data line, or -1 when it has none (malformed): used only by the
// boundary rule, which needs the same answer on both ranks that share a boundary.
std::int64_t doc_id_of(std::string_view text) {
    std::string_view fields[1];
    if (split_fields(text, fields, 1) < 1) return -1;
    std::int64_t id = -1;
    return parse_integer(fields[0], id) ? id : -1;
}
}  // namespace

UciFile inspect_uci_file(const std::string& path) {
    auto source = LineSource::open(path);
    UciFile file;
    file.path = path;
    file.gzipped = source->gzipped();
    static const char* names[3] = {"D (number of documents)", "W (vocabulary size)",
                                   "NNZ (number of data lines)"};
    std::int64_t values[3] = {0, 0, 0};
    Line line;
    for (int k = 0; k < 3; ++k) {
        if (!source->next(line)) {
            throw InputError(path, "file ends inside the 3-line header (expected " +
                                       std::string(names[k]) + " on line " + std::to_string(k + 1) + ")");
        }
        std::string_view fields[2];
        const int n = split_fields(line.text, fields, 1);
        if (n != 1 || !parse_integer(fields[0], values[k]) || values[k] < 0) {
            throw InputError(where(path, k + 1), "header line " + std::to_string(k + 1) +
                                                     " must be one non-negative integer " + names[k] +
                                                     ", found '" + std::string(line.text) + "'");
        }
        file.data_begin = line.offset + static_cast<std::int64_t>(line.text.size()) + 1;
    }
    if (values[1] < 1) throw InputError(where(path, 2), "vocabulary size W must be at least 1");
    if (values[1] > std::int64_t{1} << 31) throw InputError(where(path, 2), "vocabulary size W exceeds 2^31");
    // Each rank keeps a D-bit map of the documents it read per file (the overlap check).
    if (values[0] > max_documents)
        throw InputError(where(path, 1), "D = " + std::to_string(values[0]) + " documents exceeds jsmf's limit of 2^33 " +
                                             "per file (split the corpus into several files)");
    file.header = {values[0], values[1], values[2]};
    if (!file.gzipped) {
        file.size_bytes = source->size_bytes();
        file.data_begin = std::min(file.data_begin, file.size_bytes);
    } else {
        std::FILE* raw = std::fopen(path.c_str(), "rb");
        if (raw) {
            std::fseek(raw, 0, SEEK_END);
            file.size_bytes = std::ftell(raw);
            std::fclose(raw);
        }
        file.data_begin = 0;
    }
    return file;
}

std::vector<UciPiece> plan_uci_pieces(const std::vector<UciFile>& files, int rank, int num_ranks) {
    std::vector<UciPiece> pieces;
    const int num_files = static_cast<int>(files.size());
    if (num_files >= num_ranks) {
        // Longest-processing-time first: deterministic, ties broken by index.
        std::vector<int> order(files.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
            return files[a].size_bytes > files[b].size_bytes;
        });
        std::vector<std::int64_t> load(static_cast<std::size_t>(num_ranks), 0);
        std::vector<int> owner(files.size(), 0);
        for (const int f : order) {
            const int least = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
            owner[f] = least;
            load[least] += std::max<std::int64_t>(1, files[f].size_bytes);
        }
        for (int f = 0; f < num_files; ++f) {
            if (owner[f] == rank) pieces.push_back({f, 0, 0, true, true});
        }
        return pieces;
    }
    for (int f = 0; f < num_files; ++f) {
        const UciFile& file = files[f];
        const std::int64_t first = file.gzipped ? 0 : file.data_begin;
        const std::int64_t last = file.gzipped ? file.header.num_nonzeros : file.size_bytes;
        const std::int64_t span = std::max<std::int64_t>(0, last - first);
        UciPiece piece;
        piece.file = f;
        piece.begin = first + span * rank / num_ranks;
        piece.end = first + span * (rank + 1) / num_ranks;
        piece.from_start = rank == 0;
        piece.to_end = rank == num_ranks - 1;
        pieces.push_back(piece);
    }
    return pieces;
}

// Reading state for the current piece.
struct UciReader::State {
    std::unique_ptr<LineSource> source;
    const UciPiece* piece = nullptr;
    const UciFile* file = nullptr;
    std::int64_t data_index = 0;     // gzip: index of the next data line
    bool in_tail = false;            // past the nominal end, finishing one document
    std::int64_t tail_doc = 0;
    bool pending = false;            // `line` holds a line not yet consumed
    Line line;
    std::string line_copy;           // `line.text` may point into a refilled buffer
    std::int64_t line_where = 0;     // offset (plain) or line number (gzip)
    // Position of a line for the boundary rule.
    std::int64_t position(const Line& l) const { return file->gzipped ? data_index : l.offset; }
};

UciReader::UciReader(std::vector<UciFile> files, std::vector<UciPiece> pieces)
    : files_(std::move(files)), pieces_(std::move(pieces)), lines_per_file_(files_.size(), 0) {
    // Each file's map grows with the largest docID read, not with the header's D: a header
    // that promises far more documents than the file holds costs nothing.
    doc_bitmaps_.resize(files_.size());
}

UciReader::~UciReader() = default;

// Reads the next non-blank data line of the current file into state_->line.
static bool next_data_line(LineSource& source, Line& line, std::int64_t& data_index, bool count) {
    while (source.next(line)) {
        if (is_blank(line.text)) continue;
        if (count) ++data_index;
        return true;
    }
    return false;
}

bool UciReader::open_next_piece() {
    while (piece_index_ < pieces_.size()) {
        const UciPiece& piece = pieces_[piece_index_++];
        auto state = std::make_unique<State>();
        state->piece = &piece;
        state->file = &files_[static_cast<std::size_t>(piece.file)];
        state->source = LineSource::open(state->file->path);
        LineSource& source = *state->source;
        Line line;
        // Skip the header (gzip, or any piece that starts at the file's start).
        if (source.gzipped() || piece.from_start) {
            for (int k = 0; k < 3; ++k) source.next(line);
        }
        if (piece.from_start) {
            state->data_index = 0;
        } else {
            // First line at or after the nominal begin ...
            bool have = false;
            std::int64_t next_index = 0;  // gzip: index of the next unread data line
            if (source.gzipped()) {
                std::int64_t index = 0;
                while ((have = next_data_line(source, line, index, false))) {
                    if (index >= piece.begin) break;
                    ++index;
                }
                next_index = index + 1;
            } else {
                source.seek_line_at_or_after(piece.begin);
                have = next_data_line(source, line, next_index, false);
            }
            auto position = [&] { return source.gzipped() ? next_index - 1 : line.offset; };
            // ... and the rest of its document belong to the previous piece. If that
            // document reaches past this piece's nominal end, the previous piece also
            // owns the document holding the first line after the end: this piece is empty.
            bool empty = false;
            if (have) {
                const std::int64_t first_doc = doc_id_of(line.text);
                for (;;) {
                    if (!piece.to_end && position() >= piece.end) {
                        empty = true;
                        break;
                    }
                    have = next_data_line(source, line, next_index, false);
                    if (!have) break;
                    ++next_index;
                    if (doc_id_of(line.text) != first_doc) break;
                }
            }
            if (empty) continue;
            state->data_index = next_index;
            if (!have) continue;  // this piece holds no document start
            state->pending = true;
            state->line_copy.assign(line.text);
            state->line = line;
            state->line.text = state->line_copy;
        }
        state_ = std::move(state);
        return true;
    }
    state_.reset();
    return false;
}

bool UciReader::next(Document& doc) {
    doc.clear();
    struct Entry {
        std::uint32_t word;
        std::uint32_t count;
        std::int64_t where;
    };
    static thread_local std::vector<Entry> entries;
    entries.clear();
    std::int64_t current_doc = -1;

    auto line_where_text = [&](std::int64_t where_value) {
        // Plain files record byte offsets; turn one into a line number only when reporting.
        const std::int64_t number =
            state_->file->gzipped ? where_value : state_->source->line_number_at(where_value);
        return where(state_->file->path, number);
    };

    auto finish_document = [&]() {
        std::sort(entries.begin(), entries.end(),
                  [](const Entry& a, const Entry& b) { return a.word < b.word || (a.word == b.word && a.where < b.where); });
        for (std::size_t k = 1; k < entries.size(); ++k) {
            if (entries[k].word == entries[k - 1].word) {
                throw InputError(line_where_text(entries[k].where),
                                 "duplicate (docID, wordID) pair (" + std::to_string(current_doc) + ", " +
                                     std::to_string(entries[k].word + 1) +
                                     "): jsmf rejects repeated pairs instead of summing them");
            }
        }
        auto& bitmap = doc_bitmaps_[static_cast<std::size_t>(state_->piece->file)];
        const auto index = static_cast<std::size_t>(current_doc / 64);
        if (index >= bitmap.size()) {  // doubling, up to the D + 1 bits the header allows
            const auto most = static_cast<std::size_t>(state_->file->header.num_docs / 64 + 1);
            bitmap.resize(std::min(most, std::max(index + 1, 2 * bitmap.size())), 0);
        }
        auto& word = bitmap[index];
        const std::uint64_t bit = std::uint64_t{1} << (current_doc % 64);
        if (word & bit) {
            throw InputError(line_where_text(entries.front().where),
                             "document " + std::to_string(current_doc) +
                                 " appears again after other documents: a document's lines must be contiguous");
        }
        word |= bit;
        doc.key = {static_cast<std::int32_t>(state_->piece->file), current_doc};
        for (const auto& entry : entries) {
            doc.words.push_back(entry.word);
            doc.counts.push_back(entry.count);
        }
    };

    for (;;) {
        if (!state_ && !open_next_piece()) return false;
        State& s = *state_;
        const UciFile& file = *s.file;
        Line line;
        bool have = false;
        if (s.pending) {
            line = s.line;
            s.pending = false;
            have = true;
        } else {
            have = next_data_line(*s.source, line, s.data_index, false);
            if (have) ++s.data_index;
        }
        if (have && !s.piece->to_end) {
            // Boundary rule at the nominal end (see plan_uci_pieces).
            const std::int64_t position = file.gzipped ? s.data_index - 1 : line.offset;
            if (!s.in_tail && position >= s.piece->end) {
                s.in_tail = true;
                s.tail_doc = doc_id_of(line.text);
            } else if (s.in_tail && doc_id_of(line.text) != s.tail_doc) {
                have = false;
            }
        }
        if (!have) {
            const bool finished = current_doc >= 0;
            if (finished) finish_document();  // needs state_ for messages
            state_.reset();
            if (finished) return true;
            continue;
        }
        const std::int64_t where_value = file.gzipped ? line.number : line.offset;
        auto fail = [&](const std::string& what) { throw InputError(line_where_text(where_value), what); };

        std::string_view fields[3];
        const int n = split_fields(line.text, fields, 3);
        if (n != 3) {
            fail("expected 3 fields 'docID wordID count', found " + std::to_string(n) + ": '" +
                 std::string(line.text) + "'");
        }
        std::int64_t values[3];
        static const char* names[3] = {"docID", "wordID", "count"};
        for (int k = 0; k < 3; ++k) {
            if (!parse_integer(fields[k], values[k])) {
                fail(std::string(names[k]) + " is not an integer: '" + std::string(fields[k]) + "'");
            }
        }
        if (values[0] < 1 || values[0] > file.header.num_docs) {
            fail("docID " + std::to_string(values[0]) + " is outside [1, D = " +
                 std::to_string(file.header.num_docs) + "] declared in the header");
        }
        if (values[1] < 1 || values[1] > file.header.num_words) {
            fail("wordID " + std::to_string(values[1]) + " is outside [1, W = " +
                 std::to_string(file.header.num_words) + "] declared in the header");
        }
        if (values[2] < 1) fail("count must be positive, found " + std::to_string(values[2]));
        if (values[2] > 0xffffffffLL) fail("count " + std::to_string(values[2]) + " exceeds 2^32 - 1");
        ++lines_per_file_[static_cast<std::size_t>(s.piece->file)];

        if (current_doc >= 0 && values[0] != current_doc) {
            // This line starts the next document: keep it for the next call.
            s.pending = true;
            s.line_copy.assign(line.text);
            s.line = line;
            s.line.text = s.line_copy;
            --lines_per_file_[static_cast<std::size_t>(s.piece->file)];
            finish_document();
            return true;
        }
        current_doc = values[0];
        entries.push_back({static_cast<std::uint32_t>(values[1] - 1), static_cast<std::uint32_t>(values[2]),
                           where_value});
    }
}

std::vector<UciFile> inspect_uci_files(const mpi::Comm& comm, const std::vector<std::string>& paths) {
    std::vector<UciFile> files;
    mpi::run_local_phase(comm, "read", [&] {
        if (paths.empty()) throw InputError("no corpus file given");
        for (const auto& path : paths) files.push_back(inspect_uci_file(path));
        for (const auto& file : files) {
            if (file.header.num_words != files.front().header.num_words) {
                throw InputError(file.path, "vocabulary size W = " + std::to_string(file.header.num_words) +
                                                " differs from W = " +
                                                std::to_string(files.front().header.num_words) + " of " +
                                                files.front().path);
            }
        }
    });
    // Every rank read the headers itself: a file changed under the job, or nodes that see
    // different copies, would make ranks plan different pieces and run different numbers
    // of collectives later. Agree on what was read before anything depends on it.
    // (Every rank has one UciFile per path here: run_local_phase agreed that all succeeded.)
    std::vector<std::int64_t> low, high;
    for (const auto& file : files)
        low.insert(low.end(), {file.header.num_docs, file.header.num_words, file.header.num_nonzeros,
                               file.gzipped ? 1 : 0, file.data_begin, file.size_bytes});
    high = low;
    mpi::allreduce_inplace(comm, low, MPI_MIN);
    mpi::allreduce_inplace(comm, high, MPI_MAX);
    mpi::check_on_root(comm, "read", [&] {
        for (std::size_t f = 0; f < files.size(); ++f)
            for (std::size_t k = 6 * f; k < 6 * f + 6; ++k)
                if (low[k] != high[k])
                    throw InputError(files[f].path, "the ranks see different versions of this file (its header or "
                                                    "size differs between nodes, or it changed while being read)");
    });
    return files;
}

void check_uci_totals(const mpi::Comm& comm, const UciReader& reader) {
    const auto& files = reader.files();
    std::vector<std::int64_t> lines = reader.lines_per_file();
    mpi::allreduce_inplace(comm, lines, MPI_SUM);
    mpi::check_on_root(comm, "read", [&] {
        for (std::size_t f = 0; f < files.size(); ++f) {
            if (lines[f] != files[f].header.num_nonzeros) {
                throw InputError(files[f].path, "header says NNZ = " + std::to_string(files[f].header.num_nonzeros) +
                                                    " data lines, but the file has " + std::to_string(lines[f]));
            }
        }
    });
    // A document read by two ranks is not contiguous in its file: every rank ANDs its
    // own documents with the union of the lower ranks' (one exclusive scan).
    std::string overlap;
    for (std::size_t f = 0; f < files.size(); ++f) {
        // The maps grew to each rank's largest docID: the scan runs over the longest.
        const auto& mine = reader.doc_bitmaps()[f];
        const auto longest = static_cast<std::size_t>(mpi::allreduce_max(comm, static_cast<std::int64_t>(mine.size())));
        // Up to 1 GiB (a bit per docID): a rank that cannot have it says so, and no rank is
        // left waiting in the scan below for one that threw.
        std::vector<std::uint64_t> lower;
        mpi::run_local_phase(comm, "read", [&] {
            lower.assign(longest, 0);
            std::copy(mine.begin(), mine.end(), lower.begin());
        });
        mpi::exscan_inplace(comm, lower, MPI_BOR);
        for (std::size_t w = 0; w < mine.size() && overlap.empty(); ++w) {
            const std::uint64_t both = mine[w] & lower[w];
            if (both) {
                int bit = 0;
                while (!((both >> bit) & 1U)) ++bit;
                overlap = files[f].path + ": document " + std::to_string(w * 64 + static_cast<std::size_t>(bit)) +
                          " appears in two separate runs of lines: a document's lines must be contiguous";
            }
        }
    }
    mpi::agree_or_throw(comm, "read",
                        overlap.empty() ? std::string() : format_error(overlap, comm.rank(), comm.size(), "read"),
                        exit_code::input);
}

std::map<Index, std::vector<std::pair<Index, std::int64_t>>> read_documents(const std::string& path,
                                                                            const std::set<Index>& wanted) {
    std::map<Index, std::vector<std::pair<Index, std::int64_t>>> out;
    if (wanted.empty()) return out;
    const std::unique_ptr<detail::LineSource> source = detail::LineSource::open(path);
    detail::Line line;
    int header = 0;
    std::int64_t number = 0;
    while (source->next(line)) {
        ++number;
        if (header < 3) {  // D, W, NNZ
            ++header;
            continue;
        }
        const std::string_view text = line.text;
        if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
        std::int64_t field[3] = {0, 0, 0};
        const char* at = text.data();
        const char* end = text.data() + text.size();
        for (int f = 0; f < 3; ++f) {
            while (at < end && (*at == ' ' || *at == '\t')) ++at;
            const auto [next, error] = std::from_chars(at, end, field[f]);
            if (error != std::errc() || field[f] < (f == 2 ? 0 : 1))
                throw InputError(path + ":" + std::to_string(number), "not a line 'docID wordID count' of positive numbers");
            at = next;
            if (f == 0 && !wanted.count(field[0] - 1)) break;  // a document not asked for: skip the rest
        }
        if (wanted.count(field[0] - 1)) out[field[0] - 1].emplace_back(field[1] - 1, field[2]);
    }
    return out;
}

}  // namespace jsmf::corpus
