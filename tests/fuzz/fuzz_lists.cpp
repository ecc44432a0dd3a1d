// SPDX-License-Identifier: MIT
// Fuzzes the small line-oriented readers: the vocabulary (vocab.X.txt), the anchor-word
// file (fit --anchor-words, against a fixed vocabulary), the "id label" file (prepare
// --labels), the stop-word file (prepare --stopwords) and a prepared corpus's manifest
// (prepare.<name>.json, read by fit --prepared). The first byte picks the reader.
#include <filesystem>

#include "fuzz_support.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/prepare/prepare.hpp"
#include "jsmf/prepare/sources.hpp"
#include "jsmf/prepare/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace jsmf;
    const int reader = fuzz::take_choice(data, size, 5);
    if (reader < 0) return 0;
    if (reader == 4) {
        // The manifest must be found in a folder as prepare.<name>.json.
        const std::string dir = fuzz::scratch_path(".prepared");
        std::filesystem::create_directories(dir);
        fuzz::write_file(prepare::manifest_path(dir, "fuzz"), data, size);
        fuzz::expect_refusal_or_success([&] { prepare::find_prepared(dir, "fuzz"); });
        return 0;
    }
    const std::string path = fuzz::scratch_path(".list");
    fuzz::write_file(path, data, size);
    fuzz::expect_refusal_or_success([&] {
        switch (reader) {
        case 0: corpus::read_vocab(path, -1); break;
        case 1: {
            static const std::vector<std::string> vocab{"alpha", "beta", "gamma", "delta", "#not", "a b", "ünï"};
            corpus::read_anchor_words(path, vocab);
            break;
        }
        case 2: prepare::read_label_file(path); break;
        default: prepare::read_stopwords(path); break;
        }
    });
    return 0;
}
