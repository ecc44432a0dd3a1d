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

/// How B, A and α are recovered (everything after rectification).
struct ModelSettings {
    /// anchors: rectified anchor words (the default); anchorfree-lp | anchorfree-pds:
    /// AnchorFree's minimum-determinant factorization of the (rectified) C.
    std::string method = "anchors";
    std::string anchors = "qr";  ///< qr = spa (Alg. 2) | fastanchor (Arora et al.) | snpa | xray
    anchorfree::LpOptions lp;
    anchorfree::PdsOptions pds;
    int projection_dim = 1000;
    std::string anchor_words;    ///< a file of anchor words, one per line
    std::string solver = "active-set";
    int solver_iterations = 500;
    double solver_tolerance = 1e-5;
    std::string admm_stop = "step";  ///< step (the authors' rule) | gap
    std::string recover_a = "diagonal";
    bool alpha = false;
};
/// Adds --method, the AnchorFree options (--lp-*, --pds-*), --anchors, --projection-dim, --anchor-words, --solver-iterations,
/// --solver-tolerance, --admm-stop, --recover-a and --alpha (not --solver: fit takes one,
/// sweep a list).
void add_model_options(CLI::App* sub, ModelSettings& s);
/// The --solver help text and its allowed values.
extern const char* const kSolverHelp;
const std::vector<std::string>& solver_names();
/// Local. The library's options for these flags, with the anchor words' ids (empty: found).
fit::ModelOptions to_options(const ModelSettings& s, const std::vector<Index>& anchor_words);
/// Local. Checks the settings' ranges and combinations (throws InputError naming flags).
void check_model_settings(const ModelSettings& s);
/// Local. The provenance entries of the options; `anchor_file` where the anchor words came from.
Options model_provenance(const fit::ModelOptions& options, const std::string& anchor_file);

/// Local. "10" or "10,25,50" → {10, 25, 50}; InputError for anything else, K < 2 or repeats.
std::vector<int> parse_topic_list(const std::string& text, const std::string& flag = "--topics");
/// Local. "a,b,c" → {"a", "b", "c"}, each checked against `allowed`; InputError otherwise.
std::vector<std::string> parse_name_list(const std::string& text, const std::string& flag,
                                         const std::vector<std::string>& allowed);

/// Collective on `world`. Rank 0 reads the anchor-word file and maps it to word ids;
/// every rank gets the ids.
std::vector<Index> read_anchor_words(const mpi::Comm& world, const std::string& path,
                                     const std::vector<std::string>& vocab);

}  // namespace jsmf::app
