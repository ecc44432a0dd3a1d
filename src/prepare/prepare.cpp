// SPDX-License-Identifier: MIT
// `jsmf prepare`: raw documents to the UCI bag-of-words files, one function per pass.
#include "jsmf/prepare/prepare.hpp"

#include <mpi.h>
#include <zlib.h>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/map.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "jsmf/core/error.hpp"
#include "jsmf/io/output_path.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/mpi/file.hpp"
#include "jsmf/mpi/boost_comm.hpp"

namespace boost::serialization {
template <class Archive>
void serialize(Archive& ar, jsmf::prepare::InputFile& f, unsigned /*version*/) {
    ar & f.path & f.name & f.label & f.size;
}
}  // namespace boost::serialization

namespace jsmf::prepare {
namespace {
/// Consecutive lines of one user in a ratings file (a RawReader document), on their way to
/// the rank that gathers the user (group_ratings).
struct UserRun {
    std::string user, label;
    std::int32_t file = 0;      ///< index into the input files
    std::int64_t offset = 0;    ///< byte of its first line in that file
    std::int32_t reader = 0;    ///< the rank that read it
    std::vector<std::pair<std::string, std::uint32_t>> items;

    /// Input order: by file, then by place in it.
    bool before(const UserRun& other) const {
        return file != other.file ? file < other.file : offset < other.offset;
    }
    template <class Archive>
    void serialize(Archive& ar, unsigned /*version*/) {
        ar & user & label & file & offset & reader & items;
    }
};
}  // namespace
}  // namespace jsmf::prepare

namespace jsmf::prepare {
namespace fs = std::filesystem;

std::string docword_path(const std::string& d, const std::string& n, bool gzip) {
    return (fs::path(d) / ("docword." + n + ".txt" + (gzip ? ".gz" : ""))).string();
}
std::string vocab_path(const std::string& d, const std::string& n) { return (fs::path(d) / ("vocab." + n + ".txt")).string(); }
std::string doc_ids_path(const std::string& d, const std::string& n) { return (fs::path(d) / ("docs." + n + ".txt")).string(); }
std::string labels_path(const std::string& d, const std::string& n) { return (fs::path(d) / ("labels." + n + ".txt")).string(); }
std::string label_names_path(const std::string& d, const std::string& n) {
    return (fs::path(d) / ("labelnames." + n + ".txt")).string();
}
std::string manifest_path(const std::string& d, const std::string& n) { return (fs::path(d) / ("prepare." + n + ".json")).string(); }

namespace {

constexpr const char* kStage = "prepare";


/// Per-rank tallies of documents and tokens, summed over the ranks once, after pass 2.
struct Tally {
    std::int64_t docs_read = 0, docs_invalid = 0, docs_empty = 0, docs_short = 0, docs_kept = 0;
    std::int64_t tokens_read = 0, tokens_kept = 0, entries = 0, with_label = 0;

    /// Every member, in the order of the allreduced array.
    static constexpr std::array<std::int64_t Tally::*, 9> members() {
        return {&Tally::docs_read,   &Tally::docs_invalid, &Tally::docs_empty, &Tally::docs_short, &Tally::docs_kept,
                &Tally::tokens_read, &Tally::tokens_kept,  &Tally::entries,    &Tally::with_label};
    }

    /// Collective on `comm`. The sums over the ranks, on every rank: one allreduce of the
    /// members as one array.
    Tally summed(const mpi::Comm& comm) const {
        std::array<std::int64_t, members().size()> values{};
        for (std::size_t k = 0; k < values.size(); ++k) values[k] = this->*members()[k];
        mpi::allreduce_inplace(comm, values.data(), values.size(), MPI_SUM);
        Tally sums;
        for (std::size_t k = 0; k < values.size(); ++k) sums.*members()[k] = values[k];
        return sums;
    }
};

/// Turns a raw document into its tokens (text: ICU, stop words out; items: the ids).
class Terms {
public:
    explicit Terms(const PrepareOptions& o) : options_(o), tokenizer_(o.tokenizer) {
        if (!is_text_format(o.source.format)) return;
        if (o.english_stopwords) stop_.insert(english_stopwords().begin(), english_stopwords().end());
        if (!o.stopwords_file.empty())
            for (auto& w : read_stopwords(o.stopwords_file)) stop_.insert(std::move(w));
    }
    /// False when the document is skipped for invalid UTF-8 (InvalidUtf8::skip); throws
    /// InputError for it with InvalidUtf8::fail. `read` counts tokens before stop words.
    /// `repaired` says whether invalid UTF-8 was replaced.
    bool terms(const RawDocument& doc, std::vector<std::pair<std::string, std::uint32_t>>& out, std::int64_t& read,
               bool& repaired) {
        out.clear();
        read = 0;
        repaired = false;
        if (!is_text_format(options_.source.format)) {
            for (const auto& item : doc.items) read += item.second;
            out = doc.items;
            return true;
        }
        if (doc.invalid_utf8 >= 0 && options_.invalid_utf8 == InvalidUtf8::replace) {
            repaired = true;  // ICU reads each ill-formed sequence as U+FFFD
        } else if (doc.invalid_utf8 >= 0) {
            if (options_.invalid_utf8 == InvalidUtf8::fail)
                throw InputError(doc.path + ":" + std::to_string(line_number_at(doc.path, doc.invalid_utf8)),
                                 "invalid UTF-8 at byte " + std::to_string(doc.invalid_utf8) +
                                     " of the file (--invalid-utf8 skip drops such documents)");
            return false;
        }
        tokens_.clear();
        tokenizer_.tokenize(doc.text, tokens_);
        read = static_cast<std::int64_t>(tokens_.size());
        for (auto& token : tokens_)
            if (!stop_.count(token)) out.emplace_back(std::move(token), 1);
        return true;
    }
    /// Whether `word` can be counted at all: a text format's tokenizer makes it of itself,
    /// and it is no stop word (a fixed vocabulary from elsewhere may hold what these token
    /// rules never make: "1964" without keep_numbers, "the", a word below min_length).
    bool countable(const std::string& word) {
        if (!is_text_format(options_.source.format)) return true;
        tokens_.clear();
        tokenizer_.tokenize(word, tokens_);
        return tokens_.size() == 1 && tokens_.front() == word && !stop_.count(word);
    }

private:
    const PrepareOptions& options_;
    Tokenizer tokenizer_;
    std::unordered_set<std::string> stop_;
    std::vector<std::string> tokens_;
};

/// This rank's local parts, in the output folder: its kept documents' entries (binary
/// Entry records), their docword text, their ids and their labels.
struct PartPaths {
    std::string entries, docword, ids, labels;
};

/// Local. The part files of `rank`.
PartPaths part_paths(const PrepareOptions& o, int rank) {
    const std::string prefix =
        (fs::path(o.out_dir) / (".jsmf-prepare." + o.name + "." + std::to_string(rank))).string();
    return {prefix + ".entries", prefix + ".docword", prefix + ".ids", prefix + ".labels"};
}

/// The files a run writes. Each is written as partial(path) and renamed at the end.
struct OutputPaths {
    std::string docword, doc_ids, labels;          ///< every rank writes its part (MPI-IO)
    std::string vocabulary, label_names, manifest;  ///< rank 0 writes them
    explicit OutputPaths(const PrepareOptions& o)
        : docword(docword_path(o.out_dir, o.name, o.gzip)),
          doc_ids(doc_ids_path(o.out_dir, o.name)),
          labels(labels_path(o.out_dir, o.name)),
          vocabulary(vocab_path(o.out_dir, o.name)),
          label_names(label_names_path(o.out_dir, o.name)),
          manifest(manifest_path(o.out_dir, o.name)) {}
};

/// The name a file has until the run commits.
std::string partial(const std::string& path) { return path + ".partial"; }

/// Removes this run's temporary files unless committed: this rank's parts and, once
/// added, the partial outputs it may have written.
struct TempFiles {
    explicit TempFiles(PartPaths part_paths) : parts(std::move(part_paths)) {}
    TempFiles(const TempFiles&) = delete;
    TempFiles& operator=(const TempFiles&) = delete;
    ~TempFiles() {
        if (committed) return;
        remove_parts();
        std::error_code ec;
        for (const auto& p : partial_outputs) fs::remove(p, ec);
    }
    /// Every rank's partial outputs; on rank 0 its own ones too.
    void add_partial_outputs(const OutputPaths& out, bool is_root) {
        partial_outputs = {partial(out.docword), partial(out.doc_ids), partial(out.labels)};
        if (is_root)
            partial_outputs.insert(partial_outputs.end(),
                                   {partial(out.vocabulary), partial(out.label_names), partial(out.manifest)});
    }
    void remove_parts() const {
        std::error_code ec;
        for (const auto* p : {&parts.entries, &parts.docword, &parts.ids, &parts.labels}) fs::remove(*p, ec);
    }

