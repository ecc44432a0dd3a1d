// SPDX-License-Identifier: MIT
// The flags shared by the subcommands and how they become the library's options.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "jsmf/fit/stages.hpp"

namespace jsmf::app {

using Options = std::vector<std::pair<std::string, std::string>>;

/// Local. A command-line error the CLI finds itself (an option's value that parsed but
/// is out of range, options that exclude each other), in its words with the flags typed
/// out (any "{" in user text kept): an OptionError, so exit code usage (1), as CLI11's.
inline OptionError usage_error(const std::string& text) { return OptionError(OptionError::quote(text)); }

/// Local. Binds `flag` to a library enum: CLI11 checks the value against the enum's names
/// (its one table, core/names.hpp), the field takes the value, and the help shows the
/// field's default by name. With `auto_means`, "auto" is a choice too (the default shown)
/// and means that value.
template <class E>
CLI::Option* add_choice(CLI::App* sub, const std::string& flag, E& field, const std::string& help,
                        std::optional<typename std::common_type<E>::type> auto_means = std::nullopt) {
    std::vector<std::string> names = choices<E>();
    if (auto_means) names.insert(names.begin(), "auto");
    return sub
        ->add_option_function<std::string>(
            flag, [&field, auto_means](const std::string& v) { field = v == "auto" && auto_means ? *auto_means : *find_name<E>(v); },
            help)
        ->check(CLI::IsMember(names))
        ->default_str(auto_means ? std::string("auto") : name_of(field));
}
/// Local. The same for a setting the library decides when it is unset: "auto" (the
/// default) leaves it unset.
template <class E>
CLI::Option* add_choice(CLI::App* sub, const std::string& flag, std::optional<E>& field, const std::string& help) {
    std::vector<std::string> names = choices<E>();
    names.insert(names.begin(), "auto");
    return sub
        ->add_option_function<std::string>(
            flag, [&field](const std::string& v) { field = v == "auto" ? std::nullopt : find_name<E>(v); }, help)
        ->check(CLI::IsMember(names))
        ->default_str(field ? name_of(*field) : std::string("auto"));
}

/// Stage 0–1: the corpus and the co-occurrence flags (options.exchange and .estimator
/// bound as the library's enums).
struct CoocSettings {
    std::vector<std::string> corpus;
    std::string vocab;
    cooc::CoocOptions options;
    double buffer_mb = 32;
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
/// Stage 2: the rectification flags, bound to the library's options (unset optionals and
/// "auto" are decided by fit::resolve), and --converge, another spelling of --stop
/// fixed-point.
struct RectifySettings {
    fit::RectifyOptions options;
    bool converge = false;
};
/// Adds `method_flag` (the method; none when empty), --iterations, --tolerance, --eigensolver,
/// --permutations, --seed and --progress-seconds.
void add_rectify_options(CLI::App* sub, RectifySettings& s, const std::string& method_flag);
/// Local. The library's options for these flags (every "auto" and unset value left for
/// fit::resolve to decide); OptionError for --converge against another --stop and for
/// --iterations with a stop rule it does not count.
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
