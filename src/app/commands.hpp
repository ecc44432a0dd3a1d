// SPDX-License-Identifier: MIT
// The subcommands of the jsmf binary: each binds flags to an options struct, then runs.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "app/infer_stage.hpp"
#include "app/model_stage.hpp"
#include "app/stages.hpp"
#include "jsmf/mpi/comm.hpp"
#include "jsmf/fit/job.hpp"
#include "jsmf/fit/model_report.hpp"
#include "jsmf/fit/synthetic_files.hpp"
#include "jsmf/prepare/prepare.hpp"  // prepare composes itself: run_prepare

namespace jsmf::app {

struct SynthCommand {
    synth::SynthOptions options;
    std::string directory = ".";
    std::string name = "synth";
    bool gzip = false;
    std::string from;        ///< a model file: draw from its B and a Dirichlet fitted to its A
    int from_topics = 0;     ///< which K of that file (0: its first)
    CLI::Option* docs_option = nullptr;    ///< to tell whether --docs was given
    CLI::Option* length_option = nullptr;  ///< and --doc-length
    bool stream = false;     ///< every rank draws and writes its share of the documents (docword.X.partNNNN.txt)
};
CLI::App* add_synth_command(CLI::App& app, SynthCommand& command);
/// Collective on `world` (rank 0 generates and writes; the others wait for its verdict).
int run_synth(const SynthCommand& command, const mpi::Comm& world, const std::string& command_line);

struct CoocCommand {
    CoocSettings input;
    std::vector<std::string> add;  ///< --add: co-occurrence files to sum instead of a corpus
    int block_size = 64;
    std::string out;
    std::string grid;  ///< "RxC"; empty for the most-square grid
    int compression = 1;
    std::vector<std::string> given;  ///< the settings given on the command line (given_settings)
};
CLI::App* add_cooc_command(CLI::App& app, CoocCommand& command);
/// Collective on `world`.
int run_cooc(const CoocCommand& command, const mpi::Comm& world, const std::string& command_line);

struct PrepareCommand {
    prepare::PrepareOptions options;
};
CLI::App* add_prepare_command(CLI::App& app, PrepareCommand& command);
/// Collective on `world`; rank 0 prints the summary.
int run_prepare(PrepareCommand command, const mpi::Comm& world);

struct RectifyCommand {
    std::string in;
    std::string out;
    int topics = 0;
    RectifySettings rectify;
    int block_size = 64;
    std::string grid;
    int compression = 1;
    std::string checkpoint;
    int checkpoint_every = 10;
    std::string resume;
    std::vector<std::string> given;  ///< the settings given on the command line (given_settings)
};
CLI::App* add_rectify_command(CLI::App& app, RectifyCommand& command);
/// Collective on `world`.
int run_rectify(const RectifyCommand& command, const mpi::Comm& world, const std::string& command_line);

/// `jsmf infer`'s flags, shared with `jsmf fit --infer`.
struct InferSettings {
    infer::InferOptions options;
    infer::Prior prior = infer::Prior::none;
};
/// Adds --prior, --infer-tolerance, --infer-iterations.
void add_infer_options(CLI::App* sub, InferSettings& settings);
struct InferCommand {
    std::string model;
    int topics = 0;
    infer::CorpusInput input;
    std::string prepared, prepared_name;
    std::string out;
    InferSettings settings;
};
CLI::App* add_infer_command(CLI::App& app, InferCommand& command);
/// Collective on `world`.
int run_infer(const InferCommand& command, const mpi::Comm& world, const std::string& command_line);

struct FitCommand {
    CoocSettings input;          ///< the corpus, unless --cooc is given (then only for coherence)
    std::string prepared;        ///< a folder written by jsmf prepare (instead of --corpus/--vocab)
    std::string prepared_name;   ///< which corpus of that folder (when it holds several)
    std::string labels;          ///< document labels for ClustAcc (default: the prepared corpus's)
    std::vector<std::string> text;  ///< raw input: jsmf prepare with its defaults into <out>.corpus/, then fit
    std::string infer_out;       ///< --infer: θ of the training corpus under the model just fit
    InferSettings infer;
    prepare::Format text_format = prepare::Format::text_dir;
    std::string cooc_file;       ///< a precomputed co-occurrence file (jsmf cooc)
    std::string update;          ///< --update: the model whose topic ids the new one keeps
    double match_distance = 0.5; ///< --match-distance: the farthest a topic moves and keeps its id
    fit::UpdateMode update_mode = fit::UpdateMode::exact;  ///< --update-mode
    double decay = fit::CompressedOptions{}.decay;          ///< --decay: the old statistics' weight (sketch)
    bool warm_enn = false;                                  ///< --warm-enn (sketch)
    bool sketch = false;                                    ///< --sketch: a sketch of the default rank, 2K
    int sketch_rank = 0;         ///< --sketch-rank: keep C's sketch of this rank in the model file
    std::string out;
    std::string topics;          ///< "10" or "10,25,50"; empty: 10, or the number of --anchor-words
    std::string hierarchy;       ///< "25,5": K₁ = 25 topics, then their A factorized into 5 supertopics
    RectifySettings rectify;
    ModelSettings model;
    int top_words = 20;
    bool no_metrics = false;
    int metric_probes = fit::CompressedOptions{}.metric_probes;  ///< --metric-probes (compressed)
    int block_size = 64;
    std::string grid;
    fit::Pipeline pipeline = fit::FitOptions{}.pipeline;
    int enn_iterations = fit::CompressedOptions{}.iterations;
    Index checked_rows = fit::CompressedOptions{}.checked_rows;
    double enn_relaxation = 1;   ///< given only: unset, the mode's (fit::enn_relaxation_of)
    double product_buffer_mb = fit::CompressedOptions{}.product_buffer_bytes / (1 << 20);
    std::string checkpoint;      ///< --pipeline compressed: checkpoint file
    double checkpoint_seconds = fit::CheckpointOptions{}.seconds;
    std::string resume;          ///< continue from this checkpoint
    bool dry_run = false;        ///< print the plan and the memory estimate, fit nothing
    std::string memory_per_rank; ///< e.g. "4G"; empty: detected
    int plan_ranks = 0;          ///< --dry-run for this many ranks (0: as launched)
    std::vector<std::string> given;  ///< the settings given on the command line (given_settings)
};
CLI::App* add_fit_command(CLI::App& app, FitCommand& command);
/// Collective on `world`.
int run_fit(const FitCommand& command, const mpi::Comm& world, const std::string& command_line);

struct EvalCommand {
    std::string model;
    CoocSettings input;      ///< --corpus: coherence (and C, with --vocab)
    std::string cooc_file;   ///< C for the recovery and approximation errors
    std::string truth;
    std::string labels;      ///< document labels: ClustAcc
    Seed seed = 1;
    std::string out;
    int block_size = 64;
    std::string grid;
};
CLI::App* add_eval_command(CLI::App& app, EvalCommand& command);
/// Collective on `world`.
int run_eval(const EvalCommand& command, const mpi::Comm& world, const std::string& command_line);

struct SweepCommand {
    CoocSettings input;
    std::string cooc_file;
    std::string out_dir = "sweep";
    std::string topics = "5,10,25,50,100";
    std::string rectify_methods = "none,dc,ap";
    std::string solvers = "admm,active-set";
    RectifySettings rectify;  ///< method unused: --rectify is a list here
    ModelSettings model;      ///< solver unused: --solver is a list here
    int task = -1;            ///< run only this grid point (a SLURM array task); -1: all
    bool list = false;        ///< print the grid and exit
    bool no_metrics = false;
    std::string labels;       ///< document labels: ClustAcc per run
    int top_words = 20;
    int block_size = 64;
    std::string grid;
    std::string pipeline = "dense";  ///< dense: rectifiers x K x solvers; compressed: K (ENN, active set)
    int enn_iterations = fit::CompressedOptions{}.iterations;
    Index checked_rows = fit::CompressedOptions{}.checked_rows;
    std::vector<std::string> given;  ///< the settings given on the command line (given_settings)
};
CLI::App* add_sweep_command(CLI::App& app, SweepCommand& command);
/// Collective on `world`.
int run_sweep(const SweepCommand& command, const mpi::Comm& world, const std::string& command_line);

struct ShowCommand {
    std::string file;
    int top_words = 10;
    int pairs = 10;
    bool schema = false;     ///< print the files' HDF5 schema instead
    std::vector<std::string> compare;  ///< --compare OLD NEW: which topics of NEW are which of OLD
    int topics = 0;                    ///< --topics: the K compared (0: each file's first)
    double match_distance = 0.5;       ///< --match-distance: the farthest a topic may move and stay itself
};
CLI::App* add_show_command(CLI::App& app, ShowCommand& command);
/// Rank 0 reads and prints; the others wait for its verdict.
int run_show(const ShowCommand& command, const mpi::Comm& world);

struct ReportCommand {
    std::string file;
    std::string out;
    std::string sweep;       ///< --sweep: a jsmf sweep CSV: metric-versus-K charts
    fit::ViewOptions view;   ///< --terms, --theta, --documents, and θ's corpus
};
CLI::App* add_report_command(CLI::App& app, ReportCommand& command);
/// Collective: each rank reads its rows of B; rank 0 writes the page.
int run_report(const ReportCommand& command, const mpi::Comm& world);

/// Local: "RxC" checked against the rank count; empty: 0 x 0, the most square grid.
void parse_grid_shape(const std::string& shape, int num_ranks, int& rows, int& cols);

}  // namespace jsmf::app