    const PartPaths parts;
    std::vector<std::string> partial_outputs;
    bool committed = false;
};

/// Collective on `comm` (one exscan). The sum of `value` over the lower ranks (0 on rank 0).
std::int64_t sum_over_lower_ranks(const mpi::Comm& comm, std::int64_t value) {
    std::vector<std::int64_t> sum{value};
    mpi::exscan_inplace(comm, sum, MPI_SUM);
    return sum[0];
}

/// Local. The first non-empty string (empty when there is none).
std::string first_nonempty(const std::vector<std::string>& strings) {
    for (const auto& s : strings)
        if (!s.empty()) return s;
    return {};
}

/// Collective. Writes every rank's local file `part` into `path`, in rank order, with
/// MPI-IO at offsets from an exclusive scan of the part sizes. Throws StageFailed.
void write_concatenated(const mpi::Comm& comm, const std::string& path, const std::string& part) {
    std::error_code size_error;
    const auto part_size = static_cast<std::int64_t>(fs::file_size(part, size_error));
    mpi::agree_or_throw(comm, kStage,
                        size_error ? format_error(part + ": " + size_error.message(), comm.rank(), comm.size(), kStage)
                                   : std::string(),
                        exit_code::input);
    const std::int64_t offset = sum_over_lower_ranks(comm, part_size);
    std::string error;
    int code = 0;
    {
        mpi::File file = mpi::File::open_for_writing(comm, path, kStage);
        try {
            file.set_size(0);  // collective: an older, longer file goes
            std::ifstream in(part, std::ios::binary);
            std::vector<char> buffer(4 << 20);
            std::int64_t at = offset;
            while (in) {
                in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
                const auto got = static_cast<std::size_t>(in.gcount());
                if (got == 0) break;
                file.write_at(at, buffer.data(), got);
                at += static_cast<std::int64_t>(got);
            }
            if (in.bad()) throw InputError(part, "read error");
        } catch (const std::exception& e) {
            error = mpi::describe(e, kStage, comm);
            code = exit_code_of(e);
        }
    }  // closes the file (collective) before the agreement
    mpi::agree_or_throw(comm, kStage, error, code);
}

/// Writes text to a local part file, plain or as one gzip member.
class PartWriter {
public:
    PartWriter(const std::string& path, bool gzip) : path_(path), gzip_(gzip) {
        if (gzip_) {
            gz_ = gzopen(path.c_str(), "wb6");
            if (!gz_) throw InputError(path, "cannot create");
        } else {
            plain_.open(path, std::ios::binary | std::ios::trunc);
            if (!plain_) throw InputError(path, "cannot create");
        }
    }
    ~PartWriter() { if (gz_) gzclose(gz_); }
    void write(const std::string& text) {
        if (text.empty()) return;
        if (gzip_) {
            if (gzwrite(gz_, text.data(), static_cast<unsigned>(text.size())) != static_cast<int>(text.size()))
                throw InputError(path_, "write error");
        } else if (!plain_.write(text.data(), static_cast<std::streamsize>(text.size()))) {
            throw InputError(path_, "write error");
        }
    }
    void close() {
        if (gzip_) {
            const int rc = gzclose(gz_);
            gz_ = nullptr;
            if (rc != Z_OK) throw InputError(path_, "write error");
        } else {
            plain_.close();
            if (!plain_) throw InputError(path_, "write error");
        }
    }

private:
    std::string path_;
    bool gzip_;
    gzFile gz_ = nullptr;
    std::ofstream plain_;
};

/// One docword entry of a kept document, local document index (0-based).
struct Entry {
    std::uint32_t doc, word, count;
};

}  // namespace

std::map<std::string, std::string> read_item_names(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "cannot open the items file");
    std::map<std::string, std::string> names;
    std::string line;
    for (std::int64_t number = 1; std::getline(in, line); ++number) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        const auto fields = split_record(line);
        if (fields.size() < 2 || fields[0].empty() || fields[1].empty())
            throw InputError(path + ":" + std::to_string(number), "expected 'id<separator>name'");
        if (first_invalid_utf8(fields[1]) >= 0)
            throw InputError(path + ":" + std::to_string(number), "the name is not valid UTF-8 (it goes into the vocabulary)");
        names.emplace(fields[0], fields[1]);
    }
    return names;
}

