// SPDX-License-Identifier: MIT
// Anchors, B, A and α on a rectified C: the part of fit that sweep repeats per solver.
#include "app/model_stage.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "jsmf/anchors/fast_anchor.hpp"
#include "jsmf/anchors/pivoted_qr.hpp"
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
    sub->add_option("--anchors", c.anchors, "qr: sparse implicit pivoted QR (Alg. 2); fastanchor: Arora et al.")
        ->check(CLI::IsMember({"qr", "fastanchor"}))
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
    if (!c.anchor_words.empty() && c.anchors == "fastanchor")
        throw InputError("--anchor-words and --anchors fastanchor exclude each other");
}

Options model_provenance(const ModelSettings& c, bool words_given) {
    return {{"anchors", words_given ? "words" : c.anchors},
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
recover::Solver solver_of(const std::string& name) {
    if (name == "expgrad") return recover::Solver::expgrad;
    if (name == "admm") return recover::Solver::admm;
    return recover::Solver::active_set;
}
}  // namespace

io::FittedModel fit_rectified(const dist::DistMatrix& C, int K, const ModelSettings& c,
                              const std::vector<Index>& given_anchors, const io::RectificationRecord& rectification,
                              const RectifySettings& rectify) {
    io::FittedModel m;
    m.num_topics = K;
    m.rectification = rectification;
    Stopwatch clock;
    const Eigen::VectorXd p = dist::row_sums(C);  // p(x = i) of the rectified C
    anchors::AnchorResult found;
    if (!given_anchors.empty()) {
        found = anchors::anchors_from_words(C, p, given_anchors);
        m.anchor_method = "words";
    } else if (c.anchors == "fastanchor") {
        found = anchors::find_anchors_fast(C, p, K, {c.projection_dim, rectify.seed, true});
        m.anchor_method = "fastanchor";
    } else {
        found = anchors::find_anchors(C, p, K);
        m.anchor_method = "qr";
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
    if (c.alpha) {
        recover::AlphaResult alpha;
        mpi::run_local_phase(C.grid().borrow_comm(), "alpha", [&] { alpha = recover::recover_alpha(m.A); });
        m.has_alpha = true;
        m.alpha = alpha.alpha;
        m.alpha0 = alpha.alpha0;
        m.alpha_residual = alpha.residual;
        m.alpha_at_bound = alpha.at_bound;
    }
    m.unigram = p;
    m.B = std::move(model.B);
    m.B_breve = std::move(model.B_breve);
    m.times.add("recover_A", clock.seconds());
    return m;
}

void log_model(const io::FittedModel& m, const std::vector<std::string>& vocab) {
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
