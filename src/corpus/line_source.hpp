// SPDX-License-Identifier: MIT
// Buffered line reading from a plain or gzip-compressed file, with positions for sharding.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace jsmf::corpus::detail {

/// One line without its terminator. `offset` is the byte offset of its first character
/// in the (decompressed) stream; `number` its 1-based line number when known (gzip
/// streams count lines as they go; plain files seek, so they compute it on demand).
struct Line {
    std::string_view text;
    std::int64_t offset = 0;
    std::int64_t number = -1;
};

/// Forward reader of lines. Plain files can seek to a byte offset; gzip streams are
/// read from the start (zlib cannot seek into a deflate stream cheaply).
class LineSource {
public:
    /// Local. Opens `path`; gzip is detected by its magic bytes, not its name.
    static std::unique_ptr<LineSource> open(const std::string& path);
    virtual ~LineSource();

    bool gzipped() const { return gzipped_; }
    const std::string& path() const { return path_; }
    /// Plain files only: size in bytes.
    std::int64_t size_bytes() const { return size_bytes_; }

    /// Next line; false at end of file. Throws InputError for I/O or gzip errors.
    bool next(Line& line);
    /// Plain files only: positions the reader at the first line starting at or after
    /// byte `offset` (offset 0 is the start of the file).
    void seek_line_at_or_after(std::int64_t offset);
    /// 1-based line number of the line starting at byte `offset`.
    std::int64_t line_number_at(std::int64_t offset);

protected:
    LineSource(std::string path, bool gzipped);
    /// Reads up to `size` bytes; returns 0 at end of file; throws on errors.
    virtual std::size_t read_raw(char* buffer, std::size_t size) = 0;
    virtual void seek_raw(std::int64_t offset) = 0;

    std::string path_;
    bool gzipped_ = false;
    std::int64_t size_bytes_ = -1;

private:
    bool fill();
    std::vector<char> buffer_;
    std::size_t begin_ = 0, end_ = 0;   // unread bytes in buffer_
    std::int64_t buffer_offset_ = 0;    // stream offset of buffer_[0]
    std::int64_t lines_read_ = 0;       // lines returned since the start of the file
    bool line_numbers_known_ = true;    // false after a seek
    bool eof_ = false;
    std::string carry_;                 // a line longer than the buffer
};

}  // namespace jsmf::corpus::detail
