// SPDX-License-Identifier: MIT
// Fuzzes `jsmf prepare`'s readers of raw input: one document per line, JSON Lines, the
// Brown corpus's tagged files, ratings ("user item rating [timestamp]", a user's lines
// grouped) and playlists, each as one rank and as each of two ranks (a piece that starts
// or ends mid-file), and the tokenizer (ICU: normalization, word breaks) on every text
// document. The first byte picks the format.
#include "fuzz_support.hpp"
#include "jsmf/prepare/sources.hpp"
#include "jsmf/prepare/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace jsmf;
    using prepare::Format;
    static const Format formats[] = {Format::lines, Format::jsonl, Format::brown, Format::ratings, Format::playlists};
    const int choice = fuzz::take_choice(data, size, 5);
    if (choice < 0) return 0;
    const Format format = formats[choice];
    const std::string path = fuzz::scratch_path(".raw");
    fuzz::write_file(path, data, size);
    static prepare::Tokenizer tokenizer;
    fuzz::expect_refusal_or_success([&] {
        prepare::SourceOptions options;
        options.format = format;
        options.inputs = {path};
        const auto files = prepare::list_input_files(options);
        for (const auto& [rank, ranks] : {std::pair{0, 1}, std::pair{0, 2}, std::pair{1, 2}}) {
            prepare::RawReader reader(options, files, prepare::plan_pieces(files, format, rank, ranks));
            prepare::RawDocument doc;
            std::vector<std::string> tokens;
            while (reader.next(doc)) {
                if (!prepare::is_text_format(format)) continue;
                tokens.clear();
                tokenizer.tokenize(doc.text, tokens);
            }
        }
    });
    return 0;
}
