// SPDX-License-Identifier: MIT
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
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "jsmf/core/error.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace boost::serialization {
template <class Archive>
void serialize(Archive& ar, jsmf::prepare::InputFile& f, unsigned /*version*/) {
    ar & f.path & f.name & f.label & f.size;
}
}  // namespace boost::serialization

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

boost::mpi::communicator attach(const mpi::Comm& comm) {
    return boost::mpi::communicator(comm.raw(), boost::mpi::comm_attach);
}

/// Per-rank tallies, summed over the ranks at the end (one allreduce).
struct Tally {
    std::int64_t docs_read = 0, docs_invalid = 0, docs_empty = 0, docs_short = 0, docs_kept = 0;
    std::int64_t tokens_read = 0, tokens_kept = 0, entries = 0, with_label = 0;
    std::vector<std::int64_t> values() const {
        return {docs_read, docs_invalid, docs_empty, docs_short, docs_kept, tokens_read, tokens_kept, entries, with_label};
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

private:
    const PrepareOptions& options_;
    Tokenizer tokenizer_;
    std::unordered_set<std::string> stop_;
    std::vector<std::string> tokens_;
};

/// Removes this run's temporary files unless committed.
struct TempFiles {
    std::vector<std::string> paths;
    bool committed = false;
    ~TempFiles() {
        if (committed) return;
        std::error_code ec;
        for (const auto& p : paths) fs::remove(p, ec);
    }
};

/// Collective. Writes every rank's local file `part` into `path`, in rank order, with
/// MPI-IO at offsets from an exclusive scan of the part sizes. Throws StageFailed.
void write_concatenated(const mpi::Comm& comm, const std::string& path, const std::string& part) {
    std::error_code size_error;
    std::vector<std::int64_t> offset{static_cast<std::int64_t>(fs::file_size(part, size_error))};
    mpi::agree_or_throw(comm, kStage,
                        size_error ? format_error(part + ": " + size_error.message(), comm.rank(), comm.size(), kStage)
                                   : std::string(),
                        exit_code::input);
    mpi::exscan_inplace(comm, offset, MPI_SUM);
    // A failed open on some rank: the others' handles are not closed (MPI_File_close is
    // collective over every rank of the open; calling it on some would hang).
    MPI_File fh = MPI_FILE_NULL;
    const int rc = MPI_File_open(comm.raw(), path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS && fh != MPI_FILE_NULL) MPI_File_close(&fh);
    mpi::agree_or_throw(comm, kStage,
                        rc == MPI_SUCCESS ? std::string()
                                          : format_error(path + ": cannot create the file (MPI_File_open)", comm.rank(),
                                                         comm.size(), kStage),
                        exit_code::input);
    std::string error;
    int code = 0;
    try {
        JSMF_MPI_CHECK(MPI_File_set_size(fh, 0));  // collective: an older, longer file goes
        std::ifstream in(part, std::ios::binary);
        std::vector<char> buffer(4 << 20);
        std::int64_t at = offset[0];
        while (in) {
            in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
            const auto got = static_cast<int>(in.gcount());
            if (got == 0) break;
            MPI_Status status;
            JSMF_MPI_CHECK(MPI_File_write_at(fh, at, buffer.data(), got, MPI_CHAR, &status));
            at += got;
        }
        if (in.bad()) throw InputError(part, "read error");
    } catch (const std::exception& e) {
        error = mpi::describe(e, kStage, comm);
        code = exit_code_of(e);
    }
    MPI_File_close(&fh);
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

/// Rank 0: "id<sep>name" lines; the name of each id (the second field).
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

}  // namespace

PrepareReport run_prepare(const mpi::Comm& comm, const PrepareOptions& o) {
    Stopwatch total;
    PrepareReport report;
    const int rank = comm.rank(), size = comm.size();

    // Setup: rank 0 lists the input, reads the labels file and checks the options; the
    // list and the labels go to every rank.
    std::vector<InputFile> files;
    std::map<std::string, std::string> labels;
    mpi::check_on_root(comm, kStage, [&] {
        if (o.out_dir.empty()) throw InputError("--out: no output directory given");
        if (o.name.empty() || o.name.find('/') != std::string::npos) throw InputError("--name must be a plain name, got '" + o.name + "'");
        std::error_code ec;
        fs::create_directories(o.out_dir, ec);
        if (ec || !fs::is_directory(o.out_dir)) throw InputError(o.out_dir, "cannot create the output directory");
        if (o.buffer_mb <= 0) throw InputError("--buffer-mb must be positive");
        if (o.curation.max_df_fraction <= 0 || o.curation.max_df_fraction > 1)
            throw InputError("--max-df must be in (0, 1]");
        if (!o.items_file.empty() && is_text_format(o.source.format))
            throw InputError("--items names the items of --format ratings or playlists");
        if (!o.items_file.empty()) (void)read_item_names(o.items_file);
        if (!o.source.labels_file.empty()) labels = read_label_file(o.source.labels_file);
        files = list_input_files(o.source);
    });
    boost::mpi::broadcast(attach(comm), files, 0);
    boost::mpi::broadcast(attach(comm), labels, 0);
    report.files = static_cast<std::int64_t>(files.size());
    for (const auto& f : files) report.bytes += f.size;
    const std::vector<Piece> pieces = plan_pieces(files, o.source.format, rank, size);

    std::unique_ptr<Terms> terms;
    mpi::run_local_phase(comm, kStage, [&] { terms = std::make_unique<Terms>(o); });

    // Pass 1: count. Rounds of local reading until a buffer is full or the input ends,
    // then an exchange; the ranks agree each round on failures and on whether any has more.
    Stopwatch clock;
    Tally tally;
    DistributedCounts counts(comm);
    std::int64_t nonempty_docs = 0;
    std::string first_invalid;
    std::vector<std::int64_t> owned_lines;
    {
        RawReader reader(o.source, files, pieces, labels);  // no I/O until next()
        RawDocument doc;
        std::vector<std::pair<std::string, std::uint32_t>> doc_terms;
        const auto budget = static_cast<std::size_t>(o.buffer_mb * 1024 * 1024);
        bool more = true;
        while (true) {
            std::string error;
            int code = 0;
            try {
                while (more && counts.buffered_bytes() < budget) {
                    if (!reader.next(doc)) {
                        more = false;
                        break;
                    }
                    ++tally.docs_read;
                    std::int64_t read = 0;
                    bool repaired = false;
                    const bool usable = terms->terms(doc, doc_terms, read, repaired);
                    if (!usable || repaired) {
                        ++tally.docs_invalid;
                        if (first_invalid.empty())
                            first_invalid = doc.path + " (byte " + std::to_string(doc.invalid_utf8) + ")";
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
            } catch (const std::exception& e) {
                error = mpi::describe(e, kStage, comm);
                code = exit_code_of(e);
            }
            mpi::agree_or_throw(comm, kStage, error, code);
            counts.exchange();
            if (mpi::allreduce_max(comm, more ? 1 : 0) == 0) break;
        }
        owned_lines = reader.owned_lines();
    }
    mpi::exscan_inplace(comm, owned_lines, MPI_SUM);
    for (auto& first : owned_lines) first += 1;
    const auto num_docs = static_cast<std::uint64_t>(mpi::allreduce_sum(comm, nonempty_docs));
    report.distinct_words = mpi::allreduce_sum(comm, static_cast<std::int64_t>(counts.owned().size()));
    {
        std::int64_t passing = 0;
        const double max_df = o.curation.max_df_fraction * static_cast<double>(num_docs);
        for (const auto& [word, c] : counts.owned())
            passing += (c.df >= o.curation.min_df && static_cast<double>(c.df) <= max_df) ? 1 : 0;
        report.words_passing_df = mpi::allreduce_sum(comm, passing);
    }
    const std::vector<Candidate> chosen = choose_vocabulary(comm, counts.owned(), num_docs, o.curation);
    report.vocabulary = static_cast<std::int64_t>(chosen.size());
    mpi::check_on_root(comm, kStage, [&] {
        if (chosen.empty())
            throw InputError("no word is left after curation (" + std::to_string(num_docs) + " non-empty documents, " +
                             std::to_string(report.distinct_words) + " distinct words before --min-df " +
                             std::to_string(o.curation.min_df) + " and --max-df)");
    });
    report.count_seconds = clock.seconds();

    // Pass 2: keep the vocabulary's words; write this rank's kept documents to local parts.
    clock.restart();
    std::unordered_map<std::string, std::uint32_t> word_id;
    for (std::size_t i = 0; i < chosen.size(); ++i) word_id.emplace(chosen[i].word, static_cast<std::uint32_t>(i));
    const std::string part_prefix = (fs::path(o.out_dir) / (".jsmf-prepare." + o.name + "." + std::to_string(rank))).string();
    TempFiles temp;
    temp.paths = {part_prefix + ".entries", part_prefix + ".docword", part_prefix + ".ids", part_prefix + ".labels"};
    std::map<std::string, std::int32_t> local_labels;
    std::vector<std::int32_t> doc_label;  // per kept document: index into local_labels' order of insertion
    std::vector<std::string> local_label_names;
    // Every document's id, for the duplicate check: (id, (the document's place in the
    // input order, where)). Ids repeat in JSON Lines, in ratings whose users are apart, and
    // among files of the same name under two inputs.
    std::vector<std::pair<std::string, std::pair<std::int64_t, std::string>>> ids_seen;
    std::string first_unlabelled;
    std::vector<std::int64_t> first_read{tally.docs_read};
    mpi::exscan_inplace(comm, first_read, MPI_SUM);
    mpi::run_local_phase(comm, kStage, [&] {
        RawReader reader(o.source, files, pieces, labels);
        reader.set_first_lines(owned_lines);
        std::ofstream entries(temp.paths[0], std::ios::binary | std::ios::trunc);
        PartWriter ids(temp.paths[2], false);
        if (!entries) throw InputError(temp.paths[0], "cannot create");
        RawDocument doc;
        std::vector<std::pair<std::string, std::uint32_t>> doc_terms;
        std::map<std::uint32_t, std::uint32_t> bag;
        while (reader.next(doc)) {
            ids_seen.push_back({doc.id, {first_read[0] + static_cast<std::int64_t>(ids_seen.size()), doc.where}});
            std::int64_t read = 0;
            bool repaired = false;
            if (!terms->terms(doc, doc_terms, read, repaired) || doc_terms.empty()) continue;  // counted in pass 1
            bag.clear();
            std::int64_t tokens = 0;
            for (const auto& [term, repeats] : doc_terms)
                if (const auto found = word_id.find(term); found != word_id.end()) {
                    bag[found->second] += repeats;
                    tokens += repeats;
                }
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
            for (const std::string* field : {&doc.id, &doc.label})
                if (field->find_first_of("\r\n") != std::string::npos)
                    throw InputError(doc.where, std::string(field == &doc.id ? "a document id" : "a label") +
                                                    " may not contain a line break");
            ids.write(doc.id + "\n");
            if (!doc.label.empty()) {
                ++tally.with_label;
                auto [it, fresh] = local_labels.try_emplace(doc.label, static_cast<std::int32_t>(local_label_names.size()));
                if (fresh) local_label_names.push_back(doc.label);
                doc_label.push_back(it->second);
            } else {
                doc_label.push_back(-1);
                if (first_unlabelled.empty()) first_unlabelled = doc.id;
            }
        }
        entries.close();
        if (!entries) throw InputError(temp.paths[0], "write error");
        ids.close();
    });

    // Duplicate ids: each owner (by hash) sorts the ids it receives by id, then input order.
    {
        using Seen = std::pair<std::string, std::pair<std::int64_t, std::string>>;
        std::vector<std::vector<Seen>> outgoing(static_cast<std::size_t>(size)), incoming;
        for (auto& entry : ids_seen)
            outgoing[static_cast<std::size_t>(DistributedCounts::owner(entry.first, size))].push_back(std::move(entry));
        std::vector<Seen>().swap(ids_seen);
        boost::mpi::all_to_all(attach(comm), outgoing, incoming);
        mpi::run_local_phase(comm, kStage, [&] {
            std::vector<Seen> mine;
            for (auto& part : incoming) mine.insert(mine.end(), part.begin(), part.end());
            std::sort(mine.begin(), mine.end(), [](const Seen& a, const Seen& b) {
                return a.first != b.first ? a.first < b.first : a.second.first < b.second.first;
            });
            for (std::size_t i = 1; i < mine.size(); ++i) {
                if (mine[i].first != mine[i - 1].first) continue;
                const std::string& here = mine[i].second.second;
                const std::string& before = mine[i - 1].second.second;
                if (o.source.format == Format::ratings)
                    throw InputError(here, "user '" + mine[i].first + "' again, after other users' lines (" + before +
                                               "): a user's ratings must be together");
                throw InputError(here, "document id '" + mine[i].first + "' again (also " + before +
                                           "; files of the same name under two inputs have the same ids)");
            }
        });
    }

    // Totals, labels, and the files.
    std::vector<std::int64_t> sums = tally.values();
    mpi::allreduce_inplace(comm, sums, MPI_SUM);
    report.docs_read = sums[0];
    report.docs_invalid_utf8 = sums[1];
    report.docs_empty = sums[2];
    report.docs_short = sums[3];
    report.docs_kept = sums[4];
    report.tokens_read = sums[5];
    report.tokens_kept = sums[6];
    report.entries = sums[7];
    const std::int64_t with_label = sums[8];
    std::string unlabelled_example;
    for (const auto& id : mpi::gather_strings(comm, first_unlabelled, 0))
        if (unlabelled_example.empty()) unlabelled_example = id;
    mpi::check_on_root(comm, kStage, [&] {
        if (report.docs_kept == 0)
            throw InputError("no document has " + std::to_string(o.min_doc_tokens) +
                             " tokens or more after curation (--min-doc-tokens)");
        if (with_label > 0 && with_label < report.docs_kept)
            throw InputError(std::to_string(report.docs_kept - with_label) + " of " + std::to_string(report.docs_kept) +
                             " kept documents have no label, e.g. '" + unlabelled_example +
                             "' (labels come for every document or none)");
    });
    std::vector<std::string> label_names;  // sorted: label k + 1 is label_names[k]
    if (with_label > 0) {
        std::vector<std::vector<std::string>> gathered;
        boost::mpi::gather(attach(comm), local_label_names, gathered, 0);
        if (comm.is_root()) {
            for (const auto& part : gathered) label_names.insert(label_names.end(), part.begin(), part.end());
            std::sort(label_names.begin(), label_names.end());
            label_names.erase(std::unique(label_names.begin(), label_names.end()), label_names.end());
        }
        mpi::broadcast(comm, label_names, 0);
        report.labels = static_cast<std::int64_t>(label_names.size());
    }
    std::vector<std::int64_t> first_doc{tally.docs_kept};
    mpi::exscan_inplace(comm, first_doc, MPI_SUM);

    const std::string docword = docword_path(o.out_dir, o.name, o.gzip);
    const std::vector<std::string> finals = {docword, doc_ids_path(o.out_dir, o.name), labels_path(o.out_dir, o.name)};
    for (const auto& f : finals) temp.paths.push_back(f + ".partial");
    const std::vector<std::string> root_files = {vocab_path(o.out_dir, o.name), label_names_path(o.out_dir, o.name),
                                                 manifest_path(o.out_dir, o.name)};
    if (comm.is_root())
        for (const auto& f : root_files) temp.paths.push_back(f + ".partial");
    mpi::run_local_phase(comm, kStage, [&] {
        // docword: root's part starts with the header D, W, NNZ.
        PartWriter out(temp.paths[1], o.gzip);
        if (comm.is_root())
            out.write(std::to_string(report.docs_kept) + "\n" + std::to_string(report.vocabulary) + "\n" +
                      std::to_string(report.entries) + "\n");
        std::ifstream entries(temp.paths[0], std::ios::binary);
        std::string text;
        Entry e{};
        while (entries.read(reinterpret_cast<char*>(&e), sizeof e)) {
            text += std::to_string(first_doc[0] + e.doc + 1);
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
        PartWriter label_part(temp.paths[3], false);
        if (!label_names.empty()) {
            std::vector<std::int32_t> global(local_label_names.size());
            for (std::size_t k = 0; k < local_label_names.size(); ++k)
                global[k] = static_cast<std::int32_t>(
                    std::lower_bound(label_names.begin(), label_names.end(), local_label_names[k]) - label_names.begin() + 1);
            text.clear();
            for (const std::int32_t l : doc_label) text += std::to_string(global[static_cast<std::size_t>(l)]) + "\n";
            label_part.write(text);
        }
        label_part.close();
    });
    write_concatenated(comm, finals[0] + ".partial", temp.paths[1]);
    write_concatenated(comm, finals[1] + ".partial", temp.paths[2]);
    if (!label_names.empty()) write_concatenated(comm, finals[2] + ".partial", temp.paths[3]);
    report.write_seconds = clock.seconds();
    report.total_seconds = total.seconds();
    report.peak_rss_bytes = mpi::allreduce_max(comm, peak_rss_bytes());
    {  // the first skipped document in input order
        std::vector<std::string> all = mpi::gather_strings(comm, first_invalid, 0);
        for (const auto& s : all)
            if (!s.empty()) {
                report.first_invalid = s;
                break;
            }
    }
    {  // this rank's parts are copied: they go before the last collective step
        std::error_code ec;
        for (std::size_t k = 0; k < 4; ++k) fs::remove(temp.paths[k], ec);
    }
    // Rank 0: the vocabulary, label names, manifest; then every rename.
    mpi::check_on_root(comm, kStage, [&] {
        auto write_lines = [](const std::string& path, const std::vector<std::string>& lines) {
            std::ofstream out(path, std::ios::binary | std::ios::trunc);
            for (const auto& l : lines) out << l << '\n';
            out.close();
            if (!out) throw InputError(path, "write error");
        };
        write_lines(root_files[0] + ".partial", vocabulary_lines(chosen, o));
        if (!label_names.empty()) write_lines(root_files[1] + ".partial", label_names);
        nlohmann::json manifest = {
            {"jsmf_prepare", 1},
            {"name", o.name},
            {"format", format_name(o.source.format)},
            {"docword", fs::path(docword).filename().string()},
            {"vocab", fs::path(root_files[0]).filename().string()},
            {"docs", fs::path(finals[1]).filename().string()},
            {"labels", label_names.empty() ? "" : fs::path(finals[2]).filename().string()},
            {"labelnames", label_names.empty() ? "" : fs::path(root_files[1]).filename().string()},
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
             {{"min_df", o.curation.min_df},
              {"max_df", o.curation.max_df_fraction},
              {"max_words", o.curation.max_words},
              {"min_doc_tokens", o.min_doc_tokens},
              {"english_stopwords", o.english_stopwords},
              {"stopwords_file", o.stopwords_file},
              {"keep_numbers", o.tokenizer.keep_numbers},
              {"min_length", o.tokenizer.min_length},
              {"invalid_utf8", o.invalid_utf8 == InvalidUtf8::skip ? "skip" : o.invalid_utf8 == InvalidUtf8::replace ? "replace" : "fail"},
              {"tfidf", "tf(w) * ln(floor(D / df(w))), tf over the corpus (moontae/JSMF readBows.m)"}}}};
        std::ofstream out(root_files[2] + ".partial", std::ios::binary | std::ios::trunc);
        out << manifest.dump(2) << '\n';
        out.close();
        if (!out) throw InputError(root_files[2], "write error");
        for (std::size_t k = 0; k < finals.size(); ++k)
            if (k != 2 || !label_names.empty()) fs::rename(finals[k] + ".partial", finals[k]);
        for (std::size_t k = 0; k < root_files.size(); ++k)
            if (k != 1 || !label_names.empty()) fs::rename(root_files[k] + ".partial", root_files[k]);
        if (label_names.empty())  // an earlier run's labels would no longer match
            for (const auto& stale : {finals[2], root_files[1]}) fs::remove(stale);
        report.outputs = {docword, root_files[0], finals[1]};
        if (!label_names.empty()) report.outputs.insert(report.outputs.end(), {finals[2], root_files[1]});
        report.outputs.push_back(root_files[2]);
    });
    temp.committed = true;  // the parts went before the renames
    return report;
}

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
        const std::string value = m.value(key, std::string());
        if (value.empty()) {
            if (required) throw InputError(manifest, std::string("names no ") + key + " file");
            return {};
        }
        const std::string path = (fs::path(dir) / value).string();
        if (!fs::exists(path)) throw InputError(manifest, "names " + path + ", which does not exist");
        return path;
    };
    out.docword = file("docword", true);
    out.vocab = file("vocab", true);
    out.doc_ids = file("docs", true);
    out.labels = file("labels", false);
    out.label_names = file("labelnames", false);
    return out;
}

}  // namespace jsmf::prepare
