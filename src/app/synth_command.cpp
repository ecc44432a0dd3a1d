// SPDX-License-Identifier: MIT
// `jsmf synth`: write a UCI corpus drawn from a planted model, and the model beside it.

#include "app/commands.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/fit/synthetic_files.hpp"

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
    add_choice(sub, "--prior", o.prior, "Topic proportions: dirichlet or logistic-normal (correlated)");
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

int run_synth(const SynthCommand& c, const mpi::Comm& world, const std::string& command_line) {
    fit::SynthJob job;
    job.options = c.options;
    job.folder = c.directory;
    job.name = c.name;
    job.gzip = c.gzip;
    job.from = c.from;
    job.from_topics = c.from_topics;
    job.docs_given = c.docs_option && c.docs_option->count() > 0;
    job.length_given = c.length_option && c.length_option->count() > 0;
    job.stream = c.stream;
    job.command_line = command_line;
    const fit::SynthOutcome r = fit::write_synthetic(world, job, log_report());
    const synth::SynthOptions& o = r.options;
    if (c.stream) {
        log::info("synth: {} documents ({} non-empty), {} words, {} topics, {} tokens, {} nonzeros in {:.2f} s, {} parts",
                  o.num_docs, r.nonempty, o.num_words, o.num_topics, r.tokens, r.nonzeros, r.seconds, r.parts);
        log::info("synth: wrote {}/docword.{}.part*.txt, vocab.{}.txt and truth.{}.h5", c.directory, c.name, c.name,
                  c.name);
        return exit_code::ok;
    }
    log::info("synth: {} documents ({} non-empty), {} words, {} topics, {} tokens in {:.2f} s", o.num_docs, r.nonempty,
              o.num_words, o.num_topics, r.tokens, r.seconds);
    log::info("synth: wrote {}, {}, {} and {} (dominant topic of each document)", r.docword, r.vocab, r.truth, r.labels);
    return exit_code::ok;
}

}  // namespace jsmf::app
