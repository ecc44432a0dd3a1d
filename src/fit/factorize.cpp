// SPDX-License-Identifier: MIT
// The stages that find the topics (3–4): anchors, B, A and α on a rectified C, or
// AnchorFree's minimum-determinant factorization; and a hierarchy's levels above them.
#include <fmt/core.h>

#include <algorithm>

#include "jsmf/anchors/finder.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/fit/stages.hpp"
#include "jsmf/model/topic_rows.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/recover/recover.hpp"

namespace jsmf::fit {

model::AlphaFit fit_alpha(const mpi::Comm& comm, const Eigen::MatrixXd& A) {
    recover::AlphaResult alpha;
    mpi::run_local_phase(comm, "alpha", [&] { alpha = recover::recover_alpha(A); });
    model::AlphaFit fitted;
    fitted.has_alpha = true;
    fitted.alpha = alpha.alpha;
    fitted.alpha0 = alpha.alpha0;
    fitted.alpha_residual = alpha.residual;
    fitted.alpha_at_bound = alpha.at_bound;
    return fitted;
}

namespace {

/// Stage 3 (Alg. 2, or the user's words): the anchors of C (row sums p).
model::AnchorsFound find_anchors_stage(const distmat::DistMatrix& C, const Eigen::VectorXd& p, int K,
                                       const ModelOptions& c, Seed seed, const anchors::DocFreq& doc_freq) {
    model::AnchorsFound out;
    anchors::AnchorResult found;
    if (!c.anchor_words.empty()) {
        found = anchors::anchors_from_words(C, p, c.anchor_words);
        out.anchor_method = model::AnchorChoice::words;
    } else {
        // The threshold needs the documents' counts (a hierarchy's level above has none).
        const bool counted = doc_freq.size() == C.rows();
        out.anchor_min_df = counted ? c.anchor_min_df : 0;
        const anchors::Candidates candidates =
            counted ? anchors::candidates_by_doc_freq(doc_freq, c.anchor_min_df) : anchors::Candidates{};
        found = anchors::find_anchors_by(c.finder, C, p, K, {c.projection_dim, seed, true}, candidates);
        out.anchor_method = model::recorded(c.finder);
    }
    out.anchors = found.anchors;
    out.diag_r = found.diag_r;
    out.zero_rows = found.zero_rows;
    out.anchor_excluded = found.excluded;
    return out;
}

/// Stage 4 (Alg. 3 and 4): B̆ word by word, B by Bayes' rule, A (diagonal or least squares);
/// "recover_B" added to `times` from `clock`, which then restarts for A.
model::TopicsFound recover_topics_stage(const distmat::DistMatrix& C, const Eigen::VectorXd& p,
                                        const std::vector<Index>& anchors, const ModelOptions& c,
                                        const recover::RecoverProgress* progress, StageTimes& times,
                                        Stopwatch& clock) {
    recover::RecoverOptions options;
    options.solver = c.solver;
    options.scls.max_iterations = c.solver_iterations;
    options.scls.tolerance = c.solver_tolerance;
    options.scls.admm_stop = c.admm_stop;
    recover::TopicModel model = recover::recover_topics(C, p, anchors, options, progress);
    model::TopicsFound out;
    out.solver = c.solver;
    out.words_solved = model.words_solved;
    out.words_converged = model.words_converged;
    out.solver_max_iterations = model.max_iterations_used;
    out.solve_seconds = model.solve_seconds;
    times.add("recover_B", clock.seconds());

    clock.restart();
    out.a_method = c.recover_a == RecoverA::least_squares ? model::ARecovery::least_squares : model::ARecovery::diagonal;
    out.A = c.recover_a == RecoverA::least_squares ? recover::recover_a_least_squares(C, model.B) : model.A;
    out.unigram = p;
    out.B = std::move(model.B);
    out.B_breve = std::move(model.B_breve);
    return out;
}

model::Model fit_anchors(const distmat::DistMatrix& C, int K, const ModelOptions& c, const model::RectificationTrace& rectification,
                  Seed seed, const recover::RecoverProgress* progress, const anchors::DocFreq& doc_freq) {
    model::Model m;
    m.num_topics = K;
    m.rectification = rectification;
    Stopwatch clock;
    const Eigen::VectorXd p = distmat::row_sums(C);  // p(x = i) of the rectified C
    static_cast<model::AnchorsFound&>(m) = find_anchors_stage(C, p, K, c, seed, doc_freq);
    m.times.add("anchors", clock.seconds());
    clock.restart();
    static_cast<model::TopicsFound&>(m) = recover_topics_stage(C, p, m.anchors, c, progress, m.times, clock);
    if (c.alpha) static_cast<model::AlphaFit&>(m) = fit_alpha(C.grid().borrow_comm(), m.A);
    m.times.add("recover_A", clock.seconds());
    return m;
}

}  // namespace

Eigen::MatrixXd anchorfree_m(const mpi::Comm& comm, const Eigen::MatrixXd& B_local, Index first_row, Index N,
                             const ModelOptions& c, model::AnchorFreeRecord& record) {
    Eigen::MatrixXd M;
    if (c.method == Method::anchorfree_lp) {
        anchorfree::LpReport lp;
        M = anchorfree::anchorfree_lp(comm, B_local, first_row, N, c.lp, &lp);
        record.algorithm = model::AnchorFreeAlgorithm::lp;
        record.iterations = lp.sweeps;
        record.inner_iterations = lp.lp_solves;
        record.converged = lp.converged;
        record.working_rows = lp.working_rows;
    } else {
        anchorfree::PdsReport pds;
        M = anchorfree::anchorfree_pds(comm, B_local, first_row, N, c.pds, &pds);
        record.algorithm = model::AnchorFreeAlgorithm::pds;
        record.iterations = pds.outer;
        record.inner_iterations = pds.inner;
        record.converged = pds.converged;
        record.violation = pds.violation;
    }
    return M;
}

void take_anchorfree_topics(model::Model& m, anchorfree::AnchorFreeTopics&& topics,
                            const anchorfree::AnchorFreeResult& r, const Report& report) {
    model::AnchorFreeRecord& record = m.anchorfree;
    record.M = r.M;
    record.E = r.E;
    record.min_C = r.min_C;
    record.a_is_distribution = topics.a_is_distribution;
    m.B = std::move(topics.B);
    m.A = std::move(topics.A);
    m.B_breve = std::move(topics.B_breve);
    m.zero_rows = topics.zero_rows;
    m.anchors = std::move(topics.representatives);
    m.diag_r = std::move(topics.representative_weight);
    m.a_method = model::ARecovery::anchorfree;
    m.anchor_method = model::AnchorChoice::representative;
    if (!record.a_is_distribution)
        say(report, Level::warning,
            fmt::format("fit: K = {}: E* has negative entries (min {:.3g}, max {:.3g}): A is E* itself, not a joint "
                        "distribution",
                        m.num_topics, r.E.minCoeff(), r.E.maxCoeff()));
}

namespace {

model::Model fit_anchorfree(const distmat::DistMatrix& C, int K, const ModelOptions& c, const model::RectificationTrace& rectification,
                     Seed seed, const Report& report) {
    const mpi::Comm comm = C.grid().borrow_comm();
    model::Model m;
    m.method = c.method;
    m.num_topics = K;
    m.rectification = rectification;
    model::AnchorFreeRecord& record = m.anchorfree;
    Stopwatch clock;
    distmat::EigOptions eig;
    eig.tolerance = 1e-10;
    eig.seed = seed;
    const anchorfree::SquareRootFactor root = anchorfree::square_root_factor(C, K, eig);
    if (!root.eig_converged) say(report, Level::warning, fmt::format("fit: K = {}: the eigensolver did not converge for B = U Lambda^1/2", K));
    record.eigenvalues = root.eigenvalues;
    m.times.add("square_root", clock.seconds());

    clock.restart();
    const anchorfree::RowShare share = anchorfree::row_share(C.rows(), comm.rank(), comm.size());
    const Eigen::MatrixXd M =
        anchorfree_m(comm, root.B.middleRows(share.begin, share.end - share.begin), share.begin, C.rows(), c, record);
    m.times.add("anchorfree", clock.seconds());

    clock.restart();
    const anchorfree::AnchorFreeResult r = anchorfree::finish(C, root.B, M);
    const Index N = C.rows();
    // B, A, B̆ and the representative words: every rank the same, from its replicated C*.
    m.unigram = distmat::row_sums(C);
    std::vector<bool> occurs(static_cast<std::size_t>(N));
    for (Index i = 0; i < N; ++i) occurs[static_cast<std::size_t>(i)] = m.unigram(i) > 0;
    const mpi::Comm self(MPI_COMM_SELF);
    take_anchorfree_topics(m, anchorfree::topics_of(self, r.C, 0, r.E, occurs), r, report);
    if (c.alpha && record.a_is_distribution) static_cast<model::AlphaFit&>(m) = fit_alpha(comm, m.A);
    else if (c.alpha) say(report, Level::warning, fmt::format("fit: K = {}: no alpha: A is not a joint distribution", K));
    m.times.add("finish", clock.seconds());
    return m;
}

}  // namespace

model::Model factorize(const distmat::DistMatrix& C, int K, const ModelOptions& options, const model::RectificationTrace& trace,
                Seed seed, const Report& report, const recover::RecoverProgress* progress,
                const anchors::DocFreq& doc_freq) {
    if (options.method != Method::anchors) return fit_anchorfree(C, K, options, trace, seed, report);
    return fit_anchors(C, K, options, trace, seed, progress, doc_freq);
}

void warn_unconverged(const model::Model& m, const Report& report) {
    if (m.words_converged < m.words_solved)
        say(report, Level::warning,
            render_options(fmt::format("fit: K = {}: {} words did not converge ({}); raise the limit or use {{solver}} "
                                       "active-set",
                                       m.num_topics, m.words_solved - m.words_converged,
                                       m.solver == recover::Solver::active_set
                                           ? "the active set reached its iteration cap"
                                       : m.solver == recover::Solver::kl
                                           ? "stopped at {solver_iterations} trials, or where no step of at least 1e-6 "
                                             "decreased the divergence, before {solver_tolerance}"
                                           : "stopped at {solver_iterations} before {solver_tolerance}")));
}

void describe(const model::Model& m, const std::vector<std::string>& vocab, const Report& report) {
    if (m.method != Method::anchors) {
        const model::AnchorFreeRecord& r = m.anchorfree;
        std::string words;
        for (const Index s : m.anchors) words += (words.empty() ? "" : " ") + vocab[static_cast<std::size_t>(s)];
        say(report, Level::info, fmt::format("fit: K = {}: {}: {} {} ({} {}), {}; C* min {:.3g}{}; A {}", m.num_topics, name_of(m.method), r.iterations,
                  r.algorithm == model::AnchorFreeAlgorithm::lp ? "sweeps" : "outer iterations", r.inner_iterations,
                  r.algorithm == model::AnchorFreeAlgorithm::lp ? "Clp solves" : "inner", r.converged ? "converged" : "NOT converged", r.min_C,
                  r.algorithm == model::AnchorFreeAlgorithm::lp ? fmt::format(", {} working rows", r.working_rows)
                                      : fmt::format(", |BM - Z|/|Z| = {:.2e}", r.violation),
                  r.a_is_distribution ? "= E*/sum E*" : "= E* (not a distribution)"));
        say(report, Level::info, fmt::format("fit: K = {}: representative words: {}", m.num_topics, words));
        if (!r.converged)
            say(report, Level::warning, fmt::format("fit: K = {}: {} stopped at its iteration limit before its stopping rule", m.num_topics, name_of(m.method)));
        return;
    }
    std::string anchor_list;
    for (const Index s : m.anchors) anchor_list += (anchor_list.empty() ? "" : " ") + vocab[static_cast<std::size_t>(s)];
    say(report, Level::info, fmt::format("fit: K = {}: anchors ({}): {}", m.num_topics, name_of(m.anchor_method), anchor_list));
    if (m.anchor_min_df > 0)
        say(report, Level::info,
            render_options(fmt::format("fit: K = {}: anchor candidates: the words in at least {} documents; {} occurring "
                                       "words in fewer were not candidates ({{anchor_min_df}})",
                                       m.num_topics, m.anchor_min_df, m.anchor_excluded)));
    const double words_per_second = m.solve_seconds > 0 ? static_cast<double>(m.words_solved) / m.solve_seconds : 0;
    say(report, Level::info, fmt::format("fit: K = {}: B by {}: {} of {} words converged (most iterations {}), {:.3f} s, {:.0f} words/s",
              m.num_topics, model::solver_name(m), m.words_converged, m.words_solved, m.solver_max_iterations, m.solve_seconds,
              words_per_second));
    warn_unconverged(m, report);
    if (m.has_alpha) {
        say(report, Level::info, fmt::format("fit: K = {}: alpha0 = {:.4g} (fit residual {:.3g})", m.num_topics, m.alpha0, m.alpha_residual));
        if (m.alpha_at_bound) say(report, Level::warning, fmt::format("fit: K = {}: A is not Dirichlet-like: alpha0 was clamped", m.num_topics));
    }
}


// Levels 2, 3, … of a hierarchy (practical-jsmf §4: "the rectified
// A of one level is the co-occurrence matrix of the next"): the level below's A (joint
// distribution of its topics, the same on every rank after the root's copy is adopted)
// becomes a K_below × K_below co-occurrence matrix, is rectified and factorized with the
// next K as jsmf fits any C.
std::vector<model::HierarchyLevel> fit_hierarchy(const model::Model& first, const std::vector<int>& levels,
                                          const std::shared_ptr<const distmat::Grid>& grid, int block_size,
                                          const RectifyOptions& rectify_options, const ModelOptions& model_options,
                                          const Report& report) {
    std::vector<model::HierarchyLevel> out;
    if (levels.size() < 2) return out;
    const mpi::Comm comm = grid->borrow_comm();
    Eigen::MatrixXd A_below = first.A;
    // Each level's topics over the words, B times the levels' B: by rows where the first
    // level is kept by rows (each rank its own words: no rank holds N × K), else on the
    // root, where the first B and the writer are.
    const bool rows = model::by_rows(first);
    Eigen::MatrixXd B_words = rows || comm.is_root() ? first.B : Eigen::MatrixXd();
    for (std::size_t l = 1; l < levels.size(); ++l) {
        const int K = levels[l];
        const Index below = A_below.rows();
        mpi::adopt_root_copy(comm, A_below.data(), static_cast<std::size_t>(A_below.size()));
        Eigen::MatrixXd C_level = (A_below + A_below.transpose()) / 2;
        C_level /= C_level.sum();
        distmat::DistMatrix C(grid, below, below, std::min<Index>(block_size, below));
        for (Index jl = 0; jl < C.local_cols(); ++jl)
            for (Index il = 0; il < C.local_rows(); ++il) C.local()(il, jl) = C_level(C.global_row(il), C.global_col(jl));
        say(report, Level::info, fmt::format("fit: hierarchy level {}: K = {} over the {} topics below", l + 1, K, below));
        const model::RectificationTrace record = rectify(C, K, rectify_options, report);
        ModelOptions above = model_options;
        above.alpha = false;  // α belongs to the documents' topics, level 1
        above.anchor_words.clear();
        model::Model m = factorize(C, K, above, record, rectify_options.seed, report);
        model::HierarchyLevel level;
        level.topics = K;
        level.B = m.B;
        level.A = m.A;
        level.anchors = m.anchors;
        level.rectify_method = record.method;
        level.rectify_iterations = record.iterations;
        level.rectify_converged = record.converged;
        if (rows || comm.is_root()) B_words = B_words * m.B;
        level.B_words = B_words;
        if (rows) {
            level.B_words_first_row = first.B_first_row;
            level.B_words_total_rows = first.B_total_rows;
        }
        A_below = m.A;
        std::string anchors;
        for (const Index a : m.anchors) anchors += (anchors.empty() ? "" : " ") + std::to_string(a + 1);
        say(report, Level::info, fmt::format("fit: hierarchy level {}: anchor topics {}", l + 1, anchors));
        out.push_back(std::move(level));
    }
    return out;
}

}  // namespace jsmf::fit
