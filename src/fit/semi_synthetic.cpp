// SPDX-License-Identifier: MIT
// A semi-synthetic corpus from a model file: the model chosen, its A's prior fitted, the draw.
#include "jsmf/fit/semi_synthetic.hpp"

#include <fmt/core.h>

#include "jsmf/core/error.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/recover/recover.hpp"

namespace jsmf::fit {

synth::SynthCorpus semi_synthetic(const std::string& path, const SemiSyntheticOptions& from,
                                  synth::SynthOptions& options, const Report& report) {
    if (options.groups > 0) throw OptionError("{groups} plants its own topics: not with {from}");
    const io::ModelFile file = io::read_model_file(path, io::ModelParts::without_factor);
    const model::Model& chosen = model::choose_model(file.models, from.topics, path);
    const bool dirichlet = options.prior == synth::TopicPrior::dirichlet;
    synth::ModelPrior prior;
    if (dirichlet) {
        const recover::AlphaResult alpha = recover::recover_alpha(chosen.A);
        if (alpha.at_bound)
            say(report, Level::warning,
                fmt::format("synth: the Dirichlet fitted to A was clamped (alpha0 = {:.3g})", alpha.alpha0));
        prior.alpha = alpha.alpha;
        say(report, Level::info,
            fmt::format("synth: Dirichlet fitted to A (RECOVER-ALPHA): alpha0 = {:.4g}, fit residual {:.3g}",
                        alpha.alpha0, alpha.residual));
    } else {
        prior.kind = synth::TopicPrior::logistic_normal;
        prior.logistic_normal = synth::fit_logistic_normal(chosen.A, options.seed);
        say(report, Level::info,
            fmt::format("synth: logistic normal fitted to A: relative error of E[w w'] {:.3g}",
                        prior.logistic_normal.relative_error));
        if (prior.logistic_normal.relative_error > 0.1)
            say(report, Level::warning,
                fmt::format("synth: the logistic normal reproduces A only to {:.0f} % (A may not be a second moment, "
                            "e.g. negative entries); the corpus follows the fitted prior, and the truth file its A",
                            100 * prior.logistic_normal.relative_error));
    }
    if (from.num_docs) options.num_docs = *from.num_docs;
    else if (file.num_docs > 0) options.num_docs = file.num_docs;
    if (from.mean_doc_length) options.mean_doc_length = *from.mean_doc_length;
    else if (file.num_docs > 0)
        options.mean_doc_length = static_cast<double>(file.num_tokens) / static_cast<double>(file.num_docs);
    options.num_words = static_cast<Index>(file.vocab.size());
    options.num_topics = chosen.num_topics;
    options.anchors_per_topic = 1;
    say(report, Level::info,
        fmt::format("synth: from {} (K = {}, prior {}): {} documents of mean length {:.1f}", path, chosen.num_topics,
                    dirichlet ? "dirichlet" : "logistic-normal", options.num_docs, options.mean_doc_length));
    return synth::generate_from_model(chosen.B, prior, chosen.anchors, file.vocab, options.num_docs,
                                      options.mean_doc_length, options.seed, options.monte_carlo_samples);
}

}  // namespace jsmf::fit
