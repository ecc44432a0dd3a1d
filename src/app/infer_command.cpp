// SPDX-License-Identifier: MIT
// `jsmf infer`: per-document topic proportions θ of a corpus under a fitted model.
#include <filesystem>

#include "app/commands.hpp"
#include "app/infer_stage.hpp"
#include "jsmf/fit/job.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::app {

void add_infer_options(CLI::App* sub, InferSettings& s) {
    add_choice(sub, "--prior", s.prior,
                    "none: θ maximizes the likelihood; alpha: MAP under the model's Dirichlet α (fit --alpha: the α "
                    "RECOVER-ALPHA fits to A, i.e. the topics' prevalence and concentration the model learned; "
                    "α_k < 1 count as 1, as no MAP exists below)");
    sub->add_option("--infer-tolerance", s.options.tolerance, "EM stops when no θ_k moves more than this")
        ->capture_default_str();
    sub->add_option("--infer-iterations", s.options.max_iterations, "EM's iteration cap per document")
        ->capture_default_str();
}

CLI::App* add_infer_command(CLI::App& app, InferCommand& c) {
    CLI::App* sub = app.add_subcommand(
        "infer", "Per-document topic proportions θ of a corpus under a fitted model (B fixed), and its held-out "
                 "per-word log-likelihood");
    sub->add_option("--model", c.model, "A model file from jsmf fit")->required();
    sub->add_option("--topics", c.topics, "Which K of the model file (default: its only or first)");
    sub->add_option("--corpus", c.input.corpus, "UCI docword file(s) (plain or gzip)");
    sub->add_option("--vocab", c.input.vocab,
                    "The corpus's vocabulary: its words are mapped to the model's by name (without it the corpus "
                    "must use the model's word ids)");
    sub->add_option("--prepared", c.prepared, "A folder written by jsmf prepare (instead of --corpus/--vocab)");
    sub->add_option("--name", c.prepared_name, "With --prepared: which corpus of the folder");
    sub->add_option("--out", c.out, "Output file (HDF5): theta, dominant_topic, log_likelihood, ...")->required();
    add_infer_options(sub, c.settings);
    return sub;
}

int run_infer(const InferCommand& c, const mpi::Comm& world, const std::string& command_line) {
    fit::InferJob job;
    mpi::check_on_root(world, "setup", [&] { fit::check_inference(c.settings.options, c.out, c.model); });
    job.model = c.model;
    job.topics = c.topics;
    job.input = c.input;
    job.prepared = c.prepared;
    job.prepared_name = c.prepared_name;
    job.out = c.out;
    job.options = c.settings.options;
    job.prior = c.settings.prior;
    job.command_line = command_line;
    report_infer(world, fit::infer(world, job), c.out);
    return exit_code::ok;
}

}  // namespace jsmf::app
