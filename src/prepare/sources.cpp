// SPDX-License-Identifier: MIT
#include "jsmf/prepare/sources.hpp"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "jsmf/core/error.hpp"
#include "jsmf/prepare/text.hpp"

namespace jsmf::prepare {
namespace fs = std::filesystem;


bool is_text_format(Format format) { return format != Format::ratings && format != Format::playlists; }

namespace {

bool one_document_per_file(Format format) { return format == Format::text_dir || format == Format::brown; }

bool hidden(const fs::path& relative) {
    for (const auto& part : relative)
        if (const std::string s = part.string(); !s.empty() && s[0] == '.' && s != "." && s != "..") return true;
    return false;
}

}  // namespace

std::int64_t line_number_at(const std::string& path, std::int64_t offset) {
    std::ifstream in(path, std::ios::binary);
    std::int64_t line = 1;
    std::vector<char> buffer(1 << 16);
    std::int64_t done = 0;
    while (done < offset && in) {
        in.read(buffer.data(), static_cast<std::streamsize>(std::min<std::int64_t>(buffer.size(), offset - done)));
        const auto got = in.gcount();
        line += std::count(buffer.data(), buffer.data() + got, '\n');
        done += got;
        if (got == 0) break;
    }
    return line;
}

namespace {

std::string trim(const std::string& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

std::string strip_brown_tags(const std::string& tagged) {
    std::string out;
    out.reserve(tagged.size());
    std::istringstream words(tagged);
    std::string token;
    while (words >> token) {
        if (const auto slash = token.rfind('/'); slash != std::string::npos && slash > 0) token.erase(slash);
        out += token;
        out += ' ';
    }
    return out;
}

std::string read_whole_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw InputError(path, "read error");
    return text.str();
}

std::string json_scalar(const nlohmann::json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_number_integer()) return std::to_string(value.get<long long>());
    if (value.is_number()) return value.dump();
    return {};
}

}  // namespace

std::vector<InputFile> list_input_files(const SourceOptions& options) {
    if (options.inputs.empty()) throw InputError("no input given");
    std::optional<std::regex> pattern;
    if (!options.files_regex.empty()) {
        try {
            pattern.emplace(options.files_regex, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            throw OptionError("{files}: not a regular expression: '" + OptionError::quote(options.files_regex) + "' (" + OptionError::quote(e.what()) + ")");
        }
    }
    std::vector<InputFile> files;
    for (const std::string& input : options.inputs) {
        std::error_code ec;
        const fs::file_status status = fs::status(input, ec);
        if (ec || !fs::exists(status)) throw InputError(input, "no such file or directory");
        if (fs::is_regular_file(status)) {
            files.push_back({input, fs::path(input).filename().string(), {}, static_cast<std::int64_t>(fs::file_size(input))});
            continue;
        }
        if (!fs::is_directory(status)) throw InputError(input, "neither a file nor a directory");
        std::vector<InputFile> found;
        for (auto it = fs::recursive_directory_iterator(input, fs::directory_options::follow_directory_symlink, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            const fs::path relative = fs::relative(it->path(), input);
            if (hidden(relative)) {
                if (it->is_directory()) it.disable_recursion_pending();
                continue;
            }
            if (!it->is_regular_file()) continue;
            if (pattern && !std::regex_match(it->path().filename().string(), *pattern)) continue;
            InputFile file{it->path().string(), relative.generic_string(), {}, static_cast<std::int64_t>(it->file_size())};
            if (options.label_from_dir) {
                const auto first = relative.begin();
                if (std::next(first) == relative.end())
                    throw InputError(file.path, "is not in a sub-directory of " + input +
                                                    " (--label-from-dir takes the label from it)");
                file.label = first->string();
            }
            found.push_back(std::move(file));
        }
        if (ec) throw InputError(input, "cannot list the directory: " + ec.message());
        std::sort(found.begin(), found.end(), [](const InputFile& a, const InputFile& b) { return a.name < b.name; });
        files.insert(files.end(), found.begin(), found.end());
    }
    if (files.empty()) throw OptionError("no input files" + (pattern ? " match {files} '" + OptionError::quote(options.files_regex) + "'" : std::string()));
    // The same file twice (given twice, or a folder and a file in it, or a link) would be
    // read twice: its documents doubled (ratings: every count of its users).
    std::map<std::pair<std::uintmax_t, std::uintmax_t>, const InputFile*> seen;  // (device, inode)
    for (const InputFile& file : files) {
        struct stat st {};
        if (::stat(file.path.c_str(), &st) != 0) continue;  // gone since: reading it will say so
        const auto [at, fresh] = seen.emplace(std::pair<std::uintmax_t, std::uintmax_t>(st.st_dev, st.st_ino), &file);
        if (!fresh) throw InputError(file.path, "is the same file as " + at->second->path + ", given twice among the inputs");
    }
    return files;
}

std::vector<Piece> plan_pieces(const std::vector<InputFile>& files, Format format, int rank, int num_ranks) {
    std::int64_t total = 0;
    for (const auto& f : files) total += f.size;
    auto bound = [&](int r) {
        return (total / num_ranks) * r + (total % num_ranks) * r / num_ranks;  // total * r / p, exactly
    };
    const std::int64_t lo = bound(rank), hi = bound(rank + 1);
    std::vector<Piece> pieces;
    std::int64_t offset = 0;
    for (std::size_t f = 0; f < files.size(); ++f) {
        const std::int64_t size = files[f].size;
        if (one_document_per_file(format)) {
            // The owner of the file's first byte (empty files at the very end: the last rank).
            const bool mine = (offset >= lo && offset < hi) || (rank == num_ranks - 1 && offset >= total) ||
                              (total == 0 && rank == 0);
            if (mine && !(total == 0 && rank != 0)) pieces.push_back({static_cast<int>(f), 0, size});
        } else {
            const std::int64_t b = std::max(lo, offset), e = std::min(hi, offset + size);
            if (b < e) pieces.push_back({static_cast<int>(f), b - offset, e - offset});
        }
        offset += size;
    }
    return pieces;
}

std::map<std::string, std::string> read_label_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, "cannot open the labels file");
    std::map<std::string, std::string> labels;
    std::string line;
    for (std::int64_t number = 1; std::getline(in, line); ++number) {
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        std::istringstream fields(line);
        std::string id, label, extra;
        if (!(fields >> id)) continue;
        const std::string where = path + ":" + std::to_string(number);
        if (!(fields >> label)) throw InputError(where, "expected 'id label', found only '" + id + "'");
        if (fields >> extra) throw InputError(where, "expected 'id label', found more fields");
        if (!labels.emplace(id, label).second) throw InputError(where, "id '" + id + "' is labelled twice");
    }
    return labels;
}

