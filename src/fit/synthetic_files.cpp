// SPDX-License-Identifier: MIT
// A synthetic corpus and its truth written as files: planted, drawn from a model file, or
// streamed by every rank.
#include "jsmf/fit/synthetic_files.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "jsmf/core/timer.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/fit/semi_synthetic.hpp"
#include "jsmf/io/output_path.hpp"
#include "jsmf/io/provenance.hpp"
#include "jsmf/io/synth_file.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::fit {
namespace {

/// Writes one rank's part of a streamed corpus: a UCI file whose header (D_r, N, NNZ_r)
/// is reserved zero-padded and filled in at the end, the lines buffered by hand (the
/// fastest portable way to print ~10⁸ integers).
class PartWriter {
public:
    PartWriter(const std::string& path, Index num_words) : path_(path), num_words_(num_words) {
        file_ = std::fopen(path.c_str(), "wb");
        if (!file_) throw InputError(path, "cannot create");
        header(0, 0);
    }
    ~PartWriter() {
        if (file_) std::fclose(file_);
    }
    PartWriter(const PartWriter&) = delete;
    PartWriter& operator=(const PartWriter&) = delete;

    void document(Index local_id, const std::vector<std::uint32_t>& words, const std::vector<std::uint32_t>& counts) {
        for (std::size_t k = 0; k < words.size(); ++k) {
            if (buffer_.size() > (1u << 20)) flush();
            put(local_id);
            buffer_ += ' ';
            put(static_cast<Index>(words[k]) + 1);
            buffer_ += ' ';
            put(counts[k]);
            buffer_ += '\n';
            ++entries_;
        }
    }
    /// Fills in the header and closes the file.
    void finish(Index num_docs) {
        flush();
        header(num_docs, entries_);
        if (std::fclose(file_) != 0) {
            file_ = nullptr;
            throw InputError(path_, "cannot write (disk full?)");
        }
        file_ = nullptr;
    }

private:
    void put(Index value) {
        char digits[24];
        int n = 0;
        do digits[n++] = static_cast<char>('0' + value % 10);
        while ((value /= 10) > 0);
        while (n > 0) buffer_ += digits[--n];
    }
    void flush() {
        if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size())
            throw InputError(path_, "cannot write (disk full?)");
        buffer_.clear();
    }
    void header(Index docs, Index entries) {
        char text[80];
        const int n = std::snprintf(text, sizeof text, "%020lld\n%020lld\n%020lld\n", static_cast<long long>(docs),
                                    static_cast<long long>(num_words_), static_cast<long long>(entries));
        if (std::fseek(file_, 0, SEEK_SET) != 0 || std::fwrite(text, 1, static_cast<std::size_t>(n), file_) != static_cast<std::size_t>(n) ||
            std::fseek(file_, 0, SEEK_END) != 0)
            throw InputError(path_, "cannot write the header");
    }
    std::string path_;
    Index num_words_;
    std::FILE* file_ = nullptr;
    std::string buffer_;
    Index entries_ = 0;
};

