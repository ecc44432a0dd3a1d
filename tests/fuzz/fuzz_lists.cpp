// SPDX-License-Identifier: MIT
// Fuzzes the small line-oriented readers: the vocabulary (vocab.X.txt), the anchor-word
// file (fit --anchor-words, against a fixed vocabulary), the "id label" file (prepare
// --labels), the stop-word file (prepare --stopwords) and a prepared corpus's manifest
// (prepare.<name>.json, read by fit --prepared), the labels file (eval, fit and sweep
// --labels), the items file (prepare --items), the document ids (infer --doc-ids) and a
// prepared corpus's documents (its ids, label names and labels, as fit --prepared reads
// them; the input is the three files separated by NUL bytes). The first byte picks the
// reader (modulo 9: the first five kept their bytes when the others came).
#include <algorithm>
#include <filesystem>

#include "fuzz_support.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/fit/measure.hpp"
#include "jsmf/infer/corpus.hpp"
#include "jsmf/prepare/prepare.hpp"
#include "jsmf/prepare/sources.hpp"
#include "jsmf/prepare/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace jsmf;
    const int reader = fuzz::take_choice(data, size, 9);
    if (reader < 0) return 0;
    if (reader == 8) {
        prepare::PreparedCorpus p;
        p.doc_ids = fuzz::scratch_path(".ids");
        p.label_names = fuzz::scratch_path(".label_names");
        p.labels = fuzz::scratch_path(".labels");
        const std::uint8_t* part = data;
        const std::uint8_t* const end = data + size;
        for (const std::string* path : {&p.doc_ids, &p.label_names, &p.labels}) {
            const std::uint8_t* stop = std::find(part, end, std::uint8_t{0});
            fuzz::write_file(*path, part, static_cast<std::size_t>(stop - part));
            part = stop == end ? end : stop + 1;
        }
        fuzz::expect_refusal_or_success([&] { prepare::read_prepared_documents(p); });
        return 0;
    }
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
        case 3: prepare::read_stopwords(path); break;
        case 5: fit::read_labels(path, 3); break;  // a corpus of 3 documents
        case 6: prepare::read_item_names(path); break;
        default: infer::read_doc_ids(path, 3); break;
        }
    });
    return 0;
}
