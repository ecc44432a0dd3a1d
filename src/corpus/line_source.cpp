// SPDX-License-Identifier: MIT
// Buffered line reading from a plain or gzip-compressed file.
#include "corpus/line_source.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "jsmf/core/error.hpp"

namespace jsmf::corpus::detail {
namespace {
constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

class PlainSource : public LineSource {
public:
    PlainSource(const std::string& path, std::FILE* file) : LineSource(path, false), file_(file) {
        if (fseeko(file_, 0, SEEK_END) != 0) throw InputError(path_, "cannot seek in file");
        size_bytes_ = ftello(file_);
        seek_raw(0);
    }
    ~PlainSource() override { std::fclose(file_); }

protected:
    std::size_t read_raw(char* buffer, std::size_t size) override {
        const std::size_t got = std::fread(buffer, 1, size, file_);
        if (got == 0 && std::ferror(file_)) throw InputError(path_, std::string("read error: ") + std::strerror(errno));
        return got;
    }
    void seek_raw(std::int64_t offset) override {
        if (fseeko(file_, offset, SEEK_SET) != 0) throw InputError(path_, "cannot seek in file");
    }

private:
    std::FILE* file_;
};

class GzipSource : public LineSource {
public:
    GzipSource(const std::string& path, gzFile file) : LineSource(path, true), file_(file) {
        gzbuffer(file_, 256 * 1024);
    }
    ~GzipSource() override { gzclose(file_); }

protected:
    std::size_t read_raw(char* buffer, std::size_t size) override {
        const int got = gzread(file_, buffer, static_cast<unsigned>(size));
        int code = Z_OK;
        const char* message = gzerror(file_, &code);
        if (got < 0 || (code != Z_OK && code != Z_STREAM_END)) {
            // A truncated file ends with Z_BUF_ERROR ("unexpected end of file").
            throw InputError(path_, std::string("corrupt or truncated gzip data: ") +
                                        (message ? message : "unknown zlib error"));
        }
        return static_cast<std::size_t>(got);
    }
    void seek_raw(std::int64_t offset) override {
        JSMF_REQUIRE(offset == 0, "gzip streams only rewind");
        gzrewind(file_);
    }

private:
    gzFile file_;
};
}  // namespace

LineSource::LineSource(std::string path, bool gzipped)
    : path_(std::move(path)), gzipped_(gzipped), buffer_(kBufferBytes) {}

LineSource::~LineSource() = default;

std::unique_ptr<LineSource> LineSource::open(const std::string& path) {
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (!file) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
    unsigned char magic[2] = {0, 0};
    const std::size_t got = std::fread(magic, 1, 2, file);
    if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        std::fclose(file);
        gzFile gz = gzopen(path.c_str(), "rb");
        if (!gz) throw InputError(path, "cannot open gzip file");
        return std::unique_ptr<LineSource>(new GzipSource(path, gz));
    }
    return std::unique_ptr<LineSource>(new PlainSource(path, file));
}

bool LineSource::fill() {
    if (eof_) return false;
    // Keep unread bytes: move them to the front.
    if (begin_ > 0) {
        std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
        buffer_offset_ += static_cast<std::int64_t>(begin_);
        end_ -= begin_;
        begin_ = 0;
    }
    if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);  // a very long line
    const std::size_t got = read_raw(buffer_.data() + end_, buffer_.size() - end_);
    if (got == 0) eof_ = true;
    end_ += got;
    return got > 0;
}

bool LineSource::next(Line& line) {
    for (;;) {
        const char* start = buffer_.data() + begin_;
        const void* newline = std::memchr(start, '\n', end_ - begin_);
        if (newline || (eof_ && end_ > begin_)) {
            const std::size_t length =
                newline ? static_cast<std::size_t>(static_cast<const char*>(newline) - start) : end_ - begin_;
            std::size_t text_length = length;
            if (text_length > 0 && start[text_length - 1] == '\r') --text_length;  // CRLF files
            line.text = std::string_view(start, text_length);
            line.offset = buffer_offset_ + static_cast<std::int64_t>(begin_);
            ++lines_read_;
            line.number = line_numbers_known_ ? lines_read_ : -1;
            begin_ += newline ? length + 1 : length;
            return true;
        }
        if (!fill()) {
            if (end_ > begin_) continue;  // last line without a newline
            return false;
        }
    }
}

void LineSource::seek_line_at_or_after(std::int64_t offset) {
    JSMF_REQUIRE(!gzipped_, "seek on a gzip stream");
    begin_ = end_ = 0;
    eof_ = false;
    if (offset <= 0) {
        seek_raw(0);
        buffer_offset_ = 0;
        lines_read_ = 0;
        line_numbers_known_ = true;
        return;
    }
    // The line holding byte offset-1 ends at or after offset-1; the next one starts >= offset.
    seek_raw(offset - 1);
    buffer_offset_ = offset - 1;
    line_numbers_known_ = false;
    Line discard;
    next(discard);
}

std::int64_t LineSource::line_number_at(std::int64_t offset) {
    if (gzipped_) return -1;
    // Error path only: count newlines before `offset` with a separate handle.
    std::FILE* file = std::fopen(path_.c_str(), "rb");
    if (!file) return -1;
    std::vector<char> chunk(kBufferBytes);
    std::int64_t remaining = offset, newlines = 0;
    while (remaining > 0) {
        const std::size_t want = static_cast<std::size_t>(std::min<std::int64_t>(remaining, chunk.size()));
        const std::size_t got = std::fread(chunk.data(), 1, want, file);
        if (got == 0) break;
        for (std::size_t k = 0; k < got; ++k) newlines += chunk[k] == '\n';
        remaining -= static_cast<std::int64_t>(got);
    }
    std::fclose(file);
    return newlines + 1;
}

}  // namespace jsmf::corpus::detail
