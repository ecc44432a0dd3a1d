// SPDX-License-Identifier: MIT
// `jsmf fit`: corpus (or C) → co-occurrence → rectify → anchors → B, A, α → one model file.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "app/commands.hpp"
#include "jsmf/anchors/fast_anchor.hpp"
#include "jsmf/anchors/pivoted_qr.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/dist/blas_check.hpp"
#include "jsmf/dist/ops.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/recover/recover.hpp"

namespace jsmf::app {

CLI::App* add_fit_command(CLI::App& app, FitCommand& c) {
    CLI::App* sub = app.add_subcommand(
        "fit", "Learn topics B, topic correlations A (and alpha) from a corpus or a co-occurrence file");
    add_cooc_options(sub, c.input, false);
    sub->add_option("--cooc", c.cooc_file, "A co-occurrence file from jsmf cooc (instead of --corpus/--vocab)");
    sub->add_option("--out", c.out, "Output model file (HDF5)")->required();
    sub->add_option("--topics", c.topics,
                    "Number(s) of topics K, e.g. 10 or 10,25,50 (one C, one model per K; default 10, or the "
                    "number of --anchor-words)");
    add_rectify_options(sub, c.rectify, "--rectify");
    sub->add_option("--anchors", c.anchors, "qr: sparse implicit pivoted QR (Alg. 2); fastanchor: Arora et al.")
        ->check(CLI::IsMember({"qr", "fastanchor"}))
        ->capture_default_str();
    sub->add_option("--projection-dim", c.projection_dim, "fastanchor: random projection dimension d")
        ->capture_default_str();
    sub->add_option("--anchor-words", c.anchor_words, "Use these anchor words (a file, one word per line; K = their number)");
    sub->add_option("--solver", c.solver,
                    "B's simplex-constrained least squares: active-set (exact, on U = QR), expgrad (eta 50), admm "
                    "(ADMM-DR, Alg. 3)")
        ->check(CLI::IsMember({"active-set", "expgrad", "admm"}))
        ->capture_default_str();
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
    sub->add_option("--top-words", c.top_words, "Words per topic kept in /K<K>/topics")->capture_default_str();
    sub->add_option("--block-size", c.block_size, "Block size of C's block-cyclic layout")->capture_default_str();
    sub->add_option("--grid", c.grid, "Process grid RxC (default: most square)");
    return sub;
}

namespace {

std::vector<int> parse_topic_list(const std::string& text) {
    std::vector<int> topics;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, comma - start);
        std::size_t used = 0;
        int K = 0;
        try {
            K = std::stoi(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (item.empty() || used != item.size()) throw InputError("--topics must look like 10 or 10,25,50, got '" + text + "'");
        if (K < 2) throw InputError("--topics: K must be at least 2, got " + item);
        if (std::find(topics.begin(), topics.end(), K) != topics.end())
            throw InputError("--topics: K = " + item + " is given twice");
        topics.push_back(K);
        start = comma + 1;
    }
    return topics;
}

/// Rank 0 reads the anchor-word file and maps it to word ids; every rank gets the ids.
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

recover::Solver solver_of(const std::string& name) {
    if (name == "expgrad") return recover::Solver::expgrad;
    if (name == "admm") return recover::Solver::admm;
    return recover::Solver::active_set;
}

/// Stages 2–5 for one K on C (rectified in place).
io::FittedModel fit_one(dist::DistMatrix& C, int K, const FitCommand& c, const std::vector<Index>& given_anchors) {
    io::FittedModel m;
    m.num_topics = K;
    Stopwatch clock;
    m.rectification = run_rectify_stage(C, K, c.rectify);
    m.times.add("rectify", clock.seconds());

    clock.restart();
    const Eigen::VectorXd p = dist::row_sums(C);  // p(x = i) of the rectified C
    anchors::AnchorResult found;
    if (!given_anchors.empty()) {
        found = anchors::anchors_from_words(C, p, given_anchors);
        m.anchor_method = "words";
    } else if (c.anchors == "fastanchor") {
        found = anchors::find_anchors_fast(C, p, K, {c.projection_dim, c.rectify.seed, true});
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

}  // namespace

int run_fit(const FitCommand& c, const mpi::Comm& world, const std::string& command_line) {
    Stopwatch total;
    StageTimes times;
    std::vector<int> topics;
    int grid_rows = 0, grid_cols = 0;
    mpi::run_local_phase(world, "setup", [&] {
        parse_grid_shape(c.grid, world.size(), grid_rows, grid_cols);
        const bool from_corpus = !c.input.corpus.empty() || !c.input.vocab.empty();
        if (from_corpus == !c.cooc_file.empty())
            throw InputError("give either --corpus and --vocab, or --cooc (a file from jsmf cooc)");
        if (from_corpus && (c.input.corpus.empty() || c.input.vocab.empty()))
            throw InputError("--corpus needs --vocab, and --vocab needs --corpus");
        if (c.block_size < 1) throw InputError("--block-size must be at least 1");
        if (c.rectify.iterations < 0) throw InputError("--iterations must be non-negative");
        if (c.solver_iterations < 1) throw InputError("--solver-iterations must be at least 1");
        if (!(c.solver_tolerance > 0)) throw InputError("--solver-tolerance must be positive");
        if (c.top_words < 1) throw InputError("--top-words must be at least 1");
        if (!c.anchor_words.empty() && c.anchors == "fastanchor")
            throw InputError("--anchor-words and --anchors fastanchor exclude each other");
        topics = parse_topic_list(c.topics.empty() ? "10" : c.topics);
        if (!c.anchor_words.empty() && topics.size() > 1)
            throw InputError("--anchor-words fixes K: give one --topics value at most");
    });
    const auto grid = dist::Grid::create(world, grid_rows, grid_cols);
    io::check_output_path(world, c.out);
    if (const std::string warning = dist::blas_warning(); !warning.empty()) log::warn("{}", warning);

    // Stages 0–1: C, from the corpus or from a file.
    Stopwatch clock;
    io::CoocFileInfo info;
    dist::DistMatrix C = [&] {
        if (c.cooc_file.empty()) {
            CoocOutcome outcome = run_cooc_stage(c.input, grid, c.block_size, times);
            info = std::move(outcome.info);
            return std::move(outcome.C);
        }
        dist::DistMatrix read = io::read_cooc_file(c.cooc_file, grid, c.block_size, info);
        times.add("read", clock.seconds());
        return read;
    }();
    const Index N = C.rows();
    std::vector<Index> given_anchors;
    if (!c.anchor_words.empty()) {
        given_anchors = read_anchor_words(world, c.anchor_words, info.vocab);
        const int K = static_cast<int>(given_anchors.size());
        mpi::check_on_root(world, "setup", [&] {
            if (!c.topics.empty() && topics.front() != K)
                throw InputError(c.anchor_words, "lists " + std::to_string(K) + " anchor words, but --topics is " +
                                                     std::to_string(topics.front()));
        });
        topics = {K};
    }
    mpi::check_on_root(world, "setup", [&] {
        for (const int K : topics)
            if (K >= N) throw InputError("--topics must satisfy 2 <= K < N = " + std::to_string(N) + ", got " + std::to_string(K));
        if (!info.rectification.empty() && c.rectify.method != "none")
            log::warn("fit: {} holds an already rectified C ({}); it is rectified again", c.cooc_file, info.rectification);
        Index never = 0;
        for (Index i = 0; i < N; ++i) never += info.stats.unigram(i) > 0 ? 0 : 1;
        if (never > 0)
            log::warn("fit: {} of {} words never occur in the used documents (rows of C that are 0: with --rectify "
                      "none they get B row 0 and are never anchors)", never, N);
    });

    // Stages 2–5 per K. All but the last K work on a copy, so C stays the unrectified one.
    std::vector<io::FittedModel> models;
    for (std::size_t k = 0; k < topics.size(); ++k) {
        const int K = topics[k];
        log::info("fit: K = {} ({} of {}): rectify {}, anchors {}, solver {}", K, k + 1, topics.size(), c.rectify.method,
                  given_anchors.empty() ? c.anchors : "words", c.solver);
        if (k + 1 < topics.size()) {
            dist::DistMatrix work = dist::copy(C);
            models.push_back(fit_one(work, K, c, given_anchors));
        } else {
            models.push_back(fit_one(C, K, c, given_anchors));
        }
        log_model(models.back(), info.vocab);
    }

    clock.restart();
    Options options = c.cooc_file.empty() ? cooc_provenance(c.input, c.block_size)
                                          : Options{{"cooc", c.cooc_file}, {"block_size", std::to_string(c.block_size)}};
    const Options rectify_options = rectify_provenance(c.rectify);
    options.insert(options.end(), rectify_options.begin(), rectify_options.end());
    for (const auto& entry : Options{{"anchors", given_anchors.empty() ? c.anchors : "words"},
                                     {"anchor_words", c.anchor_words},
                                     {"projection_dim", std::to_string(c.projection_dim)},
                                     {"solver", c.solver},
                                     {"solver_iterations", std::to_string(c.solver_iterations)},
                                     {"solver_tolerance", std::to_string(c.solver_tolerance)},
                                     {"admm_stop", c.admm_stop},
                                     {"recover_a", c.recover_a},
                                     {"alpha", c.alpha ? "yes" : "no"}})
        options.push_back(entry);
    io::write_model_file(world, c.out, info, models, make_provenance(command_line, world, *grid, options), times,
                         c.top_words);
    const double write_seconds = clock.seconds();
    const double peak = static_cast<double>(mpi::allreduce_max(world, peak_rss_bytes()));
    log::info("fit: wrote {} in {:.2f} s; total {:.2f} s; peak memory {} per rank", c.out, write_seconds,
              total.seconds(), mib(peak));
    if (world.is_root()) {  // one machine-readable line per K (stdout, rank 0)
        for (const auto& m : models) {
            std::printf("jsmf-fit ranks=%d words=%lld topics=%d rectify=%s anchors=%s solver=%s", world.size(),
                        static_cast<long long>(N), m.num_topics, c.rectify.method.c_str(), m.anchor_method.c_str(),
                        m.solver.c_str());
            for (const auto& [stage, seconds] : times.entries()) std::printf(" %s_seconds=%.6f", stage.c_str(), seconds);
            for (const auto& [stage, seconds] : m.times.entries()) std::printf(" %s_seconds=%.6f", stage.c_str(), seconds);
            std::printf(" solve_seconds=%.6f words_solved=%lld words_converged=%lld write_seconds=%.6f "
                        "total_seconds=%.6f peak_rss_bytes=%lld\n",
                        m.solve_seconds, static_cast<long long>(m.words_solved),
                        static_cast<long long>(m.words_converged), write_seconds, total.seconds(),
                        static_cast<long long>(peak));
        }
        std::fflush(stdout);
    }
    return exit_code::ok;
}

}  // namespace jsmf::app