/// synth --stream: the model on every rank (the same draws), each rank its documents.
SynthOutcome write_stream(const mpi::Comm& world, const SynthJob& c, synth::SynthOptions options) {
    Stopwatch clock;
    synth::PlantedModel model;
    mpi::run_local_phase(world, "synth", [&] {
        if (!c.from.empty()) throw OptionError("{stream} draws from a planted model: give no {from}");
        if (c.gzip) throw OptionError("{stream} writes plain text parts (their headers are filled in at the end): no {gzip}");
        model = synth::plant_model(options);
    });
    const auto part = [&](int rank) {
        char suffix[32];
        std::snprintf(suffix, sizeof suffix, ".part%04d.txt", rank);
        return "docword." + c.name + suffix;
    };
    std::string made;  // rank 0: the folder this run created, removed again if it fails
    mpi::check_on_root(world, "synth", [&] {
        std::vector<std::string> names = {"vocab." + c.name + ".txt", "truth." + c.name + ".h5"};
        for (int rank = 0; rank < world.size(); ++rank) names.push_back(part(rank));
        io::check_output_folder(c.folder, names);
        made = io::create_output_folder(c.folder);
    });
    const auto temporary = [&](const std::string& name) { return c.folder + "/.partial-" + name; };
    const Index first = options.num_docs * world.rank() / world.size();
    const Index last = options.num_docs * (world.rank() + 1) / world.size();
    synth::RangeStats stats;
    std::vector<std::string> partial = {temporary(part(world.rank()))};
    if (world.is_root())
        for (const std::string& name : {"vocab." + c.name + ".txt", "truth." + c.name + ".h5"}) partial.push_back(temporary(name));
    std::int64_t totals[3] = {0, 0, 0};  // non-empty documents, tokens, nonzeros
    try {
    // Each rank its part; rank 0 the vocabulary and the truth. Renamed into place only when
    // every rank has written everything: never a corpus without its truth, or a part missing.
    mpi::run_local_phase(world, "synth", [&] {
        PartWriter writer(temporary(part(world.rank())), options.num_words);
        stats = synth::draw_document_range(model, options, first, last,
                                           [&](Index m, const std::vector<std::uint32_t>& words,
                                               const std::vector<std::uint32_t>& counts) {
                                               writer.document(m - first + 1, words, counts);
                                           });
        writer.finish(last - first);
    });
    Eigen::MatrixXd moment = stats.w_moment;
    mpi::allreduce_inplace(world, moment.data(), static_cast<std::size_t>(moment.size()), MPI_SUM);
    totals[0] = stats.nonempty;
    totals[1] = stats.tokens;
    totals[2] = stats.entries;
    mpi::allreduce_inplace(world, totals, 3, MPI_SUM);
    mpi::run_local_phase(world, "synth", [&] {
        if (!world.is_root()) return;
        corpus::write_vocab(temporary("vocab." + c.name + ".txt"), model.vocab);
        synth::SynthCorpus truth;
        truth.num_docs = options.num_docs;
        truth.vocab = model.vocab;
        truth.B = model.B;
        truth.A = model.A;
        truth.A_empirical = moment / static_cast<double>(options.num_docs);
        truth.anchors = model.anchors;
        io::Provenance provenance;
        provenance.command_line = c.command_line;
        provenance.created = io::now_iso8601();
        provenance.options = {{"docs", std::to_string(options.num_docs)},   {"words", std::to_string(options.num_words)},
                              {"topics", std::to_string(options.num_topics)}, {"zipf", std::to_string(options.zipf)},
                              {"stream", "yes"},                              {"parts", std::to_string(world.size())},
                              {"prior", name_of(options.prior)},                             {"alpha", std::to_string(options.alpha)},
                              {"anchor_mass", std::to_string(options.anchor_mass)},
                              {"word_concentration", std::to_string(options.word_concentration)},
                              {"doc_length", std::to_string(options.mean_doc_length)},
                              {"seed", std::to_string(options.seed)}};
        io::write_synth_truth(temporary("truth." + c.name + ".h5"), truth, options, provenance);
    });
    } catch (...) {  // every rank fails together (run_local_phase): no partial files left behind
        for (const std::string& path : partial) std::remove(path.c_str());
        if (world.is_root()) {
            // Every rank's part too (the others may not have removed theirs yet): the
            // folder must be empty to go.
            for (int r = 0; r < world.size(); ++r) std::remove(temporary(part(r)).c_str());
            io::remove_created_folder(c.folder, made);
        }
        throw;
    }
    std::vector<std::pair<std::string, std::string>> mine = {{temporary(part(world.rank())), c.folder + "/" + part(world.rank())}};
    if (world.is_root()) {
        mine.emplace_back(temporary("vocab." + c.name + ".txt"), c.folder + "/vocab." + c.name + ".txt");
        mine.emplace_back(temporary("truth." + c.name + ".h5"), c.folder + "/truth." + c.name + ".h5");
    }
    mpi::run_local_phase(world, "synth", [&] {
        for (const auto& [from, to] : mine)
            if (std::rename(from.c_str(), to.c_str()) != 0) throw InputError(to, "cannot rename into place");
    });
    SynthOutcome outcome;
    outcome.options = options;
    outcome.nonempty = totals[0];
    outcome.tokens = totals[1];
    outcome.nonzeros = totals[2];
    outcome.parts = world.size();
    outcome.seconds = clock.seconds();
    return outcome;
}

