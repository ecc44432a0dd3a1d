// SPDX-License-Identifier: MIT
// `jsmf synth`: write a UCI corpus drawn from a planted model, and the model beside it.

#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/fit/semi_synthetic.hpp"
#include "jsmf/io/output_path.hpp"
#include "jsmf/io/provenance.hpp"
#include "jsmf/io/synth_file.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/synth/synth.hpp"

namespace jsmf::app {

CLI::App* add_synth_command(CLI::App& app, SynthCommand& c) {
    CLI::App* sub = app.add_subcommand("synth", "Write a synthetic UCI corpus with known topics B and correlations A");
    auto& o = c.options;
    sub->add_option("--dir", c.directory, "Output directory (created if missing)")->capture_default_str();
    sub->add_option("--name", c.name, "Corpus name X: writes docword.X.txt, vocab.X.txt, truth.X.h5, labels.X.txt")->capture_default_str();
    sub->add_flag("--gzip", c.gzip, "Write docword.X.txt.gz");
    c.docs_option = sub->add_option("--docs", o.num_docs, "Number of documents D (with --from: default the model's M)")
                        ->capture_default_str();
    sub->add_option("--words", o.num_words, "Vocabulary size N")->capture_default_str();
    sub->add_option("--topics", o.num_topics, "Number of topics K")->capture_default_str();
    sub->add_option("--anchors-per-topic", o.anchors_per_topic, "Anchor words per topic")->capture_default_str();
    sub->add_option("--anchor-mass", o.anchor_mass, "p(anchor | its topic)")->capture_default_str();
    sub->add_option("--word-concentration", o.word_concentration, "Dirichlet concentration of topic-word weights")
        ->capture_default_str();
    sub->add_option("--prior", c.prior, "Topic proportions: dirichlet or logistic-normal (correlated)")
        ->check(CLI::IsMember(choices<synth::TopicPrior>()))
        ->capture_default_str();
    sub->add_option("--alpha", o.alpha, "Symmetric Dirichlet parameter")->capture_default_str();
    sub->add_option("--sigma", o.sigma, "Logistic-normal scale")->capture_default_str();
    sub->add_option("--correlation", o.correlation, "Logistic-normal rho: Sigma_kl = sigma^2 rho^|k-l|")->capture_default_str();
    sub->add_option("--groups", o.groups,
                    "Logistic-normal: G contiguous groups of topics, Sigma_kl = sigma^2 rho within a group and 0 across "
                    "(a planted hierarchy; 0: rho^|k-l|)")
        ->capture_default_str();
    c.length_option = sub->add_option("--doc-length", o.mean_doc_length,
                                      "Mean document length (Poisson; with --from: default the model corpus's)")
                          ->capture_default_str();
    sub->add_option("--from", c.from,
                    "A model file (jsmf fit): draw a semi-synthetic corpus from its B and a prior fitted to its A "
                    "(the Arora et al. protocol): --prior dirichlet (alpha by RECOVER-ALPHA) or logistic-normal "
                    "(moment matching); --words/--topics/--anchor* are then the model's");
    sub->add_option("--from-topics", c.from_topics, "With --from: which K of the file (default: its first)");
    sub->add_option("--seed", o.seed, "Random seed")->capture_default_str();
    sub->add_option("--zipf", o.zipf,
                    "Zipfian word frequencies: each topic's ordinary word weights times (i + 1)^-s for word i "
                    "(0: none)")
        ->capture_default_str();
    sub->add_flag("--stream", c.stream,
                  "For corpora of any size: every rank draws its share of the documents (each from its own seeded "
                  "stream, so the corpus does not depend on the rank count) and writes them as it goes to "
                  "docword.X.partNNNN.txt (rank NNNN; jsmf fit --corpus takes the parts together); no rank holds "
                  "the corpus. The truth file holds B, A and the anchors; no labels or per-document proportions");
    return sub;
}

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
int run_synth_stream(const SynthCommand& c, const mpi::Comm& world, const std::string& command_line,
                     synth::SynthOptions options) {
    Stopwatch clock;
    synth::PlantedModel model;
    mpi::run_local_phase(world, "synth", [&] {
        if (!c.from.empty()) throw usage_error("--stream draws from a planted model: give no --from");
        if (c.gzip) throw usage_error("--stream writes plain text parts (their headers are filled in at the end): no --gzip");
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
        io::check_output_folder(c.directory, names);
        made = io::create_output_folder(c.directory);
    });
    const auto temporary = [&](const std::string& name) { return c.directory + "/.partial-" + name; };
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
        provenance.command_line = command_line;
        provenance.created = io::now_iso8601();
        provenance.options = {{"docs", std::to_string(options.num_docs)},   {"words", std::to_string(options.num_words)},
                              {"topics", std::to_string(options.num_topics)}, {"zipf", std::to_string(options.zipf)},
                              {"stream", "yes"},                              {"parts", std::to_string(world.size())},
                              {"prior", c.prior},                             {"alpha", std::to_string(options.alpha)},
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
            io::remove_created_folder(c.directory, made);
        }
        throw;
    }
    std::vector<std::pair<std::string, std::string>> mine = {{temporary(part(world.rank())), c.directory + "/" + part(world.rank())}};
    if (world.is_root()) {
        mine.emplace_back(temporary("vocab." + c.name + ".txt"), c.directory + "/vocab." + c.name + ".txt");
        mine.emplace_back(temporary("truth." + c.name + ".h5"), c.directory + "/truth." + c.name + ".h5");
    }
    mpi::run_local_phase(world, "synth", [&] {
        for (const auto& [from, to] : mine)
            if (std::rename(from.c_str(), to.c_str()) != 0) throw InputError(to, "cannot rename into place");
    });
    log::info("synth: {} documents ({} non-empty), {} words, {} topics, {} tokens, {} nonzeros in {:.2f} s, {} parts",
              options.num_docs, totals[0], options.num_words, options.num_topics, totals[1], totals[2], clock.seconds(),
              world.size());
    log::info("synth: wrote {}/docword.{}.part*.txt, vocab.{}.txt and truth.{}.h5", c.directory, c.name, c.name, c.name);
    return exit_code::ok;
}