namespace {

/// The vocabulary's lines: the words, or for items their names (made unique with " [id]").
std::vector<std::string> vocabulary_lines(const std::vector<Candidate>& chosen, const PrepareOptions& o) {
    std::vector<std::string> lines;
    for (const auto& c : chosen) lines.push_back(c.word);
    if (o.items_file.empty()) return lines;
    const auto names = read_item_names(o.items_file);
    std::map<std::string, int> uses;
    for (auto& line : lines)
        if (const auto found = names.find(line); found != names.end()) uses[found->second]++;
    for (auto& line : lines)
        if (const auto found = names.find(line); found != names.end())
            line = uses[found->second] > 1 ? found->second + " [" + line + "]" : found->second;
    return lines;
}

/// The input as every rank knows it after setup.
struct Inputs {
    std::vector<InputFile> files;
    std::map<std::string, std::string> labels;  ///< the labels file's: each document id's label
    std::vector<Piece> pieces;                  ///< this rank's share of the files
};

/// Setup, collective on `comm`. Rank 0 checks the options, creates the output folder, reads the
/// labels file and lists the input (check_on_root); the list and the labels are broadcast
/// (Boost.MPI); every rank plans its own pieces. Fills report.files and report.bytes.
/// (A fixed vocabulary is read and checked here too, before any pass over the documents.)
std::vector<std::string> fixed_vocabulary(const PrepareOptions& o);

Inputs check_options_and_list_input(const mpi::Comm& comm, const PrepareOptions& o, PrepareReport& report) {
    Inputs in;
    mpi::check_on_root(comm, kStage, [&] {
        if (o.out_dir.empty()) throw OptionError("{out}: no output directory given");
        if (o.name.empty() || o.name.find('/') != std::string::npos)
            throw OptionError("{name} must be a plain name, got '" + OptionError::quote(o.name) + "'");
        // Every file it will write: absent or regular (never a device or FIFO renamed over).
        std::vector<std::string> outputs;
        for (const std::string& path :
             {docword_path(".", o.name, o.gzip), vocab_path(".", o.name), doc_ids_path(".", o.name),
              labels_path(".", o.name), label_names_path(".", o.name), manifest_path(".", o.name)})
            outputs.push_back(fs::path(path).filename().string());
        io::check_output_folder(o.out_dir, outputs);
        (void)io::create_output_folder(o.out_dir);  // run_prepare removes it again if it fails
        if (o.buffer_mb <= 0) throw OptionError("{buffer_mb} must be positive");
        if (o.curation.max_df_fraction <= 0 || o.curation.max_df_fraction > 1)
            throw OptionError("{max_df} must be in (0, 1]");
        if (!o.items_file.empty() && is_text_format(o.source.format))
            throw OptionError("{items} names the items of {format} ratings or playlists");
        if (!o.items_file.empty()) (void)read_item_names(o.items_file);
        if (!o.vocabulary_file.empty() && !o.vocabulary.empty())
            throw InternalError("prepare: a vocabulary file and a vocabulary given both");
        if ((!o.vocabulary_file.empty() || !o.vocabulary.empty()) && !o.items_file.empty())
            throw OptionError("{vocab} fixes the words as the vocabulary file lists them: {items} would rename them");
        if (!o.vocabulary_file.empty() || !o.vocabulary.empty()) (void)fixed_vocabulary(o);  // before the first pass
        if (!o.source.labels_file.empty()) in.labels = read_label_file(o.source.labels_file);
        in.files = list_input_files(o.source);
    });
    boost::mpi::broadcast(mpi::boost_comm(comm), in.files, 0);
    boost::mpi::broadcast(mpi::boost_comm(comm), in.labels, 0);
    report.files = static_cast<std::int64_t>(in.files.size());
    for (const auto& f : in.files) report.bytes += f.size;
    in.pieces = plan_pieces(in.files, o.source.format, comm.rank(), comm.size());
    return in;
}

/// Collective on `comm`. Every rank builds its tokenizer and reads the stop words
/// (run_local_phase).
std::unique_ptr<Terms> make_terms(const mpi::Comm& comm, const PrepareOptions& o) {
    std::unique_ptr<Terms> terms;
    mpi::run_local_phase(comm, kStage, [&] { terms = std::make_unique<Terms>(o); });
    return terms;
}

/// Ratings, collective on `comm`: every user's lines gathered into one document, wherever
/// they are in the input (MovieLens' u.data, Netflix' and Last.fm's dumps are not grouped by
/// user). Each rank reads its pieces (runs of one user's consecutive lines, as RawReader
/// gives them) and sends each run to the user's owner by hash; each owner joins a user's
/// runs in input order and sends the user to the rank that read its first line, which sorts
/// its users by that line. So the documents come in order of each user's first line, on
/// the rank that reads it, as with grouped input, and do not depend on the rank count.
/// Two all-to-all exchanges (Boost.MPI); memory: the ratings are held, spread over the
/// ranks, twice during an exchange (about 250 bytes per rating when every line is a run).
std::vector<RawDocument> group_ratings(const mpi::Comm& comm, const PrepareOptions& o, const Inputs& in) {
    const auto ranks = static_cast<std::size_t>(comm.size());
    std::vector<std::vector<UserRun>> outgoing(ranks), incoming;
    mpi::run_local_phase(comm, kStage, [&] {
        std::unordered_map<std::string, std::int32_t> file_index;
        for (std::size_t f = 0; f < in.files.size(); ++f) file_index.emplace(in.files[f].path, static_cast<std::int32_t>(f));
        RawReader reader(o.source, in.files, in.pieces, in.labels);
        RawDocument doc;
        while (reader.next(doc)) {
            UserRun run{doc.id, doc.label, file_index.at(doc.path), doc.offset, comm.rank(), std::move(doc.items)};
            outgoing[static_cast<std::size_t>(DistributedCounts::owner(run.user, comm.size()))].push_back(std::move(run));
        }
    });
    boost::mpi::all_to_all(mpi::boost_comm(comm), outgoing, incoming);
    for (auto& part : outgoing) std::vector<UserRun>().swap(part);

    // The owner: each user's runs joined, in input order.
    std::vector<UserRun> runs;
    for (auto& part : incoming) {
        runs.insert(runs.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
        std::vector<UserRun>().swap(part);
    }
    std::sort(runs.begin(), runs.end(), [](const UserRun& a, const UserRun& b) {
        return a.user != b.user ? a.user < b.user : a.before(b);
    });
    for (std::size_t k = 0; k < runs.size();) {
        UserRun& user = runs[k];
        std::size_t next = k + 1;
        for (; next < runs.size() && runs[next].user == user.user; ++next)
            user.items.insert(user.items.end(), runs[next].items.begin(), runs[next].items.end());
        const auto reader = static_cast<std::size_t>(user.reader);
        outgoing[reader].push_back(std::move(user));
        k = next;
    }
    std::vector<UserRun>().swap(runs);
    boost::mpi::all_to_all(mpi::boost_comm(comm), outgoing, incoming);

    // The reader of each user's first line: its users in input order.
    for (auto& part : incoming)
        runs.insert(runs.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    std::sort(runs.begin(), runs.end(), [](const UserRun& a, const UserRun& b) { return a.before(b); });
    std::vector<RawDocument> documents(runs.size());
    for (std::size_t k = 0; k < runs.size(); ++k) {
        RawDocument& d = documents[k];
        d.id = std::move(runs[k].user);
        d.label = std::move(runs[k].label);
        d.items = std::move(runs[k].items);
        d.path = in.files[static_cast<std::size_t>(runs[k].file)].path;
        d.offset = runs[k].offset;
        d.where = d.path + " (the user's first line, at byte " + std::to_string(d.offset) + ")";
    }
    return documents;
}

/// A rank's raw documents in input order: read from its pieces, or the users group_ratings
/// gathered (ratings).
class DocumentSource {
public:
    DocumentSource(const PrepareOptions& o, const Inputs& in, const std::vector<RawDocument>* grouped)
        : grouped_(grouped), reader_(o.source, in.files, in.pieces, in.labels) {}  // no I/O until next()
    bool next(RawDocument& doc) {
        if (!grouped_) return reader_.next(doc);
        if (next_ == grouped_->size()) return false;
        doc = (*grouped_)[next_++];
        return true;
    }
    /// Line formats: per file, the lines this rank read (zeros for grouped users, whose
    /// ids are their own).
    std::vector<std::int64_t> owned_lines() const {
        return grouped_ ? std::vector<std::int64_t>(reader_.owned_lines().size(), 0) : reader_.owned_lines();
    }
    void set_first_lines(std::vector<std::int64_t> first_lines) { reader_.set_first_lines(std::move(first_lines)); }

private:
    const std::vector<RawDocument>* grouped_;
    std::size_t next_ = 0;
    RawReader reader_;
};

/// What pass 1 leaves for the rest of the run.
struct WordCountPass {
    std::uint64_t num_docs = 0;             ///< documents with a token left, over all ranks
    std::string first_invalid;              ///< this rank's first skipped or repaired document
    std::vector<std::int64_t> first_lines;  ///< per file: the number of this rank's first line
};

/// Local. Pass 1 between two exchanges: reads, tokenizes and counts documents until the
/// outgoing buffer holds `budget` bytes (true) or the input ends (false).
bool count_until_buffer_full(DocumentSource& reader, Terms& terms, DistributedCounts& counts, std::size_t budget,
                             Tally& tally, std::int64_t& nonempty_docs, std::string& first_invalid) {
    RawDocument doc;
    std::vector<std::pair<std::string, std::uint32_t>> doc_terms;
    while (counts.buffered_bytes() < budget) {
        if (!reader.next(doc)) return false;
        ++tally.docs_read;
        std::int64_t read = 0;
        bool repaired = false;
        const bool usable = terms.terms(doc, doc_terms, read, repaired);
        if (!usable || repaired) {
            ++tally.docs_invalid;
            if (first_invalid.empty()) first_invalid = doc.path + " (byte " + std::to_string(doc.invalid_utf8) + ")";
            if (!usable) continue;
        }
        tally.tokens_read += read;
        if (doc_terms.empty()) {
            ++tally.docs_empty;
            continue;
        }
        ++nonempty_docs;
        counts.add_items(doc_terms);
    }
    return true;
}

/// Pass 1, count: collective on `comm`. Rounds of local reading until a rank's buffer is full
/// or its input ends; each round the ranks agree on failures (run_local_phase), send the counts
/// to the words' owners (DistributedCounts::exchange) and agree whether any has more
/// (allreduce). Then an exscan of the lines each rank owns per file (pass 2's line numbers) and
/// an allreduce of the non-empty documents.
WordCountPass count_words(const mpi::Comm& comm, const PrepareOptions& o, const Inputs& in,
                          const std::vector<RawDocument>* grouped, Terms& terms, DistributedCounts& counts, Tally& tally) {
    WordCountPass pass;
    std::int64_t nonempty_docs = 0;
    {
        DocumentSource reader(o, in, grouped);
        const auto budget = static_cast<std::size_t>(o.buffer_mb * 1024 * 1024);
        bool more = true;
        do {
            mpi::run_local_phase(comm, kStage, [&] {
                if (more)
                    more = count_until_buffer_full(reader, terms, counts, budget, tally, nonempty_docs,
                                                   pass.first_invalid);
            });
            counts.exchange();
        } while (mpi::allreduce_max(comm, more ? 1 : 0) != 0);
        pass.first_lines = reader.owned_lines();
    }
    mpi::exscan_inplace(comm, pass.first_lines, MPI_SUM);
    for (auto& first : pass.first_lines) first += 1;
    pass.num_docs = static_cast<std::uint64_t>(mpi::allreduce_sum(comm, nonempty_docs));
    return pass;
}

/// The vocabulary, collective on `comm`. Two allreduces count the distinct words and those
/// passing the df filters (owned by hash, so each once); choose_vocabulary gathers the best
/// candidates to rank 0 and broadcasts its choice; rank 0 checks it is not empty
/// (check_on_root). Fills report.distinct_words, words_passing_df and vocabulary.
std::vector<Candidate> choose_words(const mpi::Comm& comm, const PrepareOptions& o, const CountTable& owned,
                                    std::uint64_t num_docs, PrepareReport& report) {
    report.distinct_words = mpi::allreduce_sum(comm, static_cast<std::int64_t>(owned.size()));
    std::int64_t passing = 0;
    const double max_df = o.curation.max_df_fraction * static_cast<double>(num_docs);
    for (const auto& [word, c] : owned)
        passing += (c.df >= o.curation.min_df && static_cast<double>(c.df) <= max_df) ? 1 : 0;
    report.words_passing_df = mpi::allreduce_sum(comm, passing);
    std::vector<Candidate> chosen = choose_vocabulary(comm, owned, num_docs, o.curation);
    report.vocabulary = static_cast<std::int64_t>(chosen.size());
    mpi::check_on_root(comm, kStage, [&] {
        if (chosen.empty())
            throw OptionError("no word is left after curation (" + std::to_string(num_docs) + " non-empty documents, " +
                             std::to_string(report.distinct_words) + " distinct words before {min_df} " +
                             std::to_string(o.curation.min_df) + " and {max_df})");
    });
    return chosen;
}

/// Local. The fixed vocabulary's words (prepare --vocab: the file's lines; fit --text
/// --update: the base's), checked: none empty or with a space, none twice.
std::vector<std::string> fixed_vocabulary(const PrepareOptions& o) {
    std::vector<std::string> words = o.vocabulary;
    const std::string where = !o.vocabulary_file.empty()   ? o.vocabulary_file
                              : !o.vocabulary_source.empty() ? o.vocabulary_source
                                                             : std::string("the vocabulary given");
    if (!o.vocabulary_file.empty()) {
        std::ifstream in(o.vocabulary_file, std::ios::binary);
        if (!in) throw InputError(o.vocabulary_file, "cannot open the vocabulary");
        for (std::string line; std::getline(in, line);) {
            if (!line.empty() && line.back() == '\r') line.pop_back();
            words.push_back(line);
        }
        if (in.bad()) throw InputError(o.vocabulary_file, "cannot read the vocabulary");
        while (!words.empty() && words.back().empty()) words.pop_back();  // a trailing blank line
    }
    if (words.empty()) throw InputError(where, "holds no word");
    std::unordered_map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (words[i].empty() || words[i].find_first_of(" \t") != std::string::npos)
            throw InputError(where, fmt::format("word {} is {}: one word a line, as jsmf prepare writes it", i + 1,
                                                words[i].empty() ? "empty" : "'" + words[i] + "', with a space"));
        if (const auto [at, fresh] = seen.emplace(words[i], i); !fresh)
            throw InputError(where, fmt::format("lists '{}' twice (words {} and {})", words[i], at->second + 1, i + 1));
    }
    return words;
}

/// The fixed vocabulary in place of choose_words, collective on `comm`: rank 0 reads and
/// checks it (check_on_root) and broadcasts it. Fills report.distinct_words,
/// words_passing_df (here: the vocabulary's words the documents hold) and vocabulary, and
/// on rank 0 the words these token rules never count (Terms::countable).
std::vector<Candidate> fixed_words(const mpi::Comm& comm, const PrepareOptions& o, const CountTable& owned,
                                   Terms& terms, PrepareReport& report) {
    std::vector<std::string> words;
    mpi::check_on_root(comm, kStage, [&] {
        words = fixed_vocabulary(o);
        for (const auto& w : words)
            if (!terms.countable(w)) {
                if (report.uncountable_examples.size() < 5) report.uncountable_examples.push_back(w);
                ++report.uncountable_words;
            }
    });
    boost::mpi::broadcast(mpi::boost_comm(comm), words, 0);
    report.distinct_words = mpi::allreduce_sum(comm, static_cast<std::int64_t>(owned.size()));
    std::int64_t found = 0;  // each word is owned by one rank (by hash): counted once
    for (const auto& w : words) found += owned.count(w) > 0 ? 1 : 0;
    report.words_passing_df = mpi::allreduce_sum(comm, found);
    report.vocabulary = static_cast<std::int64_t>(words.size());
    std::vector<Candidate> chosen(words.size());
    for (std::size_t i = 0; i < words.size(); ++i) chosen[i].word = std::move(words[i]);
    return chosen;
}

/// A document's id as read, for the duplicate check: (id, (its place in the input order, where)).
using SeenId = std::pair<std::string, std::pair<std::int64_t, std::string>>;

/// What pass 2 leaves besides this rank's parts.
struct KeptDocuments {
    std::map<std::string, std::int32_t> label_index;  ///< each of label_names' place
    std::vector<std::string> label_names;             ///< this rank's labels, in order of first use
    std::vector<std::int32_t> labels;                 ///< per kept document: index into label_names, -1: none
    std::string first_unlabelled;                     ///< this rank's first kept document without a label
    /// Every document's id. Ids repeat in JSON Lines and among files of the same name under
    /// two inputs (ratings' users are gathered before, so each is one document).
    std::vector<SeenId> ids;

    /// Local. Records a kept document's label (or that it has none).
    void add_label(const RawDocument& doc) {
        if (doc.label.empty()) {
            labels.push_back(-1);
            if (first_unlabelled.empty()) first_unlabelled = doc.id;
            return;
        }
        auto [it, fresh] = label_index.try_emplace(doc.label, static_cast<std::int32_t>(label_names.size()));
        if (fresh) label_names.push_back(doc.label);
        labels.push_back(it->second);
    }
};

/// Local. The document's vocabulary words as (word id, count) in `bag`; returns their tokens.
std::int64_t vocabulary_bag(const RawDocument& doc, const std::vector<std::pair<std::string, std::uint32_t>>& doc_terms,
                            const std::unordered_map<std::string, std::uint32_t>& word_id,
                            std::map<std::uint32_t, std::uint32_t>& bag) {
    bag.clear();
    std::int64_t tokens = 0;
    for (const auto& [term, repeats] : doc_terms)
        if (const auto found = word_id.find(term); found != word_id.end()) {
            std::uint32_t& count = bag[found->second];
            if (count > UINT32_MAX - repeats)  // the UCI format's counts, and jsmf's, are 32-bit
                throw InputError(doc.where, "document '" + doc.id + "' holds '" + term + "' more than 2^32 - 1 times");
            count += repeats;
            tokens += repeats;
        }
    return tokens;
}

/// Local. Throws InputError when the document's id or label would break its line in the outputs.
void check_no_line_break(const RawDocument& doc) {
    for (const std::string* field : {&doc.id, &doc.label})
        if (field->find_first_of("\r\n") != std::string::npos)
            throw InputError(doc.where, std::string(field == &doc.id ? "a document id" : "a label") +
                                            " may not contain a line break");
}

/// Pass 2, keep: collective on `comm`. An exscan numbers the documents in input order; then
/// every rank reads its share again (run_local_phase), keeps the vocabulary's words, drops
/// documents shorter than min_doc_tokens, and writes its kept documents' entries and ids to its
/// parts.
KeptDocuments write_kept_documents(const mpi::Comm& comm, const PrepareOptions& o, const Inputs& in,
                                   const std::vector<RawDocument>* grouped, Terms& terms,
                                   const std::vector<Candidate>& chosen, const std::vector<std::int64_t>& first_lines,
                                   const PartPaths& parts, Tally& tally) {
    std::unordered_map<std::string, std::uint32_t> word_id;
    for (std::size_t i = 0; i < chosen.size(); ++i) word_id.emplace(chosen[i].word, static_cast<std::uint32_t>(i));
    KeptDocuments kept;
    const std::int64_t first_read = sum_over_lower_ranks(comm, tally.docs_read);
    mpi::run_local_phase(comm, kStage, [&] {
        DocumentSource reader(o, in, grouped);
        reader.set_first_lines(first_lines);
        std::ofstream entries(parts.entries, std::ios::binary | std::ios::trunc);
        PartWriter ids(parts.ids, false);
        if (!entries) throw InputError(parts.entries, "cannot create");
        RawDocument doc;
        std::vector<std::pair<std::string, std::uint32_t>> doc_terms;
        std::map<std::uint32_t, std::uint32_t> bag;
        while (reader.next(doc)) {
            kept.ids.push_back({doc.id, {first_read + static_cast<std::int64_t>(kept.ids.size()), doc.where}});
            std::int64_t read = 0;
            bool repaired = false;
            if (!terms.terms(doc, doc_terms, read, repaired) || doc_terms.empty()) continue;  // counted in pass 1
            const std::int64_t tokens = vocabulary_bag(doc, doc_terms, word_id, bag);
            if (tokens < static_cast<std::int64_t>(o.min_doc_tokens)) {
                ++tally.docs_short;
                continue;
            }
            const auto local = static_cast<std::uint32_t>(tally.docs_kept++);
            tally.tokens_kept += tokens;
            for (const auto& [word, count] : bag) {
                const Entry e{local, word, count};
                entries.write(reinterpret_cast<const char*>(&e), sizeof e);
                ++tally.entries;
            }
            check_no_line_break(doc);
            ids.write(doc.id + "\n");
            if (!doc.label.empty()) ++tally.with_label;
            kept.add_label(doc);
        }
        entries.close();
        if (!entries) throw InputError(parts.entries, "write error");
        ids.close();
    });
    return kept;
}

/// Duplicate ids, collective on `comm`. Every rank sends each id to its owner by hash
/// (Boost.MPI all_to_all); each owner sorts the ids it receives by id, then input order, and
/// reports the first repeat (run_local_phase).
void check_unique_ids(const mpi::Comm& comm, std::vector<SeenId> ids) {
    std::vector<std::vector<SeenId>> outgoing(static_cast<std::size_t>(comm.size())), incoming;
    for (auto& entry : ids) {
        const auto owner = static_cast<std::size_t>(DistributedCounts::owner(entry.first, comm.size()));
        outgoing[owner].push_back(std::move(entry));
    }
    std::vector<SeenId>().swap(ids);
    boost::mpi::all_to_all(mpi::boost_comm(comm), outgoing, incoming);
    mpi::run_local_phase(comm, kStage, [&] {
        std::vector<SeenId> mine;
        for (auto& part : incoming) mine.insert(mine.end(), part.begin(), part.end());
        std::sort(mine.begin(), mine.end(), [](const SeenId& a, const SeenId& b) {
            return a.first != b.first ? a.first < b.first : a.second.first < b.second.first;
        });
        for (std::size_t i = 1; i < mine.size(); ++i) {
            if (mine[i].first != mine[i - 1].first) continue;
            const std::string& here = mine[i].second.second;
            const std::string& before = mine[i - 1].second.second;
            throw InputError(here, "document id '" + mine[i].first + "' again (also " + before +
                                       "; files of the same name under two inputs have the same ids)");
        }
    });
}

/// Totals, collective on `comm`. The tallies are summed (one allreduce) and each rank's first
/// unlabelled document gathered to rank 0, which checks that a document is kept and that every
/// kept document has a label or none has (check_on_root). Fills the report's document, token
/// and entry counts; returns the sums.
Tally sum_and_check_totals(const mpi::Comm& comm, const PrepareOptions& o, const Tally& tally,
                           const std::string& first_unlabelled, PrepareReport& report) {
    const Tally sums = tally.summed(comm);
    report.docs_read = sums.docs_read;
    report.docs_invalid_utf8 = sums.docs_invalid;
    report.docs_empty = sums.docs_empty;
    report.docs_short = sums.docs_short;
    report.docs_kept = sums.docs_kept;
    report.tokens_read = sums.tokens_read;
    report.tokens_kept = sums.tokens_kept;
    report.entries = sums.entries;
    const std::string unlabelled_example = first_nonempty(mpi::gather_strings(comm, first_unlabelled, 0));
    mpi::check_on_root(comm, kStage, [&] {
        if (report.docs_kept == 0)
            throw OptionError("no document has " + std::to_string(o.min_doc_tokens) +
                             " tokens or more after curation ({min_doc_tokens})");
        if (sums.with_label > 0 && sums.with_label < report.docs_kept)
            throw InputError(std::to_string(report.docs_kept - sums.with_label) + " of " +
                             std::to_string(report.docs_kept) + " kept documents have no label, e.g. '" +
                             unlabelled_example + "' (labels come for every document or none)");
    });
    return sums;
}

/// Collective on `comm`. The label names, sorted: label k + 1 is the k-th. Only when a document
/// has a label (`with_label`, the same sum on every rank): every rank's labels gathered to rank
/// 0 (Boost.MPI gather), which sorts them, then broadcast. Fills report.labels.
std::vector<std::string> share_label_names(const mpi::Comm& comm, std::int64_t with_label,
                                           const std::vector<std::string>& local_names, PrepareReport& report) {
    std::vector<std::string> label_names;
    if (with_label == 0) return label_names;
    std::vector<std::vector<std::string>> gathered;
    boost::mpi::gather(mpi::boost_comm(comm), local_names, gathered, 0);
    if (comm.is_root()) {
        for (const auto& part : gathered) label_names.insert(label_names.end(), part.begin(), part.end());
        std::sort(label_names.begin(), label_names.end());
        label_names.erase(std::unique(label_names.begin(), label_names.end()), label_names.end());
    }
    mpi::broadcast(comm, label_names, 0);
    report.labels = static_cast<std::int64_t>(label_names.size());
    return label_names;
}

/// Local. This rank's docword part: its entries as text, documents numbered from
/// `first_doc`; rank 0's part starts with the header D, W, NNZ.
void write_docword_part(const mpi::Comm& comm, const PrepareOptions& o, const PrepareReport& report,
                        std::int64_t first_doc, const PartPaths& parts) {
    PartWriter out(parts.docword, o.gzip);
    if (comm.is_root())
        out.write(std::to_string(report.docs_kept) + "\n" + std::to_string(report.vocabulary) + "\n" +
                  std::to_string(report.entries) + "\n");
    std::ifstream entries(parts.entries, std::ios::binary);
    std::string text;
    Entry e{};
    while (entries.read(reinterpret_cast<char*>(&e), sizeof e)) {
        text += std::to_string(first_doc + e.doc + 1);
        text += ' ';
        text += std::to_string(e.word + 1);
        text += ' ';
        text += std::to_string(e.count);
        text += '\n';
        if (text.size() > (1u << 20)) {
            out.write(text);
            text.clear();
        }
    }
    out.write(text);
    out.close();
}

/// Local. This rank's labels part: each kept document's label number (empty without labels).
void write_labels_part(const KeptDocuments& kept, const std::vector<std::string>& label_names, const PartPaths& parts) {
    PartWriter out(parts.labels, false);
    if (!label_names.empty()) {
        std::vector<std::int32_t> global(kept.label_names.size());
        for (std::size_t k = 0; k < kept.label_names.size(); ++k)
            global[k] = static_cast<std::int32_t>(std::lower_bound(label_names.begin(), label_names.end(),
                                                                   kept.label_names[k]) -
                                                  label_names.begin() + 1);
        std::string text;
        for (const std::int32_t l : kept.labels) text += std::to_string(global[static_cast<std::size_t>(l)]) + "\n";
        out.write(text);
    }
    out.close();
}

/// The shared files, collective on `comm`. Every rank writes its docword and labels parts
/// (run_local_phase), then each output every rank shares is the concatenation of the parts
/// (write_concatenated: MPI-IO); the labels only when there are labels (the same on every
/// rank).
void write_shared_outputs(const mpi::Comm& comm, const PrepareOptions& o, const PrepareReport& report,
                          std::int64_t first_doc, const KeptDocuments& kept,
                          const std::vector<std::string>& label_names, const OutputPaths& out, const PartPaths& parts) {
    mpi::run_local_phase(comm, kStage, [&] {
        write_docword_part(comm, o, report, first_doc, parts);
        write_labels_part(kept, label_names, parts);
    });
    write_concatenated(comm, partial(out.docword), parts.docword);
    write_concatenated(comm, partial(out.doc_ids), parts.ids);
    if (!label_names.empty()) write_concatenated(comm, partial(out.labels), parts.labels);
}

/// Local. Writes `lines`, one a line, to `path`.
void write_lines(const std::string& path, const std::vector<std::string>& lines) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    for (const auto& l : lines) out << l << '\n';
    out.close();
    if (!out) throw InputError(path, "write error");
}

/// Local. The manifest: the files' names, the counts and the options.
nlohmann::json manifest_json(const PrepareOptions& o, const OutputPaths& out, const PrepareReport& report,
                             bool with_labels) {
    auto file_name = [](const std::string& path) { return fs::path(path).filename().string(); };
    return {{"jsmf_prepare", 1},
            {"name", o.name},
            {"format", name_of(o.source.format)},
            {"docword", file_name(out.docword)},
            {"vocab", file_name(out.vocabulary)},
            {"docs", file_name(out.doc_ids)},
            {"labels", with_labels ? file_name(out.labels) : ""},
            {"labelnames", with_labels ? file_name(out.label_names) : ""},
            {"documents", report.docs_kept},
            {"words", report.vocabulary},
            {"entries", report.entries},
            {"tokens", report.tokens_kept},
            {"documents_read", report.docs_read},
            {"documents_invalid_utf8", report.docs_invalid_utf8},
            {"documents_empty", report.docs_empty},
            {"documents_short", report.docs_short},
            {"distinct_words", report.distinct_words},
            {"words_passing_df", report.words_passing_df},
            {"options",
             {{"vocabulary", o.vocabulary_file.empty() && o.vocabulary.empty()
                                 ? std::string("chosen: the df filters, then the top max_words by tf-idf")
                                 : "fixed: " + (!o.vocabulary_file.empty()     ? o.vocabulary_file
                                                : !o.vocabulary_source.empty() ? o.vocabulary_source
                                                                               : std::string("given"))},
              {"min_df", o.curation.min_df},
              {"max_df", o.curation.max_df_fraction},
              {"max_words", o.curation.max_words},
              {"min_doc_tokens", o.min_doc_tokens},
              {"english_stopwords", o.english_stopwords},
              {"stopwords_file", o.stopwords_file},
              {"keep_numbers", o.tokenizer.keep_numbers},
              {"min_length", o.tokenizer.min_length},
              {"invalid_utf8", name_of(o.invalid_utf8)},
              {"tfidf", "tf(w) * ln(floor(D / df(w))), tf over the corpus (moontae/JSMF readBows.m)"}}}};
}

/// The commit, collective on `comm`. Rank 0 writes the vocabulary, the label names and the
/// manifest, then renames every partial output to its name and removes an earlier run's labels
/// when this run has none (check_on_root). Fills report.outputs on rank 0.
void write_root_outputs_and_rename(const mpi::Comm& comm, const PrepareOptions& o, const OutputPaths& out,
                                   const std::vector<Candidate>& chosen, const std::vector<std::string>& label_names,
                                   PrepareReport& report) {
    mpi::check_on_root(comm, kStage, [&] {
        const bool with_labels = !label_names.empty();
        write_lines(partial(out.vocabulary), vocabulary_lines(chosen, o));
        if (with_labels) write_lines(partial(out.label_names), label_names);
        std::ofstream manifest(partial(out.manifest), std::ios::binary | std::ios::trunc);
        manifest << manifest_json(o, out, report, with_labels).dump(2) << '\n';
        manifest.close();
        if (!manifest) throw InputError(out.manifest, "write error");
        for (const auto* path :
             {&out.docword, &out.doc_ids, &out.labels, &out.vocabulary, &out.label_names, &out.manifest})
            if (with_labels || (path != &out.labels && path != &out.label_names)) fs::rename(partial(*path), *path);
        if (!with_labels)  // an earlier run's labels would no longer match
            for (const auto& stale : {out.labels, out.label_names}) fs::remove(stale);
        report.outputs = {out.docword, out.vocabulary, out.doc_ids};
        if (with_labels) report.outputs.insert(report.outputs.end(), {out.labels, out.label_names});
        report.outputs.push_back(out.manifest);
    });
}

}  // namespace

