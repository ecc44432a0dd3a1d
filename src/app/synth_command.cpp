// SPDX-License-Identifier: MIT
// `jsmf synth`: write a UCI corpus drawn from a planted model, and the model beside it.
#include <sys/stat.h>

#include <cstdio>

#include "app/commands.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/fit/semi_synthetic.hpp"
#include "jsmf/io/provenance.hpp"
#include "jsmf/io/synth_file.hpp"
#include "jsmf/mpi/agree.hpp"

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
        ->check(CLI::IsMember({"dirichlet", "logistic-normal"}))
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
    return sub;
}

int run_synth(const SynthCommand& c, const mpi::Comm& world, const std::string& command_line) {
    Stopwatch clock;
    synth::SynthOptions options = c.options;
    options.prior = c.prior == "dirichlet" ? synth::TopicPrior::dirichlet : synth::TopicPrior::logistic_normal;
    std::string docword, vocab_path, truth, labels_path;
    synth::SynthCorpus corpus;
    // Generation is serial; rank 0 does it and the others learn the outcome.
    mpi::check_on_root(world, "synth", [&] {
        if (mkdir(c.directory.c_str(), 0755) != 0 && errno != EEXIST)
            throw InputError(c.directory, "cannot create directory");
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
    });
    log::info("synth: {} documents ({} non-empty), {} words, {} topics, {} tokens in {:.2f} s",
              options.num_docs, corpus.docs.num_docs(), options.num_words, options.num_topics,
              [&] { Index n = 0; for (auto v : corpus.docs.counts) n += v; return n; }(), clock.seconds());
    log::info("synth: wrote {}, {}, {} and {} (dominant topic of each document)", docword, vocab_path, truth,
              labels_path);
    return exit_code::ok;
}

}  // namespace jsmf::app
