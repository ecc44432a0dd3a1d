// SPDX-License-Identifier: MIT
// The co-occurrence and rectification stages as the subcommands run them.
#include "app/stages.hpp"

#include <algorithm>
#include <cstdio>

#include "jsmf/core/log.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/rectify/dc.hpp"

namespace jsmf::app {

std::string mib(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1 << 20));
    return text;
}

void add_cooc_options(CLI::App* sub, CoocSettings& c, bool required) {
    auto* corpus = sub->add_option("--corpus", c.corpus,
                                   "UCI docword file(s), plain or .gz; several files are dealt out to ranks");
    auto* vocab = sub->add_option("--vocab", c.vocab, "UCI vocab file (one word per line)");
    if (required) {
        corpus->required();
        vocab->required();
    }
    sub->add_option("--min-tokens", c.options.min_tokens, "Skip documents with fewer tokens (authors' code: 5)")
        ->capture_default_str();
    sub->add_option("--min-distinct", c.options.min_distinct,
                    "Skip documents with fewer distinct words (authors' code: 3)")
        ->capture_default_str();
    sub->add_option("--buffer-mb", c.buffer_mb, "Per-rank exchange buffer in MiB (bounds memory)")->capture_default_str();
    sub->add_option("--exchange", c.exchange, "docs: ship document fragments (fast); pairs: ship (i,j,v) triplets")
        ->check(CLI::IsMember({"docs", "pairs"}))
        ->capture_default_str();
}

CoocOutcome run_cooc_stage(const CoocSettings& c, const std::shared_ptr<const dist::Grid>& grid, int block_size,
                           StageTimes& times) {
    const mpi::Comm world = grid->borrow_comm();
    cooc::CoocOptions options = c.options;
    options.block_size = block_size;
    options.exchange = c.exchange == "docs" ? cooc::Exchange::docs : cooc::Exchange::pairs;
    mpi::run_local_phase(world, "setup", [&] {
        if (!(c.buffer_mb > 0)) throw InputError("--buffer-mb must be positive");
        options.buffer_bytes = static_cast<std::size_t>(std::max(1.0, c.buffer_mb * (1 << 20)));
    });
    Stopwatch clock;
    const std::vector<corpus::UciFile> files = corpus::inspect_uci_files(world, c.corpus);
    const Index num_words = files.front().header.num_words;
    Index declared_docs = 0, declared_nnz = 0;
    for (const auto& f : files) {
        declared_docs += f.header.num_docs;
        declared_nnz += f.header.num_nonzeros;
    }
    std::vector<std::string> vocab = corpus::load_vocab(world, c.vocab, num_words);
    log::info("cooc: {} file(s), D = {}, W = {}, NNZ = {}; {} ranks on a {}x{} grid, block {}", files.size(),
              declared_docs, num_words, declared_nnz, world.size(), grid->rows(), grid->cols(), block_size);
    times.add("inspect", clock.seconds());

    clock.restart();
    corpus::UciReader reader(files, corpus::plan_uci_pieces(files, world.rank(), world.size()));
    cooc::CoocResult result = cooc::build_cooccurrence(grid, num_words, reader, options);
    const double build_seconds = clock.seconds();
    corpus::check_uci_totals(world, reader);
    times.add("cooc", clock.seconds());

    const auto& s = result.stats;
    const double per_rank = build_seconds * world.size();
    log::info("cooc: {} documents read, M = {} used, {} skipped (< {} tokens or < {} distinct words); {} tokens",
              s.num_docs_read, s.num_docs, s.num_docs_skipped, options.min_tokens, options.min_distinct, s.num_tokens);
    log::info("cooc: C is {} x {}; sum = 1 {:+.1e}, min = {:.1e}, asymmetry = {:.1e}", num_words, num_words, s.sum - 1,
              s.min, s.asymmetry);
    log::info("cooc: build {:.3f} s in {} exchange round(s): {:.0f} docs/s/rank, {:.3g} pair-updates/s/rank "
              "(busiest rank {:.3g} updates)",
              build_seconds, s.exchange_rounds, s.num_docs_read / per_rank, s.pair_updates / per_rank,
              static_cast<double>(s.max_rank_pair_updates));
    io::CoocFileInfo info;
    info.vocab = std::move(vocab);
    info.stats = std::move(result.stats);
    info.num_docs_declared = declared_docs;
    return CoocOutcome{std::move(result.C), std::move(info), build_seconds};
}