namespace {
PrepareReport prepare_into_folder(const mpi::Comm& comm, const PrepareOptions& o);
}  // namespace

PrepareReport run_prepare(const mpi::Comm& comm, const PrepareOptions& o) {
    // The folders this run creates (the output and its missing parents) go again if the
    // run fails and leaves them empty.
    std::string outermost;  // rank 0: the first folder on the way that is missing now
    if (comm.is_root() && !o.out_dir.empty()) {
        std::error_code ec;
        for (fs::path at = fs::absolute(o.out_dir, ec); !at.empty() && !fs::exists(at, ec); at = at.parent_path()) {
            outermost = at.string();
            if (at == at.parent_path()) break;
        }
    }
    try {
        return prepare_into_folder(comm, o);
    } catch (...) {
        std::error_code ec;
        if (comm.is_root() && !outermost.empty()) io::remove_created_folder(fs::absolute(o.out_dir, ec).string(), outermost);
        throw;
    }
}

namespace {
PrepareReport prepare_into_folder(const mpi::Comm& comm, const PrepareOptions& o) {
    Stopwatch total;
    PrepareReport report;
    const Inputs in = check_options_and_list_input(comm, o, report);
    const std::unique_ptr<Terms> terms = make_terms(comm, o);

    Stopwatch clock;
    Tally tally;
    DistributedCounts counts(comm);
    std::vector<RawDocument> users;  // ratings: every user's lines together
    if (o.source.format == Format::ratings) users = group_ratings(comm, o, in);
    const std::vector<RawDocument>* grouped = o.source.format == Format::ratings ? &users : nullptr;
    const WordCountPass counted = count_words(comm, o, in, grouped, *terms, counts, tally);
    const bool fixed = !o.vocabulary_file.empty() || !o.vocabulary.empty();
    const std::vector<Candidate> chosen = fixed ? fixed_words(comm, o, counts.owned(), *terms, report)
                                                : choose_words(comm, o, counts.owned(), counted.num_docs, report);
    report.count_seconds = clock.seconds();

    clock.restart();
    TempFiles temp(part_paths(o, comm.rank()));
    KeptDocuments kept = write_kept_documents(comm, o, in, grouped, *terms, chosen, counted.first_lines, temp.parts, tally);
    std::vector<RawDocument>().swap(users);
    check_unique_ids(comm, std::move(kept.ids));
    const Tally sums = sum_and_check_totals(comm, o, tally, kept.first_unlabelled, report);
    const std::vector<std::string> label_names = share_label_names(comm, sums.with_label, kept.label_names, report);
    const std::int64_t first_doc = sum_over_lower_ranks(comm, tally.docs_kept);
    const OutputPaths out(o);
    temp.add_partial_outputs(out, comm.is_root());
    write_shared_outputs(comm, o, report, first_doc, kept, label_names, out, temp.parts);
    report.write_seconds = clock.seconds();
    report.total_seconds = total.seconds();
    report.peak_rss_bytes = mpi::allreduce_max(comm, peak_rss_bytes());
    report.first_invalid = first_nonempty(mpi::gather_strings(comm, counted.first_invalid, 0));
    temp.remove_parts();  // this rank's parts are copied: they go before the last collective step
    write_root_outputs_and_rename(comm, o, out, chosen, label_names, report);
    temp.committed = true;  // the parts went before the renames
    return report;
}
}  // namespace

