// SPDX-License-Identifier: MIT
// Stages 3–5 shared by fit and sweep: anchors, B, A (and α) on a rectified C.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "app/stages.hpp"
#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/io/result_file.hpp"
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
/// Local. Checks the settings' ranges (throws InputError).
void check_model_settings(const ModelSettings& s);
/// Local. The provenance entries of the settings (`words_given`: anchors came from words).
Options model_provenance(const ModelSettings& s, bool words_given);

/// Local. "10" or "10,25,50" → {10, 25, 50}; InputError for anything else, K < 2 or repeats.
std::vector<int> parse_topic_list(const std::string& text, const std::string& flag = "--topics");
/// Local. "a,b,c" → {"a", "b", "c"}, each checked against `allowed`; InputError otherwise.
std::vector<std::string> parse_name_list(const std::string& text, const std::string& flag,
                                         const std::vector<std::string>& allowed);

/// Collective on `world`. Rank 0 reads the anchor-word file and maps it to word ids;
/// every rank gets the ids.
std::vector<Index> read_anchor_words(const mpi::Comm& world, const std::string& path,
                                     const std::vector<std::string>& vocab);

/// Collective on C.grid(). Anchors, B, A (and α) on the rectified C; records `rectification`
/// and the stage times (anchors, recover_B, recover_A) in the model. With an AnchorFree
/// --method, fit_anchorfree instead.
io::FittedModel fit_rectified(const dist::DistMatrix& C, int K, const ModelSettings& s,
                              const std::vector<Index>& given_anchors, const io::RectificationRecord& rectification,
                              const RectifySettings& rectify);

/// Collective on C.grid(). AnchorFree on C (Fu et al. §4): B̃ = UΛ^{1/2} from the K top
/// eigenpairs, M by the LP or PDS algorithm, C* = B̃M, E* (Alg. 1 line 7). The model's B is
/// max(C*, 0) with unit columns (C*'s negative residue, at the solver's tolerance, is
/// recorded), A = E*/ΣE* when E* is nonnegative to rounding (a joint distribution up to
/// scale), else E* itself (with a warning); B̆ by Bayes' rule with the topic marginals
/// A1, and each topic's representative word argmax_i B̆(k, i) in place of an anchor (so
/// show, the metrics and infer work unchanged). Stage times: square_root, anchorfree, finish.
io::FittedModel fit_anchorfree(const dist::DistMatrix& C, int K, const ModelSettings& s,
                               const io::RectificationRecord& rectification, const RectifySettings& rectify);

/// Rank 0 logs what was found (anchors, solver convergence, α).
void log_model(const io::FittedModel& m, const std::vector<std::string>& vocab);

}  // namespace jsmf::app