void check_cooc_source(const CoocSettings& c, const std::string& cooc_file, bool corpus_with_file) {
    if (cooc_file.empty()) {
        if (c.corpus.empty() || c.vocab.empty())
            throw InputError("give --corpus and --vocab, or --cooc (a file from jsmf cooc)");
        return;
    }
    if (!c.vocab.empty())
        throw InputError("give either --corpus and --vocab, or --cooc (with --cooc, --vocab is the file's; --corpus "
                         "alone may come too, for coherence's document counts)");
    if (!c.corpus.empty() && !corpus_with_file)
        throw InputError("give either --corpus and --vocab, or --cooc (a file from jsmf cooc)");
}

dist::DistMatrix load_cooc(const CoocSettings& c, const std::string& cooc_file,
                           const std::shared_ptr<const dist::Grid>& grid, int block_size, StageTimes& times,
                           io::CoocFileInfo& info) {
    if (cooc_file.empty()) {
        CoocOutcome outcome = run_cooc_stage(c, grid, block_size, times);
        info = std::move(outcome.info);
        return std::move(outcome.C);
    }
    Stopwatch clock;
    dist::DistMatrix read = io::read_cooc_file(cooc_file, grid, block_size, info);
    times.add("read", clock.seconds());
    return read;
}

Options source_provenance(const CoocSettings& c, const std::string& cooc_file, int block_size) {
    if (cooc_file.empty()) return cooc_provenance(c, block_size);
    std::string corpus_list;
    for (const auto& path : c.corpus) corpus_list += (corpus_list.empty() ? "" : ";") + path;
    return {{"cooc", cooc_file}, {"corpus", corpus_list}, {"block_size", std::to_string(block_size)}};
}

Options cooc_provenance(const CoocSettings& c, int block_size) {
    std::string corpus_list;
    for (const auto& path : c.corpus) corpus_list += (corpus_list.empty() ? "" : ";") + path;
    return {{"corpus", corpus_list},
            {"vocab_file", c.vocab},
            {"min_tokens", std::to_string(c.options.min_tokens)},
            {"min_distinct", std::to_string(c.options.min_distinct)},
            {"block_size", std::to_string(block_size)},
            {"buffer_bytes", std::to_string(static_cast<std::size_t>(std::max(1.0, c.buffer_mb * (1 << 20))))},
            {"exchange", c.exchange}};
}

