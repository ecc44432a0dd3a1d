// SPDX-License-Identifier: MIT
// The flags of stages 3–4 (anchors, B, A, α; AnchorFree) and how they become the library's options.
#include "app/model_stage.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::app {

const char* const kSolverHelp =
    "B's per-word solver: simplex-constrained least squares by active-set (exact, on U = QR), expgrad (eta 50) or "
    "admm (ADMM-DR, Alg. 3); or kl: Arora et al.'s RecoverKL, min KL(row of C-bar | its mixture of the anchors' rows) "
    "by exponentiated gradient with their line search (dense pipeline)";

void add_model_options(CLI::App* sub, ModelSettings& settings) {
    fit::ModelOptions& c = settings.options;
    add_choice(sub, "--method", c.method,
                    "anchors: rectified anchor words; anchorfree-lp / anchorfree-pds: AnchorFree (Fu et al. 2019), "
                    "topics without anchor words by the minimum-determinant criterion (alternating LPs with Clp, or "
                    "penalty dual splitting)");
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
    add_choice(sub, "--anchors", c.finder,
                    "qr (= spa): sparse implicit pivoted QR (Alg. 2); fastanchor: Arora et al.; snpa: successive "
                    "nonnegative projection (Gillis); xray: fast conical hull (Kumar et al.)");
    sub->add_option("--projection-dim", c.projection_dim, "fastanchor: random projection dimension d")
        ->capture_default_str();
    sub->add_option("--anchor-min-df", c.anchor_min_df,
                    "Anchor candidates (every --anchors finder, both pipelines): only words in at least this many "
                    "documents may be anchors, as Arora et al.'s FastAnchorWords (0: every word). Rare words' rows of "
                    "C-bar are far from all others and would be picked first without it")
        ->capture_default_str();
    sub->add_option("--anchor-words", settings.anchor_words, "Use these anchor words (a file, one word per line; K = their number)");
    sub->add_option("--solver-iterations", c.solver_iterations, "expgrad/admm/kl: iteration limit per word (kl: trials)")
        ->capture_default_str();
    sub->add_option("--solver-tolerance", c.solver_tolerance,
                    "expgrad/admm/kl: stop when the per-word quantity is < this: expgrad the duality gap of "
                    "|Uy - v|^2 (gradient 2(Gy - f), the authors' scale); admm per --admm-stop; kl the duality gap "
                    "of the KL divergence (or the divergence itself), as Arora et al.'s epsilon")
        ->capture_default_str();
    add_choice(sub, "--admm-stop", c.admm_stop,
                    "admm stopping rule: step: |y_t - y_(t-1)|_2 < tolerance (the authors'); gap: the duality "
                    "gap, as expgrad");
    add_choice(sub, "--recover-a", c.recover_a,
                    "diagonal: A = D^-1 C_SS D^-1 (Alg. 4); ls: least squares min |C - B A B'| (Arora et al.)");
    sub->add_flag("--alpha", c.alpha, "Also fit a Dirichlet alpha to A (RECOVER-ALPHA, Alg. 4)");
}

void check_model_settings(const ModelSettings& c) {
    const fit::ModelOptions& o = c.options;
    // The anchor-word file is read later (it needs the vocabulary); its combinations now.
    if (!c.anchor_words.empty()) {
        if (!anchors::is_pivoted_qr(o.finder))
            throw usage_error("--anchor-words and --anchors " + name_of(o.finder) + " exclude each other");
        if (o.method != fit::Method::anchors) throw usage_error("--anchor-words needs --method anchors");
    }
    fit::check(o);
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
        if (item.empty() || used != item.size()) throw usage_error(flag + " must look like 10 or 10,25,50, got '" + text + "'");
        if (K < 2) throw usage_error(flag + ": K must be at least 2, got " + item);
        if (std::find(topics.begin(), topics.end(), K) != topics.end())
            throw usage_error(flag + ": K = " + item + " is given twice");
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
            throw usage_error(flag + ": '" + item + "' is not one of " + choices + " (a comma-separated list, e.g. " +
                             allowed.front() + "," + allowed.back() + ")");
        }
        if (std::find(names.begin(), names.end(), item) != names.end())
            throw usage_error(flag + ": '" + item + "' is given twice");
        names.push_back(item);
    }
    return names;
}

}  // namespace jsmf::app