std::vector<std::string> split_record(const std::string& line) {
    std::vector<std::string> fields;
    auto split_on = [&](const std::string& sep) {
        std::size_t start = 0;
        for (std::size_t at; (at = line.find(sep, start)) != std::string::npos; start = at + sep.size())
            fields.push_back(trim(line.substr(start, at - start)));
        fields.push_back(trim(line.substr(start)));
    };
    if (line.find("::") != std::string::npos) split_on("::");
    else if (line.find('\t') != std::string::npos) split_on("\t");
    else if (line.find(',') != std::string::npos) split_on(",");
    else {
        std::istringstream words(line);
        for (std::string w; words >> w;) fields.push_back(w);
    }
    return fields;
}

// ---- the reader --------------------------------------------------------------------

struct RawReader::State {
    std::ifstream in;
    int file = 0;
    std::int64_t pos = 0;        // offset of the next unread byte
    std::int64_t end = 0;        // the piece's end
    bool passed_end = false;     // a line starting at or after `end` was taken
    // one line of look-ahead
    bool has_line = false;
    std::string line;
    std::int64_t line_start = 0;
};

RawReader::RawReader(const SourceOptions& options, std::vector<InputFile> files, std::vector<Piece> pieces,
                     std::map<std::string, std::string> labels)
    : options_(options), files_(std::move(files)), pieces_(std::move(pieces)), owned_lines_(files_.size(), 0),
      labels_(std::move(labels)) {}

RawReader::~RawReader() = default;

namespace {

/// The rating field as a number; NaN when it is not one.
double parse_rating(const std::string& field) {
    std::size_t used = 0;
    double value = std::nan("");
    try {
        value = std::stod(field, &used);
    } catch (const std::exception&) {
        return std::nan("");
    }
    return used == field.size() ? value : std::nan("");
}

/// Lines that are no record: blank ones, '#' comments (playlists), and a ratings file's
/// first line when its first and third fields are not numbers (a CSV header:
/// "userId,movieId,rating").
bool blank_or_comment(const std::string& line, Format format, std::int64_t line_start = -1) {
    const std::string t = trim(line);
    if (t.empty() || (format == Format::playlists && t[0] == '#')) return true;
    if (format == Format::ratings && line_start == 0) {
        const auto fields = split_record(line);  // "userId,movieId,rating,...", not "1,10,x"
        return fields.size() >= 3 && std::isnan(parse_rating(fields[2])) && std::isnan(parse_rating(fields[0]));
    }
    return false;
}

/// Reads the line at `pos` into `line` (without '\n' or a trailing '\r'), its offset into
/// `start`, and moves `pos` past it; false at EOF.
bool read_line(std::ifstream& in, std::int64_t& pos, std::string& line, std::int64_t& start) {
    start = pos;
    if (!std::getline(in, line)) return false;
    pos += static_cast<std::int64_t>(line.size());
    if (!in.eof()) pos += 1;  // the newline
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
}

}  // namespace