PreparedCorpus find_prepared(const std::string& dir, const std::string& name) {
    std::string manifest;
    if (!name.empty()) {
        manifest = manifest_path(dir, name);
        if (!fs::exists(manifest)) throw InputError(manifest, "no such file (not a folder written by jsmf prepare --name " + name + ")");
    } else {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            const std::string file = entry.path().filename().string();
            if (file.rfind("prepare.", 0) == 0 && file.size() > 13 && file.substr(file.size() - 5) == ".json") {
                if (!manifest.empty()) throw InputError(dir, "holds several prepared corpora: say which with --name");
                manifest = entry.path().string();
            }
        }
        if (ec) throw InputError(dir, "cannot list the folder: " + ec.message());
        if (manifest.empty()) throw InputError(dir, "holds no prepare.<name>.json (not a folder written by jsmf prepare)");
    }
    nlohmann::json m;
    try {
        std::ifstream in(manifest);
        m = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
        throw InputError(manifest, std::string("not a jsmf prepare manifest: ") + e.what());
    }
    PreparedCorpus out;
    auto file = [&](const char* key, bool required) -> std::string {
        const auto found = m.is_object() ? m.find(key) : m.end();
        if (found != m.end() && !found->is_string())
            throw InputError(manifest, std::string("its ") + key + " is not a file name (a string)");
        const std::string value = found != m.end() ? found->get<std::string>() : std::string();
        if (value.empty()) {
            if (required) throw InputError(manifest, std::string("names no ") + key + " file");
            return {};
        }
        const std::string path = (fs::path(dir) / value).string();
        std::error_code ec;  // a name too long, a folder not searchable: not there for jsmf either
        if (!fs::exists(path, ec)) throw InputError(manifest, "names " + path + ", which does not exist");
        return path;
    };
    out.docword = file("docword", true);
    out.vocab = file("vocab", true);
    out.doc_ids = file("docs", true);
    out.labels = file("labels", false);
    out.label_names = file("labelnames", false);
    return out;
}

