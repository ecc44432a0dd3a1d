// SPDX-License-Identifier: MIT
// Anchors, B, A and α on a rectified C: the part of fit that sweep repeats per solver.
#include "app/model_stage.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "jsmf/anchors/finder.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/dist/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/recover/recover.hpp"

namespace jsmf::app {

const char* const kSolverHelp =
    "B's simplex-constrained least squares: active-set (exact, on U = QR), expgrad (eta 50), admm (ADMM-DR, Alg. 3)";

const std::vector<std::string>& solver_names() {
    static const std::vector<std::string> names = {"active-set", "expgrad", "admm"};
    return names;
}

void add_model_options(CLI::App* sub, ModelSettings& c) {
    sub->add_option("--method", c.method,
                    "anchors: rectified anchor words; anchorfree-lp / anchorfree-pds: AnchorFree (Fu et al. 2019), "
                    "topics without anchor words by the minimum-determinant criterion (alternating LPs with Clp, or "
                    "penalty dual splitting)")
        ->check(CLI::IsMember({"anchors", "anchorfree-lp", "anchorfree-pds"}))
        ->capture_default_str();
    sub->add_option("--lp-max-sweeps", c.lp.max_sweeps, "anchorfree-lp: sweeps over the columns of M at most")
        ->capture_default_str();
    sub->add_option("--lp-tolerance", c.lp.tolerance,
                    "anchorfree-lp: stop when a sweep raised log|det M| by at most this (relative)")
        ->capture_default_str();
    sub->add_flag("!--lp-no-screening", c.lp.screening,
                  "anchorfree-lp: give Clp all N rows of B instead of a screened working set");
    sub->add_option("--pds-rho0", c.pds.rho0, "anchorfree-pds: the first penalty rho_0")->capture_default_str();
    sub->add_option("--pds-c", c.pds.c, "anchorfree-pds: shrink factor c of rho, eta and epsilon")->capture_default_str();
    sub->add_option("--pds-eta0", c.pds.eta0, "anchorfree-pds: eta_0, the violation below which the dual moves")
        ->capture_default_str();
    sub->add_option("--pds-mu", c.pds.mu, "anchorfree-pds: mu, the proximal weight of the M step")->capture_default_str();
    sub->add_option("--pds-max-outer", c.pds.max_outer, "anchorfree-pds: outer iterations at most")
        ->capture_default_str();
    sub->add_option("--pds-tolerance", c.pds.tolerance,
                    "anchorfree-pds: stop when |BM - Z|/|Z| and the outer step of M are below this")
        ->capture_default_str();
    sub->add_option("--anchors", c.anchors,
                    "qr (= spa): sparse implicit pivoted QR (Alg. 2); fastanchor: Arora et al.; snpa: successive "
                    "nonnegative projection (Gillis); xray: fast conical hull (Kumar et al.)")
        ->check(CLI::IsMember(anchors::finder_names()))
        ->capture_default_str();
    sub->add_option("--projection-dim", c.projection_dim, "fastanchor: random projection dimension d")
        ->capture_default_str();
    sub->add_option("--anchor-words", c.anchor_words, "Use these anchor words (a file, one word per line; K = their number)");
    sub->add_option("--solver-iterations", c.solver_iterations, "expgrad/admm: iteration limit per word")
        ->capture_default_str();
    sub->add_option("--solver-tolerance", c.solver_tolerance,
                    "expgrad/admm: stop when the per-word quantity is < this: expgrad the duality gap of "
                    "|Uy - v|^2 (gradient 2(Gy - f), the authors' scale); admm per --admm-stop")
        ->capture_default_str();
    sub->add_option("--admm-stop", c.admm_stop,
                    "admm stopping rule: step: |y_t - y_(t-1)|_2 < tolerance (the authors'); gap: the duality "
                    "gap, as expgrad")
        ->check(CLI::IsMember({"step", "gap"}))
        ->capture_default_str();
    sub->add_option("--recover-a", c.recover_a,
                    "diagonal: A = D^-1 C_SS D^-1 (Alg. 4); ls: least squares min |C - B A B'| (Arora et al.)")
        ->check(CLI::IsMember({"diagonal", "ls"}))
        ->capture_default_str();
    sub->add_flag("--alpha", c.alpha, "Also fit a Dirichlet alpha to A (RECOVER-ALPHA, Alg. 4)");
}

void check_model_settings(const ModelSettings& c) {
    if (c.solver_iterations < 1) throw InputError("--solver-iterations must be at least 1");
    if (!(c.solver_tolerance > 0)) throw InputError("--solver-tolerance must be positive");
    if (!c.anchor_words.empty() && anchors::finder_from_name(c.anchors) != anchors::Finder::qr)
        throw InputError("--anchor-words and --anchors " + c.anchors + " exclude each other");
    if (c.method != "anchors") {
        if (!c.anchor_words.empty()) throw InputError("--anchor-words needs --method anchors");
        if (c.recover_a != "diagonal") throw InputError("--recover-a is for --method anchors (AnchorFree's A is E*)");
        if (c.lp.max_sweeps < 1 || !(c.lp.tolerance > 0)) throw InputError("--lp-max-sweeps and --lp-tolerance must be positive");
        if (!(c.pds.rho0 > 0) || !(c.pds.c > 0 && c.pds.c < 1) || !(c.pds.eta0 > 0) || !(c.pds.mu > 0) ||
            c.pds.max_outer < 1 || !(c.pds.tolerance > 0))
            throw InputError("--pds-rho0, --pds-eta0, --pds-mu, --pds-tolerance and --pds-max-outer must be positive and "
                             "--pds-c in (0, 1)");
    }
}

Options model_provenance(const ModelSettings& c, bool words_given) {
    if (c.method != "anchors") {
        const bool lp = c.method == "anchorfree-lp";
        return {{"model_method", c.method},
                {"lp_max_sweeps", std::to_string(c.lp.max_sweeps)},
                {"lp_tolerance", std::to_string(c.lp.tolerance)},
                {"lp_screening", c.lp.screening ? "yes" : "no"},
                {"pds", lp ? "" : "rho0=" + std::to_string(c.pds.rho0) + " c=" + std::to_string(c.pds.c) +
                                      " eta0=" + std::to_string(c.pds.eta0) + " mu=" + std::to_string(c.pds.mu) +
                                      " epsilon0=" + std::to_string(c.pds.epsilon0) +
                                      " tolerance=" + std::to_string(c.pds.tolerance)},
                {"alpha", c.alpha ? "yes" : "no"}};
    }
    return {{"model_method", "anchors"},
            {"anchors", words_given ? "words" : c.anchors},
            {"anchor_words", c.anchor_words},
            {"projection_dim", std::to_string(c.projection_dim)},
            {"solver", c.solver},
            {"solver_iterations", std::to_string(c.solver_iterations)},
            {"solver_tolerance", std::to_string(c.solver_tolerance)},
            {"admm_stop", c.admm_stop},
            {"recover_a", c.recover_a},
            {"alpha", c.alpha ? "yes" : "no"}};
}

namespace {
std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        items.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return items;
}
}  // namespace

