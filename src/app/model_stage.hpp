// SPDX-License-Identifier: MIT
// The flags of stages 3–4 shared by fit and sweep.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "app/stages.hpp"
#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::app {

/// How B, A and α are recovered (everything after rectification), as the flags give them;
/// the defaults are the library's (fit::ModelOptions).
struct ModelSettings {
    /// anchors: rectified anchor words (the default); anchorfree-lp | anchorfree-pds:
    /// AnchorFree's minimum-determinant factorization of the (rectified) C.
    std::string method = name_of(fit::ModelOptions{}.method);
    std::string anchors = name_of(fit::ModelOptions{}.finder);  ///< qr = spa (Alg. 2) | fastanchor (Arora et al.) | snpa | xray
    anchorfree::LpOptions lp;
    anchorfree::PdsOptions pds;
    int projection_dim = fit::ModelOptions{}.projection_dim;
    std::int64_t anchor_min_df = fit::ModelOptions{}.anchor_min_df;
    std::string anchor_words;    ///< a file of anchor words, one per line
    std::string solver = name_of(fit::ModelOptions{}.solver);
    int solver_iterations = fit::ModelOptions{}.solver_iterations;
    double solver_tolerance = fit::ModelOptions{}.solver_tolerance;
    std::string admm_stop = name_of(fit::ModelOptions{}.admm_stop);  ///< step (the authors' rule) | gap
    std::string recover_a = name_of(fit::ModelOptions{}.recover_a);
    bool alpha = fit::ModelOptions{}.alpha;
};
/// Adds --method, the AnchorFree options (--lp-*, --pds-*), --anchors, --projection-dim, --anchor-words, --solver-iterations,
/// --solver-tolerance, --admm-stop, --recover-a and --alpha (not --solver: fit takes one,
/// sweep a list).
void add_model_options(CLI::App* sub, ModelSettings& s);
/// The --solver help text.
extern const char* const kSolverHelp;
/// Local. The library's options for these flags, with the anchor words' ids (empty: found).
fit::ModelOptions to_options(const ModelSettings& s, const std::vector<Index>& anchor_words);
/// Local. Checks the settings' ranges and combinations (throws InputError naming flags).
void check_model_settings(const ModelSettings& s);
/// Local. "10" or "10,25,50" → {10, 25, 50}; InputError for anything else, K < 2 or repeats.
std::vector<int> parse_topic_list(const std::string& text, const std::string& flag = "--topics");
/// Local. "a,b,c" → {"a", "b", "c"}, each checked against `allowed`; InputError otherwise.
std::vector<std::string> parse_name_list(const std::string& text, const std::string& flag,
                                         const std::vector<std::string>& allowed);

}  // namespace jsmf::app