namespace {
/// The lines of `path`, each without a trailing '\r'; InputError when it cannot be read.
std::vector<std::string> lines_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "cannot open");
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        out.push_back(line);
    }
    if (in.bad()) throw InputError(path, "cannot read");
    return out;
}
}  // namespace

PreparedDocuments read_prepared_documents(const PreparedCorpus& p) {
    PreparedDocuments d;
    d.ids = lines_of(p.doc_ids);
    if (p.labels.empty()) return d;
    d.label_names = lines_of(p.label_names);
    const auto names = static_cast<std::int64_t>(d.label_names.size());
    const std::vector<std::string> lines = lines_of(p.labels);
    for (std::size_t k = 0; k < lines.size(); ++k) {
        const std::string& line = lines[k];
        const std::string where = p.labels + ":" + std::to_string(k + 1);
        std::int64_t label = 0;
        const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), label);
        if (error != std::errc() || end != line.data() + line.size())
            throw InputError(where, "a label must be one integer, got '" + line.substr(0, 40) + "'");
        if (label < 1 || label > names)
            throw InputError(where, "label " + std::to_string(label) + " is outside 1.." + std::to_string(names) +
                                        " (the lines of " + p.label_names + ")");
        d.labels.push_back(label);
    }
    if (d.labels.size() != d.ids.size())
        throw InputError(p.labels, "has " + std::to_string(d.labels.size()) + " labels for the " +
                                       std::to_string(d.ids.size()) + " documents of " + p.doc_ids + " (one each)");
    return d;
}

}  // namespace jsmf::prepare