void add_rectify_options(CLI::App* sub, RectifySettings& c, const std::string& method_flag) {
    if (!method_flag.empty())
        sub->add_option(method_flag, c.method,
                        "ap: alternating projection; dr: Douglas-Rachford; dp: Dykstra; dc: diagonal completion; "
                        "none: Baseline (no rectification)")
            ->check(CLI::IsMember({"ap", "dr", "dp", "dc", "none"}))
            ->capture_default_str();
    sub->add_option("--iterations", c.iterations, "AP, DR, DP iterations (the papers use 150)")->capture_default_str();
    sub->add_option("--tolerance", c.tolerance, "Stop AP, DR, DP when the relative change is below this (0: run all)")
        ->capture_default_str();
    sub->add_option("--eigensolver", c.eigensolver,
                    "subspace: Chebyshev-filtered subspace iteration (fast); direct: ScaLAPACK PDSYEVR (slow, O(N^3))")
        ->check(CLI::IsMember({"subspace", "direct"}))
        ->capture_default_str();
    sub->add_option("--eig-check-steps", c.eig_check_steps,
                    "Lanczos steps of the eigensolver's check, after each solve, that no eigenvalue above the K-th "
                    "was missed (0: no check)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    sub->add_option("--eig-check-every", c.eig_check_every,
                    "AP, DR, DP: run that check in the first N iterations, then every N-th, and in every iteration for "
                    "N iterations after it found a miss (1: every iteration)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    sub->add_option("--permutations", c.permutations, "DC: random permutations T")->capture_default_str();
    sub->add_option("--seed", c.seed, "Seed of DC's permutations and of FastAnchorWords' projection")
        ->capture_default_str();
    sub->add_option("--progress-seconds", c.progress_seconds, "At most one progress line per this many seconds")
        ->capture_default_str();
}

Options rectify_provenance(const RectifySettings& c) {
    return {{"method", c.method},
            {"iterations", std::to_string(c.iterations)},
            {"tolerance", std::to_string(c.tolerance)},
            {"eigensolver", c.eigensolver},
            {"eig_check_steps", std::to_string(c.eig_check_steps)},
            {"eig_check_every", std::to_string(c.eig_check_every)},
            {"permutations", std::to_string(c.permutations)},
            {"seed", std::to_string(c.seed)}};
}

namespace {
}  // namespace

bool is_projection(const std::string& method) { return method == "ap" || method == "dr" || method == "dp"; }

io::RectificationRecord run_rectify_trace(const std::string& method, int topics, const rectify::ProjectionState& state) {
    io::RectificationRecord r;
    r.method = method;
    r.num_topics = topics;
    r.iterations = state.iterations_done;
    for (const auto& it : state.trace) {
        r.change.push_back(it.change);
        r.clipped_mass.push_back(it.clipped_mass);
        r.sum.push_back(it.sum);
        r.eig_residual.push_back(it.eig_residual);
        r.seconds.push_back(it.seconds);
        r.eig_iterations.push_back(it.eig_iterations);
        r.eig_products.push_back(it.eig_products);
        r.eig_converged.push_back(it.eig_converged ? 1 : 0);
        r.eig_missed.push_back(it.eig_missed);
        r.eig_bound_corrections.push_back(it.eig_bound_corrections);
    }
    return r;
}

namespace {
io::RectificationRecord run_projection(dist::DistMatrix& C, int topics, const RectifySettings& c,
                                       const ProjectionHook& hook, rectify::ProjectionState* resume) {
    rectify::ProjectionOptions options;
    options.method = c.method == "ap" ? rectify::Projection::ap
                     : c.method == "dr" ? rectify::Projection::dr
                                        : rectify::Projection::dp;
    options.num_topics = topics;
    options.max_iterations = c.iterations;
    options.tolerance = c.tolerance;
    options.eig.method = c.eigensolver == "direct" ? dist::EigMethod::direct : dist::EigMethod::subspace;
    options.eig.verify_steps = c.eig_check_steps;
    options.eig_check_every = c.eig_check_every;
    Stopwatch clock, since_print;
    bool printed = false;
    const int resumed_at = resume ? resume->iterations_done : 0;
    auto progress = [&](const rectify::ProjectionState& state, const dist::DistMatrix& current) {
        if (hook) hook(state, current);
        const int done = state.iterations_done;
        const auto& it = state.trace.back();
        // Said when it happens, not only at the end: the iteration goes on with the
        // best Ritz pairs the solver had, and the next solve re-estimates its bound.
        if (!it.eig_converged)
            log::warn("rectify: iteration {}: the eigensolver stopped at its round limit or could not confirm the top "
                      "{} eigenpairs (residual {:.1e}); continuing with its best pairs (recorded in "
                      "/rectification/eig_converged)", done, topics, it.eig_residual);
        if (it.eig_missed > 0)
            log::info("rectify: iteration {}: the eigensolver's check found {} eigenvalue(s) above theta_K outside its "
                      "block and brought them back", done, it.eig_missed);
        const bool last = done == c.iterations;
        if (printed && !last && since_print.seconds() < c.progress_seconds) return;
        printed = true;
        since_print.restart();
        const double per_iteration = clock.seconds() / std::max(1, done - resumed_at);
        log::info("rectify: {} K = {} iteration {}/{}  change {:.3e}  clipped {:.2e}  eig {} rounds ({} products, "
                  "residual {:.1e})  {:.2f} s/it  ETA {:.0f} s",
                  c.method, topics, done, c.iterations, it.change, it.clipped_mass, it.eig_iterations,
                  it.eig_products, it.eig_residual, per_iteration, per_iteration * std::max(0, c.iterations - done));
    };
    const rectify::ProjectionResult result = rectify::rectify_by_projection(C, options, progress, resume);
    io::RectificationRecord record = run_rectify_trace(c.method, topics, result.state);
    record.converged = result.converged;
    const auto unconverged = std::count_if(result.state.trace.begin(), result.state.trace.end(),
                                           [](const rectify::ProjectionIteration& it) { return !it.eig_converged; });
    if (unconverged > 0)
        log::warn("rectify: the eigensolver did not converge in {} of {} iterations (see "
                  "/rectification/eig_converged and eig_residual)", unconverged, result.state.trace.size());
    return record;
}

io::RectificationRecord run_dc(dist::DistMatrix& C, int topics, const RectifySettings& c) {
    rectify::DcOptions options;
    options.num_topics = topics;
    options.permutations = c.permutations;
    options.seed = c.seed;
    options.eig.method = c.eigensolver == "direct" ? dist::EigMethod::direct : dist::EigMethod::subspace;
    options.eig.verify_steps = c.eig_check_steps;
    Stopwatch clock, since_print;
    const rectify::DcResult result = rectify::diagonal_completion(C, options, [&](int done, int total_count) {
        if (done != total_count && since_print.seconds() < c.progress_seconds) return;
        since_print.restart();
        const double per = clock.seconds() / done;
        log::info("rectify: permutation {}/{}  {:.2f} s each  ETA {:.0f} s", done, total_count, per,
                  per * (total_count - done));
    });
    io::RectificationRecord record;
    record.method = c.method;
    record.num_topics = topics;
    record.iterations = result.permutations;
    record.converged = result.unconverged == 0;
    record.fallbacks = result.fallbacks;
    if (result.clipped > 0) log::warn("rectify: {} completed diagonal entries were negative and set to 0", result.clipped);
    // A fallback keeps the old C_jj for that permutation: e_j lies (nearly) in span(U), so the
    // off-diagonal block says nothing about C_jj. Many of them mean the median is mostly raw C.
    if (result.fallbacks > 0)
        log::warn("rectify: {} of {} diagonal completions kept the old C_jj (1 - |u_j|^2 too small)", result.fallbacks,
                  static_cast<long long>(result.permutations) * C.rows());
    if (result.unconverged > 0)
        log::warn("rectify: {} of {} permutations stopped with singular-vector residual {:.1e} sigma_1 (wanted 16 eps sqrt N)",
                  result.unconverged, result.permutations, result.max_svd_residual);
    return record;
}
}  // namespace

io::RectificationRecord run_rectify_stage(dist::DistMatrix& C, int topics, const RectifySettings& c,
                                          const ProjectionHook& hook, rectify::ProjectionState* resume) {
    if (is_projection(c.method)) return run_projection(C, topics, c, hook, resume);
    if (c.method == "dc") return run_dc(C, topics, c);
    io::RectificationRecord record;  // none: the Baseline
    record.method = c.method;
    record.num_topics = topics;
    record.converged = true;
    return record;
}

}  // namespace jsmf::app
