// SPDX-License-Identifier: MIT
// `jsmf eval`: (re)measures a model file: its metrics, against C and the corpus, and a planted truth.
#include <cstdio>

#include "app/commands.hpp"
#include "app/output.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/fit/evaluate.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::app {

CLI::App* add_eval_command(CLI::App& app, EvalCommand& c) {
    CLI::App* sub = app.add_subcommand(
        "eval", "Measure a model file: the papers' metrics (from B and A; with --cooc or --corpus also against C and "
                "the documents), and the error against a planted truth (--truth)");
    sub->add_option("model", c.model, "Model file from jsmf fit")->required();
    add_cooc_options(sub, c.input, false);
    sub->add_option("--cooc", c.cooc_file,
                    "The co-occurrence file the model was fitted on (recovery and approximation errors; the "
                    "recorded rectification is run again for the errors against the rectified C)");
    sub->add_option("--labels", c.labels,
                    "Document labels (one integer per line, in corpus order; needs --corpus): ClustAcc");
    sub->add_option("--seed", c.seed, "Seed of ClustAcc's k-means")->capture_default_str();
    sub->add_option("--truth", c.truth, "A planted model (truth.X.h5 from jsmf synth): topic matching and errors");
    sub->add_option("--out", c.out, "Write the measured model here (default: update MODEL in place, atomically)");
    sub->add_option("--block-size", c.block_size, "Block size of C's block-cyclic layout")->capture_default_str();
    sub->add_option("--grid", c.grid, "Process grid RxC (default: most square)");
    return sub;
}

int run_eval(const EvalCommand& c, const mpi::Comm& world, const std::string& command_line) {
    (void)command_line;
    fit::EvalJob job;
    mpi::run_local_phase(world, "setup", [&] {
        parse_grid_shape(c.grid, world.size(), job.grid_rows, job.grid_cols);
        if (c.block_size < 1) throw usage_error("--block-size must be at least 1");
        if (!c.input.vocab.empty() && c.input.corpus.empty()) throw usage_error("--vocab needs --corpus");
        if (!c.labels.empty() && c.input.corpus.empty()) throw usage_error("--labels needs --corpus");
        if (!c.cooc_file.empty() && !c.input.vocab.empty())
            throw usage_error("--cooc and --vocab exclude each other (C comes from one of them)");
        job.corpus = corpus_source(c.input, c.block_size);
    });
    job.model = c.model;
    job.cooc_file = c.cooc_file;
    job.truth = c.truth;
    job.labels = c.labels;
    job.seed = c.seed;
    job.out = c.out;
    const std::vector<model::Model> models = fit::evaluate(world, job, log_report());
    if (world.is_root()) {
        for (const auto& m : models) {
            std::printf("\n== K = %d ==\n", m.num_topics);
            print_metrics(m);
        }
        std::fflush(stdout);
    }
    log::info("eval: wrote {}", c.out.empty() ? c.model : c.out);
    return exit_code::ok;
}

}  // namespace jsmf::app
