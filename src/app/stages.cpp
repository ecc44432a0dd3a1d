// SPDX-License-Identifier: MIT
// The co-occurrence and rectification stages as the subcommands run them.
#include "app/stages.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstdio>

#include "jsmf/core/log.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/anchors/pivoted_qr.hpp"
#include "jsmf/dist/ops.hpp"
#include "jsmf/eval/metrics.hpp"
#include "jsmf/recover/recover.hpp"
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
    sub->add_option("--estimator", c.estimator,
                    "unbiased: Eq. 5 (NIPS'15) from word counts; tfidf: the second moment of the documents' tf-idf "
                    "vectors (h/n)·ln(M/df), scaled to sum 1, as AnchorFree (Fu et al. 2019, §6.1) uses")
        ->check(CLI::IsMember({"unbiased", "tfidf"}))
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
    options.estimator = c.estimator == "tfidf" ? cooc::Estimator::tfidf : cooc::Estimator::unbiased;
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
            {"exchange", c.exchange},
            {"estimator", c.estimator}};
}

void add_rectify_options(CLI::App* sub, RectifySettings& c, const std::string& method_flag) {
    if (!method_flag.empty())
        sub->add_option(method_flag, c.method,
                        "ap: alternating projection; dr: Douglas-Rachford; dp: Dykstra; dc: diagonal completion; "
                        "none: Baseline (no rectification)")
            ->check(CLI::IsMember({"ap", "dr", "dp", "dc", "none"}))
            ->capture_default_str();
    sub->add_option("--stop", c.stop,
                    "When AP, DR, DP stop. quality (default): once the topics' measures (anchors, B, specificity, "
                    "dissimilarity) have settled; fixed-point: once the topics stopped moving (anchors equal, no topic "
                    "of B moved 1e-3 in L1 over the last 5 checks); iterations: the papers' plain AP, exact eigensolves, "
                    "--iterations (150) or until --tolerance")
        ->check(CLI::IsMember({"auto", "quality", "fixed-point", "iterations"}))
        ->capture_default_str();
    sub->add_flag("--converge", c.converge, "The same as --stop fixed-point");
    sub->add_option("--iterations", c.iterations,
                    "AP, DR, DP iterations: the count for --stop iterations (default 150, as the papers), the cap "
                    "otherwise (default 1000)");
    sub->add_option("--tolerance", c.tolerance,
                    "Stop AP, DR, DP when the relative change is below this (0: run every iteration); implies "
                    "--stop iterations");
    sub->add_option("--acceleration", c.acceleration,
                    "AP: anderson (on the rank-K factor, safeguarded, from --anderson-below on) or none (auto). "
                    "Anderson reaches a fixed point of AP in far fewer iterations, but AP's fixed points form a "
                    "continuum and it lands on another one than plain AP's path leads to (see README)")
        ->check(CLI::IsMember({"auto", "anderson", "none"}))
        ->capture_default_str();
    sub->add_option("--anderson-depth", c.anderson_depth, "Anderson acceleration's history length")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    sub->add_option("--anderson-below", c.anderson_below,
                    "AP: start Anderson once the relative change per iteration is at most this (it then snaps the "
                    "iterate onto a nearby fixed point; earlier, it would land farther from plain AP's)")
        ->capture_default_str();
    sub->add_option("--relaxation", c.relaxation,
                    "AP: over-relaxation C <- C + w (AP(C) - C), 0 < w < 2, from the 5th iteration; follows plain "
                    "AP's path. Default 1.9 with --stop quality/fixed-point, 1 with --stop iterations");
    sub->add_option("--eig-tolerance-factor", c.eig_tolerance_factor,
                    "Solve each iteration's eigenproblem to this times the last change (relative residual); 0: to "
                    "1e-9 always. Default: 0.1 with --stop quality/fixed-point, 0 with --stop iterations");
    sub->add_option("--precision", c.precision,
                    "AP: single holds the iterate in float32 and does its products in single precision (half the "
                    "memory traffic per pass; eigensolves to 1e-6 at best); double (default) reproduces the papers")
        ->check(CLI::IsMember({"double", "single"}))
        ->capture_default_str();
    sub->add_option("--check-every", c.check_every,
                    "Iterations between the stopping rule's looks at the topics (anchors and B)")
        ->check(CLI::PositiveNumber)
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

RectifySettings resolve(const RectifySettings& given) {
    RectifySettings s = given;
    if (s.converge) {
        if (s.stop != "auto" && s.stop != "fixed-point")
            throw InputError("--converge and --stop " + s.stop + " exclude each other");
        s.stop = "fixed-point";
    }
    const bool tolerance_given = s.tolerance >= 0;
    if (s.stop == "auto") s.stop = tolerance_given ? "iterations" : "quality";
    if (tolerance_given && s.stop != "iterations")
        throw InputError("--tolerance applies to --stop iterations (the papers' plain AP), not --stop " + s.stop);
    if (s.iterations < -1) throw InputError("--iterations must be non-negative");
    const bool fast = s.stop != "iterations";
    if (s.iterations == -1) s.iterations = fast ? 1000 : 150;
    // An unset tolerance stays -1 (resolve is idempotent); it acts as 0 (tolerance_of).

    if (s.acceleration == "auto") s.acceleration = "none";
    if (s.relaxation < 0) s.relaxation = fast && s.method == "ap" ? 1.9 : 1.0;
    if (!(s.relaxation > 0 && s.relaxation < 2)) throw InputError("--relaxation must lie in (0, 2)");
    if (s.relaxation != 1 && s.method != "ap") throw InputError("--relaxation applies to --rectify ap");
    if (!(s.anderson_below >= 0)) throw InputError("--anderson-below must be non-negative");
    if (s.acceleration == "anderson" && s.method != "ap" && is_projection(s.method))
        throw InputError("--acceleration anderson applies to --rectify ap");
    if (s.eig_tolerance_factor < 0) s.eig_tolerance_factor = fast ? 0.1 : 0.0;
    if (s.anderson_depth < 1) throw InputError("--anderson-depth must be at least 1");
    if (s.check_every < 1) throw InputError("--check-every must be at least 1");
    if (s.precision != "double" && s.precision != "single")
        throw InputError("--precision must be double or single, not '" + s.precision + "'");
    if (s.precision == "single" && s.method != "ap")
        throw InputError("--precision single applies to AP only (--rectify ap; jsmf rectify --method ap)");
    if (s.precision == "single" && s.eigensolver == "direct")
        throw InputError("--precision single needs --eigensolver subspace (PDSYEVR works in double)");
    return s;
}

Options rectify_provenance(const RectifySettings& given) {
    const RectifySettings c = resolve(given);
    return {{"method", c.method},
            {"stop", c.stop},
            {"iterations", std::to_string(c.iterations)},
            {"tolerance", std::to_string(std::max(0.0, c.tolerance))},
            {"acceleration", c.acceleration},
            {"anderson_depth", std::to_string(c.anderson_depth)},
            {"anderson_below", std::to_string(c.anderson_below)},
            {"relaxation", std::to_string(c.relaxation)},
            {"eig_tolerance_factor", std::to_string(c.eig_tolerance_factor)},
            {"check_every", std::to_string(c.check_every)},
            {"precision", c.precision},
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
        r.norm.push_back(it.norm);
        r.distance_psd.push_back(it.distance_psd);
        r.passes.push_back(it.passes);
        r.accelerated.push_back(it.accelerated);
    }
    for (const auto& check : state.checks) {
        r.check_iteration.push_back(check.iteration);
        r.check_anchors_changed.push_back(check.anchors_changed);
        r.check_b_median.push_back(check.b_change_median);
        r.check_b_max.push_back(check.b_change_max);
        r.check_specificity.push_back(check.specificity);
        r.check_dissimilarity.push_back(check.dissimilarity);
    }
    r.stop_reason = rectify::to_string(state.stop_reason);
    return r;
}

std::vector<std::pair<std::string, Eigen::MatrixXd>> projection_state_matrices(const rectify::ProjectionState& state) {
    std::vector<std::pair<std::string, Eigen::MatrixXd>> named;
    for (std::size_t k = 0; k < state.eig.size(); ++k)
        if (state.eig[k].product.size() > 0) named.emplace_back("product_" + std::to_string(k), state.eig[k].product);
    const auto matrices = state.anderson.matrices();
    for (std::size_t k = 0; k < matrices.size(); ++k) named.emplace_back("anderson_" + std::to_string(k), matrices[k]);
    const auto scalars = state.anderson.scalars();
    named.emplace_back("anderson_scalars", Eigen::Map<const Eigen::VectorXd>(scalars.data(), static_cast<Index>(scalars.size())));
    if (!state.checks.empty()) {
        named.emplace_back("checked_B", state.checked_B);
        const auto& anchors = state.checks.back().anchors;
        Eigen::VectorXd ids(static_cast<Index>(anchors.size()));
        for (std::size_t k = 0; k < anchors.size(); ++k) ids(static_cast<Index>(k)) = static_cast<double>(anchors[k]);
        named.emplace_back("checked_anchors", ids);
    }
    return named;
}

void restore_projection_state(rectify::ProjectionState& state, const io::RectificationRecord& saved,
                              const std::vector<std::pair<std::string, Eigen::MatrixXd>>& named) {
    auto find = [&](const std::string& name) -> const Eigen::MatrixXd* {
        for (const auto& [key, M] : named)
            if (key == name) return &M;
        return nullptr;
    };
    for (std::size_t k = 0; k < state.eig.size(); ++k)
        if (const auto* M = find("product_" + std::to_string(k))) state.eig[k].product = *M;
    if (const auto* scalars = find("anderson_scalars")) {
        std::vector<Eigen::MatrixXd> matrices;
        for (std::size_t k = 0; const auto* M = find("anderson_" + std::to_string(k)); ++k) matrices.push_back(*M);
        state.anderson.restore(matrices, std::vector<double>(scalars->data(), scalars->data() + scalars->size()));
    }
    for (std::size_t k = 0; k < saved.check_iteration.size(); ++k) {
        rectify::TopicCheck check;
        check.iteration = static_cast<int>(saved.check_iteration[k]);
        check.anchors_changed = static_cast<int>(saved.check_anchors_changed[k]);
        check.b_change_median = saved.check_b_median[k];
        check.b_change_max = saved.check_b_max[k];
        check.specificity = saved.check_specificity[k];
        check.dissimilarity = saved.check_dissimilarity[k];
        state.checks.push_back(check);
    }
    if (!state.checks.empty()) {
        const auto* B = find("checked_B");
        const auto* anchors = find("checked_anchors");
        if (!B || !anchors) throw InputError("the checkpoint has checks but not the last check's B and anchors");
        state.checked_B = *B;
        for (Index k = 0; k < anchors->size(); ++k)
            state.checks.back().anchors.push_back(static_cast<Index>((*anchors)(k)));
    }
}

namespace {
// The stopping rule's look at the topics of the iterate: anchors and B as the fit would
// find them (qr, active set), and the measures the quality rule watches. Collective.
void check_topics(rectify::ProjectionState& state, const dist::DistMatrix& C, int topics) {
    const Eigen::VectorXd p = dist::row_sums(C);
    rectify::TopicCheck check;
    check.iteration = state.iterations_done;
    check.anchors = anchors::find_anchors(C, p, topics).anchors;
    const recover::TopicModel model = recover::recover_topics(C, p, check.anchors, recover::RecoverOptions{});
    check.specificity = eval::specificity(model.B, p).mean();
    check.dissimilarity = eval::dissimilarity_hard(model.B).mean();
    if (!state.checks.empty()) rectify::compare_checks(state.checks.back(), state.checked_B, check, model.B);
    state.checks.push_back(check);
    state.checked_B = model.B;
}

io::RectificationRecord run_projection(dist::DistMatrix& C, int topics, const RectifySettings& given,
                                       const ProjectionHook& hook, rectify::ProjectionState* resume) {
    const RectifySettings c = resolve(given);
    rectify::ProjectionOptions options;
    options.method = c.method == "ap" ? rectify::Projection::ap
                     : c.method == "dr" ? rectify::Projection::dr
                                        : rectify::Projection::dp;
    options.num_topics = topics;
    options.max_iterations = c.iterations;
    options.tolerance = std::max(0.0, c.tolerance);
    options.eig.method = c.eigensolver == "direct" ? dist::EigMethod::direct : dist::EigMethod::subspace;
    options.eig.verify_steps = c.eig_check_steps;
    options.eig_check_every = c.eig_check_every;
    options.eig_tolerance_factor = c.eig_tolerance_factor;
    options.anderson.depth = c.acceleration == "anderson" ? c.anderson_depth : 0;
    options.anderson_below = c.anderson_below;
    options.relaxation = c.relaxation;
    options.single_precision = c.precision == "single";
    rectify::StopSettings stop;
    stop.rule = c.stop == "quality"       ? rectify::StopRule::quality
                : c.stop == "fixed-point" ? rectify::StopRule::fixed_point
                                          : rectify::StopRule::iterations;
    const rectify::ProjectionMonitor monitor = [&](rectify::ProjectionState& state, const rectify::IterateView& current) {
        if (stop.rule == rectify::StopRule::iterations || state.iterations_done % c.check_every != 0)
            return rectify::StopReason::none;
        check_topics(state, current.matrix(), topics);
        const auto& check = state.checks.back();
        // On plain AP's slow drift B moves little between checks long before it stops: the
        // fixed-point rule waits until Anderson has snapped the iterate onto a fixed point.
        const bool snapping = options.anderson.depth == 0 ||
                              std::any_of(state.trace.begin(), state.trace.end(),
                                          [](const rectify::ProjectionIteration& it) { return it.accelerated == 1; });
        const rectify::StopReason verdict = stop.rule == rectify::StopRule::fixed_point && !snapping
                                                ? rectify::StopReason::none
                                                : rectify::stop_verdict(state.checks, stop);
        log::info("rectify: check at iteration {}: {} anchors changed, B moved {:.1e} (median) {:.1e} (max) L1 per "
                  "topic, specificity {:.4f}, dissimilarity {:.2f}{}",
                  check.iteration, check.anchors_changed, check.b_change_median, check.b_change_max,
                  check.specificity, check.dissimilarity,
                  verdict == rectify::StopReason::none ? "" : std::string("; stop: ") + rectify::to_string(verdict));
        return verdict;
    };
    Stopwatch clock, since_print;
    bool printed = false;
    const int resumed_at = resume ? resume->iterations_done : 0;
    auto progress = [&](const rectify::ProjectionState& state, const rectify::IterateView& current) {
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
        const bool last = done == c.iterations || it.change <= options.tolerance;
        if (printed && !last && since_print.seconds() < c.progress_seconds) return;
        printed = true;
        since_print.restart();
        const double per_iteration = clock.seconds() / std::max(1, done - resumed_at);
        log::info("rectify: {} K = {} iteration {}/{}  change {:.3e}  clipped {:.2e}  eig {} rounds ({} products, "
                  "residual {:.1e}, {} passes)  {:.2f} s/it  ETA {:.0f} s",
                  c.method, topics, done, c.iterations, it.change, it.clipped_mass, it.eig_iterations,
                  it.eig_products, it.eig_residual, it.passes, per_iteration, per_iteration * std::max(0, c.iterations - done));
    };
    const rectify::ProjectionResult result = rectify::rectify_by_projection(C, options, progress, resume, monitor);
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
