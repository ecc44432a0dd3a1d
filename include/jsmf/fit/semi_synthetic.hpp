// SPDX-License-Identifier: MIT
// A semi-synthetic corpus drawn from a learned model (the Arora et al. protocol): the
// model's B with a topic prior fitted to its A. `jsmf synth --from` is this call plus files.
#pragma once

#include <optional>
#include <string>

#include "jsmf/core/types.hpp"
#include "jsmf/fit/report.hpp"
#include "jsmf/synth/synth.hpp"

namespace jsmf::fit {

/// Which model of a model file, and how many documents of what length (the rest of the
/// drawing — the prior's kind, the seed, the Monte Carlo samples — is synth::SynthOptions').
struct SemiSyntheticOptions {
    int topics = 0;                          ///< which K of the file (0: its first)
    std::optional<Index> num_docs;           ///< unset: M, the documents that built the model's C
    std::optional<double> mean_doc_length;   ///< unset: their tokens per document
};

/// Local. Reads the model file `path` (jsmf fit's), picks its model with K = from.topics,
/// fits options.prior to its A — dirichlet: α by RECOVER-ALPHA (practical-jsmf Alg. 4);
/// logistic_normal: by moment matching (synth::fit_logistic_normal, options.seed) — and
/// draws the corpus from its B and anchors (synth::generate_from_model). Sets `options` to
/// what was drawn (num_docs, mean_doc_length, num_words, num_topics, anchors_per_topic 1),
/// for the truth file. Reports the prior's fit, with a warning when α₀ was clamped or the
/// logistic normal reproduces A only to more than 10 %. Throws InputError for a file
/// without that K or with a bad A or B; OptionError for options.groups (planted topics
/// only).
synth::SynthCorpus semi_synthetic(const std::string& path, const SemiSyntheticOptions& from,
                                  synth::SynthOptions& options, const Report& report = {});

}  // namespace jsmf::fit
