// SPDX-License-Identifier: MIT
// The flags of stages 3–4 shared by fit and sweep.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "app/stages.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::app {

/// How B, A and α are recovered (everything after rectification): the flags bound to the
/// library's options, and the file of anchor words (read once the vocabulary is known).
struct ModelSettings {
    fit::ModelOptions options;
    std::string anchor_words;    ///< a file of anchor words, one per line
};
/// Adds --method, the AnchorFree options (--lp-*, --pds-*), --anchors, --projection-dim, --anchor-words, --solver-iterations,
/// --solver-tolerance, --admm-stop, --recover-a and --alpha (not --solver: fit takes one,
/// sweep a list).
void add_model_options(CLI::App* sub, ModelSettings& s);
/// The --solver help text.
extern const char* const kSolverHelp;
/// Local. Checks the settings' ranges and combinations (throws OptionError naming flags).
void check_model_settings(const ModelSettings& s);
/// Local. "10" or "10,25,50" → {10, 25, 50}; InputError for anything else, K < 2 or repeats.
std::vector<int> parse_topic_list(const std::string& text, const std::string& flag = "--topics");
/// Local. "a,b,c" → {"a", "b", "c"}, each checked against `allowed`; InputError otherwise.
std::vector<std::string> parse_name_list(const std::string& text, const std::string& flag,
                                         const std::vector<std::string>& allowed);

}  // namespace jsmf::app
