// SPDX-License-Identifier: MIT
// The fit's options: names, defaults decided from the stop rule, and their checks.
#include "jsmf/fit/options.hpp"

#include <algorithm>
#include <array>

#include "jsmf/lowrank/enn.hpp"

namespace jsmf::fit {

RectifyOptions resolve(const RectifyOptions& given) {
    using rectify::StopRule;
    RectifyOptions s = given;
    // A count given alone is a count: the papers' plain iterations, exactly that many.
    if (!s.stop) s.stop = s.tolerance || s.iterations ? StopRule::iterations : StopRule::quality;
    if (s.max_iterations && *s.stop == StopRule::iterations)
        throw OptionError("{max_iterations} caps {stop} quality and fixed-point; with {stop} iterations, "
                          "{iterations} is the count");
    if (s.max_iterations && *s.max_iterations < 0) throw OptionError("{max_iterations} must be non-negative");
    if (s.max_iterations) s.iterations = s.max_iterations;
    if (s.tolerance && *s.stop != StopRule::iterations)
        throw OptionError("{tolerance} applies to {stop} iterations (the papers' plain AP), not {stop} " +
                          name_of(*s.stop));
    if (s.tolerance && !(*s.tolerance >= 0)) throw OptionError("{tolerance} must be non-negative");
    if (s.iterations && *s.iterations < 0) throw OptionError("{iterations} must be non-negative");
    const bool fast = *s.stop != StopRule::iterations;
    if (!s.iterations) s.iterations = fast ? 1000 : 150;
    // An unset tolerance stays unset (resolve is idempotent); it acts as 0.
    if (!s.relaxation) s.relaxation = fast && s.method == Rectifier::ap ? 1.9 : 1.0;
    if (!(*s.relaxation > 0 && *s.relaxation < 2)) throw OptionError("{relaxation} must lie in (0, 2)");
    if (*s.relaxation != 1 && s.method != Rectifier::ap) throw OptionError("{relaxation} applies to {rectify} ap");
    if (!(s.anderson_below >= 0)) throw OptionError("{anderson_below} must be non-negative");
    if (s.acceleration == Acceleration::anderson && s.method != Rectifier::ap && is_projection(s.method))
        throw OptionError("{acceleration} anderson applies to {rectify} ap");
    if (!s.eig_tolerance_factor) s.eig_tolerance_factor = fast ? 0.1 : 0.0;
    if (s.anderson_depth < 1) throw OptionError("{anderson_depth} must be at least 1");
    if (s.check_every < 1) throw OptionError("{check_every} must be at least 1");
    if (s.precision == Precision::single && s.method != Rectifier::ap)
        throw OptionError("{precision} single applies to AP only ({rectify} ap)");
    if (s.precision == Precision::single && s.eigensolver == distmat::EigMethod::direct)
        throw OptionError("{precision} single needs {eigensolver} subspace (PDSYEVR works in double)");
    return s;
}

namespace {
bool listed(const std::vector<std::string>& given, const std::string& name) {
    return std::find(given.begin(), given.end(), name) != given.end();
}
// Each given name of `names` that is unused (`used` false), with what it needs.
void unless(bool used, const std::vector<std::string>& given, std::initializer_list<const char*> names,
            const std::string& needs, std::vector<UnusedSetting>& out) {
    if (used) return;
    for (const char* name : names)
        if (listed(given, name)) out.push_back({name, needs});
}
}  // namespace

std::vector<UnusedSetting> unused_settings(const std::vector<std::string>& given, const RectifyOptions& r) {
    std::vector<UnusedSetting> out;
    unless(r.method == Rectifier::dc, given, {"permutations"}, "{rectify} dc", out);
    unless(r.method == Rectifier::ap, given, {"acceleration"}, "{rectify} ap", out);
    unless(r.method == Rectifier::ap && r.acceleration == Acceleration::anderson, given,
           {"anderson_depth", "anderson_below"}, "{acceleration} anderson (AP)", out);
    // The iterations' rules and their eigensolves: AP, DR and DP iterate; DC and none do not.
    unless(is_projection(r.method), given,
           {"stop", "converge", "iterations", "max_iterations", "tolerance", "check_every", "eig_tolerance_factor",
            "eig_check_every"},
           "{rectify} ap, dr or dp", out);
    unless(r.method != Rectifier::none, given, {"eigensolver", "eig_check_steps"}, "{rectify} ap, dr, dp or dc", out);
    return out;
}

std::vector<UnusedSetting> unused_settings(const std::vector<std::string>& given, const ModelOptions& m) {
    std::vector<UnusedSetting> out;
    unless(m.method == Method::anchorfree_lp, given, {"lp_max_sweeps", "lp_tolerance", "lp_no_screening"},
           "{method} anchorfree-lp", out);
    unless(m.method == Method::anchorfree_pds, given,
           {"pds_rho0", "pds_c", "pds_eta0", "pds_mu", "pds_max_outer", "pds_tolerance"}, "{method} anchorfree-pds", out);
    // AnchorFree has no anchor words and no per-word solves.
    const bool anchors = m.method == Method::anchors;
    unless(anchors, given, {"finder", "anchor_min_df", "solver"}, "{method} anchors", out);
    unless(anchors && m.finder == anchors::Finder::fastanchor, given, {"projection_dim"}, "{finder} fastanchor", out);
    unless(anchors && m.solver != recover::Solver::active_set, given, {"solver_iterations", "solver_tolerance"},
           "{solver} expgrad, admm or kl (the active set stops at the exact solution)", out);
    unless(anchors && m.solver == recover::Solver::admm, given, {"admm_stop"}, "{solver} admm", out);
    return out;
}

void refuse_unused(const std::vector<UnusedSetting>& unused) {
    if (unused.empty()) return;
    std::string text;
    for (std::size_t k = 0; k < unused.size(); ++k)
        text += (k ? "; {" : "{") + unused[k].name + "} is read only with " + unused[k].needs;
    throw OptionError(text + (unused.size() > 1 ? ": drop them, or choose what reads them"
                                                : ": drop it, or choose what reads it"));
}

void check(const ModelOptions& c) {
    if (c.solver_iterations < 1) throw OptionError("{solver_iterations} must be at least 1");
    if (!(c.solver_tolerance > 0)) throw OptionError("{solver_tolerance} must be positive");
    if (c.anchor_min_df < 0) throw OptionError("{anchor_min_df} must be at least 0");
    if (!c.anchor_words.empty() && !anchors::is_pivoted_qr(c.finder))
        throw OptionError("{anchor_words} and {finder} " + name_of(c.finder) + " exclude each other");
    if (c.method != Method::anchors) {
        if (!c.anchor_words.empty()) throw OptionError("{anchor_words} needs {method} anchors");
        if (c.recover_a != RecoverA::diagonal)
            throw OptionError("{recover_a} is for {method} anchors (AnchorFree's A is E*)");
        if (c.lp.max_sweeps < 1 || !(c.lp.tolerance > 0))
            throw OptionError("{lp_max_sweeps} and {lp_tolerance} must be positive");
        if (!(c.pds.rho0 > 0) || !(c.pds.c > 0 && c.pds.c < 1) || !(c.pds.eta0 > 0) || !(c.pds.mu > 0) ||
            c.pds.max_outer < 1 || !(c.pds.tolerance > 0))
            throw OptionError("{pds_rho0}, {pds_eta0}, {pds_mu}, {pds_tolerance} and {pds_max_outer} must be positive "
                              "and {pds_c} in (0, 1)");
    }
}

bool warm_enn(const CompressedOptions& o, int K) {
    return K > 0 && o.stop_when_settled && o.old_sketch && o.old_factor.cols() == K && o.old_sketch->rank() >= K;
}

// The relaxed budget is for ENN from Y₀, where it was measured; a warm start keeps the
// settings its own measurements were made with (ω = 1, its looks, at most o.iterations).
int enn_most_iterations(const CompressedOptions& o, int K) {
    const bool from_y0 = o.stop_when_settled && !warm_enn(o, K);
    return from_y0 ? std::min(o.iterations, lowrank::kSettledIterations) : o.iterations;
}

double enn_relaxation_of(const CompressedOptions& o, int K) {
    if (o.enn_relaxation) return *o.enn_relaxation;
    return o.stop_when_settled && !warm_enn(o, K) ? lowrank::kSettledRelaxation : 1.0;
}

int enn_look_every(const CompressedOptions& o, int K) { return warm_enn(o, K) ? lowrank::kWarmLookEvery : 0; }

void check(const FitOptions& o) {
    const std::vector<int>& topics = o.hierarchy.empty() ? o.topics : o.hierarchy;
    const std::string name = o.hierarchy.empty() ? "{topics}" : "{hierarchy}";
    if (topics.empty()) throw OptionError(name + ": no K given");
    for (std::size_t k = 0; k < topics.size(); ++k) {
        if (topics[k] < 2) throw OptionError(name + ": K must be at least 2, got " + std::to_string(topics[k]));
        if (std::find(topics.begin(), topics.begin() + static_cast<std::ptrdiff_t>(k), topics[k]) !=
            topics.begin() + static_cast<std::ptrdiff_t>(k))
            throw OptionError(name + ": K = " + std::to_string(topics[k]) + " is given twice");
    }
    if (!o.hierarchy.empty()) {
        if (o.hierarchy.size() < 2) throw OptionError("{hierarchy} needs at least two levels, e.g. 25,5");
        for (std::size_t l = 1; l < o.hierarchy.size(); ++l)
            if (o.hierarchy[l] >= o.hierarchy[l - 1])
                throw OptionError("{hierarchy}: each level needs fewer topics than the one below");
        if (!o.model.anchor_words.empty()) throw OptionError("{hierarchy} sets the topics: give no {anchor_words} with it");
        if (o.model.method != Method::anchors)
            throw OptionError("{hierarchy} works with {method} anchors: an AnchorFree A need not be a joint "
                              "distribution, which the next level factorizes");
    }
    if (!o.model.anchor_words.empty() &&
        (o.topics.size() != 1 || o.topics.front() != static_cast<int>(o.model.anchor_words.size())))
        throw OptionError("{anchor_words} fixes K = " + std::to_string(o.model.anchor_words.size()) +
                          ": give that one {topics} value");
    if ((!o.checkpoint.path.empty() || !o.checkpoint.resume.empty()) && o.topics.size() != 1)
        throw OptionError("{checkpoint} and {resume} apply to one {topics} value at a time");
    if (!(o.checkpoint.seconds >= 0)) throw OptionError("{checkpoint_seconds} must be at least 0");
    if (o.compressed.checked_rows < 0) throw OptionError("{checked_rows} must be at least 0");
    if (o.compressed.enn_relaxation && !(*o.compressed.enn_relaxation > 0 && *o.compressed.enn_relaxation < 2))
        throw OptionError("{enn_relaxation} must lie in (0, 2) (1: the authors' ENN)");
    if (!(o.compressed.product_buffer_bytes == 0 ||
          (o.compressed.product_buffer_bytes >= 1 << 20 && o.compressed.product_buffer_bytes <= 1e15)))
        throw OptionError("{product_buffer_mb} must be from 1 to 10^9 (MiB), or 0 for the default");
    (void)resolve(o.rectify);
    check(o.model);
}

Entries entries(const RectifyOptions& given) {
    const RectifyOptions c = resolve(given);
    return {{"method", name_of(c.method)},
            {"stop", name_of(*c.stop)},
            {"iterations", std::to_string(*c.iterations)},
            {"tolerance", std::to_string(std::max(0.0, c.tolerance.value_or(0.0)))},
            {"acceleration", name_of(c.acceleration)},
            {"anderson_depth", std::to_string(c.anderson_depth)},
            {"anderson_below", std::to_string(c.anderson_below)},
            {"relaxation", std::to_string(*c.relaxation)},
            {"eig_tolerance_factor", std::to_string(*c.eig_tolerance_factor)},
            {"check_every", std::to_string(c.check_every)},
            {"precision", name_of(c.precision)},
            {"eigensolver", name_of(c.eigensolver)},
            {"eig_check_steps", std::to_string(c.eig_check_steps)},
            {"eig_check_every", std::to_string(c.eig_check_every)},
            {"permutations", std::to_string(c.permutations)},
            {"seed", std::to_string(c.seed)}};
}

Entries entries(const ModelOptions& c) {
    if (c.method != Method::anchors) {
        const bool lp = c.method == Method::anchorfree_lp;
        return {{"model_method", name_of(c.method)},
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
            {"anchors", c.anchor_words.empty() ? name_of(c.finder) : "words"},
            {"anchor_words", ""},  // the front end names where the words came from
            {"projection_dim", std::to_string(c.projection_dim)},
            {"anchor_min_df", std::to_string(c.anchor_min_df)},
            {"solver", name_of(c.solver)},
            {"solver_iterations", std::to_string(c.solver_iterations)},
            {"solver_tolerance", std::to_string(c.solver_tolerance)},
            {"admm_stop", name_of(c.admm_stop)},
            {"recover_a", name_of(c.recover_a)},
            {"alpha", c.alpha ? "yes" : "no"}};
}

}  // namespace jsmf::fit