std::vector<int> parse_topic_list(const std::string& text, const std::string& flag) {
    std::vector<int> topics;
    for (const std::string& item : split_commas(text)) {
        std::size_t used = 0;
        int K = 0;
        try {
            K = std::stoi(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (item.empty() || used != item.size()) throw InputError(flag + " must look like 10 or 10,25,50, got '" + text + "'");
        if (K < 2) throw InputError(flag + ": K must be at least 2, got " + item);
        if (std::find(topics.begin(), topics.end(), K) != topics.end())
            throw InputError(flag + ": K = " + item + " is given twice");
        topics.push_back(K);
    }
    return topics;
}

std::vector<std::string> parse_name_list(const std::string& text, const std::string& flag,
                                         const std::vector<std::string>& allowed) {
    std::vector<std::string> names;
    for (const std::string& item : split_commas(text)) {
        if (std::find(allowed.begin(), allowed.end(), item) == allowed.end()) {
            std::string choices;
            for (const auto& name : allowed) choices += (choices.empty() ? "" : ", ") + name;
            throw InputError(flag + ": '" + item + "' is not one of " + choices + " (a comma-separated list, e.g. " +
                             allowed.front() + "," + allowed.back() + ")");
        }
        if (std::find(names.begin(), names.end(), item) != names.end())
            throw InputError(flag + ": '" + item + "' is given twice");
        names.push_back(item);
    }
    return names;
}

std::vector<Index> read_anchor_words(const mpi::Comm& world, const std::string& path,
                                     const std::vector<std::string>& vocab) {
    std::vector<std::int64_t> ids;
    mpi::check_on_root(world, "anchors", [&] {
        std::ifstream in(path);
        if (!in) throw InputError(path, std::string("cannot open the anchor-word file: ") + std::strerror(errno));
        std::unordered_map<std::string, Index> id_of;
        for (std::size_t i = 0; i < vocab.size(); ++i) id_of.emplace(vocab[i], static_cast<Index>(i));
        std::string line;
        for (int number = 1; std::getline(in, line); ++number) {
            const auto first = line.find_first_not_of(" \t\r");
            if (first == std::string::npos || line[first] == '#') continue;  // blank or comment
            const std::string word = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
            const auto found = id_of.find(word);
            const std::string where = path + ":" + std::to_string(number);
            if (found == id_of.end()) throw InputError(where, "'" + word + "' is not in the vocabulary");
            if (std::find(ids.begin(), ids.end(), found->second) != ids.end())
                throw InputError(where, "'" + word + "' is listed twice");
            ids.push_back(found->second);
        }
        if (ids.size() < 2) throw InputError(path, "needs at least 2 anchor words, found " + std::to_string(ids.size()));
    });
    std::int64_t count = static_cast<std::int64_t>(ids.size());
    mpi::broadcast(world, count, 0);
    ids.resize(static_cast<std::size_t>(count));
    mpi::broadcast(world, ids.data(), ids.size(), 0);
    return {ids.begin(), ids.end()};
}

namespace {
/// Collective on `comm`. RECOVER-ALPHA on m.A.
void fit_alpha(const mpi::Comm& comm, io::FittedModel& m) {
    recover::AlphaResult alpha;
    mpi::run_local_phase(comm, "alpha", [&] { alpha = recover::recover_alpha(m.A); });
    m.has_alpha = true;
    m.alpha = alpha.alpha;
    m.alpha0 = alpha.alpha0;
    m.alpha_residual = alpha.residual;
    m.alpha_at_bound = alpha.at_bound;
}

recover::Solver solver_of(const std::string& name) {
    if (name == "expgrad") return recover::Solver::expgrad;
    if (name == "admm") return recover::Solver::admm;
    return recover::Solver::active_set;
}
}  // namespace

io::FittedModel fit_rectified(const dist::DistMatrix& C, int K, const ModelSettings& c,
                              const std::vector<Index>& given_anchors, const io::RectificationRecord& rectification,
                              const RectifySettings& rectify) {
    if (c.method != "anchors") return fit_anchorfree(C, K, c, rectification, rectify);
    io::FittedModel m;
    m.num_topics = K;
    m.rectification = rectification;
    Stopwatch clock;
    const Eigen::VectorXd p = dist::row_sums(C);  // p(x = i) of the rectified C
    anchors::AnchorResult found;
    if (!given_anchors.empty()) {
        found = anchors::anchors_from_words(C, p, given_anchors);
        m.anchor_method = "words";
    } else {
        found = anchors::find_anchors_by(anchors::finder_from_name(c.anchors), C, p, K,
                                         {c.projection_dim, rectify.seed, true});
        m.anchor_method = c.anchors;
    }
    m.anchors = found.anchors;
    m.diag_r = found.diag_r;
    m.zero_rows = found.zero_rows;
    m.times.add("anchors", clock.seconds());

    clock.restart();
    recover::RecoverOptions options;
    options.solver = solver_of(c.solver);
    options.scls.max_iterations = c.solver_iterations;
    options.scls.tolerance = c.solver_tolerance;
    options.scls.admm_stop = c.admm_stop == "gap" ? recover::AdmmStop::gap : recover::AdmmStop::step;
    recover::TopicModel model = recover::recover_topics(C, p, m.anchors, options);
    m.solver = c.solver;
    m.words_solved = model.words_solved;
    m.words_converged = model.words_converged;
    m.solver_max_iterations = model.max_iterations_used;
    m.solve_seconds = model.solve_seconds;
    m.times.add("recover_B", clock.seconds());

    clock.restart();
    m.a_method = c.recover_a == "ls" ? "least_squares" : "diagonal";
    m.A = c.recover_a == "ls" ? recover::recover_a_least_squares(C, model.B) : model.A;
    if (c.alpha) fit_alpha(C.grid().borrow_comm(), m);
    m.unigram = p;
    m.B = std::move(model.B);
    m.B_breve = std::move(model.B_breve);
    m.times.add("recover_A", clock.seconds());
    return m;
}

io::FittedModel fit_anchorfree(const dist::DistMatrix& C, int K, const ModelSettings& c,
                               const io::RectificationRecord& rectification, const RectifySettings& rectify) {
    const mpi::Comm comm = C.grid().borrow_comm();
    io::FittedModel m;
    m.method = c.method;
    m.num_topics = K;
    m.rectification = rectification;
    io::AnchorFreeRecord& record = m.anchorfree;
    Stopwatch clock;
    dist::EigOptions eig;
    eig.tolerance = 1e-10;
    eig.seed = rectify.seed;
    const anchorfree::SquareRootFactor root = anchorfree::square_root_factor(C, K, eig);
    if (!root.eig_converged) log::warn("fit: K = {}: the eigensolver did not converge for B = U Lambda^1/2", K);
    record.eigenvalues = root.eigenvalues;
    m.times.add("square_root", clock.seconds());

    clock.restart();
    Eigen::MatrixXd M;
    if (c.method == "anchorfree-lp") {
        anchorfree::LpReport report;
        M = anchorfree::anchorfree_lp(comm, root.B, c.lp, &report);
        record.algorithm = "lp";
        record.iterations = report.sweeps;
        record.inner_iterations = report.lp_solves;
        record.converged = report.converged;
        record.working_rows = report.working_rows;
    } else {
        anchorfree::PdsReport report;
        M = anchorfree::anchorfree_pds(comm, root.B, c.pds, &report);
        record.algorithm = "pds";
        record.iterations = report.outer;
        record.inner_iterations = report.inner;
        record.converged = report.converged;
        record.violation = report.violation;
    }
    m.times.add("anchorfree", clock.seconds());

    clock.restart();
    const anchorfree::AnchorFreeResult r = anchorfree::finish(C, root.B, M);
    record.M = r.M;
    record.E = r.E;
    record.min_C = r.min_C;
    const Index N = C.rows();
    // B: C* with its negative residue (at the solver's tolerance) cut, columns summed to 1.
    m.B = r.C.cwiseMax(0.0);
    for (Index k = 0; k < K; ++k) {
        const double sum = m.B.col(k).sum();
        if (sum > 0) m.B.col(k) /= sum;
    }
    // A: E* as a joint distribution when it is one (nonnegative to rounding).
    const double scale = r.E.cwiseAbs().maxCoeff();
    record.a_is_distribution = r.E.minCoeff() >= -1e-9 * scale && r.E.sum() > 0;
    m.A = record.a_is_distribution ? Eigen::MatrixXd(r.E.cwiseMax(0.0) / r.E.cwiseMax(0.0).sum()) : r.E;
    m.a_method = "anchorfree";
    if (!record.a_is_distribution && comm.is_root())
        log::warn("fit: K = {}: E* has negative entries (min {:.3g}, max {:.3g}): A is E* itself, not a joint "
                  "distribution", K, r.E.minCoeff(), r.E.maxCoeff());
    // B̆ by Bayes' rule with the topic marginals, and each topic's representative word.
    m.unigram = dist::row_sums(C);
    const Eigen::VectorXd marginal = m.A.rowwise().sum().cwiseMax(0.0);
    m.B_breve = Eigen::MatrixXd::Zero(K, N);
    for (Index i = 0; i < N; ++i) {
        const Eigen::VectorXd joint = m.B.row(i).transpose().cwiseProduct(marginal);
        const double total = joint.sum();
        if (total > 0) m.B_breve.col(i) = joint / total;
        else ++m.zero_rows;
    }
    std::vector<bool> taken(static_cast<std::size_t>(N), false);
    m.diag_r.resize(K);
    for (Index k = 0; k < K; ++k) {  // greedy in topic order, a word to one topic only
        Index best = -1;
        for (Index i = 0; i < N; ++i)
            if (!taken[static_cast<std::size_t>(i)] && m.unigram(i) > 0 && (best < 0 || m.B_breve(k, i) > m.B_breve(k, best)))
                best = i;
        if (best < 0) best = k;  // fewer occurring words than topics: any id (never happens with K < N words used)
        taken[static_cast<std::size_t>(best)] = true;
        m.anchors.push_back(best);
        m.diag_r(k) = m.B_breve(k, best);
    }
    m.anchor_method = "representative";
    m.solver = c.method;
    if (c.alpha && record.a_is_distribution) fit_alpha(comm, m);
    else if (c.alpha && comm.is_root()) log::warn("fit: K = {}: no alpha: A is not a joint distribution", K);
    m.times.add("finish", clock.seconds());
    return m;
}

void log_model(const io::FittedModel& m, const std::vector<std::string>& vocab) {
    if (m.method != "anchors") {
        const io::AnchorFreeRecord& r = m.anchorfree;
        std::string words;
        for (const Index s : m.anchors) words += (words.empty() ? "" : " ") + vocab[static_cast<std::size_t>(s)];
        log::info("fit: K = {}: {}: {} {} ({} {}), {}; C* min {:.3g}{}; A {}", m.num_topics, m.method, r.iterations,
                  r.algorithm == "lp" ? "sweeps" : "outer iterations", r.inner_iterations,
                  r.algorithm == "lp" ? "Clp solves" : "inner", r.converged ? "converged" : "NOT converged", r.min_C,
                  r.algorithm == "lp" ? fmt::format(", {} working rows", r.working_rows)
                                      : fmt::format(", |BM - Z|/|Z| = {:.2e}", r.violation),
                  r.a_is_distribution ? "= E*/sum E*" : "= E* (not a distribution)");
        log::info("fit: K = {}: representative words: {}", m.num_topics, words);
        if (!r.converged)
            log::warn("fit: K = {}: {} stopped at its iteration limit before its stopping rule", m.num_topics, m.method);
        return;
    }
    std::string anchor_list;
    for (const Index s : m.anchors) anchor_list += (anchor_list.empty() ? "" : " ") + vocab[static_cast<std::size_t>(s)];
    log::info("fit: K = {}: anchors ({}): {}", m.num_topics, m.anchor_method, anchor_list);
    const double words_per_second = m.solve_seconds > 0 ? static_cast<double>(m.words_solved) / m.solve_seconds : 0;
    log::info("fit: K = {}: B by {}: {} of {} words converged (most iterations {}), {:.3f} s, {:.0f} words/s",
              m.num_topics, m.solver, m.words_converged, m.words_solved, m.solver_max_iterations, m.solve_seconds,
              words_per_second);
    if (m.words_converged < m.words_solved)
        log::warn("fit: K = {}: {} words did not converge ({}); raise the limit or use --solver active-set",
                  m.num_topics, m.words_solved - m.words_converged,
                  m.solver == "active-set" ? "the active set reached its iteration cap"
                                           : "stopped at --solver-iterations before --solver-tolerance");
    if (m.has_alpha) {
        log::info("fit: K = {}: alpha0 = {:.4g} (fit residual {:.3g})", m.num_topics, m.alpha0, m.alpha_residual);
        if (m.alpha_at_bound) log::warn("fit: K = {}: A is not Dirichlet-like: alpha0 was clamped", m.num_topics);
    }
}

}  // namespace jsmf::app