/// Rank 0: draws the corpus (planted, or --from a model) and writes its four files into
/// c.folder (which exists), all or none; their paths go to the out-parameters.
void write_synth_files(const SynthJob& c, synth::SynthOptions& options, std::string& docword, std::string& vocab_path,
                       std::string& truth, std::string& labels_path, synth::SynthCorpus& corpus, const Report& report) {
    docword = c.folder + "/docword." + c.name + ".txt" + (c.gzip ? ".gz" : "");
    vocab_path = c.folder + "/vocab." + c.name + ".txt";
    truth = c.folder + "/truth." + c.name + ".h5";
    labels_path = c.folder + "/labels." + c.name + ".txt";
    if (c.from.empty()) {
        corpus = synth::generate(options);
    } else {
        SemiSyntheticOptions from;
        from.topics = c.from_topics;
        if (c.docs_given) from.num_docs = options.num_docs;
        if (c.length_given) from.mean_doc_length = options.mean_doc_length;
        corpus = semi_synthetic(c.from, from, options, report);
    }
    const auto temporary = [&](const std::string& name) { return c.folder + "/.partial-" + name; };
    const auto write_truth = [&] {
        io::Provenance provenance;
        provenance.command_line = c.command_line;
        provenance.created = io::now_iso8601();
        provenance.options = {{"docs", std::to_string(options.num_docs)},
                              {"words", std::to_string(options.num_words)},
                              {"topics", std::to_string(options.num_topics)},
                              {"anchors_per_topic", std::to_string(options.anchors_per_topic)},
                              {"anchor_mass", std::to_string(options.anchor_mass)},
                              {"word_concentration", std::to_string(options.word_concentration)},
                              {"prior", name_of(options.prior)},
                              {"from", c.from},
                              {"alpha", std::to_string(options.alpha)},
                              {"sigma", std::to_string(options.sigma)},
                              {"correlation", std::to_string(options.correlation)},
                              {"groups", std::to_string(options.groups)},
                              {"doc_length", std::to_string(options.mean_doc_length)},
                              {"seed", std::to_string(options.seed)}};
        io::write_synth_truth(temporary("truth." + c.name + ".h5"), corpus, options, provenance);
    };
    // All four files go under hidden temporary names (the suffix kept: it selects gzip)
    // and take their names only once all are written: never a corpus without its truth.
    // A failed rename removes what was already renamed: no mixed set is left.
    const std::vector<std::pair<std::string, std::string>> files = {
        {temporary("docword." + c.name + ".txt" + (c.gzip ? ".gz" : "")), docword},
        {temporary("vocab." + c.name + ".txt"), vocab_path},
        {temporary("labels." + c.name + ".txt"), labels_path},
        {temporary("truth." + c.name + ".h5"), truth}};
    std::vector<std::string> renamed;
    try {
        synth::write_uci(files[0].first, corpus.docs, corpus.num_docs, options.num_words);
        corpus::write_vocab(files[1].first, corpus.vocab);
        synth::write_labels(files[2].first, corpus.labels);
        write_truth();
        for (const auto& [from, to] : files) {
            if (std::rename(from.c_str(), to.c_str()) != 0) throw InputError(to, "cannot rename into place");
            renamed.push_back(to);
        }
    } catch (...) {
        for (const auto& file : files) std::remove(file.first.c_str());
        for (const auto& path : renamed) std::remove(path.c_str());
        throw;
    }
}

}  // namespace

SynthOutcome write_synthetic(const mpi::Comm& world, const SynthJob& job, const Report& report) {
    Stopwatch clock;
    synth::SynthOptions options = job.options;
    if (job.stream) return write_stream(world, job, options);
    SynthOutcome outcome;
    synth::SynthCorpus corpus;
    // Generation is serial; rank 0 does it and the others learn the outcome.
    mpi::check_on_root(world, "synth", [&] {
        const std::string docword_name = "docword." + job.name + ".txt" + (job.gzip ? ".gz" : "");
        io::check_output_folder(job.folder, {docword_name, "vocab." + job.name + ".txt", "truth." + job.name + ".h5",
                                             "labels." + job.name + ".txt"});
        const std::string made = io::create_output_folder(job.folder);  // removed again if the run fails
        try {
            write_synth_files(job, options, outcome.docword, outcome.vocab, outcome.truth, outcome.labels, corpus,
                              report);
        } catch (...) {
            io::remove_created_folder(job.folder, made);
            throw;
        }
    });
    outcome.options = options;  // rank 0's: what was drawn (--from sets the model's sizes)
    outcome.nonempty = corpus.docs.num_docs();
    for (const auto count : corpus.docs.counts) outcome.tokens += count;
    outcome.seconds = clock.seconds();
    return outcome;
}

}  // namespace jsmf::fit