/// Rank 0: draws the corpus (planted, or --from a model) and writes its four files into
/// c.directory (which exists), all or none; their paths go to the out-parameters.
void write_synth_files(const SynthCommand& c, synth::SynthOptions& options, const std::string& command_line,
                       std::string& docword, std::string& vocab_path, std::string& truth, std::string& labels_path,
                       synth::SynthCorpus& corpus) {
    docword = c.directory + "/docword." + c.name + ".txt" + (c.gzip ? ".gz" : "");
    vocab_path = c.directory + "/vocab." + c.name + ".txt";
    truth = c.directory + "/truth." + c.name + ".h5";
    labels_path = c.directory + "/labels." + c.name + ".txt";
    if (c.from.empty()) {
        corpus = synth::generate(options);
    } else {
        fit::SemiSyntheticOptions from;
        from.topics = c.from_topics;
        if (c.docs_option && c.docs_option->count() > 0) from.num_docs = options.num_docs;
        if (c.length_option && c.length_option->count() > 0) from.mean_doc_length = options.mean_doc_length;
        corpus = fit::semi_synthetic(c.from, from, options, log_report());
    }
    const auto temporary = [&](const std::string& name) { return c.directory + "/.partial-" + name; };
    const auto write_truth = [&] {
        io::Provenance provenance;
        provenance.command_line = command_line;
        provenance.created = io::now_iso8601();
        provenance.options = {{"docs", std::to_string(options.num_docs)},
                              {"words", std::to_string(options.num_words)},
                              {"topics", std::to_string(options.num_topics)},
                              {"anchors_per_topic", std::to_string(options.anchors_per_topic)},
                              {"anchor_mass", std::to_string(options.anchor_mass)},
                              {"word_concentration", std::to_string(options.word_concentration)},
                              {"prior", c.prior},
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

int run_synth(const SynthCommand& c, const mpi::Comm& world, const std::string& command_line) {
    Stopwatch clock;
    synth::SynthOptions options = c.options;
    options.prior = parse_name<synth::TopicPrior>(c.prior, "prior");
    if (c.stream) return run_synth_stream(c, world, command_line, options);
    std::string docword, vocab_path, truth, labels_path;
    synth::SynthCorpus corpus;
    // Generation is serial; rank 0 does it and the others learn the outcome.
    mpi::check_on_root(world, "synth", [&] {
        const std::string docword_name = "docword." + c.name + ".txt" + (c.gzip ? ".gz" : "");
        io::check_output_folder(c.directory, {docword_name, "vocab." + c.name + ".txt", "truth." + c.name + ".h5",
                                              "labels." + c.name + ".txt"});
        const std::string made = io::create_output_folder(c.directory);  // removed again if the run fails
        try {
            write_synth_files(c, options, command_line, docword, vocab_path, truth, labels_path, corpus);
        } catch (...) {
            io::remove_created_folder(c.directory, made);
            throw;
        }
    });
    log::info("synth: {} documents ({} non-empty), {} words, {} topics, {} tokens in {:.2f} s",
              options.num_docs, corpus.docs.num_docs(), options.num_words, options.num_topics,
              [&] { Index n = 0; for (auto v : corpus.docs.counts) n += v; return n; }(), clock.seconds());
    log::info("synth: wrote {}, {}, {} and {} (dominant topic of each document)", docword, vocab_path, truth,
              labels_path);
    return exit_code::ok;
}

}  // namespace jsmf::app
