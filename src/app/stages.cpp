// SPDX-License-Identifier: MIT
// The flags of the co-occurrence and rectification stages, and how they become the library's options.
#include "app/stages.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstdio>

#include "jsmf/core/log.hpp"
#include "jsmf/fit/pipeline_choice.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::app {

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
    add_choice(sub, "--estimator", c.options.estimator,
               "unbiased: Eq. 5 (NIPS'15) from word counts; tfidf: the second moment of the documents' tf-idf "
               "vectors (h/n)·ln(M/df), scaled to sum 1, as AnchorFree (Fu et al. 2019, §6.1) uses");
    sub->add_option("--buffer-mb", c.buffer_mb, "Per-rank exchange buffer in MiB (bounds memory)")->capture_default_str();
    add_choice(sub, "--exchange", c.options.exchange, "docs: ship document fragments (fast); pairs: ship (i,j,v) triplets");
}

fit::CorpusSource corpus_source(const CoocSettings& c, int block_size) {
    fit::CorpusSource source;
    source.files = c.corpus;
    source.vocab = c.vocab;
    source.options = c.options;
    source.options.block_size = block_size;
    if (!(c.buffer_mb > 0)) throw usage_error("--buffer-mb must be positive");
    source.options.buffer_bytes = static_cast<std::size_t>(std::max(1.0, c.buffer_mb * (1 << 20)));
    return source;
}

void check_cooc_source(const CoocSettings& c, const std::string& cooc_file, bool corpus_with_file) {
    if (cooc_file.empty()) {
        if (c.corpus.empty() || c.vocab.empty())
            throw usage_error("give --corpus and --vocab, or --cooc (a file from jsmf cooc)");
        return;
    }
    if (!c.vocab.empty())
        throw usage_error("give either --corpus and --vocab, or --cooc (with --cooc, --vocab is the file's; --corpus "
                         "alone may come too, for coherence's document counts)");
    if (!c.corpus.empty() && !corpus_with_file)
        throw usage_error("give either --corpus and --vocab, or --cooc (a file from jsmf cooc)");
}

void add_rectify_options(CLI::App* sub, RectifySettings& settings, const std::string& method_flag) {
    fit::RectifyOptions& c = settings.options;
    if (!method_flag.empty())
        add_choice(sub, method_flag, c.method,
                   "ap: alternating projection; dr: Douglas-Rachford; dp: Dykstra; dc: diagonal completion; "
                   "none: Baseline (no rectification)");
    add_choice(sub, "--stop", c.stop,
                    "When AP, DR, DP stop. quality (default): once the topics' measures (anchors, B, specificity, "
                    "dissimilarity) have settled; fixed-point: once the topics stopped moving (anchors equal, no topic "
                    "of B moved 1e-3 in L1 over the last 6 checks); iterations: the papers' plain AP, exact eigensolves, "
                    "--iterations (150) or until --tolerance. auto: iterations when --iterations or --tolerance is "
                    "given, else quality");
    sub->add_flag("--converge", settings.converge, "The same as --stop fixed-point");
    sub->add_option("--iterations", c.iterations,
                    "AP, DR, DP: run exactly this many iterations of the papers' plain method (--stop iterations, "
                    "default 150 as the papers; fewer only with --tolerance). To cap --stop quality or fixed-point, "
                    "give --max-iterations");
    sub->add_option("--max-iterations", c.max_iterations,
                    "AP, DR, DP with --stop quality or fixed-point: stop after this many iterations at most (default "
                    "1000)");
    sub->add_option("--tolerance", c.tolerance,
                    "Stop AP, DR, DP when the relative change is below this (0: run every iteration); implies "
                    "--stop iterations");
    add_choice(sub, "--acceleration", c.acceleration,
                    "AP: anderson (on the rank-K factor, safeguarded, from --anderson-below on) or none (auto). "
                    "Anderson reaches a fixed point of AP in far fewer iterations, but AP's fixed points form a "
                    "continuum and it lands on another one than plain AP's path leads to (see jsmf rectify --help)",
               fit::Acceleration::none);
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
    add_choice(sub, "--precision", c.precision,
                    "AP: single holds the iterate in float32 and does its products in single precision (half the "
                    "memory traffic per pass; eigensolves to 1e-6 at best); double (default) reproduces the papers");
    sub->add_option("--check-every", c.check_every,
                    "Iterations between the stopping rule's looks at the topics (anchors and B)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    add_choice(sub, "--eigensolver", c.eigensolver,
               "subspace: Chebyshev-filtered subspace iteration (fast); direct: ScaLAPACK PDSYEVR (slow, O(N^3))");
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
    sub->add_option("--seed", c.seed,
                    "Seed of DC's permutations, of FastAnchorWords' projection and of the compressed pipeline's "
                    "range finder (whose result depends on it only to the solver's tolerance, 1e-8 of the largest eigenvalue by default)")
        ->capture_default_str();
    sub->add_option("--progress-seconds", c.progress_seconds, "At most one progress line per this many seconds")
        ->capture_default_str();
}

fit::RectifyOptions to_options(const RectifySettings& s) {
    fit::RectifyOptions o = s.options;
    if (s.converge) {
        if (o.stop && *o.stop != rectify::StopRule::fixed_point)
            throw usage_error("--converge and --stop " + name_of(*o.stop) + " exclude each other");
        o.stop = rectify::StopRule::fixed_point;
    }
    if (o.iterations && o.stop && *o.stop != rectify::StopRule::iterations)
        throw usage_error("--iterations is a count of the papers' plain iterations (--stop iterations), not a cap of "
                         "--stop " + name_of(*o.stop) + ": give --max-iterations for that");
    return o;
}

std::string flag_of(const std::string& option, const std::string& rectifier_flag) {
    if (option == "rectify") return rectifier_flag;
    if (option == "finder") return "--anchors";
    std::string flag = "--" + option;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
}

std::vector<std::string> given_settings(const CLI::App& sub) {
    std::vector<std::string> names;
    for (const CLI::Option* option : sub.get_options()) {
        if (option->count() == 0 || option->get_lnames().empty()) continue;
        std::string name = option->get_lnames().front();
        std::replace(name.begin(), name.end(), '-', '_');
        names.push_back(name == "anchors" ? "finder" : name);
    }
    return names;
}

fit::Report log_report() {
    return [](fit::Level level, const std::string& line) {
        if (level == fit::Level::warning)
            log::warn("{}", line);
        else
            log::info("{}", line);
    };
}

}  // namespace jsmf::app