/// MALLET's default line regex, ^(\S*)[\s,]*(\S*)[\s,]*(.*)$: the name up to the first
/// blank, then any blanks and commas, the label up to the next blank, blanks and commas
/// again, and the rest (a label or text may be empty).
MalletLine split_mallet_line(const std::string& line) {
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; };
    const auto separator = [&](char c) { return blank(c) || c == ','; };
    std::size_t at = 0;
    const auto word = [&] {
        const std::size_t from = at;
        while (at < line.size() && !blank(line[at])) ++at;
        std::string out = line.substr(from, at - from);
        while (at < line.size() && separator(line[at])) ++at;
        return out;
    };
    MalletLine out;
    out.name = word();
    out.label = word();
    out.text = line.substr(at);
    return out;
}

bool RawReader::open_next_piece() {
    while (piece_index_ < pieces_.size()) {
        const Piece& piece = pieces_[piece_index_++];
        state_ = std::make_unique<State>();
        State& s = *state_;
        s.file = piece.file;
        s.end = piece.end;
        const std::string& path = files_[static_cast<std::size_t>(piece.file)].path;
        s.in.open(path, std::ios::binary);
        if (!s.in) throw InputError(path, "cannot open");
        if (one_document_per_file(options_.format)) return true;
        if (piece.begin > 0) {
            // To the first line at or after `begin` (the byte before it decides), then past
            // the group that line is in: it belongs to the previous piece.
            s.in.seekg(piece.begin - 1);
            s.pos = piece.begin - 1;
            std::string partial;
            std::int64_t start = 0;
            if (!read_line(s.in, s.pos, partial, start)) continue;
            if (!read_line(s.in, s.pos, s.line, s.line_start)) continue;
            const bool ratings = options_.format == Format::ratings;
            const bool blank = blank_or_comment(s.line, options_.format);
            const std::string key = ratings && !blank ? split_record(s.line)[0] : std::string();
            s.passed_end = s.line_start >= s.end;
            if (ratings && !blank) {
                bool more = false;
                while (read_line(s.in, s.pos, s.line, s.line_start)) {
                    if (blank_or_comment(s.line, options_.format) || split_record(s.line)[0] != key) {
                        more = s.has_line = true;
                        break;
                    }
                    if (s.line_start >= s.end) s.passed_end = true;
                }
                if (!more) continue;
            }
        }
        return true;
    }
    state_.reset();
    return false;
}

bool RawReader::next(RawDocument& doc) {
    doc = RawDocument{};
    while (true) {
        if (!state_ && !open_next_piece()) return false;
        if (one_document_per_file(options_.format)) {
            const InputFile& file = files_[static_cast<std::size_t>(state_->file)];
            state_.reset();
            doc.id = file.name;
            doc.where = file.path;
            doc.path = file.path;
            doc.label = file.label;
            doc.text = read_whole_file(file.path);
            doc.invalid_utf8 = first_invalid_utf8(doc.text);
            if (options_.format == Format::brown) doc.text = strip_brown_tags(doc.text);
            if (const auto found = labels_.find(doc.id); found != labels_.end()) doc.label = found->second;
            return true;
        }
        if (next_line_document(doc)) return true;
        state_.reset();
    }
}

