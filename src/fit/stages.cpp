// SPDX-License-Identifier: MIT
// The stages before the topics: C from the corpus (0–1) and its rectification (2).
#include "jsmf/fit/stages.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <limits>

#include "jsmf/distmat/eig.hpp"
#include "jsmf/anchors/pivoted_qr.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/corpus/vocab.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/eval/metrics.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/fit/checkpoints.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/recover/recover.hpp"
#include "jsmf/rectify/dc.hpp"

namespace jsmf::fit {

std::string mib(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1 << 20));
    return text;
}

BuiltCooc build_cooc(const CorpusSource& c, const std::shared_ptr<const distmat::Grid>& grid, StageTimes& times,
                     const Report& report) {
    const mpi::Comm world = grid->borrow_comm();
    const cooc::CoocOptions& options = c.options;
    const int block_size = options.block_size;
    Stopwatch clock;
    const std::vector<corpus::UciFile> files = corpus::inspect_uci_files(world, c.files);
    const Index num_words = files.front().header.num_words;
    Index declared_docs = 0, declared_nnz = 0;
    for (const auto& f : files) {
        declared_docs += f.header.num_docs;
        declared_nnz += f.header.num_nonzeros;
    }
    std::vector<std::string> vocab = corpus::load_vocab(world, c.vocab, num_words);
    say(report, Level::info, fmt::format("cooc: {} file(s), D = {}, W = {}, NNZ = {}; {} ranks on a {}x{} grid, block {}", files.size(),
              declared_docs, num_words, declared_nnz, world.size(), grid->rows(), grid->cols(), block_size));
    times.add("inspect", clock.seconds());

    clock.restart();
    corpus::UciReader reader(files, corpus::plan_uci_pieces(files, world.rank(), world.size()));
    cooc::CoocResult result = cooc::build_cooccurrence(grid, num_words, reader, options);
    const double build_seconds = clock.seconds();
    corpus::check_uci_totals(world, reader);
    times.add("cooc", clock.seconds());

    const auto& s = result.stats;
    const double per_rank = build_seconds * world.size();
    say(report, Level::info, fmt::format("cooc: {} documents read, M = {} used, {} skipped (< {} tokens or < {} distinct words); {} tokens",
              s.num_docs_read, s.num_docs, s.num_docs_skipped, options.min_tokens, options.min_distinct, s.num_tokens));
    say(report, Level::info, fmt::format("cooc: C is {} x {}; sum = 1 {:+.1e}, min = {:.1e}, asymmetry = {:.1e}", num_words, num_words, s.sum - 1,
              s.min, s.asymmetry));
    say(report, Level::info, fmt::format("cooc: build {:.3f} s in {} exchange round(s): {:.0f} docs/s/rank, {:.3g} pair-updates/s/rank "
              "(busiest rank {:.3g} updates)",
              build_seconds, s.exchange_rounds, s.num_docs_read / per_rank, s.pair_updates / per_rank,
              static_cast<double>(s.max_rank_pair_updates)));
    io::CoocFileInfo info;
    info.vocab = std::move(vocab);
    info.stats = std::move(result.stats);
    info.num_docs_declared = declared_docs;
    return BuiltCooc{std::move(result.C), std::move(info), build_seconds};
}

