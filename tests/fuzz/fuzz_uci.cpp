// SPDX-License-Identifier: MIT
// Fuzzes the UCI docword reader (plain and gzip): header, every data line, the per-file
// checks one rank can make. The first byte picks how the rest is stored: as it is (plain,
// or gzip if it starts with gzip's magic), gzip-compressed whole (so mutations reach the
// lines inside a valid stream), or compressed and then cut short (a truncated download).
#include <zlib.h>

#include <vector>

#include "fuzz_support.hpp"
#include "jsmf/corpus/uci.hpp"

namespace {

std::vector<std::uint8_t> gzip(const std::uint8_t* data, std::size_t size) {
    z_stream stream{};
    if (deflateInit2(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
    std::vector<std::uint8_t> out(deflateBound(&stream, size) + 32);
    stream.next_in = const_cast<std::uint8_t*>(data);
    stream.avail_in = static_cast<uInt>(size);
    stream.next_out = out.data();
    stream.avail_out = static_cast<uInt>(out.size());
    if (deflate(&stream, Z_FINISH) != Z_STREAM_END) std::abort();
    out.resize(stream.total_out);
    deflateEnd(&stream);
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace jsmf;
    const int storage = fuzz::take_choice(data, size, 3);
    if (storage < 0) return 0;
    const std::string path = fuzz::scratch_path(".docword");
    if (storage == 0) {
        fuzz::write_file(path, data, size);
    } else {
        std::vector<std::uint8_t> zipped = gzip(data, size);
        if (storage == 2) zipped.resize(zipped.size() / 2);
        fuzz::write_file(path, zipped.data(), zipped.size());
    }
    fuzz::expect_refusal_or_success([&] {
        std::vector<corpus::UciFile> files{corpus::inspect_uci_file(path)};
        // One rank reading everything, and the first of two ranks (a piece ending mid-file).
        for (const int ranks : {1, 2}) {
            corpus::UciReader reader(files, corpus::plan_uci_pieces(files, 0, ranks));
            corpus::Document doc;
            while (reader.next(doc)) {
            }
        }
    });
    return 0;
}
