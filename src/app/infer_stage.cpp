// SPDX-License-Identifier: MIT
#include "app/infer_stage.hpp"

#include <cmath>
#include <cstdio>

#include "jsmf/core/log.hpp"

namespace jsmf::app {

void report_infer(const mpi::Comm& world, const fit::InferSummary& summary, const std::string& out) {
    if (!world.is_root()) return;
    const infer::CorpusSummary& s = summary.totals;
    log::info("infer: {} documents ({} with known words, {} without), {} tokens ({} out of the model's vocabulary) in "
              "{:.2f} s; {} not converged",
              s.documents, s.inferred, s.empty, s.tokens, s.oov_tokens, summary.seconds, s.not_converged);
    log::info("infer: per-word log-likelihood {:.6f} (perplexity {:.2f}); wrote {}", s.per_word(), std::exp(-s.per_word()),
              out);
    log::info("infer: B {}; each rank held the rows of its documents' words, at most {} of {}; peak memory "
              "{:.1f} MiB per rank (the largest rank's)",
              summary.B_by_rows ? "by rows, each rank its block" : "on rank 0", summary.model_rows, summary.words,
              summary.peak_bytes / (1 << 20));
    std::printf("jsmf-infer ranks=%d threads=%d documents=%lld inferred=%lld empty=%lld tokens=%lld oov_tokens=%lld "
                "not_converged=%lld per_word_log_likelihood=%.9g perplexity=%.6g seconds=%.6f "
                "documents_per_second_per_rank=%.1f tokens_per_second_per_rank=%.0f model_rows=%lld peak_rss_bytes=%.0f\n",
                world.size(), summary.threads, static_cast<long long>(s.documents), static_cast<long long>(s.inferred),
                static_cast<long long>(s.empty), static_cast<long long>(s.tokens), static_cast<long long>(s.oov_tokens),
                static_cast<long long>(s.not_converged), s.per_word(), std::exp(-s.per_word()), summary.seconds,
                s.inferred / summary.seconds / world.size(), s.tokens / summary.seconds / world.size(),
                static_cast<long long>(summary.model_rows), summary.peak_bytes);
    std::fflush(stdout);
}

}  // namespace jsmf::app
