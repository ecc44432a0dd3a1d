// SPDX-License-Identifier: MIT
// The flags shared by the subcommands and how they become the library's options.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jsmf/fit/stages.hpp"

namespace jsmf::app {

using Options = std::vector<std::pair<std::string, std::string>>;

/// Local. A command-line error the CLI finds itself (an option's value that parsed but
/// is out of range, options that exclude each other), in its words with the flags typed
/// out (any "{" in user text kept): an OptionError, so exit code usage (1), as CLI11's.
inline OptionError usage_error(const std::string& text) { return OptionError(OptionError::quote(text)); }

/// Stage 0–1: the corpus and the co-occurrence flags.
struct CoocSettings {
    std::vector<std::string> corpus;
    std::string vocab;
    cooc::CoocOptions options;
    double buffer_mb = 32;
    std::string exchange = "docs";
    std::string estimator = "unbiased";   ///< unbiased (Eq. 5) | tfidf (AnchorFree §6.1)
};
/// Adds --corpus, --vocab (required when `required`), --min-tokens, --min-distinct,
/// --buffer-mb and --exchange.
void add_cooc_options(CLI::App* sub, CoocSettings& s, bool required);

/// Local. The library's corpus source for these flags; InputError for a bad --buffer-mb.
fit::CorpusSource corpus_source(const CoocSettings& s, int block_size);
/// Local. Checks that exactly one source of C is given: --corpus with --vocab, or a
/// co-occurrence file (then --corpus alone may come too: `corpus_with_file` says whether
/// that is allowed). Throws InputError.
void check_cooc_source(const CoocSettings& s, const std::string& cooc_file, bool corpus_with_file);
/// Stage 2: rectification flags; unset (or "auto") is "decided by the stop rule", as in
/// fit::RectifyOptions, whose defaults these are, so there is one place for them.
struct RectifySettings {
    std::string method = name_of(fit::RectifyOptions{}.method);
    /// When AP, DR, DP stop: iterations (the papers' plain runs: --iterations, or until the
    /// change is below --tolerance), quality (the default: the topics' measures have
    /// settled), fixed-point (the topics stopped moving; --converge); auto: iterations when
    /// --tolerance is given, else quality. resolve() turns every auto into a value.
    std::string stop = "auto";
    std::optional<int> iterations;      ///< the count of --stop iterations (given alone, it selects them); unset: 150
    std::optional<int> max_iterations;  ///< the cap of --stop quality / fixed-point; unset: 1000
    std::optional<double> tolerance;    ///< 0: run every iteration
    bool converge = false;       ///< --converge, the same as --stop fixed-point
    std::optional<double> relaxation;   ///< AP's over-relaxation ω; unset: 1.9 with --stop quality/fixed-point, 1 otherwise
    std::string acceleration = "auto";  ///< anderson | none; auto: none
    int anderson_depth = fit::RectifyOptions{}.anderson_depth;
    double anderson_below = fit::RectifyOptions{}.anderson_below;       ///< Anderson starts after the change falls to this
    std::optional<double> eig_tolerance_factor;  ///< unset: 0.1 with --stop quality/fixed-point, 0 (exact solves) otherwise
    int check_every = fit::RectifyOptions{}.check_every;        ///< iterations between the stopping rule's looks at the topics
    std::string precision = name_of(fit::RectifyOptions{}.precision);  ///< AP: double | single (the iterate and its products in float32)
    std::string eigensolver = name_of(fit::RectifyOptions{}.eigensolver);
    int eig_check_steps = fit::RectifyOptions{}.eig_check_steps;   ///< Lanczos steps of the missed-eigenvalue check (0: off)
    int eig_check_every = fit::RectifyOptions{}.eig_check_every;   ///< AP, DR, DP: check every this many iterations (see ProjectionOptions)
    int permutations = fit::RectifyOptions{}.permutations;
    Seed seed = fit::RectifyOptions{}.seed;
    double progress_seconds = fit::RectifyOptions{}.progress_seconds;
};
/// Adds `method_flag` (the method; none when empty), --iterations, --tolerance, --eigensolver,
/// --permutations, --seed and --progress-seconds.
void add_rectify_options(CLI::App* sub, RectifySettings& s, const std::string& method_flag);
/// Local. The library's options for these flags (every "auto" and unset value left for
/// fit::resolve to decide); InputError for --converge against another --stop, OptionError
/// (library names) for bad values.
fit::RectifyOptions to_options(const RectifySettings& s);
/// Local. The flag that sets the library option `option` ("relaxation" → "--relaxation";
/// the rectifier is --rectify in fit and sweep, --method in jsmf rectify). main() makes it
/// OptionError's namer, so the library's errors reach users with the flags they typed.
std::string flag_of(const std::string& option, const std::string& rectifier_flag = "--rectify");
/// Local; after parsing. The settings the user gave to `sub`, as the library names them
/// (flag_of's inverse: "--eig-check-steps" → "eig_check_steps", "--anchors" → "finder").
std::vector<std::string> given_settings(const CLI::App& sub);
/// Local. A Report that logs the library's lines (rank 0 prints).
fit::Report log_report();
using fit::mib;

}  // namespace jsmf::app