model::RectificationTrace trace_of(Rectifier method, int topics, const rectify::ProjectionState& state) {
    model::RectificationTrace r;
    r.method = model::recorded(method);
    r.num_topics = topics;
    r.iterations = state.iterations_done;
    r.trace = state.trace;
    r.checks = state.checks;
    for (auto& check : r.checks) check.anchors.clear();  // not part of the trace
    r.stop_reason = state.stop_reason;
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

void restore_projection_state(rectify::ProjectionState& state, const model::RectificationTrace& saved,
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
    state.checks = saved.checks;  // the last one's anchors come from `named`
    if (!state.checks.empty()) {
        const auto* B = find("checked_B");
        const auto* anchors = find("checked_anchors");
        if (!B || !anchors) throw InputError("the checkpoint has checks but not the last check's B and anchors");
        state.checked_B = *B;
        for (Index k = 0; k < anchors->size(); ++k)
            state.checks.back().anchors.push_back(static_cast<Index>((*anchors)(k)));
    }
}

io::CheckpointRecord checkpoint_of(const rectify::ProjectionState& state) {
    io::CheckpointRecord checkpoint;
    checkpoint.iterations_done = state.iterations_done;
    checkpoint.js_increment = state.js_increment;
    for (const auto& warm : state.eig) {
        checkpoint.blocks.push_back(warm.block);
        checkpoint.lower_bounds.push_back(warm.lower_bound);
    }
    if (state.increments.size() == 2)
        checkpoint.increments = {{"increment_psd", &state.increments[0]}, {"increment_nn", &state.increments[1]}};
    checkpoint.state = projection_state_matrices(state);
    return checkpoint;
}

rectify::ProjectionState resume_state(const model::RectificationTrace& saved, const io::CheckpointRecord& checkpoint) {
    rectify::ProjectionState state;
    state.iterations_done = checkpoint.iterations_done;
    state.js_increment = checkpoint.js_increment;
    for (std::size_t k = 0; k < checkpoint.blocks.size(); ++k)
        state.eig.push_back({checkpoint.blocks[k], {}, checkpoint.lower_bounds[k]});
    state.trace = saved.trace;
    restore_projection_state(state, saved, checkpoint.state);
    return state;
}

rectify::ProjectionState read_resume_state(const std::string& checkpoint, const distmat::DistMatrix& C, int K,
                                           Rectifier method) {
    const mpi::Comm world = C.grid().borrow_comm();
    model::RectificationTrace saved;
    io::CheckpointRecord record;
    io::read_checkpoint(world, checkpoint, saved, record);
    mpi::check_on_root(world, "rectify", [&] {
        if (saved.num_topics != K)
            throw InputError(checkpoint, render_options("the checkpoint has K = " + std::to_string(saved.num_topics) +
                                                        ", not {topics} " + std::to_string(K)));
        if (saved.method != model::recorded(method))
            throw InputError(checkpoint, render_options("the checkpoint is of {rectify} " + name_of(saved.method) + ", not " +
                                                        name_of(method)));
    });
    rectify::ProjectionState state;
    mpi::run_local_phase(world, "read", [&] { state = resume_state(saved, record); });
    if (method == Rectifier::dp)
        for (const char* name : {"increment_psd", "increment_nn"})
            state.increments.push_back(io::read_checkpoint_matrix(checkpoint, name, C.grid_ptr(), C.block_rows()));
    if (state.increments.size() == 2)
        record.increments = {{"increment_psd", &state.increments[0]}, {"increment_nn", &state.increments[1]}};
    io::verify_checkpoint(checkpoint, C, record);
    return state;
}

const std::vector<std::string>& resume_settings() {
    static const std::vector<std::string> names = {
        "stop",       "tolerance",            "eigensolver", "eig_check_steps", "eig_check_every",
        "acceleration", "anderson_depth",     "anderson_below", "relaxation",   "eig_tolerance_factor",
        "check_every", "precision",           "block_size",
        "grid",     // the process grid (rank count and shape) changes the rounding
        "threads"}; // so do the threads per rank
    return names;
}

std::vector<ChangedSetting> changed_settings(const Entries& saved, const Entries& now) {
    const std::vector<std::string>& names = resume_settings();
    std::vector<ChangedSetting> changed;
    for (const auto& [name, value] : saved) {
        if (std::find(names.begin(), names.end(), name) == names.end()) continue;
        for (const auto& [key, mine] : now)
            if (key == name) {
                if (mine != value) changed.push_back({name, value, mine});
                break;
            }
    }
    return changed;
}

RectifyWork rectify_work(const model::RectificationTrace& trace, Rectifier method, Index N, int K) {
    RectifyWork work;
    for (const auto& it : trace.trace) {
        work.eig_rounds += it.eig_iterations;
        work.eig_products += it.eig_products;
    }
    work.iterations = std::max<double>(1, static_cast<double>(trace.trace.size()));
    const double p_block = distmat::eig_block_columns(K);
    const double nn = static_cast<double>(N) * static_cast<double>(N);
    const double reconstructions = method == Rectifier::dr ? 2 : 1;
    work.flops = is_projection(method)
                     ? (work.eig_products * 2 * nn * p_block + reconstructions * work.iterations * 2 * nn * K)
                     : 0.0;
    return work;
}

namespace {
// The stopping rule's look at the topics of the iterate: anchors and B as the fit would
// find them (qr among the candidates, active set), and the measures the quality rule
// watches. Collective.
void check_topics(rectify::ProjectionState& state, const distmat::DistMatrix& C, int topics,
                  const anchors::Candidates& candidates) {
    const Eigen::VectorXd p = distmat::row_sums(C);
    rectify::TopicCheck check;
    check.iteration = state.iterations_done;
    check.anchors = anchors::find_anchors(C, p, topics, candidates).anchors;
    const recover::TopicModel model = recover::recover_topics(C, p, check.anchors, recover::RecoverOptions{});
    check.specificity = eval::specificity(model.B, p).mean();
    check.dissimilarity = eval::dissimilarity_hard(model.B).mean();
    if (!state.checks.empty()) rectify::compare_checks(state.checks.back(), state.checked_B, check, model.B);
    state.checks.push_back(check);
    state.checked_B = model.B;
}

model::RectificationTrace run_projection(distmat::DistMatrix& C, int topics, const RectifyOptions& c, const Report& report,
                                  const ProjectionHook& hook, rectify::ProjectionState* resume,
                                  const anchors::Candidates& candidates) {
    rectify::ProjectionOptions options;
    options.method = c.method;
    options.num_topics = topics;
    const int max_iterations = *c.iterations;
    options.max_iterations = max_iterations;
    options.tolerance = std::max(0.0, c.tolerance.value_or(0.0));
    options.eig.method = c.eigensolver;
    options.eig.verify_steps = c.eig_check_steps;
    options.eig_check_every = c.eig_check_every;
    options.eig_tolerance_factor = *c.eig_tolerance_factor;
    options.anderson.depth = c.acceleration == Acceleration::anderson ? c.anderson_depth : 0;
    options.anderson_below = c.anderson_below;
    options.relaxation = *c.relaxation;
    options.single_precision = c.precision == Precision::single;
    rectify::StopSettings stop;
    stop.rule = *c.stop;
    const rectify::ProjectionMonitor monitor = [&](rectify::ProjectionState& state, const rectify::IterateView& current) {
        if (stop.rule == rectify::StopRule::iterations || state.iterations_done % c.check_every != 0)
            return rectify::StopReason::none;
        check_topics(state, current.matrix(), topics, candidates);
        const auto& check = state.checks.back();
        // On plain AP's slow drift B moves little between checks long before it stops: the
        // fixed-point rule waits until Anderson has snapped the iterate onto a fixed point.
        const bool snapping = options.anderson.depth == 0 ||
                              std::any_of(state.trace.begin(), state.trace.end(),
                                          [](const rectify::ProjectionIteration& it) { return it.accelerated == 1; });
        const rectify::StopReason verdict = stop.rule == rectify::StopRule::fixed_point && !snapping
                                                ? rectify::StopReason::none
                                                : rectify::stop_verdict(state.checks, stop);
        // The first check has nothing to compare with: no change to say.
        const std::string change = state.checks.size() < 2 || check.anchors_changed < 0
                                       ? std::string("first look at the topics")
                                       : fmt::format("{} anchors changed, B moved {:.1e} (median) {:.1e} (max) L1 per topic",
                                                     check.anchors_changed, check.b_change_median, check.b_change_max);
        say(report, Level::info, fmt::format("rectify: check at iteration {}: {}, specificity {:.4f}, dissimilarity {:.2f}{}",
                  check.iteration, change, check.specificity, check.dissimilarity,
                  verdict == rectify::StopReason::none ? "" : std::string("; stop: ") + name_of(verdict)));
        return verdict;
    };
    Stopwatch clock, since_print;
    bool printed = false;
    const int resumed_at = resume ? resume->iterations_done : 0;
    // The first iteration's eigensolve starts cold (several times a later one's rounds):
    // the time per iteration is measured from its end once a second one is done.
    double first_seconds = -1;
    Stopwatch after_first;
    auto progress = [&](const rectify::ProjectionState& state, const rectify::IterateView& current) {
        const int done = state.iterations_done;
        const auto& it = state.trace.back();
        // Said when it happens, not only at the end: the iteration goes on with the
        // best Ritz pairs the solver had, and the next solve re-estimates its bound.
        if (!it.eig_converged)
            say(report, Level::warning, fmt::format("rectify: iteration {}: the eigensolver stopped at its round limit or could not confirm the top "
                      "{} eigenpairs (residual {:.1e}); continuing with its best pairs (recorded in "
                      "/rectification/eig_converged)", done, topics, it.eig_residual));
        if (it.eig_missed > 0)
            say(report, Level::info, fmt::format("rectify: iteration {}: the eigensolver's check found {} eigenvalue(s) above theta_K outside its "
                      "block and brought them back", done, it.eig_missed));
        if (first_seconds < 0) {
            first_seconds = clock.seconds();
            after_first.restart();
        }
        const bool last = done == max_iterations || it.change <= options.tolerance;
        if (printed && !last && since_print.seconds() < c.progress_seconds) return;
        printed = true;
        since_print.restart();
        const int later = done - resumed_at - 1;  // iterations after the first of this run
        const double per_iteration = later > 0 ? after_first.seconds() / later : first_seconds;
        const double left = per_iteration * std::max(0, max_iterations - done);
        // Only --stop iterations runs to its count; the others stop at their rule, the
        // count being a cap: then the time left is a bound, said as one.
        const std::string eta = later == 0 ? std::string("time left: from the next iteration on (the first starts cold)")
                                : stop.rule == rectify::StopRule::iterations
                                    ? fmt::format("ETA {:.0f} s", left)
                                    : fmt::format("at most {:.0f} s more (to the cap; the {} rule stops earlier)", left,
                                                  name_of(stop.rule));
        say(report, Level::info, fmt::format("rectify: {} K = {} iteration {}/{}  change {:.3e}  clipped {:.2e}  eig {} rounds ({} products, "
                  "residual {:.1e}, {} passes)  {:.2f} s/it  {}",
                  name_of(c.method), topics, done, max_iterations, it.change, it.clipped_mass, it.eig_iterations,
                  it.eig_products, it.eig_residual, it.passes, per_iteration, eta));
    };
    const rectify::ProjectionResult result = rectify::rectify_by_projection(C, options, progress, resume, monitor, hook);
    model::RectificationTrace record = trace_of(c.method, topics, result.state);
    record.converged = result.converged;
    const auto unconverged = std::count_if(result.state.trace.begin(), result.state.trace.end(),
                                           [](const rectify::ProjectionIteration& it) { return !it.eig_converged; });
    if (unconverged > 0)
        say(report, Level::warning, fmt::format("rectify: the eigensolver did not converge in {} of {} iterations (see "
                  "/rectification/eig_converged and eig_residual)", unconverged, result.state.trace.size()));
    return record;
}

model::RectificationTrace run_dc(distmat::DistMatrix& C, int topics, const RectifyOptions& c, const Report& report) {
    rectify::DcOptions options;
    options.num_topics = topics;
    options.permutations = c.permutations;
    options.seed = c.seed;
    options.eig.method = c.eigensolver;
    options.eig.verify_steps = c.eig_check_steps;
    Stopwatch clock, since_print;
    const rectify::DcResult result = rectify::diagonal_completion(C, options, [&](int done, int total_count) {
        if (done != total_count && since_print.seconds() < c.progress_seconds) return;
        since_print.restart();
        const double per = clock.seconds() / done;
        say(report, Level::info, fmt::format("rectify: permutation {}/{}  {:.2f} s each  ETA {:.0f} s", done, total_count, per,
                  per * (total_count - done)));
    });
    model::RectificationTrace record;
    record.method = model::recorded(c.method);
    record.num_topics = topics;
    record.iterations = result.permutations;
    record.converged = result.unconverged == 0;
    record.fallbacks = result.fallbacks;
    if (result.clipped > 0) say(report, Level::warning, fmt::format("rectify: {} completed diagonal entries were negative and set to 0", result.clipped));
    // A fallback keeps the old C_jj for that permutation: e_j lies (nearly) in span(U), so the
    // off-diagonal block says nothing about C_jj. Many of them mean the median is mostly raw C.
    if (result.fallbacks > 0)
        say(report, Level::warning, fmt::format("rectify: {} of {} diagonal completions kept the old C_jj (1 - |u_j|^2 too small)", result.fallbacks,
                  static_cast<long long>(result.permutations) * C.rows()));
    if (result.unconverged > 0)
        say(report, Level::warning, fmt::format("rectify: {} of {} permutations stopped with singular-vector residual {:.1e} sigma_1 (wanted 16 eps sqrt N)",
                  result.unconverged, result.permutations, result.max_svd_residual));
    return record;
}
}  // namespace

model::RectificationTrace rectify_checkpointed(distmat::DistMatrix& C, int K, const RectifyOptions& given,
                                        const io::CoocFileInfo& info, const RectifyCheckpoints& o, const Report& report,
                                        rectify::ProjectionState* resume) {
    const RectifyOptions options = resolve(given);
    if (!is_projection(options.method)) return rectify(C, K, options, report);
    // The clock never asks (infinite seconds): checkpoints come every `o.every` iterations.
    Checkpoints checkpoints(C.grid().borrow_comm(), o.path, std::numeric_limits<double>::infinity(), report);
    const ProjectionHook between = [&](const rectify::ProjectionState& state, const rectify::IterateView& current) {
        const int done = state.iterations_done;
        checkpoints.due();  // one allreduce: the agreed stop signal
        if (done % o.every == 0 || checkpoints.stop_requested() != 0)
            checkpoints.write(
                [&] {
                    const io::CheckpointRecord record = checkpoint_of(state);
                    const model::RectificationTrace so_far = trace_of(options.method, K, state);
                    io::write_cooc_file(o.path, current.matrix(), info, o.provenance, StageTimes{}, 0, &so_far, &record);
                },
                fmt::format("the rectification after {} iterations", done));
        checkpoints.stop_if_requested(fmt::format("after rectification iteration {}", done));
    };
    const StopScope stoppable;  // signals are requests while the iterations run
    return rectify(C, K, options, report, between, resume);
}

model::RectificationTrace rectify(distmat::DistMatrix& C, int topics, const RectifyOptions& given, const Report& report,
                           const ProjectionHook& hook, rectify::ProjectionState* resume,
                           const anchors::Candidates& candidates) {
    const RectifyOptions c = resolve(given);
    if (is_projection(c.method)) return run_projection(C, topics, c, report, hook, resume, candidates);
    if (c.method == Rectifier::dc) return run_dc(C, topics, c, report);
    model::RectificationTrace record;  // none: the Baseline
    record.method = model::recorded(c.method);
    record.num_topics = topics;
    record.converged = true;
    return record;
}

}  // namespace jsmf::fit
