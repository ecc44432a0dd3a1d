// SPDX-License-Identifier: MIT
// `jsmf infer`: per-document topic proportions θ of a corpus under a fitted model.
#include <filesystem>

#include "app/commands.hpp"
#include "app/infer_stage.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/prepare/prepare.hpp"

namespace jsmf::app {

void add_infer_options(CLI::App* sub, InferSettings& s) {
    sub->add_option("--prior", s.prior,
                    "none: θ maximizes the likelihood; alpha: MAP under the model's Dirichlet α (fit --alpha: the α "
                    "RECOVER-ALPHA fits to A, i.e. the topics' prevalence and concentration the model learned; "
                    "α_k < 1 count as 1, as no MAP exists below)")
        ->check(CLI::IsMember(choices<infer::Prior>()))
        ->capture_default_str();
    sub->add_option("--infer-tolerance", s.options.tolerance, "EM stops when no θ_k moves more than this")
        ->capture_default_str();
    sub->add_option("--infer-iterations", s.options.max_iterations, "EM's iteration cap per document")
        ->capture_default_str();
}

void check_infer_settings(const InferSettings& s, const std::string& out, const std::string& model) {
    if (s.options.tolerance <= 0) throw usage_error("--infer-tolerance must be positive");
    if (s.options.max_iterations < 1) throw usage_error("--infer-iterations must be at least 1");
    std::error_code ec1, ec2;
    if (std::filesystem::weakly_canonical(out, ec1) == std::filesystem::weakly_canonical(model, ec2))
        throw InputError(out, "is the model file: the θ file needs a path of its own");
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

infer::InferModel load_infer_model(const mpi::Comm& world, const std::string& path, int topics, infer::Prior prior,
                                   infer::InferOptions& options) {
    infer::InferModel model;
    model.file = path;
    Index N = 0;
    Eigen::VectorXd alpha;
    mpi::check_on_root(world, "setup", [&] {
        io::ModelFile file = io::read_model_file(path);
        const model::Model* chosen = &model::choose_model(file.models, topics, path);
        model.topics = chosen->num_topics;
        model.B = chosen->B;
        model.vocab = file.vocab;
        N = model.B.rows();
        if (prior == infer::Prior::alpha) {
            if (!chosen->has_alpha) throw InputError(path, "has no alpha (fit it with jsmf fit --alpha) for --prior alpha");
            alpha = chosen->alpha;
        }
    });
    mpi::broadcast(world, model.topics, 0);
    mpi::broadcast(world, N, 0);
    model.B.resize(N, model.topics);
    mpi::broadcast(world, model.B.data(), static_cast<std::size_t>(model.B.size()), 0);
    mpi::broadcast(world, model.vocab, 0);
    if (prior == infer::Prior::alpha) {
        alpha.resize(model.topics);
        mpi::broadcast(world, alpha.data(), static_cast<std::size_t>(alpha.size()), 0);
        options.alpha = alpha;
    }
    return model;
}

int run_infer(const InferCommand& command, const mpi::Comm& world, const std::string& command_line) {
    InferCommand c = command;
    mpi::check_on_root(world, "setup", [&] {
        check_infer_settings(c.settings, c.out, c.model);
        if (!c.prepared.empty()) {
            if (!c.input.corpus.empty() || !c.input.vocab.empty())
                throw usage_error("--prepared names the corpus: give no --corpus or --vocab with it");
            const prepare::PreparedCorpus p = prepare::find_prepared(c.prepared, c.prepared_name);
            c.input.corpus = {p.docword};
            c.input.vocab = p.vocab;
            c.input.doc_ids = p.doc_ids;
        } else if (c.input.corpus.empty()) {
            throw usage_error("give --corpus (or --prepared)");
        }
    });
    mpi::broadcast(world, c.input.corpus, 0);
    mpi::broadcast(world, c.input.vocab, 0);
    mpi::broadcast(world, c.input.doc_ids, 0);
    io::check_output_path(world, c.out, with(c.input.corpus, {c.input.vocab, c.input.doc_ids, c.model}));
    const infer::Prior prior = parse_name<infer::Prior>(c.settings.prior, "prior");  // CLI11 checked the name
    const infer::InferModel model = load_infer_model(world, c.model, c.topics, prior, c.settings.options);
    const fit::InferSummary summary = fit::infer_to_file(world, model, c.input, c.settings.options, prior, c.out, command_line);
    report_infer(world, summary, c.out);
    return exit_code::ok;
}

}  // namespace jsmf::app