bool RawReader::next_line_document(RawDocument& doc) {
    State& s = *state_;
    const InputFile& file = files_[static_cast<std::size_t>(s.file)];
    const auto file_index = static_cast<std::size_t>(s.file);
    auto take_line = [&]() -> bool {  // the next line into s.line, if it is this piece's
        if (!s.has_line) {
            if (!read_line(s.in, s.pos, s.line, s.line_start)) return false;
            s.has_line = true;
        }
        return true;
    };
    auto key_of = [&](const std::string& line) {
        const auto fields = split_record(line);
        return fields.empty() ? std::string() : fields[0];
    };
    auto where = [&](std::int64_t line_start) {
        return file.path + ":" + std::to_string(line_number_at(file.path, line_start));
    };
    auto line_id = [&](std::int64_t local_line) {
        const std::int64_t number = first_lines_.empty() ? 0 : first_lines_[file_index] + local_line;
        return files_.size() > 1 ? file.name + ":" + std::to_string(number) : std::to_string(number);
    };
    while (true) {
        if (!take_line()) return false;
        const bool blank = blank_or_comment(s.line, options_.format, s.line_start);
        const std::string key = (!blank && options_.format == Format::ratings) ? key_of(s.line) : std::string();
        // Every line here starts a group (a user's later lines are read below): the piece
        // ends at the second group starting at or after its end.
        if (s.line_start >= s.end && s.passed_end) return false;
        if (s.line_start >= s.end) s.passed_end = true;
        s.has_line = false;
        const std::int64_t local_line = owned_lines_[file_index]++;
        if (blank) continue;
        const std::int64_t line_start = s.line_start;
        doc.path = file.path;
        doc.offset = line_start;
        if (is_text_format(options_.format))
            if (const std::int64_t bad = first_invalid_utf8(s.line); bad >= 0) doc.invalid_utf8 = line_start + bad;
        if (options_.format == Format::lines) {
            doc.id = line_id(local_line);
            doc.text = std::move(s.line);
        } else if (options_.format == Format::jsonl) {
            nlohmann::json record;
            try {  // invalid UTF-8 read as U+FFFD (the policy on it is the caller's)
                record = nlohmann::json::parse(doc.invalid_utf8 >= 0 ? replace_invalid_utf8(s.line) : s.line);
            } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number out of range (406)
                throw InputError(where(line_start), std::string("not valid JSON: ") + e.what());
            }
            if (!record.is_object()) throw InputError(where(line_start), "a JSON Lines record must be an object");
            const auto text = record.find(options_.text_field);
            if (text == record.end() || !text->is_string())
                throw InputError(where(line_start), "no string field '" + options_.text_field + "'");
            doc.text = text->get<std::string>();
            const auto id = record.find(options_.id_field);
            doc.id = id != record.end() ? json_scalar(*id) : line_id(local_line);
            if (id != record.end() && doc.id.empty())
                throw InputError(where(line_start), "field '" + options_.id_field + "' must be a string or a number");
            if (const auto label = record.find(options_.label_field); label != record.end()) {
                doc.label = json_scalar(*label);
                if (doc.label.empty())
                    throw InputError(where(line_start), "field '" + options_.label_field + "' must be a non-empty string or a number");
            }
        } else if (options_.format == Format::mallet) {
            // Invalid UTF-8 read as U+FFFD here too, so that a bad byte in the name or the label
            // never reaches the ids and label files (the policy on it is the caller's).
            const MalletLine fields = split_mallet_line(doc.invalid_utf8 >= 0 ? replace_invalid_utf8(s.line) : s.line);
            if (fields.name.empty()) throw InputError(where(line_start), "a MALLET line must start with its instance name");
            doc.id = fields.name;
            if (!fields.label.empty()) doc.label = fields.label;
            doc.text = fields.text;
        } else if (options_.format == Format::playlists) {
            doc.id = line_id(local_line);
            std::string items = s.line;
            std::replace(items.begin(), items.end(), ',', ' ');
            std::istringstream words(items);
            for (std::string item; words >> item;) doc.items.emplace_back(item, 1);
        } else {  // ratings: this line and the following lines of the same user
            doc.id = key;
            while (true) {
                const std::vector<std::string> fields = split_record(s.line);
                if (fields.size() < 3 || fields.size() > 4)
                    throw InputError(where(s.line_start), "expected 'user item rating [timestamp]', found " +
                                                              std::to_string(fields.size()) + " fields");
                const double stars = parse_rating(fields[2]);
                if (std::isnan(stars)) throw InputError(where(s.line_start), "rating '" + fields[2] + "' is not a number");
                if (!std::isfinite(stars) || stars < 0)
                    throw InputError(where(s.line_start), "rating must be a non-negative number, found " + fields[2]);
                if (fields[1].empty()) throw InputError(where(s.line_start), "empty item id");
                if (2 * stars > 4294967295.0)  // the repeats are counted in 32 bits
                    throw InputError(where(s.line_start), "rating " + fields[2] + " exceeds jsmf's limit of 2^31 " +
                                                              "(its round(2 x rating) repeats are counted in 32 bits)");
                if (const auto repeats = static_cast<std::uint32_t>(std::lround(2 * stars)); repeats > 0)
                    doc.items.emplace_back(fields[1], repeats);
                if (!take_line()) break;
                if (blank_or_comment(s.line, options_.format) || key_of(s.line) != key) break;  // look-ahead kept
                if (s.line_start >= s.end) s.passed_end = true;
                s.has_line = false;
                owned_lines_[file_index]++;
            }
        }
        doc.where = file.path + ":" + (first_lines_.empty() ? std::string("?") : std::to_string(first_lines_[file_index] + local_line));
        if (const auto found = labels_.find(doc.id); found != labels_.end()) doc.label = found->second;
        return true;
    }
}

}  // namespace jsmf::prepare
