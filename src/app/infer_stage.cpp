// SPDX-License-Identifier: MIT
#include "app/infer_stage.hpp"

#include <cmath>
#include <cstdio>

#include "jsmf/core/log.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/io/theta_file.hpp"

namespace jsmf::app {

InferSummary run_infer_stage(const mpi::Comm& world, const infer::InferModel& model, const infer::CorpusInput& input,
                             const infer::InferOptions& options, infer::Prior prior,
                             const std::string& out, const std::string& command_line) {
    Stopwatch clock;
    const infer::CorpusTopics result = infer::infer_corpus(world, model, input, options);
    const infer::CorpusSummary& s = result.summary;
    io::write_theta_file(
        world, out, s.documents, model.topics, result.local,
        {{"model", model.file}, {"prior", name_of(prior)}, {"command_line", command_line},
         {"method", "EM on the mixture weights, B fixed, from the uniform theta"}},
        {{"tolerance", options.tolerance}, {"max_iterations", static_cast<double>(options.max_iterations)},
         {"prior_alpha_below_one", static_cast<double>((options.alpha.array() < 1).count())},
         {"documents", static_cast<double>(s.documents)}, {"inferred", static_cast<double>(s.inferred)},
         {"empty", static_cast<double>(s.empty)}, {"tokens", static_cast<double>(s.tokens)},
         {"oov_tokens", static_cast<double>(s.oov_tokens)}, {"not_converged", static_cast<double>(s.not_converged)},
         {"per_word_log_likelihood", s.per_word()}, {"perplexity", std::exp(-s.per_word())}},
        result.doc_ids, options.alpha);
    return InferSummary{s, clock.seconds()};
}

void report_infer(const mpi::Comm& world, const InferSummary& summary, const std::string& out) {
    if (!world.is_root()) return;
    const infer::CorpusSummary& s = summary.totals;
    log::info("infer: {} documents ({} with known words, {} without), {} tokens ({} out of the model's vocabulary) in "
              "{:.2f} s; {} not converged",
              s.documents, s.inferred, s.empty, s.tokens, s.oov_tokens, summary.seconds, s.not_converged);
    log::info("infer: per-word log-likelihood {:.6f} (perplexity {:.2f}); wrote {}", s.per_word(), std::exp(-s.per_word()),
              out);
    std::printf("jsmf-infer ranks=%d threads=%d documents=%lld inferred=%lld empty=%lld tokens=%lld oov_tokens=%lld "
                "not_converged=%lld per_word_log_likelihood=%.9g perplexity=%.6g seconds=%.6f "
                "documents_per_second_per_rank=%.1f tokens_per_second_per_rank=%.0f\n",
                world.size(), distmat::threads(), static_cast<long long>(s.documents), static_cast<long long>(s.inferred),
                static_cast<long long>(s.empty), static_cast<long long>(s.tokens), static_cast<long long>(s.oov_tokens),
                static_cast<long long>(s.not_converged), s.per_word(), std::exp(-s.per_word()), summary.seconds,
                s.inferred / summary.seconds / world.size(), s.tokens / summary.seconds / world.size());
    std::fflush(stdout);
}

}  // namespace jsmf::app
