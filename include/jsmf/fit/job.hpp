// SPDX-License-Identifier: MIT
// A fit as a job, composed once for the jsmf binary and for library callers: where the
// documents (or C) come from, which pipeline runs (the one asked for or auto's pick), the
// memory plan and its refusal, the fit, the model file with its provenance, and θ of the
// training documents. The binary's `fit` turns flags into a Job, calls run() and prints.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/grid.hpp"
#include "jsmf/fit/fit.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/fit/update.hpp"
#include "jsmf/fit/pipeline_choice.hpp"
#include "jsmf/fit/plan.hpp"
#include "jsmf/fit/report.hpp"
#include "jsmf/fit/stages.hpp"
#include "jsmf/infer/corpus.hpp"
#include "jsmf/io/provenance.hpp"
#include "jsmf/mpi/comm.hpp"
#include "jsmf/prepare/sources.hpp"

namespace jsmf::fit {

/// Named settings of a result, in order (a model file's /provenance options).
using Entries = std::vector<std::pair<std::string, std::string>>;

/// Where a job's documents come from. The corpus's reading options (block size, buffer,
/// exchange, estimator, filter) are Job::corpus's in every case.
namespace input {
/// Job::corpus's files and vocabulary (UCI docword files).
struct Corpus {};
/// A folder written by jsmf prepare: its docword, vocabulary, document ids and labels.
struct Prepared {
    std::string folder;
    std::string name;   ///< which corpus of the folder (its --name); empty: its only one
};
/// Raw text, prepared with prepare's defaults into <out>.corpus/ first, then read as Prepared.
struct Text {
    std::vector<std::string> inputs;
    prepare::Format format = prepare::Format::text_dir;
};
/// C from a co-occurrence file (jsmf cooc); Job::corpus's files, when given, are the
/// documents coherence counts over (its vocabulary is the file's).
struct Cooc {
    std::string file;
};
}  // namespace input
using Input = std::variant<input::Corpus, input::Prepared, input::Text, input::Cooc>;

/// θ of the training documents under the model just fit (one K), as jsmf infer writes it.
struct InferRequest {
    std::string out;
    infer::InferOptions options;
    infer::Prior prior = infer::Prior::none;
};

/// Everything a fit needs; the binary fills it from flags, a library caller by hand.
struct Job {
    Input input = input::Corpus{};
    CorpusSource corpus;             ///< reading options always; the files for Corpus and Cooc
    FitOptions options;              ///< options.pipeline may be automatic; model.anchor_words from anchor_words_file
    std::string labels;              ///< document labels (ClustAcc); empty: a prepared corpus's, if any
    std::string anchor_words_file;   ///< anchor words, one per line (K = their number); empty: found
    bool topics_given = false;       ///< options.topics was asked for (a count of anchor words must match it)
    int grid_rows = 0, grid_cols = 0;  ///< the process grid (C's layout; recorded either way); 0: the most square
    bool grid_given = false;         ///< a long thin default grid is warned about
    std::string out;                 ///< the model file
    std::string update_from;         ///< --update: a model whose topic ids the new one keeps (fit/update.hpp)
    double match_distance = 0.5;     ///< --update: the farthest a topic moves and keeps its id
    UpdateMode update_mode = UpdateMode::exact;  ///< --update-mode: the old documents read again, or sketched
    /// --warm-enn: a sketch update's ENN from the base's rectified factor
    /// (CompressedOptions::old_factor), not from Y₀: faster, biased (see there).
    bool warm_enn = false;
    bool sketch_rank_given = false;  ///< options.compressed.sketch_rank asked for (else an update keeps the base's)
    /// --sketch: options.compressed.sketch_rank = 2K once K is known (the largest K; an
    /// update's: OLD's unless --topics), at most N. Measured: jobs/BENCHMARKS.md, "Why the
    /// sketch chain drifted".
    bool sketch_default = false;
    int top_words = 20;              ///< words per topic kept in /K<K>/topics
    std::optional<InferRequest> infer;
    double memory_per_rank = 0;      ///< bytes; ≤ 0: detected (the node's or its cgroup's limit shared by its ranks)
    int plan_ranks = 0;              ///< a dry run: plan for this many ranks (0: the ranks running it)
    bool dry_run = false;            ///< plan only: read the headers, fit nothing
    /// The settings the user gave (library names, as OptionError's braces): auto never
    /// drops one of them, and the pipeline that would not use one refuses it.
    std::vector<std::string> given;
    std::string command_line;        ///< recorded in the model file
};

/// θ's totals over the ranks and the seconds of the whole stage (reading, EM, writing).
struct InferSummary {
    infer::CorpusSummary totals;
    double seconds = 0;
    int threads = 1;                 ///< per rank (BLAS and OpenMP)
    std::int64_t model_rows = 0;     ///< the most rows of B a rank held (its documents' words)
    std::int64_t words = 0;          ///< B's rows, N
    bool B_by_rows = false;          ///< B was kept by rows (a compressed fit's), else whole on rank 0
    double peak_bytes = 0;           ///< the largest rank's peak memory (the process's, so far)
};

/// Local. OptionError for a non-positive tolerance or no iterations; InputError when the θ
/// file `out` is the model file `model` (it would be overwritten).
void check_inference(const infer::InferOptions& options, const std::string& out, const std::string& model);

/// Local. The settings `given` that the job would not read (fit::unused_settings of its
/// rectifier and model, and those of a request it does not make: {text_format} without
/// {text}, {infer_*} and {prior} without {infer}, {checkpoint_seconds} without {checkpoint}).
std::vector<UnusedSetting> unused_settings(const Job& job);

/// Local. Checks what can be checked of `job` before any work, besides check(job.options):
/// the combinations of its input, outputs, θ request, labels, topics and checkpoint files,
/// the settings `given` that the chosen pipeline would not use, and every other unused one
/// (unused_settings). OptionError (the options in braces) or InputError naming the file.
void check(const Job& job);

/// What a job did. After a dry run only `choice` and `plan` are set.
struct JobOutcome {
    PipelineChoice choice;
    MemoryPlan plan;
    FitResult result;                ///< models, hierarchy, the vocabulary; result.times: the shared stages
    long long words = 0;             ///< N
    std::vector<int> topics;         ///< the K fit or planned (with anchor words: their number)
    double write_seconds = 0, total_seconds = 0;
    double peak_bytes = 0;           ///< the largest rank's peak resident memory
    std::vector<double> peak_bytes_by_rank;  ///< rank 0: each rank's peak, in rank order (empty elsewhere)
    std::optional<InferSummary> infer;
};

/// Collective on `world`. Runs `job`: the text prepared, the prepared folder read, the
/// pipeline chosen (said with its reason through `report`), the outputs checked (no input
/// overwritten), the memory planned (a dry run returns here, having said the plan; a fit
/// that will not fit is refused by refuse_unless_fits), then the fit, the model file (provenance: the input, every option, the resources) and
/// θ when asked. The same outcome on every rank, but for the models' word-indexed arrays
/// (rank 0's: FitResult) and peak_bytes_by_rank. Errors as one agreed failure.
JobOutcome run(const mpi::Comm& world, Job job, const Report& report = {});

/// Collective on `world`. InputError (one message: the estimate, its parts, what each rank
/// has and the rank count that would fit) unless `plan` fits.
void refuse_unless_fits(const mpi::Comm& world, const MemoryPlan& plan, Pipeline pipeline);

/// Collective on `world`. The process grid rows × cols, or the most square one when either
/// is 0 (the jobs' default).
std::shared_ptr<const distmat::Grid> process_grid(const mpi::Comm& world, int rows, int cols);

/// Local. The provenance of a result made now by `world` on `grid` with these settings
/// (and the threads per rank, which change rounding only).
io::Provenance provenance(const std::string& command_line, const mpi::Comm& world, const distmat::Grid& grid,
                          Entries settings);
/// Local. The provenance entries of a corpus source (files, filter, layout, exchange,
/// estimator), or of a co-occurrence file `cooc_file` (when not empty) with the corpus
/// that coherence counts over.
Entries source_entries(const CorpusSource& corpus, const std::string& cooc_file = {});
/// Local. fit::entries(options) with the anchor words named by the file they came from.
Entries model_entries(const ModelOptions& options, const std::string& anchor_file);

/// Collective on `grid`. C built from `corpus` (build_cooc, said through `report`), or
/// read from `cooc_file` when it is not empty (its values checked): `info` filled,
/// "inspect" and "cooc" (or "read") added to `times`.
distmat::DistMatrix load_cooc(const CorpusSource& corpus, const std::string& cooc_file,
                              const std::shared_ptr<const distmat::Grid>& grid, StageTimes& times,
                              io::CoocFileInfo& info, const Report& report = {});

/// Collective on `world`. Rank 0 reads the anchor-word file and maps it to word ids;
/// every rank gets the ids.
std::vector<Index> read_anchor_words(const mpi::Comm& world, const std::string& path,
                                     const std::vector<std::string>& vocab);

/// `jsmf cooc`: C built from a corpus and written to a co-occurrence file.
struct CoocJob {
    CorpusSource corpus;
    std::string out;
    int grid_rows = 0, grid_cols = 0;  ///< 0: the most square grid
    bool grid_given = false;         ///< a long thin default grid is warned about
    int compression = 1;             ///< deflate level of C in the file
    std::string command_line;
};
struct CoocOutcome {
    cooc::CoocStats stats;
    Index words = 0;
    double build_seconds = 0, write_seconds = 0, total_seconds = 0;
    double peak_bytes = 0;           ///< the largest rank's
};
/// Collective on `world`. Builds C (build_cooc, said through `report`) and writes it with
/// its provenance; the output checked first (no input overwritten).
CoocOutcome write_cooc(const mpi::Comm& world, const CoocJob& job, const Report& report = {});

/// `jsmf cooc --add`: co-occurrence files of disjoint document sets summed into the file of
/// their union, exactly: Eq. 5's C is an average over documents, so the union's is
/// Σ_f M_f C_f / Σ_f M_f (M_f the documents each used), its counts and document
/// frequencies sums.
struct AddCoocJob {
    std::vector<std::string> inputs;   ///< at least two jsmf cooc files
    std::string out;
    int grid_rows = 0, grid_cols = 0;  ///< 0: the most square grid
    int block_size = 64;
    int compression = 1;
    std::string command_line;
};
/// Collective on `world`. Reads each input on the grid (checked as fit's --cooc is), sums
/// them as above and writes the union's file, whose root records the inputs' filter and
/// estimator (so a later fit's coherence counts with it) and `added`, the inputs in order.
/// InputError (agreed, nothing written) unless every input is an unrectified, Eq. 5
/// ("unbiased") C of the same vocabulary (the same words in the same order) and the same
/// document filter: tf-idf's idf and scale depend on the whole corpus, so its C is no sum;
/// a rectified C or a checkpoint's iterate is no average over documents. Per-rank memory:
/// two N × N / P blocks (the sum and the input being read).
CoocOutcome add_cooc(const mpi::Comm& world, const AddCoocJob& job, const Report& report = {});

/// `jsmf infer`: θ of a corpus under one model of a model file.
struct InferJob {
    std::string model;               ///< a model file (jsmf fit's)
    int topics = 0;                  ///< which K of it (0: its only or first)
    infer::CorpusInput input;        ///< the corpus (its words mapped by name with a vocabulary)
    std::string prepared, prepared_name;  ///< or a folder written by jsmf prepare (and which corpus of it)
    std::string out;
    infer::InferOptions options;     ///< alpha: the model's, with Prior::alpha
    infer::Prior prior = infer::Prior::none;
    std::string command_line;
};

/// Collective on `world`. Rank 0 reads the vocabulary and K (and α, for Prior::alpha:
/// InputError when the model has none) from the model file `path`, without its arrays N × K;
/// every rank receives K and α and reads its block of K's B by rows (io::read_B_by_rows;
/// infer_corpus sends each rank the rows its words need).
infer::InferModel load_infer_model(const mpi::Comm& world, const std::string& path, int topics, infer::Prior prior,
                                   infer::InferOptions& options);

/// Collective on `world`. The job's corpus (a prepared folder's files and document ids),
/// the output checked (no input overwritten), the model loaded, then infer_to_file.
InferSummary infer(const mpi::Comm& world, InferJob job);

/// Collective on `world`. infer::infer_corpus, then `out` (to "<out>.partial", renamed
/// when complete) with a collective parallel-HDF5 write in corpus order (io/theta_file.hpp:
/// θ, the dominant topic, the log-likelihood, the counts and the document ids; its
/// attributes the model, K, the prior and the totals).
InferSummary infer_to_file(const mpi::Comm& world, const infer::InferModel& model, const infer::CorpusInput& input,
                           const infer::InferOptions& options, infer::Prior prior, const std::string& out,
                           const std::string& command_line);

}  // namespace jsmf::fit
