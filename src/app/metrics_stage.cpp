// SPDX-License-Identifier: MIT
// Evaluation: the metrics of each model, from the distributed C and one pass over the corpus.
#include "app/metrics_stage.hpp"

#include <cmath>
#include <cstdio>

#include "jsmf/core/log.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/eval/codoc.hpp"
#include "jsmf/eval/dist_metrics.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::app {

CountingCorpus counting_corpus(const mpi::Comm& world, const CoocSettings& input, const std::string& cooc_file,
                               const io::CoocFileInfo& info) {
    if (!cooc_file.empty()) return counting_corpus_of_file(world, cooc_file, input.corpus, info.stats.doc_freq);
    CountingCorpus corpus;
    corpus.files = input.corpus;
    corpus.filter = input.options;
    corpus.doc_freq = info.stats.doc_freq;
    return corpus;
}

CountingCorpus counting_corpus_of_file(const mpi::Comm& world, const std::string& cooc_path,
                                       const std::vector<std::string>& files,
                                       const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>& doc_freq) {
    CountingCorpus corpus;
    corpus.files = files;
    corpus.doc_freq = doc_freq;
    if (files.empty()) return corpus;
    std::int64_t filter[2] = {corpus.filter.min_tokens, corpus.filter.min_distinct};
    mpi::check_on_root(world, "setup", [&] {
        for (const auto& [name, value] : io::read_root_options(cooc_path, {"min_tokens", "min_distinct"}))
            filter[name == "min_tokens" ? 0 : 1] = std::stoll(value);
    });
    mpi::broadcast(world, filter, 2, 0);
    corpus.filter.min_tokens = filter[0];
    corpus.filter.min_distinct = filter[1];
    return corpus;
}

void measure_model(io::FittedModel& m, const dist::DistMatrix& C_used, const dist::DistMatrix* C_original) {
    Stopwatch clock;
    const eval::ModelView view{m.B, m.B_breve, m.A, m.unigram, m.anchors};
    const eval::Metric* coherence = m.metrics.find("coherence");
    const eval::Metric kept = coherence ? *coherence : eval::Metric{};
    m.metrics = eval::model_metrics(view);
    if (coherence) m.metrics.metrics.push_back(kept);
    eval::add_matrix_metrics(m.metrics, C_used, view, "");
    m.projection = eval::project_rows_2d(C_used);
    if (C_original) {
        eval::add_matrix_metrics(m.metrics, *C_original, view, "_original");
        m.projection_original = eval::project_rows_2d(*C_original);
    }
    eval::sort_metrics(m.metrics);
    m.times.add("metrics", clock.seconds());
}

void measure_coherence(const mpi::Comm& world, const std::vector<io::FittedModel*>& models,
                       const CountingCorpus& corpus, Index num_words) {
    if (corpus.files.empty()) {
        for (auto* m : models)
            m->metrics_note = "coherence not measured: it needs the corpus that built C (--corpus)";
        return;
    }
    Stopwatch clock;
    std::vector<eval::WordPair> pairs;
    std::vector<std::size_t> first_pair;  // model k's pairs start at first_pair[k]
    for (const auto* m : models) {
        first_pair.push_back(pairs.size());
        const auto own = eval::coherence_pairs(eval::top_words(m->B));
        pairs.insert(pairs.end(), own.begin(), own.end());
    }
    first_pair.push_back(pairs.size());

    const std::vector<corpus::UciFile> files = corpus::inspect_uci_files(world, corpus.files);
    corpus::UciReader reader(files, corpus::plan_uci_pieces(files, world.rank(), world.size()));
    const eval::CodocCounts counts =
        eval::count_codocuments(world, reader, num_words, corpus.filter, pairs, /*root_only=*/false);
    corpus::check_uci_totals(world, reader);
    mpi::run_local_phase(world, "codoc", [&] {
        if (static_cast<Index>(counts.d1.size()) != corpus.doc_freq.size())
            throw InputError(corpus.files.front(), "the corpus has " + std::to_string(counts.d1.size()) +
                                                       " words, C has " + std::to_string(corpus.doc_freq.size()));
        for (Index i = 0; i < corpus.doc_freq.size(); ++i)
            if (counts.d1[static_cast<std::size_t>(i)] != corpus.doc_freq(i))
                throw InputError(corpus.files.front(),
                                 "is not the corpus that built C, or not with the same document filter: word " +
                                     std::to_string(i + 1) + " is in " + std::to_string(counts.d1[static_cast<std::size_t>(i)]) +
                                     " of its documents but in " + std::to_string(corpus.doc_freq(i)) +
                                     " of C's (check --corpus, --min-tokens, --min-distinct)");
    });
    const double seconds = clock.seconds();
    for (std::size_t k = 0; k < models.size(); ++k) {
        auto* m = models[k];
        const std::vector<std::int64_t> d2(counts.d2.begin() + static_cast<std::ptrdiff_t>(first_pair[k]),
                                           counts.d2.begin() + static_cast<std::ptrdiff_t>(first_pair[k + 1]));
        eval::add_coherence(m->metrics, m->B, counts.d1, d2);
        eval::sort_metrics(m->metrics);
        m->metrics_note = "coherence over the " + std::to_string(counts.num_docs) + " documents that built C";
        m->times.add("codoc", seconds);
    }
    log::info("eval: coherence counts of {} word pairs over {} documents in {:.2f} s", pairs.size(), counts.num_docs,
              seconds);
}

void print_metrics(const io::FittedModel& m) {
    if (m.metrics.metrics.empty()) {
        std::printf("metrics: not measured\n");
        return;
    }
    std::printf("metrics (mean, std over %s; base-2 KL and entropy, natural-log coherence)%s%s:\n",
                "topics or words", m.metrics_note.empty() ? "" : "; ", m.metrics_note.c_str());
    for (const auto& metric : m.metrics.metrics) {
        if (std::isnan(metric.std))
            std::printf("  %-32s %14.6g\n", metric.name.c_str(), metric.mean);
        else
            std::printf("  %-32s %14.6g  (std %.4g over %lld %ss)\n", metric.name.c_str(), metric.mean, metric.std,
                        static_cast<long long>(metric.values.size()), metric.per.c_str());
    }
    if (m.has_truth) {
        const auto& t = m.truth;
        std::printf("planted truth (%s): B L1 error %.6g per topic, A L1 error %.6g (Frobenius %.6g), anchors hit %d of %d\n",
                    m.truth_file.c_str(), t.b_l1, t.a_l1, t.a_frobenius, t.anchor_hits, m.num_topics);
    }
}

}  // namespace jsmf::app
