// SPDX-License-Identifier: MIT
// The planted truth of a synthetic corpus: B, A and the anchors, beside the corpus.
#pragma once

#include <string>

#include "jsmf/io/provenance.hpp"
#include "jsmf/synth/synth.hpp"

namespace jsmf::io {

/// Local (one process). Schema (format_version 1):
///   /               attrs format="jsmf", kind="synth_truth", format_version, ... options
///   /vocab          N strings
///   /model/B        N×K float64, p(word | topic)
///   /model/A        K×K float64, E[w wᵀ] of the prior (exact for Dirichlet, Monte Carlo
///                   for logistic-normal: attr monte_carlo_samples)
///   /model/A_empirical K×K float64, (1/D) Σ_m w_m w_mᵀ of the drawn documents
///   /model/anchors  K×a int64 word ids (0-based)
///   /theta          D×K float64: row m is document m + 1's planted proportions w_m
/// Written to "<path>.partial" and renamed when complete.
void write_synth_truth(const std::string& path, const synth::SynthCorpus& corpus, const synth::SynthOptions& options,
                       const Provenance& provenance);

/// Local. Reads B, A, A_empirical and anchors back (for tests and evaluation).
synth::SynthCorpus read_synth_truth(const std::string& path);

}  // namespace jsmf::io
